#!/usr/bin/env bash
# 73-query-rules: the admin's QUERY RULES module (docs/caching.md, "Query
# rules") on real nodes:
#   - explicit mode (no --auto-cache): a shape seen before any rule is
#     proxied; a rule (match_digest '^select v from t73', cache_ttl 5000)
#     loaded with LOAD QUERY RULES TO RUNTIME makes it cached: the second run
#     is a hit (EXPLAIN LAST STATEMENT, stats_shoal_query_digest), SHOW CACHES
#     lists it with ttl 5000 ms;
#   - a bad regex in LOAD: ERROR 1105 naming the rule, the runtime unchanged;
#   - SAVE QUERY RULES TO DISK, a restart with the same data dir: the rule is
#     in runtime_query_rules and caches the shape again;
#   - --auto-cache: cache_ttl 0 by match_digest and by digest (copied from
#     stats_shoal_query_digest) makes a cached shape uncached (reason 'query
#     rule', SHOW PROXIED QUERIES); deleting the rules brings auto-cache back.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "query rules: needs a node (SHOAL_FAKE_DIRECT=1)"; fi
plan 39

if ! mdb -e "DROP TABLE IF EXISTS t73; CREATE TABLE t73 (id INT PRIMARY KEY, v VARCHAR(20));
  INSERT INTO t73 VALUES (1,'one'),(2,'two'),(3,'three')"; then
  bail "create t73"
fi
on_exit "mdb -e 'DROP TABLE IF EXISTS t73'"
DD=$(mktemp -d)
on_exit "rm -rf '$DD'"

Q1="select v from t73 where id = 1"
Q3="select id from t73 where v = 'two'"

# a PORT SQL: one admin statement as admin/admin; sets OUT (stdout+stderr), RC.
a() {
  OUT=$(mariadb --no-defaults -h127.0.0.1 -P"$1" -uadmin -padmin -N -B --connect-timeout=5 \
    -e "$2" 2>&1)
  RC=$?
}
# explain NODE SQL [N]: run SQL N times (default 2) in one session, then
# EXPLAIN LAST STATEMENT; prints "destination<TAB>reason".
explain() {
  local node=$1 sql=$2 n=${3:-2} all="" i
  for ((i = 0; i < n; i++)); do all+="$sql; "; done
  via_to "$node" -N -B -e "${all}EXPLAIN LAST STATEMENT" 2>&1 | tail -n 1
}
# hits PORT LIKE: "hits misses" of the shape whose digest_text is LIKE it.
hits() {
  a "$1" "SELECT cache_hits || ' ' || cache_misses FROM stats_shoal_query_digest
    WHERE digest_text LIKE '$2'"
  echo "$OUT"
}
# start NAME ADMIN_PORT DATA_DIR [args...]
start() {
  local name=$1 port=$2 dir=$3
  shift 3
  if shoal_start "$name" --admin-address "127.0.0.1:$port" --data-dir "$dir" \
    --cache-ttl-ms 60000 "$@"; then
    ok "node $name starts (admin 127.0.0.1:$port, data dir $dir)"
  else
    bail "node $name starts"
  fi
}

# ---------------------------------------------------------------- explicit mode
EPORT=$(free_port)
start e "$EPORT" "$DD/e"
is "$(explain e "$Q1" 1)" "$(printf 'upstream\tno cache for this query')" \
  "explicit mode, no rule: the shape is proxied"
a "$EPORT" "INSERT INTO query_rules (rule_id, match_digest, cache_ttl, comment)
  VALUES (10, '^select v from t73', 5000, 't73 reads')"
is "$RC" 0 "INSERT INTO query_rules"
a "$EPORT" "LOAD QUERY RULES TO RUNTIME"
is "$RC:$OUT" "0:" "LOAD QUERY RULES TO RUNTIME"
a "$EPORT" "SELECT rule_id, active, match_digest, cache_ttl, apply FROM runtime_query_rules"
is "$OUT" "$(printf '10\t1\t^select v from t73\t5000\t1')" "runtime_query_rules has the rule"
is "$(explain e "$Q1")" "$(printf 'readyset_shallow\tok')" \
  "the shape seen before the LOAD is cached now: EXPLAIN LAST STATEMENT readyset_shallow / ok"
is "$(hits "$EPORT" 'select v from t73%')" "1 1" "  a miss, then a hit (stats_shoal_query_digest)"
OUT=$(via_to e -N -B -e "SHOW CACHES" 2>&1)
like "$OUT" "select v from t73 where id = \?.*shallow, ttl 5000 ms, refresh 2500 ms" \
  "SHOW CACHES lists it with ttl 5000 ms (refresh half of it)"
is "$(explain e "select v from t73 where id = 3" 1)" "$(printf 'readyset_shallow\tok')" \
  "  other literals, same shape: through the cache"
is "$(explain e "select id, v from t73" 1)" "$(printf 'upstream\tno cache for this query')" \
  "a shape the rule does not match stays proxied"

# ---- a bad regex: refused, runtime unchanged
a "$EPORT" "INSERT INTO query_rules (rule_id, match_digest, cache_ttl) VALUES (20, 'select (', 0)"
a "$EPORT" "LOAD QUERY RULES TO RUNTIME"
like "$OUT" "^ERROR 1105 .*rule 20: match_digest 'select \(' is not a valid" \
  "LOAD with a bad regex fails, naming rule 20"
a "$EPORT" "SELECT group_concat(rule_id) FROM runtime_query_rules"
is "$OUT" "10" "  runtime_query_rules unchanged"
is "$(explain e "$Q1" 1)" "$(printf 'readyset_shallow\tok')" "  the shape is still cached"
is "$(hits "$EPORT" 'select v from t73%')" "2 2" "  and served from the cache (id = 3 was a miss)"
a "$EPORT" "UPDATE query_rules SET match_digest = NULL, digest = '0xABC' WHERE rule_id = 20;
  LOAD QUERY RULES TO RUNTIME"
like "$OUT" "^ERROR 1105 .*rule 20: digest '0xABC'" "a bad digest fails too, naming the rule"

# ---- persistence
a "$EPORT" "DELETE FROM query_rules WHERE rule_id = 20; SAVE QUERY RULES TO DISK"
is "$RC:$OUT" "0:" "SAVE QUERY RULES TO DISK"
shoal_stop e
is "$e_STATUS" 0 "node e stops cleanly"
EPORT=$(free_port)
start e2 "$EPORT" "$DD/e"
a "$EPORT" "SELECT rule_id, match_digest, cache_ttl, comment FROM runtime_query_rules"
is "$OUT" "$(printf '10\t^select v from t73\t5000\tt73 reads')" \
  "after the restart runtime_query_rules has the rule"
is "$(explain e2 "$Q1")" "$(printf 'readyset_shallow\tok')" "  and the shape is cached again"
is "$(hits "$EPORT" 'select v from t73%')" "1 1" "  a miss, then a hit"
a "$EPORT" "SAVE QUERY RULES FROM RUNTIME"
a "$EPORT" "SELECT count(*) FROM query_rules"
is "$OUT" "1" "SAVE QUERY RULES FROM RUNTIME writes the runtime's rule back"

# ---------------------------------------------------------------- auto-cache
APORT=$(free_port)
start auto "$APORT" "$DD/a" --auto-cache
is "$(explain auto "$Q1")" "$(printf 'readyset_shallow\tok')" "--auto-cache: the shape is cached"
is "$(explain auto "$Q3")" "$(printf 'readyset_shallow\tok')" "  and another one"
a "$APORT" "INSERT INTO query_rules (rule_id, match_digest, cache_ttl) VALUES (1, '^SELECT V FROM', 0);
  LOAD QUERY RULES TO RUNTIME"
is "$RC:$OUT" "0:" "a rule with cache_ttl 0 (regex in upper case) loaded"
is "$(explain auto "$Q1" 1)" "$(printf 'upstream\tquery rule')" \
  "  the shape is not cached any more: reason 'query rule'"
OUT=$(via_to auto -N -B -e "SHOW PROXIED QUERIES" 2>&1)
like "$OUT" "select v from t73 where id = \?.*unsupported: query rule" \
  "  SHOW PROXIED QUERIES: unsupported: query rule"
is "$(explain auto "$Q3" 1)" "$(printf 'readyset_shallow\tok')" "  the other shape is still cached"
a "$APORT" "SELECT digest FROM stats_shoal_query_digest WHERE digest_text LIKE 'select id from t73%'"
DG=$OUT
like "$DG" "^0x[0-9A-F]{16}$" "its digest from stats_shoal_query_digest ($DG)"
a "$APORT" "INSERT INTO query_rules (rule_id, digest, cache_ttl) VALUES (2, '$DG', 0);
  LOAD QUERY RULES TO RUNTIME"
is "$RC:$OUT" "0:" "a rule on that digest with cache_ttl 0 loaded"
is "$(explain auto "$Q3" 1)" "$(printf 'upstream\tquery rule')" "  that shape is not cached either"
a "$APORT" "UPDATE query_rules SET cache_ttl = 3000 WHERE rule_id = 2; LOAD QUERY RULES TO RUNTIME"
is "$(explain auto "$Q3")" "$(printf 'readyset_shallow\tok')" "cache_ttl 3000 on the digest: cached"
OUT=$(via_to auto -N -B -e "SHOW CACHES" 2>&1)
like "$OUT" "select id from t73 where v = \?.*ttl 3000 ms" "  SHOW CACHES: ttl 3000 ms"
a "$APORT" "DELETE FROM query_rules; LOAD QUERY RULES TO RUNTIME"
is "$(explain auto "$Q1")" "$(printf 'readyset_shallow\tok')" "no rules: auto-cache caches the shape again"
is "$(explain auto "$Q3")" "$(printf 'readyset_shallow\tok')" "  and the other one"
OUT=$(via_to auto -N -B -e "SHOW CACHES" 2>&1)
like "$OUT" "select id from t73 where v = \?.*ttl 60000 ms" "  with auto-cache's TTL (60000 ms)"

check "node e2 still running" shoal_alive e2
check "node auto still running" shoal_alive auto
done_testing
