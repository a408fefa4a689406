/*
 * match_index.c: the groups and postings of row-precise invalidation, and
 * a changed row's walk through them (see match_index.h).
 */
#include "cache/match_index.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sql/spooky.h"

#define INITIAL_BUCKETS 16
#define NULL_KEY 0x6e756c6cull       /* the key of IS NULL (and of a NULL value) */

struct mgroup {
	struct mgroup *next;             /* the table's groups */
	struct inval_table *t;
	uint16_t col, ncols;
	uint32_t name_hash;
	struct mc_class k;
	size_t nposts, nbuckets;
	struct mpost **buckets;
};

struct mshard {
	pthread_mutex_t lock;
} __attribute__((aligned(64)));

static struct mshard shards[MATCH_SHARDS];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_uint_fast64_t n_bytes, n_posts, n_groups, n_refused;

static void init_shards(void)
{
	for (int i = 0; i < MATCH_SHARDS; i++)
		pthread_mutex_init(&shards[i].lock, NULL);
}

static pthread_mutex_t *lock_of(const struct inval_table *t)
{
	pthread_once(&once, init_shards);
	return &shards[((uintptr_t)t >> 6) % MATCH_SHARDS].lock;
}

static uint64_t key_of(const uint8_t *v, size_t n)
{
	uint64_t h = spooky_hash64(v, n, 0x3a7c4u);

	return h == NULL_KEY ? h + 1 : h;
}

static bool same_group(const struct mgroup *g, const struct mc_tab *t, const struct mc_cond *c)
{
	return g->col == c->col && g->ncols == t->ncols && g->name_hash == t->name_hash &&
	       g->k.kind == c->kind && g->k.coll == c->coll && g->k.type == c->type &&
	       g->k.flags == c->flags && g->k.fixlen == c->fixlen;
}

/* The group of a condition, created if new. Shard locked. NULL when out
 * of memory. */
static struct mgroup *group_for(struct inval_table *t, const struct mc_tab *tab, const struct mc_cond *c)
{
	struct mgroup *g;

	for (g = t->mgroups; g; g = g->next)
		if (same_group(g, tab, c))
			return g;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;   /* out of memory: the entry is not indexed on it */
	g->buckets = calloc(INITIAL_BUCKETS, sizeof(*g->buckets));
	if (!g->buckets) {
		free(g);
		return NULL;
	}
	g->nbuckets = INITIAL_BUCKETS;
	g->t = t;
	g->col = c->col;
	g->ncols = tab->ncols;
	g->name_hash = tab->name_hash;
	g->k = mc_class_of(c);
	g->next = t->mgroups;
	t->mgroups = g;
	atomic_fetch_add_explicit(&n_groups, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&n_bytes, sizeof(*g) + INITIAL_BUCKETS * sizeof(*g->buckets),
				  memory_order_relaxed);
	return g;
}

static void link_post(struct mgroup *g, struct mpost *p)
{
	struct mpost **b = &g->buckets[p->key & (g->nbuckets - 1)];

	p->next = *b;
	if (*b)
		(*b)->pprev = &p->next;
	p->pprev = b;
	*b = p;
}

/* Twice the buckets when the chains grow long (kept as they are when
 * that cannot be allocated). Shard locked. */
static void maybe_grow(struct mgroup *g)
{
	size_t n = g->nbuckets * 2;
	struct mpost **old = g->buckets, **b;

	if (g->nposts <= 2 * g->nbuckets || !(b = calloc(n, sizeof(*b))))
		return;   /* short enough, or no memory: the chains stay */
	g->buckets = b;
	g->nbuckets = n;
	for (size_t i = 0; i < n / 2; i++)
		for (struct mpost *p = old[i], *next; p; p = next) {
			next = p->next;
			link_post(g, p);
		}
	free(old);
	atomic_fetch_add_explicit(&n_bytes, n / 2 * sizeof(*b), memory_order_relaxed);
}

/* Take one posting out; its group goes with its last. Shard locked. */
static void unlink_post(struct mpost *p)
{
	struct mgroup *g = p->g;

	*p->pprev = p->next;
	if (p->next)
		p->next->pprev = p->pprev;
	p->g = NULL;
	atomic_fetch_sub_explicit(&n_posts, 1, memory_order_relaxed);
	if (--g->nposts > 0)
		return;   /* the group has other postings */
	for (struct mgroup **q = &g->t->mgroups; *q; q = &(*q)->next)
		if (*q == g) {
			*q = g->next;
			break;
		}
	atomic_fetch_sub_explicit(&n_bytes, sizeof(*g) + g->nbuckets * sizeof(*g->buckets),
				  memory_order_relaxed);
	atomic_fetch_sub_explicit(&n_groups, 1, memory_order_relaxed);
	free(g->buckets);
	free(g);
}

/* One table record's postings into posts (npost left there): how many
 * were used, or -1 when they could not all be put in (none is then). */
static int add_table(const uint8_t *rec, struct inval_table *t, struct mpost *posts, unsigned room,
		     _Atomic uint64_t *epoch)
{
	struct mc_tab tab = match_tab_at(rec);
	const uint8_t *cp;
	struct mc_cond c;
	unsigned n;
	struct mgroup *g;
	pthread_mutex_t *l;

	if (tab.icond == MATCH_NO_COND)
		return 0;   /* never true: nothing to find it by */
	cp = rec + match_cond_off(rec, tab.icond);
	c = match_cond_at(cp);
	n = c.op == MOP_NULL ? 1 : c.nvals;
	if (n > room || atomic_load_explicit(&n_posts, memory_order_relaxed) + n > MATCH_MAX_POSTINGS)
		return -1;  /* at the bound: the table is checked whole */
	l = lock_of(t);
	pthread_mutex_lock(l);
	g = group_for(t, &tab, &c);
	for (unsigned j = 0; g && j < n; j++) {
		size_t vl;
		const uint8_t *v = c.op == MOP_NULL ? NULL : match_value_at(cp, j, &vl);

		posts[j] = (struct mpost){ .g = g, .epoch = epoch, .rec = rec,
					   .key = v ? key_of(v, vl) : NULL_KEY };
		link_post(g, &posts[j]);
		g->nposts++;
		atomic_fetch_add_explicit(&n_posts, 1, memory_order_relaxed);
	}
	if (g)
		maybe_grow(g);
	pthread_mutex_unlock(l);
	return g ? (int)n : -1;
}

uint32_t match_index_add(const uint8_t *blob, size_t len, unsigned ntab, const struct inval_dep *deps,
			 unsigned ndeps, struct mpost *posts, unsigned npost, _Atomic uint64_t *epoch)
{
	uint32_t mask = 0;
	size_t off = 0;
	unsigned used = 0;

	memset(posts, 0, npost * sizeof(*posts));
	for (unsigned i = 0; i < ntab && off + sizeof(struct mc_tab) <= len; i++) {
		struct mc_tab tab = match_tab_at(blob + off);
		int n = tab.dep < ndeps ? add_table(blob + off, deps[tab.dep].t, posts + used, npost - used, epoch)
			: -1;

		if (n >= 0) {
			mask |= 1u << tab.dep;
			used += (unsigned)n;
		} else {
			atomic_fetch_add_explicit(&n_refused, 1, memory_order_relaxed);
			inval_count_why(IW_T_NOTINDEXED, 1);
		}
		off += tab.len;
	}
	return mask;
}

void match_index_forget(struct mpost *posts, unsigned npost)
{
	for (unsigned i = 0; i < npost; i++) {
		pthread_mutex_t *l;

		if (!posts[i].g)
			continue;   /* a slot not used */
		l = lock_of(posts[i].g->t);
		pthread_mutex_lock(l);
		unlink_post(&posts[i]);
		pthread_mutex_unlock(l);
	}
}

/* The key of a row's value in g's canonical form: false when it cannot be
 * compared exactly (every posting of g is then a candidate). */
static bool row_key(const struct mgroup *g, const struct match_img *img, uint64_t *key)
{
	struct mc_tab tab = { .ncols = g->ncols, .name_hash = g->name_hash };
	struct mc_cond c = { .col = g->col, .kind = g->k.kind, .coll = g->k.coll, .type = g->k.type,
			     .flags = g->k.flags, .fixlen = g->k.fixlen };
	const struct rowimg_value *v = match_img_value(img, &tab, &c);
	uint8_t canon[MATCH_VAL_MAX + 1];
	size_t n = 0;
	enum mc_canon r;

	if (!v)
		return false;   /* absent, or another definition */
	r = match_canon_value(&g->k, v, canon, &n);
	if (r == MC_UNSURE)
		return false;   /* not compared exactly */
	*key = r == MC_NULL ? NULL_KEY : key_of(canon, n);
	return true;
}

/* Test one posting's entry; retire it when the row satisfies it. */
static void try_post(const struct mpost *p, const struct match_img *img, uint64_t *matched,
		     uint64_t *unsure)
{
	struct mc_tab tab;
	enum match_verdict v;

	if (atomic_load_explicit(p->epoch, memory_order_relaxed) == 0)
		return;   /* retired already */
	tab = match_tab_at(p->rec);
	v = match_table(&tab, p->rec, img);
	if (v == MV_NO)
		return;   /* the row cannot change its answer */
	atomic_store_explicit(p->epoch, 0, memory_order_release);
	(*(v == MV_YES ? matched : unsure))++;
}

void match_index_row(struct inval_table *t, const struct match_img *img, uint64_t *matched,
		     uint64_t *unsure)
{
	pthread_mutex_t *l = lock_of(t);

	pthread_mutex_lock(l);
	for (struct mgroup *g = t->mgroups; g; g = g->next) {
		uint64_t key;

		if (row_key(g, img, &key)) {
			for (struct mpost *p = g->buckets[key & (g->nbuckets - 1)]; p; p = p->next)
				if (p->key == key)
					try_post(p, img, matched, unsure);
			continue;
		}
		for (size_t b = 0; b < g->nbuckets; b++)   /* not comparable: every posting */
			for (struct mpost *p = g->buckets[b]; p; p = p->next)
				try_post(p, img, matched, unsure);
	}
	pthread_mutex_unlock(l);
}

uint64_t match_index_bytes(void) { return atomic_load_explicit(&n_bytes, memory_order_relaxed); }
uint64_t match_index_postings(void) { return atomic_load_explicit(&n_posts, memory_order_relaxed); }
uint64_t match_index_groups(void) { return atomic_load_explicit(&n_groups, memory_order_relaxed); }
uint64_t match_index_refused(void) { return atomic_load_explicit(&n_refused, memory_order_relaxed); }

