/*
 * old/catalog.c: the catalog's body readers before issue 39, copied from git at 5a9fd58 for the
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

/* ==== src/cache/catalog.c, from line 420 at 5a9fd58 ==== */

/* Might a routine body (or a trigger's non-DML statements) create
 * temporary tables, or call something that might? Read without context: a
 * name before '(' that is no builtin counts as a call, unless it follows a
 * word after which a table name stands (a false "yes" only costs caching). */
static bool body_may_call_or_create(const char *body)
{
	struct sql_lex lx = { .s = body ? body : "", .n = body ? strlen(body) : 0, .raw = true };
	struct sql_tok t, prev = { .kind = T_END }, before = prev;

	if (!body || !body[0])
		return true;
	for (sql_lex_next(&lx, &t); t.kind != T_END; before = prev, prev = t, sql_lex_next(&lx, &t)) {
		if (sql_kw_is(&t, KW_TEMPORARY) || sql_kw_is(&t, KW_PREPARE) ||
		    sql_kw_is(&t, KW_EXECUTE) || sql_kw_is(&t, KW_CALL))
			return true;
		if (sql_is_punct(&t, '(') && sql_is_name(&prev) && !sql_is_punct(&before, '.') &&
		    !sql_fn_lookup(prev.p, prev.len) &&
		    !(sql_kw_is(&before, KW_INTO) || sql_kw_is(&before, KW_TABLE) ||
		      sql_kw_is(&before, KW_UPDATE) || sql_kw_is(&before, KW_FROM) ||
		      sql_kw_is(&before, KW_JOIN) || sql_kw_is(&before, KW_REFERENCES) ||
		      sql_kw_is(&before, KW_AS) || sql_kw_is(&before, KW_INSERT) ||
		      sql_kw_is(&before, KW_REPLACE)))
			return true;
		if (sql_is_punct(&t, '(') && sql_is_punct(&before, '.'))
			return true;     /* db.f( */
	}
	return false;
}

/* ==== src/cache/catalog.c, from line 449 at 5a9fd58 ==== */

/* Words after which "name (" is no call. */
static bool names_a_table(const struct sql_tok *t)
{
	static const enum sql_kw words[] = { KW_INTO, KW_TABLE, KW_UPDATE, KW_FROM, KW_JOIN, KW_REFERENCES,
					     KW_AS, KW_INSERT, KW_REPLACE, KW_NONE };

	for (int i = 0; words[i]; i++)
		if (sql_kw_is(t, words[i]))
			return true;
	return false;
}

bool old_body_may_call_or_create(const char *body)
{
	return body_may_call_or_create(body);
}

/* ==== src/cache/catalog.c, from line 387 at 5a9fd58 (add_trigger), adapted:
 * a statement that writes is handed to fn instead of trigger_statement, and
 * "tbl->opaque = true; return" is "return false" ==== */

bool old_trigger_writes(const char *b, void (*fn)(void *arg, const char *p, size_t n), void *arg)
{
	struct sql_lex lx = { .s = b ? b : "", .n = b ? strlen(b) : 0, .raw = true };
	struct sql_tok t, prev = { .kind = T_END };

	for (sql_lex_next(&lx, &t); t.kind != T_END; prev = t, sql_lex_next(&lx, &t)) {
		const char *start = t.p;

		if (sql_is_punct(&prev, '.'))
			continue;
		if (sql_kw_is(&t, KW_CALL) || sql_kw_is(&t, KW_EXECUTE)) {
			return false;
		}
		if (sql_is_punct(&t, '(') && sql_is_name(&prev) && !sql_fn_lookup(prev.p, prev.len)) {
			return false;  /* a stored function outside the DML statements */
		}
		if (!(sql_kw_is(&t, KW_INSERT) || sql_kw_is(&t, KW_REPLACE) ||
		      sql_kw_is(&t, KW_UPDATE) || sql_kw_is(&t, KW_DELETE)))
			continue;
		while (t.kind != T_END && !sql_is_punct(&t, ';'))
			sql_lex_next(&lx, &t);
		fn(arg, start, (size_t)((t.kind == T_END ? lx.s + lx.n : t.p) - start));
		if (t.kind == T_END)
			break;
	}
	return true;
}

/* ==== src/cache/catalog.c, from line 476 at 5a9fd58 (trigger_temps), adapted:
 * each routine_temps(...) asked is fn(...), "tbl->temps = true" is
 * fn(NULL, NULL) ==== */

void old_trigger_calls(const char *b, bool (*fn)(void *arg, const struct sql_tok *schema,
						const struct sql_tok *name, bool call), void *arg)
{
	struct sql_lex lx = { .s = b ? b : "", .n = b ? strlen(b) : 0, .raw = true };
	struct sql_tok t, w[3] = { { .kind = T_END }, { .kind = T_END }, { .kind = T_END } };
	bool temps = false;

	for (sql_lex_next(&lx, &t); t.kind != T_END && !temps; sql_lex_next(&lx, &t)) {
		/* w[0] the token before t, w[1] before it, w[2] before that */
		if (sql_kw_is(&t, KW_TEMPORARY) || sql_kw_is(&t, KW_PREPARE) || sql_kw_is(&t, KW_EXECUTE)) {
			temps = fn(arg, NULL, NULL, false);
		} else if (sql_kw_is(&w[0], KW_CALL) && sql_is_name(&t)) {
			struct sql_tok name = t, dot;

			sql_lex_peek(&lx, &dot);
			if (sql_is_punct(&dot, '.')) {
				sql_lex_next(&lx, &dot);
				sql_lex_next(&lx, &name);
				temps = fn(arg, &t, &name, true);
			} else {
				temps = fn(arg, NULL, &name, true);
			}
		} else if (sql_is_punct(&t, '(') && sql_is_name(&w[0])) {
			if (sql_is_punct(&w[1], '.') && sql_is_name(&w[2]))
				temps = fn(arg, &w[2], &w[0], false);
			else if (!names_a_table(&w[1]) && !sql_fn_lookup(w[0].p, w[0].len))
				temps = fn(arg, NULL, &w[0], false);
		}
		w[2] = w[1];
		w[1] = w[0];
		w[0] = t;
	}
}
