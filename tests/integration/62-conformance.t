#!/usr/bin/env bash
# 62-conformance: the CI subset of the conformance harness
# (tests/conformance/ci-cases.txt: every case that ever differed, the
# node's own cases in tests/conformance/shoal, and a spread of the rest):
# each case runs with mariadb-test directly against a private MariaDB of
# the harness's own and through a node, in the text protocol and with
# --ps-protocol and with --cursor-protocol (every SELECT through a
# server-side cursor); one TAP result per case and protocol, ok when the two
# outputs are byte for byte identical; then the same through a node with
# AUTO_CACHE on for tests/conformance/ci-auto-cases.txt. Two cases run at a
# time (SHOAL_CONFORMANCE_JOBS), each worker with a MariaDB and a node of
# its own. A run's limit (300 s) guards against a hang: the slowest case
# takes a few seconds. scripts/conformance runs the full list
# (docs/conformance.md).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

cases="$SRCDIR/tests/conformance/ci-cases.txt"
n=$(grep -cvE '^\s*(#|$)' "$cases")
auto_cases="$SRCDIR/tests/conformance/ci-auto-cases.txt"
n_auto=$(grep -cvE '^\s*(#|$)' "$auto_cases")
if fake_mode; then
  echo "1..0 # SKIP fake mode: the harness compares MariaDB with a node"
  exit 0
fi
if ! command -v mariadb-test >/dev/null; then
  plan $(((n + n_auto) * 2 + n))
  for ((i = 0; i < (n + n_auto) * 2 + n; i++)); do not_ok "mariadb-test is not installed (package mariadb-test)"; done
  exit 1
fi
plan $(((n + n_auto) * 2 + n))
out="$BUILD_TEST/conformance-ci"
rm -rf "$out" "$out-auto"
# The runner prints one result per case and protocol, in the list's order;
# it starts (and stops) its MariaDBs and nodes itself: two workers, each a
# MariaDB and a node of its own, so that two cases run at a time (the cases
# are independent: each starts from a server brought back to its baseline).
# First passthrough (no binary log) in the text, ps and cursor protocols,
# then AUTO_CACHE with a one-hour TTL and binlog invalidation.
jobs=${SHOAL_CONFORMANCE_JOBS:-2}
"$PY" "$SRCDIR/tests/conformance/conformance.py" run --tap --tap-no-plan --cases "$cases" --out "$out" \
  --protocol all --jobs "$jobs" --shoal "$SHOAL_BIN" --timeout 300
rc=$?
cp "$out/node.log" "$SHOAL_LOG_DIR/62-conformance.node.log" 2>/dev/null || true
"$PY" "$SRCDIR/tests/conformance/conformance.py" run --tap --tap-no-plan --tap-start $((n * 3)) \
  --cases "$auto_cases" --out "$out-auto" --binlog --label auto-cache --jobs "$jobs" \
  --node-args "--auto-cache=true --cache-ttl-ms=3600000" --shoal "$SHOAL_BIN" --timeout 300
rc2=$?
cp "$out-auto/node.log" "$SHOAL_LOG_DIR/62-conformance.auto.node.log" 2>/dev/null || true
[ $rc = 0 ] && [ $rc2 = 0 ]
