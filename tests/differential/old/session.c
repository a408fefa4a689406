/*
 * old/session.c: the one-shot isolation level's readers before issue 39, copied from git at 5a9fd58 for the
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

/* ==== src/cache/session.c, from line 801 at 5a9fd58 ==== */

/* SET TRANSACTION [...] ISOLATION LEVEL READ UNCOMMITTED without GLOBAL or
 * SESSION: the next transaction only, which @@tx_isolation does not show. */
static bool sets_oneshot_ru(const char *q, size_t n)
{
	struct sql_lex lx = { .s = q, .n = n, .raw = true };
	struct sql_tok t, prev = { .kind = T_END };

	sql_lex_next(&lx, &t);
	if (!sql_kw_is(&t, KW_SET))
		return false;
	sql_lex_next(&lx, &t);
	if (!sql_kw_is(&t, KW_TRANSACTION))
		return false;
	for (sql_lex_next(&lx, &t); t.kind != T_END; prev = t, sql_lex_next(&lx, &t))
		if (sql_kw_is(&prev, KW_READ) && sql_kw_is(&t, KW_UNCOMMITTED))
			return true;
	return false;
}

/* Does this statement end the transaction that a one-shot isolation level
 * applies to, when the session is not in a transaction after it? A
 * statement that names no table (SELECT 1, a SET) starts none. */
static bool ends_oneshot(int kw, const char *q, size_t n)
{
	struct sql_tables t;

	if (kw == SQL_KW_COMMIT || kw == SQL_KW_ROLLBACK)
		return true;
	if (kw == SQL_KW_SET)
		return false;
	sql_tables(q, n, &t);
	return t.n > 0 || t.kind == SQL_STMT_WRITE || t.kind == SQL_STMT_DDL;
}

bool old_sets_oneshot_ru(const char *q, size_t n)
{
	return sets_oneshot_ru(q, n);
}

bool old_ends_oneshot(int kw, const char *q, size_t n)
{
	return ends_oneshot(kw, q, n);
}
