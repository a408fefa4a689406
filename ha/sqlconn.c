/*
 * sqlconn.c: MySQL-protocol connections of the agent (see sqlconn.h).
 */
#include "ha/sqlconn.h"

#include <stdio.h>
#include <string.h>

#include "ha/util.h"

int sqlc_open(struct sqlconn *c, const struct ha_dsn *d, int timeout_ms, char *err, size_t errlen)
{
	unsigned int secs = (unsigned int)((timeout_ms + 999) / 1000);
	bool verbose = c->verbose;

	memset(c, 0, sizeof *c);
	c->verbose = verbose;
	snprintf(c->shown, sizeof c->shown, "%s", d->shown);
	c->dsn = d;
	c->my = mysql_init(NULL);
	if (!c->my)
		return ha_fail(err, errlen, "out of memory");
	mysql_options(c->my, MYSQL_OPT_CONNECT_TIMEOUT, &secs);
	mysql_options(c->my, MYSQL_OPT_READ_TIMEOUT, &secs);
	mysql_options(c->my, MYSQL_OPT_WRITE_TIMEOUT, &secs);
	if (!mysql_real_connect(c->my, d->host, d->user, d->password, NULL, (unsigned)d->port, NULL,
				0)) {
		ha_fail(err, errlen, "cannot connect to %s: %s (error %u)", d->shown,
			mysql_error(c->my), mysql_errno(c->my));
		mysql_close(c->my);
		c->my = NULL;
		return -1;
	}
	return 0;
}

void sqlc_close(struct sqlconn *c)
{
	if (c->my)
		mysql_close(c->my);
	c->my = NULL;
}

long long sqlc_exec(struct sqlconn *c, const char *sql, char *err, size_t errlen)
{
	MYSQL_RES *r;
	long long n;

	if (c->verbose)
		ha_log("info", "%s: %s", c->shown, sql);
	if (mysql_query(c->my, sql))
		return ha_fail(err, errlen, "%s: %s: error %u: %s", c->shown, sql, mysql_errno(c->my),
			       mysql_error(c->my));
	r = mysql_store_result(c->my);
	if (r)
		mysql_free_result(r);
	n = (long long)mysql_affected_rows(c->my);
	return n < 0 ? 0 : n;
}

MYSQL_RES *sqlc_query(struct sqlconn *c, const char *sql, char *err, size_t errlen)
{
	MYSQL_RES *r;

	if (c->verbose)
		ha_log("info", "%s: %s", c->shown, sql);
	if (mysql_query(c->my, sql)) {
		ha_fail(err, errlen, "%s: %s: error %u: %s", c->shown, sql, mysql_errno(c->my),
			mysql_error(c->my));
		return NULL;
	}
	r = mysql_store_result(c->my);
	if (!r)
		ha_fail(err, errlen, "%s: %s: %s", c->shown, sql,
			mysql_errno(c->my) ? mysql_error(c->my) : "no result set");
	return r;
}
