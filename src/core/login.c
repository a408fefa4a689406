/*
 * login.c: the connection phase of a client session: greeting, optional TLS
 * upgrade, authentication (mysql_native_password, caching_sha2_password with
 * fast and full auth, auth switch), and the same checks for CMD_CHANGE_USER.
 * On success it builds the session's upstream identity (ident.h: whom it
 * acts as upstream, counted against the user's max_connections) and hands
 * over to login_authenticated(), which borrows the login's upstream connection
 * before the OK (login_finish). See client.h for the states.
 */
#include <openssl/err.h>
#include <stdlib.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "upstream/users.h"
#include "proto/authfail.h"
#include "core/login.h"
#include "core/dispatch.h"
#include "core/kill.h"
#include "core/mux.h"
#include "core/pool.h"
#include "proto/compress.h"
#include "base/health.h"
#include "config/config.h"
#include "upstream/ident.h"
#include "core/infile.h"
#include "base/log.h"
#include "base/stats.h"
#include "core/worker.h"

/* Users that completed a caching_sha2 full authentication since start: only
 * they may use the fast path, as with MySQL's own cache. Login path only. */
#define SHA2_CACHE_MAX 256
static pthread_mutex_t sha2_lock = PTHREAD_MUTEX_INITIALIZER;
static char sha2_cached[SHA2_CACHE_MAX][HS_USER_MAX];
static int sha2_n;

static bool sha2_is_cached(const char *user)
{
	bool found = false;

	pthread_mutex_lock(&sha2_lock);
	for (int i = 0; i < sha2_n && !found; i++)
		found = strcmp(sha2_cached[i], user) == 0;
	pthread_mutex_unlock(&sha2_lock);
	return found;
}

static void sha2_remember(const char *user)
{
	if (sha2_is_cached(user))
		return;
	pthread_mutex_lock(&sha2_lock);
	if (sha2_n < SHA2_CACHE_MAX)
		snprintf(sha2_cached[sha2_n++], HS_USER_MAX, "%s", user);
	pthread_mutex_unlock(&sha2_lock);
}

/* The session's transport is TLS: its SSL session is made at the client's
 * SSL request (TLS_ACCEPT), and the login states after it are entered only
 * once the handshake succeeded (a failed one ends the session). */
static bool tls_on(const struct client *c)
{
	return c->io.ssl != NULL;
}

/* CLIENT_COMPRESS and CLIENT_ZSTD_COMPRESSION_ALGORITHM when compression
 * is on (the setting "compression"): zlib for every client that has it,
 * zstd for MySQL's clients that are told to use only that. */
static uint32_t compress_caps(void)
{
	return g_config.compression ? CAP_COMPRESS | CAP_ZSTD_COMPRESSION : 0;
}

static const char *configured_plugin(void)
{
	return g_config.auth_plugin == AUTH_CACHING_SHA2 ? PLUGIN_SHA2 : PLUGIN_NATIVE;
}

/* Send the next login packet from the server: uses c->seq, then expects the
 * client's reply with the following id. */
static uint8_t next_seq(struct client *c)
{
	uint8_t s = c->seq;

	c->seq = (uint8_t)(s + 1);
	return s;
}

/* End the session once pending output is written (the caller closes). */
static void abort_login(struct client *c, const char *why)
{
	log_debug("client %u (%s): %s", c->id, c->peer, why);
	client_set_state(c, CS_CLOSING);
}

static void fail_and_close(struct client *c, uint16_t code, const char *state, const char *msg)
{
	pkt_put_err(&c->io.out, next_seq(c), code, state, msg);
	client_set_state(c, CS_CLOSING);
}

/* The one answer to a failed login, for unknown users and wrong passwords
 * alike (no user enumeration). */
static void deny(struct client *c, bool used_password)
{
	char msg[HS_USER_MAX + 128];

	snprintf(msg, sizeof(msg), "Access denied for user '%s'@'%s' (using password: %s)",
		 c->user, c->peer, used_password ? "YES" : "NO");
	fail_and_close(c, ERR_ACCESS_DENIED_ERROR, "28000", msg);
}

/*
 * The failed-login delay (authfail.h). The session is parked in
 * CS_DENIED with no upstream, where nothing reads its input, and its
 * timer (the handshake timer until now) is reused in two steps: a zero
 * timeout first, which runs after the current event handler has re-armed
 * the socket, and stops the socket watcher so that the client's further
 * bytes stay in the kernel; then the delay, after which the ERR is sent as
 * it would have been at once. Nothing blocks the worker's loop.
 */
static void deny_late(struct ev_loop *loop, ev_timer *t, bool used_password)
{
	struct client *c = t->data;

	(void)loop;
	deny(c, used_password);
	if (client_flush(c))
		client_arm(c);
}

static void on_deny_pw(struct ev_loop *l, ev_timer *t, int rev)
{
	(void)rev;
	deny_late(l, t, true);
}

static void on_deny_nopw(struct ev_loop *l, ev_timer *t, int rev)
{
	(void)rev;
	deny_late(l, t, false);
}

static void hold(struct ev_loop *loop, ev_timer *t, bool used_password)
{
	struct client *c = t->data;

	ev_io_stop(loop, &c->watcher);
	ev_timer_stop(loop, t);
	ev_set_cb(t, used_password ? on_deny_pw : on_deny_nopw);
	ev_timer_set(t, g_config.auth_failure_delay_ms / 1000.0, 0.);
	ev_timer_start(loop, t);
}

static void on_hold_pw(struct ev_loop *l, ev_timer *t, int rev)
{
	(void)rev;
	hold(l, t, true);
}

static void on_hold_nopw(struct ev_loop *l, ev_timer *t, int rev)
{
	(void)rev;
	hold(l, t, false);
}

static void access_denied(struct client *c, bool used_password)
{
	STAT_INC(auth_failures);
	log_info("access denied for user '%s' from %s", c->user, c->peer);
	if (!authfail_record(c->peer)) {
		deny(c, used_password);
		return;
	}
	STAT_INC(auth_failures_delayed);
	ev_timer_stop(c->w->loop, &c->timer);
	ev_set_cb(&c->timer, used_password ? on_hold_pw : on_hold_nopw);
	ev_timer_set(&c->timer, 0., 0.);
	ev_timer_start(c->w->loop, &c->timer);
	client_set_state(c, CS_DENIED);
}

void login_start(struct client *c)
{
	char version[160];
	uint8_t collation;
	uint32_t caps = SHOAL_SERVER_CAPS | infile_caps() | compress_caps();

	if (auth_make_nonce(c->nonce) < 0) {
		abort_login(c, "no randomness");
		return;
	}
	/* the upstream's version exactly (MariaDB's "5.5.5-" included): clients
	 * choose their SQL by it; Shoal's own is in the admin, /health, the log */
	upstream_info(version, sizeof(version), &collation);
	if (c->w->tls && g_config.tls_mode != TLS_MODE_DISABLED)
		caps |= CAP_SSL;
	/* Before a MariaDB upstream, CLIENT_MYSQL is clear, as in its greeting,
	 * and MariaDB clients are offered those of its extended capabilities
	 * that the node relays: extended column metadata (JSON, UUID, INET6,
	 * geometry type names) and bulk operations (array binding,
	 * COM_STMT_BULK_EXECUTE), where the upstream offers them */
	c->ext_caps_offered = 0;
	if (strstr(version, "MariaDB")) {
		caps &= ~CAP_LONG_PASSWORD;
		c->ext_caps_offered = upstream_ext_caps() & MCAP_RELAYED;
	}
	if (hs_put_greeting(&c->io.out, c->id, version, c->nonce, caps, collation, configured_plugin(),
			    c->ext_caps_offered) < 0) {
		abort_login(c, "out of memory");
		return;
	}
	c->seq = 1;
	client_set_state(c, CS_HANDSHAKE);
}

/* Full auth for caching_sha2: ask for the password. */
static void sha2_request_full(struct client *c)
{
	static const uint8_t perform_full = 0x04;

	hs_put_more_data(&c->io.out, next_seq(c), &perform_full, 1);
	client_set_state(c, CS_AUTH_SHA2);
}

/* The schema a login starts in: the one it asked for, else the user's
 * default_schema. A login acting upstream as the upstream_db_url user (that
 * user itself, or any login with shared_upstream_user) starts in the URL's
 * database, as with Readyset; any other starts where it would directly, in
 * none (the URL's database may not be its to use). */
static void choose_schema(struct client *c, const struct users_login *l)
{
	bool url_user = !l->is_monitor &&
			(g_config.shared_upstream_user || strcmp(c->user, g_config.upstream_user.name) == 0);

	if (c->db[0] || c->internal)
		return;  /* the node's own sessions: the schema their keys were read in, or none */
	if (l->default_schema[0])
		snprintf(c->db, sizeof(c->db), "%s", l->default_schema);
	else if (url_user)
		snprintf(c->db, sizeof(c->db), "%s", g_config.upstream_db);
}

/* Length of the utf8mb3 character at s[0..n) (1 to 3), 0 if none starts
 * there (a 4-byte sequence, a stray continuation byte, an overlong form). */
static size_t utf8mb3_char(const unsigned char *s, size_t n)
{
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xE0 && s[0] <= 0xEF && n >= 3 && (s[2] & 0xC0) == 0x80 &&
	    (s[0] == 0xE0 ? s[1] >= 0xA0 && s[1] <= 0xBF : (s[1] & 0xC0) == 0x80))
		return 3;
	return 0;
}

/* The schema asked for in the login must convert to the server's system
 * character set (utf8mb3), which the server checks before anything else:
 * utf8mb3 and utf8mb4 clients naming "test\xF0\x9F\x98\x81" (no utf8mb3
 * character), a binary one naming any byte over 0x7F, get 1300, where the
 * node's later COM_INIT_DB would get 1102 for a converted name
 * (main.mysql_not_windows). Single-byte character sets all convert; the
 * multi-byte others are left to the server. True when it does not: msg is
 * the server's error text, the bytes that do not convert as \xHH. */
static bool bad_schema_text(const struct client *c, char *msg, size_t cap)
{
	const MARIADB_CHARSET_INFO *cs = c->collation ? mariadb_get_charset_by_nr(c->collation) : NULL;
	const unsigned char *p = (const unsigned char *)c->db;
	size_t n = strlen(c->db), at, k;
	bool bad = false, binary;
	const char *name;

	if (!cs)
		return false;
	binary = strcmp(cs->csname, "binary") == 0;
	name = strcmp(cs->csname, "utf8") == 0 ? "utf8mb3" : cs->csname;
	if (!binary && strcmp(name, "utf8mb3") != 0 && strcmp(name, "utf8mb4") != 0)
		return false;
	at = (size_t)snprintf(msg, cap, "Invalid %s character string: '", name);
	for (size_t i = 0; i < n; i += k) {
		k = binary ? (p[i] < 0x80) : utf8mb3_char(p + i, n - i);
		if (k == 0) {
			bad = true;
			k = 1;
			if (at < cap)
				at += (size_t)snprintf(msg + at, cap - at, "\\x%02X", p[i]);
		} else if (at + k < cap) {
			memcpy(msg + at, p + i, k);
			at += k;
			msg[at] = 0;
		}
	}
	if (at < cap)
		snprintf(msg + at, cap - at, "'");
	return bad;
}

static void login_authenticated(struct client *c);

/* The password is right: the session gets its identity (l is consumed). */
static void succeed(struct client *c, struct users_login *l)
{
	struct ident *id = NULL;
	char msg[HS_USER_MAX + 128];
	int max = l->max_connections;

	authfail_clear(c->peer);
	c->is_monitor = l->is_monitor;
	choose_schema(c, l);
	switch (ident_create(&id, c->user, l)) {
	case IDENT_OK:
		break;
	case IDENT_TOO_MANY:
		STAT_INC(user_connections_refused);
		log_info("user '%s' from %s refused: max_connections=%d reached", c->user, c->peer, max);
		snprintf(msg, sizeof(msg), "Too many connections for user '%s' (max_connections=%d)",
			 c->user, max);
		fail_and_close(c, ERR_CON_COUNT_ERROR, "08004", msg);
		return;
	default:
		abort_login(c, "out of memory");
		return;
	}
	ident_destroy(&c->ident); /* COM_CHANGE_USER: the previous login's */
	c->ident = id;
	if (c->db[0] && bad_schema_text(c, msg, sizeof(msg))) {
		fail_and_close(c, ERR_INVALID_CHARACTER_STRING, "HY000", msg);
		return;
	}
	login_authenticated(c);
}

/* Check a token made for the configured plugin with c->nonce. */
static void check_token(struct client *c, const uint8_t *tok, size_t len)
{
	struct users_login l;
	bool known;
	static const uint8_t fast_ok = 0x03;

	if (g_config.auth_plugin == AUTH_NATIVE_PASSWORD) {
		/* the runtime user store: configured users plus the admin's */
		if (users_login_native(c->user, c->nonce, tok, len, &l))
			succeed(c, &l);
		else
			access_denied(c, len > 0);
		return;
	}
	/* caching_sha2 checks the password itself: users whose clear password
	 * the node has (the configured ones) */
	known = users_login_clear(c->user, &l);
	if (len == 0 || (len == 1 && tok[0] == 0)) {
		/* an empty password: decided at once, as MySQL's server does (the
		 * client has finished and waits for OK or ERR, not for a full
		 * authentication request) */
		if (known && (l.cred == USERS_CRED_NONE || (l.cred == USERS_CRED_CLEAR && !l.clear[0]))) {
			succeed(c, &l);
		} else {
			users_login_clear_secrets(&l);
			access_denied(c, false);
		}
		return;
	}
	if (!known || !sha2_is_cached(c->user)) {
		/* same exchange for unknown users: no enumeration */
		users_login_clear_secrets(&l);
		sha2_request_full(c);
		return;
	}
	if (auth_sha2_check(l.clear, c->nonce, tok, len)) {
		hs_put_more_data(&c->io.out, next_seq(c), &fast_ok, 1);
		succeed(c, &l);
	} else {
		users_login_clear_secrets(&l);
		access_denied(c, len > 0);
	}
}

/* A session of the node's own (core/refill.c). It comes through a socket
 * pair, never a listener, so there is no handshake to check: it acts as a
 * configured user whose clear password the node has (as a client of that
 * user would), and is refused for any other. */
void login_internal(struct client *c, struct internal_login *in)
{
	struct users_login l;
	bool known;

	c->internal = true;
	snprintf(c->peer, sizeof(c->peer), "%s", "refill");
	snprintf(c->user, sizeof(c->user), "%s", in->user);
	snprintf(c->db, sizeof(c->db), "%s", in->db);
	c->collation = in->collation;
	c->ext_caps_offered = upstream_mariadb() ? upstream_ext_caps() & MCAP_RELAYED : 0;
	c->caps = in->caps & SHOAL_SERVER_CAPS;
	if ((in->caps & CAP_X_EXT_METADATA) && (c->ext_caps_offered & MCAP_EXTENDED_METADATA))
		c->caps |= CAP_X_EXT_METADATA;
	free(in);
	c->seq = 2;
	client_set_state(c, CS_HANDSHAKE);
	known = users_login_clear(c->user, &l);
	if (!known || l.is_monitor) {
		users_login_clear_secrets(&l);
		fail_and_close(c, ERR_ACCESS_DENIED_ERROR, "28000",
			       "the refill acts only as users whose clear password the node has");
		return;
	}
	succeed(c, &l);
}

/* After a handshake response or CMD_CHANGE_USER: the plugin it used. */
static void authenticate(struct client *c, const struct hs_response *r)
{
	const char *want = configured_plugin();
	bool same = strcmp(r->plugin, want) == 0 ||
		    (r->plugin[0] == 0 && g_config.auth_plugin == AUTH_NATIVE_PASSWORD);

	snprintf(c->user, sizeof(c->user), "%s", r->user);
	if (same) {
		check_token(c, r->auth, r->auth_len);
		return;
	}
	if (!(c->caps & CAP_PLUGIN_AUTH)) {
		fail_and_close(c, ERR_NOT_SUPPORTED_AUTH_MODE, "08004",
			       "Client does not support authentication protocol requested by server");
		return;
	}
	hs_put_auth_switch(&c->io.out, next_seq(c), want, c->nonce);
	client_set_state(c, CS_AUTH_SWITCH);
}

/* Of the compression the client asked for and was offered (c->caps): zlib
 * when it has both flags, as MySQL's server chooses (its client then sends
 * the level byte all the same, unread); zstd alone needs its level byte,
 * within zstd's levels, refused as MySQL refuses it. false: refused. */
static bool choose_compression(struct client *c, const struct hs_response *r)
{
	char msg[128];

	if (c->caps & CAP_COMPRESS)
		c->caps &= ~CAP_ZSTD_COMPRESSION;
	if (!(c->caps & CAP_ZSTD_COMPRESSION))
		return true; /* zlib, or no compression: no level to read */
	if (r->zstd_level < 0) {
		STAT_INC(protocol_errors);
		fail_and_close(c, ERR_HANDSHAKE_ERROR, "08S01", "Bad handshake");
		return false; /* the flag without its byte: the response is cut short */
	}
	if (r->zstd_level < COMPRESS_ZSTD_LEVEL_MIN || r->zstd_level > COMPRESS_ZSTD_LEVEL_MAX) {
		snprintf(msg, sizeof(msg), "Invalid zstd compression level %d for algorithm 'zstd' (%d to %d)",
			 r->zstd_level, COMPRESS_ZSTD_LEVEL_MIN, COMPRESS_ZSTD_LEVEL_MAX);
		fail_and_close(c, ERR_WRONG_COMPRESSION_LEVEL_CLIENT, "HY000", msg);
		return false; /* a level zstd has not */
	}
	c->zstd_level = compress_zstd_level(r->zstd_level);
	return true;
}

static void on_handshake_response(struct client *c, const uint8_t *pl, uint32_t len)
{
	struct hs_response r;

	if (hs_is_ssl_request(pl, len)) {
		if (!c->w->tls || g_config.tls_mode == TLS_MODE_DISABLED || tls_on(c)) {
			abort_login(c, "unexpected SSL request");
			return;
		}
		c->io.ssl = SSL_new(c->w->tls);
		if (!c->io.ssl || SSL_set_fd(c->io.ssl, c->io.fd) != 1) {
			abort_login(c, "cannot start TLS");
			return;
		}
		client_set_state(c, CS_TLS_ACCEPT);
		login_tls_step(c);
		return;
	}
	if (hs_parse_response(pl, len, &r) < 0) {
		STAT_INC(protocol_errors);
		fail_and_close(c, ERR_HANDSHAKE_ERROR, "08S01", "Bad handshake");
		return;
	}
	if (g_config.tls_mode == TLS_MODE_REQUIRED && !tls_on(c)) {
		fail_and_close(c, ERR_SECURE_TRANSPORT_REQUIRED, "HY000",
			       "Connections using insecure transport are prohibited: this server requires TLS");
		return;
	}
	c->caps = r.caps & (SHOAL_SERVER_CAPS | CAP_SSL | infile_caps() | compress_caps());
	if (!choose_compression(c, &r))
		return;
	if (r.ext_caps & c->ext_caps_offered & MCAP_EXTENDED_METADATA)
		c->caps |= CAP_X_EXT_METADATA;
	if (r.ext_caps & c->ext_caps_offered & MCAP_STMT_BULK)
		c->caps |= CAP_X_BULK;
	c->collation = r.collation;
	/* no schema asked for: chosen once the user is known (choose_schema) */
	snprintf(c->db, sizeof(c->db), "%s", r.has_db ? r.db : "");
	authenticate(c, &r);
}

static void on_sha2_full(struct client *c, const uint8_t *pl, uint32_t len)
{
	struct users_login l;
	bool known, good;
	size_t pem_len;
	const char *pem;

	if (!tls_on(c) && len == 1 && pl[0] == 0x02) {
		pem = auth_rsa_public_pem(&pem_len);
		hs_put_more_data(&c->io.out, next_seq(c), pem, pem_len);
		return;
	}
	known = users_login_clear(c->user, &l);
	if (tls_on(c))
		good = known && auth_cleartext_check(l.clear, pl, len);
	else
		good = known && auth_rsa_check(l.clear, c->nonce, pl, len);
	if (!good) {
		users_login_clear_secrets(&l);
		access_denied(c, true);
		return;
	}
	sha2_remember(c->user);
	succeed(c, &l);
}

void login_packet(struct client *c, const uint8_t *pl, uint32_t len, uint8_t seq)
{
	if (seq != c->seq) {
		STAT_INC(protocol_errors);
		fail_and_close(c, ERR_NET_PACKETS_OUT_OF_ORDER, "08S01", "Got packets out of order");
		return;
	}
	c->seq = (uint8_t)(seq + 1);
	switch (c->st) {
	case CS_HANDSHAKE:
		on_handshake_response(c, pl, len);
		break;
	case CS_AUTH_SWITCH:
		check_token(c, pl, len);
		break;
	case CS_AUTH_SHA2:
		on_sha2_full(c, pl, len);
		break;
	default:
		abort_login(c, "unexpected login packet");
		break;
	}
}

void login_tls_step(struct client *c)
{
	int rc;

	ERR_clear_error();
	rc = SSL_accept(c->io.ssl);
	if (rc == 1) {
		client_set_state(c, CS_HANDSHAKE);
		return;
	}
	switch (SSL_get_error(c->io.ssl, rc)) {
	case SSL_ERROR_WANT_READ:
		c->io.ssl_want_write = false;
		return;
	case SSL_ERROR_WANT_WRITE:
		c->io.ssl_want_write = true;
		return;
	default:
		ERR_clear_error();
		STAT_INC(protocol_errors);
		abort_login(c, "TLS handshake failed");
	}
}

void login_change_user(struct client *c, const uint8_t *pl, uint32_t len)
{
	struct hs_response r;

	c->seq = 1;
	if (hs_parse_change_user(pl, len, c->caps, &r) < 0) {
		STAT_INC(protocol_errors);
		fail_and_close(c, ERR_HANDSHAKE_ERROR, "08S01", "Bad handshake");
		return;
	}
	/* the session starts again: what it held is gone, whether the new
	 * login succeeds (it starts clean) or not (the session ends) */
	client_reset_session(c);
	client_set_state(c, CS_HANDSHAKE); /* a login again, as a new one */
	if (r.collation)
		c->collation = r.collation;
	/* no schema asked for: chosen once the user is known (choose_schema) */
	snprintf(c->db, sizeof(c->db), "%s", r.has_db ? r.db : "");
	authenticate(c, &r);
}

/* ---- the login's upstream connection ---------------------------------- */

static void login_done(struct client *c)
{
	pkt_put_ok(&c->io.out, c->seq, 0, 0, ST_AUTOCOMMIT, 0, c->caps);
	/* as MariaDB and MySQL: the login's OK is sent plain, compression
	 * starts with the first command (a COM_CHANGE_USER's OK is compressed
	 * already); zstd (choose_compression) or zlib */
	if ((c->caps & (CAP_COMPRESS | CAP_ZSTD_COMPRESSION)) && !c->io.z &&
	    sbuf_compress_start(&c->io, compress_limit(g_config.max_allowed_packet), false,
				(c->caps & CAP_ZSTD_COMPRESSION) ? c->zstd_level : 0) < 0) {
		log_warn("client %u (%s): out of memory for compression", c->id, c->peer);
		client_set_state(c, CS_CLOSING);
	}
	c->login_pending = false;
	ev_timer_stop(c->w->loop, &c->timer);
}

/* The user is authenticated (succeed): the session's state from the
 * login, then its upstream connection before the OK (login_finish), or
 * the OK at once (the monitor user, an exhausted pool). */
static void login_authenticated(struct client *c)
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

/* client_process_input: a login waits for its connection's sync. false: not yet. */
bool login_finish(struct client *c)
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
