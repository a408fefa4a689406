# shellcheck shell=bash
# tests/bench/lib/hitratio.sh: section 14 of scripts/bench, the hit ratio
# under writes (issue 40): how much of a cache keeps serving while rows of
# its table change, with row-precise invalidation and with the table-wide
# one (invalidation_granularity = table), at 20 and at 500 writes a second.
# Uses the binlog MariaDB of consistency.sh (or the MySQL of
# BENCH_UPSTREAM). Sourced by scripts/bench.

# hitratio_table: hitratio.t (10,000 rows, k with 100 values) and the
# marker table, made afresh.
hitratio_table() {
  # (MySQL has no seq_1_to_N: a recursive CTE, deep enough)
  local rows="INSERT INTO hitratio.t SELECT seq, seq % 100 + 1, 0 FROM seq_1_to_10000"
  [ "$UPSTREAM" = mariadb ] || rows="SET SESSION cte_max_recursion_depth = 10000;
    INSERT INTO hitratio.t WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 10000)
      SELECT n, n % 100 + 1, 0 FROM s"
  bl_sql -e "DROP DATABASE IF EXISTS hitratio; CREATE DATABASE hitratio; USE hitratio;
    CREATE TABLE hitratio.t (id INT PRIMARY KEY, k INT, v INT, KEY (k)) ENGINE=InnoDB;
    $rows;
    CREATE TABLE hitratio.mark (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
    INSERT INTO hitratio.mark VALUES (1, 0);
    GRANT ALL ON hitratio.* TO 'app'@'%'"
}

section_hitratio() {
  local gran wps out line phase
  declare -A H
  binlog_mdb_up
  for gran in row table; do
    for wps in 20 500; do
      hitratio_table
      bl_node "hr-$gran-$wps" --auto-cache --cache-ttl-ms 3600000 --invalidation binlog \
        --invalidation-granularity "$gran"
      log "hit ratio: granularity $gran, $wps writes/s on the upstream, ${HITRATIO_DUR}s per read kind"
      out=$("${SHOAL_PYTHON:-/usr/bin/python3}" "$SRCDIR/tests/bench/hitratio.py" "$NODE_PORT" "$BL_PORT" "$wps" "$HITRATIO_DUR" 2>>"$LOGS/hitratio.err") ||
        log "hitratio.py failed ($gran, $wps): $(tail -n 1 "$LOGS/hitratio.err")"
      echo "$out" | sed "s/^/hitratio $gran $wps /" | tee -a "$LOGS/hitratio.txt" >&2
      while read -r line; do
        phase=$(kv phase "$line")
        if [ -n "$phase" ]; then
          H[$gran.$wps.$phase]=$line
        elif [ -n "$(kv differing "$line")" ]; then
          H[$gran.$wps.diff]="$(kv differing "$line") of $(kv of "$line")"
        fi
      done <<<"$out"
      stop_node
    done
  done
  {
    echo "A table of 10,000 rows (\`id\` the primary key, \`k\` indexed, 100 values) on $UP_NAME with its"
    echo "binlog on, one AUTO_CACHE node in binlog mode (1 h TTL), one reader through it (PyMySQL,"
    echo "text protocol) for ${HITRATIO_DUR} s each: 1,000 ids by primary key (\`SELECT v FROM t WHERE id = N\`),"
    echo "then the 100 \`SELECT COUNT(*), SUM(v) FROM t WHERE k = N\`, random keys, all warmed first."
    echo "Meanwhile a writer connected straight to $UP_NAME updates random rows (\`UPDATE t SET v = v + 1"
    echo "WHERE id = R\`), paced to the rate asked (the rate reached is shown). From the cache: the node's"
    echo "hits over the reads made; every other read went to the upstream (a miss, or a read whose answer"
    echo "was not stored because the table's visibility fence was open). Then, the writes stopped and their last one seen through the"
    echo "node, each of the 1,100 answers is read through the node and directly (\`tests/bench/hitratio.py\`)."
    echo "\`row\` is row-precise invalidation (the default); \`table\`, \`invalidation_granularity = table\`:"
    echo "a changed row invalidates every answer of its table."
    echo
    echo "| invalidation | writes/s asked (reached) | primary-key reads | from the cache | \`k\` reads | from the cache | answers differing after the writes stop |"
    echo "|---|---|---|---|---|---|---|"
    for gran in row table; do
      for wps in 20 500; do
        printf '| %s | %s (%s) | %s | **%s %%** | %s | **%s %%** | %s |\n' "$gran" "$wps" \
          "$(kv writes_per_s "${H[$gran.$wps.pk]:-}")" "$(kv reads "${H[$gran.$wps.pk]:-}")" \
          "$(kv cached_pct "${H[$gran.$wps.pk]:-}")" "$(kv reads "${H[$gran.$wps.k]:-}")" \
          "$(kv cached_pct "${H[$gran.$wps.k]:-}")" "${H[$gran.$wps.diff]:-n/a}"
      done
    done
  } >"$B/block-hitratio.md"
  local pk k d
  pk=$(kv cached_pct "${H[row.20.pk]:-}") k=$(kv cached_pct "${H[row.20.k]:-}")
  echo "| 14 | primary-key reads from the cache, 20 writes/s, row-precise | ${pk:-n/a} % | ≥ 90 % | $(verdict "${pk:-0}" '>=' 90) |" >>"$B/targets.md"
  echo "| 14 | \`k\` reads from the cache, 20 writes/s, row-precise | ${k:-n/a} % | ≥ 90 % | $(verdict "${k:-0}" '>=' 90) |" >>"$B/targets.md"
  for gran in row table; do
    for wps in 20 500; do
      d=${H[$gran.$wps.diff]:-n/a}
      echo "| 14 | answers differing after the writes stop ($gran, $wps writes/s) | $d | 0 | $(verdict "${d%% *}" '<=' 0) |" >>"$B/targets.md"
    done
  done
}
