/*
 * match_build.h: a fill's row constraints (match.h), from its statement's
 * WHERE constraints (sql/where.h) and its tables' columns (tcols.h), worked
 * out when the fill takes its snapshot (before its query goes upstream), in
 * binlog mode.
 *
 * What the WHERE reader's contract asks of its consumer is done here: a
 * name is resolved through the catalog, and a view (anywhere in the
 * statement) gives no constraint at all; a column the table lacks makes the
 * table unconstrained (one named without its table in a subquery is the
 * outer query's: that condition is dropped); a literal is compared in the
 * column's type and collation, and one that cannot be compared exactly
 * drops its condition; a value carried through join equalities holds only
 * when every column of its class has the same kind, type, signedness and
 * collation; a placeholder takes its bound value (an execute's) or drops
 * its condition; SQL_WHERE_DQUOTE (the
 * session may have ANSI_QUOTES) gives nothing. A table whose definition is
 * not current (tcols.h), or that two references of different case name,
 * gets no constraint. Dropping a condition only widens what matches.
 *
 * Thread-safety: reads the catalog (its rwlock) and the tables'
 * definitions (tcols.h); nothing shared is written.
 */
#ifndef SHOAL_CACHE_MATCH_BUILD_H
#define SHOAL_CACHE_MATCH_BUILD_H

#include <stddef.h>

#include "cache/match.h"
#include "cache/store.h"
#include "sql/tables.h"

/* A COM_STMT_EXECUTE's parameters (binary protocol): placeholder i's
 * value, where its type is one compared here (integers, strings,
 * decimals; NULL), takes the place of the `?` in its condition. */
struct match_params {
	unsigned n;
	const uint8_t *nulls;    /* (n + 7) / 8 bytes */
	const uint8_t *types;    /* 2 bytes each: type, then 0x80 when unsigned */
	const uint8_t *values, *end;
};

/* The constraints of the SELECT q[0, n) (its tables t, as sql_tables read
 * them; unqualified names in schema; params NULL: a text statement, a `?`
 * drops its condition) on the tables of deps, into deps->cons (len 0:
 * none). */
void match_build(const char *q, size_t n, const struct sql_tables *t, const char *schema,
		 const struct match_params *params, struct fill_deps *deps);

#endif
