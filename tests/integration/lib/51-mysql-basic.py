"""51-mysql-basic's PyMySQL part: one MySQL server, straight (DIRECT_PORT)
and through a node in writes mode with auto-cache (NODE_PORT), whose
client login is caching_sha2_password and which has a certificate. 23
checks (PY_CHECKS in the .t), numbered in lib.sh's sequence (taplib);
LABEL names the server in their descriptions.

The cache's counters come from SHOW SHOAL STATUS on the node; what the node
answers is compared with what the server answers to the same client."""
import os
import threading
import time

import pymysql
from pymysql.constants import CLIENT

import taplib
from taplib import ok, is_, run

DPORT = int(os.environ["DIRECT_PORT"])
VPORT = int(os.environ["NODE_PORT"])
LABEL = os.environ.get("LABEL", "MySQL")


def conn(port, **kw):
    args = dict(host="127.0.0.1", port=port, user="app", password="pw", database="shoaltest",
                charset="utf8mb4", connect_timeout=10, read_timeout=60, autocommit=True)
    args.update(kw)
    return pymysql.connect(**args)


def q(c, sql, args=None):
    with c.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchall() if cur.description else cur.rowcount


def outcome(c, sql):
    """rows, or the error's (code, message)"""
    try:
        return q(c, sql)
    except pymysql.MySQLError as e:
        return ("error",) + tuple(e.args)


def status(c):
    return {k: v for k, v in q(c, "SHOW SHOAL STATUS")}


def counter(c, name):
    return int(status(c)[name])


d, v = conn(DPORT), conn(VPORT)


def section_login():
    is_(v._auth_plugin_name, "caching_sha2_password",
        "%s: PyMySQL logs in to the node with caching_sha2_password, no TLS" % LABEL)
    is_(v.get_server_info(), d.get_server_info(), "%s: the greeting's version is the server's (%s)"
        % (LABEL, d.get_server_info()))
    t = conn(VPORT, ssl={"check_hostname": False}, ssl_verify_cert=False)
    cipher = t._sock.cipher() if hasattr(t._sock, "cipher") else None
    ok(cipher is not None and q(t, "SELECT 1") == ((1,),),
       "%s: PyMySQL logs in with TLS (%s)" % (LABEL, cipher[0] if cipher else "no cipher"))
    t.close()
    cid = q(v, "SELECT CONNECTION_ID()")[0][0]
    # docs/architecture.md, KILL: the greeting carries the node's session id
    # (from 1,000,000,001), CONNECTION_ID() is the upstream thread's
    ok(v.thread_id() > 1000000000 and cid < 1000000000,
       "%s: the greeting's id is the node's session id, CONNECTION_ID() the upstream's" % LABEL,
       "greeting %d, CONNECTION_ID() %d" % (v.thread_id(), cid))
    is_(outcome(v, "SELECT @@version, @@version_comment"), outcome(d, "SELECT @@version, @@version_comment"),
        "%s: SELECT @@version as the server answers it" % LABEL)


def section_cache():
    sql = "SELECT id, v FROM t51 WHERE id = 2"
    q(v, sql)
    hits = counter(v, "Cache Hits")
    got = q(v, sql)
    ok(counter(v, "Cache Hits") == hits + 1 and got == q(d, sql),
       "%s: a repeated SELECT is a cache hit with the server's answer" % LABEL, "got %r" % (got,))
    writes = counter(v, "Invalidations Write")
    is_(q(v, "UPDATE t51 SET v = 'two, changed' WHERE id = 2"), 1, "%s: an UPDATE through the node" % LABEL)
    got = q(v, sql)
    ok(got == ((2, "two, changed"),) and counter(v, "Invalidations Write") > writes,
       "%s: the UPDATE invalidated the cached answer" % LABEL, "got %r" % (got,))
    count = "SELECT COUNT(*) FROM t51"
    q(v, count)
    q(v, count)
    q(v, "INSERT INTO t51 VALUES (4, 'four')")
    is_(q(v, count), ((4,),), "%s: an INSERT through the node invalidates a cached COUNT(*)" % LABEL)


def write_then_read(name, sql, write):
    q(v, sql)
    q(v, sql)
    q(v, write)
    got, want = q(v, sql), q(d, sql)
    ok(got == want, "%s: %s: after %r the node answers as the server" % (LABEL, name, write),
       "via %r" % (got,), "direct %r" % (want,))


def section_catalog():
    write_then_read("a view's cached answer", "SELECT * FROM v51 ORDER BY id",
                    "UPDATE base51 SET n = n + 1 WHERE id = 1")
    write_then_read("a foreign key's ON DELETE CASCADE", "SELECT * FROM child51 ORDER BY id",
                    "DELETE FROM parent51 WHERE id = 2")
    write_then_read("a trigger's writes", "SELECT COUNT(*) FROM log51",
                    "UPDATE base51 SET n = n + 1 WHERE id = 2")


def section_session():
    q(v, "SET SESSION transaction_isolation = 'READ-COMMITTED'")
    is_(q(v, "SELECT @@transaction_isolation"), (("READ-COMMITTED",),),
        "%s: SET SESSION transaction_isolation holds" % LABEL)
    q(v, "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE")
    is_(q(v, "SELECT @@transaction_isolation"), (("SERIALIZABLE",),),
        "%s: SET SESSION TRANSACTION ISOLATION LEVEL holds" % LABEL)
    shows = ["SHOW TABLES", "SHOW CREATE TABLE t51", "SHOW COLUMNS FROM t51", "SHOW INDEX FROM t51"]
    got = [outcome(v, s) for s in shows]
    want = [outcome(d, s) for s in shows]
    ok(got == want, "%s: SHOW TABLES, CREATE TABLE, COLUMNS, INDEX as the server answers them" % LABEL,
       "via %r" % (got,), "direct %r" % (want,))
    errs = ["SELEC 1", "SELECT * FROM no_such_table"]
    is_([outcome(v, s) for s in errs], [outcome(d, s) for s in errs],
        "%s: syntax and unknown-table errors as the server's" % LABEL)


def multi(port, sql):
    c = conn(port, client_flag=CLIENT.MULTI_STATEMENTS)
    out = []
    with c.cursor() as cur:
        cur.execute(sql)
        while True:
            out.append(cur.fetchall())
            if not cur.nextset():
                break
    c.close()
    return out


def login_error(port, user, password):
    try:
        conn(port, user=user, password=password).close()
        return None
    except pymysql.MySQLError as e:
        return e.args


def section_more():
    sql = "SELECT 1; SELECT v FROM t51 WHERE id = 1; SET @m = 5; SELECT @m"
    is_(multi(VPORT, sql), multi(DPORT, sql), "%s: multi-statement results as the server's" % LABEL)
    is_(login_error(VPORT, "app", "wrong"), login_error(DPORT, "app", "wrong"),
        "%s: a wrong password: the server's 1045" % LABEL)
    t = conn(VPORT, autocommit=False)
    q(t, "UPDATE t51 SET v = 'in a transaction' WHERE id = 1")
    seen = q(d, "SELECT v FROM t51 WHERE id = 1")
    t.rollback()
    ok(seen == (("one",),) and q(v, "SELECT v FROM t51 WHERE id = 1") == (("one",),),
       "%s: an uncommitted UPDATE is not seen, and rolled back" % LABEL, "seen %r" % (seen,))
    t.close()
    lim = conn(VPORT, user="lim", password="limpw")
    q(v, "SELECT * FROM secret51")
    q(v, "SELECT * FROM secret51")
    got = outcome(lim, "SELECT * FROM secret51")
    ok(got[0] == "error" and got[1] == 1142 and outcome(lim, "SELECT v FROM t51 WHERE id = 3") == (("three",),),
       "%s: another login is refused (1142) the answer app has cached" % LABEL, "got %r" % (got,))
    lim.close()
    sql = "PREPARE s FROM 'SELECT v FROM t51 WHERE id = ?'; SET @i = 3; EXECUTE s USING @i; DEALLOCATE PREPARE s"
    is_(multi(VPORT, sql), multi(DPORT, sql), "%s: SQL PREPARE and EXECUTE as the server's" % LABEL)


def section_kill_and_size():
    victim, res = conn(VPORT), {}

    def sleeper():
        t0 = time.time()
        res["rows"] = outcome(victim, "SELECT SLEEP(20)")
        res["took"] = time.time() - t0
    th = threading.Thread(target=sleeper)
    th.start()
    time.sleep(1)
    q(v, "KILL QUERY %d" % victim.thread_id())
    th.join(30)
    ok(res.get("rows") == ((1,),) and res.get("took", 99) < 15,
       "%s: KILL QUERY with the greeting's id interrupts the session's query" % LABEL, "got %r" % (res,))
    victim.close()
    # (a recursive CTE stops at 1,000 rows by default: two of them joined)
    big = ("WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 1000) "
           "SELECT a.n, b.n, REPEAT('x', (a.n * b.n) % 200) FROM s a JOIN s b ON b.n <= 30 "
           "ORDER BY a.n, b.n")
    got, want = q(v, big), q(d, big)
    ok(len(got) == 30000 and got == want, "%s: a 30,000-row result as the server's" % LABEL,
       "%d rows via, %d direct" % (len(got), len(want)))


run("%s: the login section completes" % LABEL, section_login)
run("%s: the cache section completes" % LABEL, section_cache)
run("%s: the catalog section completes" % LABEL, section_catalog)
run("%s: the session section completes" % LABEL, section_session)
run("%s: the section of more completes" % LABEL, section_more)
run("%s: the KILL section completes" % LABEL, section_kill_and_size)
d.close()
v.close()
taplib.done_testing(always_zero=True)
