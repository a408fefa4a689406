#!/usr/bin/env bash
# 10-battery: groups of statements (tests/data/battery.sql) through the mariadb
# CLI with --column-type-info --show-warnings -vvv, straight to MariaDB and
# through the node; the outputs (stdout and stderr) must be byte-identical
# once the "(0.001 sec)" timings are removed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

work="$BUILD_TEST/battery"
rm -rf "$work"; mkdir -p "$work"

# One check per statement group of battery.sql, and 6 more.
groups=$(grep -cE '^--[[:space:]]*group:[[:space:]]*[^[:space:]]' "$DATADIR/battery.sql")
plan $((groups + 7))

if load_types; then
  ok "load tests/data/types.sql into shoaltest.shoal_types"
else
  bail "load tests/data/types.sql into shoaltest.shoal_types"
fi

if shoal_start node; then
  ok "node starts (port $node_PORT)"
else
  bail "node starts (port $node_PORT)"
fi

# Split battery.sql into one file per group (plus its client args).
"$PY" - "$DATADIR/battery.sql" "$work" <<'PY'
import re, sys
src, out = sys.argv[1], sys.argv[2]
groups, cur = [], None
for line in open(src, encoding="utf-8"):
    m = re.match(r"--\s*group:\s*(\S+)", line)
    if m:
        cur = [m.group(1), "", []]
        groups.append(cur)
        continue
    if cur is None:
        continue
    m = re.match(r"--\s*args:\s*(.*)", line)
    if m and not cur[2]:
        cur[1] = m.group(1).strip()
        continue
    cur[2].append(line)
for i, (name, args, lines) in enumerate(groups, 1):
    base = "%s/%02d-%s" % (out, i, name)
    open(base + ".sql", "w", encoding="utf-8").write("".join(lines))
    open(base + ".args", "w").write(args or "--default-character-set=utf8mb4")
PY

normalize() { # strip timings
  sed -E 's/ \([0-9]+(\.[0-9]+)? (sec|min|hour|hours|days?)( [0-9]+(\.[0-9]+)? sec)?\)$//' "$1"
}

run_cli() { # port sqlfile args outbase
  local port=$1 sql=$2 cli_args=$3 out=$4
  # shellcheck disable=SC2086 # the group's client options, blank-separated
  timeout 120 mariadb --no-defaults -h127.0.0.1 -P"$port" -uapp -ppw shoaltest \
    --column-type-info --show-warnings -vvv --force $cli_args <"$sql" >"$out.raw" 2>"$out.err.raw"
  echo "exit status $?" >>"$out.err.raw"
  normalize "$out.raw" >"$out.out"
  normalize "$out.err.raw" >"$out.err"
}

ngroups=0
for sql in "$work"/*.sql; do
  base=${sql%.sql}
  name=$(basename "$base")
  group_args=$(cat "$base.args")
  run_cli "$MDB_PORT" "$sql" "$group_args" "$base.direct"
  run_cli "$node_PORT" "$sql" "$group_args" "$base.via"
  ngroups=$((ngroups + 1))
  nstmt=$(grep -c ';' "$sql" || true)
  if cmp -s "$base.direct.out" "$base.via.out" && cmp -s "$base.direct.err" "$base.via.err"; then
    # guard against a comparison of two empty outputs
    if [ ! -s "$base.direct.out" ]; then
      not_ok "$name: direct run printed nothing"; diag_file "$base.direct.err"
    else
      ok "$name ($nstmt statements, $(wc -c <"$base.direct.out") bytes of output identical)"
    fi
  else
    not_ok "$name: output through the node differs from direct"
    diff -u --label direct --label via "$base.direct.out" "$base.via.out" | head -n 80 | cut -c1-240 | cat -v | sed 's/^/#   /'
    diff -u --label direct.stderr --label via.stderr "$base.direct.err" "$base.via.err" | head -n 30 | cut -c1-240 | cat -v | sed 's/^/#   /'
  fi
done
if [ "$ngroups" -ge 30 ]; then ok "ran $ngroups statement groups"; else not_ok "only $ngroups statement groups found"; fi

# The server's version, as VERSION() reports it and as the greeting carries
# it: the upstream's own, MariaDB's "5.5.5-" prefix included (clients such as
# PyMySQL and Connector/C tell MariaDB from MySQL by it).
v_direct=$(mdb -N -e 'SELECT VERSION()')
v_via=$(via -N -e 'SELECT VERSION()')
is "$v_via" "$v_direct" "SELECT VERSION() through the node is the upstream's"
greeting_version() {
  "$PY" -c 'import rawmysql,sys; print(rawmysql.Conn("127.0.0.1", int(sys.argv[1])).read_greeting().server_version)' "$1"
}
gv_direct=$(greeting_version "$MDB_PORT")
gv=$(greeting_version "$node_PORT")
is "$gv" "$gv_direct" "the greeting's server version is the upstream's exactly ($gv)"
like "$gv" '^5\.5\.5-' "the greeting keeps MariaDB's 5.5.5- prefix"

check "node still running" shoal_alive node
done_testing
