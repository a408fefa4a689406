/*
 * compress_client.c: a Connector/C client for 67-compress.t: it owns
 * nothing of the node. With MYSQL_OPT_COMPRESS it logs in to HOST:PORT as
 * app/pw in shoaltest and runs text queries, prepared statements (a blob
 * parameter, long data in pieces, a multi-frame result, a cursor, an
 * error), a COM_CHANGE_USER and a ping, printing one line per step (row
 * values, lengths and checksums of big values), so that the test compares a
 * run straight to MariaDB with one through the node. Its first line says
 * whether the session is compressed. It (re)creates table t67. Exit status 0 when it ran to its end, 1 when the library
 * failed.
 */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MYSQL *m;

static void die(const char *what)
{
	printf("%s: error %u (%s): %s\n", what, mysql_errno(m), mysql_sqlstate(m), mysql_error(m));
	exit(1);
}

static unsigned long sum(const unsigned char *p, unsigned long n)
{
	unsigned long h = 5381;

	for (unsigned long i = 0; i < n; i++)
		h = h * 33 + p[i];
	return h;
}

static void text_query(const char *sql)
{
	MYSQL_RES *r;
	MYSQL_ROW row;

	if (mysql_query(m, sql)) {
		printf("query: error %u (%s)\n", mysql_errno(m), mysql_sqlstate(m));
		return;
	}
	do {
		r = mysql_store_result(m);
		if (!r) {
			printf("query: %llu affected\n", (unsigned long long)mysql_affected_rows(m));
			continue;
		}
		while ((row = mysql_fetch_row(r))) {
			unsigned long *len = mysql_fetch_lengths(r);

			for (unsigned i = 0; i < mysql_num_fields(r); i++) {
				if (!row[i])
					printf(" NULL");
				else if (len[i] > 64)
					printf(" [%lu bytes, sum %lu]", len[i], sum((unsigned char *)row[i], len[i]));
				else
					printf(" %s", row[i]);
			}
			printf("\n");
		}
		mysql_free_result(r);
	} while (mysql_next_result(m) == 0);
}

static MYSQL_STMT *prep(const char *sql)
{
	MYSQL_STMT *st = mysql_stmt_init(m);

	if (!st)
		die("stmt_init");
	if (mysql_stmt_prepare(st, sql, strlen(sql))) {
		printf("prepare: error %u (%s)\n", mysql_stmt_errno(st), mysql_stmt_sqlstate(st));
		mysql_stmt_close(st);
		return NULL;
	}
	return st;
}

static void insert_blob(int id, unsigned long n, int as_long_data)
{
	MYSQL_STMT *st = prep("INSERT INTO t67 VALUES (?, ?)");
	MYSQL_BIND b[2];
	unsigned char *data = malloc(n);

	if (!st || !data)
		die("insert");
	for (unsigned long i = 0; i < n; i++)
		data[i] = (unsigned char)(i * 7 + (i >> 10));
	memset(b, 0, sizeof(b));
	b[0].buffer_type = MYSQL_TYPE_LONG;
	b[0].buffer = &id;
	b[1].buffer_type = MYSQL_TYPE_BLOB;
	b[1].buffer = data;
	b[1].buffer_length = n;
	b[1].length = &n;
	if (mysql_stmt_bind_param(st, b))
		die("bind");
	if (as_long_data) {
		unsigned long third = n / 3;

		if (mysql_stmt_send_long_data(st, 1, (char *)data, third) ||
		    mysql_stmt_send_long_data(st, 1, (char *)data + third, third) ||
		    mysql_stmt_send_long_data(st, 1, (char *)data + 2 * third, n - 2 * third))
			die("send_long_data");
	}
	if (mysql_stmt_execute(st))
		printf("insert %d: error %u\n", id, mysql_stmt_errno(st));
	else
		printf("insert %d%s: %llu row, %lu bytes, sum %lu\n", id, as_long_data ? " (long data)" : "",
		       (unsigned long long)mysql_stmt_affected_rows(st), n, sum(data, n));
	mysql_stmt_close(st);
	free(data);
}

/* SELECT sql with one int parameter; one BLOB-ish column read into a
 * buffer of cap bytes, reported as length and checksum; cursor: fetch
 * through a read-only cursor, 2 rows at a time. */
static void select_big(const char *name, const char *sql, int param, unsigned long cap, int cursor)
{
	MYSQL_STMT *st = prep(sql);
	MYSQL_BIND in, out;
	unsigned char *buf = malloc(cap);
	unsigned long len = 0, type = CURSOR_TYPE_READ_ONLY, rows = 2;
	my_bool null = 0;
	int rc, n = 0;

	if (!st) {
		printf("%s: not prepared\n", name);
		free(buf);
		return;
	}
	if (!buf)
		die(name);
	memset(&in, 0, sizeof(in));
	in.buffer_type = MYSQL_TYPE_LONG;
	in.buffer = &param;
	memset(&out, 0, sizeof(out));
	out.buffer_type = MYSQL_TYPE_BLOB;
	out.buffer = buf;
	out.buffer_length = cap;
	out.length = &len;
	out.is_null = &null;
	if (cursor && (mysql_stmt_attr_set(st, STMT_ATTR_CURSOR_TYPE, &type) ||
		       mysql_stmt_attr_set(st, STMT_ATTR_PREFETCH_ROWS, &rows)))
		die("attr_set");
	if (mysql_stmt_bind_param(st, &in) || mysql_stmt_execute(st) || mysql_stmt_bind_result(st, &out)) {
		printf("%s: error %u (%s)\n", name, mysql_stmt_errno(st), mysql_stmt_sqlstate(st));
		mysql_stmt_close(st);
		free(buf);
		return;
	}
	if (!cursor && mysql_stmt_store_result(st))
		die("store_result");
	while ((rc = mysql_stmt_fetch(st)) == 0 || rc == MYSQL_DATA_TRUNCATED) {
		printf("%s row %d: %s%lu bytes, sum %lu\n", name, ++n, null ? "NULL " : "", len,
		       sum(buf, len < cap ? len : cap));
	}
	if (rc != MYSQL_NO_DATA)
		printf("%s: fetch error %u\n", name, mysql_stmt_errno(st));
	printf("%s: %d rows\n", name, n);
	mysql_stmt_close(st);
	free(buf);
}

int main(int argc, char **argv)
{
	my_bool on = 1;

	if (argc < 3)
		return 2;
	m = mysql_init(NULL);
	if (!m)
		return 1;
	mysql_options(m, MYSQL_OPT_COMPRESS, &on);
	if (!mysql_real_connect(m, argv[1], "app", "pw", "shoaltest", (unsigned)atoi(argv[2]), NULL,
				CLIENT_MULTI_STATEMENTS))
		die("connect");
	printf("compressed session: %s\n", m->net.compress ? "yes" : "no");
	text_query("DROP TABLE IF EXISTS t67; CREATE TABLE t67 (id INT PRIMARY KEY, b LONGBLOB)");
	text_query("SELECT 1, 'two', NULL, REPEAT('x', 100); SELECT COUNT(*) FROM information_schema.COLLATIONS");
	insert_blob(1, 300000, 0);
	insert_blob(2, 1000003, 1);
	insert_blob(3, 10, 0);
	select_big("select by id", "SELECT b FROM t67 WHERE id = ?", 2, 2000000, 0);
	select_big("select all", "SELECT b FROM t67 WHERE id >= ? ORDER BY id", 0, 2000000, 0);
	select_big("cursor", "SELECT b FROM t67 WHERE id >= ? ORDER BY id", 0, 2000000, 1);
	select_big("a 6 MB value", "SELECT REPEAT('xyz', 2000000 + ?)", 1, 7000000, 0);
	select_big("an error", "SELECT b FROM no_such_table_67 WHERE id = ?", 1, 16, 0);
	text_query("SELECT id, LENGTH(b), MD5(b) FROM t67 ORDER BY id");
	if (mysql_change_user(m, "app", "pw", "shoaltest"))
		die("change_user");
	printf("change_user: ok, still compressed: %s\n", m->net.compress ? "yes" : "no");
	text_query("SELECT DATABASE(), CURRENT_USER()");
	printf("ping: %s\n", mysql_ping(m) ? "failed" : "ok");
	mysql_close(m);
	return 0;
}
