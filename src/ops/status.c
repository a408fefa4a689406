/*
 * status.c: the status page's sampler and its ring (see status.h). Each
 * second it turns the node's counters into rates, a hit ratio and p99
 * latencies (from the duration histograms' bucket deltas) and pushes one
 * sample. status_json.c renders the ring and the live state.
 */
#include "ops/status.h"
#include "ops/status_internal.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "base/stats.h"
#include "cache/binlog.h"
#include "cache/cache_metrics.h"
#include "cache/inval.h"

/* The counters of the previous sample (the sampler's only: main thread). */
struct counters {
	uint64_t hits, misses, upstream;
	uint64_t buckets[3][CACHE_METRICS_BUCKETS + 1]; /* by enum cache_hist */
	double at;                                      /* ev_now of the reading */
};

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static struct status_ring ring;      /* guarded by ring_lock */
static struct counters prev;         /* main thread only: the last reading */
static struct ev_loop *sample_loop;  /* main thread only: set while sampling */
static ev_timer tick;
static time_t started_at;            /* written once before the HTTP thread reads it */

static void read_counters(struct counters *c, double now)
{
	c->hits = STAT_GET(cache_hits);
	c->misses = STAT_GET(cache_misses);
	c->upstream = STAT_GET(queries);
	for (int h = CACHE_HIST_UPSTREAM; h <= CACHE_HIST_MISS; h++)
		cache_metrics_read_buckets((enum cache_hist)h, c->buckets[h]);
	c->at = now;
}

/* p99 in ms of what histogram h counted between a and b. */
static double p99_ms(const struct counters *a, const struct counters *b, int h)
{
	uint64_t d[CACHE_METRICS_BUCKETS + 1];

	for (int i = 0; i <= CACHE_METRICS_BUCKETS; i++)
		d[i] = b->buckets[h][i] >= a->buckets[h][i] ? b->buckets[h][i] - a->buckets[h][i] : 0;
	return status_quantile(cache_metrics_bucket_le, CACHE_METRICS_BUCKETS, d, 0.99) * 1000.0;
}

static uint64_t delta(uint64_t from, uint64_t to)
{
	return to >= from ? to - from : 0; /* a counter never goes back; be safe */
}

/* The binlog follower's lag, or NAN when there is no stream to lag. */
static double binlog_lag(void)
{
	struct binlog_status bl;

	if (inval_mode() != INVAL_BINLOG)
		return NAN;
	binlog_get_status(&bl);
	return bl.state == BINLOG_OFF ? NAN : bl.lag_seconds;
}

static void sample(double now)
{
	struct counters cur;
	struct status_sample s;
	uint64_t dh, dm;
	double dt;

	read_counters(&cur, now);
	dt = cur.at - prev.at;
	if (dt <= 0)
		dt = 1;
	dh = delta(prev.hits, cur.hits);
	dm = delta(prev.misses, cur.misses);
	s.t = (int64_t)time(NULL);
	s.cache_qps = (double)dh / dt;
	s.upstream_qps = (double)delta(prev.upstream, cur.upstream) / dt;
	s.hit_ratio = dh + dm > 0 ? (double)dh / (double)(dh + dm) : NAN;
	s.binlog_lag_s = binlog_lag();
	s.hit_p99_ms = p99_ms(&prev, &cur, CACHE_HIST_HIT);
	s.miss_p99_ms = p99_ms(&prev, &cur, CACHE_HIST_MISS);
	s.upstream_p99_ms = p99_ms(&prev, &cur, CACHE_HIST_UPSTREAM);
	prev = cur;
	pthread_mutex_lock(&ring_lock);
	status_ring_push(&ring, &s);
	pthread_mutex_unlock(&ring_lock);
}

static void on_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	sample(ev_now(loop));
}

int status_start(struct ev_loop *loop)
{
	if (sample_loop)
		return -1;
	started_at = time(NULL);
	sample_loop = loop;
	ev_timer_init(&tick, on_tick, 1.0, 1.0);
	ev_timer_start(loop, &tick);
	read_counters(&prev, ev_now(loop)); /* the baseline of the first sample */
	return 0;
}

void status_stop(struct ev_loop *loop)
{
	if (!sample_loop)
		return;
	ev_timer_stop(loop, &tick);
	sample_loop = NULL;
}

time_t status_started_at(void)
{
	return started_at;
}

size_t status_copy_series(struct status_sample *out, size_t cap)
{
	size_t n;

	pthread_mutex_lock(&ring_lock);
	n = ring.n < cap ? ring.n : cap;
	for (size_t i = 0; i < n; i++)
		out[i] = *status_ring_at(&ring, (unsigned)(ring.n - n + i));
	pthread_mutex_unlock(&ring_lock);
	return n;
}
