/*
 * classify.h: Shoal's cacheability verdict for a query shape.  Owns the
 * rules deciding whether a normalised query (the tokenizer's digest_text)
 * may be auto-cached (the reasons are sql/reasons.h's, in Readyset's
 * wording).
 *
 * The verdict depends on digest_text alone, so it is computed once per
 * digest and remembered with it.  No allocation, no global mutable state.
 */
#ifndef SHOAL_SQL_CLASSIFY_H
#define SHOAL_SQL_CLASSIFY_H

#include <stddef.h>

#include "sql/reasons.h"

/*
 * Verdict for digest_text[0, len) (need not be NUL-terminated; NULL is "not
 * a SELECT").  Returns NULL when the shape is cacheable, else its reason
 * (sql/reasons.h: WHY_NOT_SELECT .. WHY_NO_CACHE, from the table).
 *
 * Order: "not a SELECT" (first keyword is not SELECT, '(' SELECT, or a
 * WITH [RECURSIVE] CTE list followed by SELECT), then "multiple statements"
 * (';' followed by more text), then whichever other problem comes first in
 * the text.  Quoted strings and `backticked` names are never read as
 * keywords, functions or variables.
 */
const struct reason *sql_skip_reason(const char *digest_text, size_t len);

#endif
