/*
 * stmt_client.c: a Connector/C client for the prepared-statement tests
 * (61-cursors.t): it owns nothing of the node. It runs one scenario against
 * HOST:PORT as app/pw in shoaltest and prints what the client library saw,
 * one line per step, so that the test can compare the output of a run
 * straight to MariaDB with that of a run through the node.
 *
 *   stmt_client HOST PORT cursors
 *       two server-side cursors open at once (CURSOR_TYPE_READ_ONLY, one row
 *       or two per COM_STMT_FETCH) with interleaved fetches, one ending
 *       first; a cursor over a UNION; a row count; a cursor held across text
 *       queries and another prepared execute; COM_STMT_RESET of one cursor
 *       while another is open; cursor executes the server fails (a stored
 *       function's SIGNAL, a bad window-function argument), each followed by
 *       a query that must work. Needs t61 (id, v) with 5 rows and f61().
 *   stmt_client HOST PORT longdata FIRST N VERIFY_PORT
 *       N rounds of COM_STMT_SEND_LONG_DATA: an INSERT into t61ld of ids
 *       FIRST.. whose blob and text come as long data (in pieces, text
 *       queries between them, and DDL before every other round, which makes
 *       the node's catalog stale), and a SELECT ? whose parameter is long data;
 *       then the rows are read back from VERIFY_PORT (MariaDB itself) and
 *       compared byte for byte with what was sent. Prints "stored N/N".
 * Exit status: 0 when the scenario ran to its end (errors the server sends
 * are printed, not fatal), 1 when the client library failed.
 */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_connect.h"

#define VBUF 256

struct cur {
	const char *name;
	MYSQL_STMT *st;
	MYSQL_BIND out[2];
	long long id;
	char v[VBUF];
	unsigned long vlen;
	my_bool vnull;
	int done;
};

static void status_line(MYSQL *m, const char *what)
{
	unsigned st = 0;

	mariadb_get_infov(m, MARIADB_CONNECTION_SERVER_STATUS, &st);
	printf("%s: cursor_exists=%d last_row_sent=%d\n", what, !!(st & SERVER_STATUS_CURSOR_EXISTS),
	       !!(st & SERVER_STATUS_LAST_ROW_SENT));
}

static void stmt_err(MYSQL_STMT *st, const char *what)
{
	printf("%s: error %u (%s) %s\n", what, mysql_stmt_errno(st), mysql_stmt_sqlstate(st),
	       mysql_stmt_error(st));
}

/* Prepare text as a read-only cursor fetching prefetch rows at a time. */
static int cur_open(MYSQL *m, struct cur *c, const char *name, const char *text, unsigned long prefetch)
{
	unsigned long type = CURSOR_TYPE_READ_ONLY;

	memset(c, 0, sizeof(*c));
	c->name = name;
	c->st = mysql_stmt_init(m);
	if (!c->st)
		return -1;
	mysql_stmt_attr_set(c->st, STMT_ATTR_CURSOR_TYPE, &type);
	mysql_stmt_attr_set(c->st, STMT_ATTR_PREFETCH_ROWS, &prefetch);
	if (mysql_stmt_prepare(c->st, text, strlen(text))) {
		stmt_err(c->st, name);
		return -1;
	}
	c->out[0].buffer_type = MYSQL_TYPE_LONGLONG;
	c->out[0].buffer = &c->id;
	c->out[1].buffer_type = MYSQL_TYPE_STRING;
	c->out[1].buffer = c->v;
	c->out[1].buffer_length = VBUF - 1;
	c->out[1].length = &c->vlen;
	c->out[1].is_null = &c->vnull;
	return 0;
}

/* Execute a cursor statement; prints the outcome. 0 when it opened. */
static int cur_exec(MYSQL *m, struct cur *c)
{
	char what[96];

	c->done = 0;
	snprintf(what, sizeof(what), "%s execute", c->name);
	if (mysql_stmt_execute(c->st)) {
		stmt_err(c->st, what);
		c->done = 1;
		return -1;
	}
	status_line(m, what);
	if (mysql_stmt_bind_result(c->st, c->out)) {
		stmt_err(c->st, what);
		return -1;
	}
	return 0;
}

/* One mysql_stmt_fetch; prints the row or the end. */
static void cur_fetch(MYSQL *m, struct cur *c)
{
	char what[96];
	int rc;

	if (c->done)
		return;
	rc = mysql_stmt_fetch(c->st);
	snprintf(what, sizeof(what), "%s fetch", c->name);
	if (rc == 0 || rc == MYSQL_DATA_TRUNCATED) {
		printf("%s: row %lld %.*s\n", what, c->id, c->vnull ? 4 : (int)c->vlen, c->vnull ? "NULL" : c->v);
		return;
	}
	c->done = 1;
	if (rc == MYSQL_NO_DATA) {
		printf("%s: end after %llu rows\n", what, (unsigned long long)mysql_stmt_num_rows(c->st));
		status_line(m, what);
	} else {
		stmt_err(c->st, what);
	}
}

static void text_query(MYSQL *m, const char *q)
{
	MYSQL_RES *res;
	MYSQL_ROW row;

	if (mysql_query(m, q)) {
		printf("query %s: error %u %s\n", q, mysql_errno(m), mysql_error(m));
		return;
	}
	res = mysql_store_result(m);
	while (res && (row = mysql_fetch_row(res)) != NULL)
		printf("query %s: row %s\n", q, row[0] ? row[0] : "NULL");
	mysql_free_result(res);
}

/* A prepared execute without a cursor, between the fetches of others. */
static void plain_execute(MYSQL *m, long long arg)
{
	MYSQL_STMT *st = mysql_stmt_init(m);
	MYSQL_BIND in, out;
	long long got = 0;
	const char *q = "SELECT ? + 100";

	memset(&in, 0, sizeof(in));
	memset(&out, 0, sizeof(out));
	in.buffer_type = out.buffer_type = MYSQL_TYPE_LONGLONG;
	in.buffer = &arg;
	out.buffer = &got;
	if (!st || mysql_stmt_prepare(st, q, strlen(q)) || mysql_stmt_bind_param(st, &in) ||
	    mysql_stmt_execute(st) || mysql_stmt_bind_result(st, &out) || mysql_stmt_fetch(st)) {
		if (st)
			stmt_err(st, "plain execute");
	} else {
		printf("plain execute: %lld\n", got);
	}
	if (st)
		mysql_stmt_close(st);
}

static void run_to_end(MYSQL *m, struct cur *c)
{
	while (!c->done)
		cur_fetch(m, c);
}

static int two_cursors(MYSQL *m, struct cur *a, struct cur *b)
{
	if (cur_exec(m, a) || cur_exec(m, b))
		return -1;
	for (int i = 0; !a->done || !b->done; i++) {
		cur_fetch(m, a);
		cur_fetch(m, b);
		if (i == 1)
			text_query(m, "SELECT v FROM t61 WHERE id = 3");
		if (i == 6) /* A has ended, B has not */
			plain_execute(m, i);
	}
	return 0;
}

/* Reset one cursor while the other is open; both used again after. */
static int reset_one(MYSQL *m, struct cur *a, struct cur *b)
{
	if (cur_exec(m, a) || cur_exec(m, b))
		return -1;
	cur_fetch(m, a);
	cur_fetch(m, b);
	if (mysql_stmt_reset(a->st))
		stmt_err(a->st, "A reset");
	else
		printf("A reset: ok\n");
	run_to_end(m, b);
	if (cur_exec(m, a))
		return -1;
	run_to_end(m, a);
	return 0;
}

static void failing(MYSQL *m, const char *name, const char *text)
{
	struct cur f;

	if (cur_open(m, &f, name, text, 1) == 0 && cur_exec(m, &f) == 0)
		run_to_end(m, &f);
	if (f.st)
		mysql_stmt_close(f.st);
	text_query(m, "SELECT 'alive'");
}

static int scenario_cursors(MYSQL *m)
{
	struct cur a, b, n;

	if (cur_open(m, &a, "A", "SELECT id, v FROM t61 ORDER BY id", 1) ||
	    cur_open(m, &b, "B", "SELECT id, v FROM t61 WHERE id <= 2 UNION SELECT id + 10, v FROM t61 "
			    "ORDER BY 1 DESC", 2) ||
	    cur_open(m, &n, "N", "SELECT COUNT(*) FROM t61", 1))
		return 1;
	if (two_cursors(m, &a, &b) || cur_exec(m, &n))
		return 1;
	run_to_end(m, &n);
	/* B opens, A runs to its end while B stays open, then B ends */
	if (cur_exec(m, &b) || cur_exec(m, &a))
		return 1;
	cur_fetch(m, &b);
	run_to_end(m, &a);
	text_query(m, "SELECT COUNT(*) FROM t61");
	run_to_end(m, &b);
	if (reset_one(m, &a, &b))
		return 1;
	failing(m, "SIGNAL", "SELECT f61()");
	failing(m, "NTILE", "SELECT id, NTILE(0) OVER (ORDER BY id) FROM t61");
	if (cur_exec(m, &a))
		return 1;
	run_to_end(m, &a);
	mysql_stmt_close(a.st);
	mysql_stmt_close(b.st);
	mysql_stmt_close(n.st);
	return 0;
}

/* ---- long data --------------------------------------------------------- */

/* The bytes of round i, column col: every byte value, a length that varies. */
static size_t pattern(unsigned i, int col, char *buf, size_t cap)
{
	size_t n = (size_t)(3000 + (i * 977u + (unsigned)col * 131u) % 20000);

	if (n > cap)
		n = cap;
	for (size_t k = 0; k < n; k++)
		buf[k] = col == 1 ? (char)('a' + (k + i) % 26) : (char)((k * 7 + i + (unsigned)col) & 0xff);
	return n;
}

/* Send buf as long data for parameter p in three pieces, a text query
 * (which the cache may answer) between them. */
static int send_pieces(MYSQL *m, MYSQL_STMT *st, unsigned p, const char *buf, size_t n)
{
	size_t cut1 = n / 3, cut2 = 2 * n / 3;

	if (mysql_stmt_send_long_data(st, p, buf, cut1))
		return -1;
	text_query(m, "SELECT COUNT(*) > 0 FROM t61");
	if (mysql_stmt_send_long_data(st, p, buf + cut1, cut2 - cut1))
		return -1;
	return mysql_stmt_send_long_data(st, p, buf + cut2, n - cut2) ? -1 : 0;
}

static int insert_round(MYSQL *m, MYSQL_STMT *st, long long id, unsigned i, char *blob, char *txt)
{
	MYSQL_BIND in[3];

	memset(in, 0, sizeof(in));
	in[0].buffer_type = MYSQL_TYPE_LONGLONG;
	in[0].buffer = &id;
	in[1].buffer_type = MYSQL_TYPE_BLOB;
	in[2].buffer_type = MYSQL_TYPE_STRING;
	if (mysql_stmt_bind_param(st, in) || send_pieces(m, st, 1, blob, pattern(i, 0, blob, 65536)) ||
	    send_pieces(m, st, 2, txt, pattern(i, 1, txt, 65536)))
		return -1;
	if (mysql_stmt_execute(st)) {
		printf("insert %lld: error %u %s\n", id, mysql_stmt_errno(st), mysql_stmt_error(st));
		return 0;
	}
	printf("insert %lld: %llu row\n", id, (unsigned long long)mysql_stmt_affected_rows(st));
	return 0;
}

/* SELECT ? FROM t61 WHERE id = 1, the parameter as long data: the answer
 * must be those bytes (a cache key without them would give another's). */
static int select_round(MYSQL *m, MYSQL_STMT *st, unsigned i, char *txt, char *got)
{
	MYSQL_BIND in, out;
	unsigned long glen = 0;
	size_t n = pattern(i, 1, txt, 65536);

	memset(&in, 0, sizeof(in));
	memset(&out, 0, sizeof(out));
	in.buffer_type = MYSQL_TYPE_STRING;
	out.buffer_type = MYSQL_TYPE_STRING;
	out.buffer = got;
	out.buffer_length = 65536;
	out.length = &glen;
	if (mysql_stmt_bind_param(st, &in) || send_pieces(m, st, 0, txt, n))
		return -1;
	if (mysql_stmt_execute(st) || mysql_stmt_bind_result(st, &out) || mysql_stmt_store_result(st)) {
		printf("select %u: error %u %s\n", i, mysql_stmt_errno(st), mysql_stmt_error(st));
		return 0;
	}
	if (mysql_stmt_fetch(st) == 0 && glen == n && memcmp(got, txt, n) == 0)
		printf("select %u: the long data back\n", i);
	else
		printf("select %u: WRONG answer (%lu bytes, sent %zu)\n", i, glen, n);
	mysql_stmt_free_result(st);
	return 0;
}

/* Read rows FIRST.. back from MariaDB itself and compare them. */
static unsigned verify(const char *host, unsigned port, long long first, unsigned n, char *blob, char *txt)
{
	MYSQL *d = connect_to(host, port);
	unsigned good = 0;
	char q[128];

	for (unsigned i = 0; i < n; i++) {
		MYSQL_RES *res;
		MYSQL_ROW row;
		unsigned long *len;
		size_t nb = pattern(i, 0, blob, 65536), nt = pattern(i, 1, txt, 65536);

		snprintf(q, sizeof(q), "SELECT b, t FROM t61ld WHERE id = %lld", first + i);
		if (mysql_query(d, q) || !(res = mysql_store_result(d)))
			continue;
		row = mysql_fetch_row(res);
		len = row ? mysql_fetch_lengths(res) : NULL;
		if (row && row[0] && row[1] && len[0] == nb && len[1] == nt && memcmp(row[0], blob, nb) == 0 &&
		    memcmp(row[1], txt, nt) == 0)
			good++;
		else
			printf("stored row %lld differs from what was sent\n", first + i);
		mysql_free_result(res);
	}
	mysql_close(d);
	return good;
}

static int scenario_longdata(MYSQL *m, const char *host, long long first, unsigned n, unsigned vport)
{
	static char blob[65536], txt[65536], got[65536];
	const char *ins = "INSERT INTO t61ld (id, b, t) VALUES (?, ?, ?)";
	const char *sel = "SELECT ? FROM t61 WHERE id = 1";
	MYSQL_STMT *a = mysql_stmt_init(m), *s = mysql_stmt_init(m);

	if (!a || !s || mysql_stmt_prepare(a, ins, strlen(ins)) || mysql_stmt_prepare(s, sel, strlen(sel)))
		return 1;
	for (unsigned i = 0; i < n; i++) {
		char ddl[96];

		/* DDL makes the node's catalog stale: the INSERT may wait for it */
		snprintf(ddl, sizeof(ddl), "CREATE OR REPLACE TABLE t61ddl_%lld (i INT)", first);
		if (i % 2 == 0 && mysql_query(m, ddl))
			printf("ddl: error %u %s\n", mysql_errno(m), mysql_error(m));
		if (insert_round(m, a, first + i, i, blob, txt) || select_round(m, s, i, txt, got)) {
			stmt_err(a, "long data");
			return 1;
		}
	}
	mysql_stmt_close(a);
	mysql_stmt_close(s);
	printf("stored %u/%u\n", verify(host, vport, first, n, blob, txt), n);
	return 0;
}

/* What Connector/C makes of the server's greeting: the version as the
 * client API reports it (the 5.5.5- prefix stripped), its number, the raw
 * greeting's string and whether the connection is taken for MariaDB. */
static int scenario_version(MYSQL *m)
{
	const char *raw = NULL;

	printf("server_info %s\n", mysql_get_server_info(m));
	printf("server_version %lu\n", mysql_get_server_version(m));
	if (mariadb_get_infov(m, MARIADB_CONNECTION_SERVER_VERSION, &raw) == 0 && raw)
		printf("connection_server_version %s\n", raw);
	printf("mariadb %d\n", mariadb_connection(m) ? 1 : 0);
	return 0;
}

int main(int argc, char **argv)
{
	MYSQL *m;
	int rc;

	if (argc < 4 || (strcmp(argv[3], "longdata") == 0 && argc < 7)) {
		fprintf(stderr, "usage: stmt_client HOST PORT cursors | version | longdata FIRST N VERIFY_PORT\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	m = connect_to(argv[1], (unsigned)atoi(argv[2]));
	if (strcmp(argv[3], "cursors") == 0)
		rc = scenario_cursors(m);
	else if (strcmp(argv[3], "version") == 0)
		rc = scenario_version(m);
	else
		rc = scenario_longdata(m, argv[1], atoll(argv[4]), (unsigned)atoi(argv[5]),
				       (unsigned)atoi(argv[6]));
	mysql_close(m);
	return rc;
}
