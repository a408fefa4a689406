/*
 * route.h: `shoal-ha route`: the agent's own rows of mysql_query_rules, one
 * per digest, sending that digest to the cache hostgroup (idempotent), and
 * their removal. advise --apply uses route_apply().
 */
#ifndef SHOAL_HA_ROUTE_H
#define SHOAL_HA_ROUTE_H

#include <stddef.h>

#include "ha/config.h"
#include "ha/sqlconn.h"

struct own_rule {
	long long rule_id;
	char digest[19];
	int hostgroup, active, apply;   /* hostgroup -1: NULL (a warming rule's) */
	int mirror;                     /* mirror_hostgroup, -1: NULL */
	char comment[256];
};

/* The agent's rules (comment starting with rule_comment), by rule_id. */
int route_own_rules(const struct ha_config *cfg, struct sqlconn *c, struct own_rule **out,
		    size_t *n, char *err, size_t errlen);

/* The lowest rule_id >= the base not in use, nor handed out already
 * (*next, 0 at first): 0, or -1 with err. */
int route_free_rule_id(const struct ha_config *cfg, struct sqlconn *c, long long *next, char *err,
		       size_t errlen);

/* Make sure each digest has an active rule to the hostgroup; prints each
 * change; when something changed, LOAD and SAVE MYSQL QUERY RULES. Returns
 * the number of changes or -1. */
int route_apply(const struct ha_config *cfg, struct sqlconn *c, char (*digests)[19], size_t n,
		char *err, size_t errlen);

/* Command entry: returns an exit status. */
int cmd_route(const struct ha_config *cfg);

#endif
