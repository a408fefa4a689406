/*
 * classify.h: Shoal's cacheability verdict for a query shape.  Owns the
 * rules deciding whether a normalised query (the tokenizer's digest_text)
 * may be auto-cached, and the fixed set of skip-reason strings (Readyset's
 * wording, shown in SHOW PROXIED QUERIES / EXPLAIN LAST STATEMENT and used
 * as metric labels).
 *
 * The verdict depends on digest_text alone, so it is computed once per
 * digest and remembered with it.  No allocation, no global mutable state.
 */
#ifndef SHOAL_SQL_CLASSIFY_H
#define SHOAL_SQL_CLASSIFY_H

#include <stddef.h>

/* The reasons, exactly as reported. */
#define SQL_SKIP_NOT_SELECT      "not a SELECT"
#define SQL_SKIP_MULTI_STATEMENT "multiple statements"
#define SQL_SKIP_NONDETERMINISTIC "non-deterministic function"
#define SQL_SKIP_SIDE_EFFECTS    "side effects"
#define SQL_SKIP_SESSION         "session-specific function"
#define SQL_SKIP_USER_VARIABLE   "user variable"
#define SQL_SKIP_SYSTEM_VARIABLE "system variable"
#define SQL_SKIP_SYSTEM_SCHEMA   "system schema"
#define SQL_SKIP_UDF             "user-defined or stored function"
#define SQL_SKIP_LOCKING_READ    "locking read"
#define SQL_SKIP_INTO            "INTO"
#define SQL_SKIP_NO_CACHE        "SQL_NO_CACHE"

/*
 * Verdict for digest_text[0, len) (need not be NUL-terminated; NULL is "not
 * a SELECT").  Returns NULL when the shape is cacheable, else one of the
 * reasons above as a static string: the same pointer every time for a given
 * reason, also the one sql_skip_reason_at() lists.
 *
 * Order: "not a SELECT" (first keyword is not SELECT, '(' SELECT, or a
 * WITH [RECURSIVE] CTE list followed by SELECT), then "multiple statements"
 * (';' followed by more text), then whichever other problem comes first in
 * the text.  Quoted strings and `backticked` names are never read as
 * keywords, functions or variables.
 */
const char *sql_skip_reason(const char *digest_text, size_t len);

/* Every reason, for pre-registering counters: i = 0.. until NULL. */
const char *sql_skip_reason_at(size_t i);

#endif
