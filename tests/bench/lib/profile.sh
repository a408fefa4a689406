# shellcheck shell=bash
# tests/bench/lib/profile.sh: the profile section of scripts/bench, the
# node's hot functions while it serves cached text point selects (perf
# record -g, or valgrind --tool=callgrind where perf cannot sample).
# Sourced by scripts/bench; writes $B/block-profile.md.

run_perf() {
  local data="$B/perf.data" out
  rm -f "$data"
  log "profiling the node (perf record -g) during a text point-select run, $PROF_DUR s"
  perf record -g --call-graph dwarf,8192 -F 499 -p "$CACHE_NODE_PID" -o "$data" >"$LOGS/perf-record.log" 2>&1 &
  perf_pid=$!
  sleep 0.5
  if ! kill -0 "$perf_pid" 2>/dev/null; then
    perf_pid=""
    cat "$LOGS/perf-record.log" >&2
    return 1
  fi
  line=$(loadgen_run profile -P "$CACHE_NODE_PORT" -c 64 -t 2 -d "$PROF_DUR" -w 0 -m text -r "$SIZE" -S "$CACHE_NODE_PID")
  echo "profiled run: $line" >&2
  kill -INT "$perf_pid" 2>/dev/null || true
  wait "$perf_pid" 2>/dev/null || true
  perf_pid=""
  [ -s "$data" ] || return 1
  perf report -i "$data" --stdio --no-children -g none --sort dso,sym --percent-limit 0.3 \
    >"$LOGS/perf-report.txt" 2>"$LOGS/perf-report.err" || return 1
  perf report -i "$data" --stdio --no-children -g none --sort dso \
    >"$LOGS/perf-dso.txt" 2>/dev/null || true
  perf report -i "$data" --stdio --children -g none --sort sym \
    >"$LOGS/perf-children.txt" 2>/dev/null || true
  incl=$(for f in process_input sbuf_flush sbuf_read epoll_wait cache_command try_hit store_lookup \
    find.isra.0 build_key spooky_hash64 serve_hit; do
    awk -v f="$f" '$3 == "[.]" && $4 == f { printf "%s %s %s\n", f, $1, $2; exit }' "$LOGS/perf-children.txt"
  done)
  out=$(grep -m 10 -E '^ +[0-9.]+%' "$LOGS/perf-report.txt" | awk '{
      pct = $1; dso = $2; $1 = ""; $2 = ""; $3 = ""; sym = $0; sub(/^ +/, "", sym)
      printf "| %d | %s | `%s` | %s |\n", NR, pct, sym, dso }')
  [ -n "$out" ] || return 1
  samples=$(grep -m1 '^# Samples: ' "$LOGS/perf-report.txt" | sed -n 's/^# Samples: \([^ ]*\).*/\1/p')
  event=$(grep -m1 '^# Samples: .* of event ' "$LOGS/perf-report.txt" | sed -n 's/^# Samples: .* of event //p' | tr -d "'")
  {
    echo "Method: \`perf record -g --call-graph dwarf -F 499 -p <node pid>\` (event: $event;"
    echo "$samples samples) during a separate $PROF_DUR s text-protocol point-select run"
    echo "(the load generator, 64 connections, every query a hit). Self time,"
    echo "share of the node's samples (\`perf report --no-children --sort dso,sym\`):"
    echo
    echo "| # | self | function | object |"
    echo "|---|---|---|---|"
    echo "$out"
    echo
    echo "By object (\`perf report --sort dso\`):"
    echo
    grep -m 6 -E '^ +[0-9.]+%' "$LOGS/perf-dso.txt" | awk '{ printf "%s %s", (NR > 1 ? "," : ""), $1 " " $2 } END { print "" }'
    echo
    echo "The node's own functions on the hit path, inclusive (children) and self:"
    echo
    echo "| function | inclusive | self |"
    echo "|---|---|---|"
    printf '%s\n' "$incl" | awk 'NF == 3 { printf "| `%s` | %s | %s |\n", $1, $2, $3 }'
    echo
    echo "No hardware PMU in this VM: samples come from the \`cpu-clock\` timer, so kernel"
    echo "time spent with interrupts off is charged to where they are turned back on"
    echo "(\`_raw_spin_unlock_irqrestore\`, \`finish_task_switch\`): those lines are the"
    echo "wake-ups and context switches of the loopback round trip, not lock contention."
  } >"$PROFILE_MD"
}

run_callgrind() {
  local cg_port cg_pid out small=2000
  ensure_packages valgrind
  cg_port=$(free_port)
  log "profiling with valgrind --tool=callgrind (a second node, $small ids, text protocol)"
  rm -rf "$B/node-callgrind" && mkdir -p "$B/node-callgrind"
  # Instrumentation starts off (the node generates an RSA key at start-up) and
  # is switched on after the warm-up, for the measured run only.
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$B/callgrind.out" "$NODE_BIN" \
    --upstream-db-url "mysql://app:pw@127.0.0.1:$MDB_PORT/sbtest" \
    --listen-address "127.0.0.1:$cg_port" --metrics-address 127.0.0.1:0 \
    --admin-address 127.0.0.1:0 --workers 2 --data-dir "$B/node-callgrind" \
    --auto-cache --cache-ttl-ms 600000 >"$LOGS/node-callgrind.log" 2>&1 &
  cg_pid=$!
  wait_mysql "$cg_port" "$cg_pid" 600 || { stop_pid "$cg_pid" 10; return 1; }
  sysbench tests/bench/warm.lua --mysql-host=127.0.0.1 --mysql-user=app --mysql-password=pw \
    --mysql-db=sbtest --tables=1 --table-size=$small --mysql-port="$cg_port" \
    --threads=8 --db-ps-mode=disable warm >"$LOGS/warm-callgrind.log" 2>&1
  callgrind_control -i on "$cg_pid" >"$LOGS/callgrind-control.log" 2>&1 || return 1
  SB_SIZE=$small tests/bench/cpu-per-query "$cg_pid" "$cg_port" 8 "$PROF_DUR" disable >>"$LOGS/profile.txt"
  stop_pid "$cg_pid" 60
  [ -s "$B/callgrind.out" ] || return 1
  callgrind_annotate --inclusive=no "$B/callgrind.out" >"$LOGS/callgrind.txt" 2>&1 || return 1
  out=$(grep -E '^ *[0-9,]+ +\( *[0-9.]+%\)' "$LOGS/callgrind.txt" | grep -v 'PROGRAM TOTALS' | awk 'NR <= 10 {
      match($0, /\( *[0-9.]+%\)/); pct = substr($0, RSTART + 1, RLENGTH - 2); gsub(/ /, "", pct)
      sym = substr($0, RSTART + RLENGTH); sub(/^ +/, "", sym); sub(/ \[.*$/, "", sym)
      printf "| %d | %s | `%s` |\n", NR, pct, sym }')
  {
    echo "Method: \`valgrind --tool=callgrind\` on a separate node, $PROF_DUR s of text-protocol"
    echo "point selects over $small cached ids, instrumented from the end of the warm-up"
    echo "(perf was not used). Instructions, self (\`callgrind_annotate --inclusive=no\`);"
    echo "kernel time is not seen:"
    echo
    echo "| # | self Ir | function |"
    echo "|---|---|---|"
    echo "$out"
  } >"$PROFILE_MD"
}

# section_profile: perf, falling back to callgrind; writes $B/block-profile.md.
section_profile() {
  PROFILE_MD="$B/block-profile.md"
  rm -f "$PROFILE_MD"
  cache_node_up
  if [ "$PROFILER" = perf ] && ! run_perf; then
    log "perf did not work here (see build-bench/logs/perf-*.log): falling back to callgrind"
    PROFILER=callgrind
  fi
  if [ "$PROFILER" = callgrind ] && ! run_callgrind; then
    log "callgrind profile failed (see build-bench/logs/)"
    rm -f "$PROFILE_MD"
  fi
}
