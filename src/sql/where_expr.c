/*
 * where_expr.c: a block's conditions, read for one source at a time (see
 * where.c for which conditions hold for which source).
 *
 * A condition is read as OR / XOR / AND / NOT over predicates, each
 * predicate the run of text up to the next AND, OR, XOR or && at its
 * depth (the AND of BETWEEN ... AND and whatever stands inside CASE ...
 * END belong to the run). What each gives a source, as one conjunction:
 *   - `col = literal`, `col IN (literal, ...)`, `col IS NULL`, `col <=>
 *     literal` (`col = literal`, or IS NULL for NULL): the constraint, when
 *     col is this source's (qualified by its alias or name; unqualified
 *     only in a block of one source);
 *   - a AND b: both; a OR b: per column constrained on both sides, the
 *     union of the values (a = 1 OR a = 2 is a IN (1,2)), nothing else;
 *   - NOT, XOR, anything else (a function of a column, <, LIKE, BETWEEN,
 *     two columns of one table, IN (SELECT ...), a variable, NOW()):
 *     nothing. `||` is OR or concatenation by sql_mode: the condition gives
 *     nothing at all.
 * At the top of the conditions (under ANDs only), `a.x = b.y` of two
 * tables is an equality and `a.x = literal` an anchor: where_block_done
 * carries anchors along equalities.
 */
#include "sql/where_int.h"

#include <string.h>

#include "sql/functions.h"

struct ev {
	struct wscan *w;
	const struct block *b;
	struct tops *tops;
	struct sql_lex lx;
	unsigned src;          /* the source asked about; WHERE_NO_SRC: none */
	int depth;
	bool poison;           /* the condition gives nothing */
};

struct operand {
	bool col, binary, unqualified;
	uint8_t src;           /* col: WHERE_NO_SRC when not one of the block's */
	struct span name, collate;
	struct sql_where_lit lit;
};

static void e_next(struct ev *e, struct sql_tok *t)
{
	sql_lex_next(&e->lx, t);
}

static void e_peek(struct ev *e, struct sql_tok *t)
{
	sql_lex_peek(&e->lx, t);
}

static bool at_end(struct ev *e)
{
	struct sql_tok t;

	e_peek(e, &t);
	return t.kind == T_END;
}

/* `&&` or `||`: two characters the lexer reads as two tokens. */
static bool twice(const struct ev *e, const struct sql_tok *t, char c)
{
	return sql_is_punct(t, c) && t->p + 1 < e->lx.s + e->lx.n && t->p[1] == c;
}

/* ---- helpers the reader's files share --------------------------------- */

bool where_fail(struct wscan *w, const char *why)
{
	if (!w->failed) {
		w->failed = true;
		w->why = why;
	}
	return false;
}

uint32_t where_tok_pos(const char *s, const struct sql_tok *t)
{
	bool quoted = t->kind == T_QUOTED || t->kind == T_STRING;

	return (uint32_t)(t->p - s) - (quoted ? 1 : 0);
}

struct span where_span(const char *s, const struct sql_tok *t)
{
	return (struct span){ .pos = (uint32_t)(t->p - s), .len = (uint16_t)t->len,
			      .quoted = t->kind == T_QUOTED };
}

static unsigned char lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

bool where_same_text(const char *a, size_t an, const char *b, size_t bn)
{
	if (an != bn)
		return false;        /* different lengths */
	for (size_t i = 0; i < an; i++)
		if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
			return false; /* a character differs */
	return true;
}

bool where_same(const struct wscan *w, struct span a, struct span b)
{
	return where_same_text(w->s + a.pos, a.len, w->s + b.pos, b.len);
}

/* ---- literals ------------------------------------------------------------ */

static bool ident_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || c >= 0x80;
}

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A number at s[i] (sign included): its end, 0 when none (1abc is a name). */
static size_t scan_number(const char *s, size_t i, size_t n, uint8_t *kind)
{
	size_t j = i, digits = 0, k;

	*kind = SQL_WL_INT;
	if (j < n && (s[j] == '-' || s[j] == '+'))
		j++;
	if (j == i && j + 2 < n && s[j] == '0' && (s[j + 1] == 'x' || s[j + 1] == 'b')) {
		*kind = s[j + 1] == 'x' ? SQL_WL_HEX : SQL_WL_BIT;
		for (j += 2; j < n && ident_char((unsigned char)s[j]); j++, digits++)
			if (*kind == SQL_WL_HEX ? !strchr("0123456789abcdefABCDEF", s[j])
						: (s[j] != '0' && s[j] != '1'))
				return 0; /* 0xZZ is a name */
		return digits ? j : 0;
	}
	for (; j < n && digit(s[j]); j++)
		digits++;
	if (j < n && s[j] == '.') {
		*kind = SQL_WL_DECIMAL;
		for (j++; j < n && digit(s[j]); j++)
			digits++;
	}
	if (!digits)
		return 0;            /* a sign or a dot alone */
	if (j < n && (s[j] == 'e' || s[j] == 'E')) {
		k = j + 1;
		if (k < n && (s[k] == '-' || s[k] == '+'))
			k++;
		if (k < n && digit(s[k])) {
			while (k < n && digit(s[k]))
				k++;
			j = k;
			*kind = SQL_WL_FLOAT;
		}
	}
	return j < n && ident_char((unsigned char)s[j]) ? 0 : j;
}

static bool number_lit(struct ev *e, const char *p, struct sql_where_lit *l)
{
	size_t i = (size_t)(p - e->lx.s), end = scan_number(e->lx.s, i, e->lx.n, &l->kind);

	if (!end)
		return false;        /* not a number */
	l->p = p;
	l->len = (uint32_t)(end - i);
	e->lx.i = end;               /* 1.5e-3 is several tokens to the lexer */
	return true;
}

/* t is a string: the literal (charset: its introducer). */
static bool string_lit(struct ev *e, const struct sql_tok *t, const char *cs, size_t cs_len,
		       struct sql_where_lit *l)
{
	struct sql_tok n;

	l->kind = SQL_WL_STRING;
	l->quote = t->p[-1];
	l->p = t->p;
	l->len = (uint32_t)t->len;
	l->charset = cs;
	l->charset_len = (uint16_t)cs_len;
	if (l->quote == '"')
		e->w->flags |= SQL_WHERE_DQUOTE;
	e_peek(e, &n);
	return n.kind != T_STRING;   /* 'a' 'b' is 'ab': not read */
}

/* _latin1'x', N'x', X'41', B'101': t is the word. */
static bool prefixed_lit(struct ev *e, const struct sql_tok *t, struct sql_where_lit *l)
{
	struct sql_tok n;
	bool adjacent;

	e_peek(e, &n);
	if (n.kind != T_STRING || t->len > 64)
		return false;        /* a name */
	adjacent = n.p - 1 == t->p + t->len;
	if (t->p[0] == '_' && t->len > 1) {
		e_next(e, &n);
		return string_lit(e, &n, t->p + 1, t->len - 1, l);
	}
	if (!adjacent || t->len != 1 || n.p[-1] != '\'')
		return false;        /* a name and a string: no literal */
	e_next(e, &n);
	switch (t->p[0] | 0x20) {
	case 'n':
		return string_lit(e, &n, "utf8mb3", 7, l);
	case 'x': case 'b':
		l->kind = (t->p[0] | 0x20) == 'x' ? SQL_WL_HEX : SQL_WL_BIT;
		l->p = t->p;
		l->len = (uint32_t)n.len + 3;
		e_peek(e, &n);
		return n.kind != T_STRING;
	default:
		return false;        /* another letter: no literal */
	}
}

static bool param_lit(struct ev *e, const struct sql_tok *t, struct sql_where_lit *l)
{
	uint32_t pos = (uint32_t)(t->p - e->lx.s);
	const struct wscan *w = e->w;

	for (unsigned i = 0; i < w->nparams; i++)
		if (w->params[i] == pos) {
			l->kind = SQL_WL_PARAM;
			l->param = (uint16_t)i;
			l->p = t->p;
			l->len = 1;
			return true; /* found: its index */
		}
	return false;                /* past WHERE_PARAMS_MAX */
}

/* t starts a literal: read it (and what belongs to it). */
static bool literal(struct ev *e, const struct sql_tok *t, struct sql_where_lit *l)
{
	memset(l, 0, sizeof(*l));
	if (t->kind == T_STRING)
		return string_lit(e, t, NULL, 0, l);
	if (sql_is_punct(t, '?'))
		return param_lit(e, t, l);
	if (sql_is_punct(t, '-') || sql_is_punct(t, '+') || sql_is_punct(t, '.'))
		return number_lit(e, t->p, l);
	if (t->kind != T_WORD)
		return false;        /* a `name`, a variable, '(' ... */
	if (t->kw == KW_NULL || t->kw == KW_TRUE || t->kw == KW_FALSE) {
		l->kind = t->kw == KW_NULL ? SQL_WL_NULL : SQL_WL_INT;
		l->p = t->kw == KW_NULL ? t->p : t->kw == KW_TRUE ? "1" : "0";
		l->len = t->kw == KW_NULL ? 4 : 1;
		return true;         /* NULL, TRUE, FALSE */
	}
	if (digit(t->p[0]))
		return number_lit(e, t->p, l);
	return prefixed_lit(e, t, l);
}

/* ---- columns ------------------------------------------------------------- */

/* A word that is never a column: a value or an operator. */
static bool not_column(const struct sql_tok *t)
{
	const struct sql_fn *fn;

	switch (t->kw) {
	case KW_NULL: case KW_TRUE: case KW_FALSE: case KW_DEFAULT: case KW_NOT: case KW_EXISTS:
	case KW_CASE: case KW_INTERVAL: case KW_BINARY: case KW_SELECT: case KW_AND: case KW_OR:
	case KW_XOR: case KW_IS: case KW_IN: case KW_BETWEEN: case KW_LIKE: case KW_ALL:
	case KW_DISTINCT: case KW_COLLATE: case KW_END:
		return true;
	default:
		break;
	}
	fn = sql_fn_lookup(t->p, t->len);
	return fn && (fn->flags & SQL_FN_BARE); /* CURRENT_DATE and the like */
}

/* The source of [[schema.]table.]col in this block, or WHERE_NO_SRC (an
 * outer query's, two of them, or unqualified among several). */
static uint8_t resolve(const struct ev *e, const struct span *part, unsigned n, bool *unq)
{
	const struct block *b = e->b;
	unsigned hits = 0;
	uint8_t found = WHERE_NO_SRC;

	if (n == 1) {
		*unq = b->nested;
		return b->nsrc == 1 ? 0 : WHERE_NO_SRC;
	}
	for (unsigned i = 0; i < b->nsrc; i++) {
		const struct source *s = &b->src[i];
		bool match;

		if (n == 2)
			match = where_same(e->w, s->has_alias ? s->alias : s->name, part[0]);
		else
			match = !s->has_alias && s->has_schema && where_same(e->w, s->schema, part[0]) &&
				where_same(e->w, s->name, part[1]);
		if (match) {
			found = (uint8_t)i;
			hits++;
		}
	}
	return hits == 1 ? found : WHERE_NO_SRC;
}

static bool column(struct ev *e, const struct sql_tok *t, struct operand *o)
{
	struct span part[3];
	unsigned n = 0;
	struct sql_tok d;

	if (!sql_is_name(t) || t->len > 256 || (t->kind == T_WORD && not_column(t)))
		return false;        /* no column */
	part[n++] = where_span(e->lx.s, t);
	for (;;) {
		e_peek(e, &d);
		if (!sql_is_punct(&d, '.') || n == 3)
			break;
		e_next(e, &d);
		e_next(e, &d);
		if (!sql_is_name(&d) || d.len > 256)
			return false; /* t.*, or not a name */
		part[n++] = where_span(e->lx.s, &d);
	}
	e_peek(e, &d);
	if (sql_is_punct(&d, '('))
		return false;        /* a function */
	o->col = true;
	o->name = part[n - 1];
	o->src = resolve(e, part, n, &o->unqualified);
	return true;
}

/* [BINARY] column-or-literal [COLLATE name] */
static bool operand(struct ev *e, struct operand *o)
{
	struct sql_tok t;

	memset(o, 0, sizeof(*o));
	e_next(e, &t);
	if (sql_kw_is(&t, KW_BINARY)) {
		o->binary = true;
		e_next(e, &t);
	}
	if (!literal(e, &t, &o->lit) && !column(e, &t, o))
		return false;        /* an expression: nothing proven */
	e_peek(e, &t);
	if (sql_kw_is(&t, KW_COLLATE)) {
		e_next(e, &t);
		e_next(e, &t);
		if (!sql_is_name(&t) && t.kind != T_STRING)
			return false; /* not understood */
		o->collate = where_span(e->lx.s, &t);
	}
	return true;
}

/* ---- predicates ------------------------------------------------------ */

static const struct sql_where_lit *keep_lits(struct wscan *w, const struct sql_where_lit *l,
					     unsigned n)
{
	struct sql_where_lit *at = &w->scratch[w->nscratch];

	if (n > WHERE_SCRATCH_LITS - w->nscratch)
		return NULL;         /* the pool is full */
	memmove(at, l, n * sizeof(*l));
	w->nscratch += n;
	return at;
}

/* A constraint on o's column: this source's, and an anchor at the top. */
static void atom(struct ev *e, const struct operand *o, uint8_t op, uint8_t flags,
		 struct span collate, const struct sql_where_lit *lits, unsigned n, struct conj *out)
{
	struct tops *t = e->tops;
	struct wcond c = { .col = o->name, .op = op, .collate = collate, .nlits = (uint16_t)n,
			   .flags = (uint8_t)(flags | (o->unqualified ? SQL_WC_UNQUALIFIED : 0)) };

	if (o->src == WHERE_NO_SRC || e->b->src[o->src].kind != SRC_TABLE)
		return;              /* not a column of one of this block's tables */
	c.lits = n ? keep_lits(e->w, lits, n) : NULL;
	if (n && !c.lits)
		return;              /* no room: no constraint */
	if (o->src == e->src) {
		out->n = 1;
		out->c[0] = c;
	}
	if (op != SQL_WO_IS_NULL && !collate.len && !(flags & (SQL_WC_BINARY | SQL_WC_NULL_SAFE)) &&
	    t->natoms < WHERE_TOPS_MAX) {
		t->atom_at[t->natoms] = (struct node){ .src = o->src, .col = o->name };
		t->atoms[t->natoms++] = c;
	}
}

/* a.x = b.y of two tables, no BINARY or COLLATE: an equality. */
static void edge(struct ev *e, const struct operand *l, const struct operand *r)
{
	struct tops *t = e->tops;
	const struct block *b = e->b;

	if (l->src == WHERE_NO_SRC || r->src == WHERE_NO_SRC || l->src == r->src)
		return;              /* an outer column, or one table's two columns */
	if (b->src[l->src].kind != SRC_TABLE || b->src[r->src].kind != SRC_TABLE)
		return;              /* a derived table's column: its type is not known */
	if (l->binary || r->binary || l->collate.len || r->collate.len || t->nedges == WHERE_TOPS_MAX)
		return;              /* a comparison of its own, or no room */
	t->edges[t->nedges][0] = (struct node){ .src = l->src, .col = l->name };
	t->edges[t->nedges][1] = (struct node){ .src = r->src, .col = r->name };
	t->nedges++;
}

static void compare(struct ev *e, const struct operand *l, const struct operand *r, bool null_safe,
		    struct conj *out)
{
	const struct operand *c = l->col ? l : r, *v = l->col ? r : l;
	uint8_t flags = l->binary || r->binary ? SQL_WC_BINARY : 0, op = SQL_WO_EQ;

	if (l->col && r->col) {
		if (!null_safe)
			edge(e, l, r);
		return;              /* two columns: no literal */
	}
	if (!l->col && !r->col)
		return;              /* two literals */
	if (l->collate.len && r->collate.len)
		return;              /* two collations: the server decides */
	if (null_safe && v->lit.kind == SQL_WL_NULL) {
		atom(e, c, SQL_WO_IS_NULL, 0, (struct span){ 0 }, NULL, 0, out);
		return;              /* <=> NULL is IS NULL */
	}
	if (null_safe && v->lit.kind == SQL_WL_PARAM)
		flags |= SQL_WC_NULL_SAFE;
	atom(e, c, op, flags, l->collate.len ? l->collate : r->collate, &v->lit, 1, out);
}

/* col IN ( literal, ... ) */
static void in_list(struct ev *e, const struct operand *c, struct conj *out)
{
	struct sql_where_lit lits[WHERE_SCRATCH_LITS];
	struct sql_tok t;
	unsigned n = 0;

	e_next(e, &t);
	if (!c->col || !sql_is_punct(&t, '('))
		return;              /* not a column IN a list */
	for (;;) {
		e_next(e, &t);
		if (n == WHERE_SCRATCH_LITS || !literal(e, &t, &lits[n++]))
			return;      /* a subquery, an expression, too long */
		e_next(e, &t);
		if (sql_is_punct(&t, ')'))
			break;
		if (!sql_is_punct(&t, ','))
			return;      /* 'a' COLLATE x, 1 + 1, ... */
	}
	if (at_end(e))
		atom(e, c, n == 1 ? SQL_WO_EQ : SQL_WO_IN, c->binary ? SQL_WC_BINARY : 0, c->collate,
		     lits, n, out);
}

static void simple(struct ev *e, struct conj *out)
{
	struct operand l, r;
	struct sql_tok t;

	if (!operand(e, &l))
		return;              /* no column, no literal: nothing proven */
	e_next(e, &t);
	if (sql_is_punct(&t, '<') && t.p + 2 < e->lx.s + e->lx.n && t.p[1] == '=' && t.p[2] == '>') {
		e_next(e, &t);
		e_next(e, &t);
		if (operand(e, &r) && at_end(e))
			compare(e, &l, &r, true, out);
	} else if (sql_is_punct(&t, '=')) {
		if (operand(e, &r) && at_end(e))
			compare(e, &l, &r, false, out);
	} else if (sql_kw_is(&t, KW_IS)) {
		e_next(e, &t);
		if (sql_kw_is(&t, KW_NULL) && at_end(e) && l.col)
			atom(e, &l, SQL_WO_IS_NULL, 0, (struct span){ 0 }, NULL, 0, out);
	} else if (sql_kw_is(&t, KW_IN)) {
		in_list(e, &l, out);
	}
}

/* Where the run that starts here ends: at AND, OR, XOR, && or || of its
 * depth (not BETWEEN's AND, nothing inside CASE ... END), or ')' closing
 * the group it is in. */
static uint32_t run_end(const struct ev *e)
{
	struct sql_lex c = e->lx;
	struct sql_tok t;
	int depth = 0, cases = 0, between = 0;

	for (;;) {
		sql_lex_next(&c, &t);
		if (t.kind == T_END)
			return (uint32_t)c.n;
		if (sql_is_punct(&t, '(')) {
			depth++;
		} else if (sql_is_punct(&t, ')')) {
			if (depth-- == 0)
				return where_tok_pos(c.s, &t);
		} else if (depth > 0 || t.kind != T_WORD) {
			if (depth == 0 && cases == 0 && (twice(e, &t, '&') || twice(e, &t, '|')))
				return where_tok_pos(c.s, &t);
		} else if (t.kw == KW_CASE) {
			cases++;
		} else if (t.kw == KW_END && cases > 0) {
			cases--;
		} else if (cases > 0) {
			continue;
		} else if (t.kw == KW_BETWEEN) {
			between++;
		} else if (t.kw == KW_AND && between > 0) {
			between--;
		} else if (t.kw == KW_AND || t.kw == KW_OR || t.kw == KW_XOR) {
			return where_tok_pos(c.s, &t);
		}
	}
}

static void or_expr(struct ev *e, struct conj *out);

/* The run (all the lexer reads) is one group in parentheses, not a
 * subquery: read its inside as a condition. False when it is not. */
static bool paren_group(struct ev *e, struct conj *out)
{
	struct sql_lex c = e->lx, saved;
	struct sql_tok t;
	size_t inside;
	uint32_t close;
	int depth = 1;

	sql_lex_next(&c, &t);
	if (!sql_is_punct(&t, '('))
		return false;        /* no group */
	inside = c.i;
	sql_lex_peek(&c, &t);
	if (sql_kw_is(&t, KW_SELECT) || sql_kw_is(&t, KW_WITH) || sql_kw_is(&t, KW_VALUES))
		return false;        /* a subquery: nothing proven */
	while (depth > 0) {
		sql_lex_next(&c, &t);
		if (t.kind == T_END)
			return false; /* unbalanced: no group */
		depth += sql_is_punct(&t, '(') ? 1 : sql_is_punct(&t, ')') ? -1 : 0;
	}
	close = where_tok_pos(c.s, &t);
	sql_lex_next(&c, &t);
	if (t.kind != T_END)
		return false;        /* (a) + 1: the group is part of an expression */
	if (e->depth >= WHERE_PAREN_MAX)
		return true;         /* too deep: nothing proven (out is empty) */
	saved = e->lx;
	e->lx.i = inside;
	e->lx.n = close;
	e->depth++;
	or_expr(e, out);
	if (!at_end(e))
		e->poison = true;    /* not read to its end: the condition gives nothing */
	e->depth--;
	e->lx = saved;
	return true;
}

static void predicate(struct ev *e, struct conj *out)
{
	uint32_t end = run_end(e);
	size_t n = e->lx.n;

	out->n = 0;
	e->lx.n = end;
	if (!paren_group(e, out))
		simple(e, out);
	e->lx.n = n;
	e->lx.i = end;
}

/* ---- the lattice: one conjunction per source --------------------------- */

static void conj_and(struct conj *a, const struct conj *b)
{
	for (unsigned i = 0; i < b->n && a->n < WHERE_CONJ_MAX; i++)
		a->c[a->n++] = b->c[i];  /* past the bound a conjunct is dropped */
}

static bool same_lit(const struct sql_where_lit *a, const struct sql_where_lit *b)
{
	return a->kind == b->kind && a->len == b->len && memcmp(a->p, b->p, a->len) == 0 &&
	       a->param == b->param && a->charset_len == b->charset_len &&
	       (!a->charset_len || memcmp(a->charset, b->charset, a->charset_len) == 0);
}

/* x OR y of one column: the union of the values, when they compare alike. */
static bool cond_union(struct wscan *w, const struct wcond *x, const struct wcond *y, struct wcond *out)
{
	struct wcond r = *x;
	unsigned start = w->nscratch;

	if (!where_same(w, x->col, y->col) || (x->op == SQL_WO_IS_NULL) != (y->op == SQL_WO_IS_NULL))
		return false;        /* other columns, or IS NULL with a value */
	if ((x->flags ^ y->flags) & SQL_WC_BINARY || x->collate.len != y->collate.len ||
	    (x->collate.len && !where_same(w, x->collate, y->collate)))
		return false;        /* compared differently */
	if (x->flags & y->flags & SQL_WC_CARRIED && x->cls != y->cls)
		return false;        /* two classes to check: not kept */
	r.flags = x->flags | y->flags;
	r.cls = x->flags & SQL_WC_CARRIED ? x->cls : y->cls;
	if (x->op == SQL_WO_IS_NULL) {
		*out = r;
		return true;         /* both IS NULL: no values */
	}
	if (!keep_lits(w, x->lits, x->nlits))
		return false;        /* no room */
	for (unsigned j = 0; j < y->nlits; j++) {
		bool seen = false;

		for (unsigned i = start; i < w->nscratch && !seen; i++)
			seen = same_lit(&w->scratch[i], &y->lits[j]);
		if (!seen && !keep_lits(w, &y->lits[j], 1))
			return false; /* no room */
	}
	r.lits = &w->scratch[start];
	r.nlits = (uint16_t)(w->nscratch - start);
	r.op = r.nlits == 1 ? SQL_WO_EQ : SQL_WO_IN;
	*out = r;
	return true;
}

void where_conj_or(struct wscan *w, struct conj *a, const struct conj *b)
{
	unsigned k = 0;

	for (unsigned i = 0; i < a->n; i++)
		for (unsigned j = 0; j < b->n; j++)
			if (cond_union(w, &a->c[i], &b->c[j], &a->c[k])) {
				k++;
				break;
			}
	a->n = k;
}

/* ---- conditions ---------------------------------------------------------- */

static void rollback(struct ev *e, unsigned edges, unsigned atoms)
{
	e->tops->nedges = edges;  /* under OR, XOR or NOT: no equality, no anchor */
	e->tops->natoms = atoms;
}

static void not_expr(struct ev *e, struct conj *out)
{
	unsigned me = e->tops->nedges, ma = e->tops->natoms;
	struct sql_tok t;
	bool negated = false;

	for (e_peek(e, &t); sql_kw_is(&t, KW_NOT); e_peek(e, &t)) {
		e_next(e, &t);
		negated = true;
	}
	predicate(e, out);
	if (negated) {
		out->n = 0;
		rollback(e, me, ma);
	}
}

static void and_expr(struct ev *e, struct conj *out)
{
	struct conj rhs;
	struct sql_tok t;

	not_expr(e, out);
	for (;;) {
		e_peek(e, &t);
		if (twice(e, &t, '&'))
			e_next(e, &t);
		else if (!sql_kw_is(&t, KW_AND))
			return;      /* the conjunction ends */
		e_next(e, &t);
		not_expr(e, &rhs);
		conj_and(out, &rhs);
	}
}

static void xor_expr(struct ev *e, struct conj *out)
{
	unsigned me = e->tops->nedges, ma = e->tops->natoms;
	struct conj rhs;
	struct sql_tok t;

	and_expr(e, out);
	for (e_peek(e, &t); sql_kw_is(&t, KW_XOR); e_peek(e, &t)) {
		e_next(e, &t);
		and_expr(e, &rhs);
		out->n = 0;
		rollback(e, me, ma);
	}
}

static void or_expr(struct ev *e, struct conj *out)
{
	unsigned me = e->tops->nedges, ma = e->tops->natoms;
	struct conj rhs;
	struct sql_tok t;
	bool any = false;

	xor_expr(e, out);
	for (;;) {
		e_peek(e, &t);
		if (twice(e, &t, '|')) {
			e->poison = true; /* OR, or concatenation under PIPES_AS_CONCAT */
			e_next(e, &t);
		} else if (!sql_kw_is(&t, KW_OR)) {
			break;
		}
		e_next(e, &t);
		xor_expr(e, &rhs);
		where_conj_or(e->w, out, &rhs);
		any = true;
	}
	if (any)
		rollback(e, me, ma);
}

/* USING (a, b) of the sources l and r: a.a = r.a, ... */
static void using_edges(struct ev *e, const struct seg *g)
{
	struct tops *t = e->tops;
	struct sql_tok n;

	for (e_next(e, &n); n.kind != T_END; e_next(e, &n)) {
		if (!sql_is_name(&n) || n.len > 256 || t->nedges == WHERE_TOPS_MAX)
			continue;    /* ',' or no room */
		t->edges[t->nedges][0] = (struct node){ .src = g->l, .col = where_span(e->lx.s, &n) };
		t->edges[t->nedges][1] = (struct node){ .src = g->r, .col = where_span(e->lx.s, &n) };
		t->nedges++;
	}
}

/* What segment seg says of source src (WHERE_NO_SRC: only its top). */
static void eval_seg(struct wscan *w, const struct block *b, unsigned seg, unsigned src,
		     struct tops *tops, struct conj *out)
{
	const struct seg *g = &b->segs[seg];
	unsigned me = tops->nedges, ma = tops->natoms;
	struct ev e = { .w = w, .b = b, .tops = tops, .src = src,
			.lx = { .s = w->s, .n = g->end, .i = g->start, .raw = true } };

	out->n = 0;
	if (g->using_list) {
		using_edges(&e, g);
		return;              /* USING (cols): equalities only */
	}
	or_expr(&e, out);
	if (e.poison || !at_end(&e)) {
		out->n = 0;          /* the condition gives nothing */
		rollback(&e, me, ma);
	}
}

/* ---- a block's sources ------------------------------------------------ */

/* The segments that hold for source s's rows, bottom-up (rejected: the
 * WHERE rejects s's NULLs, so an outer join is an inner one for it). True
 * when an outer join can NULL-extend s (the WHERE then does not hold). */
static bool path(const struct block *b, unsigned s, bool rejected, uint32_t *segs)
{
	uint32_t bit = 1u << s;

	*segs = 0;
	for (unsigned j = 0; j < b->njoins; j++) {
		const struct join *jn = &b->joins[j];
		bool left = jn->left & bit, right = jn->right & bit;

		if (!left && !right)
			continue;    /* a join of other sources */
		if ((jn->type == J_LEFT && left) || (jn->type == J_RIGHT && right))
			continue;    /* the preserved side: its rows are there anyway */
		if (jn->seg >= 0)
			*segs |= 1u << jn->seg;
		if (jn->type != J_INNER && !rejected)
			return true; /* NULL-extended: nothing above holds */
	}
	return false;
}

/* Does the WHERE imply `s.col = value` (which a NULL-extended s fails)? */
static bool rejects_null(struct wscan *w, const struct block *b, unsigned s)
{
	struct tops tops = { 0 };
	struct conj c;

	eval_seg(w, b, (unsigned)b->where, s, &tops, &c);
	for (unsigned i = 0; i < c.n; i++)
		if (c.c[i].op != SQL_WO_IS_NULL && !(c.c[i].flags & SQL_WC_NULL_SAFE))
			return true; /* NULL = value is never true */
	return false;
}

/* The WHERE's anchors on sources no outer join NULL-extends, for s that
 * one can (it matters only through rows of theirs the WHERE keeps). */
static void anchors(struct wscan *w, const struct block *b, const bool *extended, struct tops *t)
{
	struct tops all = { 0 };
	struct conj c;

	eval_seg(w, b, (unsigned)b->where, WHERE_NO_SRC, &all, &c);
	for (unsigned i = 0; i < all.natoms && t->natoms < WHERE_TOPS_MAX; i++)
		if (!extended[all.atom_at[i].src]) {
			t->atom_at[t->natoms] = all.atom_at[i];
			t->atoms[t->natoms++] = all.atoms[i];
		}
}

static bool same_node(const struct wscan *w, const struct node *a, const struct node *b)
{
	return a->src == b->src && where_same(w, a->col, b->col);
}

static unsigned find(const uint8_t *up, unsigned x)
{
	while (up[x] != x)
		x = up[x];
	return x;
}

/* The columns of the equalities, each once, joined into classes. */
static unsigned classes(const struct wscan *w, const struct tops *t, struct node *nodes, uint8_t *up)
{
	unsigned n = 0;

	for (unsigned e = 0; e < t->nedges; e++) {
		unsigned at[2];

		for (unsigned side = 0; side < 2; side++) {
			unsigned k = 0;

			while (k < n && !same_node(w, &nodes[k], &t->edges[e][side]))
				k++;
			if (k == n) {
				nodes[n] = t->edges[e][side];
				up[n] = (uint8_t)n;
				n++;
			}
			at[side] = k;
		}
		up[find(up, at[0])] = (uint8_t)find(up, at[1]);
	}
	return n;
}

/* The class of root as a sql_where_class; -1 when there is no room. */
static int keep_class(struct wscan *w, const struct block *b, const struct node *nodes,
		      const uint8_t *up, unsigned n, unsigned root)
{
	struct sql_where_class *k;

	if (w->nclasses == SQL_WHERE_CLASSES_MAX)
		return -1;           /* no room: nothing carried */
	k = &w->classes[w->nclasses];
	k->n = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct source *s = &b->src[nodes[i].src];

		if (find(up, i) != root)
			continue;
		if (k->n == SQL_WHERE_CLASS_COLS)
			return -1;   /* too many columns: nothing carried */
		k->m[k->n++] = (struct sql_where_col){
			.schema = s->has_schema ? w->s + s->schema.pos : NULL, .schema_len = s->schema.len,
			.table = w->s + s->name.pos, .table_len = s->name.len,
			.col = w->s + nodes[i].col.pos, .col_len = nodes[i].col.len,
			.quoted = (uint8_t)(s->schema.quoted | s->name.quoted << 1 | nodes[i].col.quoted << 2) };
	}
	return (int)w->nclasses++;
}

/* Anchors of s's columns' classes, carried to those columns. */
static void carry(struct wscan *w, const struct block *b, unsigned s, const struct tops *t,
		  struct conj *out)
{
	struct node nodes[2 * WHERE_TOPS_MAX];
	uint8_t up[2 * WHERE_TOPS_MAX];
	unsigned n = classes(w, t, nodes, up);

	for (unsigned x = 0; x < n; x++) {
		int cls = -1;

		if (nodes[x].src != s)
			continue;    /* another source's column */
		for (unsigned a = 0; a < t->natoms && out->n < WHERE_CONJ_MAX; a++) {
			unsigned y = 0;
			struct wcond c = t->atoms[a];

			while (y < n && !same_node(w, &nodes[y], &t->atom_at[a]))
				y++;
			if (y == n || y == x || find(up, y) != find(up, x))
				continue; /* not in this class, or the column's own */
			if (cls < 0 && (cls = keep_class(w, b, nodes, up, n, find(up, x))) < 0)
				return;  /* no room */
			c.col = nodes[x].col;
			c.flags = SQL_WC_CARRIED;
			c.cls = (uint8_t)cls;
			out->c[out->n++] = c;
		}
	}
}

/* The conjunction that holds for every row of source s that matters. */
static void source_conj(struct wscan *w, const struct block *b, unsigned s, const bool *extended,
			struct conj *out)
{
	struct tops tops = { 0 };
	struct conj c;
	uint32_t segs;
	bool nullable = path(b, s, false, &segs);

	if (nullable && b->where >= 0 && rejects_null(w, b, s))
		nullable = path(b, s, true, &segs);
	if (!nullable && b->where >= 0)
		segs |= 1u << b->where;
	out->n = 0;
	for (unsigned g = 0; g < b->nsegs; g++) {
		if (!(segs & 1u << g))
			continue;    /* does not hold for s */
		eval_seg(w, b, g, s, &tops, &c);
		conj_and(out, &c);
	}
	if (nullable && b->where >= 0)
		anchors(w, b, extended, &tops);
	carry(w, b, s, &tops, out);
}

/* Keep source s's constraints as a reference (lits into the work pool). */
static void add_ref(struct wscan *w, const struct source *s, const struct conj *c)
{
	struct ref *r;

	if (w->nrefs == SQL_TABLES_MAX) {
		where_fail(w, "too many tables");
		return;              /* failed */
	}
	r = &w->refs[w->nrefs++];
	*r = (struct ref){ .schema = s->schema, .name = s->name, .has_schema = s->has_schema,
			   .cond = (uint16_t)w->nconds };
	for (unsigned i = 0; i < c->n && w->nconds < WHERE_WORK_CONDS; i++) {
		struct wcond k = c->c[i];

		if (k.nlits > WHERE_WORK_LITS - w->nlits)
			continue;    /* no room: this constraint is dropped */
		if (k.nlits)
			memcpy(&w->lits[w->nlits], k.lits, k.nlits * sizeof(*k.lits));
		k.lits = k.nlits ? &w->lits[w->nlits] : NULL;
		w->nlits += k.nlits;
		w->conds[w->nconds++] = k;
		r->ncond++;
	}
}

void where_block_done(struct wscan *w, const struct block *b)
{
	bool extended[WHERE_SOURCES_MAX];
	uint32_t segs;
	struct conj c;

	for (unsigned s = 0; s < b->nsrc; s++)
		extended[s] = path(b, s, false, &segs);
	for (unsigned s = 0; s < b->nsrc && !w->failed; s++) {
		if (b->src[s].kind != SRC_TABLE)
			continue;    /* a derived table: its own blocks had theirs */
		w->nscratch = 0;
		source_conj(w, b, s, extended, &c);
		add_ref(w, &b->src[s], &c);
	}
}
