/*
 * test_stmt.c: unit tests for src/sql/stmt.c, the one reading of a
 * statement: its digest is the tokenizer's, read on first use; its reading
 * holds the facts, the tables with their aliases, the statements of a
 * multi-statement text with their first words, the marks (privileges, SET
 * ROLE, FLUSH TABLES, a one-shot READ UNCOMMITTED, an executable comment
 * some servers skip), the kept tokens; the cursor gives exactly the tokens
 * the lexer gives, kept or not; a prepared statement's kept reading comes
 * back as it was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/stmt.h"
#include "tap.h"

static struct stmt st;

static struct stmt *rd(const char *q)
{
	stmt_begin(&st, q, strlen(q));
	stmt_read(&st);
	return &st;
}

/* The tokens of q, from a cursor (kept) and from the lexer, the same? */
static bool cursor_matches_lexer(const char *q, struct sql_cursor *c)
{
	struct sql_lex lx = { .s = q, .n = strlen(q), .raw = true };
	struct sql_tok a, b;

	do {
		sql_lex_next(&lx, &a);
		sql_cursor_next(c, &b);
		if (a.kind != b.kind || a.kw != b.kw || a.p != b.p || a.len != b.len || a.c != b.c)
			return false;
		if (a.kind != T_END && sql_cursor_pos(c) != lx.i)
			return false;
	} while (a.kind != T_END);
	return true;
}

static void digest_and_laziness(void)
{
	const char *q = "SELECT a FROM t WHERE id = 42";
	const struct sql_tok_result *tok;
	struct sql_tok_result ref;
	char text[SQL_TOK_MIN_TEXT_CAP];

	stmt_begin(&st, q, strlen(q));
	ok(st.have == 0, "begun: nothing read");
	tok = stmt_digest(&st);
	ref.text = text;
	ref.text_cap = sizeof(text);
	sql_tokenize(q, strlen(q), &ref);
	ok(tok && st.have == STMT_HAVE_DIGEST && tok->digest == ref.digest &&
	   strcmp(tok->text, ref.text) == 0 && tok->nlits == 1 && tok->keyword == KW_SELECT,
	   "the digest is the tokenizer's, and only it is read");
	ok(stmt_digest(&st) == tok, "  ... once");
	stmt_read(&st);
	ok(st.have == (STMT_HAVE_DIGEST | STMT_HAVE_READ) && st.facts.first == KW_SELECT &&
	   stmt_kind(&st) == SQL_STMT_READ && st.tables.n == 1 && st.where == NULL,
	   "the reading: facts, kind, tables; the WHERE constraints' slot empty");
}

static void parts(void)
{
	rd("SELECT 1; (SELECT 2) ; SET ROLE 'a;b'");
	ok(st.nparts == 3 && st.parts[0].head[0] == KW_SELECT && st.parts[1].head[0] == KW_SELECT &&
	   st.parts[2].head[0] == KW_SET && st.parts[2].head[1] == KW_ROLE,
	   "three statements, each with its first words (a leading '(' skipped, a ';' in a string none)");
	ok(st.parts[0].off == 0 && st.parts[0].len == 8 && memcmp(st.q + st.parts[2].off, "SET", 3) == 0 &&
	   st.parts[2].off + st.parts[2].len == strlen(st.q) && st.parts[1].nhead == STMT_HEAD,
	   "  ... with their text, up to their ';'; a SELECT's first word is all a mark needs");
	rd("SELECT 1;;  ");
	ok(st.nparts == 1, "empty statements are none");
	rd("/* only a comment */");
	ok(st.nparts == 0 && st.ntoks == 0, "a comment alone: no statement, no token");
	{
		char many[400] = "";

		for (int i = 0; i < STMT_PARTS_MAX + 4; i++)
			strcat(many, "DO 1;");
		strcat(many, "GRANT ALL ON *.* TO x");
		rd(many);
		ok(st.nparts == STMT_PARTS_MAX && (st.flags & STMT_PARTS_MORE) && (st.flags & STMT_PRIVILEGES),
		   "more statements than recorded: marked, and the marks still see the last one");
	}
}

static void marks(void)
{
	static const struct {
		const char *q;
		unsigned flags;
	} v[] = {
		{ "GRANT SELECT ON db.* TO u", STMT_PRIVILEGES },
		{ "revoke all on *.* from u", STMT_PRIVILEGES },
		{ "/* c */ ALTER USER u IDENTIFIED BY 'x'", STMT_PRIVILEGES },
		{ "CREATE OR REPLACE USER u", STMT_PRIVILEGES },
		{ "CREATE ROLE r", STMT_PRIVILEGES },
		{ "SET PASSWORD = PASSWORD('x')", STMT_PRIVILEGES },
		{ "SET DEFAULT ROLE r FOR u", STMT_PRIVILEGES },
		{ "FLUSH PRIVILEGES", STMT_PRIVILEGES },
		{ "SELECT 1; DROP USER u", STMT_PRIVILEGES },
		{ "/*!50000 GRANT ALL ON *.* TO u */", STMT_PRIVILEGES },
		{ "/*M!100100 GRANT ALL ON *.* TO u */", STMT_PRIVILEGES },
		{ "SELECT 'GRANT ALL'", 0 },
		{ "CREATE TABLE user (a INT)", 0 },
		{ "SET ROLE r", STMT_SET_ROLE },
		{ "SET ROLE NONE; SELECT 1", STMT_SET_ROLE },
		{ "SET `ROLE` = 1", 0 },
		{ "FLUSH TABLES", STMT_FLUSH_TABLES },
		{ "flush no_write_to_binlog table t", STMT_FLUSH_TABLES },
		{ "FLUSH LOCAL TABLES t WITH READ LOCK", STMT_FLUSH_TABLES },
		{ "REPAIR TABLE t USE_FRM", STMT_FLUSH_TABLES },
		{ "FLUSH STATUS", 0 },
		{ "SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED",
		  STMT_ONESHOT_RU | STMT_READ_UNCOMMITTED },
		{ "SET TRANSACTION READ WRITE, ISOLATION LEVEL READ UNCOMMITTED",
		  STMT_ONESHOT_RU | STMT_READ_UNCOMMITTED },
		{ "SET TRANSACTION ISOLATION LEVEL READ COMMITTED", 0 },
		{ "SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED", 0 },
		{ "SET TRANSACTION ISOLATION LEVEL /* READ UNCOMMITTED */ SERIALIZABLE", 0 },
		{ "SELECT a FROM t /*!99999 , u */", STMT_DOUBT },
		{ "SELECT a FROM t /*!40101 , u */", 0 },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		unsigned marks;

		rd(v[i].q);
		marks = st.flags & ~(unsigned)(STMT_TOKS_MORE | STMT_PARTS_MORE);
		if (!ok(marks == v[i].flags, "marks of [%s]", v[i].q))
			printf("#   got %#x, want %#x\n", marks, v[i].flags);
	}
	ok(sql_changes_privileges("GRANT ALL ON *.* TO u", 21) && sql_changes_privileges("(DROP ROLE r)", 13) &&
	   !sql_changes_privileges("DROP TABLE t", 12) && !sql_changes_privileges("", 0),
	   "a raw text changes privileges by its first words");
	rd("SET GLOBAL ft_boolean_syntax = '+ -'");
	{
		static const char *const names[] = { "FT_BOOLEAN_SYNTAX", NULL };
		bool a = stmt_set_names(&st, names);
		bool b = stmt_set_names(rd("set @@global.`ft_boolean_syntax`=DEFAULT"), names);
		bool c = stmt_set_names(rd("SELECT @@ft_boolean_syntax"), names);
		bool d = stmt_set_names(rd("SET @x = 'ft_boolean_syntax'"), names);

		ok(a && b && !c && !d, "a SET naming a word, as a word or a `quoted` name; not a SELECT, not a string");
	}
}

static void aliases(void)
{
	rd("SELECT * FROM t1 AS a JOIN db.t2 b ON a.x = b.y LEFT JOIN t3 ON 1 JOIN `t4` `q q`, t5 WHERE 1");
	ok(st.tables.n == 5, "five tables");
	ok(st.tables.refs[0].alias && st.tables.refs[0].alias_len == 1 && st.tables.refs[0].alias[0] == 'a',
	   "t1 AS a");
	ok(st.tables.refs[1].alias && st.tables.refs[1].alias[0] == 'b' && st.tables.refs[1].schema,
	   "db.t2 b");
	ok(!st.tables.refs[2].alias, "t3 LEFT JOIN: no alias");
	ok(st.tables.refs[3].alias && st.tables.refs[3].alias_len == 3 && (st.tables.refs[3].quoted & 4),
	   "`t4` `q q`: a quoted alias");
	ok(!st.tables.refs[4].alias, "t5 WHERE: none");
	rd("UPDATE t1 u SET u.a = 1");
	ok(st.tables.n == 1 && st.tables.refs[0].alias && st.tables.refs[0].alias[0] == 'u',
	   "UPDATE t1 u: its alias");
	rd("SELECT * FROM t FOR UPDATE");
	ok(st.tables.n == 1 && !st.tables.refs[0].alias, "FOR UPDATE is no alias");
}

static void cursor(void)
{
	static const char *const texts[] = {
		"SET a = 'a''b', b = `c``d`, c = @v, d = @@global.x, e = 1.5e3 -- c\n, f = \"x\" # d\n;",
		"/*!40101 SET NAMES utf8 */; /*M!100100 SELECT 1 */",
		"SET a = 1 /* unterminated",
		"SHOW CACHES WHERE query_id = 'q_1'",
	};
	static const char *const unkept[] = {
		"SELECT 'a''b', `c``d`, @v, @@global.x, 1.5e3 FROM t -- c\n WHERE a = \"x\" # d\n;",
		"(SET a = 1)", "",
	};
	struct sql_cursor c;
	char longer[2000] = "SET x = (SELECT ";

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		stmt_cursor(&c, rd(texts[i]));
		ok(!(st.flags & STMT_TOKS_MORE) && st.ntoks > 0 && cursor_matches_lexer(texts[i], &c),
		   "the kept tokens are the lexer's: [%s]", texts[i]);
	}
	for (size_t i = 0; i < sizeof(unkept) / sizeof(unkept[0]); i++) {
		stmt_cursor(&c, rd(unkept[i]));
		ok(st.ntoks == 0 && cursor_matches_lexer(unkept[i], &c),
		   "a statement no reader walks keeps no token; its cursor lexes: [%s]", unkept[i]);
	}
	for (int i = 0; i < STMT_TOKS_MAX; i++)
		strcat(longer, "a, /* x */ ");
	strcat(longer, "'end' FROM t)");
	stmt_cursor(&c, rd(longer));
	ok((st.flags & STMT_TOKS_MORE) && st.ntoks == STMT_TOKS_MAX && cursor_matches_lexer(longer, &c),
	   "a longer statement: the kept tokens, then the lexer from where they end");
	sql_cursor_text(&c, longer, strlen(longer));
	ok(cursor_matches_lexer(longer, &c), "a cursor over a text alone is the lexer");
	stmt_cursor(&c, rd("SELECT a FROM t /*!99999 , u */"));
	ok(sql_cursor_doubt(&c), "the cursor of a reading with a doubtful executable comment says so");
	sql_cursor_text(&c, "KILL /*!99999 5 */", 18);
	{
		struct sql_tok t;

		sql_cursor_next(&c, &t);
		ok(!sql_cursor_doubt(&c), "  ... a text's, once passed: not before");
		sql_cursor_peek(&c, &t);
		ok(t.kind == T_WORD && t.len == 1 && *t.p == '5' && sql_cursor_pos(&c) == 4,
		   "  ... (a peek reads the next token and stays)");
		sql_cursor_next(&c, &t);
		ok(sql_cursor_doubt(&c), "  ... after");
	}
}

static void kept(void)
{
	static struct stmt back;
	const char *q = "INSERT INTO db.t1 (a) SELECT b FROM t2 x WHERE f(b)";
	struct stmt_kept *k = stmt_keep(rd(q));
	bool same;

	ok(k != NULL, "a prepared statement's reading is kept");
	if (!k)
		return;
	stmt_unkeep(&back, k, q, strlen(q));
	same = back.have == STMT_HAVE_READ && back.facts.first == st.facts.first &&
	       back.facts.seen == st.facts.seen && back.tables.kind == st.tables.kind &&
	       back.tables.flags == st.tables.flags && back.tables.n == st.tables.n &&
	       back.tables.nroutines == st.tables.nroutines &&
	       memcmp(back.tables.refs, st.tables.refs, st.tables.n * sizeof(st.tables.refs[0])) == 0 &&
	       memcmp(back.tables.routines, st.tables.routines,
		      st.tables.nroutines * sizeof(st.tables.routines[0])) == 0;
	ok(same && back.tables.n == 2 && back.tables.nroutines == 1, "  ... and comes back as it was");
	{
		struct sql_cursor c;

		stmt_cursor(&c, &back);
		ok(back.ntoks == 0 && cursor_matches_lexer(q, &c), "  ... its tokens lexed again by a cursor");
	}
	free(k);
}

int main(void)
{
	digest_and_laziness();
	parts();
	marks();
	aliases();
	cursor();
	kept();
	return done_testing();
}
