/*
 * config.h: the shoal-ha agent's settings. One struct, filled from the
 * defaults, then the config file (--config FILE or SHOAL_HA_CONFIG), then
 * the environment (SHOAL_HA_*), then the command-line flags. Every setting
 * has all three names (table in config.c, reference in docs/ha-agent.md).
 */
#ifndef SHOAL_HA_CONFIG_H
#define SHOAL_HA_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define HA_MAX_DSNS 8
#define HA_MAX_NODES 64
#define HA_MAX_ARGS 256

/* A MySQL-protocol login: mysql://user:password@host:port */
struct ha_dsn {
	char user[128];
	char password[256];
	char host[256];
	int port;
	char shown[400];   /* user@host:port: never the password */
};

/* A Shoal node: where its data, HTTP and admin ports are. */
struct ha_node {
	char host[256];
	int data_port, http_port, admin_port;
	char name[300];    /* host:data_port, as in mysql_servers */
};

struct ha_config {
	/* raw values, as set by the sources */
	char proxysql_admin[2048];
	char nodes_spec[4096];
	char fallback_spec[300];
	char node_admin_user[128];
	char node_admin_password[256];
	char webhook_url[1024];
	char state_file[1024];
	char rule_comment[64];
	int hostgroup, node_weight, fallback_weight;
	int interval_ms, flat_window_ms, flat_min_queries, flat_retry_ms;
	int connect_timeout_ms, http_timeout_ms;
	int rule_id_base, top;
	int hit_ratio_pct;
	bool verbose;
	/* watch --auto-route (autoroute.h) */
	bool auto_route, dry_run;
	int route_min_share_pct, route_min_saving_ms, warmup_ms, min_hit_ratio_pct;
	int withdraw_after, cooldown_ms, absent_ms, max_changes, max_error_pct, leader_timeout_ms;

	/* parsed by config_finish() */
	struct ha_dsn dsns[HA_MAX_DSNS];
	int n_dsns;
	struct ha_node nodes[HA_MAX_NODES];
	int n_nodes;
	bool has_fallback;
	struct ha_node fallback;   /* host and data_port only */

	/* command line: the command, its switches and its arguments */
	const char *command;
	bool once, apply, remove, all, html, help, version;
	const char *args[HA_MAX_ARGS];
	int n_args;
};

/* Fill cfg from defaults, file, environment and argv. Returns 0, or -1 with
 * a message in err (a usage error). */
int config_load(struct ha_config *cfg, int argc, char **argv, char *err, size_t errlen);

/* Parsers, exposed for the unit test. */
int config_parse_dsn(const char *s, size_t len, struct ha_dsn *d, char *err, size_t errlen);
int config_parse_node(const char *s, size_t len, struct ha_node *n, char *err, size_t errlen);

/* The settings' reference for --help. */
void config_usage(FILE *out);

#endif
