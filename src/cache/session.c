/*
 * session.c: owns the cache's part of a session's command phase (see
 * session.h): cache keys, hits, the decision to fill, wait (coalesce) or
 * refresh, what to do with the answers the core brings back (fills,
 * refreshes, the settings query), and the session settings that keys depend
 * on. It asks the session core for everything that touches the upstream or
 * the session's state (enum cache_step); it never calls into the core.
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

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/binlog.h"
#include "cache/cache_metrics.h"
#include "cache/catalog.h"
#include "cache/commands.h"
#include "cache/consist.h"
#include "cache/inval.h"
#include "cache/grants.h"
#include "cache/registry.h"
#include "cache/rules.h"
#include "cache/settings.h"
#include "cache/settings_query.h"
#include "cache/vcols.h"
#include "cache/verdict.h"
#include "cache/tcols.h"
#include "config/config.h"
#include "base/health.h"
#include "base/log.h"
#include "sql/classify.h"
#include "sql/stmt.h"
#include "base/stats.h"

/* EXPLAIN LAST STATEMENT's Query_destination. */
#define DEST_CACHE "readyset_shallow"
#define DEST_UPSTREAM "upstream"

int cache_global_init(store_wake_fn wake)
{
	if (registry_init() < 0 || inval_init() < 0)
		return -1;
	catalog_set_wake(wake);
	binlog_set_wake(wake);
	return store_init(g_config.memory_limit, wake);
}

void cache_global_free(void)
{
	store_destroy();
	catalog_free();
	inval_destroy(tcols_drop);
	registry_destroy();
	settings_free_all();
}

void cache_worker_free(struct cache_worker *cw)
{
	free(cw->stmt);
	cw->stmt = NULL;
	cw->stmt_cs = NULL;
	grants_worker_free(&cw->grants);
}

uint64_t cache_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void cache_session_init(struct cache_session *cs, struct cache_worker *cw, struct worker *w,
			uint32_t id)
{
	cs->cw = cw;
	cs->id = id;
	cs->settings_dirty = true;
	cs->waiter.w = w;
	cs->waiter.client_id = id;
	cs->last_dest = DEST_UPSTREAM;
	cs->last_reason = reason_of(WHY_NO_STATEMENT);
	consist_init(&cs->cons);
	if (cw->stmt_cs == cs)
		cw->stmt_cs = NULL;   /* a reading of a session that had this address */
}

void cache_session_free(struct cache_session *cs)
{
	if (cs->cw->stmt_cs == cs)
		cs->cw->stmt_cs = NULL;   /* its reading goes with it */
	cache_abort(cs);
	if (cs->locked)
		consist_release(&cs->cons);   /* the server unlocks as it ends the session */
	consist_free(&cs->cons);
	pbuf_free(&cs->keybuf);
	pbuf_free(&cs->fill_buf);
	pbuf_free(&cs->held_ok);
}

void cache_abort(struct cache_session *cs)
{
	if (cs->waiting) {
		if (cs->wait_kind == WAIT_CATALOG)
			catalog_cancel_wait(&cs->waiter);
		else if (cs->wait_kind == WAIT_VCOLS)
			catalog_cancel_vcols_wait(&cs->waiter);
		else if (cs->wait_kind == WAIT_BINLOG)
			binlog_barrier_cancel(&cs->waiter);
		else
			store_cancel_wait(cs->keybuf.data, cs->keybuf.len, cs->key_hash, &cs->waiter);
		cs->waiting = false;
		cs->wait_kind = WAIT_STORE;
		cs->held_ok.len = 0;
	}
	if (cs->fill) {
		store_abandon(cs->fill);
		cs->fill = NULL;
	}
	if (cs->refresh) {
		atomic_fetch_add(&cs->refresh->def->refresh_failed, 1);
		store_abandon(cs->refresh);
		cs->refresh = NULL;
	}
	grants_abort(&cs->grants);
}

void cache_session_reset(struct cache_session *cs)
{
	cache_abort(cs);
	cs->settings_dirty = true;
	cs->settings_broken = false;
	cs->txn_wrote = false;
	if (cs->locked)
		consist_release(&cs->cons);   /* a reset session holds no table locks */
	cs->read_uncommitted = cs->oneshot_ru = cs->locked = false;
	consist_reset(&cs->cons);
}

/* ---- keys, hits -------------------------------------------------------- */

/* How long past their TTL entries may be served now: max_stale_ms while the
 * upstream is down under the serve-stale policy, else 0. */
static int64_t stale_window(void)
{
	if (g_config.upstream_down_policy != DOWN_POLICY_SERVE_STALE || health_upstream_up())
		return 0;
	return __atomic_load_n(&g_config.max_stale_ms, __ATOMIC_RELAXED);
}

/* How long past their TTL entries are kept while the upstream is up, so
 * that a miss that finds the upstream gone can still be answered stale
 * (cache_serve_only): max_stale_ms under serve-stale, else 0. */
static int64_t keep_window(void)
{
	if (g_config.upstream_down_policy != DOWN_POLICY_SERVE_STALE)
		return 0;
	return __atomic_load_n(&g_config.max_stale_ms, __ATOMIC_RELAXED);
}

static bool txn_allows(const struct cache_session *cs, const struct cache_ctx *x,
		       const struct cache_def *d)
{
	if (!status_in_txn(x->status))
		return true;
	switch (atomic_load_explicit(&d->txn, memory_order_relaxed)) {
	case TXN_ALWAYS:
		return true;
	case TXN_UNTIL_WRITE:
		return !cs->txn_wrote;
	default:
		return false;
	}
}

static bool ryw_active(const struct cache_session *cs, int64_t now)
{
	return g_config.read_your_writes_ms > 0 && cs->last_write_ms &&
	       now - cs->last_write_ms < g_config.read_your_writes_ms;
}

static bool caching_possible(const struct cache_session *cs, const struct cache_ctx *x)
{
	return !x->monitor && !x->profiling && !cs->settings_broken && !x->up_lost &&
	       grants_session_may_cache(x->ident);
}

/* Reads uncommitted rows (READ UNCOMMITTED): neither served nor stored. */
static bool dirty_reads(const struct cache_session *cs)
{
	return cs->read_uncommitted || cs->oneshot_ru || cs->locked;
}

static bool build_key(struct cache_session *cs, const struct cache_ctx *x, char kind, const void *a,
		      size_t alen, const void *b, size_t blen)
{
	uint32_t caps = x->caps;
	uint8_t head[10];
	struct pbuf *k = &cs->keybuf;
	int rc;

	head[0] = (uint8_t)kind;
	head[1] = (uint8_t)(((caps & CAP_DEPRECATE_EOF) ? 1 : 0) | ((caps & CAP_SESSION_TRACK) ? 2 : 0) |
			    ((caps & CAP_X_EXT_METADATA) ? 4 : 0));
	wr_u32(head + 2, cs->settings_id);
	wr_u32(head + 6, grants_key_id(x->ident));
	k->len = 0;
	rc = pbuf_append(k, head, sizeof(head));
	rc |= pbuf_append(k, a, alen);
	if (b)
		rc |= pbuf_append(k, b, blen);
	if (rc)
		return false;
	cs->key_hash = store_hash(k->data, k->len);
	return true;
}

/* Is cs->keybuf still the 'Q' key of a text of n bytes that build_key made
 * earlier in this command, under the settings and the grants' scope of now?
 * (The text is the command's own and unchanged; no other key was built
 * since: only build_key and exec_key write keybuf.) */
static bool query_key_current(const struct cache_session *cs, const struct cache_ctx *x, size_t n)
{
	const struct pbuf *k = &cs->keybuf;

	return k->len == 10 + n && k->data[0] == 'Q' && rd_u32(k->data + 2) == cs->settings_id &&
	       rd_u32(k->data + 6) == grants_key_id(x->ident);
}

static void serve_hit(struct cache_session *cs, const struct cache_ctx *x, struct cache_entry *e,
		      uint64_t t0)
{
	struct pbuf *out = x->out;
	size_t at = out->len;
	struct cache_def *d = e->def;
	uint16_t session_bits = x->status & SESSION_STATUS_BITS;

	/* with autocommit off, any statement opens a transaction, as the
	 * server would report for the same SELECT */
	if (!(session_bits & ST_AUTOCOMMIT))
		session_bits |= ST_IN_TRANS;

	cs->served_rows = e->rows;
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
	if (x->now_ms >= e->expires_ms)
		STAT_INC(cache_stale_hits); /* served past its TTL: the upstream is down */
	cs->last_dest = DEST_CACHE;
	cs->last_reason = reason_of(WHY_OK);
	cs->cat_waited = false;
	store_release(e);
}

/* A hit past its refresh age (SL_REFRESH): the core sends the command
 * again in the background, one refresh per session at a time. */
static enum cache_step want_refresh(struct cache_session *cs, struct cache_entry *e)
{
	if (cs->refresh) {
		store_abandon(e); /* not now: the next hit past the refresh age retries */
		return CSTEP_SERVED;
	}
	cs->refresh = e;
	store_entry_deps(e, &cs->refresh_deps);   /* before the core sends it upstream */
	return CSTEP_REFRESH;
}

void cache_refresh_cancel(struct cache_session *cs)
{
	if (cs->refresh) {
		store_abandon(cs->refresh); /* not now: the next hit past the refresh age retries */
		cs->refresh = NULL;
	}
}

/* A hit found e: may this session have it (transaction, grant verdict)?
 * Else e is let go. */
static enum grant_gate hit_allowed(struct cache_session *cs, const struct cache_ctx *x,
				   struct cache_entry *e, enum store_lookup r)
{
	/* a transaction that wrote a table of e: only the upstream has its rows */
	bool txn_ok = txn_allows(cs, x, e->def) && !consist_txn_wrote_into(&cs->cons, e);
	enum grant_gate g = txn_ok ? grants_gate(&cs->grants, &cs->cw->grants, x->ident, e->def,
						 cs->settings_id, x->now_ms, stale_window() > 0)
				   : GRANT_REFUSED;

	if (g == GRANT_OK)
		return g;
	if (g == GRANT_CHECK)
		cs->grants.def = e->def;
	else if (txn_ok)
		cs->grants.refused = true; /* EXPLAIN LAST STATEMENT says why */
	if (r == SL_REFRESH)
		store_abandon(e);
	store_release(e);
	return g;
}

/* Look the key in cs->keybuf up, hits only. 1 served (*step: SERVED or
 * REFRESH), 0 not found, -1 found but this session may not use it, -2 the
 * user's grant verdict must be checked first (cs->grants.def). */
static int try_hit(struct cache_session *cs, const struct cache_ctx *x, uint64_t t0,
		   enum cache_step *step)
{
	struct cache_entry *e;
	enum store_lookup r = store_lookup(cs->keybuf.data, cs->keybuf.len, cs->key_hash, x->now_ms,
					   stale_window(), keep_window(), NULL, NULL, &e);
	enum grant_gate g;

	if (r != SL_HIT && r != SL_REFRESH)
		return 0;
	g = hit_allowed(cs, x, e, r);
	if (g != GRANT_OK)
		return g == GRANT_CHECK ? -2 : -1;
	serve_hit(cs, x, e, t0);
	*step = r == SL_REFRESH ? want_refresh(cs, e) : CSTEP_SERVED;
	return 1;
}

/* Check the user's grant verdict for cs->grants.def upstream before the
 * hit, by preparing the statement (text q) as the user. */
static enum cache_step check_grant(struct cache_session *cs, const char *q, size_t n)
{
	if (cs->refresh)
		return CSTEP_BLOCKED;
	if (n == 0) {
		grants_abort(&cs->grants);
		return CSTEP_PASS;
	}
	cs->check_text = q;
	cs->check_len = n;
	return CSTEP_GRANT_CHECK;
}

void cache_grant_check_sent(struct cache_session *cs, const struct cache_ctx *x)
{
	grants_check_sent(&cs->grants, &cs->cw->grants, x->ident, x->now_ms);
}

void cache_grant_check_failed(struct cache_session *cs)
{
	grants_abort(&cs->grants);
}

uint32_t cache_grant_check_done(struct cache_session *cs, const struct cache_ctx *x,
				const struct relay *r, const struct pbuf *answer)
{
	return grants_check_done(&cs->grants, &cs->cw->grants, x->ident, r, answer, x->now_ms, cs->id);
}

/* The fast path of a query or an execute (text q, n), before any parsing:
 * with try (the key is built), a hit ends the command (SERVED, REFRESH), or
 * the grant verdict is checked first (GRANT_CHECK). Else PASS: carry on
 * with the miss path (*bypass set when an entry exists that this session
 * may not use); BLOCKED while a refresh is upstream. */
static enum cache_step first_look(struct cache_session *cs, const struct cache_ctx *x, bool try,
				  bool *bypass, const char *q, size_t n)
{
	enum cache_step step;

	if (try) {
		int h = try_hit(cs, x, cache_now_us(), &step);

		if (h > 0)
			return step;
		if (h == -2)
			return check_grant(cs, q, n);
		*bypass = h < 0;
	}
	return cs->refresh ? CSTEP_BLOCKED : CSTEP_PASS;
}

/* ---- misses ------------------------------------------------------------ */

/* The reading of this command's statement text q[0, n) (sql/stmt.h): the
 * worker's, begun for it unless it already is. NULL: out of memory. */
static struct stmt *stmt_of(struct cache_session *cs, const char *q, size_t n)
{
	struct cache_worker *cw = cs->cw;

	if (!cw->stmt) {
		cw->stmt = malloc(sizeof(*cw->stmt));
		if (!cw->stmt)
			return NULL;   /* out of memory: nothing read */
		cw->stmt_cs = NULL;
	}
	if (cw->stmt_cs != cs || cw->stmt_gen != cs->stmt_gen || cw->stmt->q != q || cw->stmt->n != n) {
		stmt_begin(cw->stmt, q, n);
		cw->stmt_cs = cs;
		cw->stmt_gen = cs->stmt_gen;
	}
	return cw->stmt;
}

/* The digest of this command's statement (the cache key's shape). */
static const struct sql_tok_result *tokenize(struct stmt *st)
{
	return st ? stmt_digest(st) : NULL;
}

/* ... and its reading (NULL: out of memory). */
static struct stmt *read_stmt(struct stmt *st)
{
	if (st)
		stmt_read(st);
	return st;
}

/* The reading of a prepared statement's text for its execute: kept at
 * PREPARE (stmt_keep), read again only when it could not be kept. */
const struct stmt *cache_stmt_exec(struct cache_session *cs, const struct stmt_info *s)
{
	struct stmt *st = stmt_of(cs, s->text, s->text_len);

	if (!st || (st->have & STMT_HAVE_READ))
		return st;
	if (s->kept)
		stmt_unkeep(st, s->kept, s->text, s->text_len);
	return read_stmt(st);
}

const struct stmt *cache_stmt(struct cache_session *cs, const char *q, size_t n)
{
	return read_stmt(stmt_of(cs, q, n));
}

static bool is_read_keyword(int kw)
{
	return kw == KW_SELECT || kw == KW_WITH;
}

/* A statement that is not a cacheable read: may it change the settings, or
 * write (read-your-writes, UNTIL WRITE)? */
static void note_statement(struct cache_session *cs, int kw, bool multi)
{
	cs->cur_lock_op = kw == KW_LOCK ? 1 :
			  (kw == KW_UNLOCK || kw == KW_BEGIN || kw == KW_START) ? -1 : 0;
	switch (kw) {
	case KW_SELECT: case KW_WITH: case KW_SHOW: case KW_EXPLAIN:
	case KW_DESCRIBE: case KW_DESC: case KW_BEGIN: case KW_START: case KW_COMMIT:
	case KW_ROLLBACK: case KW_SAVEPOINT: case KW_RELEASE:
		break;
	case KW_INSERT: case KW_UPDATE: case KW_DELETE: case KW_REPLACE:
	case KW_TRUNCATE: case KW_LOAD:
		cs->cur_write = true;
		break;
	default: /* SET, USE, CALL, DDL, anything else */
		cs->cur_write = true;
		cs->cur_dirty = true;
		break;
	}
	if (multi)
		cs->cur_write = cs->cur_dirty = true;
}

/* ---- consistency waits ------------------------------------------------ */

/* Wait (at most CATALOG_WAIT_MS) for the catalog to be read again: a new
 * table or view, or a DDL whose effect is not read yet. Once per command. */
#define CATALOG_WAIT_MS 2000
static enum cache_step catalog_wait_step(struct cache_session *cs)
{
	cs->cat_waited = true;
	cs->waiting = true;
	cs->wait_kind = WAIT_CATALOG;
	cs->wait_ms = CATALOG_WAIT_MS;
	cs->waiter.gen++;
	catalog_wait(&cs->waiter);
	return CSTEP_WAIT;
}

/* A statement that may write is about to go upstream: what it writes
 * (consist.h; st: its reading, NULL when out of memory). CSTEP_WAIT first,
 * once per command, when it must wait for the catalog (a DDL made it stale
 * while anything may be cached). */
static enum cache_step writes_step(struct cache_session *cs, const struct stmt *st, bool hidden,
				   const char *schema)
{
	if (!hidden && !cs->cat_waited && consist_wants_catalog(st))
		return catalog_wait_step(cs);
	consist_statement(&cs->cons, st, hidden, schema);
	return CSTEP_PASS;
}

/* A table the fill reads has a generated column that is not deterministic
 * (vcols.h): the reason, else NULL. */
static const struct reason *nondet_vcols(const struct cache_session *cs)
{
	for (unsigned i = 0; i < cs->fill_deps.n; i++)
		if (vcols_verdict(cs->fill_deps.d[i].t) == VCOLS_NONDET)
			return reason_of(WHY_NONDET_VCOLS);
	return NULL;
}

/* The tables a fill of this command will read, snapshot before it goes
 * upstream (cs->fill_deps). CSTEP_SERVED: look it up. Else not from the
 * cache this time (the reason is EXPLAIN LAST STATEMENT's; a view that
 * cannot be cached, or tables that cannot be determined, make the shape one
 * that is never cached), or CSTEP_WAIT for the catalog. */
static enum cache_step read_deps(struct cache_session *cs, struct cache_def *d, const struct stmt *st,
				 const char *schema)
{
	bool retry;
	const struct reason *reason = consist_read_deps(&cs->cons, st, schema, &cs->fill_deps, &retry);

	if (!reason)
		reason = nondet_vcols(cs);
	if (!reason)
		return CSTEP_SERVED;
	if (retry && !cs->cat_waited)
		return catalog_wait_step(cs);
	cs->last_dest = DEST_UPSTREAM;
	cs->last_reason = reason;
	if (reason->permanent) {
		if (!atomic_load(&d->explicit_cache))
			registry_set_skipped(d, reason);
		atomic_fetch_add(&d->skips, 1);
	}
	return CSTEP_PASS;
}

/* q, n: the statement's text (for a grant check). */
static enum cache_step lookup_or_load(struct cache_session *cs, const struct cache_ctx *x,
				      struct cache_def *d, const char *q, size_t n)
{
	struct cache_entry *e;
	enum store_lookup r;
	enum grant_gate g;

	cs->waiter.gen++;
	/* inside a transaction the upstream answers from the transaction's
	 * snapshot, which may predate writes other sessions committed since:
	 * such an answer is never stored */
	r = store_lookup(cs->keybuf.data, cs->keybuf.len, cs->key_hash, x->now_ms, stale_window(),
			 keep_window(), status_in_txn(x->status) ? NULL : d, &cs->waiter, &e);
	switch (r) {
	case SL_HIT:
	case SL_REFRESH:
		g = hit_allowed(cs, x, e, r);
		if (g == GRANT_CHECK)
			return check_grant(cs, q, n);
		if (g == GRANT_REFUSED)
			return CSTEP_PASS;
		serve_hit(cs, x, e, cache_now_us());
		return r == SL_REFRESH ? want_refresh(cs, e) : CSTEP_SERVED;
	case SL_WAIT:
		cs->waiting = true;
		cs->wait_kind = WAIT_STORE;
		cs->wait_ms = atomic_load(&d->coalesce_ms);
		return CSTEP_WAIT;
	case SL_LOAD:
		cs->fill = e;
		cs->fill_buf.len = 0;
		cs->fill_too_big = false;
		atomic_fetch_add(&d->misses, 1);
		STAT_INC(cache_misses);
		cs->last_dest = DEST_CACHE;
		cs->last_reason = reason_of(WHY_OK);
		return CSTEP_PASS;
	default:
		return CSTEP_PASS;
	}
}

/* The shape is cached: may this session use it for this command?
 * CSTEP_SERVED here means "build the key and look it up". */
static enum cache_step cached_shape(struct cache_session *cs, const struct cache_ctx *x,
				    struct cache_def *d, bool bypass)
{
	cs->last_dest = DEST_UPSTREAM;
	if (bypass || !txn_allows(cs, x, d)) {
		cs->last_reason = reason_of(x->profiling ? WHY_PROFILING :
					    cs->grants.refused ? WHY_GRANT_REFUSED :
					    !grants_session_may_cache(x->ident) ? WHY_SET_ROLE :
					    status_in_txn(x->status) ? WHY_IN_TRANSACTION : WHY_READ_YOUR_WRITES);
		return CSTEP_PASS;
	}
	if (cs->settings_dirty)
		return CSTEP_SETTINGS;
	if (dirty_reads(cs)) {
		cs->last_reason = reason_of(cs->locked ? WHY_LOCK_TABLES : WHY_READ_UNCOMMITTED);
		return CSTEP_PASS;
	}
	return CSTEP_SERVED;
}

/* Verdict for a shape seen on a miss; CSTEP_SERVED means "look it up". */
static enum cache_step verdict(struct cache_session *cs, const struct cache_ctx *x,
			       struct cache_def *d, bool bypass)
{
	int state = atomic_load(&d->state);

	if (state == CACHE_SKIPPED) {
		atomic_fetch_add(&d->skips, 1);
		cs->last_dest = DEST_UPSTREAM;
		cs->last_reason = atomic_load(&d->skip_reason);
		return CSTEP_PASS;
	}
	if (state != CACHE_CACHED) {
		cs->last_dest = DEST_UPSTREAM;
		cs->last_reason = reason_of(WHY_NO_CACHE_DEF);
		return CSTEP_PASS;
	}
	return cached_shape(cs, x, d, bypass);
}

/* Text the tokenizer may have read differently from the server: SQL hidden
 * behind a "--" without a following space (ProxySQL's reading), or a
 * backslash escape in a session where backslash is no escape. */
static bool hidden_statement(const struct cache_ctx *x, const struct sql_tok_result *tok)
{
	if (tok->flags & SQL_TOK_HIDDEN_SQL)
		return true;
	return (tok->flags & SQL_TOK_BACKSLASH_ESCAPE) && (x->status & ST_NO_BACKSLASH_ESCAPES);
}

static bool answer_cache_sql(struct cache_session *cs, const struct cache_ctx *x, struct stmt *st)
{
	struct cache_reply r = {
		.out = x->out, .caps = x->caps, .status = x->status,
		.last_dest = cs->last_dest, .last_reason = cs->last_reason,
	};

	return st && cache_sql(&r, st);
}

/* A query that is not a cacheable read, or not one shape: what it does to
 * the session, and why it goes upstream. */
static enum cache_step not_cacheable(struct cache_session *cs, const struct cache_ctx *x,
				     struct cache_def *d, struct stmt *st)
{
	const struct sql_tok_result *tok = &st->tok;

	cs->last_dest = DEST_UPSTREAM;
	read_stmt(st);
	if (hidden_statement(x, tok)) {
		/* the digest may not show all the server runs: never cached */
		note_statement(cs, KW_NONE, true);
		consist_statement(&cs->cons, st, true, x->db);
		grants_note_statement(x->ident, st);
		cs->last_reason = reason_of(WHY_MULTI_STATEMENT);
		return CSTEP_PASS;
	}
	if (writes_step(cs, st, false, x->db) == CSTEP_WAIT)
		return CSTEP_WAIT;
	note_statement(cs, tok->keyword, (tok->flags & SQL_TOK_MULTI_STATEMENT) != 0);
	grants_note_statement(x->ident, st);
	if (d)
		verdict_classify(d, tok);
	cs->last_reason = d ? atomic_load(&d->skip_reason) : reason_of(WHY_NOT_SELECT);
	return CSTEP_PASS;
}

/* Does this statement end the transaction that a one-shot isolation level
 * applies to, when the session is not in a transaction after it? A
 * statement that names no table (SELECT 1, a SET) starts none. */
static bool ends_oneshot(enum sql_kw kw, struct stmt *st)
{
	if (kw == KW_COMMIT || kw == KW_ROLLBACK)
		return true;
	if (kw == KW_SET)
		return false;
	read_stmt(st);
	return st->tables.n > 0 || stmt_kind(st) == SQL_STMT_WRITE || stmt_kind(st) == SQL_STMT_DDL;
}

/* SET TRANSACTION [...] ISOLATION LEVEL READ UNCOMMITTED without GLOBAL or
 * SESSION (STMT_ONESHOT_RU): the next transaction only, which @@tx_isolation
 * does not show; the statement that ends it (ends_oneshot). */
static void note_oneshot(struct cache_session *cs, enum sql_kw kw, struct stmt *st)
{
	if (cs->oneshot_ru)
		cs->cur_ends_oneshot = ends_oneshot(kw, st);
	else if (kw == KW_SET && (read_stmt(st)->flags & STMT_ONESHOT_RU))
		cs->oneshot_ru = true;
}

static enum cache_step on_query(struct cache_session *cs, const struct cache_ctx *x,
				const uint8_t *pl, uint32_t len)
{
	const char *q = (const char *)pl + 1;
	size_t n = len - 1;
	bool bypass = cs->bypass_once || ryw_active(cs, x->now_ms) || !caching_possible(cs, x);
	const struct sql_tok_result *tok;
	struct stmt *st;
	struct cache_def *d;
	enum cache_step step;
	bool keyed;

	cs->bypass_once = false;
	/* a session with temporary tables has its queries read first: a name
	 * may be one of them */
	keyed = !bypass && !cs->settings_dirty && !dirty_reads(cs) && !consist_has_temps(&cs->cons) &&
		inval_serving() && build_key(cs, x, 'Q', q, n, NULL, 0);
	step = first_look(cs, x, keyed, &bypass, q, n);
	if (step != CSTEP_PASS)
		return step;
	st = stmt_of(cs, q, n);
	tok = tokenize(st);
	if (!tok)
		return CSTEP_PASS;
	note_oneshot(cs, tok->keyword, st);
	if (answer_cache_sql(cs, x, st))
		return CSTEP_SERVED;
	d = registry_get(tok->digest, tok->text, tok->text_len, q, n);
	cs->cur_def = d;
	if (hidden_statement(x, tok) || !is_read_keyword(tok->keyword) ||
	    (tok->flags & SQL_TOK_MULTI_STATEMENT))
		return not_cacheable(cs, x, d, st);
	if (!d)
		return writes_step(cs, read_stmt(st), false, x->db); /* it may call a stored function */
	verdict_classify(d, tok);
	step = verdict(cs, x, d, bypass);
	if (step != CSTEP_SERVED) {
		/* an uncached read may still call a stored function that writes */
		if (step == CSTEP_PASS)
			return writes_step(cs, read_stmt(st), false, x->db);
		return step;
	}
	step = read_deps(cs, d, read_stmt(st), cs->cons.schema);
	if (step != CSTEP_SERVED)
		return step;
	/* the key first_look looked up, unless something it is made of moved */
	if (!(keyed && query_key_current(cs, x, n)) && !build_key(cs, x, 'Q', q, n, NULL, 0))
		return CSTEP_PASS;
	return lookup_or_load(cs, x, d, q, n);
}

/* ---- prepared statements ----------------------------------------------- */

void cache_stmt_prepared(struct cache_session *cs, struct ident *ident, struct stmt_info *s)
{
	struct stmt *st = stmt_of(cs, s->text, s->text_len);
	const struct sql_tok_result *tok = tokenize(st);

	/* the settings the statement was prepared under (its schema, for one,
	 * decides which tables its names mean) are part of its cache keys */
	if (!cs->settings_dirty && !cs->settings_broken)
		wr_u32(s->prep_settings, cs->settings_id);
	if (!st)
		return;   /* out of memory: its facts stay those that pin (stmts.c) */
	/* read once here, for every execute */
	read_stmt(st);
	s->facts = st->facts;
	free(s->kept);
	s->kept = stmt_keep(st);
	if (tok) {
		s->def = registry_get(tok->digest, tok->text, tok->text_len, s->text, s->text_len);
		if (s->def)
			verdict_classify(s->def, tok);
		if (!is_read_keyword(tok->keyword))
			grants_note_statement(ident, st);
	}
}

/* Key of a COM_STMT_EXECUTE: the statement text, the settings it was
 * prepared under, and its parameter block, with the types of the previous
 * execute when the client did not resend them (stmts_note_command kept
 * them). */
static bool exec_key(struct cache_session *cs, const struct cache_ctx *x, const struct stmt_info *s,
		     const uint8_t *pl, uint32_t len)
{
	size_t nb = ((size_t)s->nparams + 7) / 8, off = 10;
	const uint8_t *values;
	int rc;

	if (rd_u32(s->prep_settings) == 0)
		return false;
	if (s->nparams == 0)
		return build_key(cs, x, 'B', s->text, s->text_len + 1, s->prep_settings, 4);
	if (len < off + nb + 1)
		return false;
	if (pl[off + nb]) {
		if (len < off + nb + 1 + 2u * s->nparams)
			return false;
		values = pl + off + nb + 1 + 2u * s->nparams;
	} else {
		values = pl + off + nb + 1;
	}
	if (!s->have_types)
		return false;
	if (!build_key(cs, x, 'B', s->text, s->text_len + 1, s->prep_settings, 4))
		return false;
	rc = pbuf_append(&cs->keybuf, pl + off, nb);
	rc |= pbuf_append(&cs->keybuf, s->types, 2u * s->nparams);
	rc |= pbuf_append(&cs->keybuf, values, (size_t)(pl + len - values));
	if (rc)
		return false;
	cs->key_hash = store_hash(cs->keybuf.data, cs->keybuf.len);
	return true;
}

/* An execute that is not a cacheable read: what it writes is invalidated
 * (consist.h) once it is answered. */
static enum cache_step exec_write(struct cache_session *cs, const struct cache_ctx *x,
				  const struct stmt_info *s)
{
	int kw = s->def ? atomic_load(&s->def->keyword) : KW_NONE;

	if (writes_step(cs, cache_stmt_exec(cs, s), !s->def, x->db) == CSTEP_WAIT)
		return CSTEP_WAIT;
	note_statement(cs, kw, false);
	return CSTEP_PASS;
}

/* COM_STMT_BULK_EXECUTE (MariaDB: the statement run once per row of
 * parameters, an INSERT, UPDATE or DELETE of many rows): never answered
 * from the cache, and never fills it (a RETURNING's rows included); it
 * invalidates what it writes as an execute of the statement does. */
static enum cache_step on_bulk(struct cache_session *cs, const struct cache_ctx *x)
{
	const struct stmt_info *s = x->stmts->cur;

	if (cs->refresh)
		return CSTEP_BLOCKED;
	return s ? exec_write(cs, x, s) : CSTEP_PASS;
}

static enum cache_step on_execute(struct cache_session *cs, const struct cache_ctx *x,
				  const uint8_t *pl, uint32_t len)
{
	bool bypass = cs->bypass_once || ryw_active(cs, x->now_ms) || !caching_possible(cs, x);
	struct stmt_info *s = x->stmts->cur;
	enum cache_step step;
	int kw;

	cs->bypass_once = false;
	if (!s)
		return cs->refresh ? CSTEP_BLOCKED : CSTEP_PASS;
	if (!s->def || pl[5] != 0 || s->long_data || s->cursor || !exec_key(cs, x, s, pl, len))
		bypass = true;
	step = first_look(cs, x, !bypass && !cs->settings_dirty && !dirty_reads(cs) &&
			  !consist_has_temps(&cs->cons) && inval_serving(), &bypass, s->text, s->text_len);
	if (step != CSTEP_PASS)
		return step;
	cs->cur_def = s->def;
	kw = s->def ? atomic_load(&s->def->keyword) : KW_NONE;
	if (!s->def || !is_read_keyword(kw))
		return exec_write(cs, x, s);
	step = verdict(cs, x, s->def, bypass);
	if (step != CSTEP_SERVED) {
		if (step == CSTEP_PASS)  /* it may call a stored function that writes */
			return writes_step(cs, cache_stmt_exec(cs, s), false, x->db);
		return step;
	}
	{
		char schema[CONSIST_SCHEMA_MAX];

		settings_field(rd_u32(s->prep_settings), SETTINGS_SCHEMA_FIELD, schema, sizeof(schema));
		consist_exec_params(&cs->cons, s, pl, len);   /* its placeholders' values */
		step = read_deps(cs, s->def, cache_stmt_exec(cs, s), schema);
		consist_exec_params(&cs->cons, NULL, NULL, 0);
		if (step != CSTEP_SERVED)
			return step;
	}
	if (!exec_key(cs, x, s, pl, len))
		return CSTEP_PASS;
	return lookup_or_load(cs, x, s->def, s->text, s->text_len);
}

/* Can this session's keys be built without asking the upstream? */
static bool serve_possible(const struct cache_session *cs, const struct cache_ctx *x)
{
	return !x->monitor && !x->profiling && !cs->settings_broken && !cs->settings_dirty &&
	       !ryw_active(cs, x->now_ms) &&
	       !dirty_reads(cs) && !consist_has_temps(&cs->cons) && inval_serving();
}

/* A hit with no refresh (there is no upstream to refresh from). */
static bool hit_only(struct cache_session *cs, const struct cache_ctx *x, uint64_t t0)
{
	enum cache_step step;

	if (try_hit(cs, x, t0, &step) <= 0)
		return false;
	if (step == CSTEP_REFRESH)
		cache_refresh_cancel(cs);
	return true;
}

bool cache_serve_only(struct cache_session *cs, const struct cache_ctx *x, const uint8_t *pl,
		      uint32_t len)
{
	uint64_t t0 = cache_now_us();
	struct stmt_info *s;
	bool served;

	cs->stmt_gen++;   /* a command of its own: no reading of another holds */
	if (pl[0] == CMD_QUERY) {
		served = serve_possible(cs, x) && build_key(cs, x, 'Q', pl + 1, len - 1, NULL, 0) &&
			 hit_only(cs, x, t0);
		if (!served)
			served = answer_cache_sql(cs, x, stmt_of(cs, (const char *)pl + 1, len - 1));
	} else {
		s = pl[0] == CMD_STMT_EXECUTE && len >= 10 ? stmts_find(x->stmts, rd_u32(pl + 1)) : NULL;
		served = s && s->def && pl[5] == 0 && !s->long_data && !s->cursor && serve_possible(cs, x) &&
			 exec_key(cs, x, s, pl, len) && hit_only(cs, x, t0);
	}
	if (served)
		cs->cur_def = NULL; /* answered: nothing in flight to count an error on */
	return served;
}

/* Only a statement of a cached shape needs the settings it is prepared
 * under (for its keys): for any other no internal query may run ahead of
 * its PREPARE on the connection (one would reset ROW_COUNT(), or close the
 * session's HANDLER tables while DDL waits for them, as any statement
 * does). */
static bool prepare_may_cache(struct cache_session *cs, const uint8_t *pl, uint32_t len)
{
	const struct sql_tok_result *tok = tokenize(stmt_of(cs, (const char *)pl + 1, len - 1));
	struct cache_def *d;

	if (!tok)
		return true;
	if (!is_read_keyword(tok->keyword) || (tok->flags & SQL_TOK_MULTI_STATEMENT))
		return false;
	d = registry_get(tok->digest, tok->text, tok->text_len, (const char *)pl + 1, len - 1);
	if (!d)
		return true;
	verdict_classify(d, tok);
	return atomic_load(&d->state) == CACHE_CACHED;
}

enum cache_step cache_command(struct cache_session *cs, const struct cache_ctx *x,
			      const uint8_t *pl, uint32_t len)
{
	enum cmd_cache what = command_of(pl[0])->cache;

	cs->stmt_gen++;   /* a new command: the worker's reading is no longer its */
	cs->cur_def = NULL;
	cs->served_rows = UINT64_MAX;
	cs->cur_dirty = cs->cur_write = false;
	cs->cur_ends_oneshot = false;
	cs->grants.refused = false;
	cs->cons.cur_set = false;
	switch (what) {
	case CMDC_QUERY:
		return on_query(cs, x, pl, len);
	case CMDC_EXECUTE:
		return on_execute(cs, x, pl, len);
	case CMDC_BULK:
		return on_bulk(cs, x);
	default:
		break;
	}
	if (cs->refresh)
		return CSTEP_BLOCKED; /* it needs the upstream, busy with the refresh */
	switch (what) {
	case CMDC_PREPARE:
		/* the settings it is prepared under become part of its keys */
		if (cs->settings_dirty && caching_possible(cs, x) && prepare_may_cache(cs, pl, len))
			return CSTEP_SETTINGS;
		break;
	case CMDC_SETTINGS:
		cs->cur_dirty = true;
		break;
	default:
		break;
	}
	return CSTEP_PASS;
}

/* ---- PREPARE answers kept (session/stmtreg.h) ----------------------------
 * The node answers a PREPARE itself, or keeps the upstream's answer to
 * one, only in binlog mode (the follower sees every DDL and privilege
 * change made anywhere) while the stream is current and the catalog read,
 * for a session the cache may serve (not the monitor, not after SET ROLE,
 * not with profiling on) that has no temporary table. */
static bool prepare_answers_possible(const struct cache_session *cs, const struct cache_ctx *x)
{
	return __atomic_load_n(&g_config.prepare_answer_ms, __ATOMIC_RELAXED) > 0 &&
	       inval_mode() == INVAL_BINLOG && inval_serving() && catalog_ready() &&
	       caching_possible(cs, x) && !consist_has_temps(&cs->cons);
}

bool cache_prepare_stamp(const struct cache_session *cs, const struct cache_ctx *x,
			 struct stmtreg_stamp *st)
{
	if (!prepare_answers_possible(cs, x))
		return false;
	st->gens[0] = catalog_ddl_seen();   /* a DDL statement, through the node or in the binlog */
	st->gens[1] = inval_epoch();        /* a flush: the binlog position lost, ... */
	st->gens[2] = grants_epoch();       /* a privilege change */
	st->gens[3] = sv_globals_gen();     /* SET GLOBAL through the node */
	st->at_ms = x->now_ms;
	return true;
}

bool cache_prepare_keepable(struct cache_session *cs, const struct cache_ctx *x, const struct stmt_info *s)
{
	return s && prepare_answers_possible(cs, x) &&
	       consist_prepare_resolves(&cs->cons, cache_stmt_exec(cs, s), x->db);
}
