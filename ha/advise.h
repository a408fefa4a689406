/*
 * advise.h: `shoal-ha advise [--apply]`: rank ProxySQL's digests by total
 * time, ask the nodes which are cacheable, print the routing that saves
 * the most upstream time, and apply it with --apply.
 */
#ifndef SHOAL_HA_ADVISE_H
#define SHOAL_HA_ADVISE_H

#include <stdbool.h>
#include <stddef.h>

#include "ha/config.h"
#include "ha/sqlconn.h"

enum verdict { V_UNKNOWN, V_CACHEABLE, V_NOT };

/* A digest of ProxySQL's statistics, with what the nodes say of it. */
struct cand {
	char digest[19];
	char text[64];           /* shown */
	char *full;              /* the whole digest_text */
	unsigned long long count, sum_time;
	long long last_seen;     /* epoch seconds, the latest over ProxySQL's rows */
	enum verdict v;
	char why[160];
	unsigned long long hits, misses;   /* summed over the nodes */
	unsigned long long node_count;     /* its commands on the nodes */
	unsigned long long errors, node_errors;  /* ... answered with an error; the nodes' own */
	double saving;           /* expected upstream time saved, µs */
	double ratio;            /* the hit ratio that saving assumes */
	bool measured;           /* ... the nodes' own (MIN_MEASURED lookups or more) */
	long long routed_rule;   /* 0: not routed by the agent */
	bool chosen;
};

/* ProxySQL's digests ranked by total time, with the agent's rules, the
 * nodes' verdicts and figures and the expected savings. */
struct ranking {
	struct cand *k;
	size_t n;
	unsigned long long total_time;   /* µs, every digest's */
	int failed;                      /* nodes that did not answer */
};

/* Fill r (free it with advise_free). quiet: node failures are logged, not
 * printed as advise's. 0, or -1 with err. */
int advise_rank(const struct ha_config *cfg, struct sqlconn *c, struct ranking *r, char *err,
		size_t errlen);
void advise_free(struct ranking *r);

/* Returns an exit status (util.h). */
int cmd_advise(const struct ha_config *cfg);

#endif
