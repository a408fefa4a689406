/*
 * worker.c: starting, feeding, draining and stopping worker threads (one
 * libev loop each), and placing new connections on the least-loaded one.
 */
#include "core/worker.h"
#include "core/pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mysql.h>

#include "cache/registry.h"
#include "core/client.h"
#include "core/dispatch.h"
#include "core/wait.h"
#include "core/listener.h"
#include "base/log.h"
#include "base/stats.h"
#include "proto/compress.h"

static struct worker *workers;
static int n_workers;

void worker_wake(struct worker *w, uint32_t client_id, uint32_t gen)
{
	worker_post(w, client_id, gen, WAKE_CACHE);
}

void worker_post(struct worker *w, uint32_t client_id, uint32_t gen, enum wake_kind kind)
{
	pthread_mutex_lock(&w->lock);
	if (w->n_wakeups == w->cap_wakeups) {
		size_t cap = w->cap_wakeups ? w->cap_wakeups * 2 : 64;
		struct wakeup *q = realloc(w->wakeups, cap * sizeof(*q));

		if (!q) {
			/* the session's wait timer will end its wait instead */
			pthread_mutex_unlock(&w->lock);
			return;
		}
		w->wakeups = q;
		w->cap_wakeups = cap;
	}
	w->wakeups[w->n_wakeups].client_id = client_id;
	w->wakeups[w->n_wakeups].gen = gen;
	w->wakeups[w->n_wakeups].kind = (uint8_t)kind;
	w->n_wakeups++;
	pthread_mutex_unlock(&w->lock);
	ev_async_send(w->loop, &w->wake);
}

static void drain_wakeups(struct worker *w)
{
	struct wakeup batch[64];
	size_t n;

	do {
		pthread_mutex_lock(&w->lock);
		n = w->n_wakeups < 64 ? w->n_wakeups : 64;
		if (n) {
			memcpy(batch, w->wakeups, n * sizeof(batch[0]));
			memmove(w->wakeups, w->wakeups + n, (w->n_wakeups - n) * sizeof(batch[0]));
			w->n_wakeups -= n;
		}
		pthread_mutex_unlock(&w->lock);
		for (size_t i = 0; i < n; i++) {
			if (batch[i].kind == WAKE_CACHE)
				client_wake(w, batch[i].client_id, batch[i].gen);
			else
				client_kill(w, batch[i].client_id, batch[i].kind == WAKE_KILL_QUERY);
		}
	} while (n == 64);
}

/* A socket handed over after stop or drain: closed (with an error first
 * when draining) instead of becoming a session. */
static void drop_handoff(struct worker *w, const struct handoff *h, bool stop)
{
	int fd = h->fd;
	bool internal = h->internal != NULL;

	free(h->internal);
	if (stop || internal)
		close(fd);
	else
		listener_refuse(fd, ERR_SERVER_SHUTDOWN, "08S01", "Server shutdown in progress");
	atomic_fetch_sub(&w->n_clients, 1);
	STAT_DEC(client_connections);
}

/* The drain starts: idle sessions close now, the others at their next idle
 * point. */
static void start_drain(struct worker *w)
{
	struct client *c, *next;

	w->draining = true;
	for (c = w->clients; c; c = next) {
		next = c->next;
		client_drain(c);
	}
}

static void drain_queue(struct worker *w)
{
	struct handoff batch[64];
	size_t n;
	bool stop, drain;

	for (;;) {
		pthread_mutex_lock(&w->lock);
		n = w->n_queue < 64 ? w->n_queue : 64;
		if (n) {
			memcpy(batch, w->queue, n * sizeof(batch[0]));
			memmove(w->queue, w->queue + n, (w->n_queue - n) * sizeof(batch[0]));
			w->n_queue -= n;
		}
		stop = w->stop;
		drain = w->drain;
		pthread_mutex_unlock(&w->lock);
		for (size_t i = 0; i < n; i++) {
			if (stop || drain)
				drop_handoff(w, &batch[i], stop);
			else
				client_accept(w, batch[i].fd, &batch[i].peer, batch[i].internal);
		}
		if (n < 64)
			break;
	}
	if (drain && !w->draining && !stop)
		start_drain(w);
	if (stop) {
		while (w->clients)
			client_close(w->clients, "shutting down");
		pool_free(w);
		ev_break(w->loop, EVBREAK_ALL);
	}
}

static void on_wake(struct ev_loop *loop, ev_async *a, int revents)
{
	(void)loop;
	(void)revents;
	drain_wakeups(a->data);
	drain_queue(a->data);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[16];

	/* named for top -H, perf and /proc/PID/task/TID/comm */
	snprintf(name, sizeof(name), "shoal-worker%d", w->idx);
	pthread_setname_np(pthread_self(), name);
	def_slot_idx = (unsigned)w->idx; /* its own counter slot (cache/registry.h) */
	mysql_thread_init();
	ev_run(w->loop, 0);
	compress_thread_end();
	mysql_thread_end();
	return NULL;
}

int workers_start(int n, SSL_CTX *tls)
{
	workers = calloc((size_t)n, sizeof(*workers));
	if (!workers)
		return -1;
	for (int i = 0; i < n; i++) {
		struct worker *w = &workers[i];

		w->idx = i;
		w->tls = tls;
		w->loop = ev_loop_new(EVFLAG_AUTO);
		if (!w->loop)
			return -1;
		pthread_mutex_init(&w->lock, NULL);
		if (pool_init(w, n) < 0)
			return -1;
		ev_async_init(&w->wake, on_wake);
		w->wake.data = w;
		ev_async_start(w->loop, &w->wake);
		errno = pthread_create(&w->thread, NULL, worker_main, w);
		if (errno) {
			log_error("cannot start worker thread: %s", strerror(errno));
			return -1;
		}
		n_workers = i + 1;
	}
	return 0;
}

struct worker *workers_pick(void)
{
	struct worker *best = &workers[0];

	for (int i = 1; i < n_workers; i++)
		if (atomic_load(&workers[i].n_clients) < atomic_load(&best->n_clients))
			best = &workers[i];
	return best;
}

static int enqueue(struct worker *w, int fd, const struct sockaddr_storage *peer,
		   struct internal_login *in)
{
	pthread_mutex_lock(&w->lock);
	if (w->n_queue == w->cap_queue) {
		size_t cap = w->cap_queue ? w->cap_queue * 2 : 64;
		struct handoff *q = realloc(w->queue, cap * sizeof(*q));

		if (!q) {
			pthread_mutex_unlock(&w->lock);
			return -1;
		}
		w->queue = q;
		w->cap_queue = cap;
	}
	w->queue[w->n_queue].fd = fd;
	w->queue[w->n_queue].peer = *peer;
	w->queue[w->n_queue].internal = in;
	w->n_queue++;
	atomic_fetch_add(&w->n_clients, 1);
	pthread_mutex_unlock(&w->lock);
	ev_async_send(w->loop, &w->wake);
	return 0;
}

int worker_hand_off(struct worker *w, int fd, const struct sockaddr_storage *peer)
{
	return enqueue(w, fd, peer, NULL);
}

int worker_hand_off_internal(struct worker *w, int fd, struct internal_login *in)
{
	struct sockaddr_storage peer = { .ss_family = AF_UNIX };

	STAT_INC(client_connections); /* as the listener does: before the worker may close it */
	if (enqueue(w, fd, &peer, in) < 0) {
		STAT_DEC(client_connections);
		return -1;
	}
	return 0;
}

void workers_stop(void)
{
	for (int i = 0; i < n_workers; i++) {
		pthread_mutex_lock(&workers[i].lock);
		workers[i].stop = true;
		pthread_mutex_unlock(&workers[i].lock);
		ev_async_send(workers[i].loop, &workers[i].wake);
	}
	for (int i = 0; i < n_workers; i++) {
		pthread_join(workers[i].thread, NULL);
		ev_loop_destroy(workers[i].loop);
		pthread_mutex_destroy(&workers[i].lock);
		free(workers[i].queue);
		free(workers[i].wakeups);
		cache_worker_free(&workers[i].cache);
	}
	free(workers);
	workers = NULL;
	n_workers = 0;
}

void workers_drain(void)
{
	for (int i = 0; i < n_workers; i++) {
		pthread_mutex_lock(&workers[i].lock);
		workers[i].drain = true;
		pthread_mutex_unlock(&workers[i].lock);
		ev_async_send(workers[i].loop, &workers[i].wake);
	}
}

int workers_clients(void)
{
	int n = 0;

	for (int i = 0; i < n_workers; i++)
		n += atomic_load(&workers[i].n_clients);
	return n;
}

void worker_add_client(struct worker *w, struct client *c)
{
	c->w = w;
	c->prev = NULL;
	c->next = w->clients;
	if (w->clients)
		w->clients->prev = c;
	w->clients = c;
}

void worker_remove_client(struct worker *w, struct client *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		w->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	atomic_fetch_sub(&w->n_clients, 1);
}
