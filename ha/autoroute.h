/*
 * autoroute.h: `shoal-ha watch --auto-route`: at each poll, after the
 * nodes' health, the agent ranks ProxySQL's digests as advise does, and
 * routes, warms and withdraws digests by itself, within bounds.
 *
 * Its rules are the agent's own (comment starting with rule_comment) and
 * say their state in the comment, so that ProxySQL holds it (a restarted
 * agent, `shoal-ha status` and a cluster peer read it from there):
 *   "<rule_comment> auto warming since=<epoch ms>: <reason>"  mirror_hostgroup
 *       = the cache hostgroup, apply 0: the replica still answers, the
 *       nodes fill (ProxySQL's query mirroring);
 *   "<rule_comment> auto routed since=<epoch ms>: <reason>"   destination =
 *       the cache hostgroup, apply 1;
 *   "<rule_comment> auto withdrawn until=<epoch ms>: <reason>" active 0: the
 *       cooldown; the row is deleted when it is over.
 * Rules the operator made with `shoal-ha route` are left alone.
 */
#ifndef SHOAL_HA_AUTOROUTE_H
#define SHOAL_HA_AUTOROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ha/config.h"
#include "ha/lead.h"
#include "ha/sqlconn.h"

struct watch_state;

/* What one agent keeps between polls besides the watch state (state.h:
 * the judging of routed digests, the decisions): the last "no change"
 * reason logged (said once). */
struct autoroute {
	char last_skip[200];
	struct lead lead;         /* who decides in a cluster (lead.h) */
	struct watch_state *st;   /* decisions and judging, kept in the state file (state.h) */
};

enum ar_state { AR_NONE, AR_WARMING, AR_ROUTED, AR_WITHDRAWN };

/* The state an auto rule's comment says, and its time (since or until)
 * and reason. AR_NONE: not an auto rule. */
enum ar_state ar_parse_comment(const char *rule_comment, const char *comment, int64_t *at_ms,
			       const char **reason);
const char *ar_state_name(enum ar_state s);

/* One poll's routing decisions on the ProxySQL admin c. nodes_ok: every
 * node answered and is healthy (else nothing changes). */
void autoroute_poll(const struct ha_config *cfg, struct sqlconn *c, struct autoroute *ar,
		    bool nodes_ok, int64_t now_ms);
void autoroute_free(struct autoroute *ar);

#endif
