/*
 * old/commands.c: the cache SQL's reader before issue 39, copied from git at 5a9fd58 for the
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

/* ==== src/cache/commands.c, from line 32 at 5a9fd58 ==== */

struct lex {
	const char *p, *end;
};

static void skip_space(struct lex *l)
{
	for (;;) {
		while (l->p < l->end && isspace((unsigned char)*l->p))
			l->p++;
		if (l->end - l->p >= 2 && l->p[0] == '/' && l->p[1] == '*') {
			const char *e = l->p + 2;

			while (e + 1 < l->end && !(e[0] == '*' && e[1] == '/'))
				e++;
			l->p = e + 1 < l->end ? e + 2 : l->end;
			continue;
		}
		return;
	}
}

static bool is_ident_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '$';
}

/* Match one keyword, case-insensitively, as a whole word. */
static bool word(struct lex *l, const char *w)
{
	size_t n = strlen(w);

	skip_space(l);
	if ((size_t)(l->end - l->p) < n || strncasecmp(l->p, w, n) != 0)
		return false;
	if (l->p + n < l->end && is_ident_char(l->p[n]))
		return false;
	l->p += n;
	return true;
}

static bool number(struct lex *l, long *v)
{
	long n = 0;

	skip_space(l);
	if (l->p >= l->end || !isdigit((unsigned char)*l->p))
		return false;
	/* bounded by l->end: the text is not NUL-terminated */
	while (l->p < l->end && isdigit((unsigned char)*l->p)) {
		n = n * 10 + (*l->p++ - '0');
		if (n > 86400000)
			return false;
	}
	*v = n;
	return true;
}

/* An identifier, or a quoted ('..', "..", `..`) name. */
static bool name(struct lex *l, char *out, size_t cap)
{
	const char *s;
	size_t n;

	skip_space(l);
	if (l->p >= l->end)
		return false;
	if (*l->p == '\'' || *l->p == '"' || *l->p == '`') {
		char q = *l->p++;

		s = l->p;
		while (l->p < l->end && *l->p != q)
			l->p++;
		if (l->p >= l->end)
			return false;
		n = (size_t)(l->p - s);
		l->p++;
	} else {
		s = l->p;
		while (l->p < l->end && is_ident_char(*l->p))
			l->p++;
		n = (size_t)(l->p - s);
	}
	if (n == 0 || n >= cap)
		return false;
	memcpy(out, s, n);
	out[n] = 0;
	return true;
}

static bool at_end(struct lex *l)
{
	skip_space(l);
	while (l->p < l->end && (*l->p == ';' || isspace((unsigned char)*l->p)))
		l->p++;
	return l->p >= l->end;
}

static int syntax(struct lex *l, char *err, size_t errlen)
{
	int n = (int)(l->end - l->p > 40 ? 40 : l->end - l->p);

	snprintf(err, errlen, "You have an error in your cache SQL syntax near '%.*s'", n, l->p);
	return -1;
}

/* n SECONDS | MILLISECONDS (or SECOND, MS, S). */
static bool duration(struct lex *l, int *ms)
{
	long v;

	if (!number(l, &v))
		return false;
	if (word(l, "SECONDS") || word(l, "SECOND") || word(l, "S"))
		v *= 1000;
	else if (!(word(l, "MILLISECONDS") || word(l, "MILLISECOND") || word(l, "MS")))
		return false;
	if (v > 86400000)
		return false;
	*ms = (int)v;
	return true;
}

static int parse_policy(struct lex *l, struct create_cache *cc, char *err, size_t errlen)
{
	if (word(l, "POLICY")) {
		if (!word(l, "TTL") || !duration(l, &cc->ttl_ms))
			return syntax(l, err, errlen);
		if (word(l, "REFRESH")) {
			word(l, "EVERY");
			if (!duration(l, &cc->refresh_ms))
				return syntax(l, err, errlen);
		}
	}
	if (word(l, "COALESCE") && !duration(l, &cc->coalesce_ms))
		return syntax(l, err, errlen);
	if (word(l, "ALWAYS"))
		cc->txn = TXN_ALWAYS;
	else if (word(l, "UNTIL")) {
		if (!word(l, "WRITE"))
			return syntax(l, err, errlen);
		cc->txn = TXN_UNTIL_WRITE;
	}
	return 0;
}

static int parse_create(struct lex *l, struct create_cache *cc, char *err, size_t errlen)
{
	memset(cc, 0, sizeof(*cc));
	cc->ttl_ms = cc->refresh_ms = cc->coalesce_ms = -1;
	if (parse_policy(l, cc, err, errlen) < 0)
		return -1;
	if (!word(l, "FROM")) {
		if (!name(l, cc->name, sizeof(cc->name)) || !word(l, "FROM"))
			return syntax(l, err, errlen);
	}
	skip_space(l);
	if (l->end - l->p > 2 && strncasecmp(l->p, "q_", 2) == 0) {
		cc->from_id = true;
		if (!name(l, cc->query_id, sizeof(cc->query_id)) || !at_end(l))
			return syntax(l, err, errlen);
		return CC_CREATE;
	}
	cc->select = l->p;
	cc->select_len = (size_t)(l->end - l->p);
	while (cc->select_len && (isspace((unsigned char)cc->select[cc->select_len - 1]) ||
				  cc->select[cc->select_len - 1] == ';'))
		cc->select_len--;
	if (cc->select_len == 0)
		return syntax(l, err, errlen);
	return CC_CREATE;
}

static int parse_where_id(struct lex *l, struct cache_cmd_args *a, char *err, size_t errlen)
{
	if (word(l, "WHERE")) {
		skip_space(l);
		if (!word(l, "query_id") || (skip_space(l), l->p >= l->end || *l->p != '='))
			return syntax(l, err, errlen);
		l->p++;
		if (!name(l, a->target, sizeof(a->target)))
			return syntax(l, err, errlen);
	}
	return 0;
}

static int parse_show(struct lex *l, struct cache_cmd_args *a, char *err, size_t errlen)
{
	if (word(l, "CACHES")) {
		if (parse_where_id(l, a, err, errlen) < 0)
			return -1;
		return at_end(l) ? CC_SHOW_CACHES : syntax(l, err, errlen);
	}
	if (word(l, "PROXIED")) {
		if (!word(l, "QUERIES"))
			return syntax(l, err, errlen);
		if (parse_where_id(l, a, err, errlen) < 0)
			return -1;
		if (word(l, "LIMIT") && !number(l, &a->limit))
			return syntax(l, err, errlen);
		return at_end(l) ? CC_SHOW_PROXIED : syntax(l, err, errlen);
	}
	if (word(l, "READYSET"))
		return word(l, "STATUS") && at_end(l) ? CC_SHOW_RS_STATUS : syntax(l, err, errlen);
	if (word(l, "SHOAL"))
		return word(l, "STATUS") && at_end(l) ? CC_SHOW_STATUS : syntax(l, err, errlen);
	return CC_NONE;
}

int cache_cmd_parse(const char *q, size_t n, struct cache_cmd_args *a, char *err, size_t errlen)
{
	struct lex l = { q, q + n };

	memset(a, 0, sizeof(*a));
	a->limit = -1;
	if (word(&l, "CREATE")) {
		word(&l, "SHALLOW");
		return word(&l, "CACHE") ? parse_create(&l, &a->create, err, errlen) : CC_NONE;
	}
	if (word(&l, "DROP")) {
		if (word(&l, "ALL"))
			return word(&l, "CACHES") && at_end(&l) ? CC_DROP_ALL : syntax(&l, err, errlen);
		if (!word(&l, "CACHE"))
			return CC_NONE;
		return name(&l, a->target, sizeof(a->target)) && at_end(&l) ? CC_DROP : syntax(&l, err, errlen);
	}
	if (word(&l, "FLUSH")) {
		if (word(&l, "ALL")) {
			word(&l, "SHALLOW");
			return word(&l, "CACHES") && at_end(&l) ? CC_FLUSH_ALL : syntax(&l, err, errlen);
		}
		if (!word(&l, "CACHE"))
			return CC_NONE;
		return name(&l, a->target, sizeof(a->target)) && at_end(&l) ? CC_FLUSH : syntax(&l, err, errlen);
	}
	if (word(&l, "SHOW"))
		return parse_show(&l, a, err, errlen);
	if (word(&l, "EXPLAIN") && word(&l, "LAST"))
		return word(&l, "STATEMENT") && at_end(&l) ? CC_EXPLAIN_LAST : syntax(&l, err, errlen);
	return CC_NONE;
}
