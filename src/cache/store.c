/*
 * store.c: the sharded entry table, reference counting, placeholders and
 * waiters for coalescing, memory accounting and eviction. See store.h.
 */
#include "store.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cache/registry.h"
#include "sql/spooky.h"

#define N_SHARDS 64
#define INITIAL_BUCKETS 1024
#define EVICT_SAMPLES 8

struct shard {
	pthread_mutex_t lock;
	struct cache_entry **buckets;
	size_t nbuckets;
	size_t count;
	uint64_t rng;                    /* sampling state, under the lock */
	double inflation;                /* GDSF "L": priority of the last eviction */
} __attribute__((aligned(64)));

static struct shard shards[N_SHARDS];
static _Atomic size_t mem_limit;
static atomic_uint_fast64_t n_entries, n_bytes, n_evictions, n_discarded;
static store_wake_fn wake_fn;

/* Bytes of data[] for these sizes (deps, key, response, constraints,
 * postings). */
static size_t data_size(unsigned ndeps, size_t klen, size_t rlen, size_t clen, unsigned npost)
{
	return entry_align8(entry_align8(ndeps * sizeof(struct inval_dep) + klen + rlen) + clen) +
	       npost * sizeof(struct mpost);
}

static size_t entry_size(const struct cache_entry *e)
{
	return sizeof(*e) + data_size(e->ndeps, e->key_len, e->resp_len, e->cons_len, e->npost);
}

/* Still current: no table it read was invalidated since its fill began,
 * and no row change retired it (epoch 0). */
static bool entry_current(const struct cache_entry *e)
{
	return inval_current_masked(entry_deps(e), e->ndeps,
				    atomic_load_explicit(&e->epoch, memory_order_relaxed), e->rowmask);
}

/* Free an entry: its postings leave the match index first. */
static void entry_free(struct cache_entry *e)
{
	if (e->npost)
		match_index_forget(entry_posts(e), e->npost);
	free(e);
}

int store_init(size_t memory_limit, store_wake_fn wake)
{
	wake_fn = wake;
	atomic_store(&mem_limit, memory_limit);
	for (int i = 0; i < N_SHARDS; i++) {
		struct shard *s = &shards[i];

		pthread_mutex_init(&s->lock, NULL);
		s->buckets = calloc(INITIAL_BUCKETS, sizeof(*s->buckets));
		if (!s->buckets)
			return -1;
		s->nbuckets = INITIAL_BUCKETS;
		s->rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
	}
	return 0;
}

uint64_t store_hash(const uint8_t *key, size_t len)
{
	return spooky_hash64(key, len, 0x5ca1ab1e);
}

static struct shard *shard_of(uint64_t h)
{
	return &shards[h >> 58];
}

static struct cache_entry **bucket_of(struct shard *s, uint64_t h)
{
	return &s->buckets[h & (s->nbuckets - 1)];
}

static struct cache_entry *find(struct shard *s, const uint8_t *key, size_t len, uint64_t h)
{
	for (struct cache_entry *e = *bucket_of(s, h); e; e = e->next)
		if (e->hash == h && e->key_len == len && memcmp(entry_key(e), key, len) == 0)
			return e;
	return NULL;
}

static void grow(struct shard *s)
{
	size_t n = s->nbuckets * 2;
	struct cache_entry **b = calloc(n, sizeof(*b));

	if (!b)
		return; /* keep the longer chains */
	for (size_t i = 0; i < s->nbuckets; i++) {
		struct cache_entry *e = s->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	}
	free(s->buckets);
	s->buckets = b;
	s->nbuckets = n;
}

static void link_entry(struct shard *s, struct cache_entry *e)
{
	struct cache_entry **b;

	if (s->count + 1 > s->nbuckets)
		grow(s);
	b = bucket_of(s, e->hash);
	e->next = *b;
	*b = e;
	e->linked = true;
	s->count++;
}

static void unlink_entry(struct shard *s, struct cache_entry *e)
{
	struct cache_entry **p = bucket_of(s, e->hash);

	while (*p && *p != e)
		p = &(*p)->next;
	if (*p)
		*p = e->next;
	e->next = NULL;
	e->linked = false;
	s->count--;
}

static void account(struct cache_entry *e, int sign)
{
	int64_t sz = (int64_t)entry_size(e);

	if (e->state != ENTRY_READY)
		return;
	if (sign > 0) {
		atomic_fetch_add(&n_entries, 1);
		atomic_fetch_add(&n_bytes, (uint64_t)sz);
	} else {
		atomic_fetch_sub(&n_entries, 1);
		atomic_fetch_sub(&n_bytes, (uint64_t)sz);
	}
	if (e->def) {
		atomic_fetch_add(&e->def->entries, sign);
		atomic_fetch_add(&e->def->bytes, sign * sz);
	}
}

void store_release(struct cache_entry *e)
{
	if (e && atomic_fetch_sub(&e->refs, 1) == 1)
		entry_free(e);
}

static struct cache_entry *new_entry(const uint8_t *key, size_t klen, size_t rlen, uint64_t h,
				     const struct fill_deps *deps)
{
	struct cache_entry *e;
	unsigned nd = deps ? deps->n : 0;
	size_t dlen = nd * sizeof(struct inval_dep);
	const struct match_cons *c = deps && deps->cons.len ? &deps->cons : NULL;

	if (klen > UINT32_MAX || rlen > UINT32_MAX || nd > INVAL_MAX_DEPS)
		return NULL;
	e = malloc(sizeof(*e) + data_size(nd, klen, rlen, c ? c->len : 0, c ? c->npost : 0));
	if (!e)
		return NULL;
	memset(e, 0, sizeof(*e));
	e->hash = h;
	e->key_len = (uint32_t)klen;
	e->resp_len = (uint32_t)rlen;
	e->ndeps = (uint16_t)nd;
	atomic_init(&e->epoch, deps ? deps->epoch : inval_epoch());
	if (nd)
		memcpy(e->data, deps->d, dlen);
	memcpy(e->data + dlen, key, klen);
	if (c) {
		e->cons_len = c->len;
		e->ntab = c->ntab;
		e->npost = c->npost;
		memcpy((uint8_t *)entry_cons(e), c->buf, c->len);
	}
	atomic_init(&e->refs, 1);
	return e;
}

/* Put a new entry's row constraints in the match index: each dep whose
 * constraints are in then keeps its table's tgen (inval.h). Before the
 * entry is checked and linked (store_fill). */
static void index_entry(struct cache_entry *e, const struct fill_deps *deps)
{
	struct inval_dep *d = (struct inval_dep *)(void *)e->data;
	uint32_t in;

	if (!e->cons_len)
		return;   /* no constraint: every dep keeps its gen */
	in = match_index_add(entry_cons(e), e->cons_len, e->ntab, d, e->ndeps, entry_posts(e), e->npost,
			     &e->epoch);
	e->rowmask = deps->cons.mask & in;
	for (unsigned i = 0; i < e->ndeps; i++)
		if ((e->rowmask >> i) & 1u)
			d[i].gen = deps->tgen[i];
}

/* Wake and clear the waiters of e. Called with the shard lock held. */
static void wake_waiters(struct cache_entry *e)
{
	struct store_waiter *w = e->waiters;

	e->waiters = NULL;
	while (w) {
		struct store_waiter *next = w->next;

		if (wake_fn)
			wake_fn(w->w, w->client_id, w->gen);
		w = next;
	}
}

static bool fresh(const struct cache_entry *e, int64_t now)
{
	return now < e->expires_ms && atomic_load_explicit(&e->def->state, memory_order_relaxed) == CACHE_CACHED &&
	       entry_current(e);
}

/* Expired, but within the stale window (the upstream is down). */
static bool stale_ok(const struct cache_entry *e, int64_t now, int64_t stale_ms)
{
	return stale_ms > 0 && now < e->expires_ms + stale_ms &&
	       atomic_load_explicit(&e->def->state, memory_order_relaxed) == CACHE_CACHED &&
	       entry_current(e);
}

/* An expired or invalidated READY entry that is being loaded again (a
 * refresh, or a reload of a kept entry): true, and the caller waits for
 * that (*r SL_WAIT, with a waiter) or goes upstream (SL_MISS). False:
 * nobody loads it (*r SL_MISS). Shard locked. */
static bool join_reload(struct cache_entry *e, struct store_waiter *waiter,
			       enum store_lookup *r)
{
	*r = SL_MISS;
	if (!atomic_load(&e->refreshing))
		return false;
	if (waiter) {
		waiter->next = e->waiters;
		e->waiters = waiter;
		*r = SL_WAIT;
	}
	return true;
}

/* The same, else the entry is dropped: true. Shard locked. */
static bool drop_expired(struct shard *s, struct cache_entry *e, struct store_waiter *waiter,
			 enum store_lookup *r)
{
	if (join_reload(e, waiter, r))
		return false;
	if (!entry_current(e))
		inval_count_dropped(1);
	account(e, -1);
	unlink_entry(s, e);
	store_release(e);
	return true;
}

/* A READY entry found: reference it for the caller. Shard locked. */
static enum store_lookup hit(struct shard *s, struct cache_entry *e, int64_t now, bool may_refresh)
{
	atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->hits, 1, memory_order_relaxed);
	e->priority = s->inflation + (double)(atomic_load_explicit(&e->hits, memory_order_relaxed) + 1) *
		      (e->upstream_us + 1) / (double)entry_size(e);
	if (may_refresh && now >= e->refresh_at_ms && !atomic_exchange(&e->refreshing, true)) {
		atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
		return SL_REFRESH; /* the caller holds a second reference for the refresh */
	}
	return SL_HIT;
}

/* An expired READY entry kept for serve-stale (keep_ms): a loader takes
 * it (SL_LOAD, as for a refresh), a hit-only look leaves it (SL_MISS), and
 * while it is being loaded again others wait as for a refresh. Shard locked. */
static enum store_lookup reload_kept(struct cache_entry *e, struct cache_def *def,
				     struct store_waiter *waiter, struct cache_entry **out)
{
	enum store_lookup r;

	if (!join_reload(e, waiter, &r) && def) {
		atomic_store(&e->refreshing, true);
		atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
		*out = e;
		return SL_LOAD;
	}
	return r;
}

enum store_lookup store_lookup(const uint8_t *key, size_t len, uint64_t h, int64_t now,
			       int64_t stale_ms, int64_t keep_ms, struct cache_def *def,
			       struct store_waiter *waiter, struct cache_entry **out)
{
	struct shard *s = shard_of(h);
	struct cache_entry *e;
	enum store_lookup r = SL_MISS;

	*out = NULL;
	pthread_mutex_lock(&s->lock);
	e = find(s, key, len, h);
	if (e && e->state == ENTRY_READY && !fresh(e, now) && !stale_ok(e, now, stale_ms)) {
		if (stale_ok(e, now, keep_ms)) {
			r = reload_kept(e, def, waiter, out);
			pthread_mutex_unlock(&s->lock);
			return r;
		}
		if (!drop_expired(s, e, waiter, &r)) {
			pthread_mutex_unlock(&s->lock);
			return r;
		}
		e = NULL; /* expired: a miss */
	}
	if (e && e->state == ENTRY_READY) {
		*out = e;
		/* no refresh while the upstream is down (stale window open) */
		r = hit(s, e, now, stale_ms == 0);
	} else if (e && waiter) {
		waiter->next = e->waiters;
		e->waiters = waiter;
		r = SL_WAIT;
	} else if (!e && def) {
		e = new_entry(key, len, 0, h, NULL);
		if (e) {
			e->state = ENTRY_LOADING;
			e->def = def;
			atomic_fetch_add(&e->refs, 1); /* the loader's */
			link_entry(s, e);
			*out = e;
			r = SL_LOAD;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

bool store_has(const uint8_t *key, size_t len, int64_t now)
{
	uint64_t h = store_hash(key, len);
	struct shard *s = shard_of(h);
	struct cache_entry *e;
	bool has;

	pthread_mutex_lock(&s->lock);
	e = find(s, key, len, h);
	has = e && (e->state == ENTRY_LOADING || (e->state == ENTRY_READY && fresh(e, now)));
	pthread_mutex_unlock(&s->lock);
	return has;
}

static double base_priority(const struct cache_entry *e)
{
	return (double)(e->upstream_us + 1) / (double)entry_size(e);
}

/* Evict one entry by sampling: lowest priority among a few random buckets
 * of one shard. Returns false if nothing could be evicted there. */
static bool evict_one(struct shard *s)
{
	struct cache_entry *victim = NULL;
	bool stale = false;

	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < EVICT_SAMPLES * 4 && s->count > 0; i++) {
		struct cache_entry *e;

		s->rng ^= s->rng << 13;
		s->rng ^= s->rng >> 7;
		s->rng ^= s->rng << 17;
		for (e = s->buckets[s->rng & (s->nbuckets - 1)]; e && !stale; e = e->next) {
			if (e->state != ENTRY_READY || atomic_load(&e->refreshing))
				continue;
			if (!entry_current(e))
				stale = true;    /* can never be served: goes first */
			if (stale || !victim || e->priority < victim->priority)
				victim = e;
		}
		if (victim && (i >= EVICT_SAMPLES || stale))
			break;
	}
	if (victim) {
		account(victim, -1);
		unlink_entry(s, victim);
		if (stale) {
			inval_count_dropped(1);
		} else {
			s->inflation = victim->priority;
			atomic_fetch_add(&n_evictions, 1);
			atomic_fetch_add(&victim->def->evictions, 1);
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (victim)
		store_release(victim);
	return victim != NULL;
}

static void enforce_limit(uint64_t start)
{
	size_t limit = atomic_load(&mem_limit);

	/* the match index's groups count too (its postings are in the entries) */
	for (int tries = 0; limit && atomic_load(&n_bytes) + match_index_bytes() > limit &&
	     tries < N_SHARDS * 4; tries++)
		evict_one(&shards[(start + (uint64_t)tries) % N_SHARDS]);
}

static void set_times(struct cache_entry *e, int64_t now, int ttl_ms, int refresh_ms)
{
	e->filled_ms = now;
	e->expires_ms = now + ttl_ms;
	/* refresh_ms >= ttl_ms: never refreshed (a hit past expiry is a miss) */
	e->refresh_at_ms = now + (refresh_ms > 0 && refresh_ms <= ttl_ms ? refresh_ms : ttl_ms / 2);
}

void store_entry_deps(const struct cache_entry *e, struct fill_deps *out)
{
	struct inval_table *t[INVAL_MAX_DEPS];

	out->epoch = inval_epoch();
	out->n = e->ndeps;
	for (unsigned i = 0; i < e->ndeps; i++)
		t[i] = entry_deps(e)[i].t;
	out->cons.len = e->cons_len;
	out->cons.ntab = e->ntab;
	out->cons.npost = e->npost;
	out->cons.mask = match_blob_mask(entry_cons(e), e->cons_len, e->ntab);
	memcpy(out->cons.buf, entry_cons(e), e->cons_len);
	if (!inval_snapshot_t(t, out->n, out->d, out->tgen))
		out->epoch = 0;   /* a fence or settle window: the refresh is not stored
				   * (no epoch is 0, so store_fill discards it) */
}

int store_fill(struct cache_entry *old, const uint8_t *resp, size_t len,
	       const uint16_t status_off[ENTRY_MAX_STATUS], uint32_t upstream_us, uint32_t rows,
	       int64_t now, int ttl_ms, int refresh_ms, const struct fill_deps *deps)
{
	uint64_t h = old->hash;          /* old may be freed below */
	struct shard *s = shard_of(h);
	struct cache_entry *e;
	int changed = 0;

	e = new_entry(entry_key(old), old->key_len, len, h, deps);
	if (!e) {
		store_abandon(old);
		return -1;
	}
	if (deps)
		index_entry(e, deps);   /* before the check: a row change finds it or fails it */
	if (deps && !inval_current(deps->d, deps->n, deps->epoch)) {
		/* a table it read was written while the query ran (a row or
		 * whole): the answer may predate the write */
		atomic_fetch_add(&n_discarded, 1);
		entry_free(e);
		store_abandon(old);
		return -1;
	}
	memcpy((uint8_t *)entry_resp(e), resp, len);
	memcpy(e->status_off, status_off, sizeof(e->status_off));
	e->state = ENTRY_READY;
	e->def = old->def;
	e->upstream_us = upstream_us;
	e->rows = rows;
	set_times(e, now, ttl_ms, refresh_ms);
	pthread_mutex_lock(&s->lock);
	e->priority = s->inflation + base_priority(e);
	if (old->state == ENTRY_READY)
		changed = old->resp_len != len || memcmp(entry_resp(old), resp, len) != 0;
	wake_waiters(old);
	if (old->linked) {
		account(old, -1);
		unlink_entry(s, old);
		store_release(old);      /* the table's reference */
	} else if (find(s, entry_key(e), e->key_len, e->hash)) {
		/* a newer entry took the key meanwhile: keep it */
		pthread_mutex_unlock(&s->lock);
		store_release(old);
		entry_free(e);
		return 0;
	}
	link_entry(s, e);
	account(e, +1);
	pthread_mutex_unlock(&s->lock);
	store_release(old);              /* the caller's reference */
	enforce_limit(h >> 58);
	return changed;
}

int store_restore(const struct store_restore *r, int64_t now, const struct fill_deps *deps)
{
	uint64_t h = store_hash(r->key, r->key_len);
	struct shard *s = shard_of(h);
	struct cache_entry *e = new_entry(r->key, r->key_len, r->resp_len, h, deps);

	if (!e)
		return -1;
	index_entry(e, deps);
	memcpy((uint8_t *)entry_resp(e), r->resp, r->resp_len);
	memcpy(e->status_off, r->status_off, sizeof(e->status_off));
	e->state = ENTRY_READY;
	e->restored = true;
	e->def = r->def;
	e->upstream_us = r->upstream_us;
	e->rows = r->rows;
	atomic_init(&e->hits, r->hits);
	set_times(e, now, r->ttl_ms, r->refresh_ms);
	pthread_mutex_lock(&s->lock);
	if (find(s, r->key, r->key_len, h)) {
		pthread_mutex_unlock(&s->lock);
		entry_free(e);
		return 0;
	}
	e->priority = s->inflation + (double)(r->hits + 1) * (r->upstream_us + 1) / (double)entry_size(e);
	link_entry(s, e);
	account(e, +1);
	pthread_mutex_unlock(&s->lock);
	return 1;
}

void store_abandon(struct cache_entry *e)
{
	struct shard *s = shard_of(e->hash);

	pthread_mutex_lock(&s->lock);
	wake_waiters(e);
	if (e->state == ENTRY_LOADING && e->linked) {
		unlink_entry(s, e);
		store_release(e);
	} else if (e->state == ENTRY_READY) {
		atomic_store(&e->refreshing, false);
	}
	pthread_mutex_unlock(&s->lock);
	store_release(e);
}

void store_cancel_wait(const uint8_t *key, size_t len, uint64_t h, struct store_waiter *w)
{
	struct shard *s = shard_of(h);
	struct cache_entry *e;

	pthread_mutex_lock(&s->lock);
	e = find(s, key, len, h);
	if (e) {
		struct store_waiter **p = &e->waiters;

		while (*p && *p != w)
			p = &(*p)->next;
		if (*p)
			*p = w->next;
	}
	pthread_mutex_unlock(&s->lock);
}

size_t store_flush(struct cache_def *def)
{
	size_t n = 0;

	for (int i = 0; i < N_SHARDS; i++) {
		struct shard *s = &shards[i];

		pthread_mutex_lock(&s->lock);
		for (size_t b = 0; b < s->nbuckets; b++) {
			struct cache_entry **p = &s->buckets[b];

			while (*p) {
				struct cache_entry *e = *p;

				if (e->state != ENTRY_READY || (def && e->def != def)) {
					p = &e->next;
					continue;
				}
				*p = e->next;
				e->linked = false;
				s->count--;
				account(e, -1);
				store_release(e);
				n++;
			}
		}
		pthread_mutex_unlock(&s->lock);
	}
	return n;
}

int store_each(int64_t now_ms, int (*fn)(const struct cache_entry *e, void *arg), void *arg)
{
	for (int i = 0; i < N_SHARDS; i++) {
		struct shard *s = &shards[i];
		int rc = 0;

		pthread_mutex_lock(&s->lock);
		for (size_t b = 0; b < s->nbuckets && !rc; b++)
			for (struct cache_entry *e = s->buckets[b]; e && !rc; e = e->next)
				if (e->state == ENTRY_READY && fresh(e, now_ms))
					rc = fn(e, arg);
		pthread_mutex_unlock(&s->lock);
		if (rc)
			return rc;
	}
	return 0;
}

uint64_t store_fills_discarded(void) { return atomic_load_explicit(&n_discarded, memory_order_relaxed); }
uint64_t store_entries(void) { return atomic_load_explicit(&n_entries, memory_order_relaxed); }
uint64_t store_bytes(void) { return atomic_load_explicit(&n_bytes, memory_order_relaxed); }
uint64_t store_evictions(void) { return atomic_load_explicit(&n_evictions, memory_order_relaxed); }

void store_destroy(void)
{
	for (int i = 0; i < N_SHARDS; i++) {
		struct shard *s = &shards[i];

		for (size_t b = 0; b < s->nbuckets; b++) {
			struct cache_entry *e = s->buckets[b], *next;

			for (; e; e = next) {
				next = e->next;
				entry_free(e);
			}
		}
		free(s->buckets);
		s->buckets = NULL;
		pthread_mutex_destroy(&s->lock);
	}
}

void store_waitlist_add(struct store_waitlist *l, struct store_waiter *w)
{
	pthread_mutex_lock(&l->lock);
	w->next = l->head;
	l->head = w;
	pthread_mutex_unlock(&l->lock);
}

void store_waitlist_remove(struct store_waitlist *l, struct store_waiter *w)
{
	pthread_mutex_lock(&l->lock);
	for (struct store_waiter **p = &l->head; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	pthread_mutex_unlock(&l->lock);
}

void store_waitlist_wake(struct store_waitlist *l, store_wake_fn fn)
{
	pthread_mutex_lock(&l->lock);
	for (struct store_waiter *w = l->head, *next; w; w = next) {
		next = w->next;
		if (fn)
			fn(w->w, w->client_id, w->gen);
	}
	l->head = NULL;
	pthread_mutex_unlock(&l->lock);
}
