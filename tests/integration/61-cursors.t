#!/usr/bin/env bash
# 61-cursors: server-side cursors through the node, byte for byte against
# MariaDB: COM_STMT_EXECUTE with CURSOR_TYPE_READ_ONLY (the answer ends after
# the column definitions), COM_STMT_FETCH in batches until the last row,
# COM_STMT_RESET, COM_STMT_SEND_LONG_DATA, with and without
# CLIENT_DEPRECATE_EOF. Sequence ids included; statement ids masked.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# node starts, 6 steps x 2 capability sets
plan 13
shoal_start node || bail "node starts"
ok "node starts (port $node_PORT)"
mdb -e "DROP TABLE IF EXISTS t61; CREATE TABLE t61 (id INT PRIMARY KEY, v VARCHAR(20));
        INSERT INTO t61 VALUES (1,'a'),(2,'b'),(3,'c'),(4,'d'),(5,'e')"
on_exit 'mdb -e "DROP TABLE IF EXISTS t61"'

NODE_PORT=$node_PORT "$PY" - <<'PY' || not_ok "python part crashed or failed"
import os, socket, struct
import rawmysql as r
from taplib import ok, diag, done_testing

DPORT, VPORT = int(os.environ["MDB_PORT"]), int(os.environ["NODE_PORT"])
COM_STMT_FETCH, COM_STMT_RESET, COM_STMT_SEND_LONG_DATA = 0x1c, 0x1a, 0x18

def drain(c, wait=0.4):
    """Every packet that arrives until the line is quiet (a cursor's answers
    have no generic terminator)."""
    out = []
    c.sock.settimeout(wait)
    try:
        while True:
            out.append(c.read_packet())
    except (socket.timeout, TimeoutError):
        pass
    c.sock.settimeout(10)
    return out

def session(port, caps):
    c = r.Conn("127.0.0.1", port)
    c.login("app", "pw", db="shoaltest", caps=caps)
    sid, _, _, _ = c.prepare("SELECT id, v FROM t61 WHERE id >= ? ORDER BY id")
    trace = []
    c.write_packet(bytes([r.COM_STMT_EXECUTE]) + r.Conn.encode_execute(sid, (2,), flags=1), 0)
    trace.append(("execute cursor", drain(c)))
    for i in range(3):
        c.write_packet(bytes([COM_STMT_FETCH]) + struct.pack("<II", sid, 2), 0)
        trace.append(("fetch %d" % i, drain(c)))
    c.write_packet(bytes([COM_STMT_RESET]) + struct.pack("<I", sid), 0)
    trace.append(("reset", drain(c)))
    sid2, _, _, _ = c.prepare("SELECT CONCAT(?, '!')")
    c.write_packet(bytes([COM_STMT_SEND_LONG_DATA]) + struct.pack("<IH", sid2, 0) + b"long " * 1000, 0)
    p = struct.pack("<IBI", sid2, 0, 1) + b"\x00" + b"\x01" + struct.pack("<BB", r.MYSQL_TYPE_BLOB, 0)
    c.write_packet(bytes([r.COM_STMT_EXECUTE]) + p, 0)
    trace.append(("execute with long data", drain(c)))
    c.close()
    return trace

for name, caps in (("classic", r.BASE_CAPS), ("deprecate_eof", r.DEFAULT_CAPS)):
    direct, node = session(DPORT, caps), session(VPORT, caps)
    for (step, a), (_, b) in zip(direct, node):
        ok(len(a) > 0 and a == b, "%s: %s: same bytes (%d packets)" % (name, step, len(a)),
           "direct: %r" % a[:6], "node:   %r" % b[:6])
done_testing(always_zero=True)
PY
done_testing
