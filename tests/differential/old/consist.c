/*
 * old/consist.c: consist's FLUSH and SET readers before issue 39, copied from git at 5a9fd58 for the
 * differential (tests/differential/differential.c); only that test builds
 * it. Each piece names the file and line it comes from and is as it was
 * there, but for those marked "adapted" (effects or catalog lookups
 * recorded instead of made, through the same loop).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "readers.h"
#include "sql/functions.h"
#include "sql/lexer.h"
#include "sql/tables.h"

/* ==== src/cache/consist.c, from line 212 at 5a9fd58 ==== */

/* FLUSH [NO_WRITE_TO_BINLOG | LOCAL] TABLE[S] ...: the server closes the
 * tables; opening one again can give warnings (an old .frm, a generated
 * column's expression) that an answer cached before did not have. REPAIR
 * TABLE: the table's data may come back otherwise (USE_FRM rebuilds it
 * from files a client put there: main.repair). */
static bool flushes_tables(const char *q, size_t n)
{
	struct sql_lex lx = { .s = q, .n = n, .raw = true };
	struct sql_tok t;

	sql_lex_next(&lx, &t);
	if (sql_kw_is(&t, KW_REPAIR))
		return true;
	if (!sql_kw_is(&t, KW_FLUSH))
		return false;
	sql_lex_next(&lx, &t);
	if (sql_kw_is(&t, KW_NO_WRITE_TO_BINLOG) || sql_kw_is(&t, KW_LOCAL))
		sql_lex_next(&lx, &t);
	return sql_kw_is(&t, KW_TABLE) || sql_kw_is(&t, KW_TABLES);
}

/* Global variables with no session value that change the answer of a
 * read, which no cache key can hold (the key has the session's settings):
 * a SET of one that succeeds invalidates everything. ft_boolean_syntax:
 * the operators of MATCH ... AGAINST (... IN BOOLEAN MODE) on MyISAM
 * (conformance: main.fulltext_var). Set elsewhere than through this node,
 * the change is seen at the TTL (docs/caching.md). */
static const char *const answer_globals[] = { "FT_BOOLEAN_SYNTAX", NULL };

static bool sets_answer_global(const char *q, size_t n)
{
	struct sql_lex lx = { .s = q, .n = n, .raw = true };
	struct sql_tok t;

	sql_lex_next(&lx, &t);
	if (!sql_kw_is(&t, KW_SET))
		return false;
	for (sql_lex_next(&lx, &t); t.kind != T_END; sql_lex_next(&lx, &t)) {
		if (!sql_is_name(&t))
			continue;
		for (int i = 0; answer_globals[i]; i++)
			if (sql_name_is(&t, answer_globals[i]))
				return true;
	}
	return false;
}

/* src/cache/consist.c, line 281 at 5a9fd58: consist_statement's cur_flush */
bool old_flushes_all(const char *q, size_t n)
{
	return flushes_tables(q, n) || sets_answer_global(q, n);
}
