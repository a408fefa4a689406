/*
 * bodies.h: what the body of a trigger or a stored routine does, read for
 * the catalog (cache/catalog.c) with the one lexer: the statements of a
 * trigger that write, whether a body may call something or create a
 * temporary table, and the routines a trigger calls. Read without context
 * (no catalog here): the catalog resolves the names it is handed. Nothing
 * is allocated; names point into the body.
 */
#ifndef SHOAL_SQL_BODIES_H
#define SHOAL_SQL_BODIES_H

#include <stdbool.h>
#include <stddef.h>

#include "sql/lexer.h"

/* A statement of a trigger body that writes: INSERT, REPLACE, UPDATE or
 * DELETE, from its first word up to its ';' (or the body's end). */
typedef void sql_dml_fn(void *arg, const char *p, size_t n);

/* Hand each such statement of body to fn, in order. False (and nothing more
 * handed over) when the body does something whose writes are not in its
 * text: CALL, EXECUTE, or a call of a stored function outside them. */
bool sql_trigger_writes(const char *body, sql_dml_fn *fn, void *arg);

/* Might a routine body create temporary tables, or call something that
 * might? A name before '(' that is no builtin counts as a call, unless it
 * follows a word after which a table name stands (a false "yes" only costs
 * caching). An empty or missing body: yes. */
bool sql_body_may_call_or_create(const char *body);

/* What a trigger body does that may create temporary tables: fn is called
 * with each routine it may call (schema NULL: unqualified; call: named by
 * CALL, else "name (" that is no builtin), and with all NULL for TEMPORARY,
 * PREPARE or EXECUTE. fn returns true to stop (the answer is known). */
typedef bool sql_call_fn(void *arg, const struct sql_tok *schema, const struct sql_tok *name, bool call);
void sql_trigger_calls(const char *body, sql_call_fn *fn, void *arg);

#endif
