/*
 * route.c: `shoal-ha route [--remove [--all]] <digest>...` (see route.h).
 * The agent knows its rules by their comment (rule_comment, "shoal-ha" by
 * default) and never touches another row; a new rule gets the lowest free
 * rule_id at or above rule_id_base.
 */
#include "ha/route.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ha/proxysql.h"
#include "ha/util.h"

int route_own_rules(const struct ha_config *cfg, struct sqlconn *c, struct own_rule **out,
		    size_t *n, char *err, size_t errlen)
{
	char sql[512];
	MYSQL_RES *r;
	MYSQL_ROW row;
	size_t i = 0;

	snprintf(sql, sizeof sql, "SELECT rule_id, digest, destination_hostgroup, active, apply, "
		 "mirror_hostgroup, comment FROM mysql_query_rules WHERE substr(comment, 1, %zu) = '%s' ORDER BY rule_id",
		 strlen(cfg->rule_comment), cfg->rule_comment);
	if (!(r = sqlc_query(c, sql, err, errlen)))
		return -1;
	*n = (size_t)mysql_num_rows(r);
	if (!(*out = calloc(*n ? *n : 1, sizeof **out))) {
		mysql_free_result(r);
		return ha_fail(err, errlen, "out of memory");
	}
	while ((row = mysql_fetch_row(r)) && i < *n) {
		struct own_rule *o = &(*out)[i];

		o->rule_id = row[0] ? atoll(row[0]) : 0;
		if (!row[1] || !ha_parse_digest(row[1], o->digest))
			continue; /* ours, but without a usable digest: leave it alone */
		o->hostgroup = row[2] ? atoi(row[2]) : -1;
		o->active = row[3] ? atoi(row[3]) : 0;
		o->apply = row[4] ? atoi(row[4]) : 0;
		o->mirror = row[5] ? atoi(row[5]) : -1;
		snprintf(o->comment, sizeof o->comment, "%s", row[6] ? row[6] : "");
		i++;
	}
	*n = i;
	mysql_free_result(r);
	return 0;
}

static const struct own_rule *own_for(const struct own_rule *o, size_t n, const char *digest)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(o[i].digest, digest) == 0)
			return &o[i];
	return NULL;
}

int route_free_rule_id(const struct ha_config *cfg, struct sqlconn *c, long long *next, char *err,
		       size_t errlen)
{
	char sql[160];
	MYSQL_RES *r;
	MYSQL_ROW row;
	long long base = cfg->rule_id_base, id = *next > base ? *next : base;

	snprintf(sql, sizeof sql, "SELECT rule_id FROM mysql_query_rules WHERE rule_id >= %lld "
		 "ORDER BY rule_id", id);
	if (!(r = sqlc_query(c, sql, err, errlen)))
		return -1;
	while ((row = mysql_fetch_row(r)))
		if (row[0] && atoll(row[0]) == id)
			id++;
		else if (row[0] && atoll(row[0]) > id)
			break;
	mysql_free_result(r);
	*next = id;
	return 0;
}

/* Warn about rules of others that may decide before ours. */
static void warn_earlier(const struct ha_config *cfg, struct sqlconn *c, long long id,
			 const char *digest)
{
	char sql[600], err[600];
	MYSQL_RES *r;
	MYSQL_ROW row;

	snprintf(sql, sizeof sql, "SELECT rule_id, digest FROM mysql_query_rules WHERE active=1 "
		 "AND (comment IS NULL OR substr(comment, 1, %zu) <> '%s') AND ((apply=1 AND "
		 "rule_id < %lld AND (digest IS NULL OR digest = '')) OR digest = '%s') ORDER BY rule_id",
		 strlen(cfg->rule_comment), cfg->rule_comment, id, digest);
	if (!(r = sqlc_query(c, sql, err, sizeof err))) {
		ha_log("warning", "%s", err);
		return;
	}
	while ((row = mysql_fetch_row(r)))
		printf("warning: rule %s (not the agent's) %s digest %s: check that it does not "
		       "send it elsewhere first\n", row[0] ? row[0] : "?",
		       row[1] && *row[1] ? "also matches" : "has apply=1, no digest, and comes before",
		       digest);
	mysql_free_result(r);
}

/* One digest: 1 changed, 0 already right, -1 error. */
static int ensure_rule(const struct ha_config *cfg, struct sqlconn *c, const struct own_rule *o,
		       size_t n, const char *digest, long long *next, char *err, size_t errlen)
{
	const struct own_rule *have = own_for(o, n, digest);
	char sql[512];
	long long id;

	if (have && have->hostgroup == cfg->hostgroup && have->active == 1 && have->apply == 1) {
		printf("unchanged: rule %lld: digest %s -> hostgroup %d\n", have->rule_id, digest,
		       cfg->hostgroup);
		return 0;
	}
	if (have) {
		id = have->rule_id;
		snprintf(sql, sizeof sql, "UPDATE mysql_query_rules SET active=1, "
			 "destination_hostgroup=%d, apply=1 WHERE rule_id=%lld", cfg->hostgroup, id);
	} else {
		if (route_free_rule_id(cfg, c, next, err, errlen))
			return -1;
		id = (*next)++;
		snprintf(sql, sizeof sql, "INSERT INTO mysql_query_rules (rule_id, active, digest, "
			 "destination_hostgroup, apply, comment) VALUES (%lld, 1, '%s', %d, 1, '%s')",
			 id, digest, cfg->hostgroup, cfg->rule_comment);
	}
	if (sqlc_exec(c, sql, err, errlen) < 0)
		return -1;
	printf("%s: rule %lld: digest %s -> hostgroup %d\n", have ? "changed" : "added", id, digest,
	       cfg->hostgroup);
	warn_earlier(cfg, c, id, digest);
	return 1;
}

static int finish(const struct ha_config *cfg, struct sqlconn *c, int changed, char *err,
		  size_t errlen)
{
	if (changed == 0) {
		printf("nothing to change on ProxySQL %s\n", c->shown);
		return 0;
	}
	if (px_load_save(c, "MYSQL QUERY RULES", true, err, errlen))
		return -1;
	printf("%d change%s on ProxySQL %s: loaded to runtime, saved to disk\n", changed,
	       changed == 1 ? "" : "s", c->shown);
	(void)cfg;
	return changed;
}

int route_apply(const struct ha_config *cfg, struct sqlconn *c, char (*digests)[19], size_t n,
		char *err, size_t errlen)
{
	struct own_rule *o = NULL;
	size_t no = 0;
	long long next = 0;
	int changed = 0, rc = 0;

	if (route_own_rules(cfg, c, &o, &no, err, errlen))
		return -1;
	for (size_t i = 0; i < n && rc >= 0; i++) {
		bool dup = false;

		for (size_t k = 0; k < i && !dup; k++)
			dup = strcmp(digests[k], digests[i]) == 0;
		if (!dup && (rc = ensure_rule(cfg, c, o, no, digests[i], &next, err, errlen)) > 0)
			changed++;
	}
	free(o);
	return rc < 0 ? -1 : finish(cfg, c, changed, err, errlen);
}

static int route_remove(const struct ha_config *cfg, struct sqlconn *c, char (*digests)[19],
			size_t n, char *err, size_t errlen)
{
	struct own_rule *o = NULL;
	size_t no = 0;
	int changed = 0;
	char sql[128];

	if (route_own_rules(cfg, c, &o, &no, err, errlen))
		return -1;
	for (size_t i = 0; i < no; i++) {
		bool wanted = cfg->all;

		for (size_t k = 0; k < n && !wanted; k++)
			wanted = strcmp(o[i].digest, digests[k]) == 0;
		if (!wanted)
			continue;
		snprintf(sql, sizeof sql, "DELETE FROM mysql_query_rules WHERE rule_id=%lld",
			 o[i].rule_id);
		if (sqlc_exec(c, sql, err, errlen) < 0) {
			free(o);
			return -1;
		}
		printf("removed: rule %lld: digest %s\n", o[i].rule_id, o[i].digest);
		changed++;
	}
	for (size_t k = 0; k < n; k++)
		if (!own_for(o, no, digests[k]))
			printf("unchanged: digest %s has no rule of the agent\n", digests[k]);
	free(o);
	return finish(cfg, c, changed, err, errlen);
}

static int route_list(const struct ha_config *cfg, struct sqlconn *c, char *err, size_t errlen)
{
	struct own_rule *o = NULL;
	size_t no = 0;

	if (route_own_rules(cfg, c, &o, &no, err, errlen))
		return -1;
	for (size_t i = 0; i < no; i++)
		printf("rule %lld: digest %s -> hostgroup %d%s\n", o[i].rule_id, o[i].digest,
		       o[i].hostgroup, o[i].active ? "" : " (inactive)");
	if (no == 0)
		printf("no rules of the agent on ProxySQL %s\n", c->shown);
	free(o);
	return 0;
}

int cmd_route(const struct ha_config *cfg)
{
	char (*digests)[19] = calloc((size_t)cfg->n_args + 1, sizeof *digests);
	struct sqlconn c = { 0 };
	char err[1200];
	int rc;

	if (!digests) {
		fprintf(stderr, "shoal-ha route: out of memory\n");
		return HA_EXIT_FAIL;
	}
	for (int i = 0; i < cfg->n_args; i++)
		if (!ha_parse_digest(cfg->args[i], digests[i])) {
			fprintf(stderr, "shoal-ha route: bad digest '%s': expected 0x and up to 16 hex "
				"digits (as in stats_mysql_query_digest) or q_ and 16 hex digits\n",
				cfg->args[i]);
			free(digests);
			return HA_EXIT_USAGE;
		}
	if (cfg->remove && !cfg->all && cfg->n_args == 0) {
		fprintf(stderr, "shoal-ha route: --remove needs digests, or --all\n");
		free(digests);
		return HA_EXIT_USAGE;
	}
	if (cfg->all && (!cfg->remove || cfg->n_args)) {
		fprintf(stderr, "shoal-ha route: --all goes with --remove and no digests\n");
		free(digests);
		return HA_EXIT_USAGE;
	}
	if (px_connect(cfg, &c, err, sizeof err)) {
		fprintf(stderr, "shoal-ha route: %s\n", err);
		free(digests);
		return HA_EXIT_PROXYSQL;
	}
	if (cfg->remove)
		rc = route_remove(cfg, &c, digests, (size_t)cfg->n_args, err, sizeof err);
	else if (cfg->n_args == 0)
		rc = route_list(cfg, &c, err, sizeof err);
	else
		rc = route_apply(cfg, &c, digests, (size_t)cfg->n_args, err, sizeof err);
	if (rc < 0)
		fprintf(stderr, "shoal-ha route: %s\n", err);
	sqlc_close(&c);
	free(digests);
	return rc < 0 ? HA_EXIT_FAIL : HA_EXIT_OK;
}
