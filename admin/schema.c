/*
 * schema.c: owns the admin's table definitions (ProxySQL's shapes, with
 * Shoal's modules) and their creation in the main, disk and stats schemas.
 * admin_tables is the one list of them (see internal.h); docs/admin.md
 * describes every table, which tests/unit/test_admin.c checks.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

#define VARS_COLS \
	"variable_name VARCHAR NOT NULL PRIMARY KEY, variable_value VARCHAR NOT NULL"
#define VARS_NAMES "variable_name, variable_value"

/* ProxySQL's mysql_users, cut down to what a cache node uses (the columns
 * keep ProxySQL's names, defaults and order), plus is_monitor */
#define USERS_COL_DEFAULT_SCHEMA "default_schema VARCHAR NOT NULL DEFAULT ''"
#define USERS_COL_MAX_CONNECTIONS \
	"max_connections INT CHECK (max_connections >= 0) NOT NULL DEFAULT 10000"
#define USERS_COLS \
	"username VARCHAR NOT NULL PRIMARY KEY, " \
	"password VARCHAR NOT NULL DEFAULT '', " \
	"active INT CHECK (active IN (0,1)) NOT NULL DEFAULT 1, " \
	USERS_COL_DEFAULT_SCHEMA ", " \
	USERS_COL_MAX_CONNECTIONS ", " \
	"is_monitor INT CHECK (is_monitor IN (0,1)) NOT NULL DEFAULT 0, " \
	"comment VARCHAR NOT NULL DEFAULT ''"
#define USERS_NAMES "username, password, active, default_schema, max_connections, is_monitor, comment"

#define CACHES_COLS \
	"query_id VARCHAR NOT NULL PRIMARY KEY, " \
	"name VARCHAR NOT NULL DEFAULT '', " \
	"query VARCHAR NOT NULL, " \
	"ttl_ms INT CHECK (ttl_ms IS NULL OR ttl_ms >= 0), " \
	"refresh_ms INT CHECK (refresh_ms IS NULL OR refresh_ms >= 0), " \
	"coalesce_ms INT CHECK (coalesce_ms IS NULL OR coalesce_ms >= 0), " \
	"always INT CHECK (always IN (0,1)) NOT NULL DEFAULT 0, " \
	"policy VARCHAR NOT NULL DEFAULT 'default' CHECK (policy IN ('default','until_write')), " \
	"comment VARCHAR NOT NULL DEFAULT ''"
#define CACHES_NAMES "query_id, name, query, ttl_ms, refresh_ms, coalesce_ms, always, policy, comment"

#define RULES_COLS \
	"rule_id INTEGER PRIMARY KEY NOT NULL, " \
	"active INT CHECK (active IN (0,1)) NOT NULL DEFAULT 1, " \
	"username VARCHAR, " \
	"schemaname VARCHAR, " \
	"digest VARCHAR, " \
	"match_digest VARCHAR, " \
	"cache_ttl INT CHECK (cache_ttl IS NULL OR cache_ttl >= 0), " \
	"cache_empty_result INT CHECK (cache_empty_result IS NULL OR cache_empty_result IN (0,1)), " \
	"apply INT CHECK (apply IN (0,1)) NOT NULL DEFAULT 1, " \
	"comment VARCHAR"
#define RULES_NAMES \
	"rule_id, active, username, schemaname, digest, match_digest, cache_ttl, " \
	"cache_empty_result, apply, comment"

#define DIGEST_COLS \
	"schemaname VARCHAR NOT NULL, username VARCHAR NOT NULL, " \
	"client_address VARCHAR NOT NULL, digest VARCHAR NOT NULL, " \
	"digest_text VARCHAR NOT NULL, count_star INTEGER NOT NULL, " \
	"first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL, " \
	"sum_time INTEGER NOT NULL, min_time INTEGER NOT NULL, max_time INTEGER NOT NULL, " \
	"sum_rows_affected INTEGER NOT NULL, sum_rows_sent INTEGER NOT NULL, " \
	"cache_hits INTEGER NOT NULL, cache_misses INTEGER NOT NULL, " \
	"cache_status VARCHAR NOT NULL, upstream_time_saved_us INTEGER NOT NULL, " \
	"errors INTEGER NOT NULL, node_errors INTEGER NOT NULL"
#define DIGEST_NAMES \
	"schemaname, username, client_address, digest, digest_text, count_star, " \
	"first_seen, last_seen, sum_time, min_time, max_time, sum_rows_affected, " \
	"sum_rows_sent, cache_hits, cache_misses, cache_status, upstream_time_saved_us, errors, " \
	"node_errors"

const struct admin_table admin_tables[] = {
	{ "global_variables", VARS_COLS, VARS_NAMES, IN_MAIN | IN_DISK, "VARIABLES" },
	{ "runtime_global_variables", VARS_COLS, VARS_NAMES, IN_MAIN, "VARIABLES" },
	{ "users", USERS_COLS, USERS_NAMES, IN_MAIN | IN_DISK, "USERS" },
	{ "runtime_users", USERS_COLS, USERS_NAMES, IN_MAIN, "USERS" },
	{ "caches", CACHES_COLS, CACHES_NAMES, IN_MAIN | IN_DISK, "CACHES" },
	{ "runtime_caches", CACHES_COLS, CACHES_NAMES, IN_MAIN, "CACHES" },
	{ "query_rules", RULES_COLS, RULES_NAMES, IN_MAIN | IN_DISK, "QUERY RULES" },
	{ "runtime_query_rules", RULES_COLS, RULES_NAMES, IN_MAIN, "QUERY RULES" },
	{ "stats_shoal_global",
	  "Variable_Name VARCHAR NOT NULL PRIMARY KEY, Variable_Value VARCHAR NOT NULL",
	  "Variable_Name, Variable_Value", IN_STATS, NULL },
	{ "stats_shoal_query_digest", DIGEST_COLS, DIGEST_NAMES, IN_STATS, NULL },
	{ "stats_shoal_query_digest_reset", DIGEST_COLS, DIGEST_NAMES, IN_STATS, NULL },
	{ "stats_shoal_caches",
	  "query_id VARCHAR NOT NULL, name VARCHAR NOT NULL DEFAULT '', "
	  "entries INTEGER NOT NULL DEFAULT 0, bytes INTEGER NOT NULL DEFAULT 0, "
	  "hits INTEGER NOT NULL DEFAULT 0, misses INTEGER NOT NULL DEFAULT 0, "
	  "refreshes INTEGER NOT NULL DEFAULT 0, coalesced_waits INTEGER NOT NULL DEFAULT 0",
	  "query_id, name, entries, bytes, hits, misses, refreshes, coalesced_waits", IN_STATS, NULL },
	{ "stats_shoal_entry_constraints",
	  "query VARCHAR NOT NULL, tables VARCHAR NOT NULL, constraints VARCHAR NOT NULL, "
	  "hits INTEGER NOT NULL DEFAULT 0",
	  "query, tables, constraints, hits", IN_STATS, NULL },
	{ "stats_shoal_connection_pool",
	  "srv_host VARCHAR NOT NULL, srv_port INT NOT NULL, status VARCHAR NOT NULL, "
	  "used INT NOT NULL, free INT NOT NULL, errors INT NOT NULL, "
	  "queries INT NOT NULL, latency_us INT NOT NULL",
	  "srv_host, srv_port, status, used, free, errors, queries, latency_us", IN_STATS, NULL },
};

const size_t admin_n_tables = sizeof admin_tables / sizeof admin_tables[0];
_Static_assert(sizeof admin_tables / sizeof admin_tables[0] <= ADMIN_MAX_TABLES,
	       "ADMIN_MAX_TABLES: refresh.c keeps one provider per table");

static int create_in(sqlite3 *db, const char *schema, const struct admin_table *t,
		     char *err, size_t errlen)
{
	char *sql = sqlite3_mprintf("CREATE TABLE IF NOT EXISTS %w.%w (%s)", schema, t->name,
				    t->columns);
	char *msg = NULL;
	int rc;

	if (!sql) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "creating %s.%s: %s", schema, t->name,
			 msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* Columns added since a table was first written to disk: a shoal.db from an
 * older node gets them (with their defaults) when it is opened. */
static const struct { const char *table, *column, *definition; } added_columns[] = {
	{ "users", "default_schema", USERS_COL_DEFAULT_SCHEMA },
	{ "users", "max_connections", USERS_COL_MAX_CONNECTIONS },
};

static bool has_column(sqlite3 *db, const char *schema, const char *table, const char *column)
{
	char *sql = sqlite3_mprintf("SELECT 1 FROM pragma_table_info(%Q, %Q) WHERE name = %Q",
				    table, schema, column);
	sqlite3_stmt *st = NULL;
	bool found = false;

	if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK)
		found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return found;
}

static int upgrade_disk(sqlite3 *db, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof added_columns / sizeof added_columns[0]; i++) {
		char *sql, *msg = NULL;
		int rc;

		if (has_column(db, "disk", added_columns[i].table, added_columns[i].column))
			continue;
		sql = sqlite3_mprintf("ALTER TABLE disk.%w ADD COLUMN %s", added_columns[i].table,
				      added_columns[i].definition);
		rc = sql ? sqlite3_exec(db, sql, NULL, NULL, &msg) : SQLITE_NOMEM;
		sqlite3_free(sql);
		if (rc != SQLITE_OK) {
			snprintf(err, errlen, "upgrading disk.%s: %s", added_columns[i].table,
				 msg ? msg : sqlite3_errstr(rc));
			sqlite3_free(msg);
			return -1;
		}
	}
	return 0;
}

int schema_create(sqlite3 *db, char *err, size_t errlen)
{
	static const struct { unsigned bit; const char *schema; } where[] = {
		{ IN_MAIN, "main" }, { IN_DISK, "disk" }, { IN_STATS, "stats" },
	};

	for (size_t i = 0; i < admin_n_tables; i++)
		for (size_t w = 0; w < sizeof where / sizeof where[0]; w++)
			if ((admin_tables[i].where & where[w].bit) &&
			    create_in(db, where[w].schema, &admin_tables[i], err, errlen) < 0)
				return -1;
	return upgrade_disk(db, err, errlen);
}

const struct admin_table *schema_find(const char *name)
{
	for (size_t i = 0; i < admin_n_tables; i++)
		if (strcasecmp(admin_tables[i].name, name) == 0)
			return &admin_tables[i];
	return NULL;
}

bool schema_is_db(const char *name, char *canon)
{
	static const char *const dbs[] = { "main", "disk", "stats" };

	for (size_t i = 0; i < sizeof dbs / sizeof dbs[0]; i++) {
		if (strcasecmp(name, dbs[i]) == 0) {
			if (canon)
				snprintf(canon, ADMIN_DB_NAME_MAX, "%s", dbs[i]);
			return true;
		}
	}
	return false;
}
