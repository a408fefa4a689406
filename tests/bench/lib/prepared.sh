# shellcheck shell=bash
# tests/bench/lib/prepared.sh: section 2b of scripts/bench, prepared point
# selects through the node, cached (auto-cache, warmed) and passthrough (no
# cache), with the statement prepared once per connection (-m ps) and
# prepared for every query (-m psq: CLOSE, PREPARE, EXECUTE, as drivers that
# prepare each statement do). Each line is run BENCH_PS_REPEAT times
# (default 3), the runs of all lines interleaved; the median by node CPU is
# shown. With BENCH_COMPARE_BIN=/path/to/shoal, the same lines run on that
# binary too (issue #11: the registry that answered PREPARE itself, against
# the one that always asks the upstream). Sourced by scripts/bench, which sets
# the variables used here. Writes $B/block-prepared.md.
# shellcheck disable=SC2154 # node_pid, mdb_pid: set by scripts/bench

# prepared_run LABEL BIN CACHE MODE: one loadgen run on a node of BIN
# (started by the caller: node_pid, NODE_PORT) -> the key=value line plus
# MariaDB's CPU per query (mdb_cpu_us_per_query).
prepared_run() {
  local label=$1 cache=$3 mode=$4 t0 t1 line q
  wait_cpu_idle "$node_pid" "$mdb_pid"
  log "prepared point select: $label, $cache, $mode, 8 connections, ${DUR} s (+${WARM} s warm-up)"
  t0=$(proc_cpu_ticks "$mdb_pid")
  line=$(loadgen_run prepared -P "$NODE_PORT" -c 8 -t 2 -d "$DUR" -w "$WARM" -m "$mode" -r "$SIZE" -S "$node_pid")
  t1=$(proc_cpu_ticks "$mdb_pid")
  q=$(kv queries "$line")
  # MariaDB's ticks cover the warm-up too: charged to the measured queries
  # pro rata of the window
  echo "$line mdb_cpu_us_per_query=$(awk -v a="$t0" -v b="$t1" -v t="$(getconf CLK_TCK)" -v q="$q" \
    -v w="$(kv window_s "$line")" -v u="$WARM" \
    'BEGIN { if (q + 0 == 0 || w + 0 == 0) print "n/a"; else printf "%.2f", (b - a) / t * 1e6 / q * w / (w + u) }')"
}

section_prepared() {
  local reps=${BENCH_PS_REPEAT:-3} i b label bin cache mode key line
  local -a bins=("this:$NODE_BIN")
  local saved=$NODE_BIN
  declare -A P
  [ -n "${BENCH_COMPARE_BIN:-}" ] && bins+=("compare:$BENCH_COMPARE_BIN")
  : >"$LOGS/prepared.txt"
  for ((i = 1; i <= reps; i++)); do
    for b in "${bins[@]}"; do
      label=${b%%:*} bin=${b#*:}
      NODE_BIN=$bin
      for cache in cached passthrough; do
        if [ "$cache" = cached ]; then
          start_node "ps-$label" --auto-cache --cache-ttl-ms 3600000
          log "warming: every id once, prepared"
          loadgen_run warm -P "$NODE_PORT" -c 8 -t 2 -W -r "$SIZE" -d 600 -m ps -S "$node_pid" >/dev/null
        else
          start_node "ps-$label" --no-auto-cache
        fi
        wait_mdb_quiet
        for mode in ps psq; do
          key="$label.$cache.$mode"
          line=$(prepared_run "$label" "$bin" "$cache" "$mode")
          echo "$key $line" >>"$LOGS/prepared.txt"
          P[$key]+="$line"$'\n'
        done
        stop_node
      done
    done
  done
  NODE_BIN=$saved
  {
    echo "Prepared point selects (\`SELECT c FROM sbtest1 WHERE id=?\`, uniform ids) through the"
    echo "node, 8 connections, 2 load-generator threads, ${DUR} s after ${WARM} s of warm-up per run;"
    echo "\`ps\`: prepared once per connection, then executed; \`psq\`: prepared, executed and"
    echo "closed for every query (a query's latency covers both round trips). Cached: auto-cache on,"
    echo "every id warmed first; passthrough: \`--no-auto-cache\`. Each line ran $reps times (runs of"
    echo "all lines interleaved); shown: the run with the median node CPU per query, and the range"
    echo "of that figure over the runs. \"MariaDB CPU\" is the server's CPU per query in the same run."
    echo
    echo "| node | cache | mode | qps | p95 ms | node CPU µs/query (range) | MariaDB CPU µs/query | errors |"
    echo "|---|---|---|---|---|---|---|---|"
    for b in "${bins[@]}"; do
      label=${b%%:*}
      for cache in cached passthrough; do
        for mode in ps psq; do
          key="$label.$cache.$mode"
          line=$(printf '%s' "${P[$key]}" | median_line server_cpu_us_per_query)
          printf '| %s | %s | %s | %s | %s | %s (%s) | %s | %s |\n' "$label" "$cache" "$mode" \
            "$(fmt "$(kv qps "$line")" 0)" "$(kv p95_ms "$line")" "$(kv server_cpu_us_per_query "$line")" \
            "$(printf '%s' "${P[$key]}" | median_line server_cpu_us_per_query range)" \
            "$(kv mdb_cpu_us_per_query "$line")" "$(kv errors "$line")"
        done
      done
    done
    echo
    echo "\`this\`: $(basename "$saved") as built for this run$([ -n "${BENCH_COMPARE_BIN:-}" ] && echo "; \`compare\`: \`$BENCH_COMPARE_BIN\`")."
  } >"$B/block-prepared.md"
}
