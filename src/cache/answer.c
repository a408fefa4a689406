/*
 * answer.c: owns what comes back to the cache for a command (see
 * answer.h): a fill's bytes, the answer complete (accounting, the entry
 * stored, abandoned, or parked until its tables' generated columns are
 * checked; the session's write, transaction and lock state; the answer's
 * last packet held until the binlog follower has applied the write, or the
 * checks are done), a background refresh's answer, and the end of the
 * session's waits (a coalesced key, the catalog, a hold).
 */
#include "cache/answer.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/stats.h"
#include "cache/binlog.h"
#include "cache/cache_metrics.h"
#include "cache/catalog.h"
#include "cache/consist.h"
#include "cache/grants.h"
#include "cache/registry.h"
#include "cache/vcols.h"
#include "config/config.h"

/* The server says a transaction is open: what it wrote is not committed
 * yet. (status_in_txn also counts autocommit off, which only says that the
 * next statement opens one: after a COMMIT with autocommit off the
 * transaction's writes are committed, and others must see them at once;
 * sys_vars.autocommit_func.) */
static bool txn_open(uint16_t status)
{
	return (status & ST_IN_TRANS) != 0;
}

bool cache_wait_current(const struct cache_session *cs, uint32_t gen)
{
	return cs->waiting && cs->waiter.gen == gen;
}

static void other_wait_over(struct cache_session *cs, bool timed_out);

void cache_wait_over(struct cache_session *cs, bool timed_out)
{
	struct cache_def *d = cs->cur_def;

	if (!cs->waiting)
		return;
	if (cs->wait_kind != WAIT_STORE) {
		other_wait_over(cs, timed_out);
		return;
	}
	if (timed_out) {
		store_cancel_wait(cs->keybuf.data, cs->keybuf.len, cs->key_hash, &cs->waiter);
		cs->bypass_once = true;
		if (d)
			atomic_fetch_add(&d->coalesce_timeouts, 1);
	} else {
		STAT_INC(cache_coalesced);
		if (d)
			atomic_fetch_add(&d->coalesced_waits, 1);
	}
	cs->waiting = false;
}

/* May the answer of a fill that read deps be stored? Only once each table
 * has had its generated columns checked; with queue, those not checked yet
 * are queued for it, now that the client's read has opened them (vcols.h). */
static bool vcols_checked(const struct fill_deps *deps, bool queue)
{
	bool all = true;

	for (unsigned i = 0; i < deps->n; i++) {
		enum vcols_verdict v = vcols_verdict(deps->d[i].t);

		if (v == VCOLS_UNKNOWN && queue)
			catalog_check_vcols(deps->d[i].t);
		if (v != VCOLS_PLAIN)
			all = false;
	}
	return all;
}

/* Read-your-writes for a statement whose writes its text does not show
 * (binlog mode): its answer's last packet (the OK the client waits for)
 * is held until the binlog follower has applied everything the upstream
 * had committed by then, so the session's next read, or anyone's the
 * client tells about it, is current. If the follower is not streaming, or
 * does not get there within BINLOG_HOLD_MS, everything is invalidated
 * instead. */
#define BINLOG_HOLD_MS 5000

/* Take the answer's last packet (cs->last_pkt_len bytes at the end of out)
 * out of the client's output until the wait of kind ends
 * (other_wait_over gives it back). false: nothing to hold, or no memory. */
static bool hold_last_packet(struct cache_session *cs, struct pbuf *out, int kind, int ms)
{
	size_t n = cs->last_pkt_len;

	cs->held_ok.len = 0;
	if (n == 0 || n > out->len || pbuf_append(&cs->held_ok, out->data + out->len - n, n) < 0)
		return false;
	out->len -= n;
	cs->held_out = out;
	cs->waiting = true;
	cs->wait_kind = kind;
	cs->wait_ms = ms;
	return true;
}

static bool hold_for_binlog(struct cache_session *cs, const struct cache_ctx *x)
{
	cs->waiter.gen++;
	if (binlog_barrier(&cs->waiter) < 0) {
		consist_hold_failed();
		return false;
	}
	if (!hold_last_packet(cs, x->out, WAIT_BINLOG, BINLOG_HOLD_MS)) {
		binlog_barrier_cancel(&cs->waiter);
		consist_hold_failed();
		return false;
	}
	return true;
}

static void settle_parked(struct cache_session *cs);

/* A catalog wait, a binlog hold or a generated-columns hold ended (woken,
 * or timed out). */
static void other_wait_over(struct cache_session *cs, bool timed_out)
{
	if (cs->wait_kind == WAIT_CATALOG) {
		if (timed_out)
			catalog_cancel_wait(&cs->waiter);
	} else {
		if (timed_out && cs->wait_kind == WAIT_VCOLS) {
			catalog_cancel_vcols_wait(&cs->waiter);
			cs->waiter.gen++;
		} else if (timed_out) {
			binlog_barrier_cancel(&cs->waiter);
			cs->waiter.gen++;          /* a late wake-up is ignored */
			consist_hold_failed();
		}
		if (cs->wait_kind == WAIT_VCOLS)
			settle_parked(cs);
		/* the answer goes to the client now (on out of memory it never
		 * gets it: the core's idle timeout ends the session) */
		if (pbuf_append(cs->held_out, cs->held_ok.data, cs->held_ok.len) < 0)
			log_warn("client %u: out of memory releasing a held answer", cs->id);
		cs->held_ok.len = 0;
		pbuf_shrink(&cs->held_ok, 4096);
	}
	cs->waiting = false;
	cs->wait_kind = WAIT_STORE;
}

void cache_tee(struct cache_session *cs, const uint8_t *p, size_t n)
{
	cs->last_pkt_len = n;       /* the answer's end may be held (hold_for_binlog) */
	if (!cs->fill || cs->fill_too_big || n == 0)
		return;
	if (cs->fill_buf.len + n > g_config.cache_max_entry_size || pbuf_append(&cs->fill_buf, p, n) < 0) {
		cs->fill_too_big = true;
		pbuf_free(&cs->fill_buf);
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

/* After a command: does the session still hold the table locks under which
 * it wrote? Under LOCK TABLES others see its writes when the locks go
 * (Aria's WRITE CONCURRENT), as at a COMMIT: at UNLOCK TABLES, BEGIN, or
 * the next LOCK TABLES, which releases the held ones before it takes its
 * own (even when it then fails). False releases the write set. */
static bool locks_still_held(struct cache_session *cs, bool failed)
{
	bool released = cs->locked && cs->cur_lock_op != 0;

	if (cs->cur_lock_op && !failed)
		cs->locked = cs->cur_lock_op > 0;
	cs->cur_lock_op = 0;
	return cs->locked && !released;
}

/* Is the relayed answer one a cache may keep? */
static bool storable(const struct relay *r, size_t size)
{
	return size > 0 && size <= g_config.cache_max_entry_size && r->results == 1 && !r->saw_err &&
	       r->status_valid && (r->warnings == 0 || g_config.cache_warnings) &&
	       (r->rows > 0 || g_config.cache_empty);
}

static uint32_t clamp_us(uint64_t us)
{
	return (uint32_t)(us > UINT32_MAX ? UINT32_MAX : us);
}

static void store_now(struct cache_session *cs, uint32_t rows, uint64_t us, int64_t now)
{
	struct cache_entry *e = cs->fill;
	struct cache_def *d = e->def;
	uint16_t off[ENTRY_MAX_STATUS];

	cs->fill = NULL;
	status_offsets(&cs->fill_buf, off);
	store_fill(e, cs->fill_buf.data, cs->fill_buf.len, off, clamp_us(us), rows, now,
		   atomic_load(&d->ttl_ms), def_refresh_ms(d), &cs->fill_deps);
	cs->fill_buf.len = 0;
	pbuf_shrink(&cs->fill_buf, 65536);
}

/* The answer of the fill is in: store it, give it up, or park it until
 * its tables' generated columns are checked (true: parked). */
static bool finish_fill(struct cache_session *cs, const struct relay *r, uint64_t us, int64_t now)
{
	if (cs->fill_too_big || !storable(r, cs->fill_buf.len)) {
		store_abandon(cs->fill);
		cs->fill = NULL;
		return false;
	}
	if (!vcols_checked(&cs->fill_deps, true)) {
		cs->parked_rows = (uint32_t)r->rows;
		cs->parked_us = us;
		cs->parked_now = now;
		return true;
	}
	store_now(cs, (uint32_t)r->rows, us, now);
	return false;
}

/* A parked fill: stored if its tables are all checked and plain now. */
static void settle_parked(struct cache_session *cs)
{
	if (!cs->fill)
		return;
	if (vcols_checked(&cs->fill_deps, false)) {
		store_now(cs, cs->parked_rows, cs->parked_us, cs->parked_now);
		return;
	}
	store_abandon(cs->fill);
	cs->fill = NULL;
}

/* A fill is parked: its answer's last packet is held (at most
 * VCOLS_HOLD_MS) until the catalog reader has checked the tables, so that
 * the entry is stored, or not, before the client can ask again. false: not
 * held (the checks are done already, or the hold failed): settled now. */
#define VCOLS_HOLD_MS 1000
static bool hold_for_vcols(struct cache_session *cs, const struct cache_ctx *x)
{
	cs->waiter.gen++;
	catalog_wait_vcols(&cs->waiter);
	if (vcols_checked(&cs->fill_deps, false) ||
	    !hold_last_packet(cs, x->out, WAIT_VCOLS, VCOLS_HOLD_MS)) {
		catalog_cancel_vcols_wait(&cs->waiter);
		settle_parked(cs);
		return false;
	}
	return true;
}

void cache_note_own_error(struct cache_session *cs, uint64_t us)
{
	if (!cs->cur_def)
		return;
	def_account(cs->cur_def, us, 0, 0);
	atomic_fetch_add_explicit(&cs->cur_def->errors, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&cs->cur_def->node_errors, 1, memory_order_relaxed);
	cs->cur_def = NULL;
}

bool cache_answer_done(struct cache_session *cs, const struct cache_ctx *x, const struct relay *r,
		       uint64_t us)
{
	uint16_t status = x->status;
	int64_t now_ms = x->now_ms;
	bool held, parked;

	if (cs->cur_def)
		def_account(cs->cur_def, us, r->rows, r->affected);
	if (cs->cur_def && r->saw_err)
		atomic_fetch_add_explicit(&cs->cur_def->errors, 1, memory_order_relaxed);
	if (cs->cur_def && !r->saw_err && r->results > 0 && !cs->settings_dirty)
		/* the user just read it upstream, under these settings */
		grants_note_allowed(&cs->cw->grants, x->ident, cs->cur_def, cs->settings_id, now_ms);
	cache_metrics_observe(false, us);
	if (cs->fill)
		cache_metrics_observe_miss(us); /* a miss: the answer fills an entry */
	parked = cs->fill && finish_fill(cs, r, us, now_ms);
	if (cs->cur_dirty)
		cs->settings_dirty = true;
	if (cs->cur_write) {
		cs->last_write_ms = now_ms;
		if (txn_open(status))
			cs->txn_wrote = true;
	}
	if (!txn_open(status))
		cs->txn_wrote = false;
	if (cs->cur_ends_oneshot && !status_in_txn(status))
		cs->oneshot_ru = false;
	cs->cur_ends_oneshot = false;
	cs->cur_def = NULL;
	cs->cur_dirty = cs->cur_write = false;
	cs->cat_waited = false;
	held = locks_still_held(cs, r->saw_err);
	if (consist_done(&cs->cons, txn_open(status) || held, !r->saw_err)) {
		if (parked)
			settle_parked(cs); /* one hold at a time: not stored */
		return hold_for_binlog(cs, x);
	}
	return parked && hold_for_vcols(cs, x);
}

void cache_refresh_done(struct cache_session *cs, const struct cache_ctx *x, const struct relay *r,
			const struct pbuf *answer, uint64_t us)
{
	int64_t now_ms = x->now_ms;
	struct cache_entry *e = cs->refresh;
	struct cache_def *d;
	uint16_t off[ENTRY_MAX_STATUS];
	int changed;

	if (!e)
		return;
	d = e->def;
	cs->refresh = NULL;
	if (!storable(r, answer->len)) {
		atomic_fetch_add(&d->refresh_failed, 1);
		store_abandon(e);
		return;
	}
	status_offsets(answer, off);
	if (!cs->settings_dirty)
		grants_note_allowed(&cs->cw->grants, x->ident, d, cs->settings_id, now_ms);
	changed = store_fill(e, answer->data, answer->len, off, clamp_us(us), (uint32_t)r->rows, now_ms,
			     atomic_load(&d->ttl_ms), def_refresh_ms(d), &cs->refresh_deps);
	atomic_fetch_add(changed > 0 ? &d->refresh_changed : changed == 0 ? &d->refresh_unchanged
			 : &d->refresh_failed, 1);
}
