/*
 * old/grants.c: the grant checks' readers before issue 39, copied from git at 5a9fd58 for the
 * differential (tests/differential/differential.c); only that test builds
 * it. Each piece names the file and line it comes from and is as it was
 * there, but for those marked "adapted" (effects or catalog lookups
 * recorded instead of made, through the same loop).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "readers.h"
#include "sql/functions.h"
#include "sql/lexer.h"
#include "sql/tables.h"

/* ==== src/cache/grants.c, from line 228 at 5a9fd58 ==== */

static bool starts_with_words(const char *p, const char *words)
{
	size_t n = strlen(words);

	return strncasecmp(p, words, n) == 0 && (p[n] == ' ' || p[n] == '\0' || p[n] == ';');
}

/* One statement of the digest text: 1 a privilege change, 2 SET ROLE. */
static int statement_kind(const char *p)
{
	const char *end;

	while (*p == ' ' || *p == '(')
		p++;
	if (starts_with_words(p, "SET ROLE"))
		return 2;
	end = strchr(p, ';');
	return grants_text_changes_privileges(p, end ? (size_t)(end - p) : strlen(p)) ? 1 : 0;
}

/* ==== src/cache/grants.c, from line 267 at 5a9fd58 ==== */

bool grants_text_changes_privileges(const char *text, size_t n)
{
	static const enum sql_kw words[][4] = {
		{ KW_GRANT }, { KW_REVOKE }, { KW_ALTER, KW_USER }, { KW_DROP, KW_USER },
		{ KW_RENAME, KW_USER }, { KW_SET, KW_PASSWORD }, { KW_SET, KW_DEFAULT, KW_ROLE },
		{ KW_DROP, KW_ROLE }, { KW_FLUSH, KW_PRIVILEGES }, { KW_CREATE, KW_OR, KW_REPLACE, KW_USER },
		{ KW_CREATE, KW_OR, KW_REPLACE, KW_ROLE }, { KW_CREATE, KW_USER }, { KW_CREATE, KW_ROLE },
	};
	struct sql_tok first[4];
	struct sql_lex lx = { .s = text, .n = n, .raw = true };

	for (int i = 0; i < 4; i++)
		sql_lex_next(&lx, &first[i]);
	for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++) {
		int i;

		for (i = 0; i < 4 && words[k][i]; i++)
			if (!sql_kw_is(&first[i], words[k][i]))
				break;
		if (i == 4 || !words[k][i])
			return true;
	}
	return false;
}

/* ==== src/cache/grants.c, from line 248 at 5a9fd58, adapted: the verdicts
 * forgotten and the role set are recorded ==== */

void old_grants_note(const struct sql_tok_result *tok, bool *privileges, bool *set_role)
{
	const char *p = tok->text;

	*privileges = *set_role = false;
	/* every statement of a multi-statement text counts */
	while (p && *p) {
		int k = statement_kind(p);

		if (k == 2) {
			*set_role = true;
		} else if (k == 1) {
			*privileges = true;
		}
		p = strchr(p, ';');
		if (p)
			p++;
	}
}
