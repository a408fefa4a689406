/*
 * tables.c: the tables a statement reads and writes (see tables.h).
 *
 * One pass over the query text with the word lexer (lexer.c, raw mode:
 * comments skipped, executable comments read as code). A
 * statement head parser reads what only the first words say (the write
 * target of INSERT, the object of a DDL statement, ...), then the body scan
 * follows parentheses with a stack of levels and finds every table
 * reference:
 *
 *   - FROM (outside a function's arguments: EXTRACT(x FROM d) is none),
 *     JOIN / STRAIGHT_JOIN, and ',' while a level is in its table list,
 *     expect a table factor: a name, db.name, a '(' that opens a derived
 *     table or a parenthesised join, or LATERAL. DUAL and JSON_TABLE(...)
 *     are no table; anything else there is "cannot determine".
 *   - WHERE, GROUP, HAVING, ORDER, LIMIT, UNION, SET, ... end the table list
 *     of their level; FOR ends it too unless an index hint or FOR
 *     SYSTEM_TIME follows (whose FROM is a time, not a table).
 *   - WITH [RECURSIVE] name [(cols)] AS (...) defines CTEs. After the scan,
 *     an unqualified reference with a CTE's name is dropped when that CTE
 *     is in scope there: inside the level that holds the WITH, after the
 *     CTE's body (anywhere after the WITH when RECURSIVE). In its own body
 *     a non-recursive CTE's name is the base table.
 *   - name '(' is a call: a name that is not a builtin (functions.c) or a
 *     qualified db.f( is a stored or user-defined function.
 *
 * In UPDATE and DELETE every reference outside a subquery is a write target
 * (aliases in DELETE's target list included: over-invalidating is safe).
 */
#include "sql/tables.h"

#include <string.h>

#include "sql/functions.h"
#include "sql/lexer.h"

#define MAX_DEPTH 64
#define MAX_CTES 16

enum level_kind { LV_STMT, LV_SUBQ, LV_LIST, LV_FUNC, LV_OTHER };

struct level {
	enum level_kind kind;
	bool from;       /* in a table list: ',' starts a new table factor */
	int cte;         /* this level is that CTE's body, else -1 */
	bool cte_next;   /* a CTE body just closed at this level: ',' goes on */
	bool cte_rec;    /* ... of a WITH RECURSIVE */
	size_t with_pos; /* ... whose WITH stands here */
};

struct cte {
	const char *name;
	size_t len;
	size_t with_pos, def_start, def_end, scope_end;
	bool recursive;
	int depth;
};

struct scan {
	struct sql_lex lx;
	struct sql_tok prev;
	struct sql_tables *out;
	struct level lv[MAX_DEPTH];
	int depth;
	bool expect;        /* a table factor comes next */
	bool targets;       /* UPDATE / DELETE: references outside subqueries are written */
	bool calls;         /* look for stored-function calls */
	bool skip_from;     /* the next FROM belongs to FOR SYSTEM_TIME */
	bool after_table;   /* the previous token ended a table reference */
	struct cte ctes[MAX_CTES];
	unsigned nctes;
	size_t ref_pos[SQL_TABLES_MAX];
};

static size_t pos_of(const struct scan *s, const struct sql_tok *t)
{
	return (size_t)(t->p - s->lx.s);
}

static void unknown(struct scan *s)
{
	s->out->flags |= SQL_TABLES_UNKNOWN;
}

static void next(struct scan *s, struct sql_tok *t)
{
	sql_lex_next(&s->lx, t);
}

static bool peek_word(const struct scan *s, enum sql_kw w)
{
	struct sql_tok t;

	sql_lex_peek(&s->lx, &t);
	return sql_kw_is(&t, w);
}

static bool peek_punct(const struct scan *s, char c)
{
	struct sql_tok t;

	sql_lex_peek(&s->lx, &t);
	return sql_is_punct(&t, c);
}

static bool in_subquery(const struct scan *s)
{
	for (int i = 1; i <= s->depth; i++)
		if (s->lv[i].kind == LV_SUBQ)
			return true;
	return false;
}

static void add_ref(struct scan *s, const struct sql_tok *schema, const struct sql_tok *name,
		    bool write)
{
	struct sql_tables *o = s->out;
	struct sql_table_ref *r;

	if (o->n == SQL_TABLES_MAX || name->len == 0 || name->len > UINT16_MAX ||
	    (schema && (schema->len == 0 || schema->len > UINT16_MAX))) {
		unknown(s);
		return;
	}
	r = &o->refs[o->n];
	memset(r, 0, sizeof(*r));
	r->name = name->p;
	r->name_len = (uint16_t)name->len;
	r->quoted = name->kind == T_QUOTED ? 2 : 0;
	if (schema) {
		r->schema = schema->p;
		r->schema_len = (uint16_t)schema->len;
		r->quoted |= schema->kind == T_QUOTED ? 1 : 0;
	}
	r->flags = write ? SQL_TREF_WRITE : 0;
	s->ref_pos[o->n++] = pos_of(s, name);
}

/* t is a name: read [schema '.'] name (and a trailing ".*" of DELETE's
 * targets). False when the text does not continue as a name. */
static bool read_name(struct scan *s, const struct sql_tok *t, struct sql_tok *schema,
		      struct sql_tok *name, bool *qualified)
{
	struct sql_tok dot, n2;

	*name = *t;
	*qualified = false;
	if (!sql_is_name(t))
		return false;
	sql_lex_peek(&s->lx, &dot);
	if (!sql_is_punct(&dot, '.'))
		return true;
	next(s, &dot);
	next(s, &n2);
	if (sql_is_punct(&n2, '*'))
		return true;             /* alias.* */
	if (!sql_is_name(&n2))
		return false;
	*schema = *t;
	*name = n2;
	*qualified = true;
	if (peek_punct(s, '.')) {        /* db.t.* */
		next(s, &dot);
		next(s, &n2);
		return sql_is_punct(&n2, '*');
	}
	return true;
}

/* Read a table name starting at t and record it. */
static bool name_ref(struct scan *s, const struct sql_tok *t, bool write)
{
	struct sql_tok schema, name;
	bool q;

	if (!read_name(s, t, &schema, &name, &q)) {
		unknown(s);
		return false;
	}
	add_ref(s, q ? &schema : NULL, &name, write);
	return true;
}

static void push(struct scan *s, enum level_kind k, bool from)
{
	if (s->depth + 1 >= MAX_DEPTH) {
		unknown(s);
		return;
	}
	s->depth++;
	memset(&s->lv[s->depth], 0, sizeof(s->lv[0]));
	s->lv[s->depth].kind = k;
	s->lv[s->depth].from = from;
	s->lv[s->depth].cte = -1;
}

static void pop(struct scan *s, size_t at)
{
	struct level *l;

	if (s->depth == 0) {
		unknown(s);  /* unbalanced ')' */
		return;
	}
	l = &s->lv[s->depth];
	for (unsigned i = 0; i < s->nctes; i++)
		if (s->ctes[i].depth == s->depth && s->ctes[i].scope_end == (size_t)-1)
			s->ctes[i].scope_end = at;
	if (l->cte >= 0) {
		s->ctes[l->cte].def_end = at;
		s->lv[s->depth - 1].cte_next = true;
		s->lv[s->depth - 1].cte_rec = s->ctes[l->cte].recursive;
		s->lv[s->depth - 1].with_pos = s->ctes[l->cte].with_pos;
	}
	s->depth--;
}

/* '(' opening a level whose first token decides its kind. */
static void open_group(struct scan *s, bool factor)
{
	struct sql_tok t;

	sql_lex_peek(&s->lx, &t);
	if (sql_kw_is(&t, KW_SELECT) || sql_kw_is(&t, KW_WITH) || sql_kw_is(&t, KW_VALUES)) {
		push(s, LV_SUBQ, false);
	} else if (factor) {
		push(s, LV_LIST, true);  /* a parenthesised join */
		s->expect = true;
	} else if (sql_is_punct(&t, '(')) {
		push(s, LV_OTHER, false); /* may hold ((SELECT ...)) */
	} else {
		push(s, LV_OTHER, false);
	}
}

/* One CTE header: name [(cols)] AS '(' ; the body is scanned as a level. */
static bool cte_header(struct scan *s, bool recursive, size_t with_pos)
{
	struct sql_tok t;
	struct cte *c;

	next(s, &t);
	if (!sql_is_name(&t) || s->nctes == MAX_CTES)
		return false;
	c = &s->ctes[s->nctes];
	c->name = t.p;
	c->len = t.len;
	c->recursive = recursive;
	c->with_pos = with_pos;
	c->depth = s->depth;
	c->scope_end = (size_t)-1;
	c->def_end = (size_t)-1;
	next(s, &t);
	if (sql_is_punct(&t, '(')) {
		if (!sql_skip_parens(&s->lx))
			return false;
		next(s, &t);
	}
	if (!sql_kw_is(&t, KW_AS))
		return false;
	next(s, &t);
	if (!sql_is_punct(&t, '('))
		return false;
	c->def_start = pos_of(s, &t);
	push(s, LV_SUBQ, false);
	s->lv[s->depth].cte = (int)s->nctes++;
	return true;
}

static void with_clause(struct scan *s, const struct sql_tok *with)
{
	bool rec = peek_word(s, KW_RECURSIVE);
	struct sql_tok t;

	if (rec)
		next(s, &t);
	if (!cte_header(s, rec, pos_of(s, with)))
		unknown(s);
}

/* A table factor is expected and t is its first token. */
static void table_factor(struct scan *s, const struct sql_tok *t, bool write)
{
	struct sql_tok schema, name;
	bool q;

	if (sql_is_punct(t, '(')) {
		open_group(s, true);
		return;
	}
	if (sql_kw_is(t, KW_LATERAL)) {
		s->expect = true;
		return;
	}
	if (!read_name(s, t, &schema, &name, &q)) {
		unknown(s);
		return;
	}
	if (peek_punct(s, '(')) {
		/* a table function: JSON_TABLE reads only its argument */
		if (!q && sql_name_is(&name, "JSON_TABLE")) {
			next(s, &schema);
			push(s, LV_FUNC, false);
		} else {
			unknown(s);
		}
		return;
	}
	if (!q && t->kind == T_WORD && sql_name_is(&name, "DUAL"))
		return;
	add_ref(s, q ? &schema : NULL, &name, write);
	s->after_table = true;
}

/* Words that end a level's table list. */
static bool ends_table_list(const struct sql_tok *t)
{
	static const enum sql_kw words[] = {
		KW_WHERE, KW_GROUP, KW_HAVING, KW_ORDER, KW_LIMIT, KW_WINDOW, KW_UNION, KW_EXCEPT,
		KW_INTERSECT, KW_INTO, KW_SET, KW_VALUES, KW_VALUE, KW_RETURNING, KW_PROCEDURE,
		KW_LOCK, KW_SELECT, KW_OFFSET, KW_FETCH,
	};

	if (t->kw == KW_NONE)
		return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (t->kw == words[i])
			return true;
	return false;
}

/* Keywords that may stand before '(' in statements without being calls. */
static bool paren_keyword(const struct sql_tok *t)
{
	static const enum sql_kw words[] = {
		KW_VALUE, KW_SET, KW_INTO, KW_TO, KW_LIMIT, KW_INTERVAL, KW_RETURNING, KW_FORCE,
		KW_IGNORE, KW_USE, KW_TABLE, KW_DO, KW_CALL, KW_ELSEIF, KW_WHILE, KW_UNTIL, KW_RETURN,
		KW_SYSTEM_TIME, KW_AT, KW_PORTION,
	};

	if (t->kw == KW_NONE)
		return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (t->kw == words[i])
			return true;
	return false;
}

/* '(' after prev (itself after before): is it a call's parenthesis? */
static bool is_call(const struct sql_tok *prev, const struct sql_tok *before)
{
	const struct sql_fn *fn;

	if (!sql_is_name(prev))
		return false;
	if (sql_kw_is(before, KW_AS) || sql_is_punct(before, ')'))
		return false;            /* a derived table's column list */
	if (prev->kind == T_WORD) {
		fn = sql_fn_lookup(prev->p, prev->len);
		if ((fn && fn->kind == SQL_FN_KEYWORD) || paren_keyword(prev))
			return false;
	}
	return true;
}

/* Record a stored routine called (schema may be NULL). */
static void add_routine(struct scan *s, const struct sql_tok *schema, const struct sql_tok *name)
{
	struct sql_tables *o = s->out;
	struct sql_table_ref *r;

	if (o->nroutines == SQL_ROUTINES_MAX || name->len > UINT16_MAX ||
	    (schema && schema->len > UINT16_MAX)) {
		o->flags |= SQL_TABLES_ROUTINES_MANY;
		return;
	}
	r = &o->routines[o->nroutines++];
	memset(r, 0, sizeof(*r));
	r->name = name->p;
	r->name_len = (uint16_t)name->len;
	r->quoted = name->kind == T_QUOTED ? 2 : 0;
	if (schema) {
		r->schema = schema->p;
		r->schema_len = (uint16_t)schema->len;
		r->quoted |= schema->kind == T_QUOTED ? 1 : 0;
	}
}

/* A call of prev: a stored or user-defined function unless a builtin. */
static void note_call(struct scan *s, const struct sql_tok *prev, const struct sql_tok *before)
{
	const struct sql_fn *fn;

	if (!s->calls)
		return;
	if (sql_is_punct(before, '.')) {
		s->out->flags |= SQL_TABLES_ROUTINE | SQL_TABLES_ROUTINES_MANY; /* db.f( */
		return;
	}
	fn = sql_fn_lookup(prev->p, prev->len);
	if (!fn || (prev->kind == T_QUOTED && fn->kind == SQL_FN_KEYWORD)) {
		s->out->flags |= SQL_TABLES_ROUTINE;
		add_routine(s, NULL, prev);
	}
}

/* NEXTVAL(s), SETVAL(s, n), NEXT VALUE FOR s write the sequence s (a
 * one-row table), even in a SELECT, a DO or a SET: read its name, next. */
static void sequence_write(struct scan *s)
{
	struct sql_tok t;

	next(s, &t);
	if (name_ref(s, &t, true) &&
	    (s->out->kind == SQL_STMT_READ || s->out->kind == SQL_STMT_OTHER))
		s->out->kind = SQL_STMT_WRITE;
}

static void on_word(struct scan *s, const struct sql_tok *t)
{
	struct level *l = &s->lv[s->depth];
	struct sql_tok n;

	if ((sql_kw_is(t, KW_NEXT) || sql_kw_is(t, KW_PREVIOUS)) && peek_word(s, KW_VALUE)) {
		bool writes = sql_kw_is(t, KW_NEXT);

		next(s, &n);
		if (!peek_word(s, KW_FOR))
			return;
		next(s, &n);
		if (writes) {
			sequence_write(s);
		} else {                   /* PREVIOUS VALUE FOR s: the session's last value */
			struct sql_tok schema, name;
			bool q;

			next(s, &n);
			if (!read_name(s, &n, &schema, &name, &q))
				unknown(s);
		}
	} else if (sql_kw_is(t, KW_FROM)) {
		if (s->skip_from) {
			s->skip_from = false;
		} else if (l->kind != LV_FUNC) {
			l->from = true;
			s->expect = true;
		}
	} else if (sql_kw_is(t, KW_JOIN) || sql_kw_is(t, KW_STRAIGHT_JOIN)) {
		if (l->from)
			s->expect = true;
	} else if (sql_kw_is(t, KW_USING)) {
		if (l->from && !peek_punct(s, '('))
			s->expect = true;    /* DELETE ... USING table_list */
	} else if (sql_kw_is(t, KW_FOR)) {
		sql_lex_peek(&s->lx, &n);
		if (sql_kw_is(&n, KW_JOIN) || sql_kw_is(&n, KW_ORDER) || sql_kw_is(&n, KW_GROUP)) {
			next(s, &n);         /* an index hint's scope */
		} else if (sql_kw_is(&n, KW_SYSTEM_TIME)) {
			s->skip_from = true;
		} else {
			l->from = false;
		}
	} else if (sql_kw_is(t, KW_WITH) && sql_cte_list_follows(&s->lx)) {
		with_clause(s, t);
	} else if (ends_table_list(t)) {
		l->from = false;
	}
}

static bool targets_here(const struct scan *s)
{
	return s->targets && !in_subquery(s);
}

static void on_paren(struct scan *s, const struct sql_tok *prev, const struct sql_tok *before,
		     bool was_table)
{
	if (!was_table && is_call(prev, before)) {
		note_call(s, prev, before);
		push(s, LV_FUNC, false);
		if (s->calls && !sql_is_punct(before, '.') &&
		    (sql_kw_is(prev, KW_NEXTVAL) || sql_kw_is(prev, KW_SETVAL)))
			sequence_write(s);
	} else {
		open_group(s, false);
	}
}

static void on_comma(struct scan *s)
{
	struct level *l = &s->lv[s->depth];

	if (l->cte_next) {
		l->cte_next = false;
		if (!cte_header(s, l->cte_rec, l->with_pos))
			unknown(s);
	} else if (l->from) {
		s->expect = true;
	}
}

/* The body scan, from the lexer's position to the end. */
static void body(struct scan *s)
{
	struct sql_tok t, before = { .kind = T_END, .p = s->lx.s };

	for (;;) {
		struct sql_tok prev = s->prev;
		bool was_table = s->after_table;

		next(s, &t);
		if (t.kind == T_END)
			break;
		s->after_table = false;
		if (s->expect) {
			s->expect = false;
			table_factor(s, &t, targets_here(s));
		} else if (sql_is_punct(&t, '(')) {
			on_paren(s, &prev, &before, was_table);
		} else if (sql_is_punct(&t, ')')) {
			pop(s, pos_of(s, &t));
		} else if (sql_is_punct(&t, ',')) {
			on_comma(s);
		} else if (sql_is_punct(&t, ';')) {
			struct sql_tok n;

			sql_lex_peek(&s->lx, &n);
			if (n.kind != T_END)
				unknown(s);  /* more than one statement */
		} else {
			s->lv[s->depth].cte_next = false;
			if (t.kind == T_WORD)
				on_word(s, &t);
		}
		before = prev;
		s->prev = t;
	}
	if (s->expect)
		unknown(s);          /* FROM at the very end */
}

/* ---- statement heads ----------------------------------------------------- */

static void skip_words(struct scan *s, struct sql_tok *t, const enum sql_kw *words)
{
	for (;;) {
		bool hit = false;

		for (size_t i = 0; words[i]; i++)
			if (sql_kw_is(t, words[i]))
				hit = true;
		if (!hit)
			return;
		next(s, t);
	}
}

/* IF [NOT] EXISTS */
static void skip_if_exists(struct scan *s, struct sql_tok *t)
{
	if (!sql_kw_is(t, KW_IF))
		return;
	next(s, t);
	if (sql_kw_is(t, KW_NOT))
		next(s, t);
	if (sql_kw_is(t, KW_EXISTS))
		next(s, t);
}

/* name [, name ...]: every one written. t is the first. */
static void name_list(struct scan *s, struct sql_tok *t)
{
	for (;;) {
		if (!name_ref(s, t, true))
			return;
		next(s, t);
		if (!sql_is_punct(t, ','))
			return;
		next(s, t);
	}
}

static void head_insert(struct scan *s)
{
	static const enum sql_kw mods[] = { KW_LOW_PRIORITY, KW_DELAYED, KW_HIGH_PRIORITY, KW_IGNORE,
					    KW_INTO, KW_NONE };
	struct sql_tok t;

	s->out->kind = SQL_STMT_WRITE;
	next(s, &t);
	while (sql_kw_is(&t, KW_LOW_PRIORITY) || sql_kw_is(&t, KW_DELAYED) || sql_kw_is(&t, KW_HIGH_PRIORITY)) {
		if (sql_kw_is(&t, KW_DELAYED))
			s->out->flags |= SQL_TABLES_DELAYED;
		next(s, &t);
	}
	skip_words(s, &t, mods);
	if (!name_ref(s, &t, true))
		return;
	s->prev = t;
	s->after_table = true;
	if (peek_word(s, KW_PARTITION)) {
		next(s, &t);
		next(s, &t);
		if (!sql_is_punct(&t, '(') || !sql_skip_parens(&s->lx))
			unknown(s);
	}
	if (peek_punct(s, '(')) {
		struct sql_lex c = s->lx;
		struct sql_tok a, b;

		sql_lex_next(&c, &a);
		sql_lex_next(&c, &b);
		if (!sql_kw_is(&b, KW_SELECT) && !sql_kw_is(&b, KW_WITH) && !sql_is_punct(&b, '(')) {
			next(s, &t);     /* the column list */
			if (!sql_skip_parens(&s->lx))
				unknown(s);
		}
	}
	body(s);
}

static void head_update_delete(struct scan *s, bool del)
{
	struct sql_tok t;

	s->out->kind = SQL_STMT_WRITE;
	s->targets = true;
	sql_lex_peek(&s->lx, &t);
	while (sql_kw_is(&t, KW_LOW_PRIORITY) || sql_kw_is(&t, KW_QUICK) || sql_kw_is(&t, KW_IGNORE)) {
		next(s, &t);
		sql_lex_peek(&s->lx, &t);
	}
	if (del && sql_kw_is(&t, KW_FROM))
		next(s, &t);
	s->lv[0].from = true;
	s->expect = true;
	body(s);
}

/* LOAD DATA / LOAD XML ... INTO TABLE name */
static void head_load(struct scan *s)
{
	struct sql_tok t;

	next(s, &t);
	if (!sql_kw_is(&t, KW_DATA) && !sql_kw_is(&t, KW_XML))
		return;                   /* LOAD INDEX INTO CACHE: no data */
	s->out->kind = SQL_STMT_WRITE;
	for (next(s, &t); t.kind != T_END; next(s, &t)) {
		if (sql_kw_is(&t, KW_INTO) && peek_word(s, KW_TABLE)) {
			next(s, &t);
			next(s, &t);
			name_ref(s, &t, true);
			return;
		}
	}
	unknown(s);
}

static void head_truncate(struct scan *s)
{
	struct sql_tok t;

	s->out->kind = SQL_STMT_WRITE;
	next(s, &t);
	if (sql_kw_is(&t, KW_TABLE))
		next(s, &t);
	name_ref(s, &t, true);
}

/* Skip DEFINER = user[@host], ALGORITHM = x, SQL SECURITY x, OR REPLACE ... */
static void skip_create_options(struct scan *s, struct sql_tok *t, bool *temporary, bool *replace)
{
	for (;;) {
		if (sql_kw_is(t, KW_OR) && peek_word(s, KW_REPLACE)) {
			next(s, t);
			*replace = true;
		} else if (sql_kw_is(t, KW_TEMPORARY)) {
			*temporary = true;
		} else if (sql_kw_is(t, KW_DEFINER) || sql_kw_is(t, KW_ALGORITHM)) {
			next(s, t);          /* = */
			next(s, t);          /* value */
			if (peek_punct(s, '(')) {  /* CURRENT_USER() */
				next(s, t);
				sql_skip_parens(&s->lx);
			}
			sql_lex_peek(&s->lx, t);
			if (t->kind == T_USERVAR)  /* user@host: '@' then the host */
				{ next(s, t); next(s, t); }
		} else if (sql_kw_is(t, KW_SQL) && peek_word(s, KW_SECURITY)) {
			next(s, t);
			next(s, t);
		} else if (!(sql_kw_is(t, KW_ONLINE) || sql_kw_is(t, KW_IGNORE) ||
			     sql_kw_is(t, KW_UNIQUE) || sql_kw_is(t, KW_FULLTEXT) ||
			     sql_kw_is(t, KW_SPATIAL) || sql_kw_is(t, KW_AGGREGATE))) {
			return;
		}
		next(s, t);
	}
}

static bool is_one_of(const struct sql_tok *t, const enum sql_kw *words)
{
	for (size_t i = 0; words[i]; i++)
		if (sql_kw_is(t, words[i]))
			return true;
	return false;
}

/* Objects whose DDL changes no table data and no catalog fact we keep. */
static const enum sql_kw harmless_objects[] = {
	KW_EVENT, KW_USER, KW_ROLE, KW_SERVER, KW_LOGFILE, KW_TABLESPACE, KW_INSTANCE, KW_NONE,
};

/* Stored routines: no table data, but the catalog keeps their bodies. */
static const enum sql_kw routine_objects[] = { KW_PROCEDURE, KW_FUNCTION, KW_PACKAGE, KW_NONE };

/* DDL of an object that is not a table: true when it was one of these. */
static bool other_object(struct scan *s, const struct sql_tok *t)
{
	if (is_one_of(t, routine_objects) ||
	    (sql_kw_is(t, KW_AGGREGATE) && peek_word(s, KW_FUNCTION))) {
		s->out->kind = SQL_STMT_OTHER;
		s->out->flags |= SQL_TABLES_CATALOG;
		return true;
	}
	if (is_one_of(t, harmless_objects)) {
		s->out->kind = SQL_STMT_OTHER;
		return true;
	}
	return false;
}

/* CREATE INDEX / DROP INDEX: ... name ON table */
static void index_on(struct scan *s, struct sql_tok *t)
{
	for (; t->kind != T_END; next(s, t)) {
		if (sql_kw_is(t, KW_ON)) {
			next(s, t);
			name_ref(s, t, true);
			return;
		}
	}
	unknown(s);
}

static void head_create(struct scan *s)
{
	struct sql_tok t;
	bool temporary = false, replace = false;

	s->out->kind = SQL_STMT_DDL;
	next(s, &t);
	skip_create_options(s, &t, &temporary, &replace);
	if (sql_kw_is(&t, KW_TABLE) || sql_kw_is(&t, KW_VIEW) || sql_kw_is(&t, KW_SEQUENCE)) {
		bool table = sql_kw_is(&t, KW_TABLE);

		/* a sequence is a table of one row (CREATE TEMPORARY SEQUENCE
		 * makes a temporary table) */
		s->out->flags |= SQL_TABLES_CATALOG | (sql_kw_is(&t, KW_VIEW) ? 0 : SQL_TABLES_CREATE) |
				 (temporary ? SQL_TABLES_TEMPORARY : 0);
		next(s, &t);
		skip_if_exists(s, &t);
		if (!name_ref(s, &t, true))
			return;
		s->prev = t;
		if (peek_punct(s, '(') && table) {
			struct sql_lex c = s->lx;
			struct sql_tok a, b;

			sql_lex_next(&c, &a);
			sql_lex_next(&c, &b);
			if (!sql_kw_is(&b, KW_SELECT) && !sql_kw_is(&b, KW_LIKE)) {
				next(s, &t);     /* the definitions */
				if (!sql_skip_parens(&s->lx))
					unknown(s);
			}
		}
		if (table)
			body(s);         /* LIKE t2, AS SELECT ...: reads */
		return;
	}
	if (sql_kw_is(&t, KW_INDEX)) {
		index_on(s, &t);
		return;
	}
	if (sql_kw_is(&t, KW_TRIGGER)) {
		s->out->flags |= SQL_TABLES_CATALOG;
		index_on(s, &t);         /* ... ON table: the body is not read */
		return;
	}
	if (sql_kw_is(&t, KW_DATABASE) || sql_kw_is(&t, KW_SCHEMA)) {
		s->out->flags |= SQL_TABLES_CATALOG | (replace ? SQL_TABLES_UNKNOWN : 0);
		return;
	}
	if (other_object(s, &t))
		return;
	unknown(s);
}

/* ALTER TABLE t ... RENAME [TO|AS] t2 ... EXCHANGE PARTITION p WITH TABLE t3 */
static void alter_table_rest(struct scan *s)
{
	struct sql_tok t;

	for (next(s, &t); t.kind != T_END; next(s, &t)) {
		if (sql_kw_is(&t, KW_RENAME)) {
			next(s, &t);
			if (sql_kw_is(&t, KW_COLUMN) || sql_kw_is(&t, KW_INDEX) ||
			    sql_kw_is(&t, KW_KEY) || sql_kw_is(&t, KW_CONSTRAINT))
				continue;
			if (sql_kw_is(&t, KW_TO) || sql_kw_is(&t, KW_AS))
				next(s, &t);
			name_ref(s, &t, true);
		} else if (sql_kw_is(&t, KW_WITH) && peek_word(s, KW_TABLE)) {
			next(s, &t);
			next(s, &t);
			name_ref(s, &t, true);
		}
	}
}

static void head_alter(struct scan *s)
{
	struct sql_tok t;
	bool temporary = false, replace = false;

	s->out->kind = SQL_STMT_DDL;
	next(s, &t);
	skip_create_options(s, &t, &temporary, &replace);
	if (sql_kw_is(&t, KW_TABLE) || sql_kw_is(&t, KW_VIEW) || sql_kw_is(&t, KW_SEQUENCE)) {
		bool table = sql_kw_is(&t, KW_TABLE);

		s->out->flags |= SQL_TABLES_CATALOG;
		next(s, &t);
		skip_if_exists(s, &t);
		if (!name_ref(s, &t, true))
			return;
		if (table)
			alter_table_rest(s);
		return;
	}
	if (sql_kw_is(&t, KW_DATABASE) || sql_kw_is(&t, KW_SCHEMA)) {
		s->out->kind = SQL_STMT_OTHER;
		return;
	}
	if (other_object(s, &t))
		return;
	unknown(s);
}

static void head_drop(struct scan *s)
{
	struct sql_tok t;

	s->out->kind = SQL_STMT_DDL;
	next(s, &t);
	if (sql_kw_is(&t, KW_TEMPORARY)) {
		s->out->flags |= SQL_TABLES_TEMPORARY;
		next(s, &t);
	}
	if (sql_kw_is(&t, KW_TABLE) || sql_kw_is(&t, KW_TABLES) || sql_kw_is(&t, KW_VIEW) ||
	    sql_kw_is(&t, KW_SEQUENCE)) {
		s->out->flags |= SQL_TABLES_CATALOG | (sql_kw_is(&t, KW_VIEW) ? 0 : SQL_TABLES_DROP);
		next(s, &t);
		skip_if_exists(s, &t);
		name_list(s, &t);
		return;
	}
	if (sql_kw_is(&t, KW_INDEX)) {
		index_on(s, &t);
		return;
	}
	if (sql_kw_is(&t, KW_TRIGGER)) {
		s->out->flags |= SQL_TABLES_CATALOG;
		s->out->kind = SQL_STMT_OTHER;
		return;
	}
	if (sql_kw_is(&t, KW_DATABASE) || sql_kw_is(&t, KW_SCHEMA)) {
		s->out->flags |= SQL_TABLES_CATALOG | SQL_TABLES_UNKNOWN; /* every table in it */
		return;
	}
	if (other_object(s, &t))
		return;
	unknown(s);
}

/* RENAME TABLE a TO b [, c TO d ...] */
static void head_rename(struct scan *s)
{
	struct sql_tok t;

	next(s, &t);
	if (!sql_kw_is(&t, KW_TABLE) && !sql_kw_is(&t, KW_TABLES)) {
		if (!sql_kw_is(&t, KW_USER))
			unknown(s);
		return;
	}
	s->out->kind = SQL_STMT_DDL;
	s->out->flags |= SQL_TABLES_CATALOG;
	next(s, &t);
	skip_if_exists(s, &t);
	for (;;) {
		if (!name_ref(s, &t, true))
			return;
		next(s, &t);
		if (sql_kw_is(&t, KW_WAIT)) {
			next(s, &t);
			next(s, &t);
		} else if (sql_kw_is(&t, KW_NOWAIT)) {
			next(s, &t);
		}
		if (!sql_kw_is(&t, KW_TO) && !sql_is_punct(&t, ','))
			return;
		next(s, &t);
	}
}

/* Statements that change no table data and whose text we need not read. */
static bool quiet_statement(const struct sql_tok *t)
{
	static const enum sql_kw words[] = {
		KW_SHOW, KW_USE, KW_START, KW_COMMIT, KW_ROLLBACK, KW_SAVEPOINT, KW_RELEASE, KW_LOCK,
		KW_UNLOCK, KW_FLUSH, KW_GRANT, KW_REVOKE, KW_KILL, KW_PREPARE, KW_DEALLOCATE, KW_XA,
		KW_OPTIMIZE, KW_REPAIR, KW_CHECK, KW_CHECKSUM, KW_HELP, KW_INSTALL, KW_UNINSTALL,
		KW_RESET, KW_PURGE, KW_CHANGE, KW_STOP, KW_SHUTDOWN, KW_BACKUP, KW_EXPLAIN, KW_DESCRIBE,
		KW_DESC, KW_HANDLER, KW_CACHE, KW_SIGNAL, KW_RESIGNAL, KW_GET, KW_VALUES, KW_TABLE, KW_NONE,
	};

	return is_one_of(t, words);
}

static void dispatch(struct scan *s, const struct sql_tok *t);

/* ANALYZE [FORMAT=JSON] statement runs the statement; ANALYZE TABLE does not. */
static void head_analyze(struct scan *s)
{
	struct sql_tok t;

	next(s, &t);
	if (sql_kw_is(&t, KW_FORMAT)) {
		next(s, &t);
		next(s, &t);
		next(s, &t);
	}
	if (sql_kw_is(&t, KW_TABLE) || sql_kw_is(&t, KW_NO_WRITE_TO_BINLOG) || sql_kw_is(&t, KW_LOCAL))
		return;
	dispatch(s, &t);
}

/* WITH [RECURSIVE] cte, ... then a SELECT (MariaDB has no WITH ... UPDATE;
 * should one come, it is "cannot determine"). */
static bool with_then_select(const struct scan *s)
{
	struct sql_lex c = s->lx;
	struct sql_tok t;

	return sql_skip_cte_list(&c, &t) && (sql_kw_is(&t, KW_SELECT) || sql_kw_is(&t, KW_VALUES));
}

/* SET STATEMENT var = value [, ...] FOR statement: the statement's tables
 * (its settings are the session's for that one statement); any other SET
 * reads what its expressions read. */
static void head_set(struct scan *s)
{
	struct sql_lex c = s->lx;
	struct sql_tok t;
	int depth = 0;

	if (!peek_word(s, KW_STATEMENT)) {
		body(s);                 /* reads in subqueries, stored-function calls */
		return;
	}
	for (sql_lex_next(&c, &t); t.kind != T_END; sql_lex_next(&c, &t)) {
		if (sql_is_punct(&t, '('))
			depth++;
		else if (sql_is_punct(&t, ')'))
			depth--;
		else if (depth == 0 && sql_kw_is(&t, KW_FOR))
			break;
	}
	if (t.kind == T_END) {
		unknown(s);
		return;
	}
	s->lx = c;
	next(s, &t);
	dispatch(s, &t);
}

static void dispatch(struct scan *s, const struct sql_tok *t)
{
	if (sql_kw_is(t, KW_WITH) && !with_then_select(s)) {
		unknown(s);
		return;
	}
	if (sql_kw_is(t, KW_SELECT) || sql_is_punct(t, '(') || sql_kw_is(t, KW_WITH)) {
		s->out->kind = SQL_STMT_READ;
		s->lx.i = pos_of(s, t);  /* the body scan reads it again */
		s->prev.kind = T_END;
		body(s);
	} else if (sql_kw_is(t, KW_INSERT) || sql_kw_is(t, KW_REPLACE)) {
		head_insert(s);
	} else if (sql_kw_is(t, KW_UPDATE) || sql_kw_is(t, KW_DELETE)) {
		head_update_delete(s, sql_kw_is(t, KW_DELETE));
	} else if (sql_kw_is(t, KW_LOAD)) {
		head_load(s);
	} else if (sql_kw_is(t, KW_TRUNCATE)) {
		head_truncate(s);
	} else if (sql_kw_is(t, KW_CREATE)) {
		s->calls = false;
		head_create(s);
	} else if (sql_kw_is(t, KW_ALTER)) {
		s->calls = false;
		head_alter(s);
	} else if (sql_kw_is(t, KW_DROP)) {
		head_drop(s);
	} else if (sql_kw_is(t, KW_RENAME)) {
		head_rename(s);
	} else if (sql_kw_is(t, KW_CALL)) {
		struct sql_tok n, schema, name;
		bool q;

		s->out->kind = SQL_STMT_OPAQUE;
		s->out->flags |= SQL_TABLES_CALL;
		next(s, &n);
		if (read_name(s, &n, &schema, &name, &q))
			add_routine(s, q ? &schema : NULL, &name);
		else
			s->out->flags |= SQL_TABLES_ROUTINES_MANY;
	} else if (sql_kw_is(t, KW_EXECUTE) || sql_kw_is(t, KW_BINLOG)) {
		s->out->kind = SQL_STMT_OPAQUE;
	} else if (sql_kw_is(t, KW_BEGIN)) {
		/* BEGIN [WORK] starts a transaction; BEGIN NOT ATOMIC runs a block */
		if (peek_word(s, KW_NOT))
			s->out->kind = SQL_STMT_OPAQUE;
	} else if (sql_kw_is(t, KW_ANALYZE)) {
		head_analyze(s);
	} else if (sql_kw_is(t, KW_SET)) {
		head_set(s);
	} else if (sql_kw_is(t, KW_DO)) {
		body(s);                 /* reads in subqueries, stored-function calls */
	} else if (!quiet_statement(t)) {
		unknown(s);
	}
}

/* Drop the references that name a CTE in scope. */
static void drop_ctes(struct scan *s, size_t end)
{
	struct sql_tables *o = s->out;
	unsigned w = 0;

	for (unsigned i = 0; i < s->nctes; i++)
		if (s->ctes[i].scope_end == (size_t)-1)
			s->ctes[i].scope_end = end;
	for (unsigned i = 0; i < o->n; i++) {
		const struct sql_table_ref *r = &o->refs[i];
		size_t p = s->ref_pos[i];
		bool cte = false;

		for (unsigned k = 0; k < s->nctes && !r->schema; k++) {
			const struct cte *c = &s->ctes[k];
			size_t from = c->recursive ? c->with_pos : c->def_end;

			if (c->len == r->name_len && memcmp(c->name, r->name, c->len) == 0 &&
			    p > from && p < c->scope_end)
				cte = true;
		}
		if (!cte) {
			s->ref_pos[w] = p;
			o->refs[w++] = *r;
		}
	}
	o->n = w;
}

/* The facts of the text the table reader left unread (it stops at an
 * executable comment some servers skip). */
static void facts_rest(const struct sql_lex *lx)
{
	struct sql_lex rest = *lx;
	struct sql_tok t;

	rest.doubt = false;
	do
		sql_lex_next(&rest, &t);
	while (t.kind != T_END);
}

void sql_tables(const char *text, size_t len, struct sql_tables *out)
{
	sql_tables_facts(text, len, out, NULL);
}

void sql_tables_facts(const char *text, size_t len, struct sql_tables *out, struct stmt_facts *facts)
{
	struct scan s;
	struct sql_tok t;

	memset(out, 0, sizeof(*out));
	if (facts)
		stmt_facts_begin(facts);
	if (!text) {
		out->flags = SQL_TABLES_UNKNOWN;
		return;
	}
	memset(&s, 0, sizeof(s));
	s.lx = (struct sql_lex){ .s = text, .n = len, .raw = true,
				 .on_token = facts ? stmt_facts_note : NULL, .on_token_arg = facts };
	s.out = out;
	s.calls = true;
	s.lv[0].kind = LV_STMT;
	s.lv[0].cte = -1;
	s.prev.kind = T_END;
	next(&s, &t);
	if (t.kind == T_END)
		return;
	s.prev = t;
	dispatch(&s, &t);
	if (s.depth != 0)
		unknown(&s);
	while (!s.lx.doubt && s.lx.i < len)  /* a head parser may stop early */
		next(&s, &t);
	if (facts && s.lx.i < len)
		facts_rest(&s.lx);
	/* some servers skip an executable comment: which tables the text
	 * names depends on the server */
	if (s.lx.doubt)
		out->flags |= SQL_TABLES_UNKNOWN | (out->flags & SQL_TABLES_UNKNOWN ? 0 : SQL_TABLES_VERSIONED);
	drop_ctes(&s, len);
}

size_t sql_table_name_copy(const char *p, size_t len, bool quoted, char *dst, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];

		if (quoted && c == '`' && i + 1 < len && p[i + 1] == '`')
			i++;
		if (o + 1 >= cap)
			return 0;
		dst[o++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	if (cap)
		dst[o] = 0;
	return o;
}

const char *sql_stmt_kind_name(enum sql_stmt_kind k)
{
	switch (k) {
	case SQL_STMT_READ: return "read";
	case SQL_STMT_WRITE: return "write";
	case SQL_STMT_DDL: return "ddl";
	case SQL_STMT_OPAQUE: return "opaque";
	default: return "other";
	}
}
