/*
 * metrics.c: the Prometheus text format writer and the node-wide metrics
 * (see metrics.h). It owns the provider table, filled at start before any
 * thread runs and only read afterwards. The node-wide values come from
 * g_stats and health, both atomics, so rendering takes no lock.
 */
#include "proto/metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/health.h"
#include "base/log.h"
#include "base/stats.h"

#ifndef SHOAL_VERSION
#define SHOAL_VERSION "unknown"
#endif

static metrics_provider providers[METRICS_MAX_PROVIDERS];
static int n_providers;

static bool name_char(char c, bool first, bool colon)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
		return true;
	if (colon && c == ':')
		return true;
	return !first && c >= '0' && c <= '9';
}

bool metrics_valid_name(const char *name)
{
	size_t i;

	if (!name || !name[0])
		return false;
	for (i = 0; name[i]; i++)
		if (!name_char(name[i], i == 0, true))
			return false;
	return true;
}

bool metrics_valid_label_name(const char *name)
{
	size_t i;

	if (!name || !name[0] || strncmp(name, "__", 2) == 0)
		return false;
	for (i = 0; name[i]; i++)
		if (!name_char(name[i], i == 0, false))
			return false;
	return true;
}

/* Length of the well-formed UTF-8 sequence at s, or 0 if it is not one.
 * Stops at a NUL (never reads past it). */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned char c = s[0], lo, hi;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		lo = c == 0xe0 ? 0xa0 : 0x80;   /* no overlong forms */
		hi = c == 0xed ? 0x9f : 0xbf;   /* no surrogates */
		if (s[1] < lo || s[1] > hi || (s[2] & 0xc0) != 0x80)
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		lo = c == 0xf0 ? 0x90 : 0x80;
		hi = c == 0xf4 ? 0x8f : 0xbf;   /* nothing above U+10FFFF */
		if (s[1] < lo || s[1] > hi || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		return 4;
	}
	return 0;
}

/* Append s with backslash and newline escaped, and, when quote is set,
 * the double quote too. Invalid UTF-8 bytes become U+FFFD. */
static int escape(struct pbuf *out, const char *s, bool quote)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *run = p;
	const char *rep;
	size_t len;

	while (*p) {
		len = utf8_seq(p);
		if (len == 0)
			rep = "\xef\xbf\xbd";
		else if (*p == '\\')
			rep = "\\\\";
		else if (*p == '\n')
			rep = "\\n";
		else if (*p == '"' && quote)
			rep = "\\\"";
		else {
			p += len;
			continue;
		}
		if (pbuf_append(out, run, (size_t)(p - run)) < 0 || pbuf_append(out, rep, strlen(rep)) < 0)
			return -1;
		p++;
		run = p;
	}
	return pbuf_append(out, run, (size_t)(p - run));
}

int metrics_escape_label_value(struct pbuf *out, const char *v)
{
	return escape(out, v ? v : "", true);
}

int metrics_escape_help(struct pbuf *out, const char *s)
{
	return escape(out, s ? s : "", false);
}

int metrics_format_double(double v, char *buf, size_t n)
{
	const char *special = NULL;
	int prec, len = -1;

	if (isnan(v))
		special = "NaN";
	else if (isinf(v))
		special = v > 0 ? "+Inf" : "-Inf";
	if (special) {
		len = snprintf(buf, n, "%s", special);
		return len >= 0 && (size_t)len < n ? 0 : -1;
	}
	for (prec = 15; prec <= 17; prec++) {
		len = snprintf(buf, n, "%.*g", prec, v);
		if (len < 0 || (size_t)len >= n)
			return -1;
		if (strtod(buf, NULL) == v)
			break;
	}
	return 0;
}

static int append_str(struct pbuf *out, const char *s)
{
	return pbuf_append(out, s, strlen(s));
}

int metrics_family(struct pbuf *out, const char *name, const char *type, const char *help)
{
	static const char *const types[] = { "counter", "gauge", "histogram", "summary", "untyped" };
	size_t i, start = out->len;
	bool known = false;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (type && strcmp(type, types[i]) == 0)
			known = true;
	if (!known || !metrics_valid_name(name))
		return -1;
	if (append_str(out, "# HELP ") < 0 || append_str(out, name) < 0 ||
	    append_str(out, " ") < 0 || metrics_escape_help(out, help) < 0 ||
	    append_str(out, "\n# TYPE ") < 0 || append_str(out, name) < 0 ||
	    append_str(out, " ") < 0 || append_str(out, type) < 0 || append_str(out, "\n") < 0) {
		out->len = start;
		return -1;
	}
	return 0;
}

/* "name{labels} value\n" with value already formatted. */
static int sample_line(struct pbuf *out, const char *name, const struct metrics_label *labels,
		       size_t n_labels, const char *value)
{
	size_t i, start = out->len;

	if (!metrics_valid_name(name))
		return -1;
	for (i = 0; i < n_labels; i++)
		if (!metrics_valid_label_name(labels[i].name))
			return -1;
	if (append_str(out, name) < 0)
		goto fail;
	for (i = 0; i < n_labels; i++) {
		if (append_str(out, i == 0 ? "{" : ",") < 0 || append_str(out, labels[i].name) < 0 ||
		    append_str(out, "=\"") < 0 || metrics_escape_label_value(out, labels[i].value) < 0 ||
		    append_str(out, "\"") < 0)
			goto fail;
	}
	if ((n_labels > 0 && append_str(out, "}") < 0) || append_str(out, " ") < 0 ||
	    append_str(out, value) < 0 || append_str(out, "\n") < 0)
		goto fail;
	return 0;
fail:
	out->len = start;
	return -1;
}

int metrics_sample(struct pbuf *out, const char *name, const struct metrics_label *labels,
		   size_t n_labels, double value)
{
	char num[64];

	if (metrics_format_double(value, num, sizeof(num)) < 0)
		return -1;
	return sample_line(out, name, labels, n_labels, num);
}

int metrics_sample_u64(struct pbuf *out, const char *name, const struct metrics_label *labels,
		       size_t n_labels, uint64_t value)
{
	char num[32];

	snprintf(num, sizeof(num), "%" PRIu64, value);
	return sample_line(out, name, labels, n_labels, num);
}

void metrics_register_provider(metrics_provider p)
{
	if (!p)
		return;
	if (n_providers >= METRICS_MAX_PROVIDERS) {
		log_error("metrics: more than %d providers; one is ignored", METRICS_MAX_PROVIDERS);
		return;
	}
	providers[n_providers++] = p;
}

void metrics_clear_providers(void)
{
	n_providers = 0;
}

/* The families that are one unlabelled sample of a g_stats field. */
struct stat_family {
	const char *name;
	const char *type;
	const char *help;
	const atomic_uint_fast64_t *field;
};

static const struct stat_family stat_families[] = {
	{ "shoal_client_connections", "gauge", "Client connections open now.",
	  &g_stats.client_connections },
	{ "shoal_client_connections_created_total", "counter", "Client connections accepted.",
	  &g_stats.client_connections_created },
	{ "shoal_client_connections_aborted_total", "counter",
	  "Client connections closed before login finished, or on an error.",
	  &g_stats.client_connections_aborted },
	{ "shoal_client_connections_refused_total", "counter",
	  "Client connections refused over max_client_connections, or while the upstream is down "
	  "(shun).",
	  &g_stats.client_connections_refused },
	{ "shoal_auth_failures_total", "counter", "Client logins refused (wrong user or password).",
	  &g_stats.auth_failures },
	{ "shoal_auth_failures_delayed_total", "counter",
	  "Failed client logins answered after auth_failure_delay_ms (repeated failures from one "
	  "address).",
	  &g_stats.auth_failures_delayed },
	{ "shoal_user_connections_refused_total", "counter",
	  "Client logins refused because their user had max_connections sessions open.",
	  &g_stats.user_connections_refused },
	{ "shoal_user_sessions_revoked_total", "counter",
	  "Client sessions ended because their user was removed or deactivated.",
	  &g_stats.user_sessions_revoked },
	{ "shoal_client_idle_timeouts_total", "counter",
	  "Client sessions closed after client_idle_timeout_ms without a command.",
	  &g_stats.client_idle_timeouts },
	{ "shoal_admin_connections_refused_total", "counter",
	  "Admin connections refused over admin_max_connections.",
	  &g_stats.admin_connections_refused },
	{ "shoal_admin_auth_failures_total", "counter",
	  "Admin logins refused (wrong user or password, or the default credentials off "
	  "loopback).",
	  &g_stats.admin_auth_failures },
	{ "shoal_upstream_connections", "gauge", "Upstream connections open now.",
	  &g_stats.upstream_connections },
	{ "shoal_upstream_connect_errors_total", "counter", "Upstream connection attempts that failed.",
	  &g_stats.upstream_connect_errors },
	{ "shoal_upstream_pool_idle", "gauge", "Pooled upstream connections idle now.",
	  &g_stats.upstream_idle },
	{ "shoal_upstream_connections_peak", "gauge",
	  "Most upstream connections open at once since the node started.",
	  &g_stats.upstream_connections_peak },
	{ "shoal_upstream_pool_borrows_total", "counter",
	  "Upstream connections lent to sessions for a command.", &g_stats.upstream_borrows },
	{ "shoal_upstream_pool_waits_total", "counter",
	  "Sessions that waited for a free upstream connection.", &g_stats.upstream_waits },
	{ "shoal_upstream_pool_wait_timeouts_total", "counter",
	  "Sessions that gave up waiting for an upstream connection (error 1040).",
	  &g_stats.upstream_wait_timeouts },
	{ "shoal_upstream_retries_total", "counter",
	  "Commands sent again on a new connection after a pooled one turned out broken.",
	  &g_stats.upstream_retries },
	{ "shoal_upstream_pinned_sessions", "gauge",
	  "Sessions holding an upstream connection between commands (transaction, locks, ...).",
	  &g_stats.upstream_pinned },
	{ "shoal_upstream_state_syncs_total", "counter",
	  "Times a borrowed connection had to be brought to a session's state first.",
	  &g_stats.upstream_syncs },
	{ "shoal_prepares_local_total", "counter",
	  "COM_STMT_PREPAREs the node answered itself (binlog mode: the upstream's earlier answer, "
	  "still exact).", &g_stats.prepares_local },
	{ "shoal_prepares_upstream_total", "counter",
	  "Statements prepared upstream: a client's COM_STMT_PREPARE, or one an execute needed on "
	  "the connection it ran on.", &g_stats.prepares_upstream },
	{ "shoal_prepare_answers", "gauge",
	  "Upstream PREPARE answers the node keeps to give again (binlog mode).",
	  &g_stats.prepare_answers },
	{ "shoal_protocol_errors_total", "counter", "Malformed client input.",
	  &g_stats.protocol_errors },
	{ "shoal_session_state_refused_total", "counter",
	  "Session state moves the state table refused; each closed its session (a defect).",
	  &g_stats.session_state_refused },
	{ "shoal_compressed_sessions_total", "counter",
	  "Client sessions that negotiated protocol compression.", &g_stats.compressed_sessions },
	{ "shoal_compressed_frames_in_total", "counter",
	  "Compressed-protocol frames read from clients.", &g_stats.compressed_frames_in },
	{ "shoal_compressed_frames_out_total", "counter",
	  "Compressed-protocol frames sent to clients.", &g_stats.compressed_frames_out },
	{ "shoal_compressed_plain_bytes_out_total", "counter",
	  "Bytes sent to compressed sessions, before compression.", &g_stats.compressed_plain_out },
	{ "shoal_compressed_wire_bytes_out_total", "counter",
	  "Bytes sent to compressed sessions, as framed (headers included).", &g_stats.compressed_wire_out },
};

static int render_stats(struct pbuf *out)
{
	const struct stat_family *f;
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(stat_families) / sizeof(stat_families[0]); i++) {
		f = &stat_families[i];
		v = atomic_load_explicit(f->field, memory_order_relaxed);
		/* A gauge read between another thread's inc and dec may wrap. */
		if (strcmp(f->type, "gauge") == 0 && v > (uint64_t)INT64_MAX)
			v = 0;
		if (metrics_family(out, f->name, f->type, f->help) < 0 ||
		    metrics_sample_u64(out, f->name, NULL, 0, v) < 0)
			return -1;
	}
	return 0;
}

static int render_node(struct pbuf *out)
{
	static const struct metrics_label upstream[] = { { "destination", "upstream" } };
	static const struct metrics_label cache[] = { { "destination", "cache" } };
	static const struct metrics_label version[] = { { "version", SHOAL_VERSION } };

	if (metrics_family(out, "shoal_queries_total", "counter",
			   "Client commands, by where they were answered from.") < 0 ||
	    metrics_sample_u64(out, "shoal_queries_total", upstream, 1, STAT_GET(queries)) < 0 ||
	    metrics_sample_u64(out, "shoal_queries_total", cache, 1, STAT_GET(cache_hits)) < 0)
		return -1;
	if (metrics_family(out, "shoal_upstream_up", "gauge",
			   "1 unless the last upstream connection attempt failed.") < 0 ||
	    metrics_sample_u64(out, "shoal_upstream_up", NULL, 0, health_upstream_up() ? 1 : 0) < 0)
		return -1;
	if (metrics_family(out, "shoal_draining", "gauge",
			   "1 while the node drains (after SIGTERM or SIGINT).") < 0 ||
	    metrics_sample_u64(out, "shoal_draining", NULL, 0, health_draining() ? 1 : 0) < 0)
		return -1;
	if (metrics_family(out, "shoal_up", "gauge", "1: the node is running.") < 0 ||
	    metrics_sample_u64(out, "shoal_up", NULL, 0, 1) < 0)
		return -1;
	if (metrics_family(out, "shoal_build_info", "gauge", "Always 1; the version as a label.") < 0 ||
	    metrics_sample_u64(out, "shoal_build_info", version, 1, 1) < 0)
		return -1;
	return 0;
}

int metrics_render(struct pbuf *out)
{
	int i;

	if (render_stats(out) < 0 || render_node(out) < 0)
		return -1;
	for (i = 0; i < n_providers; i++)
		if (providers[i](out) < 0)
			return -1;
	return 0;
}
