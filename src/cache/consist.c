/*
 * consist.c: a session's writes, temporary tables and fill dependencies
 * (see consist.h).
 *
 * Writes: the statement's text gives its written tables (sql/tables.c); the
 * catalog adds what writes to them also change (cascading foreign keys,
 * triggers). They are invalidated when the answer is complete, which is
 * before the relayed OK is written to the client. Inside a transaction the
 * tables are invalidated at each write and once more when the transaction
 * ends, so an entry filled from the committed data before the COMMIT (which
 * other sessions may read meanwhile) is retired by it.
 *
 * When the text cannot show the writes (CALL, EXECUTE, a stored function,
 * a trigger that calls one, an unreadable text): in binlog mode the caller
 * holds the statement's OK (at COMMIT, when in a transaction) until the
 * binlog follower has applied everything the server had committed by then;
 * in writes mode everything is invalidated: what is read afterwards comes
 * from the upstream, which has the writes.
 */
#include "cache/consist.h"

#include <stdlib.h>
#include <string.h>

#include "cache/binlog.h"
#include "cache/catalog.h"
#include "cache/match_build.h"
#include "cache/registry.h"
#include "sql/stmt.h"

void consist_init(struct consist *s)
{
	memset(s, 0, sizeof(*s));
}

void consist_free(struct consist *s)
{
	free(s->temps);
	s->temps = NULL;
	s->temps_len = s->temps_cap = 0;
	s->ntemps = 0;
}

void consist_reset(struct consist *s)
{
	consist_free(s);
	s->temps_unknown = s->temps_pending = false;
	s->cur_set = false;
	s->ntxn = 0;
	s->txn_all = s->txn_opaque = false;
}

void consist_set_schema(struct consist *s, const char *schema)
{
	size_t n = strlen(schema);

	if (n >= sizeof(s->schema))
		n = 0;   /* too long to resolve names against: treated as none */
	memcpy(s->schema, schema, n);
	s->schema[n] = 0;
}

/* ---- names ------------------------------------------------------------------ */

/* "schema\0name\0" of a reference, lower-cased, appended to buf. */
static bool name_pair(const struct sql_table_ref *r, const char *schema, char *buf, size_t cap,
		      size_t *len)
{
	size_t o = *len, k;

	if (r->schema)
		k = sql_table_name_copy(r->schema, r->schema_len, r->quoted & 1, buf + o, cap - o);
	else
		k = sql_table_name_copy(schema, strlen(schema), false, buf + o, cap - o);
	if (!k)
		return false;
	o += k + 1;
	if (o >= cap)
		return false;
	k = sql_table_name_copy(r->name, r->name_len, r->quoted & 2, buf + o, cap - o);
	if (!k)
		return false;
	*len = o + k + 1;
	return true;
}

static size_t pair_len(const char *p)
{
	size_t a = strlen(p) + 1;

	return a + strlen(p + a) + 1;
}

static bool temp_find(const struct consist *s, const char *pair, size_t plen, size_t *at)
{
	for (size_t o = 0; o < s->temps_len; o += pair_len(s->temps + o))
		if (pair_len(s->temps + o) == plen && memcmp(s->temps + o, pair, plen) == 0) {
			*at = o;
			return true;
		}
	return false;
}

static void temp_add(struct consist *s, const char *pair, size_t plen)
{
	size_t at;

	if (temp_find(s, pair, plen, &at))
		return;
	if (s->temps_len + plen > s->temps_cap) {
		size_t cap = (s->temps_cap + plen) * 2;
		char *n = realloc(s->temps, cap);

		if (!n) {
			s->temps_unknown = true;   /* cannot remember it: assume any */
			return;
		}
		s->temps = n;
		s->temps_cap = cap;
	}
	memcpy(s->temps + s->temps_len, pair, plen);
	s->temps_len += plen;
	s->ntemps++;
}

static void temp_remove(struct consist *s, const char *pair, size_t plen)
{
	size_t at;

	if (!temp_find(s, pair, plen, &at))
		return;
	memmove(s->temps + at, s->temps + at + plen, s->temps_len - at - plen);
	s->temps_len -= plen;
	s->ntemps--;
}

/* Does a statement read one of the session's temporary tables? */
static bool reads_temp(const struct consist *s, const struct sql_tables *t, const char *schema)
{
	char pair[CONSIST_NAMES_MAX];

	for (unsigned i = 0; i < t->n; i++) {
		size_t len = 0, at;

		if (!name_pair(&t->refs[i], schema, pair, sizeof(pair), &len) ||
		    temp_find(s, pair, len, &at))
			return true;   /* a name we cannot compare counts as one */
	}
	return false;
}

/* ---- writes ----------------------------------------------------------------- */

static void note_temps(struct consist *s, const struct sql_tables *t, const char *schema)
{
	unsigned f = t->flags;

	s->cur_temp = TEMP_NONE;
	s->cur_names_len = 0;
	if ((f & SQL_TABLES_CREATE) && (f & SQL_TABLES_TEMPORARY))
		s->cur_temp = TEMP_CREATE;
	else if (f & SQL_TABLES_DROP)
		s->cur_temp = TEMP_DROP;
	else if (t->kind == SQL_STMT_DDL && s->ntemps > 0 && (f & SQL_TABLES_CATALOG))
		s->cur_temp = TEMP_RENAME;   /* RENAME / ALTER ... RENAME of a temp table */
	if (s->cur_temp == TEMP_NONE)
		return;
	for (unsigned i = 0; i < t->n; i++)
		if (!name_pair(&t->refs[i], schema, s->cur_names, sizeof(s->cur_names),
			       &s->cur_names_len) && s->cur_temp != TEMP_DROP)
			s->temps_unknown = true;
}

/* Routines a statement runs that no catalog names (a hidden text, EXECUTE,
 * BEGIN NOT ATOMIC, BINLOG, too many calls): they may create anything. */
static bool routines_unknowable(const struct sql_tables *t, bool hidden)
{
	if (hidden || (t->flags & SQL_TABLES_ROUTINES_MANY) ||
	    (t->flags & (SQL_TABLES_UNKNOWN | SQL_TABLES_VERSIONED)) == SQL_TABLES_UNKNOWN)
		return true;    /* (a versioned comment was read as code: its routines are known) */
	return t->kind == SQL_STMT_OPAQUE && !(t->flags & SQL_TABLES_CALL);
}

/* The session may have made temporary tables: known for good when the
 * catalog is current (or cannot tell), else decided after its next read. */
static void temps_maybe(struct consist *s, bool catalog_stale)
{
	if (catalog_stale)
		s->temps_pending = true;
	else
		s->temps_unknown = true;
}

/* Could the routines a statement calls have created temporary tables? A
 * routine whose body the catalog has, and that neither creates one nor
 * calls anything, cannot. */
static bool routines_may_create_temps(const struct sql_tables *t, bool hidden, const char *schema)
{
	if (routines_unknowable(t, hidden))
		return true;
	for (unsigned i = 0; i < t->nroutines; i++) {
		const struct sql_table_ref *r = &t->routines[i];
		const char *sch = r->schema ? r->schema : schema;
		size_t slen = r->schema ? r->schema_len : strlen(schema);

		if (catalog_routine_may_create_temps(sch, slen, r->name, r->name_len))
			return true;
	}
	return false;
}

/* Global variables with no session value that change the answer of a
 * read, which no cache key can hold (the key has the session's settings):
 * a SET of one that succeeds invalidates everything. ft_boolean_syntax:
 * the operators of MATCH ... AGAINST (... IN BOOLEAN MODE) on MyISAM
 * (conformance: main.fulltext_var). Set elsewhere than through this node,
 * the change is seen at the TTL (docs/caching.md). */
static const char *const answer_globals[] = { "FT_BOOLEAN_SYNTAX", NULL };

/* Does the statement make every entry go once it succeeds? FLUSH
 * [NO_WRITE_TO_BINLOG | LOCAL] TABLE[S] ...: the server closes the tables;
 * opening one again can give warnings (an old .frm, a generated column's
 * expression) that an answer cached before did not have. REPAIR TABLE: the
 * table's data may come back otherwise (USE_FRM rebuilds it from files a
 * client put there: main.repair). A SET of one of answer_globals. */
static bool flushes_all(const struct stmt *st)
{
	return (st->flags & STMT_FLUSH_TABLES) || stmt_set_names(st, answer_globals);
}

void consist_statement(struct consist *s, const struct stmt *st, bool hidden, const char *schema)
{
	static const struct sql_tables unread = { .flags = SQL_TABLES_UNKNOWN };
	const struct sql_tables *t = st ? &st->tables : &unread;
	unsigned tflags = t->flags;
	bool opaque = false, stale = !catalog_ready();

	if (!st)
		hidden = true;   /* not read (out of memory): nothing of it is known */
	s->cur_set = true;
	s->ncur = 0;
	s->cur_opaque = s->cur_catalog = s->cur_routine_ddl = false;
	s->cur_flush = !st || flushes_all(st);
	s->cur_temp = TEMP_NONE;
	s->cur_delayed = (tflags & SQL_TABLES_DELAYED) != 0;
	if (t->kind == SQL_STMT_READ && (tflags & SQL_TABLES_VERSIONED) && !hidden)
		tflags &= ~(unsigned)SQL_TABLES_UNKNOWN;  /* a read writes only through its routines */
	if (hidden || (tflags & SQL_TABLES_UNKNOWN) || t->kind == SQL_STMT_OPAQUE ||
	    (tflags & SQL_TABLES_ROUTINE)) {
		/* CALL, EXECUTE, a stored function, a text we cannot read: its
		 * writes and DDL are not known */
		s->cur_opaque = true;
		s->cur_routine_ddl = true;
		if (routines_may_create_temps(t, hidden, schema))
			temps_maybe(s, stale && !routines_unknowable(t, hidden));
	}
	note_temps(s, t, schema);
	if (tflags & SQL_TABLES_TEMPORARY)
		return;   /* CREATE / DROP TEMPORARY TABLE: the session's own, nothing shared */
	if (tflags & SQL_TABLES_CATALOG)
		s->cur_catalog = true;
	if (t->kind == SQL_STMT_WRITE || t->kind == SQL_STMT_DDL) {
		catalog_resolve_writes(t, schema, s->cur, CONSIST_MAX_WRITES, &s->ncur, &opaque);
		if (opaque)
			s->cur_opaque = true;
		if (catalog_writes_may_create_temps(t, schema))
			temps_maybe(s, stale);   /* a trigger's routine may make some */
	}
}

void consist_hold_failed(void)
{
	inval_all_why(INVAL_SRC_FLUSH, IW_A_WRITE);
	catalog_changed();
}

bool consist_wants_catalog(const struct stmt *st)
{
	const struct sql_tables *t;

	if (catalog_ready() || !registry_may_cache())
		return false;
	if (!st)
		return true;   /* unread: what it calls is not known */
	t = &st->tables;
	return t->kind == SQL_STMT_WRITE || t->nroutines > 0 ||
	       (t->flags & (SQL_TABLES_ROUTINE | SQL_TABLES_CALL | SQL_TABLES_ROUTINES_MANY));
}

/* Writes the text does not show: binlog mode holds the answer until the
 * follower has applied them (consist_done's caller), while anything can be
 * cached; otherwise every entry is invalidated (no upstream query). */
static bool opaque_written(enum inval_mode m)
{
	if (m == INVAL_BINLOG && registry_may_cache())
		return true;
	inval_all_why(INVAL_SRC_FLUSH, IW_A_WRITE);
	return false;
}

/* How long fills of a table an INSERT DELAYED wrote are not stored: the
 * server writes its rows when its delayed-insert queue gets to them, after
 * the OK, usually within milliseconds (a table lock held elsewhere delays
 * them; docs/caching.md). */
#define DELAYED_SETTLE_MS 10000

static void bump_set(struct inval_table *const *set, unsigned n, int settle_ms)
{
	for (unsigned i = 0; i < n; i++)
		inval_bump(set[i], INVAL_SRC_WRITE, settle_ms);
	inval_count_why(IW_T_WRITE, n);
}

/* The writes the session kept back (in a transaction, under table locks)
 * are others' to see now: their tables are invalidated. Those whose tables
 * are unknown hold the answer for the binlog when there is one to hold
 * (opaque_written), else invalidate everything. True: hold the answer. */
static bool release_kept(struct consist *s, enum inval_mode m, bool can_hold)
{
	bool wait = false;

	if (m != INVAL_TTL) {
		bump_set(s->txn, s->ntxn, 0);
		if (s->txn_all || (s->txn_opaque && !can_hold))
			inval_all_why(INVAL_SRC_FLUSH, IW_A_WRITE);
		if (s->txn_opaque && can_hold)
			wait = opaque_written(m);
	}
	s->ntxn = 0;
	s->txn_all = s->txn_opaque = false;
	return wait;
}

void consist_release(struct consist *s)
{
	release_kept(s, inval_mode(), false);
}

static void txn_add(struct consist *s)
{
	for (unsigned i = 0; i < s->ncur && !s->txn_all; i++) {
		unsigned k;

		for (k = 0; k < s->ntxn && s->txn[k] != s->cur[i]; k++)
			;
		if (k < s->ntxn)
			continue;
		if (s->ntxn == CONSIST_MAX_WRITES)
			s->txn_all = true;   /* too many to remember: all at the end */
		else
			s->txn[s->ntxn++] = s->cur[i];
	}
}

static void apply_temps(struct consist *s)
{
	const char *p = s->cur_names, *end = s->cur_names + s->cur_names_len;

	switch (s->cur_temp) {
	case TEMP_CREATE:
		if (p < end)
			temp_add(s, p, pair_len(p));
		break;
	case TEMP_DROP:
		for (; p < end; p += pair_len(p))
			temp_remove(s, p, pair_len(p));
		break;
	case TEMP_RENAME:
		/* old, new pairs (RENAME TABLE a TO b) or table, new (ALTER) */
		for (; p < end && p + pair_len(p) < end; p += pair_len(p)) {
			size_t at;
			const char *to = p + pair_len(p);

			if (temp_find(s, p, pair_len(p), &at)) {
				temp_remove(s, p, pair_len(p));
				temp_add(s, to, pair_len(to));
			}
			p = to;
		}
		break;
	default:
		break;
	}
}

bool consist_done(struct consist *s, bool in_txn, bool ok)
{
	enum inval_mode m = inval_mode();
	bool wait = false;

	if (s->cur_set) {
		s->cur_set = false;
		if (ok)
			apply_temps(s);
		if (s->cur_catalog)
			catalog_changed();
		if (m != INVAL_TTL) {
			bump_set(s->cur, s->ncur, s->cur_delayed ? DELAYED_SETTLE_MS : 0);
			if (s->cur_flush && ok)
				inval_all_why(INVAL_SRC_FLUSH, IW_A_WRITE);
			if (in_txn) {
				txn_add(s);
				s->txn_opaque |= s->cur_opaque;
				if (s->cur_opaque && m != INVAL_BINLOG)
					inval_all_why(INVAL_SRC_FLUSH, IW_A_WRITE);
			} else if (s->cur_opaque) {
				wait = opaque_written(m);
			}
		}
		/* a held OK: the follower applies the statement's DDL (which
		 * marks the catalog stale) before the client hears of it; the
		 * caller marks it if the hold fails (consist_hold_failed) */
		if (s->cur_routine_ddl && !(wait && !in_txn))
			catalog_changed();
	}
	if (!in_txn && (s->ntxn || s->txn_all || s->txn_opaque))
		wait |= release_kept(s, m, true);   /* COMMIT, ROLLBACK, implicit commit */
	return wait;
}

/* ---- reads ------------------------------------------------------------------ */

/* A session's temps_pending, once the catalog is current: none made, when
 * no trigger or routine anywhere may create a temporary table. NULL when
 * decided, else why not yet (the catalog is being read). */
static const struct reason *decide_pending_temps(struct consist *s, bool *retry)
{
	enum catalog_temps t = catalog_any_temps();

	if (t == CATALOG_TEMPS_UNKNOWN) {
		/* the catalog is being read (a DDL): wait for it, never decide
		 * "some" for a catalog that is merely stale */
		if (retry)
			*retry = true;
		return reason_of(WHY_CATALOG_TEMPS);
	}
	s->temps_pending = false;
	if (t == CATALOG_TEMPS_SOME)
		s->temps_unknown = true;
	return NULL;
}

const struct reason *consist_read_deps(struct consist *s, const struct stmt *st, const char *schema,
				       struct fill_deps *out, bool *retry)
{
	const struct sql_tables *t = st ? &st->tables : NULL;
	struct inval_table *tables[INVAL_MAX_DEPS];
	unsigned nt = 0;
	const struct reason *reason = NULL;

	if (retry)
		*retry = false;
	if (!inval_serving()) {
		binlog_demand();   /* a cached shape is read: the follower is needed now */
		return inval_not_serving_reason();
	}
	if (s->temps_pending && (reason = decide_pending_temps(s, retry)))
		return reason;
	if (s->temps_unknown)
		return reason_of(WHY_MAYBE_TEMPORARY);
	if (!t || t->kind != SQL_STMT_READ || (t->flags & SQL_TABLES_UNKNOWN))
		return reason_of(WHY_TABLES_UNKNOWN);
	if (s->ntemps && reads_temp(s, t, schema))
		return reason_of(WHY_READS_TEMPORARY);
	out->epoch = inval_epoch();
	out->cons.len = 0;
	if (!catalog_resolve_reads(t, schema, tables, INVAL_MAX_DEPS, &nt, &reason, retry))
		return reason;
	out->n = nt;
	if (!inval_snapshot_t(tables, nt, out->d, out->tgen))
		return reason_of(WHY_WRITTEN_MOMENTS_AGO);
	/* row constraints (binlog mode: only its follower reads row images);
	 * made now, with the definitions current at the snapshot */
	if (inval_mode() == INVAL_BINLOG)
		match_build(st->q, st->n, t, schema, s->has_params ? &s->params : NULL, out);
	return NULL;
}

void consist_exec_params(struct consist *s, const struct stmt_info *st, const uint8_t *pl, uint32_t len)
{
	size_t nb, off = 10;   /* command, statement id, flags, iteration count */

	s->has_params = false;
	if (!st || st->nparams == 0)
		return;   /* done, or nothing bound */
	nb = ((size_t)st->nparams + 7) / 8;
	if (len < off + nb + 1 || (pl[off + nb] && len < off + nb + 1 + 2u * st->nparams) ||
	    (!pl[off + nb] && !st->have_types))
		return;   /* cut short, or no types known: the placeholders stay unknown */
	s->params.n = st->nparams;
	s->params.nulls = pl + off;
	s->params.types = pl[off + nb] ? pl + off + nb + 1 : st->types;
	s->params.values = pl + off + nb + 1 + (pl[off + nb] ? 2u * st->nparams : 0);
	s->params.end = pl + len;
	s->has_params = true;
}

bool consist_txn_wrote_into_slow(const struct consist *s, const struct cache_entry *e)
{
	if (s->txn_all || s->txn_opaque)
		return true;
	for (unsigned i = 0; i < s->ntxn; i++)
		for (unsigned k = 0; k < e->ndeps; k++)
			if (entry_deps(e)[k].t == s->txn[i])
				return true;
	return false;
}

bool consist_prepare_resolves(struct consist *s, const struct stmt *st, const char *schema)
{
	const struct sql_tables *t = st ? &st->tables : NULL;
	struct inval_table *tables[INVAL_MAX_DEPS];
	unsigned nt = 0;
	const struct reason *reason = NULL;

	if (!t || !inval_serving() || consist_has_temps(s))
		return false;
	if (t->kind != SQL_STMT_READ || (t->flags & SQL_TABLES_UNKNOWN) || t->n == 0 || t->nroutines)
		return false;
	return catalog_resolve_reads(t, schema, tables, INVAL_MAX_DEPS, &nt, &reason, NULL);
}
