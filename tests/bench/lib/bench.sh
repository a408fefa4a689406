# shellcheck shell=bash
# tests/bench/lib/bench.sh: helpers for scripts/bench. Source it after
# scripts/lib/common.sh; it defines functions only (no side effects).

# kv KEY LINE: the value of KEY=value in a line of key=value pairs.
kv() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n1; }

# ratio A B [DIGITS]: A/B, or "n/a" when either is missing or B is 0.
ratio() {
  awk -v a="${1:-}" -v b="${2:-}" -v d="${3:-2}" 'BEGIN {
    if (a == "" || b == "" || b + 0 == 0) { print "n/a"; exit }
    printf "%.*f\n", d, a / b }'
}

# verdict VALUE OP TARGET: "met" or "missed" (OP is <= or >=), "n/a" if unknown.
verdict() {
  awk -v v="${1:-}" -v op="$2" -v t="$3" 'BEGIN {
    if (v == "" || v == "n/a") { print "n/a"; exit }
    ok = (op == "<=") ? (v + 0 <= t + 0) : (v + 0 >= t + 0)
    print ok ? "met" : "missed" }'
}

# fmt NUMBER DIGITS: a number rounded, or "n/a".
fmt() { awk -v v="${1:-}" -v d="${2:-0}" 'BEGIN { if (v == "") print "n/a"; else printf "%.*f\n", d, v }'; }

# wait_mysql PORT [PID] [TRIES]: wait until a login and SELECT 1 succeed on
# 127.0.0.1:PORT (as app/pw); fail early if PID dies.
wait_mysql() {
  local port=$1 pid=${2:-} tries=${3:-150} i
  for ((i = 0; i < tries; i++)); do
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then return 1; fi
    if mariadb --no-defaults -h127.0.0.1 -P"$port" -uapp -ppw -N -e 'SELECT 1' >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

# metric_sum MPORT NAME: the sum of a Prometheus series over all its labels
# (0 when absent, empty when the endpoint does not answer).
metric_sum() {
  local body
  body=$(curl -s --max-time 5 "http://127.0.0.1:$1/metrics") || return 0
  printf '%s\n' "$body" | awk -v n="$2" '
    $1 == n || index($1, n "{") == 1 { s += $NF; found = 1 }
    END { printf "%.0f\n", s }'
}

# sysbench_summary OUTPUT: key=value line out of a sysbench run's report.
sysbench_summary() {
  printf '%s\n' "$1" | awk '
    /queries:/ && !q { q = $2; qps = $3; gsub(/[(]/, "", qps); }
    /transactions:/ && !t { t = $2; tps = $3; gsub(/[(]/, "", tps); }
    /95th percentile:/ { p95 = $3 }
    /ignored errors:/ { err = $3 }
    /avg:/ && !avg { avg = $2 }
    END { printf "queries=%s qps=%s transactions=%s tps=%s p95_ms=%s avg_ms=%s errors=%s\n",
          q, qps, t, tps, p95, avg, err }'
}

# proc_cpu_ticks PID: user+system clock ticks a process has used.
proc_cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }

# machine_info: markdown bullet list describing this machine and build.
machine_info() {
  local root=$1 cpu cores kern commit dirty mdbv sbv ccv virt mem
  cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
  cores=$(nproc)
  kern=$(uname -sr)
  mem=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
  commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  dirty=""
  if ! git -C "$root" diff --quiet HEAD -- src 2>/dev/null; then
    dirty=" (src/ has uncommitted changes: $(git -C "$root" diff --name-only HEAD -- src | tr '\n' ' ' | sed 's/ $//'))"
  fi
  mdbv=$(mariadbd --version 2>/dev/null | sed -n 's/.*Ver \([^ ]*\).*/\1/p')
  sbv=$(sysbench --version 2>/dev/null)
  ccv=$(cc --version 2>/dev/null | head -n1)
  virt=$(systemd-detect-virt 2>/dev/null || true)
  [ -n "$virt" ] && [ "$virt" != none ] || virt=$(grep -q hypervisor /proc/cpuinfo && echo "a VM (hypervisor flag set)" || echo "not detected")
  printf -- '- Date: %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
  printf -- '- CPU: %s, %s cores online; %s RAM; virtualisation (systemd-detect-virt): %s\n' "$cpu" "$cores" "$mem" "$virt"
  printf -- '- Kernel: %s\n' "$kern"
  printf -- '- Git commit: %s%s\n' "$commit" "$dirty"
  printf -- '- MariaDB %s, %s, %s\n' "$mdbv" "$sbv" "$ccv"
}

# replace_block FILE BEGIN END NEWFILE: replace the lines from the BEGIN
# marker to the END marker (inclusive) of FILE with NEWFILE's content.
replace_block() {
  local file=$1 begin=$2 end=$3 new=$4 tmp
  tmp=$(mktemp "$file.XXXXXX")
  awk -v b="$begin" -v e="$end" -v nf="$new" '
    $0 == b { while ((getline l < nf) > 0) print l; skip = 1; next }
    $0 == e && skip { skip = 0; next }
    !skip { print }' "$file" >"$tmp"
  mv "$tmp" "$file"
}

# median_line KEY [range]: of the key=value lines on stdin, the one whose KEY
# is the median (the lower middle one for an even count); with "range", the
# smallest and largest KEY instead, as "min–max".
median_line() {
  local key=$1 mode=${2:-line}
  awk -v k="$key" -v m="$mode" '
    NF { v = ""; for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) v = substr($i, length(k) + 2)
         n++; val[n] = v + 0; line[n] = $0 }
    END {
      if (!n) exit
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
        if (val[j] < val[i]) { t = val[i]; val[i] = val[j]; val[j] = t; t = line[i]; line[i] = line[j]; line[j] = t }
      if (m == "range") printf "%s–%s\n", val[1], val[n]
      else print line[int((n + 1) / 2)]
    }'
}

# other_begin PID...: start measuring the CPU used by everything except this
# shell's children and the PIDs given (the servers); other_end prints it as a
# percentage of all CPUs over the interval. A load indicator: the machine may
# be shared, and the load generator shares its cores anyway.
other_begin() {
  OTHER_SELF=$BASHPID # whose reaped children count as ours (not a $(...) subshell)
  OTHER_PIDS=("$@")
  OTHER_T0=$(_other_sample)
}
other_end() {
  local t1
  t1=$(_other_sample)
  awk -v a="$OTHER_T0" -v b="$t1" 'BEGIN {
    split(a, x, " "); split(b, y, " ")
    tot = y[2] - x[2]; if (tot <= 0) { print "n/a"; exit }
    o = (y[1] - x[1]) - (y[3] - x[3]) - (y[4] - x[4])
    if (o < 0) o = 0
    printf "%.0f\n", 100 * o / tot }'
}
# busy total children servers, all in clock ticks
_other_sample() {
  local busy total kids srv=0 p
  read -r busy total < <(awk '/^cpu / { b = $2 + $3 + $4 + $7 + $8 + $9; print b, b + $5 + $6 }' /proc/stat)
  kids=$(awk '{ print $16 + $17 }' "/proc/$OTHER_SELF/stat")
  for p in "${OTHER_PIDS[@]}"; do
    [ -n "$p" ] && [ -r "/proc/$p/stat" ] && srv=$((srv + $(proc_cpu_ticks "$p")))
  done
  echo "$busy $total $kids $srv"
}

# compare_rows DIRECT CACHED: compare two tab-separated dumps of the
# leaderboard (rows keyed by their first column). Prints "identical N",
# "different K N", or "lastcol N" followed by one "ID<tab>direct<tab>cached"
# line per row that differs in its last column only (top_category: a
# customer whose top categories tie gets either one from LIMIT 1).
compare_rows() {
  awk -F'\t' '
    FNR == NR { a[$1] = $0; last[$1] = $NF; n1++; next }
    { n2++
      if (!($1 in a)) { other++; next }
      if (a[$1] == $0) next
      x = a[$1]; y = $0; sub(/\t[^\t]*$/, "", x); sub(/\t[^\t]*$/, "", y)
      if (x == y) { lc[++nl] = $1 "\t" last[$1] "\t" $NF } else other++ }
    END {
      if (n1 == 0 || n2 == 0 || n1 != n2) other++
      if (other) { printf "different %d %d\n", other + nl, n1; exit }
      if (!nl) { printf "identical %d\n", n1; exit }
      printf "lastcol %d\n", n1
      for (i = 1; i <= nl; i++) print lc[i] }' "$1" "$2"
}

# proc_rss_kb PID: resident set size of a process in KiB (empty if gone).
proc_rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

# loadgen_run LOGNAME ARGS...: run $LOADGEN (tests/bench/loadgen.c) with
# ARGS, append its key=value line to $LOGS/LOGNAME.txt (prefixed by the
# arguments) and print it. A loadgen that fails without a line (nothing could
# connect, or it crashed) gives "failed=1 errors=all" instead, so a run
# against a server that refuses everything is reported, not fatal.
loadgen_run() {
  local name=$1 out rc=0
  shift
  out=$("$LOADGEN" "$@" 2>>"$LOGS/loadgen.err") || rc=$?
  [ -n "$out" ] || out="failed=1 rc=$rc errors=all error_codes=see_loadgen.err"
  printf '%s | %s\n' "$*" "$out" >>"$LOGS/$name.txt"
  printf '%s\n' "$out"
}

# sampler_start MPORT METRIC FILE: poll METRIC (summed over its labels) on
# the node's /metrics every 0.5 s in the background and keep the largest
# value seen in FILE; sets SAMPLER_PID. sampler_stop (call it in the same
# shell, not in $(...)) stops it and sets SAMPLER_PEAK.
sampler_start() {
  local mport=$1 metric=$2 file=$3
  echo 0 >"$file"
  (
    max=0
    while :; do
      v=$(metric_sum "$mport" "$metric")
      if [ -n "$v" ] && [ "$v" -gt "$max" ]; then max=$v; echo "$max" >"$file"; fi
      sleep 0.5
    done
  ) &
  SAMPLER_PID=$!
  SAMPLER_FILE=$file
}
sampler_stop() {
  if [ -n "${SAMPLER_PID:-}" ]; then
    kill "$SAMPLER_PID" 2>/dev/null || true
    wait "$SAMPLER_PID" 2>/dev/null || true
    SAMPLER_PID=""
  fi
  # shellcheck disable=SC2034 # read by the sections (scaling.sh)
  SAMPLER_PEAK=$(cat "$SAMPLER_FILE" 2>/dev/null || echo n/a)
}

# ms_diff A B: B - A (milliseconds), or n/a.
ms_diff() {
  awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "" || b == "") print "n/a"; else printf "%.2f\n", b - a }'
}

# msum MPORT NAME: metric_sum, 0 when the endpoint does not answer.
msum() { local v; v=$(metric_sum "$1" "$2"); echo "${v:-0}"; }

# wait_cpu_idle PID...: wait (up to 15 s) until these processes together use
# less than 5% of a core over half a second, so that one run's aftermath (a
# node closing thousands of sessions and their upstream connections) is not
# charged to the next run.
wait_cpu_idle() {
  local i a b p hz
  hz=$(getconf CLK_TCK)
  for ((i = 0; i < 30; i++)); do
    a=0 b=0
    for p in "$@"; do [ -r "/proc/$p/stat" ] && a=$((a + $(proc_cpu_ticks "$p"))); done
    sleep 0.5
    for p in "$@"; do [ -r "/proc/$p/stat" ] && b=$((b + $(proc_cpu_ticks "$p"))); done
    [ $(((b - a) * 100)) -lt $((hz * 5 / 2)) ] && return 0
  done
  log "servers still busy after 15 s: going on"
}
