/*
 * warm.h: a node that starts warm. The cache snapshot a graceful stop
 * wrote (cache_snapshot, cache/snapshot.h) is read at start and, where it
 * can be trusted, put back in the store:
 *
 *   warm_read()     before the invalidation mode starts: the file is read
 *                   and checked whole; a bad one is named with its reason
 *                   and ignored (warm_fetch(): a peer's, fetched over HTTP,
 *                   when there is no file to load: a warm join);
 *   warm_prepare()  once the mode is chosen: only binlog mode can tell what
 *                   changed while the node was down, so only there is the
 *                   data kept; the follower is told to start at the
 *                   snapshot's GTID position (binlog_resume_from);
 *   warm_restore()  once the users are known (their keys name them): the
 *                   entries go in the store with their tables' generations
 *                   as they are now, the most valuable first up to
 *                   memory_limit; then the follower replays what the server
 *                   wrote since the snapshot, which invalidates those
 *                   tables as it does live. Nothing is served before the
 *                   replay is done (binlog mode serves nothing while it
 *                   catches up); a position gone, or another server,
 *                   flushes them all.
 *
 * Thread-safety: read, prepare and restore run on the main thread at
 * start; warm_status() may be called from any thread (a mutex).
 */
#ifndef SHOAL_CACHE_WARM_H
#define SHOAL_CACHE_WARM_H

#include <stdbool.h>
#include <stdint.h>

#include "cache/inval.h"

enum warm_state {
	WARM_OFF = 0,      /* no snapshot (none set, no file yet) */
	WARM_REFUSED,      /* the file is bad or not this upstream's: ignored */
	WARM_DISCARDED,    /* its data cannot be trusted here (mode, no position) */
	WARM_LOADING,      /* being put in the store */
	WARM_REPLAYING,    /* in the store; the binlog replay is not done: nothing served */
	WARM_WARM,         /* replayed: what it left is served */
	WARM_DROPPED,      /* the replay could not be made: flushed */
};

struct warm_status {
	enum warm_state state;
	char reason[256];          /* why refused, discarded or dropped ("" if none) */
	uint64_t file_entries;     /* entries in the file */
	uint64_t loaded;           /* put in the store */
	uint64_t skipped;          /* left out: expired, shape not cached now, user gone, key taken */
	uint64_t over_limit;       /* left out: beyond memory_limit */
	uint64_t kept;             /* loaded and still current once the replay was done */
	double load_seconds;
};

/* Read and check path (cache_snapshot) at start. 0 when there is something
 * to load, 1 when not (no file yet, or a bad one: logged). */
int warm_read(const char *path);
/* The same for a running peer's snapshot (warm_from: its GET /snapshot,
 * with this node's admin login), fetched within warm_fetch_timeout_ms; a
 * new node's warm join. */
int warm_fetch(const char *url);
/* The invalidation mode is m: keep the data only where the binlog can
 * validate it, and hand its position to the follower (before it starts). */
void warm_prepare(enum inval_mode m);
/* Put the kept entries in the store, then let the follower replay. Always
 * called at start (it releases the follower even when there is nothing). */
void warm_restore(void);
void warm_status(struct warm_status *out);
const char *warm_state_name(enum warm_state s);
/* Free what start read (at exit). */
void warm_free(void);

#endif
