#!/usr/bin/env bash
# 81-cache-keys: the same SELECT text under different session settings never
# gets another session's cached answer. For each case two settings A and B
# are chosen that make MariaDB answer the same query text differently (the
# test checks that they do). Through an --auto-cache node: a session with A
# fills the cache, then a session with B must get exactly MariaDB's B answer
# (raw bytes), then fresh A and B sessions (hits) and one session switching
# A -> B -> A must each get their own setting's answer.
#
# Cases: schema (USE, COM_INIT_DB, the login's database), character set
# (SET NAMES, the handshake's charset, character_set_results, collation),
# time_zone on a TIMESTAMP, sql_mode (PAD_CHAR_TO_FULL_LENGTH, ANSI_QUOTES,
# NO_BACKSLASH_ESCAPES), div_precision_increment, lc_time_names,
# sql_select_limit, and two MariaDB session variables that change a SELECT's
# answer: default_regex_flags and system_versioning_asof; the limits under
# which the server refuses a query (max_join_size, tmp_disk_table_size), and
# max_recursive_iterations. Last, a prepared
# statement, whose tables MariaDB resolves in the schema of PREPARE time,
# executed after a USE of another schema.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "cache keys: needs a node (SHOAL_FAKE_DIRECT=1)"; fi
plan 109

cleanup_sql="DROP DATABASE IF EXISTS t81_a; DROP DATABASE IF EXISTS t81_b;
DROP TABLE IF EXISTS shoaltest.t81_cs, shoaltest.t81_tz, shoaltest.t81_ch, shoaltest.t81_v, shoaltest.t81_big;"
on_exit "mdb -e \"$cleanup_sql\""
mdb <<SQL || bail "create the test schemas and tables"
SET NAMES utf8mb4;
$cleanup_sql
CREATE DATABASE t81_a; CREATE DATABASE t81_b;
CREATE TABLE t81_a.kt (id INT PRIMARY KEY, v VARCHAR(20));
CREATE TABLE t81_b.kt (id INT PRIMARY KEY, v VARCHAR(20));
INSERT INTO t81_a.kt VALUES (1, 'in a'), (2, 'also a');
INSERT INTO t81_b.kt VALUES (1, 'in b'), (2, 'also b'), (3, 'only b');
CREATE TABLE shoaltest.t81_cs (id INT PRIMARY KEY, v VARCHAR(40)) DEFAULT CHARSET=utf8mb4;
INSERT INTO shoaltest.t81_cs VALUES (1, 'héllo'), (2, 'Straße'), (3, 'ÄÖÜ £'), (4, 'plain');
CREATE TABLE shoaltest.t81_tz (id INT PRIMARY KEY, ts TIMESTAMP NULL);
SET time_zone = '+00:00';
INSERT INTO shoaltest.t81_tz VALUES (1, '2024-01-01 00:00:00'), (2, '2024-06-30 22:30:00');
CREATE TABLE shoaltest.t81_ch (id INT PRIMARY KEY, c CHAR(8));
INSERT INTO shoaltest.t81_ch VALUES (1, 'ab'), (2, 'xyz');
CREATE TABLE shoaltest.t81_v (id INT PRIMARY KEY, v INT) WITH SYSTEM VERSIONING;
INSERT INTO shoaltest.t81_v VALUES (1, 100);
CREATE TABLE shoaltest.t81_big (id INT PRIMARY KEY, b VARCHAR(2000));
INSERT INTO shoaltest.t81_big SELECT seq, REPEAT(CHAR(MOD(seq, 62) + 64), seq) FROM seq_1_to_2000;
SQL
# A point in time between the versioned row's two values.
sleep 1.1
ASOF=$(mdb -N -e "SELECT NOW(6)")
sleep 0.2
mdb -e "UPDATE shoaltest.t81_v SET v = 200 WHERE id = 1" || not_ok "update the versioned row"

DD=$(mktemp -d)
on_exit "rm -rf '$DD'"
if shoal_start node --auto-cache --cache-ttl-ms 60000 --data-dir "$DD"; then
  ok "node starts with --auto-cache (port $node_PORT)"
else
  bail "node starts with --auto-cache (port $node_PORT)"
fi

ASOF=$ASOF NODE_PORT=$node_PORT "$PY" - <<'PY' || not_ok "python part crashed"
import os
import rawmysql as r
import cache_proto as cp
from taplib import ok, diag, run, done_testing

DPORT, VPORT = int(os.environ["MDB_PORT"]), int(os.environ["NODE_PORT"])
ASOF = os.environ["ASOF"]
LATIN1_SWEDISH_CI = 8

# A setting is a list of steps: ("q", sql) | ("init_db", name); a case may
# also set login options for A / B: dict(db=..., charset=...).
CASES = [
    ("schema by USE", [("q", "USE t81_a")], [("q", "USE t81_b")], {}, {},
     "SELECT id, v FROM kt ORDER BY id"),
    ("schema by COM_INIT_DB", [("init_db", "t81_a")], [("init_db", "t81_b")], {}, {},
     "SELECT v, id FROM kt WHERE id > 0 ORDER BY id"),
    ("schema by the login's database", [], [], dict(db="t81_a"), dict(db="t81_b"),
     "SELECT COUNT(*), MAX(v) FROM kt"),
    ("SET NAMES utf8mb4 vs latin1", [("q", "SET NAMES utf8mb4")], [("q", "SET NAMES latin1")], {}, {},
     "SELECT id, v FROM shoaltest.t81_cs ORDER BY id"),
    ("handshake charset utf8mb4 vs latin1", [], [], dict(charset=r.UTF8MB4_GENERAL_CI),
     dict(charset=LATIN1_SWEDISH_CI),
     "SELECT v FROM shoaltest.t81_cs WHERE id < 4 ORDER BY id"),
    ("character_set_results latin1 vs NULL", [("q", "SET NAMES latin1")],
     [("q", "SET NAMES latin1"), ("q", "SET character_set_results = NULL")], {}, {},
     "SELECT v, CONCAT(v, '!') FROM shoaltest.t81_cs ORDER BY id DESC"),
    ("collation_connection bin vs general_ci", [("q", "SET NAMES utf8mb4 COLLATE utf8mb4_bin")],
     [("q", "SET NAMES utf8mb4 COLLATE utf8mb4_general_ci")], {}, {},
     "SELECT 'abc' = 'ABC', 'a' < 'B'"),
    ("time_zone +00:00 vs +05:00", [("q", "SET time_zone = '+00:00'")], [("q", "SET time_zone = '+05:00'")],
     {}, {}, "SELECT id, ts FROM shoaltest.t81_tz ORDER BY id"),
    ("sql_mode '' vs PAD_CHAR_TO_FULL_LENGTH", [("q", "SET sql_mode = ''")],
     [("q", "SET sql_mode = 'PAD_CHAR_TO_FULL_LENGTH'")], {}, {},
     "SELECT id, c, LENGTH(c) FROM shoaltest.t81_ch ORDER BY id"),
    ("sql_mode '' vs ANSI_QUOTES", [("q", "SET sql_mode = ''")], [("q", "SET sql_mode = 'ANSI_QUOTES'")],
     {}, {}, 'SELECT "c" FROM shoaltest.t81_ch ORDER BY id'),
    ("sql_mode '' vs NO_BACKSLASH_ESCAPES", [("q", "SET sql_mode = ''")],
     [("q", "SET sql_mode = 'NO_BACKSLASH_ESCAPES'")], {}, {},
     "SELECT 'a\\nb' AS s, LENGTH('a\\nb') AS n"),
    ("div_precision_increment 4 vs 9", [("q", "SET div_precision_increment = 4")], [("q", "SET div_precision_increment = 9")], {}, {},
     "SELECT 1 / 3, 2 / 7"),
    ("lc_time_names en_US vs de_DE", [("q", "SET lc_time_names = 'en_US'")], [("q", "SET lc_time_names = 'de_DE'")], {}, {},
     "SELECT DATE_FORMAT('2024-03-01', '%W %M'), MONTHNAME('2024-12-01')"),
    ("sql_select_limit default vs 1", [("q", "SET sql_select_limit = DEFAULT")], [("q", "SET sql_select_limit = 1")], {}, {},
     "SELECT id FROM shoaltest.t81_cs ORDER BY id"),
    ("default_regex_flags '' vs DOTALL", [("q", "SET default_regex_flags = ''")], [("q", "SET default_regex_flags = 'DOTALL'")], {}, {},
     "SELECT 'a\\nb' REGEXP 'a.b' AS m"),
    ("system_versioning_asof DEFAULT vs a past time", [("q", "SET system_versioning_asof = DEFAULT")],
     [("q", "SET system_versioning_asof = '%s'" % ASOF)], {}, {},
     "SELECT id, v FROM shoaltest.t81_v ORDER BY id"),
]


def session(port, setting, login):
    c = r.Conn("127.0.0.1", port)
    res = c.login("app", "pw", login.get("db", "shoaltest"), r.DEFAULT_CAPS,
                  login.get("charset", r.UTF8MB4_GENERAL_CI))
    if res[0] != "ok":
        raise r.ProtocolError("login refused: %r" % (res,))
    apply(c, setting)
    return c


def apply(c, setting):
    for kind, arg in setting:
        pk = c.command(r.COM_INIT_DB, arg) if kind == "init_db" else c.query(arg)
        if cp.err_of(pk):
            raise cp.SQLError(*cp.err_of(pk))


def hits(v):
    return cp.status(v)["Cache Hits"]


def one_case(name, set_a, set_b, login_a, login_b, q):
    # What MariaDB answers for each setting.
    d = session(DPORT, set_a, login_a)
    da = d.query(q)
    d.close()
    d = session(DPORT, set_b, login_b)
    db = d.query(q)
    d.close()
    if not ok(not cp.err_of(da) and not cp.err_of(db) and da != db,
              "%s: MariaDB answers the two settings differently (the case is real)" % name,
              "A: %r" % (cp.err_of(da) or da[-2:],), "B: %r" % (cp.err_of(db) or db[-2:],)):
        return
    # A fills; B must not get A's answer.
    va = session(VPORT, set_a, login_a)
    h0 = hits(va)
    got_a = va.query(q)
    h1 = hits(va)
    ok(got_a == da and h1 == h0, "%s: A's first answer (a miss) is MariaDB's A answer" % name,
       r.first_difference(da, got_a) or "", "hits %d -> %d" % (h0, h1))
    vb = session(VPORT, set_b, login_b)
    got_b = vb.query(q)
    ok(got_b == db, "%s: B after A gets MariaDB's B answer, not A's cached one" % name,
       r.first_difference(db, got_b) or "", "got A's answer: %s" % (got_b == da))
    # Fresh sessions: each must hit its own entry.
    for label, st, lg, want in (("A", set_a, login_a, da), ("B", set_b, login_b, db)):
        v = session(VPORT, st, lg)
        h0 = hits(v)
        got = v.query(q)
        h1 = hits(v)
        ok(got == want and h1 == h0 + 1, "%s: a new %s session gets its own answer from the cache" % (name, label),
           r.first_difference(want, got) or "", "hits %d -> %d" % (h0, h1))
        v.close()
    # One session switching settings (only for settings made by statements).
    if not login_a and not login_b:
        v = session(VPORT, [], {})
        seq = [("A", set_a, da), ("B", set_b, db), ("A", set_a, da)]
        bad = []
        for label, st, want in seq:
            apply(v, st)
            got = v.query(q)
            if got != want:
                bad.append("%s: %s" % (label, r.first_difference(want, got)))
        ok(not bad, "%s: one session switching A -> B -> A gets the matching answer each time" % name, *bad)
        v.close()
    va.close()
    vb.close()


for case in CASES:
    run("%s: runs" % case[0], one_case, *case)


def prepared_schema():
    """MariaDB resolves a prepared statement's tables in the schema current
    at PREPARE time. X prepares in t81_a, then USEs t81_b and executes; Y
    prepares and executes in t81_b. Y must get t81_b's rows. (Capabilities
    without SESSION_TRACK, so that only the rows and flags are compared.)"""
    caps = r.BASE_CAPS & ~r.CLIENT_SESSION_TRACK
    sql = "SELECT id, v FROM kt WHERE id >= ? ORDER BY id"

    def x_then_y(port):
        x = r.connect(port, db="t81_a", caps=caps)
        sx, _, _, _ = x.prepare(sql)
        cp.must_ok(x, "USE t81_b")
        ax = cp.execute(x, sx, [1])
        y = r.connect(port, db="t81_b", caps=caps)
        sy, _, _, _ = y.prepare(sql)
        ay = cp.execute(y, sy, [1])
        x.close()
        y.close()
        return ax, ay

    dx, dy = x_then_y(DPORT)
    if not ok(dx != dy and not cp.err_of(dx) and not cp.err_of(dy),
              "prepared in t81_a, executed after USE t81_b: MariaDB reads t81_a (differs from a t81_b session)",
              repr(dx[-3:]), repr(dy[-3:])):
        return
    vx, vy = x_then_y(VPORT)
    # Rows and metadata only for X: on this EXECUTE MariaDB sets
    # SERVER_SESSION_STATE_CHANGED even for a client without SESSION_TRACK,
    # and the relay clears it (a relay matter, not the cache's).
    ok(vx[:-1] == dx[:-1], "prepared statement: X (prepared in t81_a, executed in t81_b) gets t81_a's rows",
       r.first_difference(dx[:-1], vx[:-1]) or "")
    ok(vy == dy, "prepared statement: Y (prepared and executed in t81_b) gets t81_b's rows, not X's",
       r.first_difference(dy, vy) or "", "got X's answer: %s" % (vy == dx))


run("prepared statement schema case runs", prepared_schema)


def reset_connection():
    """COM_RESET_CONNECTION brings the session's variables back to their
    defaults: the cache keys of the next statements must follow (a +05:00
    answer must not be served to the reset session)."""
    q = "SELECT id, ts FROM shoaltest.t81_tz ORDER BY id"
    d = session(DPORT, [], {})
    want_default = d.query(q)
    d.close()
    d = session(DPORT, [("q", "SET time_zone = '+05:00'")], {})
    want_05 = d.query(q)
    d.close()
    if not ok(want_default != want_05, "reset case: MariaDB answers +05:00 and the default time zone differently"):
        return
    v = session(VPORT, [("q", "SET time_zone = '+05:00'")], {})
    first, again = v.query(q), v.query(q)
    ok(first == want_05 and again == want_05, "reset case: +05:00 answers before the reset (a miss, then a hit)")
    pk = v.command(0x1F)  # COM_RESET_CONNECTION
    ok(not cp.err_of(pk), "reset case: COM_RESET_CONNECTION answered OK", repr(pk))
    got = v.query(q)
    ok(got == want_default, "reset case: after COM_RESET_CONNECTION the session gets the default time zone's answer",
       r.first_difference(want_default, got) or "", "got the +05:00 answer: %s" % (got == want_05))
    v.close()


run("COM_RESET_CONNECTION case runs", reset_connection)


def default_twice(q):
    """A default session through the node asks q twice: (first answer,
    second answer, hits before and after the second)."""
    full = session(VPORT, [], {})
    whole = full.query(q)
    h0 = hits(full)
    again = full.query(q)
    h1 = hits(full)
    full.close()
    return whole, again, h0, h1


def recursion_limit():
    """max_recursive_iterations stops a recursive CTE short (warning 1931):
    a session with a low limit must get its own short answer, not the full
    one another session cached."""
    q = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 10) SELECT n FROM c ORDER BY n"
    low = [("q", "SET max_recursive_iterations = 3")]
    d = session(DPORT, low, {})
    want = d.query(q)
    d.close()
    whole, again, h0, h1 = default_twice(q)
    ok(h1 == h0 + 1 and again == whole and whole != want,
       "max_recursive_iterations: the default session's full answer is cached (a hit)",
       "hits %d -> %d" % (h0, h1))
    v = session(VPORT, low, {})
    got = v.query(q)
    v.close()
    ok(got == want, "max_recursive_iterations = 3: the session gets MariaDB's short answer, not the cached one",
       r.first_difference(want, got) or "")


run("max_recursive_iterations case runs", recursion_limit)


LIMITS = [
    ("max_join_size = 3 (sql_big_selects off)", "SET max_join_size = 3", 1104,
     "SELECT a.id, b.id FROM shoaltest.t81_cs a JOIN shoaltest.t81_cs b ORDER BY 1, 2"),
    ("tmp_disk_table_size = 1000000", "SET tmp_memory_table_size = 16384, tmp_disk_table_size = 1000000", 1114,
     "SELECT COUNT(*) AS c FROM shoaltest.t81_big GROUP BY b HAVING c > 1"),
]


def refusing_limit(name, setting, code, q):
    """A session limit under which the server refuses the query
    (sys_vars.max_join_size_func, tmp_disk_table_size_func): a session
    with it gets the server's error, not the answer another session
    cached."""
    d = session(DPORT, [("q", setting)], {})
    want = cp.err_of(d.query(q))
    d.close()
    whole, again, h0, h1 = default_twice(q)
    ok(want and want[0] == code and not cp.err_of(whole) and h1 == h0 + 1 and again == whole,
       "%s: MariaDB refuses it (%s); the default session's answer is cached (a hit)" % (name, code),
       "direct: %r" % (want,), "hits %d -> %d" % (h0, h1))
    v = session(VPORT, [("q", setting)], {})
    got = cp.err_of(v.query(q))
    v.close()
    ok(got == want, "%s: the session gets MariaDB's error, not the cached answer" % name,
       "got %r" % (got,))


for case in LIMITS:
    run("%s: runs" % case[0], refusing_limit, *case)
done_testing(always_zero=True)
PY
check "node still running" shoal_alive node
done_testing
