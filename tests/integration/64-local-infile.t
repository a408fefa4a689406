#!/usr/bin/env bash
# 64-local-infile: LOAD DATA LOCAL INFILE through the node (issue #11, item
# 3), against MariaDB directly: the mariadb CLI (--local-infile=1 and =0),
# a driver (pymysql, local_infile=True), a raw client that refuses the
# server's file request (an empty packet at once), a multi-statement
# command, --no-local-infile on the node, and a 64 MiB file streamed in
# bounded memory (the node's peak RSS).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

plan 17
if ! shoal_start node; then not_ok "node starts"; done_testing; exit 1; fi
ok "node starts (port $node_PORT)"
work=$(mktemp -d "${TMPDIR:-/tmp}/shoal-li.XXXXXX")
on_exit "rm -rf '$work'"
on_exit 'mdb -e "DROP TABLE IF EXISTS t64, t64big"'
printf '1\tone\n2\ttwo\n3\tthree\n' >"$work/small.txt"

# the CLI, both ways, the same output as directly
load="DROP TABLE IF EXISTS t64; CREATE TABLE t64 (a INT, b VARCHAR(20));
LOAD DATA LOCAL INFILE '$work/small.txt' INTO TABLE t64; SELECT * FROM t64 ORDER BY a;
LOAD DATA LOCAL INFILE '$work/small.txt' INTO TABLE t64 (a, @x) SET b = UPPER(@x); SELECT COUNT(*) FROM t64"
d=$(mdb --local-infile=1 -e "$load" 2>&1); v=$(via --local-infile=1 -e "$load" 2>&1)
is "$v" "$d" "mariadb --local-infile=1: the same output as directly"
like "$v" "three" "  the rows were loaded"
d=$(mdb --local-infile=0 -e "LOAD DATA LOCAL INFILE '$work/small.txt' INTO TABLE t64" 2>&1)
v=$(via --local-infile=0 -e "LOAD DATA LOCAL INFILE '$work/small.txt' INTO TABLE t64" 2>&1)
is "$v" "$d" "mariadb --local-infile=0: the server's refusal, as directly"
like "$v" "4166" "  ERROR 4166"

# several statements in one command around the load
multi="DELETE FROM t64; LOAD DATA LOCAL INFILE '$work/small.txt' INTO TABLE t64; SELECT COUNT(*) AS n FROM t64; SELECT 'after' AS s"
d=$(mdb --local-infile=1 -e "$multi" 2>&1); v=$(via --local-infile=1 -e "$multi" 2>&1)
is "$v" "$d" "a load between other statements of one command"

# a driver, and raw clients: bytes compared
NODE_PORT=$node_PORT WORK=$work "$PY" - <<'PY'
import os
import pymysql
import rawmysql as r
from taplib import ok, is_, diag

DPORT, VPORT, WORK = int(os.environ["MDB_PORT"]), int(os.environ["NODE_PORT"]), os.environ["WORK"]

def with_pymysql(port):
    c = pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw",
                        database="shoaltest", local_infile=True)
    cur = c.cursor()
    cur.execute("DELETE FROM t64")
    n = cur.execute("LOAD DATA LOCAL INFILE '%s/small.txt' INTO TABLE t64" % WORK)
    cur.execute("SELECT a, b FROM t64 ORDER BY a")
    rows = cur.fetchall()
    try:
        cur.execute("LOAD DATA LOCAL INFILE '%s/missing.txt' INTO TABLE t64" % WORK)
        missing = "no error"
    except pymysql.MySQLError as e:
        missing = type(e).__name__ + str(e.args[0])
    cur.execute("SELECT COUNT(*) FROM t64")
    after = cur.fetchall()
    c.close()
    return n, rows, missing, after

d, v = with_pymysql(DPORT), with_pymysql(VPORT)
is_(v, d, "pymysql local_infile=True: rows, a missing file, the session after it")
ok(len(v[1]) == 3, "  3 rows loaded", repr(v))

LOCAL = r.CLIENT_LOCAL_FILES

def refuse(port):
    """A client that has CLIENT_LOCAL_FILES but answers the file request with
    the empty packet at once; then another command on the session."""
    c = r.Conn("127.0.0.1", port)
    c.login("app", "pw", db="shoaltest", caps=r.BASE_CAPS | LOCAL)
    c.write_packet(bytes([r.COM_QUERY]) + b"LOAD DATA LOCAL INFILE 'x.txt' INTO TABLE t64", 0)
    seq, req = c.read_packet()
    c.write_packet(b"", seq + 1)
    answer = [c.read_packet()]
    after = c.query("SELECT 1")
    c.close()
    return (seq, req), answer, after

d, v = refuse(DPORT), refuse(VPORT)
ok(v[0][1][:1] == b"\xfb", "a raw client gets the file request (0xFB)", repr(v[0]))
is_(v, d, "refusing with the empty packet: the same request, answer and next answer")

def sent(port, caps):
    c = r.Conn("127.0.0.1", port)
    c.login("app", "pw", db="shoaltest", caps=caps)
    c.write_packet(bytes([r.COM_QUERY]) + b"LOAD DATA LOCAL INFILE 'y.txt' INTO TABLE t64", 0)
    seq, req = c.read_packet()
    if req[:1] != b"\xfb":
        c.close()
        return req
    body = b"".join(b"%d\tr%d\n" % (i, i) for i in range(5000))
    s = seq + 1
    for i in range(0, len(body), 3000):   # many small packets
        c.write_packet(body[i:i + 3000], s & 0xff)
        s += 1
    c.write_packet(b"", s & 0xff)
    _, ok_pkt = c.read_packet()
    c.close()
    return r.parse_ok(ok_pkt) if ok_pkt[:1] == b"\x00" else ok_pkt

for name, caps in (("classic", r.BASE_CAPS | LOCAL), ("deprecate_eof", r.DEFAULT_CAPS | LOCAL)):
    d, v = sent(DPORT, caps), sent(VPORT, caps)
    is_(v, d, "%s: a file in many packets: the same OK" % name)

def multi(port, caps):
    """A result set before the load in one command: with DEPRECATE_EOF the
    relay has dropped a packet by then, so the file's sequence ids are
    renumbered on the way up."""
    import socket
    c = r.Conn("127.0.0.1", port)
    c.login("app", "pw", db="shoaltest", caps=caps)
    c.query("DELETE FROM t64")
    c.write_packet(bytes([r.COM_QUERY]) + b"SELECT 1; LOAD DATA LOCAL INFILE 'z' INTO TABLE t64; "
                   b"SELECT COUNT(*) FROM t64", 0)
    out = []
    c.sock.settimeout(1.0)
    try:
        while True:
            seq, p = c.read_packet()
            out.append((seq, p))
            if p[:1] == b"\xfb":
                c.write_packet(b"7\tseven\n8\teight\n", (seq + 1) & 0xff)
                c.write_packet(b"", (seq + 2) & 0xff)
    except (socket.timeout, TimeoutError):
        pass
    c.close()
    return out

for name, caps in (("classic", r.BASE_CAPS | LOCAL), ("deprecate_eof", r.DEFAULT_CAPS | LOCAL)):
    d, v = multi(DPORT, caps), multi(VPORT, caps)
    ok(len(d) > 6 and v == d, "%s: SELECT; LOAD DATA LOCAL; SELECT in one command: the same %d packets" % (name, len(d)))
PY

# the setting off: not offered, the upstream refuses
if shoal_start off --no-local-infile; then
  v=$(via_to off --local-infile=1 -e "LOAD DATA LOCAL INFILE '$work/small.txt' INTO TABLE t64" 2>&1)
  like "$v" "4166" "--no-local-infile: ERROR 4166 from the upstream"
else
  not_ok "node with --no-local-infile starts"
fi

# a big file in bounded memory
if fake_mode; then
  skip "64 MiB file" "no node in fake mode"
  skip "node peak memory" "no node in fake mode"
else
  "$PY" -c '
import sys
with open(sys.argv[1], "w") as f:
    line = "x" * 90
    for i in range(700000):
        f.write("%d\t%s\n" % (i, line))
' "$work/big.txt"
  mdb -e "DROP TABLE IF EXISTS t64big; CREATE TABLE t64big (a INT, b VARCHAR(100)) ENGINE=MyISAM"
  before=$(awk '/VmHWM/ {print $2}' "/proc/$node_PID/status")
  v=$(via --local-infile=1 -e "LOAD DATA LOCAL INFILE '$work/big.txt' INTO TABLE t64big; SELECT COUNT(*) FROM t64big" 2>&1)
  after=$(awk '/VmHWM/ {print $2}' "/proc/$node_PID/status")
  like "$v" "700000" "a $(($(stat -c %s "$work/big.txt") / 1048576)) MiB file loaded through the node"
  grow=$(((after - before) / 1024))
  if [ "$grow" -lt 24 ]; then ok "node peak RSS grew $grow MiB (< 24) for it"; else
    not_ok "node peak RSS grew $grow MiB (< 24) for it"; fi
fi
done_testing
