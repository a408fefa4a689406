#!/usr/bin/python3
"""fake_proxysql.py: a stand-in for ProxySQL's admin interface, for the
shoal-ha agent's tests (91-ha-agent.t, 92-ha-watch.t).

It speaks the MySQL protocol (handshake v10, mysql_native_password, COM_QUERY,
COM_PING, COM_QUIT, text result sets) over SQLite, and holds the admin tables
as ProxySQL documents them (../shared/reference/proxysql.md): mysql_servers,
mysql_query_rules, scheduler and their runtime_ copies in `main`, the same
tables in an attached `disk` database, stats_mysql_query_digest in an
attached `stats` database. LOAD <module> TO RUNTIME / SAVE <module> TO DISK
(and the other directions and aliases) copy tables between the layers, as
ProxySQL's commands do. Every statement received is appended to the log file
as one line: "<user>\t<statement>" (newlines as \\n).

Usage: fake_proxysql.py --port P --log FILE [--users admin:admin,test:test]
Not ProxySQL: no query processing, no cluster, one thread per connection
(SQLite access is serialised by a lock).
"""
import argparse
import hashlib
import os
import re
import socket
import sqlite3
import struct
import sys
import threading

SERVERS_COLS = """hostgroup_id INT CHECK (hostgroup_id>=0) NOT NULL DEFAULT 0,
 hostname VARCHAR NOT NULL,
 port INT CHECK (port >= 0 AND port <= 65535) NOT NULL DEFAULT 3306,
 gtid_port INT CHECK ((gtid_port <> port OR gtid_port=0) AND gtid_port >= 0 AND gtid_port <= 65535) NOT NULL DEFAULT 0,
 status VARCHAR CHECK (UPPER(status) IN ('ONLINE','SHUNNED','OFFLINE_SOFT','OFFLINE_HARD')) NOT NULL DEFAULT 'ONLINE',
 weight INT CHECK (weight >= 0 AND weight <= 10000000) NOT NULL DEFAULT 1,
 compression INT CHECK (compression IN (0,1)) NOT NULL DEFAULT 0,
 max_connections INT CHECK (max_connections >= 0) NOT NULL DEFAULT 1000,
 max_replication_lag INT CHECK (max_replication_lag >= 0 AND max_replication_lag <= 126144000) NOT NULL DEFAULT 0,
 use_ssl INT CHECK (use_ssl IN (0,1)) NOT NULL DEFAULT 0,
 max_latency_ms INT UNSIGNED CHECK (max_latency_ms >= 0) NOT NULL DEFAULT 0,
 comment VARCHAR NOT NULL DEFAULT '',
 PRIMARY KEY (hostgroup_id, hostname, port)"""

RULES_COLS = """rule_id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
 active INT CHECK (active IN (0,1)) NOT NULL DEFAULT 0,
 username VARCHAR, schemaname VARCHAR,
 flagIN INT CHECK (flagIN >= 0) NOT NULL DEFAULT 0,
 client_addr VARCHAR, proxy_addr VARCHAR,
 proxy_port INT CHECK (proxy_port >= 0 AND proxy_port <= 65535),
 digest VARCHAR, match_digest VARCHAR, match_pattern VARCHAR,
 negate_match_pattern INT CHECK (negate_match_pattern IN (0,1)) NOT NULL DEFAULT 0,
 re_modifiers VARCHAR DEFAULT 'CASELESS',
 flagOUT INT CHECK (flagOUT >= 0), replace_pattern VARCHAR,
 destination_hostgroup INT DEFAULT NULL,
 cache_ttl INT CHECK (cache_ttl > 0),
 cache_empty_result INT CHECK (cache_empty_result IN (0,1)) DEFAULT NULL,
 cache_timeout INT CHECK (cache_timeout >= 0),
 reconnect INT CHECK (reconnect IN (0,1)) DEFAULT NULL,
 timeout INT UNSIGNED CHECK (timeout >= 0),
 retries INT CHECK (retries >= 0 AND retries <= 1000),
 delay INT UNSIGNED CHECK (delay >= 0),
 next_query_flagIN INT UNSIGNED, mirror_flagOUT INT UNSIGNED, mirror_hostgroup INT UNSIGNED,
 error_msg VARCHAR, OK_msg VARCHAR,
 sticky_conn INT CHECK (sticky_conn IN (0,1)),
 multiplex INT CHECK (multiplex IN (0,1,2)),
 gtid_from_hostgroup INT UNSIGNED,
 log INT CHECK (log IN (0,1)),
 apply INT CHECK (apply IN (0,1)) NOT NULL DEFAULT 0,
 attributes VARCHAR NOT NULL DEFAULT '',
 comment VARCHAR"""

SCHED_COLS = """id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
 active INT CHECK (active IN (0,1)) NOT NULL DEFAULT 1,
 interval_ms INTEGER CHECK (interval_ms >= 100 AND interval_ms <= 100000000) NOT NULL,
 filename VARCHAR NOT NULL,
 arg1 VARCHAR, arg2 VARCHAR, arg3 VARCHAR, arg4 VARCHAR, arg5 VARCHAR,
 comment VARCHAR NOT NULL DEFAULT ''"""

DIGEST_COLS = """hostgroup INT, schemaname VARCHAR NOT NULL, username VARCHAR NOT NULL,
 client_address VARCHAR NOT NULL, digest VARCHAR NOT NULL, digest_text VARCHAR NOT NULL,
 count_star INTEGER NOT NULL, first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,
 sum_time INTEGER NOT NULL, min_time INTEGER NOT NULL, max_time INTEGER NOT NULL,
 sum_rows_affected INTEGER NOT NULL, sum_rows_sent INTEGER NOT NULL,
 PRIMARY KEY (hostgroup, schemaname, username, client_address, digest)"""

MODULES = {"MYSQL SERVERS": ["mysql_servers"],
           "MYSQL QUERY RULES": ["mysql_query_rules"],
           "SCHEDULER": ["scheduler"]}
TABLES = {"mysql_servers": SERVERS_COLS, "mysql_query_rules": RULES_COLS,
          "scheduler": SCHED_COLS}

CMD = re.compile(r"^(LOAD|SAVE)\s+(.+?)\s+(TO|FROM)\s+(RUNTIME|RUN|MEMORY|MEM|DISK)\s*;?$", re.I)


class Admin:
    def __init__(self, logpath):
        self.db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self.db.execute("ATTACH DATABASE ':memory:' AS disk")
        self.db.execute("ATTACH DATABASE ':memory:' AS stats")
        for t, cols in TABLES.items():
            for name in ("main." + t, "main.runtime_" + t, "disk." + t):
                self.db.execute("CREATE TABLE %s (%s)" % (name, cols))
        self.db.execute("CREATE TABLE stats.stats_mysql_query_digest (%s)" % DIGEST_COLS)
        # read by shoal-ha watch to make ProxySQL drop idle connections of
        # servers that are not ONLINE (empty here: no connection pool)
        self.db.execute("CREATE TABLE stats.stats_mysql_connection_pool (hostgroup INT, srv_host VARCHAR, "
                        "srv_port INT, status VARCHAR, ConnUsed INT, ConnFree INT, ConnOK INT, ConnERR INT, "
                        "MaxConnUsed INT, Queries INT, Queries_GTID_sync INT, Bytes_data_sent INT, "
                        "Bytes_data_recv INT, Latency_us INT)")
        self.lock = threading.Lock()
        self.log = open(logpath, "a", buffering=1)

    def copy(self, src, dst):
        self.db.execute("DELETE FROM %s" % dst)
        self.db.execute("INSERT INTO %s SELECT * FROM %s" % (dst, src))

    def command(self, m):
        verb, module, direction, layer = (x.upper() for x in m.groups())
        module = re.sub(r"\s+", " ", module)
        layer = {"RUN": "RUNTIME", "MEM": "MEMORY"}.get(layer, layer)
        if module not in MODULES:
            raise sqlite3.OperationalError("unknown module %s" % module)
        for t in MODULES[module]:
            mem, run, disk = "main." + t, "main.runtime_" + t, "disk." + t
            key = (verb, direction, layer)
            if key in (("LOAD", "TO", "RUNTIME"), ("LOAD", "FROM", "MEMORY")):
                self.copy(mem, run)
            elif key in (("SAVE", "TO", "DISK"), ("SAVE", "FROM", "MEMORY")):
                self.copy(mem, disk)
            elif key in (("LOAD", "FROM", "DISK"), ("LOAD", "TO", "MEMORY")):
                self.copy(disk, mem)
            elif key in (("SAVE", "FROM", "RUNTIME"), ("SAVE", "TO", "MEMORY")):
                self.copy(run, mem)
            else:
                raise sqlite3.OperationalError("unsupported command")

    def run(self, user, sql):
        """-> ("ok", affected) or ("rs", names, rows); raises sqlite3.Error."""
        self.log.write("%s\t%s\n" % (user, sql.replace("\\", "\\\\").replace("\n", "\\n")))
        text = " ".join(sql.split())
        with self.lock:
            if re.match(r"(?i)^select\s+@@version_comment", text):
                return ("rs", ["@@version_comment"], [["fake ProxySQL admin (shoal tests)"]])
            if re.match(r"(?i)^set\s", text):
                return ("ok", 0)
            m = CMD.match(text)
            if m:
                self.command(m)
                return ("ok", 0)
            cur = self.db.execute(sql)
            if cur.description is not None:
                names = [d[0] for d in cur.description]
                rows = [[None if v is None else str(v) for v in r] for r in cur.fetchall()]
                return ("rs", names, rows)
            return ("ok", max(cur.rowcount, 0))


# ------------------------------------------------------------------ protocol
def lenenc(n):
    if n < 251:
        return bytes([n])
    if n < 1 << 16:
        return b"\xfc" + struct.pack("<H", n)
    if n < 1 << 24:
        return b"\xfd" + struct.pack("<I", n)[:3]
    return b"\xfe" + struct.pack("<Q", n)


def lstr(b):
    return lenenc(len(b)) + b


class Session(threading.Thread):
    def __init__(self, sock, admin, users):
        super().__init__(daemon=True)
        self.s, self.admin, self.users, self.seq = sock, admin, users, 0

    def send(self, payload):
        self.s.sendall(struct.pack("<I", len(payload))[:3] + bytes([self.seq & 255]) + payload)
        self.seq += 1

    def recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.s.recv(n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return buf

    def recv(self):
        h = self.recv_exact(4)
        self.seq = h[3] + 1
        return self.recv_exact(h[0] | h[1] << 8 | h[2] << 16)

    def ok(self, affected=0):
        self.send(b"\x00" + lenenc(affected) + lenenc(0) + struct.pack("<HH", 2, 0))

    def err(self, code, state, msg):
        self.send(b"\xff" + struct.pack("<H", code) + b"#" + state.encode() + msg.encode()[:400])

    def eof(self):
        self.send(b"\xfe" + struct.pack("<HH", 0, 2))

    def resultset(self, names, rows):
        self.send(lenenc(len(names)))
        for n in names:
            self.send(lstr(b"def") + lstr(b"main") + lstr(b"") + lstr(b"") + lstr(n.encode()) +
                      lstr(n.encode()) + b"\x0c" + struct.pack("<HIBHB", 33, 1024, 0xFD, 0, 0) +
                      b"\x00\x00")
        self.eof()
        for r in rows:
            self.send(b"".join(b"\xfb" if v is None else lstr(v.encode()) for v in r))
        self.eof()

    def handshake(self):
        scramble = os.urandom(20).translate(bytes(range(1, 256)) + b"\x01")
        caps = 0x00000200 | 0x00008000 | 0x00080000 | 0x00000008 | 0x00002000 | 0x00020000
        self.seq = 0
        self.send(b"\x0a" + b"8.0.0-fake-proxysql-admin\x00" + struct.pack("<I", 1) +
                  scramble[:8] + b"\x00" + struct.pack("<H", caps & 0xFFFF) + b"\x21" +
                  struct.pack("<H", 2) + struct.pack("<H", caps >> 16) + b"\x15" + b"\x00" * 10 +
                  scramble[8:] + b"\x00" + b"mysql_native_password\x00")
        p = self.recv()
        pos = 32
        end = p.index(b"\x00", pos)
        user = p[pos:end].decode()
        pos = end + 1
        n = p[pos]
        token = p[pos + 1:pos + 1 + n]
        pw = self.users.get(user)
        if pw is None or not check_native(pw, scramble, token):
            self.err(1045, "28000", "Access denied for user '%s'@'%s' (using password: %s)"
                     % (user, self.s.getpeername()[0], "YES" if token else "NO"))
            return None
        self.ok()
        return user

    def run(self):
        try:
            user = self.handshake()
            while user is not None:
                p = self.recv()
                self.seq = 1
                if p[0] == 0x01:        # COM_QUIT
                    break
                if p[0] == 0x0e:        # COM_PING
                    self.ok()
                elif p[0] == 0x03:      # COM_QUERY
                    self.query(user, p[1:].decode("utf-8", "replace"))
                else:
                    self.err(1047, "08S01", "Unknown command")
        except (EOFError, OSError):
            pass
        finally:
            self.s.close()

    def query(self, user, sql):
        try:
            res = self.admin.run(user, sql)
        except sqlite3.Error as e:
            self.err(1105, "HY000", str(e))
            return
        if res[0] == "ok":
            self.ok(res[1])
        else:
            self.resultset(res[1], res[2])


def check_native(pw, scramble, token):
    if pw == "":
        return token == b""
    h1 = hashlib.sha1(pw.encode()).digest()
    h2 = hashlib.sha1(h1).digest()
    x = hashlib.sha1(scramble + h2).digest()
    return token == bytes(a ^ b for a, b in zip(h1, x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--users", default="admin:admin,test:test")
    a = ap.parse_args()
    users = dict(u.split(":", 1) for u in a.users.split(","))
    admin = Admin(a.log)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", a.port))
    srv.listen(64)
    print("fake ProxySQL admin on 127.0.0.1:%d" % a.port, flush=True)
    while True:
        c, _ = srv.accept()
        Session(c, admin, users).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
