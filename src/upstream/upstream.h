/*
 * upstream.h: one connection to the upstream MySQL/MariaDB server.
 *
 * It is opened with MariaDB Connector/C's non-blocking API
 * (mysql_real_connect_start/_cont) driven from the owning worker's libev
 * loop, so that TLS and authentication toward the upstream are the
 * connector's. Once it is open, the node relays raw packets on its socket
 * (through the connector's OpenSSL session when TLS is on), so answers reach
 * clients byte for byte.
 *
 * For that, the upstream session must use exactly the protocol features the
 * client negotiated. The connector always asks for some (session tracking,
 * multi-results, MariaDB's extensions), so a read hook registered with
 * the connector rewrites the capability bits of the upstream's greeting
 * before the connector parses it: the connector then cannot ask for more
 * than the client did. See docs/architecture.md.
 */
#ifndef SHOAL_UPSTREAM_H
#define SHOAL_UPSTREAM_H

#include <ev.h>
#include <mysql.h>
#include <stdbool.h>
#include <stdint.h>

#include "proto/sbuf.h"
#include "session/sessvars.h"

struct client;
struct ident;
struct user_account;

/* A statement prepared on this connection: the registry's serial
 * (stmtreg.h) and the upstream's id for it. */
struct up_stmt {
	uint64_t serial;
	uint32_t up_id;
	uint64_t used;           /* the connection's stmt_clock at last use */
};

enum upstream_state {
	UP_CONNECTING,   /* connector is connecting and authenticating */
	UP_SETUP,        /* connector runs SET NAMES for the client's collation */
	UP_READY,        /* raw relay */
	UP_FAILED,
};

enum upstream_event {
	UP_EV_CONNECTED,
	UP_EV_FAILED,    /* connect failed: code/sqlstate/message are set */
	UP_EV_IO,        /* ready: the socket is readable or writable */
};

struct upstream;

/* The options every connection to the upstream gets (timeouts, TLS, no
 * local infile): also for the blocking connections of the catalog reader
 * and the binlog follower. */
void upstream_set_common_options(MYSQL *m);

typedef void (*upstream_cb)(struct upstream *u, enum upstream_event ev, void *owner);

struct upstream_params {
	uint32_t client_caps;   /* what the client negotiated with the node */
	uint16_t collation;     /* client's collation id, 0 for the server default */
	const char *db;         /* schema to start in, or NULL */
	bool check;             /* the upstream check's: not counted as a connection */
	const struct ident *ident; /* whom it acts as; NULL: the upstream_db_url user */
};

struct upstream {
	struct ev_loop *loop;
	MYSQL *mysql;
	struct sbuf io;          /* fd and TLS session borrowed from the connector */
	ev_io watcher;
	ev_timer timer;
	enum upstream_state st;
	int wait_status;         /* MYSQL_WAIT_* the connector waits for */
	uint32_t want_caps;      /* capability mask applied to the greeting */
	bool greeting_patched;
	uint32_t fr_client, fr_gen; /* whose FOUND_ROWS() it holds (mux.c; 0: nobody's) */
	uint32_t lid_client, lid_gen; /* whose LAST_INSERT_ID() it holds (mux.c; 0:
				       * none, its value is 0 as a new session's) */
	bool started;            /* the first connect step has run */
	bool check;              /* see upstream_params */
	bool keep_ext;           /* negotiate MariaDB's extended capabilities */
	bool progress;           /* ... and progress reports may come */
	uint16_t collation;
	char db[256];
	bool want_read, want_write;
	char setup_sql[160];
	upstream_cb cb;
	void *owner;
	/* the upstream user (ident.h): connections are lent only to sessions
	 * of the same identity */
	char up_user[128];
	uint32_t ident_id;
	struct user_account *acct;   /* revoked: closed when idle (a reference) */
	char *login_pw;          /* the password for the connector, until it copied it */
	bool sha1_login;         /* logs in with SHA1(pw) (upauth.h) */
	char asked_plugin[64];   /* what the upstream's auth switch asked for */
	unsigned err_code;
	char sqlstate[6];
	char err[512];

	/* pooling (pool.c): every upstream connection belongs to its worker's
	 * pool; a session uses it for one command or while pinned */
	uint32_t key;            /* what it can serve: upstream_key() */
	struct upstream *pnext, *pprev;  /* the pool's idle list */
	struct client *user;     /* the session using it, NULL when idle */
	int64_t idle_since_ms;
	uint64_t uses;           /* commands run on it (0: fresh) */
	uint32_t epoch;          /* ident_privilege_epoch() when it logged in */
	bool dirty;              /* holds state no other session may see: close at release */
	struct sess_state sv;    /* its session state */
	unsigned globals_gen;    /* sv_globals_gen() when it was opened */
	struct up_stmt *stmts;
	uint16_t n_stmts, cap_stmts;
	uint64_t stmt_clock;
	unsigned purge_gen;      /* stmtreg_dropped_gen() at its last purge (mux.c) */
};

/* Statements kept prepared per connection; the least recently used one is
 * closed past this. */
#define UP_STMTS_MAX 256

/* The pool key of a connection opened for a client with these
 * capabilities: connections with equal keys are interchangeable. */
uint32_t upstream_key(uint32_t client_caps);
/* The upstream id of statement serial on u, or 0 (and it is now used). */
uint32_t upstream_stmt_id(struct upstream *u, uint64_t serial);
/* Record a statement prepared on u. If serial was already prepared on u,
 * or the map is full (then the least recently used entry goes), the upstream
 * id no longer mapped is returned in *evict (to be closed), else 0. */
void upstream_stmt_add(struct upstream *u, uint64_t serial, uint32_t up_id, uint32_t *evict);

/* Process-wide setup (registers the greeting hook). Call once. */
int upstream_global_init(void);
/* Start connecting. Returns NULL only when out of memory; failures arrive as
 * UP_EV_FAILED through cb, from the loop (never re-entrantly). */
struct upstream *upstream_open(struct ev_loop *loop, const struct upstream_params *p,
			       upstream_cb cb, void *owner);
/* Arm the socket watcher for a READY connection. */
void upstream_want(struct upstream *u, bool rd, bool wr);
/* Close and free (sends CMD_QUIT when the connection is idle and usable). */
void upstream_close(struct upstream *u, bool send_quit);

/* Server facts learnt from the first connection: version and default
 * collation, for the greeting sent to clients. Thread-safe. */
void upstream_info(char *version, size_t cap, uint8_t *collation);
/* The upstream is MariaDB (from the first connection; true until known).
 * Lock-free. */
bool upstream_mariadb(void);
/* The MariaDB extended capabilities the upstream's greeting offers (the
 * upper 32 bits; 0 when it sets CLIENT_MYSQL). Until a greeting is seen:
 * MCAP_RELAYED, what a MariaDB of the default greeting's version offers.
 * Lock-free. */
uint32_t upstream_ext_caps(void);
/* The message for what the node refuses while the upstream is down:
 * "Shoal: upstream HOST:PORT unreachable for N s; <what>". Any thread. */
void upstream_down_text(char *out, size_t cap, const char *what);
/* Blocking probe at start-up (main thread, before workers). 0 or -1. */
int upstream_probe(char *err, size_t errlen);

#endif
