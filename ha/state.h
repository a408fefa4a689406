/*
 * state.h: what `shoal-ha watch` remembers per node between polls (and,
 * through the state file, between --once runs): recent counter samples
 * (the flat-hit-counter window) and whether the agent took the node out;
 * and auto-route's recent decisions and its judging of routed digests.
 */
#ifndef SHOAL_HA_STATE_H
#define SHOAL_HA_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ha/config.h"

#define HA_MAX_SAMPLES 256

struct sample {
	int64_t t_ms;
	uint64_t hits, queries;
};

enum node_out { OUT_NONE = 0, OUT_HEALTH, OUT_FLAT };

struct node_state {
	char name[300];             /* host:data_port */
	struct sample s[HA_MAX_SAMPLES];
	int n;
	int out;                    /* enum node_out: set OFFLINE_SOFT by the agent */
	int64_t out_since_ms;
	bool kept;                  /* should be out, kept ONLINE (last node): alerted */
};

/* auto-route's recent decisions (autoroute.h), newest last, for
 * `shoal-ha status`. */
#define HA_MAX_DECISIONS 20
struct decision_rec {
	int64_t t_ms;
	char event[32], digest[19], action[24], detail[300];
};

/* What auto-route's judging of a routed digest carries from poll to poll
 * (autoroute.c): its commands and errors on the nodes at the previous
 * poll, and its polls above max_error_pct in a row; its hits and misses
 * where its current hit-ratio window began, and its windows below
 * min_hit_ratio in a row. Kept in the state file, so that `--once` runs
 * and a restarted daemon judge as one daemon does. */
#define HA_MAX_JUDGED 256
struct judged_digest {
	char digest[19];
	uint64_t count, errors, node_errors;
	uint64_t win_hits, win_misses;
	int low_windows, error_polls;
};

struct watch_state {
	struct node_state nodes[HA_MAX_NODES];
	int n;
	struct decision_rec decisions[HA_MAX_DECISIONS];
	int n_decisions;
	struct judged_digest judged[HA_MAX_JUDGED];
	int n_judged;
};

/* Add one (the oldest goes past HA_MAX_DECISIONS). */
void state_note_decision(struct watch_state *st, int64_t t_ms, const char *event,
			 const char *digest, const char *action, const char *detail);

/* The state of each configured node, from the file if it exists (a missing
 * file is an empty state). Returns 0, or -1 with err. */
int state_load(const char *path, const struct ha_config *cfg, struct watch_state *st, char *err,
	       size_t errlen);
/* Write atomically (temporary file + rename). */
int state_save(const char *path, const struct watch_state *st, char *err, size_t errlen);

const char *state_out_name(int out);

#endif
