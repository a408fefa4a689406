/*
 * config.c: the agent's settings table (flag, environment variable, config
 * file key, default, check) and the parsers for ProxySQL admin DSNs and node
 * addresses. Precedence: defaults < config file < environment < flags.
 */
#include "ha/config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ha/util.h"

enum type { T_STR, T_INT, T_BOOL };

struct setting {
	const char *key;
	enum type type;
	size_t off, size;
	long long min, max;
	const char *def, *metavar, *help;
};

#define S(k, sz, d, mv, h) { #k, T_STR, offsetof(struct ha_config, k), sz, 0, 0, d, mv, h }
#define I(k, lo, hi, d, mv, h) { #k, T_INT, offsetof(struct ha_config, k), 0, lo, hi, d, mv, h }
#define B(k, d, h) { #k, T_BOOL, offsetof(struct ha_config, k), 0, 0, 0, d, NULL, h }

static const struct setting settings[] = {
	S(proxysql_admin, 2048, "mysql://admin:admin@127.0.0.1:6032", "DSN[,DSN...]",
	  "ProxySQL admin logins, mysql://user:password@host:port (port 6032 if left out; user and "
	  "password may be percent-encoded). Several for a cluster: the first reachable one is used."),
	S(nodes_spec, 4096, "", "HOST[:DATA[:HTTP[:ADMIN]]][,...]",
	  "The Shoal nodes: data port (default 3307), HTTP port (6034), admin port (6035). IPv6 "
	  "hosts in brackets."),
	I(hostgroup, 0, 2147483647, "30", "N", "The cache hostgroup in mysql_servers and the rules' "
	  "destination_hostgroup."),
	I(node_weight, 0, 10000000, "1000", "N", "Weight of each node in the hostgroup."),
	S(fallback_spec, 300, "", "HOST:PORT", "The fallback server (the replica) that register "
	  "puts in the hostgroup beside the nodes; port 3306 if left out. Empty: none."),
	I(fallback_weight, 0, 10000000, "1", "N", "Weight of the fallback server."),
	S(node_admin_user, 128, "admin", "NAME", "Login for the nodes' admin ports (advise)."),
	S(node_admin_password, 256, "admin", "PASS", "Password for the nodes' admin ports."),
	S(webhook_url, 1024, "", "URL", "watch posts a JSON alert here (empty: log line only)."),
	S(state_file, 1024, "/var/lib/shoal-ha/watch.json", "PATH", "Where watch keeps its "
	  "counters and decisions between runs (needed by --once)."),
	I(interval_ms, 100, 86400000, "5000", "MS", "watch: time between polls (daemon mode)."),
	I(flat_window_ms, 0, 86400000, "60000", "MS", "watch: a node whose hit counter did not move "
	  "for this long while its query counter did is taken out."),
	I(flat_min_queries, 1, 2147483647, "50", "N", "watch: queries the node must have answered "
	  "within the window before a flat hit counter counts."),
	I(flat_retry_ms, 0, 86400000, "300000", "MS", "watch: how long a node taken out for a flat "
	  "hit counter stays out before it is put back ONLINE on trial."),
	I(connect_timeout_ms, 1, 3600000, "2000", "MS", "Timeout for MySQL-protocol connections "
	  "(ProxySQL admin, node admin), rounded up to seconds."),
	I(http_timeout_ms, 1, 3600000, "2000", "MS", "Timeout of each HTTP request (/health, "
	  "/metrics, webhook)."),
	I(rule_id_base, 1, 2147483647, "1", "N", "route: new rules get the lowest free rule_id at or "
	  "above this."),
	S(rule_comment, 64, "shoal-ha", "TEXT", "Comment that marks the agent's own query rules (and "
	  "servers); the agent only changes rows whose comment starts with it."),
	I(top, 1, 100000, "10", "N", "advise: how many digests to route at most."),
	I(hit_ratio_pct, 0, 100, "90", "PCT", "advise: assumed hit ratio for a digest the nodes have "
	  "no hit/miss figures for."),
	B(auto_route, "false", "watch: route, warm and withdraw query digests by itself (each poll: "
	  "rank like advise, route what saves enough, withdraw what stopped paying)."),
	B(dry_run, "false", "watch --auto-route: make and log the decisions, change nothing."),
	I(route_min_share_pct, 0, 100, "1", "PCT", "auto-route: a digest is routed when its expected "
	  "saving is at least this share of the upstream time ProxySQL measured ..."),
	I(route_min_saving_ms, 0, 2147483647, "1000", "MS", "... and at least this much upstream "
	  "time (ProxySQL's statistics since they began)."),
	I(warmup_ms, 0, 86400000, "10000", "MS", "auto-route: how long a digest is mirrored to the "
	  "cache hostgroup (mirror_hostgroup) before it is routed; skipped when the nodes have "
	  "measured its hit ratio already. 0: no warm-up."),
	I(min_hit_ratio_pct, 0, 100, "50", "PCT", "auto-route: a routed digest whose hit ratio on the "
	  "nodes stays below this ..."),
	I(max_error_pct, 0, 100, "1", "PCT", "auto-route: a routed digest whose commands the nodes "
	  "answer with an error, more than this share of them (0: any), ..."),
	I(withdraw_after, 1, 1000000, "3", "POLLS", "... or whose hit ratio stays low, for this many "
	  "polls in a row is withdrawn."),
	I(cooldown_ms, 0, 2147483647, "600000", "MS", "auto-route: a withdrawn digest is not routed "
	  "again for this long."),
	I(absent_ms, 0, 2147483647, "600000", "MS", "auto-route: a routed digest ProxySQL has not seen "
	  "for this long is withdrawn."),
	I(leader_timeout_ms, 1000, 86400000, "30000", "MS", "auto-route in a ProxySQL cluster: the "
	  "agent beside an instance decides while its heartbeat (a scheduler row of that instance) "
	  "moved within this long; then the next instance's agent does."),
	I(max_changes, 1, 1000, "2", "N", "auto-route: rules created, changed or removed per poll, at "
	  "most."),
	B(verbose, "false", "Log every statement sent to ProxySQL."),
};
#define N_SETTINGS (sizeof settings / sizeof settings[0])

/* The public name of a setting: nodes_spec -> nodes, fallback_spec -> fallback. */
static void public_key(const struct setting *s, char *out, size_t cap)
{
	size_t n = strlen(s->key);

	if (n > 5 && strcmp(s->key + n - 5, "_spec") == 0)
		n -= 5;
	snprintf(out, cap, "%.*s", (int)n, s->key);
}

static const struct setting *by_key(const char *key, size_t len)
{
	char k[64];

	for (size_t i = 0; i < N_SETTINGS; i++) {
		public_key(&settings[i], k, sizeof k);
		if (strlen(k) == len && strncmp(k, key, len) == 0)
			return &settings[i];
	}
	return NULL;
}

static bool parse_bool(const char *v, bool *out)
{
	static const char *yes[] = { "true", "1", "yes", "on" }, *no[] = { "false", "0", "no", "off" };

	for (int i = 0; i < 4; i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return *out = true, true;
		if (strcasecmp(v, no[i]) == 0)
			return *out = false, true;
	}
	return false;
}

static int set_value(struct ha_config *cfg, const struct setting *s, const char *v,
		     const char *where, char *err, size_t errlen)
{
	char *p = (char *)cfg + s->off, k[64];
	long long n;

	public_key(s, k, sizeof k);
	switch (s->type) {
	case T_STR:
		if (strlen(v) >= s->size)
			return ha_fail(err, errlen, "%s: %s is too long (at most %zu bytes)", where, k,
				       s->size - 1);
		memcpy(p, v, strlen(v) + 1);
		return 0;
	case T_INT:
		if (!ha_parse_int(v, s->min, s->max, &n))
			return ha_fail(err, errlen, "%s: invalid value for %s: '%s': must be an integer "
				       "between %lld and %lld", where, k, v, s->min, s->max);
		*(int *)p = (int)n;
		return 0;
	case T_BOOL:
		if (!parse_bool(v, (bool *)p))
			return ha_fail(err, errlen, "%s: invalid value for %s: '%s': must be true or false",
				       where, k, v);
		return 0;
	}
	return -1;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int load_file_line(struct ha_config *cfg, char *line, const char *where, char *err,
			  size_t errlen)
{
	char *eq, *key, *val;
	const struct setting *s;
	size_t vl;

	key = trim(line);
	if (*key == '\0' || *key == '#' || *key == ';')
		return 0;
	eq = strchr(key, '=');
	if (!eq)
		return ha_fail(err, errlen, "%s: expected key = value", where);
	*eq = '\0';
	key = trim(key);
	val = trim(eq + 1);
	vl = strlen(val);
	if (vl >= 2 && (val[0] == '"' || val[0] == '\'') && val[vl - 1] == val[0]) {
		val[vl - 1] = '\0';
		val++;
	}
	s = by_key(key, strlen(key));
	if (!s)
		return ha_fail(err, errlen, "%s: unknown setting '%s'", where, key);
	return set_value(cfg, s, val, where, err, errlen);
}

static int load_file(struct ha_config *cfg, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[8192], where[1200];
	int lineno = 0, rc = 0;

	if (!f)
		return ha_fail(err, errlen, "cannot open config file %s: %s", path, strerror(errno));
	while (rc == 0 && fgets(line, sizeof line, f)) {
		lineno++;
		snprintf(where, sizeof where, "%s:%d", path, lineno);
		if (!strchr(line, '\n') && !feof(f))
			rc = ha_fail(err, errlen, "%s: line too long", where);
		else
			rc = load_file_line(cfg, line, where, err, errlen);
	}
	if (rc == 0 && ferror(f))
		rc = ha_fail(err, errlen, "cannot read config file %s", path);
	fclose(f);
	return rc;
}

static int load_env(struct ha_config *cfg, char *err, size_t errlen)
{
	char name[96], k[64];

	for (size_t i = 0; i < N_SETTINGS; i++) {
		const char *v;
		size_t j;

		public_key(&settings[i], k, sizeof k);
		j = (size_t)snprintf(name, sizeof name, "SHOAL_HA_");
		for (const char *c = k; *c && j + 1 < sizeof name; c++)
			name[j++] = (char)toupper((unsigned char)*c);
		name[j] = '\0';
		v = getenv(name);
		if (v && set_value(cfg, &settings[i], v, name, err, errlen))
			return -1;
	}
	return 0;
}

/* ---- DSNs and node addresses ------------------------------------------- */

static int pct_decode(const char *s, size_t len, char *out, size_t cap, char *err, size_t errlen)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == '%') {
			char hex[3] = { 0 };

			if (i + 2 >= len + 0 || !isxdigit((unsigned char)s[i + 1]) ||
			    !isxdigit((unsigned char)s[i + 2]))
				return ha_fail(err, errlen, "bad percent-encoding");
			hex[0] = s[i + 1];
			hex[1] = s[i + 2];
			c = (char)strtol(hex, NULL, 16);
			i += 2;
		}
		if (o + 1 >= cap)
			return ha_fail(err, errlen, "too long");
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

static bool host_ok(const char *h)
{
	if (!*h)
		return false;
	for (; *h; h++)
		if (!isalnum((unsigned char)*h) && !strchr(".-_:", *h))
			return false;
	return true;
}

/* "host", "host:rest", "[v6]:rest": host into out, *rest after the ':' or NULL. */
static int split_host(const char *s, size_t len, char *out, size_t cap, const char **rest,
		      size_t *restlen)
{
	const char *end = s + len, *h = s, *he, *colon;

	if (len && *s == '[') {
		he = memchr(s, ']', len);
		if (!he || (he + 1 < end && he[1] != ':'))
			return -1;
		h = s + 1;
		colon = he + 1 < end ? he + 1 : NULL;
	} else {
		colon = memchr(s, ':', len);
		he = colon ? colon : end;
	}
	if ((size_t)(he - h) >= cap)
		return -1;
	memcpy(out, h, (size_t)(he - h));
	out[he - h] = '\0';
	*rest = colon ? colon + 1 : NULL;
	*restlen = colon ? (size_t)(end - colon - 1) : 0;
	return host_ok(out) ? 0 : -1;
}

static bool port_of(const char *s, size_t len, int *port)
{
	char buf[8];
	long long v;

	if (len == 0 || len >= sizeof buf)
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (!ha_parse_int(buf, 1, 65535, &v))
		return false;
	*port = (int)v;
	return true;
}

int config_parse_dsn(const char *s, size_t len, struct ha_dsn *d, char *err, size_t errlen)
{
	const char *at, *colon, *rest, *u = s + 8;
	char e2[64];
	size_t rl;

	memset(d, 0, sizeof *d);
	d->port = 6032;
	if (len < 8 || strncmp(s, "mysql://", 8) != 0)
		return ha_fail(err, errlen, "bad DSN '%.*s': expected mysql://user:password@host:port",
			       (int)(len > 60 ? 60 : len), s);
	at = memrchr(u, '@', len - 8);
	if (!at)
		return ha_fail(err, errlen, "bad DSN: no user@ in '%.*s'", (int)(len > 60 ? 60 : len), s);
	colon = memchr(u, ':', (size_t)(at - u));
	if (pct_decode(u, (size_t)((colon ? colon : at) - u), d->user, sizeof d->user, e2, sizeof e2) ||
	    !d->user[0] ||
	    (colon && pct_decode(colon + 1, (size_t)(at - colon - 1), d->password, sizeof d->password,
				 e2, sizeof e2)))
		return ha_fail(err, errlen, "bad DSN for host after '@': bad user or password");
	if (split_host(at + 1, len - (size_t)(at + 1 - s), d->host, sizeof d->host, &rest, &rl) ||
	    (rest && !port_of(rest, rl, &d->port)))
		return ha_fail(err, errlen, "bad DSN '%s@%.*s': expected host or host:port after '@'",
			       d->user, (int)(len - (size_t)(at + 1 - s)), at + 1);
	snprintf(d->shown, sizeof d->shown, "%s@%s%s%s:%d", d->user, strchr(d->host, ':') ? "[" : "",
		 d->host, strchr(d->host, ':') ? "]" : "", d->port);
	return 0;
}

int config_parse_node(const char *s, size_t len, struct ha_node *n, char *err, size_t errlen)
{
	const char *rest;
	size_t rl;
	int *ports[3] = { &n->data_port, &n->http_port, &n->admin_port };

	memset(n, 0, sizeof *n);
	n->data_port = 3307;
	n->http_port = 6034;
	n->admin_port = 6035;
	if (split_host(s, len, n->host, sizeof n->host, &rest, &rl))
		goto bad;
	for (int i = 0; rest && i < 3; i++) {
		const char *c = memchr(rest, ':', rl);
		size_t pl = c ? (size_t)(c - rest) : rl;

		if (!port_of(rest, pl, ports[i]) || (c && i == 2))
			goto bad;
		rest = c ? c + 1 : NULL;
		rl = c ? rl - pl - 1 : 0;
	}
	snprintf(n->name, sizeof n->name, "%s:%d", n->host, n->data_port);
	return 0;
bad:
	return ha_fail(err, errlen, "bad node address '%.*s': expected host[:data_port[:http_port"
		       "[:admin_port]]]", (int)(len > 200 ? 200 : len), s);
}

static int parse_fallback(struct ha_config *cfg, char *err, size_t errlen)
{
	const char *s = cfg->fallback_spec, *rest;
	size_t rl;

	cfg->has_fallback = false;
	if (!*s)
		return 0;
	memset(&cfg->fallback, 0, sizeof cfg->fallback);
	cfg->fallback.data_port = 3306;
	if (split_host(s, strlen(s), cfg->fallback.host, sizeof cfg->fallback.host, &rest, &rl) ||
	    (rest && !port_of(rest, rl, &cfg->fallback.data_port)))
		return ha_fail(err, errlen, "bad fallback address '%s': expected host[:port]", s);
	snprintf(cfg->fallback.name, sizeof cfg->fallback.name, "%s:%d", cfg->fallback.host,
		 cfg->fallback.data_port);
	cfg->has_fallback = true;
	return 0;
}

/* Split a comma-separated list and parse each item. */
static int parse_list(const char *s, const char *what, int max, int *count,
		      int (*one)(const char *, size_t, void *, char *, size_t), void *arr, size_t elsz,
		      char *err, size_t errlen)
{
	*count = 0;
	while (*s) {
		const char *c = strchr(s, ',');
		size_t len = c ? (size_t)(c - s) : strlen(s);

		while (len && isspace((unsigned char)*s))
			s++, len--;
		while (len && isspace((unsigned char)s[len - 1]))
			len--;
		if (len) {
			if (*count == max)
				return ha_fail(err, errlen, "too many %s (at most %d)", what, max);
			if (one(s, len, (char *)arr + (size_t)*count * elsz, err, errlen))
				return -1;
			(*count)++;
		}
		if (!c)
			break;
		s = c + 1;
	}
	return 0;
}

static int one_dsn(const char *s, size_t l, void *p, char *e, size_t el)
{
	return config_parse_dsn(s, l, p, e, el);
}

static int one_node(const char *s, size_t l, void *p, char *e, size_t el)
{
	return config_parse_node(s, l, p, e, el);
}

static int config_finish(struct ha_config *cfg, char *err, size_t errlen)
{
	if (parse_list(cfg->proxysql_admin, "ProxySQL admin DSNs", HA_MAX_DSNS, &cfg->n_dsns,
		       one_dsn, cfg->dsns, sizeof cfg->dsns[0], err, errlen) ||
	    parse_list(cfg->nodes_spec, "nodes", HA_MAX_NODES, &cfg->n_nodes, one_node, cfg->nodes,
		       sizeof cfg->nodes[0], err, errlen) ||
	    parse_fallback(cfg, err, errlen))
		return -1;
	for (int i = 0; i < cfg->n_nodes; i++)
		for (int j = 0; j < i; j++)
			if (strcmp(cfg->nodes[i].name, cfg->nodes[j].name) == 0)
				return ha_fail(err, errlen, "node %s is listed twice", cfg->nodes[i].name);
	if (cfg->has_fallback)
		for (int i = 0; i < cfg->n_nodes; i++)
			if (strcmp(cfg->nodes[i].name, cfg->fallback.name) == 0)
				return ha_fail(err, errlen, "%s is both a node and the fallback",
					       cfg->fallback.name);
	for (const char *c = cfg->rule_comment; *c; c++)
		if (*c == '%' || *c == '_' || *c == '\'')
			return ha_fail(err, errlen, "rule_comment may not contain %%, _ or '");
	if (!cfg->rule_comment[0])
		return ha_fail(err, errlen, "rule_comment may not be empty");
	return 0;
}

/* ---- the command line -------------------------------------------------- */

struct sw { const char *name; size_t off; };
static const struct sw switches[] = {
	{ "once", offsetof(struct ha_config, once) },
	{ "apply", offsetof(struct ha_config, apply) },
	{ "remove", offsetof(struct ha_config, remove) },
	{ "all", offsetof(struct ha_config, all) },
	{ "html", offsetof(struct ha_config, html) },
	{ "help", offsetof(struct ha_config, help) },
	{ "version", offsetof(struct ha_config, version) },
};

static const struct setting *by_flag(const char *f, size_t len)
{
	char k[64];

	if (len >= sizeof k)
		return NULL;
	for (size_t i = 0; i < len; i++)
		k[i] = f[i] == '-' ? '_' : f[i];
	return by_key(k, len);
}

/* One option at argv[*i] (starting with "--"). */
static int parse_flag(struct ha_config *cfg, int argc, char **argv, int *i, char *err,
		      size_t errlen)
{
	const char *a = argv[*i] + 2, *eq = strchr(a, '=');
	size_t len = eq ? (size_t)(eq - a) : strlen(a);
	const struct setting *s;
	char where[80];

	for (size_t k = 0; k < sizeof switches / sizeof switches[0]; k++)
		if (strlen(switches[k].name) == len && strncmp(a, switches[k].name, len) == 0) {
			if (eq)
				return ha_fail(err, errlen, "--%s takes no value", switches[k].name);
			*(bool *)((char *)cfg + switches[k].off) = true;
			return 0;
		}
	if (len == 6 && strncmp(a, "config", 6) == 0) { /* read before the others */
		if (!eq)
			(*i)++;
		return 0;
	}
	if (len > 3 && strncmp(a, "no-", 3) == 0 && !eq && (s = by_flag(a + 3, len - 3)) &&
	    s->type == T_BOOL)
		return set_value(cfg, s, "false", argv[*i], err, errlen);
	s = by_flag(a, len);
	if (!s)
		return ha_fail(err, errlen, "unknown option %s (see shoal-ha --help)", argv[*i]);
	snprintf(where, sizeof where, "--%.*s", (int)len, a);
	if (s->type == T_BOOL && !eq)
		return set_value(cfg, s, "true", where, err, errlen);
	if (!eq && *i + 1 >= argc)
		return ha_fail(err, errlen, "%s needs a value", where);
	return set_value(cfg, s, eq ? eq + 1 : argv[++*i], where, err, errlen);
}

static const char *find_config(int argc, char **argv, char *err, size_t errlen, int *bad)
{
	const char *path = getenv("SHOAL_HA_CONFIG");

	*bad = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strncmp(argv[i], "--config=", 9) == 0)
			path = argv[i] + 9;
		else if (strcmp(argv[i], "--config") == 0) {
			if (i + 1 >= argc) {
				*bad = ha_fail(err, errlen, "--config needs a value");
				return NULL;
			}
			path = argv[++i];
		}
	}
	return path && *path ? path : NULL;
}

int config_load(struct ha_config *cfg, int argc, char **argv, char *err, size_t errlen)
{
	const char *path;
	bool rest_args = false;
	int bad;

	memset(cfg, 0, sizeof *cfg);
	for (size_t i = 0; i < N_SETTINGS; i++)
		if (set_value(cfg, &settings[i], settings[i].def, "default", err, errlen))
			return -1;
	path = find_config(argc, argv, err, errlen, &bad);
	if (bad || (path && load_file(cfg, path, err, errlen)) || load_env(cfg, err, errlen))
		return -1;
	for (int i = 1; i < argc; i++) {
		if (!rest_args && strcmp(argv[i], "--") == 0)
			rest_args = true;
		else if (!rest_args && strncmp(argv[i], "--", 2) == 0) {
			if (parse_flag(cfg, argc, argv, &i, err, errlen))
				return -1;
		} else if (!rest_args && strcmp(argv[i], "-h") == 0)
			cfg->help = true;
		else if (!cfg->command)
			cfg->command = argv[i];
		else if (cfg->n_args == HA_MAX_ARGS)
			return ha_fail(err, errlen, "too many arguments (at most %d)", HA_MAX_ARGS);
		else
			cfg->args[cfg->n_args++] = argv[i];
	}
	return config_finish(cfg, err, errlen);
}

/* Print text word-wrapped at 78 columns, indented by 6. */
static void wrap(FILE *out, const char *text)
{
	const char *p = text;

	while (*p) {
		size_t len = strlen(p), cut = len;

		if (len > 72) {
			cut = 72;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = strcspn(p, " ");
		}
		fprintf(out, "      %.*s\n", (int)cut, p);
		p += cut;
		while (*p == ' ')
			p++;
	}
}

void config_usage(FILE *out)
{
	char k[64], flag[64], env[80];

	for (size_t i = 0; i < N_SETTINGS; i++) {
		const struct setting *s = &settings[i];
		size_t j;

		public_key(s, k, sizeof k);
		for (j = 0; k[j] && j + 1 < sizeof flag; j++)
			flag[j] = k[j] == '_' ? '-' : k[j];
		flag[j] = '\0';
		j = (size_t)snprintf(env, sizeof env, "SHOAL_HA_");
		for (const char *c = k; *c && j + 1 < sizeof env; c++)
			env[j++] = (char)toupper((unsigned char)*c);
		env[j] = '\0';
		fprintf(out, "  --%s%s%s%s%s\n      env %s, file key %s\n      default: %s\n", flag,
			s->metavar ? " " : "", s->metavar ? s->metavar : "",
			s->type == T_BOOL ? ", --no-" : "", s->type == T_BOOL ? flag : "", env, k,
			*s->def ? s->def : "(none)");
		wrap(out, s->help);
	}
}
