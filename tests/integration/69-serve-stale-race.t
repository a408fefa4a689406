#!/usr/bin/env bash
# 69-serve-stale-race: under --upstream-down-policy serve-stale, a cached
# entry past its TTL is answered stale when the upstream turns out to be gone
# only as the miss goes there: before any check of the node has seen it go,
# whatever the catalog reader is doing. A relay (break_relay.py, "partition")
# keeps the node's pooled connection open until the command comes, then
# resets it and refuses every new connection, so the node learns of the
# outage from that command alone. Before the fix the miss dropped the expired
# entry and the client got ERR 1429 (the 90-ha-node flake under ASan).
#   - the expired entry is answered, once the retry's connect is refused;
#   - shoal_cache_stale_hits_total counts it, /health says the upstream is down;
#   - a query that was never cached gets the clear 1429;
#   - a second read of the entry is a stale hit at once;
#   - with the policy shun, the same outage gives the miss its error (the
#     entry is not kept for it).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "serve-stale is node-only (fake mode)"; fi
plan 11

work=$(mktemp -d "${TMPDIR:-/tmp}/shoal88s.XXXXXX")
on_exit "rm -rf '$work'"
on_exit 'mdb -e "DROP TABLE IF EXISTS t88s"'
mdb -e "DROP TABLE IF EXISTS t88s; CREATE TABLE t88s (id INT PRIMARY KEY, v VARCHAR(20));
INSERT INTO t88s VALUES (1, 'one'), (2, 'two')" || bail "create t88s"

# start_behind NAME POLICY: a relay to MariaDB and node NAME behind it (HPORT, RDIR)
start_behind() {
  RDIR="$work/$1"
  mkdir -p "$RDIR"
  "$PY" "$TESTLIB/break_relay.py" "$RDIR/port" "$MDB_PORT" "$RDIR/break" "$RDIR/relay.log" &
  on_exit "kill $!"
  for _ in $(seq 1 100); do [ -s "$RDIR/port" ] && break; sleep 0.1; done
  HPORT=$(free_port)
  shoal_start "$1" --upstream-db-url "mysql://app:pw@127.0.0.1:$(cat "$RDIR/port")/shoaltest" --workers 1 \
    --max-upstream-connections 2 --metrics-address "127.0.0.1:$HPORT" --auto-cache --cache-ttl-ms 1000 \
    --upstream-down-policy "$2"
}

start_behind stale serve-stale || bail "node (serve-stale) starts behind the relay"
PORT=$stale_PORT HPORT=$HPORT WORK=$RDIR "$PY" - <<'PY' || not_ok "python part (serve-stale) crashed"
import os
import time
import rawmysql as r
from ha_help import health, query
from mux_help import metric
from taplib import ok, is_, done_testing

port, hport, work = int(os.environ["PORT"]), int(os.environ["HPORT"]), os.environ["WORK"]
q1, q2 = "SELECT v FROM t88s WHERE id = 1", "SELECT v FROM t88s WHERE id = 2"
c = r.connect(port)
query(c, q1)
res = query(c, q1)
dest = query(c, "EXPLAIN LAST STATEMENT")
ok(res[2] == [["one"]] and dest[0] == "rs" and dest[2][0][0] == "readyset_shallow", "the query is cached",
   repr((res, dest)))
time.sleep(1.3)                  # past the 1 s TTL, and the pooled connection past the relay's 0.5 s
s0 = metric(hport, "shoal_cache_stale_hits_total")
with open(work + "/break", "w") as f:
    f.write("partition\n")
res = query(c, q1)
ok(res[0] == "rs" and res[2] == [["one"]],
   "the upstream gone as the miss went there: the expired entry is answered stale", repr(res))
is_(metric(hport, "shoal_cache_stale_hits_total") - s0, 1, "  shoal_cache_stale_hits_total +1")
code, h = health(hport)
ok(h.get("upstream") == "down", "  /health: the upstream is down", repr((code, h)))
res = query(c, q2)
ok(res[0] == "err" and res[1] == 1429 and "cached" in res[3], "  a query never cached gets ERR 1429", repr(res))
res = query(c, q1)
ok(res[0] == "rs" and res[2] == [["one"]], "  the entry again: a stale hit", repr(res))
is_(metric(hport, "shoal_cache_stale_hits_total") - s0, 2, "  counted")
done_testing(always_zero=True)
PY
check "the serve-stale node still runs" shoal_alive stale

VIA_PORT=
start_behind shun shun || bail "node (shun) starts behind the relay"
PORT=$shun_PORT WORK=$RDIR "$PY" - <<'PY' || not_ok "python part (shun) crashed"
import os
import time
import rawmysql as r
from ha_help import query
from taplib import ok, done_testing

port, work = int(os.environ["PORT"]), os.environ["WORK"]
q1 = "SELECT v FROM t88s WHERE id = 1"
c = r.connect(port)
query(c, q1)
res = query(c, q1)
ok(res[0] == "rs" and res[2] == [["one"]], "shun: the query is cached", repr(res))
time.sleep(1.3)
with open(work + "/break", "w") as f:
    f.write("partition\n")
res = query(c, q1)
ok(res[0] == "err" and res[1] == 1429, "shun: the same outage gives the expired entry's miss ERR 1429", repr(res))
done_testing(always_zero=True)
PY
check "the shun node still runs" shoal_alive shun
done_testing
