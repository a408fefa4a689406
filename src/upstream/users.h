/*
 * users.h: the runtime user store: the login users the data port accepts,
 * with their mysql_native_password hashes (SHA1(SHA1(password)), shown as
 * "*" + 40 upper-case hex digits, as MySQL and ProxySQL show them), their
 * default schema and connection cap (ProxySQL's mysql_users), and, per
 * user, a live account: how many sessions it has open and whether it was
 * removed or deactivated since they logged in.
 *
 * The store is read-mostly: the admin replaces it as a whole (LOAD USERS TO
 * RUNTIME, SIGHUP, and once at start from the configuration), logins read
 * it. A pthread rwlock guards it; it is taken on the login path only, never
 * on a command or cache-hit path. Accounts are reference counted (sessions
 * and upstream connections hold them) and their counters are atomics, so a
 * session checks its own account with one relaxed load.
 *
 * Passwords: the tables only ever hold hashes. A user also has its clear
 * password in the store when the configuration gives it (upstream_db_url,
 * allowed_users, the monitor login: they are in the node's memory anyway);
 * users defined in the admin's table have the hash only, and act upstream
 * with the SHA1(password) that their own login proves (docs/security.md).
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
#define USERS_CLEAR_MAX 256
#define USERS_SCHEMA_MAX 256
#define USERS_DEFAULT_MAX_CONNECTIONS 10000   /* ProxySQL's default */

struct user_account;

struct users_entry {
	char name[USERS_NAME_MAX];
	bool has_password;              /* false: the empty password */
	uint8_t hash[USERS_HASH_LEN];   /* SHA1(SHA1(password)) */
	bool has_clear;                 /* clear holds the password (configured users) */
	char clear[USERS_CLEAR_MAX];
	bool active;
	bool is_monitor;
	char default_schema[USERS_SCHEMA_MAX]; /* "" : the upstream_db_url's database */
	int max_connections;            /* sessions of this user open at once */
	char comment[USERS_COMMENT_MAX];
	struct user_account *acct;      /* the store's (users_replace sets it) */
};

/* The live state of one user, shared by its sessions (all threads). */
struct user_account {
	char name[USERS_NAME_MAX];
	uint32_t id;                    /* unique per account, never 0 */
	int refs;                       /* atomic: the store, sessions, connections */
	int sessions;                   /* atomic: sessions logged in as this user */
	int in_use;                     /* atomic: upstream connections its sessions hold now */
	int waiting;                    /* atomic: its sessions waiting for one now */
	bool revoked;                   /* atomic: removed or deactivated since */
};

/* How a login may act upstream: with the clear password, with SHA1(pw)
 * (mysql_native_password only), or with the empty password. */
enum users_cred { USERS_CRED_NONE, USERS_CRED_CLEAR, USERS_CRED_SHA1 };

/* What a successful login learns from the store. */
struct users_login {
	bool is_monitor;
	int max_connections;
	char default_schema[USERS_SCHEMA_MAX];
	enum users_cred cred;
	char clear[USERS_CLEAR_MAX];    /* USERS_CRED_CLEAR */
	uint8_t sha1[USERS_HASH_LEN];   /* USERS_CRED_SHA1: SHA1(password) */
	struct user_account *acct;      /* a reference: users_account_put() it */
};

/* A mysql_native_password login: does the token prove the password of an
 * active user? Then fill *out (may be NULL): with the clear password when
 * the store has it, else with SHA1(password) recovered from the token.
 * Constant-time in the token; an unknown user costs the same hashing as a
 * known one. */
bool users_login_native(const char *user, const uint8_t nonce[20], const uint8_t *token,
			size_t len, struct users_login *out);
/* An active user whose clear password the store has (caching_sha2_password
 * logins check it themselves): fill *out with it. false otherwise. */
bool users_login_clear(const char *user, struct users_login *out);
/* Drop a login's secrets and its account reference. */
void users_login_clear_secrets(struct users_login *l);

/* Account references. get adds one; put drops one (the last frees it). */
struct user_account *users_account_get(struct user_account *a);
void users_account_put(struct user_account *a);
/* Count a session in: false (nothing counted) when the user already has
 * max sessions. Leave counts it out. */
bool users_account_enter(struct user_account *a, int max);
void users_account_leave(struct user_account *a);
/* Removed or deactivated since the reference was taken. Relaxed load. */
bool users_account_revoked(const struct user_account *a);
/* Sessions open now. */
int users_account_sessions(const struct user_account *a);
/* The pool's per-user gauges (pool.c): add delta (+1 or -1) to the
 * connections the user's sessions hold, or to its sessions waiting for one.
 * Relaxed atomics; a NULL account is ignored. */
void users_account_add_in_use(struct user_account *a, int delta);
void users_account_add_waiting(struct user_account *a, int delta);

/* What the status page shows of one active user. */
struct users_activity {
	char name[USERS_NAME_MAX];
	int sessions, in_use, waiting;
};
/* Call fn for every active user of the store, under its read lock (fn must
 * not call back into the store). */
void users_each_activity(void (*fn)(const struct users_activity *u, void *arg), void *arg);

/* Does the login token prove the password of an active user in the store?
 * nonce is the 20-byte scramble sent in the greeting (or auth switch),
 * token what the client answered (empty for an empty password). Sets
 * *is_monitor (may be NULL) for a user marked as monitor. Constant-time in
 * the token; an unknown user costs the same hashing as a known one. */
bool users_check_native(const char *user, const uint8_t nonce[20], const uint8_t *token,
			size_t len, bool *is_monitor);

/* Is user in the store (active or not)? */
bool users_exists(const char *user);
/* The name of the configured user whose account id is id, copied into out:
 * false when no user of the store has it now (removed, or 0, the shared
 * upstream user's). */
bool users_account_name(uint32_t id, char *out, size_t cap);
/* The account id of the active user name now (its keys' id); 0 when the
 * store has no such active user. */
uint32_t users_account_id(const char *name);

/* Replace the whole store with n entries (copied; their acct is ignored).
 * A user that stays active keeps its account (its sessions go on, a new
 * max_connections applies to the next login); a user removed or made
 * inactive has its account revoked: its sessions end at their next command
 * and its idle upstream connections are closed. 0, or -1 (no memory; the
 * store is unchanged). */
int users_replace(const struct users_entry *list, size_t n);

/* A copy of the store: *out is malloc'd (users_snapshot_free() it), *n its
 * entries (their acct pointers are not references). 0 or -1. */
int users_snapshot(struct users_entry **out, size_t *n);
void users_snapshot_free(struct users_entry *list, size_t n);

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
/* The same, and on success SHA1(pw) in sha1_out: what the client proved it
 * knows, and all mysql_native_password needs to log in upstream. */
bool users_native_recover(const uint8_t stored[USERS_HASH_LEN], const uint8_t nonce[20],
			  const uint8_t *token, size_t len, uint8_t sha1_out[USERS_HASH_LEN]);

#endif
