/*
 * fence.h: the visibility fence of binlog mode (docs/architecture.md,
 * "The visibility fence").
 *
 * The server sends a transaction's binlog events before its commit is
 * visible to other connections: a fill that starts after the event's
 * invalidation but before the commit is visible reads the old rows. So a
 * fill is stored only if, when it starts, every transaction whose
 * invalidation it saw is PROVEN visible on the upstream.
 *
 * Positions. Every transaction the follower receives is known by where it
 * ends in the server's binlog: (file, offset). A file gets a rank when the
 * follower first hears of it (a ROTATE event), one more than the last, so
 * a position encodes as rank << 32 | offset and positions only grow in
 * binlog order. A table's fence (inval.h) is the position of the last
 * transaction that invalidated it; a fill's snapshot is settled when every
 * fence it saw is at or below fence_visible.
 *
 * The proof (fence_probe.h asks for it). On MySQL, the GTID set the
 * server has committed (fence_observe_gtids). MariaDB publishes the binlog
 * position of its last commit, last_commit_pos, as the session status
 * Binlog_snapshot_file / Binlog_snapshot_position (outside a consistent
 * snapshot) and updates it, under LOCK_commit_ordered, in the same
 * critical section in which it runs commit_ordered() -- InnoDB's commit in
 * memory, which makes a transaction visible to new read views -- for every
 * transaction of the group commit, in binlog order. A position read from
 * there that is the END of a transaction the follower received therefore
 * proves that transaction and every one before it visible. Other writers
 * set the position too (a rotation, a binlog checkpoint or incident
 * event), to places that are not a transaction's end and may precede a
 * group's commit: such a reading is not used (fence_observe says
 * FENCE_UNMATCHED). A BINLOG_CHECKPOINT event naming file F proves every
 * transaction of the files before F committed in the engines (it is
 * written once their XIDs are), which moves the fence past a rotation
 * when no commit follows it.
 *
 * The start. What the dump skipped before the follower's start position
 * was never received and fences nothing (binlog_start.h): until the
 * start's position is found and proven visible, the start fence
 * (fence_start) keeps every fill from being stored and the cache from
 * serving (inval_serving). A group the dump skipped is known by where it
 * ends (fence_note_skipped_end), and everything in the files before the
 * one read by where they end (fence_note_before_file): both are proven
 * like a transaction received.
 *
 * Thread-safety: fence_visible, fence_start and fence_received are atomics
 * (the fill path reads fence_visible and fence_start with acquire loads,
 * no lock; a hit reads fence_start). The file ranks
 * and the ring of recent transaction ends are written by the follower
 * thread and read by the probe thread under one mutex (fence_lock in
 * fence.c), never on a fill or a hit.
 */
#ifndef SHOAL_CACHE_FENCE_H
#define SHOAL_CACHE_FENCE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The highest position proven visible on the upstream (0: none yet). */
extern _Atomic uint64_t fence_visible;

/* Has the transaction ending at position f been proven visible? */
static inline bool fence_passed(uint64_t f)
{
	return f <= atomic_load_explicit(&fence_visible, memory_order_acquire);
}

/* The start fence: 0 when open (no start to prove, or proven visible);
 * FENCE_START_UNKNOWN while the follower has not found where its stream
 * starts; else the start's position, until it is proven visible. */
#define FENCE_START_UNKNOWN UINT64_MAX
extern _Atomic uint64_t fence_start;

static inline bool fence_start_open(void)
{
	return atomic_load_explicit(&fence_start, memory_order_acquire) == 0;
}

/* What a probe's reading of the server's commit position showed. */
enum fence_verdict {
	FENCE_ADVANCED = 0, /* fence_visible moved to it */
	FENCE_BEHIND,       /* no further than fence_visible: commits not yet visible */
	FENCE_AHEAD,        /* past what the follower received: wait for the stream */
	FENCE_UNMATCHED,    /* not the end of a transaction received: proves nothing */
	FENCE_UNKNOWN_FILE, /* a file the follower has not heard of */
};

/* Forget everything (start, tests): no file known, nothing received. */
void fence_reset(void);

/* The follower is now reading file name (a ROTATE event, or the dump's
 * first, artificial one). */
void fence_note_file(const char *name, size_t len);

/* The follower received a transaction ending at offset end of the current
 * file, at now_ms (monotonic). Its position, to fence its tables with
 * (inval_bump_fenced); UINT64_MAX when no file is known (never passed). */
uint64_t fence_note_trx_end(uint32_t end, int64_t now_ms);

/* The same for a MySQL transaction with its GTID (tag "" or NULL when
 * untagged; uuid NULL or gno 0: none, and then it is never proven):
 * fence_observe_gtids proves it. */
uint64_t fence_note_trx_end_gtid(uint32_t end, int64_t now_ms, const uint8_t *uuid, const char *tag,
				 uint64_t gno);

/* The position of offset end of the current file, not appended (a row
 * event's end, inside a transaction not yet received whole: no other
 * transaction ends between it and its transaction's end, so a reading
 * proves it exactly when it proves that transaction). UINT64_MAX when no
 * file is known. */
uint64_t fence_pos_here(uint32_t end);

/* A group the dump skipped (before the follower's start position) ends at
 * offset end of the current file: its position, known like a transaction
 * received (UINT64_MAX when no file is known). */
uint64_t fence_note_skipped_end(uint32_t end);

/* The position after every event of the files before the current one
 * (rank << 32, less one: no reading is ever there; a BINLOG_CHECKPOINT
 * event naming the current file or a later one proves it), known like a
 * transaction received. UINT64_MAX when no file is known. */
uint64_t fence_note_before_file(void);

/* The follower opens a stream that starts where nothing was received (its
 * first, or after a gap): the start fence closes (FENCE_START_UNKNOWN). */
void fence_start_close(void);

/* The start's position is found: the start fence opens once pos is proven
 * visible (at once when it is already, or when pos is 0). */
void fence_start_at(uint64_t pos);

/* A position for a log line: "binlog.000004:2791", "the head of
 * binlog.000004" (fence_note_before_file's), "nowhere" (0). */
void fence_format(uint64_t pos, char *out, size_t cap);

/* A BINLOG_CHECKPOINT event naming file name: every transaction of the
 * files before it is committed in the engines. */
void fence_note_checkpoint(const char *name, size_t len);

/* A reading of the server's last commit position. */
enum fence_verdict fence_observe(const char *file, size_t flen, uint64_t offset);

/* A reading of a MySQL server's @@global.gtid_executed. MySQL adds a
 * transaction's GTID to it after the engine commit (the commit stage of
 * its ordered commit, for each group after its engines' commits; with
 * binlog_order_commits OFF each session after its own): the transactions
 * received, in binlog order, up to the first whose GTID it lacks are
 * proven visible. */
struct gtid_set;
enum fence_verdict fence_observe_gtids(const struct gtid_set *executed);

/* Has the follower received a transaction not yet proven visible? */
bool fence_pending(void);

/* Wait (at most ms) until fence_pending() or a transaction is received. */
void fence_wait_received(int ms);

/* Counters and state for /metrics, the admin and the status page. */
struct fence_stats {
	bool open;                 /* a transaction received is not yet proven visible */
	double oldest_age_s;       /* how long the oldest of them has waited */
	uint64_t transactions;     /* transactions fenced */
	uint64_t fills_refused;    /* fills not stored: a fence they saw was open */
	uint64_t probes;           /* readings of the server's position */
	uint64_t probe_errors;     /* probes that failed (connection, query) */
	uint64_t probes_unmatched; /* readings that proved nothing (not a transaction's end) */
	uint64_t checkpoints;      /* fences moved by a BINLOG_CHECKPOINT event */
	double probe_seconds;      /* sum of the probes' round trips */
	bool supported;            /* false: the upstream cannot prove visibility (fences stay closed) */
	bool start_pending;        /* the start fence is closed: nothing is stored or served */
};
void fence_get_stats(struct fence_stats *out);

/* Counting, from the fill path and the probe. */
void fence_count_refused(void);
void fence_count_probe(bool ok, double seconds);
void fence_set_supported(bool ok);

#endif
