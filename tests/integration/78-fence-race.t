#!/usr/bin/env bash
# 78-fence-race: issue 38, the commit race (docs/architecture.md, "The
# visibility fence"). MariaDB sends a transaction's binlog events before its
# commit is visible to other connections; a fill that began in that gap read
# the old row and, stored once a 5 ms window had passed, was served until the
# next write. Against a private MariaDB with its binlog on and a node in
# binlog mode (AUTO_CACHE):
#   - commits made directly on the upstream change one row while 6 readers
#     fill its key through the node; 100 ms after each commit a read through
#     the node must give the committed value, and no answer may still be
#     stale 3 s later (lib/78-fence-race.py);
#   - phase 1 with both cores kept busy (busy loops, bounded in time);
#   - phase 2 with the server starved of CPU: mariadbd pinned to one core
#     that busy loops share (which widens the gap between a transaction's
#     events and its commit);
#   - the fence's state in /metrics and SHOW SHOAL STATUS;
#   - a server that cannot prove visibility (binlog_optimize_thread_
#     scheduling OFF: its commit position may run ahead of its commits):
#     the fences stay closed, results of tables written are not stored
#     (each read answered right, from the upstream), and neither are those
#     of a table not written since the start: the stream's start cannot be
#     proven visible either (57-fence-start), so the node does not serve;
#     shoal_fence_supported 0.
# FENCE_ROUNDS (default 200) sets the rounds of each phase; by hand, 3000.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "fence race: needs a node (SHOAL_FAKE_DIRECT=1)"; fi

plan 20
work="$BUILD_TEST/t78"
rm -rf "$work"
mkdir -p "$work"
ROUNDS=${FENCE_ROUNDS:-200}
MAX_S=$((ROUNDS / 4 + 30))   # a phase's bound (a round takes 0.1-0.15 s)
BL_PORT=$(free_port)
BL_PID="" U_PID=""
BUSY=()
stop_busy() {
  local p
  for p in "${BUSY[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${BUSY[@]}"; do wait "$p" 2>/dev/null; done
  BUSY=()
}
# shellcheck disable=SC2016  # BL_PID is read when the exit handler runs
on_exit 'stop_busy; stop_mdb "$BL_PID"; stop_mdb "$U_PID"'

if ! MARIADB_EXTRA_ARGS="--log-bin=binlog --binlog-format=ROW --server-id=1" \
  "$SRCDIR/scripts/start-mariadb" "$work/mdb" "$BL_PORT" >"$work/mdb.start.out" 2>&1 </dev/null; then
  diag_file "$work/mdb/error.log"
  bail "start a MariaDB with its binlog on"
fi
BL_PID=$(cat "$work/mdb/pid")
ok "a MariaDB with its binlog on (port $BL_PORT)"

# start_binlog_node NAME UPSTREAM_PORT METRICS_PORT: an AUTO_CACHE node in
# binlog mode in front of that MariaDB (one check)
start_binlog_node() {
  mkdir -p "$work/$1"
  if shoal_start "$1" --auto-cache --upstream-db-url "mysql://app:pw@127.0.0.1:$2/shoaltest" \
    --invalidation binlog --metrics-address "127.0.0.1:$3" --data-dir "$work/$1"; then
    ok "node $1 (binlog mode) starts"
  else
    not_ok "node $1 (binlog mode) starts"
  fi
}
METRICS_P=$(free_port)
start_binlog_node nb "$BL_PORT" "$METRICS_P"

# busy CPUS [SECONDS]: a busy loop on each of the cpus listed (taskset -c
# syntax), each ended by timeout after SECONDS at the latest.
busy() {
  local cpu secs=${2:-$((MAX_S + 10))}
  IFS=, read -ra cpus <<<"$1"
  for cpu in "${cpus[@]}"; do
    taskset -c "$cpu" timeout "$secs" sh -c 'while :; do :; done' &
    BUSY+=("$!")
  done
}

race() { # phase
  BL_PORT=$BL_PORT NB=${nb_PORT:-0} ROUNDS=$ROUNDS PHASE=$1 MAX_SECONDS=$MAX_S \
    "$PY" "$TESTLIB/78-fence-race.py" | tee -a "$work/race.out"
}

NCPU=$(nproc)
all_cpus=$(seq -s, 0 $((NCPU - 1)))
# ---- phase 1: every core kept busy
busy "$all_cpus"
race "cores busy"
stop_busy

# ---- phase 2: the server starved, pinned to cpu 0 with two busy loops there
if taskset -a -p -c 0 "$BL_PID" >/dev/null; then
  ok "mariadbd (pid $BL_PID) pinned to cpu 0"
else
  not_ok "mariadbd (pid $BL_PID) pinned to cpu 0"
fi
busy 0,0
race "server starved"
stop_busy
taskset -a -p -c "$all_cpus" "$BL_PID" >/dev/null

# ---- the fence's state
m=$(curl -s "http://127.0.0.1:$METRICS_P/metrics")
like "$m" "shoal_fence_open [01]" "/metrics: shoal_fence_open"
probes=$(awk '$1 == "shoal_fence_probes_total" {print $2}' <<<"$m")
refused=$(awk '$1 == "shoal_fence_fills_refused_total" {print $2}' <<<"$m")
fenced=$(awk '$1 == "shoal_fence_transactions_total" {print $2}' <<<"$m")
if [ "${probes:-0}" -gt 0 ] && [ "${fenced:-0}" -ge $((2 * ROUNDS)) ]; then
  ok "/metrics: $fenced transactions fenced, $probes probes"
else
  not_ok "/metrics: transactions fenced and probes" "$(grep '^shoal_fence' <<<"$m")"
fi
diag "fills refused by a fence: ${refused:-?}; probes: ${probes:-?} for ${fenced:-?} transactions"
like "$(via_to nb -e 'SHOW SHOAL STATUS' 2>&1)" "Fence Fills Refused" "SHOW SHOAL STATUS shows the fence"

# ---- a server that cannot prove visibility: the fences stay closed
U_PORT=$(free_port)
if MARIADB_EXTRA_ARGS="--log-bin=binlog --binlog-format=ROW --server-id=1 --skip-binlog-optimize-thread-scheduling" \
  "$SRCDIR/scripts/start-mariadb" "$work/mdbu" "$U_PORT" >"$work/mdbu.start.out" 2>&1 </dev/null; then
  # shellcheck disable=SC2034  # read by the exit handler
  U_PID=$(cat "$work/mdbu/pid")
  ok "a MariaDB with binlog_optimize_thread_scheduling OFF (port $U_PORT)"
else
  diag_file "$work/mdbu/error.log"
  not_ok "a MariaDB with binlog_optimize_thread_scheduling OFF"
fi
u() { mariadb --no-defaults -h127.0.0.1 -uapp -ppw -P"$U_PORT" shoaltest "$@"; }
u -e "CREATE TABLE kept78 (id INT PRIMARY KEY, v INT); INSERT INTO kept78 VALUES (1, 1);
  CREATE TABLE fenced78 (id INT PRIMARY KEY, v INT); INSERT INTO fenced78 VALUES (1, 1)"
METRICS_U=$(free_port)
start_binlog_node nu "$U_PORT" "$METRICS_U"
nu_hits() { via_to nu -N -e "SHOW SHOAL STATUS" 2>/dev/null | awk -F'\t' '$1 == "Cache Hits" {print $2}'; }
via_to nu -N -e "SELECT v FROM kept78 WHERE id = 1" >/dev/null
u -e "UPDATE fenced78 SET v = 2 WHERE id = 1"
sleep 0.5
h0=$(nu_hits)
got=$(via_to nu -N -e "SELECT v FROM kept78 WHERE id = 1; SELECT v FROM kept78 WHERE id = 1" 2>&1 | tr '\n' ' ')
h1=$(nu_hits)
is "$got $((h1 - h0))" "1 1  0" "a table not written since the start: answered right, not stored (no hit)"
like "$(via_to nu -N -e 'SHOW SHOAL STATUS' 2>&1)" "Cache Serving.*start is not yet proven visible" \
  "  ... the node says why: the stream's start cannot be proven"
got=$(via_to nu -N -e "SELECT v FROM fenced78 WHERE id = 1; SELECT v FROM fenced78 WHERE id = 1; SELECT v FROM fenced78 WHERE id = 1" 2>&1 | tr '\n' ' ')
h2=$(nu_hits)
is "$got $((h2 - h1))" "2 2 2  0" "a table written: answered right, from the upstream, never stored (no hit)"
m=$(curl -s "http://127.0.0.1:$METRICS_U/metrics")
like "$m" "shoal_fence_supported 0" "/metrics: shoal_fence_supported 0"
like "$m" "shoal_fence_open 1" "/metrics: the fence stays open"
like "$(cat "$nu_LOG")" "binlog_optimize_thread_scheduling = OFF" "the node says why in its log"
