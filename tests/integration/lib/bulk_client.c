/*
 * bulk_client.c: a Connector/C client for the bulk-operations test
 * (68-bulk.t): it owns nothing of the node. It runs MariaDB's array binding
 * against HOST:PORT as app/pw in shoaltest and prints what the client
 * library saw, one line per step, so that the test can compare a run
 * straight to MariaDB with a run through the node.
 *
 *   bulk_client HOST PORT VERIFY_PORT N
 *       (re)creates t68 (id, name, n DEFAULT 7, note DEFAULT 'dflt'), then:
 *       a column-wise array INSERT of N rows (int and string columns,
 *       indicators NULL and DEFAULT), the same statement executed again
 *       without binding anew (no types sent), a row-wise array UPDATE
 *       (indicators IGNORE and IGNORE_ROW), an array DELETE, an array INSERT
 *       that fails on a duplicate key, an INSERT ... RETURNING of an array,
 *       mariadb_stmt_execute_direct with an array, with a result set, and
 *       failing (its PREPARE fails: the execute behind it answers for the
 *       last statement, which is none). After each write a second
 *       connection reads the table (a text SELECT and the same SELECT
 *       prepared: cached under AUTO_CACHE, so they must see each write).
 *       Last, the stored rows as read from VERIFY_PORT (MariaDB itself).
 * Exit status: 0 when the scenario ran to its end (errors the server sends
 * are printed, not fatal), 1 when the client library failed.
 */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_connect.h"

#define MAXN 200
#define READ_SQL "SELECT COUNT(*), COALESCE(SUM(id), 0), COALESCE(SUM(n), 0), " \
	"COALESCE(MD5(GROUP_CONCAT(id, ':', COALESCE(name, '-'), ':', COALESCE(n, '-'), ':', note " \
	"ORDER BY id)), '-') FROM t68"

static void query(MYSQL *m, const char *sql)
{
	if (mysql_query(m, sql))
		printf("query error %u: %s\n", mysql_errno(m), mysql_error(m));
}

/* Print every row of a text query's result, fields joined by '|'. */
static void print_rows(MYSQL *m, const char *what, const char *sql)
{
	MYSQL_RES *res;
	MYSQL_ROW row;

	if (mysql_query(m, sql) || !(res = mysql_store_result(m))) {
		printf("%s: error %u: %s\n", what, mysql_errno(m), mysql_error(m));
		return;
	}
	while ((row = mysql_fetch_row(res))) {
		printf("%s:", what);
		for (unsigned i = 0; i < mysql_num_fields(res); i++)
			printf("%s%s", i ? "|" : " ", row[i] ? row[i] : "NULL");
		printf("\n");
	}
	mysql_free_result(res);
}

/* The same read, prepared (binary protocol). */
static void print_prepared(MYSQL_STMT *st, const char *what)
{
	long long cnt = 0, sid = 0, sn = 0;
	char md5[64] = "";
	unsigned long md5_len = 0;
	MYSQL_BIND out[4];

	memset(out, 0, sizeof(out));
	out[0].buffer_type = out[1].buffer_type = out[2].buffer_type = MYSQL_TYPE_LONGLONG;
	out[0].buffer = &cnt;
	out[1].buffer = &sid;
	out[2].buffer = &sn;
	out[3].buffer_type = MYSQL_TYPE_STRING;
	out[3].buffer = md5;
	out[3].buffer_length = sizeof(md5) - 1;
	out[3].length = &md5_len;
	if (mysql_stmt_execute(st) || mysql_stmt_bind_result(st, out) || mysql_stmt_fetch(st)) {
		printf("%s prepared: error %u: %s\n", what, mysql_stmt_errno(st), mysql_stmt_error(st));
		mysql_stmt_free_result(st);
		return;
	}
	md5[md5_len < sizeof(md5) ? md5_len : sizeof(md5) - 1] = 0;
	printf("%s prepared: %lld|%lld|%lld|%s\n", what, cnt, sid, sn, md5);
	while (mysql_stmt_fetch(st) == 0)
		;
	mysql_stmt_free_result(st);
}

struct reader {
	MYSQL *m;
	MYSQL_STMT *st;
};

static void reader_check(struct reader *r, const char *after)
{
	char what[96];

	snprintf(what, sizeof(what), "reader after %s", after);
	print_rows(r->m, what, READ_SQL);
	print_prepared(r->st, what);
}

static void stmt_result(MYSQL_STMT *st, const char *what, int rc)
{
	if (rc)
		printf("%s: error %u (%s): %s\n", what, mysql_stmt_errno(st), mysql_stmt_sqlstate(st),
		       mysql_stmt_error(st));
	else
		printf("%s: affected %llu, warnings %u\n", what,
		       (unsigned long long)mysql_stmt_affected_rows(st), mysql_warning_count(st->mysql));
}

static MYSQL_STMT *prepare(MYSQL *m, const char *sql)
{
	MYSQL_STMT *st = mysql_stmt_init(m);

	if (!st) {
		fprintf(stderr, "mysql_stmt_init: no memory\n");
		exit(1);
	}
	if (mysql_stmt_prepare(st, sql, (unsigned long)strlen(sql)))
		printf("prepare error %u: %s\n", mysql_stmt_errno(st), mysql_stmt_error(st));
	return st;
}

/* Column-wise arrays: an id, a string (char * per row with its length), an
 * int with indicators. */
struct columns {
	int id[MAXN];
	char text[MAXN][40];
	char *name[MAXN];
	unsigned long name_len[MAXN];
	int n[MAXN];
	char n_ind[MAXN];
};

static void fill_columns(struct columns *c, unsigned rows, int first, const char *tag)
{
	for (unsigned i = 0; i < rows; i++) {
		int id = first + (int)i;

		c->id[i] = id;
		snprintf(c->text[i], sizeof(c->text[i]), "%s-%d%.*s", tag, id, (int)(i % 9), "xxxxxxxxx");
		c->name[i] = c->text[i];
		c->name_len[i] = (unsigned long)strlen(c->text[i]);
		c->n[i] = id * 3;
		c->n_ind[i] = id % 5 == 0 ? STMT_INDICATOR_NULL : id % 7 == 0 ? STMT_INDICATOR_DEFAULT
			      : STMT_INDICATOR_NONE;
	}
}

static void bind_columns(MYSQL_BIND b[3], struct columns *c)
{
	memset(b, 0, 3 * sizeof(*b));
	b[0].buffer_type = MYSQL_TYPE_LONG;
	b[0].buffer = c->id;
	b[1].buffer_type = MYSQL_TYPE_STRING;
	b[1].buffer = c->name;
	b[1].length = c->name_len;
	b[2].buffer_type = MYSQL_TYPE_LONG;
	b[2].buffer = c->n;
	b[2].u.indicator = c->n_ind;
}

static int array_size(MYSQL_STMT *st, unsigned rows)
{
	return mysql_stmt_attr_set(st, STMT_ATTR_ARRAY_SIZE, &rows);
}

/* Execute st with the first rows of c bound column-wise. */
static int execute_columns(MYSQL_STMT *st, struct columns *c, unsigned rows)
{
	MYSQL_BIND b[3];

	bind_columns(b, c);
	return array_size(st, rows) || mysql_stmt_bind_param(st, b) || mysql_stmt_execute(st);
}

/* The column-wise INSERT, executed twice: the second time with new values
 * in the same arrays and no new binding (the connector then sends no
 * parameter types). */
static void column_insert(MYSQL *m, unsigned rows, struct reader *r)
{
	static struct columns c;
	MYSQL_STMT *st = prepare(m, "INSERT INTO t68 (id, name, n) VALUES (?, ?, ?)");
	unsigned half = rows / 2;
	int rc;

	fill_columns(&c, half, 1, "col");
	stmt_result(st, "column-wise insert", execute_columns(st, &c, half));
	reader_check(r, "column-wise insert");
	fill_columns(&c, rows - half, (int)half + 1, "again");
	rc = array_size(st, rows - half) || mysql_stmt_execute(st);
	stmt_result(st, "column-wise insert again, types not resent", rc);
	reader_check(r, "second insert");
	mysql_stmt_close(st);
}

/* Row-wise: one struct per row (STMT_ATTR_ROW_SIZE). */
struct row {
	char name[24];
	unsigned long name_len;
	char name_ind;
	int n;
	char n_ind;
	int id;
	char id_ind;
};

static void row_update(MYSQL *m, struct reader *r)
{
	MYSQL_STMT *st = prepare(m, "UPDATE t68 SET name = ?, n = ? WHERE id = ?");
	struct row rows[10];
	size_t row_size = sizeof(struct row);
	unsigned count = 10;
	MYSQL_BIND b[3];
	int rc;

	memset(rows, 0, sizeof(rows));
	for (unsigned i = 0; i < count; i++) {
		rows[i].id = (int)i + 1;
		rows[i].name_len = (unsigned long)snprintf(rows[i].name, sizeof(rows[i].name), "upd-%u", i);
		rows[i].n = 1000 + (int)i;
		rows[i].n_ind = i % 2 ? STMT_INDICATOR_IGNORE : STMT_INDICATOR_NONE;
		rows[i].name_ind = i == 4 ? STMT_INDICATOR_NULL : STMT_INDICATOR_NONE;
		rows[i].id_ind = i == 6 ? STMT_INDICATOR_IGNORE_ROW : STMT_INDICATOR_NONE;
	}
	memset(b, 0, sizeof(b));
	b[0].buffer_type = MYSQL_TYPE_STRING;
	b[0].buffer = rows[0].name;
	b[0].length = &rows[0].name_len;
	b[0].u.indicator = &rows[0].name_ind;
	b[1].buffer_type = MYSQL_TYPE_LONG;
	b[1].buffer = &rows[0].n;
	b[1].u.indicator = &rows[0].n_ind;
	b[2].buffer_type = MYSQL_TYPE_LONG;
	b[2].buffer = &rows[0].id;
	b[2].u.indicator = &rows[0].id_ind;
	rc = mysql_stmt_attr_set(st, STMT_ATTR_ROW_SIZE, &row_size) || array_size(st, count) ||
	     mysql_stmt_bind_param(st, b) || mysql_stmt_execute(st);
	stmt_result(st, "row-wise update", rc);
	reader_check(r, "row-wise update");
	mysql_stmt_close(st);
}

/* An array DELETE, then the same statement run once without an array. */
static void array_delete(MYSQL *m, unsigned rows, struct reader *r)
{
	MYSQL_STMT *st = prepare(m, "DELETE FROM t68 WHERE id = ?");
	int ids[5], one = 1000000;
	MYSQL_BIND b[1];
	int rc;

	for (int i = 0; i < 5; i++)
		ids[i] = (int)rows - i;
	memset(b, 0, sizeof(b));
	b[0].buffer_type = MYSQL_TYPE_LONG;
	b[0].buffer = ids;
	rc = array_size(st, 5) || mysql_stmt_bind_param(st, b) || mysql_stmt_execute(st);
	stmt_result(st, "array delete", rc);
	reader_check(r, "array delete");
	b[0].buffer = &one;
	rc = array_size(st, 0) || mysql_stmt_bind_param(st, b) || mysql_stmt_execute(st);
	stmt_result(st, "single delete after the array", rc);
	mysql_stmt_close(st);
}

/* An array INSERT whose second row is a duplicate key. */
static void failing_insert(MYSQL *m, struct reader *r)
{
	static struct columns c;
	MYSQL_STMT *st = prepare(m, "INSERT INTO t68 (id, name, n) VALUES (?, ?, ?)");

	fill_columns(&c, 3, 500, "dup");
	c.id[1] = 1;
	stmt_result(st, "duplicate-key insert", execute_columns(st, &c, 3));
	reader_check(r, "duplicate-key insert");
	mysql_stmt_close(st);
}

/* INSERT ... RETURNING with an array: a result set of the rows inserted. */
static void returning_insert(MYSQL *m, struct reader *r)
{
	static struct columns c;
	MYSQL_STMT *st = prepare(m, "INSERT INTO t68 (id, name, n) VALUES (?, ?, ?) RETURNING id, name, note");
	int rc;

	fill_columns(&c, 4, 600, "ret");
	rc = execute_columns(st, &c, 4);
	if (rc) {
		stmt_result(st, "returning insert", rc);
	} else {
		int id = 0;
		char name[48] = "", note[16] = "";
		unsigned long name_len = 0, note_len = 0;
		MYSQL_BIND out[3];

		memset(out, 0, sizeof(out));
		out[0].buffer_type = MYSQL_TYPE_LONG;
		out[0].buffer = &id;
		out[1].buffer_type = out[2].buffer_type = MYSQL_TYPE_STRING;
		out[1].buffer = name;
		out[1].buffer_length = sizeof(name) - 1;
		out[1].length = &name_len;
		out[2].buffer = note;
		out[2].buffer_length = sizeof(note) - 1;
		out[2].length = &note_len;
		printf("returning insert: %u columns\n", mysql_stmt_field_count(st));
		if (mysql_stmt_bind_result(st, out) == 0)
			while (mysql_stmt_fetch(st) == 0)
				printf("returning row: %d|%.*s|%.*s\n", id, (int)name_len, name, (int)note_len, note);
		mysql_stmt_free_result(st);
	}
	reader_check(r, "returning insert");
	mysql_stmt_close(st);
}

/* mariadb_stmt_execute_direct of an array INSERT: PREPARE and an execute
 * of "the last statement" sent together. */
static int direct_insert(MYSQL_STMT *st, unsigned rows, int first, const char *tag)
{
	static struct columns c;
	unsigned prebind = 3;
	MYSQL_BIND b[3];

	fill_columns(&c, rows, first, tag);
	bind_columns(b, &c);
	return mysql_stmt_attr_set(st, STMT_ATTR_PREBIND_PARAMS, &prebind) || array_size(st, rows) ||
	       mysql_stmt_bind_param(st, b) ||
	       mariadb_stmt_execute_direct(st, "INSERT INTO t68 (id, name, n) VALUES (?, ?, ?)", (size_t)-1);
}

static void direct_array(MYSQL *m, struct reader *r)
{
	MYSQL_STMT *st = mysql_stmt_init(m);

	stmt_result(st, "execute_direct array insert", direct_insert(st, 4, 700, "direct"));
	reader_check(r, "execute_direct array insert");
	/* the same handle again: the statement is closed, a new one prepared */
	stmt_result(st, "execute_direct again on the same handle", direct_insert(st, 2, 800, "direct2"));
	mysql_stmt_close(st);
}

static void direct_select(MYSQL *m)
{
	MYSQL_STMT *st = mysql_stmt_init(m);
	long long cnt = -1;
	MYSQL_BIND out[1];

	memset(out, 0, sizeof(out));
	out[0].buffer_type = MYSQL_TYPE_LONGLONG;
	out[0].buffer = &cnt;
	if (mariadb_stmt_execute_direct(st, "SELECT COUNT(*) FROM t68", (size_t)-1) ||
	    mysql_stmt_bind_result(st, out) || mysql_stmt_fetch(st))
		printf("execute_direct select: error %u: %s\n", mysql_stmt_errno(st), mysql_stmt_error(st));
	else
		printf("execute_direct select: %lld\n", cnt);
	mysql_stmt_close(st);
}

/* Failing PREPAREs: the execute sent behind each answers for the last
 * statement prepared, which is none; the client reports the PREPARE's error
 * and the connection goes on. */
static void direct_failures(MYSQL *m)
{
	static struct columns c;
	MYSQL_STMT *st = mysql_stmt_init(m);
	unsigned prebind = 3;
	MYSQL_BIND b[3];
	int rc;

	fill_columns(&c, 2, 900, "bad");
	bind_columns(b, &c);
	rc = mysql_stmt_attr_set(st, STMT_ATTR_PREBIND_PARAMS, &prebind) || array_size(st, 2) ||
	     mysql_stmt_bind_param(st, b) ||
	     mariadb_stmt_execute_direct(st, "INSERT INTO nosuch68 (id, name, n) VALUES (?, ?, ?)", (size_t)-1);
	stmt_result(st, "execute_direct array into a missing table", rc);
	printf("  connection error after it: %u %s\n", mysql_errno(m), mysql_error(m));
	mysql_stmt_close(st);
	st = mysql_stmt_init(m);
	rc = mariadb_stmt_execute_direct(st, "SELECT nosuchcol FROM t68", (size_t)-1);
	stmt_result(st, "execute_direct of a bad select", rc);
	rc = mariadb_stmt_execute_direct(st, "SELECT COUNT(*) FROM t68 WHERE id < 100", (size_t)-1);
	stmt_result(st, "execute_direct on the handle that failed", rc);
	mysql_stmt_close(st);
	print_rows(m, "the session goes on", "SELECT 1");
}

int main(int argc, char **argv)
{
	struct reader r;
	unsigned rows, ext = 0;
	MYSQL *m, *v;

	if (argc != 5 || (rows = (unsigned)atoi(argv[4])) < 10 || rows > MAXN) {
		fprintf(stderr, "usage: bulk_client HOST PORT VERIFY_PORT N (10..%d)\n", MAXN);
		return 2;
	}
	m = connect_to(argv[1], (unsigned)atoi(argv[2]));
	mariadb_get_infov(m, MARIADB_CONNECTION_EXTENDED_SERVER_CAPABILITIES, &ext);
	printf("server offers bulk operations: %s\n",
	       ext & (MARIADB_CLIENT_STMT_BULK_OPERATIONS >> 32) ? "yes" : "no");
	query(m, "DROP TABLE IF EXISTS t68");
	query(m, "CREATE TABLE t68 (id INT PRIMARY KEY, name VARCHAR(32), n INT DEFAULT 7, "
		 "note VARCHAR(10) DEFAULT 'dflt')");
	r.m = connect_to(argv[1], (unsigned)atoi(argv[2]));
	r.st = prepare(r.m, READ_SQL);
	reader_check(&r, "create");
	reader_check(&r, "create (again)");
	column_insert(m, rows, &r);
	row_update(m, &r);
	array_delete(m, rows, &r);
	failing_insert(m, &r);
	returning_insert(m, &r);
	direct_array(m, &r);
	direct_select(m);
	direct_failures(m);
	reader_check(&r, "all");
	mysql_stmt_close(r.st);
	mysql_close(r.m);
	mysql_close(m);
	v = connect_to(argv[1], (unsigned)atoi(argv[3]));
	print_rows(v, "stored", "SELECT id, name, n, note FROM t68 ORDER BY id");
	mysql_close(v);
	return 0;
}
