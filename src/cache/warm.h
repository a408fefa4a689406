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
#include "upstream/users.h"

#define WARM_KEY_HEAD 10       /* kind, caps, settings id (2..5), user id (6..9) */

enum warm_state {
	WARM_OFF = 0,      /* no snapshot (none set, no file yet) */
	WARM_REFUSED,      /* the file is bad or not this upstream's: ignored */
	WARM_DISCARDED,    /* its data cannot be trusted here (mode, no position) */
	WARM_LOADING,      /* being put in the store */
	WARM_REPLAYING,    /* in the store; the binlog replay is not done: nothing served */
	WARM_WARM,         /* replayed: what it left is served */
	WARM_DROPPED,      /* the replay could not be made: flushed */
};

/* The refill (core/refill.c): the saved text statements whose data is
 * not served (not loaded, invalidated by the replay, or the whole file
 * dropped) are read again through a session of their own user, costliest
 * first, at most warm_rate a second, for at most warm_timeout_ms. */
enum warm_refill {
	WARM_REFILL_NONE = 0,  /* nothing to refill (or warm_rate 0) */
	WARM_REFILL_WAITING,   /* the binlog replay is not done yet */
	WARM_REFILL_RUNNING,
	WARM_REFILL_DONE,      /* every key was reached */
	WARM_REFILL_STOPPED,   /* warm_timeout_ms, the stop, or the upstream down: some keys left */
};

enum warm_refill_outcome {
	WARM_REFILLED,         /* read again and now served */
	WARM_REFILL_PRESENT,   /* served already (kept, or filled by a client): not read */
	WARM_REFILL_FAILED,    /* an error, or the answer is not served under its key */
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
	enum warm_refill refill;
	uint64_t refill_total;     /* keys the refill looks at */
	uint64_t refill_done, refill_present, refill_failed;
	uint64_t refill_left;      /* not reached (stopped) */
	double refill_seconds;     /* how long it ran, once it ended */
};

/* A saved text statement's key, with this run's ids. */
struct warm_key {
	uint8_t *key;              /* kind, caps, settings id, user id; the text follows (KEY_HEAD) */
	uint32_t key_len;
	uint32_t user;             /* index in warm_keys.users */
	double saved_us;           /* upstream time its hits saved: the refill's order */
};

struct warm_keys {
	struct warm_key *v;
	size_t n, cap;
	char (*users)[USERS_NAME_MAX]; /* login names; the last: the upstream_db_url user */
	size_t nusers;
	uint64_t prepared;         /* prepared statements' keys, left to their next execute */
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
/* Warming: loading, replaying, or refilling (the node's answers are all
 * current; its hit ratio is still growing). */
bool warm_warming(const struct warm_status *w);

/* The keys warm_restore() collected for the refill, handed over (free them
 * with warm_keys_free). false when there are none. */
bool warm_keys_take(struct warm_keys *out);
void warm_keys_free(struct warm_keys *k);
/* The refill's progress, for the status (core/refill.c; any thread). */
void warm_refill_begin(uint64_t total);
void warm_refill_count(enum warm_refill_outcome o);
void warm_refill_end(enum warm_refill st, uint64_t left, double seconds);
const char *warm_refill_name(enum warm_refill r);
const char *warm_state_name(enum warm_state s);
/* Free what start read (at exit). */
void warm_free(void);

#endif
