/*
 * decide.h: watch's verdict for one node from its latest poll and its
 * remembered samples: should it be in rotation, out for failing /health,
 * or out for a flat hit counter. Pure (no I/O), for the unit test.
 */
#ifndef SHOAL_HA_DECIDE_H
#define SHOAL_HA_DECIDE_H

#include <stdbool.h>
#include <stdint.h>

#include "ha/config.h"
#include "ha/nodes.h"
#include "ha/state.h"

struct decision {
	int want;             /* enum node_out: OUT_NONE = in rotation */
	bool flat;            /* the flat condition holds now */
	bool retry;           /* out for flatness long enough: back on trial */
	bool warming;         /* the node warms up: its hit counter is not judged */
	uint64_t hits_delta, queries_delta;
	int64_t span_ms;      /* time the deltas cover */
};

/* Adds the sample's counters to ns (pruning the window) and decides. */
void decide(const struct ha_config *cfg, struct node_state *ns, const struct node_sample *s,
	    int64_t now_ms, struct decision *d);

#endif
