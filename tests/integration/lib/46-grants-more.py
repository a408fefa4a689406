"""46-grants-more: the python part of tests/integration/46-grants-more.t.

Environment: GM_PORT and GM_SOCK (a MariaDB with its binlog on), SHARED (a node with
cache_scope=shared), USER_NODE (cache_scope=user), WRITES (invalidation
writes); all with grant_check_ms 60000 and the logins gb/gbpw, gl/glpw.
"""
import os
import subprocess
import time
import urllib.request

import cache_proto as cp
import rawmysql as r
from taplib import diag, done_testing, is_, ok, run

GM = int(os.environ["GM_PORT"])
SHARED = int(os.environ["SHARED"])
USER_NODE = int(os.environ["USER_NODE"])
WRITES = int(os.environ["WRITES"])
LASTING = int(os.environ["LASTING"])
LASTING_M = int(os.environ["LASTING_M"])


def conn(port, user="app", pw="pw", db="gm1"):
    return r.connect(port, user=user, pw=pw, db=db, timeout=30)


def root(*sqls):
    """Statements as root, on the server's socket (the mariadb CLI)."""
    subprocess.run(["mariadb", "--no-defaults", "--socket=" + os.environ["GM_SOCK"], "-uroot",
                    "-e", ";".join(sqls)], check=True)


def outcome(c, sql):
    """('ok', first value) or ('err', code)."""
    try:
        return ("ok", cp.scalar(c, sql))
    except cp.SQLError as e:
        return ("err", e.code)


def attempt(port, user, pw, sql="SELECT CURRENT_USER()"):
    """A new login and one query: ('ok', value) or ('err', code)."""
    try:
        c = conn(port, user, pw)
    except r.ProtocolError as e:
        text = str(e)
        for code in (4151, 1045, 1044):
            if str(code) in text:
                return ("err", code)
        return ("err", text)
    try:
        return outcome(c, sql)
    finally:
        c.close()


def hit(c, sql):
    h0 = cp.status(c)["Cache Hits"]
    v = outcome(c, sql)
    return v, cp.status(c)["Cache Hits"] > h0


def poll(fn, want, timeout=10.0):
    t0 = time.time()
    got = None
    while time.time() - t0 < timeout:
        got = fn()
        if got == want:
            return time.time() - t0, got
        time.sleep(0.05)
    return None, got


def shared_scope():
    sel = "SELECT v FROM t"
    b = conn(SHARED, "gb", "gbpw", "gm1")
    outcome(b, sel)
    is_(hit(b, sel), (("ok", "1"), True), "cache_scope=shared: gb reads gm1.t, from the cache")
    a = conn(SHARED, db="gm2")
    outcome(a, sel)
    outcome(a, sel)
    cp.must_ok(b, "USE gm2")  # gb may use gm2 (it may read gm2.pub), not read gm2.t
    direct = conn(GM, "gb", "gbpw", "gm2")
    is_(outcome(b, sel), outcome(direct, sel),
        "  ... the same shape in gm2, cached by another user, is refused to it as directly (1142)")


def binlog_revoke():
    sel = "SELECT v FROM t WHERE v > 0"
    b = conn(USER_NODE, "gb", "gbpw")
    outcome(b, sel)
    if not hit(b, sel)[1]:
        diag("no hit before the REVOKE: %r" % (cp.explain(b),))
    root("REVOKE SELECT ON gm1.t FROM 'gb'@'%'")
    t, got = poll(lambda: outcome(b, sel), ("err", 1142))
    ok(t is not None, "a REVOKE made on the upstream reaches the node through the binlog: refused after "
       "%s s (verdicts hold 60 s)" % ("%.3f" % t if t is not None else "never"), repr(got))
    root("GRANT SELECT ON gm1.t TO 'gb'@'%'")
    t, got = poll(lambda: outcome(b, sel), ("ok", "1"))
    ok(t is not None, "  ... and the GRANT back: allowed again", repr(got))


def create_or_replace():
    sel = "SELECT v FROM gm1.t"
    g = conn(WRITES, "gl", "glpw", None)
    outcome(g, sel)
    hit(g, sel)
    w = conn(WRITES)
    try:
        cp.must_ok(w, "CREATE OR REPLACE USER 'gl'@'%' IDENTIFIED BY 'glpw'")
        direct = conn(GM, "gl", "glpw", None)
        is_(outcome(g, sel), outcome(direct, sel),
            "CREATE OR REPLACE USER through the node: the user's verdicts are forgotten (1142, as directly)")
    finally:
        root("GRANT SELECT ON gm1.* TO 'gl'@'%'", "GRANT gm_role TO 'gl'@'%'")


def pooled_logins():
    old = conn(USER_NODE, "gb", "gbpw")
    outcome(old, "SELECT 1")
    is_(attempt(USER_NODE, "gb", "gbpw"), ("ok", "gb@%"), "gb logs in through the node (its connection "
        "stays in the pool)")
    root("ALTER USER 'gb'@'%' ACCOUNT LOCK")
    try:
        want = attempt(GM, "gb", "gbpw")
        t, got = poll(lambda: attempt(USER_NODE, "gb", "gbpw"), want)
        ok(want == ("err", 4151) and t is not None,
           "after ACCOUNT LOCK on the upstream a new login through the node is refused, as directly (4151)",
           repr((want, got)))
    finally:
        root("ALTER USER 'gb'@'%' ACCOUNT UNLOCK")
    attempt(USER_NODE, "gb", "gbpw")
    root("ALTER USER 'gb'@'%' IDENTIFIED BY 'newpw'")
    try:
        want = attempt(GM, "gb", "gbpw")
        t, got = poll(lambda: attempt(USER_NODE, "gb", "gbpw"), want)
        ok(want == ("err", 1045) and t is not None,
           "after a password change on the upstream a new login with the old one is refused (1045)",
           repr((want, got)))
        is_(outcome(old, "SELECT 1"), ("ok", "1"), "  ... a session opened before it goes on, as directly")
    finally:
        root("ALTER USER 'gb'@'%' IDENTIFIED BY 'gbpw'")
    attempt(USER_NODE, "gl", "glpw", "SELECT CURRENT_ROLE()")
    root("SET DEFAULT ROLE gm_role FOR 'gl'@'%'")
    want = attempt(GM, "gl", "glpw", "SELECT CURRENT_ROLE()")
    t, got = poll(lambda: attempt(USER_NODE, "gl", "glpw", "SELECT CURRENT_ROLE()"), want)
    ok(want == ("ok", "gm_role") and t is not None,
       "after SET DEFAULT ROLE on the upstream a new session through the node has the new role",
       repr((want, got)))


def grant_checks():
    """shoal_cache_grant_checks_total of the LASTING node."""
    text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % LASTING_M, timeout=10).read().decode()
    return sum(int(float(line.split()[1])) for line in text.splitlines()
               if line.startswith("shoal_cache_grant_checks_total"))


def lasting_verdicts():
    sel = "SELECT v FROM t WHERE v >= 0"
    b = conn(LASTING, "gb", "gbpw")
    outcome(b, sel)
    hit(b, sel)
    g0, t0, hits = grant_checks(), time.time(), 0
    while time.time() - t0 < 1.5:
        hits += hit(b, sel)[1]
    ok(hits > 0 and grant_checks() == g0,
       "binlog mode: a verdict outlives grant_check_ms (200 ms) while no privilege changes: "
       "%d hits in 1.5 s, no check upstream" % hits, repr((hits, grant_checks() - g0)))
    changes = (
        ("CREATE USER 'gx'@'localhost' IDENTIFIED BY 'gxpw'", "CREATE USER"),
        ("INSERT INTO mysql.db (Host, Db, User, Select_priv) VALUES ('localhost', 'gm1', 'gx', 'Y')",
         "a row written to mysql.db (no FLUSH)"),
        ("CREATE ROLE gm_role2", "CREATE ROLE"),
        ("DELETE FROM mysql.db WHERE User = 'gx'; DROP ROLE gm_role2; DROP USER 'gx'@'localhost'",
         "DROP USER"),
    )
    for stmt, what in changes:
        g = grant_checks()
        root(stmt)
        t, got = poll(lambda: (outcome(b, sel), grant_checks() > g)[1], True)
        ok(t is not None, "%s on the upstream: the verdict is checked again at the next hit (after %s s)"
           % (what, "%.3f" % t if t is not None else "never"), repr(got))
    is_(outcome(b, sel), ("ok", "1"), "  ... and still allowed")


run("cache_scope=shared across schemas", shared_scope)
run("verdicts that last in binlog mode", lasting_verdicts)
run("REVOKE through the binlog", binlog_revoke)
run("CREATE OR REPLACE USER", create_or_replace)
run("pooled connections and account changes", pooled_logins)
done_testing(always_zero=True)
