/*
 * status_ring.h: the status page's memory of the last 15 minutes: a fixed
 * ring of per-second samples (no allocation: the caller owns the storage)
 * and the quantile estimate from histogram bucket deltas the samples use.
 * Pure functions; the caller locks (status.c).
 */
#ifndef SHOAL_STATUS_RING_H
#define SHOAL_STATUS_RING_H

#include <stddef.h>
#include <stdint.h>

#define STATUS_RING_LEN 900 /* one sample a second: 15 minutes */

/* One second of the node. NAN marks "nothing to measure" (no hit or miss
 * that second, no binlog stream, nothing answered). */
struct status_sample {
	int64_t t;               /* epoch seconds at the sample */
	double cache_qps;        /* commands answered from the cache, per second */
	double upstream_qps;     /* commands answered by the upstream, per second */
	double hit_ratio;        /* hits / (hits + misses) of that second */
	double binlog_lag_s;     /* the binlog follower's lag */
	double hit_p99_ms;       /* p99 time to answer a hit */
	double miss_p99_ms;      /* p99 time to answer a miss (from the upstream, filling) */
	double upstream_p99_ms;  /* p99 time of every answer from the upstream */
};

struct status_ring {
	struct status_sample s[STATUS_RING_LEN];
	unsigned next;           /* where the next sample goes */
	unsigned n;              /* samples held, at most STATUS_RING_LEN */
};

/* Add a sample; the oldest goes when the ring is full. */
void status_ring_push(struct status_ring *r, const struct status_sample *s);
/* The i-th oldest sample held (i < r->n). */
const struct status_sample *status_ring_at(const struct status_ring *r, unsigned i);

/* The q-quantile (0 < q <= 1) of the values a histogram counted, from its
 * buckets' counts (not cumulative): delta[i] counted values <= le[i] (and
 * above le[i-1]), delta[n_le] those above le[n_le - 1]. Within a bucket the
 * values are taken as spread evenly (as Prometheus' histogram_quantile
 * does); a quantile that falls above the last bound is that bound. NAN
 * when the histogram counted nothing. In the unit of le. */
double status_quantile(const double *le, size_t n_le, const uint64_t *delta, double q);

#endif
