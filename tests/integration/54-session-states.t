#!/usr/bin/env bash
# 54-session-states: the session states that used to be flags, driven
# through a node that traces every state move (--log-level debug) and
# aborts on one its table refuses (SHOAL_STRICT_STATES, lib.sh):
#   - SENDING: a command of 16 MiB - 1 bytes (one full packet and an empty
#     one) is relayed as a whole, and so is a COM_STMT_SEND_LONG_DATA of that
#     size, which has no answer (it was read as a new command before:
#     ERR 1156 "Got packets out of order");
#   - QUEUED: with one upstream connection held by a transaction, another
#     session's command waits in the pool's queue and is answered once the
#     connection is free; one that waits too long gets ERR 1040;
#   - DENIED: past the failed-login threshold, a wrong password's ERR 1045
#     comes after the failed-login delay;
#   - COM_CHANGE_USER enters the login at HANDSHAKE, and the session goes on;
# and no move was refused (shoal_session_state_refused_total 0).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then
  skip_all "session states are node-only (fake mode)"
fi

plan 17
hport=$(free_port)
if shoal_start st --workers 1 --max-upstream-connections 1 --upstream-wait-timeout-ms 3000 \
  --auth-failure-threshold 1 --auth-failure-delay-ms 400 --log-level debug \
  --metrics-address "127.0.0.1:$hport"; then
  ok "node starts with one upstream connection and debug traces (port $st_PORT)"
else
  bail "node starts with one upstream connection and debug traces"
fi

PORT=$st_PORT LOG=$st_LOG "$PY" - <<'PY' || not_ok "python part crashed"
import os
import struct
import threading
import time
import rawmysql as r
from ha_help import query
from taplib import ok, is_, node_ok

port, mport, log = int(os.environ["PORT"]), int(os.environ["MDB_PORT"]), os.environ["LOG"]

def trace(move):
    """move is in this node's log (the file holds earlier runs' too)."""
    with open(log) as f:
        text = f.read()
    return move in text[text.rfind("start st on port %d" % port):]

def long_query(p):
    c = r.connect(p)
    n = 0xFFFFFF - 1 - len("SELECT LENGTH('')")
    res = query(c, "SELECT LENGTH('" + "x" * n + "')")
    c.close()
    return res

def long_data(p):
    """A statement's parameter sent as one COM_STMT_SEND_LONG_DATA of
    16 MiB - 1 payload bytes, then executed: the binary row's value."""
    c = r.connect(p)
    sid, _, _, _ = c.prepare("SELECT LENGTH(?)")
    c.write_packet(bytes([r.COM_STMT_SEND_LONG_DATA]) + struct.pack("<IH", sid, 0) + b"y" * (0xFFFFFF - 7), 0)
    ex = struct.pack("<IBI", sid, 0, 1) + b"\x00\x01" + struct.pack("<BB", 0xFC, 0)
    pk = c.command(r.COM_STMT_EXECUTE, ex)
    c.close()
    for _, p in pk:
        if len(p) == 6 and p[0] == 0x00:  # the row: header, null bitmap, a LONG
            return struct.unpack_from("<i", p, 2)[0]
    return repr([p[:40] for _, p in pk])

want = str(0xFFFFFF - 1 - len("SELECT LENGTH('')"))
direct, via = long_query(mport), long_query(port)
node_ok(lambda res: res[0] == "rs" and res[2] == [[want]], direct, via,
        "a 16 MiB - 1 byte query (two packets) is answered as directly")
ok(trace("READY -> SENDING") and trace("SENDING -> RELAYING"),
   "  it went READY -> SENDING -> RELAYING")
direct, via = long_data(mport), long_data(port)
node_ok(lambda v: v == 0xFFFFFF - 7, direct, via,
        "a 16 MiB - 1 byte COM_STMT_SEND_LONG_DATA, then its execute: the parameter's whole length")
ok(trace("SENDING -> READY"), "  the long data went READY -> SENDING -> READY (it has no answer)")

# the pool's queue: a transaction holds the one connection
a, b = r.connect(port), r.connect(port)
is_(query(a, "BEGIN"), ("ok",), "session A opens a transaction (it holds the connection)")
query(a, "SELECT 1")
got = {}
def b_query():
    got["b"] = query(b, "SELECT 57")
t = threading.Thread(target=b_query)
t.start()
deadline = time.time() + 10
while time.time() < deadline and not trace("READY -> QUEUED"):
    time.sleep(0.05)
ok(trace("READY -> QUEUED"), "  session B's command waits in the pool's queue (READY -> QUEUED)")
is_(query(a, "COMMIT"), ("ok",), "  A commits: the connection is free")
t.join(10)
ok(got.get("b", ("none",))[0] == "rs" and got["b"][2] == [["57"]], "  B's command is answered then",
   repr(got.get("b")))
ok(trace("QUEUED -> CONNECTING"), "  it left the queue (QUEUED -> CONNECTING)")
query(a, "BEGIN")
query(a, "SELECT 1")
t0 = time.time()
res = query(b, "SELECT 58")
waited = time.time() - t0
ok(res[0] == "err" and res[1] == 1040 and waited >= 2.5,
   "  a command that waits past upstream_wait_timeout_ms gets ERR 1040 (%.1f s)" % waited, repr(res))
ok(trace("QUEUED -> READY"), "  and its session is READY again (QUEUED -> READY)")
query(a, "ROLLBACK")
a.close()
b.close()

# the failed-login delay: the first failure is answered at once, the next late
for i in range(2):
    c = r.Conn("127.0.0.1", port)
    t0 = time.time()
    res = c.login("app", "wrong")
    waited = time.time() - t0
    c.close()
ok(res[0] == "err" and res[1] == 1045 and waited >= 0.35,
   "a failed login past the threshold gets ERR 1045 after the delay (%.2f s)" % waited, repr(res))
ok(trace("-> DENIED") and trace("DENIED -> CLOSING"), "  it waited in DENIED, then the session ended")

# COM_CHANGE_USER: the login again, from HANDSHAKE
c = r.connect(port)
g = c.greeting
payload = (bytes([r.COM_CHANGE_USER]) + b"app\0" + bytes([20]) + r.native_token("pw", g.nonce) +
           b"shoaltest\0" + struct.pack("<H", 45) + b"mysql_native_password\0")
c.write_packet(payload, 0)
_, p = c.read_packet()
ok(p[:1] == b"\x00", "COM_CHANGE_USER is answered OK", repr(p[:60]))
ok(trace("READY -> HANDSHAKE") and query(c, "SELECT 59")[2] == [["59"]],
   "  it logged in again from HANDSHAKE, and the session goes on")
c.close()
PY

is "$(curl -s "http://127.0.0.1:$hport/metrics" | awk '$1 == "shoal_session_state_refused_total" { print $2 }')" 0 \
  "no session state move was refused (shoal_session_state_refused_total 0)"
done_testing
