/*
 * consistency.h: start-up of the node's consistency machinery: chooses the
 * invalidation mode (--invalidation; auto picks binlog when the upstream
 * has a binlog the binlog login may read, else writes) and logs it with the
 * reason, makes the TTL defaults match the mode, and starts the catalog
 * reader and, in binlog mode, the binlog follower, which resumes at a cache
 * snapshot's position when one was read (cache/warm.h).
 */
#ifndef SHOAL_CONSISTENCY_H
#define SHOAL_CONSISTENCY_H

#include <stddef.h>

/* 0, or an exit status after logging why the node cannot start (binlog
 * invalidation asked for and impossible). */
int consistency_start(void);
void consistency_stop(void);

/* The consistency figures: mode, binlog stream state, lag and position,
 * invalidations by source, entries dropped, fills discarded. Each as a
 * display name (SHOW SHOAL STATUS), a variable name (stats_shoal_global)
 * and a text value. */
struct consist_figure {
	const char *title;
	const char *name;
	char value[280];
};
#define CONSIST_FIGURES 34
size_t consistency_figures(struct consist_figure out[CONSIST_FIGURES]);

/* The /metrics provider: shoal_invalidations_total{source},
 * shoal_cache_invalidated_entries_total, shoal_cache_fills_discarded_total,
 * shoal_binlog_lag_seconds, shoal_binlog_state{state}, ... */
struct pbuf;
int consistency_metrics_render(struct pbuf *out);

#endif
