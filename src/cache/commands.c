/*
 * commands.c: parsing and answering the cache SQL of the data port, and
 * keeping explicit cache definitions in <data_dir>/caches.json. See
 * commands.h.
 */
#include "cache/commands.h"

#include <jansson.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/inval.h"
#include "cache/registry.h"
#include "cache/consistency.h"
#include "cache/store.h"
#include "config/config.h"
#include "base/health.h"
#include "base/log.h"
#include "proto/resultset.h"
#include "sql/classify.h"
#include "base/stats.h"
#include "upstream/upstream.h"

#define ER_PARSE 1064
#define ER_NOT_SUPPORTED 1235
#define ER_UNKNOWN_CACHE ERR_UNKNOWN_ERROR

/* The cache SQL as sql/cachesql.c read it, in the cache's terms. */
static int from_sql(int kind, const struct sql_cache_cmd *c, struct cache_cmd_args *a)
{
	struct create_cache *cc = &a->create;

	_Static_assert(sizeof(cc->name) == sizeof(c->name) && sizeof(cc->query_id) == sizeof(c->query_id) &&
		       sizeof(a->target) == sizeof(c->target), "the same sizes as the reader's");
	memset(a, 0, sizeof(*a));
	a->limit = c->limit;
	memcpy(a->target, c->target, sizeof(a->target));
	cc->from_id = c->from_id;
	memcpy(cc->name, c->name, sizeof(cc->name));
	cc->ttl_ms = c->ttl_ms;
	cc->refresh_ms = c->refresh_ms;
	cc->coalesce_ms = c->coalesce_ms;
	cc->txn = c->txn == SQL_CC_TXN_ALWAYS ? TXN_ALWAYS : c->txn == SQL_CC_TXN_UNTIL_WRITE ? TXN_UNTIL_WRITE
											       : TXN_DEFAULT;
	cc->select = c->select;
	cc->select_len = c->select_len;
	memcpy(cc->query_id, c->query_id, sizeof(cc->query_id));
	return kind;
}

int cache_cmd_parse(const char *q, size_t n, struct cache_cmd_args *a, char *err, size_t errlen)
{
	struct sql_cache_cmd c;

	return from_sql(sql_cache_cmd_text(q, n, &c, err, errlen), &c, a);
}

/* ---- CREATE CACHE ------------------------------------------------------- */

static struct cache_def *def_for_select(const char *q, size_t n, uint16_t *code, char *err, size_t errlen)
{
	static __thread struct {
		struct sql_tok_result r;
		char text[SQL_TOK_MIN_TEXT_CAP];
	} t;
	const struct reason *reason;
	struct cache_def *d;

	t.r.text = t.text;
	t.r.text_cap = sizeof(t.text);
	if (sql_tokenize(q, n, &t.r) < 0 || !t.r.ok) {
		*code = ER_PARSE;
		snprintf(err, errlen, "Cannot read the query of CREATE CACHE");
		return NULL;
	}
	reason = sql_skip_reason(t.r.text, t.r.text_len);
	if (!reason && (t.r.flags & SQL_TOK_TEXT_TRUNCATED))
		reason = reason_of(WHY_TOO_LONG);
	if (reason) {
		*code = ER_NOT_SUPPORTED;
		snprintf(err, errlen, "This query cannot be cached: %s", reason->text);
		return NULL;
	}
	d = registry_get(t.r.digest, t.r.text, t.r.text_len, q, n);
	if (!d) {
		*code = ER_UNKNOWN_CACHE;
		snprintf(err, errlen, "Too many query shapes");
		return NULL;
	}
	atomic_store(&d->keyword, (int)t.r.keyword);
	atomic_store(&d->classified, true);
	return d;
}

int cache_check(const struct create_cache *cc, char *err, size_t errlen)
{
	struct sql_tok_result r;
	char text[SQL_TOK_MIN_TEXT_CAP];
	const struct reason *reason;

	if (cc->ttl_ms == 0 || (cc->ttl_ms > 0 && cc->refresh_ms >= cc->ttl_ms)) {
		snprintf(err, errlen, "REFRESH must be less than TTL, and TTL more than 0");
		return -1;
	}
	r.text = text;
	r.text_cap = sizeof(text);
	if (sql_tokenize(cc->select, cc->select_len, &r) < 0 || !r.ok) {
		snprintf(err, errlen, "Cannot read the query '%.60s'", cc->select);
		return -1;
	}
	reason = sql_skip_reason(r.text, r.text_len);
	if (reason) {
		snprintf(err, errlen, "This query cannot be cached: %s: '%.60s'", reason->text, cc->select);
		return -1;
	}
	return 0;
}

int cache_create(const struct create_cache *cc, char *query_id_out, uint16_t *code,
		 char *err, size_t errlen)
{
	struct cache_def *d;
	int ttl = cc->ttl_ms >= 0 ? cc->ttl_ms : inval_default_ttl_ms();
	int refresh = cc->refresh_ms >= 0 ? cc->refresh_ms : inval_default_refresh_ms();
	int coalesce = cc->coalesce_ms >= 0 ? cc->coalesce_ms : g_config.cache_coalesce_ms;

	if (ttl <= 0 || (cc->refresh_ms >= 0 && refresh >= ttl)) {
		*code = ER_PARSE;
		snprintf(err, errlen, "REFRESH must be less than TTL, and TTL more than 0");
		return -1;
	}
	if (cc->from_id) {
		d = registry_find_name(cc->query_id);
		if (!d || atomic_load(&d->state) == CACHE_SKIPPED) {
			*code = ER_UNKNOWN_CACHE;
			snprintf(err, errlen, d ? "Query %s cannot be cached: %s" : "Unknown query id %s%s",
				 cc->query_id, d ? atomic_load(&d->skip_reason)->text : "");
			return -1;
		}
	} else {
		d = def_for_select(cc->select, cc->select_len, code, err, errlen);
		if (!d)
			return -1;
	}
	registry_set_cached(d, cc->name[0] ? cc->name : NULL, ttl, refresh, coalesce,
			    (enum txn_policy)cc->txn, true);
	snprintf(query_id_out, 20, "%s", d->query_id);
	return 0;
}

/* ---- persistence ------------------------------------------------------- */

static bool add_def_json(struct cache_def *d, void *arg)
{
	json_t *arr = arg, *o;
	int txn = atomic_load(&d->txn);

	if (atomic_load(&d->state) != CACHE_CACHED || !atomic_load(&d->explicit_cache))
		return true;
	o = json_pack("{s:s, s:s, s:i, s:i, s:i, s:s}", "name", d->name, "query", d->query_text,
		      "ttl_ms", atomic_load(&d->ttl_ms), "refresh_ms", def_refresh_ms(d),
		      "coalesce_ms", atomic_load(&d->coalesce_ms),
		      "txn", txn == TXN_ALWAYS ? "always" : txn == TXN_UNTIL_WRITE ? "until_write" : "default");
	return o && json_array_append_new(arr, o) == 0;
}

static void persist_path(char *path, size_t n)
{
	snprintf(path, n, "%s/caches.json", g_config.data_dir);
}

void cache_persist_save(void)
{
	char path[1100], tmp[1110];
	json_t *arr = json_array();

	if (!arr)
		return;
	persist_path(path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	registry_each(add_def_json, arr);
	if (json_dump_file(arr, tmp, JSON_INDENT(1)) != 0 || rename(tmp, path) != 0) {
		log_warn("cannot save cache definitions to %s: %s", path, strerror(errno));
		unlink(tmp);
	}
	json_decref(arr);
}

static int def_from_json(json_t *o, char *err, size_t errlen)
{
	struct create_cache cc;
	const char *name = json_string_value(json_object_get(o, "name"));
	const char *q = json_string_value(json_object_get(o, "query"));
	const char *txn = json_string_value(json_object_get(o, "txn"));
	char id[20];
	uint16_t code;

	if (!q) {
		snprintf(err, errlen, "an entry without a query");
		return -1;
	}
	memset(&cc, 0, sizeof(cc));
	snprintf(cc.name, sizeof(cc.name), "%s", name ? name : "");
	cc.select = q;
	cc.select_len = strlen(q);
	cc.ttl_ms = (int)json_integer_value(json_object_get(o, "ttl_ms"));
	cc.refresh_ms = (int)json_integer_value(json_object_get(o, "refresh_ms"));
	cc.coalesce_ms = (int)json_integer_value(json_object_get(o, "coalesce_ms"));
	cc.txn = txn && strcmp(txn, "always") == 0 ? TXN_ALWAYS :
		 txn && strcmp(txn, "until_write") == 0 ? TXN_UNTIL_WRITE : TXN_DEFAULT;
	return cache_create(&cc, id, &code, err, errlen);
}

void cache_persist_load(void)
{
	char path[1100], err[256];
	json_error_t jerr;
	json_t *arr;
	size_t i;
	json_t *o;
	int n = 0;

	persist_path(path, sizeof(path));
	if (access(path, F_OK) != 0)
		return;
	arr = json_load_file(path, 0, &jerr);
	if (!json_is_array(arr)) {
		log_warn("%s: not a list of cache definitions: %s (line %d)", path, jerr.text, jerr.line);
		json_decref(arr);
		return;
	}
	json_array_foreach(arr, i, o) {
		if (def_from_json(o, err, sizeof(err)) < 0)
			log_warn("%s: skipped a cache definition: %s", path, err);
		else
			n++;
	}
	json_decref(arr);
	log_info("loaded %d cache definitions from %s", n, path);
}

/* ---- answers ----------------------------------------------------------- */

static void answer_create(const struct cache_reply *r, const struct create_cache *cc)
{
	char id[20], err[256];
	uint16_t code;
	struct cache_def *d;
	const char *names[] = { "query_id", "name", "query", "cache_type" };
	const char *cells[4];
	uint8_t seq = 1;

	if (cache_create(cc, id, &code, err, sizeof(err)) < 0) {
		pkt_put_errf(r->out, 1, code, code == ER_PARSE ? "42000" : "HY000", "%s", err);
		return;
	}
	cache_persist_save();
	d = registry_find_name(id);
	cells[0] = id;
	cells[1] = d && d->name[0] ? d->name : id;
	cells[2] = d ? d->digest_text : "";
	cells[3] = "shallow";
	rs_put_table(r->out, &seq, r->caps, r->status, 4, names, 1, cells);
}

static void drop_def(struct cache_def *d)
{
	registry_set_proxied(d);
	/* with auto-cache on, the shape is considered again when next seen */
	atomic_store(&d->classified, false);
}

static bool drop_each(struct cache_def *d, void *arg)
{
	(void)arg;
	if (atomic_load(&d->state) == CACHE_CACHED)
		drop_def(d);
	return true;
}

static void answer_drop(const struct cache_reply *r, enum cache_cmd kind, const char *target)
{
	struct cache_def *d = NULL;
	size_t n;

	if (kind == CC_DROP || kind == CC_FLUSH) {
		d = registry_find_name(target);
		if (!d || atomic_load(&d->state) != CACHE_CACHED) {
			pkt_put_errf(r->out, 1, ER_UNKNOWN_CACHE, "HY000", "Cache '%s' does not exist", target);
			return;
		}
	}
	if (kind == CC_DROP)
		drop_def(d);
	if (kind == CC_DROP_ALL)
		registry_each(drop_each, NULL);
	n = store_flush(d);
	if (kind == CC_DROP || kind == CC_DROP_ALL)
		cache_persist_save();
	pkt_put_ok(r->out, 1, n, 0, r->status, 0, r->caps);
}

/* Rows of SHOW CACHES (cached shapes) or SHOW PROXIED QUERIES (the others):
 * of the registry's snapshot, keep those at the front, with only_id (WHERE
 * query_id = ...) when given; returns how many. */
static size_t keep_listed(struct cache_def **v, size_t n, bool cached, const char *only_id)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if ((atomic_load(&v[i]->state) == CACHE_CACHED) == cached &&
		    (!only_id || strcasecmp(only_id, v[i]->query_id) == 0))
			v[k++] = v[i];
	return k;
}

static const char *support_of(const struct cache_def *d, char *buf, size_t cap)
{
	const struct reason *reason = atomic_load(&d->skip_reason);

	if (atomic_load(&d->state) == CACHE_SKIPPED) {
		snprintf(buf, cap, "unsupported: %s", reason ? reason->text : "unknown");
		return buf;
	}
	return atomic_load(&d->classified) ? "yes" : "pending";
}

static int support_rank(const struct cache_def *d)
{
	if (atomic_load(&d->state) == CACHE_SKIPPED)
		return 1;
	return atomic_load(&d->classified) ? 0 : 3;
}

static int by_rank_then_count(const void *a, const void *b)
{
	const struct cache_def *x = *(struct cache_def *const *)a, *y = *(struct cache_def *const *)b;
	int rx = support_rank(x), ry = support_rank(y);
	uint64_t cx = def_counter((struct cache_def *)x, DC_COUNT, false);
	uint64_t cy = def_counter((struct cache_def *)y, DC_COUNT, false);

	if (rx != ry)
		return rx - ry;
	return cx < cy ? 1 : cx > cy ? -1 : 0;
}

static void answer_listing(const struct cache_reply *r, bool caches, const struct cache_cmd_args *a)
{
	struct cache_def **defs;
	struct rs_writer w;
	char props[160], sup[160];
	size_t listed, n;

	if (registry_snapshot(&defs, &listed) < 0) {
		pkt_put_errf(r->out, 1, ERR_UNKNOWN_ERROR, "HY000", "Out of memory");
		return;
	}
	listed = keep_listed(defs, listed, caches, a->target[0] ? a->target : NULL);
	if (listed > 1)
		qsort(defs, listed, sizeof(*defs), by_rank_then_count);
	n = a->limit >= 0 && (size_t)a->limit < listed ? (size_t)a->limit : listed;
	rs_begin(&w, r->out, 1, r->caps, caches ? 5 : 4);
	rs_column(&w, "query_id", RS_TYPE_VAR_STRING);
	if (caches)
		rs_column(&w, "name", RS_TYPE_VAR_STRING);
	rs_column(&w, "query", RS_TYPE_VAR_STRING);
	rs_column(&w, caches ? "properties" : "readyset_supported", RS_TYPE_VAR_STRING);
	rs_column(&w, "count", RS_TYPE_LONGLONG);
	for (size_t i = 0; i < n; i++) {
		struct cache_def *d = defs[i];

		rs_row_begin(&w);
		rs_cell_str(&w, d->query_id);
		if (caches) {
			rs_cell_str(&w, d->name[0] ? d->name : d->query_id);
			char refresh[40] = "no refresh";

			if (def_refresh_ms(d) < atomic_load(&d->ttl_ms))
				snprintf(refresh, sizeof(refresh), "refresh %d ms", def_refresh_ms(d));
			snprintf(props, sizeof(props), "shallow, ttl %d ms, %s, coalesce %d ms%s",
				 atomic_load(&d->ttl_ms), refresh, atomic_load(&d->coalesce_ms),
				 atomic_load(&d->txn) == TXN_ALWAYS ? ", always" :
				 atomic_load(&d->txn) == TXN_UNTIL_WRITE ? ", until write" : "");
		}
		rs_cell_str(&w, d->digest_text);
		rs_cell_str(&w, caches ? props : support_of(d, sup, sizeof(sup)));
		rs_cell_u64(&w, def_counter(d, DC_COUNT, false));
		rs_row_end(&w);
	}
	if (rs_end(&w, r->status) < 0)
		pkt_put_errf(r->out, 1, ERR_UNKNOWN_ERROR, "HY000", "Out of memory");
	free(defs);
}

static void answer_pairs(const struct cache_reply *r, const char *n1, const char *n2,
			 const char *const *cells, size_t rows)
{
	const char *names[2] = { n1, n2 };
	uint8_t seq = 1;

	if (rs_put_table(r->out, &seq, r->caps, r->status, 2, names, rows, cells) < 0)
		pkt_put_errf(r->out, 1, ERR_UNKNOWN_ERROR, "HY000", "Out of memory");
}

void cache_status_answer(const struct cache_reply *r, bool readyset)
{
	char conns[24], entries[24], bytes[24], limit[24], hits[24], misses[24], evictions[24];
	const char *cells[] = {
		"Database Connection", health_upstream_up() ? "Connected" : "Unreachable",
		"Connection Count", conns,
		"Status", health_draining() ? "Maintenance Mode" : "Online",
		"Cache Entries", entries,
		"Cache Memory Bytes", bytes,
		"Memory Limit Bytes", limit,
		"Cache Evictions", evictions,
		"Cache Hits", hits,
		"Cache Misses", misses,
		"Auto Cache", g_config.auto_cache ? "on" : "off",
	};

	snprintf(conns, sizeof(conns), "%llu", (unsigned long long)STAT_GET(client_connections));
	snprintf(entries, sizeof(entries), "%llu", (unsigned long long)store_entries());
	snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)store_bytes());
	snprintf(limit, sizeof(limit), "%llu", (unsigned long long)g_config.memory_limit);
	snprintf(evictions, sizeof(evictions), "%llu", (unsigned long long)store_evictions());
	snprintf(hits, sizeof(hits), "%llu", (unsigned long long)STAT_GET(cache_hits));
	snprintf(misses, sizeof(misses), "%llu", (unsigned long long)STAT_GET(cache_misses));
	if (readyset) {
		answer_pairs(r, "Variable_name", "Value", cells, 3);
		return;
	}
	{
		struct consist_figure f[CONSIST_FIGURES];
		size_t nf = consistency_figures(f), n = sizeof(cells) / sizeof(cells[0]) / 2;
		const char *all[2 * (sizeof(cells) / sizeof(cells[0]) / 2 + CONSIST_FIGURES)];

		memcpy(all, cells, sizeof(cells));
		for (size_t i = 0; i < nf; i++) {
			all[2 * (n + i)] = f[i].title;
			all[2 * (n + i) + 1] = f[i].value;
		}
		answer_pairs(r, "Variable_name", "Value", all, n + nf);
	}
}

/* May the statement be cache SQL? Its first word by the digest, or a
 * digest that hides part of the text (the reading decides then). */
static bool may_be_cache_sql(const struct sql_tok_result *tok)
{
	switch (tok->keyword) {
	case KW_CREATE: case KW_DROP: case KW_SHOW: case KW_FLUSH: case KW_EXPLAIN:
		return true;
	default:
		return (tok->flags & SQL_TOK_HIDDEN_SQL) != 0;
	}
}

bool cache_sql(const struct cache_reply *r, struct stmt *st)
{
	const struct sql_tok_result *tok = stmt_digest(st);
	struct sql_cache_cmd c;
	struct cache_cmd_args a;
	char err[256];
	int kind;

	if (!tok || !may_be_cache_sql(tok))
		return false;
	stmt_read(st);
	kind = from_sql(sql_cache_cmd_stmt(st, &c, err, sizeof(err)), &c, &a);
	if (kind == CC_NONE)
		return false;
	switch (kind) {
	case -1:
		pkt_put_errf(r->out, 1, ER_PARSE, "42000", "%s", err);
		break;
	case CC_CREATE:
		answer_create(r, &a.create);
		break;
	case CC_DROP: case CC_DROP_ALL: case CC_FLUSH: case CC_FLUSH_ALL:
		answer_drop(r, (enum cache_cmd)kind, a.target);
		break;
	case CC_SHOW_CACHES: case CC_SHOW_PROXIED:
		answer_listing(r, kind == CC_SHOW_CACHES, &a);
		break;
	case CC_EXPLAIN_LAST: {
		const char *cells[] = { r->last_dest, r->last_reason ? r->last_reason->text : "" };

		answer_pairs(r, "Query_destination", "Readyset_reason", cells, 1);
		break;
	}
	default:
		cache_status_answer(r, kind == CC_SHOW_RS_STATUS);
	}
	return true;
}
