#!/usr/bin/env bash
# 77-proxysql-autoroute: `shoal-ha watch --auto-route` against the real
# ProxySQL ($PROXYSQL_BIN; skipped without it), from no rules, under
# application traffic (issue #22): --dry-run changes nothing; --max-changes
# bounds a poll; two costly cacheable aggregates are warmed through a
# mirror rule, then routed, within 60 s; SELECT NOW() never is; the
# operator's own rule is left alone; shoal-ha status shows the state, age
# and reason of each rule and the recent decisions; no rule changes while
# a node is down; an aggregate whose table is written every 20 ms is
# withdrawn (and stays out for its cooldown) while the other stays routed;
# the clients see no error throughout; an aggregate the nodes answer with
# errors (their upstream account lost SELECT on it) is withdrawn; a
# digest an operator's own rule names gets no rule of the agent's; --once
# runs, a process a poll, withdraw too (the judging is in the state file).
# Then two instances in a cluster, an agent beside each: one decides (each
# rule made once, no flapping), each keeps its heartbeat in its own
# instance's scheduler, and the other takes over when the first's agent
# stops and when its instance stops. (lib/77-proxysql-autoroute.py).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then
  skip_all "needs real nodes (fake mode)"
fi
need_proxysql
plan 27
work="$BUILD_TEST/proxysql94-autoroute"
rm -rf "$work"
mkdir -p "$work"
binlog_mdb "$work/bl"
BL_SOCK="$work/bl/sock" BL_PORT=$BL_PORT "$PY" "$TESTLIB/77-proxysql-autoroute.py" ||
  not_ok "77-proxysql-autoroute.py crashed (see above)"
done_testing
