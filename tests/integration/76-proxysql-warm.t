#!/usr/bin/env bash
# 76-proxysql-warm: a rolling restart of two nodes behind the real ProxySQL
# ($PROXYSQL_BIN; skipped without it), under load, cold and warm, measured in
# one run (docs/operations.md, "Warm restarts"). Binlog mode on a MariaDB with
# its binlog on; 2,000 keys, which 4 client threads read at random through
# ProxySQL for 4 s before anything is counted (the nodes at weight 1000, MariaDB the weight-1
# fallback); each node SIGTERMed once and started again (px_drain.py, the
# nodes' own proxysql_admin). The upstream's extra load is the keys'
# SELECTs it ran over the restarts, less what the same load cost it over a
# window without restarts (the fallback's share), scaled to the same length.
# Cold: no cache_snapshot; warm: each node with its own. Both see 0 client
# errors; the warm restarts' extra load is at most 10 % of the cold ones'.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then
  skip_all "needs real nodes (fake mode)"
fi
need_proxysql
plan 10
work="$BUILD_TEST/proxysql94-warm"
rm -rf "$work"
mkdir -p "$work"
binlog_mdb "$work/bl"
export PX_KEYS=2000

run() { # name args...: px_drain.py's JSON into $work/NAME.json; prints "errors extra exits warm"
  local name=$1
  shift
  "$PY" "$TESTLIB/px_drain.py" --work "$work/$name" --mdb-port "$BL_PORT" --rounds 2 --node-admin 1 \
    --settle 2 --upstream-log --node-arg=--invalidation --node-arg=binlog --node-arg=--binlog-user \
    --node-arg=app --node-arg=--binlog-password --node-arg=pw "$@" >"$work/$name.json" 2>"$work/$name.err"
  "$PY" - "$work/$name.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    print("none none none none"); sys.exit()
base = d.get("baseline_selects", 0) / max(d.get("baseline_s", 1), 0.1)
extra = d.get("rounds_selects", 0) - base * d.get("rounds_s", 0)
print(d["errors"], "%.1f" % max(extra, 0), int(all(r["exit"] == 0 for r in d["rounds"]) and len(d["rounds"]) == 2),
      int(all(w == 1.0 for w in d.get("warm") or [None])))
PY
}

read -r cold_err cold_extra cold_exits _ <<<"$(run cold)"
[ "$cold_err" = none ] && { diag "px_drain.py failed (cold):"; diag_file "$work/cold.err" 30; }
is "$cold_err" 0 "cold rolling restart under load: 0 client errors"
is "$cold_exits" 1 "  both nodes stopped with status 0 and came back"
diag "cold: $("$PY" <"$work/cold.json" -c 'import json,sys; d=json.load(sys.stdin); print({k: d.get(k) for k in ("answers","baseline_selects","baseline_s","rounds_selects","rounds_s")})')"
read -r warm_err warm_extra warm_exits warm_state <<<"$(run warm --snapshot)"
[ "$warm_err" = none ] && { diag "px_drain.py failed (warm):"; diag_file "$work/warm.err" 30; }
is "$warm_err" 0 "warm rolling restart (cache_snapshot) under load: 0 client errors"
is "$warm_exits" 1 "  both nodes stopped with status 0 and came back"
is "$warm_state" 1 "  both restarted nodes loaded their snapshot and replayed to warm"
diag "warm: $("$PY" <"$work/warm.json" -c 'import json,sys; d=json.load(sys.stdin); print({k: d.get(k) for k in ("answers","baseline_selects","baseline_s","rounds_selects","rounds_s")})')"
if awk -v c="$cold_extra" 'BEGIN { exit !(c >= 1000) }'; then
  ok "the cold restarts cost the upstream $cold_extra extra SELECTs (each node refills its keys)"
else
  not_ok "the cold restarts cost the upstream at least 1,000 extra SELECTs (got $cold_extra)"
fi
if awk -v w="$warm_extra" -v c="$cold_extra" 'BEGIN { exit !(c > 0 && w <= 0.1 * c) }'; then
  ok "the warm restarts' extra load ($warm_extra SELECTs) is at most 10 % of the cold ones' ($cold_extra)"
else
  not_ok "the warm restarts' extra load ($warm_extra SELECTs) is at most 10 % of the cold ones' ($cold_extra)"
fi
for n in 1 2; do
  like "$(cat "$SHOAL_LOG_DIR/px_drain.n$n.log" 2>/dev/null || cat "$work/warm/px_drain.n$n.log" 2>/dev/null)" \
    "cache snapshot: the binlog replay is done: [0-9]+ of the [0-9]+ entries loaded are served" \
    "node $n's log: its replay is done, with the entries served"
done
done_testing
