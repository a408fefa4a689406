/*
 * status.h: the data behind the node's status page (docs/status-page.md):
 * a sample of the node's counters every second, kept for 15 minutes in a
 * ring (status_ring.h), and the /status.json body built from it and from
 * the live state (health, binlog, cache, registry, pool, users).
 *
 * The sampler is an ev_timer on the main thread's loop; it reads counters
 * that already exist (relaxed atomics), so the cache-hit path does nothing
 * for it. The ring is guarded by one mutex, taken once a second by the
 * sampler and once per /status.json by the HTTP thread.
 */
#ifndef SHOAL_STATUS_H
#define SHOAL_STATUS_H

#include <ev.h>

/* Start sampling on loop (the main thread's). 0, or -1 on a bad state. */
int status_start(struct ev_loop *loop);
void status_stop(struct ev_loop *loop);

/* The /status.json body: malloc'd and NUL-terminated, or NULL when out of
 * memory. health_word is /health's status word ("serving", ...). */
char *status_render_json(const char *health_word);

#endif
