#!/usr/bin/env bash
# 61-cursors: server-side cursors and long data through the node, against
# MariaDB's own answers.
#  - byte for byte (raw protocol, sequence ids included, statement ids
#    masked): COM_STMT_EXECUTE with CURSOR_TYPE_READ_ONLY (the answer ends
#    after the column definitions), COM_STMT_FETCH in batches until the last
#    row, COM_STMT_RESET, COM_STMT_SEND_LONG_DATA, with and without
#    CLIENT_DEPRECATE_EOF; then two cursors open at once (interleaved
#    fetches, one ending first, one over a UNION, a row count), a cursor held
#    across text queries and another prepared execute, COM_STMT_RESET of one
#    cursor while another is open, cursor executes the server fails (a
#    stored function's SIGNAL, a bad NTILE argument: its ERR in place of the
#    EOF) and the session going on; in default mode and under AUTO_CACHE.
#  - with Connector/C (lib/stmt_client.c, compiled here): the same cursor
#    scenario, output compared with a run straight to MariaDB; and long data
#    (three clients at once, DDL between rounds making the catalog stale, text
#    queries between the pieces) whose stored rows are read back from
#    MariaDB and compared byte for byte with what was sent: default mode,
#    AUTO_CACHE in writes mode, and AUTO_CACHE in binlog mode against a
#    MariaDB of this test's own with its binlog on.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "cursors: compares a node with MariaDB (SHOAL_FAKE_DIRECT=1)"; fi

# node starts, 6 steps x 2 capability sets; cache node starts, 2 nodes x 2
# capability sets (multi-cursor trace); Connector/C: compiles, cursors x 2
# nodes, long data direct + 2 nodes; binlog MariaDB, its node, cursors, long data
plan 28
shoal_start node || bail "node starts"
ok "node starts (port $node_PORT)"
mdb -e "DROP TABLE IF EXISTS t61; CREATE TABLE t61 (id INT PRIMARY KEY, v VARCHAR(20));
        INSERT INTO t61 VALUES (1,'a'),(2,'b'),(3,'c'),(4,'d'),(5,'e');
        DROP TABLE IF EXISTS t61ld; CREATE TABLE t61ld (id INT PRIMARY KEY, b LONGBLOB, t MEDIUMTEXT)"
# a stored function that fails (a cursor over it fails making its rows)
F61="CREATE OR REPLACE FUNCTION f61() RETURNS INT NO SQL
  BEGIN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'f61 says no'; RETURN 1; END"
mdb --delimiter='//' -e "$F61"
on_exit 'mdb -e "DROP TABLE IF EXISTS t61, t61ld, t61ddl_1000, t61ddl_2000, t61ddl_3000; DROP FUNCTION IF EXISTS f61"'
work="$BUILD_TEST/t61"
rm -rf "$work"
mkdir -p "$work/nc"
if shoal_start nc --auto-cache --cache-ttl-ms 3600000 --data-dir "$work/nc"; then
  ok "AUTO_CACHE node starts (port $nc_PORT)"
else
  not_ok "AUTO_CACHE node starts"
fi

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

# Two cursors at once, a cursor held across other statements, a reset of one
# while the other is open, failing cursor executes: every answer exactly as
# MariaDB's (1421's statement id masked: the node names its own).
for n in node nc; do
  port_var="${n}_PORT"
  NODE_PORT=${!port_var} NODE_NAME=$n "$PY" - <<'PY' || not_ok "$n: python part crashed or failed"
import os, re, struct
import rawmysql as r
from taplib import ok, done_testing

DPORT, VPORT, NAME = int(os.environ["MDB_PORT"]), int(os.environ["NODE_PORT"]), os.environ["NODE_NAME"]

def session(port, caps):
    c = r.Conn("127.0.0.1", port)
    c.login("app", "pw", db="shoaltest", caps=caps)
    a = c.prepare("SELECT id, v FROM t61 ORDER BY id")[0]
    b = c.prepare("SELECT id, v FROM t61 WHERE id <= 2 UNION SELECT id + 10, v FROM t61 ORDER BY 1 DESC")[0]
    n = c.prepare("SELECT COUNT(*) FROM t61 WHERE id >= ?")[0]
    p = c.prepare("SELECT ? + 100")[0]
    t = [("exec A", c.execute_cursor(a)), ("exec B", c.execute_cursor(b)), ("exec N", c.execute_cursor(n, (2,)))]
    for i in range(4):  # A ends first (5 rows, 2 a fetch); B (7 rows) and N go on
        t.append(("fetch A %d" % i, c.fetch(a, 2)))
        t.append(("fetch B %d" % i, c.fetch(b, 1)))
        if i == 1:
            t.append(("text query", c.query("SELECT v FROM t61 WHERE id = 3")))
            t.append(("plain execute", c.execute(p, (7,))))
    t.append(("fetch N", c.fetch(n, 5)))
    t.append(("fetch A after its end", c.fetch(a, 1)))
    t.append(("fetch B rest", c.fetch(b, 10)))
    t += [("re-exec A", c.execute_cursor(a)), ("re-exec B", c.execute_cursor(b))]
    t.append(("fetch A", c.fetch(a, 1)))
    t.append(("reset A while B is open", c.reset_stmt(a)))
    t.append(("fetch A after reset", c.fetch(a, 1)))
    t.append(("fetch B after A's reset", c.fetch(b, 3)))
    f = c.prepare("SELECT f61() FROM t61")[0]
    w = c.prepare("SELECT id, NTILE(0) OVER (ORDER BY id) FROM t61")[0]
    t.append(("cursor exec: SIGNAL in a function", c.execute_cursor(f)))
    t.append(("query after it", c.query("SELECT COUNT(*) FROM t61")))
    t.append(("fetch B still open", c.fetch(b, 10)))
    t.append(("cursor exec: bad NTILE argument", c.execute_cursor(w)))
    t.append(("a cursor after it", c.execute_cursor(a)))
    t.append(("its rows", c.fetch(a, 10)))
    c.close()
    return t

def masked(pkts):
    return [(s, re.sub(rb"The statement \(\d+\)", b"The statement (N)", p)) for s, p in pkts]

for cname, caps in (("classic", r.BASE_CAPS), ("deprecate_eof", r.DEFAULT_CAPS)):
    direct, node = session(DPORT, caps), session(VPORT, caps)
    bad = [(st, a, b) for (st, a), (_, b) in zip(direct, node) if masked(a) != masked(b)]
    why = ["%s: direct %r" % (st, a[:5]) for st, a, _ in bad[:2]] + ["%s: node %r" % (st, b[:5]) for st, _, b in bad[:2]]
    ok(len(direct) == len(node) == 28 and not bad,
       "%s: %s: two cursors, a cursor across other statements, a reset, failing cursor executes: "
       "the same answers as MariaDB's (%d steps)" % (NAME, cname, len(node)), *why)
done_testing(always_zero=True)
PY
done

# ---- Connector/C: cursors, and long data with the stored rows checked
client="$work/stmt_client"
cc_client stmt_client.c "$client"
"$client" 127.0.0.1 "$MDB_PORT" cursors >"$work/cursors.direct" 2>&1
cursors_same() { # name port
  "$client" 127.0.0.1 "$2" cursors >"$work/cursors.$1" 2>&1
  if cmp -s "$work/cursors.direct" "$work/cursors.$1" && grep -q "A fetch: end" "$work/cursors.$1" &&
    grep -q "NTILE execute: error 4024" "$work/cursors.$1"; then
    ok "$1: Connector/C cursors (two at once, UNION, row count, reset, failing executes): the same as direct"
  else
    diff "$work/cursors.direct" "$work/cursors.$1" | head -n 20 | diag_file /dev/stdin
    not_ok "$1: Connector/C cursors: the same as direct"
  fi
}
cursors_same node "$node_PORT"
cursors_same nc "$nc_PORT"

# longdata NAME PORT VERIFY_PORT BASE ROUNDS: three clients at once (ids
# BASE+1000.., BASE+2000.., BASE+3000..); every round's INSERT answered, its
# SELECT of long data right, and every stored row the bytes sent
longdata() {
  local name=$1 port=$2 vport=$3 base=$4 rounds=$5 k bad=0 stored pids=()
  for k in 1 2 3; do
    "$client" 127.0.0.1 "$port" longdata $((base + k * 1000)) "$rounds" "$vport" >"$work/ld.$name.$k" 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}" # (not every child: the nodes are children too)
  for k in 1 2 3; do
    stored=$(grep -c "^stored $rounds/$rounds\$" "$work/ld.$name.$k")
    if [ "$stored" != 1 ] || grep -qE "error|WRONG|differs" "$work/ld.$name.$k"; then
      bad=1
      grep -E "error|WRONG|differs|^stored" "$work/ld.$name.$k" | head -n 5 | diag_file /dev/stdin
    fi
  done
  if [ $bad = 0 ]; then
    ok "$name: long data, 3 clients x $rounds rounds: every INSERT stored the bytes sent, every SELECT got them back"
  else
    not_ok "$name: long data: the stored rows are the bytes sent"
  fi
}
rounds=20
[ "${SHOAL_QUICK:-0}" = 1 ] && rounds=12
longdata direct "$MDB_PORT" "$MDB_PORT" 0 3
mdb -e "TRUNCATE t61ld"
longdata node "$node_PORT" "$MDB_PORT" 0 "$rounds"
mdb -e "TRUNCATE t61ld"
longdata "nc (writes mode)" "$nc_PORT" "$MDB_PORT" 0 "$rounds"

# ---- AUTO_CACHE with binlog invalidation: a MariaDB with its binlog on
BL_PORT=$(free_port)
BL_PID=""
stop_bl() { stop_mdb "$BL_PID"; }
on_exit stop_bl
if MARIADB_EXTRA_ARGS="--log-bin=binlog --binlog-format=ROW --server-id=1 --log-bin-trust-function-creators=1" \
  "$SRCDIR/scripts/start-mariadb" "$work/bl" "$BL_PORT" >"$work/bl.start.out" 2>&1 </dev/null &&
  BL_PID=$(cat "$work/bl/pid"); then
  ok "a MariaDB with its binlog on (port $BL_PORT)"
else
  diag_file "$work/bl.start.out"
  not_ok "a MariaDB with its binlog on"
fi
bl() { mariadb --no-defaults -h127.0.0.1 -P"$BL_PORT" -uapp -ppw shoaltest "$@"; }
bl -e "CREATE TABLE t61 (id INT PRIMARY KEY, v VARCHAR(20));
       INSERT INTO t61 VALUES (1,'a'),(2,'b'),(3,'c'),(4,'d'),(5,'e');
       CREATE TABLE t61ld (id INT PRIMARY KEY, b LONGBLOB, t MEDIUMTEXT)"
bl --delimiter='//' -e "$F61"
mkdir -p "$work/nb"
if shoal_start nb --upstream-db-url "mysql://app:pw@127.0.0.1:$BL_PORT/shoaltest" --auto-cache \
  --cache-ttl-ms 3600000 --invalidation binlog --binlog-user app --binlog-password pw --data-dir "$work/nb"; then
  ok "AUTO_CACHE node in binlog mode starts (port $nb_PORT)"
else
  not_ok "AUTO_CACHE node in binlog mode starts"
fi
cursors_same "nb (binlog mode)" "$nb_PORT"
longdata "nb (binlog mode)" "$nb_PORT" "$BL_PORT" 10000 "$rounds"
done_testing
