#!/usr/bin/env bash
# 85-cache-eviction: a node with --memory-limit 4M and --auto-cache gets
# 100,000 distinct cacheable queries (SELECT id, REPEAT('x', 200) FROM t85
# WHERE id = n, ~700 bytes stored each: ~70 MB if nothing were evicted),
# pipelined over 4 connections. The TTL is 10 minutes, so only eviction can
# keep the store small. Checks: every answer is right; SHOW SHOAL STATUS
# "Cache Memory Bytes" stays <= 4 MiB + 64 KiB (sampled during the run and
# at the end; the 64 KiB allows for entries linked by concurrent fills before
# their eviction pass, each under 1 KiB here) ; entries were evicted (far
# fewer than 100,000 remain, and the first query is a miss again); the node
# still answers a fresh query quickly and caches it; the node's RSS grows by
# less than 48 MiB.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "eviction: needs a node (SHOAL_FAKE_DIRECT=1)"; fi
plan 16

if ! mdb -e "DROP TABLE IF EXISTS t85; CREATE TABLE t85 (id INT PRIMARY KEY) ENGINE=InnoDB;
  INSERT INTO t85 SELECT seq FROM seq_1_to_100000"; then
  bail "create t85"
fi
on_exit "mdb -e 'DROP TABLE IF EXISTS t85'"

DD=$(mktemp -d)
on_exit "rm -rf '$DD'"
if shoal_start node --auto-cache --memory-limit 4M --cache-ttl-ms 600000 --data-dir "$DD"; then
  ok "node starts with --memory-limit 4M --auto-cache (port $node_PORT, pid $node_PID)"
else
  bail "node starts with --memory-limit 4M --auto-cache (port $node_PORT, pid $node_PID)"
fi

N=100000
[ "$SHOAL_QUICK" = 1 ] && N=40000
NODE_PORT=$node_PORT NODE_PID=$node_PID N=$N "$PY" - <<'PY' || not_ok "python part crashed"
import os
import threading
import time
import rawmysql as r
import cache_proto as cp
import cache_load
from taplib import ok, diag, run, done_testing

VPORT, PID, N = int(os.environ["NODE_PORT"]), int(os.environ["NODE_PID"]), int(os.environ["N"])
LIMIT = 4 * 1024 * 1024
TOLERANCE = 64 * 1024
TEMPLATE = "SELECT id, REPEAT('x', 200) FROM t85 WHERE id = %d"
HOT = "SELECT id, 'hot' FROM t85 WHERE id = 42"


def main():
    v = r.connect(VPORT)
    ok(cp.status(v)["Memory Limit Bytes"] == LIMIT, "SHOW SHOAL STATUS reports the 4 MiB limit")
    # One hot entry: hit 100 times before the flood.
    hot_rows = cp.srows(v, HOT)
    for _ in range(100):
        cp.srows(v, HOT)
    ok(cp.status(v)["Cache Hits"] == 100 and hot_rows == [("42", "hot")], "the hot query is cached and hit 100 times")
    rss0 = cp.rss_kib(PID)
    samples = []
    stop = threading.Event()
    result = {}

    def load():
        result.update(cache_load.run(VPORT, TEMPLATE, 1, N, procs=4, batch=100))
        stop.set()

    th = threading.Thread(target=load)
    th.start()
    mon = r.connect(VPORT)
    peak_rss = rss0
    while not stop.wait(0.25):
        s = cp.status(mon)
        samples.append(s["Cache Memory Bytes"])
        peak_rss = max(peak_rss, cp.rss_kib(PID) or 0)
    th.join()
    diag("%d queries in %.1f s (%.0f/s)" % (result["queries"], result["seconds"],
                                           result["queries"] / max(result["seconds"], 0.001)))
    ok(result["queries"] == N and not result["errors"], "all %d queries answered without error" % N,
       *result["errors"])
    ok(not result["wrong"], "sampled answers carry the right row", *result["wrong"])

    st = cp.status(v)
    diag("status after the run: %r" % (st,))
    diag("Cache Memory Bytes samples during the run: max %d over %d samples" % (max(samples or [0]), len(samples)))
    ok(st["Cache Misses"] >= N + 1, "every distinct query was a miss that filled the cache (%d misses)" % st["Cache Misses"])
    ok(st["Cache Memory Bytes"] <= LIMIT + TOLERANCE,
       "Cache Memory Bytes after the run %d <= 4 MiB + 64 KiB" % st["Cache Memory Bytes"])
    ok(samples and max(samples) <= LIMIT + TOLERANCE,
       "Cache Memory Bytes never above 4 MiB + 64 KiB during the run (max %d)" % max(samples or [0]))
    ok(st["Cache Memory Bytes"] >= LIMIT // 2,
       "the store is still in use, not emptied (%d bytes)" % st["Cache Memory Bytes"])
    # Each entry holds at least its 200-byte row, so no more than LIMIT/200
    # fit (fewer than N, also in --quick mode): the others were evicted.
    ok(0 < st["Cache Entries"] <= min(LIMIT // 200, N - 1),
       "entries were evicted: %d of %d remain (at most %d fit)" % (st["Cache Entries"], N, LIMIT // 200))
    # every flood query stored an entry: those not left were evicted
    ok(0 < st["Cache Evictions"] and st["Cache Evictions"] + st["Cache Entries"] >= N,
       "SHOW SHOAL STATUS counts them: Cache Evictions %d + %d entries >= %d" %
       (st["Cache Evictions"], st["Cache Entries"], N))

    # The first query was evicted long ago (its TTL is 10 minutes): a miss.
    h0, m0 = cp.status(v)["Cache Hits"], cp.status(v)["Cache Misses"]
    rows = cp.srows(v, TEMPLATE % 1)
    h1, m1 = cp.status(v)["Cache Hits"], cp.status(v)["Cache Misses"]
    ok(rows and rows[0][0] == "1" and (h1 - h0, m1 - m0) == (0, 1), "query n=1 was evicted: a miss again",
       "hits +%d misses +%d" % (h1 - h0, m1 - m0))
    # For information (GDSF ages entries out whatever their past hits, and
    # keeps the ones whose measured upstream time was longest): what is left.
    h0 = cp.status(v)["Cache Hits"]
    cp.srows(v, HOT)
    diag("the entry hit 100 times before the flood is %s" %
         ("still cached" if cp.status(v)["Cache Hits"] == h0 + 1 else "evicted"))
    h0 = cp.status(v)["Cache Hits"]
    for n in range(N - 199, N + 1):
        v.query(TEMPLATE % n)
    diag("of the last 200 flood queries, %d are still cached" % (cp.status(v)["Cache Hits"] - h0))

    # A fresh query is answered quickly and still gets cached. (With a full
    # store, GDSF may evict a cheap new entry at once, so a few repeats are
    # allowed before the hit.)
    q = "SELECT id, 'fresh' FROM t85 WHERE id BETWEEN 10 AND 12 ORDER BY id"
    want = [("10", "fresh"), ("11", "fresh"), ("12", "fresh")]
    t, rows = cp.timed(cp.srows, v, q)
    ok(rows == want and t < 1.0, "a fresh query is answered right in %.4f s" % t, repr(rows))
    tries = []
    for _ in range(5):
        h0 = cp.status(v)["Cache Hits"]
        t2, rows2 = cp.timed(cp.srows, v, q)
        tries.append((rows2 == want, cp.status(v)["Cache Hits"] == h0 + 1, round(t2, 4)))
        if tries[-1][1]:
            break
    ok(tries[-1][0] and tries[-1][1], "a repeat of it is a cache hit (after %d tries)" % len(tries), repr(tries))

    rss1 = cp.rss_kib(PID)
    diag("node RSS: %d KiB at start, %d KiB peak, %d KiB at the end" % (rss0, peak_rss, rss1))
    if os.environ.get("ASAN_OPTIONS"):
        ok(True, "node RSS grew by %d KiB # SKIP ASan keeps freed memory in quarantine" % (peak_rss - rss0))
    else:
        ok(peak_rss - rss0 < 48 * 1024, "node RSS grew by %d KiB (< 48 MiB)" % (peak_rss - rss0))
    mon.close()
    v.close()


run("eviction part runs", main)
done_testing(always_zero=True)
PY
check "node still running" shoal_alive node
done_testing
