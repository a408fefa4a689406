#!/usr/bin/env bash
# 82-cache-behaviour: what the cache does over time and around writes.
#   - TTL: --cache-ttl-ms 1000: a hit, then after 1.5 s a miss; a row changed
#     upstream stays stale (a hit) within the TTL and shows after it.
#   - Background refresh: TTL 4000 ms, refresh 1000 ms, a ~0.3 s query: past
#     the refresh age hits keep coming back in well under the query's time,
#     and a row changed upstream shows before the TTL could have expired (so a
#     refresh happened), with no new miss.
#   - Background refresh of a prepared statement, on a node with one upstream
#     connection shared by two sessions whose statements have different ids
#     there: the refresh runs (a changed row shows within the TTL) and runs
#     the session's own statement (never the other session's).
#   - Transactions: BEGIN / autocommit=0 read upstream; CREATE CACHE ...
#     ALWAYS is served inside one; UNTIL WRITE until the transaction writes.
#   - --read-your-writes-ms 2000: after an INSERT the writer reads upstream,
#     another session still hits; after the window the writer hits again.
#   - Every skip reason: EXPLAIN LAST STATEMENT gives it and SHOW PROXIED
#     QUERIES lists the shape as "unsupported: <reason>".
#   - Results with warnings and ERR results are not stored; empty results are.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "cache behaviour: needs a node (SHOAL_FAKE_DIRECT=1)"; fi
plan 69

on_exit "mdb -e 'DROP TABLE IF EXISTS t82, t82w, t82p; DROP FUNCTION IF EXISTS t82_fn'"
mdb <<'SQL' || bail "create the test tables"
DROP TABLE IF EXISTS t82, t82w, t82p;
DROP FUNCTION IF EXISTS t82_fn;
CREATE TABLE t82p (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB;
INSERT INTO t82p VALUES (3, 'three');
CREATE TABLE t82 (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB;
INSERT INTO t82 VALUES (1, 'one'), (2, 'two'), (3, 'three');
CREATE TABLE t82w (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB;
CREATE FUNCTION t82_fn(x INT) RETURNS INT DETERMINISTIC RETURN x + 1;
SQL

DD=$(mktemp -d); mkdir -p "$DD/ttl" "$DD/refresh" "$DD/main" "$DD/ryw" "$DD/prefresh"
on_exit "rm -rf '$DD'"
ok_start() { if shoal_start "$@"; then ok "node $1 starts"; else bail "node $1 starts"; fi; }
ok_start ttl --auto-cache --cache-ttl-ms 1000 --data-dir "$DD/ttl"
ok_start refresh --auto-cache --cache-ttl-ms 4000 --cache-refresh-ms 1000 --data-dir "$DD/refresh"
ok_start main --auto-cache --cache-ttl-ms 60000 --data-dir "$DD/main"
ok_start ryw --auto-cache --cache-ttl-ms 60000 --read-your-writes-ms 2000 --data-dir "$DD/ryw"
ok_start prefresh --auto-cache --cache-ttl-ms 4000 --cache-refresh-ms 1000 --workers 1 \
  --max-upstream-connections 1 --data-dir "$DD/prefresh"

TTL_PORT=$ttl_PORT REFRESH_PORT=$refresh_PORT MAIN_PORT=$main_PORT RYW_PORT=$ryw_PORT \
  PREFRESH_PORT=$prefresh_PORT "$PY" - <<'PY' || not_ok "python part crashed"
import os
import time
import rawmysql as r
import cache_proto as cp
from taplib import ok, diag, run, done_testing

DPORT = int(os.environ["MDB_PORT"])
P = {k: int(os.environ[k.upper() + "_PORT"]) for k in ("ttl", "refresh", "main", "ryw", "prefresh")}


def hm(v):
    s = cp.status(v)
    return s["Cache Hits"], s["Cache Misses"]


def direct(sql):
    d = r.connect(DPORT)
    try:
        cp.must_ok(d, sql)
    finally:
        d.close()


# ---- TTL ----------------------------------------------------------------------
def ttl_part():
    v = r.connect(P["ttl"])
    q = "SELECT id, v FROM t82 WHERE id < 3 ORDER BY id"
    h0, m0 = hm(v)
    first = cp.srows(v, q)
    second = cp.srows(v, q)
    h1, m1 = hm(v)
    ok(first == second == [("1", "one"), ("2", "two")] and (h1 - h0, m1 - m0) == (1, 1),
       "TTL 1000 ms: a miss then a hit", "hits +%d misses +%d, rows %r" % (h1 - h0, m1 - m0, second))
    time.sleep(1.5)
    cp.srows(v, q)
    e = cp.explain(v)
    h2, m2 = hm(v)
    ok((h2 - h1, m2 - m1) == (0, 1), "TTL 1000 ms: after 1.5 s the same query is a miss again (EXPLAIN %s/%s)" % e,
       "hits +%d misses +%d" % (h2 - h1, m2 - m1))

    q2 = "SELECT v FROM t82 WHERE id = 3"
    before = cp.srows(v, q2)
    direct("UPDATE t82 SET v = 'THREE' WHERE id = 3")
    h0, m0 = hm(v)
    stale = cp.srows(v, q2)
    h1, _ = hm(v)
    ok(before == stale == [("three",)] and h1 == h0 + 1,
       "TTL: within the TTL a row changed upstream is still served from the cache (stale)",
       "before %r, within TTL %r, hits +%d" % (before, stale, h1 - h0))
    time.sleep(1.5)
    after = cp.srows(v, q2)
    ok(after == [("THREE",)], "TTL: after the TTL the changed row is visible", "got %r" % (after,))
    v.close()


run("TTL part runs", ttl_part)


# ---- background refresh ---------------------------------------------------------
def slow_query():
    """A deterministic SELECT that takes >= 0.25 s on MariaDB, and its time."""
    d = r.connect(DPORT)
    for n in (2500, 3500, 5000, 7000):
        q = ("SELECT (SELECT v FROM t82 WHERE id = 2) AS v, COUNT(*) AS n FROM seq_1_to_%d a "
             "JOIN seq_1_to_%d b ON (a.seq + b.seq) %% 1000 = 7" % (n, n))
        t, pk = cp.timed(d.query, q)
        if cp.err_of(pk):
            raise cp.SQLError(*cp.err_of(pk))
        if t >= 0.25:
            d.close()
            return q, t
    d.close()
    return q, t


def refresh_part():
    q, tq = slow_query()
    diag("slow query takes %.3f s on MariaDB: %s" % (tq, q))
    v = r.connect(P["refresh"])
    v2 = r.connect(P["refresh"])
    h0, m0 = hm(v)
    t_fill, first = cp.timed(cp.srows, v, q)
    t0 = time.monotonic()
    h1, m1 = hm(v)
    ok(first[0][0] == "two" and m1 == m0 + 1, "refresh: the first run fills the cache (%.3f s)" % t_fill,
       "rows %r, misses +%d" % (first, m1 - m0))
    direct("UPDATE t82 SET v = 'TWO' WHERE id = 2")
    time.sleep(max(0, 1.25 - (time.monotonic() - t0)))
    # Past the refresh age (1 s), well before the TTL (4 s).
    times, vals = [], []
    t, rs = cp.timed(cp.srows, v, q)          # the hit that starts the refresh
    times.append(t)
    vals.append(rs[0][0])
    for c in (v, v2, v, v2, v):               # more hits while the refresh runs
        t, rs = cp.timed(cp.srows, c, q)
        times.append(t)
        vals.append(rs[0][0])
    limit = tq / 3
    ok(max(times) < limit, "refresh: hits past the refresh age answer fast (max %.3f s, the query takes %.3f s)"
       % (max(times), tq), "times: %r" % ([round(x, 3) for x in times],))
    ok(vals[0] == "two", "refresh: the hit that triggers the refresh serves the stored (old) value",
       "got %r" % (vals[0],))
    # Let the refresh finish, still well inside the TTL.
    deadline = t0 + 3.0
    seen = None
    while time.monotonic() < deadline:
        seen = cp.srows(v2, q)[0][0]
        if seen == "TWO":
            break
        time.sleep(0.1)
    age = time.monotonic() - t0
    ok(seen == "TWO" and age < 3.9,
       "refresh: the changed row is served %.2f s after the fill (TTL 4 s): a background refresh ran" % age,
       "last value %r" % (seen,))
    h2, m2 = hm(v)
    ok(m2 == m1 and h2 > h1 + len(times), "refresh: no miss since the fill; every read was a hit",
       "hits +%d, misses +%d" % (h2 - h1, m2 - m1))
    v.close()
    v2.close()


run("refresh part runs", refresh_part)


def exec_bytes(c, sid, param):
    """The answer to an execute, its packets' payloads joined."""
    return b"|".join(p for _, p in c.execute(sid, (param,)))


def prepared_refresh_part():
    v = r.connect(P["prefresh"])
    other = r.connect(P["prefresh"])
    # the other session's statement is prepared first on the one upstream
    # connection, so the two statements have other ids there than the
    # sessions gave their clients (both 1)
    oid, _, _, _ = other.prepare("SELECT CONCAT('other-', ?) AS v")
    exec_bytes(other, oid, 3)
    sid, _, _, _ = v.prepare("SELECT v FROM t82p WHERE id = ?")
    diag("client statement ids: %r and %r" % (oid, sid))
    h0, m0 = hm(v)
    first = exec_bytes(v, sid, 3)
    t0 = time.monotonic()
    h1, m1 = hm(v)
    ok(b"three" in first and m1 == m0 + 1, "prepared refresh: the first execute fills the cache",
       "answer %r, misses +%d" % (first, m1 - m0))
    direct("UPDATE t82p SET v = 'THREE' WHERE id = 3")
    time.sleep(max(0, 1.25 - (time.monotonic() - t0)))
    seen, answers = b"", []
    while time.monotonic() < t0 + 3.0:          # the TTL is 4 s
        seen = exec_bytes(v, sid, 3)
        answers.append(seen)
        if b"THREE" in seen:
            break
        time.sleep(0.1)
    age = time.monotonic() - t0
    ok(b"THREE" in seen and age < 3.9,
       "prepared refresh: the changed row is served %.2f s after the fill (TTL 4 s): a refresh ran" % age,
       "last answer %r" % (seen,))
    ok(not any(b"other-" in a for a in answers),
       "prepared refresh: the refresh ran the session's own statement, not the other session's",
       "answers %r" % (answers,))
    h2, m2 = hm(v)
    ok(m2 == m1, "prepared refresh: no miss since the fill", "hits +%d, misses +%d" % (h2 - h1, m2 - m1))
    v.close()
    other.close()


run("prepared refresh part runs", prepared_refresh_part)


# ---- transactions -------------------------------------------------------------
def warm(v, q):
    cp.srows(v, q)
    h0, _ = hm(v)
    cp.srows(v, q)
    return hm(v)[0] == h0 + 1


def served(v, q):
    """Run q; return (rows, destination, reason, was_a_hit)."""
    h0, _ = hm(v)
    rs = cp.srows(v, q)
    dest, reason = cp.explain(v)
    return rs, dest, reason, hm(v)[0] == h0 + 1


def txn_part():
    v = r.connect(P["main"])
    q3 = "SELECT id, v FROM t82 WHERE id = 1"
    ok(warm(v, q3), "txn: the default-policy query is cached outside transactions")
    cp.must_ok(v, "BEGIN")
    rs, dest, reason, hit = served(v, q3)
    ok(dest == "upstream" and not hit and rs == [("1", "one")],
       "txn: inside BEGIN the cached SELECT goes upstream (%s: %s)" % (dest, reason))
    cp.must_ok(v, "COMMIT")
    cp.must_ok(v, "SET autocommit = 0")
    rs, dest, reason, hit = served(v, q3)
    ok(dest == "upstream" and not hit, "txn: with autocommit=0 it goes upstream (%s: %s)" % (dest, reason))
    cp.must_ok(v, "COMMIT")
    cp.must_ok(v, "SET autocommit = 1")
    rs, dest, reason, hit = served(v, q3)
    ok(dest == "readyset_shallow" and hit, "txn: after autocommit=1 it hits again (%s: %s)" % (dest, reason))

    q4 = "SELECT id, v FROM t82 WHERE id = 2 OR id = 3 ORDER BY id"
    res = cp.table(v, "CREATE CACHE ALWAYS FROM " + q4)
    ok(len(res) == 1 and res[0]["query_id"].startswith("q_"), "txn: CREATE CACHE ALWAYS", repr(res))
    ok(warm(v, q4), "txn: the ALWAYS query is cached")
    cp.must_ok(v, "BEGIN")
    rs, dest, reason, hit = served(v, q4)
    ok(dest == "readyset_shallow" and hit, "txn: ALWAYS is served from the cache inside BEGIN (%s: %s)" % (dest, reason))
    cp.must_ok(v, "INSERT INTO t82w (v) VALUES ('always')")
    rs, dest, reason, hit = served(v, q4)
    ok(dest == "readyset_shallow" and hit, "txn: ALWAYS still served after a write in the transaction (%s)" % dest)
    cp.must_ok(v, "ROLLBACK")

    q5 = "SELECT v, id FROM t82 WHERE id >= 1 ORDER BY id"
    res = cp.table(v, "CREATE CACHE UNTIL WRITE FROM " + q5)
    ok(len(res) == 1, "txn: CREATE CACHE UNTIL WRITE", repr(res))
    ok(warm(v, q5), "txn: the UNTIL WRITE query is cached")
    cp.must_ok(v, "BEGIN")
    rs, dest, reason, hit = served(v, q5)
    ok(dest == "readyset_shallow" and hit, "txn: UNTIL WRITE is served inside BEGIN before a write (%s: %s)" % (dest, reason))
    cp.must_ok(v, "INSERT INTO t82w (v) VALUES ('until')")
    rs, dest, reason, hit = served(v, q5)
    ok(dest == "upstream" and not hit, "txn: UNTIL WRITE goes upstream after the INSERT (%s: %s)" % (dest, reason))
    cp.must_ok(v, "ROLLBACK")
    rs, dest, reason, hit = served(v, q5)
    ok(dest == "readyset_shallow" and hit, "txn: after ROLLBACK UNTIL WRITE hits again (%s: %s)" % (dest, reason))
    cp.must_ok(v, "BEGIN")
    rs, dest, reason, hit = served(v, q5)
    ok(dest == "readyset_shallow" and hit, "txn: a new transaction starts without the write mark (%s: %s)" % (dest, reason))
    cp.must_ok(v, "COMMIT")
    v.close()


run("transactions part runs", txn_part)


# ---- read-your-writes -----------------------------------------------------------
def ryw_part():
    a = r.connect(P["ryw"])
    b = r.connect(P["ryw"])
    q = "SELECT COUNT(*) FROM t82 WHERE v IS NOT NULL"
    ok(warm(a, q), "ryw: the query is cached")
    cp.must_ok(a, "INSERT INTO t82w (v) VALUES ('ryw')")
    t_write = time.monotonic()
    rs, dest, reason, hit = served(a, q)
    ok(dest == "upstream" and not hit, "ryw: the writer's next cached read goes upstream (%s: %s)" % (dest, reason))
    rs, dest, reason, hit = served(b, q)
    ok(dest == "readyset_shallow" and hit, "ryw: another session still hits (%s: %s)" % (dest, reason))
    time.sleep(max(0, 2.3 - (time.monotonic() - t_write)))
    rs, dest, reason, hit = served(a, q)
    ok(dest == "readyset_shallow" and hit, "ryw: after 2 s the writer hits again (%s: %s)" % (dest, reason))
    a.close()
    b.close()


run("read-your-writes part runs", ryw_part)


# ---- skip reasons ----------------------------------------------------------------
SKIPS = [
    ("not a SELECT", "DO (SELECT COUNT(*) FROM t82 AS skip_01)", "skip_01"),
    ("multiple statements", "SELECT id FROM t82 AS skip_02 WHERE id = 1; SELECT 2", "skip_02"),
    ("non-deterministic function", "SELECT RAND() AS skip_03", "skip_03"),
    ("side effects", "SELECT SQL_CALC_FOUND_ROWS id FROM t82 AS skip_04 LIMIT 1", "skip_04"),
    ("session-specific function", "SELECT CONNECTION_ID() AS skip_05", "skip_05"),
    ("user variable", "SELECT @skip_06", "skip_06"),
    ("system variable", "SELECT @@version AS skip_07", "skip_07"),
    ("system schema", "SELECT COUNT(*) AS skip_08 FROM information_schema.tables", "skip_08"),
    ("user-defined or stored function", "SELECT t82_fn(1) AS skip_09", "skip_09"),
    ("locking read", "SELECT id FROM t82 AS skip_10 WHERE id = 1 FOR UPDATE", "skip_10"),
    ("INTO", "SELECT id FROM t82 AS skip_11 WHERE id = 1 INTO @v11", "skip_11"),
    ("SQL_NO_CACHE", "SELECT SQL_NO_CACHE id FROM t82 AS skip_12 WHERE id = 1", "skip_12"),
]


def skip_part():
    v = r.connect(P["main"])
    for reason, q, marker in SKIPS:
        pk = v.query(q)
        e = cp.err_of(pk)
        expl = cp.explain(v)
        q2 = v.query(q)                        # twice: never a hit
        h = cp.status(v)
        listed = [row for row in cp.table(v, "SHOW PROXIED QUERIES") if marker in (row["query"] or "")]
        sup = listed[0]["readyset_supported"] if listed else None
        ok(e is None and expl == ("upstream", reason) and sup == "unsupported: " + reason,
           "skip %r: EXPLAIN says upstream/%s, SHOW PROXIED QUERIES says %r" % (reason, expl[1], sup),
           "query: %s" % q, "error: %r" % (e,), "explain: %r" % (expl,), "listed: %r" % (listed,))
        if listed:
            by_id = cp.table(v, "SHOW PROXIED QUERIES WHERE query_id = '%s'" % listed[0]["query_id"])
            ok(len(by_id) == 1 and int(by_id[0]["count"]) >= 2,
               "skip %r: the shape is counted (%s)" % (reason, by_id[0]["count"] if by_id else None), repr(by_id))
    cached = [row["query"] for row in cp.table(v, "SHOW CACHES") if "skip_" in (row["query"] or "")]
    ok(not cached, "no skipped shape shows up in SHOW CACHES", repr(cached))
    v.close()


run("skip reasons part runs", skip_part)


# ---- what is stored ----------------------------------------------------------------
def stored_part():
    v = r.connect(P["main"])
    qw = "SELECT CAST('12abc' AS SIGNED) AS w FROM t82 WHERE id = 1"
    h0, m0 = hm(v)
    e0 = cp.status(v)["Cache Entries"]
    a = v.query(qw)
    b = v.query(qw)
    h1, m1 = hm(v)
    warn = r.parse_ok(a[-1][1])["warnings"] if v._deprecate_eof() else None
    # (the second may also pass by the cache without counting a miss, when
    # the catalog is being read again after another part's DDL)
    ok(warn and h1 == h0 and m1 - m0 >= 1 and cp.status(v)["Cache Entries"] == e0,
       "a result with warnings is not stored (a miss, then no hit)",
       "warnings %r, hits +%d misses +%d" % (warn, h1 - h0, m1 - m0))

    qe = "SELECT id, v FROM t82 WHERE id = -1"
    h0, m0 = hm(v)
    a = cp.srows(v, qe)
    b = cp.srows(v, qe)
    h1, m1 = hm(v)
    ok(a == b == [] and (h1 - h0, m1 - m0) == (1, 1), "an empty result is stored (a miss, then a hit)",
       "hits +%d misses +%d" % (h1 - h0, m1 - m0))

    qx = "SELECT no_such_column FROM t82 WHERE id = 1"
    h0, m0 = hm(v)
    e0 = cp.status(v)["Cache Entries"]
    a = v.query(qx)
    b = v.query(qx)
    h1, m1 = hm(v)
    ok(cp.err_of(a) and cp.err_of(a)[0] == 1054 and a == b and (h1 - h0, m1 - m0) == (0, 2)
       and cp.status(v)["Cache Entries"] == e0,
       "an ERR result is not stored (ERROR 1054 twice, both misses)",
       "err %r, hits +%d misses +%d" % (cp.err_of(a), h1 - h0, m1 - m0))
    # and the connection is fine afterwards
    ok(cp.srows(v, "SELECT v FROM t82 WHERE id = 1") == [("one",)], "the session works after the error")
    v.close()


run("stored-or-not part runs", stored_part)
done_testing(always_zero=True)
PY
for n in ttl refresh main ryw; do check "node $n still running" shoal_alive $n; done
done_testing
