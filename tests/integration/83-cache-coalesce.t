#!/usr/bin/env bash
# 83-cache-coalesce: 200 clients ask for one cold key of a slow (~1 s)
# SELECT at the same moment, through an --auto-cache node: MariaDB runs it
# exactly once and all 200 get the same, correct rows.
#
# Counting upstream executions: each of the 200 sessions is first warmed with
# a different cheap cached query (so the node's one-off session-settings
# query has run for each), then, straight on MariaDB, Com_select is read
# before and after the burst (SHOW GLOBAL STATUS is not a SELECT) and the
# general log (log_output=TABLE) is on for the burst only: the delta must be
# 1 and the log must hold the slow query exactly once.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "coalescing: needs a node (SHOAL_FAKE_DIRECT=1)"; fi
plan 9

if ! mdb -e "DROP TABLE IF EXISTS t83; CREATE TABLE t83 (id INT PRIMARY KEY, v VARCHAR(20));
  INSERT INTO t83 SELECT seq, CONCAT('row ', seq) FROM seq_1_to_300"; then
  bail "create t83"
fi
# Put the general log back as it was.
old_log=$(mdb -N -e "SELECT @@global.general_log, @@global.log_output")
read -r old_gl old_lo <<<"$old_log"
on_exit "mdb -e \"SET GLOBAL general_log = ${old_gl:-0}; SET GLOBAL log_output = '${old_lo:-FILE}'; DROP TABLE IF EXISTS t83\""

DD=$(mktemp -d)
on_exit "rm -rf '$DD'"
if shoal_start node --auto-cache --cache-ttl-ms 60000 --cache-coalesce-ms 10000 --data-dir "$DD"; then
  ok "node starts with --auto-cache (port $node_PORT)"
else
  bail "node starts with --auto-cache (port $node_PORT)"
fi

NODE_PORT=$node_PORT "$PY" - <<'PY' || not_ok "python part crashed"
import os
import threading
import time
import pymysql
from taplib import ok, diag, run, done_testing

DPORT, VPORT = int(os.environ["MDB_PORT"]), int(os.environ["NODE_PORT"])
N = 200


def conn(port):
    return pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw", database="shoaltest",
                           autocommit=True, connect_timeout=20, read_timeout=60)


def one(c, sql):
    with c.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def com_select(d):
    return int(one(d, "SHOW GLOBAL STATUS LIKE 'Com_select'")[0][1])


def pick_slow(d):
    """A deterministic SELECT that takes about a second on MariaDB."""
    best = None
    for n in (3500, 4500, 5500, 7000, 9000):
        q = ("SELECT COUNT(*) AS n, MAX(t.v) AS m FROM seq_1_to_%d a JOIN seq_1_to_%d b "
             "ON (a.seq + b.seq) %% 1000 = 7 JOIN t83 t ON t.id = 1 + a.seq %% 300" % (n, n))
        t0 = time.monotonic()
        rows = one(d, q)
        t = time.monotonic() - t0
        best = (q, t, rows)
        if t >= 0.8:
            break
    return best


def main():
    d = conn(DPORT)
    q, t, want = pick_slow(d)
    # Make the key cold for the node: a marker the node has never seen.
    q = q.replace("AS m FROM", "AS m_%d FROM" % os.getpid())
    want = one(d, q)
    diag("slow query (%.2f s on MariaDB): %s" % (t, q))
    ok(t >= 0.5, "the slow query takes at least 0.5 s on MariaDB (%.2f s)" % t)

    # 200 sessions, each warmed with its own cheap cached query.
    clients = [None] * N
    errors = []

    def opener(i):
        try:
            c = conn(VPORT)
            one(c, "SELECT id, v FROM t83 WHERE id = %d" % (i + 1))
            clients[i] = c
        except Exception as e:  # noqa: BLE001
            errors.append("%d: %r" % (i, e))

    ths = [threading.Thread(target=opener, args=(i,)) for i in range(N)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    ok(not errors and all(clients), "%d sessions connected and warmed through the node" % N, *errors[:5])
    if errors:
        return

    barrier = threading.Barrier(N)
    results = [None] * N
    times = [None] * N

    def asker(i):
        try:
            barrier.wait(timeout=30)
            t0 = time.monotonic()
            results[i] = one(clients[i], q)
            times[i] = time.monotonic() - t0
        except Exception as e:  # noqa: BLE001
            results[i] = e

    one(d, "SET GLOBAL log_output = 'TABLE'")
    one(d, "TRUNCATE TABLE mysql.general_log")
    before = com_select(d)
    one(d, "SET GLOBAL general_log = 1")
    ths = [threading.Thread(target=asker, args=(i,)) for i in range(N)]
    t_start = time.monotonic()
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    wall = time.monotonic() - t_start
    one(d, "SET GLOBAL general_log = 0")
    after = com_select(d)
    logged = one(d, "SELECT COUNT(*) FROM mysql.general_log WHERE command_type = 'Query' "
                    "AND CONVERT(argument USING utf8mb4) = %s" % d.escape(q))[0][0]
    others = one(d, "SELECT LEFT(CONVERT(argument USING utf8mb4), 100), COUNT(*) FROM mysql.general_log "
                    "WHERE command_type = 'Query' GROUP BY 1 ORDER BY 2 DESC LIMIT 8")

    failures = [(i, x) for i, x in enumerate(results) if isinstance(x, Exception)]
    ok(not failures, "all %d clients got an answer (burst took %.2f s)" % (N, wall),
       *["client %d: %r" % f for f in failures[:5]])
    wrong = [i for i, x in enumerate(results) if not isinstance(x, Exception) and x != want]
    ok(not wrong, "all %d answers equal MariaDB's own answer %r" % (N, want),
       "clients with other rows: %r (e.g. %r)" % (wrong[:10], results[wrong[0]] if wrong else None))
    ok(after - before == 1, "Com_select moved by exactly 1 during the burst (moved by %d)" % (after - before),
       "general log during the burst: %r" % (others,))
    ok(logged == 1, "the general log holds the slow query exactly once (%d)" % logged,
       "general log during the burst: %r" % (others,))
    slowest = max(x for x in times if x is not None) if any(times) else None
    ok(slowest is not None and slowest < t * 3 + 2,
       "no client waited much longer than one execution (slowest %.2f s)" % (slowest or -1))

    v = clients[0]
    st = dict(one(v, "SHOW SHOAL STATUS"))
    diag("node status after the burst: %r" % (st,))
    for c in clients:
        c.close()
    d.close()


run("coalescing part runs", main)
done_testing(always_zero=True)
PY
check "node still running" shoal_alive node
done_testing
