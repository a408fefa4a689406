/*
 * pool.h: each worker's pool of upstream connections (multiplexing).
 *
 * A worker holds at most its share of max_upstream_connections (split
 * evenly across workers; every connection belongs to one worker's loop, as
 * its sessions do). A session borrows a connection for a command that must
 * go upstream and gives it back as soon as nothing pins it (client.c and
 * mux.c decide that); cache hits never borrow.
 *
 * Borrowing takes an idle connection with the same key (the protocol
 * capabilities it was opened with: see upstream_key), preferring one whose
 * session state already equals the session's; else opens a new one while
 * under the limit; else replaces an idle connection of another key; else
 * the session waits in FIFO order, up to upstream_wait_timeout_ms, and then
 * gets error 1040 naming the pool.
 *
 * Idle connections are watched: one the upstream closes (wait_timeout, a
 * restart, KILL) is dropped at once. Connections idle longer than
 * upstream_max_idle_ms are closed (recycled), newest kept.
 *
 * Everything here runs on the owning worker's thread; the only shared state
 * is the stats counters (atomics).
 */
#ifndef SHOAL_POOL_H
#define SHOAL_POOL_H

#include <ev.h>
#include <stdbool.h>

struct worker;
struct client;
struct upstream;

struct pool {
	struct worker *w;
	int limit;                    /* this worker's share */
	int open;                     /* connections open or being opened */
	struct upstream *idle;        /* idle, most recently used first */
	int n_idle;
	struct client *wq_head, *wq_tail;   /* sessions waiting, oldest first */
	struct client *granted;       /* granted an idle connection, to be told */
	ev_idle grant_w;
	ev_timer tick;
};

enum pool_result {
	POOL_GOT,        /* c->up is set and ready */
	POOL_PENDING,    /* a connection is being opened for c: the pool reports
			  * through client_pool_ready / _failed (client.h); the caller
			  * puts c in CS_CONNECTING */
	POOL_QUEUED,     /* every connection is busy: c waits in the queue; the
			  * caller puts it in CS_QUEUED. When one is free the pool
			  * moves c to CS_CONNECTING and reports as for PENDING; the
			  * wait timing out, through client_pool_timeout */
	POOL_NOMEM,
};

int pool_init(struct worker *w, int n_workers);
void pool_free(struct worker *w);

enum pool_result pool_acquire(struct client *c);
/* Every connection is busy (a borrower would wait). */
bool pool_exhausted(struct client *c);
/* An idle connection already in c's state, now, or false (no waiting). */
bool pool_borrow_now(struct client *c);
/* Give c->up back (closed instead when it is dirty or not clean). */
void pool_release(struct client *c);
/* Close c->up (broken, or its state is unknown). */
void pool_discard(struct client *c);
/* The session ends: leave the queue (CS_QUEUED) or the list of those
 * granted a connection (CS_CONNECTING), so that no report reaches it. */
void pool_forget(struct client *c);

#endif
