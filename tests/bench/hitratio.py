#!/usr/bin/python3
"""tests/bench/hitratio.py NODE_PORT DIRECT_PORT WRITES_PER_S SECONDS

The hit ratio under writes (scripts/bench hitratio, issue 40). Table
hitratio.t: 10,000 rows, `id` the primary key, `k` indexed with 100 values
(made by the caller). One reader through the node (PyMySQL, text protocol)
reads for SECONDS each: 1,000 ids by primary key, then the 100 `k`
aggregates, random keys, all warmed first; meanwhile a writer connected
straight to the upstream updates random rows, paced to WRITES_PER_S.
"From the cache": the node's hits over the reads made (SHOW SHOAL STATUS
during each phase). A read that is no hit went to the upstream: a miss
(its answer stored), or a read whose answer could not be stored because a
table it reads had a visibility fence open (counted by neither).

After the writes stop, one more write is waited for through the node: a
row of table hitratio.mark, which nothing else writes, whose answer is
cached (a hit seen first). Only that write's event can invalidate it, and
the binlog is applied in order: once the node shows it, every write before
it has reached the node too (the node runs with a 1 h TTL).
Then each of the 1,100 answers is read through the node and directly;
those that differ are counted. No timing decides that check.

Prints lines of key=value pairs:
  phase=pk reads=N hits=N misses=N cached_pct=P writes=N writes_per_s=R
    (cached_pct: hits over reads)
  phase=k ...
  differing=N of=1100
"""
import random
import sys
import threading
import time

import pymysql

NODE, DIRECT, WPS, SECS = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
ROWS = 10000
MARK = "SELECT v FROM mark WHERE id = 1"
PHASES = (("pk", "SELECT v FROM t WHERE id = %d", 1000),
          ("k", "SELECT COUNT(*), SUM(v) FROM t WHERE k = %d", 100))


def connect(port):
    return pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw",
                           database="hitratio", autocommit=True)


def one(cur, sql):
    cur.execute(sql)
    return cur.fetchall()


def status(cur):
    """The node's cache hits and misses."""
    d = dict(one(cur, "SHOW SHOAL STATUS"))
    return int(d["Cache Hits"]), int(d["Cache Misses"])


class Writer(threading.Thread):
    """UPDATEs of random rows on the upstream, paced to WPS a second."""

    def __init__(self):
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.writes = 0
        self.seconds = 0.0

    def run(self):
        cur = connect(DIRECT).cursor()
        t0 = time.monotonic()
        while not self.stop.is_set():
            cur.execute("UPDATE t SET v = v + 1 WHERE id = %d" % random.randint(1, ROWS))
            self.writes += 1
            ahead = t0 + self.writes / WPS - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
        self.seconds = time.monotonic() - t0


def phase(node, name, sql, nkeys):
    for i in range(1, nkeys + 1):   # warm: every key read once (twice: the first may be refused)
        one(node, sql % i)
        one(node, sql % i)
    writer = Writer()
    writer.start()
    h0, m0 = status(node)
    t0, reads = time.monotonic(), 0
    while time.monotonic() - t0 < SECS:
        one(node, sql % random.randint(1, nkeys))
        reads += 1
    h1, m1 = status(node)
    writer.stop.set()
    writer.join()
    hits, misses = h1 - h0, m1 - m0
    print("phase=%s reads=%d hits=%d misses=%d cached_pct=%.2f writes=%d writes_per_s=%.0f" %
          (name, reads, hits, misses, 100.0 * hits / max(1, reads), writer.writes,
           writer.writes / max(writer.seconds, 1e-9)), flush=True)


def wait_for_marker(node, direct):
    """Cache the marker's answer (until a read of it is a hit), write it
    directly, and wait until the node's read of it shows the write."""
    while True:
        h0, _ = status(node)
        one(node, MARK)
        if status(node)[0] > h0:
            break
        time.sleep(0.01)
    want = one(direct, MARK.replace("SELECT v", "SELECT v + 1", 1))
    one(direct, "UPDATE mark SET v = v + 1 WHERE id = 1")
    while one(node, MARK) != want:
        time.sleep(0.01)


def main():
    node, direct = connect(NODE).cursor(), connect(DIRECT).cursor()
    for name, sql, nkeys in PHASES:
        phase(node, name, sql, nkeys)
    wait_for_marker(node, direct)
    differing = of = 0
    for _, sql, nkeys in PHASES:
        for i in range(1, nkeys + 1):
            of += 1
            differing += one(node, sql % i) != one(direct, (sql % i).replace("SELECT", "SELECT /* direct */", 1))
    print("differing=%d of=%d" % (differing, of), flush=True)


if __name__ == "__main__":
    main()
