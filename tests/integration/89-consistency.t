#!/usr/bin/env bash
# 89-consistency: consistent auto-cache (docs/caching.md, "Consistency")
# against a private MariaDB primary with its binlog on and a GTID replica of
# it (log_slave_updates), with nodes in binlog mode (one on the primary, a
# second one there, one on the replica) and one in writes mode:
#   - own write, another session's write, a direct write on the upstream, a
#     write through another node, a write on the primary seen by the node on
#     the replica; DDL (DROP + CREATE); temporary tables both ways; a view
#     over NOW(6) (not cached, the reason names the view); a view over a
#     written table; a trigger; a foreign key with ON DELETE CASCADE; a
#     procedure; a transaction (others do not see its uncommitted writes, its
#     own reads are fresh, its COMMIT is seen at once);
#   - the binlog stream killed and resumed; the stream kept down (its login
#     locked): nothing served, a write made meanwhile seen after the resume;
#     the position purged from the binlogs meanwhile: the cache is flushed;
#   - fills racing writes, looped: never a pre-write answer after the write;
#   - start-up: --invalidation binlog against a server without binlog, or
#     with a login lacking REPLICATION SLAVE, exits 2 saying why; auto falls
#     back to writes and says why;
#   - observability: /metrics, SHOW SHOAL STATUS, stats_shoal_global.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "consistency: needs a node (SHOAL_FAKE_DIRECT=1)"; fi

plan 94
work="$BUILD_TEST/t89"
rm -rf "$work"
mkdir -p "$work"
PRI_PORT=$(free_port)
REP_PORT=$(free_port)
PRI_PID="" REP_PID=""
stop_both() { stop_mdb "$PRI_PID"; stop_mdb "$REP_PID"; }   # (the pids as they are at exit)
on_exit stop_both

start_mdb() { # dir port server-id
  MARIADB_EXTRA_ARGS="--log-bin=binlog --binlog-format=ROW --server-id=$3 --log-slave-updates=ON" \
    "$SRCDIR/scripts/start-mariadb" "$1" "$2" >"$1.start.out" 2>&1 </dev/null || return 1
  cat "$1/pid"
}
pri() { mariadb --no-defaults -h127.0.0.1 -P"$PRI_PORT" -uapp -ppw "$@"; }
rep() { mariadb --no-defaults -h127.0.0.1 -P"$REP_PORT" -uapp -ppw "$@"; }

if PRI_PID=$(start_mdb "$work/pri" "$PRI_PORT" 1) && REP_PID=$(start_mdb "$work/rep" "$REP_PORT" 2); then
  ok "a MariaDB primary (port $PRI_PORT) and replica (port $REP_PORT) with binlogs"
else
  diag_file "$work/pri/error.log"
  bail "a MariaDB primary (port $PRI_PORT) and replica (port $REP_PORT) with binlogs"
fi
pos=$(pri -N -e "SELECT @@gtid_binlog_pos")
rep -e "SET GLOBAL gtid_slave_pos = '$pos';
  CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$PRI_PORT, MASTER_USER='app',
    MASTER_PASSWORD='pw', MASTER_USE_GTID=slave_pos;
  START SLAVE;"
pri -e "CREATE USER 'shoalbl'@'%' IDENTIFIED BY 'blpw'; GRANT REPLICATION SLAVE, SELECT ON *.* TO 'shoalbl'@'%';
  CREATE USER 'norepl'@'%' IDENTIFIED BY 'nopw'; GRANT SELECT ON *.* TO 'norepl'@'%';"
sleep 1
like "$(rep -e 'SHOW SLAVE STATUS\G')" "Slave_SQL_Running: Yes" "the replica replicates from the primary by GTID"

URLP="mysql://app:pw@127.0.0.1:$PRI_PORT/shoaltest"
URLR="mysql://app:pw@127.0.0.1:$REP_PORT/shoaltest"
ADMIN_P=$(free_port)
METRICS_NP=$(free_port)
start_node() { # name args...
  local n=$1; shift
  if shoal_start "$n" --auto-cache --data-dir "$work/$n" "$@"; then ok "node $n starts"; else not_ok "node $n starts"; fi
}
mkdir -p "$work/np" "$work/np2" "$work/nr" "$work/nw" "$work/bad"
start_node np --upstream-db-url "$URLP" --binlog-user shoalbl --binlog-password blpw \
  --admin-address "127.0.0.1:$ADMIN_P" --metrics-address "127.0.0.1:$METRICS_NP"
start_node np2 --upstream-db-url "$URLP"
start_node nr --upstream-db-url "$URLR"
start_node nw --upstream-db-url "$URLP" --invalidation writes
like "$(cat "$np_LOG")" "invalidation: binlog \(auto\)" "auto mode picks binlog on a server with a binlog (logged)"
like "$(cat "$nw_LOG")" "invalidation: writes \(set by invalidation\)" "writes mode as set (logged)"

# start-up errors
"$SHOAL_BIN" --upstream-db-url "$UPSTREAM_URL_DEFAULT" --invalidation binlog --listen-address "127.0.0.1:$(free_port)" \
  --metrics-address 127.0.0.1:0 --admin-address 127.0.0.1:0 --data-dir "$work/bad" >"$work/bad1.log" 2>&1 </dev/null
is "$?" 2 "--invalidation binlog against a server without binlog: exit status 2"
like "$(cat "$work/bad1.log")" "invalidation = binlog is not possible: the upstream's binlog is off" "  ... saying the binlog is off"
"$SHOAL_BIN" --upstream-db-url "$URLP" --invalidation binlog --binlog-user norepl --binlog-password nopw \
  --listen-address "127.0.0.1:$(free_port)" --metrics-address 127.0.0.1:0 --admin-address 127.0.0.1:0 \
  --data-dir "$work/bad" >"$work/bad2.log" 2>&1 </dev/null
is "$?" 2 "--invalidation binlog with a login lacking REPLICATION SLAVE: exit status 2"
like "$(cat "$work/bad2.log")" "needs REPLICATION SLAVE" "  ... naming the grant"
if shoal_start auto --auto-cache --data-dir "$work/bad"; then
  like "$(cat "$auto_LOG")" "invalidation: writes \(auto\): binlog invalidation is not possible: the upstream's binlog is off" \
    "auto against a server without binlog: writes mode, with the reason"
  shoal_stop auto
else
  not_ok "a node in auto mode on the suite's server starts"
fi

PRI_PORT=$PRI_PORT REP_PORT=$REP_PORT NP=$np_PORT NP2=$np2_PORT NR=$nr_PORT NW=$nw_PORT \
  ADMIN_P=$ADMIN_P METRICS_NP=$METRICS_NP \
  "$PY" "$TESTLIB/89-consistency.py"
[ $? -le 1 ] || not_ok "the python part ran to its end"
done_testing
