/*
 * users.c: owns the runtime user store (a pthread rwlock over an array that
 * is replaced as a whole), the users' live accounts (reference counted,
 * atomics: see users.h) and the mysql_native_password hash arithmetic:
 * hashing, the "*HEX" text form, checking a login token against a stored
 * SHA1(SHA1(password)) and recovering SHA1(password) from it. The store is
 * taken on the login path and by the admin only.
 */
#include "upstream/users.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_rwlock_t store_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct users_entry *store;   /* guarded by store_lock */
static size_t store_n;
static uint32_t next_account_id = 1; /* atomic */

/* ---------------------------------------------------------------- hashes */

static int sha1(const void *a, size_t alen, const void *b, size_t blen, uint8_t out[20])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) == 1 &&
		 EVP_DigestUpdate(ctx, a, alen) == 1 &&
		 (blen == 0 || EVP_DigestUpdate(ctx, b, blen) == 1) &&
		 EVP_DigestFinal_ex(ctx, out, NULL) == 1;

	EVP_MD_CTX_free(ctx);
	return ok ? 0 : -1;
}

int users_native_hash(const char *pw, uint8_t out[USERS_HASH_LEN])
{
	uint8_t h1[20];
	int rc;

	if (!pw || !*pw)
		return -1;
	rc = sha1(pw, strlen(pw), NULL, 0, h1);
	if (rc == 0)
		rc = sha1(h1, sizeof h1, NULL, 0, out);
	OPENSSL_cleanse(h1, sizeof h1);
	return rc;
}

void users_hash_to_text(const uint8_t hash[USERS_HASH_LEN], char out[USERS_HASH_TEXT_LEN + 1])
{
	static const char hex[] = "0123456789ABCDEF";

	out[0] = '*';
	for (int i = 0; i < USERS_HASH_LEN; i++) {
		out[1 + 2 * i] = hex[hash[i] >> 4];
		out[2 + 2 * i] = hex[hash[i] & 15];
	}
	out[USERS_HASH_TEXT_LEN] = '\0';
}

int users_native_hash_text(const char *pw, char out[USERS_HASH_TEXT_LEN + 1])
{
	uint8_t h[USERS_HASH_LEN];

	out[0] = '\0';
	if (!pw || !*pw)
		return 0;
	if (users_native_hash(pw, h) < 0)
		return -1;
	users_hash_to_text(h, out);
	return 0;
}

static int hexdigit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = toupper(c);
	return c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

bool users_parse_hash(const char *text, uint8_t out[USERS_HASH_LEN])
{
	uint8_t h[USERS_HASH_LEN];

	if (!text || text[0] != '*' || strlen(text) != USERS_HASH_TEXT_LEN)
		return false;
	for (int i = 0; i < USERS_HASH_LEN; i++) {
		int hi = hexdigit((unsigned char)text[1 + 2 * i]);
		int lo = hexdigit((unsigned char)text[2 + 2 * i]);

		if (hi < 0 || lo < 0)
			return false;
		h[i] = (uint8_t)(hi << 4 | lo);
	}
	if (out)
		memcpy(out, h, sizeof h);
	return true;
}

bool users_native_recover(const uint8_t stored[USERS_HASH_LEN], const uint8_t nonce[20],
			  const uint8_t *token, size_t len, uint8_t sha1_out[USERS_HASH_LEN])
{
	uint8_t mask[20], h1[20], h2[20];
	bool good;

	if (len != 20 || !token)
		return false;
	if (sha1(nonce, 20, stored, USERS_HASH_LEN, mask) < 0)
		return false;
	for (int i = 0; i < 20; i++)
		h1[i] = token[i] ^ mask[i];
	good = sha1(h1, sizeof h1, NULL, 0, h2) == 0 &&
	       CRYPTO_memcmp(h2, stored, USERS_HASH_LEN) == 0;
	if (good && sha1_out)
		memcpy(sha1_out, h1, sizeof h1);
	OPENSSL_cleanse(h1, sizeof h1);
	OPENSSL_cleanse(mask, sizeof mask);
	return good;
}

bool users_native_check_hash(const uint8_t stored[USERS_HASH_LEN], const uint8_t nonce[20],
			     const uint8_t *token, size_t len)
{
	return users_native_recover(stored, nonce, token, len, NULL);
}

/* -------------------------------------------------------------- accounts */

static struct user_account *account_new(const char *name)
{
	struct user_account *a = calloc(1, sizeof *a);

	if (!a)
		return NULL;
	snprintf(a->name, sizeof a->name, "%s", name);
	a->id = __atomic_fetch_add(&next_account_id, 1, __ATOMIC_RELAXED);
	if (a->id == 0) /* wrapped: 0 means "the shared upstream user" */
		a->id = __atomic_fetch_add(&next_account_id, 1, __ATOMIC_RELAXED);
	a->refs = 1;
	return a;
}

struct user_account *users_account_get(struct user_account *a)
{
	if (a)
		__atomic_fetch_add(&a->refs, 1, __ATOMIC_RELAXED);
	return a;
}

void users_account_put(struct user_account *a)
{
	if (a && __atomic_sub_fetch(&a->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(a);
}

bool users_account_enter(struct user_account *a, int max)
{
	int n = __atomic_load_n(&a->sessions, __ATOMIC_RELAXED);

	do {
		if (n >= max)
			return false;
	} while (!__atomic_compare_exchange_n(&a->sessions, &n, n + 1, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

void users_account_leave(struct user_account *a)
{
	__atomic_fetch_sub(&a->sessions, 1, __ATOMIC_RELAXED);
}

bool users_account_revoked(const struct user_account *a)
{
	return __atomic_load_n(&a->revoked, __ATOMIC_RELAXED);
}

int users_account_sessions(const struct user_account *a)
{
	return __atomic_load_n(&a->sessions, __ATOMIC_RELAXED);
}

/* ----------------------------------------------------------------- store */

static const struct users_entry *find_locked(const char *user)
{
	for (size_t i = 0; i < store_n; i++)
		if (strcmp(store[i].name, user) == 0)
			return &store[i];
	return NULL;
}

static void login_fill(const struct users_entry *e, struct users_login *out)
{
	out->is_monitor = e->is_monitor;
	out->max_connections = e->max_connections;
	snprintf(out->default_schema, sizeof out->default_schema, "%s", e->default_schema);
	if (e->has_clear) {
		out->cred = USERS_CRED_CLEAR;
		snprintf(out->clear, sizeof out->clear, "%s", e->clear);
	} else if (!e->has_password) {
		out->cred = USERS_CRED_NONE;
	}
	out->acct = users_account_get(e->acct);
}

bool users_login_native(const char *user, const uint8_t nonce[20], const uint8_t *token,
			size_t len, struct users_login *out)
{
	static const uint8_t dummy[USERS_HASH_LEN];
	const struct users_entry *e;
	uint8_t h1[USERS_HASH_LEN];
	bool good = false;

	if (out)
		memset(out, 0, sizeof *out);
	if (!user || !nonce)
		return false;
	pthread_rwlock_rdlock(&store_lock);
	e = find_locked(user);
	if (!e) {
		/* the same work as for a known user */
		users_native_recover(dummy, nonce, token, len, h1);
	} else if (!e->has_password) {
		good = e->active && len == 0;
	} else {
		good = users_native_recover(e->hash, nonce, token, len, h1) && e->active;
	}
	if (good && out) {
		out->cred = USERS_CRED_SHA1;
		memcpy(out->sha1, h1, sizeof h1);
		login_fill(e, out);
		if (out->cred != USERS_CRED_SHA1)
			OPENSSL_cleanse(out->sha1, sizeof out->sha1);
	}
	pthread_rwlock_unlock(&store_lock);
	OPENSSL_cleanse(h1, sizeof h1);
	return good;
}

bool users_login_clear(const char *user, struct users_login *out)
{
	const struct users_entry *e;
	bool good;

	memset(out, 0, sizeof *out);
	if (!user)
		return false;
	pthread_rwlock_rdlock(&store_lock);
	e = find_locked(user);
	good = e && e->active && (e->has_clear || !e->has_password);
	if (good)
		login_fill(e, out);
	pthread_rwlock_unlock(&store_lock);
	return good;
}

void users_login_clear_secrets(struct users_login *l)
{
	if (!l)
		return;
	users_account_put(l->acct);
	OPENSSL_cleanse(l, sizeof *l);
}

bool users_check_native(const char *user, const uint8_t nonce[20], const uint8_t *token,
			size_t len, bool *is_monitor)
{
	struct users_login l;
	bool good = users_login_native(user, nonce, token, len, &l);

	if (is_monitor)
		*is_monitor = good && l.is_monitor;
	users_login_clear_secrets(&l);
	return good;
}

void users_account_add_in_use(struct user_account *a, int delta)
{
	if (a)
		__atomic_fetch_add(&a->in_use, delta, __ATOMIC_RELAXED);
}

void users_account_add_waiting(struct user_account *a, int delta)
{
	if (a)
		__atomic_fetch_add(&a->waiting, delta, __ATOMIC_RELAXED);
}

void users_each_activity(void (*fn)(const struct users_activity *u, void *arg), void *arg)
{
	struct users_activity u;

	pthread_rwlock_rdlock(&store_lock);
	for (size_t i = 0; i < store_n; i++) {
		const struct user_account *a = store[i].acct;

		if (!store[i].active || !a)
			continue;
		snprintf(u.name, sizeof u.name, "%s", store[i].name);
		u.sessions = __atomic_load_n(&a->sessions, __ATOMIC_RELAXED);
		u.in_use = __atomic_load_n(&a->in_use, __ATOMIC_RELAXED);
		u.waiting = __atomic_load_n(&a->waiting, __ATOMIC_RELAXED);
		fn(&u, arg);
	}
	pthread_rwlock_unlock(&store_lock);
}

bool users_exists(const char *user)
{
	bool found;

	if (!user)
		return false;
	pthread_rwlock_rdlock(&store_lock);
	found = find_locked(user) != NULL;
	pthread_rwlock_unlock(&store_lock);
	return found;
}

bool users_account_name(uint32_t id, char *out, size_t cap)
{
	bool found = false;

	if (id == 0 || cap == 0)
		return false;
	pthread_rwlock_rdlock(&store_lock);
	for (size_t i = 0; i < store_n && !found; i++) {
		if (store[i].acct && store[i].acct->id == id) {
			found = (size_t)snprintf(out, cap, "%s", store[i].name) < cap;
		}
	}
	pthread_rwlock_unlock(&store_lock);
	return found;
}

uint32_t users_account_id(const char *name)
{
	const struct users_entry *e;
	uint32_t id = 0;

	pthread_rwlock_rdlock(&store_lock);
	e = find_locked(name);
	if (e && e->active && e->acct)
		id = e->acct->id;
	pthread_rwlock_unlock(&store_lock);
	return id;
}

/* The account entry e continues from the old store, if any (lock held). */
static struct user_account *carried_account(const struct users_entry *e)
{
	const struct users_entry *old = find_locked(e->name);

	return old && old->active && old->acct && e->active ? old->acct : NULL;
}

static void cleanse_free(struct users_entry *list, size_t n)
{
	if (list)
		OPENSSL_cleanse(list, n * sizeof *list);
	free(list);
}

int users_replace(const struct users_entry *list, size_t n)
{
	struct users_entry *copy = NULL, *old;
	size_t old_n;

	if (n > 0) {
		copy = calloc(n, sizeof *copy);
		if (!copy)
			return -1;
		memcpy(copy, list, n * sizeof *copy);
	}
	for (size_t i = 0; i < n; i++)
		copy[i].acct = NULL;
	pthread_rwlock_wrlock(&store_lock);
	for (size_t i = 0; i < n; i++) {
		struct user_account *a = carried_account(&copy[i]);

		copy[i].acct = a ? users_account_get(a) : copy[i].active ? account_new(copy[i].name) : NULL;
		if (copy[i].active && !copy[i].acct) {
			for (size_t j = 0; j < i; j++)
				users_account_put(copy[j].acct);
			pthread_rwlock_unlock(&store_lock);
			cleanse_free(copy, n);
			return -1;
		}
	}
	old = store;
	old_n = store_n;
	store = copy;
	store_n = n;
	pthread_rwlock_unlock(&store_lock);
	/* accounts not carried over: their sessions end at the next command */
	for (size_t i = 0; i < old_n; i++) {
		struct user_account *a = old[i].acct;
		bool kept = false;

		for (size_t j = 0; j < n && a && !kept; j++)
			kept = copy[j].acct == a;
		if (a && !kept)
			__atomic_store_n(&a->revoked, true, __ATOMIC_RELAXED);
		users_account_put(a);
	}
	cleanse_free(old, old_n);
	return 0;
}

int users_snapshot(struct users_entry **out, size_t *n)
{
	int rc = 0;

	*out = NULL;
	*n = 0;
	pthread_rwlock_rdlock(&store_lock);
	if (store_n > 0) {
		*out = malloc(store_n * sizeof **out);
		if (*out) {
			memcpy(*out, store, store_n * sizeof **out);
			*n = store_n;
		} else {
			rc = -1;
		}
	}
	pthread_rwlock_unlock(&store_lock);
	return rc;
}

void users_snapshot_free(struct users_entry *list, size_t n)
{
	cleanse_free(list, n);
}

void users_clear(void)
{
	users_replace(NULL, 0);
}
