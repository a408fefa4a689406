#!/usr/bin/env bash
# 94-proxysql: every ProxySQL behaviour docs/proxysql.md and docs/operations.md
# rely on, against the real ProxySQL ($PROXYSQL_BIN; skipped without it):
#   - the monitor user's checks on the nodes (ping, connect, read_only through
#     mysql_replication_hostgroups, replication lag): no error, nodes ONLINE
#     and readers;
#   - the walkthrough: the shape's digest from stats_mysql_query_digest,
#     hostgroup 30 (two nodes at 1000, the replica at 1), rule 50 by digest,
#     the three checks (digest stats in hostgroup 30, the rule's hits, both
#     nodes' hit counters), the fallback's share;
#   - cluster propagation of a rule and a server change to the second proxy;
#   - mysql-query_retries_on_failure hiding an idle connection the node closed;
#   - OFFLINE_SOFT (no new work; idle connections dropped), back ONLINE;
#   - SIGKILL of a node under load: SHUNNED, the other serves, the restarted
#     node comes back;
#   - shoal-ha register, route, advise, watch --once, status (text and
#     --html) against the real admin;
#   - both nodes stopped: the fallback answers everything.
# The drain under load is 75-proxysql-drain.t. Logs: build-test/logs/94-proxysql*,
# ProxySQL's in build-test/proxysql94/px*/proxysql.log.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then
  skip_all "needs real nodes (fake mode)"
fi
need_proxysql
plan 55
"$PY" "$TESTLIB/94-proxysql.py" || not_ok "94-proxysql.py crashed (see above)"
done_testing
