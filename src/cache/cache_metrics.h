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
/* The provider for metrics_register_provider(). */
int cache_metrics_render(struct pbuf *out);

#endif
