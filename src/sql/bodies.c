/*
 * bodies.c: the bodies of triggers and stored routines, read for the
 * catalog (see bodies.h).
 */
#include "sql/bodies.h"

#include <string.h>

#include "sql/functions.h"

static void body_lexer(struct sql_lex *lx, const char *body)
{
	*lx = (struct sql_lex){ .s = body ? body : "", .n = body ? strlen(body) : 0, .raw = true };
}

static bool dml_word(const struct sql_tok *t)
{
	return sql_kw_is(t, KW_INSERT) || sql_kw_is(t, KW_REPLACE) || sql_kw_is(t, KW_UPDATE) ||
	       sql_kw_is(t, KW_DELETE);
}

bool sql_trigger_writes(const char *body, sql_dml_fn *fn, void *arg)
{
	struct sql_lex lx;
	struct sql_tok t, prev = { .kind = T_END };

	body_lexer(&lx, body);
	for (sql_lex_next(&lx, &t); t.kind != T_END; prev = t, sql_lex_next(&lx, &t)) {
		const char *start = t.p;

		if (sql_is_punct(&prev, '.'))
			continue;
		if (sql_kw_is(&t, KW_CALL) || sql_kw_is(&t, KW_EXECUTE))
			return false;
		if (sql_is_punct(&t, '(') && sql_is_name(&prev) && !sql_fn_lookup(prev.p, prev.len))
			return false;   /* a stored function outside the DML statements */
		if (!dml_word(&t))
			continue;
		while (t.kind != T_END && !sql_is_punct(&t, ';'))
			sql_lex_next(&lx, &t);
		fn(arg, start, (size_t)((t.kind == T_END ? lx.s + lx.n : t.p) - start));
		if (t.kind == T_END)
			break;
	}
	return true;
}

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

bool sql_body_may_call_or_create(const char *body)
{
	struct sql_lex lx;
	struct sql_tok t, prev = { .kind = T_END }, before = prev;

	if (!body || !body[0])
		return true;
	body_lexer(&lx, body);
	for (sql_lex_next(&lx, &t); t.kind != T_END; before = prev, prev = t, sql_lex_next(&lx, &t)) {
		if (sql_kw_is(&t, KW_TEMPORARY) || sql_kw_is(&t, KW_PREPARE) ||
		    sql_kw_is(&t, KW_EXECUTE) || sql_kw_is(&t, KW_CALL))
			return true;
		if (sql_is_punct(&t, '(') && sql_is_name(&prev) && !sql_is_punct(&before, '.') &&
		    !sql_fn_lookup(prev.p, prev.len) && !names_a_table(&before))
			return true;
		if (sql_is_punct(&t, '(') && sql_is_punct(&before, '.'))
			return true;     /* db.f( */
	}
	return false;
}

/* CALL name or CALL schema.name: t is its first name. */
static bool called(struct sql_lex *lx, const struct sql_tok *t, sql_call_fn *fn, void *arg)
{
	struct sql_tok name = *t, dot;

	sql_lex_peek(lx, &dot);
	if (!sql_is_punct(&dot, '.'))
		return fn(arg, NULL, &name, true);
	sql_lex_next(lx, &dot);
	sql_lex_next(lx, &name);
	return fn(arg, t, &name, true);
}

void sql_trigger_calls(const char *body, sql_call_fn *fn, void *arg)
{
	struct sql_lex lx;
	struct sql_tok t, w[3] = { { .kind = T_END }, { .kind = T_END }, { .kind = T_END } };
	bool done = false;

	body_lexer(&lx, body);
	for (sql_lex_next(&lx, &t); t.kind != T_END && !done; sql_lex_next(&lx, &t)) {
		/* w[0] the token before t, w[1] before it, w[2] before that */
		if (sql_kw_is(&t, KW_TEMPORARY) || sql_kw_is(&t, KW_PREPARE) || sql_kw_is(&t, KW_EXECUTE)) {
			done = fn(arg, NULL, NULL, false);
		} else if (sql_kw_is(&w[0], KW_CALL) && sql_is_name(&t)) {
			done = called(&lx, &t, fn, arg);
		} else if (sql_is_punct(&t, '(') && sql_is_name(&w[0])) {
			if (sql_is_punct(&w[1], '.') && sql_is_name(&w[2]))
				done = fn(arg, &w[2], &w[0], false);
			else if (!names_a_table(&w[1]) && !sql_fn_lookup(w[0].p, w[0].len))
				done = fn(arg, NULL, &w[0], false);
		}
		w[2] = w[1];
		w[1] = w[0];
		w[0] = t;
	}
}
