/*
 * client.c: owns a client session's life and its input: accepting it,
 * its state (the one checked way to change it, and what a refused move
 * does), reading the client's socket (TLS, compressed frames, the
 * pre-TLS read budget), the input loop that hands each whole command to
 * dispatch.c and a LOAD DATA file to infile.c, flushing and re-arming both
 * sides after every event, giving the connection back between commands,
 * closing at the next idle point while the node drains, and closing
 * cleanly on every path. The login is login.c's, a command's way
 * dispatch.c's, the upstream connection's side uplink.c's, the cache's
 * waits wait.c's.
 */
#include "core/client.h"

#include <arpa/inet.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/session.h"
#include "core/dispatch.h"
#include "config/config.h"
#include "base/health.h"
#include "upstream/ident.h"
#include "core/idle.h"
#include "core/infile.h"
#include "core/kill.h"
#include "core/login.h"
#include "base/log.h"
#include "core/monitor.h"
#include "core/mux.h"
#include "core/pool.h"
#include "core/uplink.h"
#include "core/wait.h"
#include "upstream/probe.h"
#include "base/stats.h"
#include "core/worker.h"
#include "proto/compress.h"

#define LOGIN_PACKET_MAX 65536

/* Session ids (the greeting's connection id, what KILL and drivers' cancel
 * name) start far above the upstream's thread ids, which count from 1 since
 * the server started: a KILL's id then names one or the other, never both
 * (docs/architecture.md, KILL). */
#define FIRST_SESSION_ID 1000000001u
static atomic_uint next_conn_id = FIRST_SESSION_ID;

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

/* The session ends: its connection goes back to the pool when it is
 * between commands and holds nothing of the session's; else it is closed
 * (an open transaction is rolled back by that). */
static void give_back(struct client *c)
{
	if (!c->up)
		return;
	if (c->up->st != UP_READY || (!client_upstream_busy(c) && !c->held && !mux_holds_state(c) &&
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

/* Arm the upstream watcher for the current relay state. A held connection
 * without a command is watched too, so that the upstream closing it is
 * seen at once. */
static void arm_upstream(struct client *c)
{
	bool rd = !client_upstream_busy(c) || sbuf_out_pending(&c->io) < CLIENT_OUT_HIGH;

	if (c->up)
		upstream_want(c->up, rd, sbuf_out_pending(&c->up->io) > 0 || c->up->io.ssl_want_write);
}

/* Flush both sides and re-arm; the end of every event handler. */
void client_settle(struct client *c)
{
	if (c->up && c->up->st == UP_READY && (sbuf_out_pending(&c->up->io) > 0 || c->up->io.ssl_want_write) &&
	    sbuf_flush(&c->up->io) == SBUF_ERROR) {
		uplink_lost(c, "write failed");
		return;
	}
	if (!client_flush(c))
		return;
	arm_upstream(c);
	client_arm(c);
	idle_arm(c);
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
	client_settle(c);
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
		if (!client_infile_active(c) || sbuf_in_len(&c->io) == 0 || !infile_blocked(&c->relay, &c->up->io))
			return true;
		r = sbuf_flush(&c->up->io);
		if (r == SBUF_ERROR) {
			uplink_lost(c, "write failed");
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
void client_process_input(struct client *c)
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
		if (c->login_pending && c->st == CS_READY && !login_finish(c))
			break;
		/* a 16 MiB+ command still arriving: forward what came; the
		 * session may be gone (closed inside) */
		if (c->st == CS_SENDING && !dispatch_continuation(c))
			return;
		if (client_infile_active(c)) {
			/* LOAD DATA LOCAL: the file's packets go upstream as they
			 * come (while the upstream takes them); no command is read
			 * until the server answers */
			if (!pump_infile(c))
				return;
			break;
		}
		/* busy with a command (only cache hits may be answered meanwhile,
		 * client_hits_only), or no complete header yet */
		if ((c->st != CS_READY && !client_hits_only(c)) || !sbuf_header_ready(&c->io, &len, &seq))
			break;
		/* a bad header (over max_allowed_packet, or out of order): the
		 * ERR is queued and the session closing */
		if (!command_header_ok(c, len, seq))
			break;
		/* the command's payload is not all here yet */
		if (!sbuf_packet_ready(&c->io, &len, &seq))
			break;
		r = dispatch_command(c, len);
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
	client_settle(c);
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
	if (client_upstream_busy(c) && c->up && sbuf_out_pending(&c->io) < CLIENT_OUT_HIGH &&
	    uplink_input_ready(c)) {
		uplink_pump(c);
		return;
	}
	if (c->st == CS_TLS_ACCEPT) {
		login_tls_step(c);
		if (c->st == CS_TLS_ACCEPT) {
			client_settle(c);
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
	client_process_input(c);
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
	wait_init(c);
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
	client_settle(c);
}
