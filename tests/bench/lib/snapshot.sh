# shellcheck shell=bash
# tests/bench/lib/snapshot.sh: section 12 of scripts/bench (issue #21): the
# cache snapshot (cache_snapshot) against the number of entries: its write
# at the stop (time, file size), its load at the next start (read and
# check, put in the store, binlog replay until warm), and what a restart
# then costs the upstream, warm against cold.
#
# On the MariaDB with its binlog on (section 7's), database snapbench holds
# one table of 1,000,000 rows (`sbtest1`, made once): the loadgen's point
# select then has a row for every key. Sourced by scripts/bench, which sets
# the variables used here ($B, $LOGS, $quick, $NODE_BIN, ...).

SNAP_ROWS=1000000

snap_db_up() {
  local rows
  binlog_mdb_up
  rows=$(bl_sql -N -e "SELECT COUNT(*) FROM snapbench.sbtest1" 2>/dev/null || echo 0)
  if [ "$rows" != "$SNAP_ROWS" ]; then
    log "snapshot: making snapbench.sbtest1 ($SNAP_ROWS rows)"
    # (the sequence engine's seq_1_to_N lives in the current database)
    bl_sql -e "CREATE DATABASE IF NOT EXISTS snapbench; USE snapbench; DROP TABLE IF EXISTS sbtest1;
      CREATE TABLE sbtest1 (id INT PRIMARY KEY, c CHAR(120) NOT NULL);
      INSERT INTO sbtest1 SELECT seq, CONCAT(seq, '-', REPEAT('x', 100)) FROM seq_1_to_$SNAP_ROWS"
  fi
}

# snap_node NAME SNAPFILE [args...]: a node on snapbench, binlog mode,
# auto-cache, its snapshot at SNAPFILE ("" for none).
snap_node() {
  local name=$1 file=$2
  shift 2
  NODE_PORT=$(free_port)
  NODE_MPORT=$(free_port)
  mkdir -p "$B/node-$name"
  "$NODE_BIN" --upstream-db-url "mysql://app:pw@127.0.0.1:$BL_PORT/snapbench" \
    --listen-address "127.0.0.1:$NODE_PORT" --metrics-address "127.0.0.1:$NODE_MPORT" \
    --admin-address 127.0.0.1:0 --workers 2 --data-dir "$B/node-$name" --auto-cache \
    --invalidation binlog --memory-limit 3221225472 --snapshot-write-timeout-ms 120000 \
    --cache-snapshot "$file" --drain-handoff-ms 0 "$@" >"$LOGS/node-$name.log" 2>&1 &
  node_pid=$!
  if ! wait_mysql "$NODE_PORT" "$node_pid" 600; then
    tail -n 20 "$LOGS/node-$name.log" >&2
    log "the node ($name) did not come up"
    exit 1
  fi
}

# snap_wait_warm: until /metrics says the snapshot's replay is done (or 120 s)
snap_wait_warm() {
  local i
  for ((i = 0; i < 1200; i++)); do
    curl -s "http://127.0.0.1:$NODE_MPORT/metrics" | grep -q '^shoal_warm_state{state="warm"} 1$' && return 0
    sleep 0.1
  done
  return 1
}

snap_selects() { bl_sql -N -e "SHOW GLOBAL STATUS LIKE 'Com_select'" | awk '{print $2}'; }

# snap_read N: every key of 1..N once, through the node; "qps=... upstream=N"
snap_read() {
  local s0 s1 line
  s0=$(snap_selects)
  line=$(loadgen_run snapshot -P "$NODE_PORT" -D snapbench -c 8 -t 2 -W -r "$1" -d 900 -m text -S "$node_pid")
  s1=$(snap_selects)
  echo "qps=$(kv qps "$line") elapsed_s=$(awk -v m="$(kv elapsed_ms "$line")" 'BEGIN { printf "%.2f", m / 1000 }') upstream=$((s1 - s0))"
}

# snap_one N: fill N keys, stop (the write), start warm (the load), read
# them all; then start cold and read them all. One key=value line.
snap_one() {
  local n=$1 file="$B/snap-$1.snap" log w l warm cold t0 t1 rss
  rm -f "$file" "$file.tmp"
  snap_node "snap-$n" "$file"
  log "snapshot: filling $n keys"
  loadgen_run snapshot -P "$NODE_PORT" -D snapbench -c 8 -t 2 -W -r "$n" -d 900 -m text -S "$node_pid" >/dev/null
  rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$node_pid/status")
  stop_node
  log=$LOGS/node-snap-$n.log
  w=$(grep -o 'written at the stop: [0-9]* entries .* in [0-9.]* s' "$log" | tail -n1)
  t0=$(date +%s.%N)
  snap_node "snap-$n-warm" "$file"
  snap_wait_warm || log "snapshot: the $n-entry node did not turn warm (see node-snap-$n-warm.log)"
  t1=$(date +%s.%N)
  l=$LOGS/node-snap-$n-warm.log
  warm=$(snap_read "$n")
  stop_node
  rm -f "$file"
  snap_node "snap-$n-cold" "$file"
  cold=$(snap_read "$n")
  stop_node
  printf 'n=%s entries=%s file_bytes=%s write_s=%s read_s=%s load_s=%s kept=%s start_to_warm_s=%s rss_kb=%s warm_%s cold_%s\n' \
    "$n" "$(sed -E 's/^written at the stop: ([0-9]+) entries.*/\1/' <<<"$w")" \
    "$(sed -E 's/.* ([0-9]+) bytes on disk.*/\1/' <<<"$w")" "$(sed -E 's/.* in ([0-9.]+) s$/\1/' <<<"$w")" \
    "$(grep -o 'read and checked in [0-9.]* s' "$l" | grep -o '[0-9.]*' | head -n1)" \
    "$(grep -o 'loaded in [0-9.]* s' "$l" | grep -o '[0-9.]*' | head -n1)" \
    "$(grep -o 'replay is done: [0-9]*' "$l" | grep -o '[0-9]*$')" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" "$rss" \
    "${warm// / warm_}" "${cold// / cold_}"
}

section_snapshot() {
  local n line sizes="1000 100000 1000000"
  [ "${quick:-0}" = 1 ] && sizes="1000 10000 100000"
  snap_db_up
  : >"$LOGS/snapshot-figures.txt"
  for n in $sizes; do
    line=$(snap_one "$n")
    echo "snapshot $line" | tee -a "$LOGS/snapshot-figures.txt" >&2
  done
  {
    echo "Binlog mode, auto-cache; \`SELECT c FROM sbtest1 WHERE id=<id>\` on a table of"
    echo "1,000,000 rows (\`c\` CHAR(120)), every id of 1..N read once by \`loadgen -W\` (8"
    echo "connections) to fill the cache. Then SIGTERM (the snapshot written at the stop), a"
    echo "start with the file (read and checked, put in the store, the binlog replayed from"
    echo "its position: nothing was written meanwhile), and all N keys read again; then a start"
    echo "without it (cold), and all N keys read again. *Upstream SELECTs* are MariaDB's"
    echo "\`Com_select\` over the read (the node's own start-up statements included)."
    echo
    echo "| entries | file | write at the stop | read and check | put in the store | start to warm | RSS full | restart, warm: upstream SELECTs | restart, cold: upstream SELECTs | read after a warm restart | after a cold one |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    while read -r _ line; do
      printf '| %s | %s MB | %s s | %s s | %s s | %s s | %s MB | %s | %s | %s s | %s s |\n' \
        "$(kv entries "$line")" "$(awk -v b="$(kv file_bytes "$line")" 'BEGIN { printf "%.1f", b / 1e6 }')" \
        "$(kv write_s "$line")" "$(kv read_s "$line")" "$(fmt "$(kv load_s "$line")" 3)" \
        "$(kv start_to_warm_s "$line")" "$(awk -v k="$(kv rss_kb "$line")" 'BEGIN { printf "%.0f", k / 1024 }')" \
        "$(kv warm_upstream "$line")" "$(kv cold_upstream "$line")" \
        "$(fmt "$(kv warm_elapsed_s "$line")" 2)" "$(fmt "$(kv cold_elapsed_s "$line")" 2)"
    done <"$LOGS/snapshot-figures.txt"
  } >"$B/block-snapshot.md"
  line=$(tail -n1 "$LOGS/snapshot-figures.txt")
  echo "| 12 | upstream SELECTs to read $(kv n "$line") keys after a warm restart (binlog mode), against $(kv cold_upstream "$line") cold | $(kv warm_upstream "$line") | at most 1 % of cold | $(verdict "$(ratio "$(kv warm_upstream "$line")" "$(kv cold_upstream "$line")" 4)" '<=' 0.01) |" >>"$B/targets.md"
}
