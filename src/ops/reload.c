/*
 * reload.c: the SIGHUP reload (see reload.h). It owns the list of settings
 * that may change at runtime; every one of them is read where it is used,
 * never copied at start. Values are compared as config_get_text() shows
 * them; secrets, which it shows as "***", are compared directly.
 */
#include "ops/reload.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin.h"
#include "config/config.h"
#include "base/log.h"
#include "config/runtime.h"

#define VALUE_MAX 4096

struct reload {
	const struct shoal_config *next;
	char *was, *now;
	int applied;
};

static bool users_differ(const struct shoal_config *a, const struct shoal_config *b)
{
	if (a->n_allowed_users != b->n_allowed_users)
		return true;
	for (int i = 0; i < a->n_allowed_users; i++)
		if (strcmp(a->allowed_users[i].name, b->allowed_users[i].name) != 0 ||
		    strcmp(a->allowed_users[i].password, b->allowed_users[i].password) != 0)
			return true;
	return false;
}

/* Do the secret parts of key differ (they are shown as "***")? */
static bool secret_differs(const char *key, const struct shoal_config *a,
			   const struct shoal_config *b)
{
	if (strcmp(key, "upstream_db_url") == 0)
		return strcmp(a->upstream_url, b->upstream_url) != 0;
	if (strcmp(key, "monitor_password") == 0)
		return strcmp(a->monitor_user.password, b->monitor_user.password) != 0;
	if (strcmp(key, "admin_password") == 0)
		return strcmp(a->admin_user.password, b->admin_user.password) != 0;
	if (strcmp(key, "allowed_users") == 0)
		return users_differ(a, b);
	return false;
}

/* SIGHUP: allowed_users changed. Only the main thread reads the list (the
 * logins read the user store), so it is copied, and the users table and
 * store follow (admin_users_config_changed). Not an admin runtime variable:
 * the tables show its passwords as "***", which must never be applied. */
static void apply_users(const struct shoal_config *src)
{
	struct shoal_config *old = malloc(sizeof *old);

	if (!old) {
		log_error("allowed_users: out of memory; not applied");
		return;
	}
	memcpy(old, &g_config, sizeof *old);
	memcpy(g_config.allowed_users, src->allowed_users, sizeof g_config.allowed_users);
	g_config.n_allowed_users = src->n_allowed_users;
	admin_users_config_changed(old);
	explicit_bzero(old, sizeof *old);
	free(old);
}

static int compare_one(const char *key, void *arg)
{
	struct reload *r = arg;
	bool secret = config_is_secret(key);

	if (config_get_text(&g_config, key, r->was, VALUE_MAX) < 0 ||
	    config_get_text(r->next, key, r->now, VALUE_MAX) < 0)
		return 0;
	if (strcmp(r->was, r->now) == 0 && !(secret && secret_differs(key, &g_config, r->next)))
		return 0;
	if (strcmp(key, "allowed_users") == 0) {
		log_info("SIGHUP: allowed_users = %s (was %s): applied", r->now, r->was);
		apply_users(r->next);
		r->applied++;
	} else if (runtime_setting(key)) {
		log_info("SIGHUP: %s = %s (was %s): applied", key, r->now, r->was);
		runtime_apply(key, r->next);
		r->applied++;
	} else if (secret) {
		log_warn("SIGHUP: %s changed: needs a restart, not applied", key);
	} else {
		log_warn("SIGHUP: %s = %s (running with %s): needs a restart, not applied", key,
			 r->now, r->was);
	}
	return 0;
}

int config_reload(int argc, char **argv)
{
	struct shoal_config *next = malloc(sizeof(*next));
	struct reload r = { next, malloc(VALUE_MAX), malloc(VALUE_MAX), 0 };
	int rc = -1;

	if (!next || !r.was || !r.now) {
		log_error("SIGHUP: out of memory; nothing reloaded");
	} else if (config_load(next, argc, argv, NULL) != 0) {
		log_error("SIGHUP: the configuration has errors (see above); nothing changed");
	} else {
		config_each(compare_one, &r);
		log_info("SIGHUP: configuration reloaded from %s: %d setting%s applied",
			 next->config_file, r.applied, r.applied == 1 ? "" : "s");
		rc = r.applied;
	}
	free(next);
	free(r.was);
	free(r.now);
	return rc;
}
