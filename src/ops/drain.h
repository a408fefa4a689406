/*
 * drain.h: the node's shutdown on SIGTERM/SIGINT (docs/operations.md,
 * "Drain"), a state machine on the main loop:
 *
 *   HANDOFF   listeners closed, /health 503 "draining", COM_PING fails,
 *             proxysql_admin (if set) sets the node OFFLINE_SOFT; every open
 *             session is still served, so that ProxySQL, which reuses its
 *             pooled connections, stops sending work before the node closes
 *             one. Ends when no query has come for drain_quiet_ms (after the
 *             admins answered), or after drain_handoff_ms, or when no session
 *             is left.
 *   CLOSING   each session is closed at its next idle point (workers_drain);
 *             those still open drain_timeout_ms after the signal are closed
 *             anyway.
 *   then the main loop stops.
 *
 * A second signal stops the node at once.
 */
#ifndef SHOAL_DRAIN_H
#define SHOAL_DRAIN_H

#include <ev.h>
#include <stdbool.h>

/* SIGTERM/SIGINT: start the drain, or (during one) stop at once. */
void drain_signal(struct ev_loop *loop, int signum);

#endif
