#!/usr/bin/env bash
# 49-mysql-proxysql: issue 41, the seed's story on MySQL, as 94-proxysql*
# tell it on MariaDB: a MySQL source and a MySQL replica (GTIDs on, ROW
# binlog, caching_sha2_password logins only), two ProxySQL instances in a
# cluster (the real one, $PROXYSQL_BIN; skipped without it), two nodes in
# binlog mode following the replica. ProxySQL sends the writes to the
# source (hostgroup 10) and a routed digest to hostgroup 30: the two nodes
# at weight 1000, the replica at 1 (the fallback). Checked, with client
# threads through ProxySQL (lib/49-mysql-proxysql.py):
#   - logins through ProxySQL to MySQL, the monitor's checks on the nodes;
#   - routing by digest: the nodes answer it, the fallback almost never;
#   - the cluster carries the rule and the servers to the second instance;
#   - writes through ProxySQL reach the routed reads through the replica's
#     binlog, and are never undone;
#   - SIGTERM of a node under load, with proxysql_admin on both instances:
#     0 client errors, exit 0, the node back in rotation warm;
#   - shoal-ha register and watch --auto-route route a costly aggregate from
#     no rule; the nodes answer it, and a write through ProxySQL reaches it;
#   - both nodes stopped under load: the replica answers everything.
# Run on MySQL 9.7 (the chroot: MySQL 9 has caching_sha2_password only) and,
# where the peers' build is beside the checkout, on MySQL 8.0.39, the
# seed's line.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/mysql.sh
. "$SRCDIR/scripts/lib/mysql.sh"

fake_mode && skip_all "needs real nodes (fake mode)"
need_proxysql

work="$BUILD_TEST/t49"
rm -rf "$work"
mkdir -p "$work"
root=${SHOAL_MYSQL97_ROOT:-$BUILD_TEST/mysql97}
PER_SERVER=22

mysql_servers_here "$root" "$work"
servers=("${MYSQL_SERVERS[@]}") why=("${MYSQL_MISSING[@]}")
[ ${#servers[@]} -gt 0 ] || skip_all "no MySQL can run here: ${why[*]}"
plan $((PER_SERVER * ${#servers[@]}))
for w in "${why[@]}"; do diag "not tested: $w"; done

# start_pair VER: the source and the replica of version VER, on SPORT and
# RPORT; their sockets in SSOCK and RSOCK. 0 when both answer.
start_pair() {
  local ver=$1 spid rpid
  SPORT=$(free_port)
  RPORT=$(free_port)
  if [ "$ver" = 97 ]; then
    mysql97_drop "$root" t49s
    mysql97_drop "$root" t49r
    spid=$(mysql97_start "$root" t49s "$SPORT" 2>"$work/start-s$ver.err")
    rpid=$(mysql97_start "$root" t49r "$RPORT" --server-id=2 2>"$work/start-r$ver.err")
    SSOCK=$(mysql97_socket "$root" t49s)
    RSOCK=$(mysql97_socket "$root" t49r)
    on_exit "stop_mdb $spid; stop_mdb $rpid; mysql97_drop '$root' t49s; mysql97_drop '$root' t49r"
  else
    spid=$(mysql80_start "$work/m80s" "$SPORT" 2>"$work/start-s$ver.err")
    rpid=$(mysql80_start "$work/m80r" "$RPORT" --server-id=2 2>"$work/start-r$ver.err")
    SSOCK="$work/m80s/sock"
    RSOCK="$work/m80r/sock"
    on_exit "stop_mdb $spid; stop_mdb $rpid"
  fi
  PAIR_PIDS="$spid $rpid"
  is_pid "$spid" && is_pid "$rpid"
}

# replicate: the users and the table on the source, the replica following
# it by GTID, read_only as a replica is run; 0 once kv is on the replica.
replicate() {
  local i
  mysql_create_app "$SSOCK" 2>>"$work/setup.err" || return 1
  mariadb --no-defaults --socket="$SSOCK" -uroot shoaltest <<'SQL' 2>>"$work/setup.err" || return 1
CREATE USER IF NOT EXISTS 'monitor'@'%' IDENTIFIED BY 'monitor';
GRANT REPLICATION CLIENT ON *.* TO 'monitor'@'%';
CREATE TABLE kv (id INT PRIMARY KEY, v VARCHAR(20));
SET SESSION cte_max_recursion_depth = 100000;
INSERT INTO kv WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 250)
  SELECT n, CONCAT('v', n) FROM s;
CREATE TABLE agg (id INT PRIMARY KEY, g INT, v INT, w VARCHAR(20), KEY (g));
INSERT INTO agg WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 60000)
  SELECT n, n % 40, n * 7 % 1000, CONCAT('w', n % 97) FROM s;
SQL
  mariadb --no-defaults --socket="$RSOCK" -uroot -e "
    CHANGE REPLICATION SOURCE TO SOURCE_HOST = '127.0.0.1', SOURCE_PORT = $SPORT, SOURCE_USER = 'app',
      SOURCE_PASSWORD = 'pw', SOURCE_AUTO_POSITION = 1, GET_SOURCE_PUBLIC_KEY = 1;
    START REPLICA; SET GLOBAL read_only = ON" 2>>"$work/setup.err" || return 1
  for i in $(seq 1 600); do
    [ "$(mariadb --no-defaults --socket="$RSOCK" -uroot -N -e "SELECT COUNT(*) FROM shoaltest.agg" 2>/dev/null)" = 60000 ] &&
      break
    sleep 0.1
  done
  [ "$i" -lt 600 ] || return 1
  # caching_sha2_password: one login over TLS fills each server's cache of
  # the password, so that logins without TLS (PyMySQL, ProxySQL's monitor)
  # take the fast path, as they do once any client has logged in
  for p in $SPORT $RPORT; do
    mariadb --no-defaults --ssl -h127.0.0.1 -P"$p" -uapp -ppw -e "SELECT 1" >/dev/null 2>>"$work/setup.err" || return 1
    mariadb --no-defaults --ssl -h127.0.0.1 -P"$p" -umonitor -pmonitor -e "SELECT 1" >/dev/null 2>>"$work/setup.err" ||
      return 1
  done
}

for ver in "${servers[@]}"; do
  label="MySQL $([ "$ver" = 97 ] && echo 9.7 || echo 8.0)"
  if ! start_pair "$ver" || ! replicate; then
    diag_file "$work/start-s$ver.err"
    diag_file "$work/start-r$ver.err"
    diag_file "$work/setup.err"
    not_ok "$label: source and replica replicating"
    skip_n $((PER_SERVER - 1)) "$label" "the servers did not start"
    continue
  fi
  ok "$label: source (port $SPORT) and replica (port $RPORT) replicating, the replica read_only"
  LABEL="$label" SRC_PORT=$SPORT REP_PORT=$RPORT SRC_SOCK=$SSOCK WORK49="$work/py$ver" \
    "$PY" "$TESTLIB/49-mysql-proxysql.py" || not_ok "$label: 49-mysql-proxysql.py crashed (see above)"
  for p in $PAIR_PIDS; do stop_mdb "$p"; done
done
done_testing
