/*
 * classify.c: Shoal's cacheability verdict for a query shape (see
 * classify.h).  Owns the rules that read a digest_text and say whether it
 * may be auto-cached, and the skip-reason strings.
 *
 * The input is the tokenizer's normalised text: literals are '?', comments
 * are gone (a / *!NNNNN x * / keeps "x"), whitespace is folded.  A small
 * lexer splits it into words, `quoted names`, strings (only possible from a
 * kept / *! body, skipped), '@' / '@@' variables and punctuation, and the
 * rules look at a word together with its neighbours:
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
 *     MariaDB's NEXT VALUE FOR / PREVIOUS VALUE FOR.
 * Words right after a '.' are column or table names and are not keywords.
 *
 * Each word looks ahead a constant number of tokens, except the CTE
 * column-list check, which reads only names and commas, so the scan stays
 * linear.  Nothing is allocated.
 */
#include "sql/classify.h"

#include <stdbool.h>

#include "sql/functions.h"

static const char r_not_select[] = SQL_SKIP_NOT_SELECT;
static const char r_multi[] = SQL_SKIP_MULTI_STATEMENT;
static const char r_nondet[] = SQL_SKIP_NONDETERMINISTIC;
static const char r_side[] = SQL_SKIP_SIDE_EFFECTS;
static const char r_session[] = SQL_SKIP_SESSION;
static const char r_uservar[] = SQL_SKIP_USER_VARIABLE;
static const char r_sysvar[] = SQL_SKIP_SYSTEM_VARIABLE;
static const char r_sysschema[] = SQL_SKIP_SYSTEM_SCHEMA;
static const char r_udf[] = SQL_SKIP_UDF;
static const char r_locking[] = SQL_SKIP_LOCKING_READ;
static const char r_into[] = SQL_SKIP_INTO;
static const char r_nocache[] = SQL_SKIP_NO_CACHE;

static const char *const reasons[] = {
	r_not_select, r_multi, r_nondet, r_side, r_session, r_uservar,
	r_sysvar, r_sysschema, r_udf, r_locking, r_into, r_nocache,
};

const char *sql_skip_reason_at(size_t i)
{
	return i < sizeof(reasons) / sizeof(reasons[0]) ? reasons[i] : NULL;
}

/* ---- lexer ------------------------------------------------------------ */

enum tkind {
	T_END, T_WORD, T_QUOTED, T_STRING, T_PUNCT, T_USERVAR, T_SYSVAR,
};

struct tok {
	enum tkind kind;
	const char *p;  /* word, or the inside of a `quoted` name */
	size_t len;
	char c;         /* T_PUNCT: the character (len > 1: a run of dots) */
};

struct lex {
	const char *s;
	size_t n, i;
};

/* MySQL allows bytes >= 0x80 in unquoted identifiers. */
static bool is_ident(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '$' || c >= 0x80;
}

static bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	       c == '\f' || c == '\v';
}

/* End of a quoted run opened at s[i]: doubled quotes (and, in strings,
 * backslashes) escape.  Returns the index of the closing quote, or n. */
static size_t quote_end(const unsigned char *s, size_t n, size_t i)
{
	unsigned char q = s[i];

	for (i++; i < n; i++) {
		if (s[i] == '\\' && q != '`') {
			i++;
			continue;
		}
		if (s[i] != q)
			continue;
		if (i + 1 < n && s[i + 1] == q)
			i++;
		else
			return i;
	}
	return n;
}

static void lex_next(struct lex *lx, struct tok *t)
{
	const unsigned char *s = (const unsigned char *)lx->s;
	size_t i = lx->i, n = lx->n, j;

	while (i < n && is_space(s[i]))
		i++;
	t->p = lx->s + i;
	t->len = 0;
	t->c = 0;
	if (i >= n) {
		t->kind = T_END;
		lx->i = n;
		return;
	}
	j = i + 1;
	if (is_ident(s[i])) {
		while (j < n && is_ident(s[j]))
			j++;
		t->kind = T_WORD;
	} else if (s[i] == '`' || s[i] == '\'' || s[i] == '"') {
		j = quote_end(s, n, i);
		t->kind = s[i] == '`' ? T_QUOTED : T_STRING;
		t->p++;
		t->len = j - i - 1;
		lx->i = j < n ? j + 1 : n;
		return;
	} else if (s[i] == '@') {
		t->kind = T_USERVAR;
		if (j < n && s[j] == '@') {
			t->kind = T_SYSVAR;
			j++;
		}
	} else {
		while (s[i] == '.' && j < n && s[j] == '.')
			j++;
		t->kind = T_PUNCT;
		t->c = (char)s[i];
	}
	t->len = j - i;
	lx->i = j;
}

static void lex_peek(const struct lex *lx, struct tok *t)
{
	struct lex copy = *lx;

	lex_next(&copy, t);
}

static bool is_punct(const struct tok *t, char c)
{
	return t->kind == T_PUNCT && t->c == c && t->len == 1;
}

static bool is_name(const struct tok *t)
{
	return t->kind == T_WORD || t->kind == T_QUOTED;
}

/* Case-insensitive comparison of a name with an upper-case word. */
static bool name_is(const struct tok *t, const char *w)
{
	size_t k;

	for (k = 0; k < t->len; k++) {
		unsigned char c = (unsigned char)t->p[k];

		if (c >= 'a' && c <= 'z')
			c = (unsigned char)(c - 'a' + 'A');
		if (w[k] == '\0' || c != (unsigned char)w[k])
			return false;
	}
	return w[k] == '\0';
}

/* An unquoted keyword (a `quoted` name never is one). */
static bool word_is(const struct tok *t, const char *w)
{
	return t->kind == T_WORD && name_is(t, w);
}

/* ---- statement shape --------------------------------------------------- */

/* After a '(' was read: true once its matching ')' has been read. */
static bool skip_parens(struct lex *lx)
{
	struct tok t;
	size_t depth = 1;

	for (;;) {
		lex_next(lx, &t);
		if (t.kind == T_END)
			return false;
		if (is_punct(&t, '('))
			depth++;
		else if (is_punct(&t, ')') && --depth == 0)
			return true;
	}
}

/* After WITH: [RECURSIVE] name [(cols)] AS (...) [, ...] then ( * SELECT. */
static bool cte_then_select(struct lex *lx)
{
	struct tok t;

	lex_next(lx, &t);
	if (word_is(&t, "RECURSIVE"))
		lex_next(lx, &t);
	for (;;) {
		if (!is_name(&t))
			return false;
		lex_next(lx, &t);
		if (is_punct(&t, '(')) {
			if (!skip_parens(lx))
				return false;
			lex_next(lx, &t);
		}
		if (!word_is(&t, "AS"))
			return false;
		lex_next(lx, &t);
		if (!is_punct(&t, '(') || !skip_parens(lx))
			return false;
		lex_next(lx, &t);
		if (!is_punct(&t, ','))
			break;
		lex_next(lx, &t);
	}
	while (is_punct(&t, '('))
		lex_next(lx, &t);
	return word_is(&t, "SELECT");
}

static bool is_select(const char *s, size_t n)
{
	struct lex lx = { s, n, 0 };
	struct tok t;

	do
		lex_next(&lx, &t);
	while (is_punct(&t, '('));
	if (word_is(&t, "SELECT"))
		return true;
	return word_is(&t, "WITH") && cte_then_select(&lx);
}

/* A ';' followed by anything but more ';'. */
static bool is_multi_statement(const char *s, size_t n)
{
	struct lex lx = { s, n, 0 };
	struct tok t;
	bool semi = false;

	for (lex_next(&lx, &t); t.kind != T_END; lex_next(&lx, &t)) {
		if (is_punct(&t, ';'))
			semi = true;
		else if (semi)
			return true;
	}
	return false;
}

/* ---- names ------------------------------------------------------------- */

static const char *fn_reason(const struct sql_fn *fn)
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
static bool value_for_follows(const struct lex *lx)
{
	struct lex c = *lx;
	struct tok t;

	lex_next(&c, &t);
	if (!word_is(&t, "VALUE"))
		return false;
	lex_next(&c, &t);
	return word_is(&t, "FOR");
}

/* An unqualified, unquoted word that denies caching wherever it stands. */
static const char *check_keyword(const struct lex *lx, const struct tok *t,
				 const struct tok *next)
{
	const struct sql_fn *fn;

	if (name_is(t, "INTO"))
		return r_into;
	if (name_is(t, "SQL_NO_CACHE"))
		return r_nocache;
	if (name_is(t, "SQL_CALC_FOUND_ROWS"))
		return r_side;
	if (name_is(t, "FOR") &&
	    (word_is(next, "UPDATE") || word_is(next, "SHARE")))
		return r_locking;
	if (name_is(t, "LOCK") && word_is(next, "IN"))
		return r_locking;
	if (name_is(t, "NEXT") && value_for_follows(lx))
		return r_side;
	if (name_is(t, "PREVIOUS") && value_for_follows(lx))
		return r_session;
	fn = sql_fn_lookup(t->p, t->len);
	if (fn && (fn->flags & SQL_FN_BARE))
		return fn_reason(fn);
	return NULL;
}

static bool is_system_schema(const struct tok *t, bool qualifier)
{
	if (name_is(t, "INFORMATION_SCHEMA") || name_is(t, "PERFORMANCE_SCHEMA"))
		return true;
	return qualifier && (name_is(t, "MYSQL") || name_is(t, "SYS"));
}

/* lx stands before "(": is it "(name, ...) AS (", a CTE's column list? */
static bool cte_columns_follow(const struct lex *lx)
{
	struct lex c = *lx;
	struct tok t;

	lex_next(&c, &t);
	do
		lex_next(&c, &t);
	while (is_name(&t) || is_punct(&t, ','));
	if (!is_punct(&t, ')'))
		return false;
	lex_next(&c, &t);
	if (!word_is(&t, "AS"))
		return false;
	lex_next(&c, &t);
	return is_punct(&t, '(');
}

/* A name followed by '(' (lx stands before the '('). */
static const char *check_call(const struct lex *lx, const struct tok *t,
			      const struct tok *prev, bool qualified)
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
	if (word_is(prev, "AS") || is_punct(prev, ')'))
		return NULL;    /* derived table alias with column list */
	if (cte_columns_follow(lx))
		return NULL;
	return fn ? fn_reason(fn) : r_udf;
}

static const char *check_name(const struct lex *lx, const struct tok *t,
			      const struct tok *prev)
{
	bool qualified = is_punct(prev, '.');
	struct tok next;
	const char *r;

	lex_peek(lx, &next);
	if (!qualified) {
		if (is_system_schema(t, is_punct(&next, '.')))
			return r_sysschema;
		if (t->kind == T_WORD && (r = check_keyword(lx, t, &next)))
			return r;
	}
	if (is_punct(&next, '('))
		return check_call(lx, t, prev, qualified);
	return NULL;
}

/* ---- verdict ----------------------------------------------------------- */

static const char *scan(const char *s, size_t n)
{
	struct lex lx = { s, n, 0 };
	struct tok prev = { T_END, s, 0, 0 }, t;
	const char *r;

	for (lex_next(&lx, &t); t.kind != T_END; prev = t, lex_next(&lx, &t)) {
		if (t.kind == T_SYSVAR)
			return r_sysvar;
		if (t.kind == T_USERVAR)
			return r_uservar;
		if (is_name(&t) && (r = check_name(&lx, &t, &prev)))
			return r;
	}
	return NULL;
}

const char *sql_skip_reason(const char *digest_text, size_t len)
{
	if (!digest_text || !is_select(digest_text, len))
		return r_not_select;
	if (is_multi_statement(digest_text, len))
		return r_multi;
	return scan(digest_text, len);
}
