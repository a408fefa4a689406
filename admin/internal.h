/*
 * internal.h: declarations shared by the admin files (not for the rest of
 * the node, which uses admin.h and users.h):
 *   server.c     listener and sessions (the MySQL protocol)
 *   router.c     statement parsing and dispatch of one COM_QUERY
 *   names.c      admin_names_table (a pure string helper, used by
 *                router.c, modules.c, refresh.c)
 *   reply.c      OK/ERR/warnings/result sets of one reply; SQLite to rows
 *   db.c         the SQLite handle: open, ATTACH disk and stats, helpers
 *   schema.c     the table definitions
 *   modules.c    LOAD/SAVE between layers, the module registry, start-up
 *   variables.c  the VARIABLES module: global_variables <-> the settings
 *   refresh.c    the stats_* tables and their providers
 *   users.c      the runtime user store (users.h)
 * Everything here runs on the main thread.
 */
#ifndef SHOAL_ADMIN_INTERNAL_H
#define SHOAL_ADMIN_INTERNAL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admin.h"
#include "proto/packet.h"

#define ADMIN_VERSION "8.0.0-shoal-admin"
#define ADMIN_VERSION_COMMENT "Shoal admin"
#define ADMIN_MAX_WARNINGS 32
#define ADMIN_WARN_LEN 320
#define ADMIN_DB_NAME_MAX 16

/* MySQL error codes of the admin (beyond those in packet.h, where
 * ERR_UNKNOWN_ERROR 1105 is). */
#define ERR_BAD_DB_ERROR         1049   /* 42000 */
#define ERR_QUERY_EMPTY          1065   /* 42000 */
#define ERR_PARSE_ERROR          1064   /* 42000 */
#define ERR_UNKNOWN_SYSTEM_VARIABLE 1193 /* HY000 */
#define ERR_WRONG_VALUE_FOR_VAR  1231   /* 42000 */
#define ERR_NO_SUCH_TABLE        1146   /* 42S02 */
#define WARN_NEEDS_RESTART       ERR_UNKNOWN_ERROR /* packet.h; as a warning */

/* ------------------------------------------------------------- replies */

struct admin_warnings {
	int n;                 /* kept, at most ADMIN_MAX_WARNINGS */
	int total;             /* raised by the last statement */
	uint16_t code[ADMIN_MAX_WARNINGS];
	char msg[ADMIN_MAX_WARNINGS][ADMIN_WARN_LEN];
};

/* The answer to one COM_QUERY, built into the session's output. */
struct admin_reply {
	struct pbuf *out;
	uint8_t seq;                 /* id of the next packet */
	uint32_t caps;
	uint16_t more;               /* ST_MORE_RESULTS_EXISTS while more follow */
	bool failed;                 /* an ERR was written: stop */
	struct admin_warnings *warn; /* the session's SHOW WARNINGS list */
	char *db;                    /* the session's schema (ADMIN_DB_NAME_MAX) */
	const char *user;
	const char *peer;
	uint32_t conn_id;
	int admin_sessions;          /* admin sessions open (stats_shoal_global) */
};

uint16_t reply_status(const struct admin_reply *r);
void reply_ok(struct admin_reply *r, uint64_t affected, const char *info);
void reply_err(struct admin_reply *r, uint16_t code, const char *state, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void reply_warn(struct admin_reply *r, uint16_t code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void reply_clear_warnings(struct admin_reply *r);
/* A result set of text columns (see rs_put_table). */
void reply_table(struct admin_reply *r, unsigned ncols, const char *const *names,
		 size_t nrows, const char *const *cells);
/* An SQLite error as a MySQL error: 1064 (42000) for syntax errors, else
 * 1105 (HY000). prefix (may be NULL) goes before SQLite's message. */
void reply_sqlite_err(struct admin_reply *r, int rc, const char *msg, const char *prefix);
/* Step a prepared statement to its end and reply: a result set when it has
 * columns, else OK with the rows it changed. Finalizes st. */
void reply_run_stmt(struct admin_reply *r, sqlite3 *db, sqlite3_stmt *st);
/* Run sql (one statement, may have ? parameters bound from params) and reply. */
void reply_query(struct admin_reply *r, const char *sql, int nparams, const char *const *params);

/* ---------------------------------------------------------------- db.c */

struct admin_db {
	sqlite3 *db;
	bool disk_in_memory;          /* data_dir unusable: disk is in memory */
	char disk_path[1100];
	char disk_problem[2048];       /* why disk_in_memory */
};

extern struct admin_db g_adb;

int adb_open(const char *data_dir, char *err, size_t errlen);
void adb_close(void);
/* Execute sql (may hold several statements, no results). 0, or -1 with
 * SQLite's message in err. */
int adb_exec(const char *sql, char *err, size_t errlen);
/* sqlite3_mprintf-style format, then adb_exec. */
int adb_execf(char *err, size_t errlen, const char *fmt, ...);
/* The number of rows of table (qualified name), or -1. */
long long adb_count(const char *table);
/* Prepare one statement; NULL with the message in err. */
sqlite3_stmt *adb_prepare(const char *sql, char *err, size_t errlen);

/* ------------------------------------------------------------ schema.c */

enum schema_where { IN_MAIN = 1, IN_DISK = 2, IN_STATS = 4 };

/* One row per admin table: the one list from which the schemas are made,
 * the stats tables refreshed (refresh.c: every IN_STATS table that is not
 * a *_reset twin) and the modules' tables checked (modules.c). Adding a
 * table: a row here, its description in docs/admin.md (test_admin checks
 * that every table is there), and for a stats table a provider or a
 * built-in fill (refresh.c); for a module, its row in modules.c. */
struct admin_table {
	const char *name;
	const char *columns;    /* the column list of CREATE TABLE (...) */
	const char *names;      /* the bare column names, comma-separated */
	unsigned where;
	const char *module;     /* the module whose table (or runtime_ twin) it is, or NULL */
};

#define ADMIN_MAX_TABLES 32

extern const struct admin_table admin_tables[];
extern const size_t admin_n_tables;

int schema_create(sqlite3 *db, char *err, size_t errlen);
const struct admin_table *schema_find(const char *name);
/* Is name one of the schemas (main, disk, stats), case-insensitive? Writes
 * the canonical lower-case form to canon (ADMIN_DB_NAME_MAX) if given. */
bool schema_is_db(const char *name, char *canon);

/* ------------------------------------------------------------ router.c */

enum admin_op {
	AOP_NONE,
	AOP_MEM_TO_RUNTIME,   /* LOAD x TO RUNTIME, LOAD x FROM MEMORY */
	AOP_RUNTIME_TO_MEM,   /* SAVE x FROM RUNTIME, SAVE x TO MEMORY */
	AOP_MEM_TO_DISK,      /* SAVE x TO DISK, SAVE x FROM MEMORY */
	AOP_DISK_TO_MEM,      /* LOAD x FROM DISK, LOAD x TO MEMORY */
};

enum admin_stmt_kind {
	ASTMT_SQL,            /* anything else: SQLite runs it */
	ASTMT_MODULE,         /* LOAD/SAVE <module> <direction> */
	ASTMT_BAD_COMMAND,    /* LOAD/SAVE that does not parse; why in err */
	ASTMT_SET_VAR,        /* SET shoal-x = v */
	ASTMT_SET_OTHER,      /* another SET (client chatter): OK, ignored */
	ASTMT_SELECT_FUNCS,   /* SELECT @@x, DATABASE(), USER(), ... [LIMIT n] */
	ASTMT_SHOW_DATABASES,
	ASTMT_SHOW_TABLES,
	ASTMT_SHOW_CREATE,
	ASTMT_SHOW_WARNINGS,
	ASTMT_USE,
	ASTMT_SAVE_SNAPSHOT,  /* SAVE [SHOAL] CACHE TO DISK: the cache's entries (cache_snapshot) */
};

#define ADMIN_MAX_ITEMS 8

enum admin_item_kind { ITEM_SYSVAR, ITEM_DATABASE, ITEM_USER, ITEM_VERSION, ITEM_CONN_ID };

struct admin_item {
	enum admin_item_kind kind;
	char name[64];        /* ITEM_SYSVAR: lower case, without @@ and session./global. */
	char label[96];       /* the column name: the text as written, or its alias */
};

struct admin_stmt {
	enum admin_stmt_kind kind;
	char module[16];      /* a module's name (modules.c) */
	enum admin_op op;
	char name[128];       /* SET: variable (lower case); USE/SHOW: schema */
	char table[128];      /* SHOW CREATE TABLE */
	char value[1024];     /* SET: the value, unquoted */
	char like[256];       /* SHOW ... LIKE 'pattern' */
	bool has_like;
	int nitems;
	struct admin_item items[ADMIN_MAX_ITEMS];
	long limit;           /* SELECT ... LIMIT n; -1 if none */
	char err[256];
};

/* Classify one statement (no trailing ';'). Pure: no I/O, no globals. */
void admin_parse(const char *sql, size_t len, struct admin_stmt *out);
/* Offset of the end of the statement at sql: its ';' or len. Quotes and
 * comments are honoured. */
size_t admin_stmt_end(const char *sql, size_t len);
/* Offset of the first byte at or after sql that is not blank, ';' or part
 * of a comment. */
size_t admin_skip_blank(const char *sql, size_t len);
/* Run every statement of one COM_QUERY and build the reply. */
void admin_query(struct admin_reply *r, const char *sql, size_t len);

/* ------------------------------------------------------------- names.c */

/* Does sql name the table `name` (case-insensitive, as a whole word)? */
bool admin_names_table(const char *sql, size_t len, const char *name);

/* ----------------------------------------------------------- modules.c */

/* Canonical module name for text ("SHOAL USERS", "users"): NULL if none. */
const char *modules_canonical(const char *text);
/* The modules' names as the admin lists them ("SHOAL VARIABLES, SHOAL
 * USERS, ..."), from the module table. */
const char *modules_list(void);
/* The module table agrees with the schema: each module's table and its
 * runtime_ twin are admin tables of that module, and no table names a
 * module that does not exist. NULL, or what is wrong. */
const char *modules_check(void);
void modules_run(struct admin_reply *r, const char *module, enum admin_op op);
/* Rebuild the runtime_* tables that sql names. */
void modules_refresh_named(const char *sql, size_t len);
/* At start: config users into the store (always), then, with the database
 * open, disk -> main -> runtime for every module. */
int modules_seed_users_from_config(void);
void modules_boot(void);
void modules_reset(void);

/* --------------------------------------------------------- variables.c */

/* "shoal-cache-ttl-ms" -> "cache_ttl_ms". 0, or -1 if not a setting. */
int vars_name_to_key(const char *name, char *key, size_t cap);
void vars_key_to_name(const char *key, char *name, size_t cap);
/* Can the setting change while the node runs? */
bool vars_is_runtime(const char *key);
/* The running value as shown in the tables (passwords as hashes). */
int vars_display(const char *key, char *out, size_t cap);
/* Fill table (emptied by the caller) with every setting's running value. */
int vars_fill(sqlite3 *db, const char *table, char *err, size_t errlen);
/* Validate every row of table and apply the changed runtime settings;
 * warnings for those that need a restart. 0, or -1 with err (nothing
 * applied). */
int vars_load(sqlite3 *db, const char *table, struct admin_reply *r, char *err, size_t errlen);
/* SET shoal-x = v: validate and store into main.global_variables. */
void vars_set(struct admin_reply *r, const char *name, const char *value);
/* At start: disk values of runtime settings into main (the others stay at
 * their running values, with a log line when the disk differs). */
int vars_boot_from_disk(char *err, size_t errlen);
/* Is the admin login the default admin/admin? */
bool vars_admin_is_default(void);
/* Check an admin login token against g_config.admin_user. */
bool vars_admin_check(const char *user, const uint8_t nonce[20], const uint8_t *tok, size_t len);

/* ----------------------------------------------------------- refresh.c */

/* Rebuild the stats_* tables that sql names; admin_sessions is the
 * number of admin sessions open (Admin_Connections_connected). */
void refresh_named(const char *sql, size_t len, int admin_sessions);
void refresh_reset(void);
/* The number of g_stats counters listed in stats_shoal_global. */
size_t refresh_n_counters(void);
void refresh_mark_start(void);
uint64_t refresh_uptime(void);

#endif
