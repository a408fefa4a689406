/*
 * sqlconn.h: one MySQL-protocol connection (MariaDB Connector/C) to a
 * ProxySQL admin or a Shoal node's admin: connect with a timeout, run a
 * statement, run a query and walk its rows.
 */
#ifndef SHOAL_HA_SQLCONN_H
#define SHOAL_HA_SQLCONN_H

#include <stdbool.h>
#include <stddef.h>

#include <mysql.h>

#include "ha/config.h"

struct sqlconn {
	MYSQL *my;
	char shown[400];   /* user@host:port, for messages */
	const struct ha_dsn *dsn;   /* the login it was opened with */
	bool verbose;      /* log each statement */
};

/* Connect; on failure err says why and -1 is returned. */
int sqlc_open(struct sqlconn *c, const struct ha_dsn *d, int timeout_ms, char *err, size_t errlen);
void sqlc_close(struct sqlconn *c);

/* A statement without a result set. Returns affected rows, or -1 (err). */
long long sqlc_exec(struct sqlconn *c, const char *sql, char *err, size_t errlen);

/* A query: the whole result (free with mysql_free_result), or NULL (err). */
MYSQL_RES *sqlc_query(struct sqlconn *c, const char *sql, char *err, size_t errlen);

#endif
