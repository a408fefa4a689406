/*
 * mux.c: the session side of multiplexing (see mux.h): pins, state sync
 * steps on a borrowed connection, statement id mapping and the commands
 * answered without a connection. The rules are in docs/architecture.md,
 * "Multiplexing".
 */
#include "core/mux.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/client.h"
#include "core/uplink.h"
#include "config/config.h"
#include "core/kill.h"
#include "base/log.h"
#include "core/pool.h"
#include "sql/stmt.h"
#include "base/stats.h"
#include "session/stmtreg.h"
#include "upstream/upstream.h"

void mux_login(struct client *c)
{
	c->globals_gen = sv_globals_gen();
	sv_free(&c->sv);
	snprintf(c->sv.db, sizeof(c->sv.db), "%s", c->db);
	sv_names_from_collation(&c->sv, c->collation);
}

void mux_free(struct client *c)
{
	sv_free(&c->sv);
	pbuf_free(&c->prep_answer);
	free(c->delta);
	c->delta = NULL;
}

bool mux_holds_state(const struct client *c)
{
	return c->pin_forever || c->pin_lock || client_in_txn(c) || stmts_hold_conn(&c->stmts);
}

bool mux_pinned(const struct client *c)
{
	return !g_config.multiplexing || mux_holds_state(c) || c->sticky || c->login_pending;
}

void mux_reset(struct client *c)
{
	if (c->up) {
		if (mux_holds_state(c))
			pool_discard(c);
		else
			pool_release(c);
	}
	c->pin_forever = c->pin_lock = c->profiling = false;
	c->sticky = 0;
	c->lid = 0; /* a reset session's LAST_INSERT_ID() is 0 */
	c->lid_gen++;
	c->cur_sv = 0;
	c->globals_gen = sv_globals_gen(); /* a reset session starts from the globals of now */
	free(c->delta);
	c->delta = NULL;
	{
		char db[SV_DB_MAX];

		memcpy(db, c->sv.db, sizeof(db));
		sv_free(&c->sv);
		memcpy(c->sv.db, db, sizeof(db));
	}
	sv_names_from_collation(&c->sv, c->collation);
}

/* ---- statements -------------------------------------------------------- */

static uint32_t shape_caps(const struct client *c)
{
	return c->caps & (CAP_DEPRECATE_EOF | CAP_X_EXT_METADATA);
}

/* The registry key of the PREPARE in flight: its text in the session's
 * current state (the connection it runs on was brought to that state). */
static struct stmtreg_key reg_key(const struct client *c, const struct pbuf *ctx)
{
	struct stmtreg_key k = {
		.user = c->user, .caps = shape_caps(c), .ctx = ctx->data, .ctx_len = ctx->len,
		.text = (const char *)c->stmts.prep_text.data, .text_len = c->stmts.prep_text.len,
	};
	return k;
}

/* A statement joins the session's table (from the PREPARE in flight, in the
 * session's state of now), and the cache learns its shape. */
static struct stmt_info *add_stmt(struct client *c, uint32_t id, uint16_t nparams, uint64_t serial)
{
	struct stmt_info *s = stmts_add(&c->stmts, id, nparams, serial, &c->sv);

	if (s)
		cache_stmt_prepared(&c->cs, c->ident, s);
	return s;
}

/* Before MariaDB: an execute too short for its id, flags and iteration
 * count, or a bulk execute too short for its id and flags, gets MariaDB's
 * ERR 1835 whatever the id; then a bulk execute of a session that did not
 * negotiate bulk operations its ERR 1295, whatever the id. (Then an
 * unknown id: local_stmt.) true: the error is queued. */
static bool refused_as_mariadb(struct client *c, uint8_t cmd, uint32_t len)
{
	uint32_t need = cmd == CMD_STMT_EXECUTE ? 10 : cmd == CMD_STMT_BULK_EXECUTE ? 7 : 0;

	if (!upstream_mariadb())
		return false;
	if (len < need) {
		pkt_put_errf(&c->io.out, 1, ERR_MALFORMED_PACKET, "HY000", "Malformed communication packet");
		return true;
	}
	if (cmd == CMD_STMT_BULK_EXECUTE && !(c->caps & CAP_X_BULK)) {
		pkt_put_errf(&c->io.out, 1, ERR_UNSUPPORTED_PS, "HY000",
			     "This command is not supported in the prepared statement protocol yet");
		return true;
	}
	return false;
}

/* Statement commands: unknown ids, resets and fetches that need no
 * connection or cannot have one. */
static bool local_stmt(struct client *c, const uint8_t *pl, uint32_t len)
{
	uint8_t cmd = pl[0];
	uint32_t id = len >= 5 ? rd_u32(pl + 1) : 0;
	struct stmt_info *s = len >= 5 ? stmts_find(&c->stmts, id) : NULL;
	bool on_conn = s && c->up && upstream_stmt_id(c->up, s->serial);

	if (cmd == CMD_STMT_CLOSE)
		return true; /* the session forgot it; connections keep theirs */
	if (refused_as_mariadb(c, cmd, len))
		return true;
	if (cmd == CMD_STMT_BULK_EXECUTE && !upstream_mariadb())
		return false; /* not the server's command: its own answer */
	if (!s) {
		if (cmd != CMD_STMT_SEND_LONG_DATA)
			pkt_put_errf(&c->io.out, 1, ERR_UNKNOWN_STMT_HANDLER, "HY000",
					"Unknown prepared statement handler (%u) given to %s", id,
					command_of(cmd)->stmt_name);
		return true;
	}
	if (cmd == CMD_STMT_RESET && !on_conn) {
		s->cursor = s->long_data = false;
		pkt_put_ok(&c->io.out, 1, 0, 0, c->server_status & SESSION_STATUS_BITS, 0, c->caps);
		return true;
	}
	if (cmd == CMD_STMT_FETCH && (!on_conn || !s->cursor)) {
		pkt_put_errf(&c->io.out, 1, ERR_STMT_HAS_NO_OPEN_CURSOR, "HY000",
				"The statement (%u) has no open cursor", id);
		return true;
	}
	return false;
}

/* A session's warnings, LOCK TABLES or temporary tables (pin_forever)
 * live on its connection: a PREPARE answered here would not see them. */
static bool prepare_here_possible(struct client *c, struct stmtreg_stamp *now)
{
	struct cache_ctx x = cache_ctx_of(c);

	return !c->pin_forever && !c->pin_lock && !c->sticky && !c->login_pending &&
	       cache_prepare_stamp(&c->cs, &x, now);
}

/* COM_STMT_PREPARE answered by the node: the upstream's answer to the same
 * PREPARE (user, capabilities, session state, text) while it is exact
 * (stmtreg.h). The statement is prepared upstream when an execute needs
 * it there (mux_sync_step). true: answered. */
static bool local_prepare(struct client *c)
{
	struct stmtreg_stamp now;
	struct stmtreg_given g;
	struct pbuf ctx = {0};
	struct stmtreg_key k;
	bool given = false;

	if (c->stmts.prep_text.len == 0 || !prepare_here_possible(c, &now))
		return false;
	if (sv_serialize(&c->sv, &ctx) == 0) {
		k = reg_key(c, &ctx);
		given = stmtreg_give_answer(&k, &now, __atomic_load_n(&g_config.prepare_answer_ms,
								   __ATOMIC_RELAXED),
					    c->next_stmt_id + 1, c->server_status, &c->io.out, &g);
	}
	pbuf_free(&ctx);
	if (!given)
		return false;
	c->prep_id = ++c->next_stmt_id;
	add_stmt(c, c->prep_id, g.nparams, g.serial);
	STAT_INC(prepares_local);
	return true;
}

bool mux_local(struct client *c, const uint8_t *pl, uint32_t len)
{
	uint8_t stmt = command_of(pl[0])->stmt;

	if (stmt & CMDS_PREPARE)
		return local_prepare(c);
	if (stmt & CMDS_ID)
		return local_stmt(c, pl, len);
	return false;
}

/* ---- forwarding -------------------------------------------------------- */

/* What the forwarded command does to the session's state (the command
 * table's `session`): its SV_* flags, and in *d what it changes. */
static unsigned note_session(struct client *c, const struct command *k, const uint8_t *pl,
			     uint32_t len, struct sv_delta *d)
{
	struct stmt_info *s;

	switch (k->session) {
	case CSE_TEXT:
		/* the reading the cache made of it (sql/stmt.h) */
		return sv_classify(cache_stmt(&c->cs, (const char *)pl + 1, len - 1), d, upstream_mariadb());
	case CSE_STMT_TEXT:
		/* a prepared SET, CREATE TEMPORARY TABLE, LOCK TABLES, ... does
		 * to the session what the same text does in a COM_QUERY */
		s = len >= 5 ? stmts_find(&c->stmts, rd_u32(pl + 1)) : NULL;
		if (!s || !s->text)
			return 0; /* no statement of the session's: the server refuses it */
		return sv_classify(cache_stmt_exec(&c->cs, s), d, upstream_mariadb());
	case CSE_SCHEMA:
		memset(d, 0, sizeof(*d));
		if (len - 1 >= sizeof(d->db))
			return SV_PIN_FOREVER; /* a name no schema has: the server's error, kept */
		memcpy(d->db, pl + 1, len - 1);
		d->set_db = true;
		return SV_CHANGES;
	case CSE_PIN:
		return SV_PIN_FOREVER;
	default:
		return 0;
	}
}

void mux_note_command(struct client *c, const uint8_t *pl, uint32_t len)
{
	const struct command *k = command_of(pl[0]);
	struct sv_delta d;

	free(c->delta);
	c->delta = NULL;
	c->cur_sv = note_session(c, k, pl, len, &d);
	if (c->cur_sv & SV_CHANGES) {
		c->delta = malloc(sizeof(*c->delta));
		if (c->delta)
			*c->delta = d;
		else
			c->cur_sv |= SV_PIN_FOREVER;
	}
	if (k->stmt & CMDS_PREPARE) {
		c->prep_id = ++c->next_stmt_id;
		/* what its answer will be true of: as of now, before it runs */
		c->prep_answer.len = 0;
		c->prep_keep = prepare_here_possible(c, &c->prep_stamp);
		STAT_INC(prepares_upstream);
	}
	c->fwd_stmt_id = (k->stmt & CMDS_ID) && len >= 5 ? rd_u32(pl + 1) : 0;
}

/* COM_STMT_EXECUTE without types (new_params_bound 0): the types of the
 * statement's last execute are put in, since the connection that runs it
 * may not have seen them. */
static bool add_types(struct client *c, struct stmt_info *s, size_t at)
{
	struct pbuf *o = &c->up->io.out;
	size_t nb = ((size_t)s->nparams + 7) / 8, bound = at + PKT_HEADER_LEN + 10 + nb;
	size_t extra = 2u * s->nparams;
	uint32_t plen = rd_u24(o->data + at);

	if (bound >= o->len || plen + extra >= PKT_MAX_PAYLOAD)
		return true;
	if (o->data[bound]) { /* the client sent types: remember them */
		if (bound + 1 + extra <= o->len && s->types) {
			memcpy(s->types, o->data + bound + 1, extra);
			s->have_types = true;
		}
		return true;
	}
	if (!s->have_types || !s->types)
		return true;
	if (pbuf_reserve(o, extra) < 0)
		return false;
	memmove(o->data + bound + 1 + extra, o->data + bound + 1, o->len - bound - 1);
	memcpy(o->data + bound + 1, s->types, extra);
	o->data[bound] = 1;
	o->len += extra;
	wr_u24(o->data + at, (uint32_t)(plen + extra));
	return true;
}

/* COM_STMT_BULK_EXECUTE without types (no STMT_BULK_FLAG_SEND_TYPES): the
 * types of the statement's last execute are put in, as for an execute
 * (the server refuses a bulk execute of a statement it has no types for).
 * With types: they are kept (stmts_note_command did). */
static bool add_bulk_types(struct client *c, const struct stmt_info *s, size_t at)
{
	struct pbuf *o = &c->up->io.out;
	uint8_t *flags = o->data + at + PKT_HEADER_LEN + 5;
	size_t extra = 2u * s->nparams, from = at + PKT_HEADER_LEN + 7;
	uint32_t plen = rd_u24(o->data + at);

	if (from > o->len || (rd_u16(flags) & 0x80) || !s->have_types || !s->types ||
	    plen + extra >= PKT_MAX_PAYLOAD)
		return true;
	if (pbuf_reserve(o, extra) < 0)
		return false;
	flags = o->data + at + PKT_HEADER_LEN + 5; /* the buffer may have moved */
	memmove(o->data + from + extra, o->data + from, o->len - from);
	memcpy(o->data + from, s->types, extra);
	wr_u16(flags, (uint16_t)(rd_u16(flags) | 0x80));
	o->len += extra;
	wr_u24(o->data + at, (uint32_t)(plen + extra));
	return true;
}

bool mux_fix_forwarded(struct client *c, size_t at)
{
	struct pbuf *o = &c->up->io.out;
	uint8_t cmd = o->data[at + PKT_HEADER_LEN];
	struct stmt_info *s;
	uint32_t up_id;

	if (!(command_of(cmd)->stmt & CMDS_ID))
		return true; /* names no statement */
	s = stmts_find(&c->stmts, rd_u32(o->data + at + PKT_HEADER_LEN + 1));
	up_id = s ? upstream_stmt_id(c->up, s->serial) : 0;
	if (!s || !up_id)
		return true; /* mux_sync_step prepared it; cannot happen */
	wr_u32(o->data + at + PKT_HEADER_LEN + 1, up_id);
	if (cmd == CMD_STMT_EXECUTE && s->nparams)
		return add_types(c, s, at);
	if (cmd == CMD_STMT_BULK_EXECUTE && s->nparams)
		return add_bulk_types(c, s, at);
	return true;
}

void mux_relayed(struct client *c, struct pbuf *out, size_t from)
{
	if (c->relay.cmd != CMD_STMT_PREPARE || c->st != CS_RELAYING || out->len == from)
		return;
	/* the PREPARE's OK: the client gets the node's statement id */
	if (c->relay.packets == 1 && out->len >= from + PKT_HEADER_LEN + 5 &&
	    out->data[from + PKT_HEADER_LEN] == 0x00)
		wr_u32(out->data + from + PKT_HEADER_LEN + 1, c->prep_id);
	if (c->prep_keep && (c->prep_answer.len + (out->len - from) > STMTREG_ANSWER_MAX ||
			     pbuf_append(&c->prep_answer, out->data + from, out->len - from) < 0))
		c->prep_keep = false; /* too big to keep, or no memory: it is only relayed */
}

void mux_close_upstream_stmt(struct upstream *u, uint32_t up_id)
{
	size_t start;
	int rc = pkt_begin(&u->io.out, &start);

	rc |= put_u8(&u->io.out, CMD_STMT_CLOSE);
	rc |= put_u32(&u->io.out, up_id);
	if (rc == 0)
		pkt_end(&u->io.out, start, 0);
	else
		u->dirty = true;
}

/* The upstream's answer to a PREPARE is kept for the next PREPARE of the
 * same key when the statement's tables are all known to the catalog (what
 * could change the answer then moves the stamp). */
static void keep_answer(struct client *c, uint64_t serial, const struct stmt_info *s)
{
	struct cache_ctx x = cache_ctx_of(c);

	if (c->prep_keep && c->prep_answer.len && cache_prepare_keepable(&c->cs, &x, s))
		stmtreg_keep_answer(serial, c->prep_answer.data, c->prep_answer.len, &c->prep_stamp);
	c->prep_keep = false;
	c->prep_answer.len = 0;
	pbuf_shrink(&c->prep_answer, 4096);
}

void mux_prepared(struct client *c)
{
	struct pbuf ctx = {0};
	struct stmtreg_key k;
	uint64_t serial;
	uint32_t evict;

	if (sv_serialize(&c->sv, &ctx) < 0) {
		serial = stmtreg_unique(); /* no key to share it by */
	} else {
		k = reg_key(c, &ctx);
		serial = stmtreg_serial(&k);
	}
	pbuf_free(&ctx);
	if (c->up) {
		upstream_stmt_add(c->up, serial, c->relay.stmt_id, &evict);
		if (evict) {
			mux_close_upstream_stmt(c->up, evict);
			/* written now: a connection with output pending is not
			 * pooled (pool.c), and the session may give it back next */
			if (sbuf_flush(&c->up->io) == SBUF_ERROR)
				c->up->dirty = true;
		}
	}
	keep_answer(c, serial, add_stmt(c, c->prep_id, c->relay.prep_params, serial));
}

/* What the upstream's answer did to the statement it was for, found by
 * its id (c->stmts.cur is the last statement executed, which a fetch or a
 * reset need not be): an execute took the statement's long data and closed
 * the cursor it had, maybe opening a new one; a fetch that sent the last
 * row closed it (SERVER_STATUS_LAST_ROW_SENT). */
static void note_stmt_answer(struct client *c)
{
	struct relay *r = &c->relay;
	struct stmt_info *s = stmts_find(&c->stmts, c->fwd_stmt_id);

	if (!s)
		return;
	if (r->cmd == CMD_STMT_EXECUTE) {
		s->long_data = false;
		s->cursor = r->cursor_opened;
	} else if (r->cmd == CMD_STMT_FETCH && r->status_valid && (r->status & ST_LAST_ROW_SENT)) {
		s->cursor = false;
	}
}

static bool send_step(struct client *c, uint8_t cmd, const void *p, size_t n, enum upcmd_kind kind);

/* ---- FOUND_ROWS() ------------------------------------------------------
 * The server counts the rows of a connection's last result set (SELECT,
 * SHOW; an OK leaves it). A session's last one may have been answered by
 * the cache, or on another pooled connection: before a statement that reads
 * FOUND_ROWS() runs on a connection stamped with another answer, a SELECT
 * of the node's sets it (UPCMD_SYNC_FOUND_ROWS, MariaDB only: its recursive
 * CTE needs no table and no privilege). */

static void stamp_found_rows(struct client *c)
{
	if (c->up) {
		c->up->fr_client = c->id;
		c->up->fr_gen = c->fr_gen;
	}
}

/* A relayed answer: its result set is what FOUND_ROWS() counts now. A
 * cursor's count (its offset included), or an INSERT ... SELECT's, which
 * sends no result set, only the connection knows: the session's count is
 * then that connection's (not synced elsewhere), and its next command
 * stays there (main.select_found, main.select under --cursor-protocol). */
static void note_found_rows(struct client *c)
{
	const struct relay *r = &c->relay;

	if (r->cmd != CMD_QUERY && r->cmd != CMD_STMT_EXECUTE)
		return;
	if (r->cursor_opened || (r->results == 0 && (c->cur_sv & SV_SELECTS))) {
		c->fr_gen++;
		c->fr_rows = FR_UNKNOWN;
		stamp_found_rows(c);
		if (!r->cursor_opened)
			c->sticky = 1;
		return;
	}
	if (r->results == 0)
		return;
	c->fr_gen++;
	c->fr_rows = r->results == 1 && !r->saw_err ? r->rows : FR_UNKNOWN;
	stamp_found_rows(c);
}

/* ---- LAST_INSERT_ID() --------------------------------------------------
 * A connection's LAST_INSERT_ID() (and @@identity, @@last_insert_id) is
 * the last id its sessions generated: a session that reads it on a
 * connection another session's insert left its value on would see that
 * session's id (sys_vars.identity_func). Each OK with an insert id stamps
 * the connection with the session; before a statement that reads the value
 * or may keep it (INSERT, REPLACE, LOAD) runs on a connection stamped
 * otherwise, SET last_insert_id brings it to the session's
 * (UPCMD_SYNC_LAST_ID): 0 for a session that inserted nothing, else the id
 * of its last OK that had one (docs/architecture.md: an INSERT of an
 * explicit id reports that id without changing the server's value, which
 * the node cannot tell apart). */

static void note_last_id(struct client *c)
{
	const struct relay *r = &c->relay;

	if (!r->insert_id || !c->up || (r->cmd != CMD_QUERY && r->cmd != CMD_STMT_EXECUTE))
		return;
	c->lid = r->insert_id;
	c->lid_gen++;
	c->up->lid_client = c->id;
	c->up->lid_gen = c->lid_gen;
}

/* The statement reads the value, or may keep it (an INSERT of explicit ids
 * reports them and leaves the server's value as it was, so the connection
 * must hold the session's own before it: sys_vars.identity_func). */
static bool uses_last_id(const struct stmt_facts *f)
{
	return f->first == KW_INSERT || f->first == KW_REPLACE || f->first == KW_LOAD ||
	       (f->seen & SF_LAST_ID);
}

/* The facts of the front command: a COM_QUERY's text read now, or those of
 * the statement a COM_STMT_EXECUTE runs (read when it was prepared). false
 * when there is none (yet). */
static bool front_facts(struct client *c, struct stmt_facts *f)
{
	const uint8_t *pl;
	struct stmt_info *s;
	uint32_t len;
	uint8_t seq;

	if (c->login_pending || !sbuf_packet_ready(&c->io, &len, &seq) || len < 1)
		return false;
	pl = sbuf_in_ptr(&c->io) + PKT_HEADER_LEN;
	if (pl[0] == CMD_QUERY) {
		const struct stmt *st = cache_stmt(&c->cs, (const char *)pl + 1, len - 1);

		/* not read (out of memory): as if it named everything */
		*f = st ? st->facts : (struct stmt_facts){ .seen = SF_LAST_ID | SF_FOUND_ROWS };
		return true;
	}
	s = pl[0] == CMD_STMT_EXECUTE && len >= 5 ? stmts_find(&c->stmts, rd_u32(pl + 1)) : NULL;
	if (!s || !s->text)
		return false;
	*f = s->facts;
	return true;
}

/* The front command reads LAST_INSERT_ID() or may keep it, and c->up
 * holds another's. */
static bool last_id_needed(struct client *c)
{
	struct upstream *u = c->up;
	struct stmt_facts f;

	if (u->lid_client == c->id ? u->lid_gen == c->lid_gen : u->lid_client == 0 && c->lid == 0)
		return false;
	return front_facts(c, &f) && uses_last_id(&f);
}

static int last_id_step(struct client *c)
{
	char sql[64];

	snprintf(sql, sizeof(sql), "SET last_insert_id = %llu", (unsigned long long)c->lid);
	return send_step(c, CMD_QUERY, sql, strlen(sql), UPCMD_SYNC_LAST_ID) ? 1 : -1;
}

static void stamp_last_id(struct client *c)
{
	c->up->lid_client = c->lid ? c->id : 0;
	c->up->lid_gen = c->lid_gen;
}

void mux_answered_here(struct client *c, uint64_t rows)
{
	c->fr_gen++;
	c->fr_rows = rows; /* (UINT64_MAX: FR_UNKNOWN) */
}

void mux_found_rows_lost(struct client *c)
{
	if (c->up)
		c->up->fr_client = 0;
}

/* The front command reads FOUND_ROWS() and c->up holds another answer's. */
static bool found_rows_needed(struct client *c)
{
	struct upstream *u = c->up;
	struct stmt_facts f;

	if (c->fr_rows == FR_UNKNOWN || (u->fr_client == c->id && u->fr_gen == c->fr_gen) ||
	    !upstream_mariadb())
		return false;
	return front_facts(c, &f) && (f.seen & SF_FOUND_ROWS);
}

static int found_rows_step(struct client *c)
{
	char sql[192];

	if (c->fr_rows == 0)
		snprintf(sql, sizeof(sql), "SELECT SQL_CALC_FOUND_ROWS 1 FROM DUAL WHERE 0 LIMIT 0");
	else
		snprintf(sql, sizeof(sql), "WITH RECURSIVE shoal_n(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
			 "FROM shoal_n WHERE i < %llu) SELECT SQL_CALC_FOUND_ROWS 1 FROM shoal_n LIMIT 0",
			 (unsigned long long)c->fr_rows);
	return send_step(c, CMD_QUERY, sql, strlen(sql), UPCMD_SYNC_FOUND_ROWS) ? 1 : -1;
}

void mux_answer_done(struct client *c)
{
	struct relay *r = &c->relay;
	bool ok = !r->saw_err;

	if (c->sticky)
		c->sticky--;
	if (r->saw_err || r->warnings || r->insert_id || (c->cur_sv & SV_STICKY_NEXT))
		c->sticky = 1; /* SHOW WARNINGS, LAST_INSERT_ID(), FOUND_ROWS() next */
	if (c->cur_sv & SV_PROFILING)
		c->profiling = true; /* even when it failed: SET profiling may be refused */
	if (c->cur_sv & SV_PIN_FOREVER) {
		c->pin_forever = true;
		if (c->up)
			c->up->dirty = true;
	}
	if (ok && (c->cur_sv & SV_GLOBAL))
		sv_globals_changed();
	if (ok && (c->cur_sv & SV_TELLS_ID) && c->up)
		kill_note_told(c->kill_entry, mysql_thread_id(c->up->mysql));
	if (ok && ((c->cur_sv & SV_RELEASE) ||
		   ((c->cur_sv & SV_RELEASE_IF) && sv_completion_releases(&c->sv)))) {
		c->releasing = true;
		if (c->up)
			c->up->dirty = true; /* the server closes it: never lent again */
	}
	if (ok && (c->cur_sv & SV_PIN_LOCK))
		c->pin_lock = true;
	if (ok && (c->cur_sv & SV_UNLOCK))
		c->pin_lock = false;
	if (ok && c->delta) {
		if (sv_apply(&c->sv, c->delta) < 0 || !c->up || sv_apply(&c->up->sv, c->delta) < 0) {
			c->pin_forever = true;
			if (c->up)
				c->up->dirty = true;
		}
	}
	if (r->cmd == CMD_STMT_EXECUTE || r->cmd == CMD_STMT_FETCH)
		note_stmt_answer(c);
	note_found_rows(c);
	note_last_id(c);
	free(c->delta);
	c->delta = NULL;
	c->cur_sv = 0;
	c->retried = false;
}

/* ---- sync -------------------------------------------------------------- */

/* The statement the front command needs prepared on c->up, if any. */
static struct stmt_info *stmt_needed(struct client *c)
{
	uint32_t len;
	uint8_t seq;
	const uint8_t *pl;
	struct stmt_info *s;

	if (c->login_pending || !sbuf_packet_ready(&c->io, &len, &seq) || len < 5)
		return NULL;
	pl = sbuf_in_ptr(&c->io) + PKT_HEADER_LEN;
	if (!(command_of(pl[0])->stmt & CMDS_RUNS))
		return NULL; /* runs no statement on the connection */
	s = stmts_find(&c->stmts, rd_u32(pl + 1));
	if (!s || !s->text || upstream_stmt_id(c->up, s->serial))
		return NULL;
	return s;
}

static bool send_step(struct client *c, uint8_t cmd, const void *p, size_t n, enum upcmd_kind kind)
{
	if (!upcmd_send(c, cmd, p, n, kind))
		return false;
	STAT_INC(upstream_syncs);
	return true;
}

/* The state c->up must be in before the next step: the state the front
 * command's statement was prepared in, while it must be prepared on c->up
 * (so that it is parsed as it was for the client: sql_mode, character
 * set, schema), else the session's. */
static const struct sess_state *sync_target(struct client *c)
{
	struct stmt_info *s = stmt_needed(c);

	return s && s->have_ctx ? &s->ctx : &c->sv;
}

/* 1 a step was sent, 0 nothing to do, -1 the connection cannot get to
 * the state (then it is marked dirty). */
static int state_step(struct client *c, const struct sess_state *want)
{
	struct upstream *u = c->up;
	struct pbuf sql = {0};
	bool init_db = false;
	int rc = 0;

	if (sv_sync_sql(&u->sv, want, &init_db, &sql) < 0)
		rc = -1;
	else if (init_db)
		rc = send_step(c, CMD_INIT_DB, want->db, strlen(want->db), UPCMD_SYNC_DB) ? 1 : -1;
	else if (sql.len)
		rc = send_step(c, CMD_QUERY, sql.data, sql.len, UPCMD_SYNC_SET) ? 1 : -1;
	else if (sv_copy(&u->sv, want) < 0)
		rc = -1;
	pbuf_free(&sql);
	if (rc < 0)
		u->dirty = true; /* never lent again */
	return rc;
}

/* The upstream statements on u that no session holds any more are closed
 * (the COM_STMT_CLOSEs go with the next command): looked at only when some
 * serial lost its last holder since u's last look. */
static void purge_dropped(struct upstream *u)
{
	unsigned gen = stmtreg_dropped_gen();
	uint64_t serials[UP_STMTS_MAX];
	bool held[UP_STMTS_MAX];
	uint16_t n = u->n_stmts;

	if (u->purge_gen == gen)
		return;
	u->purge_gen = gen;
	if (n == 0)
		return;
	for (uint16_t i = 0; i < n; i++)
		serials[i] = u->stmts[i].serial;
	stmtreg_held(serials, held, n);
	for (uint16_t i = n; i-- > 0;) {
		if (held[i])
			continue;
		mux_close_upstream_stmt(u, u->stmts[i].up_id);
		u->stmts[i] = u->stmts[--u->n_stmts]; /* the ones above i are all kept */
	}
}

int mux_sync_step(struct client *c)
{
	const struct sess_state *want = sync_target(c);
	struct stmt_info *s;

	purge_dropped(c->up);
	kill_note_upstream(c->kill_entry, mysql_thread_id(c->up->mysql));
	if (!sv_equal(&c->up->sv, want)) {
		int rc = state_step(c, want);

		if (rc != 0)
			return rc;
	}
	s = stmt_needed(c);
	if (s) {
		STAT_INC(prepares_upstream);
		return send_step(c, CMD_STMT_PREPARE, s->text, s->text_len, UPCMD_SYNC_PREPARE) ? 1 : -1;
	}
	if (!sv_equal(&c->up->sv, &c->sv))
		return state_step(c, &c->sv); /* back from the statement's state */
	if (found_rows_needed(c))
		return found_rows_step(c);
	if (last_id_needed(c))
		return last_id_step(c);
	return 0;
}

/* The ERR a sync step got, to the client (sequence id 1, or the login's). */
static void pass_error(struct client *c)
{
	const uint8_t *p = c->scratch.data + PKT_HEADER_LEN;
	size_t n = c->scratch.len >= PKT_HEADER_LEN ? rd_u24(c->scratch.data) : 0;
	uint8_t seq = c->login_pending ? c->seq : 1;

	if (n >= 9 && p[0] == 0xff && p[3] == '#') {
		char state[6];

		memcpy(state, p + 4, 5);
		state[5] = 0;
		pkt_put_errf(&c->io.out, seq, rd_u16(p + 1), state, "%.*s", (int)(n - 9), (const char *)p + 9);
	} else {
		pkt_put_errf(&c->io.out, seq, ERR_NET_READ_ERROR, "08S01",
				"Lost connection to upstream server during query");
	}
}

bool mux_sync_done(struct client *c, enum upcmd_kind kind)
{
	struct upstream *u = c->up;
	struct stmt_info *s;
	uint32_t evict;

	if (kind == UPCMD_SYNC_LAST_ID && !c->relay.saw_err) {
		stamp_last_id(c);
		return true;
	}
	/* a refused SET last_insert_id fails the command like any other
	 * sync (below): run anyway, it could read or keep another session's id */
	if (kind == UPCMD_SYNC_FOUND_ROWS) {
		/* a failure costs FOUND_ROWS() only: give up on it, not the command */
		if (c->relay.saw_err)
			c->fr_rows = FR_UNKNOWN;
		else
			stamp_found_rows(c);
		return true;
	}
	if (c->relay.saw_err) {
		pass_error(c);
		if (kind != UPCMD_SYNC_PREPARE)
			u->dirty = true; /* a SET may have half-applied */
		return false;
	}
	if (kind == UPCMD_SYNC_DB) {
		memcpy(u->sv.db, sync_target(c)->db, sizeof(u->sv.db));
	} else if (kind == UPCMD_SYNC_SET) {
		char db[SV_DB_MAX];

		memcpy(db, u->sv.db, sizeof(db));
		if (sv_copy(&u->sv, sync_target(c)) < 0)
			u->dirty = true;
		memcpy(u->sv.db, db, sizeof(db));
	} else if ((s = stmt_needed(c)) != NULL) {
		upstream_stmt_add(u, s->serial, c->relay.stmt_id, &evict);
		if (evict)
			mux_close_upstream_stmt(u, evict);
	}
	return true;
}
