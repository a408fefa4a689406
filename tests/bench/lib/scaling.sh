# shellcheck shell=bash
# tests/bench/lib/scaling.sh: section 1 of scripts/bench, cached point
# selects at many client connections (tests/bench/loadgen.c) on the node,
# the floor server and MariaDB direct, plus the sysbench cross-check at 8
# threads (tests/bench/cpu-per-query). Sourced by scripts/bench, which sets
# the variables used here (B, LOGS, LOADGEN, ports and pids, DUR, WARM,
# CONNS, SIZE, ...). Writes $B/block-scaling.md and adds to $B/targets.md.
# shellcheck disable=SC2154 # node_pid, floor_pid, mdb_pid: set by scripts/bench

# wait_mdb_quiet: wait (up to 20 s) until MariaDB has few client threads
# left, so that the sessions of the previous run do not count against
# max_connections in the next one.
wait_mdb_quiet() {
  local i n
  for ((i = 0; i < 100; i++)); do
    n=$(root_sql -N -e "SHOW GLOBAL STATUS LIKE 'Threads_connected'" 2>/dev/null | awk '{print $2}')
    [ -n "$n" ] && [ "$n" -lt 20 ] && return 0
    sleep 0.2
  done
  log "$UP_NAME still has $n client threads"
}

# cache_node_up: the node the point selects and the profile use, started
# and warmed once (every id, text and prepared, by the load generator itself,
# so that the keys are the ones it looks up).
cache_node_up() {
  [ -n "${CACHE_NODE_PID:-}" ] && kill -0 "$CACHE_NODE_PID" 2>/dev/null && return 0
  start_node cache --auto-cache --cache-ttl-ms 3600000
  CACHE_NODE_PID=$node_pid CACHE_NODE_PORT=$NODE_PORT CACHE_NODE_MPORT=$NODE_MPORT
  local m
  for m in text ps; do
    log "warming the node's cache: every id of sbtest1 once, $m"
    loadgen_run warm -P "$NODE_PORT" -c 8 -t 2 -W -r "$SIZE" -d 600 -m "$m" -S "$node_pid" >&2
  done
  WARM_ENTRIES=$(msum "$NODE_MPORT" shoal_cache_entries)
  log "cache entries after warming: $WARM_ENTRIES (expected $((2 * SIZE)))"
}

# one_point_run TARGET MODE CONNS: one loadgen run; sets S[MODE.TARGET.CONNS].
one_point_run() {
  local target=$1 mode=$2 n=$3 pid port line peak h0 m0
  case $target in
    node) pid=$CACHE_NODE_PID port=$CACHE_NODE_PORT ;;
    floor) pid=$floor_pid port=$FLOOR_PORT ;;
    mariadb) pid=$mdb_pid port=$MDB_PORT ;;
  esac
  if [ "$target" = mariadb ] && [ "$n" -gt $((MDB_MAXCONN - 16)) ]; then
    S[$mode.$target.$n]="skipped=1"
    return
  fi
  wait_mdb_quiet
  wait_cpu_idle "$CACHE_NODE_PID" "$floor_pid" "$mdb_pid"
  log "point select, $mode, $target, $n connections, ${DUR} s (+${WARM} s warm-up)"
  if [ "$target" = node ]; then
    sampler_start "$CACHE_NODE_MPORT" "$UPSTREAM_METRIC" "$B/upstream-peak"
    h0=$(msum "$CACHE_NODE_MPORT" shoal_cache_hits_total)
    m0=$(msum "$CACHE_NODE_MPORT" shoal_cache_misses_total)
  fi
  other_begin "$CACHE_NODE_PID" "$mdb_pid" "$floor_pid"
  line=$(loadgen_run point-select -P "$port" -c "$n" -t 2 -d "$DUR" -w "$WARM" -m "$mode" -r "$SIZE" -S "$pid")
  line="$line other_cpu_pct=$(other_end)"
  if [ "$target" = node ]; then
    sampler_stop
    peak=$SAMPLER_PEAK
    line="$line upstream_peak=$peak hits=$(($(msum "$CACHE_NODE_MPORT" shoal_cache_hits_total) - h0))"
    line="$line misses=$(($(msum "$CACHE_NODE_MPORT" shoal_cache_misses_total) - m0))"
  fi
  echo "$target $line" >&2
  S[$mode.$target.$n]=$line
}

# scaling_row MODE CONNS: one markdown row of the connection-scaling table.
scaling_row() {
  local m=$1 n=$2 nl fl ml
  nl=${S[$m.node.$n]} fl=${S[$m.floor.$n]} ml=${S[$m.mariadb.$n]}
  cell() { # LINE: "qps / p95 / CPU"
    if [ "$(kv skipped "$1")" = 1 ]; then echo "skipped (over max_connections $MDB_MAXCONN)"; return; fi
    if [ "$(kv failed "$1")" = 1 ]; then echo "failed (no connection)"; return; fi
    printf '%s / %s / %s' "$(fmt "$(kv qps "$1")" 0)" "$(kv p95_ms "$1")" "$(kv server_cpu_us_per_query "$1")"
  }
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s |\n' "$n" \
    "$(kv established "$nl")" "$(cell "$nl")" "$(kv error_codes "$nl")" "$(kv upstream_peak "$nl")" \
    "$(kv loadgen_cpu_us_per_query "$nl")" "$(cell "$fl")" "$(cell "$ml")" "$(kv error_codes "$ml")" \
    "$(ratio "$(kv server_cpu_us_per_query "$nl")" "$(kv server_cpu_us_per_query "$fl")")×" \
    "$(kv other_cpu_pct "$nl")" "$(kv other_cpu_pct "$fl")" "$(kv other_cpu_pct "$ml")"
}

# scaling_ratio MODE TARGET: qps at 4096 (or the largest level >= 4000)
# over qps at 64 connections.
scaling_ratio() {
  local hi=""
  for n in $CONNS; do [ "$n" -ge 4000 ] && [ -z "$hi" ] && hi=$n; done
  [ -n "$hi" ] || { echo n/a; return; }
  ratio "$(kv qps "${S[$1.$2.$hi]:-}")" "$(kv qps "${S[$1.$2.64]:-}")" 3
}

section_scaling() {
  declare -gA S
  local m n t peak8k="n/a" cpu_lo cpu_hi
  cache_node_up
  for m in ps text; do
    for n in $CONNS; do
      for t in node floor mariadb; do one_point_run "$t" "$m" "$n"; done
    done
  done
  for m in ps text; do
    [ -n "${S[$m.node.8000]:-}" ] && peak8k=$(awk -v a="$peak8k" -v b="$(kv upstream_peak "${S[$m.node.8000]}")" \
      'BEGIN { if (a == "n/a" || b + 0 > a + 0) print b; else print a }')
  done
  {
    echo "Load generator: \`tests/bench/loadgen.c\` (one process, 2 threads with an epoll loop"
    echo "each, closed loop, no think time), \`SELECT c FROM sbtest1 WHERE id=<uniform"
    echo "random of $SIZE>\` as text (COM_QUERY) or prepared once per connection and"
    echo "executed (COM_STMT_EXECUTE). $DUR s measured after $WARM s of warm-up, per line."
    echo "The node's cache was warmed with every id in both protocols first (${WARM_ENTRIES:-?}"
    echo "entries). Each cell: qps / p95 ms / server CPU µs per query (the server process's"
    echo "user+system time from \`/proc/PID/stat\` over the measured window ÷ queries)."
    echo "\"upstream peak\": largest \`$UPSTREAM_METRIC\` seen on \`/metrics\` (polled every 0.5 s)"
    echo "during the node's run; \"loadgen µs/q\": the load generator's own CPU per query."
    echo "$UP_NAME direct is skipped above its max_connections ($MDB_MAXCONN). \"Other load\": CPU used by"
    echo "processes other than the three servers and the load generator (other users of this"
    echo "machine), in % of all cores, during that run: a run with high other load is not comparable."
    for m in ps text; do
      echo
      echo "**$([ $m = ps ] && echo "Prepared (binary protocol)" || echo "Text protocol")**"
      echo
      echo "| conns | node established | **node** qps / p95 / CPU µs | node errors | upstream peak | loadgen µs/q | floor qps / p95 / CPU µs | $UP_NAME qps / p95 / CPU µs | $UP_NAME errors | node/floor CPU | other load % (node / floor / $UP_NAME run) |"
      echo "|---|---|---|---|---|---|---|---|---|---|---|"
      for n in $CONNS; do scaling_row "$m" "$n"; done
    done
    echo
    echo "Hits / misses on the node over all of its measured runs: prepared $(sum_kv ps hits) / $(sum_kv ps misses), text $(sum_kv text hits) / $(sum_kv text misses)."
  } >"$B/block-scaling.md"
  {
    echo "# conns node_qps node_cpu_us floor_qps floor_cpu_us mariadb_qps mariadb_cpu_us (prepared; - : not run)"
    for n in $CONNS; do
      local row="$n" t v
      for t in node floor mariadb; do
        for v in qps server_cpu_us_per_query; do
          row+=" $(kv "$v" "${S[ps.$t.$n]:-}" | sed 's/^$/-/')"
        done
      done
      echo "$row"
    done
  } | plot_data scaling
  for m in ps text; do
    local lim label nr fr
    if [ $m = ps ]; then lim=1.2 label=prepared; else lim=1.1 label=text; fi
    cpu_lo=$(ratio "$(kv server_cpu_us_per_query "${S[$m.node.64]:-}")" "$(kv server_cpu_us_per_query "${S[$m.floor.64]:-}")")
    cpu_hi=$(for n in $CONNS; do ratio "$(kv server_cpu_us_per_query "${S[$m.node.$n]}")" "$(kv server_cpu_us_per_query "${S[$m.floor.$n]}")"; done | grep -v n/a | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%s–%s", lo, hi }')
    echo "| 1 | cached point select, $label: node CPU/query ÷ floor's, at 64 connections (range over all levels: ${cpu_hi:-n/a}) | ${cpu_lo}× | ≤ ${lim}× | $(verdict "$cpu_lo" '<=' "$lim") |" >>"$B/targets.md"
    nr=$(scaling_ratio $m node) fr=$(scaling_ratio $m floor)
    echo "| 1 | $label: node qps(4096)/qps(64) = $nr, floor's = $fr; node's ÷ floor's | $(ratio "$nr" "$fr")× | ≥ 0.85× | $(verdict "$(ratio "$nr" "$fr")" '>=' 0.85) |" >>"$B/targets.md"
  done
  echo "| 1 | peak upstream connections during the 8000-connection runs | $peak8k | ≤ 64 | $(verdict "$peak8k" '<=' 64) |" >>"$B/targets.md"
}

# sum_kv MODE KEY: the sum of KEY over the node's lines of that protocol.
sum_kv() {
  local s=0 n v
  for n in $CONNS; do
    v=$(kv "$2" "${S[$1.node.$n]:-}")
    [[ $v =~ ^[0-9]+$ ]] && s=$((s + v))
  done
  echo "$s"
}

# section_sysbench: the same comparison at 8 threads with sysbench
# oltp_point_select (the method of tests/bench/cpu-per-query), as a
# cross-check of the load generator's figures with another client.
section_sysbench() {
  local rep mode target pid port line targets="node mariadb floor" qc0 qc1
  declare -A R
  cache_node_up
  px_start && targets+=" proxysql"
  for mode in disable auto; do
    for target in node proxysql; do
      [[ " $targets " == *" $target "* ]] || continue
      port=$CACHE_NODE_PORT
      [ "$target" = proxysql ] && port=$PX_PORT
      log "warming the $target's cache for sysbench's sessions: every id once, --db-ps-mode=$mode"
      sysbench tests/bench/warm.lua "${SB_CONN[@]}" --mysql-port="$port" \
        --threads=8 --db-ps-mode=$mode warm >"$LOGS/warm-sysbench-$target-$mode.log" 2>&1 ||
        log "sysbench warm-up ($target, $mode) failed: see build-bench/logs/warm-sysbench-$target-$mode.log"
    done
  done
  for ((rep = 1; rep <= REPEAT; rep++)); do
    for mode in auto disable; do
      for target in $targets; do
        case $target in
          node) pid=$CACHE_NODE_PID port=$CACHE_NODE_PORT ;;
          mariadb) pid=$mdb_pid port=$MDB_PORT ;;
          floor) pid=$floor_pid port=$FLOOR_PORT ;;
          proxysql) pid=$PX_PID port=$PX_PORT qc0=$(px_qc_counts) ;;
        esac
        [ "$target" = node ] && qc0="hits=$(msum "$CACHE_NODE_MPORT" shoal_cache_hits_total)"
        log "sysbench point select $rep/$REPEAT, $target, --db-ps-mode=$mode, 8 threads, $SB_DUR s"
        line=$(SB_SIZE=$SIZE tests/bench/cpu-per-query "$pid" "$port" 8 "$SB_DUR" $mode 2>>"$LOGS/sysbench.err") || line="failed=1"
        # the answers the cache gave during the run (the node's hit counter,
        # ProxySQL's Query_Cache_count_GET_OK)
        case $target in
          node) qc1="hits=$(msum "$CACHE_NODE_MPORT" shoal_cache_hits_total)" ;;
          proxysql) qc1=$(px_qc_counts) ;;
        esac
        case $target in
          node | proxysql) line+=" cache_hits=$(($(kv hits "$qc1") - $(kv hits "$qc0")))" ;;
        esac
        echo "$target $line" | tee -a "$LOGS/sysbench-point-select.txt" >&2
        R[$mode.$target]+="$line"$'\n'
      done
    done
  done
  px_stop
  {
    echo "\`sysbench oltp_point_select\` through \`tests/bench/cpu-per-query\` (8 threads, $SB_DUR s,"
    echo "each line run $REPEAT time(s), interleaved, median CPU per query shown). sysbench's"
    echo "sessions have other settings than the load generator's (so other cache keys): the"
    echo "cache was warmed again with every id through sysbench (\`tests/bench/warm.lua\`)."
    echo
    echo "\"cached\": the share of the run's queries the cache answered (the node's"
    echo "\`shoal_cache_hits_total\`, ProxySQL's \`Query_Cache_count_GET_OK\`); the rest went to MariaDB."
    if [[ " $targets " == *" proxysql "* ]]; then
      echo "\"proxysql\": ProxySQL $("$(px_bin)" --version 2>/dev/null | head -n1 | awk '{print $3}' | tr -d ,)"
      echo "(2 threads, the node's worker count) with one rule caching this point select for an hour"
      echo "in its own query cache (\`cache_ttl\`), warmed the same way."
    else
      echo "ProxySQL's query cache was not measured in this run (no ProxySQL binary: PROXYSQL_BIN)."
    fi
    echo
    echo "| protocol | server | qps | p95 ms | errors | server CPU µs/query | vs floor | cached |"
    echo "|---|---|---|---|---|---|---|---|"
    for mode in auto disable; do
      local fcpu cached
      fcpu=$(kv server_cpu_us_per_query "$(printf '%s' "${R[$mode.floor]}" | median_line server_cpu_us_per_query)")
      for target in floor node proxysql mariadb; do
        [[ " $targets " == *" $target "* ]] || continue
        line=$(printf '%s' "${R[$mode.$target]}" | median_line server_cpu_us_per_query)
        [ "$(kv failed "$line")" = 1 ] && line="errors=failed_(see_logs/sysbench.err)"
        cached=""
        case $target in
          node | proxysql) cached="$(awk -v h="$(kv cache_hits "$line")" -v q="$(kv queries "$line")" \
            'BEGIN { if (q + 0 > 0) printf "%.1f %%", 100 * h / q; else print "n/a" }')" ;;
        esac
        printf '| %s | %s | %s | %s | %s | %s | %s× | %s |\n' "$([ $mode = auto ] && echo prepared || echo text)" "$target" \
          "$(fmt "$(kv qps "$line")" 0)" "$(kv p95_ms "$line")" "$(kv errors "$line")" "$(kv server_cpu_us_per_query "$line")" \
          "$(ratio "$(kv server_cpu_us_per_query "$line")" "$fcpu")" "$cached"
      done
    done
  } >"$B/block-sysbench.md"
  {
    local label
    echo "# server prepared_cpu_us text_cpu_us (medians)"
    for target in floor node proxysql mariadb; do
      [[ " $targets " == *" $target "* ]] || continue
      case $target in
        mariadb) label=MariaDB ;;
        proxysql) label=ProxySQL-query-cache ;;
        *) label=$target ;;
      esac
      printf '%s %s %s\n' "$label" \
        "$(kv server_cpu_us_per_query "$(printf '%s' "${R[auto.$target]}" | median_line server_cpu_us_per_query)")" \
        "$(kv server_cpu_us_per_query "$(printf '%s' "${R[disable.$target]}" | median_line server_cpu_us_per_query)")"
    done
  } | plot_data cpu
}
