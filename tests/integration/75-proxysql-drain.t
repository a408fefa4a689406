#!/usr/bin/env bash
# 75-proxysql-drain: SIGTERM Shoal nodes under load behind the real ProxySQL
# ($PROXYSQL_BIN; skipped without it) and count the client errors
# (docs/operations.md, "Drain"). Two nodes, hostgroup 30 with MariaDB as the
# weight-1 fallback, a digest rule, 4 client threads; each round SIGTERMs a
# node (alternating), waits for it to exit and starts it again on the same
# ports (a rolling restart), then waits until ProxySQL sends it work again.
# Four set-ups: the node's own proxysql_admin, with one ProxySQL and with a
# two-instance cluster; and shoal-ha watch (every 500 ms) without it, one
# ProxySQL and the cluster. Each must see 0 client errors, every node must
# exit 0 within docker stop's 10 s, and come back.
# SHOAL_DRAIN_ROUNDS (default 4; the figures in docs/operations.md used 20).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then
  skip_all "needs real nodes (fake mode)"
fi
need_proxysql
rounds=${SHOAL_DRAIN_ROUNDS:-4}
setups=("node-admin, one ProxySQL:--node-admin 1"
  "node-admin, two-instance cluster:--node-admin 2 --proxies 2"
  "shoal-ha watch, one ProxySQL:--agent"
  "shoal-ha watch, two-instance cluster:--agent --proxies 2")
plan $((${#setups[@]} * 4))
work="$BUILD_TEST/proxysql94-drain"
rm -rf "$work"
for s in "${setups[@]}"; do
  name=${s%%:*}
  read -r -a args <<<"${s#*:}"
  out="$work/$(echo "$name" | tr -c 'a-z0-9\n' '-').json"
  mkdir -p "$work"
  "$PY" "$TESTLIB/px_drain.py" --work "$work/run" --mdb-port "$MDB_PORT" --rounds "$rounds" "${args[@]}" \
    >"$out" 2>"$out.err"
  rc=$?
  res=$("$PY" - "$out" "$rounds" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    print("none"); sys.exit()
r = d["rounds"]
print(len(r), d["answers"], d["errors"], int(all(x["exit"] == 0 for x in r)),
      max([x["drain_s"] for x in r] or [99]), int(all(x["back_s"] is not None for x in r)))
PY
)
  read -r n answers errors exits drain back <<<"$res"
  if [ "$rc" != 0 ] || [ "$n" = none ]; then
    diag "px_drain.py failed ($name):"; diag_file "$out.err" 30
  fi
  is "${n:-0}" "$rounds" "$name: $rounds SIGTERMs under load"
  is "${errors:-x}" 0 "  0 client errors (${answers:-0} answers)"
  [ "${errors:-1}" = 0 ] || diag "$("$PY" -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["error_texts"]))' "$out" 2>/dev/null)"
  ok_if=$( [ "${exits:-0}" = 1 ] && "$PY" -c "import sys; sys.exit(0 if float('${drain:-99}') < 9.5 else 1)" && echo 1 || echo 0)
  if [ "$ok_if" = 1 ]; then ok "  every node exits 0 within docker stop's 10 s (longest ${drain} s)"; else not_ok "  every node exits 0 within docker stop's 10 s (exits ok: ${exits:-?}, longest ${drain:-?} s)"; fi
  is "${back:-0}" 1 "  each restarted node gets work again"
done
done_testing
