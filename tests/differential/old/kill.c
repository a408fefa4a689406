/*
 * old/kill.c: KILL's reader before issue 39, copied from git at 5a9fd58 for the
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

/* ==== src/core/kill.c, from line 157 at 5a9fd58 ==== */

static const char *skip_space(const char *p, const char *e)
{
	while (p < e && isspace((unsigned char)*p))
		p++;
	return p;
}

/* The word w (case-insensitive) at p, as a whole word: the position after
 * it and the spaces that follow, or NULL. */
static const char *word(const char *p, const char *e, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(e - p) < n || strncasecmp(p, w, n) != 0)
		return NULL;
	if (p + n < e && (isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == '$'))
		return NULL;
	return skip_space(p + n, e);
}

/* KILL [HARD|SOFT] [CONNECTION|QUERY] <digits> [;], nothing else after.
 * false: not a statement the node answers (it goes upstream). */
static bool parse_kill(const char *q, size_t n, struct kill_req *r)
{
	const char *p = skip_space(q, q + n), *e = q + n, *t;
	uint64_t id = 0;

	memset(r, 0, sizeof(*r));
	r->kind = KK_CONNECTION;
	if (!(p = word(p, e, "KILL")))
		return false;
	if ((t = word(p, e, "HARD")) || (t = word(p, e, "SOFT")))
		p = t;
	if ((t = word(p, e, "CONNECTION"))) {
		p = t;
	} else if ((t = word(p, e, "QUERY"))) {
		p = t;
		r->kind = KK_QUERY;
		if (word(p, e, "ID")) {
			r->unsupported = true;
			return true;
		}
	}
	if (word(p, e, "USER")) {
		r->unsupported = true;
		return true;
	}
	if (p == e || !isdigit((unsigned char)*p))
		return false;
	while (p < e && isdigit((unsigned char)*p)) {
		if (id > (UINT64_MAX - 9) / 10)
			return false;
		id = id * 10 + (uint64_t)(*p++ - '0');
	}
	p = skip_space(p, e);
	if (p < e && *p == ';')
		p = skip_space(p + 1, e);
	if (p != e)
		return false;
	r->id = id;
	return true;
}

bool kill_statement(const char *q, size_t n)
{
	return word(skip_space(q, q + n), q + n, "KILL") != NULL;
}

bool old_parse_kill(const char *q, size_t n, struct kill_req *r)
{
	return parse_kill(q, n, r);
}
