/*
 * test_config.c: unit tests for src/config/config.c: defaults; precedence (defaults <
 * file < environment < flags, and --config over SHOAL_CONFIG); the config file
 * format (comments, blank lines, quotes) and its errors with file:line; flag
 * forms (--x=v, --x v, bare and --no- booleans), unknown flags, missing
 * values, --help and --version; the mysql:// URL parser (percent-encoding,
 * IPv6, default port, bad URLs, port range); ALLOWED_USERS; size suffixes;
 * listen lists; enums; cross-checks; config_find_user; the drain settings and
 * proxysql_admin's list and node address (config.c, for pxadmin.c); --health (the settings
 * read, no upstream URL required; healthcheck_target's wildcard mapping);
 * and that no password ever reaches stderr or the summary.
 *
 * Every config_load() call gets an explicit envp (with SHOAL_CONFIG pointing
 * at a temporary file) so the machine's environment and /etc/shoal never
 * matter. stdout/stderr are captured by dup2() onto temporary files.
 */
#include "config/config.h"
#include "config/config_parse.h"
#include "base/duration.h"
#include "ops/healthcheck.h"
#include "tap.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_TMP 32

static char tmp_paths[MAX_TMP][64];
static int n_tmp;
static char captured[65536]; /* the last capture's text */

static bool has(const char *hay, const char *needle)
{
	return strstr(hay, needle) != NULL;
}

/* Write text to a new temporary file; the path lives until cleanup(). */
static const char *write_tmp(const char *text)
{
	char *p;
	int fd;
	size_t len = strlen(text);

	if (n_tmp == MAX_TMP) {
		fprintf(stderr, "too many temporary files\n");
		exit(99);
	}
	p = tmp_paths[n_tmp++];
	snprintf(p, sizeof tmp_paths[0], "/tmp/shoal-test-conf-XXXXXX");
	fd = mkstemp(p);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		perror("temporary config file");
		exit(99);
	}
	close(fd);
	return p;
}

static void cleanup(void)
{
	for (int i = 0; i < n_tmp; i++)
		unlink(tmp_paths[i]);
}

struct capture {
	int which; /* 1: stdout, 2: stderr */
	int fd, saved;
};

static void cap_begin(struct capture *c, int which)
{
	char path[] = "/tmp/shoal-test-cap-XXXXXX";

	fflush(stdout);
	fflush(stderr);
	c->which = which;
	c->fd = mkstemp(path);
	c->saved = dup(which);
	if (c->fd < 0 || c->saved < 0 || dup2(c->fd, which) < 0) {
		perror("capture");
		exit(99);
	}
	unlink(path);
}

/* Restore the stream; its text goes to captured[]. */
static const char *cap_end(struct capture *c)
{
	ssize_t n;

	fflush(stdout);
	fflush(stderr);
	dup2(c->saved, c->which);
	close(c->saved);
	lseek(c->fd, 0, SEEK_SET);
	n = read(c->fd, captured, sizeof captured - 1);
	captured[n > 0 ? n : 0] = '\0';
	close(c->fd);
	return captured;
}

static int argc_of(char **argv)
{
	int n = 0;

	while (argv[n])
		n++;
	return n;
}

/* config_load with stderr captured into captured[]. */
static int load(struct shoal_config *c, char **argv, char **envp)
{
	struct capture cap;
	int rc;

	cap_begin(&cap, 2);
	rc = config_load(c, argc_of(argv), argv, envp);
	cap_end(&cap);
	return rc;
}

static const char *empty_conf;
static char env_conf[128];  /* "SHOAL_CONFIG=<empty_conf>" */
static char *argv0[] = { "shoal", NULL };

static void test_defaults(void)
{
	struct shoal_config c;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	config_defaults(&c);
	is_int(c.n_listen, 1, "default: one listener");
	is_str(c.listen[0].host, "0.0.0.0", "default: listen host");
	is_int(c.listen[0].port, 3307, "default: listen port 3307");
	ok(strcmp(c.metrics.host, "0.0.0.0") == 0 && c.metrics.port == 6034, "default: metrics 0.0.0.0:6034");
	ok(strcmp(c.admin.host, "127.0.0.1") == 0 && c.admin.port == 6035, "default: admin 127.0.0.1:6035");
	ok(strcmp(c.monitor_user.name, "monitor") == 0 && strcmp(c.monitor_user.password, "monitor") == 0,
	   "default: monitor/monitor");
	is_int(c.auth_plugin, AUTH_NATIVE_PASSWORD, "default: mysql_native_password");
	is_int(c.tls_mode, TLS_MODE_OPTIONAL, "default: tls_mode optional");
	is_int(c.max_allowed_packet, 67108864, "default: max_allowed_packet 64M");
	is_int(c.max_client_connections, 10000, "default: max_client_connections");
	is_int(c.handshake_timeout_ms, 10000, "default: handshake_timeout_ms");
	is_int(c.upstream_connect_timeout_ms, 5000, "default: upstream_connect_timeout_ms");
	is_int(c.workers, cpus < 1 ? 1 : cpus > 256 ? 256 : cpus, "default: workers = online CPUs");
	is_int(c.log_level, LOG_LEVEL_INFO, "default: log_level info");
	ok(!c.auto_cache && !c.upstream_tls && !c.upstream_tls_verify, "default: booleans false");
	is_int(c.upstream_port, 3306, "default: upstream port 3306");
	is_int(c.n_allowed_users, 0, "default: no allowed users");
	is_str(c.config_file, "/etc/shoal/shoal.conf", "default: config file path");
}

static void test_required_url(void)
{
	struct shoal_config c;
	char *env[] = { env_conf, NULL };
	char *env_url[] = { env_conf, "UPSTREAM_DB_URL=mysql://app:pw@db", NULL };

	is_int(load(&c, argv0, env), 2, "no upstream URL: exit status 2");
	ok(has(captured, "UPSTREAM_DB_URL (--upstream-db-url) is required"), "no upstream URL: message");
	is_int(load(&c, argv0, env_url), 0, "URL from env alone loads");
	ok(c.listen[0].port == 3307 && c.n_listen == 1, "other settings keep their defaults");
}

static void test_precedence(void)
{
	struct shoal_config c;
	const char *conf = write_tmp(
		"# Shoal test config\n"
		"\n"
		"upstream_db_url = mysql://fileuser:filepw@filehost/filedb\n"
		"   workers = 3\n"
		"log_level=debug\n"
		"max_client_connections = 100\n"
		"handshake_timeout_ms = 111\n"
		"max_allowed_packet = 2M\n");
	const char *conf2 = write_tmp("workers = 9\nupstream_db_url = mysql://u:p@h\n");
	char ec[128], ec2[128];

	snprintf(ec, sizeof ec, "SHOAL_CONFIG=%s", conf);
	snprintf(ec2, sizeof ec2, "SHOAL_CONFIG=%s", conf2);
	char *env_file_only[] = { ec, NULL };
	char *env[] = { ec, "WORKERS=5", "LOG_LEVEL=warn", "MAX_ALLOWED_PACKET=3M",
			"UPSTREAM_DB_URL=mysql://envuser:envpw@envhost:3310", NULL };
	char *argv[] = { "shoal", "--workers", "7",
			 "--upstream-db-url=mysql://flaguser:flagpw@flaghost:3311/fdb", NULL };
	char *argv_cfg[] = { "shoal", "--config", (char *)conf2, NULL };

	is_int(load(&c, argv0, env_file_only), 0, "file only: loads");
	is_int(c.workers, 3, "file beats default (workers)");
	is_int(c.log_level, LOG_LEVEL_DEBUG, "file: log_level=debug without spaces");
	is_str(c.upstream_host, "filehost", "file: upstream host");
	is_str(c.config_file, conf, "config_file records SHOAL_CONFIG");

	is_int(load(&c, argv, env), 0, "file + env + flags: loads");
	is_int(c.workers, 7, "flag beats env and file (workers)");
	is_int(c.log_level, LOG_LEVEL_WARN, "env beats file (log_level)");
	is_int(c.max_allowed_packet, 3 << 20, "env beats file (max_allowed_packet)");
	is_int(c.max_client_connections, 100, "file value kept when nothing overrides it");
	is_int(c.handshake_timeout_ms, 111, "file: handshake_timeout_ms");
	ok(strcmp(c.upstream_host, "flaghost") == 0 && c.upstream_port == 3311 &&
	   strcmp(c.upstream_user.name, "flaguser") == 0, "flag beats env and file (URL)");

	is_int(load(&c, argv_cfg, env), 0, "--config beats SHOAL_CONFIG: loads");
	is_int(c.workers, 5, "--config file read, env still beats it");
	is_str(c.config_file, conf2, "config_file records --config");
	char *env2[] = { ec2, NULL };
	is_int(load(&c, argv0, env2), 0, "second file loads");
	is_int(c.workers, 9, "second file's value");
}

static void test_url(void)
{
	struct shoal_config c;
	char err[256];

	config_defaults(&c);
	is_int(config_parse_upstream_url(&c, "mysql://app%40corp:p%40ss%3Aw%2Frd@db.example.com:3310/shop",
					 err, sizeof err), 0, "URL: percent-encoded parses");
	is_str(c.upstream_user.name, "app@corp", "URL: user percent-decoded");
	is_str(c.upstream_user.password, "p@ss:w/rd", "URL: password percent-decoded");
	is_str(c.upstream_host, "db.example.com", "URL: host");
	is_int(c.upstream_port, 3310, "URL: port");
	is_str(c.upstream_db, "shop", "URL: db");

	is_int(config_parse_upstream_url(&c, "mysql://u:p@[2001:db8::1]:3400/x", err, sizeof err), 0,
	       "URL: IPv6 in brackets parses");
	ok(strcmp(c.upstream_host, "2001:db8::1") == 0 && c.upstream_port == 3400, "URL: IPv6 host and port");
	is_int(config_parse_upstream_url(&c, "mysql://u@h", err, sizeof err), 0, "URL: no password, port, db");
	ok(c.upstream_port == 3306 && c.upstream_db[0] == '\0' && c.upstream_user.password[0] == '\0',
	   "URL: default port 3306, empty db and password");
	is_int(config_parse_upstream_url(&c, "mysql://u:p@ss@h:3307", err, sizeof err), 0,
	       "URL: unencoded @ in password");
	ok(strcmp(c.upstream_user.password, "p@ss") == 0 && strcmp(c.upstream_host, "h") == 0,
	   "URL: last @ splits user info from host");
	is_int(config_parse_upstream_url(&c, "mysql://u:p@[::1]", err, sizeof err), 0, "URL: [::1] no port");
	ok(strcmp(c.upstream_host, "::1") == 0 && c.upstream_port == 3306, "URL: [::1] default port");
	is_int(config_parse_upstream_url(&c, "mysql://u:p@h:65535", err, sizeof err), 0, "URL: port 65535 ok");

	is_int(config_parse_upstream_url(&c, "mysql://u:p@/db", err, sizeof err), -1, "URL: missing host");
	is_int(config_parse_upstream_url(&c, "mysql://u:p@:3306", err, sizeof err), -1, "URL: empty host");
	is_int(config_parse_upstream_url(&c, "postgres://u:p@h/db", err, sizeof err), -1, "URL: wrong scheme");
	is_int(config_parse_upstream_url(&c, "mysql://u:p@h:0", err, sizeof err), -1, "URL: port 0");
	is_int(config_parse_upstream_url(&c, "mysql://u:p@h:65536", err, sizeof err), -1, "URL: port 65536");
	is_int(config_parse_upstream_url(&c, "mysql://u:p@h:db", err, sizeof err), -1, "URL: port not a number");
	is_int(config_parse_upstream_url(&c, "mysql://u:p@::1:3306", err, sizeof err), -1,
	       "URL: IPv6 without brackets");
	is_int(config_parse_upstream_url(&c, "mysql://h:3306/db", err, sizeof err), -1, "URL: no user");
	is_int(config_parse_upstream_url(&c, "mysql://u:sec%zzret@h", err, sizeof err), -1,
	       "URL: bad percent-encoding");
	ok(!has(err, "sec") && has(err, "password"), "URL: error names the part, not the password");
	ok(strcmp(c.upstream_host, "h") == 0 && c.upstream_port == 65535,
	   "URL: failed parses leave the last good one");
}

static void test_url_load_errors(void)
{
	struct shoal_config c;
	char *env_bad[] = { env_conf, "UPSTREAM_DB_URL=mysql://app:topsecret@h:70000/db", NULL };
	char *argv_bad[] = { "shoal", "--upstream-db-url", "http://app:topsecret@h/db", NULL };

	is_int(load(&c, argv0, env_bad), 2, "load: port out of range: exit 2");
	ok(has(captured, "shoal: invalid value for upstream_db_url (--upstream-db-url / UPSTREAM_DB_URL): "
		"'mysql://app:***@h:70000/db': port out of range"), "load: port error message format");
	ok(!has(captured, "topsecret"), "load: port error hides the password");
	is_int(load(&c, argv_bad, env_bad + 1), 2, "load: bad scheme: exit 2");
	ok(has(captured, "app:***@") && !has(captured, "topsecret"), "load: scheme error hides the password");
}

static void test_redact(void)
{
	char out[256], small[12];

	config_redact_url("mysql://app:topsecret@h:1/db", out, sizeof out);
	is_str(out, "mysql://app:***@h:1/db", "redact: password replaced");
	config_redact_url("mysql://app@h/db", out, sizeof out);
	is_str(out, "mysql://app@h/db", "redact: no password, unchanged");
	config_redact_url("mysql://u:a@b@h", out, sizeof out);
	is_str(out, "mysql://u:***@h", "redact: password containing @");
	config_redact_url("mysql://app:topsecret@h:1/db", small, sizeof small);
	ok(strlen(small) == sizeof small - 1 && !has(small, "top"), "redact: truncated, no password");
}

static void test_file_format(void)
{
	struct shoal_config c;
	const char *conf = write_tmp(
		"upstream_db_url = \"mysql://u:p@h\"\n"
		"# monitor_password = commented\n"
		"monitor_password = \"  a # b \"\r\n"
		"monitor_user = 'mon'\n"
		"tls_cert =\n");
	char ec[128];

	snprintf(ec, sizeof ec, "SHOAL_CONFIG=%s", conf);
	char *env[] = { ec, NULL };
	is_int(load(&c, argv0, env), 0, "file: quotes, comments, CRLF load");
	is_str(c.monitor_user.password, "  a # b ", "file: double quotes keep spaces and #");
	is_str(c.monitor_user.name, "mon", "file: single quotes");
	is_str(c.upstream_host, "h", "file: quoted URL");
}

static void test_file_errors(void)
{
	struct shoal_config c;
	const char *unknown = write_tmp("workers = 2\nfrobnicate = 1\n");
	const char *badval = write_tmp("workers = many\n");
	const char *noeq = write_tmp("workers 2\n");
	char ec[128], where[128];
	char *argv_missing[] = { "shoal", "--config=/nonexistent/shoal.conf", NULL };
	char *env_missing[] = { "SHOAL_CONFIG=/nonexistent/shoal.conf", NULL };

	snprintf(ec, sizeof ec, "SHOAL_CONFIG=%s", unknown);
	snprintf(where, sizeof where, "%s:2", unknown);
	char *env[] = { ec, "UPSTREAM_DB_URL=mysql://u:p@h", NULL };
	is_int(load(&c, argv0, env), 2, "file: unknown key: exit 2");
	ok(has(captured, "frobnicate") && has(captured, where), "file: unknown key named with file:line");

	snprintf(ec, sizeof ec, "SHOAL_CONFIG=%s", badval);
	is_int(load(&c, argv0, env), 2, "file: bad number: exit 2");
	ok(has(captured, "invalid value for workers (--workers / WORKERS): 'many'"), "file: bad number message");

	snprintf(ec, sizeof ec, "SHOAL_CONFIG=%s", noeq);
	is_int(load(&c, argv0, env), 2, "file: line without '=': exit 2");

	is_int(load(&c, argv_missing, env + 1), 2, "--config missing file: exit 2");
	ok(has(captured, "/nonexistent/shoal.conf"), "--config missing file: named");
	is_int(load(&c, argv0, env_missing), 2, "SHOAL_CONFIG missing file: exit 2");
}

static void test_flags(void)
{
	struct shoal_config c;
	char *env[] = { env_conf, "UPSTREAM_DB_URL=mysql://u:p@h", NULL };
	char *forms[] = { "shoal", "--max-client-connections", "50", "--handshake-timeout-ms=99", NULL };
	char *unknown[] = { "shoal", "--frobnicate=topsecret", NULL };
	char *noval[] = { "shoal", "--workers", NULL };
	char *noval2[] = { "shoal", "--workers", "--log-level=debug", NULL };
	char *emptyval[] = { "shoal", "--workers=", NULL };
	char *positional[] = { "shoal", "extra", NULL };
	char *range[] = { "shoal", "--workers=257", NULL };

	is_int(load(&c, forms, env), 0, "flags: --x v and --x=v load");
	ok(c.max_client_connections == 50 && c.handshake_timeout_ms == 99, "flags: both forms applied");
	is_int(load(&c, unknown, env), 2, "flags: unknown flag: exit 2");
	ok(has(captured, "--frobnicate") && !has(captured, "topsecret"), "flags: unknown flag named, value not");
	is_int(load(&c, noval, env), 2, "flags: missing value at end: exit 2");
	is_int(load(&c, noval2, env), 2, "flags: missing value before next flag: exit 2");
	is_int(load(&c, emptyval, env), 2, "flags: empty number: exit 2");
	is_int(load(&c, positional, env), 2, "flags: positional argument: exit 2");
	is_int(load(&c, range, env), 2, "flags: workers 257 out of range: exit 2");
}

static void test_help_version(void)
{
	static const char *const envs[] = {
		"UPSTREAM_DB_URL", "LISTEN_ADDRESS", "METRICS_ADDRESS", "ADMIN_ADDRESS", "ALLOWED_USERS",
		"MONITOR_USER", "MONITOR_PASSWORD", "AUTH_PLUGIN", "RSA_PRIVATE_KEY", "RSA_PUBLIC_KEY",
		"TLS_MODE", "TLS_CERT", "TLS_KEY", "UPSTREAM_TLS", "UPSTREAM_TLS_VERIFY", "UPSTREAM_TLS_CA",
		"UPSTREAM_CONNECT_TIMEOUT_MS", "MAX_ALLOWED_PACKET", "MAX_CLIENT_CONNECTIONS",
		"HANDSHAKE_TIMEOUT_MS", "WORKERS", "LOG_LEVEL", "AUTO_CACHE", "SHOAL_CONFIG",
		"--upstream-db-url", "--no-auto-cache", "upstream_tls_ca", "max_allowed_packet",
	};
	struct shoal_config c;
	struct capture cap;
	char *env[] = { env_conf, NULL };
	char *help[] = { "shoal", "--workers=bad", "-h", NULL };
	char *version[] = { "shoal", "--version", NULL };
	int rc, missing = 0;

	cap_begin(&cap, 1);
	rc = config_load(&c, argc_of(help), help, env);
	cap_end(&cap);
	is_int(rc, 1, "-h: returns 1 (values are checked only after the scan)");
	for (size_t i = 0; i < sizeof envs / sizeof envs[0]; i++)
		if (!has(captured, envs[i])) {
			printf("# help lacks %s\n", envs[i]);
			missing++;
		}
	is_int(missing, 0, "--help: names every setting");
	ok(has(captured, "default: 0.0.0.0:3307"), "--help: shows defaults");
	cap_begin(&cap, 1);
	rc = config_load(&c, argc_of(version), version, env);
	cap_end(&cap);
	is_int(rc, 1, "--version: returns 1");
	is_str(captured, "shoal 0.1.0\n", "--version: prints shoal 0.1.0");
}

static void test_bools(void)
{
	static const char *const yes[] = { "true", "1", "yes", "on", "TRUE" };
	static const char *const no[] = { "false", "0", "no", "off", "Off" };
	struct shoal_config c;
	char ev[64];
	char *env[] = { env_conf, "UPSTREAM_DB_URL=mysql://u:p@h", ev, NULL };
	char *bare[] = { "shoal", "--auto-cache", NULL };
	char *neg[] = { "shoal", "--no-auto-cache", NULL };
	char *sep[] = { "shoal", "--auto-cache", "false", NULL };
	char *bad[] = { "shoal", "--auto-cache=maybe", NULL };
	char *tls[] = { "shoal", "--upstream-tls", "--upstream-tls-verify", NULL };
	char *verify_only[] = { "shoal", "--upstream-tls-verify", NULL };
	int good = 0;

	for (size_t i = 0; i < 5; i++) {
		snprintf(ev, sizeof ev, "AUTO_CACHE=%s", yes[i]);
		good += load(&c, argv0, env) == 0 && c.auto_cache;
		snprintf(ev, sizeof ev, "AUTO_CACHE=%s", no[i]);
		good += load(&c, argv0, env) == 0 && !c.auto_cache;
	}
	is_int(good, 10, "bool: true/1/yes/on/TRUE and false/0/no/off/Off");
	snprintf(ev, sizeof ev, "AUTO_CACHE=maybe");
	is_int(load(&c, argv0, env), 2, "bool: bad env value: exit 2");
	snprintf(ev, sizeof ev, "AUTO_CACHE=0");
	ok(load(&c, bare, env) == 0 && c.auto_cache, "bool: bare --auto-cache is true");
	snprintf(ev, sizeof ev, "AUTO_CACHE=1");
	ok(load(&c, neg, env) == 0 && !c.auto_cache, "bool: --no-auto-cache beats env");
	ok(load(&c, sep, env) == 0 && !c.auto_cache, "bool: --auto-cache false");
	is_int(load(&c, bad, env), 2, "bool: --auto-cache=maybe: exit 2");
	ok(load(&c, tls, env) == 0 && c.upstream_tls && c.upstream_tls_verify, "bool: two bare flags in a row");
	is_int(load(&c, verify_only, env), 2, "bool: upstream_tls_verify without upstream_tls: exit 2");
}

static void test_users(void)
{
	struct shoal_config c;
	const struct shoal_user *u;
	bool mon = true;
	char ev[128];
	char *env[] = { env_conf, "UPSTREAM_DB_URL=mysql://app:up@h", ev, NULL };

	snprintf(ev, sizeof ev, "ALLOWED_USERS=alice:pw1, bob:p:w2 ,app:other");
	is_int(load(&c, argv0, env), 0, "users: list loads");
	is_int(c.n_allowed_users, 3, "users: three users");
	ok(strcmp(c.allowed_users[1].name, "bob") == 0 && strcmp(c.allowed_users[1].password, "p:w2") == 0,
	   "users: password may contain ':'; spaces around items trimmed");
	u = config_find_user(&c, "alice", &mon);
	ok(u && strcmp(u->password, "pw1") == 0 && !mon, "find_user: allowed user");
	u = config_find_user(&c, "app", &mon);
	ok(u && strcmp(u->password, "up") == 0 && !mon, "find_user: upstream user takes precedence");
	u = config_find_user(&c, "monitor", &mon);
	ok(u && strcmp(u->password, "monitor") == 0 && mon, "find_user: monitor sets is_monitor");
	ok(config_find_user(&c, "nobody", &mon) == NULL && !mon, "find_user: unknown user is NULL");
	ok(config_find_user(&c, "ALICE", NULL) == NULL, "find_user: exact (case-sensitive) name");

	snprintf(ev, sizeof ev, "ALLOWED_USERS=carol:topsecret,dave");
	is_int(load(&c, argv0, env), 2, "users: item without ':': exit 2");
	ok(has(captured, "'carol:***,dave'") && !has(captured, "topsecret"), "users: error shows u:***");
	snprintf(ev, sizeof ev, "ALLOWED_USERS=a:1,a:2");
	is_int(load(&c, argv0, env), 2, "users: duplicate user: exit 2");
	snprintf(ev, sizeof ev, "ALLOWED_USERS=:pw");
	is_int(load(&c, argv0, env), 2, "users: empty name: exit 2");
}

static void test_sizes(void)
{
	static const struct { const char *v; long long want; } cases[] = {
		{ "1K", 1024 }, { "1k", 1024 }, { "64M", 67108864 }, { "1G", 1073741824 },
		{ "1048576", 1048576 }, { "512", -1 }, { "2G", -1 }, { "10X", -1 }, { "M", -1 },
		{ "-1K", -1 }, { "99999999999999999999", -1 },
	};
	struct shoal_config c;
	char ev[64];
	char *env[] = { env_conf, "UPSTREAM_DB_URL=mysql://u:p@h", ev, NULL };

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int rc;

		snprintf(ev, sizeof ev, "MAX_ALLOWED_PACKET=%s", cases[i].v);
		rc = load(&c, argv0, env);
		if (cases[i].want < 0)
			ok(rc == 2, "size: %s rejected", cases[i].v);
		else
			ok(rc == 0 && c.max_allowed_packet == cases[i].want, "size: %s = %lld",
			   cases[i].v, cases[i].want);
	}
}

static void test_addrs(void)
{
	struct shoal_config c;
	struct shoal_addr a;
	char ev[256];
	char *env[] = { env_conf, "UPSTREAM_DB_URL=mysql://u:p@h", ev, NULL };

	snprintf(ev, sizeof ev, "LISTEN_ADDRESS=127.0.0.1:4000, [::1]:4001");
	is_int(load(&c, argv0, env), 0, "listen: list loads");
	ok(c.n_listen == 2 && strcmp(c.listen[0].host, "127.0.0.1") == 0 && c.listen[0].port == 4000 &&
	   strcmp(c.listen[1].host, "::1") == 0 && c.listen[1].port == 4001, "listen: two addresses");
	snprintf(ev, sizeof ev, "LISTEN_ADDRESS=a:1,a:2,a:3,a:4,a:5,a:6,a:7,a:8,a:9");
	is_int(load(&c, argv0, env), 2, "listen: more than 8: exit 2");
	snprintf(ev, sizeof ev, "METRICS_ADDRESS=localhost");
	is_int(load(&c, argv0, env), 2, "metrics: no port: exit 2");
	ok(config_parse_addr("[::1]:3307", &a) == 0 && strcmp(a.host, "::1") == 0 && a.port == 3307,
	   "parse_addr: [::1]:3307");
	ok(config_parse_addr("db-1.local:1", &a) == 0 && a.port == 1, "parse_addr: name:1");
	ok(config_parse_addr("h:0", &a) == 0 && a.port == 0,
	   "parse_addr: port 0 (kernel's choice, or off) accepted for a listen address");
	ok(config_parse_addr("h:65536", &a) == -1, "parse_addr: port 65536 rejected");
	ok(config_parse_addr("::1:3307", &a) == -1 && config_parse_addr(":3307", &a) == -1,
	   "parse_addr: bare IPv6 and empty host rejected");
}

static void test_enums_and_checks(void)
{
	struct shoal_config c;
	char *env[] = { env_conf, "UPSTREAM_DB_URL=mysql://u:p@h", "AUTH_PLUGIN=caching_sha2_password",
			"TLS_MODE=disabled", "LOG_LEVEL=debug", NULL };
	char *bad_tls[] = { "shoal", "--tls-mode=sometimes", NULL };
	char *req[] = { "shoal", "--tls-mode", "required", NULL };
	char *req_ok[] = { "shoal", "--tls-mode", "required", "--tls-cert", "/c.pem", "--tls-key=/k.pem", NULL };
	char *cert_only[] = { "shoal", "--tls-cert", "/c.pem", NULL };

	is_int(load(&c, argv0, env), 0, "enums: load");
	ok(c.auth_plugin == AUTH_CACHING_SHA2 && c.tls_mode == TLS_MODE_DISABLED &&
	   c.log_level == LOG_LEVEL_DEBUG, "enums: values set");
	is_int(load(&c, bad_tls, env), 2, "enums: bad tls_mode: exit 2");
	ok(has(captured, "disabled, optional, required"), "enums: message lists the choices");
	is_int(load(&c, req, env), 2, "tls_mode required without cert: exit 2");
	ok(load(&c, req_ok, env) == 0 && c.tls_mode == TLS_MODE_REQUIRED && strcmp(c.tls_key, "/k.pem") == 0,
	   "tls_mode required with cert and key");
	is_int(load(&c, cert_only, env), 2, "tls_cert without tls_key: exit 2");
}

static void test_secrets(void)
{
	struct shoal_config c;
	char longpw[400];
	char *env[] = { env_conf, "UPSTREAM_DB_URL=mysql://app:topsecret@h", "MONITOR_PASSWORD=monsecret",
			"ALLOWED_USERS=alice:alicesecret", "WORKERS=", NULL };
	char *env_long[] = { env_conf, "UPSTREAM_DB_URL=mysql://app:topsecret@h", longpw, NULL };
	FILE *f;
	size_t n;

	is_int(load(&c, argv0, env), 0, "secrets: load (empty WORKERS= ignored)");
	ok(c.workers >= 1, "secrets: empty env var counts as unset");
	f = tmpfile();
	if (!f) {
		perror("tmpfile");
		exit(99);
	}
	config_log_summary(&c, f);
	rewind(f);
	n = fread(captured, 1, sizeof captured - 1, f);
	captured[n] = '\0';
	fclose(f);
	ok(has(captured, "mysql://app:***@h") && has(captured, "alice:***"), "summary: redacted values");
	ok(!has(captured, "topsecret") && !has(captured, "monsecret") && !has(captured, "alicesecret"),
	   "summary: no password");

	snprintf(longpw, sizeof longpw, "MONITOR_PASSWORD=%0300d", 7);
	is_int(load(&c, argv0, env_long), 2, "secrets: too-long monitor password: exit 2");
	ok(has(captured, "monitor_password") && !has(captured, "0000000000"), "secrets: password not echoed");
}

/* Millisecond settings take units, and their unsuffixed aliases need one. */
/* Found by fuzz_config (UBSan: signed overflow): a duration with more digits
 * than fit saturates, it does not overflow. */
static void test_duration_overflow(void)
{
	long long ms = 0;

	is_int(duration_parse_ms("44444444444444444444444444444444", false, &ms), 0,
	       "duration: 32 digits parse");
	ok(ms == (1LL << 62), "  saturated at 2^62 ms (%lld)", ms);
	is_int(duration_parse_ms("9223372036854775807d", true, &ms), 0, "duration: huge days parse");
	ok(ms == (1LL << 62), "  saturated (%lld)", ms);
	is_int(duration_parse_ms("1500", false, &ms), 0, "duration: 1500");
	is_int(ms, 1500, "  1500 ms");
}

static void test_durations(void)
{
	struct shoal_config c;
	const char *conf = write_tmp("upstream_db_url = mysql://u:p@h\ndrain_timeout = 2m\n"
				     "max_stale = 1h\n");
	char ec[128];
	char *env[] = { env_conf, "UPSTREAM_DB_URL=mysql://u:p@h", "UPSTREAM_DOWN_AFTER=500ms",
			"CACHE_TTL_MS=3s", NULL };
	char *flags[] = { "shoal", "--drain-timeout", "30s", "--max-stale=5m",
			  "--handshake-timeout-ms=2s", "--client-idle-timeout-ms", "1500", NULL };
	char *bare[] = { "shoal", "--drain-timeout=30", NULL };
	char *badunit[] = { "shoal", "--drain-timeout-ms=30x", NULL };
	char *both[] = { "shoal", "--drain-timeout=1s", "--drain-timeout-ms=7", NULL };

	is_int(load(&c, flags, env), 0, "durations: flags, aliases and env load");
	is_int(c.drain_timeout_ms, 30000, "durations: --drain-timeout 30s");
	is_int(c.max_stale_ms, 300000, "durations: --max-stale=5m");
	is_int(c.handshake_timeout_ms, 2000, "durations: --handshake-timeout-ms=2s");
	is_int(c.client_idle_timeout_ms, 1500, "durations: a bare number is still milliseconds");
	is_int(c.upstream_down_after_ms, 500, "durations: env UPSTREAM_DOWN_AFTER=500ms");
	is_int(c.cache_ttl_ms, 3000, "durations: env CACHE_TTL_MS=3s");
	is_int(load(&c, bare, env), 2, "durations: alias without a unit: exit 2");
	ok(has(captured, "needs a unit"), "durations: alias without a unit: message");
	is_int(load(&c, badunit, env), 2, "durations: unknown unit: exit 2");
	ok(has(captured, "not a number (milliseconds, or a duration"), "durations: unknown unit: message");
	is_int(load(&c, both, env), 0, "durations: both names load");
	is_int(c.drain_timeout_ms, 7, "durations: the later flag wins");
	snprintf(ec, sizeof ec, "SHOAL_CONFIG=%s", conf);
	char *envf[] = { ec, NULL };
	is_int(load(&c, argv0, envf), 0, "durations: file keys drain_timeout, max_stale load");
	ok(c.drain_timeout_ms == 120000 && c.max_stale_ms == 3600000, "durations: file values");
	is_int(c.client_idle_timeout_ms, 28800000, "defaults: client idle timeout 8 h");
	is_int(c.admin_max_connections, 64, "defaults: admin_max_connections 64");
}

static void test_proxysql_admin(void)
{
	struct shoal_config c;
	struct shoal_mysql_url u[PROXYSQL_ADMIN_MAX];
	char err[256], host[256];
	uint16_t port;
	char *env[] = { env_conf, "UPSTREAM_DB_URL=mysql://app:pw@h", "PROXYSQL_ADMIN=mysql://radmin:s3cret@px1,"
			" mysql://radmin:s3cret@px2:6042", "PROXYSQL_NODE_ADDRESS=shoal-1:3307", NULL };
	char *env_bad[] = { env_conf, "UPSTREAM_DB_URL=mysql://app:pw@h", "PROXYSQL_ADMIN=http://radmin:s3cret@px1",
			    NULL };
	char *argv_ip[] = { "shoal", "--listen-address", "10.0.0.5:3310", NULL };

	is_int(load(&c, argv0, env), 0, "proxysql_admin: a list of two loads");
	is_int(c.drain_handoff_ms, 8000, "drain_handoff_ms default 8000");
	is_int(c.drain_quiet_ms, 1000, "drain_quiet_ms default 1000");
	is_int(config_parse_proxysql_admin(c.proxysql_admin, u, PROXYSQL_ADMIN_MAX, err, sizeof err), 2, "config_parse_proxysql_admin: 2 URLs");
	ok(strcmp(u[0].host, "px1") == 0 && u[0].port == 6032 && strcmp(u[0].user.name, "radmin") == 0 &&
	   strcmp(u[0].user.password, "s3cret") == 0, "  the first: px1, default port 6032, radmin");
	ok(strcmp(u[1].host, "px2") == 0 && u[1].port == 6042, "  the second: px2:6042 (spaces trimmed)");
	is_int(config_node_address(&c, host, sizeof host, &port, err, sizeof err), 0, "node address: set");
	ok(strcmp(host, "shoal-1") == 0 && port == 3307, "  shoal-1:3307");
	is_int(config_parse_proxysql_admin(" , ", u, PROXYSQL_ADMIN_MAX, err, sizeof err), 0, "config_parse_proxysql_admin: empty items: none");
	is_int(config_parse_proxysql_admin("mysql://a:b@h1,mysql://a:b@h2,mysql://a:b@h3", u, 2, err, sizeof err), -1,
	       "config_parse_proxysql_admin: more than the maximum: error");
	is_int(config_parse_proxysql_admin("mysql://a:b@bad'host", u, PROXYSQL_ADMIN_MAX, err, sizeof err), -1,
	       "config_parse_proxysql_admin: a host that cannot go into SQL: error");
	is_int(load(&c, argv0, env_bad), 2, "proxysql_admin: not mysql://: exit 2");
	ok(has(captured, "proxysql_admin") && !has(captured, "s3cret"), "  named, password not shown");
	is_int(load(&c, argv_ip, NULL), 2, "no upstream: still exit 2 (sanity)");
	config_defaults(&c);
	is_int(config_set_text(&c, "listen_address", "10.0.0.5:3310", err, sizeof err), 0, "listen 10.0.0.5:3310");
	is_int(config_node_address(&c, host, sizeof host, &port, err, sizeof err), 0, "node address: derived");
	ok(strcmp(host, "10.0.0.5") == 0 && port == 3310, "  from the listen address");
	is_int(config_set_text(&c, "listen_address", "0.0.0.0:3309", err, sizeof err), 0, "listen 0.0.0.0:3309");
	is_int(config_node_address(&c, host, sizeof host, &port, err, sizeof err), 0, "node address: wildcard");
	ok(strcmp(host, "0.0.0.0") != 0 && host[0] && port == 3309, "  the host name and the listen port (%s)", host);
}

static void test_health(void)
{
	struct shoal_config c;
	const char *conf = write_tmp("metrics_address = 127.0.0.1:7001\n");
	char fenv[128];
	char *env[] = { env_conf, NULL };
	char *env_m[] = { env_conf, "METRICS_ADDRESS=0.0.0.0:16034", NULL };
	char *env_f[] = { fenv, NULL };
	char *bare[] = { "shoal", "--health", NULL };
	char *flag[] = { "shoal", "--health", "--metrics-address", "[::]:7002", NULL };
	char *bad[] = { "shoal", "--health", "--workers", "x", NULL };

	snprintf(fenv, sizeof fenv, "SHOAL_CONFIG=%s", conf);
	is_int(load(&c, bare, env), CONFIG_HEALTH, "--health: no upstream URL needed");
	ok(strcmp(c.metrics.host, "0.0.0.0") == 0 && c.metrics.port == 6034, "--health: the default address");
	is_int(load(&c, bare, env_m), CONFIG_HEALTH, "--health with METRICS_ADDRESS");
	ok(c.metrics.port == 16034, "  the environment's port (%u)", (unsigned)c.metrics.port);
	is_int(load(&c, bare, env_f), CONFIG_HEALTH, "--health with a config file");
	ok(strcmp(c.metrics.host, "127.0.0.1") == 0 && c.metrics.port == 7001, "  the file's address");
	is_int(load(&c, flag, env_m), CONFIG_HEALTH, "--health with --metrics-address");
	ok(strcmp(c.metrics.host, "::") == 0 && c.metrics.port == 7002, "  the flag wins (%s)", c.metrics.host);
	is_int(load(&c, bad, env), 2, "--health with a bad setting: 2 (main makes it 1)");
	is_str(healthcheck_target("0.0.0.0"), "127.0.0.1", "0.0.0.0 is probed on 127.0.0.1");
	is_str(healthcheck_target("::"), "::1", ":: is probed on ::1");
	is_str(healthcheck_target("10.1.2.3"), "10.1.2.3", "a given address stays");
	is_str(healthcheck_target("node-1"), "node-1", "a name stays");
}

int main(void)
{
	empty_conf = write_tmp("");
	snprintf(env_conf, sizeof env_conf, "SHOAL_CONFIG=%s", empty_conf);

	test_defaults();
	test_required_url();
	test_precedence();
	test_url();
	test_url_load_errors();
	test_redact();
	test_file_format();
	test_file_errors();
	test_flags();
	test_help_version();
	test_bools();
	test_users();
	test_sizes();
	test_addrs();
	test_enums_and_checks();
	test_secrets();
	test_durations();
	test_duration_overflow();
	test_proxysql_admin();
	test_health();
	cleanup();
	return done_testing();
}
