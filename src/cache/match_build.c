/*
 * match_build.c: a fill's row constraints from its WHERE constraints and
 * its tables' columns (see match_build.h).
 */
#include "cache/match_build.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cache/catalog.h"
#include "cache/vcols.h"
#include "sql/where.h"

/* A condition being made, before it is appended. */
struct cond_out {
	struct mc_cond c;
	uint8_t vals[MATCH_CONS_MAX];
	size_t vlen;
};

/* Where the constraints are written. */
struct blob {
	struct match_cons *out;
	size_t tab_at;      /* the table record being written */
	struct mc_tab tab;
	uint8_t icond_vals;
};

static struct inval_table *base_of(const char *schema, const char *sch, size_t slen, const char *name,
				   size_t nlen)
{
	if (!sch) {
		sch = schema;
		slen = schema ? strlen(schema) : 0;
	}
	if (!slen)
		return NULL;   /* no schema: nothing to resolve in */
	return catalog_base_table(sch, slen, name, nlen);
}

/* Binary protocol types (the protocol's field types). */
enum { PT_DECIMAL = 0, PT_TINY = 1, PT_SHORT = 2, PT_LONG = 3, PT_FLOAT = 4, PT_DOUBLE = 5, PT_NULL = 6,
       PT_LONGLONG = 8, PT_INT24 = 9, PT_YEAR = 13, PT_VARCHAR = 15, PT_NEWDECIMAL = 246,
       PT_BLOB = 252, PT_VAR_STRING = 253, PT_STRING = 254 };

/* A length-encoded integer at *p (before end): false when cut short or
 * over 8 bytes of length. */
static bool lenenc(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned n;

	if (*p >= end)
		return false;   /* cut short */
	n = **p < 0xfb ? 0 : **p == 0xfc ? 2 : **p == 0xfd ? 3 : **p == 0xfe ? 8 : 9;
	if (n == 9 || *p + 1 + n > end)
		return false;   /* NULL or an error marker, or cut short */
	*v = n ? 0 : **p;
	for (unsigned i = 0; i < n; i++)
		*v |= (uint64_t)(*p)[1 + i] << (8 * i);
	*p += 1 + n;
	return true;
}

/* The bytes of a parameter's value of type, at *p: advanced past it. */
static bool param_bytes(unsigned type, const uint8_t **p, const uint8_t *end, const uint8_t **v, size_t *n)
{
	static const uint8_t fixed[16] = { [PT_TINY] = 1, [PT_SHORT] = 2, [PT_LONG] = 4, [PT_FLOAT] = 4,
					   [PT_DOUBLE] = 8, [PT_LONGLONG] = 8, [PT_INT24] = 4, [PT_YEAR] = 2 };
	uint64_t len;

	if (type < 16 && fixed[type]) {
		len = fixed[type];
	} else if (!lenenc(p, end, &len)) {
		return false;   /* temporal types and strings are length-prefixed: cut short */
	}
	if (len > (uint64_t)(end - *p))
		return false;   /* past the packet */
	*v = *p;
	*n = (size_t)len;
	*p += len;
	return true;
}

/* Parameter i's value as a literal: 1 (kind and text set), 0 when NULL,
 * -1 when it is not one compared here (its condition is dropped). */
static int param_literal(const struct match_params *mp, unsigned i, unsigned *kind, char *text, size_t *len)
{
	const uint8_t *p, *v = NULL;
	size_t n = 0;
	unsigned type = 0;
	bool uns = false;

	if (i >= mp->n)
		return -1;   /* no value bound here */
	p = mp->values;
	if ((mp->nulls[i / 8] >> (i % 8)) & 1)
		return 0;
	for (unsigned k = 0; k <= i; k++) {   /* NULLs take no bytes */
		type = mp->types[2 * k];
		uns = mp->types[2 * k + 1] & 0x80;
		if (!((mp->nulls[k / 8] >> (k % 8)) & 1) && type != PT_NULL && !param_bytes(type, &p, mp->end, &v, &n))
			return -1;   /* a value that cannot be walked */
	}
	switch (type) {
	case PT_TINY: case PT_SHORT: case PT_LONG: case PT_INT24: case PT_LONGLONG: {
		uint64_t u = 0;

		for (size_t b = 0; b < n; b++)
			u |= (uint64_t)v[b] << (8 * b);
		if (!uns && n < 8 && (u >> (8 * n - 1)) & 1)
			u |= ~0ull << (8 * n);   /* sign-extend */
		*len = (size_t)snprintf(text, MATCH_VAL_MAX + 1, uns ? "%llu" : "%lld", (unsigned long long)u);
		*kind = SQL_WL_INT;
		return 1;
	}
	case PT_NEWDECIMAL: case PT_DECIMAL: case PT_STRING: case PT_VAR_STRING: case PT_VARCHAR: case PT_BLOB:
		if (n > MATCH_VAL_MAX)
			return -1;   /* too long to keep */
		memcpy(text, v, n);
		*len = n;
		*kind = type == PT_NEWDECIMAL || type == PT_DECIMAL ? SQL_WL_DECIMAL : SQL_WL_STRING;
		return 1;
	default:
		return -1;   /* FLOAT, DOUBLE, temporal types: not compared */
	}
}

/* Has the value (canonical) been added to the condition already? */
static bool has_value(const struct cond_out *o, const uint8_t *v, size_t n)
{
	size_t at = 0;

	for (unsigned j = 0; j < o->c.nvals; j++) {
		if (o->vals[at] == n && memcmp(o->vals + at + 1, v, n) == 0)
			return true;
		at += 1 + o->vals[at];
	}
	return false;
}

/* A literal's kind and text (a placeholder's bound value): 1, 0 for a
 * NULL placeholder, -1 when not compared (the condition is dropped). */
static int literal_text(const struct sql_where_lit *l, const struct match_params *mp, unsigned *kind,
			char *text, size_t *tl)
{
	if (l->kind == SQL_WL_PARAM)
		return mp ? param_literal(mp, l->param, kind, text, tl) : -1;   /* -1: a text statement */
	if (l->kind == SQL_WL_STRING && l->charset)
		return -1;   /* an introducer: another character set's bytes */
	*kind = l->kind;
	*tl = sql_where_lit_text(l, text, MATCH_VAL_MAX + 1);
	return *tl == (size_t)-1 ? -1 : 1;   /* -1: too long to keep */
}

/* The literals of an `=` or IN into o: false when one cannot be compared
 * exactly (the condition is dropped). */
static bool add_literals(const struct sql_where *w, const struct sql_where_cond *wc,
			 const struct match_params *mp, struct cond_out *o)
{
	struct mc_class k = mc_class_of(&o->c);

	for (unsigned i = 0; i < wc->nlits; i++) {
		const struct sql_where_lit *l = &w->lits[wc->lit + i];
		char text[MATCH_VAL_MAX + 1];
		uint8_t canon[MATCH_VAL_MAX + 1];
		size_t tl = 0, cl = 0;
		unsigned kind = 0;
		int got = literal_text(l, mp, &kind, text, &tl);
		enum mc_canon r;

		if (got < 0)
			return false;   /* not known, or not compared */
		if (got == 0 && (wc->flags & SQL_WC_NULL_SAFE) && wc->nlits == 1) {
			o->c.op = MOP_NULL;   /* `<=> ?` with NULL bound: IS NULL */
			return true;
		}
		r = got == 0 ? MC_NEVER : match_canon_literal(&k, kind, text, tl, canon, &cl);
		if (r == MC_UNSURE)
			return false;   /* not compared exactly with the column */
		if (r == MC_NEVER || has_value(o, canon, cl))
			continue;       /* NULL in `=` or IN matches nothing */
		if (o->c.nvals == UINT8_MAX || o->vlen + 1 + cl > sizeof(o->vals))
			return false;   /* more values than a condition keeps */
		o->vals[o->vlen++] = (uint8_t)cl;
		memcpy(o->vals + o->vlen, canon, cl);
		o->vlen += cl;
		o->c.nvals++;
	}
	return true;
}

/* Every column of a carried value's class: the same class as col's? */
static bool class_agrees(const struct sql_where_class *k, const char *schema, const struct tcol *col,
			 uint32_t gen)
{
	for (unsigned i = 0; i < k->n; i++) {
		const struct sql_where_col *m = &k->m[i];
		struct inval_table *t = base_of(schema, m->schema, m->schema_len, m->table, m->table_len);
		struct tcols *tc = t ? tcols_get(t, gen) : NULL;
		int at = tc ? tcols_find(tc, m->col, m->col_len) : -1;
		bool same = at >= 0 && tc->cols[at].kind == col->kind && tc->cols[at].coll == col->coll &&
			    tc->cols[at].type == col->type && tc->cols[at].is_unsigned == col->is_unsigned;

		tcols_put(tc);
		if (!same)
			return false;   /* a column of another type, or not known */
	}
	return true;
}

enum cond_result { C_KEEP, C_DROP, C_NONE };

/* One WHERE condition as an entry's: C_KEEP (o filled), C_DROP (it says
 * nothing this node can use), C_NONE (the table gets no constraint). */
static enum cond_result make_cond(const struct sql_where *w, const struct sql_where_cond *wc,
				  const struct tcols *tc, const char *schema, uint32_t gen,
				  const struct match_params *mp, struct cond_out *o)
{
	int at = tcols_find(tc, wc->col, wc->col_len);
	const struct tcol *col;

	if (at < 0)   /* an unqualified name in a subquery is the outer query's */
		return wc->flags & SQL_WC_UNQUALIFIED ? C_DROP : C_NONE;
	col = &tc->cols[at];
	if (col->kind == TK_OTHER || col->type == 0)
		return C_DROP;   /* a type whose values are not compared here */
	memset(&o->c, 0, sizeof(o->c));
	o->vlen = 0;
	o->c.col = (uint16_t)at;
	o->c.kind = col->kind;
	o->c.coll = col->coll;
	o->c.type = col->type;
	o->c.fixlen = col->fixlen;
	o->c.flags = (uint8_t)((col->is_unsigned ? MCF_UNSIGNED : 0) | (col->generated ? MCF_GENERATED : 0));
	if (wc->collate) {
		char name[64];
		size_t n = wc->collate_len < sizeof(name) - 1 ? wc->collate_len : 0;

		if (n == 0 || col->kind != TK_CHAR)
			return C_DROP;   /* a collation this node cannot name */
		memcpy(name, wc->collate, n);
		name[n] = 0;
		o->c.coll = (uint8_t)tcoll_of(name);
	}
	if ((wc->flags & SQL_WC_CARRIED) && !class_agrees(&w->classes[wc->cls], schema, col, gen))
		return C_DROP;
	if (wc->op == SQL_WO_IS_NULL) {
		o->c.op = MOP_NULL;
		return C_KEEP;
	}
	o->c.op = MOP_IN;
	return add_literals(w, wc, mp, o) ? C_KEEP : C_DROP;
}

/* Append bytes to the blob; false when it is full. */
static bool put_bytes(struct blob *b, const void *p, size_t n)
{
	if (b->out->len + n > MATCH_CONS_MAX)
		return false;   /* more than an entry keeps */
	memcpy(b->out->buf + b->out->len, p, n);
	b->out->len = (uint16_t)(b->out->len + n);
	return true;
}

static bool put_cond(struct blob *b, struct cond_out *o)
{
	unsigned n = o->c.op == MOP_NULL ? 1 : o->c.nvals;

	o->c.len = (uint16_t)(sizeof(o->c) + o->vlen);
	if (!put_bytes(b, &o->c, sizeof(o->c)) || !put_bytes(b, o->vals, o->vlen))
		return false;   /* the blob is full */
	/* the index finds the entry by its condition of fewest values */
	if (n > 0 && n <= MATCH_IN_MAX && (b->icond_vals == 0 || n < b->icond_vals)) {
		b->tab.icond = b->tab.nconds;
		b->icond_vals = (uint8_t)n;
	}
	b->tab.nconds++;
	return true;
}

/* The conditions of one table; false when it gets no constraint (the
 * blob is then as before). */
static bool table_conds(struct blob *b, const struct sql_where *w, const struct sql_where_table *wt,
			const struct tcols *tc, const char *schema, uint32_t gen, const struct match_params *mp)
{
	static __thread struct cond_out o;
	bool never = false;

	for (unsigned k = 0; k < wt->nconds; k++) {
		enum cond_result r = make_cond(w, &w->conds[wt->cond + k], tc, schema, gen, mp, &o);

		if (r == C_NONE || (r == C_KEEP && !put_cond(b, &o)))
			return false;   /* a column it lacks, or the blob is full */
		never |= r == C_KEEP && o.c.op == MOP_IN && o.c.nvals == 0;
	}
	if (never) {
		b->tab.icond = MATCH_NO_COND;
		b->icond_vals = 0;
	}
	return b->tab.nconds > 0 && (never || b->icond_vals > 0);
}

/* The one WHERE table naming dep t (several, or none: NULL). */
static const struct sql_where_table *where_table_of(const struct sql_where *w, struct inval_table *t,
						    const char *schema)
{
	const struct sql_where_table *found = NULL;

	for (unsigned i = 0; i < w->ntables; i++) {
		const struct sql_where_table *wt = &w->tables[i];

		if (base_of(schema, wt->schema, wt->schema_len, wt->name, wt->name_len) != t)
			continue;
		if (found)
			return NULL;   /* two spellings of it: their OR is not worked out */
		found = wt;
	}
	return found && found->constrained ? found : NULL;
}

/* The constraints on dep i, appended; false when none. */
static bool build_table(struct blob *b, const struct sql_where *w, const struct fill_deps *deps,
			unsigned i, const char *schema, uint32_t gen, const struct match_params *mp)
{
	const struct sql_where_table *wt = where_table_of(w, deps->d[i].t, schema);
	struct tcols *tc = wt ? tcols_get(deps->d[i].t, gen) : NULL;
	uint16_t start = b->out->len;
	bool ok;

	if (!tc)
		return false;   /* no condition on it, or its definition is not current */
	memset(&b->tab, 0, sizeof(b->tab));
	b->tab.icond = MATCH_NO_COND;
	b->tab.dep = (uint8_t)i;
	b->tab.ncols = (uint16_t)tc->ncols;
	b->tab.name_hash = tc->name_hash;
	b->icond_vals = 0;
	b->tab_at = start;
	ok = tc->ncols <= UINT16_MAX && put_bytes(b, &b->tab, sizeof(b->tab)) &&
	     table_conds(b, w, wt, tc, schema, gen, mp);
	tcols_put(tc);
	if (!ok) {
		b->out->len = start;   /* none for this table */
		return false;
	}
	b->tab.len = (uint16_t)(b->out->len - start);
	memcpy(b->out->buf + start, &b->tab, sizeof(b->tab));
	b->out->npost = (uint8_t)(b->out->npost + b->icond_vals);
	return true;
}

/* Does every table reference name a base table? (A view's tables get no
 * constraint, and one read through a view and by name too neither.) */
static bool all_base_tables(const struct sql_tables *t, const char *schema)
{
	for (unsigned i = 0; i < t->n; i++)
		if (!base_of(schema, t->refs[i].schema, t->refs[i].schema_len, t->refs[i].name,
			     t->refs[i].name_len))
			return false;
	return true;
}

void match_build(const char *q, size_t n, const struct sql_tables *t, const char *schema,
		 const struct match_params *params, struct fill_deps *deps)
{
	static __thread struct sql_where w;
	struct blob b = { .out = &deps->cons };
	uint32_t gen = vcols_generation();

	memset(&deps->cons, 0, offsetof(struct match_cons, buf));
	if (deps->n > INVAL_MAX_DEPS || !all_base_tables(t, schema))
		return;   /* a view: its tables are read whole */
	sql_where(q, n, t, &w);
	if (!w.ok || (w.flags & SQL_WHERE_DQUOTE))
		return;   /* nothing proven, or ANSI_QUOTES may make a literal a name */
	for (unsigned i = 0; i < deps->n && b.out->npost < 255 - MATCH_IN_MAX; i++)
		if (build_table(&b, &w, deps, i, schema, gen, params)) {
			deps->cons.ntab++;
			deps->cons.mask |= 1u << i;
		}
}
