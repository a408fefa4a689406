#!/usr/bin/env bash
# 48-mysql-conformance: the CI subset of the conformance harness in MySQL
# mode (issue 41; docs/conformance.md, MySQL mode): MySQL 9.7's own
# mysqltest and main-suite cases (tests/conformance/mysql-ci-cases.txt, a
# subset of mysql-cases.txt), each run directly against a private MySQL 9.7
# of the harness's own and through a node in front of it, the two outputs
# compared byte for byte; one TAP result per case and protocol, in the text
# protocol and with --ps-protocol. Two passes: the node in its default
# mode (no cache), then with AUTO_CACHE, a one-hour TTL and binlog
# invalidation (MySQL's servers here always have their binlog and GTIDs).
# The cursor protocol does not run: MySQL 9.7's mysqltest asks for a cursor
# on every statement, which its server refuses for most (docs/conformance.md).
# Two cases at a time, each worker with a MySQL and a node of its own. The
# chroot gets MySQL's test suite (mysql-testsuite) the first time. MySQL
# 8.0.39 has no mysqltest or cases of its own here: the subset runs on 9.7
# only.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/mysql.sh
. "$SRCDIR/scripts/lib/mysql.sh"

fake_mode && skip_all "fake mode: the harness compares MySQL with a node"
cases="$SRCDIR/tests/conformance/mysql-ci-cases.txt"
n=$(grep -cvE '^\s*(#|$)' "$cases")
root=${SHOAL_MYSQL97_ROOT:-$BUILD_TEST/mysql97}
out="$BUILD_TEST/conformance-mysql-ci"
rm -rf "$out" "$out-auto"
mkdir -p "$out"
if ! SHOAL_MYSQL97_PACKAGES="mysql-server-core mysql-client mysql-testsuite" mysql97_root "$root" \
  2>"$out/mysql97-root.err"; then
  skip_all "no MySQL 9.7 with its test suite can run here: $(grep '^mysql:' "$out/mysql97-root.err" | tail -n 1)"
fi
plan $((n * 4))
jobs=${SHOAL_CONFORMANCE_JOBS:-2}
"$PY" "$SRCDIR/tests/conformance/conformance.py" run --tap --tap-no-plan --cases "$cases" --out "$out" \
  --mysql --mysql-root "$root" --protocol both --jobs "$jobs" --shoal "$SHOAL_BIN" --timeout 300 \
  --label mysql-default
rc=$?
cp "$out/node.log" "$SHOAL_LOG_DIR/48-mysql-conformance.node.log" 2>/dev/null || true
"$PY" "$SRCDIR/tests/conformance/conformance.py" run --tap --tap-no-plan --tap-start $((n * 2)) \
  --cases "$cases" --out "$out-auto" --mysql --mysql-root "$root" --protocol both --jobs "$jobs" \
  --label mysql-auto-cache --node-args "--auto-cache=true --cache-ttl-ms=3600000" --shoal "$SHOAL_BIN" \
  --timeout 300
rc2=$?
cp "$out-auto/node.log" "$SHOAL_LOG_DIR/48-mysql-conformance.auto.node.log" 2>/dev/null || true
[ $rc = 0 ] && [ $rc2 = 0 ]
