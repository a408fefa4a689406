/*
 * cache_metrics.h: the cache's Prometheus families (per query id, capped to
 * the top --metrics-max-queries shapes by traffic, the rest summed under
 * query_id="other"), skip counts per reason, and the query duration
 * histograms by destination. Registered with metrics.c as a provider.
 */
#ifndef SHOAL_CACHE_METRICS_H
#define SHOAL_CACHE_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/packet.h"

/* Record one answered command (lock-free: relaxed atomics). */
void cache_metrics_observe(bool from_cache, uint64_t us);
/* Record one cache miss's answer from the upstream, also observed above as
 * an upstream answer: its own histogram, read by the status page only (not
 * in /metrics). */
void cache_metrics_observe_miss(uint64_t us);
/* The duration histograms' bucket bounds, in seconds, ascending; the
 * histograms have one bucket more, +Inf. */
#define CACHE_METRICS_BUCKETS 10
extern const double cache_metrics_bucket_le[CACHE_METRICS_BUCKETS];
/* Copy one histogram's bucket counts (not cumulative; out[CACHE_METRICS_BUCKETS]
 * is +Inf). Relaxed loads, no lock. */
enum cache_hist { CACHE_HIST_UPSTREAM = 0, CACHE_HIST_HIT, CACHE_HIST_MISS };
void cache_metrics_read_buckets(enum cache_hist h, uint64_t out[CACHE_METRICS_BUCKETS + 1]);
/* The provider for metrics_register_provider(). */
int cache_metrics_render(struct pbuf *out);

#endif
