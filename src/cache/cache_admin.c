/*
 * cache_admin.c: cache definitions and cache statistics for the admin's
 * SQLite tables. See cache_admin.h.
 *
 * Snapshots copy what they need from the registry under its read lock (a
 * short copy; workers only wait on that lock when they add a new query
 * shape, never on a cache hit), then write SQLite outside it.
 */
#include "cache/cache_admin.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin.h"
#include "cache/commands.h"
#include "cache/registry.h"
#include "config.h"
#include "log.h"
#include "sql/tokenizer.h"

struct snapshot {
	struct cache_def **defs;
	size_t n, cap;
	bool cached_only;
};

static bool take(struct cache_def *d, void *arg)
{
	struct snapshot *s = arg;

	if (s->cached_only && (atomic_load(&d->state) != CACHE_CACHED || !atomic_load(&d->explicit_cache)))
		return true;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 128;
		struct cache_def **p = realloc(s->defs, cap * sizeof(*p));

		if (!p)
			return false;
		s->defs = p;
		s->cap = cap;
	}
	s->defs[s->n++] = d; /* records live until exit: safe to use unlocked */
	return true;
}

static const char *status_of(const struct cache_def *d, char *buf, size_t cap)
{
	switch (atomic_load(&d->state)) {
	case CACHE_CACHED:
		return "cached";
	case CACHE_SKIPPED:
		snprintf(buf, cap, "skipped: %s", atomic_load(&d->skip_reason));
		return buf;
	default:
		return "proxied";
	}
}

static uint64_t get(atomic_uint_fast64_t *a, bool reset)
{
	return reset ? atomic_exchange(a, 0) : atomic_load_explicit(a, memory_order_relaxed);
}

static int digest_row(sqlite3 *db, const char *table, struct cache_def *d, bool reset)
{
	char num[13][24], hex[19], st[160];
	uint64_t count = get(&d->count_star, reset), minv = get(&d->min_time_us, reset);
	const char *v[17];

	if (count == 0)
		return 0;
	if (reset)
		atomic_store(&d->min_time_us, UINT64_MAX);
	sql_digest_hex(d->digest, hex);
	snprintf(num[0], 24, "%" PRIu64, count);
	snprintf(num[1], 24, "%" PRIu64, (uint64_t)atomic_load(&d->first_seen));
	snprintf(num[2], 24, "%" PRIu64, (uint64_t)atomic_load(&d->last_seen));
	snprintf(num[3], 24, "%" PRIu64, get(&d->sum_time_us, reset));
	snprintf(num[4], 24, "%" PRIu64, minv == UINT64_MAX ? 0 : minv);
	snprintf(num[5], 24, "%" PRIu64, get(&d->max_time_us, reset));
	snprintf(num[6], 24, "%" PRIu64, get(&d->rows_affected, reset));
	snprintf(num[7], 24, "%" PRIu64, get(&d->rows_sent, reset));
	snprintf(num[8], 24, "%" PRIu64, get(&d->hits, reset));
	snprintf(num[9], 24, "%" PRIu64, get(&d->misses, reset));
	snprintf(num[10], 24, "%" PRIu64, get(&d->time_saved_us, reset));
	v[0] = ""; v[1] = ""; v[2] = ""; v[3] = hex; v[4] = d->digest_text;
	v[5] = num[0]; v[6] = num[1]; v[7] = num[2]; v[8] = num[3]; v[9] = num[4];
	v[10] = num[5]; v[11] = num[6]; v[12] = num[7]; v[13] = num[8]; v[14] = num[9];
	v[15] = status_of(d, st, sizeof(st)); v[16] = num[10];
	return admin_insert_row(db, table, 17, v);
}

static int fill_digest(sqlite3 *db, const char *table, bool reset)
{
	struct snapshot s = {0};
	int rc = 0;

	registry_each(take, &s);
	for (size_t i = 0; i < s.n && rc == 0; i++)
		rc = digest_row(db, table, s.defs[i], reset);
	free(s.defs);
	return rc;
}

static int fill_caches(sqlite3 *db, const char *table, bool reset)
{
	struct snapshot s = {0};
	int rc = 0;

	(void)reset;
	registry_each(take, &s);
	for (size_t i = 0; i < s.n && rc == 0; i++) {
		struct cache_def *d = s.defs[i];
		char num[6][24];
		const char *v[8];

		if (atomic_load(&d->state) != CACHE_CACHED)
			continue;
		snprintf(num[0], 24, "%" PRId64, (int64_t)atomic_load(&d->entries));
		snprintf(num[1], 24, "%" PRId64, (int64_t)atomic_load(&d->bytes));
		snprintf(num[2], 24, "%" PRIu64, (uint64_t)atomic_load(&d->hits));
		snprintf(num[3], 24, "%" PRIu64, (uint64_t)atomic_load(&d->misses));
		snprintf(num[4], 24, "%" PRIu64, (uint64_t)(atomic_load(&d->refresh_changed) +
							     atomic_load(&d->refresh_unchanged)));
		snprintf(num[5], 24, "%" PRIu64, (uint64_t)atomic_load(&d->coalesced_waits));
		v[0] = d->query_id; v[1] = d->name; v[2] = num[0]; v[3] = num[1];
		v[4] = num[2]; v[5] = num[3]; v[6] = num[4]; v[7] = num[5];
		rc = admin_insert_row(db, table, 8, v);
	}
	free(s.defs);
	return rc;
}

/* SAVE CACHES FROM RUNTIME: the explicit caches as rows. */
static int save_caches(sqlite3 *db, const char *table, char *err, size_t errlen)
{
	struct snapshot s = { .cached_only = true };
	int rc = 0;

	registry_each(take, &s);
	for (size_t i = 0; i < s.n && rc == 0; i++) {
		struct cache_def *d = s.defs[i];
		char num[3][16];
		int txn = atomic_load(&d->txn);
		const char *v[9];

		snprintf(num[0], 16, "%d", atomic_load(&d->ttl_ms));
		snprintf(num[1], 16, "%d", def_refresh_ms(d));
		snprintf(num[2], 16, "%d", atomic_load(&d->coalesce_ms));
		v[0] = d->query_id; v[1] = d->name; v[2] = d->query_text;
		v[3] = num[0]; v[4] = num[1]; v[5] = num[2];
		v[6] = txn == TXN_ALWAYS ? "1" : "0";
		v[7] = txn == TXN_UNTIL_WRITE ? "until_write" : "default";
		v[8] = "";
		rc = admin_insert_row(db, table, 9, v);
	}
	free(s.defs);
	if (rc)
		snprintf(err, errlen, "cannot write %s", table);
	return rc;
}

/* One row of a caches table, as CREATE CACHE. */
struct cache_row {
	struct create_cache cc;
	char *query;
};

static int read_rows(sqlite3 *db, const char *table, struct cache_row **out, size_t *n,
		     char *err, size_t errlen)
{
	char sql[256];
	sqlite3_stmt *st;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	snprintf(sql, sizeof(sql), "SELECT name, query, ttl_ms, refresh_ms, coalesce_ms, always, policy FROM %s", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
		return -1;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct cache_row *r;
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *q = (const char *)sqlite3_column_text(st, 1);
		const char *policy = (const char *)sqlite3_column_text(st, 6);

		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			r = realloc(*out, cap * sizeof(*r));
			if (!r)
				break;
			*out = r;
		}
		r = &(*out)[*n];
		memset(r, 0, sizeof(*r));
		r->query = strdup(q ? q : "");
		if (!r->query)
			break;
		snprintf(r->cc.name, sizeof(r->cc.name), "%s", name ? name : "");
		r->cc.select = r->query;
		r->cc.select_len = strlen(r->query);
		r->cc.ttl_ms = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 2);
		r->cc.refresh_ms = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 3);
		r->cc.coalesce_ms = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 4);
		r->cc.txn = sqlite3_column_int(st, 5) ? TXN_ALWAYS :
			    policy && strcasecmp(policy, "until_write") == 0 ? TXN_UNTIL_WRITE : TXN_DEFAULT;
		(*n)++;
	}
	sqlite3_finalize(st);
	return 0;
}

static void free_rows(struct cache_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i].query);
	free(rows);
}

static bool drop_explicit(struct cache_def *d, void *arg)
{
	(void)arg;
	if (atomic_load(&d->state) == CACHE_CACHED && atomic_load(&d->explicit_cache))
		registry_set_proxied(d);
	return true;
}

/* LOAD CACHES TO RUNTIME: validate every row, then make them the explicit
 * caches. At start an empty table keeps what the data port's cache SQL saved. */
static int load_caches(sqlite3 *db, const char *table, char *err, size_t errlen)
{
	struct cache_row *rows;
	size_t n;
	char id[20];
	uint16_t code;

	static bool loaded_once;

	if (read_rows(db, table, &rows, &n, err, errlen) < 0)
		return -1;
	if (!loaded_once && n == 0) {
		/* start-up with nothing saved in the disk database: keep the
		 * caches the data port's CREATE CACHE saved (caches.json) */
		loaded_once = true;
		free_rows(rows, n);
		return 0;
	}
	loaded_once = true;
	for (size_t i = 0; i < n; i++) {
		if (cache_check(&rows[i].cc, err, errlen) < 0) {
			free_rows(rows, n);
			return -1;
		}
	}
	registry_each(drop_explicit, NULL);
	for (size_t i = 0; i < n; i++)
		if (cache_create(&rows[i].cc, id, &code, err, errlen) < 0)
			log_warn("LOAD CACHES: %s", err);
	free_rows(rows, n);
	cache_persist_save();
	return 0;
}

void cache_admin_register(void)
{
	admin_register_module("CACHES", load_caches, save_caches);
	admin_register_stats_provider("stats_shoal_query_digest", fill_digest);
	admin_register_stats_provider("stats_shoal_caches", fill_caches);
}
