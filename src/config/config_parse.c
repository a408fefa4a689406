/*
 * config_parse.c: owns the parsers of the settings that are addresses and
 * URLs (see config_parse.h): host:port lists' items, mysql:// URLs and
 * their redaction, the ProxySQL admin list and the node's address, and the
 * error and copy helpers of every setting parser.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "config/config_parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/hex.h"

int config_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int config_copy(char *dst, size_t dstsize, const char *src, size_t len)
{
	if (len >= dstsize)
		return -1;
	memcpy(dst, src, len);
	dst[len] = '\0';
	return 0;
}

void config_redact_url(const char *url, char *out, size_t outlen)
{
	const char *start, *at, *colon;
	size_t keep;

	if (!out || outlen == 0)
		return;
	out[0] = '\0';
	if (!url)
		return;
	start = strstr(url, "://");
	start = start ? start + 3 : url;
	at = strrchr(start, '@');
	colon = at ? memchr(start, ':', (size_t)(at - start)) : NULL;
	if (!colon) {
		snprintf(out, outlen, "%s", url);
		return;
	}
	keep = (size_t)(colon + 1 - url);
	if (keep >= outlen)
		keep = outlen - 1;
	memcpy(out, url, keep);
	out[keep] = '\0';
	snprintf(out + keep, outlen - keep, "***%s", at);
}

static int parse_port(const char *s, size_t len, uint16_t *out, char *err, size_t errlen)
{
	unsigned long v = 0;

	if (len == 0)
		return config_fail(err, errlen, "missing port number");
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return config_fail(err, errlen, "port is not a number");
		if (v <= 65535)
			v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > 65535)
		return config_fail(err, errlen, "port out of range 0..65535");
	*out = (uint16_t)v;
	return 0;
}

static bool valid_host(const char *h, size_t len, bool bracketed)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)h[i];

		if (isalnum(c) || c == '.' || c == '-' || c == '_')
			continue;
		if (bracketed && (c == ':' || c == '%'))
			continue;
		return false;
	}
	return true;
}

/* Split "host:port" or "[v6]:port" (s[0..len)). defport 0: the port is
 * required; otherwise it is used when the port is absent. */
static int split_hostport(const char *s, size_t len, char *host, size_t hostsize,
			  uint16_t *port, uint16_t defport, char *err, size_t errlen)
{
	const char *h = s, *p = NULL;
	size_t hlen, plen = 0;
	bool br = len > 0 && s[0] == '[';

	if (br) {
		const char *rb = memchr(s, ']', len);
		size_t rest;

		if (!rb)
			return config_fail(err, errlen, "missing ']' after IPv6 address");
		h = s + 1;
		hlen = (size_t)(rb - h);
		rest = len - (size_t)(rb + 1 - s);
		if (rest > 0 && rb[1] != ':')
			return config_fail(err, errlen, "unexpected text after ']'");
		if (rest > 0) {
			p = rb + 2;
			plen = rest - 1;
		}
	} else {
		const char *colon = memchr(s, ':', len);

		hlen = colon ? (size_t)(colon - s) : len;
		if (colon) {
			p = colon + 1;
			plen = len - hlen - 1;
			if (memchr(p, ':', plen))
				return config_fail(err, errlen, "an IPv6 address must be in brackets, e.g. [::1]:3306");
		}
	}
	if (hlen == 0)
		return config_fail(err, errlen, "missing host");
	if (!valid_host(h, hlen, br))
		return config_fail(err, errlen, "bad character in host");
	if (config_copy(host, hostsize, h, hlen))
		return config_fail(err, errlen, "host too long (max %zu bytes)", hostsize - 1);
	if (!p && defport == 0)
		return config_fail(err, errlen, "missing port (expected host:port)");
	*port = defport;
	return p ? parse_port(p, plen, port, err, errlen) : 0;
}

int config_parse_addr_len(const char *s, size_t len, struct shoal_addr *out, char *err, size_t errlen)
{
	struct shoal_addr a;

	memset(&a, 0, sizeof a);
	if (split_hostport(s, len, a.host, sizeof a.host, &a.port, 0, err, errlen))
		return -1;
	*out = a;
	return 0;
}

int config_parse_addr(const char *s, struct shoal_addr *out)
{
	if (!s || !out)
		return -1;
	return config_parse_addr_len(s, strlen(s), out, NULL, 0);
}

/* Percent-decode s[0..len) into out. what names the part in messages; the
 * messages never quote the text itself (it may be a password). */
static int pct_decode(const char *s, size_t len, char *out, size_t outsize, const char *what,
		      char *err, size_t errlen)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)s[i];

		if (c == '%') {
			int hi = i + 2 < len ? hex_value(s[i + 1]) : -1;
			int lo = i + 2 < len ? hex_value(s[i + 2]) : -1;

			if (hi < 0 || lo < 0)
				return config_fail(err, errlen, "bad percent-encoding in %s", what);
			c = hi * 16 + lo;
			if (c == 0)
				return config_fail(err, errlen, "%%00 is not allowed in %s", what);
			i += 2;
		}
		if (o + 1 >= outsize)
			return config_fail(err, errlen, "%s too long (max %zu bytes)", what, outsize - 1);
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

static int url_userinfo(const char *s, size_t len, struct shoal_mysql_url *u, char *err, size_t errlen)
{
	const char *colon = memchr(s, ':', len);
	size_t ulen = colon ? (size_t)(colon - s) : len;

	if (ulen == 0)
		return config_fail(err, errlen, "missing user name");
	if (pct_decode(s, ulen, u->user.name, sizeof u->user.name, "user name", err, errlen))
		return -1;
	if (colon && pct_decode(colon + 1, len - ulen - 1, u->user.password,
				sizeof u->user.password, "password", err, errlen))
		return -1;
	return 0;
}

int config_parse_mysql_url(const char *url, size_t len, uint16_t default_port, struct shoal_mysql_url *u,
			   char *err, size_t errlen)
{
	static const char scheme[] = "mysql://";
	const char *rest, *at, *hp, *slash, *end = url + len;

	memset(u, 0, sizeof *u);
	if (len == 0)
		return config_fail(err, errlen, "empty URL");
	if (len < sizeof scheme - 1 || strncasecmp(url, scheme, sizeof scheme - 1) != 0)
		return config_fail(err, errlen, "the scheme must be mysql://");
	rest = url + sizeof scheme - 1;
	at = NULL; /* the last '@': an unencoded '@' in a password still works */
	for (const char *p = rest; p < end; p++)
		if (*p == '@')
			at = p;
	if (!at)
		return config_fail(err, errlen, "missing user (expected mysql://user:pass@host:port/db)");
	if (url_userinfo(rest, (size_t)(at - rest), u, err, errlen))
		return -1;
	hp = at + 1;
	for (const char *p = hp; p < end; p++)
		if (*p == '?' || *p == '#')
			return config_fail(err, errlen, "URL parameters (?...) are not supported");
	slash = memchr(hp, '/', (size_t)(end - hp));
	if (split_hostport(hp, (size_t)((slash ? slash : end) - hp), u->host, sizeof u->host,
			   &u->port, default_port, err, errlen))
		return -1;
	if (u->port == 0)
		return config_fail(err, errlen, "port out of range 1..65535");
	if (slash && memchr(slash + 1, '/', (size_t)(end - slash - 1)))
		return config_fail(err, errlen, "'/' in database name");
	if (slash && pct_decode(slash + 1, (size_t)(end - slash - 1), u->db, sizeof u->db, "database name",
				err, errlen))
		return -1;
	return 0;
}

int config_parse_upstream_url(struct shoal_config *cfg, const char *url, char *err, size_t errlen)
{
	struct shoal_mysql_url u;
	size_t len;

	if (!url || !*url)
		return config_fail(err, errlen, "empty URL");
	len = strlen(url);
	if (len >= sizeof cfg->upstream_url)
		return config_fail(err, errlen, "URL too long (max %zu bytes)", sizeof cfg->upstream_url - 1);
	if (config_parse_mysql_url(url, len, DEFAULT_UPSTREAM_PORT, &u, err, errlen))
		return -1;
	memcpy(cfg->upstream_url, url, len + 1);
	cfg->upstream_user = u.user;
	memcpy(cfg->upstream_host, u.host, sizeof cfg->upstream_host);
	cfg->upstream_port = u.port;
	memcpy(cfg->upstream_db, u.db, sizeof cfg->upstream_db);
	return 0;
}

int config_parse_proxysql_admin(const char *list, struct shoal_mysql_url *out, int max, char *err,
				size_t errlen)
{
	struct shoal_mysql_url tmp;
	const char *p = list ? list : "";
	int n = 0;

	while (*p) {
		const char *e = strchr(p, ',');
		const char *b = p, *end = e ? e : p + strlen(p);

		p = e ? e + 1 : end;
		while (b < end && isspace((unsigned char)*b))
			b++;
		while (end > b && isspace((unsigned char)end[-1]))
			end--;
		if (b == end)
			continue;
		if (n >= max) {
			snprintf(err, errlen, "more than %d admin URLs", max);
			return -1;
		}
		if (config_parse_mysql_url(b, (size_t)(end - b), PROXYSQL_ADMIN_DEFAULT_PORT, &tmp, err, errlen) < 0)
			return -1;
		if (!config_sql_host_ok(tmp.host)) {
			snprintf(err, errlen, "bad host name in an admin URL");
			return -1;
		}
		if (out)
			out[n] = tmp;
		n++;
	}
	return n;
}

bool config_sql_host_ok(const char *host)
{
	if (!*host)
		return false;
	for (const char *c = host; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr(".-_:%", *c))
			return false;
	return true;
}

static bool wildcard(const char *host)
{
	return !*host || strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0 ||
	       strcmp(host, "[::]") == 0;
}

int config_node_address(const struct shoal_config *cfg, char *host, size_t hostlen, uint16_t *port,
			char *err, size_t errlen)
{
	struct shoal_addr a;

	if (cfg->proxysql_node_address[0]) {
		if (config_parse_addr(cfg->proxysql_node_address, &a) < 0 || a.port == 0) {
			snprintf(err, errlen, "proxysql_node_address must be host:port");
			return -1;
		}
	} else {
		a = cfg->listen[0];
		if (wildcard(a.host) && gethostname(a.host, sizeof a.host) < 0) {
			snprintf(err, errlen, "gethostname: %s", strerror(errno));
			return -1;
		}
		a.host[sizeof a.host - 1] = '\0';
	}
	if (!config_sql_host_ok(a.host)) {
		snprintf(err, errlen, "'%s' is not a host name ProxySQL can hold", a.host);
		return -1;
	}
	snprintf(host, hostlen, "%s", a.host);
	*port = a.port;
	return 0;
}
