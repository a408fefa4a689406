# shellcheck shell=bash
# tests/bench/lib/compress.sh: the compression section of scripts/bench:
# the CPU cost of protocol compression (CLIENT_COMPRESS, zlib) per query.
# sysbench with --mysql-compression=off and =on, 8 threads: point selects
# (oltp_point_select) and oltp_read_only (ranges of 100 rows) through a node
# with --auto-cache after a warm-up run (the share of hits is reported), and
# the same straight to MariaDB for its own cost. The figure is the serving
# process's CPU time per query and, through the node, the bytes per query
# before and after compression (shoal_compressed_{plain,wire}_bytes_out_total).
# Sourced by scripts/bench (B, LOGS, SB_CONN, SB_DUR, ...). Writes
# $B/block-compression.md and adds its target row to $B/targets.md.
# shellcheck disable=SC2154 # node_pid, mdb_pid: set by scripts/bench

# comp_run TEST PORT PID on|off -> a summary line with the server's CPU per query
comp_run() {
  local test=$1 port=$2 pid=$3 comp=$4 t0 t1 out s q
  t0=$(proc_cpu_ticks "$pid")
  out=$(sysbench "$test" "${SB_CONN[@]}" --mysql-port="$port" --threads=8 --time="$SB_DUR" \
    --percentile=95 --db-ps-mode=disable --mysql-compression="$comp" --range-size=100 run 2>&1) ||
    log "sysbench $test (compression $comp) on port $port failed: $(echo "$out" | grep -m1 FATAL)"
  t1=$(proc_cpu_ticks "$pid")
  s=$(sysbench_summary "$out")
  q=$(kv queries "$s")
  echo "$s server_cpu_us_per_query=$(awk -v a="$t0" -v b="$t1" -v t="$(getconf CLK_TCK)" -v q="$q" \
    'BEGIN { if (q + 0 == 0) print "n/a"; else printf "%.2f", (b - a) / t * 1e6 / q }')"
}

per_query() { awk -v v="$1" -v q="$2" 'BEGIN { if (q + 0 == 0) print "n/a"; else printf "%.0f", v / q }'; }

cache_hits_now() {
  curl -s "http://127.0.0.1:$NODE_MPORT/metrics" | awk '$1 == "shoal_queries_total{destination=\"cache\"}" { print $2 }'
}

section_compression() {
  local t c key line f0 f1 p0 p1 w0 w1 h0 h1 q
  declare -A R
  start_node compression --auto-cache --cache-ttl-ms 600000
  wait_mdb_quiet
  for t in oltp_point_select oltp_read_only; do
    # warm the cache: the measured runs are hits
    sysbench "$t" "${SB_CONN[@]}" --mysql-port="$NODE_PORT" --threads=8 --time="$SB_DUR" \
      --db-ps-mode=disable --range-size=100 run >"$LOGS/comp-warm-$t.log" 2>&1 || true
    for c in off on; do
      wait_cpu_idle "$node_pid" "$mdb_pid"
      log "$t through the node, compression $c, 8 threads, $SB_DUR s"
      f0=$(msum "$NODE_MPORT" shoal_compressed_frames_out_total)
      p0=$(msum "$NODE_MPORT" shoal_compressed_plain_bytes_out_total)
      w0=$(msum "$NODE_MPORT" shoal_compressed_wire_bytes_out_total)
      h0=$(cache_hits_now)
      line=$(comp_run "$t" "$NODE_PORT" "$node_pid" "$c")
      f1=$(msum "$NODE_MPORT" shoal_compressed_frames_out_total)
      p1=$(msum "$NODE_MPORT" shoal_compressed_plain_bytes_out_total)
      w1=$(msum "$NODE_MPORT" shoal_compressed_wire_bytes_out_total)
      h1=$(cache_hits_now)
      q=$(kv queries "$line")
      line="$line frames_out=$((f1 - f0)) hit_pct=$(awk -v h=$((h1 - h0)) -v q="$q" 'BEGIN { if (q + 0 == 0) print "n/a"; else printf "%.0f", 100 * h / q }')"
      [ "$c" = on ] && line="$line plain_per_query=$(per_query $((p1 - p0)) "$q") wire_per_query=$(per_query $((w1 - w0)) "$q")"
      R["node $t $c"]=$line
      echo "node $t $c ${R["node $t $c"]}" | tee -a "$LOGS/compression.txt" >&2
      wait_cpu_idle "$node_pid" "$mdb_pid"
      log "$t straight to MariaDB, compression $c, 8 threads, $SB_DUR s"
      R["direct $t $c"]=$(comp_run "$t" "$MDB_PORT" "$mdb_pid" "$c")
      echo "direct $t $c ${R["direct $t $c"]}" | tee -a "$LOGS/compression.txt" >&2
    done
  done
  stop_node
  {
    echo "sysbench (text protocol, 8 threads, $SB_DUR s each) with \`--mysql-compression=off\` and \`=on\`,"
    echo "through a node with \`--auto-cache\` (after a warm-up run of the same workload) and"
    echo "straight to MariaDB. CPU is the serving process's (the node's, or MariaDB's) per query."
    echo "Bytes per query are what the node sent compressed sessions, before and after compression"
    echo "(\`shoal_compressed_{plain,wire}_bytes_out_total\`). oltp_read_only is 14 statements a"
    echo "transaction, 4 of them ranges of 100 rows; the hit column is the share answered from the"
    echo "cache. The node compresses at zlib level 1, MariaDB at zlib's default (6)."
    echo
    echo "| workload | path | compression | qps | p95 ms | server CPU µs/query | hits | bytes/query plain → sent | frames out |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for t in oltp_point_select oltp_read_only; do
      for key in node direct; do
        for c in off on; do
          line=${R["$key $t $c"]}
          local bytes=""
          [ -n "$(kv plain_per_query "$line")" ] && bytes="$(kv plain_per_query "$line") → $(kv wire_per_query "$line")"
          printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$t" \
            "$([ "$key" = node ] && echo "node" || echo "MariaDB direct")" "$c" \
            "$(fmt "$(kv qps "$line")" 0)" "$(kv p95_ms "$line")" "$(kv server_cpu_us_per_query "$line")" \
            "$([ "$key" = node ] && echo "$(kv hit_pct "$line") %")" "$bytes" "$(kv frames_out "$line")"
        done
      done
    done
  } >"$B/block-compression.md"
  local off on added
  off=$(kv server_cpu_us_per_query "${R["node oltp_point_select off"]}")
  on=$(kv server_cpu_us_per_query "${R["node oltp_point_select on"]}")
  added=$(awk -v a="$off" -v b="$on" 'BEGIN { if (a + 0 == 0) print "n/a"; else printf "%.2f", b / a }')
  echo "| 10 | cached point select, node CPU/query compressed ÷ plain | ${added}× | (measured) | |" >>"$B/targets.md"
}
