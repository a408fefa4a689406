/*
 * stmtreg.c: the node-wide registry of prepared-statement serials (see
 * stmtreg.h): a hash table by key and one by serial; the entries no session
 * holds are also in use order, the least recently used forgotten first past
 * STMTREG_MAX of them. One mutex, taken on COM_STMT_PREPARE, when a session
 * forgets a statement, and by a connection's purge.
 */
#include "session/stmtreg.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sql/spooky.h"

#define NBUCKETS 4096

struct entry {
	struct entry *chain;          /* bucket chain, by key */
	struct entry *schain;         /* bucket chain, by serial */
	struct entry *older, *newer;  /* use order, while no session holds it */
	uint64_t hash, serial;
	uint32_t refs;                /* sessions' statements of this serial */
	size_t key_len;
	uint8_t key[];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *buckets[NBUCKETS];
static struct entry *sbuckets[NBUCKETS];
static struct entry *oldest, *newest;  /* the entries with refs == 0 */
static size_t count, unheld;
static atomic_uint_fast64_t next_serial = 1;
static atomic_uint dropped_gen;        /* moves when a serial loses its last holder */

/* The key as bytes: user NUL caps ctx-length ctx text. */
static size_t key_len_of(const struct stmtreg_key *k)
{
	return strlen(k->user) + 1 + 4 + 4 + k->ctx_len + k->text_len;
}

static void key_write(const struct stmtreg_key *k, uint8_t *b)
{
	size_t u = strlen(k->user) + 1;

	memcpy(b, k->user, u);
	wr_u32(b + u, k->caps);
	wr_u32(b + u + 4, (uint32_t)k->ctx_len);
	memcpy(b + u + 8, k->ctx, k->ctx_len);
	memcpy(b + u + 8 + k->ctx_len, k->text, k->text_len);
}

static struct entry *lookup(const uint8_t *key, size_t len, uint64_t h)
{
	for (struct entry *e = buckets[h % NBUCKETS]; e; e = e->chain)
		if (e->hash == h && e->key_len == len && memcmp(e->key, key, len) == 0)
			return e;
	return NULL;
}

static struct entry *by_serial(uint64_t serial)
{
	for (struct entry *e = sbuckets[serial % NBUCKETS]; e; e = e->schain)
		if (e->serial == serial)
			return e;
	return NULL;
}

static void list_remove(struct entry *e)
{
	if (e->older)
		e->older->newer = e->newer;
	else
		oldest = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		newest = e->older;
	e->older = e->newer = NULL;
	unheld--;
}

static void list_push_newest(struct entry *e)
{
	e->older = newest;
	e->newer = NULL;
	if (newest)
		newest->newer = e;
	else
		oldest = e;
	newest = e;
	unheld++;
}

static void unlink_entry(struct entry *e)
{
	struct entry **pp = &buckets[e->hash % NBUCKETS];

	while (*pp != e)
		pp = &(*pp)->chain;
	*pp = e->chain;
	pp = &sbuckets[e->serial % NBUCKETS];
	while (*pp != e)
		pp = &(*pp)->schain;
	*pp = e->schain;
	if (e->refs == 0)
		list_remove(e);
	count--;
}

/* Past STMTREG_MAX entries no one holds, the least recently used goes. */
static struct entry *over_limit(void)
{
	struct entry *e = unheld > STMTREG_MAX ? oldest : NULL;

	if (e)
		unlink_entry(e);
	return e;
}

uint64_t stmtreg_serial(const struct stmtreg_key *k)
{
	size_t len = key_len_of(k);
	struct entry *e = malloc(sizeof(*e) + len), *old;
	uint64_t serial;

	if (!e)
		return stmtreg_unique();
	key_write(k, e->key);
	e->key_len = len;
	e->hash = spooky_hash64(e->key, len, 0x57a7e5e7);   /* its own table: any seed */
	pthread_mutex_lock(&lock);
	old = lookup(e->key, len, e->hash);
	if (old) {
		if (old->refs++ == 0)
			list_remove(old);
		serial = old->serial;
		pthread_mutex_unlock(&lock);
		free(e);
		return serial;
	}
	e->serial = serial = atomic_fetch_add(&next_serial, 1);
	e->refs = 1;
	e->older = e->newer = NULL;
	e->chain = buckets[e->hash % NBUCKETS];
	buckets[e->hash % NBUCKETS] = e;
	e->schain = sbuckets[serial % NBUCKETS];
	sbuckets[serial % NBUCKETS] = e;
	count++;
	pthread_mutex_unlock(&lock);
	return serial;
}

uint64_t stmtreg_unique(void)
{
	return atomic_fetch_add(&next_serial, 1);
}

void stmtreg_release(uint64_t serial)
{
	struct entry *e, *drop = NULL;

	pthread_mutex_lock(&lock);
	e = by_serial(serial);
	if (e && e->refs > 0 && --e->refs == 0) {
		list_push_newest(e);
		atomic_fetch_add_explicit(&dropped_gen, 1, memory_order_relaxed);
		drop = over_limit();
	}
	pthread_mutex_unlock(&lock);
	free(drop);
}

unsigned stmtreg_dropped_gen(void)
{
	return atomic_load_explicit(&dropped_gen, memory_order_relaxed);
}

void stmtreg_held(const uint64_t *serials, bool *held, size_t n)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n; i++) {
		struct entry *e = by_serial(serials[i]);

		held[i] = e && e->refs > 0;
	}
	pthread_mutex_unlock(&lock);
}
