"""cache_proto: helpers for the cache tests (80-cache-*.t), built on rawmysql.

rawmysql already speaks COM_QUERY, COM_STMT_PREPARE / COM_STMT_EXECUTE and
COM_INIT_DB and hands back raw packets; this module adds what the cache tests
need on top: decoding a text result set into rows, the node's cache SQL
answers (EXPLAIN LAST STATEMENT, SHOW SHOAL STATUS, SHOW CACHES, SHOW PROXIED
QUERIES) as Python values, binary-protocol parameters with explicit types
(DATETIME, VAR_STRING...), and a few process helpers.

    c = connect(port)                 # rawmysql.Conn, logged in to shoaltest
    rows(c, "SELECT 1")               # [(b"1",)]   (None for NULL)
    explain(c)                        # ("readyset_shallow", "ok")
    status(c)["Cache Hits"]           # int
"""
import os
import struct
import time

import rawmysql as r

connect = r.connect


class SQLError(Exception):
    def __init__(self, code, state, msg):
        Exception.__init__(self, "ERROR %d (%s): %s" % (code, state, msg))
        self.code, self.state, self.msg = code, state, msg


def err_of(pkts):
    """(code, sqlstate, message) if the response is an ERR, else None."""
    if pkts and pkts[-1][1][:1] == b"\xff":
        return r.parse_err(pkts[-1][1])
    return None


def _is_eof(p, deprecate_eof):
    if p[:1] != b"\xfe":
        return False
    return len(p) < 0xFFFFFF if deprecate_eof else len(p) < 9


def decode_text(pkts, deprecate_eof):
    """Rows of the first result set of a text-protocol response:
    (column names, [tuple of bytes-or-None, ...]). Raises SQLError on ERR."""
    e = err_of(pkts)
    if e and (len(pkts) == 1 or pkts[0][1][:1] == b"\xff"):
        raise SQLError(*e)
    p0 = pkts[0][1]
    if p0[:1] == b"\x00":
        return [], []
    ncols, _ = r.read_lenenc(p0, 0)
    names = []
    for i in range(ncols):
        p = pkts[1 + i][1]
        pos = 0
        fields = []
        for _ in range(6):  # catalog, schema, table, org_table, name, org_name
            n, pos = r.read_lenenc(p, pos)
            fields.append(p[pos:pos + n])
            pos += n
        names.append(fields[4].decode("utf-8", "replace"))
    i = 1 + ncols
    if not deprecate_eof:
        i += 1  # the EOF after the column definitions
    out = []
    while i < len(pkts):
        p = pkts[i][1]
        if p[:1] == b"\xff":
            raise SQLError(*r.parse_err(p))
        if _is_eof(p, deprecate_eof):
            break
        pos, row = 0, []
        for _ in range(ncols):
            n, pos = r.read_lenenc(p, pos)
            if n is None:
                row.append(None)
            else:
                row.append(p[pos:pos + n])
                pos += n
        out.append(tuple(row))
        i += 1
    return names, out


def rows(c, sql):
    """Run sql on a rawmysql.Conn; return its rows (bytes or None)."""
    return decode_text(c.query(sql), c._deprecate_eof())[1]


def srows(c, sql):
    """rows() with every value decoded as UTF-8 text."""
    return [tuple(None if v is None else v.decode("utf-8", "replace") for v in row)
            for row in rows(c, sql)]


def scalar(c, sql):
    rs = srows(c, sql)
    return rs[0][0] if rs else None


def must_ok(c, sql):
    """Run a statement that must not fail; return its packets."""
    pkts = c.query(sql)
    e = err_of(pkts)
    if e:
        raise SQLError(*e)
    return pkts


def kv(c, sql):
    return {row[0]: row[1] for row in srows(c, sql)}


def status(c):
    """SHOW SHOAL STATUS as a dict; numeric values as ints."""
    out = {}
    for k, v in kv(c, "SHOW SHOAL STATUS").items():
        try:
            out[k] = int(v)
        except (TypeError, ValueError):
            out[k] = v
    return out


def explain(c):
    rs = srows(c, "EXPLAIN LAST STATEMENT")
    return rs[0][0], rs[0][1]


def cache_hits(c):
    return status(c)["Cache Hits"]


def warm(c, sql, tries=100):
    """Run sql until it is answered from the cache (a hit); its value."""
    last = None
    for _ in range(tries):
        h0 = cache_hits(c)
        v = scalar(c, sql)
        if cache_hits(c) > h0:
            return v
        last = explain(c)
        time.sleep(0.05)
    raise AssertionError("never a cache hit for %r (last: %r)" % (sql, last))


def poll(c, sql, want, timeout=10.0, step=0.002):
    """Seconds until sql gives want through c, or None."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        if scalar(c, sql) == want:
            return time.time() - t0
        time.sleep(step)
    return None


def table(c, sql):
    """Rows as dicts keyed by column name (text)."""
    names, rs = decode_text(c.query(sql), c._deprecate_eof())
    return [dict(zip(names, (None if v is None else v.decode("utf-8", "replace") for v in row)))
            for row in rs]


def status_flags(pkts, deprecate_eof):
    """Server status flags of the last packet of a response (OK, EOF or the
    0xFE OK of DEPRECATE_EOF)."""
    p = pkts[-1][1]
    if p[:1] == b"\x00" or (p[:1] == b"\xfe" and deprecate_eof):
        return r.parse_ok(p)["status"]
    if p[:1] == b"\xfe":
        return r.parse_eof_status(p)
    return None


# ---- binary protocol ------------------------------------------------------

MYSQL_TYPE_DATETIME = 0x0C


class DateTime:
    """A DATETIME parameter (sent as MYSQL_TYPE_DATETIME, binary encoded)."""

    def __init__(self, y, mo, d, h=0, mi=0, s=0, us=0):
        self.v = (y, mo, d, h, mi, s, us)

    def encode(self):
        y, mo, d, h, mi, s, us = self.v
        if us:
            return bytes([11]) + struct.pack("<HBBBBBI", y, mo, d, h, mi, s, us)
        return bytes([7]) + struct.pack("<HBBBBB", y, mo, d, h, mi, s)


class Typed:
    """A parameter with an explicit type byte and pre-encoded value."""

    def __init__(self, type_byte, value_bytes, unsigned=False):
        self.t, self.b, self.unsigned = type_byte, value_bytes, unsigned


def encode_execute(stmt_id, params=(), flags=0, send_types=True):
    """COM_STMT_EXECUTE body like rawmysql.Conn.encode_execute, plus DATETIME
    and Typed parameters; send_types=False sends new-params-bound = 0."""
    p = struct.pack("<IBI", stmt_id, flags, 1)
    if not params:
        return p
    n = len(params)
    nullmap = bytearray((n + 7) // 8)
    types, values = b"", b""
    for i, v in enumerate(params):
        if v is None:
            nullmap[i // 8] |= 1 << (i % 8)
            types += struct.pack("<BB", r.MYSQL_TYPE_NULL, 0)
        elif isinstance(v, DateTime):
            types += struct.pack("<BB", MYSQL_TYPE_DATETIME, 0)
            values += v.encode()
        elif isinstance(v, Typed):
            types += struct.pack("<BB", v.t, 0x80 if v.unsigned else 0)
            values += v.b
        elif isinstance(v, (bool, int)):
            types += struct.pack("<BB", r.MYSQL_TYPE_LONGLONG, 0)
            values += struct.pack("<q", int(v))
        elif isinstance(v, float):
            types += struct.pack("<BB", r.MYSQL_TYPE_DOUBLE, 0)
            values += struct.pack("<d", v)
        elif isinstance(v, (bytes, bytearray)):
            types += struct.pack("<BB", r.MYSQL_TYPE_BLOB, 0)
            values += r.lenenc_str(bytes(v))
        else:
            types += struct.pack("<BB", r.MYSQL_TYPE_VAR_STRING, 0)
            values += r.lenenc_str(str(v))
    p += bytes(nullmap) + (b"\x01" + types if send_types else b"\x00") + values
    return p


def execute(c, stmt_id, params=(), send_types=True):
    return c.command(r.COM_STMT_EXECUTE, encode_execute(stmt_id, params, send_types=send_types))


# ---- misc -------------------------------------------------------------------

def rss_kib(pid):
    with open("/proc/%d/status" % int(pid)) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def timed(fn, *a, **kw):
    """(seconds, result) of fn(*a, **kw)."""
    t = time.monotonic()
    res = fn(*a, **kw)
    return time.monotonic() - t, res


def env_port(name):
    return int(os.environ[name])
