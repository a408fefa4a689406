/*
 * proxysql.c: ProxySQL admin connection choice, mysql_servers reading and
 * LOAD/SAVE (see proxysql.h).
 */
#include "ha/proxysql.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ha/util.h"

int px_connect(const struct ha_config *cfg, struct sqlconn *c, char *err, size_t errlen)
{
	char e[600];
	struct sbuf_s all = { 0 };

	if (cfg->n_dsns == 0)
		return ha_fail(err, errlen, "no ProxySQL admin configured (proxysql_admin)");
	for (int i = 0; i < cfg->n_dsns; i++) {
		c->verbose = cfg->verbose;
		if (sqlc_open(c, &cfg->dsns[i], cfg->connect_timeout_ms, e, sizeof e) == 0) {
			sb_free(&all);
			return 0;
		}
		if (cfg->n_dsns > 1)
			ha_log("warning", "ProxySQL admin %s", e);
		sb_printf(&all, "%s%s", all.len ? "; " : "", e);
	}
	ha_fail(err, errlen, "no ProxySQL admin reachable: %s", all.p ? all.p : "out of memory");
	sb_free(&all);
	return -1;
}

static void copy_cell(char *dst, size_t cap, const char *v)
{
	snprintf(dst, cap, "%s", v ? v : "");
}

int px_servers(struct sqlconn *c, int hostgroup, struct px_server **out, size_t *n, char *err,
	       size_t errlen)
{
	char sql[256];
	MYSQL_RES *r;
	MYSQL_ROW row;
	size_t i = 0;

	snprintf(sql, sizeof sql, "SELECT hostname, port, status, weight, comment FROM mysql_servers "
		 "WHERE hostgroup_id=%d ORDER BY hostname, port", hostgroup);
	r = sqlc_query(c, sql, err, errlen);
	if (!r)
		return -1;
	*n = (size_t)mysql_num_rows(r);
	*out = calloc(*n ? *n : 1, sizeof **out);
	if (!*out) {
		mysql_free_result(r);
		return ha_fail(err, errlen, "out of memory");
	}
	while ((row = mysql_fetch_row(r)) && i < *n) {
		struct px_server *s = &(*out)[i++];

		copy_cell(s->host, sizeof s->host, row[0]);
		s->port = row[1] ? atoi(row[1]) : 0;
		copy_cell(s->status, sizeof s->status, row[2]);
		s->weight = row[3] ? atoll(row[3]) : 0;
		copy_cell(s->comment, sizeof s->comment, row[4]);
	}
	*n = i;
	mysql_free_result(r);
	return 0;
}

int px_load_save(struct sqlconn *c, const char *module, bool save, char *err, size_t errlen)
{
	char sql[128];

	snprintf(sql, sizeof sql, "LOAD %s TO RUNTIME", module);
	if (sqlc_exec(c, sql, err, errlen) < 0)
		return -1;
	if (!save)
		return 0;
	snprintf(sql, sizeof sql, "SAVE %s TO DISK", module);
	return sqlc_exec(c, sql, err, errlen) < 0 ? -1 : 0;
}

int px_drop_idle(struct sqlconn *c, char *err, size_t errlen)
{
	MYSQL_RES *r = sqlc_query(c, "SELECT COUNT(*) FROM stats_mysql_connection_pool", err, errlen);

	if (!r)
		return -1;
	mysql_free_result(r);
	return 0;
}

void px_drop_idle_all(const struct ha_config *cfg)
{
	char e[1200];

	for (int i = 0; i < cfg->n_dsns; i++) {
		struct sqlconn c = { 0 };

		c.verbose = cfg->verbose;
		if (sqlc_open(&c, &cfg->dsns[i], cfg->connect_timeout_ms, e, sizeof e) == 0 &&
		    px_drop_idle(&c, e, sizeof e) == 0) {
			sqlc_close(&c);
			continue;
		}
		ha_log("warning", "ProxySQL admin %s", e);
		sqlc_close(&c);
	}
}
