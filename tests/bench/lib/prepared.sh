# shellcheck shell=bash
# tests/bench/lib/prepared.sh: section 2b of scripts/bench, prepared point
# selects with the statement prepared once per connection (-m ps) and
# prepared for every query (-m psq: CLOSE, PREPARE, EXECUTE, as drivers that
# prepare each statement do), on the MariaDB with its binlog on
# (consistency.sh: binlog_mdb_up), through:
#   - a node in binlog mode, auto-cache, every id warmed first: the node
#     answers a repeated PREPARE itself (issue #23);
#   - a node in writes mode, the same: every PREPARE goes upstream;
#   - a node with no cache (passthrough);
#   - the floor server (tests/bench/floor.c, which answers PREPARE too).
# Each line is run BENCH_PS_REPEAT times (default 3), the runs of all lines
# interleaved; the median by server CPU is shown, with the upstream's
# COM_STMT_PREPAREs per query (MariaDB's Com_stmt_prepare over the run).
# Sourced by scripts/bench, which sets the variables used here. Writes
# $B/block-prepared.md and adds its target rows to $B/targets.md.
# shellcheck disable=SC2154 # node_pid, floor_pid: set by scripts/bench

bl_status() { bl_sql -N -e "SHOW GLOBAL STATUS LIKE '$1'" | awk '{ print $2 }'; }

# prepared_run TARGET MODE: one loadgen run on TARGET (node: the node
# started by the caller; floor) -> the key=value line plus MariaDB's CPU
# and COM_STMT_PREPAREs per query.
prepared_run() {
  local target=$1 mode=$2 t0 t1 p0 p1 line q pid port
  if [ "$target" = floor ]; then pid=$floor_pid port=$FLOOR_PORT; else pid=$node_pid port=$NODE_PORT; fi
  wait_cpu_idle "$pid" "$BL_PID"
  log "prepared point select: $target, $mode, 8 connections, ${DUR} s (+${WARM} s warm-up)"
  t0=$(proc_cpu_ticks "$BL_PID") p0=$(bl_status Com_stmt_prepare)
  line=$(loadgen_run prepared -P "$port" -c 8 -t 2 -d "$DUR" -w "$WARM" -m "$mode" -r "$SIZE" -S "$pid")
  t1=$(proc_cpu_ticks "$BL_PID") p1=$(bl_status Com_stmt_prepare)
  q=$(kv queries "$line")
  # MariaDB's ticks and prepares cover the warm-up too: charged to the
  # measured queries pro rata of the window
  echo "$line $(awk -v a="$t0" -v b="$t1" -v t="$(getconf CLK_TCK)" -v q="$q" -v pa="$p0" -v pb="$p1" \
    -v w="$(kv window_s "$line")" -v u="$WARM" \
    'BEGIN { if (q + 0 == 0 || w + 0 == 0) { print "mdb_cpu_us_per_query=n/a up_prepares_per_query=n/a"; exit }
             f = w / (w + u)
             printf "mdb_cpu_us_per_query=%.2f up_prepares_per_query=%.4f", (b - a) / t * 1e6 / q * f, (pb - pa) / q * f }')"
}

# prepared_node LABEL ARGS...: a node on the binlog MariaDB (warmed when it
# caches), both modes run; P[LABEL.MODE] gets the lines.
prepared_node() {
  local label=$1 mode line
  shift
  bl_node "ps-$label" "$@"
  if [ "$label" != passthrough ]; then
    log "warming: every id once, prepared"
    loadgen_run warm -P "$NODE_PORT" -c 8 -t 2 -W -r "$SIZE" -d 600 -m ps -S "$node_pid" >/dev/null
  fi
  for mode in ps psq; do
    line=$(prepared_run node "$mode")
    echo "$label.$mode $line" >>"$LOGS/prepared.txt"
    P[$label.$mode]+="$line"$'\n'
  done
  stop_node
}

section_prepared() {
  local reps=${BENCH_PS_REPEAT:-3} i label mode key line psq_node psq_floor cpu_ratio up
  declare -A P
  binlog_mdb_up
  : >"$LOGS/prepared.txt"
  for ((i = 1; i <= reps; i++)); do
    prepared_node binlog --auto-cache --invalidation binlog
    prepared_node writes --auto-cache --invalidation writes --cache-ttl-ms 3600000
    prepared_node passthrough --no-auto-cache
    for mode in ps psq; do
      line=$(prepared_run floor "$mode")
      echo "floor.$mode $line" >>"$LOGS/prepared.txt"
      P[floor.$mode]+="$line"$'\n'
    done
  done
  {
    echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') at commit $(git -C "$SRCDIR" rev-parse --short=12 HEAD 2>/dev/null || echo unknown),"
    echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end (2 shared cores: compare CPU per query, not qps)."
    echo
    echo "Prepared point selects (\`SELECT c FROM sbtest1 WHERE id=?\`, uniform ids) on the MariaDB with its"
    echo "binlog on, 8 connections, 2 load-generator threads, ${DUR} s after ${WARM} s of warm-up per run;"
    echo "\`ps\`: prepared once per connection, then executed; \`psq\`: prepared, executed and"
    echo "closed for every query (a query's latency covers both round trips). Cached: auto-cache on,"
    echo "every id warmed first, in binlog mode (the node answers a repeated PREPARE itself) and in"
    echo "writes mode (every PREPARE goes upstream); passthrough: \`--no-auto-cache\`; floor:"
    echo "\`tests/bench/floor.c\`, which answers PREPARE and EXECUTE from memory. Each line ran $reps"
    echo "times (runs of all lines interleaved); shown: the run with the median server CPU per query,"
    echo "and the range of that figure over the runs. \"MariaDB CPU\" and \"upstream PREPARE\" are the"
    echo "server's CPU and its \`Com_stmt_prepare\` per query in the same run."
    echo
    echo "| server | mode | qps | p95 ms | server CPU µs/query (range) | MariaDB CPU µs/query | upstream PREPARE/query | errors |"
    echo "|---|---|---|---|---|---|---|---|"
    for label in binlog writes passthrough floor; do
      for mode in ps psq; do
        key="$label.$mode"
        line=$(printf '%s' "${P[$key]:-}" | median_line server_cpu_us_per_query)
        printf '| %s | %s | %s | %s | %s (%s) | %s | %s | %s |\n' \
          "$(case $label in binlog) echo "node, cached, binlog mode" ;; writes) echo "node, cached, writes mode" ;;
             passthrough) echo "node, passthrough" ;; *) echo floor ;; esac)" "$mode" \
          "$(fmt "$(kv qps "$line")" 0)" "$(kv p95_ms "$line")" "$(kv server_cpu_us_per_query "$line")" \
          "$(printf '%s' "${P[$key]:-}" | median_line server_cpu_us_per_query range)" \
          "$(kv mdb_cpu_us_per_query "$line")" "$(kv up_prepares_per_query "$line")" "$(kv errors "$line")"
      done
    done
  } >"$B/block-prepared.md"
  psq_node=$(printf '%s' "${P[binlog.psq]:-}" | median_line server_cpu_us_per_query)
  psq_floor=$(printf '%s' "${P[floor.psq]:-}" | median_line server_cpu_us_per_query)
  cpu_ratio=$(ratio "$(kv server_cpu_us_per_query "$psq_node")" "$(kv server_cpu_us_per_query "$psq_floor")")
  up=$(kv up_prepares_per_query "$psq_node")
  echo "| 2b | prepare-execute-close, cached, binlog mode: upstream COM_STMT_PREPARE per query | ${up:-n/a} | ≤ 0.01 | $(verdict "${up:-9}" '<=' 0.01) |" >>"$B/targets.md"
  echo "| 2b | prepare-execute-close, cached, binlog mode: node CPU/query ÷ floor's | ${cpu_ratio}× | ≤ 1.2× | $(verdict "$cpu_ratio" '<=' 1.2) |" >>"$B/targets.md"
}
