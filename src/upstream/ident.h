/*
 * ident.h: a session's upstream identity: the upstream user its commands run
 * as, the credential the node logs in with on its behalf, and the login's
 * account (users.h). Built once per login (and COM_CHANGE_USER) on the
 * worker that owns the session; read by the pool when it opens or lends a
 * connection and by the cache for its keys and grant verdicts.
 *
 * By default a login acts upstream as itself (same user, same password):
 * with its clear password when the node has it (configured users), else
 * with the SHA1(password) its own mysql_native_password login proved
 * (upauth.h). With shared_upstream_user every login but the monitor acts as
 * the upstream_db_url user. The monitor acts, if at all, as itself.
 */
#ifndef SHOAL_IDENT_H
#define SHOAL_IDENT_H

#include <stdbool.h>
#include <stdint.h>

#include "upstream/users.h"

struct ident {
	char login[USERS_NAME_MAX];      /* the client's login name */
	char up_user[USERS_NAME_MAX];    /* the upstream user */
	uint32_t id;                     /* upstream identity: 0 for the shared
					  * upstream_db_url user, else the login's account id */
	enum users_cred cred;
	char clear[USERS_CLEAR_MAX];     /* USERS_CRED_CLEAR */
	uint8_t sha1[USERS_HASH_LEN];    /* USERS_CRED_SHA1 */
	struct user_account *acct;       /* the login's account, counted in */
	int max_connections;
	bool role_set;                   /* the session ran SET ROLE: its privileges
					  * are no longer its user's (no cache) */
	uint32_t epoch;                  /* ident_privilege_epoch() at the login */
};

/* Accounts or privileges may have changed upstream (GRANT, REVOKE, ALTER
 * USER, SET DEFAULT ROLE, ...: grants_invalidate). An upstream connection
 * logged in before that keeps what its login got (an account since locked,
 * a password since changed, the default roles of then): logins made after
 * it must not use it (pool.c). The epoch is one relaxed atomic, any thread. */
void ident_privileges_changed(void);
uint32_t ident_privilege_epoch(void);

enum ident_result { IDENT_OK, IDENT_NOMEM, IDENT_TOO_MANY };

/* Build the identity of a successful login. Takes over l's account
 * reference and counts the session in (IDENT_TOO_MANY when the user has
 * max_connections sessions already: nothing is kept). l's secrets are
 * cleared either way. */
enum ident_result ident_create(struct ident **out, const char *login, struct users_login *l);
/* Count the session out, drop the secrets, free. *id becomes NULL. */
void ident_destroy(struct ident **id);
/* The login was removed or deactivated since (LOAD USERS, SIGHUP). */
bool ident_revoked(const struct ident *id);
/* The account whose revocation closes connections opened for id: NULL for
 * the shared upstream user (it comes from the configuration). */
struct user_account *ident_conn_account(const struct ident *id);

#endif
