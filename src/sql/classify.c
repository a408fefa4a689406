/*
 * classify.c: Shoal's cacheability verdict for a query shape (see
 * classify.h).  Owns the rules that read a digest_text and say whether it
 * may be auto-cached.
 *
 * The input is the tokenizer's normalised text: literals are '?', comments
 * are gone (a / *!NNNNN x * / keeps "x"), whitespace is folded.  The word
 * lexer (lexer.c) splits it into tokens, and the rules look at a word
 * together with its neighbours:
 *
 *   - word '('  is a call unless the word is a keyword (IN, AS, OVER,
 *     DECIMAL, ...; functions.c).  An allowlisted builtin is fine, a
 *     denylisted one gives its reason, anything else (also `name`( and any
 *     qualified db.f() call) is a user-defined or stored function.  Not
 *     calls: a derived table's column list (AS dt (a, b) / ...) dt (a, b))
 *     and a CTE's column list (cte (a, b) AS ( ).
 *   - bare CURRENT_TIMESTAMP, CURRENT_DATE, ..., CURRENT_USER are calls too.
 *   - name '.' with name mysql, sys, information_schema or
 *     performance_schema is a system schema; information_schema and
 *     performance_schema also count on their own.  (An alias named sys or
 *     mysql is therefore refused too: a lost cache, never a wrong answer.)
 *   - INTO, SQL_NO_CACHE, FOR UPDATE, FOR SHARE, LOCK IN (SHARE MODE),
 *     SQL_CALC_FOUND_ROWS (sets the session's FOUND_ROWS: side effects) and
 *     MariaDB's NEXT VALUE FOR / PREVIOUS VALUE FOR, and sql_mode=ORACLE's
 *     SQL%ROWCOUNT (the session's ROW_COUNT()).
 * Words right after a '.' are column or table names and are not keywords.
 *
 * Each word looks ahead a constant number of tokens, except the CTE
 * column-list check, which reads only names and commas, so the scan stays
 * linear.  Nothing is allocated.
 */
#include "sql/classify.h"

#include <stdbool.h>

#include "sql/functions.h"
#include "sql/lexer.h"

/* the verdicts, as the table has them */
#define r_not_select (&reason_table[WHY_NOT_SELECT])
#define r_multi (&reason_table[WHY_MULTI_STATEMENT])
#define r_nondet (&reason_table[WHY_NONDETERMINISTIC])
#define r_side (&reason_table[WHY_SIDE_EFFECTS])
#define r_session (&reason_table[WHY_SESSION_FUNCTION])
#define r_uservar (&reason_table[WHY_USER_VARIABLE])
#define r_sysvar (&reason_table[WHY_SYSTEM_VARIABLE])
#define r_sysschema (&reason_table[WHY_SYSTEM_SCHEMA])
#define r_udf (&reason_table[WHY_UDF])
#define r_locking (&reason_table[WHY_LOCKING_READ])
#define r_into (&reason_table[WHY_INTO])
#define r_nocache (&reason_table[WHY_NO_CACHE])

/* ---- statement shape --------------------------------------------------- */

/* After WITH: [RECURSIVE] name [(cols)] AS (...) [, ...] then ( * SELECT. */
static bool cte_then_select(struct sql_lex *lx)
{
	struct sql_tok t;

	return sql_skip_cte_list(lx, &t) && sql_kw_is(&t, KW_SELECT);
}

static bool is_select(const char *s, size_t n)
{
	struct sql_lex lx = { .s = s, .n = n };
	struct sql_tok t;

	do
		sql_lex_next(&lx, &t);
	while (sql_is_punct(&t, '('));
	if (sql_kw_is(&t, KW_SELECT))
		return true;
	return sql_kw_is(&t, KW_WITH) && cte_then_select(&lx);
}

/* A ';' followed by anything but more ';'. */
static bool is_multi_statement(const char *s, size_t n)
{
	struct sql_lex lx = { .s = s, .n = n };
	struct sql_tok t;
	bool semi = false;

	for (sql_lex_next(&lx, &t); t.kind != T_END; sql_lex_next(&lx, &t)) {
		if (sql_is_punct(&t, ';'))
			semi = true;
		else if (semi)
			return true;
	}
	return false;
}

/* ---- names ------------------------------------------------------------- */

static const struct reason *fn_reason(const struct sql_fn *fn)
{
	switch (fn->kind) {
	case SQL_FN_NONDETERMINISTIC:
		return r_nondet;
	case SQL_FN_SIDE_EFFECTS:
		return r_side;
	case SQL_FN_SESSION:
		return r_session;
	default:
		return NULL;
	}
}

/* VALUE FOR after NEXT / PREVIOUS (MariaDB sequences). */
static bool value_for_follows(const struct sql_lex *lx)
{
	struct sql_lex c = *lx;
	struct sql_tok t;

	sql_lex_next(&c, &t);
	if (!sql_kw_is(&t, KW_VALUE))
		return false;
	sql_lex_next(&c, &t);
	return sql_kw_is(&t, KW_FOR);
}

/* %ROWCOUNT after SQL (lx stands before the '%'): sql_mode=ORACLE's
 * SQL%ROWCOUNT, the session's ROW_COUNT(). */
static bool oracle_rowcount_follows(const struct sql_lex *lx)
{
	struct sql_lex c = *lx;
	struct sql_tok t;

	sql_lex_next(&c, &t);
	if (!sql_is_punct(&t, '%'))
		return false;
	sql_lex_next(&c, &t);
	return sql_kw_is(&t, KW_ROWCOUNT);
}

/* An unqualified, unquoted word that denies caching wherever it stands. */
static const struct reason *check_keyword(const struct sql_lex *lx, const struct sql_tok *t,
				 const struct sql_tok *next)
{
	const struct sql_fn *fn;

	if (sql_name_is(t, "INTO"))
		return r_into;
	if (sql_name_is(t, "SQL_NO_CACHE"))
		return r_nocache;
	if (sql_name_is(t, "SQL_CALC_FOUND_ROWS"))
		return r_side;
	if (sql_name_is(t, "FOR") &&
	    (sql_kw_is(next, KW_UPDATE) || sql_kw_is(next, KW_SHARE)))
		return r_locking;
	if (sql_name_is(t, "LOCK") && sql_kw_is(next, KW_IN))
		return r_locking;
	if (sql_name_is(t, "NEXT") && value_for_follows(lx))
		return r_side;
	if (sql_name_is(t, "PREVIOUS") && value_for_follows(lx))
		return r_session;
	if (sql_name_is(t, "SQL") && oracle_rowcount_follows(lx))
		return r_session;
	fn = sql_fn_lookup(t->p, t->len);
	if (fn && (fn->flags & SQL_FN_BARE))
		return fn_reason(fn);
	return NULL;
}

static bool is_system_schema(const struct sql_tok *t, bool qualifier)
{
	if (sql_name_is(t, "INFORMATION_SCHEMA") || sql_name_is(t, "PERFORMANCE_SCHEMA"))
		return true;
	return qualifier && (sql_name_is(t, "MYSQL") || sql_name_is(t, "SYS"));
}

/* lx stands before "(": is it "(name, ...) AS (", a CTE's column list? */
static bool cte_columns_follow(const struct sql_lex *lx)
{
	struct sql_lex c = *lx;
	struct sql_tok t;

	sql_lex_next(&c, &t);
	do
		sql_lex_next(&c, &t);
	while (sql_is_name(&t) || sql_is_punct(&t, ','));
	if (!sql_is_punct(&t, ')'))
		return false;
	sql_lex_next(&c, &t);
	if (!sql_kw_is(&t, KW_AS))
		return false;
	sql_lex_next(&c, &t);
	return sql_is_punct(&t, '(');
}

/* A name followed by '(' (lx stands before the '('). */
static const struct reason *check_call(const struct sql_lex *lx, const struct sql_tok *t,
			      const struct sql_tok *prev, bool qualified)
{
	const struct sql_fn *fn;

	if (qualified)
		return r_udf;
	fn = sql_fn_lookup(t->p, t->len);
	if (fn && fn->kind == SQL_FN_KEYWORD) {
		if (t->kind == T_WORD)
			return NULL;
		fn = NULL;
	}
	if (sql_kw_is(prev, KW_AS) || sql_is_punct(prev, ')'))
		return NULL;    /* derived table alias with column list */
	if (cte_columns_follow(lx))
		return NULL;
	return fn ? fn_reason(fn) : r_udf;
}

static const struct reason *check_name(const struct sql_lex *lx, const struct sql_tok *t,
			      const struct sql_tok *prev)
{
	bool qualified = sql_is_punct(prev, '.');
	struct sql_tok next;
	const struct reason *r;

	sql_lex_peek(lx, &next);
	if (!qualified) {
		if (is_system_schema(t, sql_is_punct(&next, '.')))
			return r_sysschema;
		if (t->kind == T_WORD && (r = check_keyword(lx, t, &next)))
			return r;
	}
	if (sql_is_punct(&next, '('))
		return check_call(lx, t, prev, qualified);
	return NULL;
}

/* ---- verdict ----------------------------------------------------------- */

static const struct reason *scan(const char *s, size_t n)
{
	struct sql_lex lx = { .s = s, .n = n };
	struct sql_tok prev = { .kind = T_END, .p = s }, t;
	const struct reason *r;

	for (sql_lex_next(&lx, &t); t.kind != T_END; prev = t, sql_lex_next(&lx, &t)) {
		if (t.kind == T_SYSVAR)
			return r_sysvar;
		if (t.kind == T_USERVAR)
			return r_uservar;
		if (sql_is_name(&t) && (r = check_name(&lx, &t, &prev)))
			return r;
	}
	return NULL;
}

const struct reason *sql_skip_reason(const char *digest_text, size_t len)
{
	if (!digest_text || !is_select(digest_text, len))
		return r_not_select;
	if (is_multi_statement(digest_text, len))
		return r_multi;
	return scan(digest_text, len);
}
