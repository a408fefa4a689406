/*
 * refill.h: the refill of a restarted node's saved keys. Where a cache
 * snapshot's data is not served (not loaded in writes or ttl mode, dropped
 * because the binlog position is gone, or invalidated by the replay), its
 * text statements are read again from the upstream, the costliest first
 * (by the upstream time their hits saved), at most warm_rate a second, for
 * at most warm_timeout_ms (docs/operations.md, "The refill").
 *
 * Each statement goes through a session of the node's own, opened on a
 * socket pair and handed to a worker as if a client of the entry's user had
 * connected with the entry's capabilities and schema (worker.h:
 * internal_login); the entry's settings are set on it first. So the refill
 * is exactly a client's miss: the same grant check, key, binlog hold and
 * store, and a client's miss on a key being refilled joins that fill (and
 * the other way round). Users whose clear password the node does not have
 * are not refilled (their keys fill on their clients' misses).
 *
 * One thread, blocking reads on its end of the socket pairs; its progress
 * is in the warm status (cache/warm.h).
 */
#ifndef SHOAL_REFILL_H
#define SHOAL_REFILL_H

/* Take the keys warm_restore() collected and start the refill thread
 * (after workers_start and warm_restore). Nothing when there are none or
 * warm_rate is 0. 0, or -1 when the thread cannot start (logged). */
int refill_start(void);
/* Make it stop soon (the drain begins: its sessions must not keep the
 * node busy); any thread, no wait. */
void refill_interrupt(void);
/* Stop it (the node stops): closes its sessions, joins the thread. */
void refill_stop(void);

#endif
