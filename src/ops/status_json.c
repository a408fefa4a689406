/*
 * status_json.c: the /status.json body (see status.h, docs/status-page.md):
 * the node, totals, the caches and the shapes not cached (from the
 * registry), the pool and its users, the clients, and the per-second series
 * of the ring. Runs on the HTTP thread; reads atomics, a snapshot of the
 * registry and the user store (their read locks), and the ring under its
 * mutex.
 */
#include "ops/status.h"
#include "ops/status_internal.h"

#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "base/health.h"
#include "base/stats.h"
#include "cache/binlog.h"
#include "cache/fence.h"
#include "cache/inval.h"
#include "cache/registry.h"
#include "cache/store.h"
#include "config/config.h"
#include "sql/reasons.h"
#include "sql/tokenizer.h"
#include "upstream/upstream.h"
#include "upstream/users.h"

#ifndef SHOAL_VERSION
#define SHOAL_VERSION "unknown"
#endif

#define MAX_CACHES 1000   /* rows of "caches", the busiest first */
#define MAX_UNCACHED 100  /* rows of "uncached", by upstream time */

/* One shape's figures, read once (so that sorting sees stable values). */
struct shape {
	struct cache_def *d;  /* records live until exit */
	bool cached;
	uint64_t hits, misses, count, sum_us, saved_us;
	int64_t entries, bytes;
	char name[DEF_NAME_MAX];
};

static void read_shape(struct shape *x, struct cache_def *d)
{
	x->d = d;
	x->cached = atomic_load(&d->state) == CACHE_CACHED;
	x->hits = def_counter(d, DC_HITS, false);
	x->misses = atomic_load(&d->misses);
	x->count = def_counter(d, DC_COUNT, false);
	x->sum_us = def_counter(d, DC_SUM_TIME, false);
	x->saved_us = def_counter(d, DC_TIME_SAVED, false);
	x->entries = atomic_load(&d->entries);
	x->bytes = atomic_load(&d->bytes);
	/* a CREATE CACHE naming the shape meanwhile may tear the copy, never
	 * overrun it (as the admin's stats tables read it) */
	memcpy(x->name, d->name, sizeof(x->name));
	x->name[sizeof(x->name) - 1] = '\0';
}

/* Cached shapes first, busiest first; then the others by upstream time. */
static int by_listing_order(const void *a, const void *b)
{
	const struct shape *x = a, *y = b;
	uint64_t kx, ky;

	if (x->cached != y->cached)
		return x->cached ? -1 : 1;
	kx = x->cached ? x->hits + x->misses : x->sum_us;
	ky = y->cached ? y->hits + y->misses : y->sum_us;
	return kx < ky ? 1 : kx > ky ? -1 : 0;
}

static json_t *ratio_or_null(uint64_t part, uint64_t whole)
{
	return whole ? json_real((double)part / (double)whole) : json_null();
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static json_t *cache_row(const struct shape *x)
{
	char hex[19];

	sql_digest_hex(x->d->digest, hex);
	return json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:o, s:I, s:I, s:I, s:s}",
			 "query_id", x->d->query_id, "digest", hex,
			 "name", x->name[0] ? x->name : x->d->query_id,
			 "query", x->d->digest_text ? x->d->digest_text : "",
			 "hits", (json_int_t)x->hits, "misses", (json_int_t)x->misses,
			 "hit_ratio", ratio_or_null(x->hits, x->hits + x->misses),
			 "entries", (json_int_t)x->entries, "bytes", (json_int_t)x->bytes,
			 "saved_us", (json_int_t)x->saved_us, "state", "cached");
}

/* Why a shape is not cached, in the words of SHOW PROXIED QUERIES. */
static const char *uncached_reason(const struct cache_def *d)
{
	const struct reason *r = atomic_load(&d->skip_reason);

	if (atomic_load(&d->state) == CACHE_SKIPPED)
		return r ? r->text : "not cacheable";
	if (!atomic_load(&d->classified))
		return "not classified yet";
	return "cacheable, but no cache: auto-cache is off and no query rule or CREATE CACHE names it";
}

static json_t *uncached_row(const struct shape *x)
{
	char hex[19];
	bool skipped = atomic_load(&x->d->state) == CACHE_SKIPPED;

	sql_digest_hex(x->d->digest, hex);
	return json_pack("{s:s, s:s, s:I, s:I, s:s, s:s}", "digest", hex,
			 "query", x->d->digest_text ? x->d->digest_text : "",
			 "count", (json_int_t)x->count, "upstream_time_us", (json_int_t)x->sum_us,
			 "state", skipped ? "skipped" : "proxied", "reason", uncached_reason(x->d));
}

/* "caches", "caches_total" and "uncached" into root (which owns them from
 * the start, so the caller's json_decref frees all). -1 when out of memory. */
static int add_shapes(json_t *root)
{
	json_t *caches = json_array(), *uncached = json_array();
	struct cache_def **defs;
	struct shape *v;
	size_t n, n_cached = 0;
	int rc = 0;

	if (json_object_set_new(root, "caches", caches) != 0 ||
	    json_object_set_new(root, "uncached", uncached) != 0 || registry_snapshot(&defs, &n) < 0)
		return -1;
	v = malloc((n ? n : 1) * sizeof(*v));
	for (size_t i = 0; v && i < n; i++)
		read_shape(&v[i], defs[i]);
	free(defs);
	if (!v)
		return -1;
	if (n > 1)
		qsort(v, n, sizeof(*v), by_listing_order);
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct shape *x = &v[i];

		if (x->cached && n_cached++ < MAX_CACHES)
			rc = json_array_append_new(caches, cache_row(x));
		else if (!x->cached && x->count > 0 && json_array_size(uncached) < MAX_UNCACHED)
			rc = json_array_append_new(uncached, uncached_row(x));
	}
	free(v);
	if (rc != 0)
		return -1;
	return json_object_set_new(root, "caches_total", json_integer((json_int_t)n_cached));
}

/* {reason: count} of the why counters in [from, to), and their total. */
static json_t *why_object(enum inval_why from, enum inval_why to, json_int_t *total)
{
	json_t *o = json_object();

	*total = 0;
	for (enum inval_why w = from; o && w < to; w++) {
		*total += (json_int_t)inval_why_count(w);
		json_object_set_new(o, inval_why_name(w), json_integer((json_int_t)inval_why_count(w)));
	}
	return o;
}

/* What was invalidated: entries by row, tables whole, everything, with
 * the reasons (cache/inval.h). */
static json_t *invalidations_object(void)
{
	json_int_t rows, tables, all;
	json_t *r = why_object(IW_ROW_MATCH, IW_FIRST_TABLE, &rows);
	json_t *t = why_object(IW_FIRST_TABLE, IW_FIRST_ALL, &tables);
	json_t *a = why_object(IW_FIRST_ALL, IW_N, &all);

	return json_pack("{s:I, s:o?, s:I, s:o?, s:I, s:o?}", "by_row", rows, "by_row_reasons", r,
			 "by_table", tables, "by_table_reasons", t, "everything", all, "everything_reasons", a);
}

static json_t *binlog_object(void)
{
	struct binlog_status bl;

	struct fence_stats fs;

	binlog_get_status(&bl);
	fence_get_stats(&fs);
	return json_pack("{s:s, s:f, s:s, s:s, s:b, s:f, s:I, s:b, s:o?}", "state", binlog_state_name(bl.state),
			 "lag_seconds", bl.lag_seconds, "position", bl.position, "error", bl.error,
			 "fence_open", (int)fs.open, "fence_oldest_age_seconds", fs.oldest_age_s,
			 "fence_fills_refused", (json_int_t)fs.fills_refused,
			 "fence_start_pending", (int)fs.start_pending, "invalidations", invalidations_object());
}

static json_t *node_object(const char *health_word)
{
	const struct reason *why = inval_serving() ? NULL : inval_not_serving_reason();
	char upstream[300], up_version[160];
	uint8_t collation;

	snprintf(upstream, sizeof(upstream), "%s%s%s:%u", strchr(g_config.upstream_host, ':') ? "[" : "",
		 g_config.upstream_host, strchr(g_config.upstream_host, ':') ? "]" : "",
		 (unsigned)g_config.upstream_port);
	upstream_info(up_version, sizeof(up_version), &collation);
	return json_pack("{s:s, s:I, s:s, s:s, s:s, s:s, s:b, s:s, s:b, s:o, s:o, s:I, s:I, s:I, s:b, s:i}",
			 "version", SHOAL_VERSION,
			 "uptime_seconds", (json_int_t)(time(NULL) - status_started_at()),
			 "upstream", upstream, "upstream_version", up_version,
			 "upstream_state", health_upstream_up() ? "up" : "down",
			 "status", health_word, "draining", (int)health_draining(),
			 "invalidation", inval_mode_name(inval_mode()),
			 "cache_serving", (int)inval_serving(),
			 "cache_not_serving_reason", why ? json_string(why->text) : json_null(),
			 "binlog", binlog_object(),
			 "memory_used_bytes", (json_int_t)store_bytes(),
			 "memory_limit_bytes", (json_int_t)g_config.memory_limit,
			 "cache_entries", (json_int_t)store_entries(),
			 "auto_cache", (int)__atomic_load_n(&g_config.auto_cache, __ATOMIC_RELAXED),
			 "workers", g_config.workers);
}

static json_t *totals_object(void)
{
	uint64_t hits = STAT_GET(cache_hits), misses = STAT_GET(cache_misses);

	return json_pack("{s:I, s:I, s:I, s:o}", "queries", (json_int_t)(STAT_GET(queries) + hits),
			 "hits", (json_int_t)hits, "misses", (json_int_t)misses,
			 "hit_ratio", ratio_or_null(hits, hits + misses));
}

static void add_user(const struct users_activity *u, void *arg)
{
	json_t *users = arg;

	json_array_append_new(users, json_pack("{s:s, s:i, s:i, s:i}", "user", u->name,
					       "sessions", u->sessions, "in_use", u->in_use,
					       "waiting", u->waiting));
}

static json_t *pool_object(void)
{
	uint64_t open = STAT_GET(upstream_connections), idle = STAT_GET(upstream_idle);
	json_t *users = json_array();

	if (users)
		users_each_activity(add_user, users);
	return json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:o*}",
			 "limit", g_config.max_upstream_connections, "open", (json_int_t)open,
			 "in_use", (json_int_t)(open > idle ? open - idle : 0), "idle", (json_int_t)idle,
			 "waiting", (json_int_t)STAT_GET(upstream_waiting),
			 "pinned", (json_int_t)STAT_GET(upstream_pinned),
			 "peak", (json_int_t)STAT_GET(upstream_connections_peak), "users", users);
}

static json_t *clients_object(void)
{
	uint64_t conns = STAT_GET(client_connections);

	if (conns > (uint64_t)INT64_MAX) /* a racing inc/dec pair may wrap */
		conns = 0;
	return json_pack("{s:I, s:I, s:I, s:I}", "connected", (json_int_t)conns,
			 "created", (json_int_t)STAT_GET(client_connections_created),
			 "aborted", (json_int_t)STAT_GET(client_connections_aborted),
			 "refused", (json_int_t)STAT_GET(client_connections_refused));
}

/* One column of the series: field at offset off of each sample. */
static json_t *series_column(const struct status_sample *v, size_t n, size_t off)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++) {
		double x = *(const double *)(const void *)((const char *)&v[i] + off);

		if (json_array_append_new(a, num_or_null(x)) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *series_object(void)
{
	struct status_sample *v = malloc(STATUS_RING_LEN * sizeof(*v));
	json_t *o, *t;
	size_t n;

	if (!v)
		return NULL;
	n = status_copy_series(v, STATUS_RING_LEN);
	t = json_array();
	for (size_t i = 0; t && i < n; i++)
		if (json_array_append_new(t, json_integer((json_int_t)v[i].t)) != 0) {
			json_decref(t);
			t = NULL;
		}
	o = json_pack("{s:i, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*}", "interval_seconds", 1, "t", t,
		      "cache_qps", series_column(v, n, offsetof(struct status_sample, cache_qps)),
		      "upstream_qps", series_column(v, n, offsetof(struct status_sample, upstream_qps)),
		      "hit_ratio", series_column(v, n, offsetof(struct status_sample, hit_ratio)),
		      "binlog_lag_seconds", series_column(v, n, offsetof(struct status_sample, binlog_lag_s)),
		      "hit_p99_ms", series_column(v, n, offsetof(struct status_sample, hit_p99_ms)),
		      "miss_p99_ms", series_column(v, n, offsetof(struct status_sample, miss_p99_ms)),
		      "upstream_p99_ms", series_column(v, n, offsetof(struct status_sample, upstream_p99_ms)));
	free(v);
	return o;
}

char *status_render_json(const char *health_word)
{
	json_t *root = json_pack("{s:f, s:o*, s:o*}", "generated_at", (double)time(NULL),
				 "node", node_object(health_word), "totals", totals_object());
	char *s = NULL;

	if (root && add_shapes(root) == 0 &&
	    json_object_set_new(root, "pool", pool_object()) == 0 &&
	    json_object_set_new(root, "clients", clients_object()) == 0 &&
	    json_object_set_new(root, "series", series_object()) == 0)
		s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
	json_decref(root);
	return s;
}
