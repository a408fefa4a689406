/*
 * advise.c: `shoal-ha advise` (see advise.h). ProxySQL's
 * stats_mysql_query_digest gives calls and total time per digest (summed
 * over hostgroups, users and schemas); each node's admin gives its verdict
 * per digest in stats_shoal_query_digest.cache_status (cached / proxied:
 * cacheable; skipped: <reason>: not cacheable) and its hits and misses. A
 * digest no node has seen is asked about (SELECT shoal_cacheable(digest_text)
 * on a node's admin: what the node's classifier and rules would do); only
 * when no node can answer is it "unknown" and never routed. The expected
 * saving of a cacheable digest is its total time times its hit ratio: the
 * nodes' measured one when they have 20 or more hits+misses, else
 * hit_ratio_pct.
 */
#include "ha/advise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ha/nodes.h"
#include "ha/proxysql.h"
#include "ha/route.h"
#include "ha/util.h"

#define MIN_MEASURED 20
#define SHOW_MAX 50

static int read_digests(const struct ha_config *cfg, struct sqlconn *c, struct cand **out,
			size_t *n, char *err, size_t errlen)
{
	MYSQL_RES *r;
	MYSQL_ROW row;
	size_t i = 0;

	(void)cfg;
	r = sqlc_query(c, "SELECT digest, MAX(digest_text), SUM(count_star), SUM(sum_time), "
		       "MAX(last_seen) FROM stats_mysql_query_digest GROUP BY digest "
		       "ORDER BY SUM(sum_time) DESC",
		       err, errlen);
	if (!r)
		return -1;
	*n = (size_t)mysql_num_rows(r);
	if (!(*out = calloc(*n ? *n : 1, sizeof **out))) {
		mysql_free_result(r);
		return ha_fail(err, errlen, "out of memory");
	}
	while ((row = mysql_fetch_row(r))) {
		struct cand *k = &(*out)[i];

		if (!row[0] || !ha_parse_digest(row[0], k->digest))
			continue;
		snprintf(k->text, sizeof k->text, "%s", row[1] ? row[1] : "");
		k->full = strdup(row[1] ? row[1] : "");
		for (char *p = k->text; *p; p++)
			if (*p == '\n' || *p == '\t' || *p == '\r')
				*p = ' ';
		k->count = row[2] ? strtoull(row[2], NULL, 10) : 0;
		k->sum_time = row[3] ? strtoull(row[3], NULL, 10) : 0;
		k->last_seen = row[4] ? atoll(row[4]) : 0;
		i++;
	}
	*n = i;
	mysql_free_result(r);
	return 0;
}

static void merge_node(struct cand *k, size_t n, const struct node_digest *d, size_t nd)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < nd; j++) {
			if (strcmp(k[i].digest, d[j].digest) != 0)
				continue;
			k[i].hits += d[j].hits;
			k[i].misses += d[j].misses;
			k[i].node_count += d[j].count;
			k[i].errors += d[j].errors;
			k[i].node_errors += d[j].node_errors;
			if (strncmp(d[j].status, "skipped", 7) == 0) {
				k[i].v = V_NOT;
				snprintf(k[i].why, sizeof k[i].why, "%s", d[j].status);
			} else if (k[i].v == V_UNKNOWN) {
				k[i].v = V_CACHEABLE;
				snprintf(k[i].why, sizeof k[i].why, "%s", d[j].status);
			}
		}
}

/* Ask every node; returns the number of nodes that failed. */
static int ask_nodes(const struct ha_config *cfg, struct cand *k, size_t n)
{
	int failed = 0;

	for (int i = 0; i < cfg->n_nodes; i++) {
		struct node_digest *d = NULL;
		size_t nd = 0;
		char err[800];

		if (node_digests(cfg, &cfg->nodes[i], &d, &nd, err, sizeof err)) {
			if (cfg->command && strcmp(cfg->command, "advise") == 0)
				fprintf(stderr, "shoal-ha advise: node %s unreachable: %s\n",
					cfg->nodes[i].name, err);
			else
				ha_log("warning", "node %s: digests not read: %s", cfg->nodes[i].name, err);
			failed++;
			continue;
		}
		merge_node(k, n, d, nd);
		free(d);
	}
	return failed;
}

/* Digests no node has seen: ask a node what it would do with them. */
static void ask_unseen(const struct ha_config *cfg, struct cand *k, size_t n)
{
	const char **texts = calloc(n ? n : 1, sizeof *texts);
	size_t *idx = calloc(n ? n : 1, sizeof *idx), m = 0;
	char (*v)[160] = calloc(n ? n : 1, sizeof *v);
	char err[800];

	for (size_t i = 0; texts && idx && v && i < n; i++)
		if (k[i].v == V_UNKNOWN && k[i].full) {
			idx[m] = i;
			texts[m++] = k[i].full;
		}
	for (int j = 0; m && j < cfg->n_nodes; j++) {
		if (node_verdicts(cfg, &cfg->nodes[j], texts, m, v, err, sizeof err))
			continue; /* an older node, or unreachable (reported already) */
		for (size_t i = 0; i < m; i++) {
			struct cand *c = &k[idx[i]];

			if (!v[i][0])
				continue;
			c->v = strncmp(v[i], "skipped", 7) == 0 ? V_NOT : V_CACHEABLE;
			snprintf(c->why, sizeof c->why, "%s, not seen yet", v[i]);
		}
		break;
	}
	free(texts);
	free(idx);
	free(v);
}

static void mark_routed(struct cand *k, size_t n, const struct own_rule *o, size_t no, int hg)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < no; j++)
			if (strcmp(k[i].digest, o[j].digest) == 0 && o[j].active &&
			    o[j].hostgroup == hg)
				k[i].routed_rule = o[j].rule_id;
}

static double choose(const struct ha_config *cfg, struct cand *k, size_t n, int *chosen)
{
	double total = 0;

	*chosen = 0;
	for (size_t i = 0; i < n; i++) {
		if (k[i].v != V_CACHEABLE)
			continue;
		if (!k[i].routed_rule && *chosen < cfg->top && k[i].saving > 0) {
			k[i].chosen = true;
			(*chosen)++;
			total += k[i].saving;
		}
	}
	return total;
}

static void print_row(size_t rank, const struct cand *k)
{
	char verdict[200], saving[32] = "-";
	const char *action = k->chosen ? "route" : "-";

	if (k->v == V_CACHEABLE)
		snprintf(verdict, sizeof verdict, "cacheable (%s)", k->why);
	else if (k->v == V_NOT)
		snprintf(verdict, sizeof verdict, "not cacheable (%s)",
			 strncmp(k->why, "skipped: ", 9) == 0 ? k->why + 9 : k->why);
	else
		snprintf(verdict, sizeof verdict, "unknown (no node has seen it)");
	if (k->v == V_CACHEABLE)
		snprintf(saving, sizeof saving, "%.3f", k->saving / 1e6);
	if (k->routed_rule)
		action = "routed";
	printf("%-4zu %-18s %10llu %12.3f %10s  %-6s %s  [%s]\n", rank, k->digest, k->count,
	       (double)k->sum_time / 1e6, saving, action, verdict, k->text);
}

static void print_report(const struct ha_config *cfg, const struct sqlconn *c, struct cand *k,
			 size_t n, int chosen, double saving)
{
	unsigned long long total = 0;

	for (size_t i = 0; i < n; i++)
		total += k[i].sum_time;
	printf("ProxySQL %s: %zu digests, total time %.3f s; cache hostgroup %d\n", c->shown, n,
	       (double)total / 1e6, cfg->hostgroup);
	printf("%-4s %-18s %10s %12s %10s  %-6s %s\n", "rank", "digest", "count", "sum_time_s",
	       "saving_s", "action", "verdict  [digest_text]");
	for (size_t i = 0; i < n && i < SHOW_MAX; i++)
		print_row(i + 1, &k[i]);
	if (n > SHOW_MAX)
		printf("... %zu more digests with less total time\n", n - SHOW_MAX);
	if (chosen == 0) {
		printf("nothing to route: no cacheable digest that is not routed already\n");
		return;
	}
	printf("routing %d digest%s to hostgroup %d would save about %.3f s of %.3f s upstream "
	       "time (%.1f%%)\n", chosen, chosen == 1 ? "" : "s", cfg->hostgroup, saving / 1e6,
	       (double)total / 1e6, total ? 100.0 * saving / (double)total : 0.0);
}

static int apply_plan(const struct ha_config *cfg, struct sqlconn *c, struct cand *k, size_t n,
		      int chosen)
{
	char (*d)[19] = calloc((size_t)chosen + 1, sizeof *d), err[1200];
	size_t m = 0;
	int rc;

	if (!d) {
		fprintf(stderr, "shoal-ha advise: out of memory\n");
		return HA_EXIT_FAIL;
	}
	for (size_t i = 0; i < n; i++)
		if (k[i].chosen)
			memcpy(d[m++], k[i].digest, 19);
	rc = route_apply(cfg, c, d, m, err, sizeof err);
	free(d);
	if (rc < 0) {
		fprintf(stderr, "shoal-ha advise: %s\n", err);
		return HA_EXIT_FAIL;
	}
	return HA_EXIT_OK;
}

/* The expected saving of each cacheable digest: its total time times its
 * hit ratio, the nodes' measured one or hit_ratio_pct. */
static void savings(const struct ha_config *cfg, struct cand *k, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned long long seen = k[i].hits + k[i].misses;

		k[i].measured = seen >= MIN_MEASURED;
		k[i].ratio = k[i].measured ? (double)k[i].hits / (double)seen : cfg->hit_ratio_pct / 100.0;
		k[i].saving = k[i].v == V_CACHEABLE ? (double)k[i].sum_time * k[i].ratio : 0;
	}
}

int advise_rank(const struct ha_config *cfg, struct sqlconn *c, struct ranking *r, char *err,
		size_t errlen)
{
	struct own_rule *o = NULL;
	size_t no = 0;

	memset(r, 0, sizeof *r);
	if (read_digests(cfg, c, &r->k, &r->n, err, errlen) ||
	    route_own_rules(cfg, c, &o, &no, err, errlen)) {
		advise_free(r);
		return -1;
	}
	mark_routed(r->k, r->n, o, no, cfg->hostgroup);
	free(o);
	r->failed = ask_nodes(cfg, r->k, r->n);
	ask_unseen(cfg, r->k, r->n);
	savings(cfg, r->k, r->n);
	for (size_t i = 0; i < r->n; i++)
		r->total_time += r->k[i].sum_time;
	return 0;
}

void advise_free(struct ranking *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->k[i].full);
	free(r->k);
	memset(r, 0, sizeof *r);
}

int cmd_advise(const struct ha_config *cfg)
{
	struct sqlconn c = { 0 };
	struct ranking r;
	char err[1200];
	int chosen, rc = HA_EXIT_OK;
	double saving;

	if (cfg->n_nodes == 0 || cfg->n_args) {
		fprintf(stderr, "shoal-ha advise: %s\n", cfg->n_args ? "takes no arguments"
				: "no nodes configured (--nodes)");
		return HA_EXIT_USAGE;
	}
	if (px_connect(cfg, &c, err, sizeof err)) {
		fprintf(stderr, "shoal-ha advise: %s\n", err);
		return HA_EXIT_PROXYSQL;
	}
	if (advise_rank(cfg, &c, &r, err, sizeof err)) {
		fprintf(stderr, "shoal-ha advise: %s\n", err);
		sqlc_close(&c);
		return HA_EXIT_FAIL;
	}
	saving = choose(cfg, r.k, r.n, &chosen);
	print_report(cfg, &c, r.k, r.n, chosen, saving);
	if (r.failed) {
		fprintf(stderr, "shoal-ha advise: %d node%s did not answer%s\n", r.failed,
			r.failed == 1 ? "" : "s", cfg->apply ? ": nothing applied" : "");
		rc = HA_EXIT_NODE;
	} else if (cfg->apply && chosen)
		rc = apply_plan(cfg, &c, r.k, r.n, chosen);
	else if (chosen)
		printf("run again with --apply to add these rules\n");
	advise_free(&r);
	sqlc_close(&c);
	return rc;
}
