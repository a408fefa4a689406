/*
 * where.h: which rows of each table a SELECT can read, from its text: for
 * each table it reads, the conjunction of constraints every row that can
 * change its answer satisfies (`column = literal`, `column IN (literal,
 * ...)`, `column IS NULL`). A changed row whose before-image and
 * after-image both fail its table's constraints cannot change the answer
 * (docs/architecture.md, "WHERE constraints").
 *
 * It is never a guess. Whatever cannot be proven gives no constraint: a
 * table with `constrained` false, or not in the list at all, means "any
 * change to the table matters". A conjunct that proves nothing (NOT, a
 * function of a column, a comparison of two columns of one table, an IN
 * with a subquery, ...) is dropped, and the rest of the conjunction stands:
 * the rows of the answer satisfy every conjunct.
 *
 * What the consumer must do (this reader has no catalog):
 *   - compare each literal with the column's type and collation as the
 *     server does, or count a value it cannot compare exactly as a match
 *     (`'a'` against `'A '` under a PAD SPACE case-insensitive collation,
 *     `int_col = '5abc'`, hex and bit literals, a charset introducer);
 *   - a name is as written: one the catalog resolves to a view constrains
 *     nothing (the view's base tables have no constraint), and neither does
 *     a constraint on a column the table does not have;
 *   - SQL_WC_CARRIED: the value was carried through join equalities; it
 *     holds only when every column of its class has the same type and
 *     collation as this one and the literal compares in that type (a
 *     string with a string column, a number with a numeric column);
 *   - several entries may name one table (T and t where names are not
 *     case-sensitive, a non-ASCII name in two cases): one table's
 *     constraint is the OR of its entries' (an unconstrained one: none);
 *     this reader groups names without ASCII case, and gives t and db.t
 *     (qualified differently) none;
 *   - a string's bytes are in the session's character_set_connection
 *     unless it has an introducer;
 *   - SQL_WHERE_DQUOTE: a "double-quoted" literal was read as a string;
 *     under sql_mode ANSI_QUOTES it is a name: no constraint at all.
 * Strings are read with backslash escapes, like every reader of sql/
 * (a session without them never caches a text that has one).
 *
 * Pointers point into the text; nothing is allocated. Bounded: past a
 * limit a constraint is dropped (never the other way).
 */
#ifndef SHOAL_SQL_WHERE_H
#define SHOAL_SQL_WHERE_H

#include <stdbool.h>
#include <stddef.h>

#include "sql/tables.h"
#include "sql/where_types.h"

/* Read the SELECT text[0, len) (comments and executable comments as the
 * lexer reads them). tables: the statement's tables as sql_tables() read
 * them (every reference must be one this reader saw: a table read where
 * this reader did not look is left unconstrained); NULL: read them here.
 * Always fills *out; anything but one SELECT (or WITH ... SELECT, or a
 * UNION of them) gives !ok. */
void sql_where(const char *text, size_t len, const struct sql_tables *tables, struct sql_where *out);

/* The entry of a table as written (schema NULL: unqualified), compared
 * without case; NULL when the table has none (no constraint). */
const struct sql_where_table *sql_where_find(const struct sql_where *w, const char *schema,
					     size_t schema_len, const char *name, size_t name_len);

/* A string literal's value: escapes undone (backslash escapes as the
 * server reads them by default, doubled quotes). Returns its length, or
 * (size_t)-1 when it does not fit in cap bytes (no NUL is added). Any
 * other kind: its text. */
size_t sql_where_lit_text(const struct sql_where_lit *l, char *dst, size_t cap);

/* The constraints as text, for tests and EXPLAIN: "t: a = 1 AND b IN
 * (2,'x'); u: any". Returns the length it needed (like snprintf). */
size_t sql_where_format(const struct sql_where *w, char *buf, size_t cap);

#endif
