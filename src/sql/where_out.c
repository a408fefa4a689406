/*
 * where_out.c: the references of each table OR-ed into the result (see
 * where.h), and the result as text.
 *
 * A table read several times (a self-join, a UNION, a subquery) has the OR
 * of its references' constraints: per column constrained in every one,
 * the union of the values. The references are grouped by name without
 * case; a group whose references are qualified differently (t and db.t)
 * has none, and so has a name that some CTE has (a reference to it may be
 * the CTE, and a CTE's rows are not a table's) and a table that the table
 * reader (tables.c) found more often than this reader did: a reference it
 * did not see may read any row.
 */
#include "sql/where_int.h"

#include <string.h>

static void load(const struct wscan *w, const struct ref *r, struct conj *c)
{
	c->n = r->ncond;
	memcpy(c->c, &w->conds[r->cond], r->ncond * sizeof(c->c[0]));
}

/* How often the table reader found a table of this name. */
static unsigned tables_count(const struct wscan *w, const struct sql_tables *tables,
			     const struct ref *r)
{
	unsigned n = 0;

	for (unsigned i = 0; i < tables->n; i++)
		n += where_same_text(tables->refs[i].name, tables->refs[i].name_len, w->s + r->name.pos,
			       r->name.len);
	return n;
}

static bool cte_named(const struct wscan *w, const struct ref *r)
{
	for (unsigned i = 0; i < w->nctes && !r->has_schema; i++)
		if (where_same(w, w->ctes[i], r->name))
			return true; /* it may be the CTE */
	return false;
}

static bool same_spelling(const struct wscan *w, const struct ref *a, const struct ref *b)
{
	return a->has_schema == b->has_schema && where_same(w, a->name, b->name) &&
	       (!a->has_schema || where_same(w, a->schema, b->schema));
}

/* out's index of class i, copied on first use; -1 when there is no room. */
static int out_class(const struct wscan *w, struct sql_where *out, int *map, unsigned i)
{
	if (map[i] < 0 && out->nclasses < SQL_WHERE_CLASSES_MAX) {
		out->classes[out->nclasses] = w->classes[i];
		map[i] = (int)out->nclasses++;
	}
	return map[i];
}

static void emit(const struct wscan *w, struct sql_where *out, const struct ref *r, unsigned refs,
		 const struct conj *c, int *map)
{
	struct sql_where_table *t = &out->tables[out->ntables++];

	*t = (struct sql_where_table){
		.schema = r->has_schema ? w->s + r->schema.pos : NULL, .schema_len = r->schema.len,
		.name = w->s + r->name.pos, .name_len = r->name.len,
		.quoted = (uint8_t)(r->schema.quoted | r->name.quoted << 1),
		.refs = (uint8_t)refs, .cond = (uint16_t)out->nconds };
	for (unsigned i = 0; i < c->n; i++) {
		const struct wcond *k = &c->c[i];
		int cls = k->flags & SQL_WC_CARRIED ? out_class(w, out, map, k->cls) : 0;

		if (out->nconds == SQL_WHERE_CONDS_MAX || t->nconds == SQL_WHERE_TABLE_CONDS)
			break;       /* no room: the rest is dropped */
		if (cls < 0 || k->nlits > SQL_WHERE_LITS_MAX - out->nlits)
			continue;    /* no room: this one is dropped */
		if (k->nlits)
			memcpy(&out->lits[out->nlits], k->lits, k->nlits * sizeof(*k->lits));
		out->conds[out->nconds++] = (struct sql_where_cond){
			.col = w->s + k->col.pos, .col_len = k->col.len, .col_quoted = k->col.quoted,
			.op = k->op, .flags = k->flags, .cls = (uint8_t)cls,
			.lit = (uint16_t)out->nlits, .nlits = k->nlits,
			.collate = k->collate.len ? w->s + k->collate.pos : NULL,
			.collate_len = k->collate.len };
		out->nlits += k->nlits;
		t->nconds++;
	}
	t->constrained = t->nconds > 0;
}

/* The references named like refs[first]: OR-ed, then one entry per
 * spelling (several only when they are qualified differently). */
static void group(struct wscan *w, const struct sql_tables *tables, unsigned first, bool *done,
		  struct sql_where *out, int *map)
{
	const struct ref *r0 = &w->refs[first];
	struct conj c, d;
	unsigned n = 0;
	bool alike = true;

	w->nscratch = 0;
	load(w, r0, &c);
	for (unsigned j = first; j < w->nrefs; j++) {
		if (!where_same(w, w->refs[j].name, r0->name))
			continue;    /* another table */
		n++;
		alike = alike && same_spelling(w, &w->refs[j], r0);
		if (j == first)
			continue;
		load(w, &w->refs[j], &d);
		where_conj_or(w, &c, &d);
	}
	if (!alike || cte_named(w, r0) || tables_count(w, tables, r0) != n)
		c.n = 0;
	for (unsigned j = first; j < w->nrefs; j++) {
		unsigned same = 0;

		if (done[j] || !where_same(w, w->refs[j].name, r0->name))
			continue;    /* emitted, or another table */
		for (unsigned k = j; k < w->nrefs; k++)
			if (same_spelling(w, &w->refs[k], &w->refs[j])) {
				done[k] = true;
				same++;
			}
		emit(w, out, &w->refs[j], same, &c, map);
	}
}

void where_finish(struct wscan *w, const struct sql_tables *tables, struct sql_where *out)
{
	bool done[SQL_TABLES_MAX] = { false };
	int map[SQL_WHERE_CLASSES_MAX];

	for (unsigned i = 0; i < SQL_WHERE_CLASSES_MAX; i++)
		map[i] = -1;
	for (unsigned i = 1; i < w->nrefs; i++) {   /* in the text's order */
		struct ref r = w->refs[i];
		unsigned j = i;

		for (; j > 0 && w->refs[j - 1].name.pos > r.name.pos; j--)
			w->refs[j] = w->refs[j - 1];
		w->refs[j] = r;
	}
	for (unsigned i = 0; i < w->nrefs; i++)
		if (!done[i])
			group(w, tables, i, done, out, map);
	out->flags = w->flags;
	out->ok = true;
}
