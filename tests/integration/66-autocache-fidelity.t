#!/usr/bin/env bash
# 66-autocache-fidelity: answers that depend on session state the query text
# does not show, and the node's own statements kept out of a client's
# session, under --auto-cache with a one-hour TTL (issue #19, items 1, 2, 5):
#   - XPath variables: ExtractValue/UpdateXML read $@var from inside their
#     string argument; after SET @i=2 the answer is b2, never the cached b1;
#     NULL and string values, and another session's value;
#   - SHOW PROFILES lists the client's statements only (the node's settings
#     read would come first and shift the Query_IDs), SHOW PROFILE FOR QUERY 1
#     describes the client's first statement, and a cached SELECT is not
#     served to a profiling session (it would be missing from the list);
#     sessions without profiling on the same pool are cached as before;
#   - a table with a generated column that is not deterministic (RAND())
#     is never served from the cache; one with a deterministic generated
#     column is cached from its first read on;
#   - FOUND_ROWS() after a cache hit counts the hit's rows, as directly;
#   - SET GLOBAL ft_boolean_syntax (a global with no session value that
#     changes MATCH ... IN BOOLEAN MODE) through the node invalidates the
#     cache (main.fulltext_var);
#   - a view's columns are never asked of the server (its base tables are);
#   - the greeting's server version is the upstream's exactly, MariaDB's
#     "5.5.5-" included, and the node's own version is on /health.
# Each output is compared with MariaDB's own, directly.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "auto-cache fidelity: needs a node (SHOAL_FAKE_DIRECT=1)"; fi
plan 30

DD=$(mktemp -d)
on_exit "rm -rf '$DD'"
hport=$(free_port)
if ! shoal_start node --auto-cache --cache-ttl-ms 3600000 --data-dir "$DD" --max-upstream-connections 2 \
  --workers 1 --metrics-address "127.0.0.1:$hport"; then
  bail "node starts"
fi

# --- XPath variables (main.xml)
xml="'<a><b>b1</b><b>b2</b></a>'"
xq="SELECT ExtractValue($xml, '/a/b[\$@i]') AS v"
uq="SELECT UpdateXML($xml, '/a/b[\$@i]', '<c/>') AS v"
xpath_script="SET @i = 1; $xq; $uq; $xq; SET @i = 2; $xq; $uq; SET @i = NULL; $xq; SET @i = 'x'; $xq; SET @i = 1; $xq"
d=$(mdb -e "$xpath_script" 2>&1)
v=$(via -e "$xpath_script" 2>&1)
is "$v" "$d" "XPath \$@i: SET @i = 1, 2, NULL, 'x', 1 give MariaDB's answers"
like "$d" "b2" "  (MariaDB's answer for @i = 2 is b2: the case is real)"
# a cached answer, if there were one, would come from another session's @i
v1=$(via -N -e "SET @i = 1; $xq" 2>&1)
v2=$(via -N -e "SET @i = 2; $xq" 2>&1)
is "$v1/$v2" "b1/b2" "two sessions with @i = 1 and @i = 2 get b1 and b2"
v=$(via -N -e "SET @i = 2; $xq; EXPLAIN LAST STATEMENT" 2>&1)
like "$v" "session-specific" "EXPLAIN LAST STATEMENT: ExtractValue is not cached (session-specific)"
# a plain cacheable read is still cached (the verdict is per function, not global)
via -N -e "SELECT 'plain' AS p" >/dev/null 2>&1
v=$(via -N -e "SELECT 'plain' AS p; EXPLAIN LAST STATEMENT" 2>&1)
like "$v" "readyset_shallow" "a plain SELECT is still answered from the cache"

# --- SHOW PROFILES (main.show_profile)
prof="SET profiling = 1; SELECT 1; SELECT 'two' AS t;
SELECT DISTINCT QUERY_ID FROM information_schema.PROFILING ORDER BY QUERY_ID;
SHOW PROFILE FOR QUERY 1"
d=$(mdb -N -e "$prof" 2>&1 | cut -f1)
v=$(via -N -e "$prof" 2>&1 | cut -f1)
is "$v" "$d" "profiling: the Query_IDs, and the states of SHOW PROFILE FOR QUERY 1, are MariaDB's"
d=$(mdb -N -e "SET profiling = 1; SELECT 1; SELECT 2; SHOW PROFILES" 2>&1 | awk -F'\t' '{print $1, $3}')
v=$(via -N -e "SET profiling = 1; SELECT 1; SELECT 2; SHOW PROFILES" 2>&1 | awk -F'\t' '{print $1, $3}')
unlike "$v" "character_set_client" "SHOW PROFILES: no trace of the node's settings read"
is "$v" "$d" "SHOW PROFILES: the same Query_IDs and statements as directly"
# a cacheable SELECT already in the cache is not served to a profiling
# session: it must show up in its profile
via -N -e "SELECT 'cached' AS c" >/dev/null 2>&1
via -N -e "SELECT 'cached' AS c" >/dev/null 2>&1
pc="SET profiling = 1; SELECT 'cached' AS c; SHOW PROFILES"
v=$(via -N -e "$pc" 2>&1 | awk -F'\t' '{print $1, $NF}')
d=$(mdb -N -e "$pc" 2>&1 | awk -F'\t' '{print $1, $NF}')
is "$v" "$d" "a cached SELECT in a profiling session runs upstream and is profiled"
v=$(via -N -e "SET profiling = 1; SELECT 'cached' AS c; EXPLAIN LAST STATEMENT" 2>&1)
like "$v" "profiling" "EXPLAIN LAST STATEMENT gives profiling as the reason"
# the pool of two is shared: a later session without profiling still caches
v=$(via -N -e "SELECT 'cached' AS c; EXPLAIN LAST STATEMENT" 2>&1)
like "$v" "readyset_shallow" "a session without profiling is served from the cache again"
v=$(via -N -e "SET profiling = 0; SELECT 1; SHOW PROFILES" 2>&1)
d=$(mdb -N -e "SET profiling = 0; SELECT 1; SHOW PROFILES" 2>&1)
is "$v" "$d" "SET profiling = 0: nothing listed, as directly"

# --- FOUND_ROWS() after a cache hit: the server never ran the hit, so the
# node brings the connection's count to the hit's rows before a statement
# that reads it (and after a SHOW, a SET, an empty result)
mdb -e "DROP TABLE IF EXISTS t66; CREATE TABLE t66 (a INT); INSERT INTO t66 VALUES (1), (2), (3)"
on_exit 'mdb -e "DROP TABLE IF EXISTS t66"'
fr="SELECT a FROM t66 ORDER BY a; SELECT FOUND_ROWS(); SELECT a FROM t66 ORDER BY a LIMIT 2; SELECT FOUND_ROWS();
SELECT a FROM t66 WHERE a = 9; SELECT FOUND_ROWS() AS n, ROW_COUNT(); SELECT a FROM t66 ORDER BY a LIMIT 1; SET @x = 1;
SELECT FOUND_ROWS() + 10; SHOW WARNINGS; SELECT @@warning_count"
d=$(mdb -N -e "$fr" 2>&1)
v1=$(via -N -e "$fr" 2>&1)
v2=$(via -N -e "$fr" 2>&1)
is "$v1" "$d" "FOUND_ROWS() after misses: MariaDB's"
is "$v2" "$d" "FOUND_ROWS() after cache hits (3, 2, 0 rows, then a SET): MariaDB's"
v=$(via -N -e "SELECT a FROM t66 ORDER BY a LIMIT 2; EXPLAIN LAST STATEMENT" 2>&1)
like "$v" "readyset_shallow" "  (those reads were hits)"

# --- generated columns that are not deterministic (vcol.query_cache): a
# table with one is never served from the cache; a table whose generated
# columns are deterministic is cached from its first read on
mdb -e "DROP TABLE IF EXISTS t66v, t66g; CREATE TABLE t66v (a INT, r DOUBLE AS (RAND()) VIRTUAL);
INSERT INTO t66v (a) VALUES (1), (2); CREATE TABLE t66g (a INT, b INT AS (a + 1) VIRTUAL); INSERT INTO t66g (a) VALUES (1)"
on_exit 'mdb -e "DROP TABLE IF EXISTS t66v, t66g"'
v1=$(via -N -e "SELECT a, r FROM t66v ORDER BY a" 2>&1)
v2=$(via -N -e "SELECT a, r FROM t66v ORDER BY a" 2>&1)
v3=$(via -N -e "SELECT a, r FROM t66v ORDER BY a; EXPLAIN LAST STATEMENT" 2>&1)
ok_if() { if [ "$1" = 1 ]; then ok "$2"; else not_ok "$2"; diag "${3:-}"; fi; }
ok_if "$([ "$v1" != "$v2" ] && [ -n "$v1" ] && echo 1)" "RAND() as a virtual column: every read is the server's (two reads differ)" "$v1 / $v2"
like "$v3" "generated column that is not deterministic" "  EXPLAIN LAST STATEMENT says why it is not cached"
v=$(via -N -e "SHOW SHOAL STATUS; SELECT a, b FROM t66g; SELECT a, b FROM t66g; SHOW SHOAL STATUS" 2>&1)
h=$(grep -E '^Cache Hits' <<<"$v" | cut -f2 | tr '\n' ' ')
read -r h0 h1 <<<"$h"
is "$((h1 - h0))" 1 "a deterministic generated column: the second read is a hit (its first fill waited for the check)"

# --- a view: no generated column of its own, so the reader asks the server
# nothing about its columns (reading a view's columns opens the view and its
# tables on the reader's connection, which changed the plan of a client's
# next execution in main.derived_view); its base table is checked
mdb -e "DROP VIEW IF EXISTS v66; DROP TABLE IF EXISTS t66b; CREATE TABLE t66b (a INT); INSERT INTO t66b VALUES (1);
CREATE VIEW v66 AS SELECT a FROM t66b"
on_exit 'mdb -e "DROP VIEW IF EXISTS v66; DROP TABLE IF EXISTS t66b"'
mdb -e "SET GLOBAL log_output = 'TABLE'; TRUNCATE mysql.general_log; SET GLOBAL general_log = 1"
v=$(via -N -e "SHOW SHOAL STATUS; SELECT a FROM v66; SELECT a FROM v66; SHOW SHOAL STATUS" 2>&1)
mdb -e "SET GLOBAL general_log = 0"
h=$(grep -E '^Cache Hits' <<<"$v" | cut -f2 | tr '\n' ' ')
read -r h0 h1 <<<"$h"
is "$((h1 - h0))" 1 "a view: the second read is a hit"
cols() { mdb -N -e "SELECT COUNT(*) FROM mysql.general_log WHERE argument LIKE '%information_schema.COLUMNS%TABLE_NAME = ''$1''%'"; }
is "$(cols v66)" 0 "  the reader asked nothing about the view's columns"
is "$(cols t66b)" 1 "  ... and checked its base table once"
mdb -e "TRUNCATE mysql.general_log; SET GLOBAL log_output = 'FILE'"

# --- a global variable that changes answers (main.fulltext_var):
# ft_boolean_syntax has no session value, so no key can hold it; a SET
# GLOBAL of it through the node invalidates everything
mdb -e "DROP TABLE IF EXISTS t66f; CREATE TABLE t66f (b TEXT NOT NULL, FULLTEXT (b)) ENGINE=MyISAM;
INSERT INTO t66f VALUES ('aaaaaa bbbbbb cccccc'), ('bbbbbb cccccc'), ('aaaaaa cccccc')"
on_exit 'mdb -e "SET GLOBAL ft_boolean_syntax = DEFAULT; DROP TABLE IF EXISTS t66f"'
fq="SELECT b FROM t66f WHERE MATCH b AGAINST ('+aaaaaa bbbbbb' IN BOOLEAN MODE) ORDER BY b"
before=$(mdb -N -e "$fq" 2>&1)
via -N -e "$fq" >/dev/null 2>&1
v=$(via -N -e "$fq; EXPLAIN LAST STATEMENT" 2>&1)
like "$v" "readyset_shallow" "a MATCH ... IN BOOLEAN MODE read is cached"
via -e "SET GLOBAL ft_boolean_syntax = ' +-><()~*:\"\"&|'" >/dev/null 2>&1 || diag "SET GLOBAL through the node failed"
v=$(via -N -e "$fq" 2>&1)
d=$(mdb -N -e "$fq" 2>&1)
ok_if "$([ "$d" != "$before" ] && echo 1)" "  (MariaDB's answer changes with ft_boolean_syntax: the case is real)" "$d"
is "$v" "$d" "after SET GLOBAL ft_boolean_syntax through the node: MariaDB's new answer, not the cached one"
via -e "SET GLOBAL ft_boolean_syntax = DEFAULT" >/dev/null 2>&1 || diag "SET GLOBAL through the node failed"
is "$(via -N -e "$fq" 2>&1)" "$before" "  and after SET GLOBAL ... = DEFAULT the first answer again"

# --- the version, as the server's
gv() {
  "$PY" -c 'import rawmysql,sys; print(rawmysql.Conn("127.0.0.1", int(sys.argv[1])).read_greeting().server_version)' "$1"
}
is "$(gv "$node_PORT")" "$(gv "$MDB_PORT")" "the greeting's version is the upstream's exactly"
like "$(gv "$node_PORT")" '^5\.5\.5-' "  with MariaDB's 5.5.5- prefix"
h=$(curl -s "http://127.0.0.1:$hport/health")
like "$h" '"version":"[0-9]' "/health names Shoal's own version"
like "$h" '"upstream_version":"5\.5\.5-' "/health names the upstream's version"
check "node still running" shoal_alive node
done_testing
