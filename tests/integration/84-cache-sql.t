#!/usr/bin/env bash
# 84-cache-sql: every cache SQL command on the data port, its answer and its
# result columns, on a node in explicit mode (no --auto-cache): CREATE CACHE
# (FROM SELECT, with a name and POLICY TTL/REFRESH/COALESCE/ALWAYS/UNTIL
# WRITE, FROM q_<id>), its errors (REFRESH >= TTL, a non-cacheable query, an
# unknown id), DROP CACHE by name and by id (and of an unknown cache), FLUSH
# CACHE, FLUSH ALL SHALLOW CACHES, DROP ALL CACHES, SHOW CACHES [WHERE],
# SHOW PROXIED QUERIES [WHERE] [LIMIT], EXPLAIN LAST STATEMENT, SHOW SHOAL
# STATUS, syntax errors (ERROR 1064, the connection stays usable), comments
# of every kind around it, and
# persistence of the definitions across a restart with the same --data-dir.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "cache SQL: needs a node (SHOAL_FAKE_DIRECT=1)"; fi
plan 105

if ! mdb -e "DROP TABLE IF EXISTS t84; CREATE TABLE t84 (id INT PRIMARY KEY, v VARCHAR(20));
  INSERT INTO t84 VALUES (1,'one'),(2,'two'),(3,'three'),(4,'four'),(5,'five')"; then
  bail "create t84"
fi
on_exit "mdb -e 'DROP TABLE IF EXISTS t84'"
DD=$(mktemp -d)
STATE=$(mktemp)
on_exit "rm -rf '$DD' '$STATE'"

if shoal_start node --data-dir "$DD" --cache-ttl-ms 10000; then
  ok "node starts in explicit mode (port $node_PORT)"
else
  bail "node starts in explicit mode (port $node_PORT)"
fi

NODE_PORT=$node_PORT STATE=$STATE "$PY" - <<'PY' || not_ok "python part crashed"
import json
import os
import re
import rawmysql as r
import cache_proto as cp
from taplib import ok, is_, diag, run, done_testing

VPORT = int(os.environ["NODE_PORT"])
v = r.connect(VPORT)
ID_RE = re.compile(r"^q_[0-9a-f]{16}$")
DEFAULT_PROPS = "shallow, ttl 10000 ms, refresh 5000 ms, coalesce 5000 ms"


def cols(sql):
    names, rows = cp.decode_text(v.query(sql), v._deprecate_eof())
    return names


def hm():
    s = cp.status(v)
    return s["Cache Hits"], s["Cache Misses"]


def dest_of(q):
    """Run q twice; (destination, reason, hits moved, misses moved)."""
    h0, m0 = hm()
    cp.srows(v, q)
    cp.srows(v, q)
    e = cp.explain(v)
    h1, m1 = hm()
    return e[0], e[1], h1 - h0, m1 - m0


def caches():
    return {row["query_id"]: row for row in cp.table(v, "SHOW CACHES")}


def proxied_id(marker):
    rows = [x for x in cp.table(v, "SHOW PROXIED QUERIES") if marker in (x["query"] or "")]
    return rows[0] if rows else None


def expect_err(sql, code, desc, msg_re=None):
    pk = v.query(sql)
    e = cp.err_of(pk)
    good = e is not None and e[0] == code and (msg_re is None or re.search(msg_re, e[2]))
    after = cp.srows(v, "SELECT 'still usable'")
    ok(good and after == [("still usable",)], desc + (" (ERROR %d (%s): %s)" % e if e else ""),
       "sql: %s" % sql, "got: %r" % (e or pk[:2],), "next query: %r" % (after,))
    return e


state = {}


def basics():
    # Column sets of the answers.
    is_(cols("SHOW CACHES"), ["query_id", "name", "query", "properties", "count"], "SHOW CACHES columns")
    is_(cols("SHOW PROXIED QUERIES"), ["query_id", "query", "readyset_supported", "count"],
        "SHOW PROXIED QUERIES columns")
    is_(cols("EXPLAIN LAST STATEMENT"), ["Query_destination", "Readyset_reason"], "EXPLAIN LAST STATEMENT columns")
    st = cp.table(v, "SHOW SHOAL STATUS")
    keys = [x["Variable_name"] for x in st]
    ok(cols("SHOW SHOAL STATUS") == ["Variable_name", "Value"] and
       all(k in keys for k in ("Cache Hits", "Cache Misses", "Cache Entries", "Cache Memory Bytes")) and
       dict((x["Variable_name"], x["Value"]) for x in st).get("Auto Cache") == "off",
       "SHOW SHOAL STATUS: Variable_name/Value with the cache counters, Auto Cache off", repr(st))

    # Explicit mode: no cache before CREATE CACHE.
    q1 = "SELECT id, v FROM t84 WHERE id = 1"
    d, why, dh, dm = dest_of(q1)
    ok((d, dh, dm) == ("upstream", 0, 0), "before CREATE CACHE the query goes upstream (%s: %s)" % (d, why))
    p = proxied_id("t84 WHERE id")
    ok(p is not None and ID_RE.match(p["query_id"]) and p["readyset_supported"] == "yes" and int(p["count"]) >= 2,
       "SHOW PROXIED QUERIES lists it as supported with its count", repr(p))

    res = cp.table(v, "CREATE CACHE FROM " + q1)
    ok(len(res) == 1 and list(res[0]) == ["query_id", "name", "query", "cache_type"] and
       ID_RE.match(res[0]["query_id"]) and res[0]["name"] == res[0]["query_id"] and
       res[0]["cache_type"] == "shallow" and "t84" in res[0]["query"] and
       (p is None or res[0]["query_id"] == p["query_id"]),
       "CREATE CACHE FROM SELECT answers (query_id, name, query, cache_type)", repr(res))
    id1 = res[0]["query_id"] if res else None
    state["id1"] = id1
    d, why, dh, dm = dest_of(q1)
    ok((d, why, dh, dm) == ("readyset_shallow", "ok", 1, 1), "after CREATE CACHE: a miss, then a hit",
       repr((d, why, dh, dm)))
    c = caches().get(id1)
    ok(c is not None and c["properties"] == DEFAULT_PROPS and c["name"] == id1,
       "SHOW CACHES lists it with the default policy", repr(c))
    w = cp.table(v, "SHOW CACHES WHERE query_id = '%s'" % id1)
    ok(len(w) == 1 and w[0]["query_id"] == id1, "SHOW CACHES WHERE query_id = '%s'" % id1, repr(w))
    ok(cp.table(v, "SHOW CACHES WHERE query_id = 'q_0000000000000000'") == [],
       "SHOW CACHES WHERE with an unknown id: no rows")
    ok(proxied_id("t84 WHERE id") is None, "a cached shape is no longer listed by SHOW PROXIED QUERIES")

    # Named caches with policies.
    q2 = "SELECT v FROM t84 WHERE id = 2"
    res = cp.table(v, "CREATE CACHE POLICY TTL 30 SECONDS REFRESH EVERY 5 SECONDS COALESCE 2000 MILLISECONDS "
                      "ALWAYS named_c FROM " + q2)
    ok(len(res) == 1 and res[0]["name"] == "named_c", "CREATE CACHE POLICY ... ALWAYS named_c", repr(res))
    c = [x for x in caches().values() if x["name"] == "named_c"]
    is_(c[0]["properties"] if c else None, "shallow, ttl 30000 ms, refresh 5000 ms, coalesce 2000 ms, always",
        "SHOW CACHES shows named_c's policy")
    q3 = "SELECT id FROM t84 WHERE v = 'three'"
    res = cp.table(v, "CREATE SHALLOW CACHE POLICY TTL 1500 MILLISECONDS UNTIL WRITE `c uw` FROM " + q3)
    ok(len(res) == 1 and res[0]["name"] == "c uw", "CREATE SHALLOW CACHE POLICY TTL ms UNTIL WRITE `c uw`", repr(res))
    c = [x for x in caches().values() if x["name"] == "c uw"]
    is_(c[0]["properties"] if c else None, "shallow, ttl 1500 ms, refresh 750 ms, coalesce 5000 ms, until write",
        "SHOW CACHES shows `c uw`'s policy (refresh defaults to TTL/2)")
    res = cp.table(v, "CREATE CACHE COALESCE 100 MILLISECONDS c_co FROM SELECT v, id FROM t84 WHERE id = 5")
    c = [x for x in caches().values() if x["name"] == "c_co"]
    is_(c[0]["properties"] if c else None, "shallow, ttl 10000 ms, refresh 5000 ms, coalesce 100 ms",
        "CREATE CACHE COALESCE alone keeps the default TTL")
    d, why, dh, dm = dest_of(q2)
    ok((d, dh, dm) == ("readyset_shallow", 1, 1), "named_c caches its query (%s: %s)" % (d, why))

    # FROM q_<id>.
    q4 = "SELECT id, v FROM t84 WHERE id IN (3, 4) ORDER BY id"
    cp.srows(v, q4)
    p = proxied_id("IN (")
    ok(p is not None and ID_RE.match(p["query_id"]), "the IN query is listed as proxied", repr(p))
    if p:
        res = cp.table(v, "CREATE CACHE c_from_id FROM %s" % p["query_id"])
        ok(len(res) == 1 and res[0]["query_id"] == p["query_id"] and res[0]["name"] == "c_from_id",
           "CREATE CACHE c_from_id FROM %s" % p["query_id"], repr(res))
        d, why, dh, dm = dest_of(q4)
        ok((d, dh, dm) == ("readyset_shallow", 1, 1), "the cache made from the id serves its query (%s)" % why)
        state["id4"] = p["query_id"]

    # Errors of CREATE CACHE.
    q5 = "SELECT v FROM t84 WHERE id = 5 AND v IS NOT NULL"
    expect_err("CREATE CACHE POLICY TTL 5 SECONDS REFRESH 5 SECONDS FROM " + q5, 1064,
               "REFRESH equal to TTL is an error")
    expect_err("CREATE CACHE POLICY TTL 5 SECONDS REFRESH 6000 MILLISECONDS FROM " + q5, 1064,
               "REFRESH above TTL is an error")
    ok(not [x for x in caches().values() if "IS NOT NULL" in x["query"]], "no cache was made by the failed CREATEs")
    expect_err("CREATE CACHE FROM SELECT RAND() AS r", 1235, "CREATE CACHE of a non-deterministic query is an error",
               "non-deterministic")
    expect_err("CREATE CACHE FROM SELECT id FROM t84 WHERE id = 1 FOR UPDATE", 1235,
               "CREATE CACHE of a locking read is an error", "locking")
    expect_err("CREATE CACHE FROM INSERT INTO t84 VALUES (9, 'x')", 1235,
               "CREATE CACHE of an INSERT is an error", "not a SELECT")
    ok(cp.srows(v, "SELECT COUNT(*) FROM t84 WHERE id = 9") == [("0",)], "and the INSERT did not run")
    cp.srows(v, "SELECT CONNECTION_ID() AS skip_84")
    p = proxied_id("skip_84")
    if p:
        expect_err("CREATE CACHE FROM %s" % p["query_id"], 1105, "CREATE CACHE FROM the id of a skipped shape is an error")
    else:
        ok(False, "the skipped shape is listed by SHOW PROXIED QUERIES")
    expect_err("CREATE CACHE FROM q_0123456789abcdef", 1105, "CREATE CACHE FROM an unknown id is an error")

    # SHOW PROXIED QUERIES WHERE / LIMIT.
    allp = cp.table(v, "SHOW PROXIED QUERIES")
    ok(len(allp) >= 2, "several proxied shapes (%d)" % len(allp))
    if allp:
        w = cp.table(v, "SHOW PROXIED QUERIES WHERE query_id = '%s'" % allp[-1]["query_id"])
        ok(len(w) == 1 and w[0] == allp[-1], "SHOW PROXIED QUERIES WHERE query_id = ...", repr(w))
        w = cp.table(v, "SHOW PROXIED QUERIES WHERE query_id = '%s' LIMIT 5" % allp[-1]["query_id"])
        ok(len(w) == 1, "SHOW PROXIED QUERIES WHERE ... LIMIT 5", repr(w))
    is_(len(cp.table(v, "SHOW PROXIED QUERIES LIMIT 1")), 1, "SHOW PROXIED QUERIES LIMIT 1: one row")
    is_(len(cp.table(v, "SHOW PROXIED QUERIES LIMIT 0")), 0, "SHOW PROXIED QUERIES LIMIT 0: no rows")

    # DROP.
    pk = v.query("DROP CACHE named_c")
    ok(pk and pk[0][1][:1] == b"\x00", "DROP CACHE by name: OK", repr(pk[:1]))
    ok(not [x for x in caches().values() if x["name"] == "named_c"], "named_c is gone from SHOW CACHES")
    d, why, dh, dm = dest_of(q2)
    ok((d, dh) == ("upstream", 0), "named_c's query goes upstream again (%s: %s)" % (d, why))
    pk = v.query("DROP CACHE %s" % id1)
    ok(pk and pk[0][1][:1] == b"\x00" and id1 not in caches(), "DROP CACHE by id: OK, gone", repr(pk[:1]))
    d, why, dh, dm = dest_of(q1)
    ok((d, dh) == ("upstream", 0), "the dropped id's query goes upstream (%s: %s)" % (d, why))
    expect_err("DROP CACHE no_such_cache", 1105, "DROP CACHE of an unknown cache is an error", "no_such_cache")
    expect_err("DROP CACHE named_c", 1105, "DROP CACHE of an already dropped cache is an error")
    expect_err("FLUSH CACHE no_such_cache", 1105, "FLUSH CACHE of an unknown cache is an error")

    # FLUSH CACHE: definition kept, data gone.
    q6 = "SELECT id, v FROM t84 WHERE id < 3 ORDER BY id"
    cp.table(v, "CREATE CACHE c_fl FROM " + q6)
    dest_of(q6)
    h0, m0 = hm()
    pk = v.query("FLUSH CACHE c_fl")
    ok(pk and pk[0][1][:1] == b"\x00", "FLUSH CACHE c_fl: OK", repr(pk[:1]))
    ok([x for x in caches().values() if x["name"] == "c_fl"], "FLUSH CACHE keeps the definition")
    d, why, dh, dm = dest_of(q6)
    ok((d, dh, dm) == ("readyset_shallow", 1, 1), "after FLUSH CACHE the next query is a miss, then a hit",
       repr((d, why, dh, dm)))

    # FLUSH ALL SHALLOW CACHES.
    dest_of(q4)
    before = caches()
    for sql in ("FLUSH ALL SHALLOW CACHES", "FLUSH ALL CACHES"):
        pk = v.query(sql)
        ok(pk and pk[0][1][:1] == b"\x00", "%s: OK" % sql, repr(pk[:1]))
        ok(set(caches()) == set(before), "%s keeps every definition" % sql)
        e0 = cp.status(v)["Cache Entries"]
        ok(e0 == 0, "%s empties the store (Cache Entries %d)" % (sql, e0))
        r6, r4 = dest_of(q6), dest_of(q4)
        ok(r6[2:] == (1, 1) and r4[2:] == (1, 1), "after %s both queries are a miss, then a hit" % sql,
           repr((r6, r4)))

    # DROP ALL CACHES.
    pk = v.query("DROP ALL CACHES")
    ok(pk and pk[0][1][:1] == b"\x00", "DROP ALL CACHES: OK", repr(pk[:1]))
    ok(caches() == {}, "SHOW CACHES is empty after DROP ALL CACHES", repr(caches()))
    d, why, dh, dm = dest_of(q6)
    ok((d, dh) == ("upstream", 0), "queries go upstream after DROP ALL CACHES (%s: %s)" % (d, why))

    # Syntax errors: 1064 (42000), the connection stays usable.
    for sql in ("CREATE CACHE POLICY TTL x FROM select 1", "SHOW CACHES WHERE nope",
                "SHOW CACHES WHERE query_id = ", "SHOW PROXIED QUERIES LIMIT many", "DROP ALL CACHES now",
                "FLUSH CACHE", "EXPLAIN LAST", "CREATE CACHE FROM", "CREATE CACHE POLICY TTL 5 FROM select 1",
                "CREATE CACHE UNTIL FROM select 1", "SHOW SHOAL STATUS extra", "DROP CACHE a b"):
        e = expect_err(sql, 1064, "syntax error: %r -> ERROR 1064" % sql)
        if e and e[0] == 1064:
            ok(e[1] == "42000", "  ... with SQLSTATE 42000 (%s)" % e[1])

    # Comments of every kind around cache SQL are skipped as the server
    # skips them (the node's reader once knew only /* */: "-- " and "#"
    # sent the command upstream, or made it a syntax error).
    for sql in ("-- a note\nSHOW CACHES", "# a note\nSHOW CACHES", "SHOW CACHES -- a note",
                "/* a note */ SHOW CACHES"):
        pk = v.query(sql)
        ok(cp.err_of(pk) is None and cp.decode_text(pk, v._deprecate_eof())[0] ==
           ["query_id", "name", "query", "properties", "count"],
           "cache SQL beside a comment is the node's: %r" % sql, repr(pk[:1]))

    # Cache SQL is COM_QUERY only: as a prepared statement it is the upstream's.
    sid, _, _, pk = v.prepare("SHOW CACHES")
    ok(sid is None and cp.err_of(pk) is not None, "PREPARE 'SHOW CACHES' is answered by the upstream (an error)",
       repr(pk[:1]))
    ok(cp.srows(v, "SELECT 'ok after prepare'") == [("ok after prepare",)], "the session is still usable")

    # For the restart: two definitions to keep, one dropped.
    res = cp.table(v, "CREATE CACHE POLICY TTL 20 SECONDS REFRESH 4 SECONDS COALESCE 300 MILLISECONDS ALWAYS "
                      "keep_me FROM SELECT id, v FROM t84 WHERE id = 4")
    state["keep_id"] = res[0]["query_id"] if res else None
    cp.srows(v, "SELECT v FROM t84 WHERE id >= 2 ORDER BY v")
    p = proxied_id("ORDER BY v")
    res = cp.table(v, "CREATE CACHE UNTIL WRITE keep_from_id FROM %s" % p["query_id"]) if p else []
    state["keep2_id"] = res[0]["query_id"] if res else None
    cp.table(v, "CREATE CACHE drop_me FROM SELECT v FROM t84 WHERE id = 1")
    v.query("DROP CACHE drop_me")
    # Definitions whose text is awkward to keep on one line of caches.json: a
    # quoted name with a backtick, queries with -- and # comments that end
    # at a line break.
    for sql in ("CREATE CACHE 'odd`name' FROM SELECT id FROM t84 WHERE id = 3",
                "CREATE CACHE c_dash FROM SELECT id, v, id + 1 AS nx FROM t84 -- a comment\n WHERE id = 3",
                "CREATE CACHE c_hash FROM SELECT v AS hv FROM t84 # a note\n WHERE id > 3"):
        res = cp.table(v, sql)
        ok(len(res) == 1, "%r accepted" % sql, repr(res))
    state["caches"] = {k: dict(x, count=None) for k, x in caches().items()}
    ok(len(state["caches"]) == 5 and state["keep_id"] in state["caches"] and state["keep2_id"] in state["caches"],
       "five caches defined before the restart", repr(state["caches"]))


run("cache SQL part runs", basics)
with open(os.environ["STATE"], "w") as f:
    json.dump(state, f)
done_testing(always_zero=True)
PY
check "node still running" shoal_alive node

# ---------------------------------------------------------------- persistence
shoal_stop node
is "$node_STATUS" 0 "the node stops cleanly (SIGTERM)"
if [ -s "$DD/caches.json" ]; then
  ok "caches.json written in --data-dir ($(wc -l <"$DD/caches.json") lines)"
  diag_file "$DD/caches.json"
else
  not_ok "caches.json written in --data-dir"
fi
if shoal_start node2 --data-dir "$DD" --cache-ttl-ms 10000; then
  ok "node restarts with the same --data-dir"
else
  bail "node restarts with the same --data-dir"
fi

NODE_PORT=$node2_PORT STATE=$STATE "$PY" - <<'PY' || not_ok "python part crashed (after restart)"
import json
import os
import rawmysql as r
import cache_proto as cp
from taplib import ok, is_, run, done_testing

v = r.connect(int(os.environ["NODE_PORT"]))
state = json.load(open(os.environ["STATE"]))


def after_restart():
    now = {x["query_id"]: dict(x, count=None) for x in cp.table(v, "SHOW CACHES")}
    for qid, want in sorted(state["caches"].items()):
        is_(now.get(qid), want, "after the restart SHOW CACHES lists %s (%s) unchanged" % (want["name"], qid))
    extra = [x for k, x in now.items() if k not in state["caches"]]
    ok(not extra, "after the restart no cache that was not defined before", repr(extra))
    ok(not [x for x in now.values() if x["name"] == "drop_me"], "a dropped cache did not come back")
    h0 = cp.status(v)["Cache Hits"]
    cp.srows(v, "SELECT id, v FROM t84 WHERE id = 4")
    rows = cp.srows(v, "SELECT id, v FROM t84 WHERE id = 4")
    e = cp.explain(v)
    ok(rows == [("4", "four")] and e == ("readyset_shallow", "ok") and cp.status(v)["Cache Hits"] == h0 + 1,
       "a reloaded definition caches its query (explicit mode)", repr((rows, e)))


run("after-restart part runs", after_restart)
done_testing(always_zero=True)
PY
check "restarted node still running" shoal_alive node2
done_testing
