/*
 * probe.c: the upstream check (see probe.h). It owns one timer (every
 * PROBE_INTERVAL), one ev_async for kicks from the workers, and the attempt
 * in flight, all on the main loop. The outcome of an attempt reaches health
 * through upstream.c, as for any connection; this file only logs the
 * changes it sees.
 */
#include "upstream/probe.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"
#include "base/health.h"
#include "base/log.h"
#include "upstream/upstream.h"

#define PROBE_INTERVAL 1.0 /* seconds */
/* While the upstream counts as up, a check every this many ticks, so that
 * an upstream that went silent (a partition: no FIN, no RST) is noticed
 * even when the pooled connections stay idle. */
#define PROBE_UP_EVERY 2

static struct ev_loop *p_loop;
static ev_timer tick;
static ev_async kick;
static atomic_bool running;
static atomic_bool kicked;
static struct upstream *inflight;
static bool reported_down;           /* the current outage was logged */

static void on_attempt(struct upstream *u, enum upstream_event ev, void *owner)
{
	(void)owner;
	switch (ev) {
	case UP_EV_CONNECTED:
		if (reported_down)
			log_info("upstream check: %s:%u is reachable again", g_config.upstream_host,
				 g_config.upstream_port);
		reported_down = false;
		inflight = NULL;
		upstream_close(u, true);
		return;
	case UP_EV_FAILED:
		if (!reported_down)
			log_warn("upstream check: cannot connect to %s:%u: %s (checking every %.0f s "
				 "until it answers)", g_config.upstream_host, g_config.upstream_port,
				 u->err, PROBE_INTERVAL);
		else
			log_debug("upstream check: still down: %s", u->err);
		reported_down = true;
		inflight = NULL;
		upstream_close(u, false);
		return;
	case UP_EV_IO:
		return;
	}
}

static void start_attempt(void)
{
	struct upstream_params p = { .client_caps = 0, .collation = 0, .db = NULL, .check = true };

	if (inflight)
		return;
	atomic_store(&kicked, false);
	inflight = upstream_open(p_loop, &p, on_attempt, NULL);
	if (!inflight)
		log_warn("upstream check: out of memory");
}

static void on_tick(struct ev_loop *loop, ev_timer *t, int revents)
{
	static unsigned ticks;

	(void)loop;
	(void)t;
	(void)revents;
	if (!health_upstream_up() || atomic_load(&kicked) || ++ticks % PROBE_UP_EVERY == 0)
		start_attempt();
}

static void on_kick(struct ev_loop *loop, ev_async *a, int revents)
{
	(void)loop;
	(void)a;
	(void)revents;
	start_attempt(); /* if one is in flight, kicked stays set for the next tick */
}

void probe_start(struct ev_loop *loop)
{
	p_loop = loop;
	reported_down = !health_upstream_up(); /* main logged the failure at start */
	ev_timer_init(&tick, on_tick, PROBE_INTERVAL, PROBE_INTERVAL);
	ev_timer_start(loop, &tick);
	ev_async_init(&kick, on_kick);
	ev_async_start(loop, &kick);
	atomic_store(&running, true);
}

void probe_kick(void)
{
	if (!atomic_load(&running))
		return;
	atomic_store(&kicked, true);
	ev_async_send(p_loop, &kick);
}

void probe_stop(void)
{
	if (!atomic_exchange(&running, false))
		return;
	ev_timer_stop(p_loop, &tick);
	ev_async_stop(p_loop, &kick);
	if (inflight) {
		upstream_close(inflight, false);
		inflight = NULL;
	}
}
