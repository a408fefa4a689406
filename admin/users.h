/*
 * users.h: the runtime user store: the login users the data port accepts,
 * with their mysql_native_password hashes (SHA1(SHA1(password)), shown as
 * "*" + 40 upper-case hex digits, as MySQL and ProxySQL show them).
 *
 * The store is read-mostly: the admin replaces it as a whole (LOAD USERS TO
 * RUNTIME, and once at start from the configuration), logins read it. A
 * pthread rwlock guards it; it is taken on the login path only, never on a
 * command or cache-hit path.
 *
 * No plaintext is kept: a user here can log in with mysql_native_password
 * only (caching_sha2_password needs the password itself).
 */
#ifndef SHOAL_ADMIN_USERS_H
#define SHOAL_ADMIN_USERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define USERS_NAME_MAX 128
#define USERS_COMMENT_MAX 256
#define USERS_HASH_LEN 20
#define USERS_HASH_TEXT_LEN 41      /* '*' + 40 hex digits */

struct users_entry {
	char name[USERS_NAME_MAX];
	bool has_password;              /* false: the empty password */
	uint8_t hash[USERS_HASH_LEN];   /* SHA1(SHA1(password)) */
	bool active;
	bool is_monitor;
	char comment[USERS_COMMENT_MAX];
};

/* Does the login token prove the password of an active user in the store?
 * nonce is the 20-byte scramble sent in the greeting (or auth switch),
 * token what the client answered (empty for an empty password). Sets
 * *is_monitor (may be NULL) for a user marked as monitor. Constant-time in
 * the token; an unknown user costs the same hashing as a known one. */
bool users_check_native(const char *user, const uint8_t nonce[20], const uint8_t *token,
			size_t len, bool *is_monitor);

/* Is user in the store (active or not)? */
bool users_exists(const char *user);

/* Replace the whole store with n entries (copied). 0, or -1 (no memory; the
 * store is unchanged). */
int users_replace(const struct users_entry *list, size_t n);

/* A copy of the store: *out is malloc'd (free() it), *n its entries.
 * 0 or -1. */
int users_snapshot(struct users_entry **out, size_t *n);

/* Drop every entry (at exit). */
void users_clear(void);

/* --- mysql_native_password hashes (pure functions) --- */

/* SHA1(SHA1(pw)) of a non-empty password. 0 or -1. */
int users_native_hash(const char *pw, uint8_t out[USERS_HASH_LEN]);
/* The same as text: "*" + 40 upper-case hex digits, or "" for an empty
 * password. out must hold USERS_HASH_TEXT_LEN + 1 bytes. 0 or -1. */
int users_native_hash_text(const char *pw, char out[USERS_HASH_TEXT_LEN + 1]);
/* Is text a hash in that form (either case)? Then fill out (may be NULL). */
bool users_parse_hash(const char *text, uint8_t out[USERS_HASH_LEN]);
/* Hash to its text form. */
void users_hash_to_text(const uint8_t hash[USERS_HASH_LEN], char out[USERS_HASH_TEXT_LEN + 1]);
/* Check a native token against a stored hash:
 *   SHA1(pw) = token XOR SHA1(nonce . stored), then SHA1(SHA1(pw)) == stored. */
bool users_native_check_hash(const uint8_t stored[USERS_HASH_LEN], const uint8_t nonce[20],
			     const uint8_t *token, size_t len);

#endif
