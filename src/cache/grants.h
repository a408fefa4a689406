/*
 * grants.h: grant-correct cache hits. A cached result is served to a session
 * only while its upstream user's verdict for the query shape says that user
 * may run it: a per-(upstream user, shape) verdict, kept by each worker.
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
 */
#ifndef SHOAL_CACHE_GRANTS_H
#define SHOAL_CACHE_GRANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct client;
struct cache_def;
struct sql_tok_result;
struct worker;

enum grant_gate {
	GRANT_OK,        /* serve the hit */
	GRANT_CHECK,     /* no verdict: check upstream first (grants_start_check) */
	GRANT_REFUSED,   /* forward the command upstream, no hit */
};

/* Any thread: every verdict of every user is forgotten (user, when known,
 * is logged only: roles make a change to one grant reach other users). */
void grants_invalidate(const char *user);

/* The identity part of c's cache keys. */
uint32_t grants_key_id(const struct client *c);
/* May c use the cache at all (not after SET ROLE)? */
bool grants_session_may_cache(const struct client *c);

/* Before a hit of shape d: c's verdict. stale: the upstream is down and
 * results are served past their TTL (serve-stale): the last verdict holds
 * past grant_check_ms too, as it cannot be checked. */
enum grant_gate grants_gate(struct client *c, struct cache_def *d, int64_t now_ms, bool stale);
/* c ran a command of shape d upstream and got a result set: allowed. */
void grants_note_allowed(struct client *c, struct cache_def *d, int64_t now_ms);
/* A statement that is not a cached read went upstream: a privilege change
 * (invalidate), or SET ROLE (c's privileges become its own). */
void grants_note_statement(struct client *c, const struct sql_tok_result *tok);

/* Send the check for shape d (statement text q, n bytes) on c->up: c goes
 * to CS_SETTINGS until the answer is in c->scratch. false: not sent. */
bool grants_start_check(struct client *c, struct cache_def *d, const char *q, size_t n);
/* The check's answer is in c->scratch (cache_settings_done). */
void grants_check_done(struct client *c);
/* The check in flight, if any (CS_SETTINGS is shared with the settings
 * query). */
bool grants_checking(const struct client *c);

/* The session ends or lost its upstream: forget a check in flight. */
void grants_abort(struct client *c);

/* The worker's verdict table (freed with the worker). */
void grants_worker_free(struct worker *w);

#endif
