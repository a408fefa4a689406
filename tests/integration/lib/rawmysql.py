"""rawmysql: a tiny raw MySQL client/server protocol helper for tests.

Speaks the wire protocol by hand so that tests can send exactly the bytes they
want (odd capability flags, bad sequence ids, garbage, oversized headers) and
read back every response packet unparsed (to compare the bytes a node sends
with the bytes MariaDB sends).

    c = Conn("127.0.0.1", port)
    r = c.login("app", "pw", db="shoaltest", caps=DEFAULT_CAPS)
    pkts = c.query("SELECT 1")       # [(seq, payload), ...] the whole response
    c.command(COM_PING)              # likewise for any command
"""
import hashlib
import socket
import struct

# capability flags
CLIENT_LONG_PASSWORD = 1  # a.k.a. CLIENT_MYSQL in MariaDB
CLIENT_FOUND_ROWS = 1 << 1
CLIENT_LONG_FLAG = 1 << 2
CLIENT_CONNECT_WITH_DB = 1 << 3
CLIENT_NO_SCHEMA = 1 << 4
CLIENT_COMPRESS = 1 << 5
CLIENT_ODBC = 1 << 6
CLIENT_LOCAL_FILES = 1 << 7
CLIENT_IGNORE_SPACE = 1 << 8
CLIENT_PROTOCOL_41 = 1 << 9
CLIENT_INTERACTIVE = 1 << 10
CLIENT_SSL = 1 << 11
CLIENT_IGNORE_SIGPIPE = 1 << 12
CLIENT_TRANSACTIONS = 1 << 13
CLIENT_RESERVED = 1 << 14
CLIENT_SECURE_CONNECTION = 1 << 15
CLIENT_MULTI_STATEMENTS = 1 << 16
CLIENT_MULTI_RESULTS = 1 << 17
CLIENT_PS_MULTI_RESULTS = 1 << 18
CLIENT_PLUGIN_AUTH = 1 << 19
CLIENT_CONNECT_ATTRS = 1 << 20
CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA = 1 << 21
CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS = 1 << 22
CLIENT_SESSION_TRACK = 1 << 23
CLIENT_DEPRECATE_EOF = 1 << 24

BASE_CAPS = (CLIENT_LONG_PASSWORD | CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION
             | CLIENT_PLUGIN_AUTH | CLIENT_TRANSACTIONS | CLIENT_LONG_FLAG
             | CLIENT_MULTI_RESULTS | CLIENT_MULTI_STATEMENTS
             | CLIENT_SESSION_TRACK | CLIENT_PS_MULTI_RESULTS)
DEFAULT_CAPS = BASE_CAPS | CLIENT_DEPRECATE_EOF

SERVER_MORE_RESULTS_EXISTS = 0x0008
SERVER_STATUS_CURSOR_EXISTS = 0x0040
SERVER_STATUS_LAST_ROW_SENT = 0x0080
MARIADB_CLIENT_EXTENDED_METADATA = 1 << 3   # a MariaDB extended capability

# commands
COM_QUIT = 0x01
COM_INIT_DB = 0x02
COM_QUERY = 0x03
COM_FIELD_LIST = 0x04
COM_STATISTICS = 0x09
COM_PING = 0x0E
COM_CHANGE_USER = 0x11
COM_STMT_PREPARE = 0x16
COM_STMT_EXECUTE = 0x17
COM_STMT_SEND_LONG_DATA = 0x18
COM_STMT_CLOSE = 0x19
COM_STMT_RESET = 0x1A
COM_SET_OPTION = 0x1B
COM_STMT_FETCH = 0x1C

# column types (binary protocol parameters)
MYSQL_TYPE_TINY = 0x01
MYSQL_TYPE_LONG = 0x03
MYSQL_TYPE_DOUBLE = 0x05
MYSQL_TYPE_NULL = 0x06
MYSQL_TYPE_LONGLONG = 0x08
MYSQL_TYPE_VAR_STRING = 0xFD
MYSQL_TYPE_STRING = 0xFE
MYSQL_TYPE_BLOB = 0xFC

UTF8MB4_GENERAL_CI = 45


class ProtocolError(Exception):
    pass


def _xor(a, b):
    return bytes(x ^ y for x, y in zip(a, b))


def native_token(pw, nonce):
    """mysql_native_password: SHA1(pw) XOR SHA1(nonce + SHA1(SHA1(pw)))."""
    if not pw:
        return b""
    if isinstance(pw, str):
        pw = pw.encode()
    h1 = hashlib.sha1(pw).digest()
    h2 = hashlib.sha1(h1).digest()
    return _xor(h1, hashlib.sha1(nonce[:20] + h2).digest())


def sha2_token(pw, nonce):
    """caching_sha2_password: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce)."""
    if not pw:
        return b""
    if isinstance(pw, str):
        pw = pw.encode()
    h1 = hashlib.sha256(pw).digest()
    h2 = hashlib.sha256(h1).digest()
    return _xor(h1, hashlib.sha256(h2 + nonce[:20]).digest())


def lenenc_int(n):
    if n < 251:
        return bytes([n])
    if n < 1 << 16:
        return b"\xfc" + struct.pack("<H", n)
    if n < 1 << 24:
        return b"\xfd" + struct.pack("<I", n)[:3]
    return b"\xfe" + struct.pack("<Q", n)


def lenenc_str(b):
    if isinstance(b, str):
        b = b.encode()
    return lenenc_int(len(b)) + b


def read_lenenc(buf, pos):
    """Return (value, newpos); value None for the NULL marker 0xfb."""
    c = buf[pos]
    if c < 251:
        return c, pos + 1
    if c == 0xFB:
        return None, pos + 1
    if c == 0xFC:
        return struct.unpack_from("<H", buf, pos + 1)[0], pos + 3
    if c == 0xFD:
        return struct.unpack_from("<I", buf[pos + 1:pos + 4] + b"\0")[0], pos + 4
    return struct.unpack_from("<Q", buf, pos + 1)[0], pos + 9


def parse_err(p):
    """ERR payload -> (code, sqlstate, message)."""
    code = struct.unpack_from("<H", p, 1)[0]
    if len(p) > 3 and p[3:4] == b"#":
        return code, p[4:9].decode(), p[9:].decode("utf-8", "replace")
    return code, "", p[3:].decode("utf-8", "replace")


def parse_ok(p):
    """OK (0x00 or 0xfe-as-OK) payload -> dict(affected, insert_id, status, warnings, rest)."""
    affected, pos = read_lenenc(p, 1)
    insert_id, pos = read_lenenc(p, pos)
    status, warnings = struct.unpack_from("<HH", p, pos)
    return dict(affected=affected, insert_id=insert_id, status=status,
                warnings=warnings, rest=p[pos + 4:])


def parse_eof_status(p):
    """Status flags of a classic EOF packet (0xfe, warnings, status)."""
    if len(p) >= 5:
        return struct.unpack_from("<H", p, 3)[0]
    return 0


def hexdump(b, width=16):
    out = []
    for i in range(0, len(b), width):
        chunk = b[i:i + width]
        out.append("%04x  %-*s  %s" % (i, width * 3, " ".join("%02x" % x for x in chunk),
                                       "".join(chr(x) if 32 <= x < 127 else "." for x in chunk)))
    return "\n".join(out)


class Greeting:
    def __init__(self, payload):
        self.raw = payload
        p = payload
        if p[0] == 0xFF:
            code, state, msg = parse_err(p) if len(p) > 3 and p[3:4] == b"#" else (
                struct.unpack_from("<H", p, 1)[0], "", p[3:].decode("utf-8", "replace"))
            raise ProtocolError("server refused: %d %s %s" % (code, state, msg))
        self.protocol = p[0]
        if self.protocol != 10:
            raise ProtocolError("not a protocol-10 greeting: %r" % p[:16])
        end = p.index(b"\0", 1)
        self.server_version = p[1:end].decode()
        pos = end + 1
        self.connection_id = struct.unpack_from("<I", p, pos)[0]
        pos += 4
        nonce = p[pos:pos + 8]
        pos += 9
        cap_lo = struct.unpack_from("<H", p, pos)[0]
        pos += 2
        self.charset = p[pos]
        self.status = struct.unpack_from("<H", p, pos + 1)[0]
        cap_hi = struct.unpack_from("<H", p, pos + 3)[0]
        self.caps = cap_lo | (cap_hi << 16)
        auth_len = p[pos + 5]
        self.ext_caps = struct.unpack_from("<I", p, pos + 12)[0]
        pos += 16
        n2 = max(13, auth_len - 8)
        nonce += p[pos:pos + n2].rstrip(b"\0")
        pos += n2
        self.nonce = nonce[:20]
        self.plugin = ""
        if pos < len(p):
            self.plugin = p[pos:].split(b"\0")[0].decode()


class Conn:
    def __init__(self, host, port, timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.greeting = None
        self.caps = 0
        self.seq = 0

    # -- transport
    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def close_and_wait(self, timeout=10.0):
        """Close our side and wait for the server to close its own. Once the
        EOF arrives, the server has dropped the session: a limit it counts
        against is free again (close() alone only queues a FIN the server
        may read much later on a loaded machine)."""
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        closed = self.is_closed(timeout)
        self.close()
        return closed

    def abort(self):
        """Close with RST (SO_LINGER 0): an abrupt client death."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.close()

    def send_raw(self, data):
        self.sock.sendall(data)

    def recv_exact(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise EOFError("connection closed after %d of %d bytes" % (len(buf), n))
            buf += chunk
        return bytes(buf)

    def read_packet(self):
        """One physical packet -> (seq, payload)."""
        hdr = self.recv_exact(4)
        length = hdr[0] | hdr[1] << 8 | hdr[2] << 16
        self.seq = (hdr[3] + 1) & 0xFF
        return hdr[3], self.recv_exact(length)

    def write_packet(self, payload, seq=None):
        if seq is None:
            seq = self.seq
        out = bytearray()
        while True:
            chunk = payload[:0xFFFFFF]
            payload = payload[0xFFFFFF:]
            out += struct.pack("<I", len(chunk))[:3] + bytes([seq & 0xFF]) + chunk
            seq += 1
            if len(chunk) < 0xFFFFFF:
                break
        self.seq = seq & 0xFF
        self.sock.sendall(bytes(out))

    def is_closed(self, timeout=5.0):
        """True when the peer closes (EOF or reset) within timeout; data read is discarded."""
        self.sock.settimeout(timeout)
        try:
            while True:
                d = self.sock.recv(65536)
                if not d:
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False
        except OSError:
            return True

    # -- handshake
    def read_greeting(self):
        _, p = self.read_packet()
        self.greeting = Greeting(p)
        return self.greeting

    def handshake_response(self, user, token, db=None, caps=DEFAULT_CAPS,
                           charset=UTF8MB4_GENERAL_CI, plugin="mysql_native_password",
                           max_packet=16 * 1024 * 1024, ext_caps=0):
        """ext_caps: MariaDB extended capabilities (e.g.
        MARIADB_CLIENT_EXTENDED_METADATA); CLIENT_MYSQL is then cleared."""
        if db:
            caps |= CLIENT_CONNECT_WITH_DB
        else:
            caps &= ~CLIENT_CONNECT_WITH_DB
        if ext_caps:
            caps &= ~CLIENT_LONG_PASSWORD
        p = struct.pack("<IIB", caps, max_packet, charset) + b"\0" * 19 + struct.pack("<I", ext_caps)
        p += user.encode() + b"\0"
        if caps & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA:
            p += lenenc_str(token)
        elif caps & CLIENT_SECURE_CONNECTION:
            p += bytes([len(token)]) + token
        else:
            p += token + b"\0"
        if db:
            p += db.encode() + b"\0"
        if caps & CLIENT_PLUGIN_AUTH:
            p += plugin.encode() + b"\0"
        self.caps = caps
        return p

    def login(self, user, pw, db=None, caps=DEFAULT_CAPS, charset=UTF8MB4_GENERAL_CI, seq=None,
              ext_caps=0):
        """Full login. Returns ("ok", payload) or ("err", code, sqlstate, msg)."""
        g = self.greeting or self.read_greeting()
        plugin = g.plugin or "mysql_native_password"
        token = sha2_token(pw, g.nonce) if plugin == "caching_sha2_password" else native_token(pw, g.nonce)
        self.write_packet(self.handshake_response(user, token, db, caps, charset, plugin,
                                                  ext_caps=ext_caps),
                          1 if seq is None else seq)
        while True:
            _, p = self.read_packet()
            if p[0] == 0x00:
                return ("ok", p)
            if p[0] == 0xFF:
                return ("err",) + parse_err(p)
            if p[0] == 0xFE:  # auth switch request
                end = p.index(b"\0", 1) if b"\0" in p[1:] else len(p)
                plugin = p[1:end].decode()
                nonce = p[end + 1:].rstrip(b"\0")
                if plugin == "mysql_native_password":
                    self.write_packet(native_token(pw, nonce))
                elif plugin == "caching_sha2_password":
                    self.write_packet(sha2_token(pw, nonce))
                else:
                    raise ProtocolError("unsupported auth switch to %s" % plugin)
                continue
            if p[0] == 0x01:  # caching_sha2 more data: 3 fast ok, 4 full auth
                if p[1:2] == b"\x03":
                    continue
                raise ProtocolError("full authentication needed (not supported here)")
            raise ProtocolError("unexpected login packet %r" % p[:32])

    # -- commands
    def command(self, cmd, data=b"", kind="result"):
        """Send a command (seq 0) and read its whole response.
        kind: "result" (OK/ERR/result sets, multi-results followed),
              "prepare" (COM_STMT_PREPARE), "none" (no response: STMT_CLOSE,
              SEND_LONG_DATA), "one" (a single packet: PING, STATISTICS...).
        Returns [(seq, payload), ...]."""
        if isinstance(data, str):
            data = data.encode()
        self.write_packet(bytes([cmd]) + data, 0)
        if kind == "none":
            return []
        if kind == "one":
            return [self.read_packet()]
        if kind == "prepare":
            return self.read_prepare_response()
        if kind == "fields":
            return self.read_until_eof()
        return self.read_result()

    def query(self, sql):
        return self.command(COM_QUERY, sql)

    def _deprecate_eof(self):
        return bool(self.caps & CLIENT_DEPRECATE_EOF)

    def _is_terminator(self, p):
        if p[0] != 0xFE:
            return False
        return len(p) < 0xFFFFFF if self._deprecate_eof() else len(p) < 9

    def _status_of(self, p):
        if self._deprecate_eof() and p[0] == 0xFE:
            return parse_ok(p)["status"]
        return parse_eof_status(p)

    def read_until_eof(self):
        pkts = []
        while True:
            seq, p = self.read_packet()
            pkts.append((seq, p))
            if p[0] == 0xFF or self._is_terminator(p):
                return pkts

    def read_result(self):
        pkts = []
        while True:
            seq, p = self.read_packet()
            pkts.append((seq, p))
            if p[0] == 0xFF:
                return pkts
            if p[0] == 0x00:
                if parse_ok(p)["status"] & SERVER_MORE_RESULTS_EXISTS:
                    continue
                return pkts
            if p[0] == 0xFB:
                raise ProtocolError("LOCAL INFILE request not supported")
            ncols, _ = read_lenenc(p, 0)
            for _ in range(ncols):
                pkts.append(self.read_packet())
            if not self._deprecate_eof():
                pkts.append(self.read_packet())
            while True:
                seq, p = self.read_packet()
                pkts.append((seq, p))
                if p[0] == 0xFF:
                    return pkts
                if self._is_terminator(p):
                    break
            if not self._status_of(p) & SERVER_MORE_RESULTS_EXISTS:
                return pkts

    def read_prepare_response(self):
        seq, p = self.read_packet()
        pkts = [(seq, p)]
        if p[0] != 0x00:
            return pkts
        _stmt_id, ncols, nparams = struct.unpack_from("<IHH", p, 1)
        for n in (nparams, ncols):
            if n:
                for _ in range(n):
                    pkts.append(self.read_packet())
                if not self._deprecate_eof():
                    pkts.append(self.read_packet())
        return pkts

    # -- prepared statements
    def prepare(self, sql):
        """Returns (stmt_id, ncols, nparams, packets); stmt_id None on error."""
        pkts = self.command(COM_STMT_PREPARE, sql, kind="prepare")
        p = pkts[0][1]
        if p[0] != 0x00:
            return None, 0, 0, pkts
        stmt_id, ncols, nparams = struct.unpack_from("<IHH", p, 1)
        return stmt_id, ncols, nparams, pkts

    @staticmethod
    def encode_execute(stmt_id, params=(), flags=0):
        p = struct.pack("<IBI", stmt_id, flags, 1)
        if params:
            n = len(params)
            nullmap = bytearray((n + 7) // 8)
            types = b""
            values = b""
            for i, v in enumerate(params):
                if v is None:
                    nullmap[i // 8] |= 1 << (i % 8)
                    types += struct.pack("<BB", MYSQL_TYPE_NULL, 0)
                elif isinstance(v, bool) or isinstance(v, int):
                    types += struct.pack("<BB", MYSQL_TYPE_LONGLONG, 0)
                    values += struct.pack("<q", int(v))
                elif isinstance(v, float):
                    types += struct.pack("<BB", MYSQL_TYPE_DOUBLE, 0)
                    values += struct.pack("<d", v)
                elif isinstance(v, (bytes, bytearray)):
                    types += struct.pack("<BB", MYSQL_TYPE_BLOB, 0)
                    values += lenenc_str(bytes(v))
                else:
                    types += struct.pack("<BB", MYSQL_TYPE_VAR_STRING, 0)
                    values += lenenc_str(str(v))
            p += bytes(nullmap) + b"\x01" + types + values
        return p

    def execute(self, stmt_id, params=(), flags=0):
        return self.command(COM_STMT_EXECUTE, self.encode_execute(stmt_id, params, flags))

    def close_stmt(self, stmt_id):
        self.command(COM_STMT_CLOSE, struct.pack("<I", stmt_id), kind="none")

    # -- server-side cursors: answers read exactly (no quiet-line waits)
    def execute_cursor(self, stmt_id, params=()):
        """COM_STMT_EXECUTE with CURSOR_TYPE_READ_ONLY. The answer: OK or
        ERR; or the column count and definitions, then an EOF with
        SERVER_STATUS_CURSOR_EXISTS (the rows come by fetch), an ERR in its
        place (the server failed making the cursor's rows), or the rows
        themselves when the server opened no cursor."""
        self.write_packet(bytes([COM_STMT_EXECUTE]) + self.encode_execute(stmt_id, params, flags=1), 0)
        seq, p = self.read_packet()
        pkts = [(seq, p)]
        if p[0] in (0x00, 0xFF):
            return pkts
        ncols, _ = read_lenenc(p, 0)
        for _ in range(ncols):
            pkts.append(self.read_packet())
        seq, p = self.read_packet()
        pkts.append((seq, p))
        if p[0] == 0xFF:
            return pkts
        if p[0] == 0xFE and len(p) < 9 and parse_eof_status(p) & SERVER_STATUS_CURSOR_EXISTS:
            return pkts
        if self._is_terminator(p) and self._deprecate_eof():
            return pkts
        while True:  # no cursor: the rows, as for any execute
            seq, p = self.read_packet()
            pkts.append((seq, p))
            if p[0] == 0xFF or self._is_terminator(p):
                return pkts

    def fetch(self, stmt_id, rows):
        """COM_STMT_FETCH: up to rows rows, then an EOF (or OK) or an ERR."""
        self.write_packet(bytes([COM_STMT_FETCH]) + struct.pack("<II", stmt_id, rows), 0)
        return self.read_until_eof()

    def reset_stmt(self, stmt_id):
        return self.command(COM_STMT_RESET, struct.pack("<I", stmt_id), kind="one")


def connect(port, user="app", pw="pw", db="shoaltest", caps=DEFAULT_CAPS, host="127.0.0.1",
            timeout=10.0):
    """Connect and log in; raise ProtocolError on a refused login."""
    c = Conn(host, port, timeout)
    r = c.login(user, pw, db, caps)
    if r[0] != "ok":
        c.close()
        raise ProtocolError("login refused: %r" % (r,))
    return c


def describe(pkts, limit=12):
    """Human-readable dump of a packet list for diagnostics."""
    out = []
    for i, (seq, p) in enumerate(pkts[:limit]):
        out.append("[%d] seq=%d len=%d" % (i, seq, len(p)))
        out.append(hexdump(p[:256]))
    if len(pkts) > limit:
        out.append("... %d more packets" % (len(pkts) - limit))
    return "\n".join(out)


def first_difference(a, b):
    """Describe the first difference between two packet lists (or None)."""
    for i in range(max(len(a), len(b))):
        if i >= len(a):
            return "direct ended after %d packets; via has more:\n%s" % (len(a), describe(b[i:], 3))
        if i >= len(b):
            return "via ended after %d packets; direct has more:\n%s" % (len(b), describe(a[i:], 3))
        if a[i] != b[i]:
            (sa, pa), (sb, pb) = a[i], b[i]
            j = next((k for k in range(min(len(pa), len(pb))) if pa[k] != pb[k]), min(len(pa), len(pb)))
            return ("packet %d differs (direct seq=%d len=%d, via seq=%d len=%d; first differing byte at %d)\n"
                    "direct:\n%s\nvia:\n%s" % (i, sa, len(pa), sb, len(pb), j,
                                               hexdump(pa[:256]), hexdump(pb[:256])))
    return None


def login_result(port, user="app", pw="pw", db="shoaltest", caps=DEFAULT_CAPS, host="127.0.0.1",
                 timeout=15.0):
    """Log in and report how it went: ("ok", None, None, None) or
    ("err", code, sqlstate, message) or ("closed", None, None, reason)."""
    try:
        c = Conn(host, port, timeout)
        _, p = c.read_packet()
        if p[:1] == b"\xff":  # refused before the greeting (1040, a shunned node...)
            c.close()
            return ("err",) + parse_err(p)
        c.greeting = Greeting(p)
        r = c.login(user, pw, db, caps)
        c.close()
        if r[0] == "ok":
            return ("ok", None, None, None)
        return r
    except (EOFError, ConnectionError, OSError, ProtocolError) as e:
        return ("closed", None, None, repr(e))


if __name__ == "__main__":
    # python3 rawmysql.py login PORT USER PW  -> prints the login result
    import sys
    if len(sys.argv) >= 3 and sys.argv[1] == "login":
        res = login_result(int(sys.argv[2]), *(sys.argv[3:5]))
        print("\t".join("" if x is None else str(x) for x in res))
