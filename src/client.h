/*
 * client.h: one client session, owned by one worker for its whole life.
 *
 * States (explicit, see docs/architecture.md):
 *   CS_HANDSHAKE     greeting sent, waiting for the handshake response
 *                    (or an SSL request)
 *   CS_TLS_ACCEPT    TLS handshake in progress
 *   CS_AUTH_SWITCH   auth-switch request sent, waiting for the new token
 *   CS_AUTH_SHA2     caching_sha2 full auth: waiting for the cleartext
 *                    password (TLS) or a public-key request / RSA blob
 *   CS_CONNECTING    waiting for a pooled upstream connection (being opened,
 *                    or queued while the pool is exhausted)
 *   CS_SYNCING       the borrowed connection is being brought to the
 *                    session's state (schema, SET, a statement prepared)
 *   CS_READY         waiting for the next command
 *   CS_RELAYING      a command is upstream; its response is being relayed
 *   CS_SETTINGS      an internal query reads the session's settings (cache key)
 *   CS_WAITING       waiting for another session to load the same cache key
 *   CS_REFRESHING    a background refresh of a cache entry is upstream; the
 *                    session still answers cache hits meanwhile
 *   CS_CLOSING       flushing a last error (or, when draining, the last
 *                    answer), then closing
 * login.c drives the first five; client.c the command phase; cache/session.c
 * the cache's part of it.
 */
#ifndef SHOAL_CLIENT_H
#define SHOAL_CLIENT_H

#include <ev.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "auth.h"
#include "handshake.h"
#include "relay.h"
#include "sbuf.h"
#include "sessvars.h"
#include "upstream.h"
#include "cache/store.h"

struct worker;
struct cache_def;
struct ident;

enum client_state {
	CS_HANDSHAKE,
	CS_TLS_ACCEPT,
	CS_AUTH_SWITCH,
	CS_AUTH_SHA2,
	CS_CONNECTING,
	CS_SYNCING,
	CS_READY,
	CS_RELAYING,
	CS_SETTINGS,
	CS_WAITING,
	CS_REFRESHING,
	CS_CLOSING,
};

#define SETTINGS_MAX 1024

/* A prepared statement of this session, for binary-protocol cache keys. */
struct stmt_info {
	uint32_t id;
	uint16_t nparams;
	bool long_data;               /* COM_STMT_SEND_LONG_DATA since the last execute */
	bool have_types;
	char *text;
	size_t text_len;
	uint8_t *types;               /* 2 bytes per parameter, from the last execute */
	uint8_t prep_settings[4];     /* settings id when prepared (0: unknown) */
	struct pbuf meta;             /* its last column definitions (metadata caching) */
	struct cache_def *def;
	uint64_t serial;              /* in the statement registry (stmtreg.h) */
	bool cursor;                  /* an execute opened a cursor not yet exhausted */
};

struct client {
	struct worker *w;
	struct client *prev, *next;   /* the worker's list */
	uint32_t id;                  /* connection id shown to the client */
	struct sbuf io;
	ev_io watcher;
	ev_timer timer;               /* handshake timeout, then the idle timeout (idle.c) */
	ev_tstamp idle_since;         /* last event while waiting for a command */
	enum client_state st;
	char peer[64];                /* client IP as text */

	/* login */
	uint8_t nonce[AUTH_NONCE_LEN];
	uint8_t seq;                  /* next sequence id during login */
	uint32_t caps;                /* negotiated */
	uint16_t collation;
	char user[HS_USER_MAX];
	char db[HS_DB_MAX];
	struct ident *ident;          /* whom the session acts as upstream (ident.h) */
	bool is_monitor;
	bool changing_user;           /* login states entered from CMD_CHANGE_USER */
	bool login_pending;           /* CS_CONNECTING for a login: OK follows */
	bool tls_done;
	bool ext_offered;             /* MariaDB extended metadata offered */
	bool sha2_full_requested;

	/* command phase */
	struct upstream *up;
	bool up_lost;                 /* serve-stale: the upstream connection was lost and
				       * its session state with it; cache answers only */
	bool drained;                 /* closed by the drain at an idle point */
	struct relay relay;
	bool upstream_eof_seen;
	bool cont_packets;            /* the client's command continues (16 MiB+) */
	uint64_t cont_total;

	/* cache (cache/session.c) */
	struct pbuf keybuf;           /* the current command's cache key */
	uint64_t key_hash;
	char settings[SETTINGS_MAX];  /* values that change result bytes, see docs/caching.md */
	uint16_t settings_len;
	uint32_t settings_id;         /* interned (cache/settings.h): part of keys */
	int settings_cols;            /* columns of the settings query sent */
	bool settings_dirty;          /* must be read again before the next lookup */
	bool settings_broken;         /* the settings query failed: no caching */
	bool bypass_once;             /* coalescing timed out: go upstream */
	uint16_t server_status;       /* status flags of the last upstream answer */
	bool txn_wrote;
	int64_t last_write_ms;
	struct cache_def *cur_def;    /* the shape of the command in flight */
	uint64_t cmd_start_us;
	bool cur_dirty, cur_write;
	struct cache_entry *fill;     /* the placeholder this session fills */
	struct cache_entry *refresh;  /* the entry this session refreshes */
	struct pbuf fill_buf;
	bool fill_too_big, fill_cont;
	uint16_t fill_status[ENTRY_MAX_STATUS];
	int fill_nstatus;
	struct pbuf scratch;          /* answers to internal queries */
	struct store_waiter waiter;
	bool waiting;
	ev_timer wait_timer;
	struct client *wait_prev, *wait_next; /* the worker's waiting list */
	const char *last_dest, *last_reason;  /* EXPLAIN LAST STATEMENT */
	struct cache_def *grant_def;  /* the shape whose grant verdict is checked (grants.h) */
	uint8_t grant_state;          /* ... and how far the check is */
	bool grant_refused;           /* this command's hit was refused by the verdict */
	struct stmt_info *stmts;
	size_t n_stmts, cap_stmts;
	struct pbuf prep_text;        /* text of the COM_STMT_PREPARE in flight */
	struct pbuf prep_meta;        /* its column definitions */
	struct stmt_info *cur_stmt;

	/* multiplexing (mux.c, pool.c) */
	struct sess_state sv;         /* the session's upstream state */
	struct sv_delta *delta;       /* what the forwarded statement changes */
	unsigned cur_sv;              /* SV_* flags of the forwarded statement */
	bool pin_forever, pin_lock;
	uint8_t sticky;               /* keep the connection for the next command */
	bool pinned_counted;          /* counted in the upstream_pinned gauge */
	bool pass_pending;            /* the cache let the front command pass: forward it once up */
	bool retried;                 /* the front command was resent once already */
	uint32_t held;                /* forwarded bytes still at the front of the input (retry) */
	uint32_t next_stmt_id;        /* client-visible statement ids */
	uint32_t prep_id;             /* id given to the COM_STMT_PREPARE in flight */
	struct pbuf prep_resp;        /* its answer as the client got it */
	uint8_t sync_what;            /* the sync step in flight (mux.c) */
	struct client *pq_next;       /* the pool's queue or grant list */
	bool pq_queued, pq_granted;
	ev_timer pool_timer;
};

/* Inside a transaction: the upstream's last status says so, or autocommit
 * is off. */
static inline bool client_in_txn(const struct client *c)
{
	return (c->server_status & ST_IN_TRANS) || !(c->server_status & ST_AUTOCOMMIT);
}

/* The node drains: close the session now if it is idle (worker thread). */
void client_drain(struct client *c);

/* A coalescing wake-up arrived for session client_id (ignored if stale). */
void client_wake(struct worker *w, uint32_t client_id, uint32_t gen);
/* Continue with buffered input (after a state change made elsewhere). */
void client_resume(struct client *c);

/* Take ownership of an accepted socket on worker w. */
void client_accept(struct worker *w, int fd, const struct sockaddr_storage *peer);
/* Close and free. */
void client_close(struct client *c, const char *why);

/* Queue an ERR packet to the client. */
void client_send_err(struct client *c, uint8_t seq, uint16_t code, const char *state, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Update the socket watcher (read always, write when output is pending). */
void client_arm(struct client *c);
/* Flush output now; false if the connection broke (then it is closed). */
bool client_flush(struct client *c);

/* login.c */
void login_start(struct client *c);
/* Handle one packet in a login state. */
void login_packet(struct client *c, const uint8_t *pl, uint32_t len, uint8_t seq);
void login_tls_step(struct client *c);
/* CMD_CHANGE_USER from the command phase. */
void login_change_user(struct client *c, const uint8_t *pl, uint32_t len);

/* client.c: called by login.c once the user is authenticated. */
void client_authenticated(struct client *c);

#endif
