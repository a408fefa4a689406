/*
 * sessvars.h: the upstream session state a client session carries with it
 * when its commands run on pooled upstream connections (multiplexing), and
 * what a statement does to that state, from its reading (sql/stmt.h,
 * sql/setuse.h).
 *
 * A session's state is its schema, its character set (SET NAMES / SET
 * CHARACTER SET, or the handshake collation) and the session variables it
 * set to literal values. Each pooled connection records the same for
 * itself; before a borrowed connection runs a session's command, the
 * difference is applied (sv_sync_sql), and nothing when there is none.
 *
 * What cannot be carried over (user variables, temporary tables, locks,
 * SQL-level PREPARE, SET with computed values, ...) pins the session to its
 * connection: sv_classify says which. The rules are listed in
 * docs/architecture.md ("Multiplexing").
 */
#ifndef SHOAL_SESSVARS_H
#define SHOAL_SESSVARS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/packet.h"
#include "sql/stmt.h"

#define SV_NAME_MAX 64
#define SV_VALUE_MAX 512
#define SV_VARS_MAX 64
#define SV_DB_MAX 256
#define SV_NAMES_MAX 128

struct sv_var {
	char name[SV_NAME_MAX];       /* lower case */
	char value[SV_VALUE_MAX];     /* a literal, as the client wrote it */
};

struct sess_state {
	char db[SV_DB_MAX];           /* "" for none */
	char names[SV_NAMES_MAX];     /* "NAMES x COLLATE y" / "CHARACTER SET x" */
	uint16_t n_vars;
	struct sv_var *vars;          /* n_vars entries, heap (NULL when none) */
};

/* What a statement does to the session, from sv_classify. */
#define SV_PIN_FOREVER  0x01   /* the session keeps its connection for good */
#define SV_PIN_LOCK     0x02   /* LOCK TABLES / FLUSH ... WITH READ LOCK */
#define SV_UNLOCK       0x04   /* UNLOCK TABLES */
#define SV_STICKY_NEXT  0x08   /* keep the connection for the next command */
#define SV_CHANGES      0x10   /* the delta applies once the statement succeeds */
#define SV_GLOBAL       0x20   /* it sets a global variable (sv_globals_changed) */
#define SV_PROFILING    0x40   /* it names profiling: SHOW PROFILES lists every
				* statement of the connection (pins for good) */
#define SV_TELLS_ID     0x80   /* it reads CONNECTION_ID(): the upstream thread
				* id is the session's to KILL (kill_note_told) */
#define SV_SELECTS      0x100  /* it has a SELECT (INSERT ... SELECT sets
				* FOUND_ROWS() with no result set) */
#define SV_RELEASE      0x200  /* COMMIT/ROLLBACK ... RELEASE: the server ends
				* the session after its OK */
#define SV_RELEASE_IF   0x400  /* a plain COMMIT/ROLLBACK: so does it when the
				* session's completion_type is RELEASE
				* (sv_completion_releases) */

/* The state change a statement makes when it succeeds. */
struct sv_delta {
	bool set_db;
	bool drop_db;                 /* DROP DATABASE db: a state whose schema it
				       * is has none after it (as the server) */
	char db[SV_DB_MAX];
	bool set_names;
	char names[SV_NAMES_MAX];
	uint16_t n;
	struct {
		char name[SV_NAME_MAX];
		char value[SV_VALUE_MAX];  /* "" for DEFAULT: the variable is dropped */
	} vars[8];
};

void sv_init(struct sess_state *s);
void sv_free(struct sess_state *s);
/* Copy src over dst. 0 or -1 (out of memory; dst then unchanged). */
int sv_copy(struct sess_state *dst, const struct sess_state *src);
/* The character set of a handshake collation id ("" if unknown). */
void sv_names_from_collation(struct sess_state *s, uint16_t collation);
/* Apply a delta. 0 or -1 (out of memory, or too many variables). */
int sv_apply(struct sess_state *s, const struct sv_delta *d);

/* What a statement does, from its reading (sql/stmt.h: st read; NULL when
 * it could not be read, which pins): SV_* flags, and the delta when
 * SV_CHANGES. mariadb selects the variable names of SET TRANSACTION. */
unsigned sv_classify(const struct stmt *st, struct sv_delta *d, bool mariadb);
/* The session set completion_type to RELEASE (or 2). */
bool sv_completion_releases(const struct sess_state *s);

/* Bring a connection in state have to state want. *init_db is set when the
 * schema differs (run COM_INIT_DB with want->db first); sql receives one SET
 * statement, or nothing. Returns -1 when the connection cannot get there
 * (it has a schema and want has none) or on out of memory. */
int sv_sync_sql(const struct sess_state *have, const struct sess_state *want,
		bool *init_db, struct pbuf *sql);

bool sv_equal(const struct sess_state *a, const struct sess_state *b);
/* A session's variables start from the global values of the moment it
 * connects. A statement through the node that sets a global variable
 * moves a node-wide generation (sv_globals_changed, once it succeeded);
 * sessions logged in and connections opened since carry the new one, and a
 * session is not lent a connection older than its own generation (pool.c).
 * Any thread. */
unsigned sv_globals_gen(void);
void sv_globals_changed(void);
/* Append a canonical byte form of the state to out (equal states give
 * equal bytes: the variables are written in name order). 0 or -1. */
int sv_serialize(const struct sess_state *s, struct pbuf *out);

#endif
