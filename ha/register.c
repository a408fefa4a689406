/*
 * register.c: `shoal-ha register`. For each node (weight node_weight) and
 * the fallback (weight fallback_weight): INSERT the row into mysql_servers
 * if the hostgroup lacks it, UPDATE its weight if that differs; then, only
 * if something changed, LOAD MYSQL SERVERS TO RUNTIME and SAVE MYSQL
 * SERVERS TO DISK. Prints each change, or that there was none.
 */
#include "ha/register.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ha/proxysql.h"
#include "ha/util.h"

static const struct px_server *find(const struct px_server *s, size_t n, const struct ha_node *x)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s[i].host, x->host) == 0 && s[i].port == x->data_port)
			return &s[i];
	return NULL;
}

/* One server: 1 changed, 0 already right, -1 error. */
static int ensure(const struct ha_config *cfg, struct sqlconn *c, const struct px_server *have,
		  size_t n, const struct ha_node *x, int weight, const char *role, char *err,
		  size_t errlen)
{
	const struct px_server *s = find(have, n, x);
	struct sbuf_s q = { 0 };
	long long rc;

	if (s && s->weight == weight) {
		printf("unchanged: %s %s in hostgroup %d, weight %d, status %s\n", role, x->name,
		       cfg->hostgroup, weight, s->status);
		return 0;
	}
	if (!s) {
		sb_printf(&q, "INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment) "
			  "VALUES (%d, ", cfg->hostgroup);
		sb_quote(&q, x->host);
		sb_printf(&q, ", %d, %d, '%s %s')", x->data_port, weight, cfg->rule_comment, role);
	} else {
		sb_printf(&q, "UPDATE mysql_servers SET weight=%d WHERE hostgroup_id=%d AND hostname=",
			  weight, cfg->hostgroup);
		sb_quote(&q, x->host);
		sb_printf(&q, " AND port=%d", x->data_port);
	}
	if (q.oom) {
		sb_free(&q);
		return ha_fail(err, errlen, "out of memory");
	}
	rc = sqlc_exec(c, q.p, err, errlen);
	sb_free(&q);
	if (rc < 0)
		return -1;
	if (s)
		printf("changed: %s %s in hostgroup %d: weight %lld -> %d\n", role, x->name,
		       cfg->hostgroup, s->weight, weight);
	else
		printf("added: %s %s to hostgroup %d, weight %d\n", role, x->name, cfg->hostgroup,
		       weight);
	return 1;
}

int cmd_register(const struct ha_config *cfg)
{
	struct sqlconn c = { 0 };
	struct px_server *have = NULL;
	size_t n = 0;
	char err[1200];
	int changed = 0, rc = 0;

	if (cfg->n_nodes == 0) {
		fprintf(stderr, "shoal-ha register: no nodes configured (--nodes)\n");
		return HA_EXIT_USAGE;
	}
	if (px_connect(cfg, &c, err, sizeof err)) {
		fprintf(stderr, "shoal-ha register: %s\n", err);
		return HA_EXIT_PROXYSQL;
	}
	if (px_servers(&c, cfg->hostgroup, &have, &n, err, sizeof err))
		goto fail;
	for (int i = 0; i < cfg->n_nodes && rc >= 0; i++)
		if ((rc = ensure(cfg, &c, have, n, &cfg->nodes[i], cfg->node_weight, "node", err,
				 sizeof err)) > 0)
			changed++;
	if (rc >= 0 && cfg->has_fallback &&
	    (rc = ensure(cfg, &c, have, n, &cfg->fallback, cfg->fallback_weight, "fallback", err,
			 sizeof err)) > 0)
		changed++;
	if (rc < 0)
		goto fail;
	if (changed == 0) {
		printf("nothing to change: ProxySQL %s already has these servers in hostgroup %d\n",
		       c.shown, cfg->hostgroup);
	} else {
		if (px_load_save(&c, "MYSQL SERVERS", true, err, sizeof err))
			goto fail;
		printf("%d change%s on ProxySQL %s: loaded to runtime, saved to disk\n", changed,
		       changed == 1 ? "" : "s", c.shown);
	}
	free(have);
	sqlc_close(&c);
	return HA_EXIT_OK;
fail:
	fprintf(stderr, "shoal-ha register: %s\n", err);
	free(have);
	sqlc_close(&c);
	return HA_EXIT_FAIL;
}
