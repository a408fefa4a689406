/*
 * binlog_start.h: where the follower's stream starts in the server's binlog
 * (docs/architecture.md, "The visibility fence", "The start").
 *
 * The follower opens its dump at a GTID position (@slave_connect_state):
 * the server's @@gtid_binlog_pos on a fresh start, the snapshot's on a
 * resume. The server reads its binlog from the start of a file and skips,
 * in each domain, the event groups up to that domain's GTID; what it skips
 * the follower never receives, so none of it is fenced, and some of it may
 * not be visible yet (binlogged, not committed in the engine). The start's
 * position is a binlog position at or after the end of every transaction
 * skipped; once it is proven visible (fence.h), so is all that was skipped.
 *
 * For each GTID of the start position (domain D, server S, sequence N) the
 * dump shows where its skipping ends, in one of three ways:
 *   - the binlog state in the GTID_LIST event at the head of the file read
 *     already holds D-S-N or later: the server started after all of D's
 *     groups up to it, which are in earlier files (start_cover_list with
 *     the position "end of the earlier files");
 *   - the group D-S-N itself, skipped: the server then sends an artificial
 *     GTID_LIST event whose log_pos is where that group ends, its state
 *     holding D-S-N (start_cover_list with that position);
 *   - a group D-S-M with M > N, sent (a hole in the sequence): every group
 *     skipped in D is before it (start_cover_group with its end).
 * The start's position is the furthest of these; it is known once every
 * GTID of the start position is covered.
 *
 * No locking: the follower thread owns it.
 */
#ifndef SHOAL_CACHE_BINLOG_START_H
#define SHOAL_CACHE_BINLOG_START_H

#include <stdbool.h>
#include <stdint.h>

#define START_MAX_DOMAINS 32

struct gtid {
	uint32_t domain, server;
	uint64_t seq;
};

struct binlog_start {
	struct gtid want[START_MAX_DOMAINS];  /* the dump's start position */
	bool covered[START_MAX_DOMAINS];
	unsigned n, left;                     /* GTIDs, those not yet covered */
	uint64_t pos;                         /* the furthest cover so far (0: none) */
};

/* Begin with the dump's start position want[0, n). A GTID whose domain the
 * server's binlog state (have[0, nhave], its @@gtid_binlog_pos) does not
 * hold is covered at once: the server has nothing of that domain to skip. */
void start_begin(struct binlog_start *s, const struct gtid *want, unsigned n,
		 const struct gtid *have, unsigned nhave);

/* A binlog state (a GTID_LIST event's): how many GTIDs of the start it
 * covers that were not covered yet (then start_cover_at says up to where). */
unsigned start_cover_list(struct binlog_start *s, const struct gtid *list, unsigned n);

/* A group the dump sent: does it cover a GTID not covered yet? (0 or 1) */
unsigned start_cover_group(struct binlog_start *s, const struct gtid *g);

/* What was just covered is covered up to binlog position pos. */
void start_cover_at(struct binlog_start *s, uint64_t pos);

/* Is every GTID of the start covered? Then s->pos is the start's position. */
static inline bool start_located(const struct binlog_start *s)
{
	return s->left == 0;
}

#endif
