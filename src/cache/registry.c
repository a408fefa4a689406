/*
 * registry.c: the per-digest records (cache definitions, skip verdicts and
 * counters) and their index. See registry.h.
 */
#include "registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "sql/tokenizer.h"

#define REG_BUCKETS 65536
#define REG_MAX_RECORDS 100000
#define TEXT_CAP 2048

static pthread_rwlock_t reg_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct cache_def **buckets;
static size_t n_records;
static atomic_size_t n_cached;    /* records in state CACHE_CACHED */

int registry_init(void)
{
	buckets = calloc(REG_BUCKETS, sizeof(*buckets));
	return buckets ? 0 : -1;
}

static void free_def(struct cache_def *d)
{
	free(d->digest_text);
	free(d->query_text);
	free(d);
}

void registry_destroy(void)
{
	if (!buckets)
		return;
	for (size_t i = 0; i < REG_BUCKETS; i++) {
		struct cache_def *d = buckets[i], *next;

		for (; d; d = next) {
			next = d->hnext;
			free_def(d);
		}
	}
	free(buckets);
	buckets = NULL;
	n_records = 0;
	atomic_store(&n_cached, 0);
}

static struct cache_def *lookup_locked(uint64_t digest)
{
	for (struct cache_def *d = buckets[digest & (REG_BUCKETS - 1)]; d; d = d->hnext)
		if (d->digest == digest)
			return d;
	return NULL;
}

struct cache_def *registry_find(uint64_t digest)
{
	struct cache_def *d;

	pthread_rwlock_rdlock(&reg_lock);
	d = lookup_locked(digest);
	pthread_rwlock_unlock(&reg_lock);
	return d;
}

static char *dup_capped(const char *s, size_t n)
{
	char *p;

	if (n > TEXT_CAP)
		n = TEXT_CAP;
	p = malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = 0;
	}
	return p;
}

static struct cache_def *new_def(uint64_t digest, const char *text, size_t tlen,
				 const char *query, size_t qlen)
{
	struct cache_def *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->digest = digest;
	sql_query_id(digest, d->query_id);
	d->digest_text = dup_capped(text, tlen);
	d->query_text = dup_capped(query, qlen);
	if (!d->digest_text || !d->query_text) {
		free_def(d);
		return NULL;
	}
	for (int i = 0; i < DEF_SLOTS; i++)
		atomic_init(&d->hot[i].min_time_us, UINT64_MAX);
	atomic_init(&d->first_seen, (uint64_t)time(NULL));
	return d;
}

struct cache_def *registry_get(uint64_t digest, const char *text, size_t tlen,
			       const char *query, size_t qlen)
{
	struct cache_def *d = registry_find(digest), *fresh_def;

	if (d)
		return d;
	fresh_def = new_def(digest, text, tlen, query, qlen);
	if (!fresh_def)
		return NULL;
	pthread_rwlock_wrlock(&reg_lock);
	d = lookup_locked(digest);
	if (!d && n_records < REG_MAX_RECORDS) {
		d = fresh_def;
		d->hnext = buckets[digest & (REG_BUCKETS - 1)];
		buckets[digest & (REG_BUCKETS - 1)] = d;
		n_records++;
		fresh_def = NULL;
	}
	pthread_rwlock_unlock(&reg_lock);
	if (fresh_def)
		free_def(fresh_def);
	return d;
}

struct cache_def *registry_find_name(const char *name)
{
	struct cache_def *found = NULL;

	pthread_rwlock_rdlock(&reg_lock);
	for (size_t i = 0; i < REG_BUCKETS && !found; i++)
		for (struct cache_def *d = buckets[i]; d && !found; d = d->hnext)
			if (strcasecmp(d->query_id, name) == 0 || (d->name[0] && strcmp(d->name, name) == 0))
				found = d;
	pthread_rwlock_unlock(&reg_lock);
	return found;
}

void registry_each(bool (*fn)(struct cache_def *d, void *arg), void *arg)
{
	bool go = true;

	pthread_rwlock_rdlock(&reg_lock);
	for (size_t i = 0; i < REG_BUCKETS && go; i++)
		for (struct cache_def *d = buckets[i]; d && go; d = d->hnext)
			go = fn(d, arg);
	pthread_rwlock_unlock(&reg_lock);
}

int registry_snapshot(struct cache_def ***out, size_t *n)
{
	struct cache_def **v = NULL, **p;
	size_t cap = 0, k = 0;
	int rc = 0;

	pthread_rwlock_rdlock(&reg_lock);
	for (size_t i = 0; i < REG_BUCKETS && rc == 0; i++)
		for (struct cache_def *d = buckets[i]; d && rc == 0; d = d->hnext) {
			if (k == cap) {
				cap = cap ? cap * 2 : 128;
				p = realloc(v, cap * sizeof(*v));
				if (!p) {
					rc = -1;
					break;
				}
				v = p;
			}
			v[k++] = d;
		}
	pthread_rwlock_unlock(&reg_lock);
	if (rc != 0) {
		free(v);
		v = NULL;
		k = 0;
	}
	*out = v;
	*n = k;
	return rc;
}

/* The state of d becomes st, with the count of cached records kept. */
static void set_state(struct cache_def *d, enum cache_state st)
{
	int old = atomic_exchange(&d->state, (int)st);

	if (old != CACHE_CACHED && st == CACHE_CACHED)
		atomic_fetch_add(&n_cached, 1);
	else if (old == CACHE_CACHED && st != CACHE_CACHED)
		atomic_fetch_sub(&n_cached, 1);
}

bool registry_may_cache(void)
{
	return g_config.auto_cache || atomic_load(&n_cached) > 0;
}

void registry_set_cached(struct cache_def *d, const char *name, int ttl_ms, int refresh_ms,
			 int coalesce_ms, enum txn_policy txn, bool explicit_cache)
{
	pthread_rwlock_wrlock(&reg_lock);
	if (name)
		snprintf(d->name, sizeof(d->name), "%s", name);
	pthread_rwlock_unlock(&reg_lock);
	atomic_store(&d->ttl_ms, ttl_ms);
	atomic_store(&d->refresh_ms, refresh_ms);
	atomic_store(&d->coalesce_ms, coalesce_ms);
	atomic_store(&d->txn, (int)txn);
	atomic_store(&d->explicit_cache, explicit_cache);
	atomic_store(&d->skip_reason, NULL);
	set_state(d, CACHE_CACHED);
}

void registry_set_skipped(struct cache_def *d, const struct reason *reason)
{
	atomic_store(&d->skip_reason, reason);
	set_state(d, CACHE_SKIPPED);
}

void registry_set_proxied(struct cache_def *d)
{
	atomic_store(&d->explicit_cache, false);
	set_state(d, CACHE_PROXIED);
}

int def_refresh_ms(const struct cache_def *d)
{
	int r = atomic_load(&d->refresh_ms), ttl = atomic_load(&d->ttl_ms);

	if (r >= ttl)
		return ttl;     /* never refreshed: a hit past the TTL is a miss */
	return r > 0 ? r : ttl / 2;
}

static void atomic_min(atomic_uint_fast64_t *a, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(a, memory_order_relaxed);

	while (v < cur && !atomic_compare_exchange_weak(a, &cur, v))
		;
}

static void atomic_max(atomic_uint_fast64_t *a, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(a, memory_order_relaxed);

	while (v > cur && !atomic_compare_exchange_weak(a, &cur, v))
		;
}

__thread unsigned def_slot_idx;

void def_account(struct cache_def *d, uint64_t us, uint64_t rows_sent, uint64_t rows_affected)
{
	struct def_hot *h = def_hot_of(d);
	uint64_t now = (uint64_t)time(NULL);

	atomic_fetch_add_explicit(&h->count_star, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum_time_us, us, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->rows_sent, rows_sent, memory_order_relaxed);
	if (rows_affected)
		atomic_fetch_add_explicit(&h->rows_affected, rows_affected, memory_order_relaxed);
	if (atomic_load_explicit(&h->last_seen, memory_order_relaxed) != now)
		atomic_store_explicit(&h->last_seen, now, memory_order_relaxed);
	atomic_min(&h->min_time_us, us);
	atomic_max(&h->max_time_us, us);
}

static atomic_uint_fast64_t *hot_field(struct def_hot *h, enum def_ctr c)
{
	switch (c) {
	case DC_COUNT: return &h->count_star;
	case DC_SUM_TIME: return &h->sum_time_us;
	case DC_MIN_TIME: return &h->min_time_us;
	case DC_MAX_TIME: return &h->max_time_us;
	case DC_ROWS_SENT: return &h->rows_sent;
	case DC_ROWS_AFFECTED: return &h->rows_affected;
	case DC_LAST_SEEN: return &h->last_seen;
	case DC_HITS: return &h->hits;
	default: return &h->time_saved_us;
	}
}

uint64_t def_counter(struct cache_def *d, enum def_ctr c, bool reset)
{
	uint64_t v = c == DC_MIN_TIME ? UINT64_MAX : 0;

	for (int i = 0; i < DEF_SLOTS; i++) {
		atomic_uint_fast64_t *f = hot_field(&d->hot[i], c);
		uint64_t x;

		if (reset && c != DC_LAST_SEEN)
			x = atomic_exchange(f, c == DC_MIN_TIME ? UINT64_MAX : 0);
		else
			x = atomic_load_explicit(f, memory_order_relaxed);
		if (c == DC_MIN_TIME)
			v = x < v ? x : v;
		else if (c == DC_MAX_TIME || c == DC_LAST_SEEN)
			v = x > v ? x : v;
		else
			v += x;
	}
	return v;
}
