/*
 * worker.h: worker threads. Each runs one libev loop and owns every
 * connection handed to it for that connection's whole life. The listener
 * hands accepted sockets over through a small mutex-guarded queue and an
 * ev_async wake-up; that queue and the client count (an atomic) are the only
 * state a worker shares.
 */
#ifndef SHOAL_WORKER_H
#define SHOAL_WORKER_H

#include <ev.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "cache/session.h"

struct client;

/* A session the node opens to itself (core/refill.c): no handshake, it
 * starts logged in as user, with these capabilities, collation and
 * schema. Only a socket pair leads to it, never a listener. */
struct internal_login {
	char user[128];
	char db[256];
	uint32_t caps;             /* CAP_* (CAP_X_EXT_METADATA included) */
	uint16_t collation;
};

struct handoff {
	int fd;
	struct sockaddr_storage peer;
	struct internal_login *internal; /* NULL: a client of a listener; else owned */
};

/* A message for one session of a worker, through its mailbox. */
enum wake_kind {
	WAKE_CACHE,            /* a coalescing wake-up (gen: the wait's) */
	WAKE_KILL_QUERY,       /* KILL QUERY <session id> (kill.h) */
	WAKE_KILL_CONNECTION,  /* KILL [CONNECTION] <session id> */
};

struct wakeup {
	uint32_t client_id;
	uint32_t gen;
	uint8_t kind;          /* enum wake_kind */
};

struct worker {
	int idx;
	pthread_t thread;
	struct ev_loop *loop;
	ev_async wake;
	pthread_mutex_t lock;         /* guards queue, n_queue, cap_queue, stop, drain */
	struct handoff *queue;
	size_t n_queue, cap_queue;
	bool stop;
	bool drain;                   /* asked to drain (workers_drain) */
	bool draining;                /* ... and seen by the worker (its thread only) */
	struct wakeup *wakeups;       /* guarded by lock */
	size_t n_wakeups, cap_wakeups;
	atomic_int n_clients;         /* read by the listener to place new sockets */
	struct client *clients;       /* owned by this worker's thread only */
	struct client *waiting;       /* clients in CS_WAITING (this thread only) */
	struct cache_worker cache;    /* the cache's per-worker state (cache/session.h) */
	struct pool *pool;            /* its upstream connections (pool.h) */
	SSL_CTX *tls;                 /* shared, read-only */
};

/* Start n workers. 0 or -1. */
int workers_start(int n, SSL_CTX *tls);
/* The worker with the fewest clients. */
struct worker *workers_pick(void);
/* Give fd to w. 0, or -1 (then the caller closes fd). */
int worker_hand_off(struct worker *w, int fd, const struct sockaddr_storage *peer);
/* Give w one end of a socket pair for a session of the node's own (in is
 * then w's to free). 0, or -1 (the caller closes fd and frees in). */
int worker_hand_off_internal(struct worker *w, int fd, struct internal_login *in);
/* Ask all workers to close their clients and stop; join them. */
void workers_stop(void);
/* Ask all workers to drain: close each session at its next idle point
 * (client_drain), and refuse sockets still queued for them. */
void workers_drain(void);
/* Client connections of all workers, open or queued. Any thread. */
int workers_clients(void);

/* Wake a session waiting on a cache key (any thread). */
void worker_wake(struct worker *w, uint32_t client_id, uint32_t gen);
/* Post any message to one of w's sessions (any thread). */
void worker_post(struct worker *w, uint32_t client_id, uint32_t gen, enum wake_kind kind);

void worker_add_client(struct worker *w, struct client *c);
void worker_remove_client(struct worker *w, struct client *c);

#endif
