/*
 * upstream.c: opening upstream connections with Connector/C's non-blocking
 * API on a libev loop, the greeting hook that pins the upstream session's
 * capabilities to the client's, and the hand-over of the socket to raw
 * relaying. See upstream.h.
 */
#include "upstream/upstream.h"

/* the connector was built with TLS: see its pvio layout with the TLS member */
#include <mysql.h>
#ifndef HAVE_TLS
#define HAVE_TLS 1
#endif
typedef unsigned char uchar;
#include <ma_pvio.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "upstream/users.h"
#include "config/config.h"
#include "base/health.h"
#include "upstream/ident.h"
#include "base/log.h"
#include "proto/packet.h"
#include "base/stats.h"
#include "upstream/upauth.h"
#include "proto/compress.h"

/* Exported by Connector/C (its trace plugin uses it), not declared in its
 * public headers. The hook sees every buffer the connector reads. */
extern int ma_pvio_register_callback(my_bool reg,
	void (*fn)(int mode, MYSQL *mysql, const uchar *buffer, size_t length));

/* The upstream being driven by this thread right now, for the hook. */
static __thread struct upstream *tl_driving;
/* The upstream check's blocking connect on this thread: the hook takes the
 * greeting's version string from its first read. */
static __thread bool tl_check_greeting;

/* Facts about the upstream server, shared by all workers (guarded). */
static pthread_mutex_t info_lock = PTHREAD_MUTEX_INITIALIZER;
static char info_version[128] = "5.5.5-10.11.0-MariaDB";
static uint8_t info_collation = 45;
static bool info_known;
static bool info_exact;    /* info_version is the greeting's own string */
static atomic_int info_mariadb = -1;   /* -1 unknown, else 0/1: read per statement */
static atomic_uint info_ext_caps = MCAP_RELAYED; /* the greeting's extended capabilities */

/* Capabilities the node's upstream sessions always keep. */
#define UP_BASE_CAPS (CAP_LONG_PASSWORD | CAP_LONG_FLAG | CAP_PROTOCOL_41 | CAP_CONNECT_WITH_DB | \
	CAP_TRANSACTIONS | CAP_SECURE_CONNECTION | CAP_PLUGIN_AUTH | \
	CAP_PLUGIN_AUTH_LENENC | CAP_CONNECT_ATTRS | CAP_SSL)
/* Client capabilities that change what the upstream sends. */
#define UP_CLIENT_CAPS (CAP_FOUND_ROWS | CAP_CONNECT_WITH_DB | CAP_NO_SCHEMA | \
	CAP_ODBC | CAP_IGNORE_SPACE | CAP_INTERACTIVE | CAP_MULTI_STATEMENTS | \
	CAP_MULTI_RESULTS | CAP_PS_MULTI_RESULTS | CAP_SESSION_TRACK | CAP_LOCAL_FILES)

/* Offset, in a greeting payload p of n bytes, of its capabilities' low
 * half (after the version, thread id, scramble and filler); 0 if it has
 * none: the extended capabilities are at that offset + 14. */
static size_t greeting_caps_at(const uint8_t *p, size_t n)
{
	const uint8_t *nul = n > 1 && p[0] == 10 ? memchr(p + 1, 0, n - 1) : NULL;
	size_t off = nul ? (size_t)(nul - p) + 1 + 4 + 8 + 1 : 0;

	return off && off + 18 <= n ? off : 0;
}

/* The facts the node's greeting repeats, from the upstream's (p: the
 * payload, n its length): the server version exactly, with MariaDB's
 * "5.5.5-" prefix, which the connector strips and clients read to tell
 * MariaDB from MySQL; and the MariaDB extended capabilities it offers. */
static void note_greeting(const uint8_t *p, size_t n)
{
	const uint8_t *nul = n > 1 && p[0] == 10 ? memchr(p + 1, 0, n - 1) : NULL;
	size_t len = nul ? (size_t)(nul - (p + 1)) : 0, off = greeting_caps_at(p, n);

	if (!nul || len == 0 || len >= sizeof(info_version))
		return;
	pthread_mutex_lock(&info_lock);
	memcpy(info_version, p + 1, len);
	info_version[len] = '\0';
	info_exact = true;
	atomic_store(&info_mariadb, strstr(info_version, "MariaDB") != NULL);
	/* CLIENT_MYSQL set: the filler is only filler, no extension offered */
	atomic_store(&info_ext_caps, off && !(p[off] & CAP_LONG_PASSWORD) ? rd_u32(p + off + 14) : 0);
	pthread_mutex_unlock(&info_lock);
}

/* The extended capabilities an upstream session keeps for a client that
 * negotiated client_caps (CAP_X_* bits) with the node: those the client
 * has, and progress reports (the relay drops them). Never metadata
 * caching: an execute's answer then always carries its column
 * definitions, the server's current ones, which the relay forwards as they
 * come (docs/architecture.md); nor any extension the node does not know. */
static uint32_t kept_ext_caps(uint32_t client_caps)
{
	return MCAP_PROGRESS | ((client_caps & CAP_X_EXT_METADATA) ? MCAP_EXTENDED_METADATA : 0) |
	       ((client_caps & CAP_X_BULK) ? MCAP_STMT_BULK : 0);
}

/* Rewrite the capability bits of a greeting in place. With keep_ext the
 * MariaDB extended capabilities of kept_ext_caps() stay (the connector
 * then asks for those it supports: progress, and the client's bulk and
 * extended metadata), else CLIENT_MYSQL is set and they are zeroed, so the
 * connector asks for none. */
static bool patch_greeting(struct upstream *u, uint8_t *buf, size_t len)
{
	/* upstream_compression: the server's CLIENT_COMPRESS stays offered.
	 * Its CLIENT_ZSTD_COMPRESSION_ALGORITHM never does (want never has
	 * it), whatever the clients negotiated with the node: the link's
	 * compression is the node's own, zlib, which the client role of
	 * compress.c follows (a connector with zstd would prefer it) */
	uint32_t want = u->want_caps | (g_config.upstream_compression ? CAP_COMPRESS : 0);
	uint8_t *p = buf + PKT_HEADER_LEN;
	size_t n = rd_u24(buf), off;
	uint32_t caps;

	if (n > len - PKT_HEADER_LEN || n < 1 || p[0] != 10)
		return false;
	note_greeting(p, n);
	off = greeting_caps_at(p, n);
	if (!off)
		return false;
	caps = rd_u16(p + off) | ((uint32_t)rd_u16(p + off + 5) << 16);
	if (u->keep_ext && !(caps & CAP_LONG_PASSWORD)) {
		uint32_t ext = rd_u32(p + off + 14) & kept_ext_caps(u->key);

		wr_u32(p + off + 14, ext);
		u->progress = (ext & MCAP_PROGRESS) != 0;
		caps &= want & ~CAP_LONG_PASSWORD;
	} else {
		u->keep_ext = false;
		caps = (caps & want) | CAP_LONG_PASSWORD;
		memset(p + off + 14, 0, 4);
	}
	wr_u16(p + off, (uint16_t)caps);
	wr_u16(p + off + 5, (uint16_t)(caps >> 16));
	return true;
}

static void greeting_hook(int mode, MYSQL *m, const uchar *buf, size_t len)
{
	struct upstream *u = tl_driving;

	if (mode == 0 && tl_check_greeting && (ssize_t)len > PKT_HEADER_LEN &&
	    rd_u24(buf) <= len - PKT_HEADER_LEN) {
		tl_check_greeting = false; /* the check connection's first read */
		note_greeting(buf + PKT_HEADER_LEN, rd_u24(buf));
		return;
	}
	if (mode != 0 || !u || u->mysql != m || u->st != UP_CONNECTING)
		return;
	if ((ssize_t)len < PKT_HEADER_LEN + 1)
		return;
	/* the buffer is the connector's own read buffer, writable */
	if (!u->greeting_patched)
		u->greeting_patched = patch_greeting(u, (uint8_t *)(uintptr_t)buf, len);
	else
		upauth_on_read(u->sha1_login, (uint8_t *)(uintptr_t)buf, len, u->asked_plugin,
			       sizeof(u->asked_plugin));
}

int upstream_global_init(void)
{
	if (mysql_library_init(0, NULL, NULL))
		return -1;
	if (upauth_global_init() < 0)
		return -1;
	return ma_pvio_register_callback(1, greeting_hook) ? -1 : 0;
}

bool upstream_mariadb(void)
{
	int v = atomic_load_explicit(&info_mariadb, memory_order_relaxed);

	return v != 0; /* unknown: MariaDB, the default greeting's kind */
}

uint32_t upstream_ext_caps(void)
{
	return atomic_load_explicit(&info_ext_caps, memory_order_relaxed);
}

void upstream_info(char *version, size_t cap, uint8_t *collation)
{
	pthread_mutex_lock(&info_lock);
	snprintf(version, cap, "%s", info_version);
	*collation = info_collation;
	pthread_mutex_unlock(&info_lock);
}

void upstream_down_text(char *out, size_t cap, const char *what)
{
	const char *h = g_config.upstream_host;
	bool v6 = strchr(h, ':') != NULL;

	snprintf(out, cap, "Shoal: upstream %s%s%s:%u unreachable for %.0f s; %s", v6 ? "[" : "", h,
		 v6 ? "]" : "", (unsigned)g_config.upstream_port, health_upstream_down_seconds(), what);
}

static void learn_info(MYSQL *m)
{
	const char *v = mysql_get_server_info(m);

	pthread_mutex_lock(&info_lock);
	if (!info_known && v) {
		if (!info_exact) {
			snprintf(info_version, sizeof(info_version), "%s", v);
			atomic_store(&info_mariadb, strstr(v, "MariaDB") != NULL);
		}
		info_collation = (uint8_t)m->server_language;
		info_known = true;
	}
	pthread_mutex_unlock(&info_lock);
}

void upstream_set_common_options(MYSQL *m)
{
	unsigned timeout = (unsigned)(g_config.upstream_connect_timeout_ms + 999) / 1000;
	my_bool on = 1, verify = g_config.upstream_tls_verify;
	unsigned int infile = 0; /* upstream_open turns it on for its clients that have it */

	mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	mysql_options(m, MYSQL_OPT_LOCAL_INFILE, &infile);
	mysql_optionsv(m, MYSQL_OPT_CONNECT_ATTR_ADD, "program_name", "shoal");
	if (g_config.upstream_tls) {
		mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, &on);
		mysql_optionsv(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
		if (g_config.upstream_tls_ca[0])
			mysql_optionsv(m, MYSQL_OPT_SSL_CA, g_config.upstream_tls_ca);
	}
}

int upstream_probe(char *err, size_t errlen)
{
	MYSQL *m = mysql_init(NULL);
	struct shoal_user *u = &g_config.upstream_user;

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	upstream_set_common_options(m);
	tl_check_greeting = true;
	if (!mysql_real_connect(m, g_config.upstream_host, u->name, u->password, NULL,
				g_config.upstream_port, NULL, 0)) {
		tl_check_greeting = false;
		snprintf(err, errlen, "%s", mysql_error(m));
		mysql_close(m);
		health_upstream_failed();
		return -1;
	}
	tl_check_greeting = false;
	health_upstream_ok();
	learn_info(m);
	mysql_close(m);
	return 0;
}

static void fail(struct upstream *u)
{
	MYSQL *m = u->mysql;
	bool answered;

	u->st = UP_FAILED;
	u->err_code = mysql_errno(m);
	/* a server error (access denied for this user, unknown database, too
	 * many connections) says the upstream is up: only the connector's own
	 * errors (2000..2999: no route, refused, lost) count against its health */
	answered = u->err_code != 0 && (u->err_code < 2000 || u->err_code >= 3000);
	if (u->err_code) {
		snprintf(u->sqlstate, sizeof(u->sqlstate), "%s", mysql_sqlstate(m));
		snprintf(u->err, sizeof(u->err), "%s", mysql_error(m));
	} else {
		u->err_code = ERR_CONN_HOST_ERROR;
		if (!u->err[0])
			snprintf(u->err, sizeof(u->err), "connection setup failed");
	}
	if (u->err_code >= 2000 && u->err_code < 3000)
		snprintf(u->sqlstate, sizeof(u->sqlstate), "HY000");
	if (u->sha1_login && u->asked_plugin[0] && strcmp(u->asked_plugin, "mysql_native_password") != 0)
		snprintf(u->err, sizeof(u->err), "Access denied for user '%s' upstream: the upstream "
			 "asks for %s, and the node holds only the mysql_native_password hash of "
			 "this user; give the node its clear password (allowed_users or the config "
			 "file; docs/security.md)", u->up_user, u->asked_plugin);
	STAT_INC(upstream_connect_errors);
	if (!answered)
		health_upstream_failed();
	ev_io_stop(u->loop, &u->watcher);
	ev_timer_stop(u->loop, &u->timer);
	u->cb(u, UP_EV_FAILED, u->owner);
}

/* Arm watchers for what the connector waits on. */
static void wait_for(struct upstream *u, int status)
{
	int fd = mysql_get_socket(u->mysql);
	int ev = ((status & MYSQL_WAIT_READ) ? EV_READ : 0) | ((status & MYSQL_WAIT_WRITE) ? EV_WRITE : 0);

	u->wait_status = status;
	ev_io_stop(u->loop, &u->watcher);
	ev_timer_stop(u->loop, &u->timer);
	if (ev && fd >= 0) {
		ev_io_set(&u->watcher, fd, ev);
		ev_io_start(u->loop, &u->watcher);
	}
	if (status & MYSQL_WAIT_TIMEOUT) {
		ev_timer_set(&u->timer, mysql_get_timeout_value_ms(u->mysql) / 1000.0, 0.);
		ev_timer_start(u->loop, &u->timer);
	}
}

/* A partitioned upstream sends no FIN or RST: without these a command sent
 * to it, or an idle pooled connection, would hang for the kernel's
 * retransmission time (many minutes). Unacknowledged data fails the socket
 * after UPSTREAM_TCP_USER_TIMEOUT_MS (5 s); idle connections are probed. A long
 * query is not affected: the server acknowledges what it was sent. */
#define UPSTREAM_TCP_USER_TIMEOUT_MS 5000
static void set_socket_timeouts(int fd)
{
	int on = 1, idle = 10, intvl = 5, cnt = 3, uto = UPSTREAM_TCP_USER_TIMEOUT_MS;

	if (fd < 0)
		return;
	if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on)) < 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) < 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)) < 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)) < 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &uto, sizeof(uto)) < 0)
		log_debug("upstream socket options: %s (a unix socket?)", strerror(errno));
}

static void become_ready(struct upstream *u)
{
	MARIADB_PVIO *pvio = u->mysql->net.pvio;

	ev_io_stop(u->loop, &u->watcher);
	ev_timer_stop(u->loop, &u->timer);
	sbuf_init(&u->io, mysql_get_socket(u->mysql));
	/* The connector leaves its socket blocking (its asynchronous calls
	 * pass MSG_DONTWAIT instead), and the relay's reads and writes would
	 * then stall the worker: over TLS, sbuf's SSL_read loop waited forever
	 * for a record after the last one (every login through a node with
	 * upstream_tls hung, found against MySQL 9.7 and 8.0); in plain, a read
	 * that filled its chunk exactly waited for more. */
	if (sbuf_set_nonblocking(&u->io) < 0) {
		snprintf(u->err, sizeof(u->err), "cannot make the upstream socket non-blocking: %s",
			 strerror(errno));
		fail(u);
		return;
	}
	set_socket_timeouts(u->io.fd);
	if (pvio && pvio->ctls)
		u->io.ssl = (SSL *)pvio->ctls->ssl;
	/* upstream_compression: the connector negotiated it and ran the setup
	 * compressed; the relay's frames go on from the next command. zlib
	 * frames: the greeting it read offered no zstd (patch_greeting) */
	if (u->mysql->net.compress && sbuf_compress_start(&u->io, COMPRESS_MAX_LEN, true, 0) < 0) {
		snprintf(u->err, sizeof(u->err), "out of memory");
		fail(u);
		return;
	}
	u->st = UP_READY;
	if (!u->check) {
		uint64_t n = STAT_INC(upstream_connections) + 1;
		uint64_t peak = STAT_GET(upstream_connections_peak);

		while (n > peak && !atomic_compare_exchange_weak(&g_stats.upstream_connections_peak, &peak, n))
			;
	}
	health_upstream_ok();
	u->cb(u, UP_EV_CONNECTED, u->owner);
}

/* The connector finished connecting: maybe set the client's collation. */
static int after_connect(struct upstream *u)
{
	uint16_t collation = u->collation;
	const MARIADB_CHARSET_INFO *cs;

	learn_info(u->mysql);
	if (!u->greeting_patched) {
		snprintf(u->err, sizeof(u->err), "could not read the upstream greeting");
		return -1;
	}
	if (collation == 0 || (u->mysql->charset && u->mysql->charset->nr == collation))
		return 0;
	cs = mariadb_get_charset_by_nr(collation);
	if (!cs)
		return 0;
	snprintf(u->setup_sql, sizeof(u->setup_sql), "SET NAMES %s COLLATE %s", cs->csname, cs->name);
	return 1;
}

static void step(struct upstream *u, int events, bool first);

static void on_io(struct ev_loop *loop, ev_io *w, int revents)
{
	struct upstream *u = w->data;
	int ev = ((revents & EV_READ) ? MYSQL_WAIT_READ : 0) | ((revents & EV_WRITE) ? MYSQL_WAIT_WRITE : 0);

	(void)loop;
	if (u->st == UP_READY) {
		u->cb(u, UP_EV_IO, u->owner);
		return;
	}
	step(u, ev, false);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct upstream *u = w->data;

	(void)loop;
	(void)revents;
	if (!u->started) {
		u->started = true;
		step(u, 0, true);
		return;
	}
	step(u, MYSQL_WAIT_TIMEOUT, false);
}

static void forget_password(struct upstream *u)
{
	if (!u->login_pw)
		return;
	explicit_bzero(u->login_pw, USERS_CLEAR_MAX);
	free(u->login_pw);
	u->login_pw = NULL;
}

static int run_connect(struct upstream *u, int events, bool first)
{
	MYSQL *ret = NULL;
	unsigned long flags = u->want_caps & (CAP_FOUND_ROWS | CAP_IGNORE_SPACE | CAP_INTERACTIVE |
					      CAP_MULTI_STATEMENTS | CAP_NO_SCHEMA | CAP_ODBC);
	int status;

	/* the connector reads the arguments while the connect runs (it copies
	 * them once the socket is up): login_pw lives until the connect ends */
	if (first)
		status = mysql_real_connect_start(&ret, u->mysql, g_config.upstream_host, u->up_user,
						  u->login_pw ? u->login_pw : "",
						  u->db[0] ? u->db : NULL, g_config.upstream_port, NULL,
						  flags);
	else
		status = mysql_real_connect_cont(&ret, u->mysql, events);
	if (status)
		return status;
	return ret ? 0 : -1;
}

static int run_setup(struct upstream *u, int events, bool first)
{
	int err = 0, status;

	if (first)
		status = mysql_real_query_start(&err, u->mysql, u->setup_sql, strlen(u->setup_sql));
	else
		status = mysql_real_query_cont(&err, u->mysql, events);
	if (status)
		return status;
	return err ? -1 : 0;
}

static void step(struct upstream *u, int events, bool first)
{
	int status, rc;

	tl_driving = u;
	status = u->st == UP_CONNECTING ? run_connect(u, events, first) : run_setup(u, events, first);
	tl_driving = NULL;
	if (status > 0) {
		wait_for(u, status);
		return;
	}
	if (u->st == UP_CONNECTING)
		forget_password(u);
	if (status < 0) {
		fail(u);
		return;
	}
	if (u->st == UP_CONNECTING) {
		rc = after_connect(u);
		if (rc < 0) {
			fail(u);
			return;
		}
		if (rc > 0) {
			u->st = UP_SETUP;
			step(u, 0, true);
			return;
		}
	}
	become_ready(u);
}

/* Whom the connection acts as: the session's identity, or the
 * upstream_db_url user. 0 or -1 (no memory). */
static int set_identity(struct upstream *u, const struct ident *id)
{
	u->login_pw = malloc(USERS_CLEAR_MAX);
	if (!u->login_pw)
		return -1;
	u->epoch = ident_privilege_epoch();
	if (!id) {
		snprintf(u->up_user, sizeof(u->up_user), "%s", g_config.upstream_user.name);
		snprintf(u->login_pw, USERS_CLEAR_MAX, "%s", g_config.upstream_user.password);
		return 0;
	}
	snprintf(u->up_user, sizeof(u->up_user), "%s", id->up_user);
	u->ident_id = id->id;
	u->acct = users_account_get(ident_conn_account(id));
	u->sha1_login = upauth_prepare(u->mysql, id, u->login_pw, USERS_CLEAR_MAX);
	return 0;
}

struct upstream *upstream_open(struct ev_loop *loop, const struct upstream_params *p,
			       upstream_cb cb, void *owner)
{
	struct upstream *u = calloc(1, sizeof(*u));
	const MARIADB_CHARSET_INFO *cs = p->collation ? mariadb_get_charset_by_nr(p->collation) : NULL;

	if (!u)
		return NULL;
	u->mysql = mysql_init(NULL);
	if (!u->mysql) {
		free(u);
		return NULL;
	}
	u->loop = loop;
	u->cb = cb;
	u->owner = owner;
	if (set_identity(u, p->ident) < 0) {
		mysql_close(u->mysql);
		free(u);
		return NULL;
	}
	u->collation = p->collation;
	u->check = p->check;
	u->key = upstream_key(p->client_caps);
	u->want_caps = u->key & ~CAP_X_MARIADB;
	u->keep_ext = (u->key & CAP_X_MARIADB) != 0;
	if (p->db)
		snprintf(u->db, sizeof(u->db), "%s", p->db);
	sv_init(&u->sv);
	u->globals_gen = sv_globals_gen();
	snprintf(u->sv.db, sizeof(u->sv.db), "%s", u->db);
	sv_names_from_collation(&u->sv, p->collation);
	sbuf_init(&u->io, -1);
	mysql_options(u->mysql, MYSQL_OPT_NONBLOCK, 0);
	upstream_set_common_options(u->mysql);
	if (g_config.upstream_compression)
		mysql_options(u->mysql, MYSQL_OPT_COMPRESS, NULL);
	if (u->key & CAP_LOCAL_FILES) {
		/* the client negotiated CLIENT_LOCAL_FILES: so does this connection,
		 * and the node relays the client's file (infile.h). Without it the
		 * upstream refuses LOAD DATA LOCAL INFILE with its own error, as for
		 * any client that disabled it. */
		unsigned int on = 1;

		mysql_options(u->mysql, MYSQL_OPT_LOCAL_INFILE, &on);
	}
	if (cs)
		mysql_optionsv(u->mysql, MYSQL_SET_CHARSET_NAME, cs->csname);
	ev_io_init(&u->watcher, on_io, -1, 0);
	u->watcher.data = u;
	ev_timer_init(&u->timer, on_timer, 0., 0.);
	u->timer.data = u;
	ev_timer_start(loop, &u->timer);
	return u;
}

void upstream_want(struct upstream *u, bool rd, bool wr)
{
	int ev = (rd ? EV_READ : 0) | (wr ? EV_WRITE : 0);

	if (u->st != UP_READY)
		return;
	if (u->want_read == rd && u->want_write == wr && (ev == 0) == !ev_is_active(&u->watcher))
		return;
	u->want_read = rd;
	u->want_write = wr;
	ev_io_stop(u->loop, &u->watcher);
	if (ev) {
		ev_io_set(&u->watcher, u->io.fd, ev);
		ev_io_start(u->loop, &u->watcher);
	}
}

void upstream_close(struct upstream *u, bool send_quit)
{
	if (!u)
		return;
	ev_io_stop(u->loop, &u->watcher);
	ev_timer_stop(u->loop, &u->timer);
	if (u->st == UP_READY && !u->check)
		STAT_DEC(upstream_connections);
	/* mysql_close sends CMD_QUIT; on a connection in an unknown state make
	 * that write fail at once rather than risk blocking */
	if (!send_quit && mysql_get_socket(u->mysql) >= 0)
		shutdown(mysql_get_socket(u->mysql), SHUT_RDWR);
	pbuf_free(&u->io.in);
	pbuf_free(&u->io.out);
	sbuf_compress_free(&u->io);
	sv_free(&u->sv);
	free(u->stmts);
	forget_password(u);
	users_account_put(u->acct);
	mysql_close(u->mysql);
	free(u);
}

uint32_t upstream_key(uint32_t client_caps)
{
	uint32_t k = UP_BASE_CAPS | (client_caps & UP_CLIENT_CAPS);

	if (!g_config.upstream_tls)
		k &= ~CAP_SSL;
	return k | (client_caps & CAP_X_MARIADB);
}

uint32_t upstream_stmt_id(struct upstream *u, uint64_t serial)
{
	for (uint16_t i = 0; i < u->n_stmts; i++) {
		if (u->stmts[i].serial == serial) {
			u->stmts[i].used = ++u->stmt_clock;
			return u->stmts[i].up_id;
		}
	}
	return 0;
}

void upstream_stmt_add(struct upstream *u, uint64_t serial, uint32_t up_id, uint32_t *evict)
{
	struct up_stmt *s = NULL;

	*evict = 0;
	for (uint16_t i = 0; i < u->n_stmts; i++) {
		if (u->stmts[i].serial == serial) {
			/* prepared again here (another session's PREPARE of the
			 * same statement): the new id replaces the old one */
			*evict = u->stmts[i].up_id == up_id ? 0 : u->stmts[i].up_id;
			u->stmts[i].up_id = up_id;
			u->stmts[i].used = ++u->stmt_clock;
			return;
		}
	}
	if (u->n_stmts == u->cap_stmts && u->cap_stmts < UP_STMTS_MAX) {
		uint16_t cap = u->cap_stmts ? (uint16_t)(u->cap_stmts * 2) : 8;
		struct up_stmt *n = realloc(u->stmts, cap * sizeof(*n));

		if (n) {
			u->stmts = n;
			u->cap_stmts = cap;
		}
	}
	if (u->n_stmts < u->cap_stmts) {
		s = &u->stmts[u->n_stmts++];
	} else if (u->n_stmts) {
		/* full: replace the least recently used */
		s = &u->stmts[0];
		for (uint16_t i = 1; i < u->n_stmts; i++)
			if (u->stmts[i].used < s->used)
				s = &u->stmts[i];
		*evict = s->up_id;
	} else {
		*evict = up_id; /* no memory for a map: close it again */
		return;
	}
	s->serial = serial;
	s->up_id = up_id;
	s->used = ++u->stmt_clock;
}
