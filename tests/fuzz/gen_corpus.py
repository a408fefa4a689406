#!/usr/bin/env python3
"""gen_corpus.py: (re)generate the seed corpora of tests/fuzz/corpus/.

    tests/fuzz/gen_corpus.py --port PORT [--host 127.0.0.1] [--out DIR]

needs a MariaDB with the test users (scripts/start-mariadb DIR PORT: app/pw
and other/otherpw) and tests/data/types.sql loaded into shoaltest. Seeds:

  fuzz_packet_reader  handshake responses and COM_CHANGE_USER payloads that
                      real clients sent (mariadb CLI, pymysql, Perl
                      DBD::MariaDB, libmariadb through ctypes, rawmysql with
                      odd capability sets), captured by a relaying proxy;
                      an SSL request cut from one of them
  fuzz_relay          real response packet streams from the server, read
                      on a connection with the node's upstream capabilities
                      (SESSION_TRACK, no DEPRECATE_EOF), wrapped in the
                      harness's header (command, client caps, mode, meta);
                      prepared statements with MariaDB's cache-metadata
                      extension (the column definitions skipped on the
                      second execute); a progress report and a 16 MiB row
                      made by hand (the server would need a slow ALTER or a
                      16 MiB row)
  fuzz_tokenizer      statements of tests/data/battery.sql and a few shapes
                      the tokenizer treats specially
  fuzz_cache_cmd      the cache SQL of tests/integration/84-cache-sql.t
  fuzz_config         upstream URLs, addresses and config files
  fuzz_admin_router   admin statements of tests/unit/test_admin.c
  fuzz_compress       compressed-protocol frames as clients send them
                      (made here, no server needed)
  fuzz_rowimage       each rows event of tests/unit/rowimage_vectors.h
                      (captured from MariaDB 10.11 and MySQL 8.0 by
                      tests/unit/rowimage/gen_vectors.py) with its table
                      map (no server needed)

Each file is named after a hash of its content: rerunning adds, never
duplicates. Server captures differ from run to run (nonces, ids), so the
set is regenerated only when wanted, not by CI.
"""
import argparse
import ctypes
import hashlib
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "lib"))
import rawmysql as rm  # noqa: E402

CAP_SESSION_TRACK = rm.CLIENT_SESSION_TRACK
CAP_DEPRECATE_EOF = rm.CLIENT_DEPRECATE_EOF
# The node's upstream connection (Connector/C): session tracking, no
# DEPRECATE_EOF.
UPSTREAM_CAPS = rm.BASE_CAPS | CAP_SESSION_TRACK
MCAP_PROGRESS = 1 << 0
MCAP_CACHE_METADATA = 1 << 4

OUT = None


def save(target, data, name=None):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    fn = (name + "-" if name else "") + hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, fn), "wb") as f:
        f.write(data)


def pkt(seq, payload):
    return struct.pack("<I", len(payload))[:3] + bytes([seq & 0xFF]) + payload


# ------------------------------------------------------------ capture proxy

class CaptureProxy:
    """Relays 127.0.0.1:<port> to the server and records the packets the
    client sends before any TLS starts: [(seq, payload), ...] per
    connection."""

    def __init__(self, host, port):
        self.up = (host, port)
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(8)
        self.port = self.ls.getsockname()[1]
        self.conns = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            u = socket.create_connection(self.up)
            rec = []
            with self.lock:
                self.conns.append(rec)
            threading.Thread(target=self._pipe, args=(c, u, rec), daemon=True).start()
            threading.Thread(target=self._pipe, args=(u, c, None), daemon=True).start()

    @staticmethod
    def _pipe(src, dst, rec):
        buf = b""
        tls = False
        try:
            while True:
                d = src.recv(65536)
                if not d:
                    break
                dst.sendall(d)
                if rec is None or tls:
                    continue
                buf += d
                while len(buf) >= 4:
                    n = buf[0] | buf[1] << 8 | buf[2] << 16
                    if len(buf) < 4 + n:
                        break
                    rec.append((buf[3], buf[4:4 + n]))
                    if n == 32 and buf[3] == 1 and struct.unpack_from("<I", buf, 4)[0] & rm.CLIENT_SSL:
                        tls = True  # an SSL request: what follows is TLS
                    buf = buf[4 + n:]
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.ls.close()


def capture_clients(host, port):
    px = CaptureProxy(host, port)
    p = str(px.port)
    env = dict(os.environ, MYSQL_PWD="pw")
    runs = [
        ["mariadb", "--no-defaults", "-h127.0.0.1", "-P" + p, "-uapp", "shoaltest", "-e", "SELECT 1"],
        ["mariadb", "--no-defaults", "-h127.0.0.1", "-P" + p, "-uapp", "-e", "SELECT 2"],
        ["mariadb", "--no-defaults", "--ssl", "-h127.0.0.1", "-P" + p, "-uapp", "-e", "SELECT 3"],
        ["mariadb", "--no-defaults", "--default-auth=caching_sha2_password", "-h127.0.0.1",
         "-P" + p, "-uapp", "shoaltest", "-e", "SELECT 4"],
    ]
    for cmd in runs:
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20)
    py = ("import pymysql,sys\n"
          "c=pymysql.connect(host='127.0.0.1',port=%s,user='app',password='pw',database=%s,"
          "program_name='shoal-fuzz-seed')\n"
          "c.cursor().execute('SELECT 1'); c.close()\n")
    for db in ("'shoaltest'", "None"):
        subprocess.run(["/usr/bin/python3", "-c", py % (p, db)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=20)
    subprocess.run(["perl", "-MDBI", "-e",
                    "DBI->connect('DBI:MariaDB:database=shoaltest;host=127.0.0.1;port=%s',"
                    "'app','pw',{RaiseError=>1})->disconnect" % p],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20)
    libmariadb_change_user(px.port)
    for caps in (rm.BASE_CAPS, rm.DEFAULT_CAPS,
                 rm.BASE_CAPS & ~rm.CLIENT_SECURE_CONNECTION,
                 rm.BASE_CAPS | rm.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | rm.CLIENT_CONNECT_ATTRS):
        c = rm.Conn("127.0.0.1", px.port)
        try:
            c.login("app", "pw", db="shoaltest", caps=caps)
        except Exception:
            pass
        c.close()
    time.sleep(0.5)
    px.close()
    n = 0
    ssl_done = False
    for rec in px.conns:
        for i, (seq, payload) in enumerate(rec):
            if seq == 1 and i == 0 and len(payload) != 32:
                save("fuzz_packet_reader", payload, "hs-response")
                n += 1
                if not ssl_done:  # the same response cut short, CLIENT_SSL set
                    caps = struct.unpack_from("<I", payload)[0] | rm.CLIENT_SSL
                    save("fuzz_packet_reader", struct.pack("<I", caps) + payload[4:32], "ssl-request")
                    ssl_done = True
            elif len(payload) == 32 and seq == 1:
                save("fuzz_packet_reader", payload, "ssl-request")
            elif payload[:1] == b"\x11":
                save("fuzz_packet_reader", payload, "change-user")
                n += 1
    print("fuzz_packet_reader: %d client packets captured" % n)


def libmariadb_change_user(port):
    """mysql_change_user() of the real Connector/C: its COM_CHANGE_USER."""
    try:
        lib = ctypes.CDLL("libmariadb.so.3")
    except OSError:
        return
    lib.mysql_init.restype = ctypes.c_void_p
    lib.mysql_init.argtypes = [ctypes.c_void_p]
    lib.mysql_real_connect.restype = ctypes.c_void_p
    lib.mysql_real_connect.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                                       ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint,
                                       ctypes.c_char_p, ctypes.c_ulong]
    lib.mysql_change_user.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                                      ctypes.c_char_p]
    lib.mysql_close.argtypes = [ctypes.c_void_p]
    m = lib.mysql_init(None)
    if lib.mysql_real_connect(m, b"127.0.0.1", b"app", b"pw", b"shoaltest", port, None, 0):
        lib.mysql_change_user(m, b"other", b"otherpw", b"shoaltest")
        lib.mysql_change_user(m, b"app", b"pw", None)
    lib.mysql_close(m)


# ------------------------------------------------------------- relay streams

class Upstream(rm.Conn):
    """A raw connection that reads whatever the server sends for one
    command (until it has been quiet for a moment), as header+payload."""

    def raw_command(self, payload, quiet=0.3):
        self.write_packet(payload, 0)
        out = b""
        self.sock.settimeout(quiet)
        try:
            while True:
                seq, p = self.read_packet()
                out += pkt(seq, p)
        except socket.timeout:
            pass
        finally:
            self.sock.settimeout(10)
        return out

    def login_ext(self, user, pw, db, caps, ext_caps):
        """Login; with ext_caps, as a MariaDB client (CLIENT_MYSQL clear,
        extended capabilities in the filler)."""
        g = self.read_greeting()
        if ext_caps:
            caps &= ~rm.CLIENT_LONG_PASSWORD
            ext_caps &= g.ext_caps
        caps |= rm.CLIENT_CONNECT_WITH_DB
        token = rm.native_token(pw, g.nonce)
        p = struct.pack("<IIB", caps, 16 << 20, rm.UTF8MB4_GENERAL_CI) + b"\0" * 19
        p += struct.pack("<I", ext_caps)
        p += user.encode() + b"\0" + bytes([len(token)]) + token + db.encode() + b"\0"
        p += b"mysql_native_password\0"
        self.caps = caps
        self.write_packet(p, 1)
        _, r = self.read_packet()
        if r[:1] != b"\0":
            raise rm.ProtocolError("login failed: %r" % r[:40])
        return ext_caps


def split_packets(stream):
    """header+payload bytes -> [(seq, payload), ...]"""
    out, pos = [], 0
    while pos + 4 <= len(stream):
        n = stream[pos] | stream[pos + 1] << 8 | stream[pos + 2] << 16
        out.append((stream[pos + 3], stream[pos + 4:pos + 4 + n]))
        pos += 4 + n
    return out


def relay_seed(cmd, stream, client_caps, mode=0, meta=b""):
    return (bytes([cmd]) + struct.pack("<I", client_caps) + bytes([mode])
            + struct.pack("<H", len(meta)) + meta + stream)


CLIENTS = {
    "eof": rm.BASE_CAPS | CAP_SESSION_TRACK,                        # classic EOFs
    "deof": rm.BASE_CAPS | CAP_SESSION_TRACK | CAP_DEPRECATE_EOF,   # OK-for-EOF client
    "notrack": rm.BASE_CAPS & ~CAP_SESSION_TRACK,                   # tracking stripped
}


def capture_relay(host, port):
    c = Upstream(host, port)
    c.login_ext("app", "pw", "shoaltest", UPSTREAM_CAPS, 0)
    streams = []  # (cmd, stream, name)

    def q(sql, name):
        streams.append((rm.COM_QUERY, c.raw_command(b"\x03" + sql.encode()), name))

    q("SELECT id, c_int, c_bigint_u, c_varchar, c_date, c_double, c_decimal, c_enum "
      "FROM shoal_types ORDER BY id", "select-types")
    q("SELECT 1, NULL, 'abc', 1.5", "select-literals")
    q("SELECT * FROM shoal_types WHERE id < 0", "select-empty")
    q("SELECT no_such_column FROM shoal_types", "error")
    q("SET @a = 1", "set-ok")
    q("SET SESSION sql_mode = 'ANSI_QUOTES'", "set-tracked")
    q("USE shoaltest", "use-tracked")
    q("CREATE TEMPORARY TABLE fz (id INT PRIMARY KEY, v VARCHAR(20))", "ddl")
    q("INSERT INTO fz VALUES (1, 'a'), (2, 'b'), (3, NULL)", "insert")
    q("SHOW WARNINGS", "show-warnings")
    q("SELECT 1; SELECT 2, 3; SET @b = 2", "multi-results")
    q("SELECT 1; SELECT nope", "multi-error")
    q("CALL nonexistent_proc()", "call-error")
    streams.append((rm.COM_FIELD_LIST, c.raw_command(b"\x04fz\0"), "field-list"))
    streams.append((rm.COM_PING, c.raw_command(b"\x0e"), "ping"))
    streams.append((rm.COM_STATISTICS, c.raw_command(b"\x09"), "statistics"))
    streams.append((rm.COM_INIT_DB, c.raw_command(b"\x02shoaltest"), "init-db"))
    streams.append((rm.COM_SET_OPTION, c.raw_command(b"\x1b\x01\x00"), "set-option"))
    streams.append((rm.COM_SET_OPTION, c.raw_command(b"\x1b\x00\x00"), "set-option-on"))

    # prepared statements: prepare, execute, a cursor and fetches
    prep = c.raw_command(b"\x16SELECT id, v FROM fz WHERE id > ?")
    streams.append((rm.COM_STMT_PREPARE, prep, "prepare"))
    stmt_id = struct.unpack_from("<I", prep, 5)[0]
    ex = struct.pack("<BIBI", 0x17, stmt_id, 0, 1) + b"\x00\x01" + bytes([rm.MYSQL_TYPE_LONGLONG, 0])
    streams.append((rm.COM_STMT_EXECUTE, c.raw_command(ex + struct.pack("<q", 0)), "execute"))
    cur = struct.pack("<BIBI", 0x17, stmt_id, 1, 1) + b"\x00\x01" + bytes([rm.MYSQL_TYPE_LONGLONG, 0])
    streams.append((rm.COM_STMT_EXECUTE, c.raw_command(cur + struct.pack("<q", 0)), "execute-cursor"))
    for i in range(2):
        streams.append((0x1C, c.raw_command(struct.pack("<BII", 0x1C, stmt_id, 2)), "fetch"))
    streams.append((rm.COM_STMT_RESET, c.raw_command(struct.pack("<BI", 0x1A, stmt_id)), "stmt-reset"))
    prep0 = c.raw_command(b"\x16DELETE FROM fz WHERE id = 99")
    streams.append((rm.COM_STMT_PREPARE, prep0, "prepare-noresult"))
    streams.append((rm.COM_STMT_PREPARE, c.raw_command(b"\x16SELEKT"), "prepare-error"))
    c.close()

    # one client kind per stream, in turn; those whose OK packets carry
    # session-state data also for a client without tracking; a few twice
    # in a row (mode 0x40: the next command on the same connection)
    n = 0
    kinds = list(CLIENTS.items())
    for i, (cmd, stream, name) in enumerate(streams):
        cname, caps = kinds[i % len(kinds)]
        save("fuzz_relay", relay_seed(cmd, stream, caps), "%s-%s" % (name, cname))
        n += 1
        if name in ("set-tracked", "use-tracked", "multi-results") and cname != "notrack":
            save("fuzz_relay", relay_seed(cmd, stream, CLIENTS["notrack"]), name + "-notrack")
            n += 1
        if name in ("select-literals", "multi-results", "execute-cursor"):
            save("fuzz_relay", relay_seed(cmd, stream + stream, CLIENTS["eof"], 0x41), name + "-twice")
            n += 1

    # MariaDB's cache-metadata extension: the second execute of a statement
    # skips the column definitions, which the node sends from meta_in.
    c = Upstream(host, port)
    ext = c.login_ext("app", "pw", "shoaltest", UPSTREAM_CAPS, MCAP_CACHE_METADATA | MCAP_PROGRESS)
    if ext & MCAP_CACHE_METADATA:
        c.raw_command(b"\x03CREATE TEMPORARY TABLE fz (id INT PRIMARY KEY, v VARCHAR(20))")
        c.raw_command(b"\x03INSERT INTO fz VALUES (1, 'a'), (2, 'b')")
        prep = c.raw_command(b"\x16SELECT id, v FROM fz WHERE id >= ?")
        stmt_id = struct.unpack_from("<I", prep, 5)[0]
        ex = (struct.pack("<BIBI", 0x17, stmt_id, 0, 1) + b"\x00\x01"
              + bytes([rm.MYSQL_TYPE_LONGLONG, 0]) + struct.pack("<q", 1))
        first = c.raw_command(ex)
        second = c.raw_command(ex)
        # MariaDB sent the column definitions with the prepare: take them
        # there (OK, parameter definitions and their EOF, then the columns)
        pp = split_packets(prep)
        ncols, nparams = struct.unpack_from("<HH", pp[0][1], 5)
        at = 1 + (nparams + 1 if nparams else 0)
        defs = b"".join(pkt(sq, pl) for sq, pl in pp[at:at + ncols])
        # an execute whose metadata changed: the count says "follows" and the
        # definitions come (as the server sends after a re-prepare)
        ep = split_packets(first)
        if ep and len(ep[0][1]) == 2:
            pls = [ep[0][1][:1] + b"\x01"] + [pl for _, pl in pp[at:at + ncols]] + [pl for _, pl in ep[1:]]
            follows = b"".join(pkt(1 + i, pl) for i, pl in enumerate(pls))
            save("fuzz_relay", relay_seed(rm.COM_STMT_EXECUTE, follows, CLIENTS["eof"], 0x01 | 0x02 | 0x08),
                 "cm-execute-follows")
            n += 1
        cm = 0x01 | 0x02 | 0x04 | 0x08  # as the node: meta_in == meta_out
        save("fuzz_relay", relay_seed(rm.COM_STMT_PREPARE, prep, CLIENTS["eof"], cm), "cm-prepare")
        save("fuzz_relay", relay_seed(rm.COM_STMT_EXECUTE, first, CLIENTS["deof"], cm), "cm-execute")
        save("fuzz_relay", relay_seed(rm.COM_STMT_EXECUTE, second, CLIENTS["deof"], cm, defs),
             "cm-execute-skipped")
        save("fuzz_relay", relay_seed(rm.COM_STMT_EXECUTE, second, CLIENTS["eof"], 0x01 | 0x02 | 0x10 | 0x20, defs),
             "cm-execute-skipped-2buf")
        n += 4
    c.close()

    # by hand: a progress report before the OK of an ALTER, and a 16 MiB row
    progress = pkt(1, b"\xff\xff\xff" + b"\x01\x01\x02" + struct.pack("<I", 50000)[:3] + b"\x04stage")
    ok = pkt(2, b"\x00\x00\x00\x02\x00\x00\x00")
    save("fuzz_relay", relay_seed(rm.COM_QUERY, progress + ok, CLIENTS["eof"], 0x05), "progress")
    coldef = bytes.fromhex("03646566000000016100" "0c3f000a000000fe8000000000")
    big = (pkt(1, b"\x01") + pkt(2, coldef) + pkt(3, b"\xfe\x00\x00\x02\x00")
           + b"\xff\xff\xff\x04" + struct.pack("<H", 4) + b"\xfc\xff\xff\xfe"  # 16 MiB: the harness pads
           + pkt(5, b"\x03abc")
           + pkt(6, b"\xfe\x00\x00\x02\x00"))
    save("fuzz_relay", relay_seed(rm.COM_QUERY, big, CLIENTS["deof"], 0x80), "big-row")
    n += 2
    print("fuzz_relay: %d streams" % n)


# ---------------------------------------------------------------- SQL text

def sql_seeds():
    with open(os.path.join(ROOT, "tests", "data", "battery.sql"), encoding="utf-8") as f:
        text = f.read()
    stmts = []
    for chunk in re.split(r";\s*\n", text):
        lines = [ln for ln in chunk.splitlines() if not ln.startswith("-- ")]
        s = "\n".join(lines).strip()
        if s and s not in stmts:
            stmts.append(s)
    picked = stmts[::max(1, len(stmts) // 30)][:30]
    extra = [
        "SELECT /*!40101 SQL_NO_CACHE */ a FROM t WHERE b IN (1, 2, 3, 4, 5, 6) -- tail",
        "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3, 'z'), (4, NULL), (5, X'0F')",
        "select a from t where s = 'it''s \\' a \"string\"' # hash comment\n and n = -1.5e-3",
        "SELECT * FROM t WHERE a = N'x' AND b = _utf8mb4'y' AND c = B'0101' AND d = 0x1F;",
        "SELECT 1;--\nDROP TABLE t",
        "SELECT `weird;name` FROM `db`.`t` WHERE x = 'unterminated",
        "(SELECT a FROM t) UNION (SELECT b FROM u /* unterminated",
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n<5) SELECT * FROM c",
        "SELECT @a, @@session.sql_mode, NOW(), RAND() FROM information_schema.tables FOR UPDATE",
        "SELECT SQL_NO_CACHE id INTO @x FROM t LOCK IN SHARE MODE",
    ]
    for s in picked + extra:
        save("fuzz_tokenizer", s, "sql")
    print("fuzz_tokenizer: %d statements" % (len(picked) + len(extra)))


def cache_seeds():
    stmts = [
        "CREATE CACHE FROM SELECT id FROM t84 WHERE id = 1",
        "CREATE CACHE 'odd`name' FROM SELECT id FROM t84 WHERE id = 3",
        "CREATE CACHE COALESCE 100 MILLISECONDS c_co FROM SELECT v, id FROM t84 WHERE id = 5",
        "CREATE CACHE POLICY TTL 20 SECONDS REFRESH 4 SECONDS COALESCE 300 MILLISECONDS ALWAYS c FROM SELECT 1",
        "CREATE CACHE POLICY TTL 30 SECONDS REFRESH EVERY 5 SECONDS COALESCE 2000 MILLISECONDS x FROM SELECT a FROM b",
        "CREATE SHALLOW CACHE POLICY TTL 1500 MILLISECONDS UNTIL WRITE `c uw` FROM SELECT v FROM t84;",
        "CREATE CACHE UNTIL WRITE keep_from_id FROM q_0123456789abcdef",
        "CREATE CACHE FROM q_0123456789abcdef",
        "CREATE CACHE c_dash FROM SELECT id, v, id + 1 AS nx FROM t84 -- a comment\n WHERE id = 3",
        "CREATE CACHE POLICY TTL x FROM select 1",
        "CREATE CACHE FROM SELECT 'it''s' /* c */ ;;  ",
        "DROP CACHE c_co",
        "DROP CACHE q_0123456789abcdef;",
        "DROP ALL CACHES",
        "FLUSH CACHE `c uw`",
        "FLUSH ALL SHALLOW CACHES",
        "SHOW CACHES",
        "SHOW CACHES WHERE query_id = 'q_0123456789abcdef'",
        "SHOW PROXIED QUERIES",
        "SHOW PROXIED QUERIES WHERE query_id = q_0123456789abcdef LIMIT 10",
        "SHOW PROXIED QUERIES LIMIT 5",
        "SHOW SHOAL STATUS",
        "SHOW READYSET STATUS;",
        "EXPLAIN LAST STATEMENT",
        "/* hint */ show caches",
    ]
    for s in stmts:
        save("fuzz_cache_cmd", s, "cache")
    print("fuzz_cache_cmd: %d statements" % len(stmts))


def config_seeds():
    urls = [
        "mysql://app:pw@127.0.0.1:3306/shoaltest",
        "mysql://app%40corp:p%40ss%3Aw%2Frd@db.example.com:3310/shop",
        "mysql://u:p@[2001:db8::1]:3400/x",
        "mysql://u@h",
        "mysql://u:p@ss@h:3307",
        "MYSQL://u:p@[::1]",
        "mysql://u:sec%zzret@h",
        "[::1]:3307",
        "0.0.0.0:3307",
        "db-1.local:1",
    ]
    for u in urls:
        save("fuzz_config", u, "url")
    files = [
        "# Shoal configuration\nupstream_db_url = mysql://app:s3cr%3At%40x@db.internal:3306/shop\n"
        "listen_address  = 0.0.0.0:3307, [::]:3307\nmetrics_address = 127.0.0.1:6034\n"
        "admin_address   = 127.0.0.1:6035\n"
        "allowed_users    = \"reporting:r3port-pw, batch:b4tch-pw\"\nmonitor_user     = monitor\n"
        "monitor_password = \"change me # not a comment\"\nauth_plugin = caching_sha2_password\n"
        "tls_mode    = optional\nmax_allowed_packet     = 64M\nmax_client_connections = 10000\n"
        "workers                = 4\nlog_level              = info\nauto_cache             = off\n",
        "upstream_db_url = mysql://app:pw@127.0.0.1:3306/shoaltest\nauto_cache = true\n"
        "cache_ttl_ms = 10000\ncache_refresh_ms = 0\ncache_coalesce_ms = 5000\n"
        "cache_max_entry_size = 1G\nmemory_limit = 512M\ncache_warnings = no\ncache_empty = yes\n"
        "read_your_writes_ms = 200\nmetrics_max_queries = 100\n",
        "upstream_db_url = 'mysql://u:p@h'\nupstream_tls = true\nupstream_tls_verify = 1\n"
        "upstream_connect_timeout_ms = 5000\nhandshake_timeout_ms = 10000\n"
        "admin_user = admin\nadmin_password = \"s e c r e t\"\n",
        "upstream_db_url = mysql://u:p@h\ndrain_timeout_ms = 100\nupstream_down_policy = stale\n"
        "upstream_down_after_ms = 3000\nmax_stale_ms = 60000\n",
        "workers = many\n",
        "listen_address = 'unterminated\n",
        "no equals sign here\n",
    ]
    for s in files:
        save("fuzz_config", s, "conf")
    print("fuzz_config: %d seeds" % (len(urls) + len(files)))


def admin_seeds():
    stmts = [
        "LOAD MYSQL VARIABLES TO RUNTIME", "SAVE SHOAL VARIABLES TO DISK",
        "LOAD SHOAL USERS FROM DISK; LOAD USERS TO RUNTIME", "save caches from runtime",
        "LOAD VARIABLES TO RUNTIME NOW", "LOADS VARIABLES TO RUNTIME", "SAVEPOINT a",
        "SET NAMES utf8mb4", "set autocommit=1", "SET @@session.sql_mode = ''",
        "SET shoal-cache-ttl-ms = 20000", "SET shoal-cache-ttl-ms = 'open",
        "SET shoal-admin-password := 'it''s \\'quoted\\''",
        "select @@version_comment limit 1", "SELECT DATABASE(), user() ,CURRENT_USER ( )",
        "select @@session.auto_increment_increment AS inc", "select @@version, 1",
        "select * from global_variables where variable_name like 'shoal-%'",
        "show databases", "SHOW SCHEMAS LIKE 'st%'", "show full tables in `disk` like '%'",
        "SHOW TABLES FROM stats", "SHOW CREATE TABLE disk.users", "show warnings",
        "use stats", "/* c */ SELECT 1; -- x\n# y\nSHOW TABLES;;",
        "UPDATE global_variables SET variable_value = '5' WHERE variable_name = 'shoal-workers'",
        "SELECT * FROM stats_mysql_query_digest_reset", "SELECT 'a;b', \"c;d\", `e;f`; SELECT 2",
    ]
    for s in stmts:
        save("fuzz_admin_router", s, "admin")
    print("fuzz_admin_router: %d statements" % len(stmts))


def zframe(payload, seq, compress=True):
    """One compressed-protocol frame (7-byte header)."""
    import zlib
    if compress:
        z = zlib.compress(payload)
        return struct.pack("<I", len(z))[:3] + bytes([seq]) + struct.pack("<I", len(payload))[:3] + z
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + b"\0\0\0" + payload


def compress_seeds():
    """fuzz_compress: frames as libmariadb sends them (a command in a
    compressed frame, a short one uncompressed, a LOAD DATA file running on
    with the ids of one command, a packet cut across two frames), behind the
    harness's 3 bytes (frame limit, decode limit, piece size)."""
    q = b"\x03SELECT seq, REPEAT('x', 40) FROM seq_1_to_3"
    cmd = struct.pack("<I", len(q))[:3] + b"\0" + q
    ping = b"\x01\0\0\0\x0e"
    file_pkts = b"".join(struct.pack("<I", 40)[:3] + bytes([2 + i]) + (b"%d\tline\n" % i).ljust(40, b" ")
                         for i in range(20)) + b"\0\0\0\x16"
    big = struct.pack("<I", 3000)[:3] + b"\0" + b"\x03SELECT '" + b"y" * 2990
    for name, hdr, stream in (
            ("query", b"\x0a\x08\x0f", zframe(cmd, 0)),
            ("ping-plain", b"\x0a\x08\xff", zframe(ping, 0, False)),
            ("two-commands", b"\x0a\x02\x06", zframe(cmd, 0) + zframe(ping, 0, False)),
            ("infile", b"\x0e\x0a\x40", zframe(cmd, 0) + zframe(file_pkts[:300], 1) + zframe(file_pkts[300:], 2)),
            ("split-packet", b"\x0a\x0a\x20", zframe(big[:1000], 0) + zframe(big[1000:], 1)),
            ("too-large", b"\x00\x08\xff", struct.pack("<I", 5000)[:3] + b"\0\x05\0\0"),
            ("bad-zlib", b"\x0a\x08\xff", struct.pack("<I", 8)[:3] + b"\0\x40\0\0" + b"\x78\x9cjunk!")):
        save("fuzz_compress", hdr + stream, name)


ROWS_TYPES = [23, 24, 25, 30, 31, 32, 39, 166, 167, 168, 169, 170, 171]


def rowimage_seeds():
    """fuzz_rowimage: byte 0 the rows type's index, 2 bytes the table
    map's length, the table map's body, the rows event's body (the common
    header and the CRC32 cut off)."""
    path = os.path.join(ROOT, "tests", "unit", "rowimage_vectors.h")
    with open(path) as f:
        text = f.read()
    maps = {}
    for scen, etype, _n, body in re.findall(r'\{ "(\w+)", (\d+), (\d+),\n((?:\s+"[0-9a-f]+"(?: \},)?\n)+)', text):
        ev = bytes.fromhex("".join(re.findall(r'"([0-9a-f]+)"', body)))[19:-4]
        etype = int(etype)
        tid = (scen, ev[:6])
        if etype == 19:
            maps[tid] = ev
        elif tid in maps:
            m = maps[tid]
            save("fuzz_rowimage", bytes([ROWS_TYPES.index(etype)]) + struct.pack("<H", len(m)) + m + ev)


def main():
    global OUT
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, help="MariaDB port (server captures are skipped without it)")
    ap.add_argument("--out", default=os.path.join(HERE, "corpus"))
    a = ap.parse_args()
    OUT = a.out
    sql_seeds()
    cache_seeds()
    config_seeds()
    admin_seeds()
    compress_seeds()
    rowimage_seeds()
    if a.port:
        capture_clients(a.host, a.port)
        capture_relay(a.host, a.port)
    else:
        print("no --port: handshake and relay seeds not captured")


if __name__ == "__main__":
    main()
