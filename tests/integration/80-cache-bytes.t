#!/usr/bin/env bash
# 80-cache-bytes: a cached answer is byte for byte what MariaDB sends.
# For four capability sets (with and without CLIENT_DEPRECATE_EOF and
# CLIENT_SESSION_TRACK), ~22 SELECTs over shoal_types and three small joined
# tables are run straight against MariaDB, then twice through an --auto-cache
# node (a miss that fills the cache, then a hit: EXPLAIN LAST STATEMENT and
# SHOW SHOAL STATUS must say so); the three raw responses (sequence ids
# included) must be equal. Then the binary protocol: COM_STMT_EXECUTE with
# int, string, NULL, double and DATETIME parameters, direct vs miss vs hit
# (and a hit with the types not resent). Then autocommit=0 sessions on a
# CREATE CACHE ... ALWAYS shape: every response, status flags included, must
# equal MariaDB's.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "cache byte-equality: needs a node (SHOAL_FAKE_DIRECT=1)"; fi
plan 339

load_types || bail "load types.sql"
mdb <<'SQL' || bail "create the join tables"
SET NAMES utf8mb4;
DROP TABLE IF EXISTS t80_a, t80_b, t80_c, t80_w;
CREATE TABLE t80_a (id INT PRIMARY KEY, name VARCHAR(40)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE t80_c (id INT PRIMARY KEY, label VARCHAR(40)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE t80_b (id INT PRIMARY KEY, a_id INT, c_id INT, qty INT, price DECIMAL(10,2)) ENGINE=InnoDB;
CREATE TABLE t80_w (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB;
INSERT INTO t80_a VALUES (1,'alpha'),(2,'béta'),(3,'gamma 🐟'),(4,NULL),(5,'epsilon');
INSERT INTO t80_c VALUES (1,'red'),(2,'green'),(3,'blue');
INSERT INTO t80_b VALUES (1,1,1,3,1.50),(2,1,2,7,2.25),(3,2,3,10,NULL),(4,3,1,1,9.99),
  (5,3,3,6,0.01),(6,9,2,4,5.00);
SQL
on_exit "mdb -e 'DROP TABLE IF EXISTS t80_a, t80_b, t80_c, t80_w'"

DD=$(mktemp -d)
on_exit "rm -rf '$DD'"
if shoal_start node --auto-cache --cache-ttl-ms 60000 --data-dir "$DD"; then
  ok "node starts with --auto-cache (port $node_PORT)"
else
  bail "node starts with --auto-cache (port $node_PORT)"
fi

NODE_PORT=$node_PORT "$PY" - <<'PY' || not_ok "python part crashed"
import os
import rawmysql as r
import cache_proto as cp
from taplib import ok, diag, run, done_testing

DPORT, VPORT = int(os.environ["MDB_PORT"]), int(os.environ["NODE_PORT"])

QUERIES = [
    "SELECT * FROM shoal_types ORDER BY id",
    "SELECT id, c_tinyint, c_tinyint_u, c_smallint, c_smallint_u, c_mediumint, c_int_u, c_bigint, c_bigint_u, c_decimal FROM shoal_types ORDER BY id",
    "SELECT id, c_float, c_double, c_bit8, c_bit64, c_bool FROM shoal_types WHERE id IN (1, 2, 3) ORDER BY id",
    "SELECT c_date, c_time, c_datetime, c_timestamp, c_year FROM shoal_types ORDER BY id DESC",
    "SELECT c_char, c_varchar, c_latin1, c_enum, c_set FROM shoal_types ORDER BY id",
    "SELECT c_binary, c_varbinary, c_tinyblob, LENGTH(c_blob), c_json FROM shoal_types ORDER BY id",
    "SELECT c_geometry, c_point, c_inet6, c_uuid FROM shoal_types ORDER BY id",
    "SELECT c_mediumtext, c_longblob, c_longtext FROM shoal_types WHERE id = 2",
    "SELECT id, c_varchar FROM shoal_types WHERE 1 = 0",
    "SELECT COUNT(*), SUM(c_int), MAX(c_varchar), MIN(c_date) FROM shoal_types",
    "SELECT c_enum, COUNT(*) AS n FROM shoal_types GROUP BY c_enum ORDER BY c_enum",
    "SELECT id, c_int * 2 AS dbl, CONCAT(c_char, '-', id) AS lbl FROM shoal_types ORDER BY id LIMIT 3",
    "SELECT id, c_text IS NULL AS t_null, CHAR_LENGTH(c_longtext) AS n FROM shoal_types ORDER BY id",
    "SELECT a.id, a.name, b.qty, c.label FROM t80_a a JOIN t80_b b ON b.a_id = a.id JOIN t80_c c ON c.id = b.c_id ORDER BY a.id, b.id",
    "SELECT a.id, a.name, b.qty, b.price FROM t80_a a LEFT JOIN t80_b b ON b.a_id = a.id ORDER BY a.id, b.id",
    "SELECT c.label, SUM(b.qty) AS total, COUNT(DISTINCT b.a_id) AS buyers FROM t80_b b JOIN t80_c c ON c.id = b.c_id GROUP BY c.label ORDER BY c.label",
    "SELECT id, name FROM t80_a WHERE id IN (SELECT a_id FROM t80_b WHERE qty > 5) ORDER BY id",
    "SELECT t.id, t.c_varchar, a.name FROM shoal_types t JOIN t80_a a ON a.id = t.id ORDER BY t.id",
    "SELECT id, name FROM t80_a WHERE id < 3 UNION ALL SELECT id, label FROM t80_c ORDER BY 1, 2",
    "WITH x AS (SELECT a_id, SUM(qty) AS s FROM t80_b GROUP BY a_id) SELECT a.name, x.s FROM t80_a a JOIN x ON x.a_id = a.id ORDER BY a.name",
    "SELECT b.id, b.price * b.qty AS amount, a.name FROM t80_b b RIGHT JOIN t80_a a ON a.id = b.a_id WHERE a.id <> 2 ORDER BY a.id, b.id",
    "SELECT seq, seq * seq AS sq FROM seq_1_to_3000",
]

CAPSETS = [
    ("DEPRECATE_EOF+SESSION_TRACK", r.BASE_CAPS | r.CLIENT_DEPRECATE_EOF),
    ("SESSION_TRACK only", r.BASE_CAPS),
    ("DEPRECATE_EOF only", (r.BASE_CAPS | r.CLIENT_DEPRECATE_EOF) & ~r.CLIENT_SESSION_TRACK),
    ("neither", r.BASE_CAPS & ~r.CLIENT_SESSION_TRACK),
]


def hits_misses(v):
    s = cp.status(v)
    return s["Cache Hits"], s["Cache Misses"]


def three_way(label, direct, miss, hit):
    """direct == miss == hit, else a diagnostic naming the first difference."""
    problems = []
    if direct != miss:
        problems.append("direct vs miss: " + (r.first_difference(direct, miss) or "?"))
    if direct != hit:
        problems.append("direct vs hit: " + (r.first_difference(direct, hit) or "?"))
    return ok(not problems, "%s: direct, miss and hit byte-identical" % label, *problems)


def hit_checks(label, v, before, after_miss, after_hit, expl):
    h0, m0 = before
    h1, m1 = after_miss
    h2, m2 = after_hit
    good = m1 == m0 + 1 and h1 == h0 and h2 == h1 + 1 and m2 == m1 and expl == ("readyset_shallow", "ok")
    return ok(good, "%s: first run a miss, second a hit (EXPLAIN %s/%s)" % (label, expl[0], expl[1]),
              "hits %d -> %d -> %d, misses %d -> %d -> %d, explain %r" % (h0, h1, h2, m0, m1, m2, expl))


# ---- text protocol ---------------------------------------------------------
def text_part(cname, caps):
    d = r.connect(DPORT, caps=caps)
    v = r.connect(VPORT, caps=caps)
    direct_errors = []
    for i, q in enumerate(QUERIES):
        label = "[%s] q%02d" % (cname, i + 1)
        a = d.query(q)
        if cp.err_of(a):
            direct_errors.append("%s: %r" % (q, cp.err_of(a)))
        s0 = hits_misses(v)
        b1 = v.query(q)
        s1 = hits_misses(v)
        b2 = v.query(q)
        e = cp.explain(v)
        s2 = hits_misses(v)
        three_way(label, a, b1, b2)
        hit_checks(label, v, s0, s1, s2, e)
    ok(not direct_errors, "[%s] no query failed on MariaDB (the comparison is of real results)" % cname,
       *direct_errors)
    d.close()
    v.close()


for cname, caps in CAPSETS:
    run("[%s] text protocol part runs" % cname, text_part, cname, caps)


# ---- binary protocol -------------------------------------------------------
STMTS = [
    ("SELECT ?, ?, ?, ?, ?",
     [[42, "héllo 🐟", None, 2.5, cp.DateTime(2024, 2, 29, 13, 14, 15, 123456)],
      [-7, "", None, -0.125, cp.DateTime(1999, 12, 31, 23, 59, 59)]]),
    ("SELECT id, c_int, c_varchar, c_double, c_datetime, c_decimal, c_blob, c_json, c_bit64, c_time "
     "FROM shoal_types WHERE id >= ? AND (c_varchar <> ? OR c_varchar IS NULL) AND (? IS NULL) "
     "AND (c_double IS NULL OR c_double <> ?) AND (c_datetime IS NULL OR c_datetime < ?) ORDER BY id",
     [[1, "zz", None, 0.5, cp.DateTime(2100, 1, 1)],
      [2, "a", None, -1.0, cp.DateTime(9999, 12, 31, 23, 59, 59, 999999)]]),
    ("SELECT a.name, b.qty, b.price, c.label FROM t80_a a JOIN t80_b b ON b.a_id = a.id "
     "JOIN t80_c c ON c.id = b.c_id WHERE a.id = ? OR a.name = ? OR b.price > ? ORDER BY b.id",
     [[1, "gamma 🐟", 9.5], [4, "nobody", 100.0]]),
]


def mask_id(pkts):
    seq, p = pkts[0]
    return [(seq, p[:1] + b"<id>" + p[5:])] + pkts[1:] if p[:1] == b"\x00" else pkts


def binary_part(cname, caps):
    d = r.connect(DPORT, caps=caps)
    v = r.connect(VPORT, caps=caps)
    for si, (sql, paramsets) in enumerate(STMTS):
        sd, _, _, pd = d.prepare(sql)
        sv, _, _, pv = v.prepare(sql)
        ok(sd is not None and mask_id(pd) == mask_id(pv),
           "[%s] stmt%d: PREPARE responses equal but for the statement id" % (cname, si + 1),
           r.first_difference(mask_id(pd), mask_id(pv)) or "prepare failed: %r" % (pd[:1],))
        if sd is None or sv is None:
            continue
        for pi, params in enumerate(paramsets):
            label = "[%s] stmt%d params%d" % (cname, si + 1, pi + 1)
            a = cp.execute(d, sd, params)
            s0 = hits_misses(v)
            b1 = cp.execute(v, sv, params)
            s1 = hits_misses(v)
            b2 = cp.execute(v, sv, params)
            e = cp.explain(v)
            s2 = hits_misses(v)
            ok(not cp.err_of(a), "%s: MariaDB executes it" % label, repr(cp.err_of(a)))
            three_way(label + " EXECUTE", a, b1, b2)
            hit_checks(label + " EXECUTE", v, s0, s1, s2, e)
        # Execute the last parameter set again without resending the types
        # (new-params-bound-flag 0): same answer, served from the cache.
        params = paramsets[-1]
        a = cp.execute(d, sd, params, send_types=False)
        h0, _ = hits_misses(v)
        b = cp.execute(v, sv, params, send_types=False)
        h1, _ = hits_misses(v)
        ok(a == b and h1 == h0 + 1,
           "[%s] stmt%d: EXECUTE without types resent is a byte-identical hit" % (cname, si + 1),
           "hits %d -> %d" % (h0, h1), r.first_difference(a, b) or "")
        d.close_stmt(sd)
        v.close_stmt(sv)
    d.close()
    v.close()


for cname, caps in CAPSETS:
    run("[%s] binary protocol part runs" % cname, binary_part, cname, caps)


# ---- autocommit=0 on an ALWAYS cache -------------------------------------
QA = "SELECT id, name FROM t80_a WHERE id <= 3 ORDER BY id"
SEQ = ["SET autocommit = 0", QA, QA, "INSERT INTO t80_w VALUES (1, 'x')", QA, "ROLLBACK", QA,
       "COMMIT", QA, "SET autocommit = 1", QA, "BEGIN", QA, "COMMIT", QA]


def autocommit_part(cname, caps):
    de = bool(caps & r.CLIENT_DEPRECATE_EOF)
    d = r.connect(DPORT, caps=caps)
    v = r.connect(VPORT, caps=caps)
    v.query(QA)                       # fill the entry for these capabilities
    direct = [d.query(s) for s in SEQ]
    d.query("ROLLBACK")
    via, hits = [], []
    for s in SEQ:
        h0, _ = hits_misses(v)
        via.append(v.query(s))
        hits.append(hits_misses(v)[0] - h0)
    v.query("ROLLBACK")
    for i, (s, a, b) in enumerate(zip(SEQ, direct, via)):
        fa, fb = cp.status_flags(a, de), cp.status_flags(b, de)
        extra = ""
        if s == QA:
            extra = " (a hit)" if hits[i] == 1 else " (NOT a hit)"
        ok(a == b and (s != QA or hits[i] == 1),
           "[%s] autocommit step %d %r%s: same bytes (status direct 0x%04x, via 0x%04x)"
           % (cname, i + 1, s[:40], extra, fa or 0, fb or 0),
           r.first_difference(a, b) or "", "cache hits moved by %d" % hits[i])
    d.close()
    v.close()


def make_always():
    v = r.connect(VPORT)
    res = cp.srows(v, "CREATE CACHE ALWAYS FROM " + QA)
    props = cp.srows(v, "SHOW CACHES WHERE query_id = '%s'" % res[0][0])
    v.close()
    return ok(props and "always" in props[0][3], "CREATE CACHE ALWAYS on the autocommit query",
              repr(res), repr(props))


if run("CREATE CACHE ALWAYS runs", make_always):
    for cname, caps in CAPSETS:
        run("[%s] autocommit part runs" % cname, autocommit_part, cname, caps)
done_testing(always_zero=True)
PY
check "node still running" shoal_alive node
done_testing
