/*
 * facts.c: a statement's facts (see facts.h), noted token by token on the
 * shared lexer and its keyword ids: in a pass of their own
 * (stmt_facts_read) or through the hook of another reader's lexer.
 */
#include "sql/facts.h"

#include <stdbool.h>

#include "sql/lexer.h"

/* The mark a keyword sets wherever it stands. */
static unsigned word_mark(enum sql_kw kw)
{
	switch (kw) {
	case KW_GET_LOCK: return SF_GET_LOCK;
	case KW_TEMPORARY: return SF_TEMPORARY;
	case KW_PROFILING: case KW_PROFILING_HISTORY_SIZE: return SF_PROFILING;
	case KW_SQL_CALC_FOUND_ROWS: return SF_CALC_FOUND;
	case KW_CONNECTION_ID: return SF_CONNECTION_ID;
	case KW_SELECT: return SF_SELECT;
	case KW_LAST_INSERT_ID: case KW_IDENTITY: return SF_LAST_ID;
	case KW_FOUND_ROWS: return SF_FOUND_ROWS;
	default: return 0;
	}
}

/* The mark a punctuation character sets; lx stands after it. */
static unsigned punct_mark(const struct sql_lex *lx, const struct sql_tok *t)
{
	struct sql_lex after;
	struct sql_tok next;

	if (sql_is_punct(t, ':') && lx->i < lx->n && lx->s[lx->i] == '=')
		return SF_ASSIGN;
	if (!sql_is_punct(t, ';'))
		return 0;
	after = *lx;
	after.on_token = NULL;   /* a look ahead, not a token read */
	sql_lex_next(&after, &next);
	return next.kind == T_END ? 0 : SF_MULTI;
}

void stmt_facts_begin(struct stmt_facts *f)
{
	*f = (struct stmt_facts){ .first = KW_NONE, .prev = KW_NONE };
}

void stmt_facts_note(void *arg, const struct sql_lex *lx, const struct sql_tok *t)
{
	struct stmt_facts *f = arg;

	if (t->p == f->var_end && (t->kind == T_WORD || sql_is_punct(t, '.'))) {
		/* @select, @a.identity: a user variable's name, no word of SQL */
		f->var_end = t->p + t->len;
		f->prev = KW_NONE;
		return;
	}
	f->var_end = t->kind == T_USERVAR ? t->p + t->len : NULL;
	if (!f->started && !sql_is_punct(t, '(')) {
		f->first = t->kw;   /* marks nothing: a SELECT mark is a later one */
		f->started = true;
		f->lead = t->p;
	} else if (t->p == f->lead) {
		/* the leading word read again (the table reader goes back to a
		 * leading SELECT): still no mark */
	} else if (t->kind == T_WORD) {
		f->seen |= word_mark(t->kw);
	}
	if (t->kind == T_PUNCT)
		f->seen |= punct_mark(lx, t);
	else if (t->kind == T_USERVAR && f->prev == KW_INTO)
		f->seen |= SF_INTO_VAR;
	f->prev = t->kw;
}

void stmt_facts_read(const char *q, size_t n, struct stmt_facts *f)
{
	struct sql_lex lx = { .s = q, .n = n, .raw = true, .on_token = stmt_facts_note, .on_token_arg = f };
	struct sql_tok t;

	stmt_facts_begin(f);
	do
		sql_lex_next(&lx, &t);
	while (t.kind != T_END);
}
