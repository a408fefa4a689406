/*
 * test_store.c: unit tests for the freshness rules of store_lookup()
 * (src/cache/store.c): a filled entry is a hit before its TTL, asks for a
 * refresh past the refresh age, and is gone after the TTL; with a stale
 * window (the upstream is down, serve-stale) an expired entry is still a
 * hit, never asks for a refresh, and is gone once past TTL + window.
 */
#include "cache/registry.h"
#include "cache/store.h"
#include "tap.h"

static const uint8_t key[] = "Qkey";
static const uint8_t resp[] = "\x01\x00\x00\x01\x01";
static struct cache_def def;

static enum store_lookup look(int64_t now, int64_t stale)
{
	struct cache_entry *e = NULL;
	enum store_lookup r = store_lookup(key, sizeof(key), store_hash(key, sizeof(key)), now, stale,
					   NULL, NULL, &e);

	if (r == SL_REFRESH)
		store_abandon(e); /* the refresh's reference (and the flag) */
	if (e)
		store_release(e);
	return r;
}

/* A READY entry filled at t=1000 with TTL 100 ms, refresh age 50 ms. */
static void fill(void)
{
	struct cache_entry *e = NULL;
	uint16_t off[ENTRY_MAX_STATUS] = { 0 };
	enum store_lookup r = store_lookup(key, sizeof(key), store_hash(key, sizeof(key)), 1000, 0,
					   &def, NULL, &e);

	ok(r == SL_LOAD && e, "a missing key with a def: a placeholder to fill");
	if (e)
		store_fill(e, resp, sizeof(resp) - 1, off, 10, 1, 1000, 100, 50);
}

int main(void)
{
	if (store_init(1 << 20, NULL) < 0)
		return 1;
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
	store_destroy();
	return done_testing();
}
