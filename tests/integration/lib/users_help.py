"""users_help.py: helpers for 44-users.t and 45-grants.t: run a statement
through a node or straight on the private MariaDB as a given user, and get
the rows or the error back in one comparable form; root on the socket; the
upstream's processlist; the node's admin and metrics."""
import os
import time
import urllib.request

import pymysql

MDB_PORT = int(os.environ.get("MDB_PORT", "13306"))
MDB_SOCK = os.environ.get("MDB_SOCK", "/tmp/mdb/sock")


def connect(port, user, pw, db=None, **kw):
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=pw,
                           database=db, connect_timeout=10, read_timeout=30,
                           autocommit=True, **kw)


def run(conn, sql):
    """("rows", [...]) or ("err", code, message) for one statement."""
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return ("rows", [list(r) for r in cur.fetchall()])
    except pymysql.err.MySQLError as e:
        return ("err", e.args[0], e.args[1] if len(e.args) > 1 else "")


def login(port, user, pw, db=None):
    """A connection, or ("err", code, message) if the login fails."""
    try:
        return connect(port, user, pw, db)
    except pymysql.err.MySQLError as e:
        return ("err", e.args[0], e.args[1] if len(e.args) > 1 else "")


def once(port, user, pw, sql, db=None):
    """Log in, run sql, close: the rows or the error (login errors too)."""
    c = login(port, user, pw, db)
    if isinstance(c, tuple):
        return c
    try:
        return run(c, sql)
    finally:
        c.close()


def norm(res):
    """Errors compared by code and the text without the client address."""
    if res[0] == "err":
        return ("err", res[1], res[2].replace("'127.0.0.1'", "'HOST'").replace("'localhost'", "'HOST'"))
    return res


def root(sql):
    c = pymysql.connect(unix_socket=MDB_SOCK, user="root", autocommit=True)
    try:
        with c.cursor() as cur:
            for stmt in [s for s in sql.split(";\n") if s.strip()]:
                cur.execute(stmt)
            return cur.fetchall()
    finally:
        c.close()


def upstream_sessions(user):
    """Connections the upstream has open for user."""
    rows = root("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = '%s'" % user)
    return int(rows[0][0])


def wait_for(cond, seconds=10.0, step=0.1):
    end = time.time() + seconds
    while time.time() < end:
        if cond():
            return True
        time.sleep(step)
    return cond()


def admin(port, sql, user="admin", pw="admin"):
    c = pymysql.connect(host="127.0.0.1", port=port, user=user, password=pw, autocommit=True)
    try:
        out = []
        with c.cursor() as cur:
            for stmt in [s for s in sql.split(";\n") if s.strip()]:
                cur.execute(stmt)
                out = cur.fetchall()
        return out
    finally:
        c.close()


def metric(hport, name):
    """The value of an unlabelled sample in /metrics (0 if absent)."""
    body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % hport, timeout=5).read().decode()
    for line in body.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0
