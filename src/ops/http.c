/*
 * http.c: the HTTP endpoint (see http.h). It owns the libmicrohttpd daemon,
 * whose one internal thread accepts and answers every request, and the
 * /health threshold. Routes: /metrics, /health, /ready, and the status
 * page: / (and /status), /status.json (status.c; guarded by
 * http_access.c); GET and HEAD only (libmicrohttpd leaves the body out for
 * HEAD). Bodies are built from g_stats, health, metrics providers and the
 * status renderer: no secret (password, upstream URL) is ever written into
 * a response.
 */
#include "ops/http.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include "cache/binlog.h"
#include "cache/inval.h"
#include "cache/snapshot.h"
#include "cache/warm.h"
#include "config/config.h"
#include "base/health.h"
#include "base/hex.h"
#include "core/listener.h"
#include "base/log.h"
#include "proto/metrics.h"
#include "proto/packet.h"
#include "base/stats.h"
#include "upstream/upstream.h"
#include "ops/http_access.h"
#include "ops/status.h"
#include "ops/status_page.h"

#ifndef SHOAL_VERSION
#define SHOAL_VERSION "unknown"
#endif

#define CT_TEXT "text/plain; charset=utf-8"
#define CT_METRICS "text/plain; version=0.0.4; charset=utf-8"
#define CT_JSON "application/json"
#define CT_HTML "text/html; charset=utf-8"

static struct MHD_Daemon *daemon_;
static atomic_int down_after_ms = HTTP_DEFAULT_DOWN_AFTER_MS;
static atomic_bool starting; /* libmicrohttpd messages are errors only while starting */

void http_set_down_after_ms(int ms)
{
	atomic_store(&down_after_ms, ms < 0 ? 0 : ms);
}

/* Headers some answers add to Content-Type and Cache-Control: name and
 * value pairs, ended by a NULL name. */
static const char *const allow_headers[] = { MHD_HTTP_HEADER_ALLOW, "GET, HEAD", NULL };
static const char *const auth_headers[] = {
	MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Basic realm=\"shoal\", charset=\"UTF-8\"", NULL
};
static const char *const page_headers[] = {
	"Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; "
	"style-src 'unsafe-inline'; connect-src 'self'; img-src data:; frame-ancestors 'none'",
	"X-Content-Type-Options", "nosniff", NULL
};

/* Queue a response with a copy of body and the extra headers (may be NULL). */
static enum MHD_Result reply_with(struct MHD_Connection *c, unsigned int status, const char *ctype,
				  const char *body, size_t len, const char *const *extra)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	bool ok;

	r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	ok = MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype) == MHD_YES &&
	     MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store") == MHD_YES;
	for (; ok && extra && extra[0]; extra += 2)
		ok = MHD_add_response_header(r, extra[0], extra[1]) == MHD_YES;
	ret = ok ? MHD_queue_response(c, status, r) : MHD_NO;
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, const char *ctype,
			     const char *body, size_t len)
{
	return reply_with(c, status, ctype, body, len, NULL);
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int status, const char *text)
{
	return reply(c, status, CT_TEXT, text, strlen(text));
}

static enum MHD_Result serve_metrics(struct MHD_Connection *c)
{
	struct pbuf b = { 0 };
	enum MHD_Result ret;

	if (metrics_render(&b) < 0) {
		pbuf_free(&b);
		log_warn("http: cannot render /metrics");
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error\n");
	}
	ret = reply(c, MHD_HTTP_OK, CT_METRICS, (const char *)b.data, b.len);
	pbuf_free(&b);
	return ret;
}

static enum MHD_Result serve_health(struct MHD_Connection *c)
{
	char why[32];
	bool serving = health_serving(atomic_load(&down_after_ms), why, sizeof(why));
	double down = (double)(int64_t)(health_upstream_down_seconds() * 1000.0 + 0.5) / 1000.0;
	uint64_t conns = STAT_GET(client_connections);
	struct binlog_status bl;
	struct warm_status warm;
	enum MHD_Result ret;
	char up_version[160];
	uint8_t collation;
	json_t *o;
	char *s;

	if (conns > (uint64_t)INT64_MAX) /* a racing inc/dec pair may wrap */
		conns = 0;
	binlog_get_status(&bl);
	warm_status(&warm);
	upstream_info(up_version, sizeof(up_version), &collation);
	o = json_pack("{s:s, s:s, s:s, s:s, s:f, s:b, s:I, s:s, s:b, s:s, s:f, s:s, s:I, s:b, s:s, s:I, s:I}",
		      "status", why,
		      "version", SHOAL_VERSION, "upstream_version", up_version,
		      "upstream", health_upstream_up() ? "up" : "down",
		      "upstream_down_seconds", down, "draining", (int)health_draining(),
		      "client_connections", (json_int_t)conns,
		      "invalidation", inval_mode_name(inval_mode()), "cache_serving", (int)inval_serving(),
		      "binlog", binlog_state_name(bl.state), "binlog_lag_seconds", bl.lag_seconds,
		      "warm", warm_state_name(warm.state), "warm_entries_kept", (json_int_t)warm.kept,
		      "warming", (int)warm_warming(&warm), "warm_refill", warm_refill_name(warm.refill),
		      "warm_refill_keys", (json_int_t)warm.refill_total,
		      "warm_refill_keys_done", (json_int_t)(warm.refill_done + warm.refill_present));
	s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)) : NULL;
	json_decref(o);
	if (!s)
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error\n");
	ret = reply(c, serving ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, CT_JSON, s, strlen(s));
	free(s);
	return ret;
}

static enum MHD_Result serve_ready(struct MHD_Connection *c)
{
	char why[32], body[64];

	if (health_serving(atomic_load(&down_after_ms), why, sizeof(why)))
		return reply_text(c, MHD_HTTP_OK, "ready\n");
	snprintf(body, sizeof(body), "not ready: %s\n", why);
	return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, body);
}

/* The status page and /status.json: from loopback, or with the admin
 * login (http_access.h). */
static bool may_see_status(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	if (ci && http_peer_is_loopback(ci->client_addr))
		return true;
	return http_basic_auth_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
								MHD_HTTP_HEADER_AUTHORIZATION));
}

static enum MHD_Result serve_page(struct MHD_Connection *c)
{
	return reply_with(c, MHD_HTTP_OK, CT_HTML, status_page_html, status_page_html_len, page_headers);
}

static enum MHD_Result serve_status_json(struct MHD_Connection *c)
{
	char why[32];
	enum MHD_Result ret;
	char *s;

	health_serving(atomic_load(&down_after_ms), why, sizeof(why));
	s = status_render_json(why);
	if (!s)
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error\n");
	ret = reply(c, MHD_HTTP_OK, CT_JSON, s, strlen(s));
	free(s);
	return ret;
}

/* GET /snapshot (snapshot_serve): the cache's snapshot for a peer's
 * --warm-from, written into an anonymous memory file (never to disk) and
 * sent from it (docs/operations.md, "Warm joins"). */
static enum MHD_Result serve_snapshot(struct MHD_Connection *c)
{
	struct snapshot_stats st;
	struct timespec now;
	struct MHD_Response *r;
	enum MHD_Result ret = MHD_NO;
	char err[512], entries[24];
	int fd, rc;
	off_t size;
	FILE *f;

	if (!g_config.snapshot_serve)
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found: snapshot_serve is off\n");
	fd = memfd_create("shoal-snapshot", MFD_CLOEXEC);
	f = fd >= 0 ? fdopen(dup(fd), "wb") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		log_warn("http: cannot make the snapshot's memory file: %s", strerror(errno));
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error\n");
	}
	clock_gettime(CLOCK_REALTIME, &now);
	rc = snapshot_write_stream(f, (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000,
				   g_config.snapshot_write_timeout_ms, &st, err, sizeof err);
	if (fclose(f) != 0 && rc == 0)
		snprintf(err, sizeof err, "%s", strerror(errno)), rc = -1;
	size = lseek(fd, 0, SEEK_END);
	if (rc != 0 || size < 0) {
		close(fd);
		log_warn("http: the cache snapshot for a peer could not be made: %s", err);
		return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "the snapshot could not be made\n");
	}
	r = MHD_create_response_from_fd((uint64_t)size, fd); /* takes fd */
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	snprintf(entries, sizeof entries, "%" PRIu64, st.entries);
	if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream") == MHD_YES &&
	    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store") == MHD_YES &&
	    MHD_add_response_header(r, "X-Shoal-Snapshot-Entries", entries) == MHD_YES)
		ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	log_info("http: the cache snapshot sent to a peer: %" PRIu64 " entries, %lld bytes, made in %.3f s",
		 st.entries, (long long)size, st.seconds);
	return ret;
}

/* Who may ask for a path: anyone; the status page's rule (loopback, or the
 * admin login: http_access.h); the admin login only, from anywhere. */
enum guard { GUARD_NONE, GUARD_STATUS, GUARD_ADMIN };

/* The one list of paths: what answers each, and who may ask. */
static const struct route {
	const char *path;
	enum MHD_Result (*serve)(struct MHD_Connection *c);
	enum guard guard;
} routes[] = {
	{ "/metrics", serve_metrics, GUARD_NONE },
	{ "/health", serve_health, GUARD_NONE },
	{ "/ready", serve_ready, GUARD_NONE },
	{ "/", serve_page, GUARD_STATUS },
	{ "/status", serve_page, GUARD_STATUS },
	{ "/status.json", serve_status_json, GUARD_STATUS },
	{ "/snapshot", serve_snapshot, GUARD_ADMIN },
};

/* May c ask for r? */
static bool allowed(struct MHD_Connection *c, const struct route *r)
{
	switch (r->guard) {
	case GUARD_STATUS:
		return may_see_status(c);
	case GUARD_ADMIN:
		return http_basic_auth_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
								      MHD_HTTP_HEADER_AUTHORIZATION));
	default:
		return true;
	}
}

static const struct route *route_of(const char *url)
{
	for (size_t i = 0; url && i < sizeof(routes) / sizeof(routes[0]); i++)
		if (strcmp(url, routes[i].path) == 0)
			return &routes[i];
	return NULL;
}

/* Called first when a request's headers are in, then for each piece of its
 * body, then once more at its end. A refusal (404, 405) is queued on the
 * first call: libmicrohttpd then answers without reading any body and
 * closes. A GET or HEAD of a known path is answered on the last call, so
 * that the connection can be kept alive; any body it has is dropped. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	const struct route *r = route_of(url);
	static const char not_allowed[] = "method not allowed\n";

	if (!r)
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
	if (!method || (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
			strcmp(method, MHD_HTTP_METHOD_HEAD) != 0))
		return reply_with(c, MHD_HTTP_METHOD_NOT_ALLOWED, CT_TEXT, not_allowed,
				  sizeof(not_allowed) - 1, allow_headers);
	if (*req_cls == NULL) {
		*req_cls = c; /* any non-NULL marker: headers seen */
		return MHD_YES;
	}
	if (*upload_data_size != 0) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (!allowed(c, r)) {
		static const char refused[] = "the status page needs the admin login\n";
		static const char refused_snap[] = "the snapshot needs the admin login (not the default "
						   "admin/admin)\n";
		bool snap = r->guard == GUARD_ADMIN;

		return reply_with(c, MHD_HTTP_UNAUTHORIZED, CT_TEXT, snap ? refused_snap : refused,
				  snap ? sizeof(refused_snap) - 1 : sizeof(refused) - 1, auth_headers);
	}
	return r->serve(c);
}

/* Percent-decoding of the path and arguments, as libmicrohttpd's own but
 * for %00, which stays as it is: a decoded NUL would cut "/%00/x" down to
 * "/" and route it to the status page. Returns the new length. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	char *out = s;

	(void)cls;
	(void)c;
	for (char *in = s; *in; in++) {
		int hi = in[0] == '%' ? hex_value(in[1]) : -1, lo = hi >= 0 ? hex_value(in[2]) : -1;

		if (lo >= 0 && (hi | lo) != 0) {
			*out++ = (char)(hi * 16 + lo);
			in += 2;
		} else {
			*out++ = *in;
		}
	}
	*out = '\0';
	return (size_t)(out - s);
}

/* libmicrohttpd's messages are mostly about bad clients: debug level, but
 * errors while the daemon starts. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	if (atomic_load(&starting))
		log_error("http: %s", msg);
	else
		log_debug("http: %s", msg);
}

/* Start the daemon on fd with every signal blocked, so that its thread
 * (which inherits the mask) never takes the node's signals. */
static struct MHD_Daemon *start_daemon(int fd, unsigned int flags)
{
	struct MHD_Daemon *d;
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	rc = pthread_sigmask(SIG_BLOCK, &all, &old);
	if (rc != 0) {
		log_error("http: pthread_sigmask: %s", strerror(rc));
		return NULL;
	}
	atomic_store(&starting, true);
	d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, NULL,
			     MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
			     MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
			     MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)64,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
			     MHD_OPTION_END);
	atomic_store(&starting, false);
	rc = pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		log_error("http: pthread_sigmask: %s", strerror(rc));
	return d;
}

int http_start(const struct shoal_addr *addr, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	int fd;

	if (addr->port == 0)
		return 0;
	if (daemon_) {
		snprintf(err, errlen, "the HTTP endpoint is already running");
		return -1;
	}
	fd = listen_socket(addr, err, errlen);
	if (fd < 0)
		return -1;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		snprintf(err, errlen, "getsockname: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	daemon_ = start_daemon(fd, flags);
	if (!daemon_) {
		snprintf(err, errlen, "cannot start the HTTP server on %s:%u", addr->host, addr->port);
		close(fd);
		return -1;
	}
	log_info("metrics and health on http://%s%s%s:%u/", strchr(addr->host, ':') ? "[" : "",
		 addr->host, strchr(addr->host, ':') ? "]" : "", addr->port);
	return 0;
}

void http_stop(void)
{
	if (!daemon_)
		return;
	MHD_stop_daemon(daemon_);
	daemon_ = NULL;
}
