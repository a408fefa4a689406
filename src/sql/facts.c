/*
 * facts.c: a statement's facts (see facts.h), noted token by token on the
 * shared lexer and its keyword ids: in a pass of their own
 * (stmt_facts_read) or through the hook of another reader's lexer.
 */
#include "sql/facts.h"

#include <stdbool.h>

unsigned stmt_facts_punct(const struct sql_lex *lx, const struct sql_tok *t)
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
	stmt_facts_token(arg, lx, t);
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
