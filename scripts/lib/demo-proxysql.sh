# shellcheck shell=bash
# shellcheck disable=SC2154 # the ports, pids and helpers are the demo's (scripts/demo sources this)
# scripts/lib/demo-proxysql.sh: step 6 of scripts/demo, sourced by it: the
# story's ProxySQL part on the demo's MariaDB and two nodes. It uses the
# demo's variables and helpers (ports, pick_port, section/say/shown/indent,
# root_sql, node_pids, px_pid, agent_pid) and $PROXYSQL_BIN.
#
#   a) ProxySQL in front of MariaDB (hostgroups 10 and 20, a ^SELECT rule to
#      20), the leaderboard read through it, the digest table that finds it;
#   b) shoal-ha register and route: hostgroup 30 (two nodes, MariaDB as the
#      weight-1 fallback) and a rule for the story's digest;
#   c) reads through ProxySQL, then the three checks with real numbers:
#      the rule's hits and stats_mysql_query_digest for hostgroup 30, both
#      nodes' hit counters, the latency with the rule and without it;
#   d) both nodes stopped under load, shoal-ha watch running: the client
#      errors (none expected) and the replica serving.

# _demo_load PORT SECONDS [KILL...]: 4 client threads read the story's query
# through ProxySQL; after 2 s, each KILL (a pid) gets SIGTERM in turn and is
# waited for. Prints answers, errors and the first error.
_demo_load() {
  "$PY" - "$SEED_QUERY" "$@" <<'PY'
import os, sys, threading, time
import pymysql

query, port, secs, kills = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), [int(p) for p in sys.argv[4:]]
lock, stop = threading.Lock(), threading.Event()
count = {"answers": 0, "errors": 0, "first": ""}


def worker():
    c = None
    while not stop.is_set():
        try:
            if c is None:
                c = pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw", database="sakila",
                                    autocommit=True, connect_timeout=10, read_timeout=60)
            with c.cursor() as cur:
                cur.execute(query)
                if len(cur.fetchall()) != 25:
                    raise RuntimeError("not 25 rows")
            with lock:
                count["answers"] += 1
        except Exception as e:  # every failure is what the demo counts
            with lock:
                count["errors"] += 1
                count["first"] = count["first"] or repr(e)
            c = None


threads = [threading.Thread(target=worker, daemon=True) for _ in range(4)]
for t in threads:
    t.start()
time.sleep(2)
for pid in kills:
    os.kill(pid, 15)
    while os.path.exists("/proc/%d" % pid) and open("/proc/%d/stat" % pid).read().split(")")[-1].split()[0] != "Z":
        time.sleep(0.05)
    print("  node pid %d: stopped with SIGTERM, %d answers so far" % (pid, count["answers"]))
time.sleep(secs)
stop.set()
for t in threads:
    t.join(60)
print("  %d answers, %d client errors%s" % (count["answers"], count["errors"],
                                             (": first " + count["first"]) if count["errors"] else ""))
PY
}

# _demo_p50 PORT RUNS: the p50 in ms of RUNS reads of the story's query on
# one connection through ProxySQL (after one untimed run).
_demo_p50() {
  "$PY" - "$SEED_QUERY" "$@" <<'PY'
import statistics, sys, time
import pymysql

query, port, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
c = pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw", database="sakila", autocommit=True)
cur = c.cursor()
cur.execute(query)
cur.fetchall()
ts = []
for _ in range(runs):
    t0 = time.perf_counter()
    cur.execute(query)
    cur.fetchall()
    ts.append((time.perf_counter() - t0) * 1000)
print("%.3f" % statistics.median(ts))
PY
}

# _demo_hits METRICS_PORT: the node's hit counter for the story's digest.
_demo_hits() {
  local id=${SEED_DIGEST#0x}
  curl -s "127.0.0.1:$1/metrics" |
    awk -v s="shoal_cache_hits_total{query_id=\"q_${id,,}\"}" '$1 == s { v = $2 } END { print v + 0 }'
}

demo_proxysql() {
  local pxdir="$DEMO_DIR/proxysql" pxadmin pxport hits1 hits2 h1 h2 with without floor q
  pick_port pxadmin "${DEMO_PROXYSQL_ADMIN_PORT:-16032}"
  pick_port pxport "${DEMO_PROXYSQL_PORT:-16033}"
  mkdir -p "$pxdir"
  root_sql -e "CREATE USER IF NOT EXISTS 'monitor'@'%' IDENTIFIED BY 'monitor';
    GRANT REPLICATION CLIENT ON *.* TO 'monitor'@'%'"
  cat >"$pxdir/proxysql.cnf" <<EOF
datadir="$pxdir"
admin_variables=
{
  admin_credentials="admin:admin"
  mysql_ifaces="127.0.0.1:$pxadmin"
}
mysql_variables=
{
  threads=2
  interfaces="127.0.0.1:$pxport"
  monitor_username="monitor"
  monitor_password="monitor"
  server_version="10.11.6-MariaDB"
}
mysql_servers=
(
  { hostgroup_id=10, hostname="127.0.0.1", port=$mdb_port, comment="source" },
  { hostgroup_id=20, hostname="127.0.0.1", port=$mdb_port, comment="replica" }
)
mysql_users=
(
  { username="app", password="pw", default_hostgroup=10, default_schema="sakila" }
)
mysql_query_rules=
(
  { rule_id=100, active=1, match_digest="^SELECT", destination_hostgroup=20, apply=1 }
)
EOF
  say "The story's ProxySQL, on the demo's MariaDB (standing in for both the source," \
    "hostgroup 10, and the replica, hostgroup 20), with its ^SELECT rule 100."
  "$PROXYSQL_BIN" -f --initial -c "$pxdir/proxysql.cnf" -D "$pxdir" >"$LOG_DIR/proxysql.log" 2>&1 </dev/null &
  px_pid=$!
  px() { mariadb --no-defaults -h127.0.0.1 -P"$pxadmin" -uadmin -padmin "$@"; }
  for _ in $(seq 1 150); do
    px -N -e 'SELECT 1' >/dev/null 2>&1 && break
    pid_alive "$px_pid" || break
    sleep 0.2
  done
  if ! px -N -e 'SELECT 1' >/dev/null 2>&1; then
    tail -n 20 "$LOG_DIR/proxysql.log" >&2
    log "ProxySQL did not come up (log: build-demo/logs/proxysql.log)"
    exit 1
  fi
  say "$("$PROXYSQL_BIN" --version 2>/dev/null | head -n 1): admin on 127.0.0.1:$pxadmin, clients on 127.0.0.1:$pxport (pid $px_pid)"

  echo
  say "a) The application reads through ProxySQL; its digest table finds the slow shape:"
  shown "mariadb -h127.0.0.1 -P$pxport -uapp -ppw sakila < tests/data/leaderboard.sql   # 3 times"
  for _ in 1 2 3; do mariadb --no-defaults -h127.0.0.1 -P"$pxport" -uapp -ppw sakila <"$QUERY_FILE" >/dev/null; done
  mariadb --no-defaults -h127.0.0.1 -P"$pxport" -uapp -ppw sakila -e 'SELECT COUNT(*) FROM film; SELECT COUNT(*) FROM actor' >/dev/null
  q="SELECT hostgroup AS hg, digest, count_star AS calls, ROUND(sum_time/1000000,1) AS total_s, ROUND(sum_time/count_star/1000,1) AS avg_ms, substr(digest_text,1,40) AS query FROM stats_mysql_query_digest ORDER BY sum_time DESC LIMIT 5"
  shown "mariadb -h127.0.0.1 -P$pxadmin -uadmin -padmin -e '$q'"
  px -t -e "$q" | indent

  echo
  say "b) shoal-ha puts the two nodes and the replica (weight 1, the fallback) into" \
    "hostgroup 30, and routes that one digest there (rule 50, before rule 100):"
  local dsn="mysql://admin:admin@127.0.0.1:$pxadmin"
  local nodes="127.0.0.1:$port1:$metrics1:$admin1,127.0.0.1:$port2:$metrics2:$admin2"
  shown "ha/shoal-ha register --proxysql-admin $dsn" "--nodes $nodes --fallback 127.0.0.1:$mdb_port"
  ha/shoal-ha register --proxysql-admin "$dsn" --nodes "$nodes" --fallback "127.0.0.1:$mdb_port" 2>&1 | indent
  shown "ha/shoal-ha route $SEED_DIGEST --proxysql-admin $dsn --rule-id-base 50"
  ha/shoal-ha route "$SEED_DIGEST" --proxysql-admin "$dsn" --rule-id-base 50 2>&1 | indent

  echo
  say "c) 4 clients read the story's query through ProxySQL for 5 s; then the story's" \
    "three checks."
  hits1=$(_demo_hits "$metrics1")
  hits2=$(_demo_hits "$metrics2")
  _demo_load "$pxport" 3 | indent
  sleep 1 # stats_mysql_query_rules is flushed asynchronously
  say "Check 1: ProxySQL sends the shape to hostgroup 30 (the rule's hits, and where" \
    "the digest was served):"
  q="SELECT s.rule_id, s.hits, r.destination_hostgroup FROM stats_mysql_query_rules s JOIN runtime_mysql_query_rules r USING(rule_id) ORDER BY s.rule_id"
  shown "mariadb -h127.0.0.1 -P$pxadmin -uadmin -padmin -e '$q'"
  px -t -e "$q" | indent
  q="SELECT hostgroup, digest, count_star FROM stats_mysql_query_digest WHERE digest = '$SEED_DIGEST'"
  shown "mariadb -h127.0.0.1 -P$pxadmin -uadmin -padmin -e \"$q\""
  px -t -e "$q" | indent
  say "Check 2: each node answered from its cache (hits moved on both nodes):"
  h1=$(_demo_hits "$metrics1")
  h2=$(_demo_hits "$metrics2")
  local id=${SEED_DIGEST#0x}
  shown "curl -s 127.0.0.1:$metrics1/metrics | grep '^shoal_cache_hits_total{query_id=\"q_${id,,}\"}'"
  say "  node 1: $((h1 - hits1)) new hits (shoal_cache_hits_total $h1)" \
    "  node 2: $((h2 - hits2)) new hits (shoal_cache_hits_total $h2)"
  say "Check 3: latency through ProxySQL, p50 of one connection:"
  with=$(_demo_p50 "$pxport" 100)
  px -e "UPDATE mysql_query_rules SET active=0 WHERE digest='$SEED_DIGEST'; LOAD MYSQL QUERY RULES TO RUNTIME"
  without=$(_demo_p50 "$pxport" 10)
  px -e "UPDATE mysql_query_rules SET active=1 WHERE digest='$SEED_DIGEST'; LOAD MYSQL QUERY RULES TO RUNTIME"
  floor=$("$PY" - "$pxport" <<'PY'
import statistics, sys, time
import pymysql
c = pymysql.connect(host="127.0.0.1", port=int(sys.argv[1]), user="app", password="pw", autocommit=True)
cur = c.cursor()
ts = []
for _ in range(200):
    t0 = time.perf_counter()
    cur.execute("SELECT 1")
    cur.fetchall()
    ts.append((time.perf_counter() - t0) * 1000)
print("%.3f" % statistics.median(ts))
PY
)
  say "  rule active (the nodes): $with ms; rule inactive (MariaDB): $without ms;" \
    "  the floor, a bare SELECT 1 through ProxySQL: $floor ms."

  echo
  say "d) Both nodes stop under load. shoal-ha watch (every 500 ms) sets a draining" \
    "node OFFLINE_SOFT in ProxySQL; the node serves until its traffic has stopped," \
    "then exits (docs/operations.md, \"Drain\"). The replica, weight 1, is left."
  shown "ha/shoal-ha watch --proxysql-admin $dsn --nodes $nodes" "--fallback 127.0.0.1:$mdb_port --interval-ms 500 &"
  ha/shoal-ha watch --proxysql-admin "$dsn" --nodes "$nodes" --fallback "127.0.0.1:$mdb_port" \
    --interval-ms 500 --flat-window-ms 0 --state-file "" >"$LOG_DIR/shoal-ha.log" 2>&1 </dev/null &
  agent_pid=$!
  sleep 1
  _demo_load "$pxport" 3 "${node_pids[0]}" "${node_pids[1]}" | indent
  q="SELECT hostgroup, srv_host, srv_port, status, Queries FROM stats_mysql_connection_pool WHERE hostgroup = 30"
  shown "mariadb -h127.0.0.1 -P$pxadmin -uadmin -padmin -e '$q'"
  px -t -e "$q" | indent
  say "Port $mdb_port is the replica (MariaDB): with both nodes OFFLINE_SOFT it served" \
    "the reads, at its own speed. The digest is still counted in hostgroup 30:"
  px -t -e "SELECT hostgroup, digest, count_star FROM stats_mysql_query_digest WHERE digest = '$SEED_DIGEST'" | indent
  stop_pid "$agent_pid" 10
  stop_pid "$px_pid" 20
}
