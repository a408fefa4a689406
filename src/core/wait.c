/*
 * wait.c: owns the core's side of the cache's waits (see wait.h): the
 * worker's waiting list, the wait timer, the wake-ups, and what the cache
 * gives up when the session's command does not go on.
 */
#include "core/wait.h"

#include "cache/answer.h"
#include "cache/session.h"
#include "core/worker.h"

void wait_unlink(struct client *c)
{
	struct worker *w = c->w;

	ev_timer_stop(w->loop, &c->wait_timer);
	if (c->wait_prev)
		c->wait_prev->wait_next = c->wait_next;
	else if (w->waiting == c)
		w->waiting = c->wait_next;
	if (c->wait_next)
		c->wait_next->wait_prev = c->wait_prev;
	c->wait_prev = c->wait_next = NULL;
}

/* CSTEP_WAIT: wait (the command stays queued) for a wake-up from the
 * session loading the key (client_wake), at most cs.wait_ms. */
void wait_begin(struct client *c)
{
	struct worker *w = c->w;

	client_set_state(c, CS_WAITING);
	c->wait_prev = NULL;
	c->wait_next = w->waiting;
	if (w->waiting)
		w->waiting->wait_prev = c;
	w->waiting = c;
	ev_timer_set(&c->wait_timer, c->cs.wait_ms / 1000.0, 0.);
	ev_timer_start(w->loop, &c->wait_timer);
}

static void wait_over(struct client *c, bool timed_out)
{
	wait_unlink(c);
	cache_wait_over(&c->cs, timed_out);
	client_set_state(c, CS_READY);
	client_process_input(c);
}

static void on_wait_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
	(void)loop;
	(void)revents;
	wait_over(t->data, true);
}

void wait_init(struct client *c)
{
	ev_timer_init(&c->wait_timer, on_wait_timeout, 0., 0.);
	c->wait_timer.data = c;
}

void client_wake(struct worker *w, uint32_t client_id, uint32_t gen)
{
	for (struct client *c = w->waiting; c; c = c->wait_next) {
		if (c->id != client_id)
			continue;
		if (c->st == CS_WAITING && cache_wait_current(&c->cs, gen))
			wait_over(c, false);
		return;
	}
}

/* The cache gives up what the session was doing for it (fill, refresh,
 * wait). */
void wait_abort_cache(struct client *c)
{
	wait_unlink(c);
	cache_abort(&c->cs);
}
