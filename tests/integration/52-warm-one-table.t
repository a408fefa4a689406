#!/usr/bin/env bash
# 52-warm-one-table: issue 40's warm restart on one table. 59-warm-restart's
# scenario (a node in binlog mode with --cache-snapshot, 2,000 keys cached,
# SIGTERM, 20 rows changed directly on the upstream while it is down, started
# again) with all 2,000 keys in ONE table: the binlog replay matches each
# changed row against the entries' constraints, so only the changed rows'
# entries go (and an entry filled before the catalog reader had read the
# table's columns, which keeps no constraint). Reading all 2,000 keys gives 0
# answers that differ from the upstream's, and the upstream runs at most 40
# of the keys' SELECTs (counted in its general log), not 2,000.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "warm restart: needs a node (SHOAL_FAKE_DIRECT=1)"; fi

plan 12
work="$BUILD_TEST/t52"
rm -rf "$work"
mkdir -p "$work"
binlog_mdb "$work/bl"
bl() { mariadb --no-defaults -h127.0.0.1 -P"$BL_PORT" -uapp -ppw shoaltest "$@"; }
if bl -e "CREATE TABLE one (id INT PRIMARY KEY, v VARCHAR(600));
  INSERT INTO one SELECT seq, CONCAT('row-', seq, '-', REPEAT('x', 400)) FROM seq_1_to_2000"; then
  ok "one table of 2,000 rows"
else
  bail "the table"
fi
bl -e "SET GLOBAL log_output = 'TABLE'; SET GLOBAL general_log = 1"
snap="$work/cache.snap"
MPORT=$(free_port)

start_node() { # name
  mkdir -p "$work/$1"
  shoal_start "$1" --upstream-db-url "mysql://app:pw@127.0.0.1:$BL_PORT/shoaltest" --auto-cache \
    --invalidation binlog --data-dir "$work/$1" --drain-handoff-ms 0 \
    --metrics-address "127.0.0.1:$MPORT" --cache-snapshot "$snap" --cache-ttl-ms 600000
}
metric() { curl -s "http://127.0.0.1:$MPORT/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
# wait_state FAMILY STATE: FAMILY{state="STATE"} reaches 1 within 60 s
wait_state() {
  local i
  for i in $(seq 1 600); do
    [ "$(metric "$1{state=\"$2\"}")" = 1 ] && return 0
    sleep 0.1
  done
  diag "$1: $(curl -s "http://127.0.0.1:$MPORT/metrics" | grep "^$1{.* 1$")"
  return 1
}
upstream_selects() {
  bl -N -e "SELECT COUNT(*) FROM mysql.general_log WHERE command_type = 'Query' AND argument LIKE 'SELECT v FROM one%'"
}
reset_log() { bl -e "SET GLOBAL general_log = 0; TRUNCATE mysql.general_log; SET GLOBAL general_log = 1"; }
# read_all PORT: every key through the node and directly; prints how many
# answers differ
read_all() {
  "$PY" - "$1" "$BL_PORT" <<'EOF'
import sys, pymysql
node, direct = int(sys.argv[1]), int(sys.argv[2])
def conn(port):
    return pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw",
                           database="shoaltest", autocommit=True)
n, d = conn(node).cursor(), conn(direct).cursor()
differ = 0
for i in range(1, 2001):
    q = "SELECT v FROM one WHERE id = %d" % i
    n.execute(q)
    got = n.fetchall()
    d.execute(q.replace("SELECT v", "SELECT /* direct */ v"))
    differ += got != d.fetchall()
print(differ)
EOF
}

# ---- cold: the 2,000 keys filled, then SIGTERM writes the snapshot
if start_node n1; then ok "a node in binlog mode starts cold"; else bail "the node starts"; fi
is "$(read_all "$n1_PORT")" 0 "2,000 keys read through it: none differs"
is "$(read_all "$n1_PORT")" 0 "read again (hits): none differs"
shoal_stop n1
like "$(cat "$n1_LOG")" "cache snapshot .*cache.snap written at the stop: 200[01] entries" \
  "SIGTERM: the 2,000 entries written"

# ---- 20 rows of the one table changed while it is down
bl -e "UPDATE one SET v = CONCAT(v, '-changed') WHERE id % 100 = 7"
reset_log
if start_node n2; then ok "it starts again with the snapshot"; else bail "the restart"; fi
check "the replay is done: the state is warm" wait_state shoal_warm_state warm
check "the refill is done" wait_state shoal_warm_refill_state "done"
kept=$(metric 'shoal_warm_entries{kind="kept"}')
if [ "${kept:-0}" -ge 1960 ]; then
  ok "$kept entries kept: the replay invalidated the changed rows' entries, not the table's"
else
  not_ok "the replay kept the unchanged rows' entries"; diag "kept: ${kept:-none}"
fi
is "$(read_all "$n2_PORT")" 0 "all 2,000 keys read: 0 answers differ from the upstream's"
n=$(upstream_selects)
if [ "${n:-9999}" -le 40 ]; then
  ok "the upstream ran $n of the keys' SELECTs (at most 40), not 2,000"
else
  not_ok "the upstream ran at most 40 of the keys' SELECTs"; diag "it ran ${n:-?}"
fi
shoal_stop n2

done_testing
