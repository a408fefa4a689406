/*
 * db.c: owns the admin's SQLite handle: the in-memory main database, the
 * disk database <data_dir>/shoal.db attached as "disk" (an in-memory one,
 * with a warning, when data_dir cannot be created or the file cannot be
 * opened), the in-memory "stats" database, and small execution helpers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "base/log.h"

#define DISK_FILE "shoal.db"
#define BUSY_TIMEOUT_MS 200

struct admin_db g_adb;

/* mkdir -p with mode 0750. 0, or -1 with errno set. */
static int make_dirs(const char *path)
{
	char buf[1024];
	size_t len = strlen(path);
	struct stat st;

	if (len == 0 || len >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0750) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0750) < 0 && errno != EEXIST)
		return -1;
	if (stat(buf, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

static int attach(const char *file, const char *as, char *err, size_t errlen)
{
	return adb_execf(err, errlen, "ATTACH DATABASE %Q AS %w", file, as);
}

/* Attach the disk database, or an in-memory stand-in. */
static int attach_disk(const char *data_dir, char *err, size_t errlen)
{
	char why[512];

	g_adb.disk_in_memory = false;
	g_adb.disk_problem[0] = '\0';
	snprintf(g_adb.disk_path, sizeof g_adb.disk_path, "%s/%s", data_dir, DISK_FILE);
	if (make_dirs(data_dir) < 0) {
		snprintf(g_adb.disk_problem, sizeof g_adb.disk_problem,
			 "cannot create the data directory %s: %s", data_dir, strerror(errno));
	} else if (attach(g_adb.disk_path, "disk", why, sizeof why) < 0) {
		snprintf(g_adb.disk_problem, sizeof g_adb.disk_problem, "cannot open %s: %s",
			 g_adb.disk_path, why);
	} else if (adb_exec("SELECT count(*) FROM disk.sqlite_master", why, sizeof why) < 0) {
		/* not a database, or unreadable */
		adb_exec("DETACH DATABASE disk", NULL, 0);
		snprintf(g_adb.disk_problem, sizeof g_adb.disk_problem, "cannot read %s: %s",
			 g_adb.disk_path, why);
	} else {
		return 0;
	}
	log_warn("admin: %s; the disk database is kept in memory, SAVE ... TO DISK will fail",
		 g_adb.disk_problem);
	g_adb.disk_in_memory = true;
	return attach(":memory:", "disk", err, errlen);
}

int adb_open(const char *data_dir, char *err, size_t errlen)
{
	int rc;

	if (g_adb.db)
		return 0;
	rc = sqlite3_open_v2(":memory:", &g_adb.db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "sqlite: %s", g_adb.db ? sqlite3_errmsg(g_adb.db) : sqlite3_errstr(rc));
		adb_close();
		return -1;
	}
	sqlite3_busy_timeout(g_adb.db, BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(g_adb.db, 0);
	if (attach_disk(data_dir, err, errlen) < 0 || attach(":memory:", "stats", err, errlen) < 0 ||
	    schema_create(g_adb.db, err, errlen) < 0 ||
	    admin_run_sql_function_setups(g_adb.db, err, errlen) < 0) {
		adb_close();
		return -1;
	}
	return 0;
}

#define MAX_SQLFN_SETUPS 4
static admin_sqlfn_setup sqlfn_setups[MAX_SQLFN_SETUPS];

int admin_register_sql_functions(admin_sqlfn_setup setup)
{
	for (int i = 0; i < MAX_SQLFN_SETUPS; i++) {
		if (!sqlfn_setups[i]) {
			sqlfn_setups[i] = setup;
			return 0;
		}
	}
	return -1;
}

int admin_run_sql_function_setups(sqlite3 *db, char *err, size_t errlen)
{
	for (int i = 0; i < MAX_SQLFN_SETUPS && sqlfn_setups[i]; i++) {
		if (sqlfn_setups[i](db) != SQLITE_OK) {
			snprintf(err, errlen, "sqlite: cannot define admin functions: %s", sqlite3_errmsg(db));
			return -1;
		}
	}
	return 0;
}

void adb_close(void)
{
	if (g_adb.db)
		sqlite3_close_v2(g_adb.db);
	memset(&g_adb, 0, sizeof g_adb);
}

int adb_exec(const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;
	int rc;

	if (!g_adb.db) {
		if (err && errlen)
			snprintf(err, errlen, "the admin database is not open");
		return -1;
	}
	rc = sqlite3_exec(g_adb.db, sql, NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		return 0;
	if (err && errlen)
		snprintf(err, errlen, "%s", msg ? msg : sqlite3_errstr(rc));
	sqlite3_free(msg);
	return -1;
}

int adb_execf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	char *sql;
	int rc;

	va_start(ap, fmt);
	sql = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	if (!sql) {
		if (err && errlen)
			snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = adb_exec(sql, err, errlen);
	sqlite3_free(sql);
	return rc;
}

sqlite3_stmt *adb_prepare(const char *sql, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;

	if (!g_adb.db) {
		snprintf(err, errlen, "the admin database is not open");
		return NULL;
	}
	if (sqlite3_prepare_v2(g_adb.db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(g_adb.db));
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

long long adb_count(const char *table)
{
	char err[256];
	char *sql = sqlite3_mprintf("SELECT count(*) FROM %s", table);
	sqlite3_stmt *st;
	long long n = -1;

	if (!sql)
		return -1;
	st = adb_prepare(sql, err, sizeof err);
	sqlite3_free(sql);
	if (st && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

int admin_insert_row(sqlite3 *db, const char *table, int n, const char *const *values)
{
	sqlite3_str *s = sqlite3_str_new(db);
	sqlite3_stmt *st = NULL;
	char *sql;
	int rc;

	if (n <= 0)
		return -1;
	sqlite3_str_appendf(s, "INSERT INTO %s VALUES (", table);
	for (int i = 0; i < n; i++)
		sqlite3_str_appendall(s, i ? ", ?" : "?");
	sqlite3_str_appendall(s, ")");
	sql = sqlite3_str_finish(s);
	if (!sql)
		return -1;
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	for (int i = 0; rc == SQLITE_OK && i < n; i++)
		rc = values[i] ? sqlite3_bind_text(st, i + 1, values[i], -1, SQLITE_TRANSIENT)
			       : sqlite3_bind_null(st, i + 1);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	if (rc != SQLITE_OK)
		log_warn("admin: insert into %s: %s", table, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : -1;
}
