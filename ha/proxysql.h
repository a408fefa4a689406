/*
 * proxysql.h: the agent's dialogue with ProxySQL's admin interface: pick the
 * first reachable admin of the configured list, read the hostgroup's
 * servers, and move a module's configuration to the runtime and to disk.
 */
#ifndef SHOAL_HA_PROXYSQL_H
#define SHOAL_HA_PROXYSQL_H

#include <stdbool.h>
#include <stddef.h>

#include "ha/config.h"
#include "ha/sqlconn.h"

/* Connect to the first reachable admin. Logs each failed one; returns -1
 * (err names them all) when none answers. */
int px_connect(const struct ha_config *cfg, struct sqlconn *c, char *err, size_t errlen);

struct px_server {
	char host[256];
	int port;
	char status[16];
	long long weight;
	char comment[256];
};

/* The rows of main.mysql_servers for one hostgroup (free *out). */
int px_servers(struct sqlconn *c, int hostgroup, struct px_server **out, size_t *n, char *err,
	       size_t errlen);

/* LOAD <module> TO RUNTIME, then (save) SAVE <module> TO DISK.
 * module: "MYSQL SERVERS" or "MYSQL QUERY RULES". */
int px_load_save(struct sqlconn *c, const char *module, bool save, char *err, size_t errlen);

/* Make ProxySQL drop at once the idle pooled connections of every server
 * that is not ONLINE, by reading stats_mysql_connection_pool (ProxySQL
 * otherwise drops them at its next idle sweep, every
 * mysql-ping_interval_server_msec). Before a node goes back ONLINE, so that
 * connections to its previous process are not reused; after one went
 * OFFLINE_SOFT, so that ProxySQL closes its idle connections itself. */
int px_drop_idle(struct sqlconn *c, char *err, size_t errlen);

/* The same on every configured admin (a cluster's peers get the status
 * change by sync, later); failures are logged as warnings. */
void px_drop_idle_all(const struct ha_config *cfg);

#endif
