/*
 * inval.h: invalidation state shared by the whole node: the invalidation
 * mode, one generation counter per table, a global epoch, and whether
 * entries may be served at all right now.
 *
 * A cache entry records, when its fill starts (before the query goes
 * upstream), the epoch and the generation of every base table it reads.
 * It is served only while all of them are unchanged: a write, seen by the
 * node (its own traffic) or in the upstream's binlog, bumps the table's
 * generation, so an entry filled before it, or a fill that raced it, is
 * never served afterwards. Bumping the epoch retires every entry at once.
 *
 * Two generations per table (row-precise invalidation, cache/match.h):
 * `gen` moves with every change to the table, `tgen` only with a change
 * that invalidates the whole table. A fill records both; it is stored only
 * if `gen` has not moved meanwhile (any change refuses an in-flight fill).
 * An entry that has constraints on the table (cache/match.h) keeps `tgen`
 * and is served while `tgen` holds: a row change moves `gen` alone, and the
 * entries its row images satisfy are retired one by one (their epoch set
 * to 0). An entry without constraints on the table keeps `gen`: any change
 * retires it, as before.
 *
 * Tables are interned objects ("schema" + "table", ASCII lower-cased),
 * created on first use and kept until the node stops, so a pointer to one
 * stays valid. Tables that differ only in case share one object (over-
 * invalidation, never a missed one).
 *
 * Thread-safety: the table index is guarded by one mutex, taken when a
 * fill starts and on invalidations, never on a cache hit. Generations,
 * epoch and the serving flag are atomics: a hit reads them without a lock.
 */
#ifndef SHOAL_CACHE_INVAL_H
#define SHOAL_CACHE_INVAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cache/fence.h"
#include "sql/reasons.h"

enum inval_mode {
	INVAL_TTL = 0,   /* entries live until their TTL (no invalidation) */
	INVAL_WRITES,    /* writes made through this node invalidate */
	INVAL_BINLOG,    /* the upstream's binlog invalidates (and own writes) */
};

enum inval_source {
	INVAL_SRC_WRITE = 0, /* a write this node relayed (its OK not yet sent) */
	INVAL_SRC_BINLOG,    /* a row or query event of the upstream's binlog */
	INVAL_SRC_FLUSH,     /* everything at once (stream gap, unknown write) */
	INVAL_SRC_N,
};

#define INVAL_MAX_NAME 192   /* schema + table, bytes, as stored */

struct tcols;
struct mgroup;

struct inval_table {
	struct inval_table *next;     /* index chain */
	_Atomic uint64_t gen;         /* moves with every change */
	_Atomic uint64_t tgen;        /* moves with every change to the whole table */
	_Atomic int64_t settle_ms;    /* fills starting before this are not stored */
	_Atomic uint64_t fence;       /* binlog position of the last transaction that
				       * invalidated it (fence.h); 0: none */
	_Atomic uint32_t vcols;       /* its generated columns' verdict (vcols.h) */
	struct tcols *cols;           /* its columns as the catalog read them (tcols.h:
				       * under that file's lock) */
	struct mgroup *mgroups;       /* the match index's groups of this table
				       * (match.c: under its shard lock) */
	/* the catalog reader's own (read and written on its thread only): */
	char *spelled;                /* "schema\0table\0" as the server lists it (the key is
				       * folded to lower case; a server with case-sensitive
				       * names knows the table only as spelled); NULL: never listed */
	uint32_t spelled_read;        /* the catalog read that listed it last */
	bool spelled_twice;           /* that read listed two spellings of it: two tables
				       * whose names differ only in case */
	uint64_t hash;
	uint16_t schema_len, name_len;
	char key[];                   /* schema, NUL, table, NUL (lower case) */
};

static inline const char *inval_table_schema(const struct inval_table *t) { return t->key; }
static inline const char *inval_table_name(const struct inval_table *t)
{
	return t->key + t->schema_len + 1;
}

/* The catalog read numbered `read` lists t's table as schema.name (the
 * server's spelling); a second, different spelling in the same read sets
 * spelled_twice. Catalog reader thread only. */
void inval_table_spell(struct inval_table *t, const char *schema, const char *name, uint32_t read);
/* The server's spelling of t, as last listed (else its folded key).
 * Catalog reader thread only. */
static inline const char *inval_table_spelled_schema(const struct inval_table *t)
{
	return t->spelled ? t->spelled : inval_table_schema(t);
}
static inline const char *inval_table_spelled_name(const struct inval_table *t)
{
	return t->spelled ? t->spelled + strlen(t->spelled) + 1 : inval_table_name(t);
}

/* What an entry depends on: the table and its generation (`gen`, or
 * `tgen` when the entry has constraints on it: its mask says which). */
struct inval_dep {
	struct inval_table *t;
	uint64_t gen;
};

/* Dependencies one entry may record. */
#define INVAL_MAX_DEPS 32

int inval_init(void);
/* Free the table index. drop (NULL: none) is called first for each table,
 * to release what other modules hang on it (tcols_drop: its columns). */
void inval_destroy(void (*drop)(struct inval_table *t));

void inval_set_mode(enum inval_mode m);
enum inval_mode inval_mode(void);
const char *inval_mode_name(enum inval_mode m);

/* The table (schema, name), created if new (names are copied lower-cased).
 * NULL when out of memory, over the table limit, or a name is too long. */
struct inval_table *inval_table_get(const char *schema, size_t slen, const char *name, size_t nlen);

/* Invalidate one table. settle_ms > 0: for that long, fills that start are
 * not stored (a binlog event can arrive before the commit it records is
 * visible to other connections). */
void inval_bump(struct inval_table *t, enum inval_source src, int settle_ms);
/* Retire every entry (counted under src). */
void inval_all(enum inval_source src);
/* The binlog's invalidations: as inval_bump / inval_all (source binlog),
 * and until the transaction ending at binlog position fence is proven
 * visible (fence.h), fills that start are not stored. The fence is stored
 * before the generation moves, so a snapshot that sees the new generation
 * sees the fence. */
void inval_bump_fenced(struct inval_table *t, uint64_t fence, int settle_ms);
void inval_all_fenced(uint64_t fence);
/* A row change of t (binlog, row format): as inval_bump_fenced, the fence
 * stored first, but only `gen` moves (in-flight fills of t are refused, its
 * entries without constraints on it retired); the caller then retires the
 * entries whose constraints the change's row images satisfy (match.h). */
void inval_row_fenced(struct inval_table *t, uint64_t fence, int settle_ms);

/* Why a table or everything was invalidated, or entries one by one (the
 * counters of /metrics, the admin's stats and the status page). */
enum inval_why {
	/* by row: entries retired one by one */
	IW_ROW_MATCH = 0,    /* a row image satisfies its constraints */
	IW_ROW_UNSURE,       /* a value that cannot be compared exactly counted as a match */
	/* by table */
	IW_T_ROWS,           /* a row change: the entries without constraints on the table */
	IW_T_WRITE,          /* a write relayed by this node */
	IW_T_STATEMENT,      /* a statement-format event (DML, TRUNCATE, DDL) */
	IW_T_CASCADE,        /* the child of a cascading foreign key whose parent changed */
	IW_T_UNKNOWN,        /* a row event of a table the catalog does not know as a base table */
	IW_T_UNREADABLE,     /* a table map or row event that cannot be read or does not fit */
	IW_T_DEFINITION,     /* the catalog read a different definition of the table */
	IW_T_NOTINDEXED,     /* the index is at its bound or out of memory */
	IW_T_GRANULARITY,    /* a row change, with invalidation_granularity = table */
	/* everything */
	IW_A_FLUSH,          /* the stream was lost or skipped, a snapshot's server differs */
	IW_A_UNKNOWN,        /* writes whose tables are not known (statement, catalog stale, ...) */
	IW_A_WRITE,          /* a write relayed by this node whose tables are not known */
	IW_N,
};
#define IW_FIRST_TABLE IW_T_ROWS
#define IW_FIRST_ALL IW_A_FLUSH
void inval_count_why(enum inval_why why, uint64_t n);
uint64_t inval_why_count(enum inval_why why);
const char *inval_why_name(enum inval_why why);
/* As inval_bump_fenced / inval_all, counted under why. */
void inval_bump_why(struct inval_table *t, uint64_t fence, int settle_ms, enum inval_why why);
void inval_all_why(enum inval_source src, enum inval_why why);

/* Counters (relaxed atomics). */
uint64_t inval_count(enum inval_source src);
const char *inval_source_name(enum inval_source src);
void inval_count_dropped(uint64_t n);
uint64_t inval_dropped(void);

/* The current epoch. */
extern _Atomic uint64_t inval_epoch_now;

static inline uint64_t inval_epoch(void)
{
	return atomic_load_explicit(&inval_epoch_now, memory_order_acquire);
}

/* May entries be served? False while the binlog stream is down or behind
 * (binlog mode), or its start is not yet proven visible (the start fence,
 * fence.h): no entry is served then, and none is filled. */
extern _Atomic bool inval_serving_ok;

static inline bool inval_serving(void)
{
	return atomic_load_explicit(&inval_serving_ok, memory_order_relaxed) && fence_start_open();
}
void inval_set_serving(bool ok, enum reason_id why);
/* Why not (R_BINLOG_...: the last reason given, also while serving). */
const struct reason *inval_not_serving_reason(void);

/* Snapshot the generations of tables[0, n) into deps (the order kept).
 * Returns false when a table is within its settle window, or behind a
 * fence not yet passed (the binlog told of a commit not yet proven visible,
 * or the stream's start is not: counted in fence_count_refused): the fill
 * must not be stored. */
bool inval_snapshot(struct inval_table *const *tables, unsigned n, struct inval_dep *deps);
/* The same, and each table's `tgen` into tgen[0, n) (read after its gen:
 * a whole-table bump moves tgen first). */
bool inval_snapshot_t(struct inval_table *const *tables, unsigned n, struct inval_dep *deps,
		      uint64_t *tgen);

/* Are these dependencies (recorded with epoch) still current? Lock-free. */
static inline bool inval_current(const struct inval_dep *deps, unsigned n, uint64_t epoch)
{
	if (epoch != inval_epoch())
		return false;
	for (unsigned i = 0; i < n; i++)
		if (atomic_load_explicit(&deps[i].t->gen, memory_order_acquire) != deps[i].gen)
			return false;
	return true;
}

/* The same for an entry: the deps whose bit is set in mask have
 * constraints on their table and are checked against its `tgen`. */
static inline bool inval_current_masked(const struct inval_dep *deps, unsigned n, uint64_t epoch,
					uint32_t mask)
{
	if (epoch != inval_epoch())
		return false;
	for (unsigned i = 0; i < n; i++) {
		const _Atomic uint64_t *g = (mask >> i) & 1u ? &deps[i].t->tgen : &deps[i].t->gen;

		if (atomic_load_explicit(g, memory_order_acquire) != deps[i].gen)
			return false;
	}
	return true;
}

/* Default TTL and refresh age of caches (cache_ttl_ms, cache_refresh_ms;
 * at start, binlog mode makes the defaults an hour and no refresh). */
int inval_default_ttl_ms(void);
int inval_default_refresh_ms(void);

#endif
