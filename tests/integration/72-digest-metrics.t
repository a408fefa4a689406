#!/usr/bin/env bash
# 72-digest-metrics: the digests a node reports are ProxySQL's (the verified
# vectors of shared/reference/proxysql.md, re-derived here), the same number
# in the admin's stats_shoal_query_digest (0x%016X), in SHOW CACHES /
# SHOW PROXIED QUERIES (q_ + 16 lowercase hex) and in /metrics' query_id
# label, and the per-query cache counters move with traffic; errors and
# node_errors count relayed errors and the node's own.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then
  skip_all "node-only (fake mode)"
fi

plan 22
work="$BUILD_TEST/digests"
rm -rf "$work"; mkdir -p "$work"
mport=$(free_port); aport=$(free_port)
if shoal_start n --auto-cache --data-dir "$work" --metrics-address "127.0.0.1:$mport" \
  --admin-address "127.0.0.1:$aport"; then
  ok "node starts (port $n_PORT)"
else
  bail "node starts (port $n_PORT)"
fi
admin() { mariadb --no-defaults -h127.0.0.1 -P"$aport" -uadmin -padmin -N -B -e "$1" 2>&1; }
metrics() { curl -s "http://127.0.0.1:$mport/metrics"; }

mdb -e "DROP TABLE IF EXISTS t; CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1)"
on_exit 'mdb -e "DROP TABLE IF EXISTS t"'

# query text -> the digest ProxySQL reports for it (proxysql.md, verified table)
declare -A want=(
  ["Select 1"]="0x37B5362567EE37EF"
  ["SELECT * FROM t WHERE 1=1"]="0x0BC1AE031E4721D4"
  ["show tables"]="0x99531AEFF718C501"
  ["select USER()"]="0x594F2C744B698066"
)
for q in "${!want[@]}"; do
  via -e "$q" >/dev/null 2>&1
  via -e "$q" >/dev/null 2>&1
done

for q in "${!want[@]}"; do
  d=${want[$q]}
  got=$(admin "SELECT count_star FROM stats_shoal_query_digest WHERE digest = '$d'")
  like "$got" '^[2-9][0-9]*$' "stats_shoal_query_digest has $d for '$q' (count $got)"
done
is "$(admin "SELECT cache_status FROM stats_shoal_query_digest WHERE digest = '0x594F2C744B698066'")" \
  "skipped: session-specific function" "USER() is skipped, with its reason"
is "$(admin "SELECT cache_status FROM stats_shoal_query_digest WHERE digest = '0x37B5362567EE37EF'")" \
  "cached" "Select 1 is cached (auto-cache)"
is "$(admin "SELECT cache_hits FROM stats_shoal_query_digest WHERE digest = '0x37B5362567EE37EF'")" \
  "1" "Select 1: one hit after a miss"

caches=$(via -N -B -e "SHOW CACHES" 2>&1)
like "$caches" 'q_37b5362567ee37ef' "SHOW CACHES names the query id q_ + lowercase digest"
like "$caches" 'q_0bc1ae031e4721d4' "the WHERE ?=? shape has its cache too"
proxied=$(via -N -B -e "SHOW PROXIED QUERIES WHERE query_id = 'q_594f2c744b698066'" 2>&1)
like "$proxied" 'unsupported: session-specific function' "SHOW PROXIED QUERIES shows the skip"

m=$(metrics)
like "$m" 'shoal_cache_hits_total\{query_id="q_37b5362567ee37ef"\} 1' "/metrics: hits per query id"
like "$m" 'shoal_cache_misses_total\{query_id="q_37b5362567ee37ef"\} 1' "/metrics: misses per query id"
like "$m" 'shoal_auto_cache_skipped_total\{reason="session-specific function"\} [1-9]' "/metrics: skips by reason"
for _ in 1 2 3; do via -e "Select 1" >/dev/null; done
like "$(metrics)" 'shoal_cache_hits_total\{query_id="q_37b5362567ee37ef"\} 4' "/metrics: hits move with traffic"
like "$(metrics)" 'shoal_queries_total\{destination="cache"\} [4-9]' "/metrics: queries answered from the cache"

# errors per digest: an ERR relayed from the upstream counts in errors; one
# the node makes itself in errors and node_errors, and in count_star: its
# upstream connection killed during the command, from MariaDB's side, and
# again when the node sends it once more on a fresh connection
via -e "SELECT * FROM no_such_table_72" >/dev/null 2>&1
is "$(admin "SELECT count_star, errors, node_errors FROM stats_shoal_query_digest WHERE digest_text LIKE '%no_such_table_72%'")" \
  "$(printf '1\t1\t0')" "an error relayed from the upstream: errors 1, node_errors 0"
(for _ in $(seq 20); do
  sleep 0.3
  mdb -N -e "SELECT id FROM information_schema.processlist WHERE info LIKE 'SELECT SLEEP(3)%'" |
    while read -r id; do mdb -e "KILL $id" 2>/dev/null; done
done) &
killer=$!
out=$(via -e "SELECT SLEEP(3) FROM t" 2>&1)
wait "$killer"
is "$(admin "SELECT count_star, errors, node_errors FROM stats_shoal_query_digest WHERE digest_text LIKE 'SELECT SLEEP%'")" \
  "$(printf '1\t1\t1')" "the node's own error (${out//$'\n'/ }): errors 1, node_errors 1, count_star 1"

# the reset table returns the values and zeroes them
first=$(admin "SELECT count_star FROM stats_shoal_query_digest_reset WHERE digest = '0x37B5362567EE37EF'")
again=$(admin "SELECT count(*) FROM stats_shoal_query_digest WHERE digest = '0x37B5362567EE37EF'")
like "$first" '^[5-9]$' "stats_shoal_query_digest_reset returns the counts ($first)"
is "$again" "0" "and zeroes them"

# the cap: with --metrics-max-queries 1 the rest is summed as "other"
shoal_stop n
shoal_start m --auto-cache --data-dir "$work" --metrics-address "127.0.0.1:$mport" --metrics-max-queries 1 ||
  bail "node with --metrics-max-queries 1 starts"
for q in "Select 1" "SELECT * FROM t WHERE 1=1"; do via_to m -e "$q" >/dev/null; via_to m -e "$q" >/dev/null; done
via_to m -e "Select 1" >/dev/null
m=$(metrics)
is "$(grep -c '^shoal_cache_hits_total{' <<<"$m")" "2" "--metrics-max-queries 1: one query id plus other"
like "$m" 'shoal_cache_hits_total\{query_id="other"\} 1' "the rest is summed under query_id=\"other\""
done_testing
