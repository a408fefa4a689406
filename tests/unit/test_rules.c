/*
 * test_rules.c: unit tests for the query rules (src/cache/rules.c and the
 * QUERY RULES module in admin/cache_admin.c): matching by digest and by
 * case-insensitive regex on digest_text, rule_id order whatever the input
 * order, apply ending the evaluation, inactive rules, cache_ttl 0 (never)
 * and NULL (no decision), every validation error naming its rule; then,
 * through admin_query() on a real SQLite database: LOAD QUERY RULES TO
 * RUNTIME, runtime_query_rules, a bad regex refused with the runtime
 * unchanged, SAVE ... FROM RUNTIME / TO DISK, and the shapes made to be
 * classified again (a CREATE CACHE cache left alone).
 */
#include "admin/cache_admin.h"
#include "cache/registry.h"
#include "cache/rules.h"
#include "config/config.h"
#include "base/log.h"
#include "tap.h"

#include "../../admin/internal.h"

#include <stdlib.h>

/* ------------------------------------------------------------- helpers */

static struct rule_row row(int64_t id, const char *digest, const char *re, int64_t ttl, int apply)
{
	struct rule_row r = { .rule_id = id, .active = 1, .digest = digest, .match_digest = re,
			      .has_cache_ttl = ttl >= 0, .cache_ttl = ttl, .apply = apply };
	return r;
}

/* Compile and install rows; false (with the message shown) if refused. */
static bool install(const struct rule_row *rows, size_t n)
{
	char err[512] = "";
	struct rules_set *s = rules_compile(rows, n, err, sizeof err);

	if (!s) {
		printf("#   refused: %s\n", err);
		return false;
	}
	rules_install(s);
	return true;
}

/* rules_compile refuses rows with a message that contains want. */
static void refused(const struct rule_row *rows, size_t n, const char *want, const char *name)
{
	char err[512] = "";
	struct rules_set *s = rules_compile(rows, n, err, sizeof err);

	if (!ok(!s && strstr(err, want), "%s", name))
		printf("#   err '%s', want it to contain '%s'\n", err, want);
	rules_free(s);
}

static int decide(const char *text, uint64_t digest, int *ttl, int *id)
{
	*ttl = -7;
	*id = -7;
	return rules_decide(digest, text, ttl, id);
}

/* ------------------------------------------------------------ matching */

static void test_matching(void)
{
	struct rule_row rows[3];
	int ttl, id, gen = (int)rules_generation();

	is_int(rules_decide(1, "select 1", NULL, NULL), 0, "no rules: no decision");
	rows[0] = row(1, NULL, "^select v from t73", 5000, 1);
	ok(install(rows, 1), "a match_digest rule compiles");
	ok((int)rules_generation() != gen, "  installing bumps the generation");
	is_int(decide("select v from t73 where id=?", 1, &ttl, &id), 1, "  it matches: cache");
	ok(ttl == 5000 && id == 1, "  with its ttl (5000) and rule_id (1)");
	is_int(decide("SELECT V FROM T73", 2, &ttl, &id), 1, "  case-insensitive");
	is_int(decide("select w from t73", 3, &ttl, &id), 0, "  another shape: no decision");
	is_int(decide(NULL, 3, &ttl, &id), 0, "  no digest_text: no decision");

	rows[0] = row(1, "0x37B5362567EE37EF", NULL, 0, 1);
	ok(install(rows, 1), "a digest rule with cache_ttl 0 compiles");
	is_int(decide("Select ?", 0x37B5362567EE37EFull, &ttl, &id), -1, "  its digest: never cache");
	is_int(decide("Select ?", 0x37B5362567EE37EEull, &ttl, &id), 0, "  another digest: none");
	rows[0] = row(1, "0x37b5362567ee37ef", "^select", 100, 1);
	ok(install(rows, 1), "lower-case hex digits are accepted");
	is_int(decide("Select ?", 0x37B5362567EE37EFull, &ttl, &id), 1,
	       "  digest and match_digest both match: decides");
	is_int(decide("show tables", 0x37B5362567EE37EFull, &ttl, &id), 0,
	       "  digest matches, match_digest does not: none");

	rows[0] = row(1, "", "", 250, 1);
	ok(install(rows, 1), "a rule without criteria (empty strings count as NULL)");
	is_int(decide("anything", 9, &ttl, &id), 1, "  matches every shape");
	is_int(ttl, 250, "  with its ttl");
}

static void test_order_and_apply(void)
{
	struct rule_row rows[4];
	int ttl, id;

	rows[0] = row(20, NULL, "^select", 0, 1);
	rows[1] = row(10, NULL, "^select", 700, 1);
	ok(install(rows, 2), "rules 20 and 10, given in that order");
	is_int(decide("select 1", 1, &ttl, &id), 1, "  rule_id order: rule 10 decides (cache)");
	is_int(id, 10, "  the deciding rule is 10");

	rows[2] = row(5, NULL, "^select", -1, 1);
	ok(install(rows, 3), "rule 5 matches, has no cache_ttl, apply = 1");
	is_int(decide("select 1", 1, &ttl, &id), 0, "  it ends the evaluation: no decision");
	is_int(decide("show tables", 1, &ttl, &id), 0, "  other shapes: no rule matches");

	rows[2] = row(5, NULL, "^select", -1, 0);
	ok(install(rows, 3), "rule 5 with apply = 0");
	is_int(decide("select 1", 1, &ttl, &id), 1, "  evaluation goes on: rule 10 decides");

	rows[2] = row(5, NULL, "^select", 300, 0);
	ok(install(rows, 3), "rule 5 with a cache_ttl and apply = 0");
	is_int(decide("select 1", 1, &ttl, &id), 1, "  the first rule with a cache_ttl decides");
	ok(ttl == 300 && id == 5, "  rule 5's ttl 300");

	rows[2].active = 0;
	rows[0].active = 0;
	ok(install(rows, 3), "rules 5 and 20 inactive");
	is_int(decide("select 1", 1, &ttl, &id), 1, "  rule 10 decides");
	is_int(id, 10, "  (rule 10)");

	rows[1] = row(10, NULL, "^select", 0, 1);
	ok(install(rows, 3), "rule 10 with cache_ttl 0");
	is_int(decide("select 1", 1, &ttl, &id), -1, "  never cache");
	is_int(ttl, 0, "  ttl 0");
}

static int count_row(const struct rule_row *r, void *arg)
{
	int64_t *last = arg;

	if (r->rule_id <= *last)
		return 1;
	*last = r->rule_id;
	return 0;
}

static void test_validation(void)
{
	struct rule_row rows[2], bad;
	int64_t last = -1;

	refused((bad = row(7, NULL, "^select (", 5, 1), &bad), 1, "rule 7: match_digest",
		"a bad regex is refused, naming the rule");
	refused((bad = row(8, "0x123", NULL, 5, 1), &bad), 1, "rule 8: digest '0x123'",
		"a short digest is refused");
	refused((bad = row(8, "37B5362567EE37EF", NULL, 5, 1), &bad), 1, "rule 8: digest",
		"a digest without 0x");
	refused((bad = row(8, "0x37B5362567EE37EG", NULL, 5, 1), &bad), 1, "rule 8: digest",
		"a digest with a non-hex digit");
	refused((bad = row(9, NULL, NULL, 5, 1), bad.cache_ttl = -5, &bad), 1, "rule 9: cache_ttl",
		"a negative cache_ttl");
	refused((bad = row(9, NULL, NULL, RULES_MAX_TTL_MS + 1LL, 1), &bad), 1,
		"rule 9: cache_ttl", "a cache_ttl over a day");
	refused((bad = row(9, NULL, NULL, 5, 2), &bad), 1, "rule 9: apply", "apply = 2");
	bad = row(9, NULL, NULL, 5, 1);
	bad.has_cache_empty_result = true;
	bad.cache_empty_result = 3;
	refused(&bad, 1, "rule 9: cache_empty_result", "cache_empty_result = 3");
	rows[0] = row(4, NULL, NULL, 5, 1);
	rows[1] = row(4, NULL, NULL, 6, 1);
	refused(rows, 2, "rule 4 appears twice", "a repeated rule_id");
	rows[1] = row(3, NULL, "(", 6, 1);
	refused(rows, 2, "rule 3", "the bad rule is named, not the first one");

	rows[1] = row(3, NULL, "x", 6, 1);
	ok(install(rows, 2), "two good rules");
	is_int(rules_count(), 2, "  rules_count 2");
	is_int(rules_each(count_row, &last), 0, "  rules_each walks them in rule_id order");
	rules_install(NULL);
	is_int(rules_count(), 0, "installing NULL removes every rule");
}

/* ------------------------------------------------------------- end to end */

static struct admin_warnings warns;
static char dbname[ADMIN_DB_NAME_MAX] = "main";
static struct pbuf out;

/* Run sql; the first packet's first payload byte (0x00 OK, 0xff ERR, else
 * a column count). */
static int run(const char *sql)
{
	struct admin_reply r = { .out = &out, .seq = 1, .warn = &warns, .db = dbname,
				 .user = "admin", .peer = "127.0.0.1", .conn_id = 1 };

	out.len = 0;
	admin_query(&r, sql, strlen(sql));
	return out.len > PKT_HEADER_LEN ? out.data[PKT_HEADER_LEN] : -1;
}

/* The single value of a one-row, one-column text result. */
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

static const char *query_value(const char *sql)
{
	run(sql);
	return value();
}

static void e2e_load_and_save(void)
{
	int ttl, id;

	is_int(run("INSERT INTO query_rules (rule_id, match_digest, cache_ttl, comment) "
		   "VALUES (1, '^select v from t73', 5000, 'c')"), 0x00, "INSERT INTO query_rules");
	is_int(rules_count(), 0, "  the runtime has no rules before LOAD");
	is_int(run("LOAD QUERY RULES TO RUNTIME"), 0x00, "LOAD QUERY RULES TO RUNTIME: OK");
	is_int(decide("select v from t73 where id=?", 1, &ttl, &id), 1, "  the rule decides");
	is_int(ttl, 5000, "  ttl 5000");
	is_str(query_value("SELECT count(*) FROM runtime_query_rules"), "1", "runtime_query_rules: 1 row");
	is_str(query_value("SELECT cache_ttl || ',' || active || ',' || apply || ',' || "
			   "ifnull(digest, 'NULL') || ',' || comment FROM runtime_query_rules"),
	       "5000,1,1,NULL,c", "  with the row's values (NULL kept)");

	is_int(run("INSERT INTO query_rules (rule_id, match_digest, cache_ttl) VALUES (2, 'a(', 0)"),
	       0x00, "INSERT a rule with a bad regex");
	is_int(run("LOAD SHOAL QUERY RULES TO RUNTIME"), 0xff, "LOAD QUERY RULES TO RUNTIME fails");
	ok(strstr((char *)out.data + 13, "rule 2: match_digest 'a('") != NULL, "  naming rule 2");
	is_int(rules_count(), 1, "  the runtime keeps its one rule");
	is_int(run("UPDATE query_rules SET digest = '0x12' WHERE rule_id = 2"), 0x00, "a bad digest");
	is_int(run("LOAD QUERY RULES TO RUNTIME"), 0xff, "LOAD fails again");
	ok(strstr((char *)out.data + 13, "rule 2: digest '0x12'") != NULL, "  naming the digest");
	is_int(run("UPDATE query_rules SET digest = NULL, cache_ttl = 'x' WHERE rule_id = 2"), 0x00,
	       "a text cache_ttl (SQLite's CHECK lets text through)");
	is_int(run("LOAD QUERY RULES TO RUNTIME"), 0xff, "LOAD fails again");
	ok(strstr((char *)out.data + 13, "rule 2: cache_ttl must be an integer") != NULL,
	   "  saying cache_ttl must be an integer");
	is_int(rules_count(), 1, "  the runtime still has its one rule");

	is_int(run("SAVE QUERY RULES FROM RUNTIME"), 0x00, "SAVE QUERY RULES FROM RUNTIME");
	is_str(query_value("SELECT group_concat(rule_id) FROM query_rules"), "1",
	       "  main.query_rules is the runtime's again (rule 2 gone)");
	is_int(run("SAVE QUERY RULES TO DISK"), 0x00, "SAVE QUERY RULES TO DISK");
	is_str(query_value("SELECT match_digest FROM disk.query_rules"), "^select v from t73",
	       "  disk.query_rules has the rule");
}

static void e2e_reclassify(void)
{
	struct cache_def *a = registry_get(11, "select a", 8, "select a", 8);
	struct cache_def *b = registry_get(12, "select b", 8, "select b", 8);
	struct cache_def *c = registry_get(13, "select c", 8, "select c", 8);

	if (!ok(a && b && c, "three shapes in the registry"))
		return;
	registry_set_cached(a, NULL, 100, 0, 0, TXN_DEFAULT, false);
	registry_set_cached(b, NULL, 100, 0, 0, TXN_DEFAULT, true);
	registry_set_skipped(c, reason_of(WHY_QUERY_RULE));
	atomic_store(&a->classified, true);
	atomic_store(&b->classified, true);
	atomic_store(&c->classified, true);
	is_int(run("LOAD QUERY RULES TO RUNTIME"), 0x00, "LOAD QUERY RULES TO RUNTIME");
	ok(!atomic_load(&a->classified) && atomic_load(&a->state) == CACHE_PROXIED,
	   "  an automatic cache is proxied until classified again");
	ok(atomic_load(&b->classified) && atomic_load(&b->state) == CACHE_CACHED,
	   "  a CREATE CACHE cache is left alone");
	ok(!atomic_load(&c->classified) && atomic_load(&c->state) == CACHE_PROXIED,
	   "  a shape a rule skipped is proxied until classified again");
}

static void test_end_to_end(const char *dir)
{
	char err[512];

	config_defaults(&g_config);
	snprintf(g_config.data_dir, sizeof g_config.data_dir, "%s/data", dir);
	if (!ok(registry_init() == 0, "registry_init"))
		return;
	cache_admin_register();
	if (!ok(adb_open(g_config.data_dir, err, sizeof err) == 0, "admin database opens"))
		printf("#   %s\n", err);
	modules_boot();
	e2e_load_and_save();
	e2e_reclassify();
	adb_close();
	rules_install(NULL);

	/* a restart: disk -> main -> runtime */
	if (!ok(adb_open(g_config.data_dir, err, sizeof err) == 0, "admin database opens again"))
		printf("#   %s\n", err);
	modules_boot();
	is_int(rules_count(), 1, "  at start the saved rule is loaded to the runtime");
	is_str(query_value("SELECT rule_id FROM runtime_query_rules"), "1", "  runtime_query_rules");
	adb_close();
	registry_destroy();
}

int main(void)
{
	char dir[] = "/tmp/shoal-test-rules-XXXXXX";
	char cmd[128];

	log_set_level(LOG_LEVEL_ERROR);
	test_matching();
	test_order_and_apply();
	test_validation();
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 99;
	}
	test_end_to_end(dir);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	rules_install(NULL);
	pbuf_free(&out);
	return done_testing();
}
