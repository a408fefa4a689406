# shellcheck shell=bash
# shellcheck disable=SC2154 # B, LOGS, NODE_BIN, SRCDIR and the helpers are scripts/bench's
# tests/bench/lib/autoroute.sh: section 13 of scripts/bench (issue #22):
# `shoal-ha watch --auto-route` against an operator who routes only the top
# digest (replica time saved), the time to the first hit with the agent's
# defaults, and two agents of a ProxySQL cluster for five minutes. The work
# is tests/bench/autoroute.py's; it runs on the MariaDB with its binlog on
# (consistency.sh: binlog_mdb_up), with sakila loaded there, and the real
# ProxySQL (proxysql.sh: px_bin). Without a ProxySQL the block says so.

section_autoroute() {
  local bin
  bin=$(px_bin)
  if [ -z "$bin" ]; then
    echo "Not measured: no ProxySQL binary (PROXYSQL_BIN, or ../shared/peers/proxysql)." >"$B/block-autoroute.md"
    return 0
  fi
  [ -x ha/shoal-ha ] || { log "ha/shoal-ha is not built: section autoroute left out"; return 0; }
  binlog_mdb_up
  if [ "$(bl_sql -N -e "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA='sakila' AND TABLE_NAME='payment'")" != 1 ]; then
    log "loading sakila on the MariaDB with binlog"
    bl_sql <tests/data/sakila/sakila.sql
  fi
  log "auto-route: phases of ${AR_PHASE_S:-$([ "${BENCH_QUICK:-0}" = 1 ] && echo 20 || echo 60)} s, two agents for ${AR_SOAK_S:-$([ "${BENCH_QUICK:-0}" = 1 ] && echo 60 || echo 300)} s (log: build-bench/logs/autoroute.log)"
  if ! SRCDIR="$SRCDIR" WORK="$B/autoroute" BL_PORT="$BL_PORT" BL_SOCK="$BL_SOCK" NODE_BIN="$NODE_BIN" \
    PROXYSQL_BIN="$bin" BENCH_QUICK="${quick:-0}" OUT="$B/block-autoroute.md" \
    /usr/bin/python3 tests/bench/autoroute.py >"$LOGS/autoroute.out" 2>"$LOGS/autoroute.log"; then
    tail -n 30 "$LOGS/autoroute.log" >&2
    echo "Not measured: tests/bench/autoroute.py failed (build-bench/logs/autoroute.log)." >"$B/block-autoroute.md"
    return 0
  fi
  local saved op
  saved=$(sed -n 's/^| two agents.*| \*\*\([0-9.-]*\) %\*\* |.*/\1/p' "$B/block-autoroute.md")
  op=$(sed -n "s/^| an operator's rule.*| \*\*\([0-9.-]*\) %\*\* |.*/\1/p" "$B/block-autoroute.md")
  echo "| 13 | replica time saved by two auto-routing agents (no operator) | ${saved:-n/a} % | ≥ an operator's rule for the top digest (${op:-n/a} %) | $(verdict "$saved" '>=' "${op:-101}") |" >>"$B/targets.md"
  return 0
}
