#!/usr/bin/env bash
# 98-deploy-files: the files under deploy/ checked without Docker, by
# running what they describe natively:
#   - every environment variable the Dockerfile and the compose file give a
#     node is a real setting; deploy/shoal.conf lists every setting with its
#     real default, and a node starts with all of them uncommented;
#   - the compose file parses, its mounts exist, and it agrees with
#     proxysql.cnf (parsed): hostgroups 10/20/30, both nodes at weight 1000
#     and the replica at 1, backend user = the nodes' upstream user, monitor
#     user = the nodes' MONITOR_USER, proxies and backends are services;
#   - the MariaDB init SQL of the compose file sets up real replication
#     between two private MariaDB servers, with sakila; two nodes started
#     with the compose file's environment serve the seed's leaderboard query
#     from the replica, hit on repeat, and compute the digest that
#     proxysql.cnf routes; the Dockerfile's HEALTHCHECK command passes on a
#     serving node and fails on a stopped one;
#   - every metric name and label in alerts.yml and the dashboard is in a
#     live node's /metrics; promtool checks and unit-tests the rules;
#   - systemd-analyze verifies the unit; its stop timeout covers the drain;
#   - the Dockerfile's build-stage commands build and install the node in a
#     clean copy of the tree, and its runtime stage installs every library
#     the installed binaries need; .dockerignore keeps build output out.
# About 60-90 s (one build, two MariaDB servers, sakila).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then
  skip_all "deploy files are checked against real nodes (fake mode)"
fi
if ! "$PY" -c 'import yaml' 2>/dev/null; then
  skip_all "python3-yaml is missing (scripts/lib/common.sh lists it)"
fi

# static checks 36, a node with shoal.conf 1, systemd 8, the agent's unit and config 4, replication 9, the
# two nodes 12, HEALTHCHECK 4, metric names 3, promtool 4, the Dockerfile's
# build 5, .dockerignore 2
plan 88
D="$SRCDIR/deploy"
work="$BUILD_TEST/deploy98"
rm -rf "$work"
mkdir -p "$work"
export D SHOAL_BIN WORK="$work"

# ------------------------------------------------------------ static checks
"$PY" - <<'PY' || not_ok "python part (static checks) crashed"
import os, re, yaml
import deploy_check as dc
from taplib import ok, is_

D, BIN = os.environ["D"], os.environ["SHOAL_BIN"]
envs = dc.env_names(BIN) | {"SHOAL_CONFIG"}
sett = dc.settings(BIN)

# Dockerfile: ENV lines and the -e NAME= of the docker run example.
df = open(D + "/Dockerfile").read()
used = set(re.findall(r"-e ([A-Z_]+)=", df)) | set(re.findall(r"^ENV ([A-Z_]+)", df, re.M))
bad = sorted(used - envs)
ok(used and not bad, "Dockerfile: every variable given to the node is a setting (%s)" % ", ".join(sorted(used)), repr(bad))
for e in ("UPSTREAM_DB_URL", "LISTEN_ADDRESS", "AUTO_CACHE"):
    ok(e in used, "Dockerfile: the seed's docker run sets %s" % e)
ok(re.search(r"^EXPOSE 3307 6034 6035$", df, re.M), "Dockerfile: EXPOSE 3307 6034 6035")
ok(re.search(r"^USER shoal", df, re.M), "Dockerfile: runs as the shoal user")
is_(sett["metrics_address"][1], "0.0.0.0:6034", "the node's METRICS_ADDRESS default is 0.0.0.0:6034 (the port EXPOSE and the docs name)")

# Compose.
c = yaml.safe_load(open(D + "/docker-compose.yml"))
svcs = c["services"]
is_(sorted(svcs), sorted(["mariadb-source", "mariadb-replica", "shoal-1", "shoal-2", "proxysql-1",
                          "proxysql-2", "prometheus", "grafana"]), "compose: the seed's services")
nodes = {n: s for n, s in svcs.items() if n.startswith("shoal-")}
for n, s in sorted(nodes.items()):
    bad = sorted(set(s["environment"]) - envs)
    ok(not bad, "compose %s: every environment variable is a setting" % n, repr(bad))
    is_((s["build"]["context"], s["build"]["dockerfile"]), ("..", "deploy/Dockerfile"),
        "compose %s: built from deploy/Dockerfile with the tree as context" % n)
    grace = int(re.match(r"(\d+)s$", s["stop_grace_period"]).group(1))
    drain = int(s["environment"].get("DRAIN_TIMEOUT_MS") or sett["drain_timeout_ms"][1]) / 1000
    ok(grace > drain, "compose %s: stop_grace_period %ds > drain timeout %ds" % (n, grace, drain))
missing = []
for n, s in svcs.items():
    for v in s.get("volumes", []):
        src = v.split(":")[0]
        if src.startswith("."):
            if not os.path.exists(os.path.normpath(os.path.join(D, src))):
                missing.append(src)
        elif src not in (c.get("volumes") or {}):
            missing.append(src)
    for dep in s.get("depends_on", []):
        if dep not in svcs:
            missing.append(dep)
ok(not missing, "compose: every mounted file, named volume and depends_on target exists", repr(missing))
hostports = [p.split(":")[0] for s in svcs.values() for p in s.get("ports", [])]
ok(len(hostports) == len(set(hostports)), "compose: no host port published twice", repr(hostports))

# ProxySQL config, parsed.
p = dc.parse_libconfig(open(D + "/proxysql/proxysql.cnf").read())
try:
    dc.parse_libconfig(open(D + "/proxysql/proxysql.cnf").read().replace("mysql_users=\n(", "mysql_users=\n", 1))
    ok(False, "the libconfig reader rejects a broken file")
except dc.CfgError:
    ok(True, "the libconfig reader rejects a broken file")
servers = p["mysql_servers"]
hg = {}
for s in servers:
    hg.setdefault(s["hostgroup_id"], []).append((s["hostname"], s["port"], s["weight"]))
is_(sorted(hg), [10, 20, 30], "proxysql.cnf: hostgroups 10, 20, 30")
is_(hg[10], [("mariadb-source", 3306, 1)], "hostgroup 10: the source")
is_(hg[20], [("mariadb-replica", 3306, 1)], "hostgroup 20: the replica")
lport = {n: int(s["environment"]["LISTEN_ADDRESS"].rsplit(":", 1)[1]) for n, s in nodes.items()}
want30 = sorted([(n, lport[n], 1000) for n in nodes] + [("mariadb-replica", 3306, 1)])
is_(sorted(hg[30]), want30, "hostgroup 30: both nodes at weight 1000 (their LISTEN_ADDRESS port), the replica at weight 1")
hosts = {s["hostname"] for s in servers} | {s["hostname"] for s in p["proxysql_servers"]}
ok(hosts <= set(svcs), "proxysql.cnf: every host is a compose service", repr(hosts - set(svcs)))
is_(sorted(s["hostname"] for s in p["proxysql_servers"]), ["proxysql-1", "proxysql-2"], "proxysql_servers: the two proxies (cluster mode)")
adm = p["admin_variables"]
creds = dict(x.split(":", 1) for x in adm["admin_credentials"].split(";"))
is_(creds.get(adm["cluster_username"]), adm["cluster_password"], "the cluster user is one of admin_credentials")
rules = sorted(p["mysql_query_rules"], key=lambda r: r["rule_id"])
digest_rules = [r for r in rules if r.get("digest")]
is_(len(digest_rules), 1, "one rule routes by digest")
r = digest_rules[0]
is_((r["destination_hostgroup"], r["apply"], r["active"]), (30, 1, 1), "rule %d: digest %s -> hostgroup 30, apply" % (r["rule_id"], r["digest"]))
ok(all(x["rule_id"] > r["rule_id"] for x in rules if x is not r), "the digest rule comes before the catch-all")
ok(all(x["destination_hostgroup"] in hg for x in rules), "every rule's destination hostgroup has servers")
url = nodes["shoal-1"]["environment"]["UPSTREAM_DB_URL"]
m = re.match(r"mysql://([^:]+):([^@]+)@([^:/]+):(\d+)/(\w+)$", url)
users = {u["username"]: u["password"] for u in p["mysql_users"]}
is_(users.get(m.group(1)), m.group(2), "ProxySQL's backend user is the nodes' upstream user (%s)" % m.group(1))
is_((m.group(3), int(m.group(4))), ("mariadb-replica", 3306), "the nodes' upstream is the replica")
mv = p["mysql_variables"]
for n, s in sorted(nodes.items()):
    is_((s["environment"]["MONITOR_USER"], s["environment"]["MONITOR_PASSWORD"]),
        (mv["monitor_username"], mv["monitor_password"]), "%s: MONITOR_USER/PASSWORD are ProxySQL's monitor user" % n)
init = open(D + "/mariadb/source/01-users.sql").read()
ok("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'" % (mv["monitor_username"], mv["monitor_password"]) in init,
   "the source's init SQL creates the monitor user")
ok("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'" % (m.group(1), m.group(2)) in init,
   "the source's init SQL creates the application user")
open(os.environ.get("WORK", "/tmp") + "/digest", "w").write(r["digest"])

# shoal.conf: every setting, with its real default.
conf = dict(dc.conf_settings(D + "/shoal.conf"))
is_(sorted(conf), sorted(sett), "shoal.conf lists every setting of shoal --help, commented out")
def norm(v):
    v = re.sub(r";.*$", "", v)          # "10000; 3600000 with binlog invalidation"
    v = re.sub(r" \(.*\)$", "", v)
    if v.startswith("("):               # "(none)", "(the upstream user)"
        return ""
    units = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
    m2 = re.match(r"^(\d+)([KMG])$", v)
    return str(int(m2.group(1)) * units[m2.group(2)]) if m2 else v
wrong = [(k, conf.get(k), d) for k, (e, d) in sett.items()
         if k not in ("upstream_db_url", "workers") and norm(conf.get(k, "?")) != norm(d)]
ok(not wrong, "shoal.conf: each commented value is the real default", repr(wrong))
PY

# A node started with every line of shoal.conf uncommented.
sed -E 's/^# ([a-z][a-z0-9_]*) = ?/\1 = /' "$D/shoal.conf" |
  sed -E "s#^upstream_db_url = .*#upstream_db_url = mysql://app:pw@127.0.0.1:$MDB_PORT/shoaltest#" >"$work/all.conf"
if shoal_start allconf --config "$work/all.conf" --data-dir "$work/allconf-data"; then
  ok "a node starts with every setting of shoal.conf uncommented"
  shoal_stop allconf
else
  not_ok "a node starts with every setting of shoal.conf uncommented"
fi

# ------------------------------------------------------------ systemd
if command -v systemd-analyze >/dev/null; then
  sed "s#/usr/bin/shoal#$SHOAL_BIN#" "$D/systemd/shoal.service" >"$work/shoal.service"
  sa=$(systemd-analyze verify "$work/shoal.service" 2>&1)
  is "$?:$sa" "0:" "systemd-analyze verify shoal.service: no error, no warning"
  exposure=$(systemd-analyze security --offline=yes "$work/shoal.service" 2>/dev/null |
    sed -nE 's/.*Overall exposure level for shoal.service: ([0-9.]+).*/\1/p')
  check "systemd-analyze security: exposure ${exposure:-?} is at most 2.0 (hardened)" \
    awk -v e="${exposure:-99}" 'BEGIN { exit !(e <= 2.0) }'
else
  skip "systemd-analyze verify" "systemd-analyze is not installed"
  skip "systemd-analyze security" "systemd-analyze is not installed"
fi
# the agent's unit and config (docs/ha-agent.md, Auto-route)
AGENT_BIN="$SRCDIR/ha/shoal-ha"
if command -v systemd-analyze >/dev/null; then
  sed "s#/usr/bin/shoal-ha#$AGENT_BIN#; s#/etc/shoal/shoal-ha.conf#$D/shoal-ha.conf#" \
    "$D/systemd/shoal-ha.service" >"$work/shoal-ha.service"
  sa=$(systemd-analyze verify "$work/shoal-ha.service" 2>&1)
  is "$?:$sa" "0:" "systemd-analyze verify shoal-ha.service: no error, no warning"
  exposure=$(systemd-analyze security --offline=yes "$work/shoal-ha.service" 2>/dev/null |
    sed -nE 's/.*Overall exposure level for shoal-ha.service: ([0-9.]+).*/\1/p')
  check "systemd-analyze security shoal-ha.service: exposure ${exposure:-?} is at most 2.0" \
    awk -v e="${exposure:-99}" 'BEGIN { exit !(e <= 2.0) }'
else
  skip "systemd-analyze verify shoal-ha.service" "systemd-analyze is not installed"
  skip "systemd-analyze security shoal-ha.service" "systemd-analyze is not installed"
fi
like "$(cat "$D/systemd/shoal-ha.service")" $'\nExecStart=/usr/bin/shoal-ha watch --auto-route --config /etc/shoal/shoal-ha.conf' \
  "shoal-ha.service runs watch --auto-route with /etc/shoal/shoal-ha.conf"
# every key of the example is a setting: the agent reads it (exit 3: no
# ProxySQL reachable at the example's addresses; 2 would be a bad file)
"$AGENT_BIN" status --config "$D/shoal-ha.conf" --connect-timeout-ms 200 --http-timeout-ms 200 \
  --proxysql-admin mysql://x:y@127.0.0.1:1 >"$work/agent-conf.out" 2>&1
rc=$?
is "$rc" 3 "deploy/shoal-ha.conf: the agent reads every key (then finds no ProxySQL: exit 3)"
[ "$rc" = 3 ] || diag_file "$work/agent-conf.out"
unit=$(cat "$D/systemd/shoal.service")
stop=$(sed -nE 's/^TimeoutStopSec=([0-9]+)$/\1/p' <<<"$unit")
check "TimeoutStopSec ${stop:-?} s is longer than the default drain (30 s)" test "${stop:-0}" -gt 30
like "$unit" $'\nExecReload=/bin/kill -HUP \\$MAINPID' "ExecReload sends SIGHUP"
like "$unit" $'\nKillSignal=SIGTERM' "KillSignal=SIGTERM (the drain)"
like "$unit" $'\nUser=shoal' "User=shoal"
like "$unit" $'\nEnvironmentFile=-/etc/shoal/shoal.env' "secrets from /etc/shoal/shoal.env"
like "$unit" $'\nRestartPreventExitStatus=2' "no restart loop on a configuration error (exit 2)"

# ------------------------------------------------------------ replication
# The compose file's MariaDB pair, natively: install, start with the
# compose command lines, run the init SQL as the image's entrypoint would
# (root, in file order), replica last.
mstop() { # DIR
  local p
  p=$(cat "$1/pid" 2>/dev/null || true)
  if pid_alive "$p" && grep -q mariadbd "/proc/$p/cmdline" 2>/dev/null; then
    kill -TERM "$p" 2>/dev/null
    wait_gone "$p" 30
  fi
}
mstart() { # DIR PORT ARGS...
  local dir=$1 port=$2
  shift 2
  mkdir -p "$dir"
  mariadb-install-db --no-defaults --datadir="$dir/data" --user="$(id -un)" \
    --auth-root-authentication-method=normal --skip-test-db --force >"$dir/install.log" 2>&1 || return 1
  mariadbd --no-defaults --datadir="$dir/data" --socket="$dir/sock" --port="$port" \
    --bind-address=127.0.0.1 --pid-file="$dir/pid" --user="$(id -un)" \
    --log-error="$dir/error.log" --innodb-buffer-pool-size=64M --skip-name-resolve \
    --innodb-flush-log-at-trx-commit=2 "$@" </dev/null >/dev/null 2>&1 &
  for _ in $(seq 1 120); do
    mariadb-admin --no-defaults --socket="$dir/sock" -uroot ping >/dev/null 2>&1 && return 0
    sleep 0.25
  done
  return 1
}
root_sql() { mariadb --no-defaults --socket="$1/sock" -uroot "${@:2}"; }
src="$work/source" rep="$work/replica"
sport=$(free_port) rport=$(free_port)
on_exit "mstop '$src'"
on_exit "mstop '$rep'"
compose_args() { # SERVICE: its command lines from the compose file
  "$PY" -c 'import yaml,sys; print("\n".join(yaml.safe_load(open(sys.argv[1]))["services"][sys.argv[2]]["command"]))' \
    "$D/docker-compose.yml" "$1"
}
mapfile -t sargs < <(compose_args mariadb-source)
mapfile -t rargs < <(compose_args mariadb-replica)
if mstart "$src" "$sport" "${sargs[@]}" && mstart "$rep" "$rport" "${rargs[@]}"; then
  ok "source and replica start with the compose file's options (${sargs[*]} / ${rargs[*]})"
else
  tail -n 5 "$src/error.log" "$rep/error.log" 2>/dev/null | sed 's/^/#   /'
  bail "source and replica start with the compose file's options"
fi
check "the source's init SQL runs (01-users.sql)" root_sql "$src" <"$D/mariadb/source/01-users.sql"
check "sakila loads on the source (02-sakila.sql)" root_sql "$src" <"$DATADIR/sakila/sakila.sql"
sed -e "s/'mariadb-source'/'127.0.0.1'/" -e "s/MASTER_PORT = 3306/MASTER_PORT = $sport/" \
  "$D/mariadb/replica/01-replication.sql" >"$work/replica.sql"
check "the replica's init SQL runs (CHANGE MASTER, START SLAVE)" root_sql "$rep" <"$work/replica.sql"
want=$(root_sql "$src" -N -e 'SELECT COUNT(*) FROM sakila.payment')
n=""
for _ in $(seq 1 240); do
  n=$(mariadb --no-defaults -h127.0.0.1 -P"$rport" -uapp -ppw -N -e 'SELECT COUNT(*) FROM sakila.payment' 2>/dev/null)
  [ -n "$want" ] && [ "$n" = "$want" ] && break
  sleep 0.25
done
is "$n" "${want:-source has no sakila}" "the replica has sakila ($want payments, as the source) and the app user, by replication"
st=$(root_sql "$rep" -e 'SHOW SLAVE STATUS\G')
like "$st" 'Slave_IO_Running: Yes' "replica IO thread running"
like "$st" 'Slave_SQL_Running: Yes' "replica SQL thread running"
like "$(root_sql "$rep" -N -e 'SELECT @@read_only')" '^1$' "the replica is read-only"
root_sql "$src" -e "CREATE TABLE sakila.deploy98 (id INT PRIMARY KEY); INSERT INTO sakila.deploy98 VALUES (7)"
n=""
for _ in $(seq 1 40); do
  n=$(root_sql "$rep" -N -e 'SELECT id FROM sakila.deploy98' 2>/dev/null)
  [ "$n" = 7 ] && break
  sleep 0.25
done
is "$n" 7 "a later write on the source reaches the replica"

# ------------------------------------------------------------ the two nodes
# Started with the compose file's environment (addresses moved to free
# ports, the replica's host and port substituted), nothing on the command
# line, as the image's ENTRYPOINT runs them.
node_env() { # SERVICE: NAME=value lines
  "$PY" -c 'import yaml,sys; e=yaml.safe_load(open(sys.argv[1]))["services"][sys.argv[2]]["environment"]; print("\n".join("%s=%s" % kv for kv in e.items()))' \
    "$D/docker-compose.yml" "$1"
}
declare -A NPORT NMET NADM NPID
for n in shoal-1 shoal-2; do
  NPORT[$n]=$(free_port) NMET[$n]=$(free_port) NADM[$n]=$(free_port)
  node_env "$n" | sed -e "s#@mariadb-replica:3306/#@127.0.0.1:$rport/#" \
    -e "s#^LISTEN_ADDRESS=.*#LISTEN_ADDRESS=127.0.0.1:${NPORT[$n]}#" \
    -e "s#^METRICS_ADDRESS=.*#METRICS_ADDRESS=127.0.0.1:${NMET[$n]}#" >"$work/$n.env"
  mapfile -t env <"$work/$n.env"
  env -i PATH="$PATH" "${env[@]}" ADMIN_ADDRESS="127.0.0.1:${NADM[$n]}" DATA_DIR="$work/$n-data" \
    "$SHOAL_BIN" >>"$SHOAL_LOG_DIR/98-deploy-files.$n.log" 2>&1 </dev/null &
  NPID[$n]=$!
  on_exit "kill -TERM ${NPID[$n]}"
done
lb=$(sed -e ':a' -e 'N' -e '$!ba' -e 's/[[:space:];]*$//' "$DATADIR/leaderboard.sql")
nq() { mariadb --no-defaults -h127.0.0.1 -P"$1" -uapp -ppw sakila -N "${@:2}"; }
for n in shoal-1 shoal-2; do
  up=0
  for _ in $(seq 1 100); do nq "${NPORT[$n]}" -e 'SELECT 1' >/dev/null 2>&1 && { up=1; break; }; sleep 0.1; done
  is "$up" 1 "$n starts from the compose environment and accepts app/pw"
  # The leaderboard is not deterministic: it orders by lifetime_value alone,
  # which has ties (194.61), and its top_category subquery picks one of
  # categories with equal sums. MariaDB itself answers differently depending
  # on the session's history (a connection that changed schema with
  # COM_INIT_DB, as pooled ones do, against one that connected with it). So
  # the replica's rows are compared as a set without top_category; the two
  # answers through the node (the second a cache hit) must be byte for byte
  # the same.
  a=$(nq "${NPORT[$n]}" -e "$lb" 2>&1)
  b=$(nq "${NPORT[$n]}" -e "$lb" 2>&1)
  d=$(mariadb --no-defaults -h127.0.0.1 -P"$rport" -uapp -ppw sakila -N -e "$lb" 2>&1 | cut -f1-6 | sort | md5sum)
  is "$(cut -f1-6 <<<"$a" | sort | md5sum) $(cut -f1-6 <<<"$b" | sort | md5sum)" "$d $d" \
    "$n: the leaderboard query twice, the replica's rows (as a set, without the tie-prone top_category)"
  is "$(md5sum <<<"$a")" "$(md5sum <<<"$b")" "$n: the cached answer is the first answer, byte for byte"
  met=$(curl -s "http://127.0.0.1:${NMET[$n]}/metrics")
  hits=$(sed -nE 's/^shoal_queries_total\{destination="cache"\} ([0-9]+)$/\1/p' <<<"$met")
  check "$n: the repeat was a cache hit (shoal_queries_total{destination=\"cache\"} = ${hits:-none})" test "${hits:-0}" -ge 1
  mon=$(mariadb --no-defaults -h127.0.0.1 -P"${NPORT[$n]}" -umonitor -pmonitorpw -N -e 'SELECT @@global.read_only read_only' 2>&1)
  is "$mon" 1 "$n: the compose monitor user logs in and reads read_only = 1"
  dg=$(mariadb --no-defaults -h127.0.0.1 -P"${NADM[$n]}" -uadmin -padmin -N -e \
    "SELECT digest FROM stats_shoal_query_digest WHERE digest_text LIKE 'SELECT c.customer_id%' LIMIT 1" 2>&1)
  is "$dg" "$(cat "$work/digest")" "$n: the leaderboard's digest is the one proxysql.cnf routes to hostgroup 30"
done
echo "$met" >"$work/metrics.txt"

# The Dockerfile's HEALTHCHECK command (exec form), run with the node's
# environment as Docker runs it in the container, against a serving node
# and a stopped one.
hc=$(sed -nE 's/^ +CMD \[(.*)\]$/\1/p' "$D/Dockerfile" | tr -d '",')
is "$hc" "/usr/bin/shoal --health" "the HEALTHCHECK command is shoal --health (it reads METRICS_ADDRESS itself)"
read -r -a hc1 <<<"${hc/\/usr\/bin\/shoal/$SHOAL_BIN}"
mapfile -t env <"$work/shoal-1.env"
check "HEALTHCHECK passes on a serving node (METRICS_ADDRESS 127.0.0.1:${NMET[shoal-1]} from the environment)" \
  env -i PATH="$PATH" "${env[@]}" "${hc1[@]}"
kill -TERM "${NPID[shoal-1]}"
wait "${NPID[shoal-1]}"
is "$?" 0 "shoal-1 drains and exits 0 on SIGTERM (docker stop)"
if env -i PATH="$PATH" "${env[@]}" "${hc1[@]}" >/dev/null 2>&1; then not_ok "HEALTHCHECK fails once the node is gone"; else ok "HEALTHCHECK fails once the node is gone"; fi

# ------------------------------------------------------------ metrics names
"$PY" - <<'PY' || not_ok "python part (metric names) crashed"
import os
import deploy_check as dc
from taplib import ok

D, W = os.environ["D"], os.environ["WORK"]
samples = dc.scrape_samples(open(W + "/metrics.txt").read())
exprs = [("alert " + a, e) for a, e in dc.alert_exprs(D + "/prometheus/alerts.yml")]
exprs += [("dashboard: " + t, e) for t, e in dc.dashboard_exprs(D + "/grafana/shoal-dashboard.json")]
synthetic = {"up"}  # Prometheus' own, per target
names, missing, badlabels = set(), [], []
for where, e in exprs:
    for m in dc.promql_metrics(e):
        names.add(m)
        if m not in samples and m not in synthetic:
            missing.append((where, m))
    for m, labels in dc.promql_selectors(e):
        if m in synthetic or m not in samples:
            continue
        have = set().union(*[set(s) for s in samples[m]]) | {"job", "instance"}
        for k, v in labels.items():
            if k not in have:
                badlabels.append((where, m, k))
            elif k not in ("job", "instance") and "$" not in v and not v.startswith(".") \
                    and "!" not in v and v not in {s.get(k) for s in samples[m]}:
                badlabels.append((where, m, k, v))
ok(len(names) >= 20, "alerts and dashboard reference %d metric names" % len(names))
ok(not missing, "every metric name in alerts.yml and the dashboard is in a live node's /metrics", repr(missing))
ok(not badlabels, "every label (and fixed label value) they select on exists on that metric", repr(badlabels))
PY

if command -v promtool >/dev/null; then
  like "$(promtool check rules "$D/prometheus/alerts.yml" 2>&1)" 'SUCCESS: [0-9]+ rules found' "promtool check rules alerts.yml"
  like "$(cd "$D/prometheus" && promtool test rules alerts.test.yml 2>&1)" 'SUCCESS' \
    "promtool test rules: the flat-hit-counter, node-down, upstream-down and miss-ratio alerts fire as written"
  sed "s#/etc/prometheus/alerts.yml#$D/prometheus/alerts.yml#" "$D/prometheus/prometheus.yml" >"$work/prometheus.yml"
  like "$(promtool check config "$work/prometheus.yml" 2>&1)" 'SUCCESS' "promtool check config prometheus.yml"
  like "$(promtool check metrics <"$work/metrics.txt" 2>&1; echo "rc=$?")" 'rc=0' "promtool check metrics: the scrape used here"
else
  for t in "promtool check rules" "promtool test rules" "promtool check config" "promtool check metrics"; do
    skip "$t" "promtool is not installed (Debian package prometheus)"
  done
fi

# ------------------------------------------------------------ Dockerfile build
# The build stage's RUN after "COPY . ." in a copy of what docker build
# sends as its context (the tree minus .dockerignore: scripts/lib/srctree.py,
# no git needed), with /out moved into the work directory.
ctx="$work/context"
"$PY" "$SRCDIR/scripts/lib/srctree.py" copy "$SRCDIR" "$ctx" --rules dockerignore
build_cmd=$("$PY" - "$D/Dockerfile" <<'PY'
import re, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
stage = text.split("FROM debian:bookworm-slim")[0]
after = stage.split("COPY . .", 1)[1]
runs = re.findall(r"^RUN (.*)$", after, re.M)
print(re.sub(r"\s+", " ", runs[-1]))
PY
)
like "$build_cmd" '^autoreconf -fi && ./configure' "the build stage runs autoreconf and configure, as scripts/test"
build_cmd=${build_cmd//\/out/$work/out}
start=$SECONDS
if (cd "$ctx" && SKIP_CHECK=1 bash -c "set -e; $build_cmd") >"$work/docker-build.log" 2>&1; then
  ok "the Dockerfile's build commands build and install the node natively ($((SECONDS - start)) s)"
else
  not_ok "the Dockerfile's build commands build and install the node natively"
  diag_file "$work/docker-build.log" 30
fi
check "they install /usr/bin/shoal" test -x "$work/out/usr/bin/shoal"
like "$("$work/out/usr/bin/shoal" --version 2>&1)" '^shoal [0-9]' "the installed binary runs"
# Every library an installed binary needs is in the runtime stage's apt-get
# install (or libc6, in the base image): one check, their number depends on
# the build.
runtime=$(sed -n '/^FROM debian:bookworm-slim/,$p' "$D/Dockerfile" | tr '\\\n' '  ')
nlibs=0 absent=()
for b in "$work"/out/usr/bin/*; do
  [ -e "$b" ] || continue
  while read -r lib; do
    nlibs=$((nlibs + 1))
    pkg=$(dpkg -S "*/$lib" 2>/dev/null | head -n1 | cut -d: -f1)
    diag "$(basename "$b") needs $lib: ${pkg:-no package}"
    [ "$pkg" = libc6 ] && continue
    grep -Eq "install .* ${pkg:-NO-PACKAGE}( |\$)" <<<"$runtime" || absent+=("$(basename "$b"): $lib (${pkg:-no package})")
  done < <(objdump -p "$b" | awk '/NEEDED/ {print $2}')
done
if [ "$nlibs" -gt 0 ] && [ ${#absent[@]} -eq 0 ]; then
  ok "the runtime stage installs the package of each of the $nlibs libraries the binaries need"
else
  not_ok "the runtime stage installs the package of each library the binaries need ($nlibs found)"
  for a in "${absent[@]}"; do diag "not installed: $a"; done
fi

# .dockerignore: every ignored file of a built tree (git's list in a checkout,
# .gitignore's rules in a tarball of the tree) is left out of the context,
# and every source file is in it.
"$PY" - "$SRCDIR" <<'PY' || not_ok "python part (.dockerignore) crashed"
import os, subprocess, sys
sys.path.insert(0, os.path.join(sys.argv[1], "scripts", "lib"))
import srctree
from taplib import ok, diag
root = sys.argv[1]
docker = srctree.DockerIgnore(srctree._read_lines(os.path.join(root, ".dockerignore")))
if srctree.git_top(root):
    how = "git status --ignored"
    # -z: names exactly as stored (no quoting of spaces or odd bytes)
    out = subprocess.run(["git", "-C", root, "status", "--ignored", "--porcelain", "-z", "-uall"],
                         capture_output=True, text=True).stdout
    gen = [l[3:] for l in out.split("\0") if l.startswith("!! ")]
else:
    how = ".gitignore (no git checkout)"
    gi = srctree.GitIgnore(srctree._read_lines(os.path.join(root, ".gitignore")))
    gen = []
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        rel = "" if rel == "." else rel + "/"
        dirs[:] = [n for n in dirs if rel + n != ".git"]
        gen += [rel + n for n in files if gi.ignored(rel + n)]
sources = srctree.source_files(root)
diag("build outputs from %s: %d files; source files: %d" % (how, len(gen), len(sources)))
leak = [g for g in gen if not docker.ignored(g)]
ok(gen and not leak, ".dockerignore leaves out all %d build outputs of this tree" % len(gen), repr(leak[:10]))
lost = [t for t in sources if docker.ignored(t)]
ok(sources and not lost, ".dockerignore keeps every source file (%d)" % len(sources), repr(lost[:10]))
PY

done_testing
