# shellcheck shell=bash
# tests/bench/lib/consistency.sh: the sections of scripts/bench about
# consistent caching (issue #12): staleness, write-path cost, refresh
# traffic. They run against a second private MariaDB with its binlog on
# (build-bench/mariadb-binlog), so that the node follows its binlog.
# Sourced by scripts/bench, which sets the variables used here. Each section
# writes $B/block-NAME.md and adds its target rows to $B/targets.md.

BL_PORT="" BL_PID="" BL_DIR="" BL_SOCK=""

# binlog_mdb_up: start (once) the MariaDB with binlog, with sbtest prepared.
# A MySQL upstream (BENCH_UPSTREAM) has its binlog on already: it is used.
binlog_mdb_up() {
  [ -n "$BL_PID" ] && kill -0 "$BL_PID" 2>/dev/null && return 0
  if [ "$UPSTREAM" != mariadb ]; then
    # shellcheck disable=SC2154 # mdb_pid: set by scripts/bench
    BL_PORT=$MDB_PORT BL_PID=$mdb_pid BL_SOCK=$MDB_SOCK
    return 0
  fi
  BL_DIR=${BENCH_MDB_BINLOG_DIR:-$B/mariadb-binlog}
  BL_SOCK=$BL_DIR/sock
  BL_PORT=$(free_port)
  log "starting a private MariaDB with its binlog on 127.0.0.1:$BL_PORT ($BL_DIR)"
  BL_PID=$(export MARIADB_EXTRA_ARGS="--log-bin=binlog --binlog-format=ROW --server-id=1"
    start_private_mariadb "$BL_DIR" "$BL_PORT")
  # shellcheck disable=SC2034 # read by scripts/bench's cleanup
  BL_CLEANUP_PID=$BL_PID
  local rows
  rows=$(bl_sql -N -e "SELECT COUNT(*) FROM sbtest.sbtest1" 2>/dev/null || echo 0)
  if [ "$rows" != "$SIZE" ]; then
    log "preparing sbtest on it (1 table of $SIZE rows)"
    sysbench oltp_point_select "${SB_CONN[@]}" --mysql-port="$BL_PORT" cleanup >"$LOGS/bl-prepare.log" 2>&1 || true
    sysbench oltp_point_select "${SB_CONN[@]}" --mysql-port="$BL_PORT" prepare >>"$LOGS/bl-prepare.log" 2>&1
  fi
}
bl_sql() { mariadb --no-defaults --socket="$BL_SOCK" -uroot "$@"; }

# bl_node NAME [args...]: a node on the binlog MariaDB (start_node's way).
bl_node() {
  local name=$1
  shift
  NODE_PORT=$(free_port)
  NODE_MPORT=$(free_port)
  rm -rf "$B/node-$name"
  mkdir -p "$B/node-$name"
  "$NODE_BIN" --upstream-db-url "mysql://app:pw@127.0.0.1:$BL_PORT/sbtest" \
    --listen-address "127.0.0.1:$NODE_PORT" --metrics-address "127.0.0.1:$NODE_MPORT" \
    --admin-address 127.0.0.1:0 --workers 2 --data-dir "$B/node-$name" "$@" \
    >"$LOGS/node-$name.log" 2>&1 &
  node_pid=$!
  if ! wait_mysql "$NODE_PORT" "$node_pid"; then
    tail -n 20 "$LOGS/node-$name.log" >&2
    log "the node ($name) did not come up"
    exit 1
  fi
  sleep 1   # the binlog stream and the catalog
  log "node $name: pid $node_pid, port $NODE_PORT ($(grep -o 'invalidation: [a-z]*' "$LOGS/node-$name.log" | head -1))"
}

# ---------------------------------------------------------------- staleness
section_staleness() {
  local line hits0 miss0 hits1 miss1 p99
  binlog_mdb_up
  bl_node stale --auto-cache
  hits0=$(msum "$NODE_MPORT" shoal_cache_hits_total)
  miss0=$(msum "$NODE_MPORT" shoal_cache_misses_total)
  log "staleness: a writer at 500 UPDATEs/s on $UP_NAME, 4 readers through the node, $STALE_DUR s"
  line=$("$BIN/staleness" -u "127.0.0.1:$BL_PORT" -n "127.0.0.1:$NODE_PORT" -s -T 50 -r 500 -R 4 -d "$STALE_DUR" -o "$B/staleness.cdf" 2>>"$LOGS/staleness.err") ||
    line="failed=1"
  hits1=$(msum "$NODE_MPORT" shoal_cache_hits_total)
  miss1=$(msum "$NODE_MPORT" shoal_cache_misses_total)
  echo "staleness $line hits=$((hits1 - hits0)) misses=$((miss1 - miss0))" | tee "$LOGS/staleness.txt" >&2
  [ -s "$B/staleness.cdf" ] && plot_data staleness <"$B/staleness.cdf"
  stop_node
  p99=$(kv p99_ms "$line")
  {
    echo "A writer connected straight to $UP_NAME (binlog on) updates row 1 of one of 50 tables"
    echo "(round robin) at 500 writes/s; 4 readers poll \`SELECT v FROM st<j> WHERE id = 1\` over the"
    echo "50 tables through a node in binlog mode (\`--auto-cache\`, the defaults), $STALE_DUR s"
    echo "(\`tests/bench/staleness.c\`). Staleness of a write: from its UPDATE returning to the end of"
    echo "the first read through the node that returned it (an upper bound: it includes that read and"
    echo "the time until the reader came back to the table). Superseded: written again before any"
    echo "read came back to it."
    echo
    echo "| writes/s | writes measured | superseded | p50 ms | p90 ms | p99 ms | max ms | reads/s | cache hits | cache misses |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    printf '| %s | %s | %s | %s | %s | **%s** | %s | %s | %s | %s |\n' "$(kv rate "$line")" "$(kv measured "$line")" \
      "$(kv superseded "$line")" "$(kv p50_ms "$line")" "$(kv p90_ms "$line")" "$p99" "$(kv max_ms "$line")" \
      "$(kv read_qps "$line")" "$((hits1 - hits0))" "$((miss1 - miss0))"
  } >"$B/block-staleness.md"
  echo "| 7 | staleness p99, direct writes at 500/s, node following the binlog | ${p99:-n/a} ms | ≤ 20 ms | $(verdict "${p99:-999999}" '<=' 20) |" >>"$B/targets.md"
}

# ---------------------------------------------------------------- write path
# median_of V...: the median of numbers.
median_of() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }
# child_cpu_ticks: CPU time of this shell's finished children (sysbench, run in
# a command substitution, counts once its subshell is waited for).
child_cpu_ticks() { awk '{print $16+$17}' "/proc/$$/stat"; }
# us_per_txn TICKS TPS: CPU microseconds per transaction over an $SB_DUR s run.
us_per_txn() {
  awk -v c="$1" -v t="$(getconf CLK_TCK)" -v n="$2" -v d="$SB_DUR" \
    'BEGIN { if (n + 0 == 0) print "n/a"; else printf "%.1f", c / t * 1e6 / (n * d) }'
}

# writepath_run INV WORKLOAD: one sysbench run through the node; prints its
# summary with the node's and the whole machine's work (node + MariaDB,
# whose binlog dump thread exists only in binlog mode, + sysbench) per
# transaction.
writepath_run() {
  local t=$2 n0 m0 s0 n1 m1 s1 line tps
  n0=$(proc_cpu_ticks "$node_pid") m0=$(proc_cpu_ticks "$BL_PID") s0=$(child_cpu_ticks)
  line=$(sysbench "$t" "${SB_CONN[@]}" --mysql-port="$NODE_PORT" --threads=8 --time="$SB_DUR" \
    --percentile=95 --db-ps-mode=disable run 2>&1) || log "sysbench $t failed: $(echo "$line" | grep -m1 FATAL)"
  n1=$(proc_cpu_ticks "$node_pid") m1=$(proc_cpu_ticks "$BL_PID") s1=$(child_cpu_ticks)
  line=$(sysbench_summary "$line")
  tps=$(kv tps "$line")
  echo "$line node_cpu_us_per_txn=$(us_per_txn $((n1 - n0)) "$tps")" \
    "box_cpu_us_per_txn=$(us_per_txn $((n1 - n0 + m1 - m0 + s1 - s0)) "$tps")"
}

section_writepath() {
  local inv t line rep reps=${BENCH_WRITEPATH_REPEAT:-3}
  declare -A W
  binlog_mdb_up
  # interleaved: on, off, on, off, ... so that a change in the machine's load
  # hits both alike; the median of the runs is reported
  for ((rep = 1; rep <= reps; rep++)); do
    for inv in binlog ttl; do
      bl_node "wp-$inv" --auto-cache --invalidation "$inv"
      for t in oltp_write_only oltp_read_write; do
        log "$t through the node, --invalidation $inv, 8 threads, $SB_DUR s ($rep/$reps)"
        line=$(writepath_run "$inv" "$t")
        echo "writepath $rep $inv $t $line" | tee -a "$LOGS/writepath.txt" >&2
        W[$inv.$t.tps]+=" $(kv tps "$line")"
        W[$inv.$t.qps]+=" $(kv qps "$line")"
        W[$inv.$t.p95]+=" $(kv p95_ms "$line")"
        W[$inv.$t.err]+=" $(kv errors "$line")"
        W[$inv.$t.cpu]+=" $(kv node_cpu_us_per_txn "$line")"
        W[$inv.$t.box]+=" $(kv box_cpu_us_per_txn "$line")"
      done
      stop_node
    done
  done
  {
    echo "\`sysbench oltp_write_only\` and \`oltp_read_write\` (text protocol, 8 threads, $SB_DUR s) through a"
    echo "node with \`--auto-cache\`, on MariaDB with its binlog on: invalidation on (\`--invalidation"
    echo "binlog\`: every write's tables, and the triggers' and cascades', are invalidated before its OK,"
    echo "and the binlog follower runs) and off (\`--invalidation ttl\`). $reps runs of each, interleaved"
    echo "(on, off, on, off, ...); the median, and every run's tps. CPU per transaction: CPU time"
    echo "over the run divided by the transactions, of the node process (binlog follower included),"
    echo "and of the whole machine's work: node + MariaDB (its binlog dump thread runs only in"
    echo "binlog mode) + sysbench. That is the write path's cost; on these 2 shared cores,"
    echo "throughput is that cost plus the scheduling noise of the machine."
    echo
    echo "| workload | invalidation | tps (median) | tps of each run | qps | p95 ms | node CPU µs/txn (median) | machine CPU µs/txn (median) | errors |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for t in oltp_write_only oltp_read_write; do
      for inv in binlog ttl; do
        # shellcheck disable=SC2086 # word lists
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$t" "$([ $inv = binlog ] && echo "on (binlog)" || echo "off (ttl)")" \
          "$(fmt "$(median_of ${W[$inv.$t.tps]})" 0)" "$(echo ${W[$inv.$t.tps]} | xargs -n1 printf '%.0f ' | sed 's/ $//')" \
          "$(fmt "$(median_of ${W[$inv.$t.qps]})" 0)" "$(median_of ${W[$inv.$t.p95]})" \
          "$(median_of ${W[$inv.$t.cpu]})" "$(median_of ${W[$inv.$t.box]})" "$(printf '%s' "${W[$inv.$t.err]# }")"
      done
    done
  } >"$B/block-writepath.md"
  for t in oltp_write_only oltp_read_write; do
    local r d
    # shellcheck disable=SC2086
    r=$(ratio "$(median_of ${W[binlog.$t.tps]})" "$(median_of ${W[ttl.$t.tps]})")
    d=$(awk -v r="$r" 'BEGIN { d = (r - 1) * 100; if (d < 0) d = -d; printf "%.1f", d }')
    echo "| 8 | $t tps, invalidation on ÷ off (medians of $reps) | ${r}× ($d % apart) | within 5 % | $(verdict "$d" '<=' 5) |" >>"$B/targets.md"
    # shellcheck disable=SC2086
    r=$(ratio "$(median_of ${W[binlog.$t.box]})" "$(median_of ${W[ttl.$t.box]})" 3)
    d=$(awk -v r="$r" 'BEGIN { d = (r - 1) * 100; if (d < 0) d = -d; printf "%.1f", d }')
    echo "| 8 | $t machine CPU per transaction, invalidation on ÷ off (medians of $reps) | ${r}× ($d % apart) | within 5 % | $(verdict "$d" '<=' 5) |" >>"$B/targets.md"
  done
}

# ---------------------------------------------------------------- refresh traffic
# upstream_selects: MariaDB's Com_select (every SELECT it ran).
upstream_selects() { bl_sql -N -e "SHOW GLOBAL STATUS LIKE 'Com_select'" | awk '{print $2}'; }

section_refresh() {
  local cfg s0 s1 line
  declare -A R
  binlog_mdb_up
  for cfg in binlog ttl; do
    if [ $cfg = binlog ]; then
      bl_node refresh-binlog --auto-cache
    else
      bl_node refresh-ttl --auto-cache --invalidation ttl --cache-ttl-ms 10000 --cache-refresh-ms 5000
    fi
    log "refresh traffic ($cfg): warming 10,000 keys"
    loadgen_run warm -P "$NODE_PORT" -c 8 -t 2 -W -r 10000 -d 600 -m text -S "$node_pid" >&2
    s0=$(upstream_selects)
    log "refresh traffic ($cfg): 16 connections reading the 10,000 keys, $REFRESH_DUR s"
    line=$(loadgen_run refresh -P "$NODE_PORT" -c 16 -t 2 -r 10000 -d "$REFRESH_DUR" -w 0 -m text -S "$node_pid")
    s1=$(upstream_selects)
    line="$line upstream_selects=$((s1 - s0)) upstream_qps=$(awk -v a="$s0" -v b="$s1" -v d="$REFRESH_DUR" 'BEGIN { printf "%.1f", (b - a) / d }')"
    echo "refresh $cfg $line" | tee -a "$LOGS/refresh.txt" >&2
    R[$cfg]=$line
    stop_node
  done
  {
    echo "A hot set of 10,000 keys (\`SELECT c FROM sbtest1 WHERE id=<1..10000>\`), unchanging, read by"
    echo "16 connections through a node for $REFRESH_DUR s after every key was cached once; upstream"
    echo "queries per second from MariaDB's \`Com_select\`. Binlog mode with its defaults (TTL 1 h, no"
    echo "refresh) against the former defaults (TTL 10 s, refresh at 5 s, no invalidation)."
    echo
    echo "| node | reads/s through the node | upstream queries/s |"
    echo "|---|---|---|"
    printf '| binlog invalidation, defaults | %s | **%s** |\n' "$(fmt "$(kv qps "${R[binlog]}")" 0)" "$(kv upstream_qps "${R[binlog]}")"
    printf '| ttl 10 s, refresh 5 s | %s | %s |\n' "$(fmt "$(kv qps "${R[ttl]}")" 0)" "$(kv upstream_qps "${R[ttl]}")"
  } >"$B/block-refresh.md"
  echo "| 9 | upstream queries/s for an unchanging hot set of 10,000 keys, binlog mode | $(kv upstream_qps "${R[binlog]}") | near 0 | $(verdict "$(kv upstream_qps "${R[binlog]}")" '<=' 1) |" >>"$B/targets.md"
}
