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
 * The seam is three modules on the same state (session_types.h): this one
 * asks (cache_command, session.c: keys, hits, misses, fills started,
 * waits begun), answer.h takes what comes back (the answer's bytes and its
 * end, a refresh's answer, a wait's end), settings_query.h reads the
 * settings keys depend on. Neither of those two calls back into this one.
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

#include "cache/session_types.h"

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
/* The session is reset (COM_RESET_CONNECTION, COM_CHANGE_USER): forget the
 * settings, the transaction, locks and temporary tables, a pending SET
 * TRANSACTION. */
void cache_session_reset(struct cache_session *cs);

/* A whole command packet payload (command byte first), with the session's
 * statement table already told of it (stmts_note_command). What the cache
 * does with it is the command table's `cache` column (proto/command.h).
 * While a refresh is upstream only hits are possible, else CSTEP_BLOCKED. */
enum cache_step cache_command(struct cache_session *cs, const struct cache_ctx *x,
			      const uint8_t *pl, uint32_t len);
/* The session has no upstream connection and will get none (it lost it
 * while the upstream went down): answer the command if the cache can (a
 * hit, possibly stale, or cache SQL) and return true (the command is then
 * no longer in flight: cache_note_own_error counts nothing); false
 * otherwise. */
bool cache_serve_only(struct cache_session *cs, const struct cache_ctx *x, const uint8_t *pl,
		      uint32_t len);

/* CSTEP_REFRESH: the refresh could not start. */
void cache_refresh_cancel(struct cache_session *cs);
/* CSTEP_GRANT_CHECK: the check was sent, or could not be (then the command
 * goes upstream without a hit). */
void cache_grant_check_sent(struct cache_session *cs, const struct cache_ctx *x);
void cache_grant_check_failed(struct cache_session *cs);
/* Its answer. Returns the upstream id of the statement it prepared, to be
 * closed on the connection (0: none). */
uint32_t cache_grant_check_done(struct cache_session *cs, const struct cache_ctx *x,
				const struct relay *r, const struct pbuf *answer);

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
