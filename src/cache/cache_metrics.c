/*
 * cache_metrics.c: rendering the cache's metrics from the registry and the
 * store, and the duration histograms. See cache_metrics.h.
 */
#include "cache/cache_metrics.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/registry.h"
#include "cache/store.h"
#include "config/config.h"
#include "proto/metrics.h"
#include "sql/classify.h"
#include "base/stats.h"

const double cache_metrics_bucket_le[CACHE_METRICS_BUCKETS] = {
	0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5
};
#define N_BUCKETS ((size_t)CACHE_METRICS_BUCKETS)

struct histogram {
	atomic_uint_fast64_t buckets[N_BUCKETS + 1]; /* last: +Inf */
	atomic_uint_fast64_t sum_us;
	atomic_uint_fast64_t count;
};

static struct histogram hist[3]; /* enum cache_hist: upstream, cache; misses (status page) */

static void observe(struct histogram *h, uint64_t us)
{
	double s = (double)us / 1e6;
	size_t i = 0;

	while (i < N_BUCKETS && s > cache_metrics_bucket_le[i])
		i++;
	atomic_fetch_add_explicit(&h->buckets[i], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum_us, us, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
}

void cache_metrics_observe(bool from_cache, uint64_t us)
{
	observe(&hist[from_cache ? CACHE_HIST_HIT : CACHE_HIST_UPSTREAM], us);
}

void cache_metrics_observe_miss(uint64_t us)
{
	observe(&hist[CACHE_HIST_MISS], us);
}

void cache_metrics_read_buckets(enum cache_hist which, uint64_t out[CACHE_METRICS_BUCKETS + 1])
{
	const struct histogram *h = &hist[which];

	for (size_t i = 0; i <= N_BUCKETS; i++)
		out[i] = atomic_load_explicit(&h->buckets[i], memory_order_relaxed);
}

/* The numbers one query id contributes. */
struct qstats {
	char id[19];
	uint64_t traffic;
	uint64_t hits, misses, changed, unchanged, failed, coalesced, evictions;
	int64_t entries, bytes;
};

struct collect_ctx {
	struct qstats *v;
	size_t n, cap;
	uint64_t skips[WHY__COUNT];  /* by reason id */
};

static void add(struct qstats *a, const struct qstats *b)
{
	a->traffic += b->traffic;
	a->hits += b->hits;
	a->misses += b->misses;
	a->changed += b->changed;
	a->unchanged += b->unchanged;
	a->failed += b->failed;
	a->coalesced += b->coalesced;
	a->evictions += b->evictions;
	a->entries += b->entries;
	a->bytes += b->bytes;
}

static void count_skip(struct collect_ctx *x, const struct cache_def *d)
{
	const struct reason *r = atomic_load(&d->skip_reason);
	uint64_t n = atomic_load_explicit(&d->skips, memory_order_relaxed);

	if (r && n)
		x->skips[r->id] += n;
}

static bool collect(struct cache_def *d, void *arg)
{
	struct collect_ctx *x = arg;
	struct qstats q = {0};

	count_skip(x, d);
	q.hits = def_counter(d, DC_HITS, false);
	q.misses = atomic_load_explicit(&d->misses, memory_order_relaxed);
	if (atomic_load(&d->state) != CACHE_CACHED && q.hits == 0 && q.misses == 0)
		return true;
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 64;
		struct qstats *p = realloc(x->v, cap * sizeof(*p));

		if (!p)
			return false;
		x->v = p;
		x->cap = cap;
	}
	memcpy(q.id, d->query_id, sizeof(q.id));
	q.traffic = def_counter(d, DC_COUNT, false);
	q.changed = atomic_load_explicit(&d->refresh_changed, memory_order_relaxed);
	q.unchanged = atomic_load_explicit(&d->refresh_unchanged, memory_order_relaxed);
	q.failed = atomic_load_explicit(&d->refresh_failed, memory_order_relaxed);
	q.coalesced = atomic_load_explicit(&d->coalesced_waits, memory_order_relaxed);
	q.evictions = atomic_load_explicit(&d->evictions, memory_order_relaxed);
	q.entries = atomic_load_explicit(&d->entries, memory_order_relaxed);
	q.bytes = atomic_load_explicit(&d->bytes, memory_order_relaxed);
	x->v[x->n++] = q;
	return true;
}

static int by_traffic(const void *a, const void *b)
{
	const struct qstats *x = a, *y = b;

	return x->traffic < y->traffic ? 1 : x->traffic > y->traffic ? -1 : strcmp(x->id, y->id);
}

/* One family over the capped list: value(q) per query id, then "other". */
static int family(struct pbuf *out, const char *name, const char *type, const char *help,
		  const struct qstats *v, size_t n, const struct qstats *other, bool has_other,
		  uint64_t (*value)(const struct qstats *))
{
	struct metrics_label l = { "query_id", NULL };

	if (metrics_family(out, name, type, help) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		l.value = v[i].id;
		if (metrics_sample_u64(out, name, &l, 1, value(&v[i])) < 0)
			return -1;
	}
	l.value = "other";
	if (has_other && metrics_sample_u64(out, name, &l, 1, value(other)) < 0)
		return -1;
	return 0;
}

static uint64_t v_hits(const struct qstats *q) { return q->hits; }
static uint64_t v_misses(const struct qstats *q) { return q->misses; }
static uint64_t v_coalesced(const struct qstats *q) { return q->coalesced; }
static uint64_t v_evictions(const struct qstats *q) { return q->evictions; }
static uint64_t v_entries(const struct qstats *q) { return q->entries > 0 ? (uint64_t)q->entries : 0; }
static uint64_t v_bytes(const struct qstats *q) { return q->bytes > 0 ? (uint64_t)q->bytes : 0; }

static int refreshes(struct pbuf *out, const struct qstats *v, size_t n, const struct qstats *other, bool has_other)
{
	static const char *const results[] = { "changed", "unchanged", "failed" };
	const char *name = "shoal_cache_refreshes_total";

	if (metrics_family(out, name, "counter", "Background refreshes of cached results, by outcome.") < 0)
		return -1;
	for (size_t i = 0; i < n + (has_other ? 1 : 0); i++) {
		const struct qstats *q = i < n ? &v[i] : other;
		uint64_t vals[3] = { q->changed, q->unchanged, q->failed };

		for (int r = 0; r < 3; r++) {
			struct metrics_label l[2] = { { "query_id", i < n ? q->id : "other" }, { "result", results[r] } };

			if (metrics_sample_u64(out, name, l, 2, vals[r]) < 0)
				return -1;
		}
	}
	return 0;
}

static int skipped(struct pbuf *out, const struct collect_ctx *x)
{
	const char *name = "shoal_auto_cache_skipped_total";

	if (metrics_family(out, name, "counter", "Queries not cached, by reason.") < 0)
		return -1;
	/* every reason a shape can be skipped for: the permanent ones */
	for (size_t i = 0; i < WHY__COUNT; i++) {
		struct metrics_label l = { "reason", reason_table[i].label };

		if (!reason_table[i].permanent)
			continue;
		if (metrics_sample_u64(out, name, &l, 1, x->skips[i]) < 0)
			return -1;
	}
	return 0;
}

static int histograms(struct pbuf *out)
{
	const char *name = "shoal_query_duration_seconds";
	static const char *const dest[2] = { "upstream", "cache" };
	char le[32];

	if (metrics_family(out, name, "histogram", "Time to answer a command, by where it was answered from.") < 0)
		return -1;
	for (int d = 0; d < 2; d++) {
		uint64_t cum = 0;

		for (size_t i = 0; i <= N_BUCKETS; i++) {
			struct metrics_label l[2] = { { "destination", dest[d] }, { "le", le } };

			cum += atomic_load_explicit(&hist[d].buckets[i], memory_order_relaxed);
			if (i < N_BUCKETS)
				metrics_format_double(cache_metrics_bucket_le[i], le, sizeof(le));
			else
				snprintf(le, sizeof(le), "+Inf");
			if (metrics_sample_u64(out, "shoal_query_duration_seconds_bucket", l, 2, cum) < 0)
				return -1;
		}
		{
			struct metrics_label l = { "destination", dest[d] };

			if (metrics_sample(out, "shoal_query_duration_seconds_sum", &l, 1,
					   (double)atomic_load(&hist[d].sum_us) / 1e6) < 0 ||
			    metrics_sample_u64(out, "shoal_query_duration_seconds_count", &l, 1,
					       atomic_load(&hist[d].count)) < 0)
				return -1;
		}
	}
	return 0;
}

static int totals(struct pbuf *out)
{
	if (metrics_family(out, "shoal_cache_memory_limit_bytes", "gauge", "The --memory-limit.") < 0 ||
	    metrics_sample_u64(out, "shoal_cache_memory_limit_bytes", NULL, 0, g_config.memory_limit) < 0)
		return -1;
	if (metrics_family(out, "shoal_cache_stale_hits_total", "counter",
			   "Cache hits served past their TTL while the upstream was down (serve-stale).") < 0 ||
	    metrics_sample_u64(out, "shoal_cache_stale_hits_total", NULL, 0, STAT_GET(cache_stale_hits)) < 0)
		return -1;
	if (metrics_family(out, "shoal_cache_grant_checks_total", "counter",
			   "Grant verdicts (may this user read this cached query shape?) checked upstream.") < 0 ||
	    metrics_sample_u64(out, "shoal_cache_grant_checks_total", NULL, 0, STAT_GET(grant_checks)) < 0)
		return -1;
	if (metrics_family(out, "shoal_cache_grant_denied_total", "counter",
			   "Grant verdicts the upstream refused: the user's command went upstream instead.") < 0 ||
	    metrics_sample_u64(out, "shoal_cache_grant_denied_total", NULL, 0, STAT_GET(grant_denied)) < 0)
		return -1;
	return 0;
}

int cache_metrics_render(struct pbuf *out)
{
	struct collect_ctx x = {0};
	struct qstats other = {0};
	size_t n, cap = (size_t)g_config.metrics_max_queries;
	bool has_other;
	int rc = 0;

	registry_each(collect, &x);
	if (x.n > 0) /* x.v is NULL when there is nothing */
		qsort(x.v, x.n, sizeof(*x.v), by_traffic);
	n = x.n < cap ? x.n : cap;
	has_other = x.n > n;
	for (size_t i = n; i < x.n; i++)
		add(&other, &x.v[i]);
	rc |= family(out, "shoal_cache_hits_total", "counter", "Commands answered from the cache.", x.v, n, &other, has_other, v_hits);
	rc |= family(out, "shoal_cache_misses_total", "counter", "Cacheable commands sent upstream to fill the cache.", x.v, n, &other, has_other, v_misses);
	rc |= refreshes(out, x.v, n, &other, has_other);
	rc |= family(out, "shoal_cache_coalesced_total", "counter", "Misses that waited for another session's load instead of querying upstream.", x.v, n, &other, has_other, v_coalesced);
	rc |= family(out, "shoal_cache_entries", "gauge", "Entries in the cache.", x.v, n, &other, has_other, v_entries);
	rc |= family(out, "shoal_cache_memory_bytes", "gauge", "Bytes of cached results (keys and headers included).", x.v, n, &other, has_other, v_bytes);
	rc |= family(out, "shoal_cache_evictions_total", "counter", "Entries evicted to stay under the memory limit.", x.v, n, &other, has_other, v_evictions);
	rc |= skipped(out, &x);
	rc |= histograms(out);
	rc |= totals(out);
	free(x.v);
	return rc ? -1 : 0;
}
