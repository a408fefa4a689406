#!/usr/bin/env bash
# 47-mysql-binlog: issue 41, binlog invalidation on a MySQL upstream: MySQL
# 9.7 (the chroot of scripts/lib/mysql.sh) and, where the peers' build is
# beside the checkout, MySQL 8.0.39, each with GTIDs on and a ROW binlog.
# Against each, a node in binlog mode with auto-cache follows the binlog
# with its own reader (COM_BINLOG_DUMP_GTID from the GTID set applied):
#   - a direct UPDATE reaches the node's answer, and a key of the same
#     table it did not change stays a hit (row precision);
#   - a DDL (ALTER TABLE ... ADD COLUMN) reaches a SELECT *;
#   - a table with an INVISIBLE column and VIRTUAL and STORED generated
#     columns: an UPDATE invalidates the keys its row matches, not the others;
#   - binlog_transaction_compression = ON: a transaction's events come in a
#     zstd TRANSACTION_PAYLOAD, and they invalidate as well;
#   - (9.7) a transaction with a tagged GTID (uuid:tag:N) invalidates, and
#     the fence proves it by its tagged GTID;
#   - the commit race (78-fence-race's python part): 6 readers through the
#     node, a direct commit each round, every core busy, with compressed
#     transactions: 0 answers still stale after a commit (the fence proves a
#     transaction visible by its GTID in gtid_executed);
#   - 4,000 prepare-execute-close point selects, all cached: at most 0.01
#     upstream PREPARE per query (the node answers them, binlog mode);
#   - a REVOKE made directly reaches another login's cached reads (the
#     privilege change in the binlog);
#   - MySQL's roles: a default role, a role granted but not active, SET
#     ROLE and SET ROLE NONE give the server's answers, and a default
#     role's reads are hits;
#   - a warm restart: 2,000 keys of one table, SIGTERM, 20 rows changed while
#     down, started again from the snapshot (its position a MySQL GTID set):
#     0 answers differ, the upstream runs at most 40 of the keys' SELECTs.
# And a node following a MySQL 9.7 replica while the writes go to its source.
# MYSQL_FENCE_ROUNDS (default 100) sets the race's rounds; by hand, 3000.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/mysql.sh
. "$SRCDIR/scripts/lib/mysql.sh"

fake_mode && skip_all "the checks are of the node's binlog follower (SHOAL_FAKE_DIRECT=1 has no node)"

work="$BUILD_TEST/t47"
rm -rf "$work"
mkdir -p "$work"
root=${SHOAL_MYSQL97_ROOT:-$BUILD_TEST/mysql97}
ROUNDS=${MYSQL_FENCE_ROUNDS:-100}
MAX_S=$((ROUNDS / 4 + 60))
PER_SERVER=36

mysql_servers_here "$root" "$work"
servers=("${MYSQL_SERVERS[@]}") why=("${MYSQL_MISSING[@]}")
[ ${#servers[@]} -gt 0 ] || skip_all "no MySQL can run here: ${why[*]}"
REPLICA_CHECKS=4
n_replica=0
[[ " ${servers[*]} " == *" 97 "* ]] && n_replica=$REPLICA_CHECKS
plan $((PER_SERVER * ${#servers[@]} + n_replica))
for w in "${why[@]}"; do diag "not tested: $w"; done

BUSY=()
stop_busy() {
  local p
  for p in "${BUSY[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${BUSY[@]}"; do wait "$p" 2>/dev/null; done
  BUSY=()
}
on_exit 'stop_busy'
busy_all() { # seconds
  local cpu
  for cpu in $(seq 0 $(($(nproc) - 1))); do
    taskset -c "$cpu" timeout "$1" sh -c 'while :; do :; done' &
    BUSY+=("$!")
  done
}

# direct SQL over TCP, as the app user (TLS: caching_sha2_password's first
# login of a user needs it, or the RSA exchange)
direct() { timeout 60 mariadb --no-defaults -h127.0.0.1 -P"$PORT" -uapp -ppw --ssl shoaltest "$@"; }
node() { timeout 60 mariadb --no-defaults -h127.0.0.1 -P"$NP" -uapp -ppw shoaltest "$@"; }
hits() { node -N -e "SHOW SHOAL STATUS" | awk -F'\t' '$1 == "Cache Hits" {print $2}'; }
# poll_node SQL WANT: the node's answer becomes WANT within 20 s (a guard
# against a hang, not a margin: the answer is right or the check fails)
poll_node() {
  local i got
  for i in $(seq 1 200); do
    got=$(node -N -e "$1" 2>&1 | tr '\n' ' ')
    [ "$got" = "$2" ] && return 0
    sleep 0.1
  done
  diag "the node gave: $got (want $2)"
  return 1
}
# poll_hit SQL: a read of SQL through the node is a hit within 20 s
poll_hit() {
  local i h0 h1
  for i in $(seq 1 200); do
    h0=$(hits)
    node -N -e "$1" >/dev/null
    h1=$(hits)
    [ "$h1" -gt "$h0" ] && return 0
    sleep 0.1
  done
  return 1
}
metric() { curl -s "http://127.0.0.1:$MPORT/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
wait_state() { # family state
  local i
  for i in $(seq 1 600); do
    [ "$(metric "$1{state=\"$2\"}")" = 1 ] && return 0
    sleep 0.1
  done
  diag "$1: $(curl -s "http://127.0.0.1:$MPORT/metrics" | grep "^$1{.* 1$")"
  return 1
}
start_node() { # name
  mkdir -p "$work/$1"
  shoal_start "$1" --upstream-db-url "mysql://app:pw@127.0.0.1:$PORT/shoaltest" --auto-cache \
    --invalidation binlog --data-dir "$work/$1" --drain-handoff-ms 0 \
    --metrics-address "127.0.0.1:$MPORT" --cache-snapshot "$work/$LABEL_ID.snap" --cache-ttl-ms 600000 \
    --allowed-users lim47:limpw,ro47:ropw,rn47:rnpw
}
# read_all NODE_PORT: the 2,000 keys through the node and directly; prints
# how many answers differ
read_all() {
  "$PY" - "$1" "$PORT" <<'EOF'
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
# prepare_loop NODE_PORT: 100 keys cached through prepared statements,
# then 4,000 prepare-execute-close point selects; prints "upstream N errors
# E": the server's COM_STMT_PREPARE count over the 4,000, and the answers
# that were not the key's row
prepare_loop() {
  PYTHONPATH="$TESTLIB" "$PY" - "$1" "$PORT" <<'EOF'
import sys
import rawmysql as r
import pymysql
node, direct = int(sys.argv[1]), int(sys.argv[2])
d = pymysql.connect(host="127.0.0.1", port=direct, user="app", password="pw", database="shoaltest",
                    autocommit=True).cursor()
d.execute("CREATE TABLE pa47 (id INT PRIMARY KEY, v VARCHAR(20))")
d.execute("INSERT INTO pa47 WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 100) "
          "SELECT n, CONCAT('row ', n) FROM s")
def prepares():
    d.execute("SHOW GLOBAL STATUS LIKE 'Com_stmt_prepare'")
    return int(d.fetchone()[1])
c = r.Conn("127.0.0.1", node, timeout=30)
c.login("app", "pw", db="shoaltest", caps=r.DEFAULT_CAPS)
for i in range(1, 101):
    sid, _, _, _ = c.prepare("SELECT v FROM pa47 WHERE id = ?")
    c.execute(sid, (i,))
    c.close_stmt(sid)
before, errors = prepares(), 0
for i in range(4000):
    sid, _, _, _ = c.prepare("SELECT v FROM pa47 WHERE id = ?")
    if sid is None:
        errors += 1
        continue
    rows = c.execute(sid, (1 + i % 100,))
    c.close_stmt(sid)
    if not any(p.endswith(("row %d" % (1 + i % 100)).encode()) for _, p in rows):
        errors += 1
print("upstream %d errors %d" % (prepares() - before, errors))
EOF
}
lim_node() { timeout 30 mariadb --no-defaults -h127.0.0.1 -P"$NP" -ulim47 -plimpw shoaltest -N -e "$1" 2>&1; }
# poll_lim_denied SQL: the node refuses lim47 SQL with 1142 within 20 s
poll_lim_denied() {
  local i got
  for i in $(seq 1 200); do
    got=$(lim_node "$1")
    [[ $got == *"ERROR 1142"* ]] && return 0
    sleep 0.1
  done
  diag "lim47 got: $got"
  return 1
}
upstream_selects() {
  direct -N -e "SELECT COUNT(*) FROM mysql.general_log WHERE command_type = 'Query' AND
    CONVERT(argument USING utf8mb4) LIKE 'SELECT v FROM one%'"
}

test_server() { # 97 | 80
  local ver=$1 label pid sock out a b kept n
  if [ "$ver" = 97 ]; then label="MySQL 9.7"; else label="MySQL 8.0"; fi
  LABEL_ID=m$ver
  PORT=$(free_port)
  MPORT=$(free_port)
  if [ "$ver" = 97 ]; then
    mysql97_drop "$root" t47
    pid=$(mysql97_start "$root" t47 "$PORT" 2>"$work/start$ver.err")
    sock=$(mysql97_socket "$root" t47)
  else
    pid=$(mysql80_start "$work/mysql80" "$PORT" 2>"$work/start$ver.err")
    sock="$work/mysql80/sock"
  fi
  if ! is_pid "$pid"; then
    diag_file "$work/start$ver.err"
    not_ok "$label starts (port $PORT)"
    skip_n $((PER_SERVER - 1)) "$label" "the server did not start"
    return
  fi
  on_exit "stop_mdb $pid"
  [ "$ver" = 97 ] && on_exit "cp '$root/var/lib/shoal-t47/error.log' '$work/mysql97-error.log'; mysql97_drop '$root' t47"
  if mysql_create_app "$sock" 2>"$work/app$ver.err" && direct -e "
      CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), k INT);
      INSERT INTO t VALUES (1, 'one', 1), (2, 'two', 1), (3, 'three', 2);
      SET SESSION cte_max_recursion_depth = 3000;
      CREATE TABLE one (id INT PRIMARY KEY, v VARCHAR(600));
      INSERT INTO one WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 2000)
        SELECT n, CONCAT('row-', n, '-', REPEAT('x', 400)) FROM s" >"$work/schema$ver.log" 2>&1; then
    ok "$label starts (port $PORT): the app user, a table, one table of 2,000 rows"
  else
    diag_file "$work/app$ver.err"; diag_file "$work/schema$ver.log"
    not_ok "$label: the app user and the test's tables"
  fi

  if start_node "b$ver"; then
    ok "$label: a node in binlog mode starts"
  else
    not_ok "$label: a node in binlog mode starts"
    skip_n $((PER_SERVER - 2)) "$label" "no node"
    return
  fi
  local np_var="b${ver}_PORT" log_var="b${ver}_LOG"
  NP=${!np_var}
  like "$(cat "${!log_var}")" "binlog: following MySQL 127.0.0.1:$PORT from GTID set '[0-9a-f-]{36}:1-[0-9]+'" \
    "$label: it follows the binlog from the server's GTID set"

  # ---- a direct write; a key it did not change stays a hit
  node -N -e "SELECT v FROM t WHERE id = 1; SELECT v FROM t WHERE id = 2" >/dev/null
  poll_node "SELECT v FROM t WHERE id = 2" "two " >/dev/null
  direct -e "UPDATE t SET v = 'uno' WHERE id = 1"
  check "$label: a direct UPDATE reaches the node's answer" poll_node "SELECT v FROM t WHERE id = 1" "uno "
  a=$(hits)
  out=$(node -N -e "SELECT v FROM t WHERE id = 2")
  b=$(hits)
  is "$out $((b - a))" "two 1" "$label: the key it did not change is still a hit (row precision)"

  # ---- a DDL
  direct -e "ALTER TABLE t ADD COLUMN w INT DEFAULT 7"
  check "$label: an ALTER TABLE reaches SELECT *" poll_node "SELECT * FROM t WHERE id = 3" "3	three	2	7 "

  # ---- MySQL's own column kinds: an INVISIBLE column before the key's
  # column, a VIRTUAL and a STORED generated column (row images carry them
  # by position; the catalog must count them the same way)
  direct -e "CREATE TABLE g (id INT PRIMARY KEY, hid INT INVISIBLE DEFAULT 5, k INT,
      vk INT AS (k * 10) VIRTUAL, sk INT AS (k + 1) STORED);
    INSERT INTO g (id, k) VALUES (1, 1), (2, 2), (3, 3)"
  node -N -e "SELECT id FROM g WHERE k = 1; SELECT id FROM g WHERE k = 2; SELECT id FROM g WHERE vk = 30;
    SELECT id FROM g WHERE sk = 3" >/dev/null
  poll_hit "SELECT id FROM g WHERE k = 2" >/dev/null
  direct -e "UPDATE g SET k = 7 WHERE id = 1"
  check "$label: an UPDATE of a table with INVISIBLE and generated columns reaches the node" \
    poll_node "SELECT id FROM g WHERE k = 1" ""
  check "$label: ... a key on a VIRTUAL generated column stays right" poll_node "SELECT id FROM g WHERE vk = 70" "1 "
  a=$(hits)
  out=$(node -N -e "SELECT id FROM g WHERE k = 2; SELECT id FROM g WHERE sk = 3" | tr '\n' ' ')
  b=$(hits)
  is "$out $((b - a))" "2 2  2" "$label: ... and the keys the row did not match stay hits (k = 2, STORED sk = 3)"

  # ---- compressed transactions
  direct -e "SET GLOBAL binlog_transaction_compression = ON"
  direct -e "BEGIN; UPDATE t SET v = 'dos' WHERE id = 2; INSERT INTO t VALUES (4, 'four', 2, 0); COMMIT"
  check "$label: a compressed transaction's UPDATE reaches the node" poll_node "SELECT v FROM t WHERE id = 2" "dos "
  check "$label: ... and its INSERT" poll_node "SELECT COUNT(*) FROM t WHERE k = 2" "2 "
  n=$(direct -N -e "SHOW BINLOG EVENTS" 2>/dev/null | grep -c "Transaction_payload")
  if [ "${n:-0}" -ge 1 ]; then
    ok "$label: the server wrote it as a transaction payload ($n in the first binlog)"
  else
    not_ok "$label: the server wrote a transaction payload"
  fi

  # ---- a tagged GTID (MySQL 8.3 and later), as root (TRANSACTION_GTID_TAG)
  if [ "$ver" = 97 ]; then
    mariadb --no-defaults --socket="$sock" -uroot shoaltest -e "SET GTID_NEXT = 'AUTOMATIC:t47';
      UPDATE t SET v = 'tres' WHERE id = 3; SET GTID_NEXT = 'AUTOMATIC'" 2>&1
    check "$label: a transaction with a tagged GTID reaches the node" poll_node "SELECT v FROM t WHERE id = 3" "tres "
    check "$label: ... and the fence proves it (the key's next fill is stored: a hit)" \
      poll_hit "SELECT v FROM t WHERE id = 3"
  else
    skip_n 2 "$label: a tagged GTID" "tags came in MySQL 8.3"
  fi

  # ---- the commit race, every core busy, compressed transactions
  busy_all $((MAX_S + 10))
  BL_PORT=$PORT NB=$NP ROUNDS=$ROUNDS PHASE="$label, cores busy, compressed" MAX_SECONDS=$MAX_S \
    TABLE=fr47 "$PY" "$TESTLIB/78-fence-race.py" | tee -a "$work/race$ver.out"
  stop_busy
  out=$(node -N -e "SHOW SHOAL STATUS")
  like "$(awk -F'\t' '$1 == "Fence Probes" {print $2}' <<<"$out")" "^[1-9][0-9]*$" \
    "$label: the fence proved transactions visible by their GTIDs (probes)"
  is "$(awk -F'\t' '$1 == "Binlog Error" {print $2}' <<<"$out")" "" "$label: no binlog error"

  # ---- a prepare-execute-close loop: the node answers the PREPAREs
  out=$(prepare_loop "$NP")
  like "$out" "^upstream [0-9]+ errors 0$" "$label: 4,000 prepare-execute-close point selects, 0 wrong answers ($out)"
  n=$(awk '{print $2}' <<<"$out")
  if [ "${n:-9999}" -le 40 ]; then
    ok "$label: $n upstream COM_STMT_PREPARE for 4,000 queries (at most 0.01 per query)"
  else
    not_ok "$label: at most 40 upstream COM_STMT_PREPARE for 4,000 queries"; diag "$out"
  fi

  # ---- a privilege change made directly reaches the node's grant verdicts
  direct -e "CREATE USER 'lim47'@'%' IDENTIFIED WITH caching_sha2_password BY 'limpw';
    GRANT SELECT ON shoaltest.t TO 'lim47'@'%'; GRANT SELECT ON shoaltest.pa47 TO 'lim47'@'%'" 2>&1
  timeout 30 mariadb --no-defaults -h127.0.0.1 -P"$PORT" -ulim47 -plimpw --ssl -e "SELECT 1" >/dev/null 2>&1
  out=$(lim_node "SELECT v FROM t WHERE id = 3"; lim_node "SELECT v FROM t WHERE id = 3")
  a=$(direct -N -e "SELECT v FROM t WHERE id = 3")
  is "$(tr '\n' ' ' <<<"$out")" "$a $a " "$label: another login reads a cached key it may read"
  direct -e "REVOKE SELECT ON shoaltest.t FROM 'lim47'@'%'"   # (pa47 keeps its login's schema)
  check "$label: after a direct REVOKE, the node refuses it (1142) from the cache's answer" \
    poll_lim_denied "SELECT v FROM t WHERE id = 3"

  # ---- roles: a default role, one granted but not active, SET ROLE, SET
  # ROLE NONE; each answer through the node is the server's own, and the
  # default role's reads become hits
  direct -e "CREATE ROLE r47; GRANT SELECT ON shoaltest.t TO r47;
    CREATE USER 'ro47'@'%' IDENTIFIED WITH caching_sha2_password BY 'ropw';
    GRANT r47 TO 'ro47'@'%'; SET DEFAULT ROLE r47 TO 'ro47'@'%';
    CREATE USER 'rn47'@'%' IDENTIFIED WITH caching_sha2_password BY 'rnpw';
    GRANT r47 TO 'rn47'@'%'; GRANT SELECT ON shoaltest.pa47 TO 'rn47'@'%'" 2>&1
  local u sql got want pairs=("ro47:ropw|SELECT v FROM t WHERE id = 2" "rn47:rnpw|SELECT v FROM t WHERE id = 2"
    "rn47:rnpw|SET ROLE r47; SELECT v FROM t WHERE id = 2" "ro47:ropw|SET ROLE NONE; SELECT v FROM t WHERE id = 2")
  for u in "${pairs[@]}"; do
    sql=${u#*|}; u=${u%%|*}
    timeout 30 mariadb --no-defaults -h127.0.0.1 -P"$PORT" -u"${u%%:*}" -p"${u#*:}" --ssl -e "SELECT 1" >/dev/null 2>&1
    got=$(timeout 30 mariadb --no-defaults -h127.0.0.1 -P"$NP" -u"${u%%:*}" -p"${u#*:}" shoaltest -N -e "$sql" 2>&1 | tail -n 1)
    want=$(timeout 30 mariadb --no-defaults -h127.0.0.1 -P"$PORT" -u"${u%%:*}" -p"${u#*:}" --ssl shoaltest -N -e "$sql" 2>&1 | tail -n 1)
    is "${got/127.0.0.1/HOST}" "${want/127.0.0.1/HOST}" "$label: ${u%%:*}: $sql: the server's answer"
  done
  a=$(hits)
  timeout 30 mariadb --no-defaults -h127.0.0.1 -P"$NP" -uro47 -propw shoaltest -N \
    -e "SELECT v FROM t WHERE id = 2; SELECT v FROM t WHERE id = 2" >/dev/null 2>&1
  b=$(hits)
  if [ $((b - a)) -ge 1 ]; then
    ok "$label: a default role's reads are served from the cache ($((b - a)) hits of 2)"
  else
    not_ok "$label: a default role's reads are served from the cache"
  fi

  # ---- warm restart: 2,000 keys, SIGTERM, 20 rows changed while down
  is "$(read_all "$NP")" 0 "$label: 2,000 keys read through the node: none differs"
  shoal_stop "b$ver"
  like "$(cat "${!log_var}")" "cache snapshot .*$LABEL_ID.snap written at the stop: [0-9]+ entries" \
    "$label: SIGTERM writes the snapshot"
  direct -e "UPDATE one SET v = CONCAT(v, '-changed') WHERE id % 100 = 7"
  direct -e "SET GLOBAL log_output = 'TABLE'; SET GLOBAL general_log = 1"
  if start_node "w$ver"; then ok "$label: it starts again with the snapshot"; else not_ok "$label: the restart"; fi
  np_var="w${ver}_PORT"
  NP=${!np_var}
  check "$label: the replay is done: the state is warm" wait_state shoal_warm_state warm
  kept=$(metric 'shoal_warm_entries{kind="kept"}')
  if [ "${kept:-0}" -ge 1960 ]; then
    ok "$label: $kept entries kept: the replay invalidated the changed rows' entries"
  else
    not_ok "$label: the replay kept the unchanged rows' entries"; diag "kept: ${kept:-none}"
  fi
  is "$(read_all "$NP")" 0 "$label: all 2,000 keys read after the restart: 0 answers differ"
  n=$(upstream_selects)
  direct -e "SET GLOBAL general_log = 0"
  if [ "${n:-9999}" -le 40 ]; then
    ok "$label: the upstream ran $n of the keys' SELECTs (at most 40), not 2,000"
  else
    not_ok "$label: the upstream ran at most 40 of the keys' SELECTs"; diag "it ran ${n:-?}"
  fi
  np_var="w${ver}_LOG"
  unlike "$(grep -E ' (ERROR|FATAL) ' "${!log_var}" "${!np_var}" || true)" . "$label: no error in the nodes' logs"
  shoal_stop "w$ver"
  stop_mdb "$pid"
}

# The seed's topology in small: a node follows a MySQL 9.7 replica
# (log_replica_updates, on by default), the writes go to its source.
test_replica() {
  local spid rpid sport rport out
  sport=$(free_port)
  rport=$(free_port)
  mysql97_drop "$root" t47s
  mysql97_drop "$root" t47r
  spid=$(mysql97_start "$root" t47s "$sport" 2>"$work/starts.err")
  rpid=$(mysql97_start "$root" t47r "$rport" --server-id=2 2>"$work/startr.err")
  if ! is_pid "$spid" || ! is_pid "$rpid"; then
    diag_file "$work/starts.err"; diag_file "$work/startr.err"
    not_ok "MySQL 9.7 source and replica start"
    skip_n $((REPLICA_CHECKS - 1)) "replica upstream" "the servers did not start"
    return
  fi
  on_exit "stop_mdb $spid; stop_mdb $rpid; mysql97_drop '$root' t47s; mysql97_drop '$root' t47r"
  mysql_create_app "$(mysql97_socket "$root" t47s)" 2>"$work/apps.err"
  PORT=$sport direct -e "CREATE TABLE rt (id INT PRIMARY KEY, v VARCHAR(20));
    INSERT INTO rt VALUES (1, 'one'), (2, 'two')" 2>&1
  if mariadb --no-defaults --socket="$(mysql97_socket "$root" t47r)" -uroot -e "
      CHANGE REPLICATION SOURCE TO SOURCE_HOST = '127.0.0.1', SOURCE_PORT = $sport, SOURCE_USER = 'app',
        SOURCE_PASSWORD = 'pw', SOURCE_AUTO_POSITION = 1, GET_SOURCE_PUBLIC_KEY = 1;
      START REPLICA" 2>"$work/replica.err" && PORT=$rport poll_direct "SELECT v FROM rt WHERE id = 2" "two "; then
    ok "MySQL 9.7 source (port $sport) and replica (port $rport) replicating"
  else
    diag_file "$work/replica.err"
    not_ok "MySQL 9.7 source and replica replicating"
  fi
  PORT=$rport MPORT=$(free_port) LABEL_ID=rep
  if start_node rep; then ok "a node in binlog mode follows the replica"; else not_ok "a node follows the replica"; fi
  NP=$rep_PORT
  node -N -e "SELECT v FROM rt WHERE id = 1; SELECT v FROM rt WHERE id = 2" >/dev/null
  PORT=$sport direct -e "UPDATE rt SET v = 'uno' WHERE id = 1"
  check "a write on the source reaches the node's answer through the replica's binlog" \
    poll_node "SELECT v FROM rt WHERE id = 1" "uno "
  out=$(node -N -e "SHOW SHOAL STATUS")
  like "$(awk -F'\t' '$1 == "Binlog Position" {print $2}' <<<"$out")" "^[0-9a-f-]{36}:1-[0-9]+" \
    "the node's position is the source's GTIDs, as the replica logged them"
  shoal_stop rep
}
# poll_direct SQL WANT: the server's answer becomes WANT within 30 s
poll_direct() {
  local i
  for i in $(seq 1 300); do
    [ "$(direct -N -e "$1" 2>/dev/null | tr '\n' ' ')" = "$2" ] && return 0
    sleep 0.1
  done
  return 1
}

for s in "${servers[@]}"; do test_server "$s"; done
if [[ " ${servers[*]} " == *" 97 "* ]]; then test_replica; fi
done_testing
