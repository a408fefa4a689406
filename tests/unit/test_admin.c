/*
 * test_admin.c: unit tests for the admin interface (admin/): the command
 * router's parser (LOAD/SAVE forms, case-insensitive with any whitespace and
 * comments, aliases, bad forms; SET shoal-x = v with quoting; the client's
 * SELECT @@x / DATABASE() chatter; SHOW and USE), statement splitting and
 * table-name detection; variable names; mysql_native_password hashes and
 * users_check_native with real tokens from auth_native_token(); that
 * stats_shoal_global lists every g_stats counter; and, against a real
 * SQLite database in a temporary data_dir, whole statements through
 * admin_query(): SET + LOAD TO RUNTIME changing g_config, a rejected value
 * leaving everything unchanged, SAVE TO DISK / LOAD FROM DISK, users hashed
 * on LOAD, multi-statement replies, SQL errors, and SAVE TO DISK failing
 * cleanly when the data directory is unusable.
 */
#include "proto/auth.h"
#include "config/config.h"
#include "base/log.h"
#include "base/stats.h"
#include "tap.h"

#include "../../admin/internal.h"
#include "upstream/users.h"

#include <stdatomic.h>
#include <ctype.h>
#include <stdlib.h>
#include <unistd.h>

/* ---------------------------------------------------------------- parser */

static struct admin_stmt st;

static enum admin_stmt_kind parse(const char *sql)
{
	admin_parse(sql, strlen(sql), &st);
	return st.kind;
}

/* sql with control characters shown as spaces, for test names. */
static const char *shown(const char *sql)
{
	static char buf[160];
	size_t i;

	for (i = 0; sql[i] && i + 1 < sizeof buf; i++)
		buf[i] = (unsigned char)sql[i] < ' ' ? ' ' : sql[i];
	buf[i] = '\0';
	return buf;
}

static void module_case(const char *sql, const char *module, enum admin_op op)
{
	bool good = parse(sql) == ASTMT_MODULE && strcmp(st.module, module) == 0 && st.op == op;

	if (!ok(good, "'%s' -> %s op %d", shown(sql), module, (int)op))
		printf("#   kind %d module '%s' op %d err '%s'\n", st.kind, st.module, st.op, st.err);
}

static void test_module_commands(void)
{
	module_case("LOAD SHOAL VARIABLES TO RUNTIME", "VARIABLES", AOP_MEM_TO_RUNTIME);
	module_case("load variables to runtime", "VARIABLES", AOP_MEM_TO_RUNTIME);
	module_case("  LoAd \t ShOaL\n  VaRiAbLeS   tO\r\nRuNtImE  ", "VARIABLES", AOP_MEM_TO_RUNTIME);
	module_case("/* hi */ LOAD VARIABLES /* x */ TO -- y\n RUNTIME", "VARIABLES",
		    AOP_MEM_TO_RUNTIME);
	module_case("LOAD VARIABLES TO RUN", "VARIABLES", AOP_MEM_TO_RUNTIME);
	module_case("LOAD SHOAL USERS FROM MEMORY", "USERS", AOP_MEM_TO_RUNTIME);
	module_case("load users from mem", "USERS", AOP_MEM_TO_RUNTIME);
	module_case("SAVE SHOAL VARIABLES TO DISK", "VARIABLES", AOP_MEM_TO_DISK);
	module_case("save caches from memory", "CACHES", AOP_MEM_TO_DISK);
	module_case("LOAD SHOAL CACHES FROM DISK", "CACHES", AOP_DISK_TO_MEM);
	module_case("load users to memory", "USERS", AOP_DISK_TO_MEM);
	module_case("SAVE SHOAL USERS FROM RUNTIME", "USERS", AOP_RUNTIME_TO_MEM);
	module_case("save variables to mem", "VARIABLES", AOP_RUNTIME_TO_MEM);
	module_case("SAVE CACHES FROM RUN", "CACHES", AOP_RUNTIME_TO_MEM);

	module_case("LOAD QUERY RULES TO RUNTIME", "QUERY RULES", AOP_MEM_TO_RUNTIME);
	module_case("save shoal query rules to disk", "QUERY RULES", AOP_MEM_TO_DISK);
	is_int(parse("LOAD MYSQL SERVERS TO RUNTIME"), ASTMT_BAD_COMMAND, "unknown module: bad command");
	ok(strstr(st.err, "unknown module 'MYSQL SERVERS'") != NULL, "  names the module");
	is_int(parse("LOAD MYSQL VARIABLES TO RUNTIME"), ASTMT_BAD_COMMAND, "MYSQL VARIABLES is not ours");
	is_int(parse("LOAD VARIABLES FROM RUNTIME"), ASTMT_BAD_COMMAND, "LOAD ... FROM RUNTIME is refused");
	is_int(parse("SAVE VARIABLES TO RUNTIME"), ASTMT_BAD_COMMAND, "SAVE ... TO RUNTIME is refused");
	is_int(parse("LOAD VARIABLES"), ASTMT_BAD_COMMAND, "no direction");
	is_int(parse("LOAD VARIABLES TO RUNTIME NOW"), ASTMT_BAD_COMMAND, "trailing word");
	is_int(parse("LOAD VARIABLES TO RUNTIME, x"), ASTMT_BAD_COMMAND, "trailing punctuation");
	is_int(parse("LOADS VARIABLES TO RUNTIME"), ASTMT_SQL, "LOADS is not LOAD");
	is_int(parse("SAVEPOINT a"), ASTMT_SQL, "SAVEPOINT goes to SQLite");
}

static void set_case(const char *sql, const char *name, const char *value)
{
	bool good = parse(sql) == ASTMT_SET_VAR && strcmp(st.name, name) == 0 &&
		    strcmp(st.value, value) == 0;

	if (!ok(good, "%s", sql))
		printf("#   kind %d name '%s' value '%s' err '%s'\n", st.kind, st.name, st.value, st.err);
}

static void test_set(void)
{
	set_case("SET shoal-cache-ttl-ms = 2500", "shoal-cache-ttl-ms", "2500");
	set_case("set SHOAL-Cache-TTL-ms='2500'", "shoal-cache-ttl-ms", "2500");
	set_case("SET shoal-log-level=\"debug\"", "shoal-log-level", "debug");
	set_case("SET  shoal-data-dir :=  /var/lib/x y  ", "shoal-data-dir", "/var/lib/x y");
	set_case("SET shoal-admin-password = 'it''s \\'q\\''", "shoal-admin-password", "it's 'q'");
	set_case("SET shoal-x = ''", "shoal-x", "");
	is_int(parse("SET NAMES utf8mb4"), ASTMT_SET_OTHER, "SET NAMES: accepted, ignored");
	is_int(parse("set autocommit=1"), ASTMT_SET_OTHER, "SET autocommit: accepted, ignored");
	is_int(parse("SET @@session.sql_mode = ''"), ASTMT_SET_OTHER, "SET @@x: accepted, ignored");
	is_int(parse("SET shoal-cache-ttl-ms"), ASTMT_BAD_COMMAND, "SET shoal-x without a value");
	is_int(parse("SET shoal-cache-ttl-ms ="), ASTMT_BAD_COMMAND, "SET shoal-x = nothing");
	is_int(parse("SET shoal-cache-ttl-ms = 'open"), ASTMT_BAD_COMMAND, "unterminated quote");
	is_int(parse("SET shoal-cache-ttl-ms = '1' junk"), ASTMT_BAD_COMMAND, "text after the quote");
}

static void test_select_and_show(void)
{
	is_int(parse("select @@version_comment limit 1"), ASTMT_SELECT_FUNCS, "select @@version_comment limit 1");
	ok(st.nitems == 1 && st.items[0].kind == ITEM_SYSVAR &&
	   strcmp(st.items[0].name, "version_comment") == 0 &&
	   strcmp(st.items[0].label, "@@version_comment") == 0 && st.limit == 1,
	   "  one sysvar item, column @@version_comment, limit 1");
	is_int(parse("SELECT DATABASE(), user() ,CURRENT_USER ( )"), ASTMT_SELECT_FUNCS,
	       "SELECT DATABASE(), USER(), CURRENT_USER()");
	ok(st.nitems == 3 && st.items[0].kind == ITEM_DATABASE && st.items[1].kind == ITEM_USER &&
	   strcmp(st.items[0].label, "DATABASE()") == 0 && st.limit == -1, "  three items");
	is_int(parse("select @@session.auto_increment_increment AS inc"), ASTMT_SELECT_FUNCS,
	       "select @@session.x AS alias");
	ok(strcmp(st.items[0].name, "auto_increment_increment") == 0 &&
	   strcmp(st.items[0].label, "inc") == 0, "  scope stripped, alias as column name");
	is_int(parse("SELECT 1"), ASTMT_SQL, "SELECT 1 goes to SQLite");
	is_int(parse("select @@version, 1"), ASTMT_SQL, "a mixed select goes to SQLite");
	is_int(parse("select * from global_variables"), ASTMT_SQL, "a table select goes to SQLite");

	is_int(parse("show databases"), ASTMT_SHOW_DATABASES, "SHOW DATABASES");
	is_int(parse("SHOW SCHEMAS LIKE 'st%'"), ASTMT_SHOW_DATABASES, "SHOW SCHEMAS LIKE");
	ok(st.has_like && strcmp(st.like, "st%") == 0, "  with the pattern");
	is_int(parse("SHOW TABLES"), ASTMT_SHOW_TABLES, "SHOW TABLES");
	ok(st.name[0] == '\0' && !st.has_like, "  no schema, no pattern");
	is_int(parse("show full tables in `disk` like '%'"), ASTMT_SHOW_TABLES, "SHOW FULL TABLES IN `disk` LIKE");
	ok(strcmp(st.name, "disk") == 0 && st.has_like, "  schema disk, pattern");
	is_int(parse("SHOW TABLES FROM stats"), ASTMT_SHOW_TABLES, "SHOW TABLES FROM stats");
	is_int(parse("SHOW CREATE TABLE disk.users"), ASTMT_SHOW_CREATE, "SHOW CREATE TABLE disk.users");
	ok(strcmp(st.name, "disk") == 0 && strcmp(st.table, "users") == 0, "  schema and table");
	is_int(parse("show warnings"), ASTMT_SHOW_WARNINGS, "SHOW WARNINGS");
	is_int(parse("show processlist"), ASTMT_SQL, "other SHOWs go to SQLite (and fail there)");
	is_int(parse("use stats"), ASTMT_USE, "USE stats");
	ok(strcmp(st.name, "stats") == 0, "  schema name");
}

static void test_splitting(void)
{
	const char *q = "select ';' /* ; */ -- ;\n; select 2";
	const char *b = "  ;; -- c\n /* x */ # y\n select";

	is_int(admin_stmt_end(q, strlen(q)), strchr(q, '\n') + 1 - q,
	       "statement end skips quoted and commented semicolons");
	is_int(admin_stmt_end("select 1", 8), 8, "last statement ends at the end");
	is_int(admin_skip_blank(b, strlen(b)), strstr(b, "select") - b,
	       "skip_blank skips blanks, semicolons and comments");
	ok(admin_names_table("SELECT * FROM stats_shoal_global", 32, "stats_shoal_global"),
	   "names_table: plain");
	ok(admin_names_table("select * from STATS.STATS_SHOAL_GLOBAL", 38, "stats_shoal_global"),
	   "names_table: case-insensitive, qualified");
	ok(!admin_names_table("select * from stats_shoal_query_digest_reset", 45,
			      "stats_shoal_query_digest"), "names_table: a longer name is another table");
	ok(admin_names_table("select * from stats_shoal_query_digest_reset", 45,
			     "stats_shoal_query_digest_reset"), "names_table: the _reset table");
}

static void test_var_names(void)
{
	char key[64], name[96];

	is_int(vars_name_to_key("shoal-cache-ttl-ms", key, sizeof key), 0, "shoal-cache-ttl-ms is a setting");
	is_str(key, "cache_ttl_ms", "  key cache_ttl_ms");
	is_int(vars_name_to_key("SHOAL-Log-Level", key, sizeof key), 0, "names are case-insensitive");
	is_int(vars_name_to_key("shoal-nope", key, sizeof key), -1, "unknown setting");
	is_int(vars_name_to_key("mysql-cache-ttl-ms", key, sizeof key), -1, "other prefix");
	is_int(vars_name_to_key("shoal-config", key, sizeof key), -1, "--config is not a variable");
	vars_key_to_name("read_your_writes_ms", name, sizeof name);
	is_str(name, "shoal-read-your-writes-ms", "key to name");
	ok(vars_is_runtime("cache_ttl_ms") && vars_is_runtime("log_level") &&
	   vars_is_runtime("max_client_connections") && !vars_is_runtime("workers") &&
	   !vars_is_runtime("listen_address"), "runtime vs restart settings");
}

/* ---------------------------------------------------------------- users */

static void test_hashes(void)
{
	char text[USERS_HASH_TEXT_LEN + 1];
	uint8_t h[USERS_HASH_LEN];

	users_native_hash_text("admin", text);
	is_str(text, "*4ACFE3202A5FF5CF467898FC58AAB1D615029441", "hash of 'admin'");
	users_native_hash_text("password", text);
	is_str(text, "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19", "hash of 'password'");
	users_native_hash_text("", text);
	is_str(text, "", "the empty password has no hash");
	ok(users_parse_hash("*2470c0c06dee42fd1618bb99005adca2ec9d1e19", h) && h[0] == 0x24 &&
	   h[19] == 0x19, "parse a lower-case hash");
	ok(!users_parse_hash("2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19", NULL), "no '*': not a hash");
	ok(!users_parse_hash("*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E1", NULL), "39 digits: not a hash");
	ok(!users_parse_hash("*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E1G", NULL), "a G: not a hash");
}

static void entry(struct users_entry *e, const char *name, const char *pw, bool active, bool mon)
{
	memset(e, 0, sizeof *e);
	snprintf(e->name, sizeof e->name, "%s", name);
	e->has_password = *pw != '\0';
	if (e->has_password)
		users_native_hash(pw, e->hash);
	e->active = active;
	e->is_monitor = mon;
}

static void test_check_native(void)
{
	struct users_entry list[4];
	uint8_t nonce[AUTH_NONCE_LEN], tok[AUTH_NATIVE_TOKEN_LEN];
	size_t len;
	bool mon = true;

	for (int i = 0; i < AUTH_NONCE_LEN; i++)
		nonce[i] = (uint8_t)(i * 7 + 3);
	entry(&list[0], "bob", "s3cret", true, false);
	entry(&list[1], "mon", "m0n", true, true);
	entry(&list[2], "off", "pw", false, false);
	entry(&list[3], "nopw", "", true, false);
	is_int(users_replace(list, 4), 0, "store replaced with 4 users");

	auth_native_token("s3cret", nonce, tok, &len);
	ok(users_check_native("bob", nonce, tok, len, &mon) && !mon, "bob with the right token");
	ok(!users_check_native("bobby", nonce, tok, len, NULL), "an unknown user is refused");
	auth_native_token("s3creT", nonce, tok, &len);
	ok(!users_check_native("bob", nonce, tok, len, NULL), "bob with a wrong password");
	tok[0] ^= 1;
	ok(!users_check_native("bob", nonce, tok, len, NULL), "  and a flipped bit");
	auth_native_token("s3cret", nonce, tok, &len);
	ok(!users_check_native("bob", nonce, tok, len - 1, NULL), "a short token is refused");
	nonce[0] ^= 0x40;
	ok(!users_check_native("bob", nonce, tok, len, NULL), "a token for another nonce is refused");
	nonce[0] ^= 0x40;
	auth_native_token("m0n", nonce, tok, &len);
	ok(users_check_native("mon", nonce, tok, len, &mon) && mon, "the monitor user is flagged");
	auth_native_token("pw", nonce, tok, &len);
	ok(!users_check_native("off", nonce, tok, len, NULL), "an inactive user is refused");
	ok(users_check_native("nopw", nonce, NULL, 0, NULL), "an empty password with an empty token");
	auth_native_token("x", nonce, tok, &len);
	ok(!users_check_native("nopw", nonce, tok, len, NULL), "  but not with a token");
	ok(users_exists("off") && !users_exists("nobody"), "users_exists");
	users_clear();
	ok(!users_exists("bob"), "users_clear empties the store");
}

static void test_stats_counters(void)
{
	is_int(refresh_n_counters() * sizeof(atomic_uint_fast64_t), sizeof(struct shoal_stats),
	       "stats_shoal_global lists every g_stats counter (admin/refresh.c counters[])");
}

/* ------------------------------------------------------------- end to end */

static struct admin_warnings warns;
static char db[ADMIN_DB_NAME_MAX] = "main";
static struct pbuf out;

/* Run sql; returns the first packet's first payload byte (0x00 OK, 0xff ERR,
 * else a column count). */
static int run(const char *sql, uint32_t caps)
{
	struct admin_reply r = { .out = &out, .seq = 1, .caps = caps, .warn = &warns, .db = db,
				 .user = "admin", .peer = "127.0.0.1", .conn_id = 1 };

	out.len = 0;
	admin_query(&r, sql, strlen(sql));
	return out.len > PKT_HEADER_LEN ? out.data[PKT_HEADER_LEN] : -1;
}

static int err_code(void)
{
	return out.len > 7 && out.data[4] == 0xff ? rd_u16(out.data + 5) : 0;
}

/* The single value of a one-row, one-column text result in out. */
static const char *value(void)
{
	static char v[256];
	struct pcur c;
	size_t pos = 0, n;
	const uint8_t *s;

	for (int i = 0; i < 3 && pos < out.len; i++)      /* count, column, EOF */
		pos += PKT_HEADER_LEN + rd_u24(out.data + pos);
	if (pos + PKT_HEADER_LEN > out.len)
		return "(none)";
	pcur_init(&c, out.data + pos + PKT_HEADER_LEN, rd_u24(out.data + pos));
	if (c.p < c.end && *c.p == 0xfb)
		return "NULL";
	s = pcur_lenenc_str(&c, &n);
	if (!s || c.err)
		return "(bad)";
	snprintf(v, sizeof v, "%.*s", (int)n, (const char *)s);
	return v;
}

/* The first payload byte of the last packet in out. */
static int last_packet(void)
{
	size_t pos = 0, last = 0;

	while (pos + PKT_HEADER_LEN <= out.len) {
		last = pos;
		pos += PKT_HEADER_LEN + rd_u24(out.data + pos);
	}
	return out.len > last + PKT_HEADER_LEN ? out.data[last + PKT_HEADER_LEN] : -1;
}

/* DEPRECATE_EOF replies: how many 0xfe-OK terminators carry MORE_RESULTS. */
static int more_results_flags(void)
{
	size_t pos = 0;
	int n = 0;

	while (pos + PKT_HEADER_LEN <= out.len) {
		size_t len = rd_u24(out.data + pos);
		const uint8_t *pl = out.data + pos + PKT_HEADER_LEN;

		if (len == 7 && pl[0] == 0xfe && (rd_u16(pl + 3) & ST_MORE_RESULTS_EXISTS))
			n++;
		pos += PKT_HEADER_LEN + len;
	}
	return n;
}

static void e2e_variables(void);
static void e2e_users_and_caches(void);
static void e2e_sql(void);

static void test_end_to_end(const char *dir)
{
	char err[512];

	config_defaults(&g_config);
	snprintf(g_config.data_dir, sizeof g_config.data_dir, "%s/data", dir);
	if (!ok(adb_open(g_config.data_dir, err, sizeof err) == 0, "admin database opens"))
		printf("#   %s\n", err);
	modules_boot();
	ok(!g_adb.disk_in_memory, "  with a disk file in the data directory");
	e2e_variables();
	e2e_users_and_caches();
	e2e_sql();
	adb_close();
}

static void e2e_variables(void)
{
	is_int(run("SET shoal-cache-ttl-ms = 1234", 0), 0x00, "SET shoal-cache-ttl-ms = 1234: OK");
	is_int(g_config.cache_ttl_ms, 10000, "  runtime unchanged before LOAD");
	run("SELECT variable_value FROM global_variables WHERE variable_name = 'shoal-cache-ttl-ms'", 0);
	is_str(value(), "1234", "  global_variables has the new value");
	is_int(run("load shoal variables to runtime", 0), 0x00, "LOAD SHOAL VARIABLES TO RUNTIME: OK");
	is_int(g_config.cache_ttl_ms, 1234, "  g_config.cache_ttl_ms is 1234");
	run("select variable_value from runtime_global_variables where variable_name='shoal-cache-ttl-ms'", 0);
	is_str(value(), "1234", "  runtime_global_variables shows it");

	is_int(run("SET shoal-cache-ttl-ms = 'soon'", 0), 0xff, "a bad value is refused at SET");
	is_int(err_code(), ERR_WRONG_VALUE_FOR_VAR, "  with error 1231");
	is_int(run("SET shoal-nope = 1", 0), 0xff, "an unknown variable is refused");
	is_int(err_code(), ERR_UNKNOWN_SYSTEM_VARIABLE, "  with error 1193");
	run("UPDATE global_variables SET variable_value = '-1' WHERE variable_name = 'shoal-cache-ttl-ms'", 0);
	run("UPDATE global_variables SET variable_value = 'debug' WHERE variable_name = 'shoal-log-level'", 0);
	is_int(run("LOAD VARIABLES TO RUNTIME", 0), 0xff, "LOAD with a bad value in the table fails");
	ok(strstr((char *)out.data + 13, "must be between") != NULL, "  with config's message");
	ok(g_config.cache_ttl_ms == 1234 && g_config.log_level == LOG_LEVEL_INFO,
	   "  and nothing was applied (not even the valid log_level)");
	run("SET shoal-cache-ttl-ms = 1234", 0);
	run("SET shoal-log-level = info", 0);

	is_int(run("SET shoal-workers = 3; LOAD VARIABLES TO RUNTIME", CAP_MULTI_RESULTS), 0x00,
	       "a restart-only setting loads with a warning");
	is_int(warns.total, 1, "  one warning");
	ok(strstr(warns.msg[0], "shoal-workers") != NULL, "  naming shoal-workers");
	run("SET shoal-workers = 2", 0);

	is_int(run("SAVE SHOAL VARIABLES TO DISK", 0), 0x00, "SAVE SHOAL VARIABLES TO DISK: OK");
	run("SELECT variable_value FROM disk.global_variables WHERE variable_name = 'shoal-cache-ttl-ms'", 0);
	is_str(value(), "1234", "  disk has 1234");
	run("SET shoal-cache-ttl-ms = 77", 0);
	is_int(run("LOAD VARIABLES FROM DISK", 0), 0x00, "LOAD VARIABLES FROM DISK: OK");
	run("SELECT variable_value FROM global_variables WHERE variable_name = 'shoal-cache-ttl-ms'", 0);
	is_str(value(), "1234", "  main is back to 1234");
}

static void e2e_users_and_caches(void)
{
	run("SET shoal-admin-password = 'n3w'", 0);
	run("SELECT variable_value FROM global_variables WHERE variable_name = 'shoal-admin-password'", 0);
	ok(value()[0] == '*' && strlen(value()) == 41, "SET shoal-admin-password stores a hash");
	run("select variable_value from runtime_global_variables where variable_name = 'shoal-monitor-password'", 0);
	is_str(value(), "*1975D095AC033CAF4E1BF94F7202A9BBFEEB66F1", "the monitor password is shown hashed");
	run("select variable_value from global_variables where variable_name = 'shoal-upstream-db-url'", 0);
	ok(strstr(value(), "***") || !*value(), "the URL is shown redacted");

	is_int(run("INSERT INTO users (username, password) VALUES ('bob', 'pl41n')", 0), 0x00,
	       "insert a user with a plaintext password");
	is_int(run("LOAD USERS TO RUNTIME", 0), 0x00, "LOAD USERS TO RUNTIME: OK");
	run("SELECT password FROM users WHERE username = 'bob'", 0);
	ok(value()[0] == '*', "  the password in main is now a hash");
	ok(users_exists("bob") && users_exists("monitor"), "  bob and the config users are in the store");
	run("SELECT count(*) FROM runtime_users", 0);
	is_str(value(), "2", "  runtime_users: monitor and bob (no upstream user configured)");

	is_int(run("LOAD CACHES TO RUNTIME", 0), 0xff, "LOAD CACHES TO RUNTIME without a runtime fails");
	is_int(run("SAVE CACHES TO DISK", 0), 0x00, "SAVE CACHES TO DISK works on the tables alone");
}

static void e2e_sql(void)
{
	is_int(run("selec 1", 0), 0xff, "a syntax error");
	is_int(err_code(), ERR_PARSE_ERROR, "  is 1064");
	is_int(run("select * from nosuch", 0), 0xff, "another SQL error");
	is_int(err_code(), ERR_UNKNOWN_ERROR, "  is 1105");
	is_int(run("  ;; ", 0), 0xff, "an empty query");
	is_int(err_code(), ERR_QUERY_EMPTY, "  is 1065");

	is_int(run("select 1; select 2", CAP_MULTI_RESULTS | CAP_DEPRECATE_EOF), 1,
	       "two statements: a result set first");
	is_int(more_results_flags(), 1, "  only the first one carries MORE_RESULTS");
	is_int(last_packet(), 0xfe, "  the second ends with its own terminator");
	is_int(run("select 1; select 2", 0), 1, "without multi-results: one result set");
	is_str(value(), "2", "  the last one");
	is_int(run("select 1; selec 2; select 3", CAP_MULTI_RESULTS), 1, "an error stops the rest");
	is_int(last_packet(), 0xff, "  and the reply ends with the ERR");

	run("select @@version_comment limit 1", 0);
	is_str(value(), "Shoal admin", "select @@version_comment limit 1");
	run("SELECT DATABASE()", 0);
	is_str(value(), "main", "SELECT DATABASE() is main");
	is_int(run("use stats", 0), 0x00, "USE stats");
	run("SELECT DATABASE()", 0);
	is_str(value(), "stats", "  DATABASE() is stats");
	is_int(run("use nosuch", 0), 0xff, "USE nosuch fails");
	is_int(err_code(), ERR_BAD_DB_ERROR, "  with 1049");
	run("SELECT count(*) FROM stats_shoal_global WHERE Variable_Name = 'Client_Connections_created'", 0);
	is_str(value(), "1", "stats_shoal_global is rebuilt when named");
}

static void test_unusable_data_dir(void)
{
	char err[512];

	if (!ok(adb_open("/dev/null/shoal", err, sizeof err) == 0, "an unusable data_dir still opens"))
		printf("#   %s\n", err);
	modules_boot();
	ok(g_adb.disk_in_memory, "  with the disk database in memory");
	is_int(run("SAVE VARIABLES TO DISK", 0), 0xff, "SAVE ... TO DISK then fails");
	ok(strstr((char *)out.data + 13, "not available") != NULL, "  saying the disk is not available");
	is_int(run("SET shoal-cache-ttl-ms = 555; LOAD VARIABLES TO RUNTIME", CAP_MULTI_RESULTS), 0x00,
	       "  but LOAD ... TO RUNTIME works");
	adb_close();
}

/* name stands in doc as a whole word (not inside a longer name) */
static bool word_in(const char *doc, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strstr(doc, name); p; p = strstr(p + 1, name)) {
		char before = p > doc ? p[-1] : ' ', after = p[n];

		if (!(isalnum((unsigned char)before) || before == '_') &&
		    !(isalnum((unsigned char)after) || after == '_'))
			return true;
	}
	return false;
}

/* The one list of tables and the module table agree, and docs/admin.md
 * describes every table and module (a new one cannot be left out). */
static void test_tables_and_docs(void)
{
	const char *srcdir = getenv("srcdir");
	char path[512], *doc = NULL;
	FILE *f;
	size_t missing = 0, len = 0;
	const char *why = modules_check();

	ok(why == NULL, "modules.c and schema.c agree on the modules' tables%s%s",
	   why ? ": " : "", why ? why : "");
	ok(strstr(modules_list(), "SHOAL QUERY RULES") && strstr(modules_list(), "SHOAL VARIABLES"),
	   "the module list comes from the table: %s", modules_list());
	is_int(parse("LOAD SHOAL NOTHING TO RUNTIME"), ASTMT_BAD_COMMAND, "an unknown module");
	ok(strstr(st.err, modules_list()) != NULL, "  the error lists the modules from the table");
	snprintf(path, sizeof path, "%s/docs/admin.md", srcdir ? srcdir : ".");
	f = fopen(path, "r");
	if (f) {
		doc = malloc(1 << 20);
		len = doc ? fread(doc, 1, (1 << 20) - 1, f) : 0;
		fclose(f);
	}
	if (!ok(doc && len > 0, "docs/admin.md is readable (%s)", path)) {
		free(doc);
		return;
	}
	doc[len] = '\0';
	for (size_t i = 0; i < admin_n_tables; i++) {
		if (!word_in(doc, admin_tables[i].name)) {
			printf("# docs/admin.md does not name %s\n", admin_tables[i].name);
			missing++;
		}
	}
	ok(missing == 0, "docs/admin.md names every one of the %zu admin tables", admin_n_tables);
	free(doc);
}

int main(void)
{
	char dir[] = "/tmp/shoal-test-admin-XXXXXX";
	char cmd[128];

	log_set_level(LOG_LEVEL_ERROR);
	test_module_commands();
	test_tables_and_docs();
	test_set();
	test_select_and_show();
	test_splitting();
	test_var_names();
	test_hashes();
	test_check_native();
	test_stats_counters();
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 99;
	}
	test_end_to_end(dir);
	test_unusable_data_dir();
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	pbuf_free(&out);
	users_clear();
	return done_testing();
}
