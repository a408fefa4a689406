/*
 * server.c: owns the admin port: its listening socket on the main thread's
 * loop, the connection limit, and each admin session: greeting,
 * mysql_native_password login against g_config.admin_user (plain text, no
 * TLS), the default-credentials rule (admin/admin from loopback only), and
 * the command phase (COM_QUERY goes to router.c; COM_INIT_DB, COM_PING,
 * COM_QUIT, COM_FIELD_LIST, COM_STATISTICS, COM_SET_OPTION are answered
 * here). Also admin_start()/admin_stop(), which bring up and tear down the
 * database and the modules.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/auth.h"
#include "config/config.h"
#include "proto/handshake.h"
#include "internal.h"
#include "core/listener.h"
#include "base/log.h"
#include "proto/sbuf.h"
#include "base/stats.h"
#include "upstream/users.h"

#define ADMIN_CAPS (SHOAL_SERVER_CAPS & ~CAP_SESSION_TRACK)
#define ADMIN_COLLATION 33
#define ADMIN_READ_MAX (256 * 1024)
#define ADMIN_LOGIN_MAX 65536

enum as_state { AS_HANDSHAKE, AS_AUTH_SWITCH, AS_READY, AS_CLOSING };

struct admin_conn {
	struct admin_conn *prev, *next;
	uint32_t id;
	struct sbuf io;
	ev_io watcher;
	ev_timer timer;
	enum as_state st;
	char peer[64];
	bool loopback;
	uint8_t nonce[AUTH_NONCE_LEN];
	uint8_t seq;
	uint32_t caps;
	char user[HS_USER_MAX];
	char db[ADMIN_DB_NAME_MAX];
	struct admin_warnings warn;
};

/* The admin port: its listener and its sessions (main thread only). */
static struct {
	struct ev_loop *loop;
	int fd;
	ev_io accept_w;
	struct admin_conn *conns;
	int n_conns;
	uint32_t next_id;
} port = { .fd = -1 };

/* ------------------------------------------------------------ sessions */

static void conn_close(struct admin_conn *c, const char *why)
{
	log_debug("admin session %u (%s) closed: %s", c->id, c->peer, why);
	ev_io_stop(port.loop, &c->watcher);
	ev_timer_stop(port.loop, &c->timer);
	sbuf_close(&c->io);
	if (c->prev)
		c->prev->next = c->next;
	else
		port.conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	port.n_conns--;
	free(c);
}

/* Flush and re-arm; false if the session was closed. */
static bool conn_settle(struct admin_conn *c)
{
	enum sbuf_io r = sbuf_flush(&c->io);
	int ev = EV_READ;

	if (r == SBUF_ERROR) {
		conn_close(c, "write failed");
		return false;
	}
	if (r == SBUF_OK && c->st == AS_CLOSING) {
		conn_close(c, "closed after error");
		return false;
	}
	if (sbuf_out_pending(&c->io) > 0)
		ev |= EV_WRITE;
	if (c->st == AS_CLOSING)
		ev = EV_WRITE;
	if (!ev_is_active(&c->watcher) || (c->watcher.events & (EV_READ | EV_WRITE)) != ev) {
		ev_io_stop(port.loop, &c->watcher);
		ev_io_set(&c->watcher, c->io.fd, ev);
		ev_io_start(port.loop, &c->watcher);
	}
	if (sbuf_out_pending(&c->io) == 0)
		sbuf_shrink(&c->io);
	return true;
}

static void fail_close(struct admin_conn *c, uint8_t seq, uint16_t code, const char *state,
		       const char *msg)
{
	pkt_put_err(&c->io.out, seq, code, state, msg);
	c->st = AS_CLOSING;
}

/* ---------------------------------------------------------------- login */

static void access_denied(struct admin_conn *c, bool used_password)
{
	char msg[HS_USER_MAX + 160];

	STAT_INC(admin_auth_failures);
	log_info("admin: access denied for user '%s' from %s", c->user, c->peer);
	snprintf(msg, sizeof msg, "Access denied for user '%s'@'%s' (using password: %s)",
		 c->user, c->peer, used_password ? "YES" : "NO");
	fail_close(c, c->seq, ERR_ACCESS_DENIED_ERROR, "28000", msg);
}

static void check_login(struct admin_conn *c, const uint8_t *tok, size_t len)
{
	char msg[HS_USER_MAX + 200];

	if (!vars_admin_check(c->user, c->nonce, tok, len)) {
		access_denied(c, len > 0);
		return;
	}
	if (vars_admin_is_default() && !c->loopback) {
		STAT_INC(admin_auth_failures);
		log_warn("admin: refused the default admin/admin login from %s", c->peer);
		snprintf(msg, sizeof msg, "Access denied for user '%s'@'%s': the default admin "
			 "credentials work from a loopback address only (set admin_password)",
			 c->user, c->peer);
		fail_close(c, c->seq, ERR_ACCESS_DENIED_ERROR, "28000", msg);
		return;
	}
	log_info("admin: session %u: '%s' logged in from %s", c->id, c->user, c->peer);
	pkt_put_ok(&c->io.out, c->seq, 0, 0, ST_AUTOCOMMIT, 0, c->caps);
	c->st = AS_READY;
	ev_timer_stop(port.loop, &c->timer);
}

static void on_handshake(struct admin_conn *c, const uint8_t *pl, uint32_t len)
{
	struct hs_response r;

	if (hs_is_ssl_request(pl, len)) {
		c->st = AS_CLOSING;   /* TLS is not offered on the admin port */
		return;
	}
	if (hs_parse_response(pl, len, &r) < 0) {
		fail_close(c, c->seq, ERR_HANDSHAKE_ERROR, "08S01", "Bad handshake");
		return;
	}
	c->caps = r.caps & ADMIN_CAPS;
	snprintf(c->user, sizeof c->user, "%s", r.user);
	if (r.has_db && r.db[0] && !schema_is_db(r.db, c->db)) {
		char msg[HS_DB_MAX + 32];

		snprintf(msg, sizeof msg, "Unknown database '%s'", r.db);
		fail_close(c, c->seq, ERR_BAD_DB_ERROR, "42000", msg);
		return;
	}
	if (r.plugin[0] == '\0' || strcmp(r.plugin, PLUGIN_NATIVE) == 0) {
		check_login(c, r.auth, r.auth_len);
		return;
	}
	if (!(c->caps & CAP_PLUGIN_AUTH)) {
		fail_close(c, c->seq, ERR_NOT_SUPPORTED_AUTH_MODE, "08004",
			   "Client does not support authentication protocol requested by server");
		return;
	}
	hs_put_auth_switch(&c->io.out, c->seq, PLUGIN_NATIVE, c->nonce);
	c->seq++;
	c->st = AS_AUTH_SWITCH;
}

/* One whole login packet. */
static void login_packet(struct admin_conn *c, const uint8_t *pl, uint32_t len, uint8_t seq)
{
	if (seq != c->seq) {
		fail_close(c, (uint8_t)(seq + 1), ERR_NET_PACKETS_OUT_OF_ORDER, "08S01",
			   "Got packets out of order");
		return;
	}
	c->seq = (uint8_t)(seq + 1);
	if (c->st == AS_HANDSHAKE)
		on_handshake(c, pl, len);
	else
		check_login(c, pl, len);
}

/* ------------------------------------------------------------- commands */

static void on_init_db(struct admin_conn *c, const uint8_t *name, uint32_t len)
{
	char db[HS_DB_MAX], msg[HS_DB_MAX + 32];

	snprintf(db, sizeof db, "%.*s", (int)(len < sizeof db ? len : sizeof db - 1), name);
	if (!schema_is_db(db, c->db)) {
		snprintf(msg, sizeof msg, "Unknown database '%s'", db);
		pkt_put_err(&c->io.out, 1, ERR_BAD_DB_ERROR, "42000", msg);
		return;
	}
	pkt_put_ok(&c->io.out, 1, 0, 0, ST_AUTOCOMMIT, 0, c->caps);
}

static void on_query(struct admin_conn *c, const uint8_t *sql, uint32_t len)
{
	struct admin_reply r = {
		.out = &c->io.out, .seq = 1, .caps = c->caps, .warn = &c->warn,
		.db = c->db, .user = c->user, .peer = c->peer, .conn_id = c->id,
		.admin_sessions = port.n_conns,
	};

	log_debug("admin session %u: %.*s", c->id, (int)(len > 200 ? 200 : len), (const char *)sql);
	admin_query(&r, (const char *)sql, len);
}

static void on_statistics(struct admin_conn *c)
{
	char text[128];
	size_t start;
	int n = snprintf(text, sizeof text, "Uptime: %llu  Threads: %d  Questions: 0",
			 (unsigned long long)refresh_uptime(), port.n_conns);

	if (pkt_begin(&c->io.out, &start) == 0 && pbuf_append(&c->io.out, text, (size_t)n) == 0)
		pkt_end(&c->io.out, start, 1);
}

static void on_set_option(struct admin_conn *c, const uint8_t *pl, uint32_t len)
{
	if (len < 3) {
		pkt_put_err(&c->io.out, 1, ERR_UNKNOWN_COM_ERROR, "08S01", "Unknown command");
		return;
	}
	if (rd_u16(pl + 1) == 0)
		c->caps |= CAP_MULTI_STATEMENTS;
	else
		c->caps &= ~CAP_MULTI_STATEMENTS;
	pkt_put_eof(&c->io.out, 1, ST_AUTOCOMMIT, 0, c->caps);
}

/* One whole command packet; false if the session was closed. */
static bool command(struct admin_conn *c, const uint8_t *pl, uint32_t len)
{
	uint8_t cmd = len ? pl[0] : 0xff;

	/* the node's own commands (the command table's `local`): an admin
	 * session has no upstream and nothing to reset */
	switch (command_of(cmd)->local) {
	case CL_QUIT:
		conn_close(c, "COM_QUIT");
		return false;
	case CL_PING:
	case CL_RESET:
		pkt_put_ok(&c->io.out, 1, 0, 0, ST_AUTOCOMMIT, 0, c->caps);
		return true;
	default:
		break;
	}
	switch (cmd) {
	case CMD_INIT_DB:
		on_init_db(c, pl + 1, len - 1);
		break;
	case CMD_QUERY:
		on_query(c, pl + 1, len - 1);
		break;
	case CMD_FIELD_LIST:
		pkt_put_eof(&c->io.out, 1, ST_AUTOCOMMIT, 0, c->caps);
		break;
	case CMD_STATISTICS:
		on_statistics(c);
		break;
	case CMD_SET_OPTION:
		on_set_option(c, pl, len);
		break;
	default:
		pkt_put_err(&c->io.out, 1, ERR_UNKNOWN_COM_ERROR, "08S01", "Unknown command");
		break;
	}
	return true;
}

/* The next packet's header is in: false to stop reading (wait or closing). */
static bool header_ok(struct admin_conn *c, uint32_t len, uint8_t seq)
{
	if (c->st != AS_READY) {
		if (len <= ADMIN_LOGIN_MAX)
			return true;
		c->st = AS_CLOSING;   /* no login packet is that long */
		return false;
	}
	if (len >= PKT_MAX_PAYLOAD) {
		fail_close(c, (uint8_t)(seq + 1), ERR_NET_PACKET_TOO_LARGE, "08S01",
			   "Got a packet bigger than 'max_allowed_packet' bytes");
		return false;
	}
	if (seq != 0) {
		fail_close(c, 1, ERR_NET_PACKETS_OUT_OF_ORDER, "08S01", "Got packets out of order");
		return false;
	}
	return true;
}

/* Handle every whole packet in the input; false if the session was closed. */
static bool process_input(struct admin_conn *c)
{
	uint32_t len;
	uint8_t seq;

	while (c->st != AS_CLOSING && sbuf_header_ready(&c->io, &len, &seq)) {
		const uint8_t *pl;

		if (!header_ok(c, len, seq) || !sbuf_packet_ready(&c->io, &len, &seq))
			break;
		pl = sbuf_in_ptr(&c->io) + PKT_HEADER_LEN;
		if (c->st == AS_READY) {
			if (!command(c, pl, len))
				return false;
		} else {
			login_packet(c, pl, len, seq);
		}
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
	}
	if (c->st == AS_CLOSING)
		sbuf_in_consume(&c->io, sbuf_in_len(&c->io));
	return true;
}

static void on_conn_io(struct ev_loop *loop, ev_io *w, int revents)
{
	struct admin_conn *c = w->data;
	enum sbuf_io r;

	if ((revents & EV_READ) && c->st != AS_CLOSING) {
		r = sbuf_read(&c->io, ADMIN_READ_MAX);
		if (r == SBUF_EOF || r == SBUF_ERROR) {
			conn_close(c, r == SBUF_EOF ? "client disconnected" : "read error");
			return;
		}
		if (!process_input(c))
			return;
	}
	conn_settle(c);
}

static void on_login_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct admin_conn *c = t->data;

	conn_close(c, "login timeout");
}

/* ------------------------------------------------------------- accept */

static void peer_of(const struct sockaddr_storage *ss, char *out, size_t cap, bool *loopback)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
	const uint8_t *a6 = s6->sin6_addr.s6_addr;

	*loopback = false;
	if (ss->ss_family == AF_INET) {
		*loopback = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
		inet_ntop(AF_INET, &s4->sin_addr, out, (socklen_t)cap);
		return;
	}
	if (ss->ss_family != AF_INET6 || !inet_ntop(AF_INET6, &s6->sin6_addr, out, (socklen_t)cap)) {
		snprintf(out, cap, "unknown");
		return;
	}
	if (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
		*loopback = true;
	if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		*loopback = a6[12] == 127;
		memmove(out, out + 7, strlen(out + 7) + 1);   /* drop "::ffff:" */
	}
}

static void refuse(int fd)
{
	struct pbuf b = {0};
	ssize_t n;

	if (pkt_put_err(&b, 0, ERR_CON_COUNT_ERROR, "08004", "Too many connections") == 0) {
		n = send(fd, b.data, b.len, MSG_NOSIGNAL | MSG_DONTWAIT);
		(void)n;
	}
	pbuf_free(&b);
	close(fd);
}

static void conn_open(int fd, const struct sockaddr_storage *peer)
{
	struct admin_conn *c = calloc(1, sizeof *c);

	if (!c || auth_make_nonce(c->nonce) < 0) {
		free(c);
		close(fd);
		return;
	}
	c->id = ++port.next_id;
	sbuf_init(&c->io, fd);
	peer_of(peer, c->peer, sizeof c->peer, &c->loopback);
	snprintf(c->db, sizeof c->db, "main");
	c->next = port.conns;
	if (port.conns)
		port.conns->prev = c;
	port.conns = c;
	port.n_conns++;
	ev_io_init(&c->watcher, on_conn_io, fd, EV_READ);
	c->watcher.data = c;
	ev_timer_init(&c->timer, on_login_timeout, g_config.handshake_timeout_ms / 1000.0, 0.);
	c->timer.data = c;
	ev_timer_start(port.loop, &c->timer);
	if (hs_put_greeting(&c->io.out, c->id, ADMIN_VERSION, c->nonce, ADMIN_CAPS,
			    ADMIN_COLLATION, PLUGIN_NATIVE, 0) < 0) {
		conn_close(c, "out of memory");
		return;
	}
	c->seq = 1;
	c->st = AS_HANDSHAKE;
	conn_settle(c);
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof peer;
		int one = 1;
		int fd = accept4(port.fd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				log_warn("admin: accept: %s", strerror(errno));
			return;
		}
		if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
			log_debug("admin: TCP_NODELAY: %s", strerror(errno));
		if (port.n_conns >= g_config.admin_max_connections) {
			STAT_INC(admin_connections_refused);
			log_warn("admin: refused a connection from a peer: %d admin sessions open "
				 "(admin_max_connections)", port.n_conns);
			refuse(fd);
			continue;
		}
		conn_open(fd, &peer);
	}
}

/* -------------------------------------------------------- start / stop */

int admin_start(struct ev_loop *loop, char *err, size_t errlen)
{
	refresh_mark_start();
	if (modules_seed_users_from_config() < 0) {
		snprintf(err, errlen, "admin: out of memory for the user store");
		return -1;
	}
	if (g_config.admin.port == 0) {
		log_info("admin interface disabled (admin_address port 0)");
		return 0;
	}
	if (adb_open(g_config.data_dir, err, errlen) < 0)
		return -1;
	modules_boot();
	port.fd = listen_socket(&g_config.admin, err, errlen);
	if (port.fd < 0) {
		adb_close();
		return -1;
	}
	port.loop = loop;
	ev_io_init(&port.accept_w, on_accept, port.fd, EV_READ);
	ev_io_start(loop, &port.accept_w);
	log_info("admin interface on %s:%u (database %s)", g_config.admin.host,
		 (unsigned)g_config.admin.port,
		 g_adb.disk_in_memory ? "in memory only" : g_adb.disk_path);
	if (vars_admin_is_default())
		log_warn("admin: the admin login is the default admin/admin; it works from "
			 "loopback addresses only. Set admin_password (ADMIN_PASSWORD).");
	return 0;
}

void admin_stop(void)
{
	while (port.conns)
		conn_close(port.conns, "admin stopping");
	if (port.fd >= 0) {
		ev_io_stop(port.loop, &port.accept_w);
		close(port.fd);
		port.fd = -1;
	}
	adb_close();
	modules_reset();
	refresh_reset();
}
