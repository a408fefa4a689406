/*
 * grants.h: grant-correct cache hits. A cached result is served to a session
 * only while its upstream user's verdict for the query shape says that user
 * may run it: a per-(upstream user, shape, session settings) verdict, kept
 * by each worker. The settings (cache/settings.h) hold the schema, which
 * decides what the shape's unqualified names are: a verdict got in one
 * schema says nothing of another.
 *
 * A verdict comes from the upstream, as that user: a command of the shape
 * that the user ran upstream and that returned a result set (a miss, a
 * refresh, a passthrough) makes it "allowed"; when a hit finds no verdict,
 * or an expired one, the session first checks upstream with a
 * COM_STMT_PREPARE of the statement on its own connection (privileges on
 * tables, columns, views and routines are checked by the server at prepare,
 * nothing runs), then closes the statement. An error makes it "refused": the
 * command goes upstream and the user gets the upstream's own answer.
 *
 * Verdicts hold grant_check_ms (default 1 s) and are all forgotten at once
 * by grants_invalidate(): called for GRANT, REVOKE, ALTER/DROP/RENAME USER,
 * SET PASSWORD, roles and FLUSH PRIVILEGES seen through this node, by
 * LOAD USERS / SIGHUP, and by whatever else learns of a privilege change
 * (the binlog follower). A session that ran SET ROLE has privileges of its
 * own: the cache is bypassed for it (grants_session_may_cache).
 *
 * Which sessions share an entry is the key's business: grants_key_id() is
 * part of every cache key (cache_scope=user: the upstream user; shared: 0).
 *
 * Threads: the verdict table is per worker (its thread only, no lock); the
 * epoch is one relaxed atomic, written by grants_invalidate (any thread).
 *
 * Layering: this file stands below cache/session.c (which embeds struct
 * grant_session and struct grant_worker) and, like all of src/cache/, knows
 * nothing of the session core: it is handed the session's identity and its
 * grant state; the check itself is sent and answered by the core
 * (CSTEP_GRANT_CHECK, UPCMD_GRANT_CHECK).
 */
#ifndef SHOAL_CACHE_GRANTS_H
#define SHOAL_CACHE_GRANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/packet.h"
#include "proto/relay.h"

struct cache_def;
struct ident;
struct stmt;
struct grant_table;

enum grant_gate {
	GRANT_OK,        /* serve the hit */
	GRANT_CHECK,     /* no verdict: check upstream first (CSTEP_GRANT_CHECK) */
	GRANT_REFUSED,   /* forward the command upstream, no hit */
};

/* A session's side: the check of its command's shape, if any. */
struct grant_session {
	struct cache_def *def;        /* the shape whose verdict is checked */
	uint32_t scope;               /* ... under these settings (their interned id) */
	uint8_t state;                /* ... and how far the check is */
	bool refused;                 /* this command's hit was refused by the verdict */
};

/* A worker's verdicts (its thread only). */
struct grant_worker {
	struct grant_table *t;        /* made on the first verdict recorded */
};

/* Any thread: every verdict of every user is forgotten (user, when known,
 * is logged only: roles make a change to one grant reach other users). */
void grants_invalidate(const char *user);
/* Moves with each grants_invalidate() (what else privileges decide, such
 * as a kept PREPARE answer, is stamped with it). */
uint32_t grants_epoch(void);

/* The identity part of a session's cache keys (id: its identity, or NULL). */
uint32_t grants_key_id(const struct ident *id);
/* May the session use the cache at all (not after SET ROLE)? */
bool grants_session_may_cache(const struct ident *id);

/* Before a hit of shape d under the session settings scope: the verdict.
 * stale: the upstream is down and results are served past their TTL
 * (serve-stale): the last verdict holds past grant_check_ms too, as it
 * cannot be checked. */
enum grant_gate grants_gate(struct grant_session *gs, struct grant_worker *gw, const struct ident *id,
			    struct cache_def *d, uint32_t scope, int64_t now_ms, bool stale);
/* The session ran a command of shape d upstream under the settings scope
 * and got a result set: allowed. */
void grants_note_allowed(struct grant_worker *gw, const struct ident *id, struct cache_def *d,
			 uint32_t scope, int64_t now_ms);
/* Is the statement text[0, n) (raw, as a client or the binlog has it) one
 * that changes privileges or accounts (GRANT, REVOKE, ALTER USER, ...)? */
bool grants_text_changes_privileges(const char *text, size_t n);
/* Is schema.table one of the mysql schema's privilege tables (a row
 * written there changes privileges, FLUSH or not)? */
bool grants_table_is_privileges(const char *schema, size_t slen, const char *table, size_t tlen);
/* A statement that is not a cached read went upstream (st: its reading,
 * sql/stmt.h; NULL when it could not be read): a privilege change
 * (invalidate), or SET ROLE (the session's privileges become its own). */
void grants_note_statement(struct ident *id, const struct stmt *st);

/* The check of gs->def (a COM_STMT_PREPARE of the statement as the user)
 * was sent upstream. */
void grants_check_sent(struct grant_session *gs, struct grant_worker *gw, const struct ident *id,
		       int64_t now_ms);
/* Its answer (r, the bytes in answer): the verdict is recorded. Returns the
 * upstream id of the statement it prepared, which the caller closes on the
 * connection (0: none). conn_id is for the log. */
uint32_t grants_check_done(struct grant_session *gs, struct grant_worker *gw, const struct ident *id,
			   const struct relay *r, const struct pbuf *answer, int64_t now_ms,
			   uint32_t conn_id);

/* The session ends or lost its upstream: forget a check in flight. */
void grants_abort(struct grant_session *gs);

/* The worker's verdict table (freed with the worker). */
void grants_worker_free(struct grant_worker *gw);

#endif
