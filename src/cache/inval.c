/*
 * inval.c: the invalidation mode, the table index with its generations,
 * the epoch and the serving flag (see inval.h).
 */
#include "cache/inval.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/fence.h"
#include "config/config.h"
#include "base/log.h"
#include "sql/spooky.h"

#define INITIAL_BUCKETS 1024
#define MAX_TABLES 1000000

_Atomic uint64_t inval_epoch_now = 1;
_Atomic bool inval_serving_ok = true;
/* The fence of the last inval_all_fenced (stored before the epoch moves). */
static _Atomic uint64_t all_fence;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct inval_table **buckets;
static size_t nbuckets, ntables;
static _Atomic int mode = INVAL_TTL;
static atomic_uint_fast64_t counts[INVAL_SRC_N], dropped, why_counts[IW_N];
static const struct reason *_Atomic not_serving = &reason_table[WHY_BINLOG_NOT_STARTED];

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int inval_init(void)
{
	pthread_mutex_lock(&lock);
	if (!buckets) {
		buckets = calloc(INITIAL_BUCKETS, sizeof(*buckets));
		nbuckets = buckets ? INITIAL_BUCKETS : 0;
	}
	pthread_mutex_unlock(&lock);
	return buckets ? 0 : -1;
}

void inval_destroy(void (*drop)(struct inval_table *t))
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nbuckets; i++) {
		struct inval_table *t = buckets[i], *next;

		for (; t; t = next) {
			next = t->next;
			if (drop)
				drop(t);
			free(t->spelled);
			free(t);
		}
	}
	free(buckets);
	buckets = NULL;
	nbuckets = ntables = 0;
	pthread_mutex_unlock(&lock);
}

void inval_set_mode(enum inval_mode m)
{
	atomic_store(&mode, (int)m);
}

enum inval_mode inval_mode(void)
{
	return (enum inval_mode)atomic_load_explicit(&mode, memory_order_relaxed);
}

const char *inval_mode_name(enum inval_mode m)
{
	switch (m) {
	case INVAL_BINLOG: return "binlog";
	case INVAL_WRITES: return "writes";
	default: return "ttl";
	}
}

static size_t lower_copy(char *dst, const char *src, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)src[i];

		dst[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	dst[n] = 0;
	return n + 1;
}

static void grow(void)
{
	size_t n = nbuckets * 2;
	struct inval_table **b = calloc(n, sizeof(*b));

	if (!b)
		return;
	for (size_t i = 0; i < nbuckets; i++) {
		struct inval_table *t = buckets[i], *next;

		for (; t; t = next) {
			next = t->next;
			t->next = b[t->hash & (n - 1)];
			b[t->hash & (n - 1)] = t;
		}
	}
	free(buckets);
	buckets = b;
	nbuckets = n;
}

struct inval_table *inval_table_get(const char *schema, size_t slen, const char *name, size_t nlen)
{
	char key[INVAL_MAX_NAME + 2];
	size_t klen;
	uint64_t h;
	struct inval_table *t;

	if (slen + nlen > INVAL_MAX_NAME || nlen == 0)
		return NULL;
	klen = lower_copy(key, schema, slen);
	klen += lower_copy(key + klen, name, nlen);
	h = spooky_hash64(key, klen, 0x7ab1e5);
	pthread_mutex_lock(&lock);
	if (!buckets) {
		pthread_mutex_unlock(&lock);
		return NULL;
	}
	for (t = buckets[h & (nbuckets - 1)]; t; t = t->next)
		if (t->hash == h && t->schema_len == slen && t->name_len == nlen &&
		    memcmp(t->key, key, klen) == 0)
			break;
	if (!t && ntables < MAX_TABLES && (t = calloc(1, sizeof(*t) + klen))) {
		t->hash = h;
		t->schema_len = (uint16_t)slen;
		t->name_len = (uint16_t)nlen;
		memcpy(t->key, key, klen);
		atomic_init(&t->gen, 1);
		atomic_init(&t->tgen, 1);
		if (ntables + 1 > nbuckets)
			grow();
		t->next = buckets[h & (nbuckets - 1)];
		buckets[h & (nbuckets - 1)] = t;
		ntables++;
	}
	pthread_mutex_unlock(&lock);
	return t;
}

void inval_table_spell(struct inval_table *t, const char *schema, const char *name, uint32_t read)
{
	size_t sl = strlen(schema), nl = strlen(name);
	bool same = t->spelled && strcmp(inval_table_spelled_schema(t), schema) == 0 &&
		    strcmp(inval_table_spelled_name(t), name) == 0;
	char *s;

	if (t->spelled && t->spelled_read == read) {
		if (!same)
			t->spelled_twice = true;   /* Foo and foo, both listed by this read */
		return;
	}
	t->spelled_read = read;
	t->spelled_twice = false;
	if (same)
		return;   /* as the last read listed it */
	s = malloc(sl + nl + 2);
	if (!s)
		return;   /* out of memory: the spelling before (or the folded key) stays */
	memcpy(s, schema, sl + 1);
	memcpy(s + sl + 1, name, nl + 1);
	free(t->spelled);
	t->spelled = s;
}

/* Fills of t that start within settle_ms from now are not stored. */
static void settle(struct inval_table *t, int settle_ms)
{
	int64_t until;

	if (settle_ms <= 0)
		return;   /* no window (the default) */
	until = mono_ms() + settle_ms;
	/* only ever moves forward (concurrent bumps) */
	for (int64_t cur = atomic_load(&t->settle_ms); cur < until &&
	     !atomic_compare_exchange_weak(&t->settle_ms, &cur, until);)
		;
}

void inval_bump(struct inval_table *t, enum inval_source src, int settle_ms)
{
	settle(t, settle_ms);
	/* tgen first: a snapshot that sees the new gen sees the new tgen */
	atomic_fetch_add_explicit(&t->tgen, 1, memory_order_acq_rel);
	atomic_fetch_add_explicit(&t->gen, 1, memory_order_acq_rel);
	atomic_fetch_add_explicit(&counts[src], 1, memory_order_relaxed);
}

/* *at = max(*at, v); concurrent writers never move it back. */
static void store_max(_Atomic uint64_t *at, uint64_t v)
{
	for (uint64_t cur = atomic_load(at); cur < v && !atomic_compare_exchange_weak(at, &cur, v);)
		;
}

void inval_bump_fenced(struct inval_table *t, uint64_t fence, int settle_ms)
{
	store_max(&t->fence, fence);   /* before the generation (release in the bump) */
	inval_bump(t, INVAL_SRC_BINLOG, settle_ms);
}

void inval_row_fenced(struct inval_table *t, uint64_t fence, int settle_ms)
{
	store_max(&t->fence, fence);   /* before the generation (release below) */
	settle(t, settle_ms);
	atomic_fetch_add_explicit(&t->gen, 1, memory_order_acq_rel);
	atomic_fetch_add_explicit(&counts[INVAL_SRC_BINLOG], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&why_counts[IW_T_ROWS], 1, memory_order_relaxed);
}

void inval_bump_why(struct inval_table *t, uint64_t fence, int settle_ms, enum inval_why why)
{
	inval_bump_fenced(t, fence, settle_ms);
	inval_count_why(why, 1);
}

void inval_all_why(enum inval_source src, enum inval_why why)
{
	inval_all(src);
	inval_count_why(why, 1);
}

void inval_count_why(enum inval_why why, uint64_t n)
{
	if (why < IW_N)
		atomic_fetch_add_explicit(&why_counts[why], n, memory_order_relaxed);
}

uint64_t inval_why_count(enum inval_why why)
{
	return why < IW_N ? atomic_load_explicit(&why_counts[why], memory_order_relaxed) : 0;
}

const char *inval_why_name(enum inval_why why)
{
	static const char *const names[IW_N] = {
		[IW_ROW_MATCH] = "row_matched", [IW_ROW_UNSURE] = "value_not_comparable",
		[IW_T_ROWS] = "row_change", [IW_T_WRITE] = "own_write",
		[IW_T_STATEMENT] = "statement_event", [IW_T_CASCADE] = "cascade",
		[IW_T_UNKNOWN] = "unknown_table", [IW_T_UNREADABLE] = "unreadable_event",
		[IW_T_DEFINITION] = "definition_changed", [IW_T_NOTINDEXED] = "index_full",
		[IW_T_GRANULARITY] = "granularity_table",
		[IW_A_FLUSH] = "stream_gap", [IW_A_UNKNOWN] = "tables_unknown",
		[IW_A_WRITE] = "own_write_unknown",
	};

	return why < IW_N && names[why] ? names[why] : "?";
}

void inval_all_fenced(uint64_t fence)
{
	store_max(&all_fence, fence);  /* before the epoch (release in inval_all) */
	inval_all(INVAL_SRC_BINLOG);
}

void inval_all(enum inval_source src)
{
	atomic_fetch_add_explicit(&inval_epoch_now, 1, memory_order_acq_rel);
	atomic_fetch_add_explicit(&counts[src], 1, memory_order_relaxed);
}

uint64_t inval_count(enum inval_source src)
{
	return src < INVAL_SRC_N ? atomic_load_explicit(&counts[src], memory_order_relaxed) : 0;
}

const char *inval_source_name(enum inval_source src)
{
	switch (src) {
	case INVAL_SRC_WRITE: return "write";
	case INVAL_SRC_BINLOG: return "binlog";
	case INVAL_SRC_FLUSH: return "flush";
	default: return "?";
	}
}

void inval_count_dropped(uint64_t n)
{
	atomic_fetch_add_explicit(&dropped, n, memory_order_relaxed);
}

uint64_t inval_dropped(void)
{
	return atomic_load_explicit(&dropped, memory_order_relaxed);
}

void inval_set_serving(bool ok, enum reason_id why)
{
	bool was;

	if (!ok)   /* before the flag: a reader that sees it down finds why */
		atomic_store(&not_serving, reason_of(why));
	was = atomic_exchange(&inval_serving_ok, ok);
	if (was != ok) {
		if (ok)
			log_info("cache: serving again (the binlog stream caught up)");
		else
			log_warn("cache: not serving cached results: %s", reason_of(why)->text);
	}
}

const struct reason *inval_not_serving_reason(void)
{
	if (atomic_load(&inval_serving_ok) && !fence_start_open())
		return reason_of(WHY_BINLOG_START);
	return atomic_load(&not_serving);
}

bool inval_snapshot(struct inval_table *const *tables, unsigned n, struct inval_dep *deps)
{
	return inval_snapshot_t(tables, n, deps, NULL);
}

bool inval_snapshot_t(struct inval_table *const *tables, unsigned n, struct inval_dep *deps,
		      uint64_t *tgen)
{
	int64_t now = -1;
	bool settled = true;
	uint64_t fence = atomic_load_explicit(&all_fence, memory_order_acquire);

	for (unsigned i = 0; i < n; i++) {
		int64_t settle;
		uint64_t f;

		/* generation first: a bump stores its settle time and its fence
		 * before it moves the generation, so a new generation comes with
		 * them */
		deps[i].t = tables[i];
		deps[i].gen = atomic_load_explicit(&tables[i]->gen, memory_order_acquire);
		if (tgen)
			tgen[i] = atomic_load_explicit(&tables[i]->tgen, memory_order_acquire);
		settle = atomic_load_explicit(&tables[i]->settle_ms, memory_order_acquire);
		f = atomic_load_explicit(&tables[i]->fence, memory_order_acquire);
		if (f > fence)
			fence = f;
		if (settle) {
			if (now < 0)
				now = mono_ms();
			if (now < settle)
				settled = false;
		}
	}
	/* the caller read the epoch before: a flush's fence is stored before
	 * the epoch moves, so all_fence (read after it) covers that epoch; the
	 * start fence covers every table (the cache does not serve meanwhile,
	 * so only a fill that began before it closed gets here) */
	if ((fence && !fence_passed(fence)) || !fence_start_open()) {
		fence_count_refused();
		return false;
	}
	return settled;
}

int inval_default_ttl_ms(void)
{
	return __atomic_load_n(&g_config.cache_ttl_ms, __ATOMIC_RELAXED);
}

int inval_default_refresh_ms(void)
{
	return __atomic_load_n(&g_config.cache_refresh_ms, __ATOMIC_RELAXED);
}
