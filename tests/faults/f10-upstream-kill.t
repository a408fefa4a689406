#!/usr/bin/env bash
# f10-upstream-kill: the upstream (a private MariaDB) is killed with SIGKILL
# and restarted while 3 writers and 2 readers (pymysql) work through the
# node. Each writer inserts unique ids and records those that returned OK.
# Checked: errors only while the upstream is down (statements in flight or
# sent during the outage), the node recovers without a restart (same pid, new
# sessions and every client's last statements succeed), and every write that
# returned OK is in the table afterwards (writes lost = 0). About 20 s.
set -uo pipefail
. "$(dirname "$0")/lib-faults.sh"
if fake_mode; then skip_all "node-only"; fi
# MariaDB, node, 9 checks of the python part, node still running
plan 12

mdir="$BUILD_TEST/fault-mdb-f10"
mport=$(free_port)
rm -rf "$mdir"
fault_mdb_start "$mdir" "$mport" || bail "private MariaDB starts"
ok "private MariaDB starts (port $mport)"
mysql_p() { mariadb --no-defaults --socket="$mdir/sock" -uroot shoaltest "$@"; }
mysql_p -e "CREATE TABLE w (id INT PRIMARY KEY, writer INT) ENGINE=InnoDB"
MPORT=$(free_port)
if ! shoal_start k --upstream-db-url "mysql://app:pw@127.0.0.1:$mport/shoaltest" \
  --upstream-down-after-ms 1000 --metrics-address "127.0.0.1:$MPORT"; then
  bail "node starts"
fi
ok "node starts"

PORT=$k_PORT NPID=$k_PID MDIR="$mdir" MDBPORT=$mport "$PY" - <<'PY' || not_ok "python part crashed"
import os, subprocess, threading, time, signal
import pymysql
from taplib import ok, is_, diag, done_testing
from ha_help import mdb_start, mdb_kill
port, npid, mdir, mport = int(os.environ["PORT"]), int(os.environ["NPID"]), os.environ["MDIR"], int(os.environ["MDBPORT"])
stop = threading.Event()
phase = {"name": "before"}          # before / down / after
stats = {}
lock = threading.Lock()

def note(who, key):
    with lock:
        stats.setdefault(who, {}).setdefault(key, 0)
        stats[who][key] += 1

def connect():
    return pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw", database="shoaltest",
                           autocommit=True, connect_timeout=3, read_timeout=10, write_timeout=10)

def span(started):
    """The phase of a statement: one that spans a phase change was in flight
    during the outage."""
    return started if phase["name"] == started else "down"

def worker(who, fn, oks):
    conn, last = None, []
    i = 0
    while not stop.is_set():
        i += 1
        ph = phase["name"]
        try:
            if conn is None:
                conn = connect()
            fn(conn, i, oks)
            last.append(True)
            note(who, "ok_" + span(ph))
        except pymysql.MySQLError as e:
            last.append(False)
            note(who, "err_" + span(ph))
            with lock:
                stats.setdefault("codes", set()).add(e.args[0])
            try:
                conn and conn.close()
            except Exception:
                pass
            conn = None
            time.sleep(0.05)
        time.sleep(0.005)
    with lock:
        stats.setdefault("tail", {})[who] = last[-20:]

def writer(wid):
    oks = []
    def ins(conn, i, oks):
        k = wid * 10000000 + i
        with conn.cursor() as cur:
            cur.execute("INSERT INTO w (id, writer) VALUES (%s, %s)", (k, wid))
        oks.append(k)
    worker("writer%d" % wid, ins, oks)
    with lock:
        stats.setdefault("oks", []).extend(oks)

def reader(rid):
    def sel(conn, i, oks):
        with conn.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM w")
            cur.fetchall()
    worker("reader%d" % rid, sel, None)

threads = [threading.Thread(target=writer, args=(w,)) for w in (1, 2, 3)] + \
          [threading.Thread(target=reader, args=(r,)) for r in (1, 2)]
for t in threads:
    t.start()
time.sleep(2)
with open(os.path.join(mdir, "pid")) as f:
    mpid = int(f.read().split()[0])
phase["name"] = "down"
mdb_kill(mpid)
diag("upstream (pid %d) killed with SIGKILL" % mpid)
time.sleep(1.5)
newpid = mdb_start(os.environ["SRCDIR"], mdir, mport, mdir + ".start.log")
ok(newpid is not None, "upstream restarted (pid %s)" % newpid)
# the node notices by itself; give the clients time to reconnect
t0 = time.time()
while time.time() - t0 < 15:
    try:
        c = connect(); c.cursor().execute("SELECT 1"); c.close(); break
    except pymysql.MySQLError:
        time.sleep(0.2)
recovered = time.time() - t0
phase["name"] = "after"
time.sleep(3)
stop.set()
for t in threads:
    t.join(30)

ok(os.path.exists("/proc/%d" % npid), "the node process survived (same pid %d, no restart)" % npid)
diag("new sessions work again %.1f s after the upstream restarted" % recovered)
writers = ["writer%d" % w for w in (1, 2, 3)]
readers = ["reader%d" % r for r in (1, 2)]
for who in writers + readers:
    s = stats.get(who, {})
    diag("%s: %s" % (who, " ".join("%s=%d" % kv for kv in sorted(s.items()))))
errs_before = sum(stats.get(w, {}).get("err_before", 0) for w in writers + readers)
errs_after = sum(stats.get(w, {}).get("err_after", 0) for w in writers + readers)
ok_after = sum(stats.get(w, {}).get("ok_after", 0) for w in writers + readers)
is_(errs_before, 0, "no errors before the kill")
ok(sum(stats.get(w, {}).get("err_down", 0) for w in writers + readers) > 0,
   "clients got errors while the upstream was down (error codes %s)" % sorted(stats.get("codes", [])))
is_(errs_after, 0, "no errors once new sessions work again (%d statements ok after recovery)" % ok_after)
ok(all(all(stats["tail"][w][-10:]) for w in writers + readers), "every client's last 10 statements succeeded")
ok(ok_after > 50, "the load ran on after the recovery (%d statements)" % ok_after)

okd = stats.get("oks", [])
out = subprocess.run(["mariadb", "--no-defaults", "--socket=" + os.path.join(mdir, "sock"), "-uroot", "-N",
                      "shoaltest", "-e", "SELECT id FROM w"], capture_output=True, text=True).stdout.split()
present = set(int(x) for x in out)
lost = [k for k in okd if k not in present]
diag("writes checked: %d acknowledged, rows in the table: %d, writes lost: %d" % (len(okd), len(present), len(lost)))
print("# FAULT-FIGURES f10 writes_checked=%d writes_lost=%d rows=%d" % (len(okd), len(lost), len(present)))
ok(len(okd) > 100, "writers got %d OKs" % len(okd))
is_(len(lost), 0, "writes lost: 0 of %d acknowledged" % len(okd))
done_testing(always_zero=True)
PY
check "node still running" shoal_alive k
done_testing
