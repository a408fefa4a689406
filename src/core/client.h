/*
 * client.h: one client session, owned by one worker for its whole life: the
 * session core. client.c runs its life and its input, login.c its
 * connection phase, dispatch.c each command's way (the command table's
 * handlers), uplink.c its side of the upstream connection (answers, the
 * node's own commands, the pool's reports, a lost connection), wait.c the
 * cache's waits, idle.c its idle timeout, mux.c what it keeps on upstream
 * connections, pool.c lends it those connections. The cache (src/cache/)
 * stands below: the core asks cache_command() what to do with a command
 * and does it (see cache/session.h); the cache never calls back.
 *
 * States: enum client_state in cstate.h, one comment each, and the table
 * of the moves between them (docs/architecture.md).
 * login.c drives the login states; the others the command phase.
 */
#ifndef SHOAL_CLIENT_H
#define SHOAL_CLIENT_H

#include <ev.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "proto/auth.h"
#include "proto/handshake.h"
#include "proto/relay.h"
#include "proto/sbuf.h"
#include "session/sessvars.h"
#include "upstream/upstream.h"
#include "cache/session.h"
#include "core/cstate.h"
#include "session/stmts.h"
#include "core/worker.h"

#define CLIENT_READ_MAX (256 * 1024)   /* bytes read from a socket at a time */
#define CLIENT_OUT_HIGH (1024 * 1024)  /* stop reading the upstream above this much output */

struct worker;
struct internal_login;
struct ident;

struct client;
/* Change c's state, the one way to (cstate.h: which moves are allowed). A
 * move the table refuses aborts under SHOAL_STRICT_STATES; otherwise the
 * session ends (ERR 1105, CLOSING) and the caller goes on with it there. */
void client_set_state(struct client *c, enum client_state to);

/* The node's own commands on a session's upstream connection (CS_INTERNAL):
 * what each is for, and so where its answer goes when it is complete. */
enum upcmd_kind {
	UPCMD_NONE,
	UPCMD_SYNC_DB,        /* COM_INIT_DB bringing the connection to the session's schema: mux_sync_done */
	UPCMD_SYNC_SET,       /* SET NAMES / @@session...: mux_sync_done */
	UPCMD_SYNC_PREPARE,   /* the front execute's statement prepared there: mux_sync_done */
	UPCMD_SYNC_FOUND_ROWS, /* FOUND_ROWS() brought to the session's: mux_sync_done */
	UPCMD_SYNC_LAST_ID,    /* LAST_INSERT_ID() brought to the session's: mux_sync_done */
	UPCMD_SETTINGS,       /* the cache's settings query: cache_settings_done */
	UPCMD_REFRESH,        /* a cache entry's background refresh: cache_refresh_done */
	UPCMD_GRANT_CHECK,    /* the user's grant verdict (a PREPARE as the user): cache_grant_check_done */
};

/*
 * A session. What it is doing now is its state (st, cstate.h). Its flags
 * (bool) are modes: each holds across several states, or is bookkeeping of
 * another module, and says so next to it, with who sets and clears it.
 * Nothing that is one phase of the session is a flag: the failed login's
 * delay (DENIED), the pool's queue (QUEUED), a long command still arriving
 * (SENDING) are states; TLS is io.ssl; a LOAD DATA file's framing is the
 * relay's; an unknown FOUND_ROWS() count is fr_rows == FR_UNKNOWN.
 */
struct client {
	struct worker *w;
	struct client *prev, *next;   /* the worker's list */
	uint32_t id;                  /* connection id shown to the client */
	struct sbuf io;               /* io.ssl: TLS is on (its handshake done past TLS_ACCEPT) */
	ev_io watcher;
	ev_timer timer;               /* handshake timeout, then the idle timeout (idle.c) */
	ev_tstamp idle_since;         /* last event while waiting for a command */
	enum client_state st;
	char peer[64];                /* client IP as text */

	/* login */
	uint8_t nonce[AUTH_NONCE_LEN];
	uint8_t seq;                  /* next sequence id during login */
	uint32_t caps;                /* negotiated */
	uint8_t zstd_level;           /* CAP_ZSTD_COMPRESSION: the node's level (compress.h) */
	uint16_t collation;
	char user[HS_USER_MAX];
	char db[HS_DB_MAX];
	struct ident *ident;          /* whom the session acts as upstream (ident.h) */
	/* mode: the login is the monitor user (users.h), from the login until
	 * COM_CHANGE_USER logs in again: its checks are answered by the node
	 * (monitor.c) and it borrows no connection for them; nothing is cached
	 * for it */
	bool is_monitor;
	/* mode, for the session's whole life: one of the node's own (the
	 * refill's, login_internal), with no handshake */
	bool internal;
	/* mode: the login's OK waits for its upstream connection, borrowed
	 * and brought to the schema; set by login_authenticated, cleared by
	 * login_done. It spans CONNECTING or QUEUED, INTERNAL (the sync steps)
	 * and READY; meanwhile no command is read, the answers carry the
	 * login's sequence ids, and a failure ends the session */
	bool login_pending;
	uint32_t ext_caps_offered;    /* MariaDB extended capabilities offered (MCAP_*) */

	/* command phase */
	struct upstream *up;
	/* mode (serve-stale): the upstream connection was lost with session
	 * state on it (uplink_lost); the session answers from the cache only
	 * (cache_serve_only), in READY and WAITING alike, until it is reset; a
	 * command that needs the upstream ends it once the upstream is back */
	bool up_lost;
	struct relay relay;
	uint64_t cont_total;          /* CS_SENDING: the bytes of the command so far */

	/* internal commands (upcmd_send) */
	enum upcmd_kind upcmd;        /* the one upstream, in CS_INTERNAL */
	struct pbuf scratch;          /* its answer */
	uint16_t server_status;       /* status flags of the last upstream answer */
	uint64_t cmd_start_us;        /* when the command upstream was sent */

	/* cache (cache/session.h), and the core's side of its waits */
	struct cache_session cs;
	ev_timer wait_timer;          /* CS_WAITING: how long at most */
	struct client *wait_prev, *wait_next; /* the worker's waiting list */

	/* multiplexing (mux.c, pool.c) */
	struct sess_state sv;         /* the session's upstream state */
	unsigned globals_gen;         /* sv_globals_gen() when it logged in (or reset) */
	void *kill_entry;             /* its entry in the KILL session table (kill.h) */
	unsigned kill_gen;            /* kill_generation() when the front command was sent */
	struct sv_delta *delta;       /* what the forwarded statement changes */
	unsigned cur_sv;              /* SV_* flags of the forwarded statement */
	/* modes of the connection the session holds (mux_holds_state), set by
	 * mux_answer_done from the statement answered, cleared by a reset or
	 * the connection's loss. pin_forever: it holds what the node cannot
	 * move (temporary tables, user variables, GET_LOCK, a SET it cannot
	 * record, ...), kept until the session ends, then closed; pin_lock:
	 * LOCK TABLES or FLUSH ... WITH READ LOCK, kept until UNLOCK TABLES */
	bool pin_forever, pin_lock;
	/* mode: a COMMIT/ROLLBACK ... RELEASE succeeded (mux_answer_done): the
	 * server closed the connection, and the session ends once this answer
	 * is out, after its held last packet if any (WAITING): client_process_input
	 * moves it from READY to CLOSING */
	bool releasing;
	/* FOUND_ROWS() as the session reads it (mux.c): the rows of its last
	 * result set, FR_UNKNOWN when that was several (or none is known);
	 * fr_gen numbers the answer, and a connection stamped with another is
	 * brought to it first */
	uint64_t fr_rows;
#define FR_UNKNOWN UINT64_MAX
	uint32_t fr_gen;
	/* LAST_INSERT_ID() as the session reads it (mux.c): the insert id of
	 * its last OK that had one (0 before), numbered by lid_gen; the
	 * connection stamped with it holds the server's own value */
	uint64_t lid;
	uint32_t lid_gen;
	/* mode: the session named profiling (SV_PROFILING), until it is reset:
	 * the node neither caches for it nor runs a statement of its own on
	 * its connection */
	bool profiling;
	uint8_t sticky;               /* keep the connection for the next command */
	/* bookkeeping, not a state: the session is counted in the
	 * upstream_pinned gauge (maybe_release keeps it equal to mux_pinned,
	 * client_close takes it back) */
	bool pinned_counted;
	/* mode of the front command: the node and the cache let it go upstream
	 * (they are asked once); it is forwarded as soon as a connection in the
	 * session's state is there. It spans QUEUED, CONNECTING, INTERNAL (the
	 * sync steps) and READY; forward_command or dispatch_drop_front clear it */
	bool pass_pending;
	/* mode of the front command: it was sent again once, on a fresh
	 * connection (retry_front), and never will be again; cleared when its
	 * answer is done (mux_answer_done) */
	bool retried;
	uint32_t held;                /* forwarded bytes still at the front of the input (retry) */
	struct stmt_table stmts;      /* the session's prepared statements (stmts.h) */
	uint32_t next_stmt_id;        /* client-visible statement ids */
	uint32_t prep_id;             /* id given to the COM_STMT_PREPARE in flight */
	/* the upstream's answer to the PREPARE in flight, as relayed, while it
	 * may be kept (session/stmtreg.h), and what it is true of */
	struct pbuf prep_answer;
	struct stmtreg_stamp prep_stamp;
	/* mode of the PREPARE in flight: its answer is being copied into
	 * prep_answer to be kept (mux_note_command sets it; too big, or once
	 * kept, it is cleared) */
	bool prep_keep;
	uint32_t fwd_stmt_id;         /* the statement of the forwarded EXECUTE or FETCH */
	struct client *pq_next;       /* the pool's queue (CS_QUEUED) or grant list */
	ev_timer pool_timer;          /* running exactly while in the pool's queue */
	struct user_account *in_use_acct;  /* counted in its in_use while c->up is set (a reference) */
	struct user_account *wait_acct;    /* counted in its waiting while queued (a reference) */
};

/* The session's end has begun (CLOSING or DRAINED): its last output is
 * flushed, nothing more is read. */
static inline bool client_ending(const struct client *c)
{
	return c->st == CS_CLOSING || c->st == CS_DRAINED;
}

/* Inside a transaction: the upstream's last status says so, or autocommit
 * is off. */
static inline bool client_in_txn(const struct client *c)
{
	return status_in_txn(c->server_status);
}

/* A background refresh is upstream: the session answers cache hits only. */
static inline bool client_hits_only(const struct client *c)
{
	return c->st == CS_INTERNAL && c->upcmd == UPCMD_REFRESH;
}

/* The client's command is upstream (its answer is relayed): still arriving,
 * or whole. */
static inline bool client_command_upstream(const struct client *c)
{
	return c->st == CS_RELAYING || c->st == CS_SENDING;
}

/* A command of this session is upstream and its answer is awaited. */
static inline bool client_upstream_busy(const struct client *c)
{
	return client_command_upstream(c) || c->st == CS_INTERNAL;
}

/* LOAD DATA LOCAL: the answer being relayed waits for the client's file. */
static inline bool client_infile_active(const struct client *c)
{
	return c->st == CS_RELAYING && c->up && relay_awaits_infile(&c->relay);
}

/* The node drains: close the session now if it is idle (worker thread). */
void client_drain(struct client *c);

/* A new session on fd: a listener's client (internal NULL: the handshake
 * starts), or one of the node's own (internal_login, worker.h: taken over). */
void client_accept(struct worker *w, int fd, const struct sockaddr_storage *peer,
		   struct internal_login *internal);
/* Close and free. */
void client_close(struct client *c, const char *why);

/* Update the socket watcher (read always, write when output is pending). */
void client_arm(struct client *c);
/* Flush output now; false if the connection broke (then it is closed). */
bool client_flush(struct client *c);
/* Flush both sides and re-arm: the end of every event handler. */
void client_settle(struct client *c);
/* Consume as much buffered input as the state allows, then settle: the
 * next step after any event that may let the session go on. */
void client_process_input(struct client *c);

/* What the cache is handed of the session (cache/session.h); inline, as
 * every command asks the cache. */
static inline struct cache_ctx cache_ctx_of(struct client *c)
{
	struct cache_ctx x = {
		.out = &c->io.out, .caps = c->caps, .status = c->server_status,
		.now_ms = (int64_t)(ev_now(c->w->loop) * 1000.0),
		.monitor = c->is_monitor, .up_lost = c->up_lost, .stmts = &c->stmts, .ident = c->ident,
		.db = c->sv.db, .profiling = c->profiling,
	};

	return x;
}

#endif
