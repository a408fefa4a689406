/*
 * test_classify.c: unit tests for the cacheability verdict (sql/classify.c)
 * and the function table it consults (sql/functions.c).  Inputs are written
 * as the tokenizer's digest_text (literals already '?').  Ends with random
 * byte and token-soup inputs, meant to run under ASan/UBSan.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/classify.h"
#include "sql/functions.h"
#include "tap.h"

#define OK (-1)

struct tcase {
	const char *sql;
	int want; /* OK: cacheable, else an enum reason_id */
};

static const char leaderboard[] =
	"SELECT c.customer_id,c.first_name,c.last_name,ci.city,SUM(p.amount) "
	"AS lifetime_value,COUNT(p.payment_id) AS payments,(SELECT cat.name "
	"FROM payment p2 JOIN rental r2 ON r2.rental_id = p2.rental_id JOIN "
	"inventory i2 ON i2.inventory_id = r2.inventory_id JOIN film_category "
	"fc ON fc.film_id = i2.film_id JOIN category cat ON cat.category_id = "
	"fc.category_id WHERE p2.customer_id = c.customer_id GROUP BY cat.name "
	"ORDER BY SUM(p2.amount) DESC LIMIT ?) AS top_category FROM customer c "
	"JOIN address a ON a.address_id = c.address_id JOIN city ci ON "
	"ci.city_id = a.city_id JOIN payment p ON p.customer_id = c.customer_id "
	"GROUP BY c.customer_id,c.first_name,c.last_name,ci.city ORDER BY "
	"lifetime_value DESC LIMIT ?";

static const struct tcase cases[] = {
	/* ---- cacheable ---- */
	{ "SELECT ?", OK },
	{ "SELECT ?+?", OK },
	{ "SELECT * FROM t WHERE id = ?", OK },
	{ "select * from t where x = ?", OK },
	{ "  SELECT ?", OK },
	{ "SELECT ?;", OK },
	{ "SELECT ? ; ;", OK },
	{ "SELECT COUNT(*) FROM t", OK },
	{ "SELECT count (*) FROM t", OK },
	{ "SELECT ? FROM DUAL", OK },
	{ "SELECT SQL_CACHE a FROM t", OK },
	{ "SELECT `now`,`user` FROM t", OK },
	{ "SELECT `now` FROM `user` WHERE `current_timestamp` = ?", OK },
	{ "SELECT t.now,t.current_timestamp,t.into FROM t", OK },
	{ "SELECT user,`@x`,`a;b` FROM t", OK },
	{ "SELECT `a``b(` FROM t", OK },
	{ "SELECT sys_id,mysql_version FROM mysql_stats", OK },
	{ "SELECT ?,?", OK },
	{ "SELECT 'str' ?", OK },               /* kept / *! body */
	{ "SELECT 'now() @x ; INTO' ?", OK },
	{ "SELECT UPPER(LOWER(CONCAT(a,SUBSTRING(b,?,?)))) FROM t", OK },
	{ "SELECT lower(a),Upper(b),St_AsText(g) FROM t", OK },
	{ "SELECT CAST(? AS UNSIGNED),CAST(? AS UNSIGNED),CAST(? AS DATE),"
	  "CAST(? AS DECIMAL(?,?)),CAST(NULL AS CHAR),CONVERT(?,BINARY)", OK },
	{ "SELECT CAST(a AS DATETIME(?)),CAST(b AS CHAR(?)) FROM t", OK },
	{ "SELECT c_enum,COUNT(*),SUM(c_int),AVG(c_double),MIN(c_date),"
	  "MAX(c_datetime),GROUP_CONCAT(id ORDER BY id) FROM shoal_types "
	  "GROUP BY c_enum ORDER BY c_enum", OK },
	{ "SELECT id,ROW_NUMBER() OVER (ORDER BY c_int DESC),SUM(c_smallint) "
	  "OVER (ORDER BY id) FROM shoal_types ORDER BY id", OK },
	{ "SELECT a,RANK() OVER w FROM t WINDOW w AS (PARTITION BY b ORDER BY c)",
	  OK },
	{ "WITH RECURSIVE cte (n) AS (SELECT ? UNION ALL SELECT n ? FROM cte "
	  "WHERE n < ?) SELECT n,n * n FROM cte", OK },
	{ "WITH a AS (SELECT ?),b (x,`y`) AS (SELECT * FROM a) SELECT * FROM b",
	  OK },
	{ "with cte as (select a from t) (select * from cte)", OK },
	{ "(SELECT a FROM t) UNION (SELECT a FROM u)", OK },
	{ "((SELECT ?))", OK },
	{ "SELECT id FROM shoal_types WHERE id < ? UNION ALL SELECT id *? FROM "
	  "shoal_types WHERE id > ? ORDER BY ?", OK },
	{ "SELECT * FROM t WHERE a IN (?,?,?,...)", OK },
	{ "SELECT * FROM t WHERE (a,b) IN ((?,?),(?,?))", OK },
	{ "SELECT * FROM t WHERE (a,b) = ROW(?,?)", OK },
	{ "SELECT * FROM t WHERE EXISTS (SELECT ? FROM u WHERE u.id = t.id)", OK },
	{ "SELECT * FROM t WHERE a IN (SELECT b FROM u) AND NOT (c = ?) OR (d)",
	  OK },
	{ "SELECT * FROM (SELECT a,b FROM t) AS dt (x,y)", OK },
	{ "SELECT * FROM (SELECT a FROM t) dt (x)", OK },
	{ "SELECT * FROM t1 LEFT JOIN (t2,t3) ON t1.a = t2.a", OK },
	{ "SELECT * FROM t JOIN u USING (id)", OK },
	{ "SELECT a FROM t USE INDEX (idx) IGNORE KEY FOR JOIN (k2) WHERE b = ?",
	  OK },
	{ "SELECT * FROM t PARTITION (p0,p1)", OK },
	{ "SELECT CASE WHEN (a) THEN ? ELSE (b) END FROM t", OK },
	{ "SELECT IF(a > ?,?,?),IFNULL(b,?),COALESCE(c,d),NULLIF(e,?) FROM t",
	  OK },
	{ "SELECT MATCH (title) AGAINST (? IN BOOLEAN MODE) FROM t", OK },
	{ "SELECT DATE_ADD(d,INTERVAL ? DAY),EXTRACT(YEAR FROM d) FROM t", OK },
	{ "SELECT SUBSTRING(a FROM ? FOR ?),TRIM(LEADING ? FROM b) FROM t", OK },
	{ "SELECT DATE_FORMAT(c_datetime,?),TIME_TO_SEC(c_time) FROM "
	  "shoal_types WHERE id = ?", OK },
	{ "SELECT JSON_EXTRACT(c_json,?),JSON_VALUE(c_json,?),JSON_TYPE(c_json) "
	  "FROM t", OK },
	{ "SELECT * FROM JSON_TABLE(?,? COLUMNS (id INT PATH ?)) AS jt", OK },
	{ "SELECT a FROM t WHERE b MEMBER OF (c) AND d LIKE ? ESCAPE ?", OK },
	{ "SELECT FROM_UNIXTIME(a),CONVERT_TZ(b,?,?),VERSION() FROM t", OK },
	{ "SELECT `abs`(a) FROM t", OK },
	{ "SELECT INSERT(a,?,?,?),LEFT(b,?),REPLACE(c,?,?) FROM t", OK },
	{ "SELECT a FROM t ORDER BY b DESC LIMIT ?,?", OK },
	{ "SELECT a FROM t WHERE b = ? LOCK", OK },

	/* ---- not a SELECT ---- */
	{ "", WHY_NOT_SELECT },
	{ "   ", WHY_NOT_SELECT },
	{ "INSERT INTO t VALUES (?)", WHY_NOT_SELECT },
	{ "UPDATE t SET a = ? WHERE id = ?", WHY_NOT_SELECT },
	{ "delete from t", WHY_NOT_SELECT },
	{ "SHOW WARNINGS", WHY_NOT_SELECT },
	{ "SET @m = ?", WHY_NOT_SELECT },
	{ "EXPLAIN SELECT ?", WHY_NOT_SELECT },
	{ "CALL p(?)", WHY_NOT_SELECT },
	{ "DO ?", WHY_NOT_SELECT },
	{ "TABLE t", WHY_NOT_SELECT },
	{ "SELECTX ?", WHY_NOT_SELECT },
	{ "`SELECT` ?", WHY_NOT_SELECT },
	{ "(UPDATE t SET a = ?)", WHY_NOT_SELECT },
	{ "WITH a AS (SELECT ?) DELETE FROM t", WHY_NOT_SELECT },
	{ "WITH a AS (SELECT ?) UPDATE t SET x = ?", WHY_NOT_SELECT },
	{ "WITH a AS (SELECT ? UPDATE t", WHY_NOT_SELECT },
	{ "WITH", WHY_NOT_SELECT },
	{ "WITH RECURSIVE", WHY_NOT_SELECT },
	{ "WITH a SELECT ?", WHY_NOT_SELECT },
	{ "UPDATE t SET a = ?; SELECT ?", WHY_NOT_SELECT },

	/* ---- multiple statements ---- */
	{ "SELECT ?; SELECT ?", WHY_MULTI_STATEMENT },
	{ "SELECT ?;DROP TABLE t", WHY_MULTI_STATEMENT },
	{ "SELECT ? ; ; SELECT ?", WHY_MULTI_STATEMENT },
	{ "SELECT NOW(); SELECT ?", WHY_MULTI_STATEMENT },

	/* ---- non-deterministic ---- */
	{ "SELECT NOW()", WHY_NONDETERMINISTIC },
	{ "SELECT now ()", WHY_NONDETERMINISTIC },
	{ "SELECT CURRENT_TIMESTAMP", WHY_NONDETERMINISTIC },
	{ "SELECT DEFAULT(ts) FROM t", WHY_NONDETERMINISTIC },
	{ "select current_timestamp()", WHY_NONDETERMINISTIC },
	{ "SELECT * FROM t WHERE d = CURRENT_DATE", WHY_NONDETERMINISTIC },
	{ "SELECT * FROM t WHERE d < UTC_DATE", WHY_NONDETERMINISTIC },
	{ "SELECT LOCALTIME", WHY_NONDETERMINISTIC },
	{ "SELECT * FROM t WHERE d > CURDATE()", WHY_NONDETERMINISTIC },
	{ "SELECT SYSDATE()", WHY_NONDETERMINISTIC },
	{ "SELECT a FROM t ORDER BY RAND() LIMIT ?", WHY_NONDETERMINISTIC },
	{ "SELECT UUID()", WHY_NONDETERMINISTIC },
	{ "SELECT UNIX_TIMESTAMP(c_datetime) FROM t", WHY_NONDETERMINISTIC },
	{ "SELECT DATE(NOW())", WHY_NONDETERMINISTIC },
	{ "SELECT COUNT(*) FROM t WHERE d > DATE_SUB(NOW(),INTERVAL ? DAY)",
	  WHY_NONDETERMINISTIC },
	{ "WITH c AS (SELECT NOW() AS n) SELECT * FROM c",
	  WHY_NONDETERMINISTIC },
	{ "SELECT * FROM t WHERE id IN (SELECT id FROM u WHERE ts > NOW())",
	  WHY_NONDETERMINISTIC },
	{ "SELECT a FROM t UNION SELECT RAND()", WHY_NONDETERMINISTIC },
	{ "SELECT `now`()", WHY_NONDETERMINISTIC },

	/* ---- side effects ---- */
	{ "SELECT SLEEP(?)", WHY_SIDE_EFFECTS },
	{ "SELECT GET_LOCK(?,?)", WHY_SIDE_EFFECTS },
	{ "SELECT RELEASE_LOCK(?)", WHY_SIDE_EFFECTS },
	{ "SELECT BENCHMARK(?,MD5(?))", WHY_SIDE_EFFECTS },
	{ "SELECT LOAD_FILE(?)", WHY_SIDE_EFFECTS },
	{ "SELECT NEXTVAL(s)", WHY_SIDE_EFFECTS },
	{ "SELECT NEXT VALUE FOR s", WHY_SIDE_EFFECTS },
	{ "SELECT SQL_CALC_FOUND_ROWS * FROM t LIMIT ?", WHY_SIDE_EFFECTS },

	/* ---- session-specific ---- */
	{ "SELECT USER()", WHY_SESSION_FUNCTION },
	{ "SELECT CURRENT_USER", WHY_SESSION_FUNCTION },
	{ "SELECT CURRENT_ROLE FROM t", WHY_SESSION_FUNCTION },
	{ "SELECT ExtractValue(?, ?)", WHY_SESSION_FUNCTION },
	{ "SELECT UPDATEXML(doc, ?, ?) FROM t", WHY_SESSION_FUNCTION },
	{ "SELECT current_role()", WHY_SESSION_FUNCTION },
	{ "SELECT current_user()", WHY_SESSION_FUNCTION },
	{ "SELECT DATABASE()", WHY_SESSION_FUNCTION },
	{ "SELECT * FROM t WHERE owner = SCHEMA()", WHY_SESSION_FUNCTION },
	{ "SELECT CONNECTION_ID()", WHY_SESSION_FUNCTION },
	{ "SELECT LAST_INSERT_ID()", WHY_SESSION_FUNCTION },
	{ "SELECT FOUND_ROWS()", WHY_SESSION_FUNCTION },
	{ "SELECT ROW_COUNT()", WHY_SESSION_FUNCTION },
	{ "SELECT SQL%ROWCOUNT", WHY_SESSION_FUNCTION },
	{ "SELECT sql % rowcount FROM t", WHY_SESSION_FUNCTION },
	{ "SELECT sql % ? FROM t", OK },
	{ "SELECT CHARSET(?)", WHY_SESSION_FUNCTION },
	{ "SELECT PREVIOUS VALUE FOR s", WHY_SESSION_FUNCTION },

	/* ---- variables ---- */
	{ "SELECT @x", WHY_USER_VARIABLE },
	{ "SELECT * FROM t WHERE a = @v", WHY_USER_VARIABLE },
	{ "SELECT @rownum := @rownum ? FROM t", WHY_USER_VARIABLE },
	{ "SELECT @`quoted var`", WHY_USER_VARIABLE },
	{ "SELECT @@warning_count,@@error_count", WHY_SYSTEM_VARIABLE },
	{ "SELECT @@session.sql_mode", WHY_SYSTEM_VARIABLE },
	{ "SELECT a FROM t WHERE b < @@GLOBAL.max_connections",
	  WHY_SYSTEM_VARIABLE },

	/* ---- system schemas ---- */
	{ "SELECT * FROM information_schema.tables", WHY_SYSTEM_SCHEMA },
	{ "SELECT table_name FROM INFORMATION_SCHEMA.TABLES WHERE "
	  "table_schema = ?", WHY_SYSTEM_SCHEMA },
	{ "SELECT * FROM `information_schema`.`columns`", WHY_SYSTEM_SCHEMA },
	{ "SELECT user,host FROM mysql.user", WHY_SYSTEM_SCHEMA },
	{ "SELECT * FROM `mysql`.`user`", WHY_SYSTEM_SCHEMA },
	{ "SELECT * FROM mysql . user", WHY_SYSTEM_SCHEMA },
	{ "SELECT * FROM sys.session", WHY_SYSTEM_SCHEMA },
	{ "SELECT * FROM Performance_Schema.threads", WHY_SYSTEM_SCHEMA },
	{ "SELECT * FROM t WHERE a IN (SELECT b FROM mysql.db)",
	  WHY_SYSTEM_SCHEMA },
	{ "SELECT sys.format_bytes(?)", WHY_SYSTEM_SCHEMA },

	/* ---- user-defined or stored functions ---- */
	{ "SELECT my_func(a) FROM t", WHY_UDF },
	{ "SELECT f (a) FROM t", WHY_UDF },
	{ "SELECT a FROM t WHERE b = myfunc()", WHY_UDF },
	{ "SELECT mydb.f(a) FROM t", WHY_UDF },
	{ "SELECT `mydb`.`f`(a) FROM t", WHY_UDF },
	{ "SELECT mydb.now()", WHY_UDF },
	{ "SELECT `f`(a) FROM t", WHY_UDF },
	{ "SELECT `in` (a) FROM t", WHY_UDF },
	{ "SELECT UPPER(my_func(a)) FROM t", WHY_UDF },

	/* ---- locking reads ---- */
	{ "SELECT * FROM t WHERE id = ? FOR UPDATE", WHY_LOCKING_READ },
	{ "select * from t where id = ? for update nowait", WHY_LOCKING_READ },
	{ "SELECT * FROM t FOR SHARE", WHY_LOCKING_READ },
	{ "SELECT * FROM t FOR UPDATE OF t SKIP LOCKED", WHY_LOCKING_READ },
	{ "SELECT * FROM t WHERE id = ? LOCK IN SHARE MODE",
	  WHY_LOCKING_READ },

	/* ---- INTO ---- */
	{ "SELECT a INTO @x FROM t", WHY_INTO },
	{ "SELECT * INTO OUTFILE ? FROM t", WHY_INTO },
	{ "SELECT a FROM t INTO DUMPFILE ?", WHY_INTO },
	{ "select a from t into @x", WHY_INTO },

	/* ---- SQL_NO_CACHE ---- */
	{ "SELECT SQL_NO_CACHE * FROM t", WHY_NO_CACHE },
	{ "select sql_no_cache a from t", WHY_NO_CACHE },

	/* ---- precedence: first in text order ---- */
	{ "SELECT NOW(),@x", WHY_NONDETERMINISTIC },
	{ "SELECT @x,NOW()", WHY_USER_VARIABLE },
	{ "SELECT SQL_NO_CACHE NOW()", WHY_NO_CACHE },
	{ "SELECT * FROM mysql.user FOR UPDATE", WHY_SYSTEM_SCHEMA },
	{ "SELECT f(a) FROM t FOR UPDATE", WHY_UDF },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* NULL, or a shape's verdict from the table (never a detailed record) */
static int is_known_reason(const struct reason *r)
{
	return !r || (r->id >= WHY_NOT_SELECT && r->id <= WHY_NO_CACHE && r == reason_of(r->id));
}

static void test_cases(void)
{
	for (size_t i = 0; i < NCASES; i++) {
		const struct tcase *c = &cases[i];
		const struct reason *r = sql_skip_reason(c->sql, strlen(c->sql));
		char name[200];

		snprintf(name, sizeof(name), "%s: %.150s",
			 c->want != OK ? reason_of((enum reason_id)c->want)->text : "cacheable", c->sql);
		if (c->want == OK) {
			if (!ok(r == NULL, "%s", name))
				printf("#   got '%s'\n", r->text);
		} else {
			is_str(r ? r->text : NULL, reason_of((enum reason_id)c->want)->text, name);
		}
	}
}

static void test_api(void)
{
	const struct reason *r;
	size_t n = 0;

	ok(sql_skip_reason(NULL, 0) == reason_of(WHY_NOT_SELECT), "NULL input");
	ok(sql_skip_reason(NULL, 5) == reason_of(WHY_NOT_SELECT), "NULL with length");
	ok(sql_skip_reason(leaderboard, strlen(leaderboard)) == NULL,
	   "seed leaderboard is cacheable");
	ok(sql_skip_reason("SELECT ? FOR UPDATE", 8) == NULL,
	   "only len bytes are read");
	ok(sql_skip_reason("SELECT NOW()", 10) == NULL,
	   "NOW without its '(' (cut by len) is a column");
	r = sql_skip_reason("SELECT RAND()", 13);
	ok(r && r == sql_skip_reason("SELECT UUID()", 13),
	   "same reason, same pointer");
	ok(is_known_reason(r) && r->id == WHY_NONDETERMINISTIC, "reason pointer is the table's");
	for (size_t i = 0; i < WHY__COUNT; i++)
		if (reason_table[i].id == (enum reason_id)i && reason_table[i].text &&
		    reason_table[i].label)
			n++;
	is_int(n, WHY__COUNT, "every reason in the table has its own id, a text and a label");
	is_str(reason_of(WHY_NOT_SELECT)->text, "not a SELECT", "first verdict's text");
	is_str(reason_of(WHY_INTO)->text, "INTO", "INTO reason string");
	ok(reason_of(WHY_USER_VARIABLE)->permanent && !reason_of(WHY_IN_TRANSACTION)->permanent,
	   "a shape's verdict is permanent, a session's state is not");
	r = reason_detail(WHY_VIEW, "view %s.%s: %s", "db", "v", "user variable");
	ok(r->id == WHY_VIEW && r->permanent && strcmp(r->text, "view db.v: user variable") == 0 &&
	   r == reason_detail(WHY_VIEW, "view db.v: %s", "user variable"),
	   "a detailed reason keeps its kind, and one text is one record");
}

static void test_functions(void)
{
	size_t n = sql_fn_count(), bad_order = 0, bad_find = 0;
	const struct sql_fn *f;
	char low[64];

	ok(n > 300, "function table has %zu entries", n);
	for (size_t i = 0; i < n; i++) {
		const char *name = sql_fn_at(i)->name;
		size_t len = strlen(name);

		if (i > 0 && strcmp(sql_fn_at(i - 1)->name, name) >= 0)
			bad_order++;
		for (size_t k = 0; k <= len && k < sizeof(low); k++)
			low[k] = (char)((name[k] >= 'A' && name[k] <= 'Z') ?
					name[k] + 32 : name[k]);
		if (sql_fn_lookup(name, len) != sql_fn_at(i) ||
		    sql_fn_lookup(low, len) != sql_fn_at(i))
			bad_find++;
	}
	is_int(bad_order, 0, "table sorted by strcmp, no duplicates");
	is_int(bad_find, 0, "every entry found, upper and lower case");
	ok(sql_fn_at(n) == NULL, "sql_fn_at past the end");
	ok(sql_fn_lookup("NOWX", 4) == NULL, "unknown name");
	ok(sql_fn_lookup("NOW()", 3) != NULL, "length-bounded lookup");
	ok(sql_fn_lookup("", 0) == NULL && sql_fn_lookup(NULL, 3) == NULL,
	   "empty and NULL names");
	ok(sql_fn_lookup("JSON_SCHEMA_VALIDATION_REPORT_AND_THEN_SOME_MORE", 48)
	   == NULL, "overlong name");
	f = sql_fn_lookup("current_timestamp", 17);
	ok(f && f->kind == SQL_FN_NONDETERMINISTIC && (f->flags & SQL_FN_BARE),
	   "CURRENT_TIMESTAMP: non-deterministic, also bare");
	f = sql_fn_lookup("Sleep", 5);
	ok(f && f->kind == SQL_FN_SIDE_EFFECTS, "SLEEP: side effects");
	f = sql_fn_lookup("user", 4);
	ok(f && f->kind == SQL_FN_SESSION && !(f->flags & SQL_FN_BARE),
	   "USER: session-specific, only as a call");
	f = sql_fn_lookup("in", 2);
	ok(f && f->kind == SQL_FN_KEYWORD, "IN is a keyword");
	f = sql_fn_lookup("Count", 5);
	ok(f && f->kind == SQL_FN_DETERMINISTIC, "COUNT is allowlisted");
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Exactly-sized heap copies so ASan sees any read past len. */
static int classify_copy(const char *src, size_t len)
{
	char *buf = malloc(len ? len : 1);
	int good;

	if (!buf)
		return 0;
	memcpy(buf, src, len);
	good = is_known_reason(sql_skip_reason(buf, len));
	free(buf);
	return good;
}

static void test_random_bytes(void)
{
	uint64_t seed = 0x5eed1234abcdULL;
	char buf[600];
	size_t bad = 0;

	for (int iter = 0; iter < 20000; iter++) {
		size_t len = rng_next(&seed) % sizeof(buf);

		for (size_t i = 0; i < len; i++)
			buf[i] = (char)rng_next(&seed);
		if (iter % 2 && len >= 7)
			memcpy(buf, "SELECT ", 7);
		if (!classify_copy(buf, len))
			bad++;
	}
	is_int(bad, 0, "20000 random byte strings: no crash, known reasons");
}

static void test_token_soup(void)
{
	static const char *const toks[] = {
		"SELECT", "WITH", "RECURSIVE", "(", ")", "`", "'", "\"", "\\",
		"@", "@@", ".", "...", ";", ",", "?", " ", "NOW", "now", "AS",
		"FOR", "UPDATE", "LOCK", "IN", "INTO", "mysql", "sys", "f",
		"COUNT", "CURRENT_TIMESTAMP", "NEXT", "VALUE", "x", "`a`", "\0",
		"\xff", "SQL_NO_CACHE", "OVER", "t.", "ROW",
	};
	const size_t ntoks = sizeof(toks) / sizeof(toks[0]);
	uint64_t seed = 0xfeedfacecafeULL;
	char buf[800];
	size_t bad = 0;

	for (int iter = 0; iter < 20000; iter++) {
		size_t len = 0, count = rng_next(&seed) % 60;

		for (size_t k = 0; k < count; k++) {
			const char *tk = toks[rng_next(&seed) % ntoks];
			size_t tl = tk[0] ? strlen(tk) : 1;

			if (len + tl > sizeof(buf))
				break;
			memcpy(buf + len, tk, tl);
			len += tl;
		}
		if (!classify_copy(buf, len))
			bad++;
	}
	is_int(bad, 0, "20000 token soups: no crash, known reasons");
}

int main(void)
{
	test_cases();
	test_api();
	test_functions();
	test_random_bytes();
	test_token_soup();
	return done_testing();
}
