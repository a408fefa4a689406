#!/usr/bin/env bash
# 46-grants-more: ways users got through a node what they would not get
# directly (docs/security.md), found by an adversarial pass over #14, each
# checked against a private MariaDB with its binlog on:
#   - cache_scope=shared: a user's grant verdict for a query shape, got in
#     one schema, let it read another schema's entry of that shape (the same
#     unqualified name, a table it may not read there);
#   - the binlog follower did not forget verdicts on GRANT / REVOKE made
#     elsewhere: a REVOKE took grant_check_ms to apply, not the binlog's lag;
#   - CREATE OR REPLACE USER through the node did not forget verdicts;
#   - (issue #23) in binlog mode a verdict lasts past grant_check_ms while
#     no privilege changes, and CREATE USER, a row written to mysql.db,
#     CREATE ROLE and DROP USER made on the upstream each make the next hit
#     check it again;
#   - pooled upstream connections outlived account changes made upstream: a
#     new login used an idle connection logged in before an ACCOUNT LOCK or
#     a password change (so it worked), or before SET DEFAULT ROLE (so it had
#     the old role).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "grants, more: needs a node (SHOAL_FAKE_DIRECT=1)"; fi

plan 21
work="$BUILD_TEST/t46"
rm -rf "$work"
mkdir -p "$work"
GM_PORT=$(free_port)
GM_PID=""
# shellcheck disable=SC2016  # GM_PID is read when the exit handler runs
on_exit 'stop_mdb "$GM_PID"'

if ! MARIADB_EXTRA_ARGS="--log-bin=binlog --binlog-format=ROW --server-id=1" \
  "$SRCDIR/scripts/start-mariadb" "$work/mdb" "$GM_PORT" >"$work/mdb.start.out" 2>&1 </dev/null; then
  diag_file "$work/mdb/error.log"
  bail "start a MariaDB with its binlog on"
fi
# shellcheck disable=SC2034  # read by the exit handler
GM_PID=$(cat "$work/mdb/pid")
ok "a MariaDB with its binlog on (port $GM_PORT)"

mariadb --no-defaults --socket="$work/mdb/sock" -uroot <<'SQL'
CREATE DATABASE gm1;
CREATE DATABASE gm2;
CREATE TABLE gm1.t (v INT);
INSERT INTO gm1.t VALUES (1);
CREATE TABLE gm2.t (v VARCHAR(20));
INSERT INTO gm2.t VALUES ('gm2 secret');
CREATE TABLE gm2.pub (v INT);
CREATE USER 'gb'@'%' IDENTIFIED BY 'gbpw';
GRANT SELECT ON gm1.t TO 'gb'@'%';
GRANT SELECT ON gm2.pub TO 'gb'@'%';
CREATE USER 'gl'@'%' IDENTIFIED BY 'glpw';
GRANT SELECT ON gm1.* TO 'gl'@'%';
CREATE ROLE gm_role;
GRANT SELECT ON gm2.t TO gm_role;
GRANT gm_role TO 'gl'@'%';
SQL

URL="mysql://app:pw@127.0.0.1:$GM_PORT/gm1"
start_node() { # name args...
  local n=$1; shift
  mkdir -p "$work/$n"
  if shoal_start "$n" --auto-cache --upstream-db-url "$URL" --data-dir "$work/$n" \
    --allowed-users gb:gbpw,gl:glpw "$@"; then
    ok "node $n starts"
  else
    not_ok "node $n starts"
  fi
}
# verdicts hold a minute: only an invalidation can make them go sooner
start_node shared --cache-scope shared --grant-check-ms 60000
start_node user --grant-check-ms 60000
start_node writes --grant-check-ms 60000 --invalidation writes
# binlog mode: a verdict lasts until the binlog shows a privilege change
LM=$(free_port)
start_node lasting --grant-check-ms 200 --workers 1 --metrics-address "127.0.0.1:$LM"

GM_PORT=$GM_PORT GM_SOCK="$work/mdb/sock" SHARED=${shared_PORT:-0} USER_NODE=${user_PORT:-0} WRITES=${writes_PORT:-0} \
  LASTING=${lasting_PORT:-0} LASTING_M=$LM \
  "$PY" "$TESTLIB/46-grants-more.py"
[ $? -le 1 ] || not_ok "the python part ran to its end"
done_testing
