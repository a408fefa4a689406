/*
 * session.h: the cache's part of a client session's command phase. For each
 * command it decides: answer from the store (a hit), wait for another
 * session loading the same key (coalescing), read the session's settings
 * first, forward and fill a new entry (a miss), or just forward. It also
 * keeps what cache keys depend on: the session's settings, transaction and
 * write state, and its prepared statements.
 */
#ifndef SHOAL_CACHE_SESSION_H
#define SHOAL_CACHE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct client;

enum cache_step {
	CSTEP_PASS,      /* forward the command to the upstream as usual */
	CSTEP_DONE,      /* answered here: consume the command */
	CSTEP_PENDING,   /* keep the command queued: the session waits (state set) */
	CSTEP_BLOCKED,   /* keep the command queued until the upstream is free */
	CSTEP_NEED_UP,   /* borrow an upstream connection, then ask again */
};

/* Process-wide: the store, the registry, the wake-up hook. */
int cache_global_init(void);
void cache_global_free(void);

void cache_session_init(struct client *c);
void cache_session_free(struct client *c);

/* A whole command packet payload (command byte first). While a refresh is
 * upstream (CS_REFRESHING) only hits are possible; else CSTEP_BLOCKED. */
enum cache_step cache_command(struct client *c, const uint8_t *pl, uint32_t len);
/* The session has no upstream connection and will get none (it lost it
 * while the upstream went down): answer the command if the cache can (a
 * hit, possibly stale, or cache SQL) and return true; false otherwise. */
bool cache_serve_only(struct client *c, const uint8_t *pl, uint32_t len);
/* The bytes appended to the client's output from `from` on belong to the
 * answer being relayed: copy them into the entry being filled. */
void cache_tee(struct client *c, size_t from);
/* The answer to the command relayed upstream is complete. */
void cache_answer_done(struct client *c);
/* The internal settings query (CS_SETTINGS) is answered in c->scratch. */
void cache_settings_done(struct client *c);
/* The background refresh (CS_REFRESHING) is answered in c->fill_buf. */
void cache_refresh_done(struct client *c);
/* A coalescing wait ended (woken, or timed out). */
void cache_wait_over(struct client *c, bool timed_out);
/* The session ends or lost its upstream: drop fills, refreshes, waits. */
void cache_abort(struct client *c);
/* COM_CHANGE_USER: forget statements and settings. */
void cache_session_reset(struct client *c);

/* After relay_start() for cmd: tell the relay about the upstream session's
 * MariaDB extensions and where the statement's column definitions live. */
void cache_relay_setup(struct client *c, uint8_t cmd);

/* The session's prepared statements (client-visible ids). */
struct stmt_info;
void cache_stmt_add(struct client *c, uint32_t id, uint16_t nparams, uint64_t serial);
struct stmt_info *cache_stmt_find(struct client *c, uint32_t id);
/* A statement has an open cursor or long data: the connection must stay. */
bool cache_stmt_holds_conn(const struct client *c);

/* Monotonic clock for cache timing. */
int64_t cache_now_ms(struct client *c);
uint64_t cache_now_us(void);

#endif
