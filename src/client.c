/*
 * client.c: the command phase of a client session: reading and checking
 * command packets, answering what the node answers itself (unknown
 * commands, CMD_QUIT, PING for sessions without an upstream), forwarding the
 * rest to the session's upstream connection and relaying the response, and
 * closing cleanly on every error path, the monitor queries and pings the
 * node answers itself (monitor.c), what a session does when its upstream
 * connection breaks (close, or under serve-stale keep answering from the
 * cache), and closing sessions at their next idle point while the node
 * drains. Login is in login.c.
 */
#include "client.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/session.h"
#include "config.h"
#include "health.h"
#include "ident.h"
#include "idle.h"
#include "log.h"
#include "monitor.h"
#include "mux.h"
#include "pool.h"
#include "probe.h"
#include "stats.h"
#include "worker.h"

#define CLIENT_READ_MAX (256 * 1024)
#define CLIENT_OUT_HIGH (1024 * 1024)   /* stop reading upstream above this */
#define LOGIN_PACKET_MAX 65536

static atomic_uint next_conn_id = 1;

static void process_input(struct client *c);
static void pump_upstream(struct client *c);

void client_send_err(struct client *c, uint8_t seq, uint16_t code, const char *state, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (pkt_put_err(&c->io.out, seq, code, state, msg) < 0)
		log_warn("client %u: out of memory for an error packet", c->id);
}

static bool upstream_busy(const struct client *c);

/* The session ends: its connection goes back to the pool when it is
 * between commands and holds nothing of the session's; else it is closed
 * (an open transaction is rolled back by that). */
static void give_back(struct client *c)
{
	if (!c->up)
		return;
	if (c->up->st != UP_READY || (!upstream_busy(c) && !c->held && !mux_holds_state(c) &&
				      (c->st != CS_CLOSING || c->drained)))
		pool_release(c);
	else
		pool_discard(c);
}

void client_close(struct client *c, const char *why)
{
	struct worker *w = c->w;

	log_debug("client %u (%s) closed: %s", c->id, c->peer, why);
	if (c->st < CS_CONNECTING || c->login_pending || (c->st == CS_CLOSING && !c->drained))
		STAT_INC(client_connections_aborted);
	ev_io_stop(w->loop, &c->watcher);
	ev_timer_stop(w->loop, &c->timer);
	pool_forget(c);
	give_back(c);
	cache_session_free(c);
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
	if (c->st == CS_RELAYING && !c->cont_packets && sbuf_in_len(&c->io) > CLIENT_READ_MAX)
		ev &= ~EV_READ; /* the client pipelines: hold further input */
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
	if (r == SBUF_OK && c->st == CS_CLOSING) {
		client_close(c, c->drained ? "closed for the drain" : "closed after error");
		return false;
	}
	return true;
}

/* A command of this session is upstream and its answer is awaited. */
static bool upstream_busy(const struct client *c)
{
	return c->st == CS_RELAYING || c->st == CS_SETTINGS || c->st == CS_REFRESHING ||
	       c->st == CS_SYNCING;
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
 * make). The caller queued its error. */
static void drop_front(struct client *c)
{
	uint32_t len;
	uint8_t s;

	if (c->held) {
		sbuf_in_consume(&c->io, c->held);
		c->held = 0;
	} else if (sbuf_packet_ready(&c->io, &len, &s)) {
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
	}
	if (c->pass_pending || c->st == CS_RELAYING || c->st == CS_SETTINGS)
		cache_abort(c);
	c->pass_pending = false;
	free(c->delta);
	c->delta = NULL;
	c->cur_sv = 0;
}

/* Under serve-stale a session whose upstream state was lost is kept
 * (without a connection) unless part of an answer already reached the
 * client or a long command is still arriving. */
static bool keep_when_lost(const struct client *c)
{
	if (g_config.upstream_down_policy != DOWN_POLICY_SERVE_STALE || c->cont_packets)
		return false;
	return !(c->st == CS_RELAYING && c->relay.packets > 0);
}

/* Send the front command again on another connection: the one it went to
 * was a pooled one that turned out broken before answering. */
static bool retry_front(struct client *c)
{
	if (c->st != CS_RELAYING || !c->held || c->retried || mux_holds_state(c) || c->login_pending)
		return false;
	STAT_INC(upstream_retries);
	pool_discard(c);
	c->held = 0;
	c->retried = true;
	c->pass_pending = true;
	c->st = CS_READY;
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
	bool lost_state = mux_holds_state(c), cut = c->st == CS_RELAYING && c->relay.packets > 0;

	log_info("client %u: upstream connection lost: %s", c->id, why);
	probe_kick();
	if (retry_front(c))
		return;
	pool_discard(c);
	if (c->st == CS_REFRESHING) {
		cache_abort(c);
		c->st = CS_READY;
	} else if (upstream_busy(c) && !cut) {
		client_send_err(c, c->login_pending ? c->seq : 1, ERR_NET_READ_ERROR, "08S01",
				"Lost connection to upstream server during query");
		drop_front(c);
		c->st = c->login_pending ? CS_CLOSING : CS_READY;
	}
	if (cut || ((lost_state || c->st == CS_CLOSING) && !keep_when_lost(c))) {
		cache_abort(c);
		c->st = CS_CLOSING;
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
	c->login_pending = false;
	c->changing_user = false;
	ev_timer_stop(c->w->loop, &c->timer);
}

void client_authenticated(struct client *c)
{
	if (c->w->draining) {
		client_send_err(c, c->seq, ERR_SERVER_SHUTDOWN, "08S01", "Server shutdown in progress");
		c->st = CS_CLOSING;
		return;
	}
	if (c->changing_user) {
		/* CMD_CHANGE_USER resets all session state */
		mux_reset(c);
		c->up_lost = false;
		cache_session_reset(c);
	}
	mux_login(c);
	if (c->is_monitor) {
		c->st = CS_READY;
		login_done(c);
		return;
	}
	/* a connection is borrowed (and brought to the session's schema) before
	 * the OK, so that an unreachable upstream or unknown schema fail here */
	if (!health_upstream_up()) {
		char msg[512];

		upstream_down_text(msg, sizeof(msg), "new sessions are refused until it answers");
		client_send_err(c, c->seq, ERR_UPSTREAM_UNREACHABLE, "HY000", "%s", msg);
		c->st = CS_CLOSING;
		return;
	}
	if (pool_exhausted(c)) {
		/* no waiting for a login: the schema is checked by the first
		 * command that goes upstream (its COM_INIT_DB) */
		c->st = CS_READY;
		login_done(c);
		return;
	}
	c->login_pending = true;
	c->st = CS_CONNECTING;
	switch (pool_acquire(c)) {
	case POOL_GOT:
		c->st = CS_READY;
		break;
	case POOL_PENDING:
		break;
	case POOL_NOMEM:
		client_send_err(c, c->seq, ERR_UPSTREAM_UNREACHABLE, "HY000", "Shoal: out of memory");
		c->st = CS_CLOSING;
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
		client_send_err(c, c->seq, ERR_UPSTREAM_UNREACHABLE, "HY000",
				"Shoal: cannot prepare an upstream connection");
		c->st = CS_CLOSING;
		return false;
	}
	login_done(c);
	return true;
}

void client_pool_ready(struct client *c)
{
	if (c->st == CS_CONNECTING)
		c->st = CS_READY;
	process_input(c);
}

/* The login or command that waited for a connection failed (its error is
 * queued): the login ends the session, a command is dropped. */
static void fail_waiting_command(struct client *c)
{
	if (c->login_pending) {
		c->st = CS_CLOSING;
	} else {
		drop_front(c);
		c->st = CS_READY;
	}
	process_input(c);
}

void client_pool_failed(struct client *c)
{
	struct upstream *u = c->up;
	uint8_t seq = c->login_pending ? c->seq : 1;

	if (!u) {
		client_send_err(c, seq, ERR_UPSTREAM_UNREACHABLE, "HY000", "Shoal: out of memory");
	} else {
		log_warn("cannot connect to upstream %s:%u: %s", g_config.upstream_host,
			 g_config.upstream_port, u->err);
		if (u->err_code >= 2000 && u->err_code < 3000) /* the connector's own errors */
			client_send_err(c, seq, ERR_UPSTREAM_UNREACHABLE, "HY000",
					"Can't connect to upstream server at '%s:%u': %s (client error %u)",
					g_config.upstream_host, g_config.upstream_port, u->err, u->err_code);
		else
			client_send_err(c, seq, (uint16_t)u->err_code, u->sqlstate[0] ? u->sqlstate : "HY000",
					"%s", u->err);
		pool_discard(c);
	}
	fail_waiting_command(c);
}

void client_pool_timeout(struct client *c)
{
	int n = g_config.workers > 0 ? g_config.workers : 1;

	client_send_err(c, c->login_pending ? c->seq : 1, ERR_CON_COUNT_ERROR, "08004",
			"Too many connections: Shoal's upstream pool is exhausted (max_upstream_connections=%d, "
			"%d per worker, all busy for %d ms)", g_config.max_upstream_connections,
			(g_config.max_upstream_connections + n - 1) / n, g_config.upstream_wait_timeout_ms);
	fail_waiting_command(c);
}

/* Where the answer being relayed goes: the client, or the cache. */
static struct pbuf *answer_sink(struct client *c)
{
	if (c->st == CS_SETTINGS || c->st == CS_SYNCING)
		return &c->scratch;
	if (c->st == CS_REFRESHING)
		return &c->fill_buf;
	return &c->io.out;
}

static void answer_complete(struct client *c)
{
	if (c->st == CS_SETTINGS) {
		cache_settings_done(c);         /* back to CS_READY */
	} else if (c->st == CS_REFRESHING) {
		cache_refresh_done(c);          /* back to CS_READY */
	} else if (c->st == CS_SYNCING) {
		if (!mux_sync_done(c)) {        /* back to CS_READY */
			if (c->login_pending)
				c->st = CS_CLOSING;
			else
				drop_front(c);
		}
	} else {
		c->st = CS_READY;
		cache_answer_done(c);
		mux_answer_done(c);
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

	while (upstream_busy(c) && sbuf_out_pending(&c->io) < CLIENT_OUT_HIGH &&
	       sbuf_packet_ready(up, &len, &seq)) {
		struct pbuf *out = answer_sink(c);
		size_t before = out->len;
		int rc;

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
		if (c->st == CS_RELAYING) {
			if (c->fill)
				cache_tee(c, before);
			mux_relayed(c, out, before);
		}
		if (rc == 1)
			answer_complete(c);
	}
	return true;
}

/* Relay what the upstream has sent: packets already read are relayed as
 * long as the client takes the output, even if no more bytes come. */
static void pump_upstream(struct client *c)
{
	uint32_t len;
	uint8_t seq;

	for (;;) {
		if (!feed_relay(c))
			return;
		if (c->st == CS_READY || c->st == CS_CLOSING) {
			process_input(c);
			return;
		}
		if (!client_flush(c))
			return;
		if (!upstream_busy(c) || sbuf_out_pending(&c->io) >= CLIENT_OUT_HIGH ||
		    !sbuf_packet_ready(&c->up->io, &len, &seq))
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

static bool is_known_command(uint8_t cmd)
{
	switch (cmd) {
	case CMD_INIT_DB: case CMD_QUERY: case CMD_FIELD_LIST: case CMD_REFRESH:
	case CMD_STATISTICS: case CMD_PROCESS_INFO: case CMD_PROCESS_KILL:
	case CMD_DEBUG: case CMD_PING: case CMD_STMT_PREPARE: case CMD_STMT_EXECUTE:
	case CMD_STMT_SEND_LONG_DATA: case CMD_STMT_CLOSE: case CMD_STMT_RESET:
	case CMD_SET_OPTION: case CMD_STMT_FETCH: case CMD_RESET_CONNECTION:
	case CMD_CREATE_DB: case CMD_DROP_DB:
		return true;
	default:
		return false;
	}
}

/* Forward one client packet (header included) to the upstream. A command
 * sent on a reused pooled connection stays in the input (held) until its
 * answer starts, to be sent again if that connection turns out broken. */
static bool forward_packet(struct client *c, uint32_t len, bool hold)
{
	if (pbuf_append(&c->up->io.out, sbuf_in_ptr(&c->io), PKT_HEADER_LEN + len) < 0) {
		client_close(c, "out of memory");
		return false;
	}
	c->cont_packets = len == PKT_MAX_PAYLOAD;
	if (hold && !c->cont_packets)
		c->held = PKT_HEADER_LEN + len;
	else
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
	return true;
}

enum hc_result { HC_NEXT, HC_STOP, HC_CLOSED, HC_FORWARD, HC_NEED_UP };

static void send_upstream_down(struct client *c, const char *what)
{
	char msg[512];

	upstream_down_text(msg, sizeof(msg), what);
	client_send_err(c, 1, ERR_UPSTREAM_UNREACHABLE, "HY000", "%s", msg);
}

/* COM_PING answered by the node: an error while the upstream has been down
 * too long (so that a monitor takes the node out of rotation), OK for a
 * session without an upstream connection. false: forward it. */
static bool answer_ping(struct client *c)
{
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
	uint8_t cmd = pl[0];
	bool answered = cache_serve_only(c, pl, len);

	sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
	if (answered || relay_kind_of(cmd) == RK_NONE)
		return HC_NEXT;
	if (health_upstream_up()) {
		client_send_err(c, 1, ERR_NET_READ_ERROR, "08S01",
				"Lost connection to upstream server earlier; reconnect");
		c->st = CS_CLOSING;
		return HC_STOP;
	}
	send_upstream_down(c, "only cached results are served (upstream_down_policy=serve-stale)");
	return HC_NEXT;
}

/* What the cache makes of a command: forward it, or it is dealt with. */
static enum hc_result cache_step(struct client *c, uint32_t len)
{
	switch (cache_command(c, sbuf_in_ptr(&c->io) + PKT_HEADER_LEN, len)) {
	case CSTEP_DONE:
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
		return HC_NEXT;
	case CSTEP_PENDING:   /* waiting: the command stays queued */
	case CSTEP_BLOCKED:
		return HC_STOP;
	case CSTEP_NEED_UP:
		return HC_NEED_UP;
	default:
		return HC_FORWARD;
	}
}

/* Everything answered without an upstream connection. HC_FORWARD or
 * HC_NEED_UP when one is needed. */
static enum hc_result local_command(struct client *c, uint32_t len)
{
	const uint8_t *pl = sbuf_in_ptr(&c->io) + PKT_HEADER_LEN;
	uint8_t cmd = len ? pl[0] : 0xff;
	enum hc_result r;

	if (cmd == CMD_QUERY && monitor_answer(c, pl, len)) {
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
		return HC_NEXT;
	}
	if (cmd == CMD_CHANGE_USER) {
		login_change_user(c, pl, len);
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
		return HC_NEXT;
	}
	if (!is_known_command(cmd)) {
		STAT_INC(protocol_errors);
		client_send_err(c, 1, ERR_UNKNOWN_COM_ERROR, "08S01", "Unknown command");
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
		return HC_NEXT;
	}
	if (cmd == CMD_PING && answer_ping(c)) {
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
		return HC_NEXT;
	}
	if (c->up_lost)
		return lost_command(c, len);
	r = cache_step(c, len);
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
 * node is out of rotation. true: the error was sent. */
static bool upstream_known_down(struct client *c)
{
	if (health_upstream_up())
		return false;
	if (g_config.upstream_down_policy == DOWN_POLICY_SERVE_STALE)
		send_upstream_down(c, "only cached results are served (upstream_down_policy=serve-stale)");
	else if (health_upstream_down_too_long())
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
	size_t at = c->up->io.out.len;
	bool answered = relay_kind_of(cmd) != RK_NONE;

	c->pass_pending = false;
	mux_note_command(c, pl, len);
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
	cache_relay_setup(c, cmd);
	if (answered)
		c->st = CS_RELAYING;
	return HC_NEXT;
}

/* One whole command packet is at the front of the input. */
static enum hc_result handle_command(struct client *c, uint32_t len)
{
	uint8_t cmd = len ? sbuf_in_ptr(&c->io)[PKT_HEADER_LEN] : 0xff;
	enum hc_result r = HC_FORWARD;

	if (cmd == CMD_QUIT) {
		client_close(c, "COM_QUIT");
		return HC_CLOSED;
	}
	if (ident_revoked(c->ident)) {
		/* LOAD USERS or SIGHUP removed or deactivated the login */
		STAT_INC(user_sessions_revoked);
		client_send_err(c, 1, ERR_ACCESS_DENIED_ERROR, "28000",
				"Access denied for user '%s'@'%s': the user was removed or deactivated "
				"on this node; the session is closed", c->user, c->peer);
		c->st = CS_CLOSING;
		return HC_STOP;
	}
	if (c->st == CS_REFRESHING && cmd != CMD_QUERY && cmd != CMD_STMT_EXECUTE)
		return HC_STOP; /* only cache hits while a refresh is upstream */
	if (!c->pass_pending) {
		r = local_command(c, len);
		if (r != HC_FORWARD && r != HC_NEED_UP)
			return r;
		c->pass_pending = r == HC_FORWARD;
	}
	if (!c->up && upstream_known_down(c))
		return HC_NEXT;
	if (!c->up) {
		switch (pool_acquire(c)) {
		case POOL_GOT:
			break;
		case POOL_PENDING:
			c->st = CS_CONNECTING;
			return HC_STOP;
		case POOL_NOMEM:
			client_close(c, "out of memory");
			return HC_CLOSED;
		}
	}
	switch (mux_sync_step(c)) {
	case 1:
		return HC_STOP;
	case -1:
		pool_discard(c);
		client_send_err(c, 1, ERR_UPSTREAM_UNREACHABLE, "HY000",
				"Shoal: cannot prepare an upstream connection for this session");
		drop_front(c);
		return HC_NEXT;
	default:
		break;
	}
	if (r == HC_NEED_UP)
		return HC_NEXT; /* ask the cache again, with a connection now */
	return forward_command(c, len);
}

/* Continuation packets of a command over 16 MiB go straight through. */
static bool forward_continuation(struct client *c)
{
	uint32_t len;
	uint8_t seq;

	while (c->cont_packets && sbuf_packet_ready(&c->io, &len, &seq)) {
		c->cont_total += len;
		if (c->cont_total > g_config.max_allowed_packet) {
			pool_discard(c);
			client_send_err(c, (uint8_t)(seq + 1), ERR_NET_PACKET_TOO_LARGE, "08S01",
					"Got a packet bigger than 'max_allowed_packet' bytes");
			c->st = CS_CLOSING;
			return true;
		}
		if (!forward_packet(c, len, false))
			return false;
	}
	return true;
}

/* Check the header of the next command; false if the session must end. */
static bool command_header_ok(struct client *c, uint32_t len, uint8_t seq)
{
	if (len > g_config.max_allowed_packet) {
		STAT_INC(protocol_errors);
		client_send_err(c, (uint8_t)(seq + 1), ERR_NET_PACKET_TOO_LARGE, "08S01",
				"Got a packet bigger than 'max_allowed_packet' bytes");
		c->st = CS_CLOSING;
		return false;
	}
	if (seq != 0) {
		STAT_INC(protocol_errors);
		client_send_err(c, 1, ERR_NET_PACKETS_OUT_OF_ORDER, "08S01", "Got packets out of order");
		c->st = CS_CLOSING;
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
		c->st = CS_CLOSING;
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
	return c->w->draining && c->st == CS_READY && sbuf_in_len(&c->io) == 0 &&
	       !c->cont_packets && !client_in_txn(c);
}

/* Close once the output is flushed (client_flush). */
static void close_for_drain(struct client *c)
{
	log_debug("client %u (%s): idle, closing for the drain", c->id, c->peer);
	c->drained = true;
	c->st = CS_CLOSING;
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

/* Consume as much buffered input as the state allows, then settle. */
static void process_input(struct client *c)
{
	uint32_t len;
	uint8_t seq;

	for (;;) {
		enum hc_result r;

		if (in_login(c)) {
			if (!login_input(c))
				break;
			continue;
		}
		if (c->login_pending && c->st == CS_READY && !finish_login(c))
			break;
		if (c->st == CS_RELAYING && c->cont_packets && !forward_continuation(c))
			return;
		if ((c->st != CS_READY && c->st != CS_REFRESHING) || !sbuf_header_ready(&c->io, &len, &seq))
			break;
		if (!command_header_ok(c, len, seq))
			break;
		if (!sbuf_packet_ready(&c->io, &len, &seq))
			break;
		r = handle_command(c, len);
		if (r == HC_CLOSED)
			return;
		if (r == HC_STOP)
			break;
	}
	if (c->st == CS_CLOSING)
		sbuf_in_consume(&c->io, sbuf_in_len(&c->io));
	else if (drain_due(c))
		close_for_drain(c);
	else
		maybe_release(c);
	settle(c);
}

void client_resume(struct client *c)
{
	process_input(c);
}

void client_wake(struct worker *w, uint32_t client_id, uint32_t gen)
{
	for (struct client *c = w->waiting; c; c = c->wait_next) {
		if (c->id != client_id)
			continue;
		if (c->waiting && c->waiter.gen == gen) {
			cache_wait_over(c, false);
			process_input(c);
		}
		return;
	}
}

/* Before TLS starts, read no further than the packet being waited for, so
 * that a TLS ClientHello sent right after the SSL request stays in the
 * socket for OpenSSL. */
static size_t read_budget(const struct client *c)
{
	uint32_t len;
	uint8_t seq;

	if (c->st != CS_HANDSHAKE || c->tls_done)
		return CLIENT_READ_MAX;
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
	if (upstream_busy(c) && c->up && sbuf_out_pending(&c->io) < CLIENT_OUT_HIGH) {
		uint32_t len;
		uint8_t seq;

		/* the client drained: relay what was read while it was full */
		if (sbuf_packet_ready(&c->up->io, &len, &seq)) {
			pump_upstream(c);
			return;
		}
	}
	if (c->st == CS_TLS_ACCEPT) {
		login_tls_step(c);
		if (c->st == CS_TLS_ACCEPT) {
			settle(c);
			return;
		}
	}
	if ((revents & EV_READ) && c->st != CS_CLOSING) {
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

void client_accept(struct worker *w, int fd, const struct sockaddr_storage *peer)
{
	struct client *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		atomic_fetch_sub(&w->n_clients, 1);
		STAT_DEC(client_connections);
		return;
	}
	c->id = atomic_fetch_add(&next_conn_id, 1);
	sbuf_init(&c->io, fd);
	peer_text(peer, c->peer, sizeof(c->peer));
	worker_add_client(w, c);
	cache_session_init(c);
	STAT_INC(client_connections_created);
	ev_io_init(&c->watcher, on_client_io, fd, EV_READ);
	c->watcher.data = c;
	ev_timer_init(&c->timer, on_handshake_timeout, g_config.handshake_timeout_ms / 1000.0, 0.);
	c->timer.data = c;
	ev_timer_start(w->loop, &c->timer);
	login_start(c);
	settle(c);
}
