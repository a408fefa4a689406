"""89-consistency: the python part of tests/integration/89-consistency.t.

Nodes (environment): NP and NP2 in binlog mode on the primary PRI_PORT, NR in
binlog mode on the replica REP_PORT, NW in writes mode on the primary.
"""
import os
import threading
import time
import urllib.request

import cache_proto as cp
import rawmysql as r
from taplib import diag, done_testing, is_, ok, run

PRI = int(os.environ["PRI_PORT"])
NP = int(os.environ["NP"])
NP2 = int(os.environ["NP2"])
NR = int(os.environ["NR"])
NW = int(os.environ["NW"])
ADMIN_P = int(os.environ["ADMIN_P"])
METRICS_NP = int(os.environ["METRICS_NP"])


def conn(port):
    return r.connect(port, timeout=30)


def val(c, sql):
    return cp.scalar(c, sql)


def do(c, *sqls):
    for s in sqls:
        cp.must_ok(c, s)


hits = cp.cache_hits
warm = cp.warm


poll = cp.poll


def status(c, name):
    return cp.status(c).get(name)


D = conn(PRI)          # straight to the primary
A = conn(NP)           # a session on the node
B = conn(NP)           # another session on the same node


def own_and_others():
    do(D, "CREATE TABLE c1 (id INT PRIMARY KEY, v INT)", "INSERT INTO c1 VALUES (1, 10), (2, 20)")
    sel = "SELECT v FROM c1 WHERE id = 1"
    is_(warm(A, sel), "10", "a read is cached (a hit)")
    do(A, "UPDATE c1 SET v = 11 WHERE id = 1")
    is_(val(A, sel), "11", "own write: the session's next read sees it")
    warm(A, sel)
    do(B, "UPDATE c1 SET v = 12 WHERE id = 1")
    is_(val(A, sel), "12", "another session's write through the node: seen at once")
    warm(A, sel)
    do(D, "UPDATE c1 SET v = 13 WHERE id = 1")
    t = poll(A, sel, "13")
    ok(t is not None, "a direct write on the upstream is seen through the binlog (%s s)" %
       ("%.3f" % t if t is not None else "never"))
    warm(A, sel)
    do(conn(NP2), "UPDATE c1 SET v = 14 WHERE id = 1")
    t = poll(A, sel, "14")
    ok(t is not None, "a write through another node is seen (%s s)" % ("%.3f" % t if t is not None else "never"))
    rc = conn(NR)
    is_(warm(rc, sel), "14", "the node on the replica caches the replicated table")
    do(D, "UPDATE c1 SET v = 15 WHERE id = 1")
    t = poll(rc, sel, "15")
    ok(t is not None, "a write on the primary reaches the node on the replica through the replica's "
       "binlog (%s s)" % ("%.3f" % t if t is not None else "never"))


def ddl():
    do(D, "CREATE TABLE c2 (id INT PRIMARY KEY)", "INSERT INTO c2 VALUES (1)")
    sel = "SELECT COUNT(*) FROM c2"
    is_(warm(A, sel), "1", "DDL: the count is cached")
    do(D, "DROP TABLE c2", "CREATE TABLE c2 (id INT PRIMARY KEY)", "INSERT INTO c2 VALUES (1), (2), (3)")
    ok(poll(A, sel, "3") is not None, "DROP TABLE + CREATE TABLE on the upstream: the new table's rows")
    warm(A, sel)
    do(A, "TRUNCATE TABLE c2")
    is_(val(A, sel), "0", "TRUNCATE through the node: seen at once")
    warm(A, sel)
    do(A, "ALTER TABLE c2 ADD COLUMN x INT DEFAULT 7", "INSERT INTO c2 (id) VALUES (9)")
    is_(val(A, "SELECT COUNT(*) FROM c2"), "1", "ALTER TABLE and INSERT through the node: seen at once")


def temporary():
    do(D, "CREATE TABLE tt (id INT)", "INSERT INTO tt VALUES (1)")
    sel = "SELECT COUNT(*) FROM tt"
    is_(warm(B, sel), "1", "temporary: the base table's count is cached")
    t = conn(NP)
    do(t, "CREATE TEMPORARY TABLE tt (id INT)", "INSERT INTO tt VALUES (1), (2), (3)")
    is_(val(t, sel), "3", "a session with a temporary table tt gets its own rows, not the cached base rows")
    is_(cp.explain(t), ("upstream", "reads a temporary table"), "  ... from the upstream, saying why")
    other = "SELECT COUNT(*) FROM tt WHERE id >= 0"
    is_(val(t, other), "3", "the temporary table's rows for a shape not cached yet")
    is_(val(B, other), "1", "  ... never stored: another session then gets the base table's rows")
    is_(val(B, sel), "1", "another session still gets the base table's rows")
    do(t, "DROP TEMPORARY TABLE tt")
    is_(val(t, sel), "1", "after DROP TEMPORARY TABLE the session reads the base table again")
    is_(cp.explain(t)[0], "readyset_shallow", "  ... from the cache")


def views():
    do(D, "CREATE VIEW vn AS SELECT NOW(6) AS n")
    for _ in range(100):   # until the catalog has read the new view
        v1 = val(A, "SELECT n FROM vn")
        dest, reason = cp.explain(A)
        if "catalog" not in reason and "no known table" not in reason:
            break
        time.sleep(0.05)
    ok(dest == "upstream" and "view shoaltest.vn" in reason and "non-deterministic" in reason,
       "a view over NOW(6) is not cached, the reason names the view", repr((dest, reason)))
    time.sleep(0.01)
    ok(val(A, "SELECT n FROM vn") != v1, "  ... each read gets a new NOW(6)")
    rows = cp.srows(A, "SHOW PROXIED QUERIES")
    ok(any("view shoaltest.vn" in (x[2] or "") for x in rows), "SHOW PROXIED QUERIES gives the view's reason")
    do(D, "CREATE VIEW vc AS SELECT id, v * 2 AS w FROM c1")
    sel = "SELECT w FROM vc WHERE id = 2"
    is_(warm(A, sel), "40", "a view over a table is cached")
    do(D, "UPDATE c1 SET v = 21 WHERE id = 2")
    ok(poll(A, sel, "42") is not None, "a direct write to the table under the view is seen")
    warm(A, sel)
    do(B, "UPDATE c1 SET v = 22 WHERE id = 2")
    is_(val(A, sel), "44", "a write to the table under the view through the node: seen at once")
    do(D, "CREATE OR REPLACE VIEW vc AS SELECT id, v * 3 AS w FROM c1")
    ok(poll(A, sel, "66") is not None, "CREATE OR REPLACE VIEW on the upstream: the new definition")


def trigger_fk_procedure():
    do(D, "CREATE TABLE tsrc (id INT)", "CREATE TABLE tlog (n INT)",
       "CREATE TRIGGER tsrc_ai AFTER INSERT ON tsrc FOR EACH ROW INSERT INTO tlog VALUES (NEW.id)")
    time.sleep(0.3)
    sel = "SELECT COUNT(*) FROM tlog"
    is_(warm(A, sel), "0", "trigger: the count of the table it writes is cached")
    do(B, "INSERT INTO tsrc VALUES (1)")
    is_(val(A, sel), "1", "an insert through the node fires the trigger: its table is invalidated at once")
    warm(A, sel)
    do(D, "INSERT INTO tsrc VALUES (2)")
    ok(poll(A, sel, "2") is not None, "a direct insert firing the trigger is seen")

    do(D, "CREATE TABLE parent (id INT PRIMARY KEY) ENGINE=InnoDB",
       "CREATE TABLE child (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES parent (id) "
       "ON DELETE CASCADE) ENGINE=InnoDB",
       "INSERT INTO parent VALUES (1), (2), (3)", "INSERT INTO child VALUES (1, 1), (2, 2), (3, 3), (4, 3)")
    time.sleep(0.3)
    sel = "SELECT COUNT(*) FROM child"
    is_(warm(A, sel), "4", "FK: the child table's count is cached")
    do(D, "DELETE FROM parent WHERE id = 3")
    ok(poll(A, sel, "2") is not None, "a direct DELETE on the parent cascades: the child table is invalidated "
       "(the row binlog does not log the cascade)")
    warm(A, sel)
    do(B, "DELETE FROM parent WHERE id = 2")
    is_(val(A, sel), "1", "a DELETE on the parent through the node: the cascade is seen at once")
    # the follower remembers what a mapped table's writes change until the
    # catalog is read again: a cascade added below a table it has mapped
    do(D, "CREATE TABLE gp (id INT PRIMARY KEY) ENGINE=InnoDB",
       "CREATE TABLE gc (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES gp (id) "
       "ON DELETE CASCADE) ENGINE=InnoDB",
       "INSERT INTO gp VALUES (1), (2), (3)", "INSERT INTO gc VALUES (1, 1), (2, 2), (3, 3)")
    time.sleep(0.3)
    warm(A, "SELECT COUNT(*) FROM gc")
    do(D, "DELETE FROM gp WHERE id = 3")
    ok(poll(A, "SELECT COUNT(*) FROM gc", "2") is not None, "a direct DELETE on gp cascades to gc")
    do(D, "CREATE TABLE gg (id INT PRIMARY KEY, cid INT, FOREIGN KEY (cid) REFERENCES gc (id) "
       "ON DELETE CASCADE) ENGINE=InnoDB", "INSERT INTO gg VALUES (1, 1), (2, 2)")
    time.sleep(1.0)
    sel = "SELECT COUNT(*) FROM gg"
    is_(warm(A, sel), "2", "a grandchild table added afterwards: its count is cached")
    do(D, "DELETE FROM gp WHERE id = 2")
    ok(poll(A, sel, "1") is not None, "a direct DELETE on gp now cascades to it too: invalidated")

    do(D, "CREATE TABLE pt (v INT)", "INSERT INTO pt VALUES (1)",
       "CREATE PROCEDURE bump_pt() UPDATE pt SET v = v + 1")
    sel = "SELECT v FROM pt"
    is_(warm(A, sel), "1", "procedure: the table it writes is cached")
    other = "SELECT COUNT(*) FROM c1"
    warm(A, other)
    flushes = status(A, "Cache Flushes")
    do(B, "CALL bump_pt()")
    is_(val(A, sel), "2", "CALL through the node: its writes are seen once its OK is back")
    is_(status(A, "Cache Flushes"), flushes, "  ... the OK was held until the binlog had them: no flush")
    h0 = hits(A)
    val(A, other)
    ok(hits(A) == h0 + 1, "  ... and the other entries are still served")
    warm(A, sel)
    do(B, "BEGIN", "CALL bump_pt()", "COMMIT")
    is_(val(A, sel), "3", "CALL inside a transaction: seen once the COMMIT's OK is back")
    warm(A, sel)
    do(D, "CALL bump_pt()")
    ok(poll(A, sel, "4") is not None, "CALL on the upstream: seen through the binlog")
    do(D, "CREATE FUNCTION bump_fn() RETURNS INT DETERMINISTIC BEGIN UPDATE pt SET v = v + 1; RETURN 1; END")
    warm(A, sel)
    val(B, "SELECT NOW(), bump_fn()")
    is_(val(A, sel), "5", "a SELECT (not cacheable) calling a stored function that writes: seen at once")


def transaction():
    do(D, "CREATE TABLE tx (id INT PRIMARY KEY, v INT) ENGINE=InnoDB", "INSERT INTO tx VALUES (1, 1)")
    sel = "SELECT v FROM tx WHERE id = 1"
    is_(warm(B, sel), "1", "transaction: the row is cached")
    w = conn(NP)
    do(w, "BEGIN", "UPDATE tx SET v = 2 WHERE id = 1")
    is_(val(w, sel), "2", "the writing session reads its uncommitted write")
    is_(val(B, sel), "1", "another session does not see the uncommitted write")
    is_(val(B, sel), "1", "  ... nor on a second read")
    do(w, "COMMIT")
    is_(val(B, sel), "2", "after COMMIT the other session sees it at once")
    warm(B, sel)
    do(w, "SET autocommit = 0", "UPDATE tx SET v = 3 WHERE id = 1")
    is_(val(B, sel), "2", "autocommit = 0: others do not see the pending write")
    do(w, "ROLLBACK")
    is_(val(B, sel), "2", "after ROLLBACK: the old value")
    do(w, "UPDATE tx SET v = 4 WHERE id = 1", "COMMIT", "SET autocommit = 1")
    is_(val(B, sel), "4", "autocommit = 0, UPDATE, COMMIT: seen at once")


def dump_threads():
    return [row[0] for row in cp.srows(D, "SELECT ID FROM information_schema.PROCESSLIST "
                                           "WHERE COMMAND LIKE 'Binlog Dump%' AND USER = 'shoalbl'")]


def wait_state(c, states, timeout=15.0):
    t0 = time.time()
    while time.time() - t0 < timeout:
        s = status(c, "Binlog Stream")
        if s in states:
            return s
        time.sleep(0.05)
    return status(c, "Binlog Stream")


def stream_outages():
    do(D, "CREATE TABLE so (id INT PRIMARY KEY, v INT)", "INSERT INTO so VALUES (1, 1)")
    sel = "SELECT v FROM so WHERE id = 1"
    is_(warm(A, sel), "1", "outage: the row is cached")
    rc0 = status(A, "Binlog Reconnects")
    ids = dump_threads()
    ok(len(ids) == 1, "the node's binlog dump thread is on the primary", repr(ids))
    for i in ids:
        do(D, "KILL %s" % i)
    do(D, "UPDATE so SET v = 2 WHERE id = 1")
    ok(poll(A, sel, "2", 20) is not None, "binlog stream killed: it resumes, and a write made meanwhile is seen")
    ok(status(A, "Binlog Reconnects") > rc0, "  ... counted in Binlog Reconnects")
    is_(wait_state(A, ("streaming",)), "streaming", "  ... and the stream is streaming again")

    flushes = status(A, "Cache Flushes")
    warm(A, sel)
    do(D, "ALTER USER 'shoalbl'@'%' ACCOUNT LOCK")
    for i in dump_threads():
        do(D, "KILL %s" % i)
    st = wait_state(A, ("down", "connecting"))
    ok(st in ("down", "connecting"), "the binlog login locked and the stream killed: the stream is down", st)
    do(D, "UPDATE so SET v = 3 WHERE id = 1")
    v = val(A, sel)
    dest, reason = cp.explain(A)
    ok(v == "3" and dest == "upstream" and "binlog stream" in reason,
       "while the stream is down nothing is served from the cache", repr((v, dest, reason)))
    m = metrics()
    ok('shoal_binlog_state{state="down"} 1' in m and "shoal_cache_serving 0" in m,
       "/metrics says the stream is down and the cache is not serving")
    do(D, "ALTER USER 'shoalbl'@'%' ACCOUNT UNLOCK")
    is_(wait_state(A, ("streaming",), 20), "streaming", "login unlocked: the stream resumes")
    is_(status(A, "Cache Flushes"), flushes, "  ... by GTID: no flush")
    is_(warm(A, sel), "3", "  ... and the cache serves again, current")

    # the follower's position purged while it is away: the cache is flushed
    do(D, "ALTER USER 'shoalbl'@'%' ACCOUNT LOCK")
    for i in dump_threads():
        do(D, "KILL %s" % i)
    wait_state(A, ("down", "connecting"))
    do(D, "UPDATE so SET v = 4 WHERE id = 1", "FLUSH BINARY LOGS", "UPDATE so SET v = 5 WHERE id = 1",
       "FLUSH BINARY LOGS")
    for _ in range(50):    # the replica's dump thread must have left the older files
        time.sleep(0.2)
        last = cp.srows(D, "SHOW BINARY LOGS")[-1][0]
        do(D, "PURGE BINARY LOGS TO '%s'" % last)
        if len(cp.srows(D, "SHOW BINARY LOGS")) == 1:
            break
    do(D, "ALTER USER 'shoalbl'@'%' ACCOUNT UNLOCK")
    is_(wait_state(A, ("streaming",), 30), "streaming", "position purged meanwhile: the stream starts again")
    ok(status(A, "Cache Flushes") > flushes, "  ... after flushing the cache")
    ok("shoal_binlog_resume_failures_total 1" in metrics(), "  ... counted in shoal_binlog_resume_failures_total")
    is_(val(A, sel), "5", "  ... and reads are current")


def race():
    do(D, "CREATE TABLE race (id INT PRIMARY KEY, v INT)", "INSERT INTO race VALUES (1, 0)",
       "CREATE TABLE race2 (id INT PRIMARY KEY, v INT)", "INSERT INTO race2 VALUES (1, 0)")
    time.sleep(0.3)
    sel = "SELECT v FROM race WHERE id = 1"
    warm(A, sel)
    n = 300
    committed = {}
    reads = []
    stop = threading.Event()

    def reader():
        c = conn(NP)
        while not stop.is_set():
            t0 = time.time()
            reads.append((t0, int(val(c, sel))))

    ts = [threading.Thread(target=reader) for _ in range(3)]
    for t in ts:
        t.start()
    w = conn(NP)
    for k in range(1, n + 1):
        do(w, "UPDATE race SET v = %d WHERE id = 1" % k)
        committed[k] = time.time()
    stop.set()
    for t in ts:
        t.join()
    bad = [(t0, v) for (t0, v) in reads
           if any(k > v and committed[k] < t0 for k in range(v + 1, min(v + 50, n) + 1))]
    ok(not bad, "%d reads racing %d writes through the node: none older than a write acknowledged "
       "before it started" % (len(reads), n), repr(bad[:5]))
    hits_seen = status(A, "Cache Hits")
    diag("cache hits so far: %s, fills discarded: %s" % (hits_seen, status(A, "Fills Discarded")))

    sel2 = "SELECT v FROM race2 WHERE id = 1"
    stop.clear()
    reads.clear()

    def reader2():
        c = conn(NP)
        while not stop.is_set():
            val(c, sel2)

    ts = [threading.Thread(target=reader2) for _ in range(3)]
    for t in ts:
        t.start()
    stale = 0
    slow = []
    for k in range(1, 151):
        do(D, "UPDATE race2 SET v = %d WHERE id = 1" % k)
        t = poll(A, sel2, str(k), 5)
        if t is None:
            stale += 1
        else:
            slow.append(t)
    stop.set()
    for t in ts:
        t.join()
    time.sleep(0.5)
    ok(stale == 0 and val(A, sel2) == "150", "150 direct writes racing readers: each is seen by the node "
       "(never a pre-write answer kept)", "stale: %d" % stale)
    slow.sort()
    diag("direct write -> node serves it: p50 %.1f ms, max %.1f ms" %
         (slow[len(slow) // 2] * 1000, slow[-1] * 1000))


def writes_mode():
    w = conn(NW)
    sel = "SELECT v FROM c1 WHERE id = 1"
    cur = val(D, sel)
    is_(warm(w, sel), cur, "writes mode: cached")
    do(w, "UPDATE c1 SET v = 100 WHERE id = 1")
    is_(val(w, sel), "100", "writes mode: a write through the node is seen at once")
    warm(w, sel)
    do(D, "UPDATE c1 SET v = 101 WHERE id = 1")
    time.sleep(0.3)
    is_(val(w, sel), "100", "writes mode: a direct write on the upstream is not seen before the TTL "
        "(the mode's contract)")
    do(w, "CALL bump_pt()")
    is_(val(w, sel), "101", "writes mode: CALL (writes unknown) invalidates everything")


def metrics():
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % METRICS_NP, timeout=10) as f:
        return f.read().decode()


def observability():
    m = metrics()
    for needle in ('shoal_invalidations_total{source="binlog"}', 'shoal_invalidations_total{source="write"}',
                   "shoal_binlog_lag_seconds", 'shoal_binlog_state{state="streaming"} 1',
                   "shoal_cache_invalidated_entries_total", "shoal_cache_fills_discarded_total"):
        ok(needle in m, "/metrics has %s" % needle)
    s = cp.status(A)
    is_(s.get("Invalidation"), "binlog", "SHOW SHOAL STATUS: Invalidation binlog")
    ok(int(s.get("Invalidations Binlog", 0)) > 0 and int(s.get("Invalidations Write", 0)) > 0,
       "SHOW SHOAL STATUS counts invalidations by source", repr(s))
    adm = r.connect(ADMIN_P, user="admin", pw="admin", db="")
    rows = dict(cp.srows(adm, "SELECT variable_name, variable_value FROM stats_shoal_global "
                              "WHERE variable_name LIKE 'Binlog%' OR variable_name LIKE 'Invalid%'"))
    ok(rows.get("Binlog_stream") == "streaming" and int(rows.get("Invalidations_binlog", "0")) > 0,
       "stats_shoal_global has the stream state and the invalidations", repr(rows))
    do(D, "UPDATE pt SET v = v + 1")
    want = val(D, "SELECT @@gtid_binlog_pos")
    t0 = time.time()
    while status(A, "Binlog Position") != want and time.time() - t0 < 10:
        time.sleep(0.01)
    s = cp.status(A)
    ok(s.get("Binlog Position") == want and int(s.get("Binlog Transactions", 0)) > 0,
       "SHOW SHOAL STATUS: the binlog position reaches the primary's, transactions counted",
       "%r vs %r" % (s.get("Binlog Position"), want))


run("own write, other sessions, direct, other node, replica", own_and_others)
run("DDL", ddl)
run("temporary tables", temporary)
run("views", views)
run("trigger, foreign key, procedure", trigger_fk_procedure)
run("transaction", transaction)
run("writes mode", writes_mode)
run("observability", observability)
run("racing fills", race)
run("stream outages", stream_outages)
done_testing(always_zero=True)
