/*
 * client.c: owns the command phase of a client session: reading and
 * checking command packets, answering what the node answers itself (unknown
 * commands, CMD_QUIT, PING for sessions without an upstream, the monitor
 * queries through monitor.c), asking the cache what to do with each command
 * and doing it (serve, forward and fill, read the settings, wait, refresh),
 * forwarding the rest to the session's upstream connection and relaying the
 * response, the one seam for commands of the node's own upstream
 * (upcmd_send, routing their answers by kind), the coalescing wait timer,
 * what a session does when its upstream connection breaks (close, or under
 * serve-stale keep answering from the cache), closing cleanly on every error
 * path, and closing sessions at their next idle point while the node
 * drains. Login is in login.c.
 */
#include "core/client.h"

#include <arpa/inet.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/session.h"
#include "config/config.h"
#include "base/health.h"
#include "upstream/ident.h"
#include "core/idle.h"
#include "core/infile.h"
#include "core/kill.h"
#include "base/log.h"
#include "core/monitor.h"
#include "core/mux.h"
#include "core/pool.h"
#include "upstream/probe.h"
#include "base/stats.h"
#include "core/worker.h"
#include "proto/compress.h"

#define CLIENT_READ_MAX (256 * 1024)
#define CLIENT_OUT_HIGH (1024 * 1024)   /* stop reading upstream above this */
#define LOGIN_PACKET_MAX 65536

/* Session ids (the greeting's connection id, what KILL and drivers' cancel
 * name) start far above the upstream's thread ids, which count from 1 since
 * the server started: a KILL's id then names one or the other, never both
 * (docs/architecture.md, KILL). */
#define FIRST_SESSION_ID 1000000001u
static atomic_uint next_conn_id = FIRST_SESSION_ID;

static void process_input(struct client *c);

/* A move the state table refused (cstate_move logged and counted it; under
 * SHOAL_STRICT_STATES it aborted): the session is not where the code
 * believes, so nothing more of it is trusted. It ends: ERR 1105 to the
 * client and CLOSING, which every state may enter; its upstream connection
 * is then closed, never lent again (give_back). */
static void state_refused(struct client *c)
{
	if (c->st == CS_CLOSING)
		return; /* ending already: its last output goes out */
	pkt_put_errf(&c->io.out, cstate_in_login(c->st) ? c->seq : 1, ERR_UNKNOWN_ERROR, "HY000",
		     "Shoal: internal error (session state); the session is closed");
	if (cstate_move(c->id, c->st, CS_CLOSING))
		c->st = CS_CLOSING;
}

void client_set_state(struct client *c, enum client_state to)
{
	if (c->st == to)
		return; /* no move */
	if (cstate_move(c->id, c->st, to))
		c->st = to;
	else
		state_refused(c);
}

static void pump_upstream(struct client *c);
static bool upstream_busy(const struct client *c);

/* What handling the front command came to. */
enum hc_result {
	HC_NEXT,       /* dealt with: go on with the next command */
	HC_STOP,       /* it stays at the front: nothing more until an event */
	HC_CLOSED,     /* the session was closed (and freed) */
	HC_FORWARD,    /* it goes upstream: borrow a connection, sync, forward */
	HC_SETTINGS,   /* the cache needs the settings: borrow, sync, read them */
	HC_GRANT_CHECK, /* the cache needs the user's grant verdict: borrow, sync, check */
	HC_NOT_LOCAL,  /* (node_command) not the node's to answer: ask the cache */
};

static int64_t now_ms(const struct client *c)
{
	return (int64_t)(ev_now(c->w->loop) * 1000.0);
}

/* What the cache is handed of the session (cache/session.h). */
struct cache_ctx cache_ctx_of(struct client *c)
{
	struct cache_ctx x = {
		.out = &c->io.out, .caps = c->caps, .status = c->server_status, .now_ms = now_ms(c),
		.monitor = c->is_monitor, .up_lost = c->up_lost, .stmts = &c->stmts, .ident = c->ident,
		.db = c->sv.db, .profiling = c->profiling,
	};

	return x;
}

/* A background refresh is upstream: the session answers cache hits only. */
static bool hits_only(const struct client *c)
{
	return c->st == CS_INTERNAL && c->upcmd == UPCMD_REFRESH;
}

/* ---- the cache's wait (CS_WAITING) ------------------------------------- */

static void wait_unlink(struct client *c)
{
	struct worker *w = c->w;

	ev_timer_stop(w->loop, &c->wait_timer);
	if (c->wait_prev)
		c->wait_prev->wait_next = c->wait_next;
	else if (w->waiting == c)
		w->waiting = c->wait_next;
	if (c->wait_next)
		c->wait_next->wait_prev = c->wait_prev;
	c->wait_prev = c->wait_next = NULL;
}

/* CSTEP_WAIT: wait (the command stays queued) for a wake-up from the
 * session loading the key (client_wake), at most cs.wait_ms. */
static void wait_begin(struct client *c)
{
	struct worker *w = c->w;

	client_set_state(c, CS_WAITING);
	c->wait_prev = NULL;
	c->wait_next = w->waiting;
	if (w->waiting)
		w->waiting->wait_prev = c;
	w->waiting = c;
	ev_timer_set(&c->wait_timer, c->cs.wait_ms / 1000.0, 0.);
	ev_timer_start(w->loop, &c->wait_timer);
}

static void wait_over(struct client *c, bool timed_out)
{
	wait_unlink(c);
	cache_wait_over(&c->cs, timed_out);
	client_set_state(c, CS_READY);
	process_input(c);
}

static void on_wait_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
	(void)loop;
	(void)revents;
	wait_over(t->data, true);
}

void client_wake(struct worker *w, uint32_t client_id, uint32_t gen)
{
	for (struct client *c = w->waiting; c; c = c->wait_next) {
		if (c->id != client_id)
			continue;
		if (c->st == CS_WAITING && cache_wait_current(&c->cs, gen))
			wait_over(c, false);
		return;
	}
}

/* The cache gives up what the session was doing for it (fill, refresh,
 * wait). */
static void abort_cache(struct client *c)
{
	wait_unlink(c);
	cache_abort(&c->cs);
}

/* The session ends: its connection goes back to the pool when it is
 * between commands and holds nothing of the session's; else it is closed
 * (an open transaction is rolled back by that). */
static void give_back(struct client *c)
{
	if (!c->up)
		return;
	if (c->up->st != UP_READY || (!upstream_busy(c) && !c->held && !mux_holds_state(c) &&
				      c->st != CS_CLOSING))
		pool_release(c);
	else
		pool_discard(c);
}

void client_close(struct client *c, const char *why)
{
	struct worker *w = c->w;

	log_debug("client %u (%s) closed: %s", c->id, c->peer, why);
	if (cstate_in_login(c->st) || c->login_pending || c->st == CS_CLOSING)
		STAT_INC(client_connections_aborted);
	ev_io_stop(w->loop, &c->watcher);
	ev_timer_stop(w->loop, &c->timer);
	kill_unregister(c->id);
	pool_forget(c);
	give_back(c);
	wait_unlink(c);
	cache_session_free(&c->cs);
	stmts_free(&c->stmts);
	pbuf_free(&c->scratch);
	mux_free(c);
	ident_destroy(&c->ident);
	if (c->pinned_counted)
		STAT_DEC(upstream_pinned);
	sbuf_close(&c->io);
	worker_remove_client(w, c);
	STAT_DEC(client_connections);
	free(c);
}

void client_arm(struct client *c)
{
	int ev = EV_READ;

	if (sbuf_out_pending(&c->io) > 0 || c->io.ssl_want_write)
		ev |= EV_WRITE;
	/* (compressed: frames are decoded as soon as they are whole, so what
	 * is undecoded is one frame's part, which must be let in) */
	if (c->st == CS_RELAYING && sbuf_in_len(&c->io) > CLIENT_READ_MAX)
		ev &= ~EV_READ; /* the client pipelines: hold further input */
	if (c->st == CS_RELAYING && c->up && infile_blocked(&c->relay, &c->up->io))
		ev &= ~EV_READ; /* its file waits for the upstream */
	if (ev_is_active(&c->watcher) && (c->watcher.events & (EV_READ | EV_WRITE)) == ev)
		return;
	ev_io_stop(c->w->loop, &c->watcher);
	ev_io_set(&c->watcher, c->io.fd, ev);
	ev_io_start(c->w->loop, &c->watcher);
}

/* Write pending output. false if the client is gone (closed and freed). */
bool client_flush(struct client *c)
{
	enum sbuf_io r = sbuf_flush(&c->io);

	if (r == SBUF_ERROR) {
		client_close(c, "write failed");
		return false;
	}
	if (r == SBUF_OK && client_ending(c)) {
		client_close(c, c->st == CS_DRAINED ? "closed for the drain" :
			     c->releasing ? "ended by COMMIT/ROLLBACK RELEASE" : "closed after error");
		return false;
	}
	return true;
}

/* The client's command is upstream (its answer is relayed): still arriving,
 * or whole. */
static bool command_upstream(const struct client *c)
{
	return c->st == CS_RELAYING || c->st == CS_SENDING;
}

/* A command of this session is upstream and its answer is awaited. */
static bool upstream_busy(const struct client *c)
{
	return command_upstream(c) || c->st == CS_INTERNAL;
}

/* LOAD DATA LOCAL: the answer being relayed waits for the client's file. */
static bool infile_active(const struct client *c)
{
	return c->st == CS_RELAYING && c->up && relay_awaits_infile(&c->relay);
}

/* Arm the upstream watcher for the current relay state. A held connection
 * without a command is watched too, so that the upstream closing it is
 * seen at once. */
static void arm_upstream(struct client *c)
{
	bool rd = !upstream_busy(c) || sbuf_out_pending(&c->io) < CLIENT_OUT_HIGH;

	if (c->up)
		upstream_want(c->up, rd, sbuf_out_pending(&c->up->io) > 0 || c->up->io.ssl_want_write);
}

static void upstream_lost(struct client *c, const char *why);

/* Flush both sides and re-arm; the end of every event handler. */
static void settle(struct client *c)
{
	if (c->up && c->up->st == UP_READY && (sbuf_out_pending(&c->up->io) > 0 || c->up->io.ssl_want_write) &&
	    sbuf_flush(&c->up->io) == SBUF_ERROR) {
		upstream_lost(c, "write failed");
		return;
	}
	if (!client_flush(c))
		return;
	arm_upstream(c);
	client_arm(c);
	idle_arm(c);
}

/* The front command will not run: drop it (and the cache fill it was to
 * make). The caller queued its error, one of the node's own: counted. */
static void drop_front(struct client *c)
{
	uint32_t len;
	uint8_t s;

	cache_note_own_error(&c->cs, command_upstream(c) ? cache_now_us() - c->cmd_start_us : 0);
	if (c->held) {
		sbuf_in_consume(&c->io, c->held);
		c->held = 0;
	} else if (sbuf_packet_ready(&c->io, &len, &s)) {
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
	}
	if (c->pass_pending || command_upstream(c) ||
	    (c->st == CS_INTERNAL && (c->upcmd == UPCMD_SETTINGS || c->upcmd == UPCMD_GRANT_CHECK)))
		abort_cache(c);
	c->pass_pending = false;
	free(c->delta);
	c->delta = NULL;
	c->cur_sv = 0;
}

/* Under serve-stale a session whose upstream state was lost is kept
 * (without a connection), unless its answer was cut (answer_cut). */
static bool keep_when_lost(void)
{
	return g_config.upstream_down_policy == DOWN_POLICY_SERVE_STALE;
}

/* The connection broke where no clean answer can be given: part of the
 * answer already reached the client, or the client is still sending the
 * command (the rest of its packets would be read as commands). */
static bool answer_cut(const struct client *c)
{
	return c->st == CS_SENDING || (c->st == CS_RELAYING && c->relay.packets > 0);
}

/* Send the front command again on another connection: the one it went to
 * was a pooled one that turned out broken before answering. */
static bool retry_front(struct client *c)
{
	if (c->st != CS_RELAYING || !c->held || c->retried || mux_holds_state(c) || c->login_pending)
		return false;
	if (kill_generation() != c->kill_gen)
		return false; /* a KILL went upstream meanwhile: this connection may be its target */
	STAT_INC(upstream_retries);
	pool_discard(c);
	c->held = 0;
	c->retried = true;
	c->pass_pending = true;
	client_set_state(c, CS_READY);
	process_input(c);
	return true;
}

/* The session's upstream connection broke (the upstream check is asked to
 * find out whether the upstream is down). A command whose answer had not
 * started is sent again once on a fresh connection when that is safe, else
 * it fails. A result cut short, or session state lost with the connection
 * (transaction, locks, temporary tables, ...), ends the session; under
 * serve-stale it stays, answering from the cache only (lost_command). */
static void upstream_lost(struct client *c, const char *why)
{
	bool lost_state = mux_holds_state(c), cut = answer_cut(c);

	log_info("client %u: upstream connection lost: %s", c->id, why);
	probe_kick();
	if (retry_front(c))
		return;
	if (upstream_busy(c) && kill_generation() != c->kill_gen) {
		/* most likely KILLed (a KILL went upstream since the command was
		 * sent): the session ends as the server ended its connection */
		pool_discard(c);
		abort_cache(c);
		client_close(c, "upstream connection killed");
		return;
	}
	pool_discard(c);
	if (hits_only(c)) {
		abort_cache(c);
		client_set_state(c, CS_READY);
	} else if (upstream_busy(c) && !cut) {
		pkt_put_errf(&c->io.out, c->login_pending ? c->seq : 1, ERR_NET_READ_ERROR, "08S01",
				"Lost connection to upstream server during query");
		drop_front(c);
		client_set_state(c, c->login_pending ? CS_CLOSING : CS_READY);
	}
	c->upcmd = UPCMD_NONE;
	if (cut || ((lost_state || client_ending(c)) && !keep_when_lost())) {
		abort_cache(c);
		if (c->st != CS_DRAINED) /* (drained: its end stays a clean one) */
			client_set_state(c, CS_CLOSING);
		settle(c);
		return;
	}
	if (lost_state) {
		c->up_lost = true;
		c->pin_forever = c->pin_lock = false;
		c->server_status = ST_AUTOCOMMIT;
	}
	process_input(c);
}

static void login_done(struct client *c)
{
	pkt_put_ok(&c->io.out, c->seq, 0, 0, ST_AUTOCOMMIT, 0, c->caps);
	/* as MariaDB: the login's OK is sent plain, compression starts with
	 * the first command (a COM_CHANGE_USER's OK is compressed already) */
	if ((c->caps & CAP_COMPRESS) && !c->io.z &&
	    sbuf_compress_start(&c->io, compress_limit(g_config.max_allowed_packet), false) < 0) {
		log_warn("client %u (%s): out of memory for compression", c->id, c->peer);
		client_set_state(c, CS_CLOSING);
	}
	c->login_pending = false;
	ev_timer_stop(c->w->loop, &c->timer);
}

void client_authenticated(struct client *c)
{
	if (c->w->draining) {
		pkt_put_errf(&c->io.out, c->seq, ERR_SERVER_SHUTDOWN, "08S01", "Server shutdown in progress");
		client_set_state(c, CS_CLOSING);
		return;
	}
	mux_login(c);
	kill_set_user(c->id, c->user);
	if (c->is_monitor) {
		client_set_state(c, CS_READY);
		login_done(c);
		return;
	}
	/* a connection is borrowed (and brought to the session's schema) before
	 * the OK, so that an unreachable upstream or unknown schema fail here */
	if (!health_upstream_up()) {
		char msg[512];

		upstream_down_text(msg, sizeof(msg), "new sessions are refused until it answers");
		pkt_put_errf(&c->io.out, c->seq, ERR_UPSTREAM_UNREACHABLE, "HY000", "%s", msg);
		client_set_state(c, CS_CLOSING);
		return;
	}
	if (pool_exhausted(c)) {
		/* no waiting for a login: the schema is checked by the first
		 * command that goes upstream (its COM_INIT_DB) */
		client_set_state(c, CS_READY);
		login_done(c);
		return;
	}
	c->login_pending = true;
	switch (pool_acquire(c)) {
	case POOL_GOT:
		client_set_state(c, CS_READY);
		break;
	case POOL_PENDING:
		client_set_state(c, CS_CONNECTING);
		break;
	case POOL_QUEUED: /* (not after pool_exhausted said no: handled all the same) */
		client_set_state(c, CS_QUEUED);
		break;
	case POOL_NOMEM:
		pkt_put_errf(&c->io.out, c->seq, ERR_UPSTREAM_UNREACHABLE, "HY000", "Shoal: out of memory");
		client_set_state(c, CS_CLOSING);
		break;
	}
}

/* process_input: a login waits for its connection's sync. false: not yet. */
static bool finish_login(struct client *c)
{
	int rc = mux_sync_step(c);

	if (rc > 0)
		return false;
	if (rc < 0) {
		pool_discard(c);
		pkt_put_errf(&c->io.out, c->seq, ERR_UPSTREAM_UNREACHABLE, "HY000",
				"Shoal: cannot prepare an upstream connection");
		client_set_state(c, CS_CLOSING);
		return false;
	}
	login_done(c);
	return true;
}

void client_pool_ready(struct client *c)
{
	if (c->st == CS_CONNECTING)
		client_set_state(c, CS_READY);
	process_input(c);
}

/* The login or command that waited for a connection failed (its error is
 * queued): the login ends the session, a command is dropped. */
static void fail_waiting_command(struct client *c)
{
	if (c->login_pending) {
		client_set_state(c, CS_CLOSING);
	} else {
		drop_front(c);
		client_set_state(c, CS_READY);
	}
	process_input(c);
}

/* serve-stale: a command whose upstream turned out to be gone as it went
 * there is answered from its entry past the TTL (within max_stale_ms, kept
 * for that: cache/session.c keep_window), as it would have been had the
 * node known before it asked. The fill it started is given up first. */
static bool serve_stale_instead(struct client *c)
{
	const uint8_t *pl;
	struct cache_ctx x;
	uint32_t len;
	uint8_t seq;

	if (g_config.upstream_down_policy != DOWN_POLICY_SERVE_STALE || c->login_pending ||
	    health_upstream_up() || !sbuf_packet_ready(&c->io, &len, &seq) || len == 0)
		return false;
	pl = sbuf_in_ptr(&c->io) + PKT_HEADER_LEN;
	abort_cache(c);
	x = cache_ctx_of(c);
	return cache_serve_only(&c->cs, &x, pl, len);
}

/* The connect error a login or command gets. */
static void put_connect_error(struct client *c, const struct upstream *u, uint8_t seq)
{
	if (u->err_code >= 2000 && u->err_code < 3000) /* the connector's own errors */
		pkt_put_errf(&c->io.out, seq, ERR_UPSTREAM_UNREACHABLE, "HY000",
				"Can't connect to upstream server at '%s:%u': %s (client error %u)",
				g_config.upstream_host, g_config.upstream_port, u->err, u->err_code);
	else
		pkt_put_errf(&c->io.out, seq, (uint16_t)u->err_code, u->sqlstate[0] ? u->sqlstate : "HY000",
				"%s", u->err);
}

void client_pool_failed(struct client *c)
{
	struct upstream *u = c->up;
	uint8_t seq = c->login_pending ? c->seq : 1;

	if (!u) {
		pkt_put_errf(&c->io.out, seq, ERR_UPSTREAM_UNREACHABLE, "HY000", "Shoal: out of memory");
	} else {
		log_warn("cannot connect to upstream %s:%u: %s", g_config.upstream_host,
			 g_config.upstream_port, u->err);
		if (!serve_stale_instead(c))
			put_connect_error(c, u, seq);
		pool_discard(c);
	}
	fail_waiting_command(c);
}

void client_pool_timeout(struct client *c)
{
	int n = g_config.workers > 0 ? g_config.workers : 1;

	pkt_put_errf(&c->io.out, c->login_pending ? c->seq : 1, ERR_CON_COUNT_ERROR, "08004",
			"Too many connections: Shoal's upstream pool is exhausted (max_upstream_connections=%d, "
			"%d per worker, all busy for %d ms)", g_config.max_upstream_connections,
			(g_config.max_upstream_connections + n - 1) / n, g_config.upstream_wait_timeout_ms);
	fail_waiting_command(c);
}

/* ---- commands of the node's own (CS_INTERNAL) -------------------------- */

/* Tell the relay about the upstream session's MariaDB extensions (after
 * relay_start). */
static void relay_setup(struct client *c)
{
	relay_upstream(&c->relay, c->up->progress);
}

bool upcmd_send(struct client *c, uint8_t cmd, const void *payload, size_t len, enum upcmd_kind kind)
{
	struct pbuf *o = &c->up->io.out;
	size_t start;
	int rc = pkt_begin(o, &start);

	rc |= put_u8(o, cmd);
	rc |= pbuf_append(o, payload, len);
	if (rc) {
		if (o->len > start)
			o->len = start;
		return false;
	}
	pkt_end(o, start, 0);
	c->scratch.len = 0;
	if (kind == UPCMD_REFRESH) {
		/* the answer becomes the entry: in the client's format */
		relay_start(&c->relay, cmd, c->caps);
	} else {
		relay_start(&c->relay, cmd, 0);
	}
	relay_setup(c);
	c->upcmd = kind;
	c->cmd_start_us = cache_now_us();
	client_set_state(c, CS_INTERNAL);
	return true;
}

static void note_status(struct client *c)
{
	if (c->relay.status_valid)
		c->server_status = c->relay.status;
}

/* The answer to a command of the node's own is complete (in c->scratch):
 * back to CS_READY, and the answer goes where its kind says. */
static void internal_done(struct client *c)
{
	enum upcmd_kind kind = c->upcmd;
	struct cache_ctx x;
	uint32_t stmt_id;

	client_set_state(c, CS_READY);
	c->upcmd = UPCMD_NONE;
	if (kind == UPCMD_SETTINGS || kind == UPCMD_REFRESH || kind == UPCMD_GRANT_CHECK)
		note_status(c);
	if (kind == UPCMD_SETTINGS || kind == UPCMD_REFRESH)
		mux_found_rows_lost(c); /* its result set is the connection's FOUND_ROWS() now */
	x = cache_ctx_of(c);
	switch (kind) {
	case UPCMD_SETTINGS:
		cache_settings_done(&c->cs, &c->relay, &c->scratch);
		break;
	case UPCMD_REFRESH:
		cache_refresh_done(&c->cs, &x, &c->relay, &c->scratch, cache_now_us() - c->cmd_start_us);
		break;
	case UPCMD_GRANT_CHECK:
		stmt_id = cache_grant_check_done(&c->cs, &x, &c->relay, &c->scratch);
		if (stmt_id && c->up)
			mux_close_upstream_stmt(c->up, stmt_id); /* the check's statement */
		break;
	default: /* UPCMD_SYNC_*: the connection brought to the session's state */
		if (!mux_sync_done(c, kind)) {
			if (c->login_pending)
				client_set_state(c, CS_CLOSING);
			else
				drop_front(c);
		}
		break;
	}
	c->scratch.len = 0;
	pbuf_shrink(&c->scratch, kind == UPCMD_REFRESH ? 65536 : 4096);
}

/* CSTEP_SETTINGS or CSTEP_GRANT_CHECK, with a connection in the session's
 * state: read the settings the cache keys depend on, or check the user's
 * grant verdict (COM_STMT_PREPARE of the statement, as the user); the
 * command waits in the input. HC_FORWARD: not sent, forward the command. */
static enum hc_result send_for_cache(struct client *c, enum hc_result what)
{
	struct cache_ctx x;
	const char *sql;
	size_t n;

	if (what == HC_SETTINGS) {
		sql = cache_settings_sql(&c->cs, upstream_mariadb(), &n);
		return upcmd_send(c, CMD_QUERY, sql, n, UPCMD_SETTINGS) ? HC_STOP : HC_FORWARD;
	}
	if (!upcmd_send(c, CMD_STMT_PREPARE, c->cs.check_text, c->cs.check_len, UPCMD_GRANT_CHECK)) {
		cache_grant_check_failed(&c->cs);
		return HC_FORWARD;
	}
	x = cache_ctx_of(c);
	cache_grant_check_sent(&c->cs, &x);
	return HC_STOP;
}

/* CSTEP_REFRESH: the hit was served; its entry is refreshed in the
 * background by sending the same command again, if a connection in the
 * session's state is free right now (a refresh never waits), and, for an
 * execute, that connection has the statement (its id is rewritten to the
 * connection's, as for any forwarded execute). */
static void start_refresh(struct client *c, const uint8_t *pl, uint32_t len)
{
	struct stmt_info *s = c->stmts.cur;
	size_t at;

	if (c->st != CS_READY || (!c->up && !pool_borrow_now(c)) ||
	    ((command_of(pl[0])->stmt & CMDS_RUNS) && (!s || !upstream_stmt_id(c->up, s->serial)))) {
		cache_refresh_cancel(&c->cs);
		return;
	}
	at = c->up->io.out.len;
	if (!upcmd_send(c, pl[0], pl + 1, len - 1, UPCMD_REFRESH)) {
		cache_refresh_cancel(&c->cs);
		return;
	}
	if (!mux_fix_forwarded(c, at)) {
		c->up->io.out.len = at;
		client_set_state(c, CS_READY);
		c->upcmd = UPCMD_NONE;
		cache_refresh_cancel(&c->cs);
	}
}

/* ---- answers ----------------------------------------------------------- */

/* Where the answer being relayed goes: the client, or the node itself. */
static struct pbuf *answer_sink(struct client *c)
{
	return c->st == CS_INTERNAL ? &c->scratch : &c->io.out;
}

static void answer_complete(struct client *c)
{
	if (c->st == CS_INTERNAL) {
		internal_done(c);
	} else {
		struct cache_ctx x;
		bool hold;

		client_set_state(c, CS_READY);
		note_status(c);
		if (c->relay.cmd == CMD_STMT_PREPARE && c->relay.prep_ok)
			mux_prepared(c);
		x = cache_ctx_of(c);
		hold = cache_answer_done(&c->cs, &x, &c->relay, cache_now_us() - c->cmd_start_us);
		mux_answer_done(c);
		if (hold)
			wait_begin(c); /* its end waits for the binlog or a check (cache/session.c) */
	}
	if (c->up)
		sbuf_shrink(&c->up->io);
}

/* Feed whole upstream packets to the relay while the client keeps up.
 * false if the session ended. */
static bool feed_relay(struct client *c)
{
	struct sbuf *up = &c->up->io;
	uint32_t len;
	uint8_t seq;

	for (;;) {
		struct pbuf *out;
		size_t before;
		int rc;

		/* upstream_compression: frames left over at the decode limit */
		if (up->z && sbuf_decode(up) < 0) {
			upstream_lost(c, "bad compressed frame from the upstream");
			return false;
		}
		if (!upstream_busy(c) || sbuf_out_pending(&c->io) >= CLIENT_OUT_HIGH ||
		    !sbuf_packet_ready(up, &len, &seq))
			break;
		out = answer_sink(c);
		before = out->len;
		if (c->held) { /* the answer started: no retry from here on */
			sbuf_in_consume(&c->io, c->held);
			c->held = 0;
		}
		rc = relay_feed(&c->relay, sbuf_in_ptr(up), PKT_HEADER_LEN + len, out);
		sbuf_in_consume(up, PKT_HEADER_LEN + len);
		if (rc < 0) {
			STAT_INC(protocol_errors);
			upstream_lost(c, "unexpected packet from upstream");
			return false;
		}
		if (command_upstream(c)) {
			cache_tee(&c->cs, out->data + before, out->len - before);
			mux_relayed(c, out, before);
		}
		if (rc == 1)
			answer_complete(c);
	}
	return true;
}

/* Relay what the upstream has sent: packets already read are relayed as
 * long as the client takes the output, even if no more bytes come. */
/* An upstream packet can be relayed now, or made: a whole compressed frame
 * read but not decoded (--upstream-compression; no socket event comes for
 * it, the bytes are in already). */
static bool upstream_input_ready(const struct client *c)
{
	uint32_t len;
	uint8_t seq;

	return sbuf_packet_ready(&c->up->io, &len, &seq) || sbuf_frame_ready(&c->up->io);
}

static void pump_upstream(struct client *c)
{
	for (;;) {
		if (!feed_relay(c))
			return;
		if (c->st == CS_READY || client_ending(c)) {
			process_input(c);
			return;
		}
		if (!client_flush(c))
			return;
		if (!upstream_busy(c) || sbuf_out_pending(&c->io) >= CLIENT_OUT_HIGH ||
		    !upstream_input_ready(c))
			break;
	}
	settle(c);
}

/* Bytes or an end of file from the upstream while no command is upstream:
 * the server closed the connection (a restart, wait_timeout, KILL) or is
 * about to. */
static void upstream_idle_input(struct client *c)
{
	enum sbuf_io r = sbuf_read(&c->up->io, CLIENT_READ_MAX);

	if (r == SBUF_AGAIN) {
		settle(c); /* nothing for the session (TLS records without data) */
		return;
	}
	upstream_lost(c, r == SBUF_EOF ? "closed by the upstream while idle"
		      : r == SBUF_ERROR ? "read error while idle" : "unexpected data while idle");
}

void client_upstream_io(struct client *c)
{
	struct sbuf *up = &c->up->io;
	enum sbuf_io r;

	if (sbuf_out_pending(up) > 0 || up->ssl_want_write) {
		if (sbuf_flush(up) == SBUF_ERROR) {
			upstream_lost(c, "write failed");
			return;
		}
		if (infile_active(c) && sbuf_in_len(&c->io) > 0) {
			process_input(c); /* the upstream took some of the file: more */
			return;
		}
	}
	if (upstream_busy(c)) {
		if (sbuf_out_pending(&c->io) >= CLIENT_OUT_HIGH) {
			settle(c);
			return;
		}
		r = sbuf_read(up, CLIENT_READ_MAX);
		if (r == SBUF_EOF || r == SBUF_ERROR) {
			upstream_lost(c, r == SBUF_EOF ? "closed by upstream" : "read error");
			return;
		}
		pump_upstream(c);
		return;
	}
	upstream_idle_input(c);
}

/* Forward one client packet (header included) to the upstream. A command
 * sent on a reused pooled connection stays in the input (held) until its
 * answer starts, to be sent again if that connection turns out broken (a
 * command of more than one packet is never held). */
static bool forward_packet(struct client *c, uint32_t len, bool hold)
{
	if (pbuf_append(&c->up->io.out, sbuf_in_ptr(&c->io), PKT_HEADER_LEN + len) < 0) {
		client_close(c, "out of memory");
		return false;
	}
	if (hold && len < PKT_MAX_PAYLOAD)
		c->held = PKT_HEADER_LEN + len;
	else
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
	return true;
}

static void send_upstream_down(struct client *c, const char *what)
{
	char msg[512];

	upstream_down_text(msg, sizeof(msg), what);
	pkt_put_errf(&c->io.out, 1, ERR_UPSTREAM_UNREACHABLE, "HY000", "%s", msg);
}

/* COM_PING answered by the node: an error while the upstream has been down
 * too long (so that a monitor takes the node out of rotation), OK for a
 * session without an upstream connection. false: forward it. */
static bool answer_ping(struct client *c)
{
	if (health_draining()) {
		/* ProxySQL drops a pooled connection whose ping fails, and its
		 * monitor shuns a server after failed pings (drain.h) */
		pkt_put_errf(&c->io.out, 1, ERR_SERVER_SHUTDOWN, "08S01", "Server shutdown in progress");
		return true;
	}
	if (health_upstream_down_too_long()) {
		send_upstream_down(c, "the node is out of rotation");
		return true;
	}
	if (c->up)
		return false;
	pkt_put_ok(&c->io.out, 1, 0, 0, c->server_status & (ST_IN_TRANS | ST_AUTOCOMMIT), 0, c->caps);
	return true;
}

/* A command of a session that lost its upstream state (serve-stale).
 * The cache answers what it can. The rest fails: with a clear error while
 * the upstream is down; once it is back, the session ends, since its
 * upstream state (transaction, temporary tables, locks) is gone and the
 * client must reconnect. */
static enum hc_result lost_command(struct client *c, uint32_t len)
{
	const uint8_t *pl = sbuf_in_ptr(&c->io) + PKT_HEADER_LEN;
	const struct command *k = command_of(pl[0]);
	struct cache_ctx x;
	bool answered;

	if (k->cache == CMDC_EXECUTE)
		stmts_note_command(&c->stmts, pl, len); /* the statement a hit would answer */
	x = cache_ctx_of(c);
	answered = cache_serve_only(&c->cs, &x, pl, len);

	sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
	/* served, or a command no one waits an answer for */
	if (answered || k->relay == RK_NONE)
		return HC_NEXT;
	if (health_upstream_up()) {
		pkt_put_errf(&c->io.out, 1, ERR_NET_READ_ERROR, "08S01",
				"Lost connection to upstream server earlier; reconnect");
		client_set_state(c, CS_CLOSING);
		return HC_STOP;
	}
	send_upstream_down(c, "only cached results are served (upstream_down_policy=serve-stale)");
	return HC_NEXT;
}

/* Ask the cache what to do with the front command, and do it: consume it
 * (served), wait, or tell the caller to forward it or read the settings. */
static enum hc_result ask_cache(struct client *c, uint32_t len)
{
	const uint8_t *pl = sbuf_in_ptr(&c->io) + PKT_HEADER_LEN;
	struct cache_ctx x;
	enum cache_step step;

	if (command_of(pl[0])->stmt) /* (a text query, the hot path, names none) */
		stmts_note_command(&c->stmts, pl, len);
	x = cache_ctx_of(c);
	/* (an execute's long data stays the statement's, and keeps the session
	 * on its connection, until the upstream has answered the execute:
	 * mux_answer_done; the cache never serves an execute with long data) */
	step = cache_command(&c->cs, &x, pl, len);
	switch (step) {
	case CSTEP_REFRESH:
		start_refresh(c, pl, len); /* and the hit was served: */
		/* fall through */
	case CSTEP_SERVED:
		mux_answered_here(c, c->cs.served_rows);
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
		return HC_NEXT;
	case CSTEP_WAIT:
		wait_begin(c);
		return HC_STOP;
	case CSTEP_BLOCKED:
		return HC_STOP;
	case CSTEP_SETTINGS:
		return HC_SETTINGS;
	case CSTEP_GRANT_CHECK:
		return HC_GRANT_CHECK;
	default:
		return HC_FORWARD;
	}
}

/* KILL [QUERY] <id> and COM_PROCESS_KILL (kill.h): answered here; the
 * session named is dealt with on its own worker (client_kill). */
static bool kill_answer(struct client *c, const uint8_t *pl, uint32_t len)
{
	struct kill_req r;
	struct worker *w = NULL;
	char user[HS_USER_MAX] = "";
	uint32_t target;

	if (!kill_parse(pl, len, &c->stmts, &r))
		return false;
	if (r.unsupported) {
		pkt_put_errf(&c->io.out, 1, ERR_NOT_SUPPORTED_YET, "42000",
			     "This version of MariaDB doesn't yet support '%s'",
			     "KILL QUERY ID and KILL USER through Shoal (use KILL [QUERY] <connection id>)");
		return true;
	}
	target = r.id == c->id ? c->id : kill_find(r.id, c->id, &w, user, sizeof(user));
	if (target == c->id) {
		if (r.kind == KK_QUERY) {
			pkt_put_errf(&c->io.out, 1, ERR_QUERY_INTERRUPTED, "70100", "Query execution was interrupted");
		} else {
			pkt_put_errf(&c->io.out, 1, ERR_CONNECTION_KILLED, "70100", "Connection was killed");
			client_set_state(c, CS_CLOSING);
		}
	} else if (!target) {
		pkt_put_errf(&c->io.out, 1, ERR_NO_SUCH_THREAD, "HY000", "Unknown thread id: %llu",
			     (unsigned long long)r.id);
	} else if (strcmp(user, c->user) != 0) {
		pkt_put_errf(&c->io.out, 1, ERR_KILL_DENIED, "HY000", "You are not owner of thread %llu",
			     (unsigned long long)r.id);
	} else {
		worker_post(w, target, 0, r.kind == KK_QUERY ? WAKE_KILL_QUERY : WAKE_KILL_CONNECTION);
		pkt_put_ok(&c->io.out, 1, 0, 0, c->server_status & SESSION_STATUS_BITS, 0, c->caps);
	}
	return true;
}

void client_kill(struct worker *w, uint32_t id, bool query_only)
{
	struct client *c = w->clients;

	while (c && c->id != id)
		c = c->next;
	if (!c)
		return; /* ended meanwhile */
	if (c->up && upstream_busy(c)) {
		c->up->dirty = true; /* never lent again: a late KILL reaches no one else */
		kill_upstream(w->loop, c->ident, mysql_thread_id(c->up->mysql), query_only);
	}
	if (!query_only)
		client_close(c, "killed (KILL CONNECTION)");
}

/* A command the node does not take: ERR 1047, and the session goes on. */
static enum hc_result unknown_command(struct client *c, uint32_t len, uint8_t cmd)
{
	STAT_INC(protocol_errors);
	log_debug("client %u (%s): %s (0x%02x) is not a command the node takes", c->id, c->peer,
		  command_name(cmd), cmd);
	pkt_put_errf(&c->io.out, 1, ERR_UNKNOWN_COM_ERROR, "08S01", "Unknown command");
	sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
	return HC_NEXT;
}

void client_reset_session(struct client *c)
{
	mux_reset(c);
	c->up_lost = false;
	cache_session_reset(&c->cs);
	stmts_clear(&c->stmts);
	c->server_status = ST_AUTOCOMMIT;
}

/* CL_RESET: COM_RESET_CONNECTION, answered by the node with no connection:
 * the session's variables, schema aside, go back to the globals of now,
 * its statements, temporary tables, locks and transaction end, and the
 * cache reads its settings again. */
static enum hc_result reset_connection(struct client *c, uint32_t len)
{
	client_reset_session(c);
	pkt_put_ok(&c->io.out, 1, 0, 0, ST_AUTOCOMMIT, 0, c->caps);
	sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
	return HC_NEXT;
}

/* The node's own handlers (the command table's `local`) and its checks of
 * the command's SQL (`checks`). HC_NOT_LOCAL: none answered it. */
static enum hc_result node_command(struct client *c, const struct command *k, uint32_t len)
{
	const uint8_t *pl = sbuf_in_ptr(&c->io) + PKT_HEADER_LEN;

	if ((k->checks & CMDK_MONITOR) &&
	    monitor_answer(&c->io.out, c->caps, c->server_status, c->is_monitor, pl, len)) {
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
		return HC_NEXT;
	}
	if (!k->known)
		return unknown_command(c, len, len ? pl[0] : 0xff);
	switch (k->local) {
	case CL_CHANGE_USER:
		login_change_user(c, pl, len);
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
		return HC_NEXT;
	case CL_PING:
		if (!answer_ping(c))
			break; /* the session holds a connection: the upstream answers */
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
		return HC_NEXT;
	default:
		break;
	}
	if ((k->checks & CMDK_KILL) && kill_answer(c, pl, len)) {
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
		return client_ending(c) ? HC_STOP : HC_NEXT;
	}
	return HC_NOT_LOCAL;
}

/* Everything answered without an upstream connection. HC_FORWARD,
 * HC_SETTINGS or HC_GRANT_CHECK when one is needed. */
static enum hc_result local_command(struct client *c, uint32_t len)
{
	const uint8_t *pl = sbuf_in_ptr(&c->io) + PKT_HEADER_LEN;
	const struct command *k = command_of(len ? pl[0] : 0xff);
	enum hc_result r = node_command(c, k, len);

	if (r != HC_NOT_LOCAL)
		return r; /* answered by the node */
	if (c->up_lost)
		return lost_command(c, len);
	if (k->local == CL_RESET)
		return reset_connection(c, len);
	r = ask_cache(c, len);
	if (r != HC_FORWARD)
		return r;
	if (mux_local(c, pl, len)) {
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
		return HC_NEXT;
	}
	return HC_FORWARD;
}

/* While the upstream is known to be down, a command that needs it fails at
 * once (no connection attempt) under serve-stale, or under shun once the
 * node is out of rotation. true: the error (or a stale answer) was sent. */
static bool upstream_known_down(struct client *c)
{
	if (health_upstream_up())
		return false;
	if (g_config.upstream_down_policy == DOWN_POLICY_SERVE_STALE) {
		/* a command that went upstream as it went down: its entry, stale */
		if (!serve_stale_instead(c))
			send_upstream_down(c, "only cached results are served (upstream_down_policy=serve-stale)");
	} else if (health_upstream_down_too_long())
		send_upstream_down(c, "the node is out of rotation");
	else
		return false;
	drop_front(c);
	return true;
}

/* Send the front command on c->up and relay its answer. */
static enum hc_result forward_command(struct client *c, uint32_t len)
{
	const uint8_t *pl = sbuf_in_ptr(&c->io) + PKT_HEADER_LEN;
	uint8_t cmd = pl[0];
	uint8_t exec_flags = cmd == CMD_STMT_EXECUTE && len >= 6 ? pl[5] : 0;
	size_t at = c->up->io.out.len;
	bool answered = command_of(cmd)->relay != RK_NONE;

	c->pass_pending = false;
	mux_note_command(c, pl, len);
	if (kill_forwarded(pl, len, &c->stmts))
		kill_went_upstream(); /* KILL <expression>, or a prepared KILL, as written */
	c->kill_gen = kill_generation();
	c->cmd_start_us = cache_now_us();
	if (!forward_packet(c, len, answered && c->up->uses > 0))
		return HC_CLOSED;
	if (!mux_fix_forwarded(c, at)) {
		client_close(c, "out of memory");
		return HC_CLOSED;
	}
	c->cont_total = len;
	if (!c->retried)
		STAT_INC(queries);
	relay_start(&c->relay, cmd, c->caps);
	relay_execute_flags(&c->relay, exec_flags);
	relay_setup(c);
	if (len == PKT_MAX_PAYLOAD)
		client_set_state(c, CS_SENDING); /* its further packets go as they come */
	else if (answered)
		client_set_state(c, CS_RELAYING);
	return HC_NEXT;
}

/* LOAD USERS or SIGHUP removed or deactivated the login. */
static enum hc_result close_revoked(struct client *c)
{
	STAT_INC(user_sessions_revoked);
	pkt_put_errf(&c->io.out, 1, ERR_ACCESS_DENIED_ERROR, "28000",
		     "Access denied for user '%s'@'%s': the user was removed or deactivated "
		     "on this node; the session is closed", c->user, c->peer);
	client_set_state(c, CS_CLOSING);
	return HC_STOP;
}

/* One whole command packet is at the front of the input. */
static enum hc_result handle_command(struct client *c, uint32_t len)
{
	const struct command *k = command_of(len ? sbuf_in_ptr(&c->io)[PKT_HEADER_LEN] : 0xff);
	enum hc_result r = HC_FORWARD;

	if (k->local == CL_QUIT) {
		client_close(c, "COM_QUIT");
		return HC_CLOSED;
	}
	/* the user was dropped or lost the right to log in: ERR and close */
	if (ident_revoked(c->ident))
		return close_revoked(c);
	if (hits_only(c) && !command_may_hit(k))
		return HC_STOP; /* only cache hits while a refresh is upstream */
	if (!c->pass_pending) {
		/* answered here (a hit, KILL, a monitor query, a cache
		 * command), parked (WAIT) or closed: nothing goes upstream */
		r = local_command(c, len);
		if (r != HC_FORWARD && r != HC_SETTINGS && r != HC_GRANT_CHECK)
			return r;
		c->pass_pending = r == HC_FORWARD;
	}
	/* the upstream is known down: an ERR (or a stale hit) was answered */
	if (!c->up && upstream_known_down(c))
		return HC_NEXT;
	if (!c->up) {
		switch (pool_acquire(c)) {
		case POOL_GOT:
			break;
		case POOL_PENDING:   /* the pool calls back when the connection is up */
			client_set_state(c, CS_CONNECTING);
			return HC_STOP;
		case POOL_QUEUED:    /* ... or when one is free */
			client_set_state(c, CS_QUEUED);
			return HC_STOP;
		case POOL_NOMEM:
			client_close(c, "out of memory");
			return HC_CLOSED;
		}
	}
	switch (mux_sync_step(c)) {
	case 1:   /* the borrowed connection is brought to the session's state first */
		return HC_STOP;
	case -1:  /* ... and that cannot be done: ERR, the command is dropped */
		pool_discard(c);
		pkt_put_errf(&c->io.out, 1, ERR_UPSTREAM_UNREACHABLE, "HY000",
				"Shoal: cannot prepare an upstream connection for this session");
		drop_front(c);
		return HC_NEXT;
	default:
		break;
	}
	if ((r == HC_SETTINGS || r == HC_GRANT_CHECK) && send_for_cache(c, r) == HC_STOP)
		return HC_STOP; /* the cache is asked again once it has its answer */
	return forward_command(c, len);
}

/* CS_SENDING: the continuation packets of a command of 16 MiB or more go
 * straight through; after the last one (shorter than 16 MiB - 1) the
 * answer is awaited (RELAYING), or none comes (READY). false if the
 * session was closed. */
static bool forward_continuation(struct client *c)
{
	uint32_t len;
	uint8_t seq;

	while (c->st == CS_SENDING && sbuf_packet_ready(&c->io, &len, &seq)) {
		c->cont_total += len;
		if (c->cont_total > g_config.max_allowed_packet) {
			pool_discard(c);
			pkt_put_errf(&c->io.out, (uint8_t)(seq + 1), ERR_NET_PACKET_TOO_LARGE, "08S01",
					"Got a packet bigger than 'max_allowed_packet' bytes");
			client_set_state(c, CS_CLOSING);
			return true;
		}
		if (!forward_packet(c, len, false))
			return false;
		if (len < PKT_MAX_PAYLOAD)
			client_set_state(c, command_of(c->relay.cmd)->relay != RK_NONE ? CS_RELAYING : CS_READY);
	}
	return true;
}

/* Check the header of the next command; false if the session must end. */
static bool command_header_ok(struct client *c, uint32_t len, uint8_t seq)
{
	if (len > g_config.max_allowed_packet) {
		STAT_INC(protocol_errors);
		pkt_put_errf(&c->io.out, (uint8_t)(seq + 1), ERR_NET_PACKET_TOO_LARGE, "08S01",
				"Got a packet bigger than 'max_allowed_packet' bytes");
		client_set_state(c, CS_CLOSING);
		return false;
	}
	if (seq != 0) {
		STAT_INC(protocol_errors);
		pkt_put_errf(&c->io.out, 1, ERR_NET_PACKETS_OUT_OF_ORDER, "08S01", "Got packets out of order");
		client_set_state(c, CS_CLOSING);
		return false;
	}
	return true;
}

static bool login_input(struct client *c)
{
	uint32_t len;
	uint8_t seq;

	if (!sbuf_header_ready(&c->io, &len, &seq))
		return false;
	if (len > LOGIN_PACKET_MAX) {
		STAT_INC(protocol_errors);
		client_set_state(c, CS_CLOSING);
		return false;
	}
	if (!sbuf_packet_ready(&c->io, &len, &seq))
		return false;
	login_packet(c, sbuf_in_ptr(&c->io) + PKT_HEADER_LEN, len, seq);
	sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
	return true;
}

static bool in_login(const struct client *c)
{
	return c->st == CS_HANDSHAKE || c->st == CS_AUTH_SWITCH || c->st == CS_AUTH_SHA2;
}

/* Draining: is the session at an idle point? No command in flight or
 * buffered (its last answer may still be in the output), and no open
 * transaction. */
static bool drain_due(const struct client *c)
{
	return c->w->draining && c->st == CS_READY && sbuf_in_len(&c->io) + sbuf_undecoded(&c->io) == 0 &&
	       !client_in_txn(c);
}

/* Close once the output is flushed (client_flush). */
static void close_for_drain(struct client *c)
{
	log_debug("client %u (%s): idle, closing for the drain", c->id, c->peer);
	client_set_state(c, CS_DRAINED);
}

void client_drain(struct client *c)
{
	if (!drain_due(c))
		return;
	close_for_drain(c);
	settle(c);
}

/* Between commands: give the connection back unless the session is
 * pinned to it (mux_pinned) or already has its next command. */
static void maybe_release(struct client *c)
{
	uint32_t len;
	uint8_t seq;
	bool pinned;

	if (!c->up || (c->st != CS_READY && c->st != CS_WAITING) || c->held)
		return;
	pinned = mux_pinned(c);
	if (pinned != c->pinned_counted) {
		if (pinned)
			STAT_INC(upstream_pinned);
		else
			STAT_DEC(upstream_pinned);
		c->pinned_counted = pinned;
	}
	if (pinned || (c->st == CS_READY && sbuf_packet_ready(&c->io, &len, &seq)))
		return;
	pool_release(c);
}

/* LOAD DATA LOCAL: pass the client's file on. While the upstream takes
 * what is queued at once, go on: the input may hold more than INFILE_HIGH
 * (a compressed frame of the file is decoded whole), and nothing else
 * would come back for it. false if the session is gone. */
static bool pump_infile(struct client *c)
{
	enum sbuf_io r;

	for (;;) {
		if (infile_pump(&c->relay, &c->io, &c->up->io) < 0) {
			client_close(c, "out of memory");
			return false;
		}
		if (!infile_active(c) || sbuf_in_len(&c->io) == 0 || !infile_blocked(&c->relay, &c->up->io))
			return true;
		r = sbuf_flush(&c->up->io);
		if (r == SBUF_ERROR) {
			upstream_lost(c, "write failed");
			return false;
		}
		if (r != SBUF_OK)
			return true; /* the upstream's watcher resumes (client_upstream_io) */
	}
}

/* A compressed session: decode the frames read so far (sbuf_decode). false
 * on a bad frame: its error is queued and the session ends. */
static bool decode_input(struct client *c)
{
	const char *state, *msg;
	uint16_t code;

	if (sbuf_decode(&c->io) == 0)
		return true;
	sbuf_compress_error(&c->io, &code, &state, &msg);
	log_debug("client %u (%s): bad compressed frame: %s", c->id, c->peer, msg);
	STAT_INC(protocol_errors);
	pkt_put_err(&c->io.out, 1, code, state, msg);
	client_set_state(c, CS_CLOSING);
	return false;
}

/* Consume as much buffered input as the state allows, then settle. */
static void process_input(struct client *c)
{
	uint32_t len;
	uint8_t seq;

	for (;;) {
		enum hc_result r;

		if (c->io.z && !client_ending(c) && !decode_input(c))
			break;
		/* COMMIT ... RELEASE was answered: the session ends with it, as
		 * the server's does; what the client sent after it is dropped */
		if (c->releasing) {
			if (c->st == CS_READY)
				client_set_state(c, CS_CLOSING);
			break;
		}
		if (in_login(c)) {
			/* the login's packet is not complete yet, or the login
			 * now waits (TLS, the upstream, a switch answer) */
			if (!login_input(c))
				break;
			continue;
		}
		/* the login's upstream is up: its OK (or ERR) could not go out */
		if (c->login_pending && c->st == CS_READY && !finish_login(c))
			break;
		/* a 16 MiB+ command still arriving: forward what came; the
		 * session may be gone (closed inside) */
		if (c->st == CS_SENDING && !forward_continuation(c))
			return;
		if (infile_active(c)) {
			/* LOAD DATA LOCAL: the file's packets go upstream as they
			 * come (while the upstream takes them); no command is read
			 * until the server answers */
			if (!pump_infile(c))
				return;
			break;
		}
		/* busy with a command (only cache hits may be answered meanwhile,
		 * hits_only), or no complete header yet */
		if ((c->st != CS_READY && !hits_only(c)) || !sbuf_header_ready(&c->io, &len, &seq))
			break;
		/* a bad header (over max_allowed_packet, or out of order): the
		 * ERR is queued and the session closing */
		if (!command_header_ok(c, len, seq))
			break;
		/* the command's payload is not all here yet */
		if (!sbuf_packet_ready(&c->io, &len, &seq))
			break;
		r = handle_command(c, len);
		/* the session was freed inside: touch nothing */
		if (r == HC_CLOSED)
			return;
		/* the command went upstream or parked the session: the next one
		 * is read when it is answered */
		if (r == HC_STOP)
			break;
	}
	if (client_ending(c))
		sbuf_in_consume(&c->io, sbuf_in_len(&c->io));
	else if (drain_due(c))
		close_for_drain(c);
	else
		maybe_release(c);
	settle(c);
}

/* Before TLS starts, read no further than the packet being waited for, so
 * that a TLS ClientHello sent right after the SSL request stays in the
 * socket for OpenSSL. */
static size_t read_budget(const struct client *c)
{
	uint32_t len;
	uint8_t seq;

	if (c->st != CS_HANDSHAKE || c->io.ssl)
		return CLIENT_READ_MAX; /* past the greeting's answer, or TLS is up */
	if (!sbuf_header_ready(&c->io, &len, &seq))
		return PKT_HEADER_LEN - sbuf_in_len(&c->io);
	if (len > LOGIN_PACKET_MAX)
		return 1;
	return PKT_HEADER_LEN + len - sbuf_in_len(&c->io);
}

static void on_client_io(struct ev_loop *loop, ev_io *w, int revents)
{
	struct client *c = w->data;
	enum sbuf_io r;

	(void)loop;
	if ((revents & EV_WRITE) && !client_flush(c))
		return;
	/* the client drained: relay what was read while it was full */
	if (upstream_busy(c) && c->up && sbuf_out_pending(&c->io) < CLIENT_OUT_HIGH &&
	    upstream_input_ready(c)) {
		pump_upstream(c);
		return;
	}
	if (c->st == CS_TLS_ACCEPT) {
		login_tls_step(c);
		if (c->st == CS_TLS_ACCEPT) {
			settle(c);
			return;
		}
	}
	if ((revents & EV_READ) && !client_ending(c)) {
		r = sbuf_read(&c->io, read_budget(c));
		if (r == SBUF_EOF || r == SBUF_ERROR) {
			client_close(c, r == SBUF_EOF ? "client disconnected" : "read error");
			return;
		}
	}
	process_input(c);
}

static void on_handshake_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct client *c = t->data;

	(void)loop;
	(void)revents;
	log_info("client %u (%s): handshake timeout", c->id, c->peer);
	client_close(c, "handshake timeout");
}

static void peer_text(const struct sockaddr_storage *ss, char *out, size_t cap)
{
	const void *addr = ss->ss_family == AF_INET6
		? (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr
		: (const void *)&((const struct sockaddr_in *)ss)->sin_addr;

	if (!inet_ntop(ss->ss_family, addr, out, (socklen_t)cap))
		snprintf(out, cap, "unknown");
	if (strncmp(out, "::ffff:", 7) == 0)
		memmove(out, out + 7, strlen(out + 7) + 1);
}

void client_accept(struct worker *w, int fd, const struct sockaddr_storage *peer,
		   struct internal_login *internal)
{
	struct client *c = calloc(1, sizeof(*c));

	if (!c) {
		free(internal);
		close(fd);
		atomic_fetch_sub(&w->n_clients, 1);
		STAT_DEC(client_connections);
		return;
	}
	c->id = atomic_fetch_add(&next_conn_id, 1);
	sbuf_init(&c->io, fd);
	peer_text(peer, c->peer, sizeof(c->peer));
	worker_add_client(w, c);
	c->kill_entry = kill_register(c->id, w);
	cache_session_init(&c->cs, &w->cache, w, c->id);
	c->server_status = ST_AUTOCOMMIT;
	c->fr_rows = FR_UNKNOWN;
	ev_timer_init(&c->wait_timer, on_wait_timeout, 0., 0.);
	c->wait_timer.data = c;
	STAT_INC(client_connections_created);
	ev_io_init(&c->watcher, on_client_io, fd, EV_READ);
	c->watcher.data = c;
	ev_timer_init(&c->timer, on_handshake_timeout, g_config.handshake_timeout_ms / 1000.0, 0.);
	c->timer.data = c;
	ev_timer_start(w->loop, &c->timer);
	if (internal)
		login_internal(c, internal);
	else
		login_start(c);
	settle(c);
}
