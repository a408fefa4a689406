"""proxysql_help.py: a real ProxySQL (the binary named by $PROXYSQL_BIN) for
the integration tests, Shoal nodes started as plain processes, and a load
generator of client threads that go through ProxySQL.

ProxySQL runs in the foreground (-f --initial) with its own data directory
and config file, on the ports it is given (never 6032/6033), and is stopped
by its own pid. Nothing here is ProxySQL's code: it writes a config file in
ProxySQL's documented format and talks to the admin port over MySQL.
"""
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time

import pymysql

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts", "lib"))
from free_port import free_port  # noqa: E402  (below the ephemeral range: why there)




def port_open(port, host="127.0.0.1"):
    try:
        socket.create_connection((host, port), timeout=1).close()
        return True
    except OSError:
        return False


def wait_for(fn, timeout, step=0.1):
    """Call fn until it returns a true value or timeout passes; its last value."""
    end = time.time() + timeout
    while True:
        try:
            v = fn()
        except Exception:  # a probe that raises counts as "not yet"
            v = None
        if v or time.time() >= end:
            return v
        time.sleep(step)


def stop_pid(proc, timeout=20.0, sig=signal.SIGTERM):
    """Signal a child (Popen) and wait for it; SIGKILL after timeout. Its exit
    status (negative: killed by that signal)."""
    if proc is None or proc.poll() is not None:
        return None if proc is None else proc.returncode
    try:
        proc.send_signal(sig)
    except ProcessLookupError:
        pass
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def _cnf_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return '"%s"' % str(v).replace('"', '\\"')


def _cnf_rows(rows):
    out = []
    for r in rows:
        out.append("  { " + ", ".join("%s=%s" % (k, _cnf_value(v)) for k, v in r.items()) + " }")
    return "(\n" + ",\n".join(out) + "\n)"


class ProxySQL:
    """One ProxySQL instance: config file, data dir and log under workdir."""

    def __init__(self, name, workdir, servers=(), users=(), rules=(), peers=(),
                 variables=None, admin_variables=None, binary=None):
        self.name = name
        self.dir = os.path.join(workdir, name)
        self.bin = binary or os.environ.get("PROXYSQL_BIN", "")
        self.admin_port = free_port()
        self.mysql_port = free_port()
        self.servers, self.users, self.rules = list(servers), list(users), list(rules)
        self.peers = list(peers)
        self.variables = dict(variables or {})
        self.admin_variables = dict(admin_variables or {})
        self.proc = None
        self.log = os.path.join(self.dir, "proxysql.log")

    def config(self):
        admin = {"admin_credentials": "admin:admin;cluster:clusterpw",
                 "mysql_ifaces": "127.0.0.1:%d" % self.admin_port,
                 "cluster_username": "cluster", "cluster_password": "clusterpw"}
        admin.update(self.admin_variables)
        mysql = {"threads": 2, "interfaces": "127.0.0.1:%d" % self.mysql_port,
                 "monitor_username": "monitor", "monitor_password": "monitor",
                 "server_version": "10.11.6-MariaDB"}
        mysql.update(self.variables)
        parts = ['datadir="%s"' % self.dir,
                 "admin_variables=\n{\n" + "".join("  %s=%s\n" % (k, _cnf_value(v)) for k, v in admin.items()) + "}",
                 "mysql_variables=\n{\n" + "".join("  %s=%s\n" % (k, _cnf_value(v)) for k, v in mysql.items()) + "}"]
        for section, rows in (("mysql_servers", self.servers), ("mysql_users", self.users),
                              ("mysql_query_rules", self.rules), ("proxysql_servers", self.peers)):
            if rows:
                parts.append("%s=\n%s" % (section, _cnf_rows(rows)))
        return "\n".join(parts) + "\n"

    def start(self, timeout=30):
        os.makedirs(self.dir, exist_ok=True)
        for f in os.listdir(self.dir):  # a fresh start: no proxysql.db, stats or logs of a previous run
            if f.startswith("proxysql"):
                os.unlink(os.path.join(self.dir, f))
        cnf = os.path.join(self.dir, "proxysql.cnf")
        with open(cnf, "w") as f:
            f.write(self.config())
        out = open(self.log, "ab")
        self.proc = subprocess.Popen([self.bin, "-f", "--initial", "-c", cnf, "-D", self.dir],
                                     stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        out.close()
        if not wait_for(lambda: self.proc.poll() is None and self.admin_rows("SELECT 1"), timeout, 0.2):
            raise RuntimeError("ProxySQL %s: admin port %d not answering after %d s (log %s)"
                               % (self.name, self.admin_port, timeout, self.log))
        if not wait_for(lambda: port_open(self.mysql_port), timeout, 0.2):
            raise RuntimeError("ProxySQL %s: mysql port %d not listening" % (self.name, self.mysql_port))
        return self

    def stop(self, timeout=20):
        st = stop_pid(self.proc, timeout)
        self.proc = None
        return st

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def admin(self, user="admin", password="admin"):
        return pymysql.connect(host="127.0.0.1", port=self.admin_port, user=user, password=password,
                               autocommit=True, connect_timeout=5, read_timeout=20)

    def admin_rows(self, *stmts):
        """Run statements on the admin port; the rows of the last one."""
        c = self.admin()
        try:
            with c.cursor() as cur:
                rows = ()
                for s in stmts:
                    cur.execute(s)
                    rows = cur.fetchall()
                return rows
        finally:
            c.close()

    def servers_status(self, hostgroup):
        """{(host, port): status} of a hostgroup in ProxySQL's live pool."""
        rows = self.admin_rows("SELECT srv_host, srv_port, status FROM stats_mysql_connection_pool "
                               "WHERE hostgroup = %d" % hostgroup)
        return {(h, int(p)): s for h, p, s in rows}

    def client(self, user="app", password="pw", db="shoaltest", **kw):
        return pymysql.connect(host="127.0.0.1", port=self.mysql_port, user=user, password=password,
                               database=db, autocommit=True, connect_timeout=10, read_timeout=30, **kw)


class Node:
    """A Shoal node (src/shoal) on free ports, started and stopped by pid."""

    def __init__(self, name, workdir, upstream_url, extra=(), binary=None):
        self.name = name
        self.bin = binary or os.environ.get("SHOAL_BIN") or os.path.join(os.environ["SRCDIR"], "src/shoal")
        self.port, self.http_port, self.admin_port = free_port(), free_port(), free_port()
        self.upstream_url = upstream_url
        self.extra = list(extra)
        self.log = os.path.join(os.environ.get("SHOAL_LOG_DIR", workdir), "%s.log" % name)
        self.data_dir = os.path.join(workdir, name)
        self.proc = None

    def start(self, timeout=15):
        os.makedirs(self.data_dir, exist_ok=True)
        args = [self.bin, "--upstream-db-url", self.upstream_url, "--workers", "2",
                "--listen-address", "127.0.0.1:%d" % self.port,
                "--metrics-address", "127.0.0.1:%d" % self.http_port,
                "--admin-address", "127.0.0.1:%d" % self.admin_port,
                "--data-dir", self.data_dir] + self.extra
        out = open(self.log, "ab")
        out.write(("=== %s start %s\n" % (time.strftime("%F %T"), self.name)).encode())
        out.flush()
        self.proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        out.close()
        if not wait_for(lambda: self.proc.poll() is None and port_open(self.port)
                        and port_open(self.http_port), timeout, 0.1):
            raise RuntimeError("node %s did not start (log %s)" % (self.name, self.log))
        return self

    def stop(self, timeout=20, sig=signal.SIGTERM):
        st = stop_pid(self.proc, timeout, sig)
        self.proc = None
        return st

    def sessions_of(self, user):
        """The node's sessions logged in as user now (its status.json): unlike
        shoal_client_connections, not moved by ProxySQL's monitor, whose
        checks log in as the monitor user."""
        import json
        import urllib.request
        with urllib.request.urlopen("http://127.0.0.1:%d/status.json" % self.http_port, timeout=5) as f:
            users = json.loads(f.read().decode())["pool"]["users"]
        return sum(u["sessions"] for u in users if u["user"] == user)

    def metric(self, name, labels=""):
        """The sum of the samples of metric name whose labels contain the
        text labels (all of them when empty); None if there is none."""
        import urllib.request
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.http_port, timeout=5) as f:
            body = f.read().decode()
        total, found = 0.0, False
        for line in body.splitlines():
            if line.startswith("#"):
                continue
            key, _, value = line.rpartition(" ")
            metric, _, lab = key.partition("{")
            if metric == name and labels in lab:
                total += float(value)
                found = True
        return total if found else None

    @property
    def pid(self):
        return self.proc.pid if self.proc else None


KEYS = int(os.environ.get("PX_KEYS", "200"))   # the kv table's rows (PX_KEYS)


def mdb_exec(port, *stmts):
    """Statements on the private MariaDB as app (shoaltest)."""
    c = pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw", database="shoaltest",
                        autocommit=True)
    try:
        with c.cursor() as cur:
            for s in stmts:
                cur.execute(s)
    finally:
        c.close()


def prepare_upstream(port):
    """Table kv (id 1..KEYS, v 'v<id>') and ProxySQL's monitor user."""
    mdb_exec(port, "CREATE TABLE IF NOT EXISTS kv (id INT PRIMARY KEY, v VARCHAR(20))",
             "CREATE USER IF NOT EXISTS 'monitor'@'%' IDENTIFIED BY 'monitor'",
             "GRANT REPLICATION CLIENT ON *.* TO 'monitor'@'%'")
    mdb_exec(port, "REPLACE INTO kv VALUES " + ",".join("(%d,'v%d')" % (k, k) for k in range(1, KEYS + 1)))


def kv_query(rng):
    return "SELECT v FROM kv WHERE id = %d" % rng.randint(1, KEYS)


def kv_check(sql, rows):
    k = int(sql.rsplit(" ", 1)[1])
    return len(rows) == 1 and rows[0][0] == "v%d" % k


class Load:
    """Client threads, each with its own connection to ProxySQL, sending the
    query produced by make_query(rng) over and over and checking each answer
    with check(sql, rows). Counts answers and errors (an exception from the
    driver, or a wrong answer); after an error the thread reconnects, as an
    application would. Every error is recorded with its time."""

    def __init__(self, connect, make_query, check, threads=4, pause=0.0):
        self.connect, self.make_query, self.check = connect, make_query, check
        self.nthreads, self.pause = threads, pause
        self.lock = threading.Lock()
        self.answers = 0
        self.errors = []          # (time, repr)
        self.stop_ev = threading.Event()
        self.threads = []
        self.last_answer = [0.0] * threads

    def _run(self, i):
        rng = random.Random(i)
        conn = None
        while not self.stop_ev.is_set():
            sql = self.make_query(rng)
            try:
                if conn is None:
                    conn = self.connect()
                with conn.cursor() as cur:
                    cur.execute(sql)
                    rows = cur.fetchall()
                if not self.check(sql, rows):
                    raise AssertionError("wrong answer to %s: %r" % (sql, rows[:3]))
                with self.lock:
                    self.answers += 1
                self.last_answer[i] = time.time()
            except Exception as e:  # noqa: BLE001 - every failure is what we count
                with self.lock:
                    self.errors.append((time.time(), "%s: %r" % (sql[:60], e)))
                try:
                    if conn is not None:
                        conn.close()
                except Exception:
                    pass
                conn = None
                time.sleep(0.05)
            if self.pause:
                time.sleep(self.pause)
        if conn is not None:
            try:
                conn.close()
            except Exception:
                pass

    def start(self):
        for i in range(self.nthreads):
            t = threading.Thread(target=self._run, args=(i,), daemon=True)
            t.start()
            self.threads.append(t)
        return self

    def stop(self):
        self.stop_ev.set()
        for t in self.threads:
            t.join(60)

    def snapshot(self):
        with self.lock:
            return self.answers, len(self.errors)
