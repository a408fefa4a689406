/*
 * local.c: KILL and the monitor texts, read for the session core (see
 * local.h): a look at the first bytes with the lexer's byte classes, then
 * the lexer.
 */
#include "sql/local.h"

#include <string.h>

#include "sql/lexer.h"

static bool word_is(const struct sql_tok *t, const char *w)
{
	return t->kind == T_WORD && sql_name_is(t, w);
}

/* ---- KILL ----------------------------------------------------------------- */

/* The words after KILL up to its id: [HARD | SOFT] [CONNECTION | QUERY]. */
static void kill_words(struct sql_lex *lx, struct sql_tok *t, struct sql_kill *k)
{
	if (word_is(t, "HARD") || word_is(t, "SOFT"))
		sql_lex_next(lx, t);
	if (word_is(t, "CONNECTION")) {
		sql_lex_next(lx, t);
	} else if (word_is(t, "QUERY")) {
		k->query = true;
		sql_lex_next(lx, t);
		if (word_is(t, "ID"))
			k->kind = SQL_KILL_UNSUPPORTED;   /* KILL QUERY ID: a query id, no session */
	}
	if (sql_kw_is(t, KW_USER))
		k->kind = SQL_KILL_UNSUPPORTED;           /* KILL USER: every session of a user */
}

/* t is all digits and fits: its value. */
static bool kill_id(const struct sql_tok *t, uint64_t *id)
{
	uint64_t v = 0;

	if (t->kind != T_WORD)
		return false;
	for (size_t i = 0; i < t->len; i++) {
		if (t->p[i] < '0' || t->p[i] > '9' || v > (UINT64_MAX - 9) / 10)
			return false;   /* not a number (KILL 5x, KILL 0x1), or too big */
		v = v * 10 + (uint64_t)(t->p[i] - '0');
	}
	*id = v;
	return true;
}

void sql_kill_read(const char *q, size_t n, struct sql_kill *k)
{
	struct sql_lex lx;
	struct sql_tok t;
	size_t i = 0;

	k->kind = SQL_KILL_NONE;
	while (i < n && sql_space_byte((unsigned char)q[i]))
		i++;
	if (i >= n || ((q[i] | 0x20) != 'k' && q[i] != '/' && q[i] != '#' && q[i] != '-'))
		return;         /* the hit path's look: no word KILL can start here */
	*k = (struct sql_kill){ .kind = SQL_KILL_NONE };
	lx = (struct sql_lex){ .s = q, .n = n, .i = i, .raw = true };
	sql_lex_next(&lx, &t);
	if (!sql_kw_is(&t, KW_KILL))
		return;
	k->kind = SQL_KILL_OTHER;
	sql_lex_next(&lx, &t);
	kill_words(&lx, &t, k);
	if (k->kind == SQL_KILL_UNSUPPORTED || !kill_id(&t, &k->id))
		return;
	do
		sql_lex_next(&lx, &t);
	while (sql_is_punct(&t, ';'));
	/* the id, and nothing after it; and the same on every server */
	if (t.kind == T_END && !lx.doubt)
		k->kind = SQL_KILL_ID;
}

/* ---- the monitor texts ----------------------------------------------------- */

/* Are p's first bytes the letters w (lower case), in any case? */
static inline bool letters_at(const char *p, const char *w, size_t wn)
{
	for (size_t i = 0; i < wn; i++)
		if (((unsigned char)p[i] | 0x20) != (unsigned char)w[i])
			return false;
	return true;
}

bool sql_lead_show_or_sysvar(const char *q, size_t n)
{
	size_t i = 0, j;

	while (i < n && i < 8 && sql_space_byte((unsigned char)q[i]))
		i++;
	if (n - i < 4 || ((unsigned char)q[i] | 0x20) != 's')
		return false;   /* neither SHOW nor SELECT: most queries end here */
	if (letters_at(q + i, "show", 4))
		return n - i == 4 || !(sql_byte_class[(unsigned char)q[i + 4]] & SQL_CL_IDENT);
	if (n - i < 8 || !letters_at(q + i, "select", 6))
		return false;
	for (j = i + 6; j < n && sql_space_byte((unsigned char)q[j]); j++)
		;
	return j > i + 6 && j + 1 < n && q[j] == '@' && q[j + 1] == '@';
}

/* Only white space in [a, b). */
static bool blank(const char *a, const char *b)
{
	for (; a < b; a++)
		if (!sql_space_byte((unsigned char)*a))
			return false;   /* a comment */
	return true;
}

static const char *start_of(const struct sql_tok *t)
{
	return t->kind == T_STRING || t->kind == T_QUOTED ? t->p - 1 : t->p;
}

static unsigned char fold(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c | 0x20) : c;
}

/* The same token: a word's letters in any case, anything else exactly. */
static bool same_token(const struct sql_tok *a, const struct sql_tok *b)
{
	if (a->kind != b->kind || a->len != b->len)
		return false;
	for (size_t i = 0; i < a->len; i++)
		if (a->kind == T_WORD ? fold((unsigned char)a->p[i]) != fold((unsigned char)b->p[i])
				      : a->p[i] != b->p[i])
			return false;
	return true;
}

bool sql_same_text(const char *q, size_t n, const char *pattern)
{
	struct sql_lex a = { .s = q, .n = n, .raw = true };
	struct sql_lex b = { .s = pattern, .n = strlen(pattern) };
	const char *qend = q, *pend = pattern;
	struct sql_tok x, y;

	for (;;) {
		sql_lex_next(&b, &y);
		sql_lex_next(&a, &x);
		if (y.kind == T_END)
			break;
		if (!same_token(&x, &y) || !blank(qend, start_of(&x)))
			return false;
		/* white space where the pattern has some, none where it has none */
		if (qend != q && (start_of(&x) == qend) != (start_of(&y) == pend))
			return false;
		qend = q + a.i;
		pend = pattern + b.i;
	}
	for (; sql_is_punct(&x, ';'); sql_lex_next(&a, &x)) {
		if (!blank(qend, x.p))
			return false;
		qend = q + a.i;
	}
	return x.kind == T_END && blank(qend, q + n);
}
