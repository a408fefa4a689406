/*
 * idle.c: owns the idle client timeout. Every event of a session that is
 * waiting for its next command restarts the session's timer (c->timer,
 * which served the handshake timeout until the login finished); when it
 * fires the session has had no event for client_idle_timeout_ms. A session
 * busy with a command (relaying, waiting for the cache, changing user) is
 * not idle: the timer is only pushed back. The closed client gets one ERR
 * packet with sequence id 0 (it was not asked anything) and the connection
 * is closed once it is written.
 */
#include "core/idle.h"

#include <ev.h>

#include "core/client.h"
#include "config/config.h"
#include "base/log.h"
#include "base/stats.h"
#include "core/worker.h"

static void on_idle(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct client *c = t->data;

	ev_tstamp left = c->idle_since + g_config.client_idle_timeout_ms / 1000.0 - ev_now(loop);

	(void)revents;
	if (c->st != CS_READY || left > 0.001) {
		/* active meanwhile (idle_arm only notes the time): wait the rest */
		t->repeat = c->st != CS_READY ? g_config.client_idle_timeout_ms / 1000.0 : left;
		ev_timer_again(loop, t);
		return;
	}
	log_info("client %u (%s): idle for %d ms, closing", c->id, c->peer,
		 g_config.client_idle_timeout_ms);
	pkt_put_errf(&c->io.out, 0, ERR_CLIENT_INTERACTION_TIMEOUT, "HY000",
			"The client was disconnected by the server because of inactivity. See "
			"client_idle_timeout_ms for configuring this behavior.");
	STAT_INC(client_idle_timeouts);
	client_set_state(c, CS_CLOSING);
	if (client_flush(c))
		client_arm(c);
}

void idle_arm(struct client *c)
{
	int ms = g_config.client_idle_timeout_ms;

	if (ms <= 0 || c->st != CS_READY)
		return;
	c->idle_since = ev_now(c->w->loop);
	if (ev_cb(&c->timer) == on_idle && ev_is_active(&c->timer))
		return; /* on the hot path: no timer update, on_idle looks at idle_since */
	if (ev_cb(&c->timer) != on_idle) {
		if (ev_is_active(&c->timer))
			return; /* still the handshake timer (a login in progress) */
		ev_set_cb(&c->timer, on_idle);
	}
	c->timer.repeat = ms / 1000.0;
	ev_timer_again(c->w->loop, &c->timer);
}
