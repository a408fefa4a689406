/*
 * status.c: `shoal-ha status` (see status.h). It reads and never writes:
 * ProxySQL's runtime servers, the agent's rules and their hit counts, the
 * digest texts; each node's /health, /metrics and digest statistics; the
 * watch state file. Then it prints the lot as text, or as HTML.
 */
#include "ha/status.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ha/autoroute.h"
#include "ha/nodes.h"
#include "ha/proxysql.h"
#include "ha/route.h"
#include "ha/state.h"

struct st_node {
	const struct ha_node *n;
	char px_status[16];          /* in runtime_mysql_servers, or "absent" */
	struct node_sample s;
	int out;                     /* enum node_out, from the state file */
	int64_t out_since_ms;
	struct node_digest *d;       /* the node's digests (NULL: not read) */
	size_t nd;
};

struct st_rule {
	struct own_rule r;
	long long hits;              /* stats_mysql_query_rules.hits, -1 unknown */
	char text[600];              /* digest_text, "" unknown */
	char how[400];               /* "route" or auto-route's state, age and reason */
	uint64_t node_hits, node_misses, node_errors;
	int nodes_reporting;
};

struct st_view {
	char proxysql[400];
	struct decision_rec decisions[HA_MAX_DECISIONS];  /* auto-route's, from the state file */
	int n_decisions;
	struct st_node nodes[HA_MAX_NODES];
	int n_nodes;
	struct st_rule *rules;
	size_t n_rules;
	bool node_unreachable;
};

static void read_px_servers(const struct ha_config *cfg, struct sqlconn *c, struct st_view *v)
{
	char sql[256], err[400];
	MYSQL_RES *r;
	MYSQL_ROW row;

	for (int i = 0; i < v->n_nodes; i++)
		snprintf(v->nodes[i].px_status, sizeof v->nodes[i].px_status, "absent");
	snprintf(sql, sizeof sql, "SELECT hostname, port, status FROM runtime_mysql_servers "
		 "WHERE hostgroup_id = %d", cfg->hostgroup);
	if (!(r = sqlc_query(c, sql, err, sizeof err))) {
		ha_log("warning", "status: %s", err);
		return;
	}
	while ((row = mysql_fetch_row(r)))
		for (int i = 0; i < v->n_nodes; i++)
			if (row[0] && row[1] && row[2] && strcmp(row[0], v->nodes[i].n->host) == 0 &&
			    atoi(row[1]) == v->nodes[i].n->data_port)
				snprintf(v->nodes[i].px_status, sizeof v->nodes[i].px_status, "%s", row[2]);
	mysql_free_result(r);
}

static void read_nodes(const struct ha_config *cfg, struct st_view *v)
{
	struct watch_state *st = calloc(1, sizeof *st);
	char err[400];

	if (st && cfg->state_file[0] && state_load(cfg->state_file, cfg, st, err, sizeof err))
		ha_log("warning", "status: the watch state: %s", err);
	if (st) {
		memcpy(v->decisions, st->decisions, sizeof v->decisions);
		v->n_decisions = st->n_decisions;
	}
	for (int i = 0; i < v->n_nodes; i++) {
		struct st_node *sn = &v->nodes[i];

		node_poll(cfg, sn->n, &sn->s);
		if (!sn->s.reachable)
			v->node_unreachable = true;
		for (int k = 0; st && k < st->n; k++)
			if (strcmp(st->nodes[k].name, sn->n->name) == 0) {
				sn->out = st->nodes[k].out;
				sn->out_since_ms = st->nodes[k].out_since_ms;
			}
		if (node_digests(cfg, sn->n, &sn->d, &sn->nd, err, sizeof err)) {
			sn->d = NULL;
			sn->nd = 0;
		}
	}
	free(st);
}

/* ProxySQL's hits per rule and digest texts, and the nodes' figures. */
static void fill_rules(struct sqlconn *c, struct st_view *v)
{
	char err[400], dg[19];
	MYSQL_RES *r;
	MYSQL_ROW row;

	for (size_t i = 0; i < v->n_rules; i++)
		v->rules[i].hits = -1;
	if ((r = sqlc_query(c, "SELECT rule_id, hits FROM stats_mysql_query_rules", err, sizeof err))) {
		while ((row = mysql_fetch_row(r)))
			for (size_t i = 0; i < v->n_rules; i++)
				if (row[0] && row[1] && atoll(row[0]) == v->rules[i].r.rule_id)
					v->rules[i].hits = atoll(row[1]);
		mysql_free_result(r);
	}
	if ((r = sqlc_query(c, "SELECT DISTINCT digest, digest_text FROM stats_mysql_query_digest",
			    err, sizeof err))) {
		while ((row = mysql_fetch_row(r)))
			for (size_t i = 0; i < v->n_rules; i++)
				if (row[0] && row[1] && ha_parse_digest(row[0], dg) &&
				    strcmp(dg, v->rules[i].r.digest) == 0)
					snprintf(v->rules[i].text, sizeof v->rules[i].text, "%s", row[1]);
		mysql_free_result(r);
	}
	for (size_t i = 0; i < v->n_rules; i++)
		for (int k = 0; k < v->n_nodes; k++)
			for (size_t j = 0; j < v->nodes[k].nd; j++)
				if (strcmp(v->nodes[k].d[j].digest, v->rules[i].r.digest) == 0) {
					v->rules[i].node_hits += v->nodes[k].d[j].hits;
					v->rules[i].node_misses += v->nodes[k].d[j].misses;
					v->rules[i].node_errors += v->nodes[k].d[j].errors;
					v->rules[i].nodes_reporting++;
				}
}

/* Who made the rule: `route` (by hand), or auto-route, with its state,
 * since when (or until when) and why. */
static void describe_rule(const struct ha_config *cfg, struct st_rule *r)
{
	const char *reason;
	int64_t at, now = ha_now_ms();
	enum ar_state s = ar_parse_comment(cfg->rule_comment, r->r.comment, &at, &reason);

	if (s == AR_NONE)
		snprintf(r->how, sizeof r->how, "routed by hand (shoal-ha route or advise --apply)");
	else if (s == AR_WITHDRAWN)
		snprintf(r->how, sizeof r->how, "auto-route: withdrawn, cooldown %" PRId64 " s more: %s",
			 at > now ? (at - now) / 1000 : 0, reason);
	else
		snprintf(r->how, sizeof r->how, "auto-route: %s for %" PRId64 " s: %s", ar_state_name(s),
			 now > at ? (now - at) / 1000 : 0, reason);
}

static int gather(const struct ha_config *cfg, struct st_view *v, char *err, size_t errlen)
{
	struct sqlconn c = { 0 };
	struct own_rule *own = NULL;
	size_t n = 0;

	if (px_connect(cfg, &c, err, errlen))
		return HA_EXIT_PROXYSQL;
	snprintf(v->proxysql, sizeof v->proxysql, "%s", c.shown);
	v->n_nodes = cfg->n_nodes;
	for (int i = 0; i < v->n_nodes; i++)
		v->nodes[i].n = &cfg->nodes[i];
	read_px_servers(cfg, &c, v);
	if (route_own_rules(cfg, &c, &own, &n, err, errlen)) {
		sqlc_close(&c);
		return HA_EXIT_FAIL;
	}
	v->rules = calloc(n ? n : 1, sizeof *v->rules);
	if (!v->rules) {
		free(own);
		sqlc_close(&c);
		ha_fail(err, errlen, "out of memory");
		return HA_EXIT_FAIL;
	}
	for (size_t i = 0; i < n; i++) {
		v->rules[i].r = own[i];
		describe_rule(cfg, &v->rules[i]);
	}
	v->n_rules = n;
	free(own);
	read_nodes(cfg, v);
	fill_rules(&c, v);
	sqlc_close(&c);
	return HA_EXIT_OK;
}

static const char *out_word(int out)
{
	return out == OUT_HEALTH ? "taken out: failing" : out == OUT_FLAT ? "taken out: hit counter flat" : "";
}

static void ratio_text(char *buf, size_t cap, uint64_t hits, uint64_t misses)
{
	if (hits + misses == 0)
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, "%.1f%%", 100.0 * (double)hits / (double)(hits + misses));
}

static void since_text(char *buf, size_t cap, int64_t since_ms)
{
	time_t t = (time_t)(since_ms / 1000);
	struct tm tm;

	if (since_ms <= 0 || !gmtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, cap, "-");
}

static void print_text(const struct st_view *v, FILE *f)
{
	char ratio[16], since[40];

	fprintf(f, "ProxySQL %s\n\nnodes (%d):\n", v->proxysql, v->n_nodes);
	for (int i = 0; i < v->n_nodes; i++) {
		const struct st_node *n = &v->nodes[i];

		ratio_text(ratio, sizeof ratio, n->s.hits, n->s.queries - n->s.hits);
		fprintf(f, "  %-24s proxysql %-13s health %-14s", n->n->name, n->px_status,
			n->s.reachable ? n->s.status : "unreachable");
		if (n->s.have_counters)
			fprintf(f, " queries %" PRIu64 ", from cache %" PRIu64 " (%s)", n->s.queries, n->s.hits,
				ratio);
		if (n->out) {
			since_text(since, sizeof since, n->out_since_ms);
			fprintf(f, "  [%s since %s]", out_word(n->out), since);
		}
		if (!n->s.reachable)
			fprintf(f, "  (%s)", n->s.err);
		fputc('\n', f);
	}
	fprintf(f, "\nrouted digests (%zu):\n", v->n_rules);
	for (size_t i = 0; i < v->n_rules; i++) {
		const struct st_rule *r = &v->rules[i];
		char hits[32];

		ratio_text(ratio, sizeof ratio, r->node_hits, r->node_misses);
		snprintf(hits, sizeof hits, r->hits < 0 ? "-" : "%lld", r->hits);
		fprintf(f, "  rule %lld %s %s %d%s: proxysql hits %s, nodes' hit ratio %s "
			"(%" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64 " errors)\n    %s\n    %s\n",
			r->r.rule_id, r->r.digest,
			r->r.hostgroup < 0 && r->r.mirror >= 0 ? "mirrored to hostgroup" : "-> hostgroup",
			r->r.hostgroup < 0 && r->r.mirror >= 0 ? r->r.mirror : r->r.hostgroup,
			r->r.active ? "" : " (inactive)", hits, ratio, r->node_hits,
			r->node_misses, r->node_errors, r->text[0] ? r->text : "(not in stats_mysql_query_digest)", r->how);
	}
	if (v->n_rules == 0)
		fprintf(f, "  none: the agent routes no digest\n");
	if (v->n_decisions)
		fprintf(f, "\nauto-route's recent decisions (%d, newest last):\n", v->n_decisions);
	for (int i = 0; i < v->n_decisions; i++) {
		const struct decision_rec *d = &v->decisions[i];

		since_text(since, sizeof since, d->t_ms);
		fprintf(f, "  %s  %s %s: %s (%s)\n", since, d->action, d->digest, d->detail, d->event);
	}
}

void status_html_escape(struct sbuf_s *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': sb_printf(b, "&amp;"); break;
		case '<': sb_printf(b, "&lt;"); break;
		case '>': sb_printf(b, "&gt;"); break;
		case '"': sb_printf(b, "&quot;"); break;
		case '\'': sb_printf(b, "&#39;"); break;
		default: sb_printf(b, "%c", *s);
		}
	}
}

static void html_cell(struct sbuf_s *b, const char *text)
{
	sb_printf(b, "<td>");
	status_html_escape(b, text);
	sb_printf(b, "</td>");
}

static void html_nodes(struct sbuf_s *b, const struct st_view *v)
{
	char ratio[16], since[40], num[64], link[300];

	sb_printf(b, "<h2>Nodes</h2><table><tr><th>node</th><th>ProxySQL</th><th>health</th>"
		  "<th>queries</th><th>from cache</th><th>hit ratio</th><th>agent</th></tr>\n");
	for (int i = 0; i < v->n_nodes; i++) {
		const struct st_node *n = &v->nodes[i];

		snprintf(link, sizeof link, "http://%s:%d/", n->n->host, n->n->http_port);
		sb_printf(b, "<tr><td><a href=\"");
		status_html_escape(b, link);
		sb_printf(b, "\">");
		status_html_escape(b, n->n->name);
		sb_printf(b, "</a></td>");
		html_cell(b, n->px_status);
		html_cell(b, n->s.reachable ? n->s.status : "unreachable");
		snprintf(num, sizeof num, "%" PRIu64, n->s.queries);
		html_cell(b, n->s.have_counters ? num : "-");
		snprintf(num, sizeof num, "%" PRIu64, n->s.hits);
		html_cell(b, n->s.have_counters ? num : "-");
		ratio_text(ratio, sizeof ratio, n->s.hits, n->s.queries - n->s.hits);
		html_cell(b, n->s.have_counters ? ratio : "-");
		since_text(since, sizeof since, n->out_since_ms);
		snprintf(link, sizeof link, "%s since %s", out_word(n->out), since);
		html_cell(b, n->out ? link : "in rotation");
		sb_printf(b, "</tr>\n");
	}
	sb_printf(b, "</table>\n");
}

static void html_decisions(struct sbuf_s *b, const struct st_view *v)
{
	char when[40];

	if (v->n_decisions == 0)
		return;
	sb_printf(b, "<h2>Auto-route's recent decisions</h2><table><tr><th>when</th><th>action</th>"
		  "<th>digest</th><th>why</th></tr>\n");
	for (int i = v->n_decisions; i-- > 0;) {
		const struct decision_rec *d = &v->decisions[i];

		since_text(when, sizeof when, d->t_ms);
		sb_printf(b, "<tr class=\"decision\">");
		html_cell(b, when);
		html_cell(b, d->action);
		html_cell(b, d->digest);
		html_cell(b, d->detail);
		sb_printf(b, "</tr>\n");
	}
	sb_printf(b, "</table>\n");
}

static void html_rules(struct sbuf_s *b, const struct st_view *v)
{
	char num[64], ratio[16];

	sb_printf(b, "<h2>Routed digests</h2><table><tr><th>rule</th><th>digest</th><th>query</th>"
		  "<th>ProxySQL hits</th><th>nodes' hit ratio</th><th>why</th></tr>\n");
	for (size_t i = 0; i < v->n_rules; i++) {
		const struct st_rule *r = &v->rules[i];

		snprintf(num, sizeof num, "%lld%s", r->r.rule_id, r->r.active ? "" : " (inactive)");
		sb_printf(b, "<tr class=\"rule\">");
		html_cell(b, num);
		html_cell(b, r->r.digest);
		sb_printf(b, "<td class=\"query\">");
		status_html_escape(b, r->text[0] ? r->text : "(not in stats_mysql_query_digest)");
		sb_printf(b, "</td>");
		snprintf(num, sizeof num, r->hits < 0 ? "-" : "%lld", r->hits);
		html_cell(b, num);
		ratio_text(ratio, sizeof ratio, r->node_hits, r->node_misses);
		html_cell(b, ratio);
		html_cell(b, r->how);
		sb_printf(b, "</tr>\n");
	}
	if (v->n_rules == 0)
		sb_printf(b, "<tr><td colspan=\"6\">none: the agent routes no digest</td></tr>\n");
	sb_printf(b, "</table>\n");
}

static int print_html(const struct st_view *v, FILE *f)
{
	struct sbuf_s b = { 0 };
	int rc;

	sb_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		  "<title>shoal-ha status</title><style>body{font:14px system-ui,sans-serif;margin:20px;"
		  "color:#1d2430}table{border-collapse:collapse;margin-bottom:18px}th,td{border:1px solid "
		  "#dde3ea;padding:4px 8px;text-align:left;vertical-align:top}th{background:#eef1f4}"
		  "td.query{font-family:monospace;max-width:600px}</style></head><body>\n"
		  "<h1>shoal-ha status</h1><p>ProxySQL ");
	status_html_escape(&b, v->proxysql);
	sb_printf(&b, "</p>\n");
	html_nodes(&b, v);
	html_rules(&b, v);
	html_decisions(&b, v);
	sb_printf(&b, "</body></html>\n");
	rc = b.oom ? -1 : (fwrite(b.p, 1, b.len, f) == b.len ? 0 : -1);
	sb_free(&b);
	return rc;
}

static void view_free(struct st_view *v)
{
	for (int i = 0; i < v->n_nodes; i++)
		free(v->nodes[i].d);
	free(v->rules);
}

/* Write the HTML to FILE (args[0]) or stdout. */
static int output_html(const struct ha_config *cfg, const struct st_view *v)
{
	FILE *f = cfg->n_args > 0 ? fopen(cfg->args[0], "w") : stdout;
	int rc;

	if (!f) {
		fprintf(stderr, "shoal-ha status: cannot write %s\n", cfg->args[0]);
		return HA_EXIT_FAIL;
	}
	rc = print_html(v, f);
	if (f != stdout && fclose(f) != 0)
		rc = -1;
	if (rc) {
		fprintf(stderr, "shoal-ha status: writing the page failed\n");
		return HA_EXIT_FAIL;
	}
	return HA_EXIT_OK;
}

int cmd_status(const struct ha_config *cfg)
{
	struct st_view *v = calloc(1, sizeof *v);
	char err[1200];
	int rc;

	if (!v) {
		fprintf(stderr, "shoal-ha status: out of memory\n");
		return HA_EXIT_FAIL;
	}
	if (cfg->n_args > (cfg->html ? 1 : 0)) {
		fprintf(stderr, "shoal-ha status: takes no arguments (but --html FILE)\n");
		free(v);
		return HA_EXIT_USAGE;
	}
	rc = gather(cfg, v, err, sizeof err);
	if (rc != HA_EXIT_OK) {
		fprintf(stderr, "shoal-ha status: %s\n", err);
		view_free(v);
		free(v);
		return rc;
	}
	if (cfg->html)
		rc = output_html(cfg, v);
	else
		print_text(v, stdout);
	if (rc == HA_EXIT_OK && v->node_unreachable)
		rc = HA_EXIT_NODE;
	view_free(v);
	free(v);
	return rc;
}
