/*
 * config.c: owns the node's settings, struct shoal_config g_config, and
 * everything that fills it: defaults, the config file (key = value lines),
 * the environment (UPPER_SNAKE names) and command-line flags (--kebab-name),
 * applied in that order so each later source wins. Also owns --help,
 * --version, password redaction for messages and the start-up summary of
 * the effective settings. The values that are addresses and URLs are
 * parsed by config_parse.c.
 *
 * Every setting is one row of the config_settings[] table below: its three names,
 * its type, where it lives in the struct, its range and its help text. The
 * parser, --help and the summary all walk that table, so a new setting is
 * one new row (plus a field in config.h).
 *
 * Error convention: a bad value prints one line to stderr,
 *   shoal: invalid value for <key> (--<flag> / <ENV>): '<value>': <reason>
 * with any password replaced by ***, and config_load() returns 2.
 * Called once at start; not thread-safe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "config/config.h"
#include "config/config_parse.h"
#include "config/config_table.h"
#include "base/duration.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef SHOAL_VERSION
#define SHOAL_VERSION "0.1.0"
#endif

#define REDACT_BUF 2048

extern char **environ;

struct shoal_config g_config;

#define N_SETTINGS config_n_settings

/* ---------------------------------------------------------------- helpers */

static void trim_range(const char **b, const char **e)
{
	while (*b < *e && isspace((unsigned char)**b))
		(*b)++;
	while (*e > *b && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > MAX_WORKERS ? MAX_WORKERS : (int)n;
}

/* A millisecond setting: it also takes durations with units, and has an
 * alias without the _ms suffix (drain_timeout for drain_timeout_ms). */
static bool is_duration(const struct setting *s)
{
	return s->metavar && strcmp(s->metavar, "MS") == 0;
}

/* name[0..len) + suffix == full? */
static bool is_alias(const char *full, const char *name, size_t len, const char *suffix)
{
	return strlen(full) == len + strlen(suffix) && memcmp(full, name, len) == 0 &&
	       strcmp(full + len, suffix) == 0;
}

static const struct setting *find_key(const char *key)
{
	for (size_t i = 0; i < N_SETTINGS; i++)
		if (config_settings[i].type != T_CONFIG && strcmp(config_settings[i].key, key) == 0)
			return &config_settings[i];
	return NULL;
}

/* The millisecond setting whose key is key + "_ms" (file keys). */
static const struct setting *find_key_alias(const char *key)
{
	for (size_t i = 0; i < N_SETTINGS; i++)
		if (is_duration(&config_settings[i]) && is_alias(config_settings[i].key, key, strlen(key), "_ms"))
			return &config_settings[i];
	return NULL;
}

static const struct setting *find_flag(const char *name, size_t len)
{
	for (size_t i = 0; i < N_SETTINGS; i++)
		if (strlen(config_settings[i].flag) == len && memcmp(config_settings[i].flag, name, len) == 0)
			return &config_settings[i];
	return NULL;
}

static const struct setting *find_flag_alias(const char *name, size_t len)
{
	for (size_t i = 0; i < N_SETTINGS; i++)
		if (is_duration(&config_settings[i]) && is_alias(config_settings[i].flag, name, len, "-ms"))
			return &config_settings[i];
	return NULL;
}

static const char *env_get(char **envp, const char *name)
{
	size_t len = strlen(name);

	for (char **e = envp; e && *e; e++)
		if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

/* "u:p,u2:p2" -> "u:***,u2:***"; an item without ':' is shown as is. */
static void print_redacted_users(FILE *out, const char *v)
{
	while (*v) {
		const char *comma = strchr(v, ',');
		size_t len = comma ? (size_t)(comma - v) : strlen(v);
		const char *colon = memchr(v, ':', len);

		if (colon)
			fprintf(out, "%.*s:***", (int)(colon - v), v);
		else
			fprintf(out, "%.*s", (int)len, v);
		if (!comma)
			break;
		fputc(',', out);
		v = comma + 1;
	}
}

static void print_redacted(FILE *out, const struct setting *s, const char *v)
{
	char buf[REDACT_BUF];

	switch (s->secret) {
	case SEC_NONE:
		fputs(v, out);
		break;
	case SEC_ALL:
		fputs(*v ? "***" : "", out);
		break;
	case SEC_URL:
		config_redact_url(v, buf, sizeof buf);
		fputs(buf, out);
		break;
	case SEC_USERS:
		print_redacted_users(out, v);
		break;
	}
}

/* The one-line "invalid value" message; where (NULL for the command line) is
 * "at FILE:LINE" or "from the environment". */
static void report_invalid(const struct setting *s, const char *value, const char *reason,
			   const char *where)
{
	fprintf(stderr, "shoal: invalid value for %s (--%s / %s): '", s->key, s->flag, s->env);
	print_redacted(stderr, s, value);
	fprintf(stderr, "': %s", reason);
	if (where)
		fprintf(stderr, " (%s)", where);
	fputc('\n', stderr);
}

/* The unsuffixed alias of a millisecond setting takes a unit ("30s"): a bare
 * number would be ambiguous. 0, or 2 after the message. */
static int alias_needs_unit(const struct setting *s, const char *v, const char *where)
{
	if (duration_has_unit(v))
		return 0;
	report_invalid(s, v, "without _ms the value needs a unit: ms, s, m, h or d (e.g. 30s)",
		       where);
	return 2;
}

/* ------------------------------------------------------- setting setters */

static int set_listen(struct shoal_config *cfg, const char *v, char *err, size_t errlen)
{
	struct shoal_addr tmp[SHOAL_MAX_LISTEN];
	char why[256];
	int n = 0;

	for (const char *p = v;;) {
		const char *comma = strchr(p, ',');
		const char *b = p, *e = comma ? comma : p + strlen(p);

		trim_range(&b, &e);
		if (b == e)
			return config_fail(err, errlen, "empty address in list");
		if (n == SHOAL_MAX_LISTEN)
			return config_fail(err, errlen, "more than %d addresses", SHOAL_MAX_LISTEN);
		if (config_parse_addr_len(b, (size_t)(e - b), &tmp[n], why, sizeof why))
			return config_fail(err, errlen, "'%.*s': %s", (int)(e - b), b, why);
		n++;
		if (!comma)
			break;
		p = comma + 1;
	}
	memcpy(cfg->listen, tmp, sizeof tmp[0] * (size_t)n);
	cfg->n_listen = n;
	return 0;
}

/* One "user:password" item (b..e, trimmed) of ALLOWED_USERS; item is its
 * 1-based position. Messages name the user, never the password. */
static int parse_user_item(const char *b, const char *e, int item, struct shoal_user *tmp, int *n,
			   char *err, size_t errlen)
{
	const char *colon = memchr(b, ':', (size_t)(e - b));
	struct shoal_user u;

	memset(&u, 0, sizeof u);
	if (!colon)
		return config_fail(err, errlen, "item %d has no ':' (expected user:password)", item);
	if (colon == b)
		return config_fail(err, errlen, "item %d has an empty user name", item);
	if (config_copy(u.name, sizeof u.name, b, (size_t)(colon - b)))
		return config_fail(err, errlen, "item %d: user name too long (max %zu bytes)", item,
			    sizeof u.name - 1);
	if (config_copy(u.password, sizeof u.password, colon + 1, (size_t)(e - colon - 1)))
		return config_fail(err, errlen, "password of user '%s' too long (max %zu bytes)", u.name,
			    sizeof u.password - 1);
	for (int i = 0; i < *n; i++)
		if (strcmp(tmp[i].name, u.name) == 0)
			return config_fail(err, errlen, "user '%s' listed twice", u.name);
	if (*n == SHOAL_MAX_USERS)
		return config_fail(err, errlen, "more than %d users", SHOAL_MAX_USERS);
	tmp[(*n)++] = u;
	return 0;
}

static int set_users(struct shoal_config *cfg, const char *v, char *err, size_t errlen)
{
	struct shoal_user tmp[SHOAL_MAX_USERS];
	int n = 0, item = 0;

	for (const char *p = v; *p;) {
		const char *comma = strchr(p, ',');
		const char *b = p, *e = comma ? comma : p + strlen(p);

		item++;
		trim_range(&b, &e);
		if (b < e && parse_user_item(b, e, item, tmp, &n, err, errlen))
			return -1;
		if (!comma)
			break;
		p = comma + 1;
	}
	memcpy(cfg->allowed_users, tmp, sizeof tmp[0] * (size_t)n);
	cfg->n_allowed_users = n;
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "true", "1", "yes", "on" };
	static const char *const no[] = { "false", "0", "no", "off" };

	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

static int set_enum(int *p, const struct setting *s, const char *v, char *err, size_t errlen)
{
	size_t used;

	for (int i = 0; s->names[i]; i++) {
		if (strcasecmp(v, s->names[i]) == 0) {
			*p = i;
			return 0;
		}
	}
	config_fail(err, errlen, "expected one of:");
	for (int i = 0; s->names[i] && err; i++) {
		used = strlen(err);
		if (used < errlen)
			snprintf(err + used, errlen - used, "%s %s", i ? "," : "", s->names[i]);
	}
	return -1;
}

static int set_int(int *p, const struct setting *s, const char *v, char *err, size_t errlen)
{
	char *end;
	long long n;

	if (!*v || isspace((unsigned char)*v))
		return config_fail(err, errlen, "not a number");
	errno = 0;
	n = strtoll(v, &end, 10);
	if (*end && is_duration(s) && duration_parse_ms(v, false, &n) == 0)
		end = (char *)"";
	if (*end)
		return config_fail(err, errlen, is_duration(s) ? "not a number (milliseconds, or a "
			    "duration with ms, s, m, h or d)" : "not a number");
	if (errno == ERANGE || n < s->min || n > s->max)
		return config_fail(err, errlen, "must be between %lld and %lld", s->min, s->max);
	*p = (int)n;
	return 0;
}

static int set_size(uint32_t *p, const struct setting *s, const char *v, char *err, size_t errlen)
{
	unsigned long long n = 0, mult = 1;
	const char *q = v;

	if (!isdigit((unsigned char)*q))
		return config_fail(err, errlen, "not a size (expected bytes, or a number with K, M or G)");
	for (; isdigit((unsigned char)*q); q++)
		if (n <= (unsigned long long)s->max)
			n = n * 10 + (unsigned long long)(*q - '0');
	switch (*q) {
	case 'k': case 'K': mult = 1ULL << 10; q++; break;
	case 'm': case 'M': mult = 1ULL << 20; q++; break;
	case 'g': case 'G': mult = 1ULL << 30; q++; break;
	default: break;
	}
	if (*q)
		return config_fail(err, errlen, "not a size (expected bytes, or a number with K, M or G)");
	if (n > (unsigned long long)s->max / mult || n * mult < (unsigned long long)s->min)
		return config_fail(err, errlen, "must be between %lld and %lld bytes", s->min, s->max);
	*p = (uint32_t)(n * mult);
	return 0;
}

static int set_str(char *p, const struct setting *s, const char *v, char *err, size_t errlen)
{
	if (s->min > 0 && !*v)
		return config_fail(err, errlen, "must not be empty");
	if (config_copy(p, s->size, v, strlen(v)))
		return config_fail(err, errlen, "too long (max %zu bytes)", s->size - 1);
	return 0;
}

/* Parse v into the setting's field(s). 0, or -1 with a reason in err. */
static int apply(struct shoal_config *cfg, const struct setting *s, const char *v,
		 char *err, size_t errlen)
{
	char *p = (char *)cfg + s->off;
	bool b;

	switch (s->type) {
	case T_URL:
		return config_parse_upstream_url(cfg, v, err, errlen);
	case T_STR:
	case T_CONFIG:
		return set_str(p, s, v, err, errlen);
	case T_ADDR:
		return config_parse_addr_len(v, strlen(v), (struct shoal_addr *)(void *)p, err, errlen);
	case T_ADDRLIST:
		return set_listen(cfg, v, err, errlen);
	case T_USERS:
		return set_users(cfg, v, err, errlen);
	case T_ENUM:
		return set_enum((int *)(void *)p, s, v, err, errlen);
	case T_INT:
		return set_int((int *)(void *)p, s, v, err, errlen);
	case T_SIZE:
		return set_size((uint32_t *)(void *)p, s, v, err, errlen);
	case T_BOOL:
		if (parse_bool(v, &b))
			return config_fail(err, errlen, "expected true/false, 1/0, yes/no or on/off");
		*(bool *)(void *)p = b;
		return 0;
	}
	return config_fail(err, errlen, "unknown setting type");
}

/* apply() and report a failure; returns 0 or 2. */
static int apply_value(struct shoal_config *cfg, const struct setting *s, const char *v,
		       const char *where)
{
	char err[512];
	size_t i = (size_t)(s - config_settings);

	if (apply(cfg, s, v, err, sizeof err) == 0) {
		if (i < 128)
			cfg->set_mask[i / 64] |= 1ull << (i % 64);
		return 0;
	}
	report_invalid(s, v, err, where);
	return 2;
}

/* ------------------------------------------------------------ defaults */

void config_defaults(struct shoal_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->upstream_port = DEFAULT_UPSTREAM_PORT;
	cfg->upstream_connect_timeout_ms = 5000;
	cfg->upstream_tls = false;
	cfg->upstream_tls_verify = false;
	snprintf(cfg->listen[0].host, sizeof cfg->listen[0].host, "0.0.0.0");
	cfg->listen[0].port = 3307;
	cfg->n_listen = 1;
	snprintf(cfg->metrics.host, sizeof cfg->metrics.host, "0.0.0.0");
	cfg->metrics.port = 6034;
	snprintf(cfg->admin.host, sizeof cfg->admin.host, "127.0.0.1");
	cfg->admin.port = 6035;
	snprintf(cfg->monitor_user.name, sizeof cfg->monitor_user.name, "monitor");
	snprintf(cfg->monitor_user.password, sizeof cfg->monitor_user.password, "monitor");
	cfg->auth_plugin = AUTH_NATIVE_PASSWORD;
	cfg->tls_mode = TLS_MODE_OPTIONAL;
	cfg->max_allowed_packet = 67108864;
	cfg->max_client_connections = 10000;
	cfg->max_upstream_connections = 64;
	cfg->upstream_wait_timeout_ms = 10000;
	cfg->upstream_max_idle_ms = 60000;
	cfg->multiplexing = true;
	cfg->local_infile = true;
	cfg->compression = true;
	cfg->handshake_timeout_ms = 10000;
	cfg->client_idle_timeout_ms = 28800000;
	cfg->admin_max_connections = 64;
	cfg->auth_failure_delay_ms = 1000;
	cfg->auth_failure_threshold = 5;
	cfg->auth_failure_window_ms = 60000;
	cfg->workers = online_cpus();
	cfg->log_level = LOG_LEVEL_INFO;
	snprintf(cfg->config_file, sizeof cfg->config_file, "%s", DEFAULT_CONFIG_FILE);
	cfg->auto_cache = false;
	cfg->cache_ttl_ms = 10000;
	cfg->cache_refresh_ms = 0;
	cfg->cache_coalesce_ms = 5000;
	cfg->cache_max_entry_size = 1073741824u;
	cfg->memory_limit = 1073741824u;
	cfg->cache_warnings = false;
	cfg->cache_empty = true;
	cfg->read_your_writes_ms = 0;
	cfg->cache_scope = CACHE_SCOPE_USER;
	cfg->grant_check_ms = 1000;
	cfg->grant_check_binlog_ms = 3600000;
	cfg->prepare_answer_ms = 3600000;
	cfg->drain_timeout_ms = 30000;
	cfg->snapshot_write_timeout_ms = 5000;
	cfg->cache_snapshot_data = true;
	cfg->warm_fetch_timeout_ms = 30000;
	cfg->warm_rate = 100;
	cfg->warm_timeout_ms = 300000;
	cfg->drain_handoff_ms = 8000;
	cfg->drain_quiet_ms = 1000;
	cfg->upstream_down_policy = DOWN_POLICY_SHUN;
	cfg->upstream_down_after_ms = 3000;
	cfg->max_stale_ms = 300000;
	cfg->invalidation = INVALIDATION_AUTO;
	cfg->binlog_max_lag_ms = 10000;
	cfg->binlog_settle_ms = 0;   /* an optional extra: the fence decides (cache/fence.h) */
	snprintf(cfg->admin_user.name, sizeof cfg->admin_user.name, "admin");
	snprintf(cfg->admin_user.password, sizeof cfg->admin_user.password, "admin");
	snprintf(cfg->data_dir, sizeof cfg->data_dir, "/var/lib/shoal");
	cfg->metrics_max_queries = 100;
}

/* ---------------------------------------------------------- config file */

/* One line of the file (newline included or not). Returns 0 or 2. */
static int file_line(struct shoal_config *cfg, const char *path, int lineno, char *line)
{
	const char *b = line, *e = line + strlen(line), *kb, *ke, *eq;
	const struct setting *s;
	char where[1100];
	bool alias;

	trim_range(&b, &e);
	if (b == e || *b == '#')
		return 0;
	eq = memchr(b, '=', (size_t)(e - b));
	if (!eq) {
		fprintf(stderr, "shoal: %s:%d: expected 'key = value'\n", path, lineno);
		return 2;
	}
	kb = b;
	ke = eq;
	trim_range(&kb, &ke);
	*(char *)ke = '\0';
	s = find_key(kb);
	alias = !s && (s = find_key_alias(kb)) != NULL;
	if (!s) {
		fprintf(stderr, "shoal: %s:%d: unknown key '%s'\n", path, lineno, kb);
		return 2;
	}
	b = eq + 1;
	trim_range(&b, &e);
	snprintf(where, sizeof where, "at %s:%d", path, lineno);
	if (b < e && (*b == '"' || *b == '\'')) {
		if (e - b < 2 || e[-1] != *b) {
			report_invalid(s, "", "unterminated quote", where);
			return 2;
		}
		b++;
		e--;
	}
	*(char *)e = '\0';
	if (alias && alias_needs_unit(s, b, where))
		return 2;
	return apply_value(cfg, s, b, where);
}

static int read_file(struct shoal_config *cfg, const char *path, bool explicit)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int lineno = 0, rc = 0;

	if (!f) {
		if (!explicit && errno == ENOENT)
			return 0;
		fprintf(stderr, "shoal: cannot open config file '%s': %s\n", path, strerror(errno));
		return 2;
	}
	while (rc == 0) {
		errno = 0;
		n = getline(&line, &cap, f);
		if (n < 0)
			break;
		lineno++;
		if ((size_t)n != strlen(line)) {
			fprintf(stderr, "shoal: %s:%d: NUL byte in line\n", path, lineno);
			rc = 2;
		} else {
			rc = file_line(cfg, path, lineno, line);
		}
	}
	if (rc == 0 && (ferror(f) || errno == ENOMEM)) {
		fprintf(stderr, "shoal: cannot read config file '%s': %s\n", path,
			strerror(errno ? errno : EIO));
		rc = 2;
	}
	free(line);
	fclose(f);
	return rc;
}

/* Pick the file: --config, else SHOAL_CONFIG, else the default (optional). */
static int load_file(struct shoal_config *cfg, const char *flag_path, char **envp)
{
	const struct setting *s = config_settings;
	const char *path = flag_path;
	const char *where = NULL;

	while (s->type != T_CONFIG)
		s++; /* the table has exactly one T_CONFIG row */
	if (!path) {
		path = env_get(envp, s->env);
		where = "from the environment";
		if (path && !*path)
			path = NULL;
	}
	if (!path)
		return read_file(cfg, cfg->config_file, false);
	if (!*path) {
		report_invalid(s, path, "empty path", where);
		return 2;
	}
	if (apply_value(cfg, s, path, where))
		return 2;
	return read_file(cfg, cfg->config_file, true);
}

/* ---------------------------------------------------------- environment */

/* DRAIN_TIMEOUT=30s for DRAIN_TIMEOUT_MS (which wins when both are set). */
static int load_env_alias(struct shoal_config *cfg, const struct setting *s, char **envp)
{
	static const char *const where = "from the environment";
	char name[128];
	size_t len = strlen(s->env);
	const char *v;

	if (len < 4 || len - 3 >= sizeof name || strcmp(s->env + len - 3, "_MS") != 0)
		return 0;
	memcpy(name, s->env, len - 3);
	name[len - 3] = '\0';
	v = env_get(envp, name);
	if (!v || !*v)
		return 0;
	if (alias_needs_unit(s, v, where))
		return 2;
	return apply_value(cfg, s, v, where);
}

static int load_env(struct shoal_config *cfg, char **envp)
{
	for (size_t i = 0; i < N_SETTINGS; i++) {
		const struct setting *s = &config_settings[i];
		const char *v;

		if (s->type == T_CONFIG)
			continue;
		if (is_duration(s) && load_env_alias(cfg, s, envp))
			return 2;
		v = env_get(envp, s->env);
		/* An empty variable counts as unset (VAR= in a compose file). */
		if (v && *v && apply_value(cfg, s, v, "from the environment"))
			return 2;
	}
	return 0;
}

/* ----------------------------------------------------------- command line */

struct flag_val {
	const struct setting *s;
	const char *value;
};

struct argv_scan {
	struct flag_val *vals;
	int n;
	const char *config_path;
	bool health;            /* --health: probe the running node (healthcheck.h) */
};

static bool is_flag(const char *a)
{
	return a && a[0] == '-' && a[1] == '-' && a[2] != '\0';
}

/* argv[*i] is "--name[=value]". Records it in sc; 0 or 2. */
static int scan_flag(int argc, char **argv, int *i, struct argv_scan *sc)
{
	const char *name = argv[*i] + 2, *eq = strchr(name, '=');
	size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
	const struct setting *s = find_flag(name, nlen);
	const char *v = eq ? eq + 1 : NULL;
	bool b, alias = !s && (s = find_flag_alias(name, nlen)) != NULL;

	if (!s && nlen > 3 && strncmp(name, "no-", 3) == 0) {
		s = find_flag(name + 3, nlen - 3);
		if (s && s->type == T_BOOL && !eq) {
			sc->vals[sc->n++] = (struct flag_val){ s, "false" };
			return 0;
		}
		if (s && s->type == T_BOOL) {
			report_invalid(s, v, "--no-... takes no value", NULL);
			return 2;
		}
		s = NULL;
	}
	if (!s) {
		fprintf(stderr, "shoal: unknown flag '--%.*s' (see shoal --help)\n", (int)nlen, name);
		return 2;
	}
	if (!v && s->type == T_BOOL) {
		/* Bare --flag means true; a following bool word is its value. */
		v = "true";
		if (*i + 1 < argc && parse_bool(argv[*i + 1], &b) == 0)
			v = argv[++*i];
	} else if (!v) {
		if (*i + 1 >= argc || is_flag(argv[*i + 1])) {
			report_invalid(s, "", "the flag needs a value", NULL);
			return 2;
		}
		v = argv[++*i];
	}
	if (alias && alias_needs_unit(s, v, NULL))
		return 2;
	if (s->type == T_CONFIG)
		sc->config_path = v;
	else
		sc->vals[sc->n++] = (struct flag_val){ s, v };
	return 0;
}

/* Returns 0, 1 after --help / --version (printed), or 2. --health is
 * recorded in sc (config_load returns CONFIG_HEALTH). */
static int scan_argv(int argc, char **argv, struct argv_scan *sc)
{
	for (int i = 1; i < argc && argv[i]; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			config_print_help(stdout);
			return 1;
		}
		if (strcmp(a, "--version") == 0) {
			printf("shoal %s\n", SHOAL_VERSION);
			return 1;
		}
		if (strcmp(a, "--health") == 0) {
			sc->health = true;
			continue;
		}
		if (!is_flag(a)) {
			if (a[0] == '-')
				fprintf(stderr, "shoal: unknown flag '%s' (see shoal --help)\n", a);
			else
				fprintf(stderr, "shoal: unexpected argument '%s' (settings are flags: "
					"--name=value; see shoal --help)\n", a);
			return 2;
		}
		if (scan_flag(argc, argv, &i, sc))
			return 2;
	}
	return 0;
}

/* ------------------------------------------------------- cross-checks */

static int check_config(const struct shoal_config *cfg)
{
	const char *msg = NULL, *val = NULL;
	const char *key = NULL;
	char pxerr[256], host[256];
	uint16_t port;

	if (!cfg->upstream_url[0]) {
		fprintf(stderr, "shoal: UPSTREAM_DB_URL (--upstream-db-url) is required\n");
		return 2;
	}
	if (cfg->tls_cert[0] && !cfg->tls_key[0])
		key = "tls_cert", val = cfg->tls_cert, msg = "tls_key must be set too";
	else if (cfg->tls_key[0] && !cfg->tls_cert[0])
		key = "tls_key", val = cfg->tls_key, msg = "tls_cert must be set too";
	else if (cfg->tls_mode == TLS_MODE_REQUIRED && !cfg->tls_cert[0])
		key = "tls_mode", val = "required", msg = "needs tls_cert and tls_key";
	else if (cfg->rsa_public_key[0] && !cfg->rsa_private_key[0])
		key = "rsa_public_key", val = cfg->rsa_public_key, msg = "needs rsa_private_key";
	else if (cfg->upstream_tls_verify && !cfg->upstream_tls)
		key = "upstream_tls_verify", val = "true", msg = "needs upstream_tls=true";
	else if (config_parse_proxysql_admin(cfg->proxysql_admin, NULL, PROXYSQL_ADMIN_MAX, pxerr, sizeof pxerr) < 0)
		key = "proxysql_admin", val = "(hidden)", msg = pxerr;
	else if (cfg->proxysql_admin[0] &&
		 config_node_address(cfg, host, sizeof host, &port, pxerr, sizeof pxerr) < 0)
		key = "proxysql_node_address", val = cfg->proxysql_node_address, msg = pxerr;
	if (!key)
		return 0;
	report_invalid(find_key(key), val, msg, NULL);
	return 2;
}

int config_load(struct shoal_config *cfg, int argc, char **argv, char **envp)
{
	struct argv_scan sc = { NULL, 0, NULL, false };
	int rc;

	config_defaults(cfg);
	if (!envp)
		envp = environ;
	if (argc > 1) {
		sc.vals = calloc((size_t)argc, sizeof *sc.vals);
		if (!sc.vals) {
			fprintf(stderr, "shoal: out of memory reading the command line\n");
			return 2;
		}
	}
	rc = scan_argv(argc, argv, &sc);
	if (rc == 0)
		rc = load_file(cfg, sc.config_path, envp);
	if (rc == 0)
		rc = load_env(cfg, envp);
	for (int i = 0; rc == 0 && i < sc.n; i++)
		rc = apply_value(cfg, sc.vals[i].s, sc.vals[i].value, NULL);
	/* the probe needs METRICS_ADDRESS only, not a complete node setup */
	if (rc == 0 && sc.health)
		rc = CONFIG_HEALTH;
	if (rc == 0)
		rc = check_config(cfg);
	free(sc.vals);
	return rc;
}

/* ------------------------------------------------------------- lookups */

const struct shoal_user *config_find_user(const struct shoal_config *cfg, const char *name,
					  bool *is_monitor)
{
	if (is_monitor)
		*is_monitor = false;
	if (!cfg || !name || !*name)
		return NULL;
	if (strcmp(cfg->upstream_user.name, name) == 0)
		return &cfg->upstream_user;
	for (int i = 0; i < cfg->n_allowed_users; i++)
		if (strcmp(cfg->allowed_users[i].name, name) == 0)
			return &cfg->allowed_users[i];
	if (strcmp(cfg->monitor_user.name, name) == 0) {
		if (is_monitor)
			*is_monitor = true;
		return &cfg->monitor_user;
	}
	return NULL;
}

/* ------------------------------------------------------ help and summary */

/* Print text wrapped to 78 columns, each line indented by 6 spaces. */
static void print_wrapped(FILE *out, const char *text)
{
	const int indent = 6, width = 78;
	int col = 0;

	while (*text) {
		size_t w = strcspn(text, " ");

		if (col > indent && col + 1 + (int)w > width) {
			fputc('\n', out);
			col = 0;
		}
		if (col == 0)
			col = fprintf(out, "%*s", indent, "");
		else
			col += fprintf(out, " ");
		col += fprintf(out, "%.*s", (int)w, text);
		text += w;
		while (*text == ' ')
			text++;
	}
	fputc('\n', out);
}

static void print_setting_help(FILE *out, const struct setting *s)
{
	if (s->type == T_BOOL)
		fprintf(out, "  --%s[=BOOL], --no-%s\n", s->flag, s->flag);
	else
		fprintf(out, "  --%s %s\n", s->flag, s->metavar);
	if (s->type == T_CONFIG)
		fprintf(out, "      env %s (not a file key)\n", s->env);
	else
		fprintf(out, "      env %s, file key %s\n", s->env, s->key);
	if (s->off == OFF(workers))
		fprintf(out, "      default: number of online CPUs (here %d)\n", online_cpus());
	else
		fprintf(out, "      default: %s\n", s->def);
	if (is_duration(s))
		fprintf(out, "      also --%.*s DURATION (e.g. 30s, 500ms, 5m), env %.*s, key %.*s\n",
			(int)strlen(s->flag) - 3, s->flag, (int)strlen(s->env) - 3, s->env,
			(int)strlen(s->key) - 3, s->key);
	print_wrapped(out, s->help);
}

void config_print_help(FILE *out)
{
	fprintf(out,
		"Usage: shoal [options]\n"
		"Shoal %s, a MySQL-protocol query-cache proxy.\n\n"
		"Every setting has a flag, an environment variable and a config-file key.\n"
		"Precedence: defaults < config file < environment < flags. Flags take\n"
		"--name=value or --name value; boolean flags also take --name (true) and\n"
		"--no-name (false). Booleans: true/false, 1/0, yes/no, on/off.\n\n",
		SHOAL_VERSION);
	for (size_t i = 0; i < N_SETTINGS; i++)
		print_setting_help(out, &config_settings[i]);
	fprintf(out,
		"  -h, --help\n      Print this help and exit.\n"
		"  --version\n      Print the version and exit.\n"
		"  --check-snapshot PATH\n      Do not start a node: read the cache snapshot file PATH, check it\n"
		"      whole (format version, lengths, checksums, references) and print\n"
		"      what it holds. Exit 0 when it is sound, 1 when not (the reason\n"
		"      printed), 2 when it cannot be read.\n"
		"  --health\n      Do not start a node: ask the running one for its /health at\n"
		"      METRICS_ADDRESS (read from the same file, environment and flags;\n"
		"      0.0.0.0 is asked on 127.0.0.1, [::] on [::1]), 2 s at most. Exit 0\n"
		"      when it answers 200, 1 otherwise, with the reason on stderr. For\n"
		"      Docker's HEALTHCHECK and other probes.\n\n"
		"Give passwords in the environment or the config file, not as flags: flags\n"
		"are visible to every user in ps. Exit status 2 on a bad or missing setting.\n");
}

static void print_addr(FILE *out, const struct shoal_addr *a)
{
	if (strchr(a->host, ':'))
		fprintf(out, "[%s]:%u", a->host, (unsigned)a->port);
	else
		fprintf(out, "%s:%u", a->host, (unsigned)a->port);
}

static void print_value(FILE *out, const struct shoal_config *cfg, const struct setting *s)
{
	const char *p = (const char *)cfg + s->off;
	char buf[REDACT_BUF];

	switch (s->type) {
	case T_URL:
		config_redact_url(cfg->upstream_url, buf, sizeof buf);
		fputs(buf, out);
		break;
	case T_STR:
	case T_CONFIG:
		fputs(s->secret == SEC_ALL && *p ? "***" : p, out);
		break;
	case T_ADDR:
		print_addr(out, (const struct shoal_addr *)(const void *)p);
		break;
	case T_ADDRLIST:
		for (int i = 0; i < cfg->n_listen; i++) {
			fputs(i ? "," : "", out);
			print_addr(out, &cfg->listen[i]);
		}
		break;
	case T_USERS:
		for (int i = 0; i < cfg->n_allowed_users; i++)
			fprintf(out, "%s%s:***", i ? "," : "", cfg->allowed_users[i].name);
		break;
	case T_ENUM:
		fputs(s->names[*(const int *)(const void *)p], out);
		break;
	case T_INT:
		fprintf(out, "%d", *(const int *)(const void *)p);
		break;
	case T_SIZE:
		fprintf(out, "%u", (unsigned)*(const uint32_t *)(const void *)p);
		break;
	case T_BOOL:
		fputs(*(const bool *)(const void *)p ? "true" : "false", out);
		break;
	}
}

void config_log_summary(const struct shoal_config *cfg, FILE *out)
{
	fprintf(out, "shoal %s: effective settings\n", SHOAL_VERSION);
	for (size_t i = 0; i < N_SETTINGS; i++) {
		fprintf(out, "  %-28s = ", config_settings[i].key);
		print_value(out, cfg, &config_settings[i]);
		fputc('\n', out);
	}
}

/* --------------------------------------------------------- introspection */

int config_each(int (*fn)(const char *key, void *arg), void *arg)
{
	for (size_t i = 0; i < N_SETTINGS; i++) {
		int rc;

		if (config_settings[i].type == T_CONFIG)
			continue;
		rc = fn(config_settings[i].key, arg);
		if (rc)
			return rc;
	}
	return 0;
}

bool config_is_set(const struct shoal_config *cfg, const char *key)
{
	const struct setting *s = key ? find_key(key) : NULL;
	size_t i = s ? (size_t)(s - config_settings) : 128;

	return i < 128 && (cfg->set_mask[i / 64] & (1ull << (i % 64)));
}

bool config_has_key(const char *key)
{
	return key && find_key(key) != NULL;
}

bool config_is_secret(const char *key)
{
	const struct setting *s = key ? find_key(key) : NULL;

	return s && s->secret != SEC_NONE;
}

/* Copy a memstream's text into out[outlen], truncating. */
static void copy_out(const char *text, size_t len, char *out, size_t outlen)
{
	if (len >= outlen)
		len = outlen - 1;
	memcpy(out, text, len);
	out[len] = '\0';
}

int config_get_text(const struct shoal_config *cfg, const char *key, char *out, size_t outlen)
{
	const struct setting *s = key ? find_key(key) : NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!out || outlen == 0)
		return -1;
	out[0] = '\0';
	if (!s || !cfg)
		return -1;
	f = open_memstream(&text, &len);
	if (!f)
		return -1;
	print_value(f, cfg, s);
	if (fclose(f) != 0) {
		free(text);
		return -1;
	}
	copy_out(text, len, out, outlen);
	free(text);
	return 0;
}

int config_set_text(struct shoal_config *cfg, const char *key, const char *value,
		    char *err, size_t errlen)
{
	const struct setting *s = key ? find_key(key) : NULL;
	char reason[512], *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!s)
		return config_fail(err, errlen, "unknown setting '%s'", key ? key : "");
	if (!cfg || !value)
		return config_fail(err, errlen, "no value for %s", s->key);
	if (apply(cfg, s, value, reason, sizeof reason) == 0)
		return 0;
	f = open_memstream(&text, &len);
	if (!f)
		return config_fail(err, errlen, "invalid value for %s: %s", s->key, reason);
	fprintf(f, "invalid value for %s (--%s / %s): '", s->key, s->flag, s->env);
	print_redacted(f, s, value);
	fprintf(f, "': %s", reason);
	if (fclose(f) != 0) {
		free(text);
		return config_fail(err, errlen, "invalid value for %s: %s", s->key, reason);
	}
	if (err && errlen > 0)
		copy_out(text, len, err, errlen);
	free(text);
	return -1;
}
