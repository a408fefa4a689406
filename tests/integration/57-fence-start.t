#!/usr/bin/env bash
# 57-fence-start: issue 38, the follower's fresh start (docs/architecture.md,
# "The visibility fence", "The start"). A node with no binlog position starts
# its follower at the server's @@gtid_binlog_pos. A transaction binlogged
# just before that read but not yet visible (between its binlog write and
# its commit in the engine) is never received, so nothing fences its
# tables: a fill that read them then was stored with the old rows and
# served until the next write or the TTL.
#
# The gap is made wide and certain with semi-synchronous replication and no
# semi-sync replica: with rpl_semi_sync_master_wait_point = AFTER_SYNC and
# rpl_semi_sync_master_wait_no_slave = ON, a commit is binlogged, then waits
# for a reply that never comes (Rpl_semi_sync_master_wait_sessions 1), and
# only after rpl_semi_sync_master_timeout is it committed in the engine. A
# node started in that wait reads the old row (a right answer then); once
# the commit is visible, a read through the node must give the new row.
#   - the plain case: the held commit is the server's last transaction;
#   - the held commit rotates the binlog (max_binlog_size 4096), so the
#     follower starts in the next file and never sees the commit's file;
#   - two domains: a commit in domain 0 is held, one in domain 1 queues
#     behind it (binlogged, not visible either);
#   - idle servers still cache after a fresh start: after the held commits;
#     after a restart and a rotation (the stream starts at a file's head,
#     which the server's checkpoint event for it proves); with the last
#     commit in the current file (one reading proves it: the start's cost).
# Each held case checks that its reads really came while the commit was
# held (else the machine was too slow for the window: FENCE_START_HOLD_S,
# default 10, raises it); no sleep decides a check.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "fence start: needs a node (SHOAL_FAKE_DIRECT=1)"; fi

plan 29
work="$BUILD_TEST/t78s"
rm -rf "$work"
mkdir -p "$work"
HOLD_S=${FENCE_START_HOLD_S:-10}
SP=$(free_port)
SP_PID=""
HELD=()
# shellcheck disable=SC2016  # read when the exit handler runs
on_exit 'for p in "${HELD[@]}"; do kill "$p" 2>/dev/null; done; stop_mdb "$SP_PID"'
SEMI_ARGS="--log-bin=binlog --binlog-format=ROW --server-id=1 --rpl-semi-sync-master-wait-point=AFTER_SYNC
  --rpl-semi-sync-master-wait-no-slave=ON --rpl-semi-sync-master-timeout=$((HOLD_S * 1000))"
start_server() {
  MARIADB_EXTRA_ARGS="$SEMI_ARGS" "$SRCDIR/scripts/start-mariadb" "$work/mdb" "$SP" \
    >>"$work/mdb.start.out" 2>&1 </dev/null && SP_PID=$(cat "$work/mdb/pid")
}
if start_server; then
  ok "a MariaDB with its binlog on, semi-sync possible (port $SP, commits held ${HOLD_S} s)"
else
  diag_file "$work/mdb.start.out"
  bail "start a MariaDB with its binlog on"
fi
u() { mariadb --no-defaults -h127.0.0.1 -uapp -ppw -P"$SP" shoaltest "$@"; }
u_val() { u -N -e "$1" 2>&1; }

# wait_until SECONDS CMD...: poll CMD every 0.1 s until it succeeds (a bound
# on waiting for something observable, never a margin a check relies on)
wait_until() {
  local i n=$(($1 * 10))
  shift
  for ((i = 0; i < n; i++)); do "$@" && return 0; sleep 0.1; done
  return 1
}
domains() { tr ',' '\n' <<<"$1" | grep -c .; }
more_domains() { [ "$(domains "$(u_val "SELECT @@gtid_binlog_pos")")" -gt "$1" ]; }
held_waiting() { [ "$(u_val "SHOW STATUS LIKE 'Rpl_semi_sync_master_wait_sessions'" | cut -f2)" = "${1:-1}" ]; }
# hold SQL: run SQL in the background with semi-sync on: it is binlogged,
# then waits for a reply until the timeout. Sets HELD_PID.
hold() {
  u -e "SET GLOBAL rpl_semi_sync_master_enabled = OFF; SET GLOBAL rpl_semi_sync_master_enabled = ON"
  u -e "$1" >>"$work/held.out" 2>&1 &
  HELD_PID=$!
  HELD+=("$HELD_PID")
}
# metric PORT NAME: a sample's value from a node's /metrics ("" if none)
metric() { curl -s "http://127.0.0.1:$1/metrics" | awk -v n="$2" '$1 == n { print $2 }'; }
streaming() { [ "$(metric "$1" 'shoal_binlog_state{state="streaming"}')" = 1 ]; }
serving() { [ "$(metric "$1" shoal_cache_serving)" = 1 ]; }
hits() { via_to "$1" -N -e "SHOW SHOAL STATUS" 2>/dev/null | awk -F'\t' '$1 == "Cache Hits" {print $2}'; }
# run_log NAME: the node's log since its last start (a log file is appended to)
run_log() { local v="${1}_LOG"; tac "${!v}" | sed '/^=== .* start /q' | tac; }

# start_fresh NAME METRICS_PORT: a node in binlog mode, AUTO_CACHE, TTL an
# hour, no cache snapshot (a data dir of its own): its follower has no
# position. Its first cacheable read starts the follower; then wait until
# the stream is up (streaming: the fix or not, the follower is following).
start_fresh() {
  mkdir -p "$work/$1"
  if shoal_start "$1" --auto-cache --cache-ttl-ms 3600000 --invalidation binlog \
    --upstream-db-url "mysql://app:pw@127.0.0.1:$SP/shoaltest" --metrics-address "127.0.0.1:$2" \
    --data-dir "$work/$1"; then
    via_to "$1" -N -e "SELECT 1 FROM DUAL WHERE 1 = 0" >/dev/null 2>&1
    wait_until 20 streaming "$2" && return 0
    diag "node $1: the binlog stream never got to streaming"
  fi
  return 1
}

# held_case NAME METRICS SETUP HOLD QUERY OLD NEW [QUEUED]: SETUP runs
# directly; HOLD is held; a fresh node reads QUERY (OLD then) and, once
# the commit is visible, must read NEW (5 checks). QUEUED: a second
# statement binlogged behind the held one (another domain).
held_case() {
  local name=$1 mp=$2 setup=$3 held=$4 q=$5 old=$6 new=$7 queued=${8:-} got before after qpid=""
  u -e "$setup"
  before=$(u_val "SELECT @@gtid_binlog_pos")
  hold "$held"
  if ! wait_until 20 held_waiting; then bail "$name: the commit is held (semi-sync wait)"; fi
  if [ -n "$queued" ]; then
    u -e "$queued" >>"$work/held.out" 2>&1 &
    qpid=$!
    HELD+=("$qpid")
    # binlogged behind the held one: the position holds one domain more
    wait_until 20 more_domains "$(domains "$before")" || bail "$name: the second commit is binlogged"
  fi
  after=$(u_val "SELECT @@gtid_binlog_pos")
  got=$(u_val "$q")
  is "$got $([ "$before" != "$after" ] && echo binlogged)" "$old binlogged" \
    "$name: the commit is binlogged ($before -> $after), not visible (direct: $got)"
  start_fresh "$name" "$mp" || bail "$name: a fresh node follows the binlog"
  got=$(via_to "$name" -N -e "$q; $q" 2>&1 | tr '\n' ' ')
  is "$got" "$old $old " "$name: read through the node while the commit is held: the old row (right then)"
  # the scenario: were those reads made in the hold? (else: a slower machine
  # than the window allows; raise FENCE_START_HOLD_S)
  if held_waiting && [ "$(u_val "$q")" = "$old" ]; then
    ok "$name: the reads came while the commit was still held"
  else
    not_ok "$name: the reads came while the commit was still held (raise FENCE_START_HOLD_S)"
  fi
  wait "$HELD_PID"
  [ -z "$qpid" ] || wait "$qpid"
  is "$(u_val "$q")" "$new" "$name: the hold is over: the commit is visible (direct)"
  is "$(via_to "$name" -N -e "$q" 2>&1)" "$new" "$name: a read through the node gives the new row"
}

# ---- the plain case
M1=$(free_port)
held_case na "$M1" "CREATE TABLE s78 (id INT PRIMARY KEY, v INT); INSERT INTO s78 VALUES (1, 1)" \
  "UPDATE s78 SET v = 2 WHERE id = 1" "SELECT v FROM s78 WHERE id = 1" 1 2
# after it, the server is idle: the node serves and caches
if wait_until 20 serving "$M1"; then ok "na: the node serves once the start is proven"; else
  not_ok "na: the node serves once the start is proven"; diag "$(curl -s "http://127.0.0.1:$M1/metrics" | grep -E '^shoal_(fence|cache_serving|binlog_state)')"
fi
h0=$(hits na)
got=$(via_to na -N -e "SELECT v FROM s78 WHERE id = 1; SELECT v FROM s78 WHERE id = 1" 2>&1 | tr '\n' ' ')
h1=$(hits na)
is "$got $([ "$((h1 - h0))" -ge 1 ] && echo hit)" "2 2  hit" "na: the new row, from the cache ($((h1 - h0)) hits)"
like "$(run_log na)" "binlog: the start .* is at binlog\.[0-9]+:[0-9]+" "na: the log says where the start was found"

# ---- the held commit rotates the binlog: the follower starts in the next file
M2=$(free_port)
file0=$(u_val "SHOW MASTER STATUS" | cut -f1)
held_case nb "$M2" "SET GLOBAL max_binlog_size = 4096; CREATE TABLE r78 (id INT PRIMARY KEY, s TEXT);
  INSERT INTO r78 VALUES (1, 'a')" "UPDATE r78 SET s = REPEAT('b', 6000) WHERE id = 1" \
  "SELECT LEFT(s, 3) FROM r78 WHERE id = 1" a bbb
file1=$(u_val "SHOW MASTER STATUS" | cut -f1)
u -e "SET GLOBAL max_binlog_size = 1073741824"
rot=$([ "$file0" != "$file1" ] && echo rotated)
is "$rot" rotated "nb: the held commit rotated the binlog ($file0 -> $file1)"

# ---- two domains: domain 0's commit held, domain 1's queued behind it
M3=$(free_port)
held_case nc "$M3" "CREATE TABLE d78 (id INT PRIMARY KEY, v INT); INSERT INTO d78 VALUES (1, 1);
  CREATE TABLE e78 (id INT PRIMARY KEY, v INT); INSERT INTO e78 VALUES (1, 10)" \
  "UPDATE d78 SET v = 2 WHERE id = 1" "SELECT v FROM e78 WHERE id = 1" 10 11 \
  "SET gtid_domain_id = 1; UPDATE e78 SET v = 11 WHERE id = 1"
is "$(via_to nc -N -e "SELECT v FROM d78 WHERE id = 1" 2>&1)" 2 "nc: domain 0's table too"
pos=$(u_val "SELECT @@gtid_binlog_pos")
like "$pos" "(^|,)1-1-" "nc: the server's position has two domains ($pos)"

# ---- an idle server after a restart and a rotation: its last transaction
# is in an earlier file, the stream starts at the head of the newest, which
# the checkpoint event naming it proves: a fresh node serves and caches
stop_mdb "$SP_PID"
if start_server && u -e "FLUSH BINARY LOGS"; then
  ok "the server restarted, its binlog rotated"
else
  bail "restart the server"
fi
M4=$(free_port)
if start_fresh nd "$M4" && wait_until 20 serving "$M4"; then
  ok "nd: a fresh node on the restarted, idle server serves"
else
  not_ok "nd: a fresh node on the restarted, idle server serves"
fi
h0=$(hits nd)
got=$(via_to nd -N -e "SELECT v FROM s78 WHERE id = 1; SELECT v FROM s78 WHERE id = 1" 2>&1 | tr '\n' ' ')
is "$got $(($(hits nd) - h0))" "2 2  1" "nd: a read, then a hit"
like "$(run_log nd)" "binlog: the start .* is at the head of binlog\.[0-9]+" \
  "nd: the start is the head of the newest file"

# ---- an idle server whose last commit is in its current file: one reading
# of the probe proves the start; what the start costs
u -e "UPDATE e78 SET v = 12 WHERE id = 1"
M5=$(free_port)
if start_fresh ne "$M5" && wait_until 20 serving "$M5"; then
  ok "ne: a fresh node on an idle server serves"
else
  not_ok "ne: a fresh node on an idle server serves"
fi
h0=$(hits ne)
got=$(via_to ne -N -e "SELECT v FROM e78 WHERE id = 1; SELECT v FROM e78 WHERE id = 1" 2>&1 | tr '\n' ' ')
is "$got $(($(hits ne) - h0))" "12 12  1" "ne: a read, then a hit"
m=$(curl -s "http://127.0.0.1:$M5/metrics")
is "$(grep '^shoal_fence_start_pending ' <<<"$m")" "shoal_fence_start_pending 0" "ne: /metrics: shoal_fence_start_pending 0"
diag "the start's cost on an idle server: $(grep -E '^shoal_fence_probes(_unmatched)?_total|^shoal_fence_probe_seconds_total' <<<"$m" | tr '\n' ' ')"
diag "$(run_log ne | grep -E 'binlog: (following|the start)|fence: the binlog stream' | cut -c12-140)"
done_testing
