/*
 * pool.c: a worker's pool of upstream connections (see pool.h): lending,
 * giving back, the FIFO of sessions waiting for a connection, watching idle
 * connections, and recycling old ones.
 */
#include "core/pool.h"

#include <stdlib.h>
#include <string.h>

#include "upstream/users.h"
#include "core/client.h"
#include "core/uplink.h"
#include "config/config.h"
#include "base/health.h"
#include "upstream/ident.h"
#include "base/log.h"
#include "upstream/probe.h"
#include "base/stats.h"
#include "upstream/upstream.h"
#include "core/worker.h"

static struct pool *pool_of(struct client *c)
{
	return c->w->pool;
}

static int64_t now_ms(struct pool *p)
{
	return (int64_t)(ev_now(p->w->loop) * 1000.0);
}

static void idle_unlink(struct pool *p, struct upstream *u)
{
	if (u->pprev)
		u->pprev->pnext = u->pnext;
	else
		p->idle = u->pnext;
	if (u->pnext)
		u->pnext->pprev = u->pprev;
	u->pnext = u->pprev = NULL;
	p->n_idle--;
	STAT_DEC(upstream_idle);
}

static void idle_push(struct pool *p, struct upstream *u)
{
	u->pprev = NULL;
	u->pnext = p->idle;
	if (p->idle)
		p->idle->pprev = u;
	p->idle = u;
	p->n_idle++;
	STAT_INC(upstream_idle);
	u->idle_since_ms = now_ms(p);
	upstream_want(u, true, false); /* see it if the upstream closes it */
}

static void close_conn(struct pool *p, struct upstream *u, bool quit)
{
	p->open--;
	upstream_close(u, quit);
}

static struct upstream *idle_tail(struct pool *p)
{
	struct upstream *u = p->idle;

	while (u && u->pnext)
		u = u->pnext;
	return u;
}

static void on_conn(struct upstream *u, enum upstream_event ev, void *owner);

/* The per-user gauges of the status page (users.h): a session is counted
 * in its account's in_use from the moment c->up is set until it is cleared,
 * and in waiting (and the node's upstream_waiting) while it is in the
 * queue. The account counted is remembered (with a reference), so a CHANGE
 * USER meanwhile cannot move the count to another account. */
static struct user_account *session_account(const struct client *c)
{
	return c->ident ? users_account_get(c->ident->acct) : NULL;
}

static void count_in_use(struct client *c)
{
	c->in_use_acct = session_account(c);
	users_account_add_in_use(c->in_use_acct, 1);
}

static void uncount_in_use(struct client *c)
{
	users_account_add_in_use(c->in_use_acct, -1);
	users_account_put(c->in_use_acct);
	c->in_use_acct = NULL;
}

static void count_waiting(struct client *c)
{
	STAT_INC(upstream_waiting);
	c->wait_acct = session_account(c);
	users_account_add_waiting(c->wait_acct, 1);
}

static void uncount_waiting(struct client *c)
{
	STAT_DEC(upstream_waiting);
	users_account_add_waiting(c->wait_acct, -1);
	users_account_put(c->wait_acct);
	c->wait_acct = NULL;
}

/* Open a connection for c (c->up is set; it reports through client_pool_*). */
static bool open_for(struct pool *p, struct client *c)
{
	struct upstream_params prm = {
		.client_caps = c->caps,
		.collation = c->collation,
		.db = c->sv.db[0] ? c->sv.db : NULL,
		.ident = c->ident,
	};
	struct upstream *u = upstream_open(p->w->loop, &prm, on_conn, p);

	if (!u)
		return false;
	p->open++;
	u->user = c;
	c->up = u;
	count_in_use(c);
	return true;
}

/* Connections are lent only to sessions of the identity they were opened
 * for (the same upstream user: ident.h). */
static bool same_identity(const struct upstream *u, const struct client *c)
{
	return u->ident_id == (c->ident ? c->ident->id : 0);
}

/* Opened before a global variable changed that c's session started with
 * (sessvars.h): its session values would be the old ones. */
static bool older_globals(const struct upstream *u, const struct client *c)
{
	return (int)(u->globals_gen - c->globals_gen) < 0;
}

/* Its user was removed or deactivated (LOAD USERS, SIGHUP). */
static bool revoked(const struct upstream *u)
{
	return u->acct && users_account_revoked(u->acct);
}

/* It logged in before accounts or privileges changed upstream, and c's
 * login came after: c must log in afresh (the account may be locked, its
 * password or default roles changed since). */
static bool older_than_login(const struct upstream *u, const struct client *c)
{
	return c->ident && (int32_t)(u->epoch - c->ident->epoch) < 0;
}

/* The best idle connection for c: same identity and key, and a schema it
 * can switch to; one already in c's state if there is one. */
static struct upstream *find_idle(struct pool *p, struct client *c)
{
	uint32_t key = upstream_key(c->caps);
	struct upstream *any = NULL;

	for (struct upstream *u = p->idle; u; u = u->pnext) {
		if (u->key != key || !same_identity(u, c) || revoked(u) || older_than_login(u, c) ||
		    older_globals(u, c) ||
		    (u->sv.db[0] && !c->sv.db[0]))
			continue;
		if (sv_equal(&u->sv, &c->sv))
			return u;
		if (!any)
			any = u;
	}
	return any;
}

static void lend(struct pool *p, struct client *c, struct upstream *u)
{
	idle_unlink(p, u);
	u->user = c;
	c->up = u;
	count_in_use(c);
	STAT_INC(upstream_borrows);
}

/* Make room for a connection for c: open one while under the limit (or by
 * closing the idle connection least recently used). false: no room. */
static bool room_for(struct pool *p, struct client *c)
{
	if (p->open >= p->limit) {
		struct upstream *old = idle_tail(p);

		if (!old)
			return false;
		idle_unlink(p, old);
		close_conn(p, old, true);
	}
	return open_for(p, c);
}

static void queue_remove(struct pool *p, struct client *c)
{
	struct client **pp = &p->wq_head, *prev = NULL;

	while (*pp && *pp != c) {
		prev = *pp;
		pp = &(*pp)->pq_next;
	}
	if (!*pp)
		return;
	*pp = c->pq_next;
	if (p->wq_tail == c)
		p->wq_tail = prev;
	c->pq_next = NULL;
	ev_timer_stop(p->w->loop, &c->pool_timer);
	uncount_waiting(c);
}

static void grant(struct pool *p, struct client *c)
{
	c->pq_next = p->granted;
	p->granted = c;
	ev_idle_start(p->w->loop, &p->grant_w);
}

/* Serve the queue from idle connections or new ones. */
static void kick(struct pool *p)
{
	while (p->wq_head) {
		struct client *c = p->wq_head;
		struct upstream *u = find_idle(p, c);

		if (!u && p->open >= p->limit && !p->idle)
			return; /* nothing to lend or open yet: the queue waits */
		queue_remove(p, c);
		client_set_state(c, CS_CONNECTING); /* out of the queue: a connection comes */
		if (u) {
			lend(p, c, u);
			grant(p, c);
		} else if (!room_for(p, c)) {
			grant(p, c); /* out of memory: c->up stays NULL, reported as failure */
		}
	}
}

static void on_grant(struct ev_loop *loop, ev_idle *w, int revents)
{
	struct pool *p = w->data;

	(void)revents;
	ev_idle_stop(loop, w);
	while (p->granted) {
		struct client *c = p->granted;

		p->granted = c->pq_next;
		c->pq_next = NULL;
		if (c->up)
			client_pool_ready(c);
		else
			client_pool_failed(c);
	}
}

static void on_wait_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct client *c = t->data;

	(void)loop;
	(void)revents;
	queue_remove(pool_of(c), c);
	STAT_INC(upstream_wait_timeouts);
	client_pool_timeout(c);
}

static void drop_idle(struct pool *p, bool quit)
{
	while (p->idle) {
		struct upstream *u = p->idle;

		idle_unlink(p, u);
		close_conn(p, u, quit);
	}
}

enum pool_result pool_acquire(struct client *c)
{
	struct pool *p = pool_of(c);
	struct upstream *u;

	if (c->up)
		return POOL_GOT;
	if (!health_upstream_up())
		drop_idle(p, false); /* suspect: the upstream check failed since they were used */
	u = p->wq_head ? NULL : find_idle(p, c); /* no overtaking the queue */
	if (u) {
		lend(p, c, u);
		return POOL_GOT;
	}
	if (!p->wq_head && (p->open < p->limit || p->idle))
		return room_for(p, c) ? POOL_PENDING : POOL_NOMEM;
	STAT_INC(upstream_waits);
	count_waiting(c);
	c->pq_next = NULL;
	if (p->wq_tail)
		p->wq_tail->pq_next = c;
	else
		p->wq_head = c;
	p->wq_tail = c;
	ev_timer_init(&c->pool_timer, on_wait_timeout, g_config.upstream_wait_timeout_ms / 1000.0, 0.);
	c->pool_timer.data = c;
	ev_timer_start(p->w->loop, &c->pool_timer);
	return POOL_QUEUED;
}

bool pool_exhausted(struct client *c)
{
	struct pool *p = pool_of(c);

	return p->wq_head || (p->open >= p->limit && !p->idle);
}

bool pool_borrow_now(struct client *c)
{
	struct pool *p = pool_of(c);
	uint32_t key = upstream_key(c->caps);

	if (c->up)
		return true;
	if (p->wq_head)
		return false;
	for (struct upstream *u = p->idle; u; u = u->pnext) {
		if (u->key == key && same_identity(u, c) && !revoked(u) && !older_than_login(u, c) &&
		    !older_globals(u, c) &&
		    sv_equal(&u->sv, &c->sv)) {
			lend(p, c, u);
			return true;
		}
	}
	return false;
}

/* Can u serve another session as it is? */
static bool reusable(const struct upstream *u)
{
	return !u->dirty && !revoked(u) && u->st == UP_READY && sbuf_in_len(&u->io) == 0 &&
	       sbuf_out_pending(&u->io) == 0 && !u->io.ssl_want_write;
}

void pool_release(struct client *c)
{
	struct pool *p = pool_of(c);
	struct upstream *u = c->up;

	if (!u)
		return;
	c->up = NULL;
	uncount_in_use(c);
	u->user = NULL;
	if (u->st != UP_READY) {
		/* still opening: it joins the idle list once it is up */
	} else if (reusable(u)) {
		u->uses++;
		idle_push(p, u);
	} else {
		close_conn(p, u, sbuf_in_len(&u->io) == 0 && sbuf_out_pending(&u->io) == 0);
	}
	kick(p);
}

void pool_discard(struct client *c)
{
	struct pool *p = pool_of(c);
	struct upstream *u = c->up;

	if (!u)
		return;
	c->up = NULL;
	uncount_in_use(c);
	close_conn(p, u, false);
	kick(p);
}

void pool_forget(struct client *c)
{
	struct pool *p = pool_of(c);
	struct client **pp = &p->granted;

	/* (the pool's own bookkeeping, not the session's state, so that a
	 * session ending in any state leaves nothing of it behind) */
	if (ev_is_active(&c->pool_timer))
		queue_remove(p, c); /* queued: the timer runs exactly then */
	/* granted a connection in this loop iteration and not yet told
	 * (on_grant): the list is short-lived and short */
	while (*pp && *pp != c)
		pp = &(*pp)->pq_next;
	if (*pp)
		*pp = c->pq_next;
}

/* Events of a connection: to its session, or the pool's own when idle. */
static void on_conn(struct upstream *u, enum upstream_event ev, void *owner)
{
	struct pool *p = owner;
	struct client *c = u->user;

	if (c) {
		if (ev == UP_EV_CONNECTED) {
			STAT_INC(upstream_borrows);
			client_pool_ready(c);
		} else if (ev == UP_EV_FAILED) {
			client_pool_failed(c);
		} else {
			client_upstream_io(c);
		}
		return;
	}
	if (ev == UP_EV_CONNECTED) {
		idle_push(p, u); /* its session went away meanwhile */
	} else if (ev == UP_EV_FAILED) {
		close_conn(p, u, false);
	} else {
		/* idle: the upstream closed it, or sent what nobody asked for */
		idle_unlink(p, u);
		log_debug("pooled upstream connection closed by the upstream while idle");
		close_conn(p, u, false);
		probe_kick(); /* is the upstream gone? */
	}
	kick(p);
}

/* Close the idle connections of users removed or deactivated. */
static void drop_revoked(struct pool *p)
{
	struct upstream *u = p->idle, *next;

	for (; u; u = next) {
		next = u->pnext;
		if (!revoked(u))
			continue;
		idle_unlink(p, u);
		close_conn(p, u, true);
	}
}

/* Recycle connections idle for too long, and those of revoked users. */
static void on_tick(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct pool *p = t->data;
	int64_t limit = g_config.upstream_max_idle_ms, now = now_ms(p);
	struct upstream *u;

	(void)loop;
	(void)revents;
	drop_revoked(p);
	if (limit <= 0)
		return;
	while ((u = idle_tail(p)) && now - u->idle_since_ms > limit) {
		idle_unlink(p, u);
		close_conn(p, u, true);
	}
}

int pool_init(struct worker *w, int n_workers)
{
	struct pool *p = calloc(1, sizeof(*p));
	int n = n_workers > 0 ? n_workers : 1;

	if (!p)
		return -1;
	p->w = w;
	p->limit = (g_config.max_upstream_connections + n - 1) / n;
	if (p->limit < 1)
		p->limit = 1;
	ev_idle_init(&p->grant_w, on_grant);
	p->grant_w.data = p;
	ev_timer_init(&p->tick, on_tick, 1.0, 1.0);
	p->tick.data = p;
	ev_timer_start(w->loop, &p->tick);
	w->pool = p;
	return 0;
}

void pool_free(struct worker *w)
{
	struct pool *p = w->pool;

	if (!p)
		return;
	drop_idle(p, true);
	ev_timer_stop(w->loop, &p->tick);
	ev_idle_stop(w->loop, &p->grant_w);
	free(p);
	w->pool = NULL;
}
