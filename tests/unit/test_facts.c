/*
 * test_facts.c: unit tests for src/sql/keywords.c (every word's id found
 * in any case, nothing else given one) and src/sql/facts.c (the leading
 * word, and the marks read from code only: not from strings, `quoted`
 * names or comments, but from executable comments).
 */
#include "sql/facts.h"
#include "sql/lexer.h"
#include "sql/stmt.h"
#include "tap.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const char *const texts[KW__COUNT] = {
	[KW_NONE] = "",
#define TEXT(w) [KW_##w] = #w,
	SQL_KEYWORDS(TEXT)
#undef TEXT
};

static void keywords(void)
{
	int bad = 0;

	for (int id = 1; id < KW__COUNT; id++) {
		const char *w = texts[id];
		char lower[64];
		size_t n = strlen(w);

		for (size_t i = 0; i <= n; i++)
			lower[i] = (char)tolower((unsigned char)w[i]);
		if (sql_kw_lookup(w, n) != (enum sql_kw)id || sql_kw_lookup(lower, n) != (enum sql_kw)id) {
			printf("# %s not found as itself\n", w);
			bad++;
		}
		if (n > 1 && sql_kw_lookup(w, n - 1) == (enum sql_kw)id)
			bad++;
	}
	ok(bad == 0, "all %d keywords found by their text, in either case, and not by a prefix", KW__COUNT - 1);
	is_int(sql_kw_lookup("SeLeCt", 6), KW_SELECT, "mixed case");
	is_int(sql_kw_lookup("SELECTS", 7), KW_NONE, "a longer word is none");
	is_int(sql_kw_lookup("colour", 6), KW_NONE, "a column name is none");
	is_int(sql_kw_lookup("SELECT_", 7), KW_NONE, "a trailing _ is another word");
	is_int(sql_kw_lookup("", 0), KW_NONE, "the empty word");
	is_int(sql_kw_lookup("SQL_CALC_FOUND_ROWS_AND_MORE_THAN_24", 36), KW_NONE, "too long for any keyword");
	is_int(sql_kw_lookup("last_insert_id", 14), KW_LAST_INSERT_ID, "a word with '_'");
	is_int(sql_kw_lookup("ab", 2), KW_NONE, "ab is none (AS and AT share its first letter and length)");
}

static void lexer_ids(void)
{
	static const char q[] = "select `select`, 'select', 12 from t";
	static const enum sql_kw want[] = { KW_SELECT, KW_NONE, KW_NONE, KW_NONE, KW_NONE, KW_NONE,
					     KW_FROM, KW_NONE };
	struct sql_lex lx = { .s = q, .n = sizeof(q) - 1, .raw = true };
	struct sql_tok t;
	size_t n = 0, same = 0;

	for (sql_lex_next(&lx, &t); t.kind != T_END && n < 8; sql_lex_next(&lx, &t))
		same += t.kw == want[n++];
	ok(n == 8 && same == 8, "the lexer gives words their ids; `quoted` names, strings, numbers and "
	   "punctuation none (%zu of %zu)", same, n);
}

static struct stmt_facts facts(const char *q)
{
	struct stmt_facts f;

	stmt_facts_read(q, strlen(q), &f);
	return f;
}

static void leading(void)
{
	is_int(facts("SELECT 1").first, KW_SELECT, "leading SELECT");
	is_int(facts("((select 1))").first, KW_SELECT, "past parentheses");
	is_int(facts("/* c */ -- x\n# y\n INSERT INTO t VALUES (1)").first, KW_INSERT, "past comments");
	is_int(facts("/*!40101 SET @a = 1 */").first, KW_SET, "an executable comment's body is code");
	is_int(facts("`SET` x").first, KW_NONE, "a quoted name is no keyword");
	is_int(facts("frobnicate").first, KW_NONE, "an unknown word");
	is_int(facts("").first, KW_NONE, "empty text");
	is_int(facts("SELECT 1").seen, 0, "the leading SELECT marks nothing");
}

static void marks(void)
{
	is_int(facts("SELECT 1; SELECT 2").seen & SF_MULTI, SF_MULTI, "two statements");
	is_int(facts("SELECT 1;  ").seen & SF_MULTI, 0, "a trailing ; is one statement");
	is_int(facts("SELECT ';x'").seen & SF_MULTI, 0, "a ; in a string");
	is_int(facts("SELECT @a := 1").seen, SF_ASSIGN, ":=");
	is_int(facts("SELECT a : b").seen, 0, "a lone ':'");
	is_int(facts("SELECT 1 INTO @v").seen, SF_INTO_VAR, "INTO @v");
	is_int(facts("SELECT @v").seen, 0, "reading @v marks nothing");
	is_int(facts("SELECT get_lock('a', 1)").seen, SF_GET_LOCK, "GET_LOCK, lower case");
	is_int(facts("SELECT 'GET_LOCK(1)'").seen, 0, "GET_LOCK in a string");
	is_int(facts("SELECT `get_lock` FROM t").seen, 0, "a column named `get_lock`");
	is_int(facts("SELECT 1 /* GET_LOCK */").seen, 0, "in a comment");
	is_int(facts("SELECT 1 /*! , GET_LOCK('a',1) */").seen, SF_GET_LOCK, "in an executable comment");
	is_int(facts("SELECT 1 -- GET_LOCK\n").seen, 0, "after -- ");
	is_int(facts("CREATE TEMPORARY TABLE t (a INT)").seen, SF_TEMPORARY, "TEMPORARY");
	is_int(facts("SET @@session.profiling = 1").seen, SF_PROFILING, "@@session.profiling");
	is_int(facts("SET profiling_history_size = 1").seen, SF_PROFILING, "profiling_history_size");
	is_int(facts("SELECT SQL_CALC_FOUND_ROWS a FROM t").seen, SF_CALC_FOUND, "SQL_CALC_FOUND_ROWS");
	is_int(facts("SELECT FOUND_ROWS()").seen, SF_FOUND_ROWS, "FOUND_ROWS");
	is_int(facts("SELECT CONNECTION_ID()").seen, SF_CONNECTION_ID, "CONNECTION_ID");
	is_int(facts("INSERT INTO t SELECT * FROM u").seen, SF_SELECT, "INSERT ... SELECT");
	is_int(facts("SELECT LAST_INSERT_ID()").seen, SF_LAST_ID, "LAST_INSERT_ID");
	is_int(facts("SELECT @@identity").seen, SF_LAST_ID, "@@identity");
	is_int(facts("SELECT @@session.last_insert_id").seen, SF_LAST_ID, "@@session.last_insert_id");
	is_int(facts("SELECT 'LAST_INSERT_ID()'").seen, 0, "LAST_INSERT_ID in a string");
	is_int(facts("SET @select = 1, @a.identity = 2, @temporary = 3").seen, 0,
	       "user variables named like keywords mark nothing");
	is_int(facts("SELECT @v INTO @w").seen, SF_INTO_VAR, "... and end where the name ends (INTO @w)");
	is_int(facts("SELECT @v SELECT").seen, SF_SELECT, "a word after a space is no part of the name");
}

/* The table reader's pass notes the same facts as a pass of their own,
 * whatever it reads again (a SELECT read twice, SET STATEMENT's look for
 * FOR, WITH's CTE list) or leaves unread (an executable comment some
 * servers skip). */
static void with_tables(void)
{
	static const char *const stmts[] = {
		"SELECT a FROM t WHERE id = 1",
		"INSERT INTO t SELECT @v := a FROM u",
		"(SELECT 1) UNION (SELECT LAST_INSERT_ID())",
		"SET STATEMENT max_statement_time = 1 FOR SELECT FOUND_ROWS() FROM t",
		"WITH c AS (SELECT GET_LOCK('x', 1)) SELECT * FROM c",
		"SELECT 1 INTO @v",
		"UPDATE t SET a = CONNECTION_ID(); SELECT 2",
		"SELECT a FROM t /*!99999 , u */ WHERE SQL_CALC_FOUND_ROWS",
		"CREATE TEMPORARY TABLE x (a INT)",
		"SELECT * FROM t WHERE a IN (SELECT b FROM u WHERE c = @@identity)",
		"",
	};
	int same = 0, n = (int)(sizeof(stmts) / sizeof(stmts[0]));

	for (int i = 0; i < n; i++) {
		static struct stmt st;
		struct stmt_facts alone, noted;

		stmt_facts_read(stmts[i], strlen(stmts[i]), &alone);
		stmt_begin(&st, stmts[i], strlen(stmts[i]));
		stmt_read(&st);
		noted = st.facts;
		if (alone.first == noted.first && alone.seen == noted.seen)
			same++;
		else
			printf("# %s: first %d/%d, seen %#x/%#x\n", stmts[i], alone.first, noted.first,
			       alone.seen, noted.seen);
	}
	is_int(same, n, "the one reading (stmt_read) notes the facts a pass of their own reads");
}

int main(void)
{
	keywords();
	lexer_ids();
	leading();
	marks();
	with_tables();
	return done_testing();
}
