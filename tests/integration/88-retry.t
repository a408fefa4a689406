#!/usr/bin/env bash
# 88-retry: a pooled upstream connection that turns out broken when a
# command is sent on it (tests/integration/lib/break_relay.py resets it instead
# of forwarding the command; the pool could not have seen it coming).
#   - a session with nothing on that connection: the command is sent again
#     on a fresh connection, the client gets its answer, and
#     shoal_upstream_retries_total moves;
#   - a session in a transaction: no retry (the transaction died with the
#     connection): ERR 1158 and the session is closed, retries unchanged.
# And a step that brings a connection to the session's state refused by the
# server (the relay answers `SET last_insert_id` with ERR 1105): the
# statement gets that error once, is not run, and is not retried forever;
# the connection is reset and each session then reads its own id.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then
  skip_all "retries are node-only (fake mode)"
fi

plan 20
work=$(mktemp -d "${TMPDIR:-/tmp}/shoal88.XXXXXX")
"$PY" "$TESTLIB/break_relay.py" "$work/port" "$MDB_PORT" "$work/break" "$work/relay.log" &
relay=$!
on_exit "kill $relay; rm -rf '$work'"
for _ in $(seq 1 50); do [ -s "$work/port" ] && break; sleep 0.1; done
rport=$(cat "$work/port" 2>/dev/null)

hport=$(free_port)
if shoal_start r --upstream-db-url "mysql://app:pw@127.0.0.1:$rport/shoaltest" --workers 1 \
  --max-upstream-connections 2 --metrics-address "127.0.0.1:$hport"; then
  ok "node starts behind the relay (port $r_PORT)"
else
  bail "node starts behind the relay (port $r_PORT)"
fi

PORT=$r_PORT HPORT=$hport WORK=$work "$PY" - <<'PY' || not_ok "python part crashed"
import os
import time
import rawmysql as r
from ha_help import query
from mux_help import metric
from taplib import ok, is_, done_testing

port, hport, work = int(os.environ["PORT"]), int(os.environ["HPORT"]), os.environ["WORK"]
flag, log = work + "/break", work + "/relay.log"

def broken():
    try:
        return open(log).read().count("broken")
    except FileNotFoundError:
        return 0

c = r.connect(port)
res = query(c, "SELECT 88")
ok(res[0] == "rs" and res[2] == [["88"]], "a first query through the relay", repr(res))
time.sleep(0.7)                       # the pooled connection is older than the relay's 0.5 s
r0 = metric(hport, "shoal_upstream_retries_total")
open(flag, "w").close()
res = query(c, "SELECT 89")
is_(broken(), 1, "the relay reset the pooled connection when the command came")
ok(res[0] == "rs" and res[2] == [["89"]], "the client still gets its answer (sent again on a fresh connection)",
   repr(res))
is_(metric(hport, "shoal_upstream_retries_total") - r0, 1, "shoal_upstream_retries_total +1")
res = query(c, "SELECT 90")
ok(res[0] == "rs" and res[2] == [["90"]], "the session goes on", repr(res))

t = r.connect(port)
query(t, "BEGIN")
res = query(t, "SELECT 91")
ok(res[0] == "rs", "a session opens a transaction", repr(res))
time.sleep(0.7)
open(flag, "w").close()
res = query(t, "SELECT 92")
is_(broken(), 2, "the relay reset the transaction's connection")
ok(res[0] == "err" and res[1] == 1158 and res[2] == "08S01",
   "in a transaction there is no retry: ERR 1158 (08S01)", repr(res))
ok(t.is_closed(3), "... and the session is closed (its transaction is gone)")
is_(metric(hport, "shoal_upstream_retries_total") - r0, 1, "retries unchanged")
res = query(c, "SELECT 93")
ok(res[0] == "rs" and res[2] == [["93"]], "the other session is not affected", repr(res))
done_testing(always_zero=True)
PY
check "node still running" shoal_alive r

# ---- a refused SET last_insert_id: one connection, so two sessions share it
mdb -e "DROP TABLE IF EXISTS t88; CREATE TABLE t88 (id INT AUTO_INCREMENT PRIMARY KEY)"
on_exit "mdb -e 'DROP TABLE IF EXISTS t88'"
if shoal_start l --upstream-db-url "mysql://app:pw@127.0.0.1:$rport/shoaltest" --workers 1 \
  --max-upstream-connections 1; then
  ok "a second node behind the relay, one upstream connection (port $l_PORT)"
else
  bail "a second node behind the relay, one upstream connection (port $l_PORT)"
fi
PORT=$l_PORT WORK=$work "$PY" - <<'PY' || not_ok "python part (refused sync) crashed"
import os
import rawmysql as r
from ha_help import query
from taplib import ok, is_, done_testing

port, work = int(os.environ["PORT"]), os.environ["WORK"]
flag, log = work + "/break", work + "/relay.log"

def refused():
    try:
        return open(log).read().count("refused")
    except FileNotFoundError:
        return 0

a, b = r.connect(port), r.connect(port)
res = query(a, "INSERT INTO t88 VALUES ()")
a_id = query(a, "SELECT LAST_INSERT_ID()")
with open(flag, "w") as f:
    f.write("refuse SET last_insert_id")
res = query(b, "SELECT LAST_INSERT_ID()")   # the connection holds a's id: a SET first, refused
ok(res[0] == "err" and res[1] == 1105 and res[2] == "HY000" and "refused by the test relay" in res[3],
   "the refused SET's error reaches the client instead of another session's id", repr(res))
is_(refused(), 1, "the SET was sent once (not retried in a loop)")
os.unlink(flag)
res = query(b, "SELECT 88")
ok(res[0] == "rs" and res[2] == [["88"]], "the session goes on", repr(res))
res = query(b, "SELECT LAST_INSERT_ID()")
ok(res[0] == "rs" and res[2] == [["0"]], "the session that inserted nothing reads 0", repr(res))
res = query(a, "SELECT LAST_INSERT_ID()")
ok(res[0] == "rs" and res == a_id and res[2] != [["0"]],
   "the inserting session reads its own id after the reset", repr((res, a_id)))
done_testing(always_zero=True)
PY
check "second node still running" shoal_alive l
done_testing
