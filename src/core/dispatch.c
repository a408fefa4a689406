/*
 * dispatch.c: owns a command's way through the node (see dispatch.h): the
 * command table's handlers for what the node answers itself (unknown
 * commands, COM_QUIT, COM_PING without a connection, COM_CHANGE_USER,
 * COM_RESET_CONNECTION, KILL, the monitor queries), a session that lost
 * its upstream state (serve-stale), asking the cache and doing its step
 * (serve, wait, refresh, read the settings or check a grant first), the
 * statement commands mux.c answers, and then the upstream: borrow a
 * connection, bring it to the session's state, forward the command, and
 * the rest of a command of 16 MiB or more as it arrives.
 */
#include "core/dispatch.h"

#include <stdlib.h>
#include <string.h>

#include "base/health.h"
#include "base/log.h"
#include "base/stats.h"
#include "cache/answer.h"
#include "cache/session.h"
#include "cache/settings_query.h"
#include "config/config.h"
#include "core/kill.h"
#include "core/login.h"
#include "core/monitor.h"
#include "core/mux.h"
#include "core/pool.h"
#include "core/uplink.h"
#include "core/wait.h"
#include "core/worker.h"
#include "upstream/ident.h"

/* The front command will not run: drop it (and the cache fill it was to
 * make). The caller queued its error, one of the node's own: counted. */
void dispatch_drop_front(struct client *c)
{
	uint32_t len;
	uint8_t s;

	cache_note_own_error(&c->cs, client_command_upstream(c) ? cache_now_us() - c->cmd_start_us : 0);
	if (c->held) {
		sbuf_in_consume(&c->io, c->held);
		c->held = 0;
	} else if (sbuf_packet_ready(&c->io, &len, &s)) {
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
	}
	if (c->pass_pending || client_command_upstream(c) ||
	    (c->st == CS_INTERNAL && (c->upcmd == UPCMD_SETTINGS || c->upcmd == UPCMD_GRANT_CHECK)))
		wait_abort_cache(c);
	c->pass_pending = false;
	free(c->delta);
	c->delta = NULL;
	c->cur_sv = 0;
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
	if (c->up && client_upstream_busy(c)) {
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
static enum hc_result local_command(struct client *c, const struct command *k, uint32_t len)
{
	const uint8_t *pl = sbuf_in_ptr(&c->io) + PKT_HEADER_LEN;
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
		if (!uplink_serve_stale(c))
			send_upstream_down(c, "only cached results are served (upstream_down_policy=serve-stale)");
	} else if (health_upstream_down_too_long())
		send_upstream_down(c, "the node is out of rotation");
	else
		return false;
	dispatch_drop_front(c);
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
	uplink_relay_setup(c);
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
enum hc_result dispatch_command(struct client *c, uint32_t len)
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
	if (client_hits_only(c) && !command_may_hit(k))
		return HC_STOP; /* only cache hits while a refresh is upstream */
	if (!c->pass_pending) {
		/* answered here (a hit, KILL, a monitor query, a cache
		 * command), parked (WAIT) or closed: nothing goes upstream */
		r = local_command(c, k, len);
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
		dispatch_drop_front(c);
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
bool dispatch_continuation(struct client *c)
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
