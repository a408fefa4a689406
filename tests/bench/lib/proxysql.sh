# shellcheck shell=bash
# shellcheck disable=SC2154 # B, LOGS, MDB_PORT and the helpers are scripts/bench's
# tests/bench/lib/proxysql.sh: ProxySQL's own query cache as one more server
# of section 1b (scripts/bench sources this; functions only).
#
# ProxySQL (PROXYSQL_BIN, or ../shared/peers/proxysql beside the checkout)
# runs in front of the bench's MariaDB with 2 threads (the node's worker
# count) and one query rule that caches the point select of sbtest1 for an
# hour (cache_ttl; ProxySQL's query cache, its default size), so the CPU per
# query compares the two caches under the same sysbench load. Without a
# ProxySQL binary the line is left out and the block says so.

PX_PID="" PX_PORT="" PX_ADMIN=""

# px_bin: the ProxySQL binary, or nothing.
px_bin() {
  if [ -n "${PROXYSQL_BIN:-}" ] && [ -x "$PROXYSQL_BIN" ]; then
    echo "$PROXYSQL_BIN"
  elif [ -x "$SRCDIR/../shared/peers/proxysql" ]; then
    echo "$(cd "$SRCDIR/../shared/peers" && pwd)/proxysql"
  fi
}

# px_admin SQL...: a statement on the running ProxySQL's admin port.
px_admin() { mariadb --no-defaults -h127.0.0.1 -P"$PX_ADMIN" -uadmin -padmin -N "$@"; }

# px_start: start ProxySQL with the caching rule; sets PX_PID, PX_PORT and
# PX_ADMIN. Returns 1 (and logs why) when there is no binary or it fails.
px_start() {
  local bin dir
  bin=$(px_bin)
  [ -n "$bin" ] || { log "no ProxySQL binary (PROXYSQL_BIN): its query cache is left out of section 1b"; return 1; }
  dir="$B/proxysql"
  rm -rf "$dir"
  mkdir -p "$dir"
  PX_PORT=$(free_port)
  PX_ADMIN=$(free_port)
  cat >"$dir/proxysql.cnf" <<EOF
datadir="$dir"
admin_variables=
{
  admin_credentials="admin:admin"
  mysql_ifaces="127.0.0.1:$PX_ADMIN"
}
mysql_variables=
{
  threads=2
  interfaces="127.0.0.1:$PX_PORT"
  monitor_enabled=false
  server_version="10.11.6-MariaDB"
}
mysql_servers=
(
  { hostgroup_id=10, hostname="127.0.0.1", port=$MDB_PORT, max_connections=64 }
)
mysql_users=
(
  { username="app", password="pw", default_hostgroup=10, default_schema="sbtest" }
)
mysql_query_rules=
(
  { rule_id=1, active=1, match_digest="^SELECT c FROM sbtest1 WHERE id", cache_ttl=3600000, apply=1 }
)
EOF
  "$bin" -f --initial -c "$dir/proxysql.cnf" -D "$dir" >"$LOGS/proxysql.log" 2>&1 </dev/null &
  PX_PID=$!
  if ! wait_mysql "$PX_PORT" "$PX_PID" 300; then
    tail -n 20 "$LOGS/proxysql.log" >&2
    log "ProxySQL did not come up (log: build-bench/logs/proxysql.log)"
    px_stop
    return 1
  fi
  log "ProxySQL $("$bin" --version 2>/dev/null | head -n1 | awk '{print $3}') on 127.0.0.1:$PX_PORT (pid $PX_PID), query cache rule on sbtest1's point select"
}

px_stop() {
  [ -n "$PX_PID" ] && stop_pid "$PX_PID" 20
  PX_PID=""
}

# px_qc_counts: "gets=N hits=N" from ProxySQL's query cache counters.
px_qc_counts() {
  px_admin -e "SELECT Variable_Name, Variable_Value FROM stats_mysql_global
    WHERE Variable_Name IN ('Query_Cache_count_GET', 'Query_Cache_count_GET_OK')" 2>/dev/null |
    awk '$1 == "Query_Cache_count_GET" { g = $2 } $1 == "Query_Cache_count_GET_OK" { h = $2 }
         END { printf "gets=%s hits=%s\n", g + 0, h + 0 }'
}
