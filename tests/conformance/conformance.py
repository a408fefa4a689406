#!/usr/bin/python3
"""tests/conformance/conformance.py: MariaDB's own test cases, run directly
against a MariaDB server and through a Shoal node, compared byte for byte.

Each case of the list is run with `mariadb-test --record` (as mtr runs it:
the same environment variables, a client defaults file, include paths), once
straight to the server and once through a node started for the run, in the
text protocol, with --ps-protocol and with --cursor-protocol (every
SELECT through a server-side cursor: COM_STMT_EXECUTE with
CURSOR_TYPE_READ_ONLY, then COM_STMT_FETCH). The two result files must be
identical. Between runs the server is brought back to its starting state
(databases, users, global variables), so a case that fails half-way does
not disturb the next one.

Subcommands (see docs/conformance.md):

  run     run a list of cases; writes DIR/results.jsonl, DIR/summary.md and
          the two outputs of every run under DIR/<protocol>/<case>.{direct,node}
          (DIR is --out). --tap prints TAP (one test per case and protocol).
          --protocol: text, ps, cursor, both (text and ps: the default) or
          all (the three).
  select  pick deterministic cases from suites: a candidate is kept when
          it completes directly and two direct runs give the same bytes, in
          both protocols.

--mysql runs MySQL 9.7's mysqltest and cases (Debian's mysql-testsuite)
the same way, in the chroot of scripts/lib/mysql.sh, against MySQL 9.7
servers started there (MySQLMode, MySQLServer; docs/conformance.md,
MySQL mode); `select --mysql` keeps a case whose one direct text run
gives its own .result.

The server is either started here (scripts/start-mariadb on a free port,
data under --server-dir) or an already running one (--server-port with
--server-socket). The node is src/shoal (--shoal) started with
--node-args appended to its command line, and restarted if it dies.
"""

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

import pymysql

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.normpath(os.path.join(HERE, "..", ".."))
MTR_DIR = "/usr/share/mysql/mysql-test"
CHARSETS_DIR = "/usr/share/mysql/charsets"

# Server options: mtr's defaults (include/default_mysqld.cnf) that change
# what cases print, so that the cases run as under mtr.
SERVER_ARGS = [
    "--character-set-server=latin1",
    "--collation-server=latin1_swedish_ci",
    "--local-infile=1",
    "--log-bin-trust-function-creators=1",
    "--key-buffer-size=1M",
    "--sort-buffer-size=256K",
    "--max-heap-table-size=1M",
    "--disable-getopt-prefix-matching",
    "--open-files-limit=4096",
    "--plugin-maturity=unknown",
    "--default-storage-engine=myisam",
    "--use-stat-tables=preferably",
    "--histogram-type=json_hb",
    "--log-output=file",
]

# The binary log, as a node's upstream in binlog invalidation mode needs it
# (issue #12): row format, a server id. Only with --binlog (the AUTO_CACHE
# passes): it changes what some cases give directly (docs/conformance.md).
# Both the direct and the node runs of a pass use this same server.
BINLOG_ARGS = ["--log-bin=mysqld-bin", "--binlog-format=ROW", "--server-id=1"]

PROTOCOLS = ("text", "ps", "cursor")
# what --protocol names: one protocol, or a set of them
PROTOCOL_SETS = {"both": ("text", "ps"), "all": PROTOCOLS}
# the determinism check of `select`: a case kept runs alike twice in each
SELECT_PROTOCOLS = PROTOCOLS
PROTOCOL_NAMES = {"text": "text", "ps": "--ps-protocol", "cursor": "--cursor-protocol"}


class MySQLMode:
    """--mysql: MySQL's own mysqltest and cases (Debian's mysql-testsuite)
    from the MySQL 9.7 chroot of scripts/lib/mysql.sh, against private
    MySQL 9.7 servers started in that chroot. mysqltest and the clients a
    case runs ($MYSQL, $MYSQL_DUMP, ...) run inside the chroot too (it
    shares the host's network); the chroot's paths are what they see,
    ROOT + path what the harness reads."""

    TEST_DIR = "/usr/lib/mysql-test"
    MYSQLTEST = "/usr/lib/mysql-test/bin/mysqltest"
    CHARSETS_DIR = "/usr/share/mysql/charsets"
    # mtr's options (include/default_mysqld.cnf, lib/My/ConfigFactory.pm)
    # that change what cases print or whether they run; the performance
    # schema's sizes and instruments are left at the server's defaults.
    # Name resolution is on, as under mtr (MySQLServer.start): a login
    # from 127.0.0.1 is then root@localhost (the chroot's /etc/hosts says
    # so), which is what the cases print.
    SERVER_ARGS = ["--explain-format=TRADITIONAL_STRICT", "--log-output=file",
                   "--log-bin-trust-function-creators=1",
                   "--connect-timeout=60", "--innodb-buffer-pool-size=24M",
                   "--innodb-redo-log-capacity=10M", "--log-error-verbosity=3"]
    # mtr's time zone for the server and the clients
    TZ = "GMT-3"

    def __init__(self):
        self.on = False
        self.root = None

    def host(self, path):
        """A chroot path as the host sees it."""
        return self.root + path


MYSQL = MySQLMode()


def log(msg):
    print("== " + msg, file=sys.stderr, flush=True)


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "lib"))
from free_port import bindable as port_free, free_port as _free_port  # noqa: E402  (below the ephemeral range: why there)

_port_lock = threading.Lock()


def free_port():
    """free_port.py's pick, one worker thread at a time (it remembers its
    picks in a set that two threads must not fill at once)."""
    with _port_lock:
        return _free_port()


# ---------------------------------------------------------------- cases

def case_paths(case):
    """'main.func_analyse' or 'compat/oracle.sp-cursor' -> (test file, suite dir).
    Suite 'shoal' is this directory's own cases (tests/conformance/shoal).
    In MySQL mode the paths are the chroot's (as mysqltest sees them):
    main is t/ and r/ of the mysql-test directory, a suite suite/NAME/t."""
    suite, _, name = case.partition(".")
    if MYSQL.on:
        sdir = MYSQL.TEST_DIR if suite == "main" else os.path.join(MYSQL.TEST_DIR, "suite", suite)
        return os.path.join(sdir, "t", name + ".test"), sdir
    if suite == "shoal":
        sdir = os.path.join(HERE, "shoal")
        return os.path.join(sdir, name + ".test"), sdir
    if suite == "main":
        sdir = os.path.join(MTR_DIR, "main")
        return os.path.join(sdir, name + ".test"), sdir
    sdir = os.path.join(MTR_DIR, "suite", suite)
    tdir = os.path.join(sdir, "t") if os.path.isdir(os.path.join(sdir, "t")) else sdir
    return os.path.join(tdir, name + ".test"), sdir


def result_path(case):
    """MySQL mode: the case's own .result, as a host path."""
    test, sdir = case_paths(case)
    return MYSQL.host(os.path.join(sdir, "r", os.path.basename(test)[:-5] + ".result"))


def read_case_list(path):
    cases = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                cases.append(line.split()[0])
    return cases


# ---------------------------------------------------------------- server

class Server:
    """A MariaDB for the harness: started here, or one already running."""

    def __init__(self, args):
        self.started = False
        self.keep = args.keep_server
        self.binlog = args.binlog
        self.pid = None
        self.conn = None  # root's connection for the resets (query())
        self.vardir = os.path.abspath(os.path.join(args.out, "var"))
        if args.server_port:
            self.port = args.server_port
            self.sock = args.server_socket
            self.dir = None
        else:
            # mtr's layout: cases name files as ../../std_data/... from the
            # data directory, and secure_file_priv is the vardir
            self.dir = os.path.join(self.vardir, "mysqld.1")
            self.sock = os.path.join(self.dir, "sock")
            self.port = None

    def running(self):
        pid = read_pid(os.path.join(self.dir, "pid"))
        port = read_pid(os.path.join(self.dir, "port"))
        if not pid or not port or not os.path.exists("/proc/%d" % pid):
            return False
        r = subprocess.run(["mariadb-admin", "--no-defaults", "--socket=" + self.sock, "-uroot", "ping"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            return False
        self.pid, self.port = pid, port
        return True

    def start(self):
        for d in ("tmp", "log"):
            os.makedirs(os.path.join(self.vardir, d), exist_ok=True)
        if not os.path.isdir(os.path.join(self.vardir, "std_data")):
            shutil.copytree(os.path.join(MTR_DIR, "std_data"), os.path.join(self.vardir, "std_data"),
                            symlinks=True)
        if self.dir is None:
            return
        os.makedirs(self.dir, exist_ok=True)
        if self.running():
            if self.binlog_on() == self.binlog:
                log("reusing the MariaDB on port %d (pid %d)" % (self.port, self.pid))
                self.started = True
                return
            log("the running MariaDB has log_bin %s: starting it again" % ("off" if self.binlog else "on"))
            stop_pid(self.pid, 60)
        old_port = read_pid(os.path.join(self.dir, "port"))
        self.port = old_port if old_port and port_free(old_port) else free_port()
        env = dict(os.environ)
        env["MARIADB_EXTRA_ARGS"] = " ".join(SERVER_ARGS + (BINLOG_ARGS if self.binlog else []) +
                                             ["--secure-file-priv=" + self.vardir,
                                                            "--tmpdir=" + os.path.join(self.vardir, "tmp")])
        pidfile = os.path.join(self.dir, "pid")
        if os.path.exists(pidfile):
            stop_pid(read_pid(pidfile), 60)
            os.unlink(pidfile)
        with open(os.path.join(self.dir, "start.out"), "w") as out:
            rc = subprocess.call([os.path.join(SRCDIR, "scripts", "start-mariadb"), self.dir,
                                  str(self.port)], stdout=out, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        if rc != 0:
            raise SystemExit("conformance: MariaDB did not start (see %s/error.log)" % self.dir)
        self.pid = read_pid(pidfile)
        with open(os.path.join(self.dir, "port"), "w") as f:
            f.write("%d\n" % self.port)
        self.started = True

    def ensure(self):
        """Start the server again if a case stopped it (SHUTDOWN, a crash).
        True when it had to be restarted."""
        if self.dir is None or self.running():
            return False
        log("the MariaDB is gone: starting it again")
        self.start()
        self.prepare()
        return True

    def binlog_on(self):
        return self.sql("SELECT @@log_bin")[0][0] == "1"

    def stop(self):
        self.close_conn()
        if self.started and self.pid and not self.keep:
            stop_pid(self.pid, 60)

    def sql(self, query, db=None):
        """Run SQL as root over the socket; returns rows (tab-separated)."""
        cmd = ["mariadb", "--no-defaults", "--socket=" + self.sock, "-uroot", "-N", "-B",
               "--default-character-set=utf8mb4"]
        if db:
            cmd.append(db)
        r = subprocess.run(cmd, input=query.encode(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.decode(errors="replace").strip())
        return [ln.split("\t") for ln in r.stdout.decode(errors="replace").splitlines()]

    def query(self, stmt):
        """One statement as root over the socket, on a connection kept
        for the whole reset (a reset runs a dozen statements twice per
        run: a client process for each cost about a second a run), closed
        at its end. Values come
        back as they are (no -B escaping); the connection is opened again
        once if the server restarted. Raises RuntimeError on a MariaDB
        error, as sql() does."""
        for attempt in (0, 1):
            try:
                if self.conn is None:
                    self.conn = pymysql.connect(unix_socket=self.sock, user="root", charset="utf8mb4",
                                                autocommit=True, read_timeout=120, write_timeout=120)
                with self.conn.cursor() as cur:
                    cur.execute(stmt)
                    return [["" if v is None else str(v) for v in row] for row in (cur.fetchall() or ())]
            except pymysql.err.OperationalError as e:
                lost = e.args and e.args[0] in (2006, 2013, 2003, 2002)
                if lost and attempt == 0:
                    self.close_conn()
                    continue
                raise RuntimeError(str(e))
            except pymysql.err.MySQLError as e:
                raise RuntimeError(str(e))
        return []

    def close_conn(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # a dead connection: nothing to close
                pass
            self.conn = None

    def prepare(self):
        """The schemas mtr's bootstrap makes: test, and mtr.add_suppression."""
        self.sql("CREATE DATABASE IF NOT EXISTS test; CREATE DATABASE IF NOT EXISTS mtr;")
        self.sql("CREATE TABLE IF NOT EXISTS test_suppressions (pattern VARCHAR(255)) ENGINE=MyISAM;"
                 "CREATE OR REPLACE DEFINER=root@localhost PROCEDURE add_suppression(pattern VARCHAR(255))"
                 " INSERT INTO test_suppressions (pattern) VALUES (pattern);", db="mtr")
        self.baseline = self.snapshot()
        self.close_conn()

    def remove_leftovers(self):
        """Files a case left: in the test schema's directory (SELECT ... INTO
        OUTFILE; DROP DATABASE leaves files it does not know) and in the
        vardir's tmp."""
        paths = [os.path.join(self.vardir, "tmp")]
        if self.dir:
            paths.append(os.path.join(self.dir, "data", "test"))
        for d in paths:
            if not os.path.isdir(d):
                continue
            for f in os.listdir(d):
                p = os.path.join(d, f)
                if os.path.isdir(p) and not os.path.islink(p):
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    try:
                        os.unlink(p)
                    except OSError:
                        pass
        if self.dir and os.path.isdir(os.path.join(self.dir, "data", "test")):
            os.rmdir(os.path.join(self.dir, "data", "test"))

    def snapshot(self):
        dbs = {r[0] for r in self.query("SELECT schema_name FROM information_schema.schemata")}
        users = {(r[0], r[1]) for r in self.query("SELECT user, host FROM mysql.global_priv")}
        gvars = {r[0]: (r[1] if len(r) > 1 else "") for r in self.query("SHOW GLOBAL VARIABLES")}
        return {"dbs": dbs, "users": users, "vars": gvars}

    def reset(self):
        """Back to the baseline: what a case (maybe failed half-way) left."""
        now = self.snapshot()
        b = self.baseline
        stmts = []
        for d in sorted(now["dbs"] - b["dbs"]):
            stmts.append("DROP DATABASE IF EXISTS `%s`" % d.replace("`", "``"))
        stmts.append("DROP DATABASE IF EXISTS test")
        stmts.append("CREATE DATABASE test")
        for u, h in sorted(now["users"] - b["users"]):
            stmts.append("DROP USER IF EXISTS '%s'@'%s'" % (u.replace("'", "''"), h.replace("'", "''")))
        changed = [k for k, v in now["vars"].items() if k in b["vars"] and b["vars"][k] != v]
        for k in changed:
            if k in VOLATILE_VARS:
                continue
            v = b["vars"][k]
            lit = v if re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", v) else "'%s'" % v.replace("\\", "\\\\").replace("'", "''")
            stmts.append("SET GLOBAL %s = %s" % (k, lit))
        for s in stmts:
            try:
                self.query(s)
            except RuntimeError:
                if s == "DROP DATABASE IF EXISTS test":
                    # files the server does not know keep the directory
                    self.remove_leftovers()
                    try:
                        self.query(s)
                    except RuntimeError:
                        pass
            if s == "DROP DATABASE IF EXISTS test":
                self.remove_leftovers()
        self.query("DELETE FROM mtr.test_suppressions")
        self.reset_replicas()
        self.query("FLUSH TABLES")
        # userstat's counters outlive a case that turned it on and off
        # (main.lowercase_table5 reads mysql.proc's ROWS_READ: each run
        # added to the last)
        for stats in ("TABLE_STATISTICS", "INDEX_STATISTICS", "USER_STATISTICS", "CLIENT_STATISTICS"):
            try:
                self.query("FLUSH " + stats)
            except RuntimeError:
                pass  # a server without userstat's tables
        # not left open while a case runs: cases count the connections
        # (information_schema.processlist, wait conditions)
        self.close_conn()


    def reset_replicas(self):
        """A case that stopped half-way after CHANGE MASTER left a replica
        connection (sys_vars.slave_parallel_mode_basic): the next case's
        CHANGE MASTER then fails with 1198, and a server started again on
        the same data directory starts its IO thread."""
        try:
            conns = self.query("SHOW ALL SLAVES STATUS")
        except RuntimeError:
            return
        for row in conns:
            name = "'%s'" % str(row[0]).replace("\\", "\\\\").replace("'", "''")
            for stmt in ("STOP SLAVE " + name, "RESET SLAVE " + name + " ALL"):
                try:
                    self.query(stmt)
                except RuntimeError:
                    pass


class MySQLServer(Server):
    """--mysql: a MySQL 9.7 of the chroot (scripts/lib/mysql.sh's
    mysql97_start: binary log, ROW, GTIDs always on), started here with a
    fresh data directory /var/lib/shoal-NAME (NAME from --out, so each
    worker has its own) unless --keep-server finds it running. Its vardir
    (secure_file_priv, tmpdir, the client defaults files, the outputs
    while mysqltest writes them) is /var/lib/shoal-NAME-var inside the
    chroot. root@localhost logs in without a password, over the socket and
    (name resolution on) over TCP from 127.0.0.1."""

    def __init__(self, args):
        self.started = False
        self.keep = args.keep_server
        self.binlog = True
        self.pid = None
        self.conn = None
        self.out = os.path.abspath(args.out)
        self.name = "cf-" + hashlib.sha1(self.out.encode()).hexdigest()[:10]
        self.vardir = "/var/lib/shoal-%s-var" % self.name       # as the chroot sees it
        self.host_vardir = MYSQL.host(self.vardir)
        self.dir = MYSQL.host("/var/lib/shoal-" + self.name)     # the data directory
        self.chroot_sock = "/run/shoal-%s.sock" % self.name
        self.sock = MYSQL.host(self.chroot_sock)
        self.port = None

    def running(self):
        pid = read_pid(os.path.join(self.out, "mysqld.pid"))
        port = read_pid(os.path.join(self.out, "mysqld.port"))
        if not pid or not port or pid_gone(pid):
            return False
        r = subprocess.run(["mariadb-admin", "--no-defaults", "--socket=" + self.sock, "-uroot", "ping"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            return False
        self.pid, self.port = pid, port
        return True

    def start(self):
        for d in ("tmp", "log"):
            os.makedirs(os.path.join(self.host_vardir, d), exist_ok=True)
        if self.running():
            log("reusing the MySQL on port %d (pid %d)" % (self.port, self.pid))
            self.started = True
            return
        stop_pid(read_pid(os.path.join(self.out, "mysqld.pid")), 60)
        # name resolution reads the chroot's /etc/hosts, which debootstrap's
        # minimal base does not make: without it 127.0.0.1 is no localhost
        # (1130, "Host '127.0.0.1' is not allowed") and the server asks DNS
        hosts = MYSQL.host("/etc/hosts")
        if not os.path.exists(hosts):
            with open(hosts, "w") as f:
                f.write("# made by tests/conformance/conformance.py --mysql\n"
                        "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
        self.port = free_port()
        opts = MYSQL.SERVER_ARGS + ["--secure-file-priv=" + self.vardir, "--tmpdir=" + self.vardir + "/tmp"]
        env = dict(os.environ, TZ=MYSQL.TZ)
        # mysql97_drop first: a fresh data directory (initialized by
        # mysql97_start), nothing of an earlier run's cases in it
        # mysql97_start's options but --skip-name-resolve: its OFF form
        # does not undo it (the server still takes 127.0.0.1 for no name)
        script = ('. scripts/lib/common.sh && . scripts/lib/mysql.sh && '
                  'eval "$(declare -f _mysql_common_opts | sed \'1s/^_mysql_common_opts/_mysql_opts_all/\')" && '
                  '_mysql_common_opts() { _mysql_opts_all | grep -vx -- --skip-name-resolve; } && '
                  'mysql97_drop "$1" "$2" && mysql97_start "$@"')
        with open(os.path.join(self.out, "mysqld.start.out"), "w") as err:
            r = subprocess.run(["bash", "-c", script, "_", MYSQL.root, self.name, str(self.port)] + opts,
                               cwd=SRCDIR, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                               env=env, start_new_session=True)
        pid = r.stdout.decode().strip().splitlines()[-1:] if r.returncode == 0 else []
        if not pid or not pid[0].isdigit():
            raise SystemExit("conformance: MySQL did not start (see %s/mysqld.start.out and %s/error.log)" %
                             (self.out, self.dir))
        self.pid = int(pid[0])
        for f, v in (("mysqld.pid", self.pid), ("mysqld.port", self.port)):
            with open(os.path.join(self.out, f), "w") as fh:
                fh.write("%d\n" % v)
        self.started = True

    def binlog_on(self):
        return True

    def prepare(self):
        """mtr's schemas: test, and mtr.add_suppression() (mtr_warnings.sql)."""
        self.sql("CREATE DATABASE IF NOT EXISTS test; CREATE DATABASE IF NOT EXISTS mtr;")
        self.sql("CREATE TABLE IF NOT EXISTS test_suppressions (pattern VARCHAR(255)) ENGINE=InnoDB;"
                 "DROP PROCEDURE IF EXISTS add_suppression;"
                 "CREATE DEFINER=root@localhost PROCEDURE add_suppression(pattern VARCHAR(255))"
                 " INSERT INTO test_suppressions (pattern) VALUES (pattern);", db="mtr")
        self.baseline = self.snapshot()
        self.close_conn()

    def remove_leftovers(self):
        for d in (os.path.join(self.host_vardir, "tmp"), os.path.join(self.dir, "test")):
            if not os.path.isdir(d):
                continue
            for f in os.listdir(d):
                p = os.path.join(d, f)
                if os.path.isdir(p) and not os.path.islink(p):
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    try:
                        os.unlink(p)
                    except OSError:
                        pass
        if os.path.isdir(os.path.join(self.dir, "test")):
            os.rmdir(os.path.join(self.dir, "test"))

    def snapshot(self):
        dbs = {r[0] for r in self.query("SELECT schema_name FROM information_schema.schemata")}
        users = {(r[0], r[1]) for r in self.query("SELECT user, host FROM mysql.user")}
        gvars = {r[0]: (r[1] if len(r) > 1 else "") for r in self.query("SHOW GLOBAL VARIABLES")}
        return {"dbs": dbs, "users": users, "vars": gvars}

    def reset_replicas(self):
        """MySQL's forms: a replica channel a case left is stopped and
        forgotten; SET PERSIST's file (mysqld-auto.cnf) is emptied."""
        for stmt in ("STOP REPLICA", "RESET REPLICA ALL", "RESET PERSIST"):
            try:
                self.query(stmt)
            except RuntimeError:
                pass


# Global variables that change by themselves: never restored.
VOLATILE_VARS = {"gtid_binlog_pos", "gtid_binlog_state", "gtid_current_pos", "gtid_slave_pos",
                 "timestamp", "innodb_buffer_pool_load_at_startup",
                 "gtid_executed", "gtid_purged"}


def read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def pid_gone(pid):
    """No such process, or a zombie nobody reaps (a container whose first
    process never waits): os.kill(pid, 0) still succeeds on a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[-1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def stop_pid(pid, secs=30):
    if not pid or pid <= 1:
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(secs * 10):
        if pid_gone(pid):
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# ---------------------------------------------------------------- node

class Node:
    """src/shoal in front of the server, restarted when it dies."""

    def __init__(self, args, server):
        self.bin = os.path.abspath(args.shoal)
        self.extra = shlex.split(args.node_args or "")
        self.server = server
        self.log = os.path.abspath(os.path.join(args.out, "node.log"))
        self.proc = None
        self.port = None
        self.restarts = 0

    def start(self):
        self.port = free_port()
        # no database in the URL: the URL's user (root here) would start in it
        # (docs/configuration.md), and a case's client that connects without
        # one (main.mysql: `$MYSQL -e "select database()"`) must get NULL, as
        # it does directly
        url = "mysql://root:@127.0.0.1:%d" % self.server.port
        cmd = [self.bin, "--upstream-db-url", url, "--listen-address", "127.0.0.1:%d" % self.port,
               "--metrics-address", "127.0.0.1:0", "--admin-address", "127.0.0.1:0",
               "--workers", "2"]
        # MySQL mode: the node offers its default plugin to clients,
        # mysql_native_password, which MySQL 9.7's clients still speak
        # (the server has dropped it; the node logs in upstream with
        # caching_sha2_password). With --auth-plugin caching_sha2_password
        # a 9.7 client with an empty password (root's, every case's) gets
        # 2027 "Malformed packet" from the node: docs/conformance.md,
        # MySQL mode. The node offers TLS, as the server does (cases
        # that run a client with --ssl-mode=REQUIRED), with a
        # self-signed certificate made here once.
        if MYSQL.on:
            cmd += self.tls_args()
        cmd += self.extra
        with open(self.log, "a") as lf:
            lf.write("=== %s start: %s\n" % (time.strftime("%F %T"), " ".join(shlex.quote(c) for c in cmd)))
            lf.flush()
            self.proc = subprocess.Popen(cmd, stdout=lf, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        for _ in range(200):
            if self.proc.poll() is not None:
                raise SystemExit("conformance: the node exited at start (see %s)" % self.log)
            r = subprocess.run(["mariadb", "--no-defaults", "-h127.0.0.1", "-P%d" % self.port,
                                "-uroot", "--connect-timeout=2", "-e", "select 1"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if r.returncode == 0:
                return
            time.sleep(0.1)
        raise SystemExit("conformance: the node did not accept logins (see %s)" % self.log)

    def tls_args(self):
        d = os.path.dirname(self.log)
        cert, key = os.path.join(d, "node-cert.pem"), os.path.join(d, "node-key.pem")
        if not (os.path.exists(cert) and os.path.exists(key)):
            r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30",
                                "-subj", "/CN=localhost", "-keyout", key, "-out", cert],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if r.returncode != 0:
                return []  # no openssl: no TLS (the cases that need it fail)
        return ["--tls-cert", cert, "--tls-key", key]

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def ensure(self):
        """Restart a node that died; returns its exit status if it had."""
        if self.alive():
            return None
        if self.proc is None:  # stopped on purpose (the server restarted)
            self.start()
            return None
        st = self.proc.returncode
        self.restarts += 1
        self.start()
        return st

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


# ---------------------------------------------------------------- one run

def write_defaults(path, port, server):
    """The client defaults file of a target (mtr's [client] and program groups)."""
    with open(path, "w") as f:
        f.write("[client]\nhost=127.0.0.1\nport=%d\nuser=root\npassword=\nprotocol=tcp\n"
                "character-sets-dir=%s\n" % (port, CHARSETS_DIR))
        for g in ("mysql", "mariadb-client", "mysqlshow", "mysqlimport", "mysqlcheck", "mysql_upgrade"):
            f.write("[%s]\ndefault-character-set=latin1\n" % g)
        f.write("[mysqltest]\nloose-skip-ssl\n[mysqlslap]\nloose-skip-ssl\n")
        f.write("[mysqldump]\nloose-skip-ssl\n[mysqlbinlog]\ndisable-force-if-open\n")


def write_defaults_mysql(path, port):
    """MySQL mode's client defaults file (host path; the clients read it
    inside the chroot): mtr's [client] and its per-program groups
    (include/default_client.cnf, default_mysqld.cnf), TLS off as mtr has
    it for mysqltest."""
    with open(path, "w") as f:
        f.write("[client]\nhost=127.0.0.1\nport=%d\nuser=root\npassword=\nprotocol=tcp\n"
                "ssl-mode=DISABLED\ncharacter-sets-dir=%s\n" % (port, MYSQL.CHARSETS_DIR))
        for g in ("mysql", "mysqlshow", "mysqlimport", "mysqlcheck", "mysql_upgrade", "mysqltest"):
            f.write("[%s]\ndefault-character-set=utf8mb4\n" % g)
        f.write("[mysqlbinlog]\ndisable-force-if-open\n")


def run_env_mysql(server, cnf, port, target):
    """mtr's environment for MySQL's cases (mysql-test-run.pl), chroot paths."""
    env = dict(os.environ)
    vardir = server.vardir
    d = " --defaults-file=" + cnf
    env.update({
        "MYSQL_TEST_DIR": MYSQL.TEST_DIR, "MYSQL_TEST_DIR_ABS": MYSQL.TEST_DIR,
        "MYSQLTEST_VARDIR": vardir, "MYSQLTEST_VARDIR_ABS": vardir, "MYSQLTEST_REAL_VARDIR": vardir,
        "MYSQL_TMP_DIR": vardir + "/tmp", "MYSQL_BINDIR": "/usr", "MYSQL_BASEDIR": "/usr",
        "MYSQL_BIN_PATH": "/usr/bin", "MYSQL_CLIENT_BIN_PATH": "/usr/bin",
        "MYSQL_SHAREDIR": "/usr/share/mysql", "MYSQL_CHARSETSDIR": MYSQL.CHARSETS_DIR,
        "MYSQL_TEST_LOGIN_FILE": vardir + "/tmp/.mylogin.cnf",
        "MASTER_MYPORT": str(port), "MYSQL_TEST_ROOT": "YES",
        # the server's socket bypasses the node: through the node it is absent
        "MASTER_MYSOCK": server.chroot_sock if target == "direct" else vardir + "/no-socket",
        "MYSQL": "mysql" + d, "MYSQL_OPTIONS": d, "MYSQL_DUMP": "mysqldump" + d,
        "MYSQL_SHOW": "mysqlshow" + d, "MYSQL_CHECK": "mysqlcheck" + d, "MYSQL_IMPORT": "mysqlimport" + d,
        "MYSQLADMIN": "mysqladmin", "MYSQL_SLAP": "mysqlslap" + d, "MYSQL_BINLOG": "mysqlbinlog" + d,
        "MYSQL_MY_PRINT_DEFAULTS": "my_print_defaults", "MYSQL_TZINFO_TO_SQL": "mysql_tzinfo_to_sql",
        "LC_ALL": "C", "LC_COLLATE": "C", "LC_CTYPE": "C", "TZ": MYSQL.TZ,
    })
    return env


def run_cmd_mysql(case, proto, target, port, server, outfile):
    """MySQL mode: mysqltest's command line (run in the chroot, in the
    mysql-test directory), its environment, and where it writes its output
    (a chroot path under the vardir: moved to OUTFILE after the run)."""
    test, sdir = case_paths(case)
    vardir = server.vardir
    cnf = vardir + "/%s.cnf" % target
    write_defaults_mysql(MYSQL.host(cnf), port)
    result = vardir + "/%s.result" % target
    cmd = ["chroot", MYSQL.root, "env", "-C", MYSQL.TEST_DIR, MYSQL.MYSQLTEST, "--defaults-file=" + cnf,
           "--host=127.0.0.1", "--port=%d" % port, "--user=root", "--protocol=tcp", "--ssl-mode=DISABLED",
           "--database=test", "--silent", "--basedir=" + MYSQL.TEST_DIR + "/", "--tmpdir=" + vardir + "/tmp",
           "--logdir=" + vardir + "/log", "--character-sets-dir=" + MYSQL.CHARSETS_DIR,
           "--test-file=" + test, "--tail-lines=0", "--record", "--result-file=" + result,
           "--max-connect-retries=3", "--connect-timeout=10"]
    return cmd, run_env_mysql(server, cnf, port, target), MYSQL.host(result)


def run_env(vardir, cnf, port, server, target):
    env = dict(os.environ)
    d = "--defaults-file=" + cnf
    env.update({
        "MYSQL_TEST_DIR": MTR_DIR, "MYSQLTEST_VARDIR": vardir, "MYSQLTEST_REAL_VARDIR": vardir,
        "MYSQL_TMP_DIR": os.path.join(vardir, "tmp"), "MYSQL_BINDIR": "/usr",
        "MYSQL_SHAREDIR": "/usr/share/mysql", "MYSQL_CHARSETSDIR": CHARSETS_DIR,
        "MASTER_MYPORT": str(port), "MYSQL_TEST_ROOT": "1",
        # the server's socket bypasses the node: through the node it is absent
        "MASTER_MYSOCK": server.sock if target == "direct" else os.path.join(vardir, "no-socket"),
        "MYSQL": "mariadb " + d, "MYSQL_DUMP": "mariadb-dump " + d, "MYSQL_SHOW": "mariadb-show " + d,
        "MYSQL_CHECK": "mariadb-check " + d, "MYSQL_IMPORT": "mariadb-import " + d,
        "MYSQLADMIN": "mariadb-admin " + d, "MYSQL_SLAP": "mariadb-slap " + d,
        "MYSQL_BINLOG": "mariadb-binlog " + d, "MYSQL_MY_PRINT_DEFAULTS": "my_print_defaults",
        "MYSQL_TZINFO_TO_SQL": "mariadb-tzinfo-to-sql", "OPENSSL_ENABLE_SHA1_SIGNATURES": "1",
        "LC_ALL": "C", "TZ": env.get("TZ", "UTC"),
    })
    return env


def run_case(case, proto, target, port, server, outfile, timeout):
    """One mariadb-test run. Returns (status, seconds, message): status is
    'ok', 'failed' (non-zero exit), 'skipped' (the case skipped itself) or
    'timeout'."""
    if MYSQL.on:
        cmd, env, written = run_cmd_mysql(case, proto, target, port, server, outfile)
        cwd = "/"
    else:
        cmd, env, written, cwd = mariadb_test_cmd(case, target, port, server, outfile)
    if proto == "ps":
        cmd.append("--ps-protocol")
    elif proto == "cursor":
        cmd.append("--cursor-protocol")  # (it implies --ps-protocol)
    for f in {outfile, written}:
        if os.path.exists(f):
            os.unlink(f)
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         env=env, cwd=cwd, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = p.communicate()
        return "timeout", time.time() - t0, "no answer within %d s" % timeout
    secs = time.time() - t0
    if written != outfile and os.path.exists(written):
        shutil.move(written, outfile)
    text = out.decode(errors="replace").strip()
    if p.returncode == 62:
        return "skipped", secs, text[-300:]
    if p.returncode != 0:
        return "failed", secs, text[-600:]
    return "ok", secs, ""


def mariadb_test_cmd(case, target, port, server, outfile):
    """mariadb-test's command line, environment, output file and directory."""
    test, sdir = case_paths(case)
    vardir = server.vardir
    cnf = os.path.join(vardir, "%s.cnf" % target)
    write_defaults(cnf, port, server)
    cmd = ["mariadb-test", "--defaults-file=" + cnf, "--host=127.0.0.1", "--port=%d" % port,
           "--user=root", "--protocol=tcp", "--database=test", "--silent",
           "--basedir=" + MTR_DIR + "/", "--tmpdir=" + os.path.join(vardir, "tmp"),
           "--logdir=" + os.path.join(vardir, "log"), "--character-sets-dir=" + CHARSETS_DIR,
           "--suite-dir=" + sdir + "/", "--test-file=" + test, "--tail-lines=0",
           "--record", "--result-file=" + outfile, "--max-connect-retries=3",
           "--connect-timeout=10"]
    return cmd, run_env(vardir, cnf, port, server, target), outfile, MTR_DIR


def same_files(a, b):
    try:
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


def first_difference(a, b):
    """The first differing line of two result files, for the report."""
    try:
        with open(a, "rb") as fa, open(b, "rb") as fb:
            la, lb = fa.read().split(b"\n"), fb.read().split(b"\n")
    except OSError as e:
        return str(e)
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return "line %d: direct %r / node %r" % (i + 1, x[:160], y[:160])
    return "line %d: one output is longer" % (min(len(la), len(lb)) + 1)


# ---------------------------------------------------------------- run

def judge(case, proto, args, server, node, tap_n):
    d = os.path.join(args.out, proto)
    os.makedirs(d, exist_ok=True)
    fdir, fnode = os.path.join(d, case.replace("/", "-") + ".direct"), os.path.join(d, case.replace("/", "-") + ".node")
    if server.ensure() and node:
        node.stop()
    server.reset()
    st_d, secs_d, msg_d = run_case(case, proto, "direct", server.port, server, fdir, args.timeout)
    if server.ensure():
        if node:
            node.stop()
        st_d, msg_d = "failed", "the server stopped during the direct run"
    server.reset()
    if node is None:  # --direct-only: the direct output alone
        rec = {"case": case, "protocol": proto, "direct": st_d, "direct_s": round(secs_d, 2),
               "verdict": "identical" if st_d == "ok" else "error"}
        if st_d != "ok":
            rec["why"] = "direct run %s: %s" % (st_d, msg_d)
        return rec
    died = node.ensure()
    st_n, secs_n, msg_n = run_case(case, proto, "node", node.port, server, fnode, args.timeout)
    died_after = not node.alive()
    rec = {"case": case, "protocol": proto, "direct": st_d, "node": st_n,
           "direct_s": round(secs_d, 2), "node_s": round(secs_n, 2)}
    if st_d != "ok":
        rec["verdict"] = "error"
        rec["why"] = "direct run %s: %s" % (st_d, msg_d)
    elif st_n != "ok":
        rec["verdict"] = "error"
        rec["why"] = "node run %s: %s" % (st_n, msg_n)
    elif same_files(fdir, fnode):
        rec["verdict"] = "identical"
    else:
        rec["verdict"] = "differs"
        rec["why"] = first_difference(fdir, fnode)
    if died is not None or died_after:
        rec["node_died"] = True
        rec["verdict"] = "error" if rec["verdict"] == "identical" else rec["verdict"]
        rec.setdefault("why", "the node died")
    return rec


def summarize(results, args, elapsed):
    lines = []
    label = args.label
    lines.append("Label `%s`; node arguments: `%s`; %d cases; %s; %.0f s." %
                 (label, args.node_args or "(none)", len({r["case"] for r in results}),
                  time.strftime("%Y-%m-%d"), elapsed))
    lines.append("")
    lines.append("| protocol | cases | identical | differs | error | % identical |")
    lines.append("|---|---|---|---|---|---|")
    for proto in PROTOCOLS:
        rs = [r for r in results if r["protocol"] == proto]
        if not rs:
            continue
        n = len(rs)
        c = {v: sum(1 for r in rs if r["verdict"] == v) for v in ("identical", "differs", "error")}
        lines.append("| %s | %d | %d | %d | %d | %.1f%% |" % (PROTOCOL_NAMES[proto],
                                                          n, c["identical"], c["differs"], c["error"],
                                                          100.0 * c["identical"] / n))
    bad = [r for r in results if r["verdict"] != "identical"]
    if bad:
        lines.append("")
        lines.append("Not identical:")
        lines.append("")
        for r in bad:
            lines.append("- `%s` (%s): %s: %s" % (r["case"], r["protocol"], r["verdict"],
                                                  r.get("why", "").replace("\n", " ")[:300]))
    return "\n".join(lines) + "\n"


def read_done(resfile, cases, protos):
    """--resume: the runs a results file already judged (a line cut by the
    stop is skipped)."""
    wanted = {(c, p) for c in cases for p in protos}
    done = {}
    with open(resfile) as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            key = (rec.get("case"), rec.get("protocol"))
            if key in wanted and key not in done:
                done[key] = rec
    return done


def make_server(args):
    return MySQLServer(args) if MYSQL.on else Server(args)


class Worker:
    """One MariaDB and one node of their own, judging the runs handed out
    by the shared queue. With --jobs 1 its directory is --out itself; with
    more, --out/wN, so no two workers share a server, a vardir or a port."""

    def __init__(self, args, k):
        self.args = argparse.Namespace(**vars(args))
        if args.jobs > 1:
            self.args.out = os.path.join(args.out, "w%d" % k)
            os.makedirs(self.args.out, exist_ok=True)
        self.server = make_server(self.args)
        self.node = None
        self.error = None

    def start(self):
        self.server.start()
        self.server.prepare()
        if not self.args.direct_only:
            self.node = Node(self.args, self.server)
            self.node.start()

    def stop(self):
        if self.node:
            self.node.stop()
        self.server.stop()


class Results:
    """The runs' records, written and printed in the list's order whatever
    order the workers finish them in (TAP numbers stay sequential)."""

    def __init__(self, args, todo, done, resf):
        self.args, self.todo, self.done, self.resf = args, todo, done, resf
        self.recs = [done.get(key) for key in todo]
        self.lock = threading.Lock()
        self.next_job = 0
        self.next_out = 0

    def take(self):
        with self.lock:
            while self.next_job < len(self.todo) and self.recs[self.next_job] is not None:
                self.next_job += 1
            if self.next_job >= len(self.todo):
                return None
            i = self.next_job
            self.next_job += 1
            return i

    def put(self, i, rec):
        with self.lock:
            self.recs[i] = rec
            while self.next_out < len(self.todo) and self.recs[self.next_out] is not None:
                self.emit(self.next_out, self.recs[self.next_out])
                self.next_out += 1

    def emit(self, i, rec):
        case, proto = self.todo[i]
        if self.todo[i] not in self.done:
            self.resf.write(json.dumps(rec) + "\n")
            self.resf.flush()
        if self.args.tap:
            ok = rec["verdict"] == "identical"
            print("%s %d - %s %s: %s" % ("ok" if ok else "not ok", self.args.tap_start + i + 1, case, proto,
                                         rec["verdict"]), flush=True)
            if not ok:
                print("# " + rec.get("why", "").replace("\n", "\n# ")[:1500], flush=True)
        elif self.todo[i] not in self.done:
            log("%s %s: %s%s" % (case, proto, rec["verdict"],
                                 (" (" + rec.get("why", "")[:200] + ")") if rec["verdict"] != "identical" else ""))


def work(worker, results):
    try:
        while True:
            i = results.take()
            if i is None:
                return
            case, proto = results.todo[i]
            results.put(i, judge(case, proto, worker.args, worker.server, worker.node, i + 1))
    except BaseException as e:  # a worker that cannot go on: the run fails, the others finish
        worker.error = e


def merge_node_logs(args, workers):
    """With workers, --out/node.log is their logs one after the other (the
    file 62-conformance keeps)."""
    if args.jobs < 2:
        return
    with open(os.path.join(args.out, "node.log"), "w") as out:
        for w in workers:
            path = os.path.join(w.args.out, "node.log")
            if os.path.exists(path):
                out.write("=== worker %s\n" % w.args.out)
                with open(path, errors="replace") as f:
                    shutil.copyfileobj(f, out)


def cmd_run(args):
    cases = list(args.case or [])
    if args.cases:
        cases += read_case_list(args.cases)
    if not cases:
        raise SystemExit("conformance: no cases (--cases FILE or --case NAME)")
    protos = PROTOCOL_SETS.get(args.protocol, (args.protocol,))
    if args.resume and args.tap:
        raise SystemExit("conformance: --resume and --tap do not go together (the TAP numbers)")
    if args.jobs < 1:
        raise SystemExit("conformance: --jobs: at least 1")
    if args.jobs > 1 and (args.server_port or args.keep_server):
        raise SystemExit("conformance: --jobs > 1 starts a server per worker: not with --server-port or --keep-server")
    os.makedirs(args.out, exist_ok=True)
    resfile = os.path.join(args.out, "results.jsonl")
    done = read_done(resfile, cases, protos) if args.resume and os.path.exists(resfile) else {}
    if done:
        log("resuming: %d runs already judged" % len(done))
    todo = [(c, p) for c in cases for p in protos]
    t0 = time.time()
    if args.tap and not args.tap_no_plan:
        print("1..%d" % len(todo), flush=True)
    workers = [Worker(args, k) for k in range(args.jobs)]
    try:
        for w in workers:  # one after the other: the servers' starts are the heavy part
            w.start()
        with open(resfile, "w") as resf:
            for key in todo:
                if key in done:
                    resf.write(json.dumps(done[key]) + "\n")
            results = Results(args, todo, done, resf)
            threads = [threading.Thread(target=work, args=(w, results), daemon=True) for w in workers]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        for w in workers:
            if w.error is not None:
                raise w.error
    finally:
        for w in workers:
            w.stop()
        merge_node_logs(args, workers)
    recs = [r for r in results.recs if r is not None]
    if len(recs) < len(todo):
        raise SystemExit("conformance: %d runs not judged" % (len(todo) - len(recs)))
    summary = summarize(recs, args, time.time() - t0)
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(summary)
    if not args.tap:
        sys.stdout.write(summary)
    return 0 if all(r["verdict"] == "identical" for r in recs) else 1


# ---------------------------------------------------------------- select

# A case is not a candidate when its text needs what a plain server run
# by this harness does not give: a debug build, server restarts, binary
# logs or replication, server-side files of another layout, or logins as
# other users (the node authenticates its own users: issue #14).
EXCLUDE = re.compile(
    r"have_debug|debug_sync|restart_mysqld|shutdown_server|kill_mysqld|wait_until_disconnected|"
    r"have_log_bin|have_binlog|master-slave|rpl_|have_ssl|big_test|MYSQLD_BOOTSTRAP|\$MYSQLD\b|"
    r"MYSQL_SLAVE|_MYSOCK|have_query_cache|not_valgrind|have_perfschema|"
    r"real_sleep|have_profiling|count_sessions|change_user|have_udf|have_plugin_auth|"
    r"have_example_plugin|INSTALL SONAME|INSTALL PLUGIN|shutdown_mysqld|start_mysqld|crash_mysqld|"
    r"mysqladmin_shutdown|shutdown_timeout|kill_and_restart|^\s*shutdown\b",
    re.I | re.M)
# connect (name,host,user,...) and the form without parentheses,
# connect name,host,user; (main.check)
CONNECT_USER = re.compile(r"^[ \t]*-*[ \t]*connect\b[ \t]*\(?[ \t]*[^,\n]*,[ \t]*[^,\n]*,[ \t]*([^,)\s;]*)",
                          re.I | re.M)


# MySQL's forms of the same (--mysql): its restart and component
# includes, and TLS (the node's TLS is its own, not the server's).
EXCLUDE_MYSQL = re.compile(
    r"restart_server|kill_server|have_component|INSTALL COMPONENT|UNINSTALL COMPONENT|have_openssl|"
    r"have_mysqlx|have_ndb|MYSQLD_CMD|\$MYSQLXTEST|have_ssl|force_restart|have_grep|have_util_",
    re.I)


def static_candidate(case):
    test, _ = case_paths(case)
    if MYSQL.on:
        test = MYSQL.host(test)
        # a case with server options of its own (NAME-master.opt, NAME.cnf)
        # needs a server mtr would start for it alone
        base = test[:-5]
        if any(os.path.exists(base + x) for x in ("-master.opt", ".cnf", "-master.sh")):
            return False
        try:
            with open(test, errors="replace") as f:
                if EXCLUDE_MYSQL.search(f.read()):
                    return False
        except OSError:
            return False
    try:
        with open(test, errors="replace") as f:
            text = f.read()
    except OSError:
        return False
    if EXCLUDE.search(text):
        return False
    for m in CONNECT_USER.finditer(text):
        if m.group(1) not in ("root", ""):
            return False
    return True


def suite_cases(suite):
    d = os.path.dirname(case_paths(suite + ".x")[0])
    if MYSQL.on:
        d = MYSQL.host(d)
    return sorted("%s.%s" % (suite, f[:-5]) for f in os.listdir(d) if f.endswith(".test"))


def select_candidates(args):
    """The cases `select` tries, suite by suite: the suites' static
    candidates (sampled with --sample), plus --include."""
    out = []
    for suite in args.suites.split(","):
        cands = [c for c in suite_cases(suite) if static_candidate(c)]
        if args.sample and len(cands) > args.sample:
            step = len(cands) / args.sample
            cands = [cands[int(i * step)] for i in range(args.sample)]
        cands = sorted(set(cands) | {c for c in args.include.split(",") if c.startswith(suite + ".")})
        log("%s: %d candidates" % (suite, len(cands)))
        out += cands
    return out


def cmd_select(args):
    """Append the candidates that pass select_one to the list (those
    already in it are not tried again). The candidates: --candidates FILE,
    else the static candidates of --suites."""
    os.makedirs(args.out, exist_ok=True)
    server = make_server(args)
    if MYSQL.on:
        # one server: MySQL's always writes its binary log; one direct
        # text run a case, compared with its .result (select_one_mysql)
        binlog_server = None
    else:
        blargs = argparse.Namespace(**vars(args))
        blargs.out, blargs.binlog, blargs.server_port = os.path.join(args.out, "binlog"), True, None
        binlog_server = Server(blargs)
    listed = set(read_case_list(args.list)) if os.path.exists(args.list) else set()
    todo = read_case_list(args.candidates) if args.candidates else select_candidates(args)
    todo = [c for c in todo if c not in listed]
    kept = 0
    try:
        for srv in (server, binlog_server):
            if srv:
                srv.start()
                srv.prepare()
        logf = open(os.path.join(args.out, "select.log"), "a")
        for i, case in enumerate(todo):
            if i % 50 == 0:
                log("%d of %d tried, %d kept" % (i, len(todo), kept))
            why = (select_one_mysql(case, args, server) if MYSQL.on else
                   select_one(case, args, server, binlog_server))
            logf.write("%s %s\n" % (case, why))
            logf.flush()
            if why.startswith("keep"):
                kept += 1
                with open(args.list, "a") as lf:
                    lf.write("%s  # %s\n" % (case, why[5:]))
    finally:
        server.stop()
        if binlog_server:
            binlog_server.stop()
    log("kept %d of %d" % (kept, len(todo)))
    return 0


def select_one(case, args, server, binlog_server):
    """Why a case is kept or dropped: it must run to its end directly in
    every protocol, twice with identical outputs each, within
    --max-seconds a run; and to its end (text protocol) against the server
    with the binary log, as the AUTO_CACHE passes in binlog mode run it."""
    d = os.path.join(args.out, "select")
    os.makedirs(d, exist_ok=True)
    total = 0.0
    for proto in SELECT_PROTOCOLS:
        outs = []
        for i in (1, 2):
            f = os.path.join(d, "%s.%s.%d" % (case.replace("/", "-"), proto, i))
            why = select_run(case, proto, args, server, f)
            if isinstance(why, str):
                return why
            total += why if proto == "text" or proto == "ps" else 0.0
            outs.append(f)
        if not same_files(*outs):
            return "drop %s: not deterministic (%s)" % (proto, first_difference(*outs))
    f = os.path.join(d, "%s.binlog" % case.replace("/", "-"))
    why = select_run(case, "text", args, binlog_server, f)
    if isinstance(why, str):
        return why.replace("drop text", "drop text (binlog)", 1)
    return "keep %.1f s" % (total / 2)


def select_one_mysql(case, args, server):
    """MySQL mode: a case is kept when one direct run (text protocol)
    runs to its end within --timeout and --max-seconds and its output is
    its own .result, byte for byte (MySQL's verdict that it passes: so the
    output does not vary by itself where the case did not mask it)."""
    d = os.path.join(args.out, "select")
    os.makedirs(d, exist_ok=True)
    f = os.path.join(d, case.replace("/", "-") + ".text")
    why = select_run(case, "text", args, server, f)
    if isinstance(why, str):
        return why
    if not os.path.exists(result_path(case)):
        return "drop text: no .result"
    if not same_files(result_path(case), f):
        return "drop text: not its .result (%s)" % first_difference(result_path(case), f).replace(
            "direct", ".result", 1).replace("node", "run", 1)
    return "keep %.1f s" % why


def select_run(case, proto, args, server, outfile):
    """One direct run for `select`: its seconds, or why the case is dropped."""
    server.ensure()
    server.reset()
    st, secs, msg = run_case(case, proto, "direct", server.port, server, outfile, args.timeout)
    if server.ensure():
        return "drop %s: the server stopped" % proto
    if st != "ok":
        return "drop %s %s: %s" % (proto, st, msg[:200].replace("\n", " "))
    if secs > args.max_seconds:
        return "drop %s: %.1f s" % (proto, secs)
    return secs


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p):
        p.add_argument("--out", default=os.path.join(SRCDIR, "build-conformance"),
                       help="output directory (results, outputs, node log)")
        p.add_argument("--keep-server", action="store_true",
                       help="leave the private MariaDB (OUT/var/mysqld.1) running; a later run reuses it")
        p.add_argument("--server-port", type=int, help="use the MariaDB already running on this port")
        p.add_argument("--server-socket", help="... and this socket (root logs in there)")
        p.add_argument("--timeout", type=int, default=120, help="seconds per run (default 120)")
        p.add_argument("--binlog", action="store_true",
                       help="start the private MariaDB with its binary log (log_bin, ROW, server id 1)")
        p.add_argument("--mysql", action="store_true",
                       help="MySQL mode: MySQL 9.7's mysqltest and cases (mysql-testsuite) from the "
                            "chroot --mysql-root, against private MySQL 9.7 servers started there")
        p.add_argument("--mysql-root", default=os.environ.get("SHOAL_MYSQL97_ROOT") or
                       os.path.join(SRCDIR, "build-test", "mysql97"),
                       help="the MySQL 9.7 chroot (scripts/lib/mysql.sh; default $SHOAL_MYSQL97_ROOT, "
                            "else build-test/mysql97)")

    r = sub.add_parser("run", help="run cases directly and through a node")
    common(r)
    r.add_argument("--cases", help="file with one case per line (suite.name)")
    r.add_argument("--case", action="append", help="a case (repeatable)")
    r.add_argument("--protocol", choices=PROTOCOLS + tuple(PROTOCOL_SETS), default="both",
                   help="text, ps, cursor, both (text and ps) or all")
    r.add_argument("--shoal", default=os.path.join(SRCDIR, "src", "shoal"), help="the node binary")
    r.add_argument("--node-args", default="", help="extra node arguments, e.g. \"--auto-cache=true\"")
    r.add_argument("--label", default="passthrough", help="name of this configuration in the report")
    r.add_argument("--resume", action="store_true",
                   help="keep the runs --out's results.jsonl already has and run the rest")
    r.add_argument("--tap", action="store_true", help="print TAP")
    r.add_argument("--tap-no-plan", action="store_true", help="with --tap: no plan line (the caller prints it)")
    r.add_argument("--tap-start", type=int, default=0, help="with --tap: number the results from this + 1")
    r.add_argument("--jobs", type=int, default=1,
                   help="judge N runs at a time, each worker with a MariaDB and a node of its own "
                        "(output in OUT/wK; results in the list's order)")
    r.add_argument("--direct-only", action="store_true",
                   help="run each case directly only (no node): to compare server settings")
    s = sub.add_parser("select", help="append deterministic cases of suites to a list")
    common(s)
    s.add_argument("--suites", default="", help="comma-separated: main,innodb,compat/oracle,...")
    s.add_argument("--candidates", help="a case list to try (in place of the suites' cases)")
    s.add_argument("--list", required=True, help="the case list to append to")
    s.add_argument("--sample", type=int, default=0, help="try at most this many per suite, spread evenly")
    s.add_argument("--include", default="", help="comma-separated cases tried whatever the filter says")
    s.add_argument("--max-seconds", type=float, default=15.0, help="drop cases slower than this")
    args = ap.parse_args()
    if args.server_port and not args.server_socket:
        ap.error("--server-port needs --server-socket")
    if args.cmd == "select" and not (args.suites or args.candidates):
        ap.error("select needs --suites or --candidates")
    args.out = os.path.abspath(args.out)  # mariadb-test runs in the mysql-test directory
    if args.mysql:
        MYSQL.on, MYSQL.root = True, os.path.realpath(args.mysql_root)
        if args.server_port:
            ap.error("--mysql starts its own servers: not with --server-port")
        if not os.access(MYSQL.host(MYSQL.MYSQLTEST), os.X_OK):
            raise SystemExit("conformance: no %s in the chroot %s (the package mysql-testsuite: "
                             "scripts/conformance --mysql installs it)" % (MYSQL.MYSQLTEST, MYSQL.root))
    elif shutil.which("mariadb-test") is None:
        raise SystemExit("conformance: mariadb-test is not installed (Debian package mariadb-test)")
    return cmd_run(args) if args.cmd == "run" else cmd_select(args)


if __name__ == "__main__":
    sys.exit(main())
