/*
 * modules.c: owns the modules (SHOAL VARIABLES, SHOAL USERS, SHOAL CACHES,
 * SHOAL QUERY RULES)
 * and the moves between the three layers for each:
 *   LOAD x TO RUNTIME      main.x -> the live structures (validated first)
 *   SAVE x FROM RUNTIME    the live structures -> main.x
 *   SAVE x TO DISK         main.x -> disk.x (one transaction)
 *   LOAD x FROM DISK       disk.x -> main.x
 * plus the runtime_x tables (rebuilt from the live structures whenever a
 * statement names them), the registry through which other parts of the
 * node provide a module's runtime side, the USERS module's glue to the
 * user store, and the start-up sequence disk -> main -> runtime.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "admin.h"
#include "config/config.h"
#include "internal.h"
#include "base/log.h"
#include "upstream/users.h"

#define SAVEPOINT_NAME "shoal_admin_op"

typedef int (*builtin_load_fn)(sqlite3 *db, const char *table, struct admin_reply *r,
			       char *err, size_t errlen);

struct module {
	const char *name;            /* VARIABLES */
	const char *table;           /* global_variables; runtime_<table> too */
	admin_load_fn load;          /* registered runtime side */
	admin_save_fn save;
	builtin_load_fn load_builtin;
	int (*prepare)(const char *table, char *err, size_t errlen); /* hash passwords */
};

static int users_load(sqlite3 *db, const char *table, struct admin_reply *r, char *err,
		      size_t errlen);
static int users_save(sqlite3 *db, const char *table, char *err, size_t errlen);
static int users_prepare(const char *table, char *err, size_t errlen);
static int vars_prepare(const char *table, char *err, size_t errlen);

/* The modules. A new one: a row here and its tables in schema.c
 * (modules_check() holds the two together); the router and its error
 * messages list the modules from here. */
static struct module modules[] = {
	{ .name = "VARIABLES", .table = "global_variables", .save = vars_fill,
	  .load_builtin = vars_load, .prepare = vars_prepare },
	{ .name = "USERS", .table = "users", .save = users_save, .load_builtin = users_load,
	  .prepare = users_prepare },
	{ .name = "CACHES", .table = "caches" },       /* runtime side: registered (cache/) */
	{ .name = "QUERY RULES", .table = "query_rules" },
};

#define N_MODULES (sizeof modules / sizeof modules[0])

static struct module *find_module(const char *name);

const char *modules_list(void)
{
	static char list[256];

	if (!list[0]) {
		size_t used = 0;

		for (size_t i = 0; i < N_MODULES && used < sizeof list; i++)
			used += (size_t)snprintf(list + used, sizeof list - used, "%sSHOAL %s",
						 i ? ", " : "", modules[i].name);
	}
	return list;
}

static const struct admin_table *module_table(const char *name, const char *module)
{
	const struct admin_table *t = schema_find(name);

	return t && t->module && strcmp(t->module, module) == 0 ? t : NULL;
}

const char *modules_check(void)
{
	static char why[160];
	char runtime[96];

	for (size_t i = 0; i < N_MODULES; i++) {
		snprintf(runtime, sizeof runtime, "runtime_%s", modules[i].table);
		if (!module_table(modules[i].table, modules[i].name) ||
		    !module_table(runtime, modules[i].name)) {
			snprintf(why, sizeof why, "module %s: %s or %s is not its table in schema.c",
				 modules[i].name, modules[i].table, runtime);
			return why;
		}
	}
	for (size_t t = 0; t < admin_n_tables; t++)
		if (admin_tables[t].module && !find_module(admin_tables[t].module)) {
			snprintf(why, sizeof why, "table %s names module %s, which does not exist",
				 admin_tables[t].name, admin_tables[t].module);
			return why;
		}
	return NULL;
}

static struct module *find_module(const char *name)
{
	for (size_t i = 0; i < N_MODULES; i++)
		if (strcasecmp(modules[i].name, name) == 0)
			return &modules[i];
	return NULL;
}

const char *modules_canonical(const char *text)
{
	struct module *m;

	if (!text)
		return NULL;
	if (strncasecmp(text, "SHOAL ", 6) == 0)
		text += 6;
	m = find_module(text);
	return m ? m->name : NULL;
}

/* ----------------------------------------------------- transactions */

/* Run body inside a savepoint; on failure everything it did is undone.
 * 0, or -1 with SQLite's message in err. */
static int atomically(const char *body, char *err, size_t errlen)
{
	if (adb_exec("SAVEPOINT " SAVEPOINT_NAME, err, errlen) < 0)
		return -1;
	if (adb_exec(body, err, errlen) == 0 && adb_exec("RELEASE " SAVEPOINT_NAME, err, errlen) == 0)
		return 0;
	if (!sqlite3_get_autocommit(g_adb.db)) {
		adb_exec("ROLLBACK TO " SAVEPOINT_NAME, NULL, 0);
		adb_exec("RELEASE " SAVEPOINT_NAME, NULL, 0);
	}
	return -1;
}

/* DELETE FROM dst; INSERT INTO dst SELECT FROM src, atomically. */
static int copy_table(const char *dst_schema, const char *src_schema, const char *table,
		      const char *src_table, char *err, size_t errlen)
{
	const struct admin_table *t = schema_find(table);
	char *sql;
	int rc;

	if (!t) {
		snprintf(err, errlen, "no table %s", table);
		return -1;
	}
	sql = sqlite3_mprintf("DELETE FROM %w.%w; INSERT INTO %w.%w (%s) SELECT %s FROM %w.%w",
			      dst_schema, table, dst_schema, table, t->names, t->names,
			      src_schema, src_table);
	if (!sql) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = atomically(sql, err, errlen);
	sqlite3_free(sql);
	return rc;
}

/* ----------------------------------------------------------- runtime_x */

static int refresh_runtime(struct module *m, char *err, size_t errlen)
{
	char table[64];

	snprintf(table, sizeof table, "main.runtime_%s", m->table);
	if (adb_execf(err, errlen, "DELETE FROM %s", table) < 0)
		return -1;
	if (!m->save)
		return 0;
	if (adb_exec("SAVEPOINT " SAVEPOINT_NAME, err, errlen) < 0)
		return -1;
	if (m->save(g_adb.db, table, err, errlen) < 0) {
		adb_exec("ROLLBACK TO " SAVEPOINT_NAME, NULL, 0);
		adb_exec("RELEASE " SAVEPOINT_NAME, NULL, 0);
		return -1;
	}
	return adb_exec("RELEASE " SAVEPOINT_NAME, err, errlen);
}

void modules_refresh_named(const char *sql, size_t len)
{
	char name[64], err[512];

	for (size_t i = 0; i < N_MODULES; i++) {
		snprintf(name, sizeof name, "runtime_%s", modules[i].table);
		if (admin_names_table(sql, len, name) && refresh_runtime(&modules[i], err, sizeof err) < 0)
			log_warn("admin: rebuilding %s: %s", name, err);
	}
}

/* ------------------------------------------------------------ commands */

static int module_load(struct module *m, struct admin_reply *r, char *err, size_t errlen)
{
	char table[64];

	snprintf(table, sizeof table, "main.%s", m->table);
	if (m->prepare && m->prepare(table, err, errlen) < 0)
		return -1;
	if (m->load)
		return m->load(g_adb.db, table, err, errlen);
	if (m->load_builtin)
		return m->load_builtin(g_adb.db, table, r, err, errlen);
	snprintf(err, errlen, "the module has no runtime in this node yet");
	return -1;
}

static int disk_usable(char *err, size_t errlen)
{
	if (!g_adb.disk_in_memory)
		return 0;
	snprintf(err, errlen, "the disk database is not available (%.900s); the configuration "
		 "is kept in memory only", g_adb.disk_problem);
	return -1;
}

static int run_op(struct module *m, enum admin_op op, struct admin_reply *r, char *err,
		  size_t errlen)
{
	char runtime[64];

	switch (op) {
	case AOP_MEM_TO_RUNTIME:
		return module_load(m, r, err, errlen);
	case AOP_RUNTIME_TO_MEM:
		if (!m->save && !m->load) {
			snprintf(err, errlen, "the module has no runtime in this node yet");
			return -1;
		}
		snprintf(runtime, sizeof runtime, "runtime_%s", m->table);
		if (refresh_runtime(m, err, errlen) < 0)
			return -1;
		return copy_table("main", "main", m->table, runtime, err, errlen);
	case AOP_MEM_TO_DISK:
		if (disk_usable(err, errlen) < 0)
			return -1;
		snprintf(runtime, sizeof runtime, "main.%s", m->table);
		if (m->prepare && m->prepare(runtime, err, errlen) < 0)
			return -1;
		if (copy_table("disk", "main", m->table, m->table, err, errlen) == 0)
			return 0;
		snprintf(err + strlen(err), errlen - strlen(err), " (writing %.900s; the disk copy "
			 "and the running configuration are unchanged)", g_adb.disk_path);
		return -1;
	case AOP_DISK_TO_MEM:
		if (disk_usable(err, errlen) < 0)
			return -1;
		return copy_table("main", "disk", m->table, m->table, err, errlen);
	case AOP_NONE:
		break;
	}
	snprintf(err, errlen, "unknown operation");
	return -1;
}

static const char *op_text(enum admin_op op)
{
	switch (op) {
	case AOP_MEM_TO_RUNTIME: return "LOAD SHOAL %s TO RUNTIME";
	case AOP_RUNTIME_TO_MEM: return "SAVE SHOAL %s FROM RUNTIME";
	case AOP_MEM_TO_DISK: return "SAVE SHOAL %s TO DISK";
	case AOP_DISK_TO_MEM: return "LOAD SHOAL %s FROM DISK";
	case AOP_NONE: break;
	}
	return "%s";
}

void modules_run(struct admin_reply *r, const char *module, enum admin_op op)
{
	struct module *m = find_module(module);
	char err[4096] = "", what[64];
	sqlite3_int64 before = sqlite3_total_changes64(g_adb.db);

	if (!m) {
		reply_err(r, ERR_PARSE_ERROR, "42000", "unknown module '%s'", module);
		return;
	}
	snprintf(what, sizeof what, op_text(op), m->name);
	if (run_op(m, op, r, err, sizeof err) < 0) {
		log_warn("admin: %s failed: %s", what, err);
		reply_err(r, ERR_UNKNOWN_ERROR, "HY000", "%s failed: %s", what, err);
		return;
	}
	log_info("admin: %s", what);
	reply_ok(r, op == AOP_MEM_TO_RUNTIME ? 0 :
		 (uint64_t)(sqlite3_total_changes64(g_adb.db) - before), NULL);
}

/* ------------------------------------------------------------ registry */

int admin_register_module(const char *name, admin_load_fn load_to_runtime,
			  admin_save_fn save_from_runtime)
{
	const char *canon = modules_canonical(name);
	struct module *m = canon ? find_module(canon) : NULL;
	char err[512], table[64];

	if (!m || m->load_builtin)
		return -1;
	m->load = load_to_runtime;
	m->save = save_from_runtime;
	snprintf(table, sizeof table, "main.%s", m->table);
	/* registered after start: what main holds goes to the runtime now */
	if (g_adb.db && m->load && adb_count(table) > 0 &&
	    m->load(g_adb.db, table, err, sizeof err) < 0)
		log_warn("admin: LOAD SHOAL %s TO RUNTIME at registration failed: %s", m->name, err);
	return 0;
}

void modules_reset(void)
{
	for (size_t i = 0; i < N_MODULES; i++) {
		if (!modules[i].load_builtin) {
			modules[i].load = NULL;
			modules[i].save = NULL;
		}
	}
}

/* --------------------------------------------------------------- USERS */

#define USERS_COLUMNS "username, password, active, default_schema, max_connections, " \
	"is_monitor, comment"
#define USERS_NCOLS 7

static void entry_from_config(struct users_entry *e, const struct shoal_user *u, bool monitor,
			      const char *comment)
{
	memset(e, 0, sizeof *e);
	snprintf(e->name, sizeof e->name, "%s", u->name);
	e->has_password = u->password[0] != '\0' && users_native_hash(u->password, e->hash) == 0;
	e->has_clear = e->has_password;
	snprintf(e->clear, sizeof e->clear, "%s", u->password);
	e->active = true;
	e->is_monitor = monitor;
	e->max_connections = USERS_DEFAULT_MAX_CONNECTIONS;
	snprintf(e->comment, sizeof e->comment, "%s", comment);
}

static bool seen(const struct users_entry *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i].name, name) == 0)
			return true;
	return false;
}

/* The configuration's login users (the upstream_db_url user, allowed_users,
 * the monitor), the first of a name winning. */
static size_t config_users(const struct shoal_config *c, struct users_entry *list)
{
	size_t n = 0;

	if (c->upstream_user.name[0])
		entry_from_config(&list[n++], &c->upstream_user, false, "from upstream_db_url");
	for (int i = 0; i < c->n_allowed_users; i++)
		if (!seen(list, n, c->allowed_users[i].name))
			entry_from_config(&list[n++], &c->allowed_users[i], false, "from allowed_users");
	if (c->monitor_user.name[0] && !seen(list, n, c->monitor_user.name))
		entry_from_config(&list[n++], &c->monitor_user, true, "from monitor_user");
	return n;
}

/* The configured users' clear passwords, for the rows whose hash is theirs:
 * the tables hold hashes only, the runtime gets the clear password back
 * where the configuration has it (for caching_sha2_password logins and
 * upstream users of any plugin). */
static void attach_clear(struct users_entry *e, const struct users_entry *cfg, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(cfg[i].name, e->name) != 0)
			continue;
		if (e->has_password && cfg[i].has_password && memcmp(cfg[i].hash, e->hash, sizeof e->hash) == 0) {
			e->has_clear = true;
			memcpy(e->clear, cfg[i].clear, sizeof e->clear);
		}
		break;
	}
}

int modules_seed_users_from_config(void)
{
	struct users_entry *list = calloc(SHOAL_MAX_USERS + 2, sizeof *list);
	size_t n;
	int rc;

	if (!list)
		return -1;
	n = config_users(&g_config, list);
	rc = users_replace(list, n);
	users_snapshot_free(list, SHOAL_MAX_USERS + 2);
	return rc;
}

static int insert_user(sqlite3 *db, const char *table, const struct users_entry *e, bool replace)
{
	char hash[USERS_HASH_TEXT_LEN + 1], maxc[16];
	const char *v[USERS_NCOLS];
	char *sql;
	int rc;

	if (e->has_password)
		users_hash_to_text(e->hash, hash);
	else
		hash[0] = '\0';
	snprintf(maxc, sizeof maxc, "%d", e->max_connections);
	v[0] = e->name;
	v[1] = hash;
	v[2] = e->active ? "1" : "0";
	v[3] = e->default_schema;
	v[4] = maxc;
	v[5] = e->is_monitor ? "1" : "0";
	v[6] = e->comment;
	if (!replace)
		return admin_insert_row(db, table, USERS_NCOLS, v);
	sql = sqlite3_mprintf("INSERT OR REPLACE INTO %s (" USERS_COLUMNS ") VALUES "
			      "(%Q, %Q, %s, %Q, %s, %s, %Q)", table, v[0], v[1], v[2], v[3], v[4],
			      v[5], v[6]);
	rc = sql ? adb_exec(sql, NULL, 0) : -1;
	sqlite3_free(sql);
	return rc;
}

static int users_save(sqlite3 *db, const char *table, char *err, size_t errlen)
{
	struct users_entry *list;
	size_t n;
	int rc = 0;

	if (users_snapshot(&list, &n) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = insert_user(db, table, &list[i], false);
	users_snapshot_free(list, n);
	if (rc < 0)
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
	return rc;
}

/* Replace plaintext passwords in table by their hashes, as ProxySQL does. */
static int users_prepare(const char *table, char *err, size_t errlen)
{
	char *sql = sqlite3_mprintf("SELECT username, password FROM %s WHERE password <> ''", table);
	sqlite3_stmt *st = sql ? adb_prepare(sql, err, errlen) : NULL;
	char hash[USERS_HASH_TEXT_LEN + 1];
	int rc = 0;

	sqlite3_free(sql);
	if (!st)
		return -1;
	/* collect first: no updates while the scan runs */
	adb_exec("CREATE TEMP TABLE IF NOT EXISTS shoal_rehash (username, password)", NULL, 0);
	adb_exec("DELETE FROM temp.shoal_rehash", NULL, 0);
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		const char *u = (const char *)sqlite3_column_text(st, 0);
		const char *p = (const char *)sqlite3_column_text(st, 1);
		const char *v[2] = { u, hash };

		if (!u || !p || users_parse_hash(p, NULL))
			continue;
		if (users_native_hash_text(p, hash) < 0 ||
		    admin_insert_row(g_adb.db, "temp.shoal_rehash", 2, v) < 0)
			rc = -1;
	}
	sqlite3_finalize(st);
	if (rc == 0)
		rc = adb_execf(err, errlen, "UPDATE %s SET password = (SELECT h.password FROM "
			       "temp.shoal_rehash h WHERE h.username = %s.username) WHERE username "
			       "IN (SELECT username FROM temp.shoal_rehash)", table, table);
	else
		snprintf(err, errlen, "cannot hash the passwords");
	adb_exec("DELETE FROM temp.shoal_rehash", NULL, 0);
	return rc;
}

/* One row of the users table; cfg (n entries): the configured users. */
static int user_row(sqlite3_stmt *st, struct users_entry *e, const struct users_entry *cfg,
		    size_t n, char *err, size_t errlen)
{
	const char *name = (const char *)sqlite3_column_text(st, 0);
	const char *pw = (const char *)sqlite3_column_text(st, 1);
	const char *schema = (const char *)sqlite3_column_text(st, 3);
	const char *comment = (const char *)sqlite3_column_text(st, 6);
	sqlite3_int64 maxc = sqlite3_column_int64(st, 4);

	memset(e, 0, sizeof *e);
	if (!name || !*name || strlen(name) >= sizeof e->name) {
		snprintf(err, errlen, "bad username '%.64s' (1 to %zu bytes)", name ? name : "",
			 sizeof e->name - 1);
		return -1;
	}
	snprintf(e->name, sizeof e->name, "%s", name);
	if (pw && *pw && !users_parse_hash(pw, e->hash)) {
		snprintf(err, errlen, "user '%s': the password is not a hash", name);
		return -1;
	}
	if (schema && strlen(schema) >= sizeof e->default_schema) {
		snprintf(err, errlen, "user '%s': default_schema is longer than %zu bytes", name,
			 sizeof e->default_schema - 1);
		return -1;
	}
	if (sqlite3_column_type(st, 4) != SQLITE_INTEGER || maxc < 0 || maxc > 1000000) {
		snprintf(err, errlen, "user '%s': max_connections must be an integer 0..1000000", name);
		return -1;
	}
	e->has_password = pw && *pw;
	e->active = sqlite3_column_int(st, 2) != 0;
	snprintf(e->default_schema, sizeof e->default_schema, "%s", schema ? schema : "");
	e->max_connections = (int)maxc;
	e->is_monitor = sqlite3_column_int(st, 5) != 0;
	snprintf(e->comment, sizeof e->comment, "%s", comment ? comment : "");
	attach_clear(e, cfg, n);
	return 0;
}

static int users_load(sqlite3 *db, const char *table, struct admin_reply *r, char *err,
		      size_t errlen)
{
	char *sql = sqlite3_mprintf("SELECT " USERS_COLUMNS " FROM %s ORDER BY rowid", table);
	sqlite3_stmt *st = sql ? adb_prepare(sql, err, errlen) : NULL;
	struct users_entry *list = NULL, *grown, *cfg = calloc(SHOAL_MAX_USERS + 2, sizeof *cfg);
	size_t n = 0, cap = 0, n_cfg = cfg ? config_users(&g_config, cfg) : 0;
	int rc = 0;

	sqlite3_free(sql);
	if (!st || !cfg) {
		if (!cfg)
			snprintf(err, errlen, "out of memory");
		sqlite3_finalize(st);
		free(cfg);
		return -1;
	}
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(list, cap * sizeof *list);
			if (!grown) {
				snprintf(err, errlen, "out of memory");
				rc = -1;
				break;
			}
			list = grown;
		}
		rc = user_row(st, &list[n], cfg, n_cfg, err, errlen);
		n += rc == 0;
	}
	sqlite3_finalize(st);
	if (rc == 0 && users_replace(list, n) < 0) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	users_snapshot_free(list, cap);
	users_snapshot_free(cfg, SHOAL_MAX_USERS + 2);
	return rc;
}

/* SIGHUP or LOAD SHOAL VARIABLES changed allowed_users (old: the list
 * before): the rows of users that left the configuration go, new and
 * changed ones are written (a changed user keeps its default_schema and
 * max_connections), and the users are loaded to the runtime. */
void admin_users_config_changed(const struct shoal_config *old)
{
	struct users_entry *was = calloc(SHOAL_MAX_USERS + 2, sizeof *was);
	struct users_entry *now = calloc(SHOAL_MAX_USERS + 2, sizeof *now);
	size_t n_was = was ? config_users(old, was) : 0, n_now = now ? config_users(&g_config, now) : 0;
	char err[1024];

	if (!was || !now) {
		log_error("users: out of memory; the new allowed_users are not applied");
	} else if (!g_adb.db) {
		if (modules_seed_users_from_config() < 0)
			log_error("users: out of memory; the new allowed_users are not applied");
	} else {
		for (size_t i = 0; i < n_was; i++)
			if (!seen(now, n_now, was[i].name))
				adb_execf(NULL, 0, "DELETE FROM main.users WHERE username = %Q", was[i].name);
		for (size_t i = 0; i < n_now; i++) {
			char hash[USERS_HASH_TEXT_LEN + 1] = "";

			if (now[i].has_password)
				users_hash_to_text(now[i].hash, hash);
			if (adb_execf(NULL, 0, "UPDATE main.users SET password = %Q, active = 1 WHERE "
				      "username = %Q", hash, now[i].name) < 0 ||
			    sqlite3_changes(g_adb.db) == 0)
				insert_user(g_adb.db, "main.users", &now[i], true);
		}
		if (users_prepare("main.users", err, sizeof err) < 0 ||
		    users_load(g_adb.db, "main.users", NULL, err, sizeof err) < 0)
			log_error("users: LOAD SHOAL USERS TO RUNTIME after the configuration changed "
				  "failed: %s", err);
		else
			log_info("users: allowed_users changed: users loaded to the runtime");
	}
	users_snapshot_free(was, SHOAL_MAX_USERS + 2);
	users_snapshot_free(now, SHOAL_MAX_USERS + 2);
}

/* ----------------------------------------------------------- VARIABLES */

/* Hash a plaintext password variable in table, as for users. */
static int hash_variable(const char *table, const char *name, char *err, size_t errlen)
{
	char *sql = sqlite3_mprintf("SELECT variable_value FROM %s WHERE variable_name = %Q",
				    table, name);
	sqlite3_stmt *st = sql ? adb_prepare(sql, err, errlen) : NULL;
	char hash[USERS_HASH_TEXT_LEN + 1] = "";
	bool rehash = false;

	sqlite3_free(sql);
	if (!st)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 0);

		rehash = v && *v && !users_parse_hash(v, NULL) &&
			 users_native_hash_text(v, hash) == 0;
	}
	sqlite3_finalize(st);
	if (!rehash)
		return 0;
	return adb_execf(err, errlen, "UPDATE %s SET variable_value = %Q WHERE variable_name = %Q",
			 table, hash, name);
}

static int vars_prepare(const char *table, char *err, size_t errlen)
{
	if (hash_variable(table, "shoal-admin-password", err, errlen) < 0)
		return -1;
	return hash_variable(table, "shoal-monitor-password", err, errlen);
}

/* ------------------------------------------------------------ start-up */

static void boot_variables(void)
{
	char err[1024];

	if (adb_exec("DELETE FROM main.global_variables", err, sizeof err) < 0 ||
	    vars_fill(g_adb.db, "main.global_variables", err, sizeof err) < 0) {
		log_warn("admin: filling global_variables: %s", err);
		return;
	}
	if (adb_count("disk.global_variables") <= 0)
		return;
	if (vars_boot_from_disk(err, sizeof err) < 0 ||
	    vars_load(g_adb.db, "main.global_variables", NULL, err, sizeof err) < 0) {
		log_warn("admin: the settings saved on disk were not applied: %s", err);
		adb_exec("DELETE FROM main.global_variables", NULL, 0);
		vars_fill(g_adb.db, "main.global_variables", err, sizeof err);
		return;
	}
	log_info("admin: settings loaded from %s", g_adb.disk_path);
}

static void boot_users(void)
{
	struct users_entry *list = calloc(SHOAL_MAX_USERS + 2, sizeof *list);
	char err[1024];
	size_t n = list ? config_users(&g_config, list) : 0;

	adb_exec("DELETE FROM main.users", NULL, 0);
	for (size_t i = 0; i < n; i++)
		insert_user(g_adb.db, "main.users", &list[i], false);
	users_snapshot_free(list, SHOAL_MAX_USERS + 2);
	if (adb_count("disk.users") > 0 &&
	    adb_exec("INSERT OR REPLACE INTO main.users (" USERS_COLUMNS ") SELECT " USERS_COLUMNS
		     " FROM disk.users", err, sizeof err) < 0)
		log_warn("admin: reading disk.users: %s", err);
	if (users_prepare("main.users", err, sizeof err) < 0 ||
	    users_load(g_adb.db, "main.users", NULL, err, sizeof err) < 0)
		log_warn("admin: LOAD SHOAL USERS TO RUNTIME at start failed: %s", err);
}

/* A registered module (CACHES, QUERY RULES): disk.x into main.x, then to
 * the runtime when the module has one. */
static void boot_module(const char *name)
{
	struct module *m = find_module(name);
	char err[1024], disk[64], main_table[64];

	snprintf(disk, sizeof disk, "disk.%s", m->table);
	snprintf(main_table, sizeof main_table, "main.%s", m->table);
	if (adb_count(disk) > 0 &&
	    copy_table("main", "disk", m->table, m->table, err, sizeof err) < 0) {
		log_warn("admin: reading %s: %s", disk, err);
		return;
	}
	if (m->load && adb_count(main_table) > 0 &&
	    m->load(g_adb.db, main_table, err, sizeof err) < 0)
		log_warn("admin: LOAD SHOAL %s TO RUNTIME at start failed: %s", m->name, err);
}

void modules_boot(void)
{
	boot_variables();
	boot_users();
	boot_module("CACHES");
	boot_module("QUERY RULES");
}
