#!/usr/bin/env bash
# 20-pymysql: PyMySQL through the node versus straight to MariaDB: result
# metadata and rows, parameters, executemany, transactions, multi-statements,
# error codes and SQLSTATEs, wrong password, ping, select_db, a 100k-row result
# and a 10 MB BLOB.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# node starts, 58 checks of the python part, node still running
plan 60
load_types || bail "load types.sql"
if shoal_start node; then
  ok "node starts (port $node_PORT)"
else
  bail "node starts (port $node_PORT)"
fi
on_exit "mdb -e 'DROP TABLE IF EXISTS shoal_py_tx, shoal_py_blob, shoal_py_many'"

NODE_PORT=$node_PORT "$PY" - <<'PY'
import datetime, decimal, os, random, sys, threading
import pymysql
import pymysql.cursors
from pymysql.constants import CLIENT
import taplib
from taplib import ok, is_, diag, skip, run, node_ok

FAKE = os.environ.get("SHOAL_FAKE_DIRECT") == "1"
DPORT = int(os.environ["MDB_PORT"])
VPORT = int(os.environ["NODE_PORT"])

# Record the raw ERR packet of every error so that SQLSTATEs can be compared
# (PyMySQL parses and drops the SQLSTATE).
_last_err = {}
_orig_raise = pymysql.err.raise_mysql_exception
def _raise(data):
    _last_err["data"] = bytes(data)
    return _orig_raise(data)
pymysql.err.raise_mysql_exception = _raise

def sqlstate():
    d = _last_err.get("data", b"")
    return d[4:9].decode() if d[3:4] == b"#" else None

def conn(port, **kw):
    args = dict(host="127.0.0.1", port=port, user="app", password="pw",
                database="shoaltest", charset="utf8mb4", connect_timeout=10,
                read_timeout=30, write_timeout=30, binary_prefix=True, autocommit=True)
    args.update(kw)
    return pymysql.connect(**args)

def both(**kw):
    return conn(DPORT, **kw), conn(VPORT, **kw)

def fetch(c, sql, args=None):
    with c.cursor() as cur:
        cur.execute(sql, args)
        return (cur.description, cur.fetchall(), cur.rowcount,
                c.insert_id(), cur._result.warning_count if cur._result else None)

d, v = both()

# --- metadata and rows
def section_metadata():
    queries = [
        "SELECT * FROM shoal_types ORDER BY id",
        "SELECT id, c_decimal, c_float, c_double, c_bit64, c_json, c_geometry FROM shoal_types ORDER BY id",
        "SELECT c_date, c_time, c_datetime, c_timestamp, c_year FROM shoal_types ORDER BY id",
        "SELECT 1 AS one, NULL AS n, 'x' AS s, 1.5 AS f, CAST('abc' AS INTEGER) AS warn",
        "SELECT * FROM shoal_types WHERE 1 = 0",
        "SHOW COLUMNS FROM shoal_types",
        "SELECT @@character_set_client, @@character_set_results, @@collation_connection, @@autocommit, @@sql_mode",
    ]
    for q in queries:
        rd, rv = fetch(d, q), fetch(v, q)
        ok(rd[0] == rv[0], "description equal: %s" % q[:60], "direct: %r" % (rd[0],), "   via: %r" % (rv[0],))
        ok(rd[1:] == rv[1:], "rows, rowcount, insert id, warnings equal: %s" % q[:60],
           "direct: %r" % (rd[1:],)[:2000], "   via: %r" % (rv[1:],)[:2000])
    ok(len(fetch(d, queries[0])[1]) == 5, "types table has its 5 rows")

# --- parameterised queries
def section_parameters():
    params = [
        ("SELECT %s, %s, %s, %s", (1, "x 🐟 é", None, 2.5)),
        ("SELECT %s AS b, LENGTH(%s) AS l", (b"\x00\x01\xff'\"\\", b"\x00" * 1000)),
        ("SELECT %s AS dt, %s AS d, %s AS dec_", (datetime.datetime(2024, 2, 29, 12, 34, 56, 123456),
                                                   datetime.date(1999, 12, 31), decimal.Decimal("12345.678901"))),
        ("SELECT id, c_varchar FROM shoal_types WHERE id IN %s ORDER BY id", ((1, 3, 4),)),
        ("SELECT id FROM shoal_types WHERE c_varchar = %(s)s", {"s": "Shoal 🐟 café — 日本語 ✓ 😀 𝄞"}),
    ]
    for q, a in params:
        rd, rv = fetch(d, q, a), fetch(v, q, a)
        ok(rd == rv, "parameterised: %s" % q[:60], "direct: %r" % (rd,), "   via: %r" % (rv,))
    node_ok(lambda r: r == ((3,),), fetch(d, params[4][0], params[4][1])[1], fetch(v, params[4][0], params[4][1])[1],
            "utf8mb4 parameter matches the emoji row through the node")

# --- executemany
def section_executemany():
    def many(c):
        with c.cursor() as cur:
            cur.execute("CREATE TEMPORARY TABLE tm (id INT AUTO_INCREMENT PRIMARY KEY, a INT, s VARCHAR(40)) CHARACTER SET utf8mb4")
            n = cur.executemany("INSERT INTO tm (a, s) VALUES (%s, %s)", [(i, "row %d 🐟" % i) for i in range(1000)])
            first = c.insert_id()
            cur.execute("SELECT COUNT(*), SUM(a), MAX(id), GROUP_CONCAT(s ORDER BY id SEPARATOR '|') FROM tm")
            r = cur.fetchall()
            n2 = cur.executemany("UPDATE tm SET a = a + 1 WHERE id = %s", [(i,) for i in range(1, 51)])
            cur.execute("DROP TEMPORARY TABLE tm")
            return n, first, r, n2
    rd, rv = many(d), many(v)
    ok(rd == rv, "executemany: rowcounts, insert id and rows equal", "direct: %r" % (rd[:2],), "   via: %r" % (rv[:2],))
    node_ok(lambda r: r[0] == 1000, rd, rv, "executemany inserted 1000 rows through the node")
    node_ok(lambda r: r[3] == 50, rd, rv, "executemany of 50 UPDATEs reports 50 affected rows")

# --- autocommit off, commit and rollback (seen from a direct connection)
def section_transactions():
    with d.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS shoal_py_tx")
        cur.execute("CREATE TABLE shoal_py_tx (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB")
    def seen():
        with conn(DPORT) as o, o.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM shoal_py_tx")
            return cur.fetchone()[0]
    t = conn(VPORT, autocommit=False)
    is_(t.get_autocommit(), False, "autocommit off through the node")
    with t.cursor() as cur:
        cur.execute("SELECT @@autocommit")
        is_(cur.fetchone()[0], 0, "@@autocommit is 0 on the node's session")
        cur.execute("INSERT INTO shoal_py_tx VALUES (1, 'a')")
        is_(seen(), 0, "uncommitted insert not visible to another connection")
        cur.execute("SELECT COUNT(*) FROM shoal_py_tx")
        is_(cur.fetchone()[0], 1, "uncommitted insert visible in its own transaction")
        t.rollback()
        is_(seen(), 0, "rollback discarded the insert")
        cur.execute("INSERT INTO shoal_py_tx VALUES (2, 'b'), (3, 'c')")
        t.commit()
        is_(seen(), 2, "commit made two rows visible")
        t.autocommit(True)
        cur.execute("INSERT INTO shoal_py_tx VALUES (4, 'd')")
        is_(seen(), 3, "autocommit on again: insert visible at once")
        t.begin()
        cur.execute("DELETE FROM shoal_py_tx")
        t.rollback()
        is_(seen(), 3, "explicit begin + rollback kept the rows")
    t.close()

# --- multi-statements
def section_multi_statements():
    def multi(port, sql):
        c = conn(port, client_flag=CLIENT.MULTI_STATEMENTS)
        out = []
        try:
            with c.cursor() as cur:
                cur.execute(sql)
                while True:
                    out.append((cur.description, cur.fetchall(), cur.rowcount))
                    if not cur.nextset():
                        break
        except pymysql.MySQLError as e:
            out.append(("error", e.args, sqlstate()))
        # the connection must still be usable
        with c.cursor() as cur:
            cur.execute("SELECT 'alive'")
            out.append(cur.fetchall())
        c.close()
        return out
    for sql in ["SELECT 1; SELECT 2, 'b'", "SELECT 1 AS a; DO 1; SELECT 'x' AS b; SET @q = 1; SELECT @q",
                "SELECT 1; SELECT * FROM no_such_table; SELECT 3"]:
        rd, rv = multi(DPORT, sql), multi(VPORT, sql)
        ok(rd == rv, "multi-statement results equal: %s" % sql, "direct: %r" % (rd,), "   via: %r" % (rv,))
    node_ok(lambda r: len(r) == 3, multi(DPORT, "SELECT 1; SELECT 2, 'b'"), multi(VPORT, "SELECT 1; SELECT 2, 'b'"),
            "multi-statement through the node gives two result sets")

# --- errors: code, message and SQLSTATE
def section_errors():
    def error_of(c, sql):
        _last_err.clear()
        try:
            with c.cursor() as cur:
                cur.execute(sql)
            return None
        except pymysql.MySQLError as e:
            return (type(e).__name__, e.args, sqlstate())
    with d.cursor() as cur:
        cur.execute("CREATE TEMPORARY TABLE tdup (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO tdup VALUES (1)")
    with v.cursor() as cur:
        cur.execute("CREATE TEMPORARY TABLE tdup (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO tdup VALUES (1)")
    for sql, code, state in [("INSERT INTO tdup VALUES (1)", 1062, "23000"),
                             ("SELEC 1", 1064, "42000"),
                             ("SELECT * FROM no_such_table", 1146, "42S02")]:
        ed, ev = error_of(d, sql), error_of(v, sql)
        ok(ed == ev, "error equal for %r" % sql, "direct: %r" % (ed,), "   via: %r" % (ev,))
        node_ok(lambda e: e is not None and e[1][0] == code and e[2] == state, ed, ev,
                "through the node %r gives %d (%s)" % (sql, code, state))
    is_(fetch(v, "SELECT 'usable after errors'")[1], (("usable after errors",),), "connection usable after errors")

# --- wrong password
def section_wrong_password():
    def login_error(port, user="app", password="wrong"):
        _last_err.clear()
        try:
            conn(port, user=user, password=password).close()
            return None
        except pymysql.MySQLError as e:
            return (e.args, sqlstate())
    ed, ev = login_error(DPORT), login_error(VPORT)
    node_ok(lambda e: e is not None and e[0][0] == 1045 and e[1] == "28000", ed, ev,
            "wrong password through the node: 1045 (28000)")
    is_(ev, ed, "wrong password error equals MariaDB's")

# --- ping, select_db
def section_ping_select_db():
    try:
        v.ping(reconnect=False)
        ok(True, "ping through the node")
    except Exception as e:
        ok(False, "ping through the node", repr(e))
    for c in (d, v):
        c.select_db("sbtest")
    rd, rv = fetch(d, "SELECT DATABASE()"), fetch(v, "SELECT DATABASE()")
    node_ok(lambda r: r[1] == (("sbtest",),), rd, rv, "select_db (COM_INIT_DB) sbtest took effect through the node")
    ok(rd == rv, "SELECT DATABASE() after select_db equal")
    _last_err.clear()
    try:
        v.select_db("no_such_db")
        ev = None
    except pymysql.MySQLError as e:
        ev = (e.args, sqlstate())
    try:
        d.select_db("no_such_db")
        ed = None
    except pymysql.MySQLError as e:
        ed = (e.args, sqlstate())
    ok(ev is not None and ev == ed, "select_db of an unknown database: same error", "direct %r" % (ed,), "via %r" % (ev,))
    for c in (d, v):
        c.select_db("shoaltest")
    is_(fetch(v, "SELECT DATABASE()")[1], (("shoaltest",),), "select_db back to shoaltest")

# --- server info
def section_server_info():
    # MariaDB's greeting says "5.5.5-<version>": clients read it to tell
    # MariaDB from MySQL (without it, "10.11" reads as a MySQL version)
    up, got = d.get_server_info(), v.get_server_info()
    is_(got, up, "server version in the greeting is the upstream's exactly (%s)" % got)

# --- 100k rows, buffered and unbuffered
def section_big_result():
    big = "SELECT seq, MD5(seq), seq * 1.5, IF(seq % 7 = 0, NULL, REPEAT('r', seq % 50)) FROM seq_1_to_100000"
    rd, rv = fetch(d, big), fetch(v, big)
    ok(len(rv[1]) == 100000 and rd == rv, "100k-row result equal (buffered)", "direct %d rows, via %d rows" % (len(rd[1]), len(rv[1])))
    def unbuffered(port):
        c = conn(port, cursorclass=pymysql.cursors.SSCursor)
        with c.cursor() as cur:
            cur.execute(big)
            n, h = 0, 0
            for row in cur:
                n += 1
                h = hash((h, row))
        c.close()
        return n, h
    ud, uv = unbuffered(DPORT), unbuffered(VPORT)
    ok(ud == uv and uv[0] == 100000, "100k-row result equal (unbuffered SSCursor)", "direct %r via %r" % (ud, uv))

# --- 10 MB BLOB round trip
def section_blob():
    blob = random.Random(42).randbytes(10 * 1024 * 1024)
    with v.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS shoal_py_blob")
        cur.execute("CREATE TABLE shoal_py_blob (id INT PRIMARY KEY, b LONGBLOB)")
        cur.execute("INSERT INTO shoal_py_blob VALUES (1, %s)", (blob,))
        is_(cur.rowcount, 1, "10 MB BLOB inserted through the node")
    rd = fetch(d, "SELECT b, LENGTH(b), MD5(b) FROM shoal_py_blob WHERE id = 1")
    rv = fetch(v, "SELECT b, LENGTH(b), MD5(b) FROM shoal_py_blob WHERE id = 1")
    ok(rv[1] and rv[1][0][0] == blob, "10 MB BLOB read back through the node is identical",
       "len %r" % (len(rv[1][0][0]) if rv[1] else None,))
    ok(rd[1] and rd[1][0][0] == blob, "10 MB BLOB inserted through the node is intact in MariaDB")
    ok(rd == rv, "10 MB BLOB result (metadata and row) equal")

# --- concurrent sessions through the node are independent
def section_concurrent():
    errors = []
    def worker(i):
        try:
            c = conn(VPORT)
            with c.cursor() as cur:
                cur.execute("SET @me = %s", (i,))
                for _ in range(50):
                    cur.execute("SELECT @me, CONNECTION_ID() = CONNECTION_ID()")
                    r = cur.fetchone()
                    if r[0] != i:
                        errors.append("session %d saw @me=%r" % (i, r[0]))
                        break
            c.close()
        except Exception as e:
            errors.append("session %d: %r" % (i, e))
    ts = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    ok(not errors, "16 concurrent sessions keep their own user variables", *errors[:5])

run("section metadata completes", section_metadata)
run("section parameters completes", section_parameters)
run("section executemany completes", section_executemany)
run("section transactions completes", section_transactions)
run("section multi statements completes", section_multi_statements)
run("section errors completes", section_errors)
run("section wrong password completes", section_wrong_password)
run("section ping select db completes", section_ping_select_db)
run("section server info completes", section_server_info)
run("section big result completes", section_big_result)
run("section blob completes", section_blob)
run("section concurrent completes", section_concurrent)

d.close()
v.close()
taplib.done_testing(always_zero=True)
PY
pyrc=$?
[ $pyrc -eq 0 ] || not_ok "python part exited $pyrc (crashed)"
check "node still running" shoal_alive node
done_testing
