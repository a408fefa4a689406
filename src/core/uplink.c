/*
 * uplink.c: owns a session's side of its upstream connection (see
 * uplink.h): the one seam for commands of the node's own (upcmd_send, and
 * their answers routed by kind), feeding the relay and completing answers
 * (to the client, the cache and mux), the back-pressure towards the
 * upstream, the pool's reports (ready, failed, timed out), and what a
 * session does when its connection breaks: the command sent again once
 * when that is safe, an error, the session's end, or under serve-stale an
 * answer from the cache and a session that answers from it only.
 */
#include "core/uplink.h"

#include "base/health.h"
#include "base/log.h"
#include "base/stats.h"
#include "cache/answer.h"
#include "cache/session.h"
#include "cache/settings_query.h"
#include "config/config.h"
#include "core/dispatch.h"
#include "core/kill.h"
#include "core/mux.h"
#include "core/pool.h"
#include "core/wait.h"
#include "core/worker.h"
#include "upstream/probe.h"

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
	client_process_input(c);
	return true;
}

/* The session's upstream connection broke (the upstream check is asked to
 * find out whether the upstream is down). A command whose answer had not
 * started is sent again once on a fresh connection when that is safe, else
 * it fails. A result cut short, or session state lost with the connection
 * (transaction, locks, temporary tables, ...), ends the session; under
 * serve-stale it stays, answering from the cache only (lost_command). */
void uplink_lost(struct client *c, const char *why)
{
	bool lost_state = mux_holds_state(c), cut = answer_cut(c);

	log_info("client %u: upstream connection lost: %s", c->id, why);
	probe_kick();
	if (retry_front(c))
		return;
	if (client_upstream_busy(c) && kill_generation() != c->kill_gen) {
		/* most likely KILLed (a KILL went upstream since the command was
		 * sent): the session ends as the server ended its connection */
		pool_discard(c);
		wait_abort_cache(c);
		client_close(c, "upstream connection killed");
		return;
	}
	pool_discard(c);
	if (client_hits_only(c)) {
		wait_abort_cache(c);
		client_set_state(c, CS_READY);
	} else if (client_upstream_busy(c) && !cut) {
		pkt_put_errf(&c->io.out, c->login_pending ? c->seq : 1, ERR_NET_READ_ERROR, "08S01",
				"Lost connection to upstream server during query");
		dispatch_drop_front(c);
		client_set_state(c, c->login_pending ? CS_CLOSING : CS_READY);
	}
	c->upcmd = UPCMD_NONE;
	if (cut || ((lost_state || client_ending(c)) && !keep_when_lost())) {
		wait_abort_cache(c);
		if (c->st != CS_DRAINED) /* (drained: its end stays a clean one) */
			client_set_state(c, CS_CLOSING);
		client_settle(c);
		return;
	}
	if (lost_state) {
		c->up_lost = true;
		c->pin_forever = c->pin_lock = false;
		c->server_status = ST_AUTOCOMMIT;
	}
	client_process_input(c);
}

void client_pool_ready(struct client *c)
{
	if (c->st == CS_CONNECTING)
		client_set_state(c, CS_READY);
	client_process_input(c);
}

/* The login or command that waited for a connection failed (its error is
 * queued): the login ends the session, a command is dropped. */
static void fail_waiting_command(struct client *c)
{
	if (c->login_pending) {
		client_set_state(c, CS_CLOSING);
	} else {
		dispatch_drop_front(c);
		client_set_state(c, CS_READY);
	}
	client_process_input(c);
}

/* serve-stale: a command whose upstream turned out to be gone as it went
 * there is answered from its entry past the TTL (within max_stale_ms, kept
 * for that: cache/session.c keep_window), as it would have been had the
 * node known before it asked. The fill it started is given up first. */
bool uplink_serve_stale(struct client *c)
{
	const uint8_t *pl;
	struct cache_ctx x;
	uint32_t len;
	uint8_t seq;

	if (g_config.upstream_down_policy != DOWN_POLICY_SERVE_STALE || c->login_pending ||
	    health_upstream_up() || !sbuf_packet_ready(&c->io, &len, &seq) || len == 0)
		return false;
	pl = sbuf_in_ptr(&c->io) + PKT_HEADER_LEN;
	wait_abort_cache(c);
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
		if (!uplink_serve_stale(c))
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

/* Tell the relay about the upstream session's MariaDB extensions (after
 * relay_start). */
void uplink_relay_setup(struct client *c)
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
	uplink_relay_setup(c);
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
				dispatch_drop_front(c);
		}
		break;
	}
	c->scratch.len = 0;
	pbuf_shrink(&c->scratch, kind == UPCMD_REFRESH ? 65536 : 4096);
}

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
			uplink_lost(c, "bad compressed frame from the upstream");
			return false;
		}
		if (!client_upstream_busy(c) || sbuf_out_pending(&c->io) >= CLIENT_OUT_HIGH ||
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
			uplink_lost(c, "unexpected packet from upstream");
			return false;
		}
		if (client_command_upstream(c)) {
			cache_tee(&c->cs, out->data + before, out->len - before);
			mux_relayed(c, out, before);
		}
		if (rc == 1)
			answer_complete(c);
	}
	return true;
}

/* An upstream packet can be relayed now, or made: a whole compressed frame
 * read but not decoded (--upstream-compression; no socket event comes for
 * it, the bytes are in already). */
bool uplink_input_ready(const struct client *c)
{
	uint32_t len;
	uint8_t seq;

	return sbuf_packet_ready(&c->up->io, &len, &seq) || sbuf_frame_ready(&c->up->io);
}

/* Relay what the upstream has sent: packets already read are relayed as
 * long as the client takes the output, even if no more bytes come. */
void uplink_pump(struct client *c)
{
	for (;;) {
		if (!feed_relay(c))
			return;
		if (c->st == CS_READY || client_ending(c)) {
			client_process_input(c);
			return;
		}
		if (!client_flush(c))
			return;
		if (!client_upstream_busy(c) || sbuf_out_pending(&c->io) >= CLIENT_OUT_HIGH ||
		    !uplink_input_ready(c))
			break;
	}
	client_settle(c);
}

/* Bytes or an end of file from the upstream while no command is upstream:
 * the server closed the connection (a restart, wait_timeout, KILL) or is
 * about to. */
static void upstream_idle_input(struct client *c)
{
	enum sbuf_io r = sbuf_read(&c->up->io, CLIENT_READ_MAX);

	if (r == SBUF_AGAIN) {
		client_settle(c); /* nothing for the session (TLS records without data) */
		return;
	}
	uplink_lost(c, r == SBUF_EOF ? "closed by the upstream while idle"
		      : r == SBUF_ERROR ? "read error while idle" : "unexpected data while idle");
}

void client_upstream_io(struct client *c)
{
	struct sbuf *up = &c->up->io;
	enum sbuf_io r;

	if (sbuf_out_pending(up) > 0 || up->ssl_want_write) {
		if (sbuf_flush(up) == SBUF_ERROR) {
			uplink_lost(c, "write failed");
			return;
		}
		if (client_infile_active(c) && sbuf_in_len(&c->io) > 0) {
			client_process_input(c); /* the upstream took some of the file: more */
			return;
		}
	}
	if (client_upstream_busy(c)) {
		if (sbuf_out_pending(&c->io) >= CLIENT_OUT_HIGH) {
			client_settle(c);
			return;
		}
		r = sbuf_read(up, CLIENT_READ_MAX);
		if (r == SBUF_EOF || r == SBUF_ERROR) {
			uplink_lost(c, r == SBUF_EOF ? "closed by upstream" : "read error");
			return;
		}
		uplink_pump(c);
		return;
	}
	upstream_idle_input(c);
}
