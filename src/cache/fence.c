/*
 * fence.c: positions of the transactions the follower received, the
 * watermark of those proven visible, and what moves it (see fence.h).
 */
#include "cache/fence.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "cache/gtid_set.h"

#define FILE_SLOTS 16        /* binlog files remembered (name -> rank) */
#define FILE_NAME_MAX 256
#define RING 65536           /* transaction ends remembered, a power of two */
#define SIDS 64              /* MySQL server uuids remembered for the ring's GTIDs */

_Atomic uint64_t fence_visible;
_Atomic uint64_t fence_start;

struct file_slot {
	uint32_t rank;           /* 0: unused */
	size_t len;
	char name[FILE_NAME_MAX];
};

struct trx_end {
	uint64_t pos;
	int64_t recv_ms;
	uint64_t gno;            /* MySQL: the transaction's GTID number (0: none) */
	uint32_t sid;            /* MySQL: its uuid's index in sids[] */
};

/* Guarded by lock: the follower writes, the probe reads. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t received_cond = PTHREAD_COND_INITIALIZER;
static struct file_slot files[FILE_SLOTS];
static unsigned cur_file;    /* index of the current file in files[] */
static uint32_t last_rank;
static struct trx_end ring[RING];
static struct {
	uint8_t uuid[GTID_UUID_LEN];
	char tag[GTID_TAG_MAX + 1];
} sids[SIDS];
static unsigned nsids;
static uint64_t ring_count;  /* ends ever appended */
static _Atomic uint64_t received;   /* the last end appended */

static atomic_uint_fast64_t n_refused, n_probes, n_probe_errors, n_unmatched, n_checkpoints,
	n_transactions, probe_ns;
static atomic_bool supported = true;

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void fence_reset(void)
{
	pthread_mutex_lock(&lock);
	memset(files, 0, sizeof(files));
	cur_file = 0;
	last_rank = 0;
	ring_count = 0;
	nsids = 0;
	atomic_store(&received, 0);
	atomic_store(&fence_visible, 0);
	atomic_store(&fence_start, 0);
	pthread_mutex_unlock(&lock);
}

/* The slot of file name, or NULL. lock held. */
static struct file_slot *file_find(const char *name, size_t len)
{
	for (unsigned i = 0; i < FILE_SLOTS; i++)
		if (files[i].rank && files[i].len == len && memcmp(files[i].name, name, len) == 0)
			return &files[i];
	return NULL;
}

void fence_note_file(const char *name, size_t len)
{
	struct file_slot *f, *oldest;

	if (len == 0 || len >= FILE_NAME_MAX)
		return;   /* no name to rank: the transactions after it fence with UINT64_MAX */
	pthread_mutex_lock(&lock);
	f = &files[cur_file];
	if (f->rank && f->len == len && memcmp(f->name, name, len) == 0) {
		pthread_mutex_unlock(&lock);
		return;   /* the same file again (a reconnect's first ROTATE) */
	}
	/* a new file, or a name seen before in another era (RESET MASTER): a
	 * new rank either way, so positions only grow; its old slot goes */
	f = file_find(name, len);
	if (!f) {
		oldest = &files[0];
		for (unsigned i = 1; i < FILE_SLOTS; i++)
			if (files[i].rank < oldest->rank)
				oldest = &files[i];
		f = oldest;
	}
	f->rank = ++last_rank;
	f->len = len;
	memcpy(f->name, name, len);
	cur_file = (unsigned)(f - files);
	pthread_mutex_unlock(&lock);
}

static struct trx_end *ring_at(uint64_t logical)
{
	uint64_t first = ring_count > RING ? ring_count - RING : 0;

	return &ring[(first + logical) & (RING - 1)];
}

static uint64_t ring_len(void)
{
	return ring_count > RING ? RING : ring_count;
}

/* The first logical index whose position is >= pos (ring_len() if none).
 * lock held; the ring is in ascending order. */
static uint64_t ring_lower_bound(uint64_t pos)
{
	uint64_t lo = 0, hi = ring_len();

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (ring_at(mid)->pos < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Append the end of a transaction at pos, received at now_ms, with its
 * MySQL GTID (gno 0: none). lock held. */
static void append_end_gtid(uint64_t pos, int64_t now_ms, uint32_t sid, uint64_t gno)
{
	struct trx_end *slot;

	if (pos <= atomic_load(&received))
		return;   /* a transaction sent again (a reconnect) is not appended twice */
	slot = &ring[ring_count & (RING - 1)];
	slot->pos = pos;
	slot->recv_ms = now_ms;
	slot->gno = gno;
	slot->sid = sid;
	ring_count++;
	atomic_store(&received, pos);
	pthread_cond_broadcast(&received_cond);
}

static void append_end(uint64_t pos, int64_t now_ms)
{
	append_end_gtid(pos, now_ms, 0, 0);
}

/* The position of offset end of the current file, appended; UINT64_MAX
 * when no file is known (a fence no probe can pass). lock held. */
static uint64_t note_end(uint32_t end, int64_t now_ms)
{
	uint64_t pos;

	if (!files[cur_file].rank)
		return UINT64_MAX;   /* no file known: nothing to append */
	pos = (uint64_t)files[cur_file].rank << 32 | end;
	append_end(pos, now_ms);
	return pos;
}

uint64_t fence_note_trx_end(uint32_t end, int64_t now_ms)
{
	uint64_t pos;

	pthread_mutex_lock(&lock);
	pos = note_end(end, now_ms);
	pthread_mutex_unlock(&lock);
	atomic_fetch_add_explicit(&n_transactions, 1, memory_order_relaxed);
	return pos;
}

/* The index of uuid in sids[] (added when new); SIDS when they are all
 * taken. lock held. */
static uint32_t sid_index(const uint8_t *uuid, const char *tag)
{
	for (unsigned i = 0; i < nsids; i++)
		if (memcmp(sids[i].uuid, uuid, GTID_UUID_LEN) == 0 && strcmp(sids[i].tag, tag) == 0)
			return i;
	if (nsids == SIDS)
		return SIDS;   /* more sources than remembered: its transactions are never proven */
	memcpy(sids[nsids].uuid, uuid, GTID_UUID_LEN);
	snprintf(sids[nsids].tag, sizeof(sids[nsids].tag), "%s", tag);
	return nsids++;
}

uint64_t fence_note_trx_end_gtid(uint32_t end, int64_t now_ms, const uint8_t *uuid, const char *tag,
				 uint64_t gno)
{
	uint64_t pos = UINT64_MAX;

	pthread_mutex_lock(&lock);
	if (files[cur_file].rank) {
		uint32_t sid = uuid && gno ? sid_index(uuid, tag ? tag : "") : SIDS;

		pos = (uint64_t)files[cur_file].rank << 32 | end;
		append_end_gtid(pos, now_ms, sid, sid < SIDS ? gno : 0);
	}
	pthread_mutex_unlock(&lock);
	atomic_fetch_add_explicit(&n_transactions, 1, memory_order_relaxed);
	return pos;
}

uint64_t fence_pos_here(uint32_t end)
{
	uint64_t pos = UINT64_MAX;

	pthread_mutex_lock(&lock);
	if (files[cur_file].rank)
		pos = (uint64_t)files[cur_file].rank << 32 | end;
	pthread_mutex_unlock(&lock);
	return pos;
}

uint64_t fence_note_skipped_end(uint32_t end)
{
	uint64_t pos;

	pthread_mutex_lock(&lock);
	pos = note_end(end, mono_ms());
	pthread_mutex_unlock(&lock);
	return pos;
}

uint64_t fence_note_before_file(void)
{
	uint64_t pos = UINT64_MAX;

	pthread_mutex_lock(&lock);
	if (files[cur_file].rank) {
		pos = ((uint64_t)files[cur_file].rank << 32) - 1;
		append_end(pos, mono_ms());
	}
	pthread_mutex_unlock(&lock);
	return pos;
}

/* The start fence opens if pos proves the start. lock held. */
static void open_start(uint64_t pos)
{
	uint64_t st = atomic_load(&fence_start);

	if (st == 0 || st == FENCE_START_UNKNOWN || st > pos)
		return;   /* open already, the start not found yet, or not proven by pos */
	atomic_store_explicit(&fence_start, 0, memory_order_release);
	log_info("fence: the binlog stream's start is proven visible: cached results are stored "
		 "and served");
}

/* Move fence_visible up to pos (never down); the start fence after it.
 * lock held. */
static bool advance(uint64_t pos)
{
	if (pos <= atomic_load(&fence_visible))
		return false;
	atomic_store_explicit(&fence_visible, pos, memory_order_release);
	open_start(pos);
	return true;
}

/* The name of the file of rank r, or "?". lock held. */
static const char *rank_name(uint32_t r, int *len)
{
	for (unsigned i = 0; i < FILE_SLOTS; i++)
		if (r && files[i].rank == r) {
			*len = (int)files[i].len;
			return files[i].name;
		}
	*len = 1;
	return "?";
}

void fence_format(uint64_t pos, char *out, size_t cap)
{
	uint32_t r = (uint32_t)(pos >> 32), off = (uint32_t)pos;
	const char *name;
	int len;

	if (pos == 0 || pos == UINT64_MAX) {
		snprintf(out, cap, "%s", pos ? "an unknown place" : "nowhere (nothing skipped)");
		return;
	}
	pthread_mutex_lock(&lock);
	name = rank_name(off == UINT32_MAX ? r + 1 : r, &len);
	if (off == UINT32_MAX)
		snprintf(out, cap, "the head of %.*s", len, name);
	else
		snprintf(out, cap, "%.*s:%u", len, name, off);
	pthread_mutex_unlock(&lock);
}

void fence_start_close(void)
{
	pthread_mutex_lock(&lock);
	atomic_store(&fence_start, FENCE_START_UNKNOWN);
	pthread_mutex_unlock(&lock);
}

void fence_start_at(uint64_t pos)
{
	pthread_mutex_lock(&lock);
	atomic_store(&fence_start, pos);
	if (pos)
		open_start(atomic_load(&fence_visible));
	pthread_mutex_unlock(&lock);
}

void fence_note_checkpoint(const char *name, size_t len)
{
	struct file_slot *f;
	uint64_t below;

	pthread_mutex_lock(&lock);
	f = file_find(name, len);
	below = f ? ring_lower_bound((uint64_t)f->rank << 32) : 0;
	/* every transaction received in a file before the one named */
	if (below > 0 && advance(ring_at(below - 1)->pos))
		atomic_fetch_add_explicit(&n_checkpoints, 1, memory_order_relaxed);
	pthread_mutex_unlock(&lock);
}

enum fence_verdict fence_observe_gtids(const struct gtid_set *executed)
{
	uint64_t at, last = 0;
	enum fence_verdict v = FENCE_BEHIND;

	pthread_mutex_lock(&lock);
	for (at = ring_lower_bound(atomic_load(&fence_visible) + 1); at < ring_len(); at++) {
		const struct trx_end *e = ring_at(at);

		if (!e->gno) {
			v = FENCE_UNMATCHED;   /* no GTID to find: it is never proven */
			break;
		}
		if (!gtid_set_contains(executed, sids[e->sid].uuid, sids[e->sid].tag, e->gno))
			break;   /* not committed yet: neither is it proven, nor what follows */
		last = e->pos;
	}
	if (last)
		v = advance(last) ? FENCE_ADVANCED : FENCE_BEHIND;
	pthread_mutex_unlock(&lock);
	if (v == FENCE_UNMATCHED)
		atomic_fetch_add_explicit(&n_unmatched, 1, memory_order_relaxed);
	return v;
}

enum fence_verdict fence_observe(const char *file, size_t flen, uint64_t offset)
{
	struct file_slot *f;
	uint64_t pos, at;
	enum fence_verdict v;

	if (offset >= UINT32_MAX)
		return FENCE_UNMATCHED;   /* no binlog event ends there (fence_note_before_file's place) */
	pthread_mutex_lock(&lock);
	f = file_find(file, flen);
	pos = f ? (uint64_t)f->rank << 32 | offset : 0;
	if (!f)
		v = FENCE_UNKNOWN_FILE;
	else if (pos <= atomic_load(&fence_visible))
		v = FENCE_BEHIND;
	else if (pos > atomic_load(&received))
		v = FENCE_AHEAD;
	else if ((at = ring_lower_bound(pos)) < ring_len() && ring_at(at)->pos == pos)
		v = advance(pos) ? FENCE_ADVANCED : FENCE_BEHIND;
	else
		v = FENCE_UNMATCHED;
	pthread_mutex_unlock(&lock);
	if (v == FENCE_UNMATCHED || v == FENCE_UNKNOWN_FILE)
		atomic_fetch_add_explicit(&n_unmatched, 1, memory_order_relaxed);
	return v;
}

bool fence_pending(void)
{
	return atomic_load(&received) > atomic_load(&fence_visible);
}

void fence_wait_received(int ms)
{
	struct timespec until;
	uint64_t seen;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (long)ms * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&lock);
	seen = atomic_load(&received);
	while (atomic_load(&received) == seen &&
	       pthread_cond_timedwait(&received_cond, &lock, &until) == 0)
		;
	pthread_mutex_unlock(&lock);
}

void fence_get_stats(struct fence_stats *out)
{
	uint64_t vis, at;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&lock);
	vis = atomic_load(&fence_visible);
	out->open = atomic_load(&received) > vis;
	out->start_pending = atomic_load(&fence_start) != 0;
	at = ring_lower_bound(vis + 1);
	if (out->open && at < ring_len())
		out->oldest_age_s = (double)(mono_ms() - ring_at(at)->recv_ms) / 1000.0;
	pthread_mutex_unlock(&lock);
	out->transactions = atomic_load_explicit(&n_transactions, memory_order_relaxed);
	out->fills_refused = atomic_load_explicit(&n_refused, memory_order_relaxed);
	out->probes = atomic_load_explicit(&n_probes, memory_order_relaxed);
	out->probe_errors = atomic_load_explicit(&n_probe_errors, memory_order_relaxed);
	out->probes_unmatched = atomic_load_explicit(&n_unmatched, memory_order_relaxed);
	out->checkpoints = atomic_load_explicit(&n_checkpoints, memory_order_relaxed);
	out->probe_seconds = (double)atomic_load_explicit(&probe_ns, memory_order_relaxed) / 1e9;
	out->supported = atomic_load(&supported);
}

void fence_count_refused(void)
{
	atomic_fetch_add_explicit(&n_refused, 1, memory_order_relaxed);
}

void fence_count_probe(bool ok, double seconds)
{
	atomic_fetch_add_explicit(ok ? &n_probes : &n_probe_errors, 1, memory_order_relaxed);
	if (ok && seconds > 0)
		atomic_fetch_add_explicit(&probe_ns, (uint64_t)(seconds * 1e9), memory_order_relaxed);
}

void fence_set_supported(bool ok)
{
	atomic_store(&supported, ok);
}
