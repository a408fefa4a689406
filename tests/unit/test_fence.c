/*
 * test_fence.c: unit tests for the visibility fence's watermark
 * (src/cache/fence.c, docs/architecture.md "The visibility fence"): a
 * transaction's position grows in binlog order across files; a reading of
 * the server's commit position proves visible only the end of a
 * transaction received (and all before it), never a position between two
 * (a rotation's, a checkpoint event's), nor one past what the follower
 * received, nor one of a file it does not know; a BINLOG_CHECKPOINT event
 * proves the files before the one it names; a file name seen again in a
 * new era gets a new rank. With inval.c: a table fenced by a binlog
 * transaction refuses snapshots (counted) until the transaction is proven
 * visible, and so does every table after a fenced flush.
 *
 * The start (binlog_start.c, fence.c): where the dump's skipping of the
 * start position ends, per GTID (a file's head GTID_LIST, the artificial
 * GTID_LIST at a skipped group's end, a group sent past a hole); the start
 * fence keeps every table from a snapshot and the cache from serving until
 * the start is found and proven (by a reading of a skipped group's end, by
 * a checkpoint event for the head of a file, by a later transaction), and
 * a reading is never taken for fence_note_before_file's place.
 */
#include <string.h>

#include "cache/binlog_start.h"
#include "cache/fence.h"
#include "cache/inval.h"
#include "tap.h"

#define F1 "binlog.000001"
#define F2 "binlog.000002"

static enum fence_verdict observe(const char *file, uint64_t pos)
{
	return fence_observe(file, strlen(file), pos);
}

static void note_file(const char *file)
{
	fence_note_file(file, strlen(file));
}

static void positions(void)
{
	uint64_t e1, e2, e2b, e3, e4, e5;

	fence_reset();
	is_int(fence_note_trx_end(500, 0) == UINT64_MAX, 1,
	       "no file known: a transaction's fence no probe can pass");
	note_file(F1);
	e1 = fence_note_trx_end(500, 0);
	e2 = fence_note_trx_end(900, 0);
	ok(e1 < e2, "positions grow in the file");
	ok(fence_pending() && !fence_passed(e1), "received, not proven: pending, the fence closed");
	is_int(observe(F1, 700), FENCE_UNMATCHED, "a reading between two transaction ends proves nothing");
	ok(!fence_passed(e1), "  ... the fence stays closed");
	is_int(observe(F1, 500), FENCE_ADVANCED, "a reading at a transaction's end proves it visible");
	ok(fence_passed(e1) && !fence_passed(e2), "  ... it, not the one after it");
	is_int(observe(F1, 900), FENCE_ADVANCED, "the last one's end proves it");
	ok(!fence_pending() && fence_passed(e2), "  ... nothing pending");
	is_int(observe(F1, 900), FENCE_BEHIND, "the same reading again: behind");
	is_int(observe(F1, 1200), FENCE_AHEAD, "a reading past what the follower received: ahead");
	is_int(observe("other.000009", 10), FENCE_UNKNOWN_FILE, "a file the follower never heard of");
	e2b = fence_note_trx_end(1200, 0);   /* the last of F1, not proven before the rotation */

	note_file(F2);
	e3 = fence_note_trx_end(400, 0);
	ok(e3 > e2, "a transaction of the next file is after every one of the last");
	is_int(observe(F2, 256), FENCE_UNMATCHED, "a rotation's position (a new file's header) proves nothing");
	fence_note_checkpoint(F1, strlen(F1));
	ok(!fence_passed(e2b), "a checkpoint naming F1 proves nothing of F1");
	fence_note_checkpoint(F2, strlen(F2));
	ok(fence_passed(e2b) && !fence_passed(e3), "a checkpoint naming F2 proves the files before it only");
	note_file(F2);
	e4 = fence_note_trx_end(600, 0);
	ok(e4 > e3, "the same file announced again (a reconnect) keeps its rank");
	note_file(F1);
	e5 = fence_note_trx_end(300, 0);
	ok(e5 > e4, "a name seen before in another era (RESET MASTER) ranks after everything");
	is_int(observe(F1, 300), FENCE_ADVANCED, "  ... and a reading of it proves everything before it");
	ok(fence_passed(e3) && fence_passed(e4) && fence_passed(e5), "  ... all visible");
}

static void fenced_tables(void)
{
	struct inval_table *t = inval_table_get("db", 2, "f", 1), *u = inval_table_get("db", 2, "g", 1);
	struct inval_table *tabs[2] = { t, u };
	struct inval_dep deps[2];
	struct fence_stats st;
	uint64_t e1, e2, refused0;

	fence_reset();
	ok(inval_snapshot(tabs, 2, deps), "no fence: a snapshot is settled");
	note_file(F1);
	e1 = fence_note_trx_end(1000, 0);
	inval_bump_fenced(t, e1, 0);
	fence_get_stats(&st);
	refused0 = st.fills_refused;
	ok(st.open, "a transaction not yet proven: the fence is open");
	ok(!inval_snapshot(tabs, 2, deps), "a table behind a fence not passed refuses a snapshot");
	ok(inval_snapshot(tabs + 1, 1, deps), "  ... another table does not");
	fence_get_stats(&st);
	is_int(st.fills_refused - refused0, 1, "  ... the refusal is counted");
	is_int(observe(F1, 1000), FENCE_ADVANCED, "the probe proves it visible");
	ok(inval_snapshot(tabs, 2, deps), "  ... the snapshot is settled");
	fence_get_stats(&st);
	ok(!st.open && st.oldest_age_s == 0, "  ... the fence is closed, no age");
	e2 = fence_note_trx_end(2000, 0);
	inval_all_fenced(e2);
	ok(!inval_snapshot(tabs + 1, 1, deps), "a fenced flush: every table refuses until it is proven");
	is_int(observe(F1, 2000), FENCE_ADVANCED, "  ... proven");
	ok(inval_snapshot(tabs, 2, deps), "  ... settled");
}

/* The locator: which event covers which GTID of the start position. */
static void locator(void)
{
	const struct gtid want[3] = { { 0, 1, 20 }, { 1, 1, 5 }, { 2, 7, 9 } };
	const struct gtid have[3] = { { 0, 1, 21 }, { 1, 1, 5 }, { 2, 7, 9 } };
	const struct gtid head[2] = { { 2, 7, 9 }, { 0, 1, 3 } };
	const struct gtid other_server = { 1, 2, 99 }, skipped0 = { 0, 1, 20 }, sent1 = { 1, 1, 6 };
	struct binlog_start s;

	start_begin(&s, want, 3, have, 2);
	is_int((int)s.left, 2, "a domain the server's binlog does not hold is covered at once");
	start_begin(&s, want, 3, have, 3);
	is_int((int)s.left, 3, "every domain held: three to cover");
	is_int((int)start_cover_list(&s, head, 2), 1, "a file's head state covers the GTID it holds (2-7-9)");
	start_cover_at(&s, 100);
	is_int((int)start_cover_list(&s, head, 2), 0, "  ... once");
	is_int((int)start_cover_group(&s, &other_server), 0, "another server's group in the domain does not cover");
	is_int((int)start_cover_list(&s, &skipped0, 1), 1, "a skipped group's list covers its GTID");
	start_cover_at(&s, 300);
	ok(!start_located(&s), "  ... one left: not found");
	is_int((int)start_cover_group(&s, &sent1), 1, "a group sent past the GTID (a hole) covers it");
	start_cover_at(&s, 200);
	ok(start_located(&s) && s.pos == 300, "every GTID covered: the start is the furthest cover");
	start_begin(&s, NULL, 0, have, 3);
	ok(start_located(&s) && s.pos == 0, "an empty start position: found, nothing to prove");
}

/* The start fence: closed until the start is found and proven. */
static void start_fence(void)
{
	struct inval_table *t = inval_table_get("db", 2, "s", 1);
	struct inval_dep dep;
	struct fence_stats st;
	uint64_t skipped, head, e;
	char where[64];

	fence_reset();
	ok(fence_start_open(), "after a reset the start fence is open");
	inval_set_serving(true, WHY_BINLOG_DOWN);
	fence_start_close();
	fence_get_stats(&st);
	ok(!fence_start_open() && st.start_pending, "closed: the start pending");
	ok(!inval_serving() && inval_not_serving_reason() == reason_of(WHY_BINLOG_START),
	   "  ... the cache does not serve, and says why");
	ok(!inval_snapshot(&t, 1, &dep), "  ... nor does a table take a snapshot");
	note_file(F1);
	skipped = fence_note_skipped_end(2791);
	ok(fence_pending(), "a skipped group's end is pending, like a transaction received");
	is_int(observe(F1, 2791), FENCE_ADVANCED, "  ... a reading at it proves it");
	ok(!fence_start_open(), "  ... the start fence stays closed until the start is found");
	fence_start_at(skipped);
	ok(fence_start_open() && inval_serving(), "found where it is proven already: open at once, serving");
	ok(inval_snapshot(&t, 1, &dep), "  ... snapshots are settled");

	fence_start_close();
	e = fence_note_trx_end(3000, 0);
	fence_start_at(fence_note_skipped_end(3500));
	is_int(observe(F1, 3000), FENCE_ADVANCED, "a reading before the start proves what is before");
	ok(!fence_start_open(), "  ... not the start");
	is_int(observe(F1, 3500), FENCE_ADVANCED, "a reading at the start's end proves it");
	ok(fence_start_open() && fence_passed(e), "  ... the start fence opens");

	fence_start_close();
	note_file(F2);
	head = fence_note_before_file();
	ok(head > e && head < fence_note_trx_end(400, 0), "the head of F2: after F1, before F2's transactions");
	fence_format(head, where, sizeof(where));
	is_str(where, "the head of " F2, "  ... shown as such");
	is_int(observe(F1, UINT32_MAX), FENCE_UNMATCHED, "no reading is taken for the head's place");
	fence_start_at(head);
	fence_note_checkpoint(F1, strlen(F1));
	ok(!fence_start_open(), "a checkpoint naming F1 does not prove the head of F2");
	fence_note_checkpoint(F2, strlen(F2));
	ok(fence_start_open(), "one naming F2 does");

	fence_start_close();
	fence_start_at(fence_note_skipped_end(900));
	fence_note_trx_end(1200, 0);
	is_int(observe(F2, 1200), FENCE_ADVANCED, "a later transaction's end proves the start before it");
	ok(fence_start_open(), "  ... open");
	fence_start_close();
	fence_start_at(0);
	ok(fence_start_open(), "a start with nothing skipped: open at once");
	fence_format(fence_note_trx_end(1300, 0), where, sizeof(where));
	is_str(where, F2 ":1300", "a position is shown as file:offset");
}

int main(void)
{
	if (inval_init() < 0)
		return 1;
	positions();
	fenced_tables();
	locator();
	start_fence();
	return done_testing();
}
