/*
 * where.c: the WHERE constraints of a SELECT, per table (see where.h).
 *
 * The structure pass reads the statement once with the word lexer (raw
 * mode: comments skipped, executable comments read as code) and finds
 * every query block: each SELECT, at the top, in a UNION, a CTE body, a
 * derived table or a subquery anywhere. A block has its sources (FROM:
 * tables with their aliases, derived tables, the joins and their kinds)
 * and the text of its WHERE and ON conditions. When a block ends, each of
 * its tables gets the constraints of the conditions that hold for every
 * row of it that can change the block's result, read again from their
 * text by the expression reader (where_expr.c). At the end the references
 * of one table are OR-ed (where_out.c). The result read back and as text
 * is at the end of this file.
 *
 * A block's own conditions only: an outer query's conditions never reach a
 * subquery's or a derived table's tables (a derived table with LIMIT, or
 * an aggregate, reads rows the outer WHERE rejects), and a subquery's never
 * reach the outer tables. Which conditions hold for a source's rows (the
 * joins are read bottom-up):
 *   - an inner join's ON holds for both sides; the WHERE holds for every
 *     source that no outer join can NULL-extend;
 *   - LEFT JOIN: its ON holds for the right side's rows (a right row that
 *     fails it joins nothing, before or after a change), not for the left
 *     side's (a left row that fails it is still there, with NULLs). Nothing
 *     above that join holds for the right side, which may be NULL-extended:
 *     an anti-join (WHERE b.id IS NULL) keeps the left rows that no right
 *     row joins, so a right row that fails the WHERE matters. Unless the
 *     WHERE rejects the right side's NULLs (it implies `b.col = literal`,
 *     which NULL fails): then the join is an inner one for it. RIGHT JOIN
 *     is the mirror.
 *   - the WHERE's literal conjuncts on sources never NULL-extended hold for
 *     a right side's rows too, as anchors of equalities only (a right row
 *     matters only through a left row the WHERE keeps): a LEFT JOIN b ON
 *     b.aid = a.id WHERE a.id = 5 gives b.aid = 5.
 */
#include "sql/where.h"
#include "sql/where_int.h"

#include <stdio.h>
#include <string.h>

#define NEST_MAX 16          /* query expressions inside each other */
#define GROUP_MAX 16         /* parenthesised joins inside each other */
#define DEPTH_MAX 64         /* parentheses inside each other in a region */

#define STOP_CLAUSE 0x1      /* a region ends at a clause's word */
#define STOP_JOIN 0x2        /* ... and at a join, ',' ON or USING */

/* ---- tokens ---------------------------------------------------------- */

static void next(struct wscan *w, struct sql_tok *t)
{
	sql_lex_next(&w->lx, t);
}

static void peek(struct wscan *w, struct sql_tok *t)
{
	sql_lex_peek(&w->lx, t);
}

static bool expect(struct wscan *w, char c)
{
	struct sql_tok t;

	next(w, &t);
	return sql_is_punct(&t, c) || where_fail(w, "not understood");
}

/* A name token short enough to be one (MySQL's names have 64 characters). */
static bool name_tok(struct wscan *w, const struct sql_tok *t)
{
	if (!sql_is_name(t))
		return where_fail(w, "a name expected");
	return t->len <= 256 || where_fail(w, "a name too long");
}

/* The lexer's hook: the position of each placeholder, in text order (a
 * token read again, by a peek and then the read, is counted once). */
static void note_token(void *arg, const struct sql_lex *lx, const struct sql_tok *t)
{
	struct wscan *w = arg;
	uint32_t pos = (uint32_t)(t->p - lx->s);

	if (!sql_is_punct(t, '?'))
		return;              /* only placeholders are noted */
	if (w->nparams && pos <= w->params[w->nparams - 1])
		return;              /* seen already */
	if (w->nparams == WHERE_PARAMS_MAX) {
		w->params_over = true;
		return;      /* no room: a later placeholder gives no constraint */
	}
	w->params[w->nparams++] = pos;
}

/* ---- regions: text read past, each subquery in it analysed ------------ */

static void query_expr(struct wscan *w, bool nested);

static bool clause_word(enum sql_kw kw)
{
	switch (kw) {
	case KW_FROM: case KW_WHERE: case KW_GROUP: case KW_HAVING: case KW_WINDOW:
	case KW_ORDER: case KW_LIMIT: case KW_INTO: case KW_FOR: case KW_LOCK:
	case KW_PROCEDURE: case KW_UNION: case KW_EXCEPT: case KW_INTERSECT:
		return true;
	default:
		return false;
	}
}

/* t, just peeked, starts a join (LEFT and RIGHT are functions before '('). */
static bool join_start(const struct wscan *w, const struct sql_tok *t)
{
	struct sql_lex c = w->lx;
	struct sql_tok n;

	switch (t->kw) {
	case KW_JOIN: case KW_INNER: case KW_CROSS: case KW_STRAIGHT_JOIN: case KW_NATURAL:
		return true;
	case KW_LEFT: case KW_RIGHT:
		c.on_token = NULL;
		sql_lex_next(&c, &n);
		sql_lex_next(&c, &n);
		return !sql_is_punct(&n, '(');
	default:
		return false;
	}
}

static bool is_stop(const struct wscan *w, const struct sql_tok *t, unsigned stops)
{
	if (t->kind == T_END || sql_is_punct(t, ')') || sql_is_punct(t, ';'))
		return true;         /* the end of any region */
	if (!(stops & STOP_JOIN))
		return t->kind == T_WORD && (stops & STOP_CLAUSE) && clause_word(t->kw);
	if (sql_is_punct(t, ','))
		return true;         /* the next table */
	if (t->kind != T_WORD)
		return false;        /* punctuation, strings, names: the region goes on */
	return clause_word(t->kw) || t->kw == KW_ON || t->kw == KW_USING || join_start(w, t);
}

/* After '(': a query expression comes next (SELECT, VALUES, WITH cte). */
static bool query_next(const struct wscan *w)
{
	struct sql_lex c = w->lx;
	struct sql_tok t;

	c.on_token = NULL;
	sql_lex_next(&c, &t);
	return sql_kw_is(&t, KW_SELECT) || sql_kw_is(&t, KW_VALUES) ||
	       (sql_kw_is(&t, KW_WITH) && sql_cte_list_follows(&c));
}

/* After '(' in FROM: a derived table (a query, maybe in more parentheses)
 * rather than parenthesised joins. */
static bool query_follows(const struct wscan *w)
{
	struct sql_lex c = w->lx;
	struct sql_tok t;

	c.on_token = NULL;
	do
		sql_lex_next(&c, &t);
	while (sql_is_punct(&t, '('));
	return sql_kw_is(&t, KW_SELECT) || sql_kw_is(&t, KW_VALUES) ||
	       (sql_kw_is(&t, KW_WITH) && sql_cte_list_follows(&c));
}

static void query_in_parens(struct wscan *w, bool nested)
{
	query_expr(w, nested);
	if (!w->failed)
		expect(w, ')');
}

/* Read up to a stop at depth 0 (peeked, not read); each subquery met is a
 * block of its own. */
static void skip_region(struct wscan *w, unsigned stops)
{
	struct sql_tok t;
	int depth = 0;

	while (!w->failed) {
		peek(w, &t);
		if (t.kind == T_END)
			return;      /* the text ends */
		if (depth == 0 && is_stop(w, &t, stops))
			return;      /* the region ends here */
		next(w, &t);
		if (sql_is_punct(&t, '(') && query_next(w)) {
			query_in_parens(w, true);
		} else if (sql_is_punct(&t, '(')) {
			if (++depth > DEPTH_MAX)
				where_fail(w, "nested too deep");
		} else if (sql_is_punct(&t, ')')) {
			depth--;
		}
	}
}

/* A ( name, ... ) list just opened: past its ')'. */
static void skip_list(struct wscan *w)
{
	skip_region(w, 0);
	if (!w->failed)
		expect(w, ')');
}

/* The text of a condition, from here to its stop. */
static int segment(struct wscan *w, struct block *b, unsigned stops)
{
	struct sql_tok t;
	uint32_t start = (uint32_t)w->lx.i;

	if (b->nsegs == WHERE_SEGS_MAX)
		return where_fail(w, "too many joins"), -1;
	skip_region(w, stops);
	peek(w, &t);
	b->segs[b->nsegs] = (struct seg){ .start = start, .end = where_tok_pos(w->s, &t) };
	return (int)b->nsegs++;
}

/* ---- FROM -------------------------------------------------------------- */

static struct source *new_source(struct wscan *w, struct block *b, enum src_kind kind)
{
	struct source *s;

	if (b->nsrc == WHERE_SOURCES_MAX) {
		where_fail(w, "too many tables in one FROM");
		return NULL; /* failed */
	}
	s = &b->src[b->nsrc++];
	memset(s, 0, sizeof(*s));
	s->kind = (uint8_t)kind;
	return s;
}

static uint32_t bit_of(const struct block *b, const struct source *s)
{
	return 1u << (s - b->src);
}

/* Words after a table that are no alias. */
static bool alias_stop(enum sql_kw kw)
{
	switch (kw) {
	case KW_JOIN: case KW_INNER: case KW_CROSS: case KW_LEFT: case KW_RIGHT: case KW_NATURAL:
	case KW_STRAIGHT_JOIN: case KW_ON: case KW_USING: case KW_USE: case KW_IGNORE:
	case KW_FORCE: case KW_PARTITION: case KW_FETCH: case KW_OFFSET:
		return true;
	default:
		return clause_word(kw);
	}
}

static void alias(struct wscan *w, struct source *s)
{
	struct sql_tok t;

	peek(w, &t);
	if (sql_kw_is(&t, KW_AS)) {
		next(w, &t);
		next(w, &t);
		if (!name_tok(w, &t))
			return;      /* AS and no name: failed */
	} else if (t.kind == T_QUOTED || (t.kind == T_WORD && !alias_stop(t.kw))) {
		next(w, &t);
		if (!name_tok(w, &t))
			return;      /* too long: failed */
	} else {
		return;              /* no alias */
	}
	s->has_alias = true;
	s->alias = where_span(w->s, &t);
}

/* USE / IGNORE / FORCE {INDEX | KEY} [FOR JOIN | ORDER BY | GROUP BY] (...) */
static void index_hints(struct wscan *w)
{
	struct sql_tok t;

	for (;;) {
		peek(w, &t);
		if (!sql_kw_is(&t, KW_USE) && !sql_kw_is(&t, KW_IGNORE) && !sql_kw_is(&t, KW_FORCE))
			return;      /* no (more) hints */
		next(w, &t);
		next(w, &t);
		if (!sql_kw_is(&t, KW_INDEX) && !sql_kw_is(&t, KW_KEY)) {
			where_fail(w, "an index hint not understood");
			return;  /* failed */
		}
		peek(w, &t);
		if (sql_kw_is(&t, KW_FOR)) {
			next(w, &t);
			next(w, &t);
			if (!sql_kw_is(&t, KW_JOIN))
				next(w, &t); /* BY */
		}
		if (!expect(w, '('))
			return;      /* failed */
		skip_list(w);
		if (w->failed)
			return;      /* failed */
	}
}

static uint32_t derived(struct wscan *w, struct block *b)
{
	struct source *s = new_source(w, b, SRC_DERIVED);
	struct sql_tok t;

	query_in_parens(w, true);
	if (!s || w->failed)
		return 0;            /* failed */
	alias(w, s);
	peek(w, &t);
	if (sql_is_punct(&t, '(')) {
		next(w, &t);
		skip_list(w);
	}
	return bit_of(b, s);
}

/* t is a name in FROM: a table, DUAL or a table function. */
static uint32_t table_name(struct wscan *w, struct block *b, const struct sql_tok *t)
{
	struct sql_tok n = *t, d, schema = *t;
	bool qualified = false;
	struct source *s;

	if (!name_tok(w, t))
		return 0;            /* failed */
	peek(w, &d);
	if (sql_is_punct(&d, '.')) {
		next(w, &d);
		next(w, &n);
		if (!name_tok(w, &n))
			return 0;    /* failed */
		qualified = true;
	}
	peek(w, &d);
	if (sql_is_punct(&d, '(')) {  /* JSON_TABLE(...): no table of ours */
		next(w, &d);
		skip_list(w);
		s = new_source(w, b, SRC_OPAQUE);
		if (s)
			alias(w, s);
		return s ? bit_of(b, s) : 0;
	}
	if (!qualified && sql_kw_is(&n, KW_DUAL))
		return 0;            /* no table */
	s = new_source(w, b, SRC_TABLE);
	if (!s)
		return 0;            /* failed */
	s->name = where_span(w->s, &n);
	s->has_schema = qualified;
	if (qualified)
		s->schema = where_span(w->s, &schema);
	return bit_of(b, s);
}

/* FOR SYSTEM_TIME comes next: the rows read are history, which no row
 * event shows. */
static bool system_time(struct wscan *w)
{
	struct sql_lex c = w->lx;
	struct sql_tok t;

	c.on_token = NULL;
	sql_lex_next(&c, &t);
	if (!sql_kw_is(&t, KW_FOR))
		return false;        /* no FOR */
	sql_lex_next(&c, &t);
	return sql_kw_is(&t, KW_SYSTEM_TIME) && !where_fail(w, "FOR SYSTEM_TIME reads history");
}

/* After a table's name: PARTITION (...), FOR SYSTEM_TIME, alias, hints. */
static void table_rest(struct wscan *w, struct source *s)
{
	struct sql_tok t;

	peek(w, &t);
	if (sql_kw_is(&t, KW_PARTITION)) {
		next(w, &t);
		if (!expect(w, '('))
			return;      /* failed */
		skip_list(w);
	}
	if (system_time(w))
		return;              /* failed */
	alias(w, s);
	index_hints(w);
}

static uint32_t table_refs(struct wscan *w, struct block *b);

static uint32_t factor(struct wscan *w, struct block *b)
{
	struct sql_tok t;
	uint32_t m;

	next(w, &t);
	if (sql_kw_is(&t, KW_LATERAL)) {
		next(w, &t);
		if (!sql_is_punct(&t, '(') || !query_next(w))
			return where_fail(w, "LATERAL not understood"), 0;
		return derived(w, b);
	}
	if (sql_is_punct(&t, '(')) {
		if (query_follows(w))
			return derived(w, b);
		if (++w->groups > GROUP_MAX)
			return where_fail(w, "nested too deep"), 0;
		m = table_refs(w, b);
		w->groups--;
		if (!w->failed)
			expect(w, ')');
		return m;
	}
	m = table_name(w, b, &t);
	if (!w->failed && m && b->src[b->nsrc - 1].kind == SRC_TABLE)
		table_rest(w, &b->src[b->nsrc - 1]);
	return m;
}

/* A join's words (read): true with its kind; false when none comes. */
static bool join_word(struct wscan *w, enum join_type *type, bool *natural)
{
	struct sql_tok t;

	peek(w, &t);
	if (t.kind != T_WORD || !join_start(w, &t))
		return false;        /* no join */
	next(w, &t);
	*type = J_INNER;
	*natural = sql_kw_is(&t, KW_NATURAL);
	if (*natural)
		next(w, &t);
	if (sql_kw_is(&t, KW_LEFT) || sql_kw_is(&t, KW_RIGHT)) {
		*type = sql_kw_is(&t, KW_LEFT) ? J_LEFT : J_RIGHT;
		next(w, &t);
		if (sql_kw_is(&t, KW_OUTER))
			next(w, &t);
	} else if (sql_kw_is(&t, KW_INNER) || sql_kw_is(&t, KW_CROSS)) {
		next(w, &t);
	}
	if (sql_kw_is(&t, KW_JOIN) || sql_kw_is(&t, KW_STRAIGHT_JOIN))
		return true;         /* a join */
	return where_fail(w, "a join not understood");
}

static void add_join(struct wscan *w, struct block *b, uint32_t l, uint32_t r,
		     enum join_type type, int seg)
{
	if (b->njoins == WHERE_JOINS_MAX) {
		where_fail(w, "too many joins");
		return;      /* failed */
	}
	b->joins[b->njoins++] = (struct join){ .left = l, .right = r, .type = (uint8_t)type,
					       .seg = (int8_t)seg };
}

static bool one_table(const struct block *b, uint32_t m, uint8_t *i)
{
	for (unsigned k = 0; k < b->nsrc; k++)
		if (m == 1u << k) {
			*i = (uint8_t)k;
			return b->src[k].kind == SRC_TABLE;
		}
	return false;
}

/* USING (a, b): equalities when each side is one table. */
static void using_list(struct wscan *w, struct block *b, uint32_t l, uint32_t r,
		       enum join_type type)
{
	struct sql_tok t;
	uint32_t start;
	int seg = -1;
	uint8_t li, ri;

	if (!expect(w, '('))
		return;              /* failed */
	start = (uint32_t)w->lx.i;
	skip_region(w, 0);
	peek(w, &t);
	if (!expect(w, ')'))
		return;              /* failed */
	if (one_table(b, l, &li) && one_table(b, r, &ri) && b->nsegs < WHERE_SEGS_MAX) {
		seg = (int)b->nsegs++;
		b->segs[seg] = (struct seg){ .start = start, .end = where_tok_pos(w->s, &t),
					     .using_list = true, .l = li, .r = ri };
	}
	add_join(w, b, l, r, type, seg);
}

static void join_spec(struct wscan *w, struct block *b, uint32_t l, uint32_t r,
		      enum join_type type, bool natural)
{
	struct sql_tok t;

	peek(w, &t);
	if (!natural && sql_kw_is(&t, KW_ON)) {
		next(w, &t);
		add_join(w, b, l, r, type, segment(w, b, STOP_CLAUSE | STOP_JOIN));
	} else if (!natural && sql_kw_is(&t, KW_USING)) {
		next(w, &t);
		using_list(w, b, l, r, type);
	} else if (type != J_INNER && !natural) {
		where_fail(w, "an outer join without ON");
	} else if (type != J_INNER) {
		add_join(w, b, l, r, type, -1);  /* NATURAL: its columns are not known */
	}
}

static uint32_t table_ref(struct wscan *w, struct block *b)
{
	uint32_t m = factor(w, b), r;
	enum join_type type;
	bool natural;

	while (!w->failed && join_word(w, &type, &natural)) {
		r = factor(w, b);
		if (w->failed)
			break;       /* failed */
		join_spec(w, b, m, r, type, natural);
		m |= r;
	}
	return m;
}

static uint32_t table_refs(struct wscan *w, struct block *b)
{
	struct sql_tok t;
	uint32_t m = 0;

	while (!w->failed) {
		m |= table_ref(w, b);
		peek(w, &t);
		if (!sql_is_punct(&t, ','))
			break;
		next(w, &t);
	}
	return m;
}

/* ---- query blocks -------------------------------------------------------- */

static bool block_clause(const struct sql_tok *t)
{
	switch (t->kw) {
	case KW_GROUP: case KW_HAVING: case KW_WINDOW: case KW_ORDER: case KW_LIMIT:
	case KW_INTO: case KW_FOR: case KW_LOCK: case KW_PROCEDURE:
		return true;
	default:
		return false;
	}
}

/* After SELECT: one block (the select list, HAVING, ORDER BY ... are read
 * past, each subquery in them analysed). */
static void select_block(struct wscan *w, bool nested)
{
	struct block b;
	struct sql_tok t;
	bool from = false;

	b.nsrc = b.njoins = b.nsegs = 0;
	b.where = -1;
	b.nested = nested;
	skip_region(w, STOP_CLAUSE);     /* the select list */
	while (!w->failed) {
		peek(w, &t);
		if (sql_kw_is(&t, KW_FROM) && !from && b.where < 0) {
			next(w, &t);
			from = true;
			table_refs(w, &b);
		} else if (sql_kw_is(&t, KW_WHERE) && b.where < 0) {
			next(w, &t);
			b.where = segment(w, &b, STOP_CLAUSE);
		} else if (block_clause(&t) && !system_time(w)) {
			next(w, &t);
			skip_region(w, STOP_CLAUSE);
		} else {
			break;
		}
	}
	if (!w->failed)
		where_block_done(w, &b);
}

/* WITH [RECURSIVE] name [(cols)] AS (query) [, ...] (WITH read). */
static void with_list(struct wscan *w)
{
	struct sql_tok t;

	peek(w, &t);
	if (sql_kw_is(&t, KW_RECURSIVE))
		next(w, &t);
	while (!w->failed) {
		next(w, &t);
		if (!name_tok(w, &t))
			return;      /* failed */
		if (w->nctes == WHERE_CTES_MAX) {
			where_fail(w, "too many CTEs");
			return;  /* failed */
		}
		w->ctes[w->nctes++] = where_span(w->s, &t);
		next(w, &t);
		if (sql_is_punct(&t, '(')) {
			skip_list(w);
			next(w, &t);
		}
		if (!sql_kw_is(&t, KW_AS) || !expect(w, '('))
			return (void)where_fail(w, "a CTE not understood");
		query_in_parens(w, true);
		peek(w, &t);
		if (!sql_is_punct(&t, ','))
			return;      /* the list ends */
		next(w, &t);
	}
}

/* After a query term: its ORDER BY, LIMIT ...; true when a UNION, EXCEPT
 * or INTERSECT (read) brings another term. */
static bool set_operation(struct wscan *w)
{
	struct sql_tok t;

	for (;;) {
		peek(w, &t);
		if (!block_clause(&t) || sql_kw_is(&t, KW_GROUP) || sql_kw_is(&t, KW_HAVING))
			break;
		next(w, &t);
		skip_region(w, STOP_CLAUSE);
		if (w->failed)
			return false; /* failed */
	}
	if (!sql_kw_is(&t, KW_UNION) && !sql_kw_is(&t, KW_EXCEPT) && !sql_kw_is(&t, KW_INTERSECT))
		return false;        /* the query expression ends */
	next(w, &t);
	peek(w, &t);
	if (sql_kw_is(&t, KW_ALL) || sql_kw_is(&t, KW_DISTINCT))
		next(w, &t);
	return true;
}

/* A query expression: [WITH ...] term {UNION term} [ORDER BY ...]; each
 * term a SELECT, a VALUES list or a query in parentheses. */
static void query_expr(struct wscan *w, bool nested)
{
	struct sql_tok t;

	if (++w->nest > NEST_MAX) {
		where_fail(w, "nested too deep");
		return;      /* failed (nest is not counted down: nothing reads on) */
	}
	peek(w, &t);
	if (sql_kw_is(&t, KW_WITH)) {
		next(w, &t);
		with_list(w);
	}
	while (!w->failed) {
		next(w, &t);
		if (sql_kw_is(&t, KW_SELECT))
			select_block(w, nested);
		else if (sql_is_punct(&t, '('))
			query_in_parens(w, nested);
		else if (sql_kw_is(&t, KW_VALUES))
			skip_region(w, STOP_CLAUSE);
		else
			where_fail(w, "not a SELECT");
		if (w->failed || !set_operation(w))
			break;
	}
	w->nest--;
}

static void statement(struct wscan *w)
{
	struct sql_tok t;

	query_expr(w, false);
	if (w->failed)
		return;              /* failed */
	next(w, &t);
	if (sql_is_punct(&t, ';'))
		next(w, &t);
	if (t.kind != T_END)
		where_fail(w, "not understood");
	else if (w->lx.doubt)
		where_fail(w, "an executable comment some servers skip");
}

void sql_where(const char *text, size_t len, const struct sql_tables *tables, struct sql_where *out)
{
	struct sql_tables own;
	struct wscan w;

	out->ok = false;
	out->why = NULL;
	out->flags = 0;
	out->ntables = out->nconds = out->nlits = out->nclasses = 0;
	if (!text || len > UINT32_MAX / 2) {
		out->why = "no text";
		return;      /* nothing to read */
	}
	if (!tables) {
		sql_tables(text, len, &own);
		tables = &own;
	}
	if (tables->kind != SQL_STMT_READ) {
		out->why = "not a SELECT";
		return;      /* a write, DDL, SET ...: no rows read to constrain */
	}
	if (tables->flags & SQL_TABLES_UNKNOWN) {
		out->why = "its tables are not known";
		return;      /* several statements, a version comment, ...: never cached */
	}
	memset(&w, 0, offsetof(struct wscan, refs));
	w.s = text;
	w.n = len;
	w.lx = (struct sql_lex){ .s = text, .n = len, .raw = true, .on_token = note_token,
				 .on_token_arg = &w };
	statement(&w);
	if (w.failed) {
		out->why = w.why;
		return;      /* not understood: nothing proven */
	}
	where_finish(&w, tables, out);
}

/* ---- reading the result ---------------------------------------------- */

const struct sql_where_table *sql_where_find(const struct sql_where *w, const char *schema,
					     size_t schema_len, const char *name, size_t name_len)
{
	for (unsigned i = 0; i < w->ntables; i++) {
		const struct sql_where_table *t = &w->tables[i];

		if (!where_same_text(t->name, t->name_len, name, name_len) || !t->schema != !schema)
			continue;    /* another table, or qualified otherwise */
		if (!schema || where_same_text(t->schema, t->schema_len, schema, schema_len))
			return t;    /* found */
	}
	return NULL;
}

static char unescape(char c)
{
	switch (c) {
	case '0': return '\0';
	case 'b': return '\b';
	case 'n': return '\n';
	case 'r': return '\r';
	case 't': return '\t';
	case 'Z': return '\032';
	default: return c;
	}
}

size_t sql_where_lit_text(const struct sql_where_lit *l, char *dst, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < l->len; i++) {
		char c = l->p[i];

		if (l->kind == SQL_WL_STRING && c == '\\' && i + 1 < l->len) {
			c = l->p[++i];
			if (c == '%' || c == '_') {   /* \% and \_ keep their backslash */
				if (o == cap)
					return (size_t)-1;  /* does not fit */
				dst[o++] = '\\';
			} else {
				c = unescape(c);
			}
		} else if (l->kind == SQL_WL_STRING && c == l->quote && i + 1 < l->len &&
			   l->p[i + 1] == c) {
			i++;         /* a doubled quote */
		}
		if (o == cap)
			return (size_t)-1;  /* does not fit */
		dst[o++] = c;
	}
	return o;
}

/* ---- as text ------------------------------------------------------------- */

struct out_text {
	char *buf;
	size_t cap, len;
};

static void put(struct out_text *o, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++, o->len++)
		if (o->len + 1 < o->cap)
			o->buf[o->len] = p[i];
}

static void puts_(struct out_text *o, const char *s)
{
	put(o, s, strlen(s));
}

static void name(struct out_text *o, const char *p, size_t n, bool quoted)
{
	if (quoted)
		put(o, "`", 1);
	put(o, p, n);
	if (quoted)
		put(o, "`", 1);
}

static void lit(struct out_text *o, const struct sql_where_lit *l)
{
	char num[8];

	switch (l->kind) {
	case SQL_WL_STRING:
		if (l->charset) {
			put(o, "_", 1);
			put(o, l->charset, l->charset_len);
		}
		put(o, &l->quote, 1);
		put(o, l->p, l->len);
		put(o, &l->quote, 1);
		break;
	case SQL_WL_PARAM:
		snprintf(num, sizeof(num), "?%u", (unsigned)l->param);
		puts_(o, num);
		break;
	default:
		put(o, l->p, l->len);
		break;
	}
}

static void class_text(struct out_text *o, const struct sql_where_class *k)
{
	puts_(o, " via ");
	for (unsigned i = 0; i < k->n; i++) {
		const struct sql_where_col *m = &k->m[i];

		if (i)
			put(o, ",", 1);
		if (m->schema) {
			name(o, m->schema, m->schema_len, m->quoted & 1);
			put(o, ".", 1);
		}
		name(o, m->table, m->table_len, m->quoted & 2);
		put(o, ".", 1);
		name(o, m->col, m->col_len, m->quoted & 4);
	}
}

static void cond_text(struct out_text *o, const struct sql_where *w, const struct sql_where_cond *c)
{
	if (c->flags & SQL_WC_BINARY)
		puts_(o, "BINARY ");
	name(o, c->col, c->col_len, c->col_quoted);
	if (c->op == SQL_WO_IS_NULL) {
		puts_(o, " IS NULL");
	} else {
		puts_(o, c->op == SQL_WO_IN ? " IN (" : c->flags & SQL_WC_NULL_SAFE ? " <=> " : " = ");
		for (unsigned i = 0; i < c->nlits; i++) {
			if (i)
				put(o, ",", 1);
			lit(o, &w->lits[c->lit + i]);
		}
		if (c->op == SQL_WO_IN)
			put(o, ")", 1);
	}
	if (c->collate) {
		puts_(o, " COLLATE ");
		put(o, c->collate, c->collate_len);
	}
	if (c->flags & SQL_WC_CARRIED)
		class_text(o, &w->classes[c->cls]);
	if (c->flags & SQL_WC_UNQUALIFIED)
		puts_(o, " (unqualified)");
}

size_t sql_where_format(const struct sql_where *w, char *buf, size_t cap)
{
	struct out_text o = { .buf = buf, .cap = cap };

	if (!w->ok) {
		puts_(&o, "none: ");
		puts_(&o, w->why ? w->why : "?");
	}
	if (w->ok && (w->flags & SQL_WHERE_DQUOTE))
		puts_(&o, "[dquote] ");
	for (unsigned i = 0; w->ok && i < w->ntables; i++) {
		const struct sql_where_table *t = &w->tables[i];

		if (i)
			puts_(&o, "; ");
		if (t->schema) {
			name(&o, t->schema, t->schema_len, t->quoted & 1);
			put(&o, ".", 1);
		}
		name(&o, t->name, t->name_len, t->quoted & 2);
		puts_(&o, ": ");
		if (!t->constrained)
			puts_(&o, "any");
		for (unsigned k = 0; k < t->nconds; k++) {
			if (k)
				puts_(&o, " AND ");
			cond_text(&o, w, &w->conds[t->cond + k]);
		}
	}
	if (cap)
		buf[o.len < cap ? o.len : cap - 1] = '\0';
	return o.len;
}
