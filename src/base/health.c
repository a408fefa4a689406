/*
 * health.c: the node's health state (see health.h). It owns three atomics:
 * the monotonic time in milliseconds of the first upstream connect failure
 * since the last success (0 while the upstream is up), the draining flag,
 * and the outage threshold. Any thread may read or write them; nothing here
 * blocks.
 */
#include "base/health.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static atomic_int_fast64_t down_since_ms; /* 0: up */
static atomic_bool draining;
static atomic_int threshold_ms = 3000;

/* CLOCK_MONOTONIC in milliseconds, never 0 (0 means "up"). */
static int_fast64_t now_ms(void)
{
	struct timespec ts;
	int_fast64_t ms;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return 1; /* cannot happen for CLOCK_MONOTONIC on Linux */
	ms = (int_fast64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	return ms > 0 ? ms : 1;
}

void health_upstream_ok(void)
{
	atomic_store_explicit(&down_since_ms, 0, memory_order_relaxed);
}

void health_upstream_failed(void)
{
	int_fast64_t expect = 0;

	/* Only the first failure of an outage sets the time. */
	atomic_compare_exchange_strong_explicit(&down_since_ms, &expect, now_ms(),
						memory_order_relaxed, memory_order_relaxed);
}

void health_set_draining(bool on)
{
	atomic_store_explicit(&draining, on, memory_order_relaxed);
}

bool health_draining(void)
{
	return atomic_load_explicit(&draining, memory_order_relaxed);
}

bool health_upstream_up(void)
{
	return atomic_load_explicit(&down_since_ms, memory_order_relaxed) == 0;
}

/* Milliseconds of the current outage; 0 when up. */
static int_fast64_t down_ms(void)
{
	int_fast64_t since = atomic_load_explicit(&down_since_ms, memory_order_relaxed);
	int_fast64_t now;

	if (since == 0)
		return 0;
	now = now_ms();
	return now > since ? now - since : 0;
}

double health_upstream_down_seconds(void)
{
	return (double)down_ms() / 1000.0;
}

bool health_serving(int down_after_ms, char *why, size_t n)
{
	const char *state = "serving";
	bool serving = true;

	if (health_draining()) {
		state = "draining";
		serving = false;
	} else if (!health_upstream_up() && down_ms() > (int_fast64_t)down_after_ms) {
		state = "upstream_down";
		serving = false;
	}
	if (why && n > 0)
		snprintf(why, n, "%s", state);
	return serving;
}

void health_set_down_after_ms(int ms)
{
	atomic_store_explicit(&threshold_ms, ms < 0 ? 0 : ms, memory_order_relaxed);
}

bool health_upstream_down_too_long(void)
{
	return !health_upstream_up() &&
	       down_ms() > (int_fast64_t)atomic_load_explicit(&threshold_ms, memory_order_relaxed);
}
