#!/usr/bin/env bash
# f20-slow-upstream: the upstream is kept busy by slow queries (4 sessions in
# SELECT SLEEP(3)) while another session asks a cached query 300 times. The
# hits are answered while the slow queries still run (they do not queue
# behind the upstream), the cache-hit counter moves by 300, and the slow
# queries finish normally. Latencies are printed, not asserted. About 8 s.
set -uo pipefail
. "$(dirname "$0")/lib-faults.sh"
if fake_mode; then skip_all "node-only"; fi
# node, 5 checks of the python part, node still running
plan 7

mdb -e "DROP TABLE IF EXISTS f20_t; CREATE TABLE f20_t (id INT PRIMARY KEY, v VARCHAR(20));
        INSERT INTO f20_t VALUES (1,'one'),(2,'two'),(3,'three')"
on_exit "mdb -e 'DROP TABLE IF EXISTS f20_t'"
MPORT=$(free_port)
if ! shoal_start s --auto-cache --cache-ttl 5m --metrics-address "127.0.0.1:$MPORT"; then
  bail "node starts"
fi
ok "node starts (auto cache, TTL 5 min)"

PORT=$s_PORT MPORT=$MPORT "$PY" - <<'PY' || not_ok "python part crashed"
import os, threading, time, urllib.request
import rawmysql as r
from taplib import ok, is_, diag, done_testing
port, mport = int(os.environ["PORT"]), int(os.environ["MPORT"])
Q = "SELECT v FROM f20_t WHERE id = 2"

def metric(name):
    """The family's total over its label sets."""
    total = 0
    for line in urllib.request.urlopen("http://127.0.0.1:%d/metrics" % mport, timeout=5).read().decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += int(float(line.rsplit(" ", 1)[1]))
    return total

c = r.connect(port)
c.query(Q); c.query(Q)                      # load, then the first hit
h0 = metric("shoal_cache_hits_total")
ok(h0 >= 1, "the query is cached (hits %s)" % h0)

done = {}
def sleeper(i):
    s = r.connect(port)
    t = time.time()
    res = s.query("SELECT SLEEP(3)")
    done[i] = (time.time(), any(p == b"\x010" for _, p in res))
    s.close()
ths = [threading.Thread(target=sleeper, args=(i,)) for i in range(4)]
for t in ths:
    t.start()
time.sleep(0.3)
lat, good = [], 0
for _ in range(300):
    t = time.perf_counter()
    res = c.query(Q)
    lat.append(time.perf_counter() - t)
    good += any(p == b"\x03two" for _, p in res)
hits_end = time.time()
still_running = len(done) == 0
for t in ths:
    t.join(20)
lat.sort()
diag("300 hits during the slow queries: p50 %.3f ms, p99 %.3f ms, max %.3f ms" %
     (lat[150] * 1e3, lat[296] * 1e3, lat[-1] * 1e3))
print("# FAULT-FIGURES f20 hits=300 p50_ms=%.3f p99_ms=%.3f" % (lat[150] * 1e3, lat[296] * 1e3))
is_(good, 300, "300 cache hits answered with the right row")
ok(still_running, "all 300 were answered while the 4 slow queries still ran")
is_(metric("shoal_cache_hits_total") - h0, 300, "shoal_cache_hits_total moved by 300 (none went upstream)")
ok(len(done) == 4 and all(v[1] for v in done.values()) and min(v[0] for v in done.values()) > hits_end,
   "the slow queries then finished with their rows")
c.close()
done_testing(always_zero=True)
PY
check "node still running" shoal_alive s
done_testing
