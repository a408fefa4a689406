/*
 * stmtreg.c: the node-wide registry of prepared-statement serials (see
 * stmtreg.h): a hash table by key and one by serial; the entries no session
 * holds are also in use order, the least recently used forgotten first past
 * STMTREG_MAX of them. An entry may keep the upstream's answer to its
 * PREPARE with the stamp it was true of. One mutex, taken on
 * COM_STMT_PREPARE (the answer given is copied out under it), when a
 * session forgets a statement, and by a connection's purge.
 */
#include "session/stmtreg.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/stats.h"
#include "sql/spooky.h"

#define NBUCKETS 4096

struct entry {
	struct entry *chain;          /* bucket chain, by key */
	struct entry *schain;         /* bucket chain, by serial */
	struct entry *older, *newer;  /* use order, while no session holds it */
	uint64_t hash, serial;
	uint32_t refs;                /* sessions' statements of this serial */
	uint8_t *answer;              /* the upstream's PREPARE answer kept, or NULL */
	uint32_t answer_len;
	uint16_t nparams;             /* ... its parameter count */
	struct stmtreg_stamp stamp;   /* ... and what it was true of */
	size_t key_len;
	uint8_t key[];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *buckets[NBUCKETS];
static struct entry *sbuckets[NBUCKETS];
static struct entry *oldest, *newest;  /* the entries with refs == 0 */
static size_t count, unheld, kept_bytes;   /* kept_bytes: the answers' */
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

static void drop_answer(struct entry *e)
{
	if (e->answer) {
		STAT_DEC(prepare_answers);
		kept_bytes -= e->answer_len;
	}
	free(e->answer);
	e->answer = NULL;
	e->answer_len = 0;
}

static void free_entry(struct entry *e)
{
	if (e)
		free(e->answer);
	free(e);
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
	if (e->answer) {
		STAT_DEC(prepare_answers);
		kept_bytes -= e->answer_len;
	}
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
	e->answer = NULL;
	e->answer_len = 0;
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
	free_entry(drop);
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

/* ---- kept PREPARE answers ------------------------------------------------ */

/* The answer is whole packets and has no warning, in its OK or its EOFs;
 * its parameter count. */
static bool answer_clean(const uint8_t *a, size_t len, uint16_t *nparams)
{
	size_t at = 0;

	if (len < PKT_HEADER_LEN + 12 || a[PKT_HEADER_LEN] != 0x00 ||
	    rd_u24(a) < 12 || rd_u16(a + PKT_HEADER_LEN + 10) != 0)
		return false;
	*nparams = rd_u16(a + PKT_HEADER_LEN + 7);
	while (at < len) {
		uint32_t n;
		const uint8_t *p;

		if (len - at < PKT_HEADER_LEN)
			return false;
		n = rd_u24(a + at);
		if (n > len - at - PKT_HEADER_LEN)
			return false;
		p = a + at + PKT_HEADER_LEN;
		if (n == 5 && p[0] == 0xfe && rd_u16(p + 1) != 0)
			return false; /* an EOF with warnings */
		at += PKT_HEADER_LEN + n;
	}
	return true;
}

void stmtreg_keep_answer(uint64_t serial, const uint8_t *answer, size_t len,
			 const struct stmtreg_stamp *st)
{
	uint16_t nparams;
	uint8_t *copy;
	struct entry *e;

	if (len > STMTREG_ANSWER_MAX || !answer_clean(answer, len, &nparams))
		return;
	copy = malloc(len);
	if (!copy)
		return;
	memcpy(copy, answer, len);
	wr_u32(copy + PKT_HEADER_LEN + 1, 0); /* each PREPARE given it gets its own id */
	pthread_mutex_lock(&lock);
	e = by_serial(serial);
	if (e)
		drop_answer(e);
	if (e && kept_bytes + len <= STMTREG_ANSWERS_BYTES) {
		e->answer = copy;
		e->answer_len = (uint32_t)len;
		e->nparams = nparams;
		e->stamp = *st;
		kept_bytes += len;
		STAT_INC(prepare_answers);
		copy = NULL;
	}
	pthread_mutex_unlock(&lock);
	free(copy);
}

static bool stamp_holds(const struct stmtreg_stamp *then, const struct stmtreg_stamp *now,
			int64_t max_age_ms)
{
	for (int i = 0; i < STMTREG_STAMP_GENS; i++)
		if (then->gens[i] != now->gens[i])
			return false;
	return now->at_ms - then->at_ms <= max_age_ms;
}

/* The answer to out, as the session's: its id, and its EOFs' status bits. */
static int put_answer(const struct entry *e, uint32_t stmt_id, uint16_t status, struct pbuf *out)
{
	size_t base = out->len, at = 0;

	if (pbuf_append(out, e->answer, e->answer_len) < 0)
		return -1;
	wr_u32(out->data + base + PKT_HEADER_LEN + 1, stmt_id);
	while (at < e->answer_len) {
		uint8_t *p = out->data + base + at;
		uint32_t n = rd_u24(p);

		if (n == 5 && p[PKT_HEADER_LEN] == 0xfe) {
			uint16_t st = rd_u16(p + PKT_HEADER_LEN + 3);

			wr_u16(p + PKT_HEADER_LEN + 3,
			       (uint16_t)((st & ~SESSION_STATUS_BITS) | (status & SESSION_STATUS_BITS)));
		}
		at += PKT_HEADER_LEN + n;
	}
	return 0;
}

bool stmtreg_give_answer(const struct stmtreg_key *k, const struct stmtreg_stamp *now,
			 int64_t max_age_ms, uint32_t stmt_id, uint16_t status, struct pbuf *out,
			 struct stmtreg_given *g)
{
	size_t len = key_len_of(k);
	uint8_t small[512], *key = len <= sizeof(small) ? small : malloc(len);
	struct entry *e;
	bool given = false;
	uint64_t h;

	if (!key)
		return false;
	key_write(k, key);
	h = spooky_hash64(key, len, 0x57a7e5e7);
	pthread_mutex_lock(&lock);
	e = lookup(key, len, h);
	if (e && e->answer && !stamp_holds(&e->stamp, now, max_age_ms))
		drop_answer(e); /* no longer what the upstream would say */
	if (e && e->answer && put_answer(e, stmt_id, status, out) == 0) {
		if (e->refs++ == 0)
			list_remove(e);
		g->serial = e->serial;
		g->nparams = e->nparams;
		given = true;
	}
	pthread_mutex_unlock(&lock);
	if (key != small)
		free(key);
	return given;
}
