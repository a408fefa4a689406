# shellcheck shell=bash
# tests/bench/lib/users.sh: the users section of scripts/bench: cached
# point selects of one hot query shape by 1 user and by 50 users (each
# acting upstream as itself), with cache_scope=user (results per user) and
# shared (results shared, each user's hits gated by its grant verdict):
# hit rate, upstream work (misses, refreshes, grant checks) and the node's
# CPU per query. Then the same 50 users in steady state on the MariaDB with
# its binlog on (consistency.sh), in binlog mode, against the same node
# with grant_check_binlog_ms 1000 (verdicts every second, as before issue
# #23): every statement the node sent the upstream per hit, after a warm-up
# run. Sourced by scripts/bench (B, LOGS, LOADGEN, DUR, ...).
# Writes $B/block-users.md and adds its target rows to $B/targets.md.
# shellcheck disable=SC2154 # node_pid, mdb_pid: set by scripts/bench

USERS_N=50
USERS_RANGE=1000     # the hot keys of the shape
USERS_CONNS=64
USERS_TTL_MS=4000    # short, so that expiry and refresh happen within a run

users_setup() {
  local i sql=""
  for ((i = 1; i <= USERS_N; i++)); do
    sql+="CREATE USER IF NOT EXISTS 'bu$i'@'%' IDENTIFIED BY 'bupw'; GRANT SELECT ON sbtest.* TO 'bu$i'@'%';"
  done
  root_sql -e "$sql"
  USERS_ALLOWED=$(seq -f 'bu%g:bupw' 1 "$USERS_N" | paste -sd, -)
}

# users_run LABEL USERS SCOPE: one node, one loadgen run; sets U[LABEL].
users_run() {
  local label=$1 n=$2 scope=$3 line h0 m0 r0 g0 d0
  start_node "users-$label" --auto-cache --cache-ttl-ms "$USERS_TTL_MS" --cache-scope "$scope" \
    --allowed-users "$USERS_ALLOWED"
  wait_mdb_quiet
  wait_cpu_idle "$node_pid" "$mdb_pid"
  h0=$(msum "$NODE_MPORT" shoal_cache_hits_total) m0=$(msum "$NODE_MPORT" shoal_cache_misses_total)
  r0=$(msum "$NODE_MPORT" shoal_cache_refreshes_total) g0=$(msum "$NODE_MPORT" shoal_cache_grant_checks_total)
  d0=$(msum "$NODE_MPORT" shoal_cache_grant_denied_total)
  log "point select, $n user(s), cache_scope=$scope, $USERS_CONNS connections, $USERS_RANGE hot ids, ${DUR} s"
  line=$(loadgen_run users -P "$NODE_PORT" -u bu -U "$n" -p bupw -c "$USERS_CONNS" -t 2 -d "$DUR" -w 0 \
    -r "$USERS_RANGE" -S "$node_pid")
  line="$line hits=$(($(msum "$NODE_MPORT" shoal_cache_hits_total) - h0))"
  line="$line misses=$(($(msum "$NODE_MPORT" shoal_cache_misses_total) - m0))"
  line="$line refreshes=$(($(msum "$NODE_MPORT" shoal_cache_refreshes_total) - r0))"
  line="$line checks=$(($(msum "$NODE_MPORT" shoal_cache_grant_checks_total) - g0))"
  line="$line denied=$(($(msum "$NODE_MPORT" shoal_cache_grant_denied_total) - d0))"
  line="$line entries=$(msum "$NODE_MPORT" shoal_cache_entries)"
  stop_node
  echo "$label $line" >&2
  U[$label]=$line
}

# up_statements: every statement MariaDB (the binlog one) was sent:
# Questions (queries and executes) + Com_stmt_prepare + Com_stmt_close.
up_statements() {
  bl_sql -N -e "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions', 'Com_stmt_prepare', 'Com_stmt_close')" |
    awk '{ s += $2 } END { print s + 0 }'
}

# users_steady LABEL SCOPE ARGS...: 50 users, a node in binlog mode on the
# binlog MariaDB, a warm-up run, then a measured one; sets U[LABEL] (with
# up=statements sent upstream during it, its own status query left out).
users_steady() {
  local label=$1 scope=$2 line h0 s0 s1
  shift 2
  bl_node "users-$label" --auto-cache --cache-scope "$scope" --allowed-users "$USERS_ALLOWED" "$@"
  log "steady state, $USERS_N users, cache_scope=$scope ($*): warm-up, ${DUR} s"
  loadgen_run users -P "$NODE_PORT" -u bu -U "$USERS_N" -p bupw -c "$USERS_CONNS" -t 2 -d "$DUR" -w 0 \
    -r "$USERS_RANGE" -S "$node_pid" >/dev/null
  wait_cpu_idle "$node_pid" "$BL_PID"
  h0=$(msum "$NODE_MPORT" shoal_cache_hits_total) s0=$(up_statements)
  line=$(loadgen_run users -P "$NODE_PORT" -u bu -U "$USERS_N" -p bupw -c "$USERS_CONNS" -t 2 -d "$DUR" -w 0 \
    -r "$USERS_RANGE" -S "$node_pid")
  s1=$(up_statements)
  line="$line hits=$(($(msum "$NODE_MPORT" shoal_cache_hits_total) - h0)) up=$((s1 - s0 - 1))"
  stop_node
  echo "$label $line" >&2
  U[$label]=$line
}

per_hit() { awk -v u="$(kv up "$1")" -v h="$(kv hits "$1")" 'BEGIN { if (h + 0 == 0) print "n/a"; else printf "%.5f", u / h }'; }

users_hit_rate() { # LINE -> percent of hits among cache lookups that hit or missed
  awk -v h="$(kv hits "$1")" -v m="$(kv misses "$1")" 'BEGIN { if (h + m == 0) print "n/a"; else printf "%.2f", 100 * h / (h + m) }'
}

section_users() {
  declare -A U
  local l
  users_setup
  users_run one 1 user
  users_run many-user "$USERS_N" user
  users_run many-shared "$USERS_N" shared
  binlog_mdb_up
  bl_sql -e "$(for ((l = 1; l <= USERS_N; l++)); do
    printf "CREATE USER IF NOT EXISTS 'bu%d'@'%%' IDENTIFIED BY 'bupw'; GRANT SELECT ON sbtest.* TO 'bu%d'@'%%';" "$l" "$l"
  done)"
  users_steady before-user user --grant-check-binlog-ms 1000 --prepare-answer-ms 0
  users_steady before-shared shared --grant-check-binlog-ms 1000 --prepare-answer-ms 0
  users_steady binlog-user user
  users_steady binlog-shared shared
  {
    echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') at commit $(git -C "$SRCDIR" rev-parse --short=12 HEAD 2>/dev/null || echo unknown),"
    echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end (2 shared cores: compare CPU per query, not qps)."
    echo
    echo "One query shape (\`SELECT c FROM sbtest1 WHERE id=<id>\`, text protocol, $USERS_RANGE hot ids),"
    echo "$USERS_CONNS connections, ${DUR} s from a cold cache (\`loadgen -U\`: connection *i* logs in as"
    echo "\`bu<i mod N + 1>\`, each user acting upstream as itself), TTL $USERS_TTL_MS ms (refresh at half),"
    echo "\`grant_check_ms\` 1000. Hit rate: hits ÷ (hits + misses). Upstream work: the misses, the background"
    echo "refreshes and the grant checks (one \`COM_STMT_PREPARE\` each) the node sent."
    echo
    echo "| users | cache_scope | queries | qps | hit rate % | misses | refreshes | grant checks | entries at the end | node CPU µs/query | p50 / p99 ms |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for l in one many-user many-shared; do
      local line=${U[$l]:-failed=1}
      printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s |\n' \
        "$([ $l = one ] && echo 1 || echo "$USERS_N")" "$([ $l = many-shared ] && echo shared || echo user)" \
        "$(kv queries "$line")" "$(fmt "$(kv qps "$line")" 0)" "$(users_hit_rate "$line")" \
        "$(kv misses "$line")" "$(kv refreshes "$line")" "$(kv checks "$line")" "$(kv entries "$line")" \
        "$(kv server_cpu_us_per_query "$line")" "$(kv p50_ms "$line")" "$(kv p99_ms "$line")"
    done
    echo
    echo "With \`cache_scope=user\` every user fills and refreshes its own entries: $USERS_N users cost"
    echo "$USERS_N× the misses, refreshes and memory of one. With \`shared\` they share the entries and each"
    echo "pays one grant check per shape and worker every \`grant_check_ms\` (docs/security.md)."
    echo
    echo "**Steady state, binlog mode.** The same $USERS_N users and shape on the MariaDB with its binlog on,"
    echo "a node in binlog mode (TTL 1 h, no refresh), measured over a second ${DUR} s run after a first one"
    echo "filled the cache. Upstream statements: every statement MariaDB was sent meanwhile (\`Questions\`,"
    echo "which counts queries and executes, + \`Com_stmt_prepare\` + \`Com_stmt_close\`), per hit. \"before\":"
    echo "the same node with \`grant_check_binlog_ms\` 1000 and \`prepare_answer_ms\` 0 (a verdict checked"
    echo "again every second, as before issue #23)."
    echo
    echo "| node | cache_scope | queries | qps | hits | upstream statements | per hit | node CPU µs/query |"
    echo "|---|---|---|---|---|---|---|---|"
    for l in before-user before-shared binlog-user binlog-shared; do
      local line=${U[$l]:-failed=1}
      printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$([ "${l%%-*}" = before ] && echo before || echo now)" \
        "${l#*-}" "$(kv queries "$line")" "$(fmt "$(kv qps "$line")" 0)" "$(kv hits "$line")" "$(kv up "$line")" \
        "$(per_hit "$line")" "$(kv server_cpu_us_per_query "$line")"
    done
  } >"$B/block-users.md"
  echo "| 6 | $USERS_N users sharing a shape, binlog mode, steady state: upstream statements per hit (before: $(per_hit "${U[before-shared]:-}")) | $(per_hit "${U[binlog-shared]:-}") | ≤ 0.001 | $(verdict "$(per_hit "${U[binlog-shared]:-}")" '<=' 0.001) |" >>"$B/targets.md"
  echo "| users | hit rate, $USERS_N users, cache_scope=user (1 user: $(users_hit_rate "${U[one]:-}") %) | $(users_hit_rate "${U[many-user]:-}") % | (reported) | |" >>"$B/targets.md"
}
