/*
 * variables.c: owns the SHOAL VARIABLES module: the mapping between the
 * node's settings (config.c's table, through config_each / config_get_text
 * / config_set_text) and the rows of global_variables, named
 * "shoal-<key with '_' as '-'>"; which settings can change while the node
 * runs and how they are applied; SET shoal-x = v; and the admin login's
 * credentials (shoal-admin-user / shoal-admin-password).
 *
 * Passwords never appear in the tables in plaintext: shoal-admin-password
 * and shoal-monitor-password show the mysql_native_password hash
 * ("*" + 40 hex digits), the upstream URL and allowed_users show "***" for
 * their passwords. The admin password may be set as a hash; the admin login
 * then checks tokens against the hash.
 *
 * Runtime changes are stored into g_config with relaxed atomic stores (the
 * workers read those fields without locks); string settings that change at
 * runtime are the admin's own and are read on the main thread only.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/auth.h"
#include "config/config.h"
#include "internal.h"
#include "base/log.h"
#include "config/runtime.h"
#include "upstream/users.h"

#define VALUE_MAX 16384
#define PREFIX "shoal-"
#define PREFIX_LEN 6


struct change {
	char key[64];
	char name[72];
};

/* ---------------------------------------------------------------- names */

int vars_name_to_key(const char *name, char *key, size_t cap)
{
	size_t n;

	if (!name || strncasecmp(name, PREFIX, PREFIX_LEN) != 0)
		return -1;
	name += PREFIX_LEN;
	n = strlen(name);
	if (n == 0 || n >= cap)
		return -1;
	for (size_t i = 0; i <= n; i++)
		key[i] = name[i] == '-' ? '_' : (char)tolower((unsigned char)name[i]);
	return config_has_key(key) ? 0 : -1;
}

void vars_key_to_name(const char *key, char *name, size_t cap)
{
	size_t i;

	snprintf(name, cap, PREFIX "%s", key);
	for (i = PREFIX_LEN; name[i]; i++)
		if (name[i] == '_')
			name[i] = '-';
}

bool vars_is_runtime(const char *key)
{
	return runtime_setting(key);
}

static bool is_password_key(const char *key)
{
	return strcmp(key, "admin_password") == 0 || strcmp(key, "monitor_password") == 0;
}

static const char *password_of(const struct shoal_config *c, const char *key)
{
	return strcmp(key, "admin_password") == 0 ? c->admin_user.password
						  : c->monitor_user.password;
}

/* A password as shown: its hash ("" for none; a hash stays itself). */
static int password_text(const char *pw, char *out, size_t cap)
{
	uint8_t h[USERS_HASH_LEN];
	char text[USERS_HASH_TEXT_LEN + 1];

	if (users_parse_hash(pw, h))
		users_hash_to_text(h, text);
	else if (users_native_hash_text(pw, text) < 0)
		return -1;
	snprintf(out, cap, "%s", text);
	return 0;
}

/* The value of key in c as the tables show it. */
static int display_of(const struct shoal_config *c, const char *key, char *out, size_t cap)
{
	if (is_password_key(key))
		return password_text(password_of(c, key), out, cap);
	return config_get_text(c, key, out, cap);
}

int vars_display(const char *key, char *out, size_t cap)
{
	return display_of(&g_config, key, out, cap);
}

static bool same_value(const char *key, const char *a, const char *b)
{
	return is_password_key(key) ? strcasecmp(a, b) == 0 : strcmp(a, b) == 0;
}

/* ------------------------------------------------------------ fill */

struct fill_ctx {
	sqlite3 *db;
	const char *table;
	char *value;
};

static int fill_one(const char *key, void *arg)
{
	struct fill_ctx *f = arg;
	char name[96];
	const char *v[2] = { name, f->value };

	vars_key_to_name(key, name, sizeof name);
	if (vars_display(key, f->value, VALUE_MAX) < 0)
		return -1;
	return admin_insert_row(f->db, f->table, 2, v);
}

int vars_fill(sqlite3 *db, const char *table, char *err, size_t errlen)
{
	struct fill_ctx f = { db, table, malloc(VALUE_MAX) };
	int rc;

	if (!f.value) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = config_each(fill_one, &f);
	free(f.value);
	if (rc)
		snprintf(err, errlen, "cannot list the settings: %s", sqlite3_errmsg(db));
	return rc ? -1 : 0;
}

/* ------------------------------------------------------------- apply */

/* Parse value for key into scratch; normalised text (as the tables show it)
 * into norm. 0, or -1 with config's message in err. */
static int parse_into(struct shoal_config *scratch, const char *key, const char *value,
		      char *norm, size_t normcap, char *err, size_t errlen)
{
	char hash[USERS_HASH_TEXT_LEN + 1];

	if (is_password_key(key) && *value && !users_parse_hash(value, NULL)) {
		if (users_native_hash_text(value, hash) < 0) {
			snprintf(err, errlen, "cannot hash the password");
			return -1;
		}
		value = hash;
	}
	if (config_set_text(scratch, key, value, err, errlen) < 0)
		return -1;
	return display_of(scratch, key, norm, normcap);
}

/* Check one row; a changed setting is parsed into scratch and recorded. */
static int check_row(struct shoal_config *scratch, const char *name, const char *value,
		     struct change *ch, int *n, char *buf, char *err, size_t errlen)
{
	char key[64], msg[1024];

	if (vars_name_to_key(name, key, sizeof key) < 0) {
		snprintf(err, errlen, "unknown variable '%s'", name);
		return -1;
	}
	if (vars_display(key, buf, VALUE_MAX) < 0) {
		snprintf(err, errlen, "cannot read %s", name);
		return -1;
	}
	if (same_value(key, value, buf))
		return 0;
	if (parse_into(scratch, key, value, buf, VALUE_MAX, msg, sizeof msg) < 0) {
		snprintf(err, errlen, "%s: %s", name, msg);
		return -1;
	}
	snprintf(ch[*n].key, sizeof ch[*n].key, "%s", key);
	vars_key_to_name(key, ch[*n].name, sizeof ch[*n].name);
	(*n)++;
	return 0;
}

/* Validate every row of table into scratch. Returns the changes, or -1. */
static int check_rows(sqlite3 *db, const char *table, struct shoal_config *scratch,
		      struct change *ch, int max, char *err, size_t errlen)
{
	char *sql = sqlite3_mprintf("SELECT variable_name, variable_value FROM %s "
				    "ORDER BY variable_name", table);
	sqlite3_stmt *st = sql ? adb_prepare(sql, err, errlen) : NULL;
	char *buf = malloc(VALUE_MAX);
	int n = 0, rc = 0;

	sqlite3_free(sql);
	if (!st || !buf) {
		if (!buf)
			snprintf(err, errlen, "out of memory");
		sqlite3_finalize(st);
		free(buf);
		return -1;
	}
	while (rc == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *value = (const char *)sqlite3_column_text(st, 1);

		if (n == max) {
			snprintf(err, errlen, "more than %d changed variables", max);
			rc = -1;
			break;
		}
		rc = check_row(scratch, name ? name : "", value ? value : "", ch, &n, buf, err, errlen);
	}
	if (rc != SQLITE_DONE && rc != -1)
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	free(buf);
	return rc == SQLITE_DONE ? n : -1;
}

/* Show the normalised values of the changed rows in table. */
static void rewrite_rows(const char *table, const struct shoal_config *scratch,
			 const struct change *ch, int n)
{
	char *buf = malloc(VALUE_MAX);

	for (int i = 0; buf && i < n; i++)
		if (display_of(scratch, ch[i].key, buf, VALUE_MAX) == 0)
			adb_execf(NULL, 0, "UPDATE %s SET variable_value = %Q WHERE variable_name = %Q",
				  table, buf, ch[i].name);
	free(buf);
}

int vars_load(sqlite3 *db, const char *table, struct admin_reply *r, char *err, size_t errlen)
{
	struct shoal_config *scratch = malloc(sizeof *scratch);
	struct change ch[128];
	int n, applied = 0;

	if (!scratch) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	*scratch = g_config;
	n = check_rows(db, table, scratch, ch, (int)(sizeof ch / sizeof ch[0]), err, errlen);
	if (n < 0) {
		free(scratch);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (runtime_apply(ch[i].key, scratch)) {
			applied++;
			log_info("admin: %s changed at runtime", ch[i].name);
		} else if (r) {
			reply_warn(r, WARN_NEEDS_RESTART, "%s is read at start only: saved, not "
				   "applied (needs a restart with the new value in the config file, "
				   "environment or flags)", ch[i].name);
		} else {
			log_warn("admin: %s is read at start only: not applied", ch[i].name);
		}
	}
	rewrite_rows(table, scratch, ch, n);
	free(scratch);
	return 0;
}

/* ----------------------------------------------------------------- SET */

void vars_set(struct admin_reply *r, const char *name, const char *value)
{
	struct shoal_config *scratch = malloc(sizeof *scratch);
	char key[64], msg[1024], *norm = malloc(VALUE_MAX);
	const char *v[2] = { name, norm };

	if (!scratch || !norm) {
		reply_err(r, ERR_UNKNOWN_ERROR, "HY000", "out of memory");
	} else if (vars_name_to_key(name, key, sizeof key) < 0) {
		reply_err(r, ERR_UNKNOWN_SYSTEM_VARIABLE, "HY000", "Unknown system variable '%s'",
			  name);
	} else {
		*scratch = g_config;
		if (parse_into(scratch, key, value, norm, VALUE_MAX, msg, sizeof msg) < 0)
			reply_err(r, ERR_WRONG_VALUE_FOR_VAR, "42000", "%s: %s", name, msg);
		else if (adb_execf(msg, sizeof msg, "DELETE FROM main.global_variables WHERE "
				   "variable_name = %Q", name) < 0 ||
			 admin_insert_row(g_adb.db, "main.global_variables", 2, v) < 0)
			reply_err(r, ERR_UNKNOWN_ERROR, "HY000", "SET %s: %s", name,
				  sqlite3_errmsg(g_adb.db));
		else
			reply_ok(r, 1, NULL);
	}
	free(scratch);
	free(norm);
}

/* ------------------------------------------------------------ start-up */

static void boot_row(const char *name, const char *value, char *buf)
{
	char key[64];

	if (vars_name_to_key(name, key, sizeof key) < 0) {
		log_warn("admin: ignoring unknown variable '%s' in the disk database", name);
		return;
	}
	if (vars_is_runtime(key)) {
		adb_execf(NULL, 0, "UPDATE main.global_variables SET variable_value = %Q "
			  "WHERE variable_name = %Q", value, name);
		return;
	}
	if (vars_display(key, buf, VALUE_MAX) == 0 && !same_value(key, value, buf))
		log_info("admin: %s differs in the disk database, but it is read at start only: "
			 "the node uses its configured value", name);
}

int vars_boot_from_disk(char *err, size_t errlen)
{
	sqlite3_stmt *st = adb_prepare("SELECT variable_name, variable_value FROM "
				       "disk.global_variables", err, errlen);
	char *buf = malloc(VALUE_MAX);

	if (!st || !buf) {
		sqlite3_finalize(st);
		free(buf);
		if (st)
			snprintf(err, errlen, "out of memory");
		return -1;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *value = (const char *)sqlite3_column_text(st, 1);

		if (name && value)
			boot_row(name, value, buf);
	}
	sqlite3_finalize(st);
	free(buf);
	return 0;
}

/* ---------------------------------------------------------- admin login */

bool vars_admin_is_default(void)
{
	const char *pw = g_config.admin_user.password;
	char hash[USERS_HASH_TEXT_LEN + 1];

	if (strcmp(g_config.admin_user.name, "admin") != 0)
		return false;
	if (strcmp(pw, "admin") == 0)
		return true;
	return users_native_hash_text("admin", hash) == 0 && strcasecmp(pw, hash) == 0;
}

bool vars_admin_check(const char *user, const uint8_t nonce[20], const uint8_t *tok, size_t len)
{
	const char *pw = g_config.admin_user.password;
	uint8_t h[USERS_HASH_LEN];
	bool good;

	if (users_parse_hash(pw, h))
		good = users_native_check_hash(h, nonce, tok, len);
	else
		good = auth_native_check(pw, nonce, tok, len);
	return good && strcmp(user, g_config.admin_user.name) == 0;
}
