/*
 * session_types.h: the cache's per-session state (struct cache_session,
 * embedded in struct client as cs), what it is handed of the session for
 * one call (struct cache_ctx), its per-worker state and the steps it asks
 * of the core (enum cache_step). Types only: session.c (the commands),
 * answer.c (what comes back for them) and settings_query.c (the settings
 * keys depend on) each work on them; none of them calls the others back.
 */
#ifndef SHOAL_CACHE_SESSION_TYPES_H
#define SHOAL_CACHE_SESSION_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/consist.h"
#include "sql/reasons.h"
#include "cache/grants.h"
#include "cache/store.h"
#include "proto/packet.h"
#include "proto/relay.h"
#include "session/stmtreg.h"
#include "session/stmts.h"

#define SETTINGS_MAX 1024

/* What cache_command() asks of the core. */
enum cache_step {
	CSTEP_PASS,      /* forward the command to the upstream as usual; when
			  * cs->fill is set its answer fills that entry (cache_tee) */
	CSTEP_SERVED,    /* answered into ctx->out: consume the command */
	CSTEP_REFRESH,   /* served, and the entry is due for a background refresh:
			  * send the same command upstream now (UPCMD_REFRESH,
			  * answer to cache_refresh_done) if a connection is free at
			  * once, else cache_refresh_cancel() */
	CSTEP_SETTINGS,  /* the session's settings must be read first: send
			  * cache_settings_sql() upstream (UPCMD_SETTINGS, answer to
			  * cache_settings_done), then ask again */
	CSTEP_GRANT_CHECK, /* the user's grant verdict for the shape must be
			  * checked first: send COM_STMT_PREPARE of cs->check_text
			  * upstream (UPCMD_GRANT_CHECK, cache_grant_check_sent, answer
			  * to cache_grant_check_done), then ask again */
	CSTEP_WAIT,      /* another session loads this key: keep the command
			  * queued and wait, at most cs->wait_ms, for a wake-up
			  * (then cache_wait_over), and ask again */
	CSTEP_BLOCKED,   /* a refresh is upstream and the command needs the
			  * upstream: keep it queued until the refresh is answered */
};

struct stmt;

/* The cache's per-worker state, embedded in struct worker. */
struct cache_worker {
	struct stmt *stmt;            /* the reading of the statement in hand (sql/stmt.h),
				       * made on first use, for one command at a time: */
	const struct cache_session *stmt_cs;  /* ... of this session's ... */
	uint32_t stmt_gen;            /* ... command (cache_session.stmt_gen) */
	struct grant_worker grants;   /* the grant verdicts (grants.h) */
};

/* The cache's per-session state, embedded in struct client (as cs). */
struct cache_session {
	struct cache_worker *cw;
	uint32_t id;                  /* the session's connection id (logs) */
	uint32_t stmt_gen;            /* moves with each command asked about: a reading
				       * of the worker's (cw->stmt) is this command's
				       * only while it holds */
	struct pbuf keybuf;           /* the current command's cache key */
	uint64_t key_hash;
	char settings[SETTINGS_MAX];  /* values that change result bytes, see docs/caching.md */
	uint16_t settings_len;
	uint32_t settings_id;         /* interned (cache/settings.h): part of keys */
	int settings_cols;            /* columns of the settings query sent */
	bool settings_dirty;          /* must be read again before the next lookup */
	bool settings_broken;         /* the settings query failed: no caching */
	bool bypass_once;             /* coalescing timed out: go upstream */
	bool read_uncommitted;        /* the session's isolation level (settings): no cache */
	bool oneshot_ru;              /* SET TRANSACTION ... READ UNCOMMITTED: the next
				       * transaction reads uncommitted rows: no cache */
	bool cur_ends_oneshot;        /* the command in flight ends that transaction */
	bool locked;                  /* LOCK TABLES: the session reads its own version
				       * of locked tables (Aria's WRITE CONCURRENT), and
				       * others see its writes at UNLOCK: no cache, and
				       * its writes are invalidated again then */
	int cur_lock_op;              /* the command in flight: 1 LOCK, -1 UNLOCK
				       * (or an implicit one), 0 neither */
	bool txn_wrote;
	int64_t last_write_ms;
	struct cache_def *cur_def;    /* the shape of the command in flight */
	bool cur_dirty, cur_write;
	struct cache_entry *fill;     /* the placeholder this session fills */
	struct cache_entry *refresh;  /* the entry this session refreshes */
	struct pbuf fill_buf;
	bool fill_too_big;
	uint64_t served_rows;         /* the rows of the hit served (UINT64_MAX: none) */
	struct store_waiter waiter;
	bool waiting;
	int wait_ms;                  /* CSTEP_WAIT: how long at most */
	const char *last_dest;                /* EXPLAIN LAST STATEMENT */
	const struct reason *last_reason;
	struct grant_session grants;  /* the grant check of this command (grants.h) */
	const char *check_text;       /* CSTEP_GRANT_CHECK: the statement to prepare */
	size_t check_len;

	/* consistency (consist.h, docs/caching.md "Consistency") */
	struct consist cons;          /* writes, temporary tables */
	struct fill_deps fill_deps;   /* what the fill reads, snapshot before it went upstream */
	struct fill_deps refresh_deps;
	enum { WAIT_STORE, WAIT_CATALOG, WAIT_BINLOG, WAIT_VCOLS } wait_kind;
	bool cat_waited;              /* this command waited for the catalog once */
	size_t last_pkt_len;          /* bytes of the last packet relayed to the client */
	/* a fill parked until its tables' generated columns are checked
	 * (WAIT_VCOLS, vcols.h): what store_fill needs of its answer */
	uint32_t parked_rows;
	uint64_t parked_us;
	int64_t parked_now;
	struct pbuf held_ok;          /* WAIT_BINLOG, WAIT_VCOLS: the answer's last packet, held */
	struct pbuf *held_out;        /* ... and where it goes back */
};

/* What the cache is handed of the session, for one call. */
struct cache_ctx {
	struct pbuf *out;             /* the client's output */
	uint32_t caps;                /* the client's negotiated capabilities */
	uint16_t status;              /* status flags of the session's last answer */
	int64_t now_ms;               /* the worker loop's clock */
	bool monitor;                 /* the monitor user: never cached */
	bool up_lost;                 /* the session lost its upstream state:
				       * cache_serve_only() only */
	bool profiling;               /* the session named profiling: SHOW PROFILES would
				       * list the node's own statements and miss a hit,
				       * so nothing is served, stored or read for it */
	struct stmt_table *stmts;     /* the session's prepared statements */
	struct ident *ident;          /* whom the session acts as upstream (ident.h) */
	const char *db;               /* the session's current schema ("" none) */
};

#endif
