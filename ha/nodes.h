/*
 * nodes.h: what the agent asks a Shoal node: /health and the hit and query
 * counters of /metrics over HTTP, and the per-digest verdicts of its admin
 * port's stats_shoal_query_digest.
 */
#ifndef SHOAL_HA_NODES_H
#define SHOAL_HA_NODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ha/config.h"

struct node_sample {
	bool reachable;        /* /health answered */
	bool healthy;          /* /health said 200 */
	long http_status;
	char status[32];       /* /health's "status" field */
	bool warming;          /* /health's "warming": a restarted node loading, replaying
				* or refilling its cache snapshot (no flat verdict then) */
	bool have_counters;    /* /metrics answered with shoal_queries_total */
	uint64_t hits;         /* shoal_queries_total{destination="cache"} */
	uint64_t queries;      /* shoal_queries_total, all destinations */
	char err[400];         /* why not reachable / no counters */
};

void node_poll(const struct ha_config *cfg, const struct ha_node *n, struct node_sample *s);

/* Sum the counters out of a Prometheus text. Returns 0 when
 * shoal_queries_total was present, -1 otherwise. */
int metrics_counters(const char *text, uint64_t *hits, uint64_t *queries);

struct node_digest {
	char digest[19];
	char status[160];      /* cache_status: cached, proxied, skipped: why */
	uint64_t hits, misses;
	uint64_t count;              /* count_star: its commands */
	uint64_t errors, node_errors;  /* answered with an error; of those, the node's own */
};

/* The node's digests. Returns 0, or -1 with err (node unreachable...). */
int node_digests(const struct ha_config *cfg, const struct ha_node *n, struct node_digest **out,
		 size_t *count, char *err, size_t errlen);

/* What the node would do with each digest text it has not seen
 * (SELECT shoal_cacheable(text) on its admin): verdict[i] gets 'cached',
 * 'proxied' or 'skipped: why'. Returns 0, or -1 with err. */
int node_verdicts(const struct ha_config *cfg, const struct ha_node *n, const char *const *texts,
		  size_t count, char (*verdict)[160], char *err, size_t errlen);

#endif
