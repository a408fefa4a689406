/*
 * cachesql.c: the cache SQL's grammar (see cachesql.h), over the one
 * lexer's tokens.
 */
#include "sql/cachesql.h"

#include <stdio.h>
#include <string.h>

struct reader {
	struct sql_cursor c;
	const char *q;
	size_t n;
	char *err;
	size_t errlen;
};

static void peek(const struct reader *r, struct sql_tok *t)
{
	sql_cursor_peek(&r->c, t);
}

static void skip(struct reader *r)
{
	struct sql_tok t;

	sql_cursor_next(&r->c, &t);
}

/* Where token t's text starts (its opening quote included). */
static const char *start_of(const struct sql_tok *t)
{
	return t->kind == T_STRING || t->kind == T_QUOTED ? t->p - 1 : t->p;
}

/* The word w (upper case) next: read it. */
static bool word(struct reader *r, const char *w)
{
	struct sql_tok t;

	peek(r, &t);
	if (t.kind != T_WORD || !sql_name_is(&t, w))
		return false;
	skip(r);
	return true;
}

static int syntax(struct reader *r)
{
	struct sql_tok t;
	const char *at;
	int n;

	peek(r, &t);
	at = t.kind == T_END ? r->q + r->n : start_of(&t);
	n = (int)(r->q + r->n - at > 40 ? 40 : r->q + r->n - at);
	snprintf(r->err, r->errlen, "You have an error in your cache SQL syntax near '%.*s'", n, at);
	return -1;
}

/* Nothing but ';' left. */
static bool at_end(struct reader *r)
{
	struct sql_tok t;

	for (peek(r, &t); sql_is_punct(&t, ';'); peek(r, &t))
		skip(r);
	return t.kind == T_END;
}

/* A number next (digits; a unit may follow in the same word, 10s): its
 * value, and the rest of the word. */
static bool number(struct reader *r, long *v, const char **rest, size_t *rest_len)
{
	struct sql_tok t;
	size_t i = 0;
	long n = 0;

	peek(r, &t);
	if (t.kind != T_WORD || t.p[0] < '0' || t.p[0] > '9')
		return false;
	for (; i < t.len && t.p[i] >= '0' && t.p[i] <= '9'; i++) {
		n = n * 10 + (t.p[i] - '0');
		if (n > SQL_CC_MAX_MS)
			return false;
	}
	skip(r);
	*v = n;
	*rest = t.p + i;
	*rest_len = t.len - i;
	return true;
}

static bool unit_is(const char *p, size_t n, const char *w)
{
	struct sql_tok t = { .kind = T_WORD, .p = p, .len = n };

	return sql_name_is(&t, w);
}

/* n SECONDS | MILLISECONDS (or SECOND, S, MILLISECOND, MS; or 10s). */
static bool duration(struct reader *r, int *ms)
{
	static const char *const secs[] = { "SECONDS", "SECOND", "S", NULL };
	static const char *const msecs[] = { "MILLISECONDS", "MILLISECOND", "MS", NULL };
	const char *rest;
	size_t rn;
	long v;
	int unit = 0;

	if (!number(r, &v, &rest, &rn))
		return false;
	for (int i = 0; secs[i] && !unit; i++)
		if (rn ? unit_is(rest, rn, secs[i]) : word(r, secs[i]))
			unit = 1000;
	for (int i = 0; msecs[i] && !unit; i++)
		if (rn ? unit_is(rest, rn, msecs[i]) : word(r, msecs[i]))
			unit = 1;
	if (!unit)
		return false;
	v *= unit;
	if (v > SQL_CC_MAX_MS)
		return false;
	*ms = (int)v;
	return true;
}

static bool plain_byte(unsigned char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_' || c == '$';
}

/* A name next: a word of plain bytes, or a quoted name ('..', "..", `..`)
 * closed, without its quote inside. */
static bool name(struct reader *r, char *out, size_t cap)
{
	struct sql_tok t;
	char quote;

	peek(r, &t);
	if (t.kind == T_WORD) {
		for (size_t i = 0; i < t.len; i++)
			if (!plain_byte((unsigned char)t.p[i]))
				return false;
	} else if (t.kind == T_STRING || t.kind == T_QUOTED) {
		quote = t.p[-1];
		if (t.p + t.len >= r->q + r->n || memchr(t.p, quote, t.len))
			return false;   /* not closed, or an escaped quote in it */
	} else {
		return false;
	}
	if (t.len == 0 || t.len >= cap)
		return false;
	memcpy(out, t.p, t.len);
	out[t.len] = 0;
	skip(r);
	return true;
}

static int parse_policy(struct reader *r, struct sql_cache_cmd *cc)
{
	if (word(r, "POLICY")) {
		if (!word(r, "TTL") || !duration(r, &cc->ttl_ms))
			return syntax(r);
		if (word(r, "REFRESH")) {
			word(r, "EVERY");
			if (!duration(r, &cc->refresh_ms))
				return syntax(r);
		}
	}
	if (word(r, "COALESCE") && !duration(r, &cc->coalesce_ms))
		return syntax(r);
	if (word(r, "ALWAYS")) {
		cc->txn = SQL_CC_TXN_ALWAYS;
	} else if (word(r, "UNTIL")) {
		if (!word(r, "WRITE"))
			return syntax(r);
		cc->txn = SQL_CC_TXN_UNTIL_WRITE;
	}
	return 0;
}

static int parse_create(struct reader *r, struct sql_cache_cmd *cc)
{
	struct sql_tok t;
	const char *end = r->q + r->n;

	cc->ttl_ms = cc->refresh_ms = cc->coalesce_ms = -1;
	if (parse_policy(r, cc) < 0)
		return -1;
	if (!word(r, "FROM") && (!name(r, cc->name, sizeof(cc->name)) || !word(r, "FROM")))
		return syntax(r);
	peek(r, &t);
	if (t.kind == T_WORD && (t.p[0] | 0x20) == 'q' && t.len > 1 && t.p[1] == '_' && end - t.p > 2) {
		cc->from_id = true;
		if (!name(r, cc->query_id, sizeof(cc->query_id)) || !at_end(r))
			return syntax(r);
		return SQL_CC_CREATE;
	}
	if (t.kind == T_END || sql_is_punct(&t, ';'))
		return syntax(r);   /* FROM and no query (the fuzzer's CREATE CACHE FROM;;) */
	cc->select = start_of(&t);
	while (end > cc->select && (sql_space_byte((unsigned char)end[-1]) || end[-1] == ';'))
		end--;
	cc->select_len = (size_t)(end - cc->select);
	if (cc->select_len == 0)
		return syntax(r);   /* nothing left of the query once its ';'s are trimmed */
	return SQL_CC_CREATE;
}

static int parse_where_id(struct reader *r, struct sql_cache_cmd *a)
{
	struct sql_tok t;

	if (word(r, "WHERE")) {
		if (!word(r, "QUERY_ID"))
			return syntax(r);
		peek(r, &t);
		if (!sql_is_punct(&t, '='))
			return syntax(r);
		skip(r);
		if (!name(r, a->target, sizeof(a->target)))
			return syntax(r);
	}
	return 0;
}

static int parse_show(struct reader *r, struct sql_cache_cmd *a)
{
	const char *rest;
	size_t rn;

	if (word(r, "CACHES")) {
		if (parse_where_id(r, a) < 0)
			return -1;
		return at_end(r) ? SQL_CC_SHOW_CACHES : syntax(r);
	}
	if (word(r, "PROXIED")) {
		if (!word(r, "QUERIES"))
			return syntax(r);
		if (parse_where_id(r, a) < 0)
			return -1;
		if (word(r, "LIMIT") && (!number(r, &a->limit, &rest, &rn) || rn))
			return syntax(r);
		return at_end(r) ? SQL_CC_SHOW_PROXIED : syntax(r);
	}
	if (word(r, "READYSET"))
		return word(r, "STATUS") && at_end(r) ? SQL_CC_SHOW_RS_STATUS : syntax(r);
	if (word(r, "SHOAL"))
		return word(r, "STATUS") && at_end(r) ? SQL_CC_SHOW_STATUS : syntax(r);
	return SQL_CC_NONE;
}

/* DROP ALL CACHES, DROP CACHE name, FLUSH ALL [SHALLOW] CACHES, FLUSH
 * CACHE name (the first word read). */
static int parse_drop_flush(struct reader *r, struct sql_cache_cmd *a, bool drop)
{
	if (word(r, "ALL")) {
		if (!drop)
			word(r, "SHALLOW");
		if (!word(r, "CACHES") || !at_end(r))
			return syntax(r);
		return drop ? SQL_CC_DROP_ALL : SQL_CC_FLUSH_ALL;
	}
	if (!word(r, "CACHE"))
		return SQL_CC_NONE;
	if (!name(r, a->target, sizeof(a->target)) || !at_end(r))
		return syntax(r);
	return drop ? SQL_CC_DROP : SQL_CC_FLUSH;
}

static int parse(struct reader *r, struct sql_cache_cmd *a)
{
	memset(a, 0, sizeof(*a));
	a->limit = -1;
	if (word(r, "CREATE")) {
		word(r, "SHALLOW");
		return word(r, "CACHE") ? parse_create(r, a) : SQL_CC_NONE;
	}
	if (word(r, "DROP"))
		return parse_drop_flush(r, a, true);
	if (word(r, "FLUSH"))
		return parse_drop_flush(r, a, false);
	if (word(r, "SHOW"))
		return parse_show(r, a);
	if (word(r, "EXPLAIN") && word(r, "LAST"))
		return word(r, "STATEMENT") && at_end(r) ? SQL_CC_EXPLAIN_LAST : syntax(r);
	return SQL_CC_NONE;
}

int sql_cache_cmd_stmt(const struct stmt *st, struct sql_cache_cmd *a, char *err, size_t errlen)
{
	struct reader r = { .q = st->q, .n = st->n, .err = err, .errlen = errlen };

	stmt_cursor(&r.c, st);
	return parse(&r, a);
}

int sql_cache_cmd_text(const char *q, size_t n, struct sql_cache_cmd *a, char *err, size_t errlen)
{
	struct reader r = { .q = q, .n = n, .err = err, .errlen = errlen };

	sql_cursor_text(&r.c, q, n);
	return parse(&r, a);
}
