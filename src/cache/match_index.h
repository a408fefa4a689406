/*
 * match_index.h: the index of row-precise invalidation: (table, column,
 * canonical value) -> the entries whose constraint on that table has that
 * column's condition with that value (match.h), so that a changed row
 * costs work in proportion to the entries it can invalidate, not to the
 * cache's size.
 *
 * Layout. Each table (struct inval_table) has a list of groups, one per
 * column "signature" entries were resolved with (the column's position, the
 * table's column count and name, the value's binlog type, kind, collation,
 * signedness, BINARY length): a changed row's value is put in each group's
 * canonical form once, and looked up in the group's hash table of postings.
 * A posting is one value of one entry's indexed condition on the table
 * (match.h's icond: an IN of k values makes k postings, IS NULL one). The
 * postings live inside the entry's own allocation (store.c), so indexing
 * allocates nothing per entry; groups and their bucket arrays are allocated
 * (counted in match_index_bytes(), which the store adds to what it holds
 * against memory_limit). An entry's postings are removed when the entry is
 * freed, whatever path frees it.
 *
 * A row: for each group of its table, its value's canonical form finds the
 * postings of that value; a value that cannot be compared exactly (absent,
 * unsure, another definition) takes every posting of the group. Each
 * posting's entry is then tested on all its conditions on the table
 * (match_table), and retired when the row satisfies them or may: its epoch
 * is set to 0, which no epoch equals (inval.h), so no hit serves it again.
 *
 * Bounds. At most MATCH_MAX_POSTINGS postings in all: an entry that would
 * pass it (or when a group cannot be allocated) keeps no constraint on that
 * table (its dependency is checked against the table's gen: any change to
 * the table retires it, as before row precision; counted as
 * IW_T_NOTINDEXED).
 *
 * Thread-safety: MATCH_SHARDS mutexes, a table's groups and postings under
 * the one of its address. Taken when an entry is stored or freed and by the
 * binlog follower per changed row, never on a hit. An entry's epoch is
 * written with a release store (read relaxed by hits, as generations are).
 * Lock order: the store's shard lock, then this one (an entry freed under
 * a store shard lock); the follower takes this one alone.
 */
#ifndef SHOAL_CACHE_MATCH_INDEX_H
#define SHOAL_CACHE_MATCH_INDEX_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/inval.h"
#include "cache/match.h"

#define MATCH_SHARDS 64
#define MATCH_MAX_POSTINGS (1u << 22)

struct mgroup;

/* One value of one entry's indexed condition (inside the entry). */
struct mpost {
	struct mpost *next, **pprev;   /* the group's bucket chain */
	struct mgroup *g;              /* NULL: not in the index */
	_Atomic uint64_t *epoch;       /* the entry's: 0 retires it */
	const uint8_t *rec;            /* the entry's record of that table (match.h) */
	uint64_t key;                  /* the value's hash */
};

/* Index an entry: its blob (len bytes, ntab table records), its deps (the
 * table of each record's dep), postings posts[0, npost) inside it, and its
 * epoch. Returns the mask of deps indexed (a record whose postings could
 * not all be put in is left out: the caller checks that dep by gen). */
uint32_t match_index_add(const uint8_t *blob, size_t len, unsigned ntab, const struct inval_dep *deps,
			 unsigned ndeps, struct mpost *posts, unsigned npost, _Atomic uint64_t *epoch);
/* Take an entry's postings out (before it is freed). */
void match_index_forget(struct mpost *posts, unsigned npost);

/* A changed row of t (one image; img->before set for an UPDATE's after
 * image): retire the entries whose constraint on t it satisfies or may.
 * Adds what it retired to *matched and *unsure. */
void match_index_row(struct inval_table *t, const struct match_img *img, uint64_t *matched,
		     uint64_t *unsure);

/* What the index holds (relaxed atomics). */
uint64_t match_index_bytes(void);     /* groups and bucket arrays */
uint64_t match_index_postings(void);
uint64_t match_index_groups(void);
uint64_t match_index_refused(void);   /* tables left out: bound or out of memory */

#endif
