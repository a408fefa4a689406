/*
 * consistency.c: choosing the invalidation mode and starting what it needs
 * (see consistency.h).
 */
#include "cache/consistency.h"

#include "cache/binlog.h"
#include "cache/binlog_conn.h"
#include "cache/binlog_rows.h"
#include "cache/catalog.h"
#include "cache/fence.h"
#include "cache/inval.h"
#include "cache/match_index.h"
#include "cache/registry.h"
#include "config/config.h"
#include "base/log.h"
#include "proto/metrics.h"
#include "cache/store.h"
#include "cache/warm.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Binlog invalidation keeps entries current: the TTL is a safety net and
 * refreshes would only re-read unchanged data. Unless set, an hour and no
 * refresh (a refresh age of the maximum is never below the TTL). */
static void binlog_defaults(void)
{
	if (!config_is_set(&g_config, "cache_ttl_ms"))
		g_config.cache_ttl_ms = 3600000;
	if (!config_is_set(&g_config, "cache_refresh_ms"))
		g_config.cache_refresh_ms = 86400000;
}

static enum inval_mode choose(void)
{
	char why[512];
	int rc;

	switch (g_config.invalidation) {
	case INVALIDATION_TTL:
		log_info("invalidation: ttl (set by invalidation): cached results live their TTL, "
			 "writes do not invalidate them");
		return INVAL_TTL;
	case INVALIDATION_WRITES:
		log_info("invalidation: writes (set by invalidation): writes through this node "
			 "invalidate; writes made elsewhere are seen at the TTL");
		return INVAL_WRITES;
	case INVALIDATION_BINLOG:
		rc = binlog_check(why, sizeof(why));
		if (rc > 0) {
			log_error("invalidation = binlog is not possible: %s", why);
			return (enum inval_mode)-1;
		}
		if (rc < 0)
			log_warn("invalidation: binlog (set by invalidation); the upstream could not be "
				 "checked (%s): nothing is served from the cache until the binlog stream is "
				 "up", why);
		else
			log_info("invalidation: binlog (set by invalidation): %s", why);
		return INVAL_BINLOG;
	default:
		break;
	}
	rc = binlog_check(why, sizeof(why));
	if (rc == 0) {
		log_info("invalidation: binlog (auto): %s", why);
		return INVAL_BINLOG;
	}
	log_warn("invalidation: writes (auto): binlog invalidation is not possible: %s; writes "
		 "made elsewhere than through this node are seen at the TTL (%d ms)", why,
		 g_config.cache_ttl_ms);
	return INVAL_WRITES;
}

int consistency_start(void)
{
	enum inval_mode m = choose();

	if ((int)m < 0)
		return 2;
	inval_set_mode(m);
	if (m == INVAL_BINLOG)
		binlog_defaults();
	warm_prepare(m);
	if (catalog_start() < 0) {
		log_error("cannot start the catalog reader");
		return 1;
	}
	if (m == INVAL_BINLOG && !registry_may_cache()) {
		log_info("binlog: the follower starts when something is cached");
		binlog_defer();
	} else if (m == INVAL_BINLOG && binlog_start() < 0) {
		log_error("cannot start the binlog follower");
		return 1;
	}
	log_info("cache: ttl %d ms, %s", g_config.cache_ttl_ms,
		 g_config.cache_refresh_ms >= g_config.cache_ttl_ms ? "no refresh" : "refresh before expiry");
	return 0;
}

void consistency_stop(void)
{
	binlog_stop();
	catalog_stop();
}

/* ---- figures ------------------------------------------------------------------ */

static void fig(struct consist_figure *f, const char *title, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void fig(struct consist_figure *f, const char *title, const char *name, const char *fmt, ...)
{
	va_list ap;

	f->title = title;
	f->name = name;
	va_start(ap, fmt);
	vsnprintf(f->value, sizeof(f->value), fmt, ap);
	va_end(ap);
}

/* The cache snapshot loaded at start and the refill (cache/warm.h): 12
 * figures. */
static size_t warm_figures(struct consist_figure *out)
{
	struct warm_status w;
	size_t n = 0;

	warm_status(&w);
	fig(&out[n++], "Warm State", "Warm_state", "%s", warm_state_name(w.state));
	fig(&out[n++], "Warm Reason", "Warm_reason", "%s", w.reason);
	fig(&out[n++], "Warm Entries In File", "Warm_entries_file", "%llu", (unsigned long long)w.file_entries);
	fig(&out[n++], "Warm Entries Loaded", "Warm_entries_loaded", "%llu", (unsigned long long)w.loaded);
	fig(&out[n++], "Warm Entries Kept", "Warm_entries_kept", "%llu", (unsigned long long)w.kept);
	fig(&out[n++], "Warm Entries Left Out", "Warm_entries_left_out", "%llu",
	    (unsigned long long)(w.skipped + w.over_limit));
	fig(&out[n++], "Warm Refill", "Warm_refill_state", "%s", warm_refill_name(w.refill));
	fig(&out[n++], "Warm Refill Keys", "Warm_refill_keys", "%llu", (unsigned long long)w.refill_total);
	fig(&out[n++], "Warm Refill Keys Read", "Warm_refill_keys_read", "%llu", (unsigned long long)w.refill_done);
	fig(&out[n++], "Warm Refill Keys Present", "Warm_refill_keys_present", "%llu",
	    (unsigned long long)w.refill_present);
	fig(&out[n++], "Warm Refill Keys Failed", "Warm_refill_keys_failed", "%llu",
	    (unsigned long long)w.refill_failed);
	fig(&out[n++], "Warm Refill Keys Left", "Warm_refill_keys_left", "%llu", (unsigned long long)w.refill_left);
	return n;
}

/* The visibility fence (cache/fence.h): 5 figures. */
static size_t fence_figures(struct consist_figure *out)
{
	struct fence_stats f;
	size_t n = 0;

	fence_get_stats(&f);
	fig(&out[n++], "Fence", "Fence_state", "%s",
	    f.start_pending ? "start not yet proven (nothing stored or served)"
	    : !f.supported ? "unsupported (fills of written tables not stored)" : f.open ? "open" : "closed");
	fig(&out[n++], "Fence Oldest Age Seconds", "Fence_oldest_age_seconds", "%.3f", f.oldest_age_s);
	fig(&out[n++], "Fence Fills Refused", "Fence_fills_refused", "%llu",
	    (unsigned long long)f.fills_refused);
	fig(&out[n++], "Fence Probes", "Fence_probes", "%llu", (unsigned long long)f.probes);
	fig(&out[n++], "Fence Probe Errors", "Fence_probe_errors", "%llu",
	    (unsigned long long)f.probe_errors);
	return n;
}

/* "N (reason n, ...)" of the why counters in [from, to). */
static void why_figure(struct consist_figure *f, const char *title, const char *name, enum inval_why from,
		       enum inval_why to)
{
	char list[200] = "";
	uint64_t total = 0;
	size_t o = 0;

	for (enum inval_why w = from; w < to; w++) {
		uint64_t v = inval_why_count(w);

		total += v;
		if (v && o < sizeof(list))
			o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s %llu", o ? ", " : "",
					      inval_why_name(w), (unsigned long long)v);
	}
	if (o)
		fig(f, title, name, "%llu (%s)", (unsigned long long)total, list);
	else
		fig(f, title, name, "%llu", (unsigned long long)total);
}

/* Row-precise invalidation: what went, by row, by table and everything,
 * and the index. */
static size_t row_figures(struct consist_figure *out)
{
	size_t n = 0;

	why_figure(&out[n++], "Invalidations By Row", "Invalidations_by_row", IW_ROW_MATCH, IW_FIRST_TABLE);
	why_figure(&out[n++], "Invalidations By Table", "Invalidations_by_table", IW_FIRST_TABLE, IW_FIRST_ALL);
	why_figure(&out[n++], "Invalidations Everything", "Invalidations_everything", IW_FIRST_ALL, IW_N);
	fig(&out[n++], "Row Index", "Row_index", "%llu postings, %llu groups, %llu bytes, %llu tables not indexed",
	    (unsigned long long)match_index_postings(), (unsigned long long)match_index_groups(),
	    (unsigned long long)match_index_bytes(), (unsigned long long)match_index_refused());
	return n;
}

size_t consistency_figures(struct consist_figure out[CONSIST_FIGURES])
{
	struct binlog_status b;
	size_t n = 0;

	binlog_get_status(&b);
	fig(&out[n++], "Invalidation", "Invalidation_mode", "%s", inval_mode_name(inval_mode()));
	fig(&out[n++], "Cache Serving", "Cache_serving", "%s",
	    inval_serving() ? "yes" : inval_not_serving_reason()->text);
	fig(&out[n++], "Binlog Stream", "Binlog_stream", "%s", binlog_state_name(b.state));
	fig(&out[n++], "Binlog Lag Seconds", "Binlog_lag_seconds", "%.0f", b.lag_seconds);
	fig(&out[n++], "Binlog Position", "Binlog_position", "%s", b.position);
	fig(&out[n++], "Binlog Transactions", "Binlog_transactions", "%llu", (unsigned long long)b.transactions);
	fig(&out[n++], "Binlog Reconnects", "Binlog_reconnects", "%llu", (unsigned long long)b.reconnects);
	fig(&out[n++], "Binlog Error", "Binlog_error", "%s", b.error);
	fig(&out[n++], "Invalidations Write", "Invalidations_write", "%llu",
	    (unsigned long long)inval_count(INVAL_SRC_WRITE));
	fig(&out[n++], "Invalidations Binlog", "Invalidations_binlog", "%llu",
	    (unsigned long long)inval_count(INVAL_SRC_BINLOG));
	fig(&out[n++], "Cache Flushes", "Invalidations_flush", "%llu",
	    (unsigned long long)inval_count(INVAL_SRC_FLUSH));
	fig(&out[n++], "Entries Invalidated", "Cache_entries_invalidated", "%llu",
	    (unsigned long long)inval_dropped());
	fig(&out[n++], "Fills Discarded", "Cache_fills_discarded", "%llu",
	    (unsigned long long)store_fills_discarded());
	n += fence_figures(out + n);
	n += row_figures(out + n);
	return n + warm_figures(out + n);
}

/* ---- /metrics ------------------------------------------------------------------ */

static int counter(struct pbuf *out, const char *name, const char *help, uint64_t v)
{
	if (metrics_family(out, name, "counter", help) < 0 ||
	    metrics_sample_u64(out, name, NULL, 0, v) < 0)
		return -1;
	return 0;
}

/* A gauge family of one unlabelled sample. */
static int gauge(struct pbuf *out, const char *name, const char *help, double v)
{
	if (metrics_family(out, name, "gauge", help) < 0 || metrics_sample(out, name, NULL, 0, v) < 0)
		return -1;
	return 0;
}

/* A gauge family with one sample per value of its label: names[i] = v[i]. */
static int labelled_gauges(struct pbuf *out, const char *family, const char *help, const char *label,
			   const char *const *names, const uint64_t *v, size_t n)
{
	int rc = metrics_family(out, family, "gauge", help);

	for (size_t i = 0; i < n; i++) {
		struct metrics_label l = { label, names[i] };

		rc |= metrics_sample_u64(out, family, &l, 1, v[i]);
	}
	return rc;
}

/* shoal_warm_refill_*: the saved keys read again (core/refill.c). */
static int refill_metrics(struct pbuf *out, const struct warm_status *w)
{
	static const char *const kinds[] = { "total", "read", "present", "failed", "left" };
	const char *states[WARM_REFILL_STOPPED + 1];
	uint64_t is[WARM_REFILL_STOPPED + 1];
	const uint64_t keys[] = { w->refill_total, w->refill_done, w->refill_present, w->refill_failed,
				  w->refill_left };

	for (int i = WARM_REFILL_NONE; i <= WARM_REFILL_STOPPED; i++) {
		states[i] = warm_refill_name((enum warm_refill)i);
		is[i] = w->refill == (enum warm_refill)i;
	}
	return labelled_gauges(out, "shoal_warm_refill_state",
			       "The refill of the saved keys whose data is not served: 1 for its current "
			       "state (none, waiting, running, done, stopped).", "state", states, is,
			       WARM_REFILL_STOPPED + 1) |
	       labelled_gauges(out, "shoal_warm_refill_keys",
			       "The refill's keys: in all, read again from the upstream, served already, "
			       "failed, not reached.", "kind", kinds, keys, 5) |
	       metrics_family(out, "shoal_warm_warming", "gauge",
			      "1 from the cache snapshot's load to the refill's end (/health warming): "
			      "every answer is current, the hit ratio still growing.") |
	       metrics_sample_u64(out, "shoal_warm_warming", NULL, 0, warm_warming(w));
}

/* shoal_warm_*: the cache snapshot loaded at start. */
static int warm_metrics(struct pbuf *out)
{
	static const char *const kinds[] = { "file", "loaded", "kept", "left_out" };
	const char *states[WARM_DROPPED + 1];
	uint64_t is[WARM_DROPPED + 1], counts[4];
	struct warm_status w;
	int rc;

	warm_status(&w);
	for (int i = WARM_OFF; i <= WARM_DROPPED; i++) {
		states[i] = warm_state_name((enum warm_state)i);
		is[i] = w.state == (enum warm_state)i;
	}
	counts[0] = w.file_entries;
	counts[1] = w.loaded;
	counts[2] = w.kept;
	counts[3] = w.skipped + w.over_limit;
	rc = labelled_gauges(out, "shoal_warm_state",
			     "The cache snapshot read at start: 1 for its current state (off, refused, "
			     "discarded, loading, replaying, warm, dropped).", "state", states, is, WARM_DROPPED + 1);
	rc |= labelled_gauges(out, "shoal_warm_entries",
			      "Entries of the cache snapshot read at start: in the file, loaded, kept once "
			      "the binlog replay was done, left out.", "kind", kinds, counts, 4);
	rc |= metrics_family(out, "shoal_warm_load_seconds", "gauge",
			     "How long putting the cache snapshot's entries in the store took.");
	rc |= metrics_sample(out, "shoal_warm_load_seconds", NULL, 0, w.load_seconds);
	return rc | refill_metrics(out, &w);
}

/* shoal_fence_*: the visibility fence (cache/fence.h). */
static int fence_metrics(struct pbuf *out)
{
	struct fence_stats f;
	int rc = 0;

	fence_get_stats(&f);
	rc |= gauge(out, "shoal_fence_open",
		    "1 while a transaction the binlog brought is not yet proven visible on the "
		    "upstream (results of its tables are not stored meanwhile).", f.open);
	rc |= gauge(out, "shoal_fence_start_pending",
		    "1 while the binlog stream's start is not yet proven visible on the upstream "
		    "(nothing is stored or served meanwhile).", f.start_pending);
	rc |= gauge(out, "shoal_fence_oldest_age_seconds",
		    "How long the oldest transaction not yet proven visible has waited (0 when none).",
		    f.oldest_age_s);
	rc |= gauge(out, "shoal_fence_supported",
		    "0 when the upstream cannot prove visibility (binlog_optimize_thread_"
		    "scheduling = OFF): fills of written tables are never stored.", f.supported);
	rc |= counter(out, "shoal_fence_transactions_total",
		      "Binlog transactions fenced until proven visible.", f.transactions);
	rc |= counter(out, "shoal_fence_fills_refused_total",
		      "Results not stored because a table they read had a fence not yet passed.",
		      f.fills_refused);
	rc |= counter(out, "shoal_fence_probes_total",
		      "Readings of the upstream's commit position by the visibility probe.", f.probes);
	rc |= counter(out, "shoal_fence_probe_errors_total",
		      "Visibility probes that failed (connection, query).", f.probe_errors);
	rc |= counter(out, "shoal_fence_probes_unmatched_total",
		      "Readings that proved nothing (not the end of a transaction received).",
		      f.probes_unmatched);
	rc |= counter(out, "shoal_fence_checkpoints_total",
		      "Times a BINLOG_CHECKPOINT event moved the fence (after a rotation).",
		      f.checkpoints);
	rc |= metrics_family(out, "shoal_fence_probe_seconds_total", "counter",
			     "Time spent in the probes' round trips (divided by "
			     "shoal_fence_probes_total: the mean round trip).");
	rc |= metrics_sample(out, "shoal_fence_probe_seconds_total", NULL, 0, f.probe_seconds);
	return rc;
}

/* One family of the why counters in [from, to), labelled by reason. */
static int why_family(struct pbuf *out, const char *family, const char *help, enum inval_why from,
		      enum inval_why to)
{
	int rc = metrics_family(out, family, "counter", help);

	for (enum inval_why w = from; w < to; w++) {
		struct metrics_label l = { "reason", inval_why_name(w) };

		rc |= metrics_sample_u64(out, family, &l, 1, inval_why_count(w));
	}
	return rc;
}

/* shoal_invalidations_by_*: row-precise invalidation (cache/match.h). */
static int row_metrics(struct pbuf *out)
{
	struct rows_stats r;
	int rc = 0;

	rows_get_stats(&r);
	rc |= counter(out, "shoal_binlog_row_events_total",
		      "Rows events of the binlog whose rows were matched against the entries' constraints.",
		      r.events);
	rc |= counter(out, "shoal_binlog_row_images_total",
		      "Row images (before and after) matched against the entries' constraints.", r.images);
	rc |= counter(out, "shoal_binlog_row_events_unreadable_total",
		      "Rows events that could not be read: their table was invalidated whole.", r.table_wide);

	rc |= why_family(out, "shoal_invalidations_by_row_total",
			 "Entries invalidated one by one by a changed row of the binlog: row_matched (its "
			 "before or after image satisfies the entry's constraints), value_not_comparable "
			 "(a value that cannot be compared exactly, counted as a match).",
			 IW_ROW_MATCH, IW_FIRST_TABLE);
	rc |= why_family(out, "shoal_invalidations_by_table_total",
			 "Tables invalidated whole, by reason: row_change (a rows event: the entries "
			 "without constraints on the table), own_write, statement_event, cascade, "
			 "unknown_table, unreadable_event, definition_changed, index_full.",
			 IW_FIRST_TABLE, IW_FIRST_ALL);
	rc |= why_family(out, "shoal_invalidations_everything_total",
			 "Whole-cache invalidations, by reason: stream_gap, tables_unknown, "
			 "own_write_unknown.", IW_FIRST_ALL, IW_N);
	rc |= gauge(out, "shoal_row_index_postings",
		    "Postings in the row-precise invalidation index (one per value of each entry's "
		    "indexed condition).", (double)match_index_postings());
	rc |= gauge(out, "shoal_row_index_bytes",
		    "Bytes of the index's groups and buckets (its postings are counted in the entries).",
		    (double)match_index_bytes());
	rc |= counter(out, "shoal_row_index_refused_total",
		      "Constraints on a table left out of the index (its bound, or out of memory): that "
		      "table is checked whole for the entry.", match_index_refused());
	return rc;
}

int consistency_metrics_render(struct pbuf *out)
{
	static const enum inval_source src[] = { INVAL_SRC_WRITE, INVAL_SRC_BINLOG, INVAL_SRC_FLUSH };
	static const enum binlog_state states[] = { BINLOG_OFF, BINLOG_CONNECTING, BINLOG_CATCHING_UP,
						    BINLOG_STREAMING, BINLOG_BEHIND, BINLOG_DOWN };
	struct binlog_status b;
	int rc = 0;

	binlog_get_status(&b);
	rc |= metrics_family(out, "shoal_invalidations_total", "counter",
			     "Table invalidations by source: write (a write relayed by this node), binlog "
			     "(the upstream's binlog), flush (the whole cache at once).");
	for (size_t i = 0; i < sizeof(src) / sizeof(src[0]); i++) {
		struct metrics_label l = { "source", inval_source_name(src[i]) };

		rc |= metrics_sample_u64(out, "shoal_invalidations_total", &l, 1, inval_count(src[i]));
	}
	rc |= counter(out, "shoal_cache_invalidated_entries_total",
		      "Entries dropped because a table they read was invalidated.", inval_dropped());
	rc |= counter(out, "shoal_cache_fills_discarded_total",
		      "Results not stored because a table they read was written while the query ran.",
		      store_fills_discarded());
	rc |= metrics_family(out, "shoal_binlog_lag_seconds", "gauge",
			     "How far the binlog follower is behind its upstream (0 when caught up).");
	rc |= metrics_sample(out, "shoal_binlog_lag_seconds", NULL, 0, b.lag_seconds);
	rc |= metrics_family(out, "shoal_binlog_state", "gauge",
			     "The binlog stream's state: 1 for the current one.");
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		struct metrics_label l = { "state", binlog_state_name(states[i]) };

		rc |= metrics_sample_u64(out, "shoal_binlog_state", &l, 1, b.state == states[i]);
	}
	rc |= metrics_family(out, "shoal_cache_serving", "gauge",
			     "1 while cached results may be served (in binlog mode: the stream is up and "
			     "caught up, its start proven visible).");
	rc |= metrics_sample_u64(out, "shoal_cache_serving", NULL, 0, inval_serving());
	rc |= counter(out, "shoal_binlog_transactions_total", "Transactions applied from the binlog.",
		      b.transactions);
	rc |= counter(out, "shoal_binlog_reconnects_total", "Times the binlog stream was lost.",
		      b.reconnects);
	rc |= counter(out, "shoal_binlog_resume_failures_total",
		      "Times the binlog could not be resumed from the follower's GTID position, or "
		      "held an event that cannot be read (the cache was flushed).", b.resume_failures);
	rc |= fence_metrics(out);
	rc |= row_metrics(out);
	rc |= warm_metrics(out);
	return rc ? -1 : 0;
}
