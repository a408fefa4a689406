/*
 * health.h: the node's health as seen by /health and /ready: whether the
 * upstream is reachable (and since when it is not), and whether the node is
 * draining. Written by the workers and main, read by the HTTP thread; the
 * state is a few atomics, no locks, safe to call from any thread.
 */
#ifndef SHOAL_HEALTH_H
#define SHOAL_HEALTH_H

#include <stdbool.h>
#include <stddef.h>

/* An upstream connect succeeded: the upstream is up. */
void health_upstream_ok(void);

/* An upstream connect failed. The first failure after an ok starts the
 * "down since" clock; later failures keep it. */
void health_upstream_failed(void);

/* Draining: the node is shutting down and should get no new clients. */
void health_set_draining(bool on);
bool health_draining(void);

/* True unless a connect failed after the last ok (true before any connect). */
bool health_upstream_up(void);

/* Seconds since the first failure of the current outage; 0 when up. */
double health_upstream_down_seconds(void);

/* The outage after which the node takes itself out of rotation (refused
 * connections, failing COM_PING under the shun policy). Default 3000 ms. */
void health_set_down_after_ms(int ms);

/* The upstream has been down for longer than that threshold. */
bool health_upstream_down_too_long(void);

/* Whether the node should get traffic: false when draining, or when the
 * upstream has been down for longer than down_after_ms. When why is not
 * NULL it receives "serving", "draining" or "upstream_down". */
bool health_serving(int down_after_ms, char *why, size_t n);

#endif
