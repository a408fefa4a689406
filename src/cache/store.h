/*
 * store.h: the shared cache store. A table of entries split into shards,
 * each guarded by its own mutex; an entry is found by the exact bytes of its
 * key (compared in full, never by hash alone). Entries are reference
 * counted: a reader holds a reference while it copies the response, so an
 * entry evicted meanwhile stays alive until the copy is done.
 *
 * A key with no entry yet can get a LOADING placeholder: the session that
 * inserted it queries the upstream; sessions that find the placeholder wait
 * on it (coalescing) and are woken, whichever worker they belong to, when it
 * is filled or abandoned.
 *
 * Memory is bounded by memory_limit: on insert, entries are evicted by a
 * sampled greedy-dual-size-frequency policy, which keeps the entries that
 * save the most upstream time per byte (see docs/caching.md).
 *
 * Thread-safety: every function may be called from any worker. The hit path
 * takes exactly one shard lock.
 */
#ifndef SHOAL_CACHE_STORE_H
#define SHOAL_CACHE_STORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/inval.h"
#include "cache/match.h"
#include "cache/match_index.h"

struct cache_def;
struct worker;

/* A session waiting on a LOADING entry. Owned by the session. */
struct store_waiter {
	struct store_waiter *next;
	struct worker *w;
	uint32_t client_id;
	uint32_t gen;                    /* which wait of that session */
};

/* A list of waiting sessions with its own lock (the catalog's waits). */
struct store_waitlist {
	pthread_mutex_t lock;
	struct store_waiter *head;
};
#define STORE_WAITLIST_INIT { PTHREAD_MUTEX_INITIALIZER, NULL }

enum entry_state { ENTRY_LOADING, ENTRY_READY };

/* Up to two 16-bit status-flag fields inside the response (the EOF/OK
 * packets), patched per session on a hit. */
#define ENTRY_MAX_STATUS 2

struct cache_entry {
	struct cache_entry *next;        /* shard chain */
	uint64_t hash;
	atomic_int refs;                 /* the table's reference + readers */
	enum entry_state state;          /* under the shard lock */
	bool linked;                     /* in the table (under the shard lock) */
	bool restored;                   /* put there from a cache snapshot (store_restore) */
	atomic_bool refreshing;
	struct cache_def *def;
	struct store_waiter *waiters;    /* LOADING only, under the shard lock */
	int64_t filled_ms;               /* monotonic */
	int64_t expires_ms;
	int64_t refresh_at_ms;
	uint32_t upstream_us;            /* what filling it cost upstream */
	uint32_t rows;                   /* rows in the response */
	atomic_uint_fast64_t hits;
	double priority;                 /* GDSF value, under the shard lock */
	_Atomic uint64_t epoch;          /* inval_epoch() when the fill started; 0 when a
					  * row change retired it (match_index.h) */
	uint32_t key_len;
	uint32_t resp_len;
	uint16_t status_off[ENTRY_MAX_STATUS]; /* offsets into the response, 0 = none */
	uint16_t ndeps;                  /* tables read, recorded when the fill started */
	uint16_t cons_len;               /* bytes of its row constraints (match.h) */
	uint8_t ntab;                    /* tables they constrain */
	uint8_t npost;                   /* its postings in the match index */
	uint32_t rowmask;                /* deps checked against their table's tgen: those
					  * with constraints the index holds (inval.h) */
	uint8_t data[] __attribute__((aligned(8))); /* deps, key, response, then (8-aligned)
						     * constraints and postings */
};

static inline const struct inval_dep *entry_deps(const struct cache_entry *e)
{
	return (const struct inval_dep *)(const void *)e->data;
}
static inline const uint8_t *entry_key(const struct cache_entry *e)
{
	return e->data + e->ndeps * sizeof(struct inval_dep);
}
static inline const uint8_t *entry_resp(const struct cache_entry *e)
{
	return entry_key(e) + e->key_len;
}
static inline size_t entry_align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}
/* Its row constraints (cons_len bytes, ntab records: match.h). */
static inline const uint8_t *entry_cons(const struct cache_entry *e)
{
	return e->data + entry_align8(e->ndeps * sizeof(struct inval_dep) + e->key_len + e->resp_len);
}
/* Its postings in the match index (npost). */
static inline struct mpost *entry_posts(struct cache_entry *e)
{
	return (struct mpost *)(void *)(e->data + entry_align8((size_t)(entry_cons(e) - e->data) +
								e->cons_len));
}

/* What a fill recorded before its query went upstream: the epoch and the
 * generations of the tables it reads (see inval.h), and in binlog mode its
 * row constraints (match_build.h). */
struct fill_deps {
	uint64_t epoch;
	unsigned n;
	struct inval_dep d[INVAL_MAX_DEPS];
	uint64_t tgen[INVAL_MAX_DEPS];   /* each table's tgen (with cons.mask's deps) */
	struct match_cons cons;          /* len 0: none */
};

enum store_lookup {
	SL_MISS,     /* nothing: the caller may query upstream without caching */
	SL_HIT,      /* *out is a READY entry, referenced */
	SL_REFRESH,  /* a hit, and the caller should refresh it in the background */
	SL_WAIT,     /* another session is loading it: the waiter is linked */
	SL_LOAD,     /* *out is a new LOADING placeholder: the caller fills it */
};

/* Sizes and the wake-up hook, set once at start. wake() is called for each
 * waiter of a filled or abandoned entry, with the shard lock held (it must
 * only post a message to the waiter's worker), so a waiter is either woken
 * or cancelled, never both. */
typedef void (*store_wake_fn)(struct worker *w, uint32_t client_id, uint32_t gen);
int store_init(size_t memory_limit, store_wake_fn wake);

uint64_t store_hash(const uint8_t *key, size_t len);

/* Look a key up. With def == NULL only hits are possible (and SL_WAIT when
 * waiter != NULL); with a def a missing key gets a placeholder (SL_LOAD).
 * stale_ms > 0 says the upstream is down: an entry expired less than
 * stale_ms ago is still a hit, and no hit asks for a refresh. keep_ms > 0
 * (serve-stale): an entry expired less than keep_ms ago, and not
 * invalidated, is not dropped by a miss; with a def the caller loads it
 * again in its place (SL_LOAD with the READY entry: store_fill replaces
 * it, store_abandon leaves it), so that it can still be served stale
 * should the upstream turn out to be down. */
enum store_lookup store_lookup(const uint8_t *key, size_t len, uint64_t hash, int64_t now_ms,
			       int64_t stale_ms, int64_t keep_ms, struct cache_def *def,
			       struct store_waiter *waiter, struct cache_entry **out);
/* Is key served now (READY and current), or being loaded by a session?
 * Takes no reference and counts no hit (the refill's look, core/refill.c). */
bool store_has(const uint8_t *key, size_t len, int64_t now_ms);
/* Fill a placeholder (or replace a READY entry being refreshed) with a
 * response read under deps. Returns 1 if the bytes differ from the entry
 * being replaced, 0 if equal or new, -1 if out of memory or a table of deps
 * was changed meanwhile, by a row or whole (the placeholder is then
 * abandoned). The entry's row constraints are put in the match index
 * before that check, so that a row change either finds the entry or makes
 * the check fail (docs/architecture.md, "Row-precise invalidation"). Drops
 * the caller's reference on old. refresh_ms >= ttl_ms: no refresh. */
int store_fill(struct cache_entry *old, const uint8_t *resp, size_t len,
	       const uint16_t status_off[ENTRY_MAX_STATUS], uint32_t upstream_us, uint32_t rows,
	       int64_t now_ms, int ttl_ms, int refresh_ms, const struct fill_deps *deps);
/* Copy an entry's dependencies and row constraints, with the tables'
 * generations as they are now (for a refresh of a current entry). When a table is behind a fence
 * or in its settle window (inval_snapshot), the epoch is 0: the refresh's
 * answer is not stored. */
void store_entry_deps(const struct cache_entry *e, struct fill_deps *out);
/* An entry read from a cache snapshot (cache/warm.c). */
struct store_restore {
	const uint8_t *key, *resp;
	uint32_t key_len, resp_len;
	uint16_t status_off[ENTRY_MAX_STATUS];
	uint32_t upstream_us, rows;
	uint64_t hits;
	int ttl_ms, refresh_ms;          /* what is left of its TTL; its shape's refresh age */
	struct cache_def *def;
};
/* Put it in the table as a READY entry of r->def that depends on deps
 * (the generations its tables have now), with no eviction: 1 when put, 0
 * when the key is taken (a fill came first), -1 when out of memory. */
int store_restore(const struct store_restore *r, int64_t now_ms, const struct fill_deps *deps);
/* Give up on a placeholder (error result, too large...), or end a refresh
 * that failed. Wakes the waiters. Drops the caller's reference. */
void store_abandon(struct cache_entry *e);
/* Unlink a waiter that stopped waiting (timeout, disconnect). */
void store_cancel_wait(const uint8_t *key, size_t len, uint64_t hash, struct store_waiter *w);
/* Drop a reference. */
void store_release(struct cache_entry *e);
/* Call fn for every entry a lookup at now_ms would serve (READY, not
 * expired, not invalidated, its shape cached), shard by shard with that
 * shard's lock held: fn must not call back into the store. A non-zero
 * return of fn stops the walk and is returned. */
int store_each(int64_t now_ms, int (*fn)(const struct cache_entry *e, void *arg), void *arg);
/* Remove every entry of def (NULL: every entry). Returns how many. */
size_t store_flush(struct cache_def *def);

/* Totals (relaxed atomics). */
uint64_t store_fills_discarded(void);
uint64_t store_entries(void);
uint64_t store_bytes(void);
uint64_t store_evictions(void);

/* Waiting lists: add, remove (a waiter that stopped waiting), and wake
 * every waiter (fn per waiter, with the list's lock held) and empty it. */
void store_waitlist_add(struct store_waitlist *l, struct store_waiter *w);
void store_waitlist_remove(struct store_waitlist *l, struct store_waiter *w);
void store_waitlist_wake(struct store_waitlist *l, store_wake_fn fn);

/* Free everything (at exit, after the workers stopped). */
void store_destroy(void);

#endif
