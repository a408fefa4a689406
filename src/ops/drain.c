/*
 * drain.c: the drain's state machine (see drain.h). It owns one timer on
 * the main loop and the drain's state; it reads the node's query counters
 * (stats.h) to see when ProxySQL has stopped sending work, and
 * pxadmin.h's counters for the admins' answers.
 */
#include "ops/drain.h"

#include <stdint.h>

#include "config/config.h"
#include "base/health.h"
#include "core/listener.h"
#include "core/refill.h"
#include "base/log.h"
#include "ops/pxadmin.h"
#include "base/stats.h"
#include "core/worker.h"

#define DRAIN_TICK 0.05 /* seconds */

enum drain_state { DR_OFF, DR_HANDOFF, DR_CLOSING };

static struct {
	enum drain_state st;
	ev_timer tick;
	ev_tstamp started;        /* the signal */
	ev_tstamp quiet_from;     /* last query seen, or when the admins answered */
	uint_fast64_t activity;   /* queries + cache hits at the last tick */
	bool admins_waited;       /* proxysql_admin's updates are over */
} dr;

/* Commands that reached the node: relayed ones and cache hits. The
 * monitor's checks and COM_PING are answered by the node itself and are
 * not counted, so they do not keep the hand-off going. */
static uint_fast64_t activity(void)
{
	return STAT_GET(queries) + STAT_GET(cache_hits);
}

static double ms(ev_tstamp t)
{
	return t * 1000.0;
}

static void start_closing(struct ev_loop *loop, const char *why)
{
	log_info("drain: %s after %.0f ms; closing each session at its next idle point (%d open)", why,
		 ms(ev_now(loop) - dr.started), workers_clients());
	dr.st = DR_CLOSING;
	workers_drain();
}

/* HANDOFF: has ProxySQL stopped sending work? */
static void handoff_tick(struct ev_loop *loop)
{
	ev_tstamp now = ev_now(loop);
	uint_fast64_t a = activity();
	int handoff_ms = __atomic_load_n(&g_config.drain_handoff_ms, __ATOMIC_RELAXED);
	int quiet_ms = __atomic_load_n(&g_config.drain_quiet_ms, __ATOMIC_RELAXED);

	if (a != dr.activity) {
		dr.activity = a;
		dr.quiet_from = now;
	}
	if (!dr.admins_waited && pxadmin_pending() == 0) {
		dr.admins_waited = true;
		if (dr.quiet_from < now)
			dr.quiet_from = now; /* queries ProxySQL had already routed may still come */
	}
	if (workers_clients() == 0)
		start_closing(loop, "no session open");
	else if (dr.admins_waited && ms(now - dr.quiet_from) >= quiet_ms)
		start_closing(loop, "no query for drain_quiet_ms");
	else if (ms(now - dr.started) >= handoff_ms)
		start_closing(loop, "drain_handoff_ms is over");
}

static void on_tick(struct ev_loop *loop, ev_timer *t, int revents)
{
	int timeout_ms = __atomic_load_n(&g_config.drain_timeout_ms, __ATOMIC_RELAXED);
	int left;

	(void)t;
	(void)revents;
	if (dr.st == DR_HANDOFF)
		handoff_tick(loop);
	if (dr.st != DR_CLOSING)
		return;
	left = workers_clients();
	if (left == 0) {
		log_info("drained: every session is closed");
		ev_break(loop, EVBREAK_ALL);
	} else if (ms(ev_now(loop) - dr.started) >= timeout_ms) {
		log_warn("drain timeout (%d ms): closing the %d remaining session%s", timeout_ms, left,
			 left == 1 ? "" : "s");
		ev_break(loop, EVBREAK_ALL);
	}
}

void drain_signal(struct ev_loop *loop, int signum)
{
	int timeout_ms = __atomic_load_n(&g_config.drain_timeout_ms, __ATOMIC_RELAXED);
	int handoff_ms = __atomic_load_n(&g_config.drain_handoff_ms, __ATOMIC_RELAXED);
	int admins;

	if (dr.st != DR_OFF) {
		log_info("received signal %d while draining: stopping now", signum);
		ev_break(loop, EVBREAK_ALL);
		return;
	}
	log_info("received signal %d: draining (not accepting; sessions served for up to %d ms until "
		 "no query comes for %d ms, then each closes when idle; the rest after %d ms)", signum,
		 handoff_ms, g_config.drain_quiet_ms, timeout_ms);
	listeners_close(loop);
	refill_interrupt(); /* its sessions would keep the drain from going quiet */
	health_set_draining(true);
	dr.started = dr.quiet_from = ev_now(loop);
	dr.activity = activity();
	admins = pxadmin_set_status("OFFLINE_SOFT");
	dr.admins_waited = admins <= 0;
	ev_timer_init(&dr.tick, on_tick, 0., DRAIN_TICK);
	ev_timer_start(loop, &dr.tick);
	if (handoff_ms > 0) {
		dr.st = DR_HANDOFF;
	} else {
		dr.st = DR_CLOSING;
		workers_drain();
	}
}
