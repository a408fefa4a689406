/*
 * test_readers.c: the readers built on the one lexer (src/sql/), at their
 * edges: comments of every kind (/ * * /, "-- ", "#"), executable comments
 * (/ *! with the versions every server runs and those some skip, / *M!),
 * strings and `quoted` names. The cache SQL (sql/cachesql.c: its old
 * reader skipped only / * * / comments, so "-- x" before SHOW CACHES sent
 * the command upstream), KILL (sql/local.c: a comment before or inside it
 * sent it upstream as written, where its id names another session), and
 * what a statement does to the session (sql/setuse.c through
 * session/sessvars.c).
 */
#include <stdio.h>
#include <string.h>

#include "session/sessvars.h"
#include "sql/cachesql.h"
#include "sql/local.h"
#include "sql/setuse.h"
#include "tap.h"

static struct sql_cache_cmd cc;
static char err[256];

static int cmd(const char *q)
{
	return sql_cache_cmd_text(q, strlen(q), &cc, err, sizeof(err));
}

/* The same through a read statement's kept tokens. */
static int cmd_stmt(const char *q)
{
	static struct stmt st;

	stmt_begin(&st, q, strlen(q));
	stmt_read(&st);
	return sql_cache_cmd_stmt(&st, &cc, err, sizeof(err));
}

static void cache_sql(void)
{
	static const struct {
		const char *q;
		int kind;
	} v[] = {
		{ "SHOW CACHES", SQL_CC_SHOW_CACHES },
		{ "-- the client's note\nSHOW CACHES", SQL_CC_SHOW_CACHES },
		{ "# a note\nSHOW CACHES", SQL_CC_SHOW_CACHES },
		{ "SHOW /* x */ CACHES", SQL_CC_SHOW_CACHES },
		{ "SHOW CACHES -- trailing note", SQL_CC_SHOW_CACHES },
		{ "SHOW CACHES # trailing note", SQL_CC_SHOW_CACHES },
		{ "SHOW CACHES;;", SQL_CC_SHOW_CACHES },
		{ "/*!50000 SHOW CACHES */", SQL_CC_SHOW_CACHES },
		{ "/*M!100100 SHOW CACHES */", SQL_CC_SHOW_CACHES },
		{ "show proxied queries limit 10", SQL_CC_SHOW_PROXIED },
		{ "SHOW PROXIED QUERIES WHERE query_id = 'q_0123' LIMIT 5", SQL_CC_SHOW_PROXIED },
		{ "SHOW READYSET STATUS", SQL_CC_SHOW_RS_STATUS },
		{ "SHOW SHOAL STATUS", SQL_CC_SHOW_STATUS },
		{ "EXPLAIN LAST STATEMENT", SQL_CC_EXPLAIN_LAST },
		{ "DROP ALL CACHES", SQL_CC_DROP_ALL },
		{ "FLUSH ALL SHALLOW CACHES", SQL_CC_FLUSH_ALL },
		{ "DROP CACHE `my cache`", SQL_CC_DROP },
		{ "FLUSH CACHE c1", SQL_CC_FLUSH },
		{ "SHOW 'CACHES'", SQL_CC_NONE },
		{ "SHOW TABLES", SQL_CC_NONE },
		{ "CREATE TABLE t (a INT)", SQL_CC_NONE },
		{ "EXPLAIN SELECT 1", SQL_CC_NONE },
		{ "SHOW CACHES x", -1 },
		{ "DROP CACHE 'a''b'", -1 },
		{ "DROP CACHE 'unclosed", -1 },
		{ "SHOW PROXIED QUERIES LIMIT 10x", -1 },
		{ "SHOW CACHES WHERE query_id 'q_1'", -1 },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int a = cmd(v[i].q), b = cmd_stmt(v[i].q);

		if (!ok(a == v[i].kind && b == a, "cache SQL [%s]", v[i].q))
			printf("#   got %d (text) %d (stmt), want %d\n", a, b, v[i].kind);
	}
	ok(cmd("SHOW PROXIED QUERIES LIMIT 10") == SQL_CC_SHOW_PROXIED && cc.limit == 10, "LIMIT 10");
	ok(cmd("DROP CACHE `my cache`") == SQL_CC_DROP && strcmp(cc.target, "my cache") == 0, "a `quoted` name");
	ok(cmd("SHOW CACHES x") == -1 && strstr(err, "near 'x'"), "a syntax error names where: %s", err);
	{
		const char *q = "CREATE CACHE POLICY TTL 10s REFRESH EVERY 2 SECONDS COALESCE 50 MS ALWAYS c1 "
				"FROM -- the query\n  SELECT * FROM t WHERE id = ? ; ";

		ok(cmd(q) == SQL_CC_CREATE && cc.ttl_ms == 10000 && cc.refresh_ms == 2000 && cc.coalesce_ms == 50 &&
		   cc.txn == SQL_CC_TXN_ALWAYS && strcmp(cc.name, "c1") == 0 && !cc.from_id &&
		   cc.select_len == 28 && strncmp(cc.select, "SELECT * FROM t WHERE id = ?", 28) == 0,
		   "CREATE CACHE: the policy, a unit written after the number, the SELECT past a comment");
		ok(cmd("CREATE SHALLOW CACHE UNTIL WRITE FROM q_0bc1ae031e4721d4") == SQL_CC_CREATE && cc.from_id &&
		   cc.txn == SQL_CC_TXN_UNTIL_WRITE && strcmp(cc.query_id, "q_0bc1ae031e4721d4") == 0,
		   "CREATE CACHE FROM a query id");
		ok(cmd("CREATE CACHE FROM") == -1 && cmd("CREATE CACHE POLICY TTL 10 DAYS FROM SELECT 1") == -1,
		   "CREATE CACHE without a query, or with a unit it does not know: syntax errors");
		ok(cmd("CREATE CACHE FROM;;  ") == -1 && cmd("CREATE CACHE c FROM ;") == -1,
		   "CREATE CACHE FROM and only ';': a syntax error, no empty query (the fuzzer's find)");
	}
}

static void kill(void)
{
	static const struct {
		const char *q;
		enum sql_kill_kind kind;
		bool query;
		uint64_t id;
	} v[] = {
		{ "KILL 5", SQL_KILL_ID, false, 5 },
		{ "kill query 7", SQL_KILL_ID, true, 7 },
		{ "KILL HARD CONNECTION 8;", SQL_KILL_ID, false, 8 },
		{ "  KILL SOFT QUERY 9 ;; ", SQL_KILL_ID, true, 9 },
		{ "/* a note */ KILL 5", SQL_KILL_ID, false, 5 },
		{ "KILL /* a note */ 5", SQL_KILL_ID, false, 5 },
		{ "KILL 5 -- a note", SQL_KILL_ID, false, 5 },
		{ "# a note\nKILL 5", SQL_KILL_ID, false, 5 },
		{ "/*!50000 KILL 5 */", SQL_KILL_ID, false, 5 },
		{ "/*M!100100 KILL 5 */", SQL_KILL_ID, false, 5 },
		{ "KILL /*!99999 5 */", SQL_KILL_OTHER, false, 0 },
		{ "KILL QUERY ID 5", SQL_KILL_UNSUPPORTED, true, 0 },
		{ "KILL USER app", SQL_KILL_UNSUPPORTED, false, 0 },
		{ "KILL CONNECTION_ID()", SQL_KILL_OTHER, false, 0 },
		{ "KILL `5`", SQL_KILL_OTHER, false, 0 },
		{ "KILL '5'", SQL_KILL_OTHER, false, 0 },
		{ "KILL 5x", SQL_KILL_OTHER, false, 0 },
		{ "KILL 0x5", SQL_KILL_OTHER, false, 0 },
		{ "KILL 18446744073709551616", SQL_KILL_OTHER, false, 0 },
		{ "KILL 5; SELECT 1", SQL_KILL_OTHER, false, 0 },
		{ "SELECT 'KILL 5'", SQL_KILL_NONE, false, 0 },
		{ "`KILL` 5", SQL_KILL_NONE, false, 0 },
		{ "KILLS 5", SQL_KILL_NONE, false, 0 },
		{ "", SQL_KILL_NONE, false, 0 },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct sql_kill k;

		sql_kill_read(v[i].q, strlen(v[i].q), &k);
		if (!ok(k.kind == v[i].kind && (k.kind != SQL_KILL_ID || (k.query == v[i].query && k.id == v[i].id)),
			"KILL [%s]", v[i].q))
			printf("#   got %d query %d id %llu\n", k.kind, k.query, (unsigned long long)k.id);
	}
}

static struct sv_delta d;

static unsigned sv(const char *q)
{
	static struct stmt st;

	stmt_begin(&st, q, strlen(q));
	stmt_read(&st);
	return sv_classify(&st, &d, true);
}

static void session(void)
{
	is_int(sv("SET /* a note */ sql_mode = ''"), SV_CHANGES, "SET with a comment inside");
	ok(d.n == 1 && strcmp(d.vars[0].value, "''") == 0, "  its value");
	is_int(sv("SET sql_mode = '' -- a note"), SV_CHANGES, "SET with a -- comment after");
	is_int(sv("SET sql_mode = '' # a note"), SV_CHANGES, "SET with a # comment after");
	is_int(sv("/*!40101 SET NAMES utf8 */"), SV_CHANGES, "/*!40101 SET NAMES: every server runs it");
	ok(strcmp(d.names, "NAMES utf8") == 0, "  names text: %s", d.names);
	is_int(sv("/*M!100100 SET sql_mode = '' */"), SV_CHANGES, "/*M! SET: read as code");
	is_int(sv("/*!99999 SET sql_mode = '' */"), SV_PIN_FOREVER,
	       "/*!99999 SET: some servers skip it: pinned, never guessed");
	is_int(sv("SET sql_mode = /*!50700 'ANSI' */ ''") & SV_PIN_FOREVER, SV_PIN_FOREVER,
	       "  ... a doubtful comment anywhere in it");
	is_int(sv("SET `sql_mode` = ''"), SV_PIN_FOREVER, "a `quoted` variable name: pinned");
	is_int(sv("SET sql_mode = 'a;b', time_zone = \"+00:00\""), SV_CHANGES, "';' in a string");
	ok(d.n == 2 && strcmp(d.vars[0].value, "'a;b'") == 0 && strcmp(d.vars[1].value, "\"+00:00\"") == 0,
	   "  values as written");
	is_int(sv("SET max_error_count = 1.5e3"), SV_CHANGES, "a number of several tokens");
	ok(strcmp(d.vars[0].value, "1.5e3") == 0, "  as written: %s", d.vars[0].value);
	is_int(sv("SET max_error_count = - .5"), SV_CHANGES, "a sign and a number");
	ok(strcmp(d.vars[0].value, "- .5") == 0, "  as written: %s", d.vars[0].value);
	is_int(sv("SET max_error_count = 1_000"), SV_PIN_FOREVER, "1_000 is no number: pinned");
	is_int(sv("SET max_error_count = 1e-3"), SV_PIN_FOREVER, "1e-3: an expression to this reader: pinned");
	is_int(sv("SET @@session . sql_mode = ''"), SV_PIN_FOREVER, "@@session . x, spaced: pinned");
	is_int(sv("SET @@local.sql_mode = ''"), SV_CHANGES, "@@local.x");
	is_int(sv("SET NAMES utf8 /* c */ COLLATE utf8_bin"), SV_CHANGES, "NAMES ... COLLATE around a comment");
	ok(strcmp(d.names, "NAMES utf8 /* c */ COLLATE utf8_bin") == 0, "  the text as written: %s", d.names);
	is_int(sv("SET NAMES utf8 -- a note\n"), SV_CHANGES, "NAMES with a comment after");
	ok(strcmp(d.names, "NAMES utf8") == 0, "  the comment is not kept: %s", d.names);
	is_int(sv("SET NAMES `utf8`"), SV_CHANGES, "NAMES `utf8`");
	ok(strcmp(d.names, "NAMES `utf8`") == 0, "  as written: %s", d.names);
	is_int(sv("USE `my``db`"), SV_CHANGES, "USE a `quoted` name with a doubled backtick");
	ok(d.set_db && strcmp(d.db, "my`db") == 0, "  its name: %s", d.db);
	is_int(sv("USE /* a note */ db1 -- and another"), SV_CHANGES, "USE with comments");
	is_int(sv("USE 'db1'"), SV_PIN_FOREVER, "USE of a string: pinned");
	is_int(sv("USE `db1"), SV_PIN_FOREVER, "USE of a name never closed: pinned");
	is_int(sv("SET sql_mode = 'ANSI"), SV_PIN_FOREVER, "SET of a string never closed: pinned");
	is_int(sv("DROP DATABASE `db1"), 0, "DROP DATABASE of a name never closed: no change");
	is_int(sv("DROP DATABASE IF EXISTS `a``b`"), SV_CHANGES, "DROP DATABASE of a `quoted` name");
	ok(d.drop_db && strcmp(d.db, "a`b") == 0, "  its name: %s", d.db);
	is_int(sv("COMMIT /* a note */ RELEASE"), SV_RELEASE, "COMMIT RELEASE around a comment");
	is_int(sv("COMMIT -- RELEASE\n"), SV_RELEASE_IF, "RELEASE in a comment: a plain COMMIT");
	is_int(sv("COMMIT AND NO CHAIN NO RELEASE"), 0, "NO RELEASE");
	is_int(sv("ROLLBACK WORK TO SAVEPOINT s"), 0, "ROLLBACK TO a savepoint ends nothing");
	is_int(sv("FLUSH TABLES t FOR EXPORT"), SV_PIN_LOCK, "FLUSH ... FOR EXPORT locks");
	is_int(sv("FLUSH TABLES /* WITH READ LOCK */ t"), 0, "LOCK in a comment locks nothing");
	is_int(sv("SET STATEMENT max_statement_time = 1 FOR SELECT 1"), SV_SELECTS,
	       "SET STATEMENT: no session state (its SELECT: SV_SELECTS)");
}

static void setuse_reader(void)
{
	static struct stmt st;
	struct sql_setuse su;
	const char *q = "SET GLOBAL wait_timeout = 10, SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED";

	stmt_begin(&st, q, strlen(q));
	stmt_read(&st);
	sql_setuse_read(&st, &su);
	ok(su.kind == SQL_SU_SET && su.understood && su.any_global && su.n == 2 &&
	   su.items[0].scope == SQL_SCOPE_GLOBAL && su.items[0].name_len == 12 &&
	   su.items[1].what == SQL_SET_TXN && su.items[1].level == SQL_ISO_READ_COMMITTED,
	   "the SET reader: a global variable, then a session's transaction level");
	q = "SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED";
	stmt_begin(&st, q, strlen(q));
	stmt_read(&st);
	sql_setuse_read(&st, &su);
	ok(su.kind == SQL_SU_SET && !su.understood, "SET TRANSACTION without a scope: not session state");
	ok(sql_value_is("'Release'", 9, "RELEASE") && sql_value_is("release", 7, "RELEASE") &&
	   !sql_value_is("'RELEASE", 8, "RELEASE"), "a value as written is a word in any case, quoted or not");
}

int main(void)
{
	cache_sql();
	kill();
	session();
	setuse_reader();
	return done_testing();
}
