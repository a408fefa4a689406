/*
 * probe.h: the upstream check, run on the main thread's loop. Health (see
 * health.h) learns about the upstream from connection attempts; the check
 * makes those attempts when clients do not:
 *
 *   - while the upstream counts as down, one attempt every second, so the
 *     node notices by itself that the upstream is back (a shunned node
 *     refuses the client connections that would otherwise have told it);
 *   - while it counts as up, one every two seconds: with pooled connections
 *     idle, nothing else would notice an upstream that went silent;
 *   - at once when a worker lost an upstream connection (probe_kick), so an
 *     upstream that went away is noticed before a client needs it.
 *
 * An attempt is an ordinary upstream connection (upstream_open), closed as
 * soon as it is up; at most one is in flight.
 */
#ifndef SHOAL_PROBE_H
#define SHOAL_PROBE_H

#include <ev.h>

/* Start the checks on loop (the main loop). Call before the workers start. */
void probe_start(struct ev_loop *loop);
/* Ask for a check now. Any thread; a no-op before probe_start or after
 * probe_stop. */
void probe_kick(void);
/* Stop the checks and close an attempt in flight. Main thread, after the
 * workers stopped. */
void probe_stop(void);

#endif
