# shellcheck shell=bash
# tests/bench/lib/sections.sh: sections 2 to 5 of scripts/bench
# (passthrough overhead, miss storm, memory, the seed 004 leaderboard).
# Sourced by scripts/bench, which sets the variables used here. Each section
# writes $B/block-NAME.md and adds its target rows to $B/targets.md.
# shellcheck disable=SC2154 # node_pid, floor_pid, mdb_pid: set by scripts/bench

# ---------------------------------------------------------------- 2. passthrough
rw_run() { # PORT PID -> summary line with the server's CPU per query
  local port=$1 pid=$2 t0 t1 out s q
  t0=$(proc_cpu_ticks "$pid")
  out=$(sysbench oltp_read_write "${SB_CONN[@]}" --mysql-port="$port" --threads=8 \
    --time="$SB_DUR" --percentile=95 --db-ps-mode=auto run 2>&1) || log "sysbench oltp_read_write on port $port failed: $(echo "$out" | grep -m1 FATAL)"
  t1=$(proc_cpu_ticks "$pid")
  s=$(sysbench_summary "$out")
  q=$(kv queries "$s")
  echo "$s server_cpu_us_per_query=$(awk -v a="$t0" -v b="$t1" -v t="$(getconf CLK_TCK)" -v q="$q" 'BEGIN { if (q + 0 == 0) print "n/a"; else printf "%.2f", (b - a) / t * 1e6 / q }')"
}

section_passthrough() {
  local direct node r added
  start_node pass --no-auto-cache
  wait_mdb_quiet
  log "oltp_read_write direct, 8 threads, $SB_DUR s"
  direct=$(rw_run "$MDB_PORT" "$mdb_pid")
  echo "direct $direct" | tee "$LOGS/read-write.txt" >&2
  log "oltp_read_write through the node (--no-auto-cache), 8 threads, $SB_DUR s"
  node=$(rw_run "$NODE_PORT" "$node_pid")
  echo "node $node" | tee -a "$LOGS/read-write.txt" >&2
  stop_node
  r=$(ratio "$(kv qps "$node")" "$(kv qps "$direct")")
  added=$(ms_diff "$(kv p95_ms "$direct")" "$(kv p95_ms "$node")")
  {
    echo "\`sysbench oltp_read_write\` (prepared statements, 8 threads, $SB_DUR s) directly and through a"
    echo "node started with \`--no-auto-cache\`. p95 is per transaction (18 statements)."
    echo
    echo "| path | qps | tps | p95 ms | errors | server CPU µs/query |"
    echo "|---|---|---|---|---|---|"
    for p in direct node; do
      local l=${!p}
      printf '| %s | %s | %s | %s | %s | %s |\n' "$([ $p = direct ] && echo "MariaDB direct" || echo "through the node")" \
        "$(fmt "$(kv qps "$l")" 0)" "$(fmt "$(kv tps "$l")" 0)" "$(kv p95_ms "$l")" "$(kv errors "$l")" "$(kv server_cpu_us_per_query "$l")"
    done
    echo
    echo "Through the node: ${r}× the direct qps; p95 +${added} ms. (The server CPU column is"
    echo "MariaDB's own direct, the node's own through the node.)"
  } >"$B/block-passthrough.md"
  echo "| 2 | passthrough qps ÷ direct qps (added p95: $added ms) | ${r}× | ≥ 0.85× | $(verdict "$r" '>=' 0.85) |" >>"$B/targets.md"
}

# ---------------------------------------------------------------- 3. miss storm
# storm_count PATTERN: executions of the storm's query in MariaDB's general log.
storm_count() {
  root_sql -N -e "SELECT COUNT(*) FROM mysql.general_log WHERE command_type IN ('Query','Execute') AND argument LIKE '$1'"
}

section_storm() {
  local m key line n pat coal
  declare -A T
  start_node storm --auto-cache --cache-ttl-ms 600000
  for m in text ps; do
    # a key nobody asked for yet on this fresh node
    [ $m = text ] && key=4243 || key=4244
    pat="SELECT c FROM sbtest1 WHERE id=$key"
    wait_mdb_quiet
    root_sql -e "SET GLOBAL log_output='TABLE'; TRUNCATE mysql.general_log; SET GLOBAL general_log=1"
    coal=$(msum "$NODE_MPORT" shoal_cache_coalesced_total)
    log "miss storm, $m: $STORM_CONNS connections, one query each for id=$key, all at once"
    line=$(loadgen_run storm -P "$NODE_PORT" -c "$STORM_CONNS" -t 2 -n 1 -k "$key" -m "$m" -d 120 -S "$node_pid")
    root_sql -e "SET GLOBAL general_log=0"
    n=$(storm_count "$pat")
    line="$line upstream_executions=$n coalesced=$(($(msum "$NODE_MPORT" shoal_cache_coalesced_total) - coal))"
    echo "storm $m $line" | tee -a "$LOGS/storm.txt" >&2
    T[$m]=$line
  done
  root_sql -e "TRUNCATE mysql.general_log"
  stop_node
  {
    echo "$STORM_CONNS connections to a fresh node (\`--auto-cache\`), all logged in first; then each"
    echo "sends \`SELECT c FROM sbtest1 WHERE id=K\` once, all at the same moment, for a key K"
    echo "nobody asked for before. Upstream executions are counted in MariaDB's general log"
    echo "(\`mysql.general_log\`, Query and Execute lines with that statement); \"time to serve all\" is"
    echo "from the moment the queries were sent to the last answer."
    echo
    echo "| protocol | connections | answered | errors | upstream executions | coalesced waits | time to serve all ms | p50 ms | p99 ms |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for m in text ps; do
      local l=${T[$m]}
      printf '| %s | %s | %s | %s | **%s** | %s | %s | %s | %s |\n' "$([ $m = ps ] && echo prepared || echo text)" \
        "$(kv established "$l")" "$(kv queries "$l")" "$(kv error_codes "$l")" "$(kv upstream_executions "$l")" \
        "$(kv coalesced "$l")" "$(kv elapsed_ms "$l")" "$(kv p50_ms "$l")" "$(kv p99_ms "$l")"
    done
  } >"$B/block-storm.md"
  for m in text ps; do
    n=$(kv upstream_executions "${T[$m]}")
    echo "| 3 | miss storm ($m, $STORM_CONNS clients, one cold key): upstream executions; all served in $(kv elapsed_ms "${T[$m]}") ms | $n | = 1 | $([ "$n" = 1 ] && echo met || echo missed) |" >>"$B/targets.md"
  done
}

# ---------------------------------------------------------------- 4. memory
section_memory() {
  local idle rss0 rss1 bytes entries ev lim_mib per
  start_node idle --auto-cache
  log "memory: $IDLE_CONNS idle authenticated connections"
  idle=$(loadgen_run memory -P "$NODE_PORT" -c "$IDLE_CONNS" -t 2 -I -d 1 -S "$node_pid")
  echo "idle $idle" >&2
  stop_node
  lim_mib=$((MEM_LIMIT / 1048576))
  start_node mem --auto-cache --cache-ttl-ms 3600000 --memory-limit "$MEM_LIMIT"
  rss0=$(proc_rss_kb "$node_pid")
  for m in $MEM_FILL; do
    log "memory: filling a ${lim_mib} MiB cache with every id of sbtest1 ($m)"
    loadgen_run memory -P "$NODE_PORT" -c 8 -t 2 -W -r "$SIZE" -d 600 -m "$m" -S "$node_pid" >&2
  done
  rss1=$(proc_rss_kb "$node_pid")
  bytes=$(msum "$NODE_MPORT" shoal_cache_memory_bytes)
  entries=$(msum "$NODE_MPORT" shoal_cache_entries)
  ev=$(msum "$NODE_MPORT" shoal_cache_evictions_total)
  stop_node
  per=$(kv rss_per_conn_bytes "$idle")
  {
    echo "Idle connections: a fresh node; \`loadgen -I\` opens $IDLE_CONNS connections, logs each in"
    echo "and leaves it idle; the node's RSS (\`VmRSS\`) is read before and 1 s after the last login."
    echo "The node's per-connection state includes whatever it holds for the session's upstream"
    echo "side (one upstream connection per client until the pool lands)."
    echo
    echo "| connections asked | established | errors | RSS before KiB | RSS after KiB | RSS per connection |"
    echo "|---|---|---|---|---|---|"
    printf '| %s | %s | %s | %s | %s | **%s bytes** |\n' "$IDLE_CONNS" "$(kv established "$idle")" "$(kv error_codes "$idle")" \
      "$(kv rss_before_kb "$idle")" "$(kv rss_after_kb "$idle")" "$per"
    echo
    echo "Full cache: a node with \`--memory-limit $MEM_LIMIT\` ($lim_mib MiB), filled with every id of"
    echo "sbtest1 ($MEM_FILL; more results than fit), then RSS read."
    echo
    echo "| memory limit | cache bytes (\`shoal_cache_memory_bytes\`) | entries | evictions | RSS empty | RSS full | RSS full − empty |"
    echo "|---|---|---|---|---|---|---|"
    printf '| %s MiB | %s MiB | %s | %s | %s MiB | %s MiB | %s MiB (%s× the limit) |\n' "$lim_mib" \
      "$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')" "$entries" "$ev" \
      "$(awk -v k="$rss0" 'BEGIN { printf "%.1f", k / 1024 }')" "$(awk -v k="$rss1" 'BEGIN { printf "%.1f", k / 1024 }')" \
      "$(awk -v a="$rss0" -v b="$rss1" 'BEGIN { printf "%.1f", (b - a) / 1024 }')" \
      "$(ratio "$(awk -v a="$rss0" -v b="$rss1" 'BEGIN { print (b - a) * 1024 }')" "$MEM_LIMIT")"
  } >"$B/block-memory.md"
  echo "| 4 | RSS per idle client connection ($(kv established "$idle") connections) | $per bytes | ≤ 32768 | $(verdict "$per" '<=' 32768) |" >>"$B/targets.md"
}

# ---------------------------------------------------------------- 5. leaderboard
# lb_compare DIRECT_ROWS CACHED_ROWS: a sentence on whether the answers match.
lb_compare() {
  local cmp
  cmp=$(compare_rows "$1" "$2")
  case $cmp in
    identical*) echo "identical ($(echo "$cmp" | cut -d' ' -f2) rows)" ;;
    different*) echo "**DIFFERENT** ($(echo "$cmp" | cut -d' ' -f2) of $(echo "$cmp" | cut -d' ' -f3) rows)" ;;
    lastcol*) echo "the same $(echo "$cmp" | head -n1 | cut -d' ' -f2) rows except top_category for $(($(echo "$cmp" | wc -l) - 1)) customer(s) whose top categories may tie (LIMIT 1 over a tie; see docs/benchmarks.md of earlier runs)" ;;
    *) echo "not compared" ;;
  esac
}

section_leaderboard() {
  local c line same
  declare -A L
  start_node lb --auto-cache --cache-ttl-ms 3600000
  "${LAT[@]}" -P "$MDB_PORT" -D sakila -f tests/data/leaderboard.sql -w 0 -n 1 -d 2>"$LOGS/leaderboard-direct.rows" >/dev/null || true
  # the one miss that fills the entry, timed (the figure's "miss")
  local miss
  miss=$("${LAT[@]}" -P "$NODE_PORT" -D sakila -f tests/data/leaderboard.sql -w 0 -n 1 2>/dev/null) || miss=""
  "${LAT[@]}" -P "$NODE_PORT" -D sakila -f tests/data/leaderboard.sql -w 0 -n 1 -d 2>"$LOGS/leaderboard-cached.rows" >/dev/null || true
  same=$(lb_compare "$LOGS/leaderboard-direct.rows" "$LOGS/leaderboard-cached.rows")
  local h0 m0
  h0=$(msum "$NODE_MPORT" shoal_cache_hits_total) m0=$(msum "$NODE_MPORT" shoal_cache_misses_total)
  for c in 1 4 8; do
    log "leaderboard at concurrency $c: direct ($LB_DUR s), cached and floor ($DUR s)"
    L[direct.$c]=$(loadgen_run leaderboard -P "$MDB_PORT" -D sakila -f tests/data/leaderboard.sql -c "$c" -t 1 -d "$LB_DUR" -w 0 -S "$mdb_pid")
    L[cached.$c]=$(loadgen_run leaderboard -P "$NODE_PORT" -D sakila -f tests/data/leaderboard.sql -c "$c" -t 1 -d "$DUR" -w "$WARM" -S "$node_pid")
    L[floor.$c]=$(loadgen_run leaderboard -P "$FLOOR_PORT" -e 'SELECT 1' -c "$c" -t 1 -d "$DUR" -w "$WARM" -S "$floor_pid")
  done
  local hits=$(($(msum "$NODE_MPORT" shoal_cache_hits_total) - h0)) misses=$(($(msum "$NODE_MPORT" shoal_cache_misses_total) - m0))
  stop_node
  {
    echo "\`tests/data/leaderboard.sql\` on sakila (25 rows of 7 columns), text protocol, closed loop"
    echo "with the load generator at 1, 4 and 8 connections: directly ($LB_DUR s) and through a node"
    echo "with \`--auto-cache\` after the one miss that fills it ($DUR s after $WARM s of warm-up; $hits hits /"
    echo "$misses misses while measured). The floor's \`SELECT 1\` (one row, one column) is the"
    echo "cheapest answer the same client can get. The cached answer compared with $UP_NAME's, row"
    echo "by row: $same."
    echo
    echo "| concurrency | direct p50 ms | direct qps | **cached p50 ms** | **cached qps** | direct p50 ÷ cached p50 | cached qps ÷ direct qps | floor p50 ms | floor qps | cached p50 ÷ floor p50 | errors (direct / cached) |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for c in 1 4 8; do
      local d=${L[direct.$c]} k=${L[cached.$c]} f=${L[floor.$c]}
      printf '| %s | %s | %s | %s | %s | %s× | %s× | %s | %s | %s× | %s / %s |\n' "$c" "$(kv p50_ms "$d")" "$(fmt "$(kv qps "$d")" 1)" \
        "$(kv p50_ms "$k")" "$(fmt "$(kv qps "$k")" 0)" "$(ratio "$(kv p50_ms "$d")" "$(kv p50_ms "$k")" 0)" \
        "$(ratio "$(kv qps "$k")" "$(kv qps "$d")" 0)" "$(kv p50_ms "$f")" "$(fmt "$(kv qps "$f")" 0)" \
        "$(ratio "$(kv p50_ms "$k")" "$(kv p50_ms "$f")")" "$(kv error_codes "$d")" "$(kv error_codes "$k")"
    done
  } >"$B/block-leaderboard.md"
  {
    echo "# what p50_ms (concurrency 1; the miss is the one execution that filled the entry)"
    echo "direct $(kv p50_ms "${L[direct.1]}")"
    echo "miss $(awk -v u="$(kv p50_us "$miss")" 'BEGIN { printf "%.3f\n", u / 1000 }')"
    echo "hit $(kv p50_ms "${L[cached.1]}")"
    echo "floor $(kv p50_ms "${L[floor.1]}")"
  } | plot_data leaderboard
  local sp vf
  sp=$(ratio "$(kv p50_ms "${L[direct.1]}")" "$(kv p50_ms "${L[cached.1]}")" 0)
  vf=$(ratio "$(kv p50_ms "${L[cached.1]}")" "$(kv p50_ms "${L[floor.1]}")")
  echo "| 5 | leaderboard at concurrency 1: direct p50 ÷ cached p50 (seed 004) | ${sp}× | ≥ 400× | $(verdict "$sp" '>=' 400) |" >>"$B/targets.md"
  echo "| 5 | leaderboard at concurrency 1: cached p50 ÷ floor p50 | ${vf}× | ≤ 1.5× | $(verdict "$vf" '<=' 1.5) |" >>"$B/targets.md"
}
