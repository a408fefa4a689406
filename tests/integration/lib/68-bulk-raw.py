"""68-bulk-raw: MariaDB's bulk operations on the wire, a node against
MariaDB itself (68-bulk.t runs it; PORT is the node's, MDB_PORT MariaDB's).

The greeting: CLIENT_MYSQL clear and the extended capabilities the node
relays (bulk, extended metadata), those MariaDB offers. Then, with bulk
negotiated (with and without CLIENT_DEPRECATE_EOF), with extended metadata
alone and with no extension, the same
command sequence both ways: COM_STMT_BULK_EXECUTE by id and by 0xffffffff
(the last statement prepared), a RETURNING's rows, a bulk execute without
types, a SELECT (refused), an unknown id, packets too short; 0xffffffff after
a PREPARE that failed, after COM_STMT_CLOSE of it and of another statement;
COM_STMT_EXECUTE and COM_STMT_RESET of 0xffffffff, executes too short. Every
answer is compared (statement ids in PREPARE answers masked: the node hands
out its own). And a bulk execute without types after the upstream
connection that ran the one with types was killed (MDB_SOCK: root): the
node puts in the types, as MariaDB kept them.
"""
import os
import struct
import subprocess
import time

import rawmysql as r
from taplib import ok, diag

DPORT, VPORT = int(os.environ["MDB_PORT"]), int(os.environ["PORT"])
SOCK = os.environ["MDB_SOCK"]
BULK, EXT_META = 1 << 2, 1 << 3
COM_STMT_BULK_EXECUTE = 0xFA
LAST = 0xFFFFFFFF
SEND_TYPES = 0x80


def login(port, ext, caps=r.DEFAULT_CAPS):
    c = r.Conn("127.0.0.1", port)
    g = c.read_greeting()
    res = c.login("app", "pw", db="shoaltest", caps=caps, ext_caps=ext)
    if res[0] != "ok":
        raise r.ProtocolError("login: %r" % (res,))
    return c, g


def answer(pkts, prepare=False):
    """An answer, comparable across servers: ERRs and OKs parsed, other
    packets as they are; a PREPARE's statement id masked."""
    out = []
    for _, p in pkts:
        if prepare and not out and p[0] == 0x00:
            out.append(b"\x00<id>" + p[5:])
        elif p[0] == 0xFF:
            out.append(("ERR",) + r.parse_err(p))
        elif p[0] == 0x00 and not out:
            o = r.parse_ok(p)
            out.append(("OK", o["affected"], o["status"], o["warnings"], o["rest"]))
        else:
            out.append(p)
    return out


def bulk(sid, rows, types=True):
    """A bulk execute of INSERT (a INT, b VARCHAR): rows of (a, b); None is
    a NULL indicator, "DEFAULT" the default indicator."""
    b = struct.pack("<IH", sid, SEND_TYPES if types else 0)
    if types:
        b += struct.pack("<HH", r.MYSQL_TYPE_LONG, r.MYSQL_TYPE_VAR_STRING)
    for a, s in rows:
        b += b"\x01" if a is None else b"\x00" + struct.pack("<i", a)
        b += b"\x01" if s is None else b"\x02" if s == "DEFAULT" else b"\x00" + r.lenenc_str(s)
    return b


def execute(sid):
    return struct.pack("<IBI", sid, 0, 1)


def scenario(port, ext, caps, table):
    """The command sequence; returns [(step, answer), ...] and the prepared
    ids (by step) so that messages naming them can be compared."""
    c, _ = login(port, ext, caps)
    steps = []

    def run(name, cmd, data=b"", kind="result"):
        pkts = c.command(cmd, data, kind=kind)
        steps.append((name, answer(pkts, kind == "prepare")))
        return pkts

    def prepare(name, sql):
        pkts = run(name, r.COM_STMT_PREPARE, sql, kind="prepare")
        if pkts[0][1][0] == 0x00:
            return struct.unpack_from("<I", pkts[0][1], 1)[0]
        return None

    run("drop", r.COM_QUERY, "DROP TABLE IF EXISTS %s, %s_r" % (table, table))
    run("create", r.COM_QUERY, "CREATE TABLE %s (a INT, b VARCHAR(10) DEFAULT 'dflt')" % table)
    run("create r", r.COM_QUERY, "CREATE TABLE %s_r (id INT AUTO_INCREMENT PRIMARY KEY, v INT)" % table)
    ins = prepare("prepare insert", "INSERT INTO %s VALUES (?, ?)" % table)
    run("bulk by id", COM_STMT_BULK_EXECUTE, bulk(ins, [(1, "one"), (2, None), (None, "DEFAULT")]))
    run("bulk of the last statement", COM_STMT_BULK_EXECUTE, bulk(LAST, [(3, "three")]))
    run("bulk without types", COM_STMT_BULK_EXECUTE, bulk(ins, [(4, "four")], types=False))
    ret = prepare("prepare returning", "INSERT INTO %s_r (v) VALUES (?) RETURNING id, v" % table)
    run("bulk returning", COM_STMT_BULK_EXECUTE,
        struct.pack("<IHH", ret, SEND_TYPES, r.MYSQL_TYPE_LONG) + b"\x00" + struct.pack("<i", 7)
        + b"\x00" + struct.pack("<i", 8))
    sel = prepare("prepare select", "SELECT ? + 1")
    run("bulk of a select", COM_STMT_BULK_EXECUTE,
        struct.pack("<IHH", sel, SEND_TYPES, r.MYSQL_TYPE_LONG) + b"\x00" + struct.pack("<i", 1))
    run("bulk of an unknown id", COM_STMT_BULK_EXECUTE, bulk(777777, [(1, "x")]))
    run("bulk of 5 bytes", COM_STMT_BULK_EXECUTE, struct.pack("<IB", ins, 0))
    run("bulk of 0 bytes", COM_STMT_BULK_EXECUTE, b"")
    run("execute of 8 bytes", r.COM_STMT_EXECUTE, execute(ins)[:8])
    run("execute of 3 bytes", r.COM_STMT_EXECUTE, b"\x01\x02\x03")
    run("a PREPARE that fails", r.COM_STMT_PREPARE, "INSERT INTO nosuch68 VALUES (?)", kind="prepare")
    run("bulk of the last after it", COM_STMT_BULK_EXECUTE, bulk(LAST, [(5, "five")]))
    run("execute of the last after it", r.COM_STMT_EXECUTE, execute(LAST))
    run("reset of the last after it", r.COM_STMT_RESET, struct.pack("<I", LAST), kind="one")
    one = prepare("prepare select 1", "SELECT 1")
    run("execute of the last", r.COM_STMT_EXECUTE, execute(LAST))
    run("reset of the last", r.COM_STMT_RESET, struct.pack("<I", LAST), kind="one")
    two = prepare("prepare select 2", "SELECT 2")
    c.command(r.COM_STMT_CLOSE, struct.pack("<I", one), kind="none")
    run("execute of the last, another closed", r.COM_STMT_EXECUTE, execute(LAST))
    c.command(r.COM_STMT_CLOSE, struct.pack("<I", LAST), kind="none")
    run("execute of the last once closed", r.COM_STMT_EXECUTE, execute(LAST))
    run("execute of it by id once closed", r.COM_STMT_EXECUTE, execute(two))
    run("rows", r.COM_QUERY, "SELECT * FROM %s ORDER BY a" % table)
    run("rows r", r.COM_QUERY, "SELECT COUNT(*) FROM %s_r" % table)
    run("drop again", r.COM_QUERY, "DROP TABLE %s, %s_r" % (table, table))
    c.close()
    return steps, {"two": two}


def masked(steps, ids):
    """Messages that name a prepared id name it by its role."""
    out = []
    for name, ans in steps:
        fixed = []
        for a in ans:
            if isinstance(a, tuple) and a[0] == "ERR":
                msg = a[3]
                for role, sid in ids.items():
                    msg = msg.replace("(%d)" % sid, "(<%s>)" % role)
                a = a[:3] + (msg,)
            fixed.append(a)
        out.append((name, fixed))
    return out


def root(sql):
    return subprocess.run(["mariadb", "--no-defaults", "--socket=" + SOCK, "-uroot", "-N", "-e", sql],
                          capture_output=True, text=True, check=True).stdout.split()


def conn_id(c):
    """The upstream's CONNECTION_ID() (one row, one column; the row is the
    packet before the last)."""
    row = c.query("SELECT CONNECTION_ID()")[-2][1]
    return int(row[1:1 + row[0]])


def moved(port, kill):
    """A bulk execute with types, then one without (the server keeps the
    types of the last execute); with kill, the upstream connection that ran
    the first is killed in between, so that the second runs on a connection
    that has never seen them. Returns the two answers and whether the
    connection changed."""
    c, _ = login(port, BULK | EXT_META)
    c.query("DROP TABLE IF EXISTS t68mv")
    c.query("CREATE TABLE t68mv (a INT, b VARCHAR(10))")
    pkts = c.command(r.COM_STMT_PREPARE, "INSERT INTO t68mv VALUES (?, ?)", kind="prepare")
    sid = struct.unpack_from("<I", pkts[0][1], 1)[0]
    first = answer(c.command(COM_STMT_BULK_EXECUTE, bulk(sid, [(1, "a"), (2, "b")])))
    before = conn_id(c)
    if kill:
        root("KILL %d" % before)
        for _ in range(100):  # until the server has let it go
            if str(before) not in root("SELECT id FROM information_schema.processlist"):
                break
            time.sleep(0.05)
    second = answer(c.command(COM_STMT_BULK_EXECUTE, bulk(sid, [(3, "c")], types=False)))
    after = conn_id(c)
    rows = answer(c.query("SELECT * FROM t68mv ORDER BY a"))
    c.query("DROP TABLE t68mv")
    c.close()
    return [first, second, rows], before != after


def moved_check():
    d, _ = moved(DPORT, False)
    v, changed = moved(VPORT, True)
    ok(d == v and changed and d[1][0][:2] == ("OK", 1),
       "a bulk execute without types on another upstream connection than the one that had them "
       "(killed): the types of the last execute are put in, the same answers as MariaDB's",
       "direct %r" % (d,), "node   %r" % (v,), "connection changed: %r" % changed)


def greeting_checks():
    _, gd = login(DPORT, 0)
    _, gv = login(VPORT, 0)
    ok(not gd.caps & r.CLIENT_LONG_PASSWORD and not gv.caps & r.CLIENT_LONG_PASSWORD,
       "greeting: CLIENT_MYSQL is clear, as in MariaDB's (%#x, %#x)" % (gd.caps, gv.caps))
    ok(gv.ext_caps == gd.ext_caps & (BULK | EXT_META) and gv.ext_caps & BULK,
       "greeting: the node offers MariaDB's bulk operations and extended metadata, as MariaDB "
       "(%#x of MariaDB's %#x)" % (gv.ext_caps, gd.ext_caps))


def main():
    greeting_checks()
    moved_check()
    for ext, caps, what in ((BULK | EXT_META, r.DEFAULT_CAPS, "bulk and extended metadata"),
                            (BULK, r.BASE_CAPS, "bulk, classic EOF packets"),
                            (EXT_META, r.DEFAULT_CAPS, "extended metadata only"),
                            (0, r.DEFAULT_CAPS, "no extension (CLIENT_MYSQL)")):
        d, dids = scenario(DPORT, ext, caps, "t68raw")
        v, vids = scenario(VPORT, ext, caps, "t68raw")
        d, v = masked(d, dids), masked(v, vids)
        bad = [(a[0], a[1], b[1]) for a, b in zip(d, v) if a != b]
        want_bulk = ("OK", 3) if ext & BULK else ("ERR", 1295)
        first = dict(d).get("bulk by id", [("?",)])[0][:2]
        ok(len(d) == len(v) and not bad and first == want_bulk,
           "%s: %d steps (bulk by id and by 0xffffffff, RETURNING, no types, refusals, the last "
           "statement after a failed PREPARE and a CLOSE): the same answers as MariaDB's" % (what, len(v)),
           *["%s:\n  direct %r\n  node   %r" % x for x in bad[:6]] + ["first bulk: %r" % (first,)])


try:
    main()
except Exception as e:  # a crash is a failure of its own, not a silent pass
    ok(False, "68-bulk-raw ran to its end", repr(e))
    raise
