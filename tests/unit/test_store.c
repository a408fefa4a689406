/*
 * test_store.c: unit tests for the freshness rules of store_lookup()
 * (src/cache/store.c): a filled entry is a hit before its TTL, asks for a
 * refresh past the refresh age, and is gone after the TTL; with a stale
 * window (the upstream is down, serve-stale) an expired entry is still a
 * hit, never asks for a refresh, and is gone once past TTL + window.
 * Invalidation (cache/inval.c): an entry is served only while the tables it
 * read keep the generations recorded when its fill began; a fill whose
 * table was invalidated while it ran is not stored; a flush (epoch) retires
 * every entry; a table in its settle window makes a snapshot refuse; the
 * refresh age at or past the TTL means no refresh. An entry put back from
 * a cache snapshot (store_restore) is served like a filled one, is retired
 * by a write to its tables after it was put there, and never takes a key
 * a fill has taken.
 */
#include "cache/registry.h"
#include "cache/store.h"
#include "cache/tcols.h"
#include "tap.h"

static const uint8_t key[] = "Qkey";
static const uint8_t resp[] = "\x01\x00\x00\x01\x01";
static struct cache_def def;

static enum store_lookup look(int64_t now, int64_t stale)
{
	struct cache_entry *e = NULL;
	enum store_lookup r = store_lookup(key, sizeof(key), store_hash(key, sizeof(key)), now, stale, 0,
					   NULL, NULL, &e);

	if (r == SL_REFRESH)
		store_abandon(e); /* the refresh's reference (and the flag) */
	if (e)
		store_release(e);
	return r;
}

static struct inval_table *t1, *t2;

/* A placeholder for key, its deps snapshot now (tables t1, t2). */
static struct cache_entry *start_fill(struct fill_deps *d)
{
	struct cache_entry *e = NULL;
	struct inval_table *tabs[2] = { t1, t2 };
	enum store_lookup r = store_lookup(key, sizeof(key), store_hash(key, sizeof(key)), 1000, 0, 0,
					   &def, NULL, &e);

	ok(r == SL_LOAD && e, "a missing key with a def: a placeholder to fill");
	d->epoch = inval_epoch();
	d->n = 2;
	d->cons.len = 0;
	inval_snapshot(tabs, 2, d->d);
	return e;
}

/* A READY entry filled at t=1000 with TTL ttl ms, refresh age refresh ms. */
static int fill_ttl(int ttl, int refresh)
{
	struct fill_deps d;
	uint16_t off[ENTRY_MAX_STATUS] = { 0 };
	struct cache_entry *e = start_fill(&d);

	return e ? store_fill(e, resp, sizeof(resp) - 1, off, 10, 1, 1000, ttl, refresh, &d) : -2;
}

static void fill(void)
{
	fill_ttl(100, 50);
}

static void invalidation(void)
{
	struct fill_deps d;
	struct inval_table *again, *tabs[1];
	uint16_t off[ENTRY_MAX_STATUS] = { 0 };
	struct cache_entry *e;

	fill();
	is_int(look(1010, 0), SL_HIT, "invalidation: a filled entry is a hit");
	inval_bump(t2, INVAL_SRC_BINLOG, 0);
	is_int(look(1011, 0), SL_MISS, "a table it read invalidated: a miss");
	is_int(inval_dropped(), 1, "  ... the entry is dropped and counted");
	e = start_fill(&d);
	inval_bump(t1, INVAL_SRC_WRITE, 0);
	is_int(store_fill(e, resp, sizeof(resp) - 1, off, 10, 1, 1000, 100, 50, &d), -1,
	       "a fill whose table was written while it ran is not stored");
	is_int(look(1012, 0), SL_MISS, "  ... a miss afterwards");
	is_int(store_fills_discarded(), 1, "  ... counted as discarded");
	fill();
	is_int(look(1013, 0), SL_HIT, "a fill after the write is stored");
	inval_all(INVAL_SRC_FLUSH);
	is_int(look(1014, 0), SL_MISS, "a flush (new epoch) retires every entry");
	is_int(inval_count(INVAL_SRC_FLUSH), 1, "  ... counted under flush");
	again = inval_table_get("DB", 2, "T1", 2);
	ok(again == t1, "tables are interned case-insensitively (one object for db.t1 and DB.T1)");
	/* (a table of its own: t1's refreshes later must not be refused) */
	tabs[0] = inval_table_get("db", 2, "settled", 7);
	inval_bump(tabs[0], INVAL_SRC_BINLOG, 10000);
	ok(!inval_snapshot(tabs, 1, d.d), "within its settle window a table refuses a snapshot");
	is_int(fill_ttl(100, 100), 0, "a fill with refresh age = TTL is stored");
	is_int(look(1099, 0), SL_HIT, "  ... and never asks for a refresh before it expires");
	is_int(look(1100, 0), SL_MISS, "  ... then it is a miss");
}

/* serve-stale's keep window: an expired entry survives a miss while the
 * upstream is up; the loader takes it and a failed load leaves it. */
static void kept(void)
{
	struct cache_entry *e = NULL, *w = NULL;
	struct store_waiter waiter = { 0 };
	uint64_t h = store_hash(key, sizeof(key));
	uint16_t off[ENTRY_MAX_STATUS] = { 0 };
	struct fill_deps d = { 0 };

	fill_ttl(100, 100);
	is_int(store_lookup(key, sizeof(key), h, 1150, 0, 300, NULL, NULL, &e), SL_MISS,
	       "kept: past the TTL, a hit-only look with a keep window is a miss");
	is_int((int)store_entries(), 1, "  ... and the entry stays");
	is_int(store_lookup(key, sizeof(key), h, 1150, 0, 300, &def, NULL, &e), SL_LOAD,
	       "  a loader with a def takes the kept entry to load it again");
	ok(e && e->state == ENTRY_READY, "  ... the READY entry itself, not a placeholder");
	is_int(store_lookup(key, sizeof(key), h, 1150, 0, 300, &def, &waiter, &w), SL_WAIT,
	       "  a second miss meanwhile waits for that load");
	store_cancel_wait(key, sizeof(key), h, &waiter);
	store_abandon(e); /* the upstream was gone */
	is_int(look(1160, 300), SL_HIT, "  the load failed and the upstream is down: served stale");
	is_int(store_lookup(key, sizeof(key), h, 1170, 0, 300, &def, NULL, &e), SL_LOAD, "  loaded again");
	store_entry_deps(e, &d);
	is_int(store_fill(e, resp, sizeof(resp) - 1, off, 10, 1, 1170, 100, 100, &d), 0,
	       "  ... a load that succeeds replaces it (the same bytes)");
	is_int(look(1200, 0), SL_HIT, "  ... fresh again until its new TTL");
	is_int((int)store_entries(), 1, "  one entry for the key");
	is_int(store_lookup(key, sizeof(key), h, 1600, 0, 300, &def, NULL, &e), SL_LOAD,
	       "past TTL + keep window: a plain miss, a new placeholder");
	ok(e && e->state == ENTRY_LOADING, "  ... a placeholder");
	store_abandon(e);
	is_int((int)store_entries(), 0, "  nothing left");
}

/* store_restore: an entry of a cache snapshot, its deps as they are now. */
static int restore(int64_t now, int ttl, uint64_t hits)
{
	struct inval_table *tabs[2] = { t1, t2 };
	struct fill_deps d = { .epoch = inval_epoch(), .n = 2 };
	struct store_restore r = { .key = key, .key_len = sizeof(key), .resp = resp,
				   .resp_len = sizeof(resp) - 1, .upstream_us = 50, .rows = 1,
				   .hits = hits, .ttl_ms = ttl, .refresh_ms = ttl, .def = &def };

	inval_snapshot(tabs, 2, d.d);
	return store_restore(&r, now, &d);
}

static int count_restored(const struct cache_entry *e, void *arg)
{
	*(int *)arg += e->restored && atomic_load(&e->hits) == 7;
	return 0;
}

static void restored(void)
{
	int n = 0;

	is_int(restore(1000, 100, 7), 1, "store_restore: an entry put back");
	is_int(store_entries(), 1, "  ... counted in the store");
	store_each(1010, count_restored, &n);
	is_int(n, 1, "  ... marked restored, with its hits");
	is_int(restore(1000, 100, 7), 0, "  ... a key already there is not taken again");
	is_int(look(1010, 0), SL_HIT, "  ... served before its TTL");
	is_int(look(1090, 0), SL_HIT, "  ... its refresh age as given (the TTL: no refresh)");
	inval_bump(t2, INVAL_SRC_BINLOG, 0);
	is_int(look(1020, 0), SL_MISS, "  ... retired by a write to a table it read, after it was put there");
	is_int(restore(1000, 100, 7), 1, "put back again, after the write");
	is_int(look(1020, 0), SL_HIT, "  ... served: its deps are the tables' generations now");
	is_int(look(1101, 0), SL_MISS, "  ... gone past the TTL it was given");
	is_int(store_entries(), 0, "no entries left");
}

int main(void)
{
	if (store_init(1 << 20, NULL) < 0 || inval_init() < 0)
		return 1;
	t1 = inval_table_get("db", 2, "t1", 2);
	t2 = inval_table_get("db", 2, "t2", 2);
	ok(t1 && t2 && t1 != t2, "two tables interned");
	atomic_store(&def.state, CACHE_CACHED);
	fill();
	is_int(look(1010, 0), SL_HIT, "before the refresh age: a hit");
	is_int(look(1060, 0), SL_REFRESH, "past the refresh age: a hit that asks for a refresh");
	is_int(look(1070, 300), SL_HIT, "  ... but not while the upstream is down (stale window)");
	is_int(look(1150, 300), SL_HIT, "past the TTL, stale window 300 ms: still a hit");
	is_int(look(1399, 300), SL_HIT, "  ... up to TTL + window");
	is_int(look(1150, 0), SL_MISS, "past the TTL without a window: a miss (the entry is dropped)");
	is_int(look(1010, 300), SL_MISS, "  ... and gone for good");
	fill();
	is_int(look(1401, 300), SL_MISS, "past TTL + window: a miss");
	fill();
	atomic_store(&def.state, CACHE_PROXIED);
	is_int(look(1150, 300), SL_MISS, "a dropped cache's entry is not served stale");
	atomic_store(&def.state, CACHE_CACHED);
	is_int(store_entries(), 0, "no entries left");
	invalidation();
	kept();
	restored();
	store_destroy();
	inval_destroy(tcols_drop);
	return done_testing();
}
