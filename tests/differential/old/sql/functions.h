/*
 * functions.h: Shoal's table of SQL function names and the keywords that may
 * stand before '(' without being a call.  Owns the deterministic-builtin
 * allowlist and the denylists (non-deterministic, side effects,
 * session-specific) that the cacheability check (classify.c) consults.
 *
 * One static, sorted, read-only table; lookups are case-insensitive binary
 * searches with no allocation.
 */
#ifndef SHOAL_SQL_FUNCTIONS_H
#define SHOAL_SQL_FUNCTIONS_H

#include <stddef.h>
#include <stdint.h>

enum sql_fn_kind {
	SQL_FN_DETERMINISTIC = 1, /* allowlisted builtin: same args, same result */
	SQL_FN_NONDETERMINISTIC,  /* NOW, RAND, UUID, ... */
	SQL_FN_SIDE_EFFECTS,      /* SLEEP, GET_LOCK, NEXTVAL, ... */
	SQL_FN_SESSION,           /* USER, DATABASE, LAST_INSERT_ID, ... */
	SQL_FN_KEYWORD,           /* IN, AS, OVER, DECIMAL: no call before ( */
};

/* The name denies caching even without parentheses (CURRENT_TIMESTAMP). */
#define SQL_FN_BARE 0x01

struct sql_fn {
	const char *name; /* upper case */
	uint8_t kind;     /* enum sql_fn_kind */
	uint8_t flags;    /* SQL_FN_* */
};

/* Entry for name[0, len) (any case), or NULL when the name is unknown. */
const struct sql_fn *sql_fn_lookup(const char *name, size_t len);

/* The table itself, in lookup (strcmp) order: for tests and listings. */
size_t sql_fn_count(void);
const struct sql_fn *sql_fn_at(size_t i); /* NULL when i >= count */

#endif
