#!/usr/bin/env bash
# 93-ha-netns: the HA failure scenarios of issue #6 with real processes in
# network namespaces (docs/operations.md, "Failure scenarios, measured").
#
# Topology (one machine, root, `ip netns`; names carry this run's pid):
#   ns lb   bridge brf 10.77.1.1/24: HAProxy (TCP mode, ProxySQL's hostgroup
#           30 stand-in) on 10.77.1.1:6033, and the load generator
#   ns n1   Shoal node 1: front 10.77.1.21 (3307 data, 6034 HTTP), back 10.77.2.21
#   ns n2   Shoal node 2: front 10.77.1.22, back 10.77.2.22
#   ns rep  MariaDB replica: front 10.77.1.11 (HAProxy's backup server),
#           bridge brb 10.77.2.11/24 (the nodes' upstream, replication)
#   ns pri  MariaDB primary 10.77.2.10 (binlog; the replica replicates by GTID)
# Every node link is a veth pair; cutting a node's "back" link inside its
# namespace cuts it from its upstream but not from HAProxy's health checks.
#
# Scenarios (the load generator is tests/integration/lib/netns_load.py; its top
# comment says exactly what a client does and what counts as an error):
#   1 two nodes under load: both serve hits, every answer correct
#   2 SIGTERM one node under load: 0 errors
#   3 SIGKILL one node under load: errors only for queries in flight
#   4 both nodes gone: the replica (HAProxy backup) serves, 0 errors after
#     HAProxy noticed
#   5 the upstream link cut with `ip link set back down`: shun (node /health
#     503, HAProxy moves reads to the other node, then to the replica) and
#     serve-stale (cached keys answered past their TTL, a miss gets a clear
#     error); link up again: recovery by itself
# Each scenario prints the clients' counts (ok, errors and retried connects
# by class) as diagnostics and in the test names.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

fake_mode && skip_all "HA scenarios are node-only (fake mode)"
[ "$(id -u)" = 0 ] || skip_all "needs root for network namespaces"
command -v ip >/dev/null || skip_all "ip (iproute2) is missing"
command -v haproxy >/dev/null || skip_all "haproxy is missing (apt-get install haproxy)"
command -v mariadbd >/dev/null || skip_all "mariadbd is missing"
command -v curl >/dev/null || skip_all "curl is missing"
[ -x "$SHOAL_BIN" ] || skip_all "$SHOAL_BIN is not built"

P="s92-$$"
NS_LB=$P-lb NS_N1=$P-n1 NS_N2=$P-n2 NS_REP=$P-rep NS_PRI=$P-pri
ALL_NS=("$NS_LB" "$NS_N1" "$NS_N2" "$NS_REP" "$NS_PRI")
work="$BUILD_TEST/netns92-$$"
rm -rf "$work"
mkdir -p "$work"
T0=$(date +%s)

# ------------------------------------------------------------ cleanup
PIDS=()  # every process this test started (servers, HAProxy, loads)
netns_cleanup() {
  local p q ns i
  touch "$work"/*.stop 2>/dev/null
  for p in "${PIDS[@]}"; do is_pid "$p" && kill -KILL "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do is_pid "$p" && wait "$p" 2>/dev/null; done
  for ns in "${ALL_NS[@]}"; do
    # only processes of this run can be inside its namespaces
    for i in 1 2 3; do
      p=$(ip netns pids "$ns" 2>/dev/null) || break
      [ -n "$p" ] || break
      for q in $p; do is_pid "$q" && kill -KILL "$q" 2>/dev/null; done
      sleep 0.2
    done
    ip netns del "$ns" 2>/dev/null
  done
  cp "$work"/*.log "$SHOAL_LOG_DIR/" 2>/dev/null
  cp "$work/pri/error.log" "$SHOAL_LOG_DIR/93-ha-netns.primary.log" 2>/dev/null
  cp "$work/rep/error.log" "$SHOAL_LOG_DIR/93-ha-netns.replica.log" 2>/dev/null
  rm -rf "$work"
}
on_exit netns_cleanup
ip netns add "$NS_LB" 2>/dev/null || skip_all "ip netns add does not work here"
# (in a chroot, ip netns exec fails: / is not a mount point there)
ip netns exec "$NS_LB" true 2>/dev/null || skip_all "ip netns exec does not work here (a chroot?)"
plan 41

inns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
# for background jobs: `ip netns exec` execs the program, so $! is its pid
inns_exec() { local ns=$1; shift; exec ip netns exec "$ns" "$@"; }
inlb() { inns "$NS_LB" "$@"; }
die() { bail "$*"; }
# wait_until SECONDS CMD...: poll CMD every 0.1 s
wait_until() {
  local end=$((SECONDS + $1)); shift
  while :; do
    "$@" && return 0
    [ $SECONDS -ge $end ] && return 1
    sleep 0.1
  done
}

# ------------------------------------------------------------ network
setup_net() {
  local ns
  for ns in "$NS_N1" "$NS_N2" "$NS_REP" "$NS_PRI"; do ip netns add "$ns" || return 1; done
  for ns in "${ALL_NS[@]}"; do ip -n "$ns" link set lo up || return 1; done
  ip -n "$NS_LB" link add brf type bridge && ip -n "$NS_LB" addr add 10.77.1.1/24 dev brf &&
    ip -n "$NS_LB" link set brf up || return 1
  ip -n "$NS_REP" link add brb type bridge && ip -n "$NS_REP" addr add 10.77.2.11/24 dev brb &&
    ip -n "$NS_REP" link set brb up || return 1
  # veth NS IFNAME ADDR BRIDGE-NS BRIDGE PORTNAME
  veth() {
    ip link add "$6" netns "$4" type veth peer name "$2" netns "$1" &&
      ip -n "$4" link set "$6" master "$5" && ip -n "$4" link set "$6" up &&
      ip -n "$1" addr add "$3/24" dev "$2" && ip -n "$1" link set "$2" up
  }
  veth "$NS_N1" front 10.77.1.21 "$NS_LB" brf f-n1 &&
    veth "$NS_N2" front 10.77.1.22 "$NS_LB" brf f-n2 &&
    veth "$NS_REP" front 10.77.1.11 "$NS_LB" brf f-rep &&
    veth "$NS_N1" back 10.77.2.21 "$NS_REP" brb b-n1 &&
    veth "$NS_N2" back 10.77.2.22 "$NS_REP" brb b-n2 &&
    veth "$NS_PRI" back 10.77.2.10 "$NS_REP" brb b-pri
}
setup_net || die "network namespaces and veth links set up"
ok "namespaces $P-{lb,n1,n2,rep,pri} linked by veth pairs and two bridges"

# ------------------------------------------------------------ MariaDB
K=50  # rows of shoaltest.kv: id 1..K, v = 'v<id>'
mdb_start_ns() { # NS DIR SERVER_ID BIND EXTRA...
  local ns=$1 dir=$2 sid=$3 bind=$4; shift 4
  inns_exec "$ns" mariadbd --no-defaults --datadir="$dir/data" --socket="$dir/sock" --port=3306 \
    --bind-address="$bind" --pid-file="$dir/pid" --user=root --log-error="$dir/error.log" \
    --innodb-buffer-pool-size=64M --max-connections=1000 --skip-name-resolve \
    --innodb-flush-log-at-trx-commit=2 --server-id="$sid" "$@" </dev/null >/dev/null 2>&1 &
  PIDS+=("$!")
}
msql() { mariadb --no-defaults --socket="$1/sock" -uroot -N -B -e "$2"; }
mdb_up() { mariadb-admin --no-defaults --socket="$1/sock" -uroot ping >/dev/null 2>&1; }

mkdir -p "$work/pri" "$work/rep"
mariadb-install-db --no-defaults --datadir="$work/pri/data" --user=root \
  --auth-root-authentication-method=normal --skip-test-db --force >"$work/93-ha-netns.install.log" 2>&1 ||
  die "mariadb-install-db"
cp -a "$work/pri/data" "$work/rep/data"
mdb_start_ns "$NS_PRI" "$work/pri" 1 10.77.2.10 --log-bin=binlog --binlog-format=ROW
mdb_start_ns "$NS_REP" "$work/rep" 2 0.0.0.0 --read-only=1 --relay-log=relay
if ! wait_until 60 mdb_up "$work/pri" || ! wait_until 60 mdb_up "$work/rep"; then
  diag_file "$work/pri/error.log"; diag_file "$work/rep/error.log"; die "primary and replica start"
fi
msql "$work/pri" "
  CREATE USER 'app'@'%' IDENTIFIED BY 'pw'; GRANT ALL ON *.* TO 'app'@'%';
  CREATE USER 'repl'@'%' IDENTIFIED BY 'replpw'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%';
  CREATE DATABASE shoaltest;
  CREATE TABLE shoaltest.kv (id INT PRIMARY KEY, v VARCHAR(20) NOT NULL);
  USE shoaltest; INSERT INTO kv SELECT seq, CONCAT('v', seq) FROM seq_1_to_$K;" || die "primary: users and data"
msql "$work/rep" "
  CHANGE MASTER TO MASTER_HOST='10.77.2.10', MASTER_PORT=3306, MASTER_USER='repl',
    MASTER_PASSWORD='replpw', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1;
  START SLAVE;" || die "replica: CHANGE MASTER TO, START SLAVE"
rows_on_rep() { [ "$(msql "$work/rep" "SELECT COUNT(*) FROM shoaltest.kv" 2>/dev/null)" = "$1" ]; }
wait_until 30 rows_on_rep $K || die "the replica receives the primary's rows"
st=$(mariadb --no-defaults --socket="$work/rep/sock" -uroot -e "SHOW SLAVE STATUS\G" | tr -s ' ')
like "$st" "Slave_IO_Running: Yes" "replica: Slave_IO_Running Yes (GTID replication from the primary)"
like "$st" "Slave_SQL_Running: Yes" "replica: Slave_SQL_Running Yes, $K rows of shoaltest.kv replicated"

# ------------------------------------------------------------ nodes
declare -A NODE_NS=([n1]=$NS_N1 [n2]=$NS_N2) NODE_ADDR=([n1]=10.77.1.21 [n2]=10.77.1.22)
declare -A NODE_PID=()
node_start() { # NAME EXTRA-ARGS...
  local n=$1 a=${NODE_ADDR[$1]}; shift
  local log="$work/93-ha-netns.$n.log"
  echo "=== $(date '+%F %T') start $n: $*" >>"$log"
  inns_exec "${NODE_NS[$n]}" "$SHOAL_BIN" --upstream-db-url "mysql://app:pw@10.77.2.11:3306/shoaltest" \
    --listen-address "$a:3307" --metrics-address "$a:6034" --admin-address 127.0.0.1:6035 \
    --data-dir "$work/$n.data" --workers 2 --auto-cache --cache-ttl-ms 60000 --upstream-down-after-ms 1000 \
    --upstream-connect-timeout-ms 1000 --drain-timeout-ms 5000 "$@" </dev/null >>"$log" 2>&1 &
  NODE_PID[$n]=$!
  PIDS+=("$!")
  if ! wait_until 20 node_login "$n"; then
    diag "node $n did not come up; log tail:"; diag_file "$log" 20; return 1
  fi
}
node_login() {
  [ "$(inlb mariadb --no-defaults -h"${NODE_ADDR[$1]}" -P3307 -uapp -ppw --connect-timeout=2 -N \
    -e 'select 1' shoaltest 2>/dev/null)" = 1 ]
}
http() { inlb curl -s -m 3 -o /dev/null -w '%{http_code}' "http://${NODE_ADDR[$1]}:6034$2"; }
metric() { # NAME METRIC-PREFIX: the sum of the samples whose name starts so
  inlb curl -s -m 3 "http://${NODE_ADDR[$1]}:6034/metrics" |
    awk -v m="$2" 'index($0, m) == 1 && ($1 == m || substr($1, length(m) + 1, 1) == "{") { s += $2 } END { print s + 0 }'
}
hits() { metric "$1" shoal_cache_hits_total; }
node_exited() { ! kill -0 "${NODE_PID[$1]}" 2>/dev/null; }
# node_wait_exit NAME SECONDS: sets EXIT_STATUS
node_wait_exit() {
  wait_until "$2" node_exited "$1" || { EXIT_STATUS=timeout; return 1; }
  { wait "${NODE_PID[$1]}"; } 2>/dev/null
  EXIT_STATUS=$?
}

{ node_start n1 && node_start n2; } || die "two Shoal nodes start in their namespaces"
ok "two Shoal nodes up (10.77.1.21, 10.77.1.22; upstream the replica 10.77.2.11)"

# ------------------------------------------------------------ HAProxy
cat >"$work/haproxy.cfg" <<EOF
global
  maxconn 4000
  stats socket $work/haproxy.sock mode 600 level admin
  log stderr format short local0 info

defaults
  mode tcp
  log global
  option tcplog
  timeout connect 1s
  timeout client 30s
  timeout server 30s
  timeout check 1s
  # a refused connect is tried again, on another server (ProxySQL's connect retry)
  retries 3
  option redispatch 1

listen hg30
  bind 10.77.1.1:6033
  balance roundrobin
  # Shoal's health semantics: /health is 503 while draining or shunning
  option httpchk GET /health
  http-check expect status 200
  default-server inter 200ms fastinter 100ms downinter 200ms fall 2 rise 2
  server n1 10.77.1.21:3307 check port 6034
  server n2 10.77.1.22:3307 check port 6034
  # the weight-1 fallback of seed 004: used only when both nodes are down
  server replica 10.77.1.11:3306 backup
EOF
inns_exec "$NS_LB" haproxy -f "$work/haproxy.cfg" -db </dev/null >>"$work/93-ha-netns.haproxy.log" 2>&1 &
HAP_PID=$!
PIDS+=("$HAP_PID")
# hap SERVER FIELD: a field of HAProxy's "show stat" for hg30/SERVER
hap() {
  "$PY" - "$work/haproxy.sock" "$1" "$2" <<'PY' 2>/dev/null
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(3)
s.connect(sys.argv[1])
s.sendall(b"show stat\n")
data = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    data += d
lines = data.decode().splitlines()
head = lines[0].lstrip("# ").split(",")
for l in lines[1:]:
    f = l.split(",")
    if len(f) >= len(head) and f[0] == "hg30" and f[1] == sys.argv[2]:
        print(f[head.index(sys.argv[3])])
PY
}
hap_is() { [ "$(hap "$1" status)" = "$2" ]; }
if ! wait_until 20 hap_is n1 UP || ! wait_until 20 hap_is n2 UP; then
  diag_file "$work/93-ha-netns.haproxy.log"; die "HAProxy sees both nodes UP"
fi
ok "HAProxy 10.77.1.1:6033 (TCP, httpchk GET /health, replica as backup): n1 UP, n2 UP"

# ------------------------------------------------------------ load
# load_start NAME ARGS...: netns_load.py in the lb namespace against HAProxy,
# until load_stop; waits for its first answer.
load_start() {
  local n=$1; shift
  rm -f "$work/$n".{stop,ready,json}
  echo start >"$work/$n.phase"
  inns_exec "$NS_LB" "$PY" "$TESTLIB/netns_load.py" --host 10.77.1.1 --port 6033 --keys $K \
    --stop-file "$work/$n.stop" --phase-file "$work/$n.phase" --ready-file "$work/$n.ready" --retry-log "$work/93-ha-netns.$n.retries.log" \
    --progress-file "$work/$n.progress" \
    --duration 90 "$@" >"$work/$n.json" 2>"$work/$n.err" </dev/null &
  LOAD_PID=$!
  PIDS+=("$LOAD_PID")
  wait_until 20 test -e "$work/$n.ready"
}
phase() { echo "$2" >"$work/$1.phase"; sleep 0.1; }
load_stop() {
  touch "$work/$1.stop"
  wait "$LOAD_PID" 2>/dev/null
  [ -s "$work/$1.json" ] || { diag "load $1 gave no result:"; diag_file "$work/$1.err"; }
}
# jq-like: lget NAME PYTHON-EXPR (d = the load's JSON)
lget() {
  "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
    "$work/$1.json" "$2" 2>/dev/null
}
# per-phase numbers: pok NAME PHASE, perr NAME PHASE
pok() { lget "$1" "d['phases'].get('$2', {}).get('ok', 0)"; }
perr() { lget "$1" "sum(d['phases'].get('$2', {}).get('errors', {}).values())"; }
load_report() { # NAME: the counts as diagnostics
  diag "$1: $(lget "$1" "'ok %d, errors %d %s, connects retried %d %s, longest gap between answers %d ms, %s s' % (d['ok'], d['error_total'], d['errors'], d['retried_total'], d['retried'], d['max_gap_ms'], d['seconds'])")"
  diag "$1 by phase: $(lget "$1" "'; '.join('%s: ok %d errors %s retried %s' % (k, v['ok'], v['errors'], v['retried']) for k, v in d['phases'].items())")"
  local s
  s=$(lget "$1" "'\n'.join(d['samples'])")
  [ -n "$s" ] && diag "$s"
  return 0
}
THREADS=6
run_for() { local end=$((SECONDS + $1)); while [ $SECONDS -lt $end ]; do sleep 0.2; done; }

# ============================================================ 1: two nodes
# Warm both nodes with every key first (the same client as the load: the
# cache key includes the session's settings), so that every answer of the
# load is a cache hit (TTL 60 s).
warm() {
  inlb "$PY" "$TESTLIB/netns_load.py" --sweep --keys $K --host "${NODE_ADDR[$1]}" --port 3307 2>&1
}
w1=$(warm n1) w2=$(warm n2)
ok_if() { if [ "$1" = 1 ]; then ok "$2"; else not_ok "$2"; fi; }
is "$w1 $w2" "{\"keys\": $K, \"failed\": []} {\"keys\": $K, \"failed\": []}" "1. both nodes read the $K rows correctly (cache warmed)"
h1=$(hits n1) h2=$(hits n2)
load_start s1 --threads $THREADS || die "scenario 1: load starts"
phase s1 measure
run_for 3
load_stop s1
load_report s1
d1=$(($(hits n1) - h1)) d2=$(($(hits n2) - h2))
e=$(lget s1 "d['error_total']") okn=$(lget s1 "d['ok']")
is "$e" 0 "1. two nodes under load: $okn answers, all correct, $e errors"
ok_if "$([ "$d1" -gt 0 ] && [ "$d2" -gt 0 ] && echo 1)" \
  "1. both nodes serve hits: n1 +$d1, n2 +$d2 (shoal_cache_hits_total)"
is "$((d1 + d2))" "$okn" "1. every answer was a cache hit ($((d1 + d2)) hits for $okn answers)"

# ============================================================ 2: SIGTERM
load_start s2 --threads $THREADS || die "scenario 2: load starts"
phase s2 before
run_for 1
phase s2 drain
kill -TERM "${NODE_PID[n1]}"
node_wait_exit n1 15
is "$EXIT_STATUS" 0 "2. SIGTERM under load: n1 drains and exits with status 0"
wait_until 10 hap_is n1 DOWN
ok_if "$(hap_is n1 DOWN && echo 1)" "2. HAProxy marks n1 DOWN ($(hap n1 check_status) $(hap n1 last_chk))"
phase s2 after
h2=$(hits n2)
run_for 2
load_stop s2
load_report s2
d2=$(($(hits n2) - h2))
e=$(lget s2 "d['error_total']")
is "$e" 0 "2. SIGTERM one node under load: $e errors ($(lget s2 "d['ok']") answers, $(lget s2 "d['retried_total']") connects retried)"
ok_if "$([ "$(pok s2 after)" -gt 0 ] && [ "$d2" -gt 0 ] && echo 1)" \
  "2. the load goes on on n2: $(pok s2 after) answers after n1 left, n2 hits +$d2"
like "$(cat "$work/93-ha-netns.n1.log")" "received signal 15: draining" "2. n1's log tells the drain"

node_start n1 || die "n1 starts again"
wait_until 20 hap_is n1 UP || die "HAProxy sees n1 UP again"

# ============================================================ 3: SIGKILL
load_start s3 --threads $THREADS || die "scenario 3: load starts"
phase s3 before
run_for 1
phase s3 killed
disown "${NODE_PID[n2]}" 2>/dev/null  # no "Killed" job notice in the TAP output
kill -KILL "${NODE_PID[n2]}"
node_wait_exit n2 10
wait_until 10 hap_is n2 DOWN
ok_if "$(hap_is n2 DOWN && echo 1)" "3. SIGKILL n2: HAProxy marks it DOWN"
phase s3 after
h1=$(hits n1)
run_for 2
load_stop s3
load_report s3
d1=$(($(hits n1) - h1))
e=$(lget s3 "d['error_total']")
lost=$(lget s3 "sum(v for k, v in d['errors'].items() if k in ('lost', 'timeout'))")
ok_if "$([ "$e" = "$lost" ] && [ "$e" -le $THREADS ] && echo 1)" \
  "3. SIGKILL one node under load: $e errors, all queries in flight (lost connection; at most $THREADS clients)"
ok_if "$([ "$(pok s3 after)" -gt 0 ] && [ "$(perr s3 after)" = 0 ] && [ "$d1" -gt 0 ] && echo 1)" \
  "3. the load goes on on n1: $(pok s3 after) answers, $(perr s3 after) errors after HAProxy noticed, n1 hits +$d1"

node_start n2 || die "n2 starts again"
wait_until 20 hap_is n2 UP || die "HAProxy sees n2 UP again"

# ============================================================ 4: both gone
stot0=$(hap replica stot)
load_start s4 --threads $THREADS || die "scenario 4: load starts"
phase s4 before
run_for 1
phase s4 stopping
kill -TERM "${NODE_PID[n1]}" "${NODE_PID[n2]}"
node_wait_exit n1 15; s_n1=$EXIT_STATUS
node_wait_exit n2 15; s_n2=$EXIT_STATUS
wait_until 10 hap_is n1 DOWN && wait_until 10 hap_is n2 DOWN
ok_if "$(hap_is n1 DOWN && hap_is n2 DOWN && echo 1)" \
  "4. both nodes stopped (exit $s_n1, $s_n2): HAProxy marks both DOWN"
phase s4 backup
run_for 2
load_stop s4
load_report s4
stot1=$(hap replica stot)
is "$(perr s4 backup)" 0 "4. both nodes gone: $(pok s4 backup) answers from the replica, $(perr s4 backup) errors after HAProxy noticed"
is "$(lget s4 "d['error_total']")" 0 "4. ... and $(lget s4 "d['error_total']") errors in the whole run ($(lget s4 "d['retried_total']") connects retried)"
ok_if "$([ $((stot1 - stot0)) -ge "$(pok s4 backup)" ] && [ "$(pok s4 backup)" -gt 0 ] && echo 1)" \
  "4. the replica (HAProxy backup) took $((stot1 - stot0)) sessions"

# ============================================================ 5a: shun
{ node_start n1 && node_start n2; } || die "both nodes start again (policy shun)"
{ wait_until 20 hap_is n1 UP && wait_until 20 hap_is n2 UP; } || die "HAProxy sees both UP"
load_start s5 --threads $THREADS || die "scenario 5 (shun): load starts"
phase s5 before
run_for 1
phase s5 n1_cut
ip -n "$NS_N1" link set back down
health_is() { [ "$(http "$1" /health)" = "$2" ]; }
wait_until 15 health_is n1 503
is "$(http n1 /health)" 503 "5. shun: n1's upstream link down: n1 /health 503"
wait_until 10 hap_is n1 DOWN
ok_if "$(hap_is n1 DOWN && echo 1)" "5. shun: HAProxy marks n1 DOWN"
phase s5 n1_out
h1=$(hits n1) h2=$(hits n2)
run_for 1
d1=$(($(hits n1) - h1)) d2=$(($(hits n2) - h2))
ok_if "$([ "$d2" -gt 0 ] && [ "$d1" = 0 ] && echo 1)" "5. shun: reads move to n2 (n2 hits +$d2, n1 +$d1)"
phase s5 n2_cut
ip -n "$NS_N2" link set back down
wait_until 15 health_is n2 503
wait_until 10 hap_is n2 DOWN
ok_if "$(hap_is n2 DOWN && health_is n2 503 && echo 1)" "5. shun: n2's link down too: /health 503, HAProxy marks it DOWN"
phase s5 both_out
stot0=$(hap replica stot)
# A client whose miss went to n2 just before the cut waits for that
# connection to fail (TCP_USER_TIMEOUT, 5 s) before it moves on.
replica_took() { [ $(($(hap replica stot) - stot0)) -gt 0 ]; }
wait_until 10 replica_took
run_for 1
stot1=$(hap replica stot)
ok_if "$([ $((stot1 - stot0)) -gt 0 ] && echo 1)" "5. shun: reads move to the replica ($((stot1 - stot0)) sessions)"
phase s5 links_up
ip -n "$NS_N1" link set back up
ip -n "$NS_N2" link set back up
wait_until 20 health_is n1 200 && wait_until 20 health_is n2 200
ok_if "$(health_is n1 200 && health_is n2 200 && echo 1)" "5. shun: links up: both nodes recover by themselves (/health 200)"
wait_until 10 hap_is n1 UP && wait_until 10 hap_is n2 UP
phase s5 recovered
h1=$(hits n1) h2=$(hits n2)
run_for 1
load_stop s5
load_report s5
d1=$(($(hits n1) - h1)) d2=$(($(hits n2) - h2))
ok_if "$(hap_is n1 UP && hap_is n2 UP && [ "$d1" -gt 0 ] && [ "$d2" -gt 0 ] && echo 1)" \
  "5. shun: HAProxy UP again, both nodes serve hits (n1 +$d1, n2 +$d2)"
e=$(lget s5 "d['error_total']")
eo=$(($(perr s5 n1_out) + $(perr s5 both_out) + $(perr s5 recovered)))
is "$eo" 0 "5. shun: 0 errors once HAProxy noticed each change ($e in the whole run, $(lget s5 "d['ok']") answers, $(lget s5 "d['retried_total']") connects retried)"
ok_if "$([ "$e" -le $((2 * THREADS)) ] && echo 1)" "5. shun: errors at the cuts only for queries in flight ($e <= $((2 * THREADS)))"

# ============================================================ 5b: serve-stale
# n1 again with serve-stale and a 1 s TTL; pooled clients (ProxySQL keeps its
# backend connections, which is what serve-stale is for) straight to n1 read
# keys 1..20; a held-open session asks for key 45, never cached, after the cut.
kill -TERM "${NODE_PID[n1]}"
node_wait_exit n1 15
node_start n1 --upstream-down-policy serve-stale --cache-ttl-ms 1000 --max-stale-ms 60000 ||
  die "n1 starts with --upstream-down-policy serve-stale"
sess_cmd() { echo "$1" >>"$work/sess.cmd"; }
sess_last() { tail -n 1 "$work/sess.out" 2>/dev/null; }
sess_lines() { [ "$(wc -l <"$work/sess.out" 2>/dev/null)" -ge "$1" ]; }
: >"$work/sess.cmd"; : >"$work/sess.out"
inns_exec "$NS_LB" "$PY" "$TESTLIB/netns_session.py" 10.77.1.21 3307 "$work/sess.cmd" "$work/sess.out" 4 \
  </dev/null >>"$work/sess.err" 2>&1 &
SESS_PID=$!
PIDS+=("$SESS_PID")
wait_until 10 sess_lines 1
is "$(sess_last)" "login ok" "5. serve-stale: a session held open on n1"
sess_cmd "SELECT v FROM kv WHERE id = 44"
wait_until 10 sess_lines 2
is "$(sess_last)" "rs v44" "5. serve-stale: ... it reads through n1 before the cut"
load_start s6 --threads 4 --think-ms 1 --mode pool --keys 20 --host 10.77.1.21 --port 3307 ||
  die "scenario 5 (serve-stale): pooled load on n1 starts"
phase s6 warm
run_for 1
stale0=$(metric n1 shoal_cache_stale_hits_total)
phase s6 cut
ip -n "$NS_N1" link set back down
login=$(inlb mariadb --no-defaults -h10.77.1.21 -P3307 -uapp -ppw --connect-timeout=5 -N -e 'select 1' shoaltest 2>&1)
like "$login" "ERROR 1429 .*10.77.2.11:3306" "5. serve-stale: upstream link cut: a new login gets a clear ERROR 1429 ($login)"
up_is() { [ "$(metric n1 shoal_upstream_up)" = "$1" ]; }
wait_until 10 up_is 0
is "$(metric n1 shoal_upstream_up)" 0 "5. serve-stale: n1 counts its upstream as down (shoal_upstream_up 0)"
is "$(http n1 /health)" 200 "5. serve-stale: n1 stays in rotation (/health 200)"
phase s6 stale
run_for 3
stale1=$(metric n1 shoal_cache_stale_hits_total)
# After a silent cut (no FIN, no RST) the pooled connections are not broken,
# only unanswered: a session opened before the cut holds none between
# commands, and once the node counts its upstream as down its miss fails at
# once with the serve-stale error instead of being sent into the silence.
sess_cmd "SELECT v FROM kv WHERE id = 45"
wait_until 12 sess_lines 3
miss=$(sess_last)
ok_if "$([[ $miss =~ ^err\ 1429\ .*only\ cached\ results\ are\ served ]] && echo 1)" \
  "5. serve-stale: a miss on a session opened before the cut gets a clear error ($miss)"
phase s6 link_up
ip -n "$NS_N1" link set back up
wait_until 15 up_is 1
is "$(metric n1 shoal_upstream_up)" 1 "5. serve-stale: link up: n1 finds its upstream again by itself"
ok_if "$(node_login n1 && echo 1)" "5. serve-stale: ... new logins work"
phase s6 recovered
# answers_grow NAME N: the load has N more answers than at the last mark
progress_mark() { read -r MARK_OK _ <"$work/$1.progress"; MARK_T=$SECONDS; }
answers_grow() { local o; read -r o _ <"$work/$1.progress"; [ $((o - MARK_OK)) -ge "$2" ]; }
progress_mark s6
wait_until 30 answers_grow s6 200
ok_if "$(answers_grow s6 200 && echo 1)" \
  "5. serve-stale: the pooled clients get answers again after the link is up ($((SECONDS - MARK_T)) s)"
load_stop s6
load_report s6
ok_if "$([ $((stale1 - stale0)) -gt 0 ] && [ "$(pok s6 stale)" -gt 0 ] && [ "$(perr s6 stale)" = 0 ] && echo 1)" \
  "5. serve-stale: cached keys keep answering past their 1 s TTL: $(pok s6 stale) answers, $(perr s6 stale) errors, stale hits +$((stale1 - stale0))"
e=$(lget s6 "d['error_total']")
is "$(($(perr s6 stale) + $(perr s6 recovered)))" 0 \
  "5. serve-stale: 0 errors while stale and after recovery ($e in the whole run, $(lget s6 "d['ok']") answers, $(lget s6 "d['retried_total']") reconnects)"
sess_cmd quit

diag "93-ha-netns took $(($(date +%s) - T0)) s"
done_testing
