#!/usr/bin/env bash
# 68-bulk: MariaDB's bulk operations (MARIADB_CLIENT_STMT_BULK_OPERATIONS,
# COM_STMT_BULK_EXECUTE) and mariadb_stmt_execute_direct through the node,
# against MariaDB's own answers.
#  - on the wire (lib/68-bulk-raw.py): the greeting (CLIENT_MYSQL clear, the
#    extensions MariaDB offers that the node relays), then with bulk
#    negotiated (with and without CLIENT_DEPRECATE_EOF), with extended
#    metadata alone and with no extension:
#    COM_STMT_BULK_EXECUTE by id and by 0xffffffff, RETURNING, without types,
#    refused (a SELECT, an unknown id, too short, not negotiated), and the
#    "last statement" id after a failed PREPARE and after closes; and a bulk
#    execute without types on another upstream connection than the one
#    that saw them (that one killed from MariaDB's side).
#  - with Connector/C (lib/bulk_client.c, compiled here): array binding
#    (column-wise and row-wise, NULL / DEFAULT / IGNORE / IGNORE_ROW
#    indicators, an execute without types resent, a duplicate key, an
#    INSERT ... RETURNING) and mariadb_stmt_execute_direct (an array, a
#    result set, failing PREPAREs): output compared line for line with a
#    run straight to MariaDB, the stored rows read back from MariaDB, and
#    a second session's text and prepared SELECT of the table after each
#    write, in default mode, under AUTO_CACHE in writes mode (those SELECTs
#    cached: each write must invalidate them) and in binlog mode against a
#    MariaDB of this test's own with its binlog on.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "bulk: compares a node with MariaDB (SHOAL_FAKE_DIRECT=1)"; fi

# nodes start (2); raw: 2 greeting + moved + 4 capability sets; Connector/C: compiles,
# direct run sane, node, cache node + it served hits; binlog MariaDB, its
# node, direct run there, node + it served hits
plan 19
work="$BUILD_TEST/t68"
rm -rf "$work"
mkdir -p "$work/nc"
if shoal_start node; then
  ok "node starts (port $node_PORT)"
else
  bail "node starts (port $node_PORT)"
fi
mport=$(free_port)
if shoal_start nc --auto-cache --cache-ttl-ms 3600000 --data-dir "$work/nc" --metrics-address "127.0.0.1:$mport"; then
  ok "AUTO_CACHE node starts (port $nc_PORT)"
else
  not_ok "AUTO_CACHE node starts"
fi
on_exit 'mdb -e "DROP TABLE IF EXISTS t68, t68raw, t68raw_r"'

PORT=$node_PORT "$PY" "$TESTLIB/68-bulk-raw.py" || not_ok "68-bulk-raw.py crashed or failed"

# ---- Connector/C: array binding and execute_direct
client="$work/bulk_client"
capi_compile "$TESTLIB/bulk_client.c" "$client"
rows=40
"$client" 127.0.0.1 "$MDB_PORT" "$MDB_PORT" "$rows" >"$work/direct.out" 2>&1
# the direct run itself: bulk offered, every step as MariaDB does it
want_lines=(
  "server offers bulk operations: yes"
  "column-wise insert: affected 20, warnings 0"
  "column-wise insert again, types not resent: affected 20, warnings 0"
  "row-wise update: affected 9, warnings 0"
  "array delete: affected 5, warnings 0"
  "duplicate-key insert: error 1062 (23000): Duplicate entry '1' for key 'PRIMARY'"
  "returning row: 603|ret-603xxx|dflt"
  "execute_direct array insert: affected 4, warnings 0"
  "execute_direct select: 45"
  "execute_direct array into a missing table: error 1146 (42S02): Table 'shoaltest.nosuch68' doesn't exist"
  "the session goes on: 1"
  "stored: 5|NULL|1004|dflt"
  "stored: 14|col-14xxxx|7|dflt"
  "stored: 7|col-7xxxxxx|7|dflt"
)
absent=""
for l in "${want_lines[@]}"; do grep -qxF "$l" "$work/direct.out" || absent+="$l; "; done
if [ -z "$absent" ] && [ "$(grep -c '^stored: ' "$work/direct.out")" = 45 ]; then
  ok "direct: array binding and execute_direct do what MariaDB does (45 rows stored)"
else
  diag "missing: $absent"
  diag_file "$work/direct.out"
  not_ok "direct: array binding and execute_direct do what MariaDB does"
fi
bulk_same() { # name port verify-port reference
  local out="$work/${1%% *}.out"
  "$client" 127.0.0.1 "$2" "$3" "$rows" >"$out" 2>&1
  if cmp -s "$4" "$out"; then
    ok "$1: Connector/C array binding, execute_direct, a second session's reads after each write, the stored rows: the same as direct ($(wc -l <"$out") lines)"
  else
    diff "$4" "$out" | head -n 20 | diag_file /dev/stdin
    not_ok "$1: Connector/C array binding: the same as direct"
  fi
}
bulk_same node "$node_PORT" "$MDB_PORT" "$work/direct.out"
bulk_same nc "$nc_PORT" "$MDB_PORT" "$work/direct.out"
# the second session's SELECTs were served from the cache when nothing had
# changed (so a bulk write that did not invalidate them would show)
cached() { # name metrics-port
  local hits
  hits=$(curl -s "http://127.0.0.1:$2/metrics" |
    awk '$1 ~ /^shoal_cache_hits_total\{/ { s += $2 } END { print s + 0 }')
  if [ "${hits:-0}" -ge 2 ]; then
    ok "$1: the reads were cached ($hits hits): each bulk write invalidated them"
  else
    not_ok "$1: the reads were cached (hits: ${hits:-none})"
  fi
}
cached nc "$mport"

# ---- AUTO_CACHE with binlog invalidation: a MariaDB with its binlog on
binlog_mdb "$work/bl"
mkdir -p "$work/nb"
bport=$(free_port)
if shoal_start nb --upstream-db-url "mysql://app:pw@127.0.0.1:$BL_PORT/shoaltest" --auto-cache \
  --cache-ttl-ms 3600000 --invalidation binlog --binlog-user app --binlog-password pw --data-dir "$work/nb" \
  --metrics-address "127.0.0.1:$bport"; then
  ok "AUTO_CACHE node in binlog mode starts (port $nb_PORT)"
else
  not_ok "AUTO_CACHE node in binlog mode starts"
fi
# The node serves and stores only once its binlog follower is up and caught
# up: wait for that (shoal_cache_serving 1) before the scenario, or on a
# loaded machine its reads may all come while it connects (a run at load 6
# saw 0 hits) and prove nothing about invalidation.
for _ in $(seq 1 300); do
  [ "$(curl -s "http://127.0.0.1:$bport/metrics" | awk '$1 == "shoal_cache_serving" { print $2 }')" = 1 ] && break
  sleep 0.1
done
"$client" 127.0.0.1 "$BL_PORT" "$BL_PORT" "$rows" >"$work/direct-bl.out" 2>&1
if cmp -s "$work/direct.out" "$work/direct-bl.out"; then
  ok "direct to the binlog MariaDB: the same as the first"
else
  diff "$work/direct.out" "$work/direct-bl.out" | head -n 10 | diag_file /dev/stdin
  not_ok "direct to the binlog MariaDB: the same as the first"
fi
bulk_same "nb (binlog mode)" "$nb_PORT" "$BL_PORT" "$work/direct-bl.out"
cached "nb (binlog mode)" "$bport"
done_testing
