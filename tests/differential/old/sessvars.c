/*
 * old/sessvars.c: the session-state reader before issue 39, copied from git at 5a9fd58 for the
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

/* ==== src/session/sessvars.c, from line 19 at 5a9fd58, up to its state records ==== */

/* ---- scanner ----------------------------------------------------------- */

enum tk { TK_END, TK_WORD, TK_USERVAR, TK_SYSVAR, TK_STRING, TK_NUMBER, TK_PUNCT };

struct tok {
	enum tk t;
	const char *p;     /* the token's text in the query */
	size_t n;
	char c;            /* TK_PUNCT: the character (':' for ":=") */
};

struct scan {
	const char *q;
	size_t n, pos;
	bool in_exec;      /* inside a executable comment */
};

static bool ident_char(unsigned char ch)
{
	return isalnum(ch) || ch == '_' || ch == '$' || ch >= 0x80;
}

/* Skip spaces and comments. Executable comments' content is code. */
static void skip_space(struct scan *s)
{
	while (s->pos < s->n) {
		const char *q = s->q + s->pos;
		size_t left = s->n - s->pos;

		if (isspace((unsigned char)q[0])) {
			s->pos++;
		} else if (left >= 2 && q[0] == '/' && q[1] == '*' && left >= 3 && q[2] == '!') {
			s->pos += 3;
			while (s->pos < s->n && isdigit((unsigned char)s->q[s->pos]))
				s->pos++;
			s->in_exec = true;
		} else if (left >= 3 && q[0] == '/' && q[1] == '*' && q[2] == 'M' && left >= 4 && q[3] == '!') {
			s->pos += 4;
			while (s->pos < s->n && isdigit((unsigned char)s->q[s->pos]))
				s->pos++;
			s->in_exec = true;
		} else if (left >= 2 && q[0] == '/' && q[1] == '*') {
			const char *e = memmem(q + 2, left - 2, "*/", 2);

			s->pos = e ? (size_t)(e - s->q) + 2 : s->n;
		} else if (s->in_exec && left >= 2 && q[0] == '*' && q[1] == '/') {
			s->pos += 2;
			s->in_exec = false;
		} else if (q[0] == '#' || (left >= 3 && q[0] == '-' && q[1] == '-' &&
					   (isspace((unsigned char)q[2]) || iscntrl((unsigned char)q[2])))) {
			const char *e = memchr(q, '\n', left);

			s->pos = e ? (size_t)(e - s->q) + 1 : s->n;
		} else {
			break;
		}
	}
}

/* A quoted run starting at pos (the quote char included). */
static size_t quoted_len(const char *q, size_t n, size_t pos)
{
	char quote = q[pos];
	size_t i = pos + 1;

	while (i < n) {
		if (q[i] == '\\' && quote != '`' && i + 1 < n) {
			i += 2;
			continue;
		}
		if (q[i] == quote) {
			if (i + 1 < n && q[i + 1] == quote) {
				i += 2;
				continue;
			}
			return i + 1 - pos;
		}
		i++;
	}
	return n - pos;
}

static void next(struct scan *s, struct tok *t)
{
	const char *q;
	size_t i;

	skip_space(s);
	t->p = s->q + s->pos;
	t->n = 0;
	t->c = 0;
	if (s->pos >= s->n) {
		t->t = TK_END;
		return;
	}
	q = s->q;
	i = s->pos;
	if (q[i] == '\'' || q[i] == '"') {
		t->t = TK_STRING;
		t->n = quoted_len(q, s->n, i);
	} else if (q[i] == '`') {
		t->t = TK_WORD;
		t->n = quoted_len(q, s->n, i);
	} else if (q[i] == '@') {
		size_t j = i + 1;

		t->t = TK_USERVAR;
		if (j < s->n && q[j] == '@') {
			t->t = TK_SYSVAR;
			j++;
		}
		if (j < s->n && (q[j] == '\'' || q[j] == '"' || q[j] == '`'))
			j += quoted_len(q, s->n, j);
		else
			while (j < s->n && (ident_char((unsigned char)q[j]) || q[j] == '.'))
				j++;
		t->n = j - i;
	} else if (isdigit((unsigned char)q[i]) || (q[i] == '.' && i + 1 < s->n && isdigit((unsigned char)q[i + 1]))) {
		size_t j = i;

		t->t = TK_NUMBER;
		while (j < s->n && (isalnum((unsigned char)q[j]) || q[j] == '.'))
			j++;
		t->n = j - i;
	} else if (ident_char((unsigned char)q[i])) {
		size_t j = i;

		t->t = TK_WORD;
		while (j < s->n && ident_char((unsigned char)q[j]))
			j++;
		t->n = j - i;
	} else {
		t->t = TK_PUNCT;
		t->c = q[i];
		t->n = 1;
		if (q[i] == ':' && i + 1 < s->n && q[i + 1] == '=')
			t->n = 2;
	}
	s->pos += t->n;
}

static bool word_is(const struct tok *t, const char *w)
{
	return t->t == TK_WORD && t->n == strlen(w) && strncasecmp(t->p, w, t->n) == 0;
}

static bool punct_is(const struct tok *t, char c, size_t n)
{
	return t->t == TK_PUNCT && t->c == c && t->n == n;
}

/* An identifier's text: backquotes removed. false if it does not fit. */
static bool ident_text(const struct tok *t, char *out, size_t cap)
{
	const char *p = t->p;
	size_t n = t->n, o = 0;

	if (n >= 2 && p[0] == '`') {
		for (size_t i = 1; i + 1 < n; i++) {
			if (p[i] == '`' && p[i + 1] == '`')
				i++;
			if (o + 1 >= cap)
				return false;
			out[o++] = p[i];
		}
	} else {
		if (n >= cap)
			return false;
		memcpy(out, p, n);
		o = n;
	}
	out[o] = 0;
	return o > 0;
}

/* ---- SET --------------------------------------------------------------- */

struct set_ctx {
	struct scan *s;
	struct sv_delta *d;
	bool mariadb;
	bool global_set;      /* a GLOBAL (or PERSIST) variable is assigned */
};

static bool add_var(struct sv_delta *d, const char *name, size_t nlen, const char *val, size_t vlen)
{
	if (d->n >= sizeof(d->vars) / sizeof(d->vars[0]) || nlen >= SV_NAME_MAX || vlen >= SV_VALUE_MAX)
		return false;
	for (size_t i = 0; i < nlen; i++) {
		if (!isalnum((unsigned char)name[i]) && name[i] != '_')
			return false;
		d->vars[d->n].name[i] = (char)tolower((unsigned char)name[i]);
	}
	d->vars[d->n].name[nlen] = 0;
	memcpy(d->vars[d->n].value, val, vlen);
	d->vars[d->n].value[vlen] = 0;
	d->n++;
	return true;
}

/* One literal value: a string, a (signed) number, or a bare word. */
static bool read_value(struct scan *s, struct tok *t, const char **v, size_t *vn)
{
	next(s, t);
	*v = t->p;
	if (punct_is(t, '-', 1) || punct_is(t, '+', 1)) {
		next(s, t);
		if (t->t != TK_NUMBER)
			return false;
		*vn = (size_t)(t->p + t->n - *v);
		return true;
	}
	if (t->t != TK_STRING && t->t != TK_NUMBER && !(t->t == TK_WORD && t->p[0] != '`'))
		return false;
	*vn = t->n;
	return true;
}

/* SET [SESSION] TRANSACTION characteristic[, ...] */
static bool read_txn(struct set_ctx *x, struct tok *t, bool global)
{
	const char *iso = x->mariadb ? "tx_isolation" : "transaction_isolation";
	const char *ro = x->mariadb ? "tx_read_only" : "transaction_read_only";

	for (;;) {
		const char *v = NULL;

		next(x->s, t);
		if (word_is(t, "ISOLATION")) {
			next(x->s, t);
			if (!word_is(t, "LEVEL"))
				return false;
			next(x->s, t);
			if (word_is(t, "SERIALIZABLE")) {
				v = "'SERIALIZABLE'";
			} else if (word_is(t, "REPEATABLE")) {
				v = "'REPEATABLE-READ'";
				next(x->s, t);
			} else if (word_is(t, "READ")) {
				next(x->s, t);
				v = word_is(t, "COMMITTED") ? "'READ-COMMITTED'" : "'READ-UNCOMMITTED'";
			} else {
				return false;
			}
			if (!global && !add_var(x->d, iso, strlen(iso), v, strlen(v)))
				return false;
		} else if (word_is(t, "READ")) {
			next(x->s, t);
			if (!word_is(t, "ONLY") && !word_is(t, "WRITE"))
				return false;
			v = word_is(t, "ONLY") ? "1" : "0";
			if (!global && !add_var(x->d, ro, strlen(ro), v, 1))
				return false;
		} else {
			return false;
		}
		next(x->s, t);
		if (!punct_is(t, ',', 1))
			return true;
	}
}

/* SET NAMES cs [COLLATE c] | SET CHARACTER SET cs: the text kept. */
static bool read_names(struct set_ctx *x, struct tok *t, const char *what)
{
	const char *start;
	int n;

	next(x->s, t);
	start = t->p;
	if (t->t != TK_WORD && t->t != TK_STRING)
		return false;
	next(x->s, t);
	if (word_is(t, "COLLATE")) {
		next(x->s, t);
		if (t->t != TK_WORD && t->t != TK_STRING)
			return false;
		next(x->s, t);
	}
	n = snprintf(x->d->names, sizeof(x->d->names), "%s %.*s", what,
		     (int)(t->p - start), start);
	if (n < 0 || (size_t)n >= sizeof(x->d->names))
		return false;
	while (n > 0 && isspace((unsigned char)x->d->names[n - 1]))
		x->d->names[--n] = 0;
	x->d->set_names = true;
	return true;
}

/* A variable's name and scope from a word or @@ token. */
static bool var_name(struct set_ctx *x, struct tok *t, bool *global, char *name, size_t cap)
{
	const char *p = t->p;
	size_t n = t->n;

	if (t->t == TK_SYSVAR) {
		p += 2;
		n -= 2;
		if (n > 7 && strncasecmp(p, "global.", 7) == 0) {
			*global = true;
			p += 7;
			n -= 7;
		} else if (n > 8 && strncasecmp(p, "session.", 8) == 0) {
			p += 8;
			n -= 8;
		} else if (n > 6 && strncasecmp(p, "local.", 6) == 0) {
			p += 6;
			n -= 6;
		}
		if (n == 0 || n >= cap || memchr(p, '.', n) || p[0] == '`')
			return false;
		memcpy(name, p, n);
		name[n] = 0;
		return true;
	}
	(void)x;
	if (t->t != TK_WORD || t->p[0] == '`' || n >= cap)
		return false;
	memcpy(name, p, n);
	name[n] = 0;
	return true;
}

static const char *const refused_names[] = {
	"password", "role", "default", "names", "character", "charset", "statement",
	/* no DEFAULT to go back to: a connection that had them set could not
	 * be brought to another session's state */
	"rand_seed1", "rand_seed2", "last_insert_id", "identity", NULL,
};

/* One assignment of a SET list. 1 more follow, 0 end, -1 pin. */
static int read_assignment(struct set_ctx *x, struct tok *t)
{
	bool global = false, session = false;
	char name[SV_NAME_MAX];
	const char *v;
	size_t vn;

	next(x->s, t);
	if (word_is(t, "GLOBAL") || word_is(t, "PERSIST") || word_is(t, "PERSIST_ONLY")) {
		global = true;
		x->global_set = true;
		next(x->s, t);
	} else if (word_is(t, "SESSION") || word_is(t, "LOCAL")) {
		session = true;
		next(x->s, t);
	}
	if (word_is(t, "TRANSACTION")) {
		/* without a scope: the next transaction only, not recorded */
		if (!global && !session)
			return -1;
		return read_txn(x, t, global) && (t->t == TK_END || punct_is(t, ';', 1)) ? 0 : -1;
	}
	if (word_is(t, "NAMES") || word_is(t, "CHARSET") || word_is(t, "CHARACTER")) {
		if (word_is(t, "CHARACTER")) {
			next(x->s, t);
			if (!word_is(t, "SET"))
				return -1;
		}
		if (!read_names(x, t, word_is(t, "NAMES") ? "NAMES" : "CHARACTER SET"))
			return -1;
	} else {
		if (!var_name(x, t, &global, name, sizeof(name)))
			return -1;
		x->global_set |= global;
		for (int i = 0; refused_names[i]; i++)
			if (strcasecmp(name, refused_names[i]) == 0)
				return -1;
		next(x->s, t);
		if (!punct_is(t, '=', 1) && !punct_is(t, ':', 2))
			return -1;
		if (!read_value(x->s, t, &v, &vn))
			return -1;
		if (t->t == TK_WORD && t->n == 7 && strncasecmp(t->p, "DEFAULT", 7) == 0)
			vn = 0;
		if (!global && !add_var(x->d, name, strlen(name), v, vn))
			return -1;
		next(x->s, t);
	}
	if (punct_is(t, ',', 1))
		return 1;
	return t->t == TK_END || punct_is(t, ';', 1) ? 0 : -1;
}

static unsigned classify_set(struct scan *s, struct sv_delta *d, bool mariadb)
{
	struct set_ctx x = { .s = s, .d = d, .mariadb = mariadb };
	struct scan peek = *s;
	struct tok t;
	int r;

	next(&peek, &t);
	if (word_is(&t, "STATEMENT"))
		return 0; /* SET STATEMENT ... FOR: for that statement only */
	do {
		r = read_assignment(&x, &t);
	} while (r > 0);
	if (r < 0)
		return SV_PIN_FOREVER | (x.global_set ? SV_GLOBAL : 0);
	return (d->n || d->set_names ? SV_CHANGES : 0) | (x.global_set ? SV_GLOBAL : 0);
}

/* ---- classification ---------------------------------------------------- */

static unsigned classify_use(struct scan *s, struct sv_delta *d)
{
	struct tok t;

	next(s, &t);
	if (t.t != TK_WORD || !ident_text(&t, d->db, sizeof(d->db)))
		return SV_PIN_FOREVER;
	next(s, &t);
	if (t.t != TK_END && !punct_is(&t, ';', 1))
		return SV_PIN_FOREVER;
	d->set_db = true;
	return SV_CHANGES;
}

/* DROP {DATABASE | SCHEMA} [IF EXISTS] name: the connection it runs on,
 * and the session, have no current schema after it when it was theirs
 * (mariadb-slap drops its schema on a pooled connection that the node then
 * lent, as still in it, to a session that named it: "No database
 * selected", main.mysqlslap). */
static unsigned classify_drop(struct scan *s, struct sv_delta *d)
{
	struct tok t;

	next(s, &t);
	if (!word_is(&t, "DATABASE") && !word_is(&t, "SCHEMA"))
		return 0;
	next(s, &t);
	if (word_is(&t, "IF")) {
		next(s, &t);
		if (!word_is(&t, "EXISTS"))
			return 0;
		next(s, &t);
	}
	if (t.t != TK_WORD || !ident_text(&t, d->db, sizeof(d->db)))
		return 0;
	next(s, &t);
	if (t.t != TK_END && !punct_is(&t, ';', 1))
		return 0;
	d->drop_db = true;
	return SV_CHANGES;
}

/* The flags a statement's marks give, wherever they stand (anything may
 * hide anywhere: a subquery, a function argument, a second statement). */
static unsigned flags_of_marks(unsigned seen)
{
	unsigned f = 0;

	if (seen & (SF_MULTI | SF_ASSIGN | SF_INTO_VAR | SF_GET_LOCK | SF_TEMPORARY))
		f |= SV_PIN_FOREVER;  /* several statements, @v := ..., INTO @v, a lock, a temporary table */
	if (seen & SF_PROFILING)      /* the connection's statement history */
		f |= SV_PIN_FOREVER | SV_PROFILING;
	if (seen & SF_CALC_FOUND)
		f |= SV_STICKY_NEXT;
	if (seen & SF_CONNECTION_ID)
		f |= SV_TELLS_ID;
	if (seen & SF_SELECT)
		f |= SV_SELECTS;
	return f;
}

static bool flush_locks(struct scan *s)
{
	struct tok t;

	for (next(s, &t); t.t != TK_END; next(s, &t))
		if (word_is(&t, "LOCK") || word_is(&t, "EXPORT"))
			return true;
	return false;
}

/* COMMIT [WORK] [AND [NO] CHAIN] [[NO] RELEASE], and ROLLBACK's same form
 * (ROLLBACK ... TO SAVEPOINT ends nothing): whether the server closes the
 * connection after it (sys_vars.completion_type_func). */
static unsigned classify_txn_end(struct scan *s)
{
	struct tok t, prev = { .t = TK_END };

	for (next(s, &t); t.t != TK_END && !punct_is(&t, ';', 1); prev = t, next(s, &t)) {
		if (word_is(&t, "TO"))
			return 0;
		if (word_is(&t, "RELEASE"))
			return word_is(&prev, "NO") ? 0 : SV_RELEASE;
	}
	return SV_RELEASE_IF;
}

bool sv_completion_releases(const struct sess_state *s)
{
	for (uint16_t i = 0; i < s->n_vars; i++) {
		const char *v = s->vars[i].value;
		size_t n;

		if (strcmp(s->vars[i].name, "completion_type") != 0)
			continue;
		if (*v == '\'' || *v == '"')
			v++;
		n = strcspn(v, "'\"");
		return (n == 7 && strncasecmp(v, "RELEASE", 7) == 0) || (n == 1 && v[0] == '2');
	}
	return false;
}

/* The statements whose words after the first one say what they do. */
static bool read_further(enum sql_kw first)
{
	return first == KW_SET || first == KW_USE || first == KW_DROP || first == KW_COMMIT ||
	       first == KW_ROLLBACK || first == KW_FLUSH;
}

unsigned sv_classify(const char *q, size_t n, const struct stmt_facts *facts, struct sv_delta *d,
		     bool mariadb)
{
	struct scan s = { .q = q, .n = n };
	struct stmt_facts own;
	struct tok t;
	unsigned f;

	/* the flags and counts only: the texts are written before they are read
	 * (a delta is 5 KB, and this runs for every statement) */
	d->set_db = d->drop_db = d->set_names = false;
	d->db[0] = d->names[0] = 0;
	d->n = 0;
	if (!facts) {
		stmt_facts_read(q, n, &own);
		facts = &own;
	}
	f = flags_of_marks(facts->seen);
	if (read_further(facts->first)) {
		next(&s, &t);          /* past the leading '(' and the first word */
		while (punct_is(&t, '(', 1))
			next(&s, &t);
	}
	switch (facts->first) {
	case KW_SET:
		return f | (f & SV_PIN_FOREVER ? 0 : classify_set(&s, d, mariadb));
	case KW_USE:
		return f | classify_use(&s, d);
	case KW_DROP:
		return f | (f & SV_PIN_FOREVER ? 0 : classify_drop(&s, d));
	case KW_COMMIT:
	case KW_ROLLBACK:
		return f | classify_txn_end(&s);
	case KW_LOCK:
		return f | SV_PIN_LOCK;
	case KW_UNLOCK:
		return f | SV_UNLOCK;
	case KW_FLUSH:
		return f | (flush_locks(&s) ? SV_PIN_LOCK : 0);
	/* BACKUP STAGE / BACKUP LOCK: a backup lock the connection holds until
	 * BACKUP STAGE END, BACKUP UNLOCK or its end (conformance:
	 * main.backup_log). The session keeps its connection, and the pool
	 * never lends it again. */
	case KW_PREPARE: case KW_EXECUTE: case KW_DEALLOCATE: case KW_CALL:
	case KW_XA: case KW_HANDLER: case KW_BACKUP:
		return f | SV_PIN_FOREVER;
	default:
		return f;
	}
}
