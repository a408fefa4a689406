/*
 * session.c: the cache's part of a session's command phase (see session.h):
 * cache keys, hits, coalesced waits, fills and background refreshes, the
 * session settings that keys depend on, and the prepared statements that
 * binary-protocol keys are made from.
 *
 * A cache key is, byte for byte: the protocol ('Q' text, 'B' binary), the
 * client capability bits that change the encoding (DEPRECATE_EOF,
 * SESSION_TRACK), the session's settings as the upstream reports them (see
 * SETTINGS_SQL; the schema is among them), the upstream user's identity
 * (grants.h: cache_scope), and the exact query bytes (or the statement text
 * and the bound parameter block). Keys are compared in full. A hit is
 * served only when the user's grant verdict allows it (grants.h).
 */
#include "cache/session.h"
#include "mux.h"
#include "pool.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/cache_metrics.h"
#include "cache/commands.h"
#include "cache/grants.h"
#include "cache/registry.h"
#include "cache/settings.h"
#include "cache/rules.h"
#include "cache/store.h"
#include "client.h"
#include "config.h"
#include "health.h"
#include "log.h"
#include "sql/classify.h"
#include "sql/tokenizer.h"
#include "stats.h"
#include "worker.h"

/* What, besides the query, decides the bytes of a SELECT's answer. */
#define SETTINGS_SQL "SELECT @@character_set_client,@@character_set_connection," \
	"@@character_set_results,@@collation_connection,@@time_zone,@@sql_mode," \
	"@@lc_time_names,@@div_precision_increment,@@sql_select_limit," \
	"@@group_concat_max_len,@@max_sort_length,@@default_week_format," \
	"@@sql_auto_is_null,DATABASE()"
#define SETTINGS_COLUMNS 14
/* MariaDB has more that change results: appended when the upstream is one. */
#define SETTINGS_SQL_MARIADB SETTINGS_SQL ",@@default_regex_flags,@@system_versioning_asof,@@old_mode"
#define SETTINGS_COLUMNS_MARIADB 17

/* Status bits that describe the session, not the statement: patched into a
 * cached answer for the session that gets it. */

#define DEST_CACHE "readyset_shallow"
#define DEST_UPSTREAM "upstream"

struct tok_scratch {
	struct sql_tok_result r;
	char text[SQL_TOK_MIN_TEXT_CAP];
};

int cache_global_init(void)
{
	if (registry_init() < 0)
		return -1;
	return store_init(g_config.memory_limit, worker_wake);
}

void cache_global_free(void)
{
	store_destroy();
	registry_destroy();
	settings_free_all();
}

int64_t cache_now_ms(struct client *c)
{
	return (int64_t)(ev_now(c->w->loop) * 1000.0);
}

uint64_t cache_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void on_wait_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct client *c = t->data;

	(void)loop;
	(void)revents;
	cache_wait_over(c, true);
	client_resume(c);
}

void cache_session_init(struct client *c)
{
	c->settings_dirty = true;
	c->server_status = ST_AUTOCOMMIT;
	c->waiter.w = c->w;
	c->waiter.client_id = c->id;
	ev_timer_init(&c->wait_timer, on_wait_timeout, 0., 0.);
	c->wait_timer.data = c;
	c->last_dest = DEST_UPSTREAM;
	c->last_reason = "no statement yet";
}

static void stmts_clear(struct client *c)
{
	for (size_t i = 0; i < c->n_stmts; i++) {
		free(c->stmts[i].text);
		free(c->stmts[i].types);
		pbuf_free(&c->stmts[i].meta);
	}
	c->n_stmts = 0;
	c->cur_stmt = NULL;
}

void cache_session_free(struct client *c)
{
	cache_abort(c);
	stmts_clear(c);
	free(c->stmts);
	c->stmts = NULL;
	pbuf_free(&c->keybuf);
	pbuf_free(&c->fill_buf);
	pbuf_free(&c->scratch);
	pbuf_free(&c->prep_text);
	pbuf_free(&c->prep_meta);
}

void cache_relay_setup(struct client *c, uint8_t cmd)
{
	struct pbuf *meta = NULL;

	if (!c->up)
		return;
	if (cmd == CMD_STMT_PREPARE)
		meta = &c->prep_meta;
	else if (cmd == CMD_STMT_EXECUTE && c->cur_stmt)
		meta = &c->cur_stmt->meta;
	relay_upstream(&c->relay, c->up->cache_meta, c->up->progress, meta, meta);
}

static void waiting_unlink(struct client *c)
{
	if (c->wait_prev)
		c->wait_prev->wait_next = c->wait_next;
	else if (c->w->waiting == c)
		c->w->waiting = c->wait_next;
	if (c->wait_next)
		c->wait_next->wait_prev = c->wait_prev;
	c->wait_prev = c->wait_next = NULL;
}

void cache_abort(struct client *c)
{
	if (c->waiting) {
		store_cancel_wait(c->keybuf.data, c->keybuf.len, c->key_hash, &c->waiter);
		ev_timer_stop(c->w->loop, &c->wait_timer);
		waiting_unlink(c);
		c->waiting = false;
	}
	if (c->fill) {
		store_abandon(c->fill);
		c->fill = NULL;
	}
	if (c->refresh) {
		atomic_fetch_add(&c->refresh->def->refresh_failed, 1);
		store_abandon(c->refresh);
		c->refresh = NULL;
	}
	grants_abort(c);
}

void cache_session_reset(struct client *c)
{
	cache_abort(c);
	stmts_clear(c);
	c->settings_dirty = true;
	c->settings_broken = false;
	c->server_status = ST_AUTOCOMMIT;
	c->txn_wrote = false;
}

/* ---- keys, hits -------------------------------------------------------- */

static bool in_txn(const struct client *c)
{
	return client_in_txn(c);
}

/* How long past their TTL entries may be served now: max_stale_ms while the
 * upstream is down under the serve-stale policy, else 0. */
static int64_t stale_window(void)
{
	if (g_config.upstream_down_policy != DOWN_POLICY_SERVE_STALE || health_upstream_up())
		return 0;
	return __atomic_load_n(&g_config.max_stale_ms, __ATOMIC_RELAXED);
}

static bool txn_allows(const struct client *c, const struct cache_def *d)
{
	if (!in_txn(c))
		return true;
	switch (atomic_load_explicit(&d->txn, memory_order_relaxed)) {
	case TXN_ALWAYS:
		return true;
	case TXN_UNTIL_WRITE:
		return !c->txn_wrote;
	default:
		return false;
	}
}

static bool ryw_active(const struct client *c, int64_t now)
{
	return g_config.read_your_writes_ms > 0 && c->last_write_ms &&
	       now - c->last_write_ms < g_config.read_your_writes_ms;
}

static bool caching_possible(const struct client *c)
{
	return !c->is_monitor && !c->settings_broken && !c->up_lost && grants_session_may_cache(c);
}

static bool build_key(struct client *c, char kind, const void *a, size_t alen,
		      const void *b, size_t blen)
{
	uint8_t head[10];
	struct pbuf *k = &c->keybuf;
	int rc;

	head[0] = (uint8_t)kind;
	head[1] = (uint8_t)(((c->caps & CAP_DEPRECATE_EOF) ? 1 : 0) | ((c->caps & CAP_SESSION_TRACK) ? 2 : 0) |
			    ((c->caps & CAP_X_EXT_METADATA) ? 4 : 0));
	wr_u32(head + 2, c->settings_id);
	wr_u32(head + 6, grants_key_id(c));
	k->len = 0;
	rc = pbuf_append(k, head, sizeof(head));
	rc |= pbuf_append(k, a, alen);
	if (b)
		rc |= pbuf_append(k, b, blen);
	if (rc)
		return false;
	c->key_hash = store_hash(k->data, k->len);
	return true;
}

static void serve_hit(struct client *c, struct cache_entry *e, uint64_t t0)
{
	struct pbuf *out = &c->io.out;
	size_t at = out->len;
	struct cache_def *d = e->def;
	uint16_t session_bits = c->server_status & SESSION_STATUS_BITS;

	/* with autocommit off, any statement opens a transaction, as the
	 * server would report for the same SELECT */
	if (!(session_bits & ST_AUTOCOMMIT))
		session_bits |= ST_IN_TRANS;

	if (pbuf_append(out, entry_resp(e), e->resp_len) == 0) {
		for (int i = 0; i < ENTRY_MAX_STATUS; i++) {
			uint8_t *p;

			if (!e->status_off[i])
				continue;
			p = out->data + at + e->status_off[i];
			wr_u16(p, (uint16_t)((rd_u16(p) & ~SESSION_STATUS_BITS) | session_bits));
		}
	}
	atomic_fetch_add_explicit(&def_hot_of(d)->hits, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&def_hot_of(d)->time_saved_us, e->upstream_us, memory_order_relaxed);
	{
		uint64_t us = cache_now_us() - t0;

		def_account(d, us, e->rows, 0);
		cache_metrics_observe(true, us);
	}
	STAT_INC(cache_hits);
	if (cache_now_ms(c) >= e->expires_ms)
		STAT_INC(cache_stale_hits); /* served past its TTL: the upstream is down */
	c->last_dest = DEST_CACHE;
	c->last_reason = "ok";
	store_release(e);
}

/* Send the current command again, for a background refresh of e. */
static void start_refresh(struct client *c, struct cache_entry *e, const uint8_t *pl, uint32_t len)
{
	size_t start;
	int rc;

	if (c->st != CS_READY || c->refresh || (!c->up && !pool_borrow_now(c))) {
		store_abandon(e); /* not now: the next hit past the refresh age retries */
		return;
	}
	rc = pkt_begin(&c->up->io.out, &start);
	rc |= pbuf_append(&c->up->io.out, pl, len);
	if (rc) {
		store_abandon(e);
		return;
	}
	pkt_end(&c->up->io.out, start, 0);
	c->refresh = e;
	c->fill_buf.len = 0;
	c->cmd_start_us = cache_now_us();
	relay_start(&c->relay, pl[0], c->caps);
	cache_relay_setup(c, pl[0]);
	c->st = CS_REFRESHING;
}

/* A hit found e: may this session have it? Else e is let go. */
static enum grant_gate hit_allowed(struct client *c, struct cache_entry *e, enum store_lookup r,
				   int64_t now)
{
	bool txn_ok = txn_allows(c, e->def);
	enum grant_gate g = txn_ok ? grants_gate(c, e->def, now, stale_window() > 0) : GRANT_REFUSED;

	if (g == GRANT_OK)
		return g;
	if (g == GRANT_CHECK)
		c->grant_def = e->def;
	else if (txn_ok)
		c->grant_refused = true; /* EXPLAIN LAST STATEMENT says why */
	if (r == SL_REFRESH)
		store_abandon(e);
	store_release(e);
	return g;
}

/* 1 served, 0 not found, -1 found but this session may not use it, -2 the
 * user's grant verdict must be checked first (c->grant_def). */
static int try_hit(struct client *c, int64_t now, const uint8_t *pl, uint32_t len, uint64_t t0)
{
	struct cache_entry *e;
	enum store_lookup r = store_lookup(c->keybuf.data, c->keybuf.len, c->key_hash, now,
					   stale_window(), NULL, NULL, &e);
	enum grant_gate g;

	if (r != SL_HIT && r != SL_REFRESH)
		return 0;
	g = hit_allowed(c, e, r, now);
	if (g != GRANT_OK)
		return g == GRANT_CHECK ? -2 : -1;
	serve_hit(c, e, t0);
	if (r == SL_REFRESH)
		start_refresh(c, e, pl, len);
	return 1;
}

/* Check the user's grant verdict for c->grant_def upstream before the hit
 * (statement text q). */
static enum cache_step check_grant(struct client *c, const char *q, size_t n)
{
	if (c->st == CS_REFRESHING)
		return CSTEP_BLOCKED;
	if (!c->up)
		return CSTEP_NEED_UP;
	if (grants_start_check(c, c->grant_def, q, n))
		return CSTEP_PENDING;
	c->grant_def = NULL;
	return CSTEP_PASS;
}

/* ---- misses ------------------------------------------------------------ */

static struct sql_tok_result *tokenize(struct client *c, const char *q, size_t n)
{
	struct tok_scratch *t = c->w->tok;

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		c->w->tok = t;
	}
	t->r.text = t->text;
	t->r.text_cap = sizeof(t->text);
	if (sql_tokenize(q, n, &t->r) < 0)
		return NULL;
	return &t->r;
}

/* A shape the classifier accepts: a cache made with CREATE CACHE stays as
 * it is; else the query rules decide (cache with the rule's TTL, or never),
 * and without a rule auto-cache does. */
static void decide_cacheable(struct cache_def *d)
{
	int state = atomic_load(&d->state), ttl = 0, v;

	if (state == CACHE_CACHED && atomic_load(&d->explicit_cache))
		return;
	v = rules_decide(d->digest, d->digest_text, &ttl, NULL);
	if (v < 0)
		registry_set_skipped(d, rules_skip_reason);
	else if (v > 0) /* refresh 0: half the TTL */
		registry_set_cached(d, NULL, ttl, 0, g_config.cache_coalesce_ms, TXN_DEFAULT, false);
	else if (g_config.auto_cache)
		registry_set_cached(d, NULL, g_config.cache_ttl_ms, g_config.cache_refresh_ms,
				    g_config.cache_coalesce_ms, TXN_DEFAULT, false);
	else if (state != CACHE_PROXIED)
		registry_set_proxied(d); /* a rule's verdict that no longer holds */
}

/* Decide once per shape (and again after LOAD QUERY RULES TO RUNTIME)
 * whether it can be cached and whether a cache is created for it. */
static void classify_once(struct cache_def *d, const struct sql_tok_result *tok)
{
	const char *reason;
	unsigned gen;

	if (atomic_load(&d->classified))
		return;
	gen = rules_generation();
	atomic_store(&d->keyword, (int)tok->keyword);
	if (!tok->ok)
		reason = "unreadable query";
	else if (tok->flags & SQL_TOK_TEXT_TRUNCATED)
		reason = "query too long";
	else if (tok->lits_overflow)
		reason = "too many literals";
	else
		reason = sql_skip_reason(tok->text, tok->text_len);
	if (reason)
		registry_set_skipped(d, reason);
	else
		decide_cacheable(d);
	atomic_store(&d->classified, true);
	/* rules loaded while this ran: decide again at the next sight */
	if (rules_generation() != gen)
		atomic_store(&d->classified, false);
}

static bool is_read_keyword(int kw)
{
	return kw == SQL_KW_SELECT || kw == SQL_KW_WITH;
}

/* A statement that is not a cacheable read: may it change the settings, or
 * write (read-your-writes, UNTIL WRITE)? */
static void note_statement(struct client *c, int kw, bool multi)
{
	switch (kw) {
	case SQL_KW_SELECT: case SQL_KW_WITH: case SQL_KW_SHOW: case SQL_KW_EXPLAIN:
	case SQL_KW_DESCRIBE: case SQL_KW_BEGIN: case SQL_KW_START: case SQL_KW_COMMIT:
	case SQL_KW_ROLLBACK: case SQL_KW_SAVEPOINT: case SQL_KW_RELEASE:
		break;
	case SQL_KW_INSERT: case SQL_KW_UPDATE: case SQL_KW_DELETE: case SQL_KW_REPLACE:
	case SQL_KW_TRUNCATE: case SQL_KW_LOAD:
		c->cur_write = true;
		break;
	default: /* SET, USE, CALL, DDL, anything else */
		c->cur_write = true;
		c->cur_dirty = true;
		break;
	}
	if (multi)
		c->cur_write = c->cur_dirty = true;
}

static bool start_settings(struct client *c)
{
	struct pbuf *o;
	size_t start;
	int rc;

	if (!c->up || c->st != CS_READY)
		return false;
	o = &c->up->io.out;
	rc = pkt_begin(o, &start);
	rc |= put_u8(o, CMD_QUERY);
	if (upstream_mariadb()) {
		c->settings_cols = SETTINGS_COLUMNS_MARIADB;
		rc |= pbuf_append(o, SETTINGS_SQL_MARIADB, sizeof(SETTINGS_SQL_MARIADB) - 1);
	} else {
		c->settings_cols = SETTINGS_COLUMNS;
		rc |= pbuf_append(o, SETTINGS_SQL, sizeof(SETTINGS_SQL) - 1);
	}
	if (rc)
		return false;
	pkt_end(o, start, 0);
	c->scratch.len = 0;
	relay_start(&c->relay, CMD_QUERY, 0);
	cache_relay_setup(c, CMD_QUERY);
	c->st = CS_SETTINGS;
	return true;
}

static void begin_wait(struct client *c, struct cache_def *d)
{
	c->waiting = true;
	c->st = CS_WAITING;
	c->wait_prev = NULL;
	c->wait_next = c->w->waiting;
	if (c->w->waiting)
		c->w->waiting->wait_prev = c;
	c->w->waiting = c;
	ev_timer_set(&c->wait_timer, atomic_load(&d->coalesce_ms) / 1000.0, 0.);
	ev_timer_start(c->w->loop, &c->wait_timer);
}

void cache_wait_over(struct client *c, bool timed_out)
{
	struct cache_def *d = c->cur_def;

	if (!c->waiting)
		return;
	if (timed_out) {
		store_cancel_wait(c->keybuf.data, c->keybuf.len, c->key_hash, &c->waiter);
		c->bypass_once = true;
		if (d)
			atomic_fetch_add(&d->coalesce_timeouts, 1);
	} else {
		STAT_INC(cache_coalesced);
		if (d)
			atomic_fetch_add(&d->coalesced_waits, 1);
	}
	ev_timer_stop(c->w->loop, &c->wait_timer);
	waiting_unlink(c);
	c->waiting = false;
	c->st = CS_READY;
}

/* q, n: the statement's text (for a grant check). */
static enum cache_step lookup_or_load(struct client *c, struct cache_def *d, int64_t now,
				      const uint8_t *pl, uint32_t len, const char *q, size_t n)
{
	struct cache_entry *e;
	enum store_lookup r;
	enum grant_gate g;

	c->waiter.gen++;
	r = store_lookup(c->keybuf.data, c->keybuf.len, c->key_hash, now, stale_window(), d,
			 &c->waiter, &e);
	switch (r) {
	case SL_HIT:
	case SL_REFRESH:
		g = hit_allowed(c, e, r, now);
		if (g == GRANT_CHECK)
			return check_grant(c, q, n);
		if (g == GRANT_REFUSED)
			return CSTEP_PASS;
		serve_hit(c, e, cache_now_us());
		if (r == SL_REFRESH)
			start_refresh(c, e, pl, len);
		return CSTEP_DONE;
	case SL_WAIT:
		begin_wait(c, d);
		return CSTEP_PENDING;
	case SL_LOAD:
		c->fill = e;
		c->fill_buf.len = 0;
		c->fill_too_big = false;
		atomic_fetch_add(&d->misses, 1);
		STAT_INC(cache_misses);
		c->last_dest = DEST_CACHE;
		c->last_reason = "ok";
		return CSTEP_PASS;
	default:
		return CSTEP_PASS;
	}
}

/* The shape is cached: may this session use it for this command? */
static enum cache_step cached_shape(struct client *c, struct cache_def *d, bool bypass)
{
	c->last_dest = DEST_UPSTREAM;
	if (bypass || !txn_allows(c, d)) {
		c->last_reason = c->grant_refused ? "the upstream refused this user's grant check" :
				 !grants_session_may_cache(c) ? "SET ROLE: the session has its own privileges" :
				 in_txn(c) ? "inside a transaction" : "read-your-writes window";
		return CSTEP_PASS;
	}
	if (c->settings_dirty) {
		if (!c->up)
			return CSTEP_NEED_UP;
		return start_settings(c) ? CSTEP_PENDING : CSTEP_PASS;
	}
	return CSTEP_DONE; /* the caller builds the key and looks up */
}

/* Verdict for a shape seen on a miss; CSTEP_DONE means "look it up". */
static enum cache_step verdict(struct client *c, struct cache_def *d, bool bypass)
{
	int state = atomic_load(&d->state);

	if (state == CACHE_SKIPPED) {
		atomic_fetch_add(&d->skips, 1);
		c->last_dest = DEST_UPSTREAM;
		c->last_reason = atomic_load(&d->skip_reason);
		return CSTEP_PASS;
	}
	if (state != CACHE_CACHED) {
		c->last_dest = DEST_UPSTREAM;
		c->last_reason = "no cache for this query";
		return CSTEP_PASS;
	}
	return cached_shape(c, d, bypass);
}

/* Text the tokenizer may have read differently from the server: SQL hidden
 * behind a "--" without a following space (ProxySQL's reading), or a
 * backslash escape in a session where backslash is no escape. */
static bool hidden_statement(const struct client *c, const struct sql_tok_result *tok)
{
	if (tok->flags & SQL_TOK_HIDDEN_SQL)
		return true;
	return (tok->flags & SQL_TOK_BACKSLASH_ESCAPE) && (c->server_status & ST_NO_BACKSLASH_ESCAPES);
}

static enum cache_step on_query(struct client *c, const uint8_t *pl, uint32_t len)
{
	const char *q = (const char *)pl + 1;
	size_t n = len - 1;
	int64_t now = cache_now_ms(c);
	bool bypass = c->bypass_once || ryw_active(c, now) || !caching_possible(c);
	struct sql_tok_result *tok;
	struct cache_def *d;
	enum cache_step step;

	c->bypass_once = false;
	if (!bypass && !c->settings_dirty && build_key(c, 'Q', q, n, NULL, 0)) {
		int h = try_hit(c, now, pl, len, cache_now_us());

		if (h > 0)
			return CSTEP_DONE;
		if (h == -2)
			return check_grant(c, q, n);
		bypass = h < 0;
	}
	if (c->st == CS_REFRESHING)
		return CSTEP_BLOCKED;
	tok = tokenize(c, q, n);
	if (!tok)
		return CSTEP_PASS;
	if (cache_sql(c, q, n, tok))
		return CSTEP_DONE;
	d = registry_get(tok->digest, tok->text, tok->text_len, q, n);
	c->cur_def = d;
	if (hidden_statement(c, tok)) {
		/* the digest may not show all the server runs: never cached */
		note_statement(c, SQL_KW_OTHER, true);
		grants_note_statement(c, tok);
		c->last_dest = DEST_UPSTREAM;
		c->last_reason = "multiple statements";
		return CSTEP_PASS;
	}
	if (!is_read_keyword(tok->keyword) || (tok->flags & SQL_TOK_MULTI_STATEMENT)) {
		note_statement(c, tok->keyword, (tok->flags & SQL_TOK_MULTI_STATEMENT) != 0);
		grants_note_statement(c, tok);
		if (d)
			classify_once(d, tok);
		c->last_dest = DEST_UPSTREAM;
		c->last_reason = d ? atomic_load(&d->skip_reason) : "not a SELECT";
		return CSTEP_PASS;
	}
	if (!d)
		return CSTEP_PASS;
	classify_once(d, tok);
	step = verdict(c, d, bypass);
	if (step != CSTEP_DONE)
		return step;
	if (!build_key(c, 'Q', q, n, NULL, 0))
		return CSTEP_PASS;
	return lookup_or_load(c, d, now, pl, len, q, n);
}

/* ---- prepared statements ----------------------------------------------- */

static struct stmt_info *stmt_find(struct client *c, uint32_t id)
{
	for (size_t i = 0; i < c->n_stmts; i++)
		if (c->stmts[i].id == id)
			return &c->stmts[i];
	return NULL;
}

static void stmt_forget(struct client *c, uint32_t id)
{
	struct stmt_info *s = stmt_find(c, id);

	if (!s)
		return;
	free(s->text);
	free(s->types);
	pbuf_free(&s->meta);
	*s = c->stmts[--c->n_stmts];
	c->cur_stmt = NULL;
}

static void stmt_add(struct client *c, uint32_t id, uint16_t nparams, uint64_t serial)
{
	struct stmt_info *s;
	struct sql_tok_result *tok;

	stmt_forget(c, id);
	if (c->n_stmts == c->cap_stmts) {
		size_t cap = c->cap_stmts ? c->cap_stmts * 2 : 8;
		struct stmt_info *n = realloc(c->stmts, cap * sizeof(*n));

		if (!n)
			return;
		c->stmts = n;
		c->cap_stmts = cap;
	}
	s = &c->stmts[c->n_stmts];
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->serial = serial;
	s->nparams = nparams;
	s->text = malloc(c->prep_text.len + 1);
	s->types = nparams ? calloc(nparams, 2) : NULL;
	if (!s->text || (nparams && !s->types)) {
		free(s->text);
		free(s->types);
		s->text = NULL;
		s->types = NULL;
		return;
	}
	memcpy(s->text, c->prep_text.data, c->prep_text.len);
	s->text[c->prep_text.len] = 0;
	s->meta = c->prep_meta; /* the prepare's column definitions move over */
	c->prep_meta = (struct pbuf){0};
	s->text_len = c->prep_text.len;
	/* the settings the statement was prepared under (its schema, for one,
	 * decides which tables its names mean) are part of its cache keys */
	if (!c->settings_dirty && !c->settings_broken)
		wr_u32(s->prep_settings, c->settings_id);
	tok = tokenize(c, s->text, s->text_len);
	if (tok) {
		s->def = registry_get(tok->digest, tok->text, tok->text_len, s->text, s->text_len);
		if (s->def)
			classify_once(s->def, tok);
		if (!is_read_keyword(tok->keyword))
			grants_note_statement(c, tok);
	}
	c->n_stmts++;
}

void cache_stmt_add(struct client *c, uint32_t id, uint16_t nparams, uint64_t serial)
{
	stmt_add(c, id, nparams, serial);
}

struct stmt_info *cache_stmt_find(struct client *c, uint32_t id)
{
	return stmt_find(c, id);
}

bool cache_stmt_holds_conn(const struct client *c)
{
	for (size_t i = 0; i < c->n_stmts; i++)
		if (c->stmts[i].cursor || c->stmts[i].long_data)
			return true;
	return false;
}

/* Parameter block of a COM_STMT_EXECUTE, with types filled in from the
 * previous execute when the client did not resend them. Appended to the key
 * after the statement text. */
static bool exec_key(struct client *c, struct stmt_info *s, const uint8_t *pl, uint32_t len)
{
	size_t nb = ((size_t)s->nparams + 7) / 8, off = 10;
	const uint8_t *types, *values;
	size_t vlen;
	int rc;

	if (rd_u32(s->prep_settings) == 0)
		return false;
	if (s->nparams == 0)
		return build_key(c, 'B', s->text, s->text_len + 1, s->prep_settings, 4);
	if (len < off + nb + 1)
		return false;
	if (pl[off + nb]) {
		if (len < off + nb + 1 + 2u * s->nparams)
			return false;
		memcpy(s->types, pl + off + nb + 1, 2u * s->nparams);
		s->have_types = true;
		values = pl + off + nb + 1 + 2u * s->nparams;
	} else {
		values = pl + off + nb + 1;
	}
	if (!s->have_types)
		return false;
	types = s->types;
	vlen = (size_t)(pl + len - values);
	if (!build_key(c, 'B', s->text, s->text_len + 1, s->prep_settings, 4))
		return false;
	rc = pbuf_append(&c->keybuf, pl + off, nb);
	rc |= pbuf_append(&c->keybuf, types, 2u * s->nparams);
	rc |= pbuf_append(&c->keybuf, values, vlen);
	if (rc)
		return false;
	c->key_hash = store_hash(c->keybuf.data, c->keybuf.len);
	return true;
}

static enum cache_step on_execute(struct client *c, const uint8_t *pl, uint32_t len)
{
	int64_t now = cache_now_ms(c);
	bool bypass = c->bypass_once || ryw_active(c, now) || !caching_possible(c);
	struct stmt_info *s = len >= 10 ? stmt_find(c, rd_u32(pl + 1)) : NULL;
	bool long_data;
	enum cache_step step;

	c->bypass_once = false;
	c->cur_stmt = s;
	if (!s)
		return c->st == CS_REFRESHING ? CSTEP_BLOCKED : CSTEP_PASS;
	long_data = s->long_data;
	if (c->st != CS_REFRESHING)
		s->long_data = false;
	if (!s->def || pl[5] != 0 || long_data || !exec_key(c, s, pl, len))
		bypass = true;
	if (!bypass && !c->settings_dirty) {
		int h = try_hit(c, now, pl, len, cache_now_us());

		if (h > 0)
			return CSTEP_DONE;
		if (h == -2)
			return check_grant(c, s->text, s->text_len);
		bypass = h < 0;
	}
	if (c->st == CS_REFRESHING)
		return CSTEP_BLOCKED;
	c->cur_def = s->def;
	if (!s->def || !is_read_keyword(atomic_load(&s->def->keyword))) {
		note_statement(c, s->def ? atomic_load(&s->def->keyword) : SQL_KW_OTHER, false);
		return CSTEP_PASS;
	}
	step = verdict(c, s->def, bypass);
	if (step != CSTEP_DONE)
		return step;
	if (!exec_key(c, s, pl, len))
		return CSTEP_PASS;
	return lookup_or_load(c, s->def, now, pl, len, s->text, s->text_len);
}

/* Can this session's keys be built without asking the upstream? */
static bool serve_possible(const struct client *c, int64_t now)
{
	return !c->is_monitor && !c->settings_broken && !c->settings_dirty && !ryw_active(c, now);
}

bool cache_serve_only(struct client *c, const uint8_t *pl, uint32_t len)
{
	int64_t now = cache_now_ms(c);
	uint64_t t0 = cache_now_us();
	struct sql_tok_result *tok;
	struct stmt_info *s;

	if (pl[0] == CMD_QUERY) {
		if (serve_possible(c, now) && build_key(c, 'Q', pl + 1, len - 1, NULL, 0) &&
		    try_hit(c, now, pl, len, t0) > 0)
			return true;
		tok = tokenize(c, (const char *)pl + 1, len - 1);
		return tok && cache_sql(c, (const char *)pl + 1, len - 1, tok);
	}
	if (pl[0] != CMD_STMT_EXECUTE || len < 10)
		return false;
	s = stmt_find(c, rd_u32(pl + 1));
	return s && s->def && pl[5] == 0 && !s->long_data && serve_possible(c, now) &&
	       exec_key(c, s, pl, len) && try_hit(c, now, pl, len, t0) > 0;
}

enum cache_step cache_command(struct client *c, const uint8_t *pl, uint32_t len)
{
	uint8_t cmd = pl[0];

	c->cur_def = NULL;
	c->cur_dirty = c->cur_write = false;
	c->grant_refused = false;
	if (cmd == CMD_QUERY)
		return on_query(c, pl, len);
	if (cmd == CMD_STMT_EXECUTE)
		return on_execute(c, pl, len);
	if (c->st == CS_REFRESHING)
		return CSTEP_BLOCKED;
	switch (cmd) {
	case CMD_STMT_PREPARE:
		if (c->settings_dirty && caching_possible(c)) {
			if (!c->up)
				return CSTEP_NEED_UP;
			if (start_settings(c))
				return CSTEP_PENDING; /* its settings become part of its keys */
		}
		c->prep_text.len = 0;
		if (pbuf_append(&c->prep_text, pl + 1, len - 1) < 0)
			c->prep_text.len = 0;
		break;
	case CMD_STMT_CLOSE:
		if (len >= 5)
			stmt_forget(c, rd_u32(pl + 1));
		break;
	case CMD_STMT_SEND_LONG_DATA:
	case CMD_STMT_RESET:
		if (len >= 5 && stmt_find(c, rd_u32(pl + 1))) {
			stmt_find(c, rd_u32(pl + 1))->long_data = cmd == CMD_STMT_SEND_LONG_DATA;
			if (cmd == CMD_STMT_RESET)
				stmt_find(c, rd_u32(pl + 1))->cursor = false;
		}
		break;
	case CMD_RESET_CONNECTION:
		stmts_clear(c);
		c->cur_dirty = true;
		break;
	case CMD_INIT_DB:
	case CMD_SET_OPTION:
		c->cur_dirty = true;
		break;
	default:
		break;
	}
	return CSTEP_PASS;
}

/* ---- answers ----------------------------------------------------------- */

void cache_tee(struct client *c, size_t from)
{
	size_t n = c->io.out.len - from;

	if (!c->fill || c->fill_too_big || n == 0)
		return;
	if (c->fill_buf.len + n > g_config.cache_max_entry_size ||
	    pbuf_append(&c->fill_buf, c->io.out.data + from, n) < 0) {
		c->fill_too_big = true;
		pbuf_free(&c->fill_buf);
	}
}

/* Offsets of the status flags in the EOF / OK(0xFE) packets of an answer. */
static void status_offsets(const struct pbuf *b, uint16_t off[ENTRY_MAX_STATUS])
{
	size_t pos = 0;
	int n = 0;
	bool cont = false;

	memset(off, 0, sizeof(uint16_t) * ENTRY_MAX_STATUS);
	while (pos + PKT_HEADER_LEN <= b->len) {
		uint32_t len = rd_u24(b->data + pos);
		const uint8_t *pl = b->data + pos + PKT_HEADER_LEN;

		if (!cont && len >= 5 && len < 9 && pl[0] == 0xfe && n < ENTRY_MAX_STATUS &&
		    pos + PKT_HEADER_LEN + 3 <= UINT16_MAX)
			off[n++] = (uint16_t)(pos + PKT_HEADER_LEN + 3);
		cont = len == PKT_MAX_PAYLOAD;
		pos += PKT_HEADER_LEN + len;
	}
}

/* Is the relayed answer one a cache may keep? */
static bool storable(const struct client *c, size_t size)
{
	const struct relay *r = &c->relay;

	return size > 0 && size <= g_config.cache_max_entry_size && r->results == 1 && !r->saw_err &&
	       r->status_valid && (r->warnings == 0 || g_config.cache_warnings) &&
	       (r->rows > 0 || g_config.cache_empty);
}

static void finish_fill(struct client *c, uint64_t us, int64_t now)
{
	struct cache_entry *e = c->fill;
	struct cache_def *d = e->def;
	uint16_t off[ENTRY_MAX_STATUS];

	c->fill = NULL;
	if (c->fill_too_big || !storable(c, c->fill_buf.len)) {
		store_abandon(e);
		return;
	}
	status_offsets(&c->fill_buf, off);
	store_fill(e, c->fill_buf.data, c->fill_buf.len, off, (uint32_t)(us > UINT32_MAX ? UINT32_MAX : us),
		   (uint32_t)c->relay.rows, now, atomic_load(&d->ttl_ms), def_refresh_ms(d));
	c->fill_buf.len = 0;
	pbuf_shrink(&c->fill_buf, 65536);
}

void cache_answer_done(struct client *c)
{
	struct relay *r = &c->relay;
	uint64_t us = cache_now_us() - c->cmd_start_us;
	int64_t now = cache_now_ms(c);

	if (r->status_valid)
		c->server_status = r->status;
	if (c->cur_def)
		def_account(c->cur_def, us, r->rows, r->affected);
	if (c->cur_def && !r->saw_err && r->results > 0)
		grants_note_allowed(c, c->cur_def, now); /* the user just read it upstream */
	cache_metrics_observe(false, us);
	if (c->fill)
		finish_fill(c, us, now);
	if (r->cmd == CMD_STMT_PREPARE && r->prep_ok)
		mux_prepared(c);
	if (c->cur_dirty)
		c->settings_dirty = true;
	if (c->cur_write) {
		c->last_write_ms = now;
		if (in_txn(c))
			c->txn_wrote = true;
	}
	if (!in_txn(c))
		c->txn_wrote = false;
	c->cur_def = NULL;
	c->cur_dirty = c->cur_write = false;
}

/* Parse the one-row answer to SETTINGS_SQL into c->settings. */
static bool parse_settings(struct client *c)
{
	const struct pbuf *b = &c->scratch;
	size_t pos = 0, idx = 0, out = 0;

	while (pos + PKT_HEADER_LEN <= b->len) {
		uint32_t len = rd_u24(b->data + pos);
		struct pcur cur;

		if (pos + PKT_HEADER_LEN + len > b->len)
			return false;
		/* column count, 14 definitions, EOF, then the row */
		if (idx++ == (size_t)c->settings_cols + 2) {
			pcur_init(&cur, b->data + pos + PKT_HEADER_LEN, len);
			for (int i = 0; i < c->settings_cols; i++) {
				bool null;
				size_t n = 0;
				const uint8_t *v;

				if (cur.p < cur.end && *cur.p == 0xfb) {
					pcur_u8(&cur);
					null = true;
					v = (const uint8_t *)"\x01";
					n = 1;
				} else {
					null = false;
					v = pcur_lenenc_str(&cur, &n);
				}
				if (cur.err || out + n + 1 > sizeof(c->settings))
					return false;
				memcpy(c->settings + out, v, n);
				out += n;
				c->settings[out++] = null ? 0x02 : 0x1f;
			}
			c->settings_len = (uint16_t)out;
			c->settings_id = settings_intern(c->settings, out);
			return c->settings_id != 0;
		}
		pos += PKT_HEADER_LEN + len;
	}
	return false;
}

void cache_settings_done(struct client *c)
{
	if (c->relay.status_valid)
		c->server_status = c->relay.status;
	if (grants_checking(c)) {
		grants_check_done(c);
		c->scratch.len = 0;
		c->st = CS_READY;
		return;
	}
	if (c->relay.saw_err || !parse_settings(c)) {
		log_warn("client %u: cannot read session settings; caching off for this session", c->id);
		c->settings_broken = true;
	}
	c->settings_dirty = false;
	c->scratch.len = 0;
	pbuf_shrink(&c->scratch, 4096);
	c->st = CS_READY;
}

void cache_refresh_done(struct client *c)
{
	struct cache_entry *e = c->refresh;
	struct cache_def *d = e->def;
	uint64_t us = cache_now_us() - c->cmd_start_us;
	uint16_t off[ENTRY_MAX_STATUS];
	int changed;

	c->refresh = NULL;
	c->st = CS_READY;
	if (c->relay.status_valid)
		c->server_status = c->relay.status;
	if (!storable(c, c->fill_buf.len)) {
		atomic_fetch_add(&d->refresh_failed, 1);
		store_abandon(e);
	} else {
		status_offsets(&c->fill_buf, off);
		grants_note_allowed(c, d, cache_now_ms(c));
		changed = store_fill(e, c->fill_buf.data, c->fill_buf.len, off,
				     (uint32_t)(us > UINT32_MAX ? UINT32_MAX : us), (uint32_t)c->relay.rows,
				     cache_now_ms(c), atomic_load(&d->ttl_ms), def_refresh_ms(d));
		atomic_fetch_add(changed > 0 ? &d->refresh_changed : changed == 0 ? &d->refresh_unchanged
					     : &d->refresh_failed, 1);
	}
	c->fill_buf.len = 0;
	pbuf_shrink(&c->fill_buf, 65536);
}
