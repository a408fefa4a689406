/*
 * users.c: owns the runtime user store (a pthread rwlock over an array that
 * is replaced as a whole) and the mysql_native_password hash arithmetic:
 * hashing, the "*HEX" text form, and checking a login token against a
 * stored SHA1(SHA1(password)). Login path and admin only.
 */
#include "users.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_rwlock_t store_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct users_entry *store;   /* guarded by store_lock */
static size_t store_n;

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

bool users_native_check_hash(const uint8_t stored[USERS_HASH_LEN], const uint8_t nonce[20],
			     const uint8_t *token, size_t len)
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
	OPENSSL_cleanse(h1, sizeof h1);
	return good;
}

/* ----------------------------------------------------------------- store */

static const struct users_entry *find_locked(const char *user)
{
	for (size_t i = 0; i < store_n; i++)
		if (strcmp(store[i].name, user) == 0)
			return &store[i];
	return NULL;
}

bool users_check_native(const char *user, const uint8_t nonce[20], const uint8_t *token,
			size_t len, bool *is_monitor)
{
	static const uint8_t dummy[USERS_HASH_LEN];
	const struct users_entry *e;
	bool good = false, mon = false;

	if (is_monitor)
		*is_monitor = false;
	if (!user || !nonce)
		return false;
	pthread_rwlock_rdlock(&store_lock);
	e = find_locked(user);
	if (!e) {
		/* the same work as for a known user */
		users_native_check_hash(dummy, nonce, token, len);
	} else if (!e->has_password) {
		good = e->active && len == 0;
	} else {
		good = users_native_check_hash(e->hash, nonce, token, len) && e->active;
	}
	mon = e && e->is_monitor;
	pthread_rwlock_unlock(&store_lock);
	if (good && is_monitor)
		*is_monitor = mon;
	return good;
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

int users_replace(const struct users_entry *list, size_t n)
{
	struct users_entry *copy = NULL, *old;

	if (n > 0) {
		copy = calloc(n, sizeof *copy);
		if (!copy)
			return -1;
		memcpy(copy, list, n * sizeof *copy);
	}
	pthread_rwlock_wrlock(&store_lock);
	old = store;
	store = copy;
	store_n = n;
	pthread_rwlock_unlock(&store_lock);
	if (old)
		OPENSSL_cleanse(old, sizeof *old);
	free(old);
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

void users_clear(void)
{
	users_replace(NULL, 0);
}
