/*
 * session.h: the cache's part of a client session. For each command the
 * session core (client.c) asks cache_command() what to do, and the cache
 * answers with a step: it served the command from the store (a hit), or the
 * core must forward it (a miss the session then fills, or no caching), read
 * the session's settings first, wait for another session loading the same
 * key (coalescing), or run a background refresh. The cache never touches a
 * socket, an upstream connection, a timer or the session core's state: it
 * is handed what it needs (struct cache_ctx) and the core does the rest.
 * It keeps what cache keys depend on: the session's settings, its upstream
 * identity (grants.h: cache_scope), and its transaction and write state; a
 * hit is served only when the user's grant verdict allows it (grants.h).
 *
 * Layering: this file and everything in src/cache/ stand below the session
 * core (client.c, mux.c, pool.c, ...); they must not include client.h,
 * mux.h, pool.h or worker.h (scripts/check-layering fails if they do).
 */
#ifndef SHOAL_CACHE_SESSION_H
#define SHOAL_CACHE_SESSION_H

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

/* Process-wide: the store, the registry. wake is how a session waiting on
 * a key is woken by whichever worker fills it (worker_wake). */
int cache_global_init(store_wake_fn wake);
void cache_global_free(void);
void cache_worker_free(struct cache_worker *cw);

/* w is the session's worker, only handed to store waiters (wake). */
void cache_session_init(struct cache_session *cs, struct cache_worker *cw, struct worker *w,
			uint32_t id);
void cache_session_free(struct cache_session *cs);
/* The session ends or lost its upstream, or its command is dropped: give up
 * fills, refreshes and waits (the core stops its wait timer). */
void cache_abort(struct cache_session *cs);
/* COM_CHANGE_USER: forget the settings and the transaction state. */
void cache_session_reset(struct cache_session *cs);

/* A whole command packet payload (command byte first), with the session's
 * statement table already told of it (stmts_note_command). While a refresh
 * is upstream only hits are possible, else CSTEP_BLOCKED. */
enum cache_step cache_command(struct cache_session *cs, const struct cache_ctx *x,
			      const uint8_t *pl, uint32_t len);
/* The session has no upstream connection and will get none (it lost it
 * while the upstream went down): answer the command if the cache can (a
 * hit, possibly stale, or cache SQL) and return true (the command is then
 * no longer in flight: cache_note_own_error counts nothing); false
 * otherwise. */
bool cache_serve_only(struct cache_session *cs, const struct cache_ctx *x, const uint8_t *pl,
		      uint32_t len);

/* Bytes of the answer being relayed for a CSTEP_PASS command: kept for the
 * entry being filled, if any. */
void cache_tee(struct cache_session *cs, const uint8_t *p, size_t n);
/* The command in flight was answered with an error the node made itself
 * (its upstream lost or down, no pooled connection, its state not
 * restored) after `us` upstream (0: never sent): counted on its shape
 * (count_star, errors, node_errors), once. */
void cache_note_own_error(struct cache_session *cs, uint64_t us);

/* The answer to the command forwarded after CSTEP_PASS is complete (r), in
 * `us` microseconds; x->status is the session's status after it. True when
 * its last packet is held (binlog mode, a statement whose writes its text
 * does not show): the core waits as for CSTEP_WAIT (cs->wait_ms, a wake-up,
 * then cache_wait_over puts the packet back into x->out) before it reads
 * the next command. */
bool cache_answer_done(struct cache_session *cs, const struct cache_ctx *x, const struct relay *r,
		       uint64_t us);

/* CSTEP_SETTINGS: the query to send (COM_QUERY text), for a MariaDB or a
 * MySQL upstream. */
const char *cache_settings_sql(struct cache_session *cs, bool mariadb, size_t *len);
/* Its answer (the relay's view r, the bytes in answer). */
void cache_settings_done(struct cache_session *cs, const struct relay *r, const struct pbuf *answer);

/* CSTEP_REFRESH: the refresh could not start. */
void cache_refresh_cancel(struct cache_session *cs);
/* Its answer, `us` microseconds after it was sent. */
void cache_refresh_done(struct cache_session *cs, const struct cache_ctx *x, const struct relay *r,
			const struct pbuf *answer, uint64_t us);

/* CSTEP_GRANT_CHECK: the check was sent, or could not be (then the command
 * goes upstream without a hit). */
void cache_grant_check_sent(struct cache_session *cs, const struct cache_ctx *x);
void cache_grant_check_failed(struct cache_session *cs);
/* Its answer. Returns the upstream id of the statement it prepared, to be
 * closed on the connection (0: none). */
uint32_t cache_grant_check_done(struct cache_session *cs, const struct cache_ctx *x,
				const struct relay *r, const struct pbuf *answer);

/* CSTEP_WAIT: is gen the wait in progress (a wake-up may be stale)? */
bool cache_wait_current(const struct cache_session *cs, uint32_t gen);
/* The wait ended: woken, or timed out (then the command goes upstream). */
void cache_wait_over(struct cache_session *cs, bool timed_out);

/* A statement was added to the session's table: its cache shape and the
 * settings it was prepared under (ident: the session's identity, for a
 * statement that changes privileges or roles). */
void cache_stmt_prepared(struct cache_session *cs, struct ident *ident, struct stmt_info *s);

/* Monotonic clock in microseconds, for cache timing. */
uint64_t cache_now_us(void);

/* PREPARE answers given by the node (session/stmtreg.h, core/mux.c): the
 * stamp that a kept answer must still match, now (false: the node cannot
 * tell when an answer stops being exact, so none is given or kept: not in
 * binlog mode, the stream down or behind, the catalog being read, a
 * session with temporary tables, ...); and may the upstream's answer to a
 * PREPARE be kept (its tables are all known to the catalog)? */
bool cache_prepare_stamp(const struct cache_session *cs, const struct cache_ctx *x,
			 struct stmtreg_stamp *st);
/* ... of the statement s, just prepared (NULL: none, never kept). */
bool cache_prepare_keepable(struct cache_session *cs, const struct cache_ctx *x, const struct stmt_info *s);

/* The reading of a statement (sql/stmt.h) the session core acts on too
 * (the multiplexer: what it does to the session): of the command's text
 * q[0, n), the one the cache made for this command when it did, else made
 * now; of a prepared statement, the one kept at PREPARE. NULL: out of
 * memory. */
const struct stmt *cache_stmt(struct cache_session *cs, const char *q, size_t n);
const struct stmt *cache_stmt_exec(struct cache_session *cs, const struct stmt_info *s);

#endif
