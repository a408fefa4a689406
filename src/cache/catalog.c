/*
 * catalog.c: the upstream's tables, views, cascading foreign keys and
 * trigger writes (see catalog.h): the snapshot, its construction from rows,
 * lookups, and the reader thread.
 *
 * A snapshot is a hash table of objects keyed by (schema, name), exact
 * bytes, or lower-cased when the server has lower_case_table_names != 0.
 * After the rows are in:
 *   - each view is expanded once: its definition is read with the table
 *     extractor and the classifier; its dependencies are the view itself and
 *     the expansion of every name it reads (views of views recursively), or
 *     it gets the reason it cannot be cached;
 *   - a sequence (SHOW FULL TABLES says SEQUENCE) is never cached: NEXT
 *     VALUE changes it, and so does a column whose DEFAULT is NEXT VALUE FOR
 *     it, in an INSERT or even a SELECT DEFAULT(col), which no text shows;
 *   - each table gets the closure of what a write to it also changes:
 *     children through foreign keys with CASCADE / SET NULL / SET DEFAULT
 *     actions, and tables written by its triggers, transitively.
 * Reasons with details are sql/reasons.h's records (kept until exit), so a
 * shape may hold one after the snapshot that produced it is gone.
 */
#include "cache/catalog.h"

#include "cache/catalog_query.h"
#include "cache/registry.h"
#include "cache/vcols.h"

#include <mysql.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "base/log.h"
#include "sql/bodies.h"
#include "sql/classify.h"
#include "sql/spooky.h"
#include "sql/tokenizer.h"
#include "upstream/upstream.h"

#define RELOAD_EVERY_S 60
#define MAX_VIEW_DEPTH 16
#define MAX_ALSO 64

enum cat_kind { CAT_TABLE = 1, CAT_VIEW, CAT_ROUTINE };

struct cat_obj;

struct edge {
	struct edge *next;
	struct cat_obj *obj;      /* the table written, when the catalog knows it */
	struct inval_table *t;
	bool fk;                  /* a cascading foreign key (a trigger's write: false) */
};

struct cat_obj {
	struct cat_obj *next;
	struct cat_obj *next_self;  /* the chain of its inval_table's bucket (by_self) */
	uint64_t hash;
	enum cat_kind kind;
	char *schema, *name;
	size_t slen, nlen;
	struct inval_table *self;
	const char *def;          /* view: its definition (owned by the rows) */
	const struct reason *reason; /* view, sequence: why a read of it cannot be cached;
				   * NULL: it can */
	struct inval_table **deps;/* view: itself and what it reads; table: what a write also changes */
	unsigned ndeps;
	struct edge *edges;       /* table: FK children and trigger targets */
	bool opaque;              /* table: a trigger's writes are not all known;
				   * routine: it may create temporary tables */
	bool temps;               /* table: a write to it may run a routine (through
				   * triggers) that creates temporary tables */
	int state;                /* expansion: 0 not yet, 1 running, 2 done */
};

struct snapshot {
	struct cat_obj **buckets;
	struct cat_obj **by_self; /* tables and views again, by their inval_table: its key
				   * is folded, so on a server with case-sensitive names
				   * its folded name would not find `Items` in buckets */
	size_t nbuckets, count;
	bool fold;                /* lower_case_table_names != 0 */
	bool any_temps;           /* some routine or trigger may create temporary tables */
};

static pthread_rwlock_t snap_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct snapshot *current;
static atomic_uint requested, loaded, loads;
static atomic_uint load_want;   /* requested when the reader began reading (0: none) */
static _Atomic bool have_snapshot;

/* ---- snapshot ------------------------------------------------------------- */

static uint64_t key_hash(const struct snapshot *s, const char *schema, size_t slen,
			 const char *name, size_t nlen)
{
	char buf[INVAL_MAX_NAME + 2];
	size_t o = 0;

	if (slen + nlen > INVAL_MAX_NAME)
		return 0;
	for (size_t i = 0; i < slen; i++)
		buf[o++] = s->fold && schema[i] >= 'A' && schema[i] <= 'Z' ? (char)(schema[i] + 32) : schema[i];
	buf[o++] = 0;
	for (size_t i = 0; i < nlen; i++)
		buf[o++] = s->fold && name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] + 32) : name[i];
	return spooky_hash64(buf, o, 0xca7a1095);
}

static bool same(const struct snapshot *s, const char *a, size_t alen, const char *b, size_t blen)
{
	if (alen != blen)
		return false;
	return s->fold ? strncasecmp(a, b, alen) == 0 : memcmp(a, b, alen) == 0;
}

static struct cat_obj *snap_find_kind(const struct snapshot *s, bool routine, const char *schema,
				      size_t slen, const char *name, size_t nlen)
{
	uint64_t h = key_hash(s, schema, slen, name, nlen);

	for (struct cat_obj *o = s->buckets[h & (s->nbuckets - 1)]; o; o = o->next)
		if (o->hash == h && (o->kind == CAT_ROUTINE) == routine &&
		    same(s, o->schema, o->slen, schema, slen) && same(s, o->name, o->nlen, name, nlen))
			return o;
	return NULL;
}

/* A table or view. */
static struct cat_obj *snap_find(const struct snapshot *s, const char *schema, size_t slen,
				 const char *name, size_t nlen)
{
	return snap_find_kind(s, false, schema, slen, name, nlen);
}

static void snap_free(struct snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nbuckets; i++) {
		struct cat_obj *o = s->buckets[i], *next;

		for (; o; o = next) {
			next = o->next;
			while (o->edges) {
				struct edge *e = o->edges;

				o->edges = e->next;
				free(e);
			}
			free(o->deps);
			free(o->schema);
			free(o->name);
			free(o);
		}
	}
	free(s->buckets);
	free(s->by_self);
	free(s);
}

static struct snapshot *snap_new(size_t rows, bool fold)
{
	struct snapshot *s = calloc(1, sizeof(*s));
	size_t n = 64;

	if (!s)
		return NULL;
	while (n < rows * 2)
		n *= 2;
	s->buckets = calloc(n, sizeof(*s->buckets));
	s->by_self = calloc(n, sizeof(*s->by_self));
	if (!s->buckets || !s->by_self) {
		free(s->buckets);
		free(s->by_self);
		free(s);
		return NULL;
	}
	s->nbuckets = n;
	s->fold = fold;
	return s;
}

static size_t self_bucket(const struct snapshot *s, const struct inval_table *t)
{
	return (size_t)(t->hash >> 7) & (s->nbuckets - 1);   /* the folded name's hash */
}

static struct cat_obj *snap_add(struct snapshot *s, enum cat_kind kind, const char *schema,
				const char *name)
{
	size_t slen = strlen(schema), nlen = strlen(name);
	struct cat_obj *o = snap_find_kind(s, kind == CAT_ROUTINE, schema, slen, name, nlen);

	if (o)
		return o;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->schema = strdup(schema);
	o->name = strdup(name);
	o->self = inval_table_get(schema, slen, name, nlen);
	if (!o->schema || !o->name || !o->self) {
		free(o->schema);
		free(o->name);
		free(o);
		return NULL;
	}
	o->kind = kind;
	o->slen = slen;
	o->nlen = nlen;
	o->hash = key_hash(s, schema, slen, name, nlen);
	o->next = s->buckets[o->hash & (s->nbuckets - 1)];
	s->buckets[o->hash & (s->nbuckets - 1)] = o;
	if (kind != CAT_ROUTINE) {
		size_t b = self_bucket(s, o->self);

		o->next_self = s->by_self[b];
		s->by_self[b] = o;
	}
	s->count++;
	return o;
}

/* The table or view whose inval_table is t. NULL: none, or two (`Foo`
 * and `foo` on a server with case-sensitive names share one: *twice). */
static struct cat_obj *snap_find_self(const struct snapshot *s, const struct inval_table *t, bool *twice)
{
	struct cat_obj *found = NULL;

	*twice = false;
	for (struct cat_obj *o = s->by_self[self_bucket(s, t)]; o; o = o->next_self) {
		if (o->self != t)
			continue;
		if (found) {
			*twice = true;
			return NULL;   /* which one is meant, t does not tell */
		}
		found = o;
	}
	return found;
}

static bool dep_add(struct inval_table ***arr, unsigned *n, unsigned *cap, struct inval_table *t)
{
	for (unsigned i = 0; i < *n; i++)
		if ((*arr)[i] == t)
			return true;
	if (*n == *cap) {
		unsigned c = *cap ? *cap * 2 : 8;
		struct inval_table **a = realloc(*arr, c * sizeof(*a));

		if (!a)
			return false;
		*arr = a;
		*cap = c;
	}
	(*arr)[(*n)++] = t;
	return true;
}

/* ---- views ----------------------------------------------------------------- */

static void expand_view(struct snapshot *s, struct cat_obj *v, int depth);

/* Is the text of a view definition cacheable? NULL, or the classifier's reason. */
static const struct reason *definition_reason(const char *def)
{
	size_t len = strlen(def), cap = len * 2 + SQL_TOK_MIN_TEXT_CAP;
	struct sql_tok_result *r = malloc(sizeof(*r));
	char *text = malloc(cap);
	const struct reason *reason = NULL;

	if (!r || !text) {
		free(r);
		free(text);
		return reason_of(WHY_OUT_OF_MEMORY);
	}
	r->text = text;
	r->text_cap = cap;
	if (sql_tokenize(def, len, r) < 0 || !r->ok || (r->flags & (SQL_TOK_TEXT_TRUNCATED | SQL_TOK_HIDDEN_SQL)))
		reason = reason_of(WHY_UNREADABLE_DEFINITION);
	else
		reason = sql_skip_reason(r->text, r->text_len);
	free(text);
	free(r);
	return reason;
}

/* Add what a name read by a view's definition stands for (unqualified:
 * the view's schema). */
static bool view_name(struct snapshot *s, struct cat_obj *v, const struct sql_table_ref *ref,
		      unsigned *cap, int depth)
{
	const char *schema = ref->schema ? ref->schema : v->schema;
	size_t slen = ref->schema ? ref->schema_len : v->slen;
	struct cat_obj *o = snap_find(s, schema, slen, ref->name, ref->name_len);

	if (!o) {
		v->reason = reason_detail(WHY_VIEW, "view %s.%s: reads %.*s.%.*s, which is no known table", v->schema,
				   v->name, (int)slen, schema, (int)ref->name_len, ref->name);
		return false;
	}
	if (!dep_add(&v->deps, &v->ndeps, cap, o->self))
		return false;
	if (o->kind == CAT_TABLE && o->reason) {
		v->reason = reason_detail(WHY_VIEW, "view %s.%s: %s", v->schema, v->name, o->reason->text);
		return false;
	}
	if (o->kind == CAT_TABLE)
		return true;
	expand_view(s, o, depth + 1);
	if (o->reason) {
		v->reason = o->reason;
		return false;
	}
	for (unsigned i = 0; i < o->ndeps; i++)
		if (!dep_add(&v->deps, &v->ndeps, cap, o->deps[i]))
			return false;
	return true;
}

static void expand_view(struct snapshot *s, struct cat_obj *v, int depth)
{
	struct sql_tables t;
	unsigned cap = 0;
	const struct reason *r;

	if (v->state == 2)
		return;
	if (v->state == 1 || depth > MAX_VIEW_DEPTH) {
		v->reason = reason_detail(WHY_VIEW, "view %s.%s: nested too deeply", v->schema, v->name);
		return;
	}
	v->state = 1;
	if (!dep_add(&v->deps, &v->ndeps, &cap, v->self)) {
		v->reason = reason_of(WHY_OUT_OF_MEMORY);
	} else if (!v->def || !v->def[0]) {
		v->reason = reason_detail(WHY_VIEW, "view %s.%s: its definition is not readable", v->schema,
					  v->name);
	} else if ((r = definition_reason(v->def))) {
		v->reason = reason_detail(WHY_VIEW, "view %s.%s: %s", v->schema, v->name, r->text);
	} else {
		sql_tables(v->def, strlen(v->def), &t);
		if ((t.flags & (SQL_TABLES_UNKNOWN | SQL_TABLES_ROUTINE)) || t.kind != SQL_STMT_READ)
			v->reason = reason_detail(WHY_VIEW, "view %s.%s: cannot determine its tables", v->schema,
						  v->name);
		for (unsigned i = 0; i < t.n && !v->reason; i++)
			if (!view_name(s, v, &t.refs[i], &cap, depth))
				break;
	}
	v->state = 2;
}

/* ---- writes: foreign keys and triggers ------------------------------------ */

static bool add_edge(struct cat_obj *from, struct cat_obj *to, struct inval_table *t, bool fk)
{
	struct edge *e = calloc(1, sizeof(*e));

	if (!e)
		return false;
	e->fk = fk;
	e->obj = to;
	e->t = to ? to->self : t;
	e->next = from->edges;
	from->edges = e;
	return true;
}

static bool cascading(const char *rule)
{
	return rule && (strncmp(rule, "CASCADE", 7) == 0 || strncmp(rule, "SET", 3) == 0);
}

/* 'F' row: table schema.name references a.b with actions c. */
static void add_fk(struct snapshot *s, const struct catalog_row *r)
{
	const char *comma = r->c ? strchr(r->c, ',') : NULL;
	struct cat_obj *parent, *child;

	if (!r->a || !r->b || !(cascading(r->c) || (comma && cascading(comma + 1))))
		return;
	parent = snap_find(s, r->a, strlen(r->a), r->b, strlen(r->b));
	child = snap_find(s, r->schema, strlen(r->schema), r->name, strlen(r->name));
	if (parent && child && parent->kind == CAT_TABLE)
		add_edge(parent, child, NULL, true);
}

/* One statement of a trigger body, starting at a DML keyword. */
static void trigger_statement(struct snapshot *s, struct cat_obj *tbl, const char *trg_schema,
			      const char *p, size_t n)
{
	struct sql_tables t;

	sql_tables(p, n, &t);
	if (t.flags & (SQL_TABLES_UNKNOWN | SQL_TABLES_ROUTINE) || t.kind == SQL_STMT_OPAQUE) {
		tbl->opaque = true;
		return;
	}
	for (unsigned i = 0; i < t.n; i++) {
		const struct sql_table_ref *ref = &t.refs[i];
		const char *schema = ref->schema ? ref->schema : trg_schema;
		size_t slen = ref->schema ? ref->schema_len : strlen(trg_schema);
		struct cat_obj *o;
		struct inval_table *it;

		if (!(ref->flags & SQL_TREF_WRITE))
			continue;
		o = snap_find(s, schema, slen, ref->name, ref->name_len);
		it = o ? NULL : inval_table_get(schema, slen, ref->name, ref->name_len);
		if ((!o && !it) || !add_edge(tbl, o, it, false))
			tbl->opaque = true;
	}
}

/* A trigger's statement that writes (sql/bodies.h), for its table. */
struct trigger_read {
	struct snapshot *s;
	struct cat_obj *tbl;
	const char *schema;
};

static void trigger_dml(void *arg, const char *p, size_t n)
{
	struct trigger_read *t = arg;

	trigger_statement(t->s, t->tbl, t->schema, p, n);
}

/* 'R' row: a trigger on schema.name with body b. Every INSERT, REPLACE,
 * UPDATE, DELETE in the body up to its ';' is read; CALL or a stored
 * function makes the trigger's writes unknown. */
static void add_trigger(struct snapshot *s, const struct catalog_row *r)
{
	struct cat_obj *tbl = snap_find(s, r->schema, strlen(r->schema), r->name, strlen(r->name));
	struct trigger_read t = { .s = s, .tbl = tbl, .schema = r->a ? r->a : r->schema };

	if (!tbl || tbl->kind != CAT_TABLE)
		return;
	if (!sql_trigger_writes(r->b, trigger_dml, &t))
		tbl->opaque = true;
}

/* May the routine (schema, name) create temporary tables? call: named by
 * CALL (then one the catalog does not have may: it may be newer); else a
 * "name (" that is no routine the catalog has is no call (a keyword). */
static bool routine_temps(const struct snapshot *s, const struct sql_tok *schema, const char *dflt,
			  const struct sql_tok *name, bool call)
{
	const struct cat_obj *o = schema ? snap_find_kind(s, true, schema->p, schema->len, name->p, name->len)
					 : snap_find_kind(s, true, dflt, strlen(dflt), name->p, name->len);

	return o ? o->opaque : call;
}

/* What a trigger's body calls (sql/bodies.h): true once it may create
 * temporary tables. */
static bool trigger_call(void *arg, const struct sql_tok *schema, const struct sql_tok *name, bool call)
{
	struct trigger_read *t = arg;

	/* TEMPORARY, PREPARE, EXECUTE; or a routine that may */
	t->tbl->temps = !name || routine_temps(t->s, schema, t->schema, name, call);
	return t->tbl->temps;
}

/* 'R' row, once every routine is in: may the trigger create temporary
 * tables in the session whose write fires it (by itself, or through a
 * routine it calls)? */
static void trigger_temps(struct snapshot *s, const struct catalog_row *r)
{
	struct cat_obj *tbl = snap_find(s, r->schema, strlen(r->schema), r->name, strlen(r->name));
	struct trigger_read t = { .s = s, .tbl = tbl, .schema = r->a ? r->a : r->schema };

	if (!tbl || tbl->kind != CAT_TABLE || tbl->temps)
		return;
	sql_trigger_calls(r->b, trigger_call, &t);
	if (tbl->temps)
		s->any_temps = true;
}

/* 'P' row: a stored routine and its body. */
static void add_routine(struct snapshot *s, const struct catalog_row *r)
{
	struct cat_obj *o = snap_add(s, CAT_ROUTINE, r->schema, r->name);

	if (o) {
		o->opaque = sql_body_may_call_or_create(r->b);
		if (o->opaque)
			s->any_temps = true;
	}
}

/* The closure of one table's edges (breadth first, bounded). */
static void close_table(struct cat_obj *tbl)
{
	struct cat_obj *queue[MAX_ALSO + 1];
	unsigned qh = 0, qt = 0, cap = 0;

	queue[qt++] = tbl;
	while (qh < qt) {
		struct cat_obj *o = queue[qh++];

		if (o->opaque)
			tbl->opaque = true;
		if (o->temps)
			tbl->temps = true;
		for (struct edge *e = o->edges; e; e = e->next) {
			unsigned before = tbl->ndeps;

			if (e->t == tbl->self)
				continue;
			if (tbl->ndeps >= MAX_ALSO || !dep_add(&tbl->deps, &tbl->ndeps, &cap, e->t)) {
				tbl->opaque = true;
				return;
			}
			if (tbl->ndeps > before && e->obj && qt <= MAX_ALSO)
				queue[qt++] = e->obj;
		}
	}
}

/* ---- building -------------------------------------------------------------- */

static void snap_finish(struct snapshot *s)
{
	for (size_t i = 0; i < s->nbuckets; i++)
		for (struct cat_obj *o = s->buckets[i]; o; o = o->next) {
			if (o->kind == CAT_VIEW)
				expand_view(s, o, 0);
			else if (o->kind == CAT_TABLE)
				close_table(o);
		}
}

int catalog_load_rows(const struct catalog_row *rows, size_t n, bool fold)
{
	struct snapshot *s = snap_new(n, fold), *old;
	uint32_t this_load = atomic_load(&loads) + 1;   /* loads happen on one thread */
	unsigned want;
	int rc = 0;

	if (!s)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct cat_obj *o;

		if (rows[i].kind != 'T' && rows[i].kind != 'V')
			continue;
		o = snap_add(s, rows[i].kind == 'T' ? CAT_TABLE : CAT_VIEW, rows[i].schema, rows[i].name);
		if (o)   /* a table's or a view's name as the server spells it */
			inval_table_spell(o->self, rows[i].schema, rows[i].name, this_load);
		if (!o)
			rc = -1;
		else if (rows[i].kind == 'V')
			o->def = rows[i].a;
		else if (rows[i].a && strcmp(rows[i].a, "SEQUENCE") == 0)
			o->reason = reason_detail(WHY_SEQUENCE, "%s.%s is a sequence: every NEXT VALUE changes "
						  "it, a column's DEFAULT too", o->schema, o->name);
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (rows[i].kind == 'F')
			add_fk(s, &rows[i]);
		else if (rows[i].kind == 'R')
			add_trigger(s, &rows[i]);
		else if (rows[i].kind == 'P')
			add_routine(s, &rows[i]);
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		if (rows[i].kind == 'R')
			trigger_temps(s, &rows[i]);
	if (rc == 0)
		snap_finish(s);
	for (size_t i = 0; i < s->nbuckets; i++)
		for (struct cat_obj *o = s->buckets[i]; o; o = o->next)
			o->def = NULL;   /* the rows belong to the caller */
	if (rc) {
		snap_free(s);
		return -1;
	}
	pthread_rwlock_wrlock(&snap_lock);
	old = current;
	current = s;
	pthread_rwlock_unlock(&snap_lock);
	snap_free(old);
	vcols_forget_all(); /* a DDL may have changed a table's generated columns */
	atomic_store(&have_snapshot, true);
	atomic_fetch_add(&loads, 1);
	/* the DDL requests made before the rows were read are now served */
	want = atomic_exchange(&load_want, 0);
	atomic_store(&loaded, want ? want : atomic_load(&requested));
	return 0;
}

void catalog_free(void)
{
	pthread_rwlock_wrlock(&snap_lock);
	snap_free(current);
	current = NULL;
	atomic_store(&have_snapshot, false);
	pthread_rwlock_unlock(&snap_lock);
}

/* ---- lookups --------------------------------------------------------------- */

#define HINT_EVERY_S 2
static atomic_bool hinted;
static _Atomic int64_t last_hint;
static void wake_reader(void);
static void ensure_reader(void);

/* A name the catalog does not know: read it again soon (at most every
 * HINT_EVERY_S), without holding reads back meanwhile. */
static void hint_reload(void)
{
	int64_t now = (int64_t)time(NULL), last = atomic_load(&last_hint);

	if (now - last < HINT_EVERY_S || !atomic_compare_exchange_strong(&last_hint, &last, now))
		return;
	atomic_store(&hinted, true);
	wake_reader();
}

bool catalog_ready(void)
{
	return atomic_load(&have_snapshot) && atomic_load(&loaded) == atomic_load(&requested);
}

static bool push_dep(struct inval_table **out, unsigned cap, unsigned *n, struct inval_table *t)
{
	for (unsigned i = 0; i < *n; i++)
		if (out[i] == t)
			return true;
	if (*n >= cap)
		return false;
	out[(*n)++] = t;
	return true;
}

/* A reference's schema: its own, or the session's. */
static bool ref_schema(const struct sql_table_ref *r, const char *schema, const char **s, size_t *slen)
{
	if (r->schema) {
		*s = r->schema;
		*slen = r->schema_len;
	} else {
		*s = schema;
		*slen = schema ? strlen(schema) : 0;
	}
	return *slen > 0;
}

/* A digit run at p[*i]: past it; false if none. */
static bool digits(const char *p, size_t n, size_t *i)
{
	size_t start = *i;

	while (*i < n && p[*i] >= '0' && p[*i] <= '9')
		(*i)++;
	return *i > start;
}

static bool word_at(const char *p, size_t n, size_t *i, const char *w)
{
	size_t k = strlen(w);

	if (*i + k > n || strncasecmp(p + *i, w, k) != 0)
		return false;
	*i += k;
	return true;
}

/* seq_<from>_to_<to>[_step_<n>]: the SEQUENCE engine's virtual tables, in
 * every schema, never in information_schema. */
static bool sequence_engine_table(const char *p, size_t n)
{
	size_t i = 0;

	if (!word_at(p, n, &i, "seq_") || !digits(p, n, &i) || !word_at(p, n, &i, "_to_") ||
	    !digits(p, n, &i))
		return false;
	if (i < n && (!word_at(p, n, &i, "_step_") || !digits(p, n, &i)))
		return false;
	return i == n;
}

/* A quoted name's bytes are used as they are: a doubled backtick inside one
 * is rare enough to be "no known table" (not cached), never a wrong match. */
static bool resolve_ref(const struct snapshot *s, const struct sql_table_ref *r, const char *schema,
			struct inval_table **out, unsigned cap, unsigned *n,
			const struct reason **reason, bool *retry)
{
	const char *sch;
	size_t slen;
	struct cat_obj *o;

	if (!ref_schema(r, schema, &sch, &slen)) {
		*reason = reason_of(WHY_NO_DATABASE);
		return false;
	}
	o = snap_find(s, sch, slen, r->name, r->name_len);
	if (!o && sequence_engine_table(r->name, r->name_len))
		return true;   /* computed rows that never change: no dependency */
	if (!o) {
		*reason = reason_detail(WHY_UNKNOWN_TABLE, "%.*s.%.*s is no known table or view", (int)slen,
					sch, (int)r->name_len, r->name);
		hint_reload();   /* maybe made elsewhere since the last read */
		*retry = true;
		return false;
	}
	if (o->reason) {    /* a view that cannot be cached, a sequence */
		*reason = o->reason;
		return false;
	}
	if (o->kind == CAT_TABLE)
		return push_dep(out, cap, n, o->self) || (*reason = reason_of(WHY_TOO_MANY_TABLES), false);
	for (unsigned i = 0; i < o->ndeps; i++)
		if (!push_dep(out, cap, n, o->deps[i])) {
			*reason = reason_of(WHY_TOO_MANY_TABLES);
			return false;
		}
	return true;
}

bool catalog_resolve_reads(const struct sql_tables *t, const char *schema,
			   struct inval_table **out, unsigned cap, unsigned *n,
			   const struct reason **reason, bool *retry)
{
	bool ok = true, again = false;

	*n = 0;
	if (t->flags & SQL_TABLES_UNKNOWN) {
		*reason = reason_of(WHY_TABLES_UNKNOWN);
		return false;
	}
	pthread_rwlock_rdlock(&snap_lock);
	if (!catalog_ready()) {
		*reason = reason_of(current ? WHY_CATALOG_RELOADING : WHY_CATALOG_NOT_READ);
		ok = false;
		again = true;
	}
	for (unsigned i = 0; ok && i < t->n; i++)
		ok = resolve_ref(current, &t->refs[i], schema, out, cap, n, reason, &again);
	pthread_rwlock_unlock(&snap_lock);
	if (retry)
		*retry = again;
	return ok;
}

/* ---- waits ----------------------------------------------------------------- */

/* Two lists under one lock: sessions waiting for a read of the catalog,
 * and for the generated columns' checks (vcol_waiters). */
static struct store_waitlist waiters = STORE_WAITLIST_INIT, vcol_waiters = STORE_WAITLIST_INIT;
static store_wake_fn wake_fn;

void catalog_set_wake(store_wake_fn wake)
{
	wake_fn = wake;
}

void catalog_wait(struct store_waiter *w)
{
	store_waitlist_add(&waiters, w);
	atomic_store(&hinted, true);
	wake_reader();
}

void catalog_cancel_wait(struct store_waiter *w)
{
	store_waitlist_remove(&waiters, w);
}

void catalog_wait_vcols(struct store_waiter *w)
{
	store_waitlist_add(&vcol_waiters, w);
}

void catalog_cancel_vcols_wait(struct store_waiter *w)
{
	store_waitlist_remove(&vcol_waiters, w);
}

/* After a read of the catalog (done or failed): wake everyone waiting. */
static void wake_waiters(void)
{
	store_waitlist_wake(&waiters, wake_fn);
}

/* The reader checked the queued tables' generated columns (or gave up). */
static void run_vcols(MYSQL *m, int *rc)
{
	*rc = m ? vcols_run_queue(m) : -1;
	store_waitlist_wake(&vcol_waiters, wake_fn);
}

/* Add one written table and what a write to it also changes. Snapshot read-locked. */
static void write_one(const char *sch, size_t slen, const char *name, size_t nlen,
		      struct inval_table **out, unsigned cap, unsigned *n, bool *opaque)
{
	struct cat_obj *o = current ? snap_find(current, sch, slen, name, nlen) : NULL;
	struct inval_table *t = o ? o->self : inval_table_get(sch, slen, name, nlen);

	if (!current)
		*opaque = true;
	if (!t || !push_dep(out, cap, n, t)) {
		*opaque = true;
		return;
	}
	if (!o)
		return;
	if (o->opaque)
		*opaque = true;
	for (unsigned i = 0; i < o->ndeps; i++)  /* a view's base tables, a table's closure */
		if (!push_dep(out, cap, n, o->deps[i]))
			*opaque = true;
	if (o->kind == CAT_VIEW)                 /* and what writes to those also change */
		for (unsigned i = 1; i < o->ndeps; i++) {
			bool twice;
			struct cat_obj *bo = snap_find_self(current, o->deps[i], &twice);

			if (twice)
				*opaque = true;   /* Foo and foo: whose closure, not known */
			for (unsigned k = 0; bo && bo->kind == CAT_TABLE && k < bo->ndeps; k++)
				if (!push_dep(out, cap, n, bo->deps[k]))
					*opaque = true;
		}
}

void catalog_resolve_writes(const struct sql_tables *t, const char *schema,
			    struct inval_table **out, unsigned cap, unsigned *n, bool *opaque)
{
	*n = 0;
	if (t->kind == SQL_STMT_WRITE && !catalog_ready())
		*opaque = true;   /* a DDL since the last read may have added a trigger or a key */
	pthread_rwlock_rdlock(&snap_lock);
	for (unsigned i = 0; i < t->n; i++) {
		const struct sql_table_ref *r = &t->refs[i];
		const char *sch;
		size_t slen;

		if (!(r->flags & SQL_TREF_WRITE))
			continue;
		if (!ref_schema(r, schema, &sch, &slen)) {
			*opaque = true;
			continue;
		}
		write_one(sch, slen, r->name, r->name_len, out, cap, n, opaque);
	}
	pthread_rwlock_unlock(&snap_lock);
}

void catalog_write_closure(const char *schema, size_t slen, const char *name, size_t nlen,
			   struct inval_table **out, unsigned cap, unsigned *n, bool *opaque)
{
	*n = 0;
	if (!catalog_ready())
		*opaque = true;
	pthread_rwlock_rdlock(&snap_lock);
	write_one(schema, slen, name, nlen, out, cap, n, opaque);
	pthread_rwlock_unlock(&snap_lock);
}

struct inval_table *catalog_base_table(const char *schema, size_t slen, const char *name, size_t nlen)
{
	struct cat_obj *o;
	struct inval_table *t = NULL;

	pthread_rwlock_rdlock(&snap_lock);
	if (current && catalog_ready() && (o = snap_find(current, schema, slen, name, nlen)) &&
	    o->kind == CAT_TABLE && !o->reason)
		t = o->self;
	pthread_rwlock_unlock(&snap_lock);
	return t;
}

bool catalog_cascade_closure(struct inval_table *t, struct inval_table **out, unsigned cap, unsigned *n)
{
	struct cat_obj *queue[MAX_ALSO + 1], *o;
	unsigned qh = 0, qt = 0;
	bool ok;

	bool twice = false;

	*n = 0;
	pthread_rwlock_rdlock(&snap_lock);
	o = current && catalog_ready() ? snap_find_self(current, t, &twice) : NULL;
	ok = o && o->kind == CAT_TABLE;   /* twice: not known */
	if (ok)
		queue[qt++] = o;
	while (ok && qh < qt)   /* breadth first over the cascading keys only */
		for (struct edge *e = queue[qh++]->edges; e && ok; e = e->next) {
			unsigned before = *n;

			if (!e->fk || e->t == t)
				continue;
			ok = push_dep(out, cap, n, e->t);
			if (ok && *n > before && e->obj && qt <= MAX_ALSO)
				queue[qt++] = e->obj;
		}
	pthread_rwlock_unlock(&snap_lock);
	return ok;
}

unsigned catalog_ddl_seen(void)
{
	return atomic_load(&requested);
}

unsigned catalog_loads(void)
{
	return atomic_load(&loads);
}

size_t catalog_objects(void)
{
	size_t n;

	pthread_rwlock_rdlock(&snap_lock);
	n = current ? current->count : 0;
	pthread_rwlock_unlock(&snap_lock);
	return n;
}

/* ---- the reader thread ------------------------------------------------------ */

static int read_catalog(MYSQL *m)
{
	struct catalog_rows b = { 0 };
	bool fold = false;
	int rc = catalog_query_read(m, &b, &fold);

	if (rc == 0)
		rc = catalog_load_rows(b.rows, b.n, fold);
	catalog_rows_free(&b);
	return rc;
}

static MYSQL *reader_connect(void)
{
	MYSQL *m = mysql_init(NULL);
	unsigned timeout = 30;

	if (!m)
		return NULL;
	upstream_set_common_options(m);
	mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &timeout);
	mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &timeout);
	if (!mysql_real_connect(m, g_config.upstream_host, g_config.upstream_user.name,
				g_config.upstream_user.password, NULL, g_config.upstream_port, NULL, 0)) {
		log_warn("catalog: cannot connect to the upstream: %s", mysql_error(m));
		mysql_close(m);
		return NULL;
	}
	return m;
}

static pthread_t reader_thread;
static atomic_bool reader_enabled, reader_started;
static atomic_bool stopping;
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cond;

enum reader_wake { WAKE_TIMEOUT, WAKE_ASKED, WAKE_VCOLS };

/* Sleep until a read is asked for (hinted), stop, tables wait for their
 * generated columns' check (with vcols), or secs pass. */
static enum reader_wake reader_wait(int secs, bool vcols)
{
	struct timespec until;
	enum reader_wake why;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += secs;
	pthread_mutex_lock(&wake_lock);
	while (!atomic_load(&stopping) && !atomic_load(&hinted) && !(vcols && vcols_pending()) &&
	       pthread_cond_timedwait(&wake_cond, &wake_lock, &until) == 0)
		;
	why = atomic_exchange(&hinted, false) || atomic_load(&stopping) ? WAKE_ASKED :
	      vcols && vcols_pending() ? WAKE_VCOLS : WAKE_TIMEOUT;
	pthread_mutex_unlock(&wake_lock);
	return why;
}

/* Between reads: until one is asked for, or, while some shape is cached
 * and no binlog brings DDL made elsewhere, every RELOAD_EVERY_S. Tables a
 * client has read meanwhile get their generated columns checked on m (a
 * failure there ends the wait: m is then reconnected and the catalog read). */
static void reader_idle(MYSQL *m)
{
	for (;;) {
		enum reader_wake why = reader_wait(RELOAD_EVERY_S, m != NULL);

		int rc = 0;

		if (why == WAKE_VCOLS)
			run_vcols(m, &rc);
		if (why == WAKE_ASKED || rc < 0)
			return;
		if (why == WAKE_TIMEOUT && inval_mode() != INVAL_BINLOG && registry_may_cache() &&
		    catalog_ready())
			return;
	}
}

/* Is t a view of the current catalog (and no table shares its key)? */
static bool is_view(const struct inval_table *t)
{
	bool twice = false, view;
	const struct cat_obj *o;

	pthread_rwlock_rdlock(&snap_lock);
	o = current ? snap_find_self(current, t, &twice) : NULL;
	view = o && o->kind == CAT_VIEW;
	pthread_rwlock_unlock(&snap_lock);
	return view;
}

void catalog_check_vcols(struct inval_table *t)
{
	if (is_view(t)) {
		vcols_set_view(t);   /* nothing to ask the server (vcols.h) */
		return;
	}
	if (!vcols_check_later(t))
		return;
	ensure_reader();
	pthread_mutex_lock(&wake_lock);
	pthread_cond_signal(&wake_cond);
	pthread_mutex_unlock(&wake_lock);
}

static void *reader_main(void *arg)
{
	MYSQL *m = NULL;
	bool logged = false;
	int rc;

	(void)arg;
	mysql_thread_init();
	while (!atomic_load(&stopping)) {
		if (!m)
			m = reader_connect();
		atomic_store(&load_want, atomic_load(&requested));
		if (m && read_catalog(m) == 0) {
			wake_waiters();
			if (!logged)
				log_info("catalog: %zu tables and views read", catalog_objects());
			logged = true;
			run_vcols(m, &rc);
			if (rc == 0)
				reader_idle(m); /* else the next read finds m lost */
			continue;
		}
		wake_waiters();  /* they go on without: the catalog could not be read */
		run_vcols(NULL, &rc);
		if (m) {
			mysql_close(m);
			m = NULL;
		}
		if (reader_wait(1, false) == WAKE_TIMEOUT && !registry_may_cache())
			reader_idle(NULL);
	}
	if (m)
		mysql_close(m);
	mysql_thread_end();
	return NULL;
}

/* The reader starts the first time a read is asked for. */
static void ensure_reader(void)
{
	if (atomic_load(&reader_started) || !atomic_load(&reader_enabled))
		return;
	pthread_mutex_lock(&start_lock);
	if (!atomic_load(&reader_started) && !atomic_load(&stopping)) {
		if (pthread_create(&reader_thread, NULL, reader_main, NULL) == 0)
			atomic_store(&reader_started, true);
		else
			log_error("catalog: cannot start the reader thread");
	}
	pthread_mutex_unlock(&start_lock);
}

static void wake_reader(void)
{
	ensure_reader();
	pthread_mutex_lock(&wake_lock);
	pthread_cond_signal(&wake_cond);
	pthread_mutex_unlock(&wake_lock);
}

int catalog_start(void)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wake_cond, &ca);
	pthread_condattr_destroy(&ca);
	atomic_store(&requested, 1);
	atomic_store(&stopping, false);
	atomic_store(&reader_enabled, true);
	return 0;
}

void catalog_changed(void)
{
	/* read again when a statement needs it (catalog_wait), not now */
	atomic_fetch_add(&requested, 1);
}

bool catalog_await_ready(int timeout_ms)
{
	for (int waited = 0; !catalog_ready(); waited += 10) {
		if (waited >= timeout_ms || atomic_load(&stopping))
			return false;
		if (waited % 1000 == 0) { /* hint again: a failed read waits for one */
			atomic_store(&hinted, true);
			wake_reader();
		}
		usleep(10000);
	}
	return true;
}

void catalog_stop(void)
{
	pthread_mutex_lock(&start_lock);
	atomic_store(&stopping, true);
	pthread_mutex_unlock(&start_lock);
	if (!atomic_load(&reader_started))
		return;
	pthread_mutex_lock(&wake_lock);
	pthread_cond_signal(&wake_cond);
	pthread_mutex_unlock(&wake_lock);
	pthread_join(reader_thread, NULL);
	atomic_store(&reader_started, false);
}

bool catalog_writes_may_create_temps(const struct sql_tables *t, const char *schema)
{
	bool r = false;

	if (!catalog_ready())
		return true;   /* its triggers are not known */
	pthread_rwlock_rdlock(&snap_lock);
	for (unsigned i = 0; i < t->n && current && !r; i++) {
		const struct sql_table_ref *ref = &t->refs[i];
		const struct cat_obj *o;
		const char *sch;
		size_t slen;

		if (!(ref->flags & SQL_TREF_WRITE) || !ref_schema(ref, schema, &sch, &slen))
			continue;
		o = snap_find(current, sch, slen, ref->name, ref->name_len);
		r = o && o->kind == CAT_TABLE && o->temps;
	}
	pthread_rwlock_unlock(&snap_lock);
	return r;
}

enum catalog_temps catalog_any_temps(void)
{
	enum catalog_temps r;

	pthread_rwlock_rdlock(&snap_lock);
	r = !current || !catalog_ready() ? CATALOG_TEMPS_UNKNOWN :
	    current->any_temps ? CATALOG_TEMPS_SOME : CATALOG_TEMPS_NONE;
	pthread_rwlock_unlock(&snap_lock);
	return r;
}

bool catalog_routine_may_create_temps(const char *schema, size_t slen, const char *name, size_t nlen)
{
	struct cat_obj *o;
	bool r = true;

	pthread_rwlock_rdlock(&snap_lock);
	if (current && slen && catalog_ready() && (o = snap_find_kind(current, true, schema, slen, name, nlen)))
		r = o->opaque;
	pthread_rwlock_unlock(&snap_lock);
	return r;
}
