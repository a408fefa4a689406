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
#include "idle.h"
#include "log.h"
#include "monitor.h"
#include "probe.h"
#include "stats.h"
#include "worker.h"

#define CLIENT_READ_MAX (256 * 1024)
#define CLIENT_OUT_HIGH (1024 * 1024)   /* stop reading upstream above this */
#define LOGIN_PACKET_MAX 65536

static atomic_uint next_conn_id = 1;

static void process_input(struct client *c);
static void pump_upstream(struct client *c);
static void on_upstream(struct upstream *u, enum upstream_event ev, void *owner);

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

void client_close(struct client *c, const char *why)
{
	struct worker *w = c->w;

	log_debug("client %u (%s) closed: %s", c->id, c->peer, why);
	if (c->st < CS_READY || (c->st == CS_CLOSING && !c->drained))
		STAT_INC(client_connections_aborted);
	ev_io_stop(w->loop, &c->watcher);
	ev_timer_stop(w->loop, &c->timer);
	cache_session_free(c);
	upstream_close(c->up, c->st == CS_READY || c->drained);
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
	return c->st == CS_RELAYING || c->st == CS_SETTINGS || c->st == CS_REFRESHING;
}

/* Arm the upstream watcher for the current relay state. An idle
 * connection is watched too, so that the upstream closing it is seen at
 * once. */
static void arm_upstream(struct client *c)
{
	bool rd = (upstream_busy(c) && sbuf_out_pending(&c->io) < CLIENT_OUT_HIGH) ||
		  c->st == CS_READY;

	if (c->up)
		upstream_want(c->up, rd, sbuf_out_pending(&c->up->io) > 0 || c->up->io.ssl_want_write);
}

/* Flush both sides and re-arm; the end of every event handler. */
static void settle(struct client *c)
{
	if (c->up && (sbuf_out_pending(&c->up->io) > 0 || c->up->io.ssl_want_write) &&
	    sbuf_flush(&c->up->io) == SBUF_ERROR) {
		upstream_close(c->up, false);
		c->up = NULL;
		probe_kick();
		if (c->st == CS_RELAYING && c->relay.packets == 0)
			client_send_err(c, 1, ERR_NET_READ_ERROR, "08S01",
					"Lost connection to upstream server during query");
		c->st = CS_CLOSING;
	}
	if (!client_flush(c))
		return;
	arm_upstream(c);
	client_arm(c);
	idle_arm(c);
}

/* Under serve-stale a session whose upstream connection broke is kept
 * (without one) unless part of an answer already reached the client or a
 * long command is still arriving. */
static bool keep_when_lost(const struct client *c)
{
	if (g_config.upstream_down_policy != DOWN_POLICY_SERVE_STALE || c->cont_packets)
		return false;
	if (c->st == CS_RELAYING)
		return c->relay.packets == 0;
	return c->st == CS_READY || c->st == CS_SETTINGS || c->st == CS_REFRESHING;
}

/* The upstream connection broke, and the upstream check is asked to find
 * out whether the upstream is down. A client waiting for an answer of
 * which no byte was sent gets an error. Then the session ends, since its
 * upstream state (transaction, variables, temporary tables) is gone; under
 * serve-stale it stays, answering from the cache only (lost_command). */
static void upstream_lost(struct client *c, const char *why)
{
	bool keep = keep_when_lost(c);

	log_info("client %u: upstream connection lost: %s", c->id, why);
	cache_abort(c);
	upstream_close(c->up, false);
	c->up = NULL;
	probe_kick();
	if ((c->st == CS_RELAYING && c->relay.packets == 0) || (c->st == CS_SETTINGS && !keep))
		client_send_err(c, 1, ERR_NET_READ_ERROR, "08S01",
				"Lost connection to upstream server during query");
	if (keep) {
		/* in CS_SETTINGS the client's command is still queued */
		c->up_lost = true;
		c->st = CS_READY;
		process_input(c);
		return;
	}
	c->st = CS_CLOSING;
	settle(c);
}

static bool start_upstream(struct client *c)
{
	struct upstream_params p = {
		.client_caps = c->caps,
		.collation = c->collation,
		.db = c->db[0] ? c->db : NULL,
	};

	c->up = upstream_open(c->w->loop, &p, on_upstream, c);
	if (!c->up) {
		client_close(c, "out of memory");
		return false;
	}
	return true;
}

void client_authenticated(struct client *c)
{
	if (c->w->draining) {
		client_send_err(c, c->seq, ERR_SERVER_SHUTDOWN, "08S01", "Server shutdown in progress");
		c->st = CS_CLOSING;
		return;
	}
	if (c->changing_user) {
		/* a fresh upstream session: CMD_CHANGE_USER resets all state */
		upstream_close(c->up, true);
		c->up = NULL;
		c->up_lost = false;
		cache_session_reset(c);
	}
	if (c->is_monitor) {
		pkt_put_ok(&c->io.out, c->seq, 0, 0, ST_AUTOCOMMIT, 0, c->caps);
		c->st = CS_READY;
		c->changing_user = false;
		ev_timer_stop(c->w->loop, &c->timer);
		return;
	}
	c->st = CS_CONNECTING;
	c->login_pending = true;
	start_upstream(c);
}

static void upstream_connected(struct client *c)
{
	if (c->login_pending) {
		pkt_put_ok(&c->io.out, c->seq, 0, 0, ST_AUTOCOMMIT, 0, c->caps);
		c->login_pending = false;
		c->changing_user = false;
		ev_timer_stop(c->w->loop, &c->timer);
	}
	c->st = CS_READY;
	process_input(c);
}

static void upstream_failed(struct client *c)
{
	struct upstream *u = c->up;
	uint8_t seq = c->login_pending ? c->seq : 1;
	uint32_t len;
	uint8_t s;

	log_warn("cannot connect to upstream %s:%u: %s", g_config.upstream_host,
		 g_config.upstream_port, u->err);
	if (u->err_code >= 2000 && u->err_code < 3000) /* the connector's own errors */
		client_send_err(c, seq, ERR_UPSTREAM_UNREACHABLE, "HY000",
				"Can't connect to upstream server at '%s:%u': %s (client error %u)",
				g_config.upstream_host, g_config.upstream_port, u->err, u->err_code);
	else
		client_send_err(c, seq, (uint16_t)u->err_code, u->sqlstate[0] ? u->sqlstate : "HY000",
				"%s", u->err);
	upstream_close(u, false);
	c->up = NULL;
	if (c->login_pending) {
		c->st = CS_CLOSING;
		return;
	}
	/* a lazily opened upstream: drop the command, keep the session */
	if (sbuf_packet_ready(&c->io, &len, &s))
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
	c->st = CS_READY;
}

/* Where the answer being relayed goes: the client, or the cache. */
static struct pbuf *answer_sink(struct client *c)
{
	if (c->st == CS_SETTINGS)
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
	} else {
		c->st = CS_READY;
		cache_answer_done(c);
	}
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
		int rc = relay_feed(&c->relay, sbuf_in_ptr(up), PKT_HEADER_LEN + len, out);

		sbuf_in_consume(up, PKT_HEADER_LEN + len);
		if (rc < 0) {
			STAT_INC(protocol_errors);
			upstream_lost(c, "unexpected packet from upstream");
			return false;
		}
		if (c->fill && c->st == CS_RELAYING)
			cache_tee(c, before);
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
		if (c->st == CS_READY) {
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

static void upstream_io(struct client *c)
{
	struct sbuf *up = &c->up->io;
	enum sbuf_io r;

	if (sbuf_out_pending(up) > 0 || up->ssl_want_write) {
		if (sbuf_flush(up) == SBUF_ERROR) {
			upstream_lost(c, "write failed");
			return;
		}
	}
	if (upstream_busy(c) && sbuf_out_pending(&c->io) < CLIENT_OUT_HIGH) {
		r = sbuf_read(up, CLIENT_READ_MAX);
		if (r == SBUF_EOF || r == SBUF_ERROR) {
			upstream_lost(c, r == SBUF_EOF ? "closed by upstream" : "read error");
			return;
		}
		pump_upstream(c);
		return;
	}
	if (c->st == CS_READY) {
		upstream_idle_input(c);
		return;
	}
	settle(c);
}

static void on_upstream(struct upstream *u, enum upstream_event ev, void *owner)
{
	struct client *c = owner;

	(void)u;
	switch (ev) {
	case UP_EV_CONNECTED:
		upstream_connected(c);
		return;
	case UP_EV_FAILED:
		upstream_failed(c);
		process_input(c);
		return;
	case UP_EV_IO:
		upstream_io(c);
		return;
	}
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

/* Forward one client packet (header included) to the upstream. */
static bool forward_packet(struct client *c, uint32_t len)
{
	if (pbuf_append(&c->up->io.out, sbuf_in_ptr(&c->io), PKT_HEADER_LEN + len) < 0) {
		client_close(c, "out of memory");
		return false;
	}
	sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
	c->cont_packets = len == PKT_MAX_PAYLOAD;
	return true;
}

enum hc_result { HC_NEXT, HC_STOP, HC_CLOSED, HC_FORWARD };

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

/* A command of a session that lost its upstream connection (serve-stale).
 * The cache answers what it can. The rest fails: with a clear error while
 * the upstream is down; once it is back, the session ends, since its
 * upstream state (variables, temporary tables, prepared statements) is
 * gone and the client must reconnect. */
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
	default:
		return HC_FORWARD;
	}
}

/* One whole command packet is at the front of the input. */
static enum hc_result handle_command(struct client *c, uint32_t len)
{
	const uint8_t *pl = sbuf_in_ptr(&c->io) + PKT_HEADER_LEN;
	uint8_t cmd = len ? pl[0] : 0xff;
	enum hc_result r;

	if (cmd == CMD_QUIT) {
		client_close(c, "COM_QUIT");
		return HC_CLOSED;
	}
	if (c->st == CS_REFRESHING && cmd != CMD_QUERY && cmd != CMD_STMT_EXECUTE)
		return HC_STOP; /* only cache hits while a refresh is upstream */
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
	if (!c->up) {
		/* opened lazily; the command stays queued until it is up */
		c->st = CS_CONNECTING;
		return start_upstream(c) ? HC_STOP : HC_CLOSED;
	}
	r = cache_step(c, len);
	if (r != HC_FORWARD)
		return r;
	c->cmd_start_us = cache_now_us();
	if (!forward_packet(c, len))
		return HC_CLOSED;
	c->cont_total = len;
	STAT_INC(queries);
	relay_start(&c->relay, cmd, c->caps);
	cache_relay_setup(c, cmd);
	if (relay_kind_of(cmd) != RK_NONE)
		c->st = CS_RELAYING;
	return HC_NEXT;
}

/* Continuation packets of a command over 16 MiB go straight through. */
static bool forward_continuation(struct client *c)
{
	uint32_t len;
	uint8_t seq;

	while (c->cont_packets && sbuf_packet_ready(&c->io, &len, &seq)) {
		c->cont_total += len;
		if (c->cont_total > g_config.max_allowed_packet) {
			upstream_close(c->up, false);
			c->up = NULL;
			client_send_err(c, (uint8_t)(seq + 1), ERR_NET_PACKET_TOO_LARGE, "08S01",
					"Got a packet bigger than 'max_allowed_packet' bytes");
			c->st = CS_CLOSING;
			return true;
		}
		if (!forward_packet(c, len))
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
