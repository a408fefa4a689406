/*
 * lead.h: which agent of a ProxySQL cluster decides the routing (one agent
 * beside each instance; autoroute.h). Each agent keeps a heartbeat in its
 * own instance: an inactive row of ProxySQL's `scheduler` table, in memory
 * only (never loaded, saved or synced by the agent), whose comment says
 * "<rule_comment> agent heartbeat seq=<n>", n changing every poll. The
 * agent that decides is the one of the first instance of
 * runtime_proxysql_servers (by hostname, then port) that accepts the
 * agent's login and whose heartbeat moved within leader_timeout_ms, as
 * this agent saw it (its own clock: no clock is compared across hosts).
 */
#ifndef SHOAL_HA_LEAD_H
#define SHOAL_HA_LEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ha/config.h"
#include "ha/sqlconn.h"

#define LEAD_MAX_PEERS 16

/* A peer instance's heartbeat as this agent last saw it. */
struct lead_peer {
	char where[300];          /* host:port */
	long long seq;
	int64_t moved_ms;         /* when this agent saw seq change (its clock) */
};

struct lead {
	struct lead_peer peers[LEAD_MAX_PEERS];
	int n_peers;
	long long seq;            /* this agent's heartbeat */
	bool alone_warned;        /* its instance is not in proxysql_servers: said once */
	bool beat_warned;         /* its heartbeat could not be written: said once */
};

/* Beat, then decide: true when this agent decides (no cluster; its own
 * instance comes first among those alive with a live agent; or its own
 * instance is not in the list, which is logged once). false: leader says
 * which instance's agent decides. */
bool lead_decides(const struct ha_config *cfg, struct sqlconn *c, struct lead *l, int64_t now_ms,
		  char *leader, size_t cap);

/* The seq of a heartbeat comment, or -1 when it is not one of mark's. */
long long lead_parse_beat(const char *mark, const char *comment);

#endif
