/*
 * wait.h: the core's side of the cache's waits (wait.c): a session parked
 * in CS_WAITING on the worker's waiting list with its timer, woken by the
 * session that loads the key (client_wake), by the catalog or the binlog,
 * or by its timer.
 */
#ifndef SHOAL_CORE_WAIT_H
#define SHOAL_CORE_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/client.h"

/* The session's wait timer, once, as it is made. */
void wait_init(struct client *c);
/* CSTEP_WAIT (or a held answer): park the session (CS_WAITING) for at most
 * cs.wait_ms; the command stays queued. */
void wait_begin(struct client *c);
/* Leave the waiting list and stop the timer (nothing if not waiting). */
void wait_unlink(struct client *c);
/* The cache gives up what the session was doing for it (fill, refresh,
 * wait). */
void wait_abort_cache(struct client *c);
/* A coalescing wake-up arrived for session client_id (ignored if stale). */
void client_wake(struct worker *w, uint32_t client_id, uint32_t gen);

#endif
