/*
 * ident.c: a session's upstream identity (see ident.h): who its commands run
 * as upstream and with which credential.
 */
#include "upstream/ident.h"

#include <openssl/crypto.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

/* Bumped when accounts or privileges may have changed upstream (ident.h).
 * Relaxed: a login that reads the old value a moment longer is one made
 * just before the change. */
static atomic_uint privilege_epoch = 1;

void ident_privileges_changed(void)
{
	atomic_fetch_add_explicit(&privilege_epoch, 1, memory_order_relaxed);
}

uint32_t ident_privilege_epoch(void)
{
	return atomic_load_explicit(&privilege_epoch, memory_order_relaxed);
}

/* shared_upstream_user: the login acts as the upstream_db_url user. */
static void act_as_url_user(struct ident *id)
{
	const struct shoal_user *u = &g_config.upstream_user;

	snprintf(id->up_user, sizeof id->up_user, "%s", u->name);
	id->id = 0;
	id->cred = u->password[0] ? USERS_CRED_CLEAR : USERS_CRED_NONE;
	snprintf(id->clear, sizeof id->clear, "%s", u->password);
	OPENSSL_cleanse(id->sha1, sizeof id->sha1);
}

enum ident_result ident_create(struct ident **out, const char *login, struct users_login *l)
{
	struct ident *id;

	*out = NULL;
	if (!l->acct || !users_account_enter(l->acct, l->max_connections)) {
		enum ident_result r = l->acct ? IDENT_TOO_MANY : IDENT_NOMEM;

		users_login_clear_secrets(l);
		return r;
	}
	id = calloc(1, sizeof *id);
	if (!id) {
		users_account_leave(l->acct);
		users_login_clear_secrets(l);
		return IDENT_NOMEM;
	}
	snprintf(id->login, sizeof id->login, "%s", login);
	snprintf(id->up_user, sizeof id->up_user, "%s", login);
	id->acct = l->acct;
	l->acct = NULL;           /* taken over */
	id->id = id->acct->id;
	id->max_connections = l->max_connections;
	id->cred = l->cred;
	id->epoch = ident_privilege_epoch();
	memcpy(id->clear, l->clear, sizeof id->clear);
	memcpy(id->sha1, l->sha1, sizeof id->sha1);
	if (g_config.shared_upstream_user && !l->is_monitor)
		act_as_url_user(id);
	users_login_clear_secrets(l);
	*out = id;
	return IDENT_OK;
}

void ident_destroy(struct ident **pid)
{
	struct ident *id = *pid;

	if (!id)
		return;
	users_account_leave(id->acct);
	users_account_put(id->acct);
	OPENSSL_cleanse(id, sizeof *id);
	free(id);
	*pid = NULL;
}

bool ident_revoked(const struct ident *id)
{
	return id && users_account_revoked(id->acct);
}

struct user_account *ident_conn_account(const struct ident *id)
{
	return id && id->id != 0 ? id->acct : NULL;
}

