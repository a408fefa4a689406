/*
 * registry.h: what the node knows per query shape (per digest): the
 * ProxySQL-compatible digest and digest_text, whether the shape is cached
 * (and with which policy), proxied, or skipped and why, and its counters.
 * Records are created the first time a shape is seen and live until the node
 * stops (a dropped cache keeps its record, marked not cached), so any
 * pointer to one stays valid.
 *
 * Thread-safety: the index (digest -> record) is guarded by a rwlock taken
 * on misses and passthrough, never on a cache hit (a hit reaches the record
 * through its entry). Counters are relaxed atomics; policy fields are
 * atomics too, as CREATE/DROP CACHE may change them while workers read.
 */
#ifndef SHOAL_CACHE_REGISTRY_H
#define SHOAL_CACHE_REGISTRY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sql/reasons.h"

enum cache_state {
	CACHE_PROXIED = 0,  /* seen, not cached (explicit mode, no cache) */
	CACHE_CACHED,       /* a cache exists: results are stored */
	CACHE_SKIPPED,      /* not cacheable: skip_reason says why */
};

enum txn_policy {
	TXN_DEFAULT = 0,    /* inside a transaction, read upstream */
	TXN_ALWAYS,         /* serve from cache even inside transactions */
	TXN_UNTIL_WRITE,    /* serve inside a transaction until it writes */
};

#define DEF_NAME_MAX 64

/* Per-execution counters of a shape, in DEF_SLOTS copies (see
 * def_counter). Written by the owning worker's slot, relaxed atomics. */
#define DEF_SLOTS 2
struct def_hot {
	atomic_uint_fast64_t count_star, sum_time_us, min_time_us, max_time_us;
	atomic_uint_fast64_t rows_sent, rows_affected, last_seen, hits, time_saved_us;
} __attribute__((aligned(64)));

enum def_ctr {
	DC_COUNT, DC_SUM_TIME, DC_MIN_TIME, DC_MAX_TIME, DC_ROWS_SENT, DC_ROWS_AFFECTED,
	DC_LAST_SEEN, DC_HITS, DC_TIME_SAVED,
};

/* The calling thread's counter slot (a worker's index; 0 elsewhere). */
extern __thread unsigned def_slot_idx;

struct cache_def {
	uint64_t digest;
	char query_id[19];                /* q_ + 16 hex */
	char *digest_text;                /* normalised text (capped) */
	char *query_text;                 /* first query seen of the shape (capped) */

	_Atomic int state;                /* enum cache_state */
	_Atomic bool classified;          /* the verdict was computed */
	_Atomic int keyword;              /* enum sql_kw: the shape's first word */
	const struct reason *_Atomic skip_reason;  /* sql/reasons.h */
	_Atomic bool explicit_cache;      /* created with CREATE CACHE (else auto) */
	_Atomic int ttl_ms, refresh_ms, coalesce_ms;
	_Atomic int txn;                  /* enum txn_policy */
	char name[DEF_NAME_MAX];          /* written under the registry lock */

	/* counters */
	atomic_uint_fast64_t first_seen;
	atomic_uint_fast64_t misses, refresh_changed, refresh_unchanged, refresh_failed;
	atomic_uint_fast64_t coalesced_waits, coalesce_timeouts, evictions;
	atomic_int_fast64_t entries, bytes;
	atomic_uint_fast64_t skips;
	/* commands of the shape answered with an error: all of them, and those
	 * the node made itself (its upstream connection lost or down, its pool
	 * exhausted, the session's state not restored): shoal-ha withdraws a
	 * digest that errors through the nodes */
	atomic_uint_fast64_t errors, node_errors;
	/* those every execution (every cache hit) moves, one set per worker
	 * slot so that workers serving the same shape do not share a cache
	 * line: read them with def_counter() */
	struct def_hot hot[DEF_SLOTS];

	struct cache_def *hnext;          /* index chain */
};

/* A per-execution counter summed over the slots (min/max/last_seen: their
 * min or max); reset zeroes it (min: back to "none", UINT64_MAX). */
uint64_t def_counter(struct cache_def *d, enum def_ctr c, bool reset);
/* This thread's slot of d's per-execution counters. */
static inline struct def_hot *def_hot_of(struct cache_def *d)
{
	return &d->hot[def_slot_idx % DEF_SLOTS];
}

int registry_init(void);
void registry_destroy(void);

/* The record for a digest, created (as CACHE_PROXIED) if new. text/query
 * are copied on creation. NULL when out of memory or over the record limit. */
struct cache_def *registry_get(uint64_t digest, const char *digest_text, size_t text_len,
			       const char *query, size_t query_len);
/* Find by digest, by query id ("q_...") or by cache name; NULL if none. */
struct cache_def *registry_find(uint64_t digest);
struct cache_def *registry_find_name(const char *name_or_id);

/* Walk every record (under the read lock): fn returns false to stop. */
void registry_each(bool (*fn)(struct cache_def *d, void *arg), void *arg);
/* Every record, in a malloc'd array (free() it), for the listings that
 * sort or filter them without the lock: records live until the node stops,
 * so the pointers stay valid. 0, or -1 when out of memory (*out NULL). */
int registry_snapshot(struct cache_def ***out, size_t *n);

/* May anything be cached: auto-cache is on, or some shape is cached now (a
 * query rule, CREATE CACHE)? While not, nothing can be served or stored,
 * and the consistency machinery asks the upstream nothing of its own
 * (docs/caching.md, "Consistency"). */
bool registry_may_cache(void);

/* Policy helpers. */
void registry_set_cached(struct cache_def *d, const char *name, int ttl_ms, int refresh_ms,
			 int coalesce_ms, enum txn_policy txn, bool explicit_cache);
void registry_set_skipped(struct cache_def *d, const struct reason *reason);
void registry_set_proxied(struct cache_def *d);

/* Effective refresh age: the policy's, or half the TTL when it is 0; the
 * TTL itself (no refresh) when the policy's is not below the TTL. */
int def_refresh_ms(const struct cache_def *d);

/* Record one execution (time in microseconds). */
void def_account(struct cache_def *d, uint64_t us, uint64_t rows_sent, uint64_t rows_affected);

#endif
