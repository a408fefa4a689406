/*
 * setuse.c: what a statement does to the session's state (see setuse.h),
 * read from its tokens with a cursor (stmt.h).
 */
#include "sql/setuse.h"

#include <string.h>

struct reader {
	const struct stmt *st;
	struct sql_cursor c;
	struct sql_tok t;          /* the current token */
	struct sql_setuse *out;
};

static void next(struct reader *r)
{
	sql_cursor_next(&r->c, &r->t);
}

/* Where the text of the current token ends (its closing quote included). */
static const char *end_of(const struct reader *r)
{
	return r->st->q + sql_cursor_pos(&r->c);
}

/* Where the text of token t starts (its opening quote included). */
static const char *start_of(const struct sql_tok *t)
{
	return t->kind == T_STRING || t->kind == T_QUOTED ? t->p - 1 : t->p;
}

/* The next token touches the current one (nothing between them). */
static bool touching_next(const struct reader *r, struct sql_tok *n)
{
	sql_cursor_peek(&r->c, n);
	return n->kind != T_END && start_of(n) == end_of(r);
}

/* A string or `quoted` name is closed (else it runs to the end of the
 * text, and the server refuses the statement: nothing of it is taken). */
static bool closed(const struct reader *r, const struct sql_tok *t)
{
	return (t->kind != T_STRING && t->kind != T_QUOTED) || t->p + t->len < r->st->q + r->st->n;
}

static bool word_is(const struct sql_tok *t, const char *w)
{
	return t->kind == T_WORD && sql_name_is(t, w);
}

static bool at_end(const struct sql_tok *t)
{
	return t->kind == T_END || sql_is_punct(t, ';');
}

static bool digit_start(const struct sql_tok *t)
{
	return t->kind == T_WORD && t->p[0] >= '0' && t->p[0] <= '9';
}

static bool alnum_or_dot(unsigned char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '.';
}

/* A number at the current token: a digit (or '.' then a digit), then
 * digits, letters and dots, its tokens touching (1.5e3 is three tokens of
 * the lexer). False when the current token starts none, or the run holds
 * another character. The current token is then its last. */
static bool read_number(struct reader *r, const char **start)
{
	struct sql_tok n;

	*start = r->t.p;
	if (sql_is_punct(&r->t, '.')) {
		if (!touching_next(r, &n) || !digit_start(&n))
			return false;   /* a '.' alone */
	} else if (!digit_start(&r->t)) {
		return false;           /* no number here */
	}
	while (touching_next(r, &n) && (n.kind == T_WORD || (n.kind == T_PUNCT && n.c == '.')))
		next(r);
	for (const char *p = *start; p < end_of(r); p++)
		if (!alnum_or_dot((unsigned char)*p))
			return false;   /* a '_' or '$' in it: not a number as the server reads one */
	return true;
}

/* One value (the token after '='): a string, a signed number, a number, a
 * bare word; its text into it. */
static bool read_value(struct reader *r, struct sql_set_item *it)
{
	const char *start;

	next(r);
	start = start_of(&r->t);
	if (sql_is_punct(&r->t, '-') || sql_is_punct(&r->t, '+')) {
		const char *num;

		next(r);
		if (!read_number(r, &num))
			return false;   /* a sign before something else: computed */
	} else if (r->t.kind == T_STRING) {
		if (!closed(r, &r->t))
			return false;
		/* as written, quotes and all */
	} else if (digit_start(&r->t) || sql_is_punct(&r->t, '.')) {
		if (!read_number(r, &start))
			return false;   /* 1_000, 1.x_y, a '.' alone */
	} else if (r->t.kind == T_WORD) {
		it->is_default = r->t.kw == KW_DEFAULT;
	} else {
		return false;           /* an expression, a `quoted` name, ... */
	}
	it->value = start;
	it->value_len = (size_t)(end_of(r) - start);
	return true;
}

/* TRANSACTION characteristic [, ...] (the current token is TRANSACTION). */
static bool read_txn(struct reader *r, struct sql_set_item *it)
{
	it->what = SQL_SET_TXN;
	for (;;) {
		next(r);
		if (word_is(&r->t, "ISOLATION")) {
			next(r);
			if (!word_is(&r->t, "LEVEL"))
				return false;
			next(r);
			if (word_is(&r->t, "SERIALIZABLE")) {
				it->level = SQL_ISO_SERIALIZABLE;
			} else if (word_is(&r->t, "REPEATABLE")) {
				next(r);
				if (!sql_kw_is(&r->t, KW_READ))
					return false;
				it->level = SQL_ISO_REPEATABLE_READ;
			} else if (sql_kw_is(&r->t, KW_READ)) {
				next(r);
				if (word_is(&r->t, "COMMITTED"))
					it->level = SQL_ISO_READ_COMMITTED;
				else if (sql_kw_is(&r->t, KW_UNCOMMITTED))
					it->level = SQL_ISO_READ_UNCOMMITTED;
				else
					return false;
			} else {
				return false;
			}
		} else if (sql_kw_is(&r->t, KW_READ)) {
			next(r);
			if (!word_is(&r->t, "ONLY") && !word_is(&r->t, "WRITE"))
				return false;
			it->access = word_is(&r->t, "ONLY") ? 1 : 2;
		} else {
			return false;
		}
		next(r);
		if (!sql_is_punct(&r->t, ','))
			return at_end(&r->t);
	}
}

/* NAMES cs [COLLATE c], CHARACTER SET cs (the current token is the word
 * before cs); the token after is then current. */
static bool read_names(struct reader *r, struct sql_set_item *it)
{
	const char *start;

	next(r);
	if ((r->t.kind != T_WORD && r->t.kind != T_QUOTED && r->t.kind != T_STRING) || !closed(r, &r->t))
		return false;
	start = start_of(&r->t);
	it->value = start;
	it->value_len = (size_t)(end_of(r) - start);
	next(r);
	if (it->what == SQL_SET_NAMES && word_is(&r->t, "COLLATE")) {
		next(r);
		if ((r->t.kind != T_WORD && r->t.kind != T_QUOTED && r->t.kind != T_STRING) || !closed(r, &r->t))
			return false;
		it->value_len = (size_t)(end_of(r) - start);
		next(r);
	}
	return true;
}

/* A variable's name: letters, digits and '_', not a number's start. */
static bool plain_name(const struct sql_tok *t)
{
	if (t->kind != T_WORD || t->len == 0 || digit_start(t))
		return false;
	for (size_t i = 0; i < t->len; i++) {
		unsigned char c = (unsigned char)t->p[i];

		if (!(c == '_' || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')))
			return false;
	}
	return true;
}

/* @@[scope.]name, touching (the current token is @@). */
static bool read_sysvar(struct reader *r, struct sql_set_item *it)
{
	struct sql_tok n;

	if (!touching_next(r, &n) || n.kind != T_WORD)
		return false;
	next(r);
	if (touching_next(r, &n) && sql_is_punct(&n, '.')) {
		if (word_is(&r->t, "GLOBAL") || word_is(&r->t, "PERSIST") || word_is(&r->t, "PERSIST_ONLY"))
			it->scope = SQL_SCOPE_GLOBAL;   /* (MySQL's @@persist.x: global, and kept) */
		else if (!word_is(&r->t, "SESSION") && !sql_kw_is(&r->t, KW_LOCAL))
			return false;   /* db.name: no variable */
		else if (it->scope == SQL_SCOPE_NONE)
			it->scope = SQL_SCOPE_SESSION;
		next(r);
		if (!touching_next(r, &n) || n.kind != T_WORD)
			return false;
		next(r);
		if (touching_next(r, &n) && sql_is_punct(&n, '.'))
			return false;   /* a name with a dot */
	}
	return true;
}

/* [scope] name = value: the current token is its first. */
static bool read_var(struct reader *r, struct sql_set_item *it)
{
	struct sql_tok n;

	it->what = SQL_SET_VAR;
	if (r->t.kind == T_SYSVAR && !read_sysvar(r, it))
		return false;
	if (it->scope == SQL_SCOPE_GLOBAL)
		r->out->any_global = true;
	if (!plain_name(&r->t))
		return false;           /* a user variable, a `quoted` name, a name with odd bytes */
	it->name = r->t.p;
	it->name_len = r->t.len;
	next(r);
	if (sql_is_punct(&r->t, ':') && touching_next(r, &n) && sql_is_punct(&n, '='))
		next(r);                /* := */
	else if (!sql_is_punct(&r->t, '='))
		return false;
	if (!read_value(r, it))
		return false;
	next(r);
	return true;
}

/* One assignment: 1 more follow, 0 the statement ends, -1 it stops here. */
static int read_item(struct reader *r)
{
	struct sql_setuse *o = r->out;
	struct sql_set_item it = { .scope = SQL_SCOPE_NONE };

	next(r);
	if (word_is(&r->t, "GLOBAL") || word_is(&r->t, "PERSIST") || word_is(&r->t, "PERSIST_ONLY")) {
		it.scope = SQL_SCOPE_GLOBAL;
		o->any_global = true;
		next(r);
	} else if (word_is(&r->t, "SESSION") || sql_kw_is(&r->t, KW_LOCAL)) {
		it.scope = SQL_SCOPE_SESSION;
		next(r);
	}
	if (o->n == SQL_SET_ITEMS)
		return -1;              /* more than recorded */
	if (sql_kw_is(&r->t, KW_TRANSACTION)) {
		/* without a scope: the next transaction only, no session state */
		if (it.scope == SQL_SCOPE_NONE || !read_txn(r, &it))
			return -1;
		o->items[o->n++] = it;
		return 0;
	}
	if (word_is(&r->t, "NAMES") || word_is(&r->t, "CHARSET") || word_is(&r->t, "CHARACTER")) {
		it.what = word_is(&r->t, "NAMES") ? SQL_SET_NAMES : SQL_SET_CHARSET;
		if (word_is(&r->t, "CHARACTER")) {
			next(r);
			if (!sql_kw_is(&r->t, KW_SET))
				return -1;
		}
		if (!read_names(r, &it))
			return -1;
	} else if (!read_var(r, &it)) {
		return -1;
	}
	o->items[o->n++] = it;
	if (sql_is_punct(&r->t, ','))
		return 1;
	return at_end(&r->t) ? 0 : -1;
}

static void read_set(struct reader *r)
{
	struct sql_tok n;
	int k;

	sql_cursor_peek(&r->c, &n);
	if (sql_kw_is(&n, KW_STATEMENT)) {
		r->out->kind = SQL_SU_SET_STATEMENT;   /* its settings hold for one statement */
		r->out->understood = true;
		return;
	}
	r->out->kind = SQL_SU_SET;
	do
		k = read_item(r);
	while (k > 0);
	r->out->understood = k == 0;
}

/* USE db, DROP {DATABASE | SCHEMA} [IF EXISTS] db: the current token is
 * the name. */
static void read_db(struct reader *r)
{
	struct sql_setuse *o = r->out;

	if ((r->t.kind != T_WORD && r->t.kind != T_QUOTED) || !closed(r, &r->t))
		return;
	o->db = r->t.p;
	o->db_len = r->t.len;
	o->db_quoted = r->t.kind == T_QUOTED;
	next(r);
	o->understood = at_end(&r->t);
}

static void read_drop(struct reader *r)
{
	r->out->kind = SQL_SU_DROP_DB;
	next(r);
	if (!sql_kw_is(&r->t, KW_DATABASE) && !sql_kw_is(&r->t, KW_SCHEMA)) {
		r->out->kind = SQL_SU_OTHER;   /* DROP TABLE, ...: no schema goes */
		return;
	}
	next(r);
	if (sql_kw_is(&r->t, KW_IF)) {
		next(r);
		if (!sql_kw_is(&r->t, KW_EXISTS))
			return;
		next(r);
	}
	read_db(r);
}

/* COMMIT [WORK] [AND [NO] CHAIN] [[NO] RELEASE], ROLLBACK ... [TO ...]. */
static void read_txn_end(struct reader *r)
{
	enum sql_kw prev = KW_NONE;

	r->out->kind = SQL_SU_TXN_END;
	r->out->understood = true;
	for (next(r); !at_end(&r->t); prev = r->t.kw, next(r)) {
		if (sql_kw_is(&r->t, KW_TO)) {
			r->out->txn_end = SQL_END_KEEP;   /* to a savepoint: it ends nothing */
			return;
		}
		if (sql_kw_is(&r->t, KW_RELEASE)) {
			r->out->txn_end = prev == KW_NO ? SQL_END_KEEP : SQL_END_RELEASE;
			return;
		}
	}
}

static void read_flush(struct reader *r)
{
	r->out->kind = SQL_SU_FLUSH;
	r->out->understood = true;
	for (next(r); r->t.kind != T_END; next(r))
		if (sql_kw_is(&r->t, KW_LOCK) || sql_kw_is(&r->t, KW_EXPORT))
			r->out->flush_lock = true;
}

void sql_setuse_read(const struct stmt *st, struct sql_setuse *out)
{
	struct reader r = { .st = st, .out = out };

	memset(out, 0, sizeof(*out));
	stmt_cursor(&r.c, st);
	do
		next(&r);              /* past the leading '(' */
	while (sql_is_punct(&r.t, '('));
	switch (r.t.kw) {
	case KW_SET:
		read_set(&r);
		break;
	case KW_USE:
		out->kind = SQL_SU_USE;
		next(&r);
		read_db(&r);
		break;
	case KW_DROP:
		read_drop(&r);
		return;                /* read as code, whatever the server: a schema
					* recorded as gone is the safe side */
	case KW_COMMIT:
	case KW_ROLLBACK:
		read_txn_end(&r);
		return;
	case KW_FLUSH:
		read_flush(&r);
		return;
	default:
		return;
	}
	/* what a SET or USE does depends on the server when some servers skip
	 * part of it */
	if (sql_cursor_doubt(&r.c))
		out->understood = false;
}

bool sql_value_is(const char *v, size_t n, const char *w)
{
	size_t wl = strlen(w);

	if (n >= 2 && (v[0] == '\'' || v[0] == '"') && v[n - 1] == v[0]) {
		v++;
		n -= 2;
	}
	if (n != wl)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];

		if (c >= 'a' && c <= 'z')
			c = (unsigned char)(c - 'a' + 'A');
		if (c != (unsigned char)w[i])
			return false;
	}
	return true;
}
