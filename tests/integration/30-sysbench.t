#!/usr/bin/env bash
# 30-sysbench: sysbench oltp_read_write through the node, prepared statements
# (--db-ps-mode=auto) and plain queries (--db-ps-mode=disable), 16 threads.
# Passes when sysbench exits 0, ran queries, had no reconnects, and every
# "ignored error" is accounted for by an InnoDB deadlock on the server (with
# 16 threads on 2 x 10000 rows MariaDB itself picks a deadlock victim now and
# then, straight or through the node: sysbench counts those as ignored errors).
# The same run straight to MariaDB gives the reference qps.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

secs=10
[ "$SHOAL_QUICK" = 1 ] && secs=3
work="$BUILD_TEST/sysbench"
mkdir -p "$work"

sb() { # port mode cmd [extra...]
  local port=$1; shift
  sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" \
    --mysql-user=app --mysql-password=pw --mysql-db=sbtest --tables=2 --table-size=10000 "$@"
}
deadlocks() { mdb -N -e "SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'" | awk '{print $2}'; }
on_exit "sb $MDB_PORT cleanup"

# prepare, node starts, 4 runs, 2 checksum checks, node alive, cleanup
plan 10
sb "$MDB_PORT" cleanup >/dev/null 2>&1
if sb "$MDB_PORT" prepare >"$work/prepare.log" 2>&1; then
  ok "sysbench prepare (2 tables x 10000 rows) straight to MariaDB"
else
  diag_file "$work/prepare.log"; bail "sysbench prepare"
fi

if shoal_start node; then
  ok "node starts (port $node_PORT)"
else
  bail "node starts (port $node_PORT)"
fi

field() { # file label -> first number after "label:"
  sed -nE "s/^ *$2: *([0-9]+).*/\1/p" "$1" | head -n1
}
qps_of() { sed -nE 's/^ *queries: *[0-9]+ *\(([0-9.]+) per sec\.\).*/\1/p' "$1" | head -n1; }

run_one() { # label port ps-mode
  local label=$1 port=$2 mode=$3 log="$work/run-$1.log" rc d0 d1 q ign rec
  d0=$(deadlocks)
  sb "$port" --threads=16 --time="$secs" --db-ps-mode="$mode" --report-interval=0 run >"$log" 2>&1
  rc=$?
  d1=$(deadlocks)
  q=$(field "$log" queries); ign=$(field "$log" "ignored errors"); rec=$(field "$log" reconnects)
  local why=()
  [ $rc -eq 0 ] || why+=("sysbench exited $rc")
  [ -n "$q" ] && [ "$q" -gt 0 ] || why+=("no queries ran")
  [ "${rec:-x}" = 0 ] || why+=("reconnects: ${rec:-?}")
  [ -n "$ign" ] && [ "$ign" -le $((d1 - d0)) ] || why+=("ignored errors: ${ign:-?}, InnoDB deadlocks meanwhile: $((d1 - d0))")
  if [ ${#why[@]} -eq 0 ]; then
    ok "sysbench $label ($mode, 16 threads, ${secs}s): $q queries, 0 reconnects, ignored errors $ign (InnoDB deadlocks meanwhile $((d1 - d0)))"
  else
    not_ok "sysbench $label ($mode, 16 threads, ${secs}s): ${why[*]}"
    grep -iE 'FATAL|error|warn' "$log" | sort | uniq -c | sort -rn | head -n 15 | sed 's/^/#   /'
    diag_file "$log" 30
  fi
  diag "qps $label ($mode): $(qps_of "$log")"
  eval "QPS_$(tr -c 'a-zA-Z0-9_\n' _ <<<"$label")_$mode=\$(qps_of \"\$log\")"
}

run_one via "$node_PORT" auto
run_one via "$node_PORT" disable
run_one direct "$MDB_PORT" auto
run_one direct "$MDB_PORT" disable
diag "qps summary: ps-mode=auto: direct ${QPS_direct_auto:-?}, via node ${QPS_via_auto:-?}; ps-mode=disable: direct ${QPS_direct_disable:-?}, via node ${QPS_via_disable:-?}"

# The tables are intact and the same seen both ways after the load.
sum_d=$(mdb -N -e 'CHECKSUM TABLE sbtest.sbtest1, sbtest.sbtest2' 2>&1)
sum_v=$(via -N -e 'CHECKSUM TABLE sbtest.sbtest1, sbtest.sbtest2' 2>&1)
like "$sum_d" "^sbtest\.sbtest1	[0-9]+" "CHECKSUM TABLE works straight to MariaDB"
is "$sum_v" "$sum_d" "table checksums equal through the node after the runs"

check "node still running" shoal_alive node
if sb "$MDB_PORT" cleanup >"$work/cleanup.log" 2>&1; then ok "sysbench cleanup"; else not_ok "sysbench cleanup"; diag_file "$work/cleanup.log"; fi
done_testing
