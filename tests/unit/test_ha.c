/*
 * test_ha.c: unit tests of the shoal-ha agent's pure parts: DSN, node and
 * digest parsing, settings precedence (file < env < flag), the Prometheus
 * counters it reads, and watch's per-node decision (flat window, health,
 * retry after flat_retry_ms, restarted node).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ha/autoroute.h"
#include "ha/config.h"
#include "ha/decide.h"
#include "ha/nodes.h"
#include "ha/state.h"
#include "ha/status.h"
#include "ha/util.h"
#include "tap.h"

static void test_dsn(void)
{
	struct ha_dsn d;
	char err[300];

	ok(config_parse_dsn("mysql://admin:admin@10.0.0.1:6032", 33, &d, err, sizeof err) == 0,
	   "dsn: plain");
	is_str(d.user, "admin", "dsn: user");
	is_str(d.password, "admin", "dsn: password");
	is_str(d.host, "10.0.0.1", "dsn: host");
	is_int(d.port, 6032, "dsn: port");
	is_str(d.shown, "admin@10.0.0.1:6032", "dsn: shown without the password");
	ok(config_parse_dsn("mysql://r%40d:p%3Aw%40@px", 25, &d, err, sizeof err) == 0 &&
	   strcmp(d.user, "r@d") == 0 && strcmp(d.password, "p:w@") == 0 && d.port == 6032 &&
	   strcmp(d.host, "px") == 0, "dsn: percent-encoding, default port 6032");
	ok(config_parse_dsn("mysql://a:b@[::1]:7032", 22, &d, err, sizeof err) == 0 &&
	   strcmp(d.host, "::1") == 0 && d.port == 7032 && strcmp(d.shown, "a@[::1]:7032") == 0,
	   "dsn: IPv6 in brackets");
	ok(config_parse_dsn("admin:admin@h:1", 15, &d, err, sizeof err) < 0 &&
	   strstr(err, "expected mysql://"), "dsn: no scheme refused");
	ok(config_parse_dsn("mysql://h:6032", 14, &d, err, sizeof err) < 0, "dsn: no user@ refused");
	ok(config_parse_dsn("mysql://a:b@h:70000", 19, &d, err, sizeof err) < 0, "dsn: bad port");
	ok(config_parse_dsn("mysql://a:b@h;x:1", 17, &d, err, sizeof err) < 0,
	   "dsn: odd host characters refused");
	ok(config_parse_dsn("mysql://a:%4@h", 14, &d, err, sizeof err) < 0, "dsn: bad percent");
}

static void test_node(void)
{
	struct ha_node n;
	char err[300];

	ok(config_parse_node("10.0.0.5", 8, &n, err, sizeof err) == 0 && n.data_port == 3307 &&
	   n.http_port == 6034 && n.admin_port == 6035, "node: defaults 3307/6034/6035");
	is_str(n.name, "10.0.0.5:3307", "node: name is host:data_port");
	ok(config_parse_node("h:1:2:3", 7, &n, err, sizeof err) == 0 && n.data_port == 1 &&
	   n.http_port == 2 && n.admin_port == 3, "node: all ports");
	ok(config_parse_node("h:4000", 6, &n, err, sizeof err) == 0 && n.data_port == 4000 &&
	   n.http_port == 6034, "node: data port only");
	ok(config_parse_node("[::1]:1:2", 9, &n, err, sizeof err) == 0 && strcmp(n.host, "::1") == 0 &&
	   n.http_port == 2, "node: IPv6");
	ok(config_parse_node("h:1:2:3:4", 9, &n, err, sizeof err) < 0, "node: too many ports");
	ok(config_parse_node("h:x", 3, &n, err, sizeof err) < 0 && strstr(err, "bad node address"),
	   "node: bad port");
	ok(config_parse_node("h'x", 3, &n, err, sizeof err) < 0, "node: a quote in the host refused");
}

static void test_digest(void)
{
	char d[19];

	ok(ha_parse_digest("0xab", d) && strcmp(d, "0x00000000000000AB") == 0, "digest: padded, upper");
	ok(ha_parse_digest("q_1e092daeffbbf262", d) && strcmp(d, "0x1E092DAEFFBBF262") == 0,
	   "digest: q_ id");
	ok(!ha_parse_digest("0x", d), "digest: empty refused");
	ok(!ha_parse_digest("0x12345678901234567", d), "digest: 17 digits refused");
	ok(!ha_parse_digest("1234", d), "digest: no 0x refused");
	ok(!ha_parse_digest("0x12g4", d), "digest: not hex refused");
}

static void test_precedence(void)
{
	char path[] = "/tmp/test_ha_XXXXXX", err[300];
	struct ha_config *c = calloc(1, sizeof *c);
	char *argv1[] = { "shoal-ha", "route", "--config", path, "--hostgroup=33", "0x1", NULL };
	char *argv2[] = { "shoal-ha", "watch", "--config", path, "--no-verbose", "--once", NULL };
	char *argv3[] = { "shoal-ha", "--config", path, "--top", "0", NULL };
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!c || !f) {
		ok(0, "precedence: temporary file");
		free(c);
		return;
	}
	fprintf(f, "# comment\nhostgroup = 31\nnode_weight = 7\nverbose = yes\n"
		"nodes = 'a:1, b:2:3'\n");
	fclose(f);
	setenv("SHOAL_HA_NODE_WEIGHT", "9", 1);
	setenv("SHOAL_HA_HOSTGROUP", "32", 1);
	ok(config_load(c, 6, argv1, err, sizeof err) == 0, "precedence: loads");
	is_int(c->hostgroup, 33, "precedence: the flag wins over env and file");
	is_int(c->node_weight, 9, "precedence: env wins over the file");
	ok(c->verbose, "precedence: file over the default");
	is_int(c->n_nodes, 2, "precedence: two nodes from the file");
	is_str(c->nodes[1].name, "b:2", "precedence: second node");
	is_str(c->command, "route", "command");
	ok(c->n_args == 1 && strcmp(c->args[0], "0x1") == 0, "arguments");
	ok(config_load(c, 6, argv2, err, sizeof err) == 0 && !c->verbose && c->once,
	   "--no-verbose, --once");
	ok(config_load(c, 5, argv3, err, sizeof err) < 0 && strstr(err, "--top") &&
	   strstr(err, "between 1 and"), "an out-of-range flag is refused with its range");
	unsetenv("SHOAL_HA_NODE_WEIGHT");
	unsetenv("SHOAL_HA_HOSTGROUP");
	unlink(path);
	free(c);
}

static void test_metrics(void)
{
	const char *text =
		"# HELP shoal_queries_total x\n# TYPE shoal_queries_total counter\n"
		"shoal_queries_total{destination=\"upstream\"} 120\n"
		"shoal_queries_total{destination=\"cache\"} 30\n"
		"shoal_queries_total_other 5\nshoal_cache_hits_total{query_id=\"q_1\"} 99\n";
	uint64_t h = 1, q = 1;

	ok(metrics_counters(text, &h, &q) == 0, "metrics: found");
	is_int(h, 30, "metrics: hits = destination=cache");
	is_int(q, 150, "metrics: queries = all destinations");
	ok(metrics_counters("shoal_up 1\n", &h, &q) < 0, "metrics: missing family");
}

static void sample(struct node_sample *s, bool healthy, uint64_t h, uint64_t q)
{
	memset(s, 0, sizeof *s);
	s->reachable = s->healthy = healthy;
	s->have_counters = true;
	s->hits = h;
	s->queries = q;
}

static void test_decide(void)
{
	struct ha_config cfg = { .flat_window_ms = 1000, .flat_min_queries = 5, .flat_retry_ms = 3000 };
	struct node_state *ns = calloc(1, sizeof *ns);
	struct node_sample s;
	struct decision d;

	if (!ns)
		return;
	sample(&s, true, 10, 100);
	decide(&cfg, ns, &s, 0, &d);
	ok(d.want == OUT_NONE && !d.flat, "decide: first sample, in");
	sample(&s, true, 10, 200);
	decide(&cfg, ns, &s, 500, &d);
	ok(!d.flat, "decide: within the window, not flat yet");
	decide(&cfg, ns, &s, 1000, &d);
	ok(d.flat && d.want == OUT_FLAT && d.queries_delta == 100 && d.hits_delta == 0 &&
	   d.span_ms == 1000, "decide: flat hits over the window while queries moved");
	sample(&s, true, 11, 300);
	decide(&cfg, ns, &s, 1500, &d);
	ok(!d.flat && d.want == OUT_NONE, "decide: a hit moves: not flat");
	is_int(ns->n, 3, "decide: samples older than the window base are pruned");
	sample(&s, true, 11, 302);
	decide(&cfg, ns, &s, 2600, &d);
	ok(!d.flat, "decide: fewer than flat_min_queries: not flat");
	sample(&s, true, 0, 3);
	decide(&cfg, ns, &s, 2700, &d);
	ok(ns->n == 1 && !d.flat, "decide: counters went back (restart): history cleared");
	sample(&s, false, 0, 3);
	decide(&cfg, ns, &s, 2800, &d);
	ok(d.want == OUT_HEALTH, "decide: unhealthy: out for health");
	ns->out = OUT_FLAT;
	ns->out_since_ms = 3000;
	sample(&s, true, 0, 3);
	decide(&cfg, ns, &s, 5000, &d);
	ok(d.want == OUT_FLAT && !d.retry, "decide: out for flatness stays out before flat_retry_ms");
	decide(&cfg, ns, &s, 6000, &d);
	ok(d.want == OUT_NONE && d.retry, "decide: back on trial after flat_retry_ms");
	cfg.flat_window_ms = 0;
	ns->out = OUT_NONE;
	ns->n = 0;
	sample(&s, true, 0, 3);
	decide(&cfg, ns, &s, 7000, &d);
	sample(&s, true, 0, 300);
	decide(&cfg, ns, &s, 9000, &d);
	ok(!d.flat, "decide: flat_window_ms 0 turns the check off");
	/* a warming node (its snapshot's replay or refill): no flat verdict,
	 * and the window starts once it has warmed */
	cfg.flat_window_ms = 1000;
	ns->n = 0;
	sample(&s, true, 0, 10);
	s.warming = true;
	decide(&cfg, ns, &s, 10000, &d);
	sample(&s, true, 0, 500);
	s.warming = true;
	decide(&cfg, ns, &s, 12000, &d);
	ok(d.warming && !d.flat && d.want == OUT_NONE && ns->n == 0,
	   "decide: warming, hits flat while queries grew: not flat, no history kept");
	sample(&s, true, 0, 600);
	decide(&cfg, ns, &s, 12500, &d);
	ok(!d.warming && !d.flat && ns->n == 1, "decide: warmed: the window starts then");
	sample(&s, true, 0, 700);
	decide(&cfg, ns, &s, 13500, &d);
	ok(d.flat && d.want == OUT_FLAT, "decide: a full window after warming, still flat: out");
	free(ns);
}

/* shoal-ha status --html: every text is escaped (digest texts come from
 * clients' queries). */
static void test_html_escape(void)
{
	struct sbuf_s b = { 0 };

	status_html_escape(&b, "SELECT '<script>alert(1)</script>' & \"x\"");
	is_str(b.p, "SELECT &#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39; &amp; &quot;x&quot;",
	       "status --html escapes <, >, &, quotes");
	sb_free(&b);
	b = (struct sbuf_s){ 0 };
	status_html_escape(&b, "");
	ok(b.len == 0, "an empty text stays empty");
	sb_free(&b);
}

static void test_autoroute_comments(void)
{
	const char *reason = NULL;
	int64_t at = 0;

	ok(ar_parse_comment("shoal-ha", "shoal-ha auto warming since=1796541061703: expected saving 8.9 s",
			    &at, &reason) == AR_WARMING && at == 1796541061703LL &&
	   strcmp(reason, "expected saving 8.9 s") == 0, "auto-route: a warming rule's comment is read back");
	ok(ar_parse_comment("shoal-ha", "shoal-ha auto routed since=5: why", &at, &reason) == AR_ROUTED &&
	   at == 5, "  a routed one");
	ok(ar_parse_comment("shoal-ha", "shoal-ha auto withdrawn until=77: low", &at, &reason) == AR_WITHDRAWN &&
	   at == 77 && strcmp(reason, "low") == 0, "  a withdrawn one, with its cooldown's end");
	ok(ar_parse_comment("shoal-ha", "shoal-ha", &at, &reason) == AR_NONE &&
	   ar_parse_comment("shoal-ha", "shoal-ha auto routed until=5: x", &at, &reason) == AR_NONE &&
	   ar_parse_comment("other", "shoal-ha auto routed since=5: x", &at, &reason) == AR_NONE,
	   "  a rule routed by hand, a malformed comment, another mark: not auto rules");
}

static void test_decisions_file(void)
{
	struct ha_config cfg;
	struct watch_state *st = calloc(1, sizeof *st), *back = calloc(1, sizeof *back);
	char path[] = "/tmp/test_ha_stateXXXXXX", err[400];
	int fd = mkstemp(path);

	memset(&cfg, 0, sizeof cfg);
	for (int i = 0; st && i < HA_MAX_DECISIONS + 3; i++)
		state_note_decision(st, 1000 + i, "digest_routed", "0x00000000000000AB", "route", "why");
	ok(st && st->n_decisions == HA_MAX_DECISIONS && st->decisions[0].t_ms == 1003,
	   "decisions: the last %d are kept, the oldest dropped", HA_MAX_DECISIONS);
	ok(fd >= 0 && st && back && state_save(path, st, err, sizeof err) == 0 &&
	   state_load(path, &cfg, back, err, sizeof err) == 0 && back->n_decisions == HA_MAX_DECISIONS &&
	   back->decisions[HA_MAX_DECISIONS - 1].t_ms == 1000 + HA_MAX_DECISIONS + 2 &&
	   strcmp(back->decisions[0].action, "route") == 0, "  and read back from the state file");
	if (st && back) {
		st->n_judged = 2;
		st->judged[0] = (struct judged_digest){ .digest = "0x00000000000000AB", .count = 5000000000ULL,
							 .errors = 7, .node_errors = 2, .win_hits = 90,
							 .win_misses = 10, .low_windows = 2, .error_polls = 1 };
		st->judged[1] = (struct judged_digest){ .digest = "0x00000000000000CD", .low_windows = 1 };
	}
	ok(st && back && state_save(path, st, err, sizeof err) == 0 &&
	   state_load(path, &cfg, back, err, sizeof err) == 0 && back->n_judged == 2 &&
	   strcmp(back->judged[0].digest, "0x00000000000000AB") == 0 && back->judged[0].count == 5000000000ULL &&
	   back->judged[0].errors == 7 && back->judged[0].node_errors == 2 && back->judged[0].win_hits == 90 &&
	   back->judged[0].win_misses == 10 && back->judged[0].low_windows == 2 && back->judged[0].error_polls == 1 &&
	   strcmp(back->judged[1].digest, "0x00000000000000CD") == 0 && back->judged[1].low_windows == 1,
	   "auto-route's judging of routed digests (counters, bad polls and windows) read back from the "
	   "state file, for --once runs");
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	free(st);
	free(back);
}

int main(void)
{
	test_autoroute_comments();
	test_decisions_file();
	test_html_escape();
	test_dsn();
	test_node();
	test_digest();
	test_precedence();
	test_metrics();
	test_decide();
	return done_testing();
}
