/*
 * facts.h: what one reading of a statement's text tells the layers that act
 * on it (the session-state reader, the multiplexer): its leading keyword and
 * the words and marks anywhere after it that change what the node must do. One
 * raw pass of the lexer (comments skipped, executable comments read as
 * code, strings and `quoted` names never taken for words), nothing
 * allocated. A prepared statement's facts are read once, when it is
 * prepared (session/stmts.h), and serve every execute.
 */
#ifndef SHOAL_SQL_FACTS_H
#define SHOAL_SQL_FACTS_H

#include <stdbool.h>
#include <stddef.h>

#include "sql/keywords.h"

/* stmt_facts.seen: marks found anywhere in the text */
#define SF_MULTI        0x001  /* a ';' with more SQL after it */
#define SF_ASSIGN       0x002  /* ':=', a user variable assigned */
#define SF_INTO_VAR     0x004  /* INTO @v */
#define SF_GET_LOCK     0x008  /* GET_LOCK: a lock the connection holds */
#define SF_TEMPORARY    0x010  /* TEMPORARY (a temporary table) */
#define SF_PROFILING    0x020  /* profiling / profiling_history_size */
#define SF_CALC_FOUND   0x040  /* SQL_CALC_FOUND_ROWS */
#define SF_CONNECTION_ID 0x080 /* CONNECTION_ID */
#define SF_SELECT       0x100  /* SELECT after the leading word (INSERT ... SELECT) */
#define SF_LAST_ID      0x200  /* LAST_INSERT_ID or IDENTITY (@@identity too) */
#define SF_FOUND_ROWS   0x400  /* FOUND_ROWS */

struct stmt_facts {
	enum sql_kw first; /* the leading word past '(' (KW_NONE: none we know) */
	unsigned seen;     /* SF_* */
	/* the reading's own: */
	bool started;      /* the leading word was read */
	const char *lead;  /* where it stands (a reader may read it again) */
	enum sql_kw prev;  /* the token before (INTO @v) */
	const char *var_end; /* where a user variable's name would go on
			      * (@select.x marks nothing); NULL: none */
};

struct sql_lex;
struct sql_tok;

/* Read q[0, n) once, on a lexer of its own. */
void stmt_facts_read(const char *q, size_t n, struct stmt_facts *f);

/* Or note the facts while another reader walks the text (sql_tables_facts):
 * begin, then each token the reader's lexer reads (its on_token hook, with
 * f as the argument). Every token must be read at least once, in order;
 * a token read again (a peek, a reader going back) changes nothing but may
 * add a mark (a pin the session did not need, never one missed). */
void stmt_facts_begin(struct stmt_facts *f);
void stmt_facts_note(void *f, const struct sql_lex *lx, const struct sql_tok *t);

#endif
