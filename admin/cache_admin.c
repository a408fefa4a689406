/*
 * cache_admin.c: cache definitions, query rules and cache statistics for
 * the admin's SQLite tables: the CACHES and QUERY RULES modules (rows <->
 * the registry and src/cache/rules.c) and the stats providers. See
 * cache_admin.h.
 *
 * Snapshots copy what they need from the registry under its read lock (a
 * short copy; workers only wait on that lock when they add a new query
 * shape, never on a cache hit), then write SQLite outside it.
 */
#include "cache_admin.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admin.h"
#include "cache/commands.h"
#include "cache/match.h"
#include "cache/store.h"
#include "cache/tcols.h"
#include "cache/vcols.h"
#include "cache/registry.h"
#include "cache/rules.h"
#include "config/config.h"
#include "base/log.h"
#include "sql/classify.h"
#include "sql/spooky.h"
#include "sql/tokenizer.h"

static const char *status_of(const struct cache_def *d, char *buf, size_t cap)
{
	switch (atomic_load(&d->state)) {
	case CACHE_CACHED:
		return "cached";
	case CACHE_SKIPPED:
		snprintf(buf, cap, "skipped: %s", atomic_load(&d->skip_reason)->text);
		return buf;
	default:
		return "proxied";
	}
}

static uint64_t get(atomic_uint_fast64_t *a, bool reset)
{
	return reset ? atomic_exchange(a, 0) : atomic_load_explicit(a, memory_order_relaxed);
}

static int digest_row(sqlite3 *db, const char *table, struct cache_def *d, bool reset)
{
	char num[13][24], hex[19], st[160];
	uint64_t count = def_counter(d, DC_COUNT, reset), minv = def_counter(d, DC_MIN_TIME, reset);
	const char *v[19];

	if (count == 0)
		return 0;
	sql_digest_hex(d->digest, hex);
	snprintf(num[0], 24, "%" PRIu64, count);
	snprintf(num[1], 24, "%" PRIu64, (uint64_t)atomic_load(&d->first_seen));
	snprintf(num[2], 24, "%" PRIu64, def_counter(d, DC_LAST_SEEN, false));
	snprintf(num[3], 24, "%" PRIu64, def_counter(d, DC_SUM_TIME, reset));
	snprintf(num[4], 24, "%" PRIu64, minv == UINT64_MAX ? 0 : minv);
	snprintf(num[5], 24, "%" PRIu64, def_counter(d, DC_MAX_TIME, reset));
	snprintf(num[6], 24, "%" PRIu64, def_counter(d, DC_ROWS_AFFECTED, reset));
	snprintf(num[7], 24, "%" PRIu64, def_counter(d, DC_ROWS_SENT, reset));
	snprintf(num[8], 24, "%" PRIu64, def_counter(d, DC_HITS, reset));
	snprintf(num[9], 24, "%" PRIu64, get(&d->misses, reset));
	snprintf(num[10], 24, "%" PRIu64, def_counter(d, DC_TIME_SAVED, reset));
	snprintf(num[11], 24, "%" PRIu64, get(&d->errors, reset));
	snprintf(num[12], 24, "%" PRIu64, get(&d->node_errors, reset));
	v[0] = ""; v[1] = ""; v[2] = ""; v[3] = hex; v[4] = d->digest_text;
	v[5] = num[0]; v[6] = num[1]; v[7] = num[2]; v[8] = num[3]; v[9] = num[4];
	v[10] = num[5]; v[11] = num[6]; v[12] = num[7]; v[13] = num[8]; v[14] = num[9];
	v[15] = status_of(d, st, sizeof(st)); v[16] = num[10]; v[17] = num[11]; v[18] = num[12];
	return admin_insert_row(db, table, 19, v);
}

static int fill_digest(sqlite3 *db, const char *table, bool reset)
{
	struct cache_def **defs;
	size_t n;
	int rc = registry_snapshot(&defs, &n);

	for (size_t i = 0; i < n && rc == 0; i++)
		rc = digest_row(db, table, defs[i], reset);
	free(defs);
	return rc;
}

static int fill_caches(sqlite3 *db, const char *table, bool reset)
{
	struct cache_def **defs;
	size_t n;
	int rc = registry_snapshot(&defs, &n);

	(void)reset;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct cache_def *d = defs[i];
		char num[6][24];
		const char *v[8];

		if (atomic_load(&d->state) != CACHE_CACHED)
			continue;
		snprintf(num[0], 24, "%" PRId64, (int64_t)atomic_load(&d->entries));
		snprintf(num[1], 24, "%" PRId64, (int64_t)atomic_load(&d->bytes));
		snprintf(num[2], 24, "%" PRIu64, def_counter(d, DC_HITS, false));
		snprintf(num[3], 24, "%" PRIu64, (uint64_t)atomic_load(&d->misses));
		snprintf(num[4], 24, "%" PRIu64, (uint64_t)(atomic_load(&d->refresh_changed) +
							     atomic_load(&d->refresh_unchanged)));
		snprintf(num[5], 24, "%" PRIu64, (uint64_t)atomic_load(&d->coalesced_waits));
		v[0] = d->query_id; v[1] = d->name; v[2] = num[0]; v[3] = num[1];
		v[4] = num[2]; v[5] = num[3]; v[6] = num[4]; v[7] = num[5];
		rc = admin_insert_row(db, table, 8, v);
	}
	free(defs);
	return rc;
}

/* ---- stats_shoal_entry_constraints: each entry's row constraints ---- */

#define CONS_ROWS_MAX 10000   /* entries listed at most */
#define KEY_TEXT_AT 10        /* a key's text after its kind, capabilities, settings and user */

struct cons_row {
	char query[200], tables[200], cons[600];
	uint64_t hits;
};

struct cons_list {
	struct cons_row *rows;
	size_t n, cap;
	const struct cache_entry *e;   /* the entry being named */
	char name[200];
};

/* A table's ("schema.table") or a column's name for match_format. */
static const char *cons_name(void *arg, unsigned dep, int col)
{
	struct cons_list *l = arg;
	struct inval_table *t = dep < l->e->ndeps ? entry_deps(l->e)[dep].t : NULL;
	struct tcols *tc;

	if (!t)
		return NULL;   /* no such dep: shown by number */
	if (col < 0) {
		snprintf(l->name, sizeof(l->name), "%s.%s", inval_table_schema(t), inval_table_name(t));
		return l->name;
	}
	tc = tcols_get(t, vcols_generation());
	if (tc && (unsigned)col < tc->ncols)
		snprintf(l->name, sizeof(l->name), "%s", tc->cols[col].name);
	else
		snprintf(l->name, sizeof(l->name), "#%d", col);   /* its definition is not current */
	tcols_put(tc);
	return l->name;
}

/* One entry with constraints into the list (copied: the store's shard
 * lock is held). 1 stops the walk at the bound or out of memory. */
static int collect_cons(const struct cache_entry *e, void *arg)
{
	struct cons_list *l = arg;
	struct cons_row *r;
	size_t o = 0;
	const uint8_t *k = entry_key(e);
	size_t klen = e->key_len > KEY_TEXT_AT ? e->key_len - KEY_TEXT_AT : 0;

	if (!e->cons_len)
		return 0;   /* no constraint: any change to its tables invalidates it */
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct cons_row *a = l->n < CONS_ROWS_MAX ? realloc(l->rows, cap * sizeof(*a)) : NULL;

		if (!a)
			return 1;   /* at the bound, or out of memory: the list so far */
		l->rows = a;
		l->cap = cap;
	}
	r = &l->rows[l->n++];
	snprintf(r->query, sizeof(r->query), "%.*s", (int)strnlen((const char *)k + KEY_TEXT_AT, klen),
		 klen ? (const char *)k + KEY_TEXT_AT : "");
	r->tables[0] = 0;
	for (unsigned i = 0; i < e->ndeps && o < sizeof(r->tables); i++)
		o += (size_t)snprintf(r->tables + o, sizeof(r->tables) - o, "%s%s.%s%s", i ? ", " : "",
				      inval_table_schema(entry_deps(e)[i].t), inval_table_name(entry_deps(e)[i].t),
				      (e->rowmask >> i) & 1u ? " (by row)" : "");
	l->e = e;
	match_format(entry_cons(e), e->cons_len, e->ntab, cons_name, l, r->cons, sizeof(r->cons));
	r->hits = atomic_load_explicit(&((struct cache_entry *)e)->hits, memory_order_relaxed);
	return 0;
}

static int fill_constraints(sqlite3 *db, const char *table, bool reset)
{
	struct cons_list l = { 0 };
	struct timespec ts;
	int rc = 0;

	(void)reset;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	store_each((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, collect_cons, &l);
	for (size_t i = 0; i < l.n && rc == 0; i++) {
		char hits[24];
		const char *v[4] = { l.rows[i].query, l.rows[i].tables, l.rows[i].cons, hits };

		snprintf(hits, sizeof(hits), "%" PRIu64, l.rows[i].hits);
		rc = admin_insert_row(db, table, 4, v);
	}
	free(l.rows);
	return rc;
}

/* SAVE CACHES FROM RUNTIME: the explicit caches as rows. */
static int save_caches(sqlite3 *db, const char *table, char *err, size_t errlen)
{
	struct cache_def **defs;
	size_t n;
	int rc = registry_snapshot(&defs, &n);

	for (size_t i = 0; i < n && rc == 0; i++) {
		struct cache_def *d = defs[i];
		char num[3][16];
		int txn = atomic_load(&d->txn);
		const char *v[9];

		if (atomic_load(&d->state) != CACHE_CACHED || !atomic_load(&d->explicit_cache))
			continue; /* only the explicit caches are configuration */
		snprintf(num[0], 16, "%d", atomic_load(&d->ttl_ms));
		snprintf(num[1], 16, "%d", def_refresh_ms(d));
		snprintf(num[2], 16, "%d", atomic_load(&d->coalesce_ms));
		v[0] = d->query_id; v[1] = d->name; v[2] = d->query_text;
		v[3] = num[0]; v[4] = num[1]; v[5] = num[2];
		v[6] = txn == TXN_ALWAYS ? "1" : "0";
		v[7] = txn == TXN_UNTIL_WRITE ? "until_write" : "default";
		v[8] = "";
		rc = admin_insert_row(db, table, 9, v);
	}
	free(defs);
	if (rc)
		snprintf(err, errlen, "cannot write %s", table);
	return rc;
}

/* One row of a caches table, as CREATE CACHE. */
struct cache_row {
	struct create_cache cc;
	char *query;
};

static int read_rows(sqlite3 *db, const char *table, struct cache_row **out, size_t *n,
		     char *err, size_t errlen)
{
	char sql[256];
	sqlite3_stmt *st;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	snprintf(sql, sizeof(sql), "SELECT name, query, ttl_ms, refresh_ms, coalesce_ms, always, policy FROM %s", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
		return -1;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct cache_row *r;
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *q = (const char *)sqlite3_column_text(st, 1);
		const char *policy = (const char *)sqlite3_column_text(st, 6);

		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			r = realloc(*out, cap * sizeof(*r));
			if (!r)
				break;
			*out = r;
		}
		r = &(*out)[*n];
		memset(r, 0, sizeof(*r));
		r->query = strdup(q ? q : "");
		if (!r->query)
			break;
		snprintf(r->cc.name, sizeof(r->cc.name), "%s", name ? name : "");
		r->cc.select = r->query;
		r->cc.select_len = strlen(r->query);
		r->cc.ttl_ms = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 2);
		r->cc.refresh_ms = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 3);
		r->cc.coalesce_ms = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 4);
		r->cc.txn = sqlite3_column_int(st, 5) ? TXN_ALWAYS :
			    policy && strcasecmp(policy, "until_write") == 0 ? TXN_UNTIL_WRITE : TXN_DEFAULT;
		(*n)++;
	}
	sqlite3_finalize(st);
	return 0;
}

static void free_rows(struct cache_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i].query);
	free(rows);
}

static bool drop_explicit(struct cache_def *d, void *arg)
{
	(void)arg;
	if (atomic_load(&d->state) == CACHE_CACHED && atomic_load(&d->explicit_cache))
		registry_set_proxied(d);
	return true;
}

/* LOAD CACHES TO RUNTIME: validate every row, then make them the explicit
 * caches. At start an empty table keeps what the data port's cache SQL saved. */
static int load_caches(sqlite3 *db, const char *table, char *err, size_t errlen)
{
	struct cache_row *rows;
	size_t n;
	char id[20];
	uint16_t code;

	static bool loaded_once;

	if (read_rows(db, table, &rows, &n, err, errlen) < 0)
		return -1;
	if (!loaded_once && n == 0) {
		/* start-up with nothing saved in the disk database: keep the
		 * caches the data port's CREATE CACHE saved (caches.json) */
		loaded_once = true;
		free_rows(rows, n);
		return 0;
	}
	loaded_once = true;
	for (size_t i = 0; i < n; i++) {
		if (cache_check(&rows[i].cc, err, errlen) < 0) {
			free_rows(rows, n);
			return -1;
		}
	}
	registry_each(drop_explicit, NULL);
	for (size_t i = 0; i < n; i++)
		if (cache_create(&rows[i].cc, id, &code, err, errlen) < 0)
			log_warn("LOAD CACHES: %s", err);
	free_rows(rows, n);
	cache_persist_save();
	return 0;
}

/* ---- QUERY RULES ----------------------------------------------------- */

#define RULE_COLS "rule_id, active, username, schemaname, digest, match_digest, " \
	"cache_ttl, cache_empty_result, apply, comment"
#define RULE_NCOLS 10

struct rule_rows {
	struct rule_row *r;
	size_t n, cap;
};

static void free_rule_rows(struct rule_rows *rr)
{
	for (size_t i = 0; i < rr->n; i++) {
		free((char *)rr->r[i].username);
		free((char *)rr->r[i].schemaname);
		free((char *)rr->r[i].digest);
		free((char *)rr->r[i].match_digest);
		free((char *)rr->r[i].comment);
	}
	free(rr->r);
}

static char *col_dup(sqlite3_stmt *st, int col, bool *oom)
{
	const char *t = (const char *)sqlite3_column_text(st, col);
	char *c;

	if (sqlite3_column_type(st, col) == SQLITE_NULL || !t)
		return NULL;
	c = strdup(t);
	if (!c)
		*oom = true;
	return c;
}

/* An integer column: 0, or 1 when NULL; -1 with err when it holds text. */
static int col_int(sqlite3_stmt *st, int col, int64_t *out, int64_t id, char *err, size_t errlen)
{
	int type = sqlite3_column_type(st, col);

	*out = sqlite3_column_int64(st, col);
	if (type == SQLITE_INTEGER)
		return 0;
	if (type == SQLITE_NULL)
		return 1;
	snprintf(err, errlen, "rule %lld: %s must be an integer, not '%.40s'", (long long)id,
		 sqlite3_column_name(st, col), (const char *)sqlite3_column_text(st, col));
	return -1;
}

/* One row of the result into r (strings copied). active and apply are NOT
 * NULL in the schema. */
static int rule_from_stmt(sqlite3_stmt *st, struct rule_row *r, char *err, size_t errlen)
{
	bool oom = false;
	int64_t id = sqlite3_column_int64(st, 0);
	int ttl, empty;

	memset(r, 0, sizeof(*r));
	r->rule_id = id;
	if (col_int(st, 1, &r->active, id, err, errlen) < 0 ||
	    col_int(st, 8, &r->apply, id, err, errlen) < 0 ||
	    (ttl = col_int(st, 6, &r->cache_ttl, id, err, errlen)) < 0 ||
	    (empty = col_int(st, 7, &r->cache_empty_result, id, err, errlen)) < 0)
		return -1;
	r->has_cache_ttl = ttl == 0;
	r->has_cache_empty_result = empty == 0;
	r->username = col_dup(st, 2, &oom);
	r->schemaname = col_dup(st, 3, &oom);
	r->digest = col_dup(st, 4, &oom);
	r->match_digest = col_dup(st, 5, &oom);
	r->comment = col_dup(st, 9, &oom);
	if (oom)
		snprintf(err, errlen, "out of memory");
	return oom ? -1 : 0;
}

static int read_rule_rows(sqlite3 *db, const char *table, struct rule_rows *rr, char *err,
			  size_t errlen)
{
	char *sql = sqlite3_mprintf("SELECT " RULE_COLS " FROM %s ORDER BY rule_id", table);
	sqlite3_stmt *st = NULL;
	int rc = 0;

	memset(rr, 0, sizeof(*rr));
	if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sql ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_free(sql);
		return -1;
	}
	sqlite3_free(sql);
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		if (rr->n == rr->cap) {
			size_t cap = rr->cap ? rr->cap * 2 : 16;
			struct rule_row *p = realloc(rr->r, cap * sizeof(*p));

			if (!p) {
				snprintf(err, errlen, "out of memory");
				rc = -1;
				break;
			}
			rr->r = p;
			rr->cap = cap;
		}
		rc = rule_from_stmt(st, &rr->r[rr->n], err, errlen);
		rr->n++; /* its strings are freed either way */
	}
	sqlite3_finalize(st);
	return rc;
}

/* After new rules: every shape not made by CREATE CACHE is classified again
 * when next seen; until then it is not served from the cache. */
static bool reclassify(struct cache_def *d, void *arg)
{
	int state = atomic_load(&d->state);

	(void)arg;
	if (state == CACHE_CACHED && atomic_load(&d->explicit_cache))
		return true;
	if (state == CACHE_CACHED ||
	    (state == CACHE_SKIPPED && atomic_load(&d->skip_reason)->id == WHY_QUERY_RULE))
		registry_set_proxied(d);
	atomic_store(&d->classified, false);
	return true;
}

static void warn_unmatched_columns(const struct rule_rows *rr)
{
	for (size_t i = 0; i < rr->n; i++) {
		const struct rule_row *r = &rr->r[i];

		if (r->active && ((r->username && *r->username) || (r->schemaname && *r->schemaname)))
			log_warn("LOAD QUERY RULES: rule %lld: username and schemaname are not "
				 "evaluated (the cache decides per query shape)", (long long)r->rule_id);
	}
}

/* LOAD QUERY RULES TO RUNTIME: validate and compile every row, install the
 * set, and have every automatic shape classified again. */
static int load_rules(sqlite3 *db, const char *table, char *err, size_t errlen)
{
	struct rule_rows rr;
	struct rules_set *set = NULL;

	if (read_rule_rows(db, table, &rr, err, errlen) == 0)
		set = rules_compile(rr.r, rr.n, err, errlen);
	if (set)
		warn_unmatched_columns(&rr);
	free_rule_rows(&rr);
	if (!set)
		return -1;
	rules_install(set);
	registry_each(reclassify, NULL);
	return 0;
}

static const char *num_or_null(bool set, int64_t v, char *buf, size_t cap)
{
	if (!set)
		return NULL;
	snprintf(buf, cap, "%lld", (long long)v);
	return buf;
}

struct rule_out {
	sqlite3 *db;
	const char *table;
};

static int save_rule(const struct rule_row *r, void *arg)
{
	const struct rule_out *o = arg;
	char num[3][24];
	const char *v[RULE_NCOLS];

	v[0] = num_or_null(true, r->rule_id, num[0], sizeof(num[0]));
	v[1] = r->active ? "1" : "0";
	v[2] = r->username;
	v[3] = r->schemaname;
	v[4] = r->digest;
	v[5] = r->match_digest;
	v[6] = num_or_null(r->has_cache_ttl, r->cache_ttl, num[1], sizeof(num[1]));
	v[7] = num_or_null(r->has_cache_empty_result, r->cache_empty_result, num[2], sizeof(num[2]));
	v[8] = r->apply ? "1" : "0";
	v[9] = r->comment;
	return admin_insert_row(o->db, o->table, RULE_NCOLS, v) < 0 ? -1 : 0;
}

/* SAVE QUERY RULES FROM RUNTIME (and runtime_query_rules): the runtime rules. */
static int save_rules(sqlite3 *db, const char *table, char *err, size_t errlen)
{
	struct rule_out o = { db, table };

	if (rules_each(save_rule, &o) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", table, sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

/* shoal_cacheable(digest_text): what this node would do with queries of
 * that shape (ProxySQL's digest_text, same normalisation): 'cached' (a query
 * rule or auto-cache caches it), 'proxied' (cacheable, but no rule and
 * auto-cache off) or 'skipped: <reason>'. For shoal-ha advise. */
static void fn_cacheable(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *t = (const char *)sqlite3_value_text(argv[0]);
	int n = sqlite3_value_bytes(argv[0]), ttl = 0, v;
	const struct reason *reason;
	char out[256];

	(void)argc;
	if (!t) {
		sqlite3_result_null(ctx);
		return;
	}
	reason = sql_skip_reason(t, (size_t)n);
	if (reason) {
		snprintf(out, sizeof(out), "skipped: %s", reason->text);
	} else {
		v = rules_decide(spooky_hash64(t, n > SQL_DIGEST_HASH_MAX ? SQL_DIGEST_HASH_MAX : (size_t)n, 0),
				 t, &ttl, NULL);
		if (v < 0)
			snprintf(out, sizeof(out), "skipped: %s", reason_of(WHY_QUERY_RULE)->text);
		else
			snprintf(out, sizeof(out), "%s", v > 0 || g_config.auto_cache ? "cached" : "proxied");
	}
	sqlite3_result_text(ctx, out, -1, SQLITE_TRANSIENT);
}

static int define_functions(sqlite3 *db)
{
	return sqlite3_create_function(db, "shoal_cacheable", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				       fn_cacheable, NULL, NULL);
}

void cache_admin_register(void)
{
	admin_register_sql_functions(define_functions);
	admin_register_module("CACHES", load_caches, save_caches);
	admin_register_module("QUERY RULES", load_rules, save_rules);
	admin_register_stats_provider("stats_shoal_query_digest", fill_digest);
	admin_register_stats_provider("stats_shoal_caches", fill_caches);
	admin_register_stats_provider("stats_shoal_entry_constraints", fill_constraints);
}
