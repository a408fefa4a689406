#!/usr/bin/env bash
# 99-docker: the node's image and the compose topology on a real Docker
# engine (docs/deploy.md). Needs root, Debian's docker.io, docker-compose and
# debootstrap; skipped otherwise (or with SHOAL_DOCKER=0). Runs late: the
# dockerd it starts changes the host's iptables, which it puts back at the
# end (scripts/lib/docker.sh).
#   - dockerd with its default settings, started and stopped by pid;
#   - the base image debian:bookworm-slim from Debian packages (debootstrap
#     + docker import), made once per machine and reused;
#   - a trivial container runs: where dockerd cannot start any (read-only
#     cgroups, as in a nested container) the rest is skipped with that reason;
#   - deploy/Dockerfile builds with the documented command (`docker build -f
#     deploy/Dockerfile -t shoal .`: make check runs in its build stage);
#   - the seed's own `docker run` (free host ports, a unique name) turns
#     healthy, serves the leaderboard from the replica and then from its
#     cache, and `docker stop` ends it with status 0 well within 10 s;
#     another with -e METRICS_ADDRESS=0.0.0.0:16034 turns healthy too (the
#     HEALTHCHECK is `shoal --health`, which reads METRICS_ADDRESS);
#   - the databases of deploy/docker-compose.yml: MySQL 8.0 (its default),
#     from a test image of the machine's MySQL 8.0.39 build
#     (../shared/peers/mysql-8.0) where there is one; else MariaDB 10.11,
#     through docker-compose.mariadb.yml, from a test image of Debian's
#     packages; either way the other variant's merged file is checked with
#     `docker-compose config`;
#   - with $PROXYSQL_BIN: deploy/docker-compose.yml with Debian's
#     docker-compose 1.29 (tests/integration/lib/docker/compose.test*.yml
#     swap the public images for local ones) plays seed 004: the digest from
#     stats_mysql_query_digest, rule 50 applied on proxysql-1 and pulled by
#     proxysql-2, reads through both proxies, hits on both nodes, `docker
#     stop` of one node under load with 0 client errors, its return, both
#     nodes stopped under load with 0 errors and the replica serving.
# The wall time of each step goes to the diagnostics and to
# build-test/logs/99-docker.times.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/scripts/lib/common.sh"
. "$SRCDIR/scripts/lib/docker.sh"
# shellcheck source=../../scripts/lib/mysql.sh
. "$SRCDIR/scripts/lib/mysql.sh"

if fake_mode; then
  skip_all "needs the node's image (fake mode)"
fi
if [ "${SHOAL_DOCKER:-1}" = 0 ]; then
  skip_all "SHOAL_DOCKER=0"
fi
if [ "$(id -u)" != 0 ] || ! command -v dockerd >/dev/null || ! command -v docker-compose >/dev/null ||
  ! command -v debootstrap >/dev/null; then
  skip_all "needs root, docker.io, docker-compose and debootstrap"
fi
# A chroot (a fresh-machine check: docs/testing.md) shares the host's network
# and cgroups: a dockerd of its own would fight the host's.
if ischroot 2>/dev/null; then
  skip_all "in a chroot: no dockerd of its own here"
fi
# An unprivileged container (no CAP_NET_ADMIN): dockerd cannot make its
# bridge's NAT chain and exits at once. Say so rather than fail every check.
if ! command -v iptables >/dev/null; then
  skip_all "needs iptables (dockerd's bridge)"
fi
if ! ipt_err=$(iptables -t nat -S 2>&1 >/dev/null); then
  skip_all "no network privilege here (iptables -t nat: $(head -n 1 <<<"$ipt_err")): dockerd cannot start; in a container, run it with --privileged"
fi
PLAN=33
plan $PLAN

work="$BUILD_TEST/docker99"
times="$SHOAL_LOG_DIR/99-docker.times"
mkdir -p "$work"
: >"$times"
tag=t99-$$
project=shoal99$$
seed=shoal-1-$tag
D="$SRCDIR/deploy"
# the MySQL default, or the MariaDB variant (set once the images are built)
compose=(docker-compose -p "$project" -f "$D/docker-compose.yml" -f "$TESTLIB/docker/compose.test.yml"
  -f "$TESTLIB/docker/compose.test-mysql.yml")
timed() { echo "$1 $2" >>"$times"; diag "wall time: $1 $2 s"; }

cleanup99() {
  docker rm -f "$seed" "$seed-m" >/dev/null 2>&1
  [ -n "${SHOAL_TEST_REPLICA_PORT:-}" ] && "${compose[@]}" down -v --remove-orphans >/dev/null 2>&1
  docker_stop
}
on_exit cleanup99

# ------------------------------------------------------------ engine, images
before_fwd=$(iptables -S FORWARD 2>/dev/null | head -n 1)
t=$SECONDS
if docker_start "$work"; then
  ok "dockerd answers ($(docker version --format '{{.Server.Version}}' 2>/dev/null), pid ${DOCKERD_PID:-not ours})"
else
  bail "dockerd starts (log: $work/dockerd.log)"
fi
timed dockerd_start $((SECONDS - t))
if docker_base_image "$work"; then
  how=reused
  [ "$DOCKER_BASE_SECONDS" -gt 0 ] && how=made
  ok "base image debian:bookworm-slim ($how$([ $how = made ] && echo " from Debian packages in $DOCKER_BASE_SECONDS s"))"
  timed "base_image_$how" "$DOCKER_BASE_SECONDS"
else
  not_ok "base image debian:bookworm-slim"
fi
# Can this dockerd start containers at all? In a container whose cgroups
# are read-only (a nested container) dockerd starts, but every container
# (and every RUN of a build) fails: that is the machine, not the image.
if docker run --rm debian:bookworm-slim true >"$work/probe.log" 2>&1; then
  ok "a trivial container runs (docker run --rm debian:bookworm-slim true)"
elif grep -qiE 'cgroup|read-only file system' "$work/probe.log"; then
  why=$(grep -m1 -iE 'cgroup|read-only file system' "$work/probe.log")
  [ ${#why} -le 200 ] || why="...${why: -200}" # (the end of runc's message says what failed)
  skip_n $((PLAN - $(tap_count) - 1)) "the rest" "dockerd cannot start containers here (read-only cgroups, as in a nested container): $why"
  docker_stop
  after_fwd=$(iptables -S FORWARD 2>/dev/null | head -n 1)
  is "$after_fwd|$(iptables -S 2>/dev/null | grep -c DOCKER)" "$before_fwd|0" "dockerd stopped by pid; the host's iptables are as before (FORWARD policy, no DOCKER chains)"
  done_testing
  exit
else
  diag_file "$work/probe.log" 20
  bail "a trivial container runs (docker run --rm debian:bookworm-slim true)"
fi
t=$SECONDS
# exactly as docs/deploy.md and the Dockerfile's header say (with its make check)
if (cd "$SRCDIR" && docker build -q -f deploy/Dockerfile -t shoal-test/shoal:latest .) >"$work/build.log" 2>&1; then
  ok "deploy/Dockerfile builds ($((SECONDS - t)) s, make check in its build stage)"
else
  not_ok "deploy/Dockerfile builds"
  diag_file "$work/build.log" 30
fi
timed image_build $((SECONDS - t))
t=$SECONDS
if docker build -q -f "$TESTLIB/docker/mariadb.Dockerfile" -t shoal-test/mariadb:bookworm "$TESTLIB/docker" \
  >"$work/mariadb-build.log" 2>&1; then
  ok "the test MariaDB image builds from Debian's packages"
else
  not_ok "the test MariaDB image builds from Debian's packages"
  diag_file "$work/mariadb-build.log" 30
fi
timed mariadb_image $((SECONDS - t))
# The compose file's default databases are MySQL 8.0: a test image of the
# machine's 8.0.39 build where it has one, else the MariaDB variant.
t=$SECONDS
db_kind=MariaDB
if m80=$(mysql80_dir 2>"$work/mysql80.err"); then
  ctx=$(mktemp -d "$work/mysql-ctx.XXXX")
  cp -a "$m80" "$ctx/mysql-8.0" && cp "$TESTLIB/docker/mysql-entrypoint.sh" "$TESTLIB/docker/mysql.Dockerfile" "$ctx/"
  if docker build -q -f "$ctx/mysql.Dockerfile" -t shoal-test/mysql:8.0 "$ctx" >"$work/mysql-build.log" 2>&1; then
    ok "the test MySQL 8.0 image (the machine's 8.0.39 build on the base image)"
    db_kind=MySQL
  else
    not_ok "the test MySQL 8.0 image"
    diag_file "$work/mysql-build.log" 30
  fi
  rm -rf "$ctx"
else
  skip "the test MySQL 8.0 image" "no MySQL 8.0 build here ($(tail -n 1 "$work/mysql80.err")): the compose flow runs the MariaDB variant"
fi
timed mysql_image $((SECONDS - t))
other=(-f "$D/docker-compose.yml" -f "$D/docker-compose.mariadb.yml")
other_label="docker-compose.mariadb.yml over it (MariaDB)"
if [ "$db_kind" = MariaDB ]; then
  compose=(docker-compose -p "$project" -f "$D/docker-compose.yml" -f "$D/docker-compose.mariadb.yml"
    -f "$TESTLIB/docker/compose.test.yml" -f "$TESTLIB/docker/compose.test-mariadb.yml")
  other=(-f "$D/docker-compose.yml")
  other_label="docker-compose.yml alone (MySQL 8.0)"
fi
imgs=$(docker-compose "${other[@]}" config 2>"$work/other-config.err" |
  "$PY" -c 'import sys, yaml; s = yaml.safe_load(sys.stdin)["services"]; print(s["db-source"]["image"], s["db-replica"]["image"])' 2>>"$work/other-config.err")
like "$imgs" '^(mysql:8\.0 mysql:8\.0|mariadb:10\.11 mariadb:10\.11)$' \
  "the variant not run here, $other_label: docker-compose config reads it ($imgs)"
[ -n "$imgs" ] || diag_file "$work/other-config.err"

# The replica (and source) of the compose file: also the seed run's upstream.
export SHOAL_NODE1_PORT SHOAL_NODE1_HTTP_PORT SHOAL_NODE2_PORT SHOAL_NODE2_HTTP_PORT SHOAL_PROXYSQL1_PORT \
  SHOAL_PROXYSQL1_ADMIN_PORT SHOAL_PROXYSQL2_PORT SHOAL_PROXYSQL2_ADMIN_PORT SHOAL_PROMETHEUS_PORT \
  SHOAL_GRAFANA_PORT SHOAL_TEST_REPLICA_PORT
for v in SHOAL_NODE1_PORT SHOAL_NODE1_HTTP_PORT SHOAL_NODE2_PORT SHOAL_NODE2_HTTP_PORT SHOAL_PROXYSQL1_PORT \
  SHOAL_PROXYSQL1_ADMIN_PORT SHOAL_PROXYSQL2_PORT SHOAL_PROXYSQL2_ADMIN_PORT SHOAL_PROMETHEUS_PORT \
  SHOAL_GRAFANA_PORT SHOAL_TEST_REPLICA_PORT; do
  printf -v "$v" %s "$(free_port)"
done
t=$SECONDS
if "${compose[@]}" up -d --no-build db-source db-replica >"$work/compose-db.log" 2>&1; then
  ok "compose: the $db_kind source and replica are up and healthy (replication running, sakila loaded) ($((SECONDS - t)) s)"
else
  not_ok "compose: the $db_kind source and replica are up and healthy"
  diag_file "$work/compose-db.log" 30
fi
timed compose_databases $((SECONDS - t))
rep() { mariadb --no-defaults -h127.0.0.1 -P"$SHOAL_TEST_REPLICA_PORT" -uapp -ppw sakila -N -B "$@"; }
lb=$(tr '\n' ' ' <"$DATADIR/leaderboard.sql")
# the replica's own answer, once replication has brought all of sakila
for _ in $(seq 120); do
  [ "$(rep -e "$lb" 2>/dev/null | wc -l)" = 25 ] && break
  sleep 0.5
done
# (ties in the report make its order and its last column vary between runs:
# compared as 98-deploy-files.t does, the first six columns sorted)
rows() { cut -f1-6 | sort; }
rep -e "$lb" 2>&1 | rows >"$work/want.txt"
want=$(md5sum <"$work/want.txt")
export FIRST_ROW
FIRST_ROW=$(rep -e "$lb" 2>/dev/null | head -n 1 | cut -f1-4)

# ------------------------------------------------------------ the seed's docker run
gw=$(ip -4 -o addr show docker0 2>/dev/null | awk '{print $4}' | cut -d/ -f1)
sp=$(free_port) sh=$(free_port)
t=$SECONDS
if docker run -d --name "$seed" -e UPSTREAM_DB_URL="mysql://app:pw@$gw:$SHOAL_TEST_REPLICA_PORT/sakila" \
  -e LISTEN_ADDRESS=0.0.0.0:3307 -e AUTO_CACHE=true -p "$sp:3307" -p "$sh:6034" shoal-test/shoal:latest \
  >"$work/seed.id" 2>&1; then
  ok "the seed's docker run (upstream $gw:$SHOAL_TEST_REPLICA_PORT, ports $sp and $sh)"
else
  not_ok "the seed's docker run"
  diag_file "$work/seed.id"
fi
# Beside it, one whose HTTP endpoint is not on 6034: the same HEALTHCHECK
# must find it (both wait for their first check together).
mh=$(free_port)
docker run -d --name "$seed-m" -e UPSTREAM_DB_URL="mysql://app:pw@$gw:$SHOAL_TEST_REPLICA_PORT/sakila" \
  -e METRICS_ADDRESS=0.0.0.0:16034 -p "$mh:16034" shoal-test/shoal:latest >"$work/seed-m.id" 2>&1
if docker_wait_healthy "$seed" 60; then
  ok "  its HEALTHCHECK turns healthy ($((SECONDS - t)) s)"
else
  not_ok "  its HEALTHCHECK turns healthy ($(docker inspect -f '{{.State.Health.Status}}' "$seed" 2>&1))"
  docker logs "$seed" 2>&1 | tail -n 20 | sed 's/^/#   /'
fi
if docker_wait_healthy "$seed-m" 60; then
  ok "  a container with -e METRICS_ADDRESS=0.0.0.0:16034 turns healthy too ($((SECONDS - t)) s)"
else
  not_ok "  a container with -e METRICS_ADDRESS=0.0.0.0:16034 turns healthy too ($(docker inspect -f '{{.State.Health.Status}}' "$seed-m" 2>&1))"
  docker logs "$seed-m" 2>&1 | tail -n 20 | sed 's/^/#   /'
fi
like "$(docker inspect -f '{{range .State.Health.Log}}{{.ExitCode}} {{.Output}}{{end}}' "$seed-m" 2>&1)" \
  '0 shoal --health: healthy: http://127\.0\.0\.1:16034/health answered 200' \
  "  its health log: shoal --health asked 127.0.0.1:16034"
docker rm -f "$seed-m" >/dev/null 2>&1
# On MySQL the node follows the replica's binlog: it fills its cache once
# the stream is up (status.json's cache_serving), which the wait makes
# sure of rather than a sleep (and that the stream's start is proven).
for _ in $(seq 150); do
  st=$(curl -s "http://127.0.0.1:$sh/status.json")
  grep -q '"cache_serving": *true' <<<"$st" && grep -q '"fence_start_pending": *false' <<<"$st" && break
  sleep 0.2
done
mariadb --no-defaults -h127.0.0.1 -P"$sp" -uapp -ppw sakila -N -B -e "$lb" 2>&1 | rows >"$work/seed.txt"
if cmp -s "$work/seed.txt" "$work/want.txt" && [ "$(wc -l <"$work/want.txt")" = 25 ]; then
  ok "  the leaderboard through the container: the replica's 25 rows"
else
  not_ok "  the leaderboard through the container: the replica's 25 rows"
  diff "$work/want.txt" "$work/seed.txt" | head -n 10 | sed 's/^/#   /'
fi
mariadb --no-defaults -h127.0.0.1 -P"$sp" -uapp -ppw sakila -N -B -e "$lb" >/dev/null 2>&1
hits=$(curl -s "http://127.0.0.1:$sh/metrics" | awk '/^shoal_cache_hits_total\{query_id="q_ad23e0866f6bde4b"\}/ {print $2}')
like "${hits:-0}" '^[1-9]' "  the repeat is a cache hit (/metrics on the published port: $hits)"
t=$SECONDS
docker stop "$seed" >/dev/null 2>&1
took=$((SECONDS - t))
st=$(docker inspect -f '{{.State.ExitCode}}' "$seed" 2>&1)
if [ "$st" = 0 ] && [ "$took" -lt 10 ]; then ok "  docker stop: the node drains and exits 0 in $took s"; else not_ok "  docker stop: exit $st after $took s"; fi
docker rm -f "$seed" >/dev/null 2>&1

# ------------------------------------------------------------ the compose topology
if [ -z "$PROXYSQL_BIN" ] || [ ! -x "$PROXYSQL_BIN" ]; then
  skip_n 16 "compose flow" "no ProxySQL binary to make the ProxySQL image: $PROXYSQL_HOWTO"
else
  ctx=$(mktemp -d "$work/proxysql-ctx.XXXX")
  cp "$PROXYSQL_BIN" "$ctx/proxysql" && cp "$TESTLIB/docker/proxysql.Dockerfile" "$ctx/Dockerfile"
  t=$SECONDS
  if docker build -q -t shoal-test/proxysql:2.7.1 "$ctx" >"$work/proxysql-build.log" 2>&1; then
    ok "the test ProxySQL image (the machine's binary on the base image)"
  else
    not_ok "the test ProxySQL image"
    diag_file "$work/proxysql-build.log" 20
  fi
  rm -rf "$ctx"
  timed proxysql_image $((SECONDS - t))
  t=$SECONDS
  pxa() { mariadb --no-defaults -h127.0.0.1 -P"$1" -ushoal -pshoaladminpw -N -B -e "$2" 2>&1; }
  px1() { pxa "$SHOAL_PROXYSQL1_ADMIN_PORT" "$1"; }
  px2() { pxa "$SHOAL_PROXYSQL2_ADMIN_PORT" "$1"; }
  up=0
  if "${compose[@]}" up -d --no-build >"$work/compose-up.log" 2>&1; then
    for _ in $(seq 120); do
      [ "$(px1 'SELECT 1')" = 1 ] && [ "$(px2 'SELECT 1')" = 1 ] && up=1 && break
      sleep 0.5
    done
  fi
  timed compose_up $((SECONDS - t))
  if [ $up = 1 ]; then
    ok "compose up (docker-compose $(docker-compose version --short 2>/dev/null)): two nodes healthy, both proxies' admin answers ($((SECONDS - t)) s)"
  else
    not_ok "compose up: every service"
    diag_file "$work/compose-up.log" 30
    "${compose[@]}" ps 2>&1 | sed 's/^/#   /'
  fi
  flow=$SECONDS
  wait_rule() { # PORT-FN WANT: until runtime rule 50 count is WANT
    local i
    for i in $(seq 100); do [ "$($1 'SELECT COUNT(*) FROM runtime_mysql_query_rules WHERE rule_id = 50')" = "$2" ] && return 0; sleep 0.1; done
    return 1
  }
  # ProxySQL's cluster takes a peer's rules only when the peer's epoch (in
  # whole seconds) is newer than its own: a change on proxysql-1 in the
  # same second as proxysql-2's last load of its rules is never pulled. So
  # each change waits for the second after proxysql-2's epoch.
  after_px2_epoch() {
    local e i
    e=$(px2 "SELECT epoch FROM runtime_checksums_values WHERE name = 'mysql_query_rules'")
    for i in $(seq 30); do [ "$(date +%s)" -gt "${e:-0}" ] && return 0; sleep 0.1; done
    return 1
  }
  # The walkthrough's state before step 3: no rule for the shape yet.
  after_px2_epoch
  px1 "DELETE FROM mysql_query_rules WHERE rule_id = 50; LOAD MYSQL QUERY RULES TO RUNTIME" >/dev/null
  wait_rule px2 0 || diag "proxysql-2 still has rule 50 after 10 s"
  after_px2_epoch
  viapx() { mariadb --no-defaults -h127.0.0.1 -P"$1" -uapp -ppw sakila -N -B -e "$lb" 2>&1 | rows | tee "$work/via.txt" | md5sum; }
  is "$(viapx "$SHOAL_PROXYSQL1_PORT")" "$want" "before the rule: the leaderboard through proxysql-1 (to the replica)"
  top=$(px1 "SELECT hostgroup, digest FROM stats_mysql_query_digest ORDER BY sum_time DESC LIMIT 1")
  is "$top" "20	0xAD23E0866F6BDE4B" "  step 1: the top digest by sum_time is the seed's 0xAD23E0866F6BDE4B, in hostgroup 20"
  digest=$(cut -f2 <<<"$top")
  px1 "INSERT INTO mysql_query_rules (rule_id, active, digest, destination_hostgroup, apply) VALUES (50, 1, '${digest:-0x0}', 30, 1); LOAD MYSQL QUERY RULES TO RUNTIME; SAVE MYSQL QUERY RULES TO DISK" >/dev/null
  t=$SECONDS
  if wait_rule px2 1; then ok "  step 3 on proxysql-1 only: proxysql-2 pulls rule 50 (cluster mode, within $((SECONDS - t + 1)) s)"; else not_ok "  proxysql-2 pulls rule 50"; fi
  for i in 1 2 3; do
    a=$(viapx "$SHOAL_PROXYSQL1_PORT") b=$(viapx "$SHOAL_PROXYSQL2_PORT")
  done
  is "$a $b" "$want $want" "reads through both proxies: the replica's rows"
  d1=$(px1 "SELECT hostgroup, count_star FROM stats_mysql_query_digest WHERE digest = '$digest' AND hostgroup = 30")
  d2=$(px2 "SELECT hostgroup, count_star FROM stats_mysql_query_digest WHERE digest = '$digest' AND hostgroup = 30")
  is "$d1 / $d2" "30	3 / 30	3" "  check 1: each proxy's stats_mysql_query_digest counts its own 3 in hostgroup 30"
  n1=$(curl -s "http://127.0.0.1:$SHOAL_NODE1_HTTP_PORT/metrics" | awk '/^shoal_cache_(hits|misses)_total\{query_id="q_ad23e0866f6bde4b"\}/ {s += $2} END {print s + 0}')
  n2=$(curl -s "http://127.0.0.1:$SHOAL_NODE2_HTTP_PORT/metrics" | awk '/^shoal_cache_(hits|misses)_total\{query_id="q_ad23e0866f6bde4b"\}/ {s += $2} END {print s + 0}')
  is "$((n1 + n2))" 6 "  check 2: the nodes saw the 6 reads between them (shoal-1 $n1, shoal-2 $n2)"

  c1=$("${compose[@]}" ps -q shoal-1) c2=$("${compose[@]}" ps -q shoal-2)
  "$PY" "$TESTLIB/docker_load.py" "$SHOAL_PROXYSQL1_PORT" "$c1" >"$work/stop1.json" 2>"$work/stop1.err"
  r=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["stops"][0]; print(d["errors"], s["exit"], s["stop_s"], s["answers"], d["answers"])' "$work/stop1.json" 2>/dev/null)
  read -r e x s a n <<<"${r:-x x x x x}"
  is "$e" 0 "docker stop shoal-1 under load (4 clients through proxysql-1): 0 client errors ($n answers)"
  if [ "$x" = 0 ] && "$PY" -c "import sys; sys.exit(0 if float('$s') < 10 else 1)" 2>/dev/null; then
    ok "  shoal-1 drained and exited 0 in $s s (docker stop's grace: 10 s)"
  else
    not_ok "  shoal-1 drained and exited 0 within 10 s (exit $x, $s s)"; diag_file "$work/stop1.err"
  fi
  [ "$e" = 0 ] || diag "$(cat "$work/stop1.json")"
  pool() { $1 "SELECT status FROM runtime_mysql_servers WHERE hostgroup_id = 30 AND hostname = '$2'"; }
  like "$(pool px1 shoal-1) $(pool px2 shoal-1)" "^OFFLINE_SOFT OFFLINE_SOFT$" "  it set itself OFFLINE_SOFT on both proxies (PROXYSQL_ADMIN)"
  docker start "$c1" >/dev/null
  back=0
  for _ in $(seq 60); do
    [ "$(pool px1 shoal-1) $(pool px2 shoal-1)" = "ONLINE ONLINE" ] && back=1 && break
    sleep 0.5
  done
  is "$back" 1 "docker start shoal-1: ONLINE again on both proxies"
  h0=$(curl -s "http://127.0.0.1:$SHOAL_NODE1_HTTP_PORT/metrics" | grep -c '^shoal_up 1')
  for i in $(seq 10); do viapx "$SHOAL_PROXYSQL2_PORT" >/dev/null; done
  q=$(curl -s "http://127.0.0.1:$SHOAL_NODE1_HTTP_PORT/metrics" | awk '/^shoal_queries_total/ {s += $2} END {print s + 0}')
  like "$h0:$q" "^1:[1-9]" "  and gets reads again ($q of 10)"

  fb0=$(px1 "SELECT Queries FROM stats_mysql_connection_pool WHERE hostgroup = 30 AND srv_host = 'db-replica'")
  "$PY" "$TESTLIB/docker_load.py" "$SHOAL_PROXYSQL1_PORT" "$c1" "$c2" >"$work/stop2.json" 2>"$work/stop2.err"
  r=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["errors"], d["stops"][1]["answers"], " ".join(s["exit"] for s in d["stops"]), max(s["stop_s"] for s in d["stops"]))' "$work/stop2.json" 2>/dev/null)
  read -r e a x1 x2 s <<<"${r:-x x x x x}"
  is "$e" 0 "docker stop both nodes under load: 0 client errors"
  is "$x1 $x2" "0 0" "  both exit 0 (longest stop $s s)"
  fb1=$(px1 "SELECT Queries FROM stats_mysql_connection_pool WHERE hostgroup = 30 AND srv_host = 'db-replica'")
  if [ "${fb1:-0}" -gt "${fb0:-0}" ] 2>/dev/null; then
    ok "  the replica (weight 1 in hostgroup 30) serves the reads once both are gone ($fb0 -> $fb1 queries; $a answers after the second stop)"
  else
    not_ok "  the replica serves the reads once both are gone ($fb0 -> $fb1 queries)"
  fi
  timed compose_flow $((SECONDS - flow))
fi

# ------------------------------------------------------------ clean up
"${compose[@]}" down -v --remove-orphans >"$work/compose-down.log" 2>&1
left=$(docker ps -aq --filter "name=$project" | wc -l)
is "$left" 0 "compose down: no container of the test is left"
docker_stop
after_fwd=$(iptables -S FORWARD 2>/dev/null | head -n 1)
is "$after_fwd|$(iptables -S 2>/dev/null | grep -c DOCKER)" "$before_fwd|0" "dockerd stopped by pid; the host's iptables are as before (FORWARD policy, no DOCKER chains)"
done_testing
