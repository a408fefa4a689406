/*
 * lexer.h: the small word lexer for the checks that look at a query's
 * structure: the cacheability verdict (classify.c, over the tokenizer's
 * digest_text: literals are '?', comments are gone, whitespace is folded)
 * and the table dependencies (tables.c, over the query as sent, because the
 * digest alters `quoted names`: digits become '?', spaces fold, a '#'
 * inside one starts a comment).
 *
 * It splits the text into words, `quoted names`, strings, '@' / '@@'
 * variables and punctuation. In raw mode it also skips comments (/ * * /,
 * "-- ", "#") and reads the bodies of executable comments (/ *! and / *M!,
 * with their version numbers) as code, as the server does; a / *! comment
 * whose version not every server runs sets doubt. Nothing is allocated;
 * tokens point into the text.
 */
#ifndef SHOAL_SQL_LEXER_H
#define SHOAL_SQL_LEXER_H

#include <stdbool.h>
#include <stddef.h>

#include "sql/keywords.h"

enum sql_tkind {
	T_END, T_WORD, T_QUOTED, T_STRING, T_PUNCT, T_USERVAR, T_SYSVAR,
};

struct sql_tok {
	enum sql_tkind kind;
	enum sql_kw kw; /* T_WORD: its keyword id (keywords.h), else KW_NONE */
	const char *p;  /* word, or the inside of a `quoted` name */
	size_t len;
	char c;         /* T_PUNCT: the character (len > 1: a run of dots) */
};

/* The lexer's byte classes (its readers in src/sql/ share them). */
#define SQL_CL_IDENT 1   /* a byte of an unquoted word: letters, digits, _ $, >= 0x80 */
#define SQL_CL_SPACE 2   /* white space between tokens */
extern const unsigned char sql_byte_class[256];

static inline bool sql_space_byte(unsigned char c)
{
	return sql_byte_class[c] & SQL_CL_SPACE;
}

struct sql_lex;
/* Called with each token read (not T_END), by every copy of the lexer
 * but a peek's (sql_lex_peek: the token is read later): a reader that walks
 * the text once can note other facts on the way (sql/facts.h, sql/stmt.c). */
typedef void sql_token_hook(void *arg, const struct sql_lex *lx, const struct sql_tok *t);

struct sql_lex {
	const char *s;
	size_t n, i;
	bool raw;      /* the text may hold comments (not a digest_text) */
	bool doubt;    /* set when an executable comment was passed that some
			* servers run and others skip (its body was read as code) */
	sql_token_hook *on_token;  /* NULL: none */
	void *on_token_arg;
};

/* The next token (T_END at the end of the text, and from then on). */
void sql_lex_next(struct sql_lex *lx, struct sql_tok *t);
/* The next token, without moving (and without the hook). */
void sql_lex_peek(const struct sql_lex *lx, struct sql_tok *t);

static inline bool sql_is_punct(const struct sql_tok *t, char c)
{
	return t->kind == T_PUNCT && t->c == c && t->len == 1;
}

static inline bool sql_is_name(const struct sql_tok *t)
{
	return t->kind == T_WORD || t->kind == T_QUOTED;
}

/* Case-insensitive comparison of a name with an upper-case word. */
bool sql_name_is(const struct sql_tok *t, const char *w);

/* An unquoted keyword (a `quoted` name never is one). */
static inline bool sql_kw_is(const struct sql_tok *t, enum sql_kw kw)
{
	return t->kw == kw;
}

/* Copy a name (a word, or the inside of a `quoted` one: quoted, its doubled
 * backticks undone) into dst, NUL-ended, ASCII lower-cased when lower. Its
 * length, or 0 when it is empty or does not fit in cap - 1 bytes. */
size_t sql_name_copy(const char *p, size_t len, bool quoted, bool lower, char *dst, size_t cap);

/* After a '(' was read: true once its matching ')' has been read. */
bool sql_skip_parens(struct sql_lex *lx);

/* lx stands after WITH: is a CTE list next ([RECURSIVE] name [(cols)] AS
 * '(')? (WITH ROLLUP, WITH CHECK OPTION, ... are something else.) */
bool sql_cte_list_follows(const struct sql_lex *lx);

/* lx stands after WITH: read [RECURSIVE] name [(cols)] AS (...) [, ...]
 * and any '(' after it; *t is then the main statement's first word. False
 * when the text is no CTE list. */
bool sql_skip_cte_list(struct sql_lex *lx, struct sql_tok *t);

#endif
