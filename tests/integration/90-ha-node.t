#!/usr/bin/env bash
# 90-ha-node: the node side of HA behind ProxySQL (docs/operations.md).
#   - ProxySQL's monitor queries (the five read_only texts, SHOW SLAVE /
#     REPLICA STATUS) and SHOW READYSET STATUS, answered by the node for the
#     monitor user, with the upstream up (no upstream connection for the
#     monitor) and on a node whose upstream is dead; app's same texts get
#     the upstream's answers (SHOW READYSET STATUS stays the node's);
#   - the drain on SIGTERM: refused at once, /health 503 and "Maintenance
#     Mode", idle sessions closed, a running SLEEP finishes with its row, a
#     transaction closed after COMMIT, another at --drain-timeout-ms, exit 0
#     (with --drain-handoff-ms 0); the hand-off before it: sessions served
#     and COM_PING failing until no query came for --drain-quiet-ms, or
#     until --drain-handoff-ms;
#   - `shoal --health` (the image's HEALTHCHECK) with the node's own
#     METRICS_ADDRESS (0.0.0.0:PORT, given in the environment): 0 while the
#     node serves, 1 with the reason while it drains and once it is gone;
#   - upstream-down-policy shun with --upstream-down-after-ms 1000 on a
#     private MariaDB that is dead, started, killed and started again: new
#     connections get a clear ERR 1429, COM_PING fails, /health 503, the
#     monitor queries still answer, and the node recovers by itself;
#   - serve-stale: a cached query is answered past its TTL after the
#     upstream died, a different one gets a clear error;
#   - SIGHUP: a changed log_level is applied, a start-only setting is logged
#     as needing a restart, a broken file changes nothing.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then
  skip_all "HA behaviour is node-only (fake mode)"
fi

plan 105
work="$BUILD_TEST/ha"
mkdir -p "$work"
mdir="$BUILD_TEST/mdb90"
mport=$(free_port)
export MDIR="$mdir" MPORT="$mport" WORK="$work"

# The private MariaDB of this test: stopped at exit whatever happened.
mdb90_stop() {
  local p
  p=$(cat "$mdir/pid" 2>/dev/null || true)
  if pid_alive "$p" && grep -q mariadbd "/proc/$p/cmdline" 2>/dev/null; then
    kill -TERM "$p" 2>/dev/null
    wait_gone "$p" 30
  fi
}
mdb90_stop
rm -f "$mdir/pid"
on_exit mdb90_stop

# ------------------------------------------------------------ monitor queries
# the monitor acts upstream, if at all, as itself (pymysql's SET AUTOCOMMIT)
mdb_root -e "CREATE USER IF NOT EXISTS 'monitor'@'%' IDENTIFIED BY 'monitor'"
hport=$(free_port)
if shoal_start mon --metrics-address "127.0.0.1:$hport"; then
  ok "node starts (port $mon_PORT)"
else
  bail "node starts (port $mon_PORT)"
fi

PORT=$mon_PORT HPORT=$hport "$PY" - <<'PY' || not_ok "python part (monitor queries) crashed"
import os
import pymysql
import rawmysql as r
from ha_help import MONITOR_TEXTS, query, status_map, ping, http_get
from taplib import ok, is_, run, done_testing

port, hport = int(os.environ["PORT"]), int(os.environ["HPORT"])

def upstream_conns():
    _, body = http_get(hport, "/metrics")
    for line in body.splitlines():
        if line.startswith("shoal_upstream_connections "):
            return int(line.split()[1])
    return None

def monitor_checks(c, who):
    for t in MONITOR_TEXTS:
        res = query(c, t)
        ok(res[0] == "rs" and [n for n, _ in res[1]] == ["read_only"] and res[2] == [["1"]],
           "%s: %s -> one column read_only, one row, 1" % (who, t), repr(res))
    res = query(c, "  select   @@GLOBAL.read_only\n READ_ONLY ;")
    ok(res[0] == "rs" and res[2] == [["1"]], "%s: the same in other case and spacing" % who, repr(res))
    for t in ("SHOW SLAVE STATUS", "show replica status"):
        res = query(c, t)
        ok(res[0] == "rs" and len(res[1]) >= 1 and res[2] == [],
           "%s: %s -> columns, no rows" % (who, t), repr(res))
    st = status_map(c)
    is_(st.get("Status"), "Online", "%s: SHOW READYSET STATUS: Status Online" % who)
    is_(st.get("Database Connection"), "Connected", "%s:   Database Connection Connected" % who)
    is_(ping(c), ("ok",), "%s: COM_PING OK" % who)

def monitor_user():
    before = upstream_conns()
    c = r.connect(port, "monitor", "monitor")
    monitor_checks(c, "monitor")
    is_(upstream_conns(), before, "the monitor's checks opened no upstream connection (%r)" % before)
    c.close()
run("monitor user", monitor_user)

def app_user():
    """Another login's same texts are the upstream's (not a replica, not
    read-only here), as directly (sys_vars.slave_parallel_mode_basic):
    only the status commands are the node's for everyone."""
    c = r.connect(port)
    res = query(c, MONITOR_TEXTS[0])
    ok(res[0] == "rs" and res[2] == [["0"]], "app: %s -> the upstream's 0, not the monitor's 1" % MONITOR_TEXTS[0],
       repr(res))
    res = query(c, "SHOW SLAVE STATUS")
    ok(res[0] == "rs" and len(res[1]) > 7 and res[2] == [],
       "app: SHOW SLAVE STATUS -> the upstream's (%d columns, no rows)" % len(res[1] if res[0] == "rs" else []),
       repr(res)[:200])
    st = status_map(c)
    is_(st.get("Status"), "Online", "app: SHOW READYSET STATUS is the node's: Status Online")
    c.close()
run("app user", app_user)

def pymysql_reads_zero_rows():
    c = pymysql.connect(host="127.0.0.1", port=port, user="monitor", password="monitor")
    with c.cursor() as cur:
        n = cur.execute("SHOW SLAVE STATUS")
        rows = cur.fetchall()
        ok(n == 0 and len(rows) == 0 and cur.description and cur.description[0][0] == "Slave_IO_State",
           "pymysql: SHOW SLAVE STATUS has 0 rows (columns %s...)" % (cur.description or [[None]])[0][0])
        cur.execute("SELECT @@global.super_read_only read_only")
        ok(cur.fetchall() == ((1,),) and cur.description[0][0] == "read_only",
           "pymysql: super_read_only check reads 1 as an integer")
    c.close()
run("pymysql", pymysql_reads_zero_rows)
done_testing(always_zero=True)
PY
shoal_stop mon

# a node whose upstream is dead (threshold far away: not shunned here)
dead=$(free_port)
if SHOAL_WAIT=greeting shoal_start dead --upstream-db-url "mysql://app:pw@127.0.0.1:$dead/shoaltest" \
  --upstream-down-after-ms 600000; then
  PORT=$dead_PORT DEAD=$dead "$PY" - <<'PY' || not_ok "python part (dead upstream) crashed"
import os
import rawmysql as r
from ha_help import MONITOR_TEXTS, query, status_map, ping
from taplib import ok, is_, run, done_testing

port, dead = int(os.environ["PORT"]), os.environ["DEAD"]

def dead_upstream():
    c = r.connect(port, "monitor", "monitor")
    for t in MONITOR_TEXTS:
        res = query(c, t)
        ok(res[0] == "rs" and res[2] == [["1"]], "dead upstream, monitor: %s -> 1" % t, repr(res))
    res = query(c, "SHOW SLAVE STATUS")
    ok(res[0] == "rs" and res[2] == [], "dead upstream, monitor: SHOW SLAVE STATUS empty", repr(res))
    st = status_map(c)
    is_(st.get("Database Connection"), "Unreachable", "dead upstream: Database Connection Unreachable")
    is_(st.get("Status"), "Online", "  ... Status Online (within the threshold)")
    is_(ping(c), ("ok",), "  ... COM_PING OK")
    c.close()
    res = r.login_result(port)
    ok(res[0] == "err" and res[1] == 1429 and ("127.0.0.1:" + dead) in res[3],
       "dead upstream: app's login fails with 1429 naming the upstream", repr(res))
run("dead upstream", dead_upstream)
done_testing(always_zero=True)
PY
  shoal_stop dead
else
  not_ok "node on a dead upstream starts"
fi

# ------------------------------------------------------------------- drain
# (its HTTP endpoint on 0.0.0.0, as in the image: `shoal --health` asks
# 127.0.0.1 then)
hport=$(free_port)
if shoal_start drain --metrics-address "0.0.0.0:$hport" --drain-timeout-ms 5000 --drain-handoff-ms 0; then
  hc=$(METRICS_ADDRESS="0.0.0.0:$hport" "$SHOAL_BIN" --health 2>&1)
  hc_rc=$?
  is "$hc_rc" 0 "shoal --health with the node's METRICS_ADDRESS=0.0.0.0:$hport: exit 0"
  like "$hc" "^shoal --health: healthy: http://127\.0\.0\.1:$hport/health answered 200 \{\"status\":\"serving\"" \
    "  it asked 127.0.0.1:$hport and says so"
  PORT=$drain_PORT HPORT=$hport PID=$drain_PID "$PY" - <<'PY' || not_ok "python part (drain) crashed"
import os
import signal
import subprocess
import time
import rawmysql as r
from ha_help import query, result, status_map, health, port_refuses, wait_for
from taplib import ok, is_, diag, run, done_testing

port, hport, pid = int(os.environ["PORT"]), int(os.environ["HPORT"]), int(os.environ["PID"])

def health_probe():
    env = dict(os.environ, METRICS_ADDRESS="0.0.0.0:%d" % hport)
    p = subprocess.run([os.environ["SHOAL_BIN"], "--health"], env=env, capture_output=True, text=True,
                       timeout=10)
    return p.returncode, p.stderr.strip()

def exited():
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] in ("Z", "X")
    except OSError:
        return True

def drain():
    idle = r.connect(port)
    query(idle, "SELECT 1")
    mon = r.connect(port, "monitor", "monitor")
    tx1, tx2 = r.connect(port), r.connect(port)
    for c in (tx1, tx2):
        query(c, "BEGIN")
        query(c, "SELECT 1")
    sl = r.connect(port, timeout=15)
    sl.write_packet(b"\x03SELECT SLEEP(2) AS slept", 0)
    time.sleep(0.3)
    t0 = time.time()
    os.kill(pid, signal.SIGTERM)
    ok(wait_for(lambda: port_refuses(port), 1.0, 0.02), "SIGTERM: new connections refused at once")
    code, h = health(hport)
    ok(code == 503 and h.get("status") == "draining", "  /health 503, status draining", repr((code, h)))
    rc, why = health_probe()
    ok(rc == 1 and "answered 503" in why and '"status":"draining"' in why and len(why.splitlines()) == 1,
       "  shoal --health: exit 1, one line: 503 draining", repr((rc, why)))
    ok(idle.is_closed(2), "  an idle session is closed")
    ok(mon.is_closed(2), "  an idle monitor session is closed")
    res = query(tx1, "SELECT 3")
    ok(res[0] == "rs" and res[2] == [["3"]], "  a session inside a transaction is still served", repr(res))
    st = status_map(tx1)
    is_(st.get("Status"), "Maintenance Mode", "  SHOW READYSET STATUS: Status Maintenance Mode")
    res = result(sl, sl.read_result())
    ok(res[0] == "rs" and res[2] == [["0"]] and time.time() - t0 >= 1.4,
       "  the running SELECT SLEEP(2) completes with its row", repr(res))
    ok(sl.is_closed(2), "  ... then that session is closed")
    ok(not tx1.is_closed(0.3), "  the transaction session stays open until it ends")
    res = query(tx1, "COMMIT")
    is_(res, ("ok",), "  COMMIT answered")
    ok(tx1.is_closed(2), "  ... then the session is closed")
    ok(tx2.is_closed(9), "  a transaction never ended is closed at --drain-timeout-ms")
    ok(wait_for(exited, 5), "  the node exits")
    took = time.time() - t0
    ok(4.5 <= took <= 9, "  ... after the 5 s drain timeout (%.1f s)" % took)
run("drain", drain)
done_testing(always_zero=True)
PY
  wait "$drain_PID" 2>/dev/null
  is "$?" 0 "drain: the node exits with status 0"
  drain_PID=""
  hc=$(METRICS_ADDRESS="0.0.0.0:$hport" "$SHOAL_BIN" --health 2>&1)
  hc_rc=$?
  is "$hc_rc" 1 "shoal --health once the node is gone: exit 1"
  like "$hc" "^shoal --health: http://127\.0\.0\.1:$hport/health: connect: Connection refused$" "  the reason, on one line"
  shoal_stop drain
  like "$(cat "$drain_LOG")" "received signal 15: draining" "drain: the log tells the drain"
  like "$(cat "$drain_LOG")" "drain timeout \(5000 ms\): closing the 1 remaining session" \
    "  ... and its timeout"
else
  not_ok "node for the drain test starts"
fi

# ------------------------------------------------------- drain: the hand-off
# The first part of the drain (drain.h): sessions stay open and are served
# until no query came for --drain-quiet-ms, at most --drain-handoff-ms.
# A client thread queries every 0.1 s from before the signal until the
# checks of the hand-off are done, so that the hand-off lasts as long as the
# checks need however slow the machine; then it stops, and the quiet window
# (1.5 s: a margin no scheduling delay of that thread reaches) runs out.
# The hand-off's limit is far away (20 s): here it must never be what ends it.
hport=$(free_port)
if shoal_start handoff --metrics-address "127.0.0.1:$hport" --drain-timeout-ms 30000 \
  --drain-handoff-ms 20000 --drain-quiet-ms 1500; then
  PORT=$handoff_PORT HPORT=$hport PID=$handoff_PID "$PY" - <<'PY' || not_ok "python part (hand-off) crashed"
import os
import signal
import threading
import time
import rawmysql as r
from ha_help import query, health, ping, port_refuses, wait_for
from taplib import ok, is_, run, done_testing

port, hport, pid = int(os.environ["PORT"]), int(os.environ["HPORT"]), int(os.environ["PID"])

class Busy(threading.Thread):
    """SELECT n on one session every 0.1 s until stopped: keeps the hand-off going."""
    def __init__(self, c):
        super().__init__(daemon=True)
        self.c, self.stop, self.answers, self.last = c, threading.Event(), 0, None
        self.started = threading.Event()

    def run(self):
        while not self.stop.is_set():
            n = self.answers + 1
            res = query(self.c, "SELECT %d" % n)
            if res[0] != "rs" or res[2] != [[str(n)]]:
                break
            self.answers, self.last = n, time.time()
            self.started.set()
            self.stop.wait(0.1)
        self.started.set()

def handoff():
    idle, busy = r.connect(port), r.connect(port)
    mon = r.connect(port, "monitor", "monitor")
    query(idle, "SELECT 1")
    b = Busy(busy)
    b.start()
    b.started.wait(10)
    t0, n0 = time.time(), b.answers
    os.kill(pid, signal.SIGTERM)
    ok(wait_for(lambda: port_refuses(port), 1.0, 0.02), "hand-off: new connections refused at once")
    code, h = health(hport)
    ok(code == 503 and h.get("status") == "draining", "  /health 503 draining", repr((code, h)))
    res = ping(mon)
    ok(res[0] == "err" and res[1] == 1053, "  COM_PING fails with 1053 (ProxySQL's monitor and keep-alive "
       "pings see it)", repr(res))
    ok(not idle.is_closed(0.4), "  an idle session stays open")
    wait_for(lambda: (time.time() - t0 >= 1.5 and b.answers - n0 >= 6) or not b.is_alive(), 15, 0.05)
    res = query(idle, "SELECT 2")
    t_idle = time.time()
    ok(res[0] == "rs" and res[2] == [["2"]], "  the idle session too, %.1f s after the signal" % (t_idle - t0),
       repr(res))
    b.stop.set()
    b.join(10)
    n = b.answers - n0
    ok(n >= 6 and not b.is_alive(), "  sessions are served during the hand-off (%d answers)" % n)
    t1 = max(t_idle, b.last or 0)
    ok(idle.is_closed(10) and busy.is_closed(2), "  no query for --drain-quiet-ms: idle sessions are closed")
    took = time.time() - t1
    ok(1.3 <= took <= 6, "  ... %.1f s after the last query (quiet 1.5 s)" % took)
run("handoff", handoff)
done_testing(always_zero=True)
PY
  wait "$handoff_PID" 2>/dev/null
  is "$?" 0 "hand-off: the node exits with status 0"
  handoff_PID=""
  shoal_stop handoff
  like "$(cat "$handoff_LOG")" "drain: no query for drain_quiet_ms after [0-9]+ ms" "  the log says why the hand-off ended"
else
  not_ok "node for the hand-off test starts"
fi

# The hand-off's limit: a client that never stops querying.
hport=$(free_port)
if shoal_start handoff2 --metrics-address "127.0.0.1:$hport" --drain-handoff-ms 1500 --drain-quiet-ms 700; then
  PORT=$handoff2_PORT PID=$handoff2_PID "$PY" - <<'PY' || not_ok "python part (hand-off limit) crashed"
import os
import signal
import time
import rawmysql as r
from ha_help import query
from taplib import ok, run, done_testing

port, pid = int(os.environ["PORT"]), int(os.environ["PID"])

def capped():
    c = r.connect(port)
    t0 = time.time()
    os.kill(pid, signal.SIGTERM)
    answered, closed_at = 0, None
    while time.time() - t0 < 4:
        try:
            res = query(c, "SELECT 1")
        except (EOFError, OSError):
            closed_at = time.time() - t0
            break
        if res[0] != "rs":
            closed_at = time.time() - t0
            break
        answered += 1
        time.sleep(0.1)
    ok(closed_at is not None and 1.4 <= closed_at <= 2.5 and answered >= 10,
       "a session querying without pause is served until --drain-handoff-ms (1.5 s), then closed at an idle "
       "point (%r s, %d answers)" % (closed_at, answered))
run("handoff cap", capped)
done_testing(always_zero=True)
PY
  shoal_stop handoff2
  is "${handoff2_STATUS:-}" 0 "  the node exits with status 0"
  like "$(cat "$handoff2_LOG")" "drain: drain_handoff_ms is over after" "  the log says the hand-off hit its limit"
else
  not_ok "node for the hand-off limit test starts"
fi

# ------------------------------------------------------- upstream down: shun
hport=$(free_port)
if SHOAL_WAIT=none shoal_start shun --upstream-db-url "mysql://app:pw@127.0.0.1:$mport/shoaltest" \
  --upstream-down-after-ms 1000 --metrics-address "127.0.0.1:$hport"; then
  PORT=$shun_PORT HPORT=$hport "$PY" - <<'PY' || not_ok "python part (shun) crashed"
import os
import time
import pymysql
import rawmysql as r
from ha_help import (MONITOR_TEXTS, first_packet, health, mdb_kill, mdb_start, ping, query,
                     status_map, wait_for)
from taplib import ok, is_, diag, run, done_testing

port, hport = int(os.environ["PORT"]), int(os.environ["HPORT"])
mdir, mport, work = os.environ["MDIR"], int(os.environ["MPORT"]), os.environ["WORK"]
where = "127.0.0.1:%d" % mport

def shunned(fp):
    return fp[0] == "err" and fp[1] == 1429 and fp[2] == "HY000" and "unreachable" in fp[3] and where in fp[3]

def shun():
    ok(wait_for(lambda: first_packet(port)[0] != "refused", 10), "node listening")
    time.sleep(1.6)
    fp = first_packet(port)
    ok(shunned(fp), "dead upstream for 1.6 s: a new connection gets ERR 1429 naming the upstream", repr(fp))
    try:
        pymysql.connect(host="127.0.0.1", port=port, user="monitor", password="monitor").close()
        ok(False, "  pymysql sees the error")
    except pymysql.err.OperationalError as e:
        ok(e.args[0] == 1429 and "unreachable" in e.args[1], "  pymysql sees it: %r" % (e.args,))
    code, h = health(hport)
    ok(code == 503 and h.get("status") == "upstream_down", "  /health 503 upstream_down", repr((code, h)))
    pid = mdb_start(os.environ["SRCDIR"], mdir, mport, work + "/mdb90.log")
    ok(pid, "a MariaDB starts on the upstream's port")
    ok(wait_for(lambda: first_packet(port)[0] == "greeting", 15, 0.2),
       "  the node recovers by itself: new connections get a greeting")
    c = r.connect(port)
    res = query(c, "SELECT 90")
    ok(res[0] == "rs" and res[2] == [["90"]], "  app logs in and queries", repr(res))
    is_(health(hport)[0], 200, "  /health 200")

    mon = r.connect(port, "monitor", "monitor")
    mdb_kill(pid)
    ok(not c.is_closed(1), "upstream killed: an idle session stays open (it holds no upstream connection)")
    time.sleep(1.5)
    res = ping(mon)
    ok(res[0] == "err" and res[1] == 1429 and "unreachable" in res[3],
       "  after 1.5 s: COM_PING on an open monitor session gets an error", repr(res))
    fp = first_packet(port)
    ok(shunned(fp), "  a new connection gets ERR 1429", repr(fp))
    is_(health(hport)[0], 503, "  /health 503")
    for t in MONITOR_TEXTS[:1] + ["SHOW SLAVE STATUS"]:
        res = query(mon, t)
        ok(res[0] == "rs", "  the monitor session still gets %s answered" % t, repr(res))
    is_(status_map(mon).get("Database Connection"), "Unreachable", "  READYSET STATUS: Unreachable")
    pid = mdb_start(os.environ["SRCDIR"], mdir, mport, work + "/mdb90.log")
    ok(pid, "MariaDB started again")
    ok(wait_for(lambda: ping(mon) == ("ok",), 15, 0.2), "  COM_PING on the monitor session OK again")
    ok(r.login_result(port)[0] == "ok", "  new logins work")
    is_(health(hport)[0], 200, "  /health 200")
    res = query(c, "SELECT 91")
    ok(res[0] == "rs" and res[2] == [["91"]], "  the session from before the outage queries again", repr(res))
run("shun", shun)
done_testing(always_zero=True)
PY
  check "the shun node keeps running" shoal_alive shun
  shoal_stop shun
  is "${shun_STATUS:-}" 0 "  ... and stops with status 0"
else
  not_ok "node for the shun test starts"
fi

# -------------------------------------------------- upstream down: serve-stale
hport=$(free_port)
if [ -s "$mdir/pid" ] && shoal_start stale --upstream-db-url "mysql://app:pw@127.0.0.1:$mport/shoaltest" \
  --upstream-down-policy serve-stale --cache-ttl-ms 1000 --auto-cache --metrics-address "127.0.0.1:$hport"; then
  PORT=$stale_PORT HPORT=$hport "$PY" - <<'PY' || not_ok "python part (serve-stale) crashed"
import os
import time
import rawmysql as r
from ha_help import MONITOR_TEXTS, health, http_get, mdb_kill, mdb_start, query, wait_for
from taplib import ok, is_, diag, run, done_testing

port, hport = int(os.environ["PORT"]), int(os.environ["HPORT"])
mdir, mport, work = os.environ["MDIR"], int(os.environ["MPORT"]), os.environ["WORK"]

def stale_hits():
    for line in http_get(hport, "/metrics")[1].splitlines():
        if line.startswith("shoal_cache_stale_hits_total "):
            return int(line.split()[1])
    return None

def serve_stale():
    d = r.connect(mport)
    for sql in ("DROP TABLE IF EXISTS t90", "CREATE TABLE t90 (id INT PRIMARY KEY, v VARCHAR(20))",
                "INSERT INTO t90 VALUES (1, 'one'), (2, 'two')"):
        query(d, sql)
    d.close()
    c = r.connect(port)
    q1, q2 = "SELECT v FROM t90 WHERE id = 1", "SELECT v FROM t90 WHERE id = 2"
    query(c, q1)
    res = query(c, q1)
    dest = query(c, "EXPLAIN LAST STATEMENT")
    ok(res[0] == "rs" and res[2] == [["one"]] and dest[0] == "rs" and dest[2][0][0] == "readyset_shallow",
       "a query is cached", repr((res, dest)))
    with open(mdir + "/pid") as f:
        mdb_kill(int(f.read().split()[0]))
    time.sleep(2)
    res = query(c, q1)
    ok(res[0] == "rs" and res[2] == [["one"]], "upstream dead for 2 s: the cached query is still answered (TTL 1 s)",
       repr(res))
    res = query(c, q2)
    ok(res[0] == "err" and res[1] == 1429 and "unreachable" in res[3] and "cached" in res[3],
       "  a different query gets a clear error", repr(res))
    res = query(c, q1)
    ok(res[0] == "rs" and res[2] == [["one"]], "  the session still answers the cached query", repr(res))
    res = query(c, MONITOR_TEXTS[0])
    ok(res[0] == "err" and res[1] == 1429, "  an app session's read_only text is the upstream's: the same error",
       repr(res))
    n = stale_hits()
    ok(n is not None and n >= 2, "  shoal_cache_stale_hits_total counts them (%r)" % n)
    code, h = health(hport)
    ok(code == 200 and h.get("upstream") == "down", "  /health stays 200 (upstream down) under serve-stale",
       repr((code, h)))
    res = r.login_result(port)
    ok(res[0] == "err" and res[1] == 1429, "  a new login fails with 1429", repr(res))
    pid = mdb_start(os.environ["SRCDIR"], mdir, mport, work + "/mdb90.log")
    ok(pid and wait_for(lambda: r.login_result(port)[0] == "ok", 15, 0.2),
       "upstream back: new logins work")
    res = query(c, q2)
    ok(res[0] == "rs" and res[2] == [["two"]],
       "  the old session (no transaction, nothing pinned) goes on with its next upstream query",
       repr(res))
    # A session whose upstream state dies with its connection is another
    # matter: it holds a transaction open across the outage.
    t = r.connect(port)
    query(t, q1)
    query(t, "BEGIN")
    query(t, "SELECT v FROM t90 WHERE id = 2 FOR UPDATE")
    with open(mdir + "/pid") as f:
        mdb_kill(int(f.read().split()[0]))
    time.sleep(1)
    res = query(t, q1)
    ok(res[0] == "rs" and res[2] == [["one"]], "  a session in a transaction that lost it still gets cached answers",
       repr(res))
    pid = mdb_start(os.environ["SRCDIR"], mdir, mport, work + "/mdb90.log")
    ok(pid and wait_for(lambda: r.login_result(port)[0] == "ok", 15, 0.2), "  upstream back again")
    res = query(t, "SELECT v FROM t90 WHERE id = 2")
    ok(res[0] == "err" and "reconnect" in res[3] and t.is_closed(3),
       "  ... and once the upstream is back, an error (its transaction is gone) and it is closed",
       repr(res))
run("serve-stale", serve_stale)
done_testing(always_zero=True)
PY
  shoal_stop stale
else
  not_ok "node for the serve-stale test starts (with the private MariaDB up)"
fi

# ------------------------------------------------------------------- SIGHUP
cfg="$work/hup.conf"
printf 'log_level = info\ncache_ttl_ms = 5000\n' >"$cfg"
if shoal_start hup --config "$cfg"; then
  printf 'log_level = debug\ncache_ttl_ms = 7000\nmemory_limit = 64M\n' >"$cfg"
  kill -HUP "$hup_PID"
  sleep 0.5
  log=$(cat "$hup_LOG")
  like "$log" "SIGHUP: log_level = debug \(was info\): applied" "SIGHUP: the log says log_level was applied"
  like "$log" "SIGHUP: cache_ttl_ms = 7000 \(was 5000\): applied" "  ... and cache_ttl_ms"
  like "$log" "SIGHUP: memory_limit = 67108864 \(running with 1073741824\): needs a restart" \
    "  ... memory_limit needs a restart"
  via_to hup -N -e 'select 1' >/dev/null
  sleep 0.2
  like "$(cat "$hup_LOG")" "DEBUG client [0-9]+ .*closed" "  debug lines appear after the reload"
  printf 'log_level = loud\n' >"$cfg"
  kill -HUP "$hup_PID"
  sleep 0.5
  like "$(cat "$hup_LOG")" "SIGHUP: the configuration has errors" "  a broken file: nothing changes"
  check "  the node keeps running" shoal_alive hup
  is "$(via_to hup -N -e 'select 91')" 91 "  and serving"
  shoal_stop hup
else
  not_ok "node with a config file starts"
fi

done_testing
