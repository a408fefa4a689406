"""ha_help.py: helpers for 90-ha-node.t (raw protocol result parsing, first
packets, HTTP status, process control of the test's private MariaDB)."""
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import rawmysql as r

MONITOR_TEXTS = [
    "SELECT @@global.read_only read_only",
    "SELECT @@global.innodb_read_only read_only",
    "SELECT @@global.super_read_only read_only",
    "SELECT @@global.read_only&@@global.innodb_read_only read_only",
    "SELECT @@global.read_only|@@global.innodb_read_only read_only",
]


def result(c, pkts):
    """A COM_QUERY answer -> ("err", code, state, msg), ("ok",) or
    ("rs", [(name, type)], [[cell...]...])."""
    p = pkts[0][1]
    if p[0] == 0xFF:
        return ("err",) + r.parse_err(p)
    if p[0] == 0x00:
        return ("ok",)
    ncols, _ = r.read_lenenc(p, 0)
    cols = []
    for i in range(ncols):
        d = pkts[1 + i][1]
        pos, strs = 0, []
        for _ in range(6):  # catalog schema table org_table name org_name
            n, pos = r.read_lenenc(d, pos)
            strs.append(d[pos:pos + n].decode())
            pos += n
        cols.append((strs[4], d[pos + 7]))  # 0x0c, charset(2), length(4), type
    start = 1 + ncols + (0 if c.caps & r.CLIENT_DEPRECATE_EOF else 1)
    rows = []
    for _, p in pkts[start:-1]:
        pos, row = 0, []
        for _ in range(ncols):
            if p[pos] == 0xFB:
                row.append(None)
                pos += 1
                continue
            n, pos = r.read_lenenc(p, pos)
            row.append(p[pos:pos + n].decode())
            pos += n
        rows.append(row)
    return ("rs", cols, rows)


def query(c, sql):
    return result(c, c.query(sql))


def status_map(c, sql="SHOW READYSET STATUS"):
    res = query(c, sql)
    if res[0] != "rs":
        return {"error": res}
    return {row[0]: row[1] for row in res[2]}


def first_packet(port, timeout=5.0):
    """What a new connection gets first: ("greeting",), ("err", code, state,
    msg), ("refused",) or ("closed", why)."""
    try:
        c = r.Conn("127.0.0.1", port, timeout)
    except ConnectionRefusedError:
        return ("refused",)
    except OSError as e:
        return ("closed", repr(e))
    try:
        _, p = c.read_packet()
        if p[:1] == b"\xff":
            return ("err",) + r.parse_err(p)
        return ("greeting",)
    except (EOFError, OSError) as e:
        return ("closed", repr(e))
    finally:
        c.close()


def http_get(port, path):
    """(status, body) of GET http://127.0.0.1:port/path."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=5) as f:
            return f.status, f.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def health(port):
    code, body = http_get(port, "/health")
    try:
        return code, json.loads(body)
    except ValueError:
        return code, {"body": body}


def ping(c):
    """COM_PING -> ("ok",) or ("err", code, state, msg)."""
    _, p = c.command(r.COM_PING, kind="one")[0]
    return ("err",) + r.parse_err(p) if p[0] == 0xFF else ("ok",)


def wait_for(fn, timeout, step=0.1):
    """Call fn until it returns a true value or timeout passes; its last value."""
    end = time.time() + timeout
    while True:
        v = fn()
        if v or time.time() >= end:
            return v
        time.sleep(step)


def mdb_start(srcdir, mdir, port, log):
    """scripts/start-mariadb DIR PORT; the server's pid, or None."""
    with open(log, "a") as out:
        rc = subprocess.call([os.path.join(srcdir, "scripts/start-mariadb"), mdir, str(port)],
                             stdout=out, stderr=out, stdin=subprocess.DEVNULL)
    try:
        with open(os.path.join(mdir, "pid")) as f:
            pid = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if rc == 0 and pid > 1 else None


def pid_gone(pid):
    """The process has exited: no such pid, or a zombie (its parent has not
    reaped it, and in a container whose first process never waits it stays
    one: os.kill(pid, 0) still succeeds on it)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[-1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def mdb_kill(pid, timeout=60):
    """SIGKILL the private MariaDB and wait until it is gone (pid_gone)."""
    if not pid or pid <= 1:
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    end = time.time() + timeout
    while time.time() < end and not pid_gone(pid):
        time.sleep(0.05)


def port_refuses(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    except OSError:
        return False
    return False
