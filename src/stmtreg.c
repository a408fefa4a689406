/*
 * stmtreg.c: the node-wide registry of prepared-statement serials (see
 * stmtreg.h): a chained hash table with the entries also in use order, the
 * least recently used dropped first past STMTREG_MAX. One mutex, taken on
 * COM_STMT_PREPARE.
 */
#include "stmtreg.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store.h"

#define NBUCKETS 4096

struct entry {
	struct entry *chain;          /* bucket chain */
	struct entry *older, *newer;  /* use order */
	uint64_t hash, serial;
	size_t key_len;
	uint8_t key[];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *buckets[NBUCKETS];
static struct entry *oldest, *newest;
static size_t count;
static atomic_uint_fast64_t next_serial = 1;

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
}

static void unlink_entry(struct entry *e)
{
	struct entry **pp = &buckets[e->hash % NBUCKETS];

	while (*pp != e)
		pp = &(*pp)->chain;
	*pp = e->chain;
	list_remove(e);
	count--;
}

uint64_t stmtreg_serial(const struct stmtreg_key *k)
{
	size_t len = key_len_of(k);
	struct entry *e = malloc(sizeof(*e) + len), *old, *drop = NULL;
	uint64_t serial;

	if (!e)
		return stmtreg_unique();
	key_write(k, e->key);
	e->key_len = len;
	e->hash = store_hash(e->key, len);
	pthread_mutex_lock(&lock);
	old = lookup(e->key, len, e->hash);
	if (old) {
		list_remove(old);
		list_push_newest(old);
		serial = old->serial;
		pthread_mutex_unlock(&lock);
		free(e);
		return serial;
	}
	e->serial = serial = atomic_fetch_add(&next_serial, 1);
	e->chain = buckets[e->hash % NBUCKETS];
	buckets[e->hash % NBUCKETS] = e;
	list_push_newest(e);
	count++;
	if (count > STMTREG_MAX) {
		drop = oldest;
		unlink_entry(drop);
	}
	pthread_mutex_unlock(&lock);
	free(drop);
	return serial;
}

uint64_t stmtreg_unique(void)
{
	return atomic_fetch_add(&next_serial, 1);
}

size_t stmtreg_count(void)
{
	size_t n;

	pthread_mutex_lock(&lock);
	n = count;
	pthread_mutex_unlock(&lock);
	return n;
}

void stmtreg_free_all(void)
{
	pthread_mutex_lock(&lock);
	while (oldest) {
		struct entry *e = oldest;

		unlink_entry(e);
		free(e);
	}
	pthread_mutex_unlock(&lock);
}
