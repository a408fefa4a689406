/*
 * stmtreg.c: the node-wide prepared-statement registry (see stmtreg.h): a
 * chained hash table with the entries also in insertion order, the oldest
 * dropped first past STMTREG_MAX. One mutex, taken on COM_STMT_PREPARE.
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
	struct entry *older, *newer;  /* insertion order */
	uint64_t hash, serial;
	uint16_t nparams;
	size_t key_len;
	uint8_t *key;
	struct pbuf resp, meta;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *buckets[NBUCKETS];
static struct entry *oldest, *newest;
static size_t count;
static atomic_uint_fast64_t next_serial = 1;

/* The key as bytes: user NUL db NUL caps text. */
static uint8_t *key_bytes(const struct stmtreg_key *k, size_t *len)
{
	size_t u = strlen(k->user) + 1, d = strlen(k->db) + 1;
	uint8_t *b;

	*len = u + d + 4 + k->text_len;
	b = malloc(*len);
	if (!b)
		return NULL;
	memcpy(b, k->user, u);
	memcpy(b + u, k->db, d);
	wr_u32(b + u + d, k->caps);
	memcpy(b + u + d + 4, k->text, k->text_len);
	return b;
}

static struct entry *lookup(const uint8_t *key, size_t len, uint64_t h)
{
	for (struct entry *e = buckets[h % NBUCKETS]; e; e = e->chain)
		if (e->hash == h && e->key_len == len && memcmp(e->key, key, len) == 0)
			return e;
	return NULL;
}

static void unlink_entry(struct entry *e)
{
	struct entry **pp = &buckets[e->hash % NBUCKETS];

	while (*pp != e)
		pp = &(*pp)->chain;
	*pp = e->chain;
	if (e->older)
		e->older->newer = e->newer;
	else
		oldest = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		newest = e->older;
	count--;
}

static void free_entry(struct entry *e)
{
	free(e->key);
	pbuf_free(&e->resp);
	pbuf_free(&e->meta);
	free(e);
}

uint64_t stmtreg_find(const struct stmtreg_key *k, struct pbuf *resp, struct pbuf *meta,
		      uint16_t *nparams)
{
	size_t len;
	uint8_t *key = key_bytes(k, &len);
	uint64_t h, serial = 0;
	struct entry *e;

	if (!key)
		return 0;
	h = store_hash(key, len);
	pthread_mutex_lock(&lock);
	e = lookup(key, len, h);
	if (e && pbuf_append(resp, e->resp.data, e->resp.len) == 0 &&
	    pbuf_append(meta, e->meta.data, e->meta.len) == 0) {
		serial = e->serial;
		*nparams = e->nparams;
	}
	pthread_mutex_unlock(&lock);
	free(key);
	return serial;
}

uint64_t stmtreg_add(const struct stmtreg_key *k, const uint8_t *resp, size_t resp_len,
		     const struct pbuf *meta, uint16_t nparams)
{
	struct entry *e = calloc(1, sizeof(*e)), *old;
	uint64_t serial;

	if (!e)
		return atomic_fetch_add(&next_serial, 1);
	e->key = key_bytes(k, &e->key_len);
	if (!e->key || pbuf_append(&e->resp, resp, resp_len) < 0 ||
	    (meta->len && pbuf_append(&e->meta, meta->data, meta->len) < 0)) {
		free_entry(e);
		return atomic_fetch_add(&next_serial, 1);
	}
	e->hash = store_hash(e->key, e->key_len);
	e->nparams = nparams;
	pthread_mutex_lock(&lock);
	old = lookup(e->key, e->key_len, e->hash);
	if (old) {
		serial = old->serial;
		pthread_mutex_unlock(&lock);
		free_entry(e);
		return serial;
	}
	e->serial = serial = atomic_fetch_add(&next_serial, 1);
	e->chain = buckets[e->hash % NBUCKETS];
	buckets[e->hash % NBUCKETS] = e;
	e->older = newest;
	if (newest)
		newest->newer = e;
	else
		oldest = e;
	newest = e;
	count++;
	old = count > STMTREG_MAX ? oldest : NULL;
	if (old)
		unlink_entry(old);
	pthread_mutex_unlock(&lock);
	if (old)
		free_entry(old);
	return serial;
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
		free_entry(e);
	}
	pthread_mutex_unlock(&lock);
}
