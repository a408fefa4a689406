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
#   - the agent's services (shoal-ha-1, shoal-ha-2, one beside each proxy):
#     every environment variable is a setting of shoal-ha; same image as
#     the nodes; the entrypoint runs `shoal-ha register`, then execs
#     `shoal-ha watch --auto-route`; own proxy first in the admin DSNs, a
#     login proxysql.cnf has; the nodes' ports and admin password; register
#     wants exactly proxysql.cnf's hostgroup 30; the state file in a named
#     volume of its own; restart and depends_on;
#   - the MariaDB variant's init SQL (docker-compose.mariadb.yml) sets up
#     real replication between two private MariaDB servers, with sakila; two nodes started
#     with the compose file's environment serve the seed's leaderboard query
#     from the replica, hit on repeat, and compute the digest that
#     proxysql.cnf routes; the Dockerfile's HEALTHCHECK command passes on a
#     serving node and fails on a stopped one;
#   - each agent's entrypoint, run natively with its compose environment
#     against those two nodes and a stand-in ProxySQL admin seeded with
#     proxysql.cnf (fake_proxysql.py): register is retried while the admin
#     does not answer, then changes nothing; the process becomes `shoal-ha
#     watch --auto-route`, polls the nodes and warms the leaderboard digest
#     by itself; SIGTERM ends it with 0; a configuration error is not retried;
#   - the MySQL default's command lines and init files (01-users.sql,
#     02-sakila.sh) on MySQL 8.0.39 where the machine has it, else 9.7:
#     replication by GTID, and a node with the compose environment follows
#     the replica's binlog and answers the leaderboard;
#   - every metric name and label in alerts.yml and the dashboard is in a
#     live node's /metrics; promtool checks and unit-tests the rules;
#   - systemd-analyze verifies the unit; its stop timeout covers the drain;
#   - the Dockerfile's build-stage commands build and install the node in a
#     clean copy of the tree, and its runtime stage installs every library
#     the installed binaries need; .dockerignore keeps build output out.
# About 60-90 s (one build, two MariaDB servers, sakila).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/mysql.sh
. "$SRCDIR/scripts/lib/mysql.sh"

if fake_mode; then
  skip_all "deploy files are checked against real nodes (fake mode)"
fi
if ! "$PY" -c 'import yaml' 2>/dev/null; then
  skip_all "python3-yaml is missing (scripts/lib/common.sh lists it)"
fi

# static checks 52 (the agent's services 16), a node with shoal.conf 1,
# systemd 8, the agent's unit and config 4, replication 9, the two nodes 12,
# the agents' entrypoint 9, HEALTHCHECK 4, metric names 3, promtool 4, the
# Dockerfile's build 5, .dockerignore 2
plan 119
D="$SRCDIR/deploy"
AGENT_BIN="$SRCDIR/ha/shoal-ha"
work="$BUILD_TEST/deploy98"
rm -rf "$work"
mkdir -p "$work"
export D SHOAL_BIN AGENT_BIN WORK="$work"

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
is_(sorted(svcs), sorted(["db-source", "db-replica", "shoal-1", "shoal-2", "proxysql-1",
                          "proxysql-2", "shoal-ha-1", "shoal-ha-2", "prometheus", "grafana"]),
    "compose: the seed's services and an agent beside each proxy")
nodes = {n: s for n, s in svcs.items() if re.match(r"shoal-\d+$", n)}
agents = {n: s for n, s in svcs.items() if n.startswith("shoal-ha-")}
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
is_(hg[10], [("db-source", 3306, 1)], "hostgroup 10: the source")
is_(hg[20], [("db-replica", 3306, 1)], "hostgroup 20: the replica")
lport = {n: int(s["environment"]["LISTEN_ADDRESS"].rsplit(":", 1)[1]) for n, s in nodes.items()}
want30 = sorted([(n, lport[n], 1000) for n in nodes] + [("db-replica", 3306, 1)])
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
is_((m.group(3), int(m.group(4))), ("db-replica", 3306), "the nodes' upstream is the replica")
mv = p["mysql_variables"]
for n, s in sorted(nodes.items()):
    is_((s["environment"]["MONITOR_USER"], s["environment"]["MONITOR_PASSWORD"]),
        (mv["monitor_username"], mv["monitor_password"]), "%s: MONITOR_USER/PASSWORD are ProxySQL's monitor user" % n)
for kind in ("mysql", "mariadb"):
    init = open(D + "/%s/source/01-users.sql" % kind).read()
    ok("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'" % (mv["monitor_username"], mv["monitor_password"]) in init
       and "CREATE USER '%s'@'%%' IDENTIFIED BY '%s'" % (m.group(1), m.group(2)) in init,
       "the %s source's init SQL creates the monitor user and the application user" % kind)
open(os.environ.get("WORK", "/tmp") + "/digest", "w").write(r["digest"])

# The agent's services: their settings are shoal-ha's (its --help), not the node's.
W = os.environ.get("WORK", "/tmp")
asett = dc.settings(os.environ["AGENT_BIN"])
aenvs = dc.env_names(os.environ["AGENT_BIN"]) | {"SHOAL_HA_CONFIG"}
def aval(s, key):
    """An agent service's value of a setting: its environment, else the default."""
    env, default = asett.get(key, ("?", ""))
    v = (s.get("environment") or {}).get(env)
    return str(v) if v is not None else ("" if default.startswith("(") else default)
def nval(s, key):
    """A node service's value of a setting."""
    return str(s["environment"].get(sett[key][0]) or sett[key][1])
def parse_nodes(spec):  # host[:data[:http[:admin]]], as ha/config.c reads it
    out = []
    for item in [x.strip() for x in spec.split(",") if x.strip()]:
        f = item.split(":") + [None] * 3
        out.append((f[0], int(f[1] or 3307), int(f[2] or 6034), int(f[3] or 6035)))
    return sorted(out)
sdir = os.path.dirname(asett["state_file"][1])
ok(re.search(r"install -d -o shoal -g shoal [^\n]*\s%s(\s|$)" % re.escape(sdir), df, re.M),
   "Dockerfile: the runtime stage makes the agent's state directory %s for the shoal user" % sdir)
pservers = sorted((x["hostname"], x["port"]) for x in p["proxysql_servers"])
named = c.get("volumes") or {}
users_of = {}
for n, s in svcs.items():
    for v in s.get("volumes", []):
        users_of.setdefault(v.split(":")[0], []).append(n)
node_image = {(s["build"]["context"], s["build"]["dockerfile"], s.get("image")) for s in nodes.values()}
for n, s in sorted(agents.items()):
    k = n.rsplit("-", 1)[1]
    bad = sorted(set(s.get("environment") or {}) - aenvs)
    ok(s.get("environment") and not bad, "compose %s: every environment variable is a setting of the agent (shoal-ha --help)" % n, repr(bad))
    b = s.get("build") or {}
    is_({(b.get("context"), b.get("dockerfile"), s.get("image"))}, node_image,
        "compose %s: the nodes' image, built from deploy/Dockerfile" % n)
    # As Docker runs it: compose's $$ is a $ for the shell; an entrypoint
    # clears the image's CMD, and a command would become the script's $0.
    ep = s.get("entrypoint") or []
    script = ep[2].replace("$$", "$") if ep[:2] == ["/bin/sh", "-c"] and len(ep) == 3 else ""
    calls = [x.strip() for x in re.findall(r"\bshoal-ha\b[^;&|\n]*", script)]
    lines = [x.strip() for x in script.splitlines() if x.strip()]
    ok(script and "command" not in s and calls == ["shoal-ha register", "shoal-ha watch --auto-route"]
       and lines[-1] == "exec shoal-ha watch --auto-route",
       "compose %s: its entrypoint (/bin/sh -c) runs `shoal-ha register`, then execs `shoal-ha watch --auto-route`" % n,
       repr(ep))
    open("%s/%s.sh" % (W, n), "w").write(script)
    dsns = [re.match(r"mysql://([^:@]+):([^@]*)@([^:/]+):(\d+)$", x.strip()) for x in aval(s, "proxysql_admin").split(",")]
    hosts = [(x.group(3), int(x.group(4))) for x in dsns if x]
    logins = {(x.group(1), x.group(2)) for x in dsns if x}
    ok(all(dsns) and hosts[:1] == [("proxysql-" + k, 6032)] and sorted(hosts) == pservers and len(logins) == 1
       and all(u != "admin" and creds.get(u) == pw for u, pw in logins),
       "compose %s: SHOAL_HA_PROXYSQL_ADMIN has its own proxy first (proxysql-%s:6032, as in proxysql_servers), "
       "then the other, with a login of admin_credentials other than admin (local only)" % (n, k),
       repr(aval(s, "proxysql_admin")))
    sf = aval(s, "state_file")
    vol = {v.split(":")[1]: v.split(":")[0] for v in s.get("volumes", [])}.get(os.path.dirname(sf))
    ok(sf and vol in named and users_of.get(vol) == [n],
       "compose %s: its state file %s is in a named volume of its own (%s)" % (n, sf, vol))
    dep = s.get("depends_on") or {}
    cond = {x: ((dep[x] or {}).get("condition") if isinstance(dep, dict) else None) for x in dep}
    ok(s.get("restart") == "unless-stopped" and set(cond) == set(nodes) | {h for h, _ in pservers}
       and all(cond[x] == "service_healthy" for x in nodes) and (s.get("healthcheck") or {}).get("disable") is True,
       "compose %s: restart unless-stopped, starts once both nodes are healthy and both proxies started, "
       "the image's HEALTHCHECK (the node's) off" % n, repr((s.get("restart"), cond, s.get("healthcheck"))))
want_nodes = sorted((n, int(nval(s, "listen_address").rsplit(":", 1)[1]), int(nval(s, "metrics_address").rsplit(":", 1)[1]),
                     int(nval(s, "admin_address").rsplit(":", 1)[1])) for n, s in nodes.items())
got = {n: parse_nodes(aval(s, "nodes")) for n, s in agents.items()}
ok(agents and all(g == want_nodes for g in got.values()),
   "compose agents: SHOAL_HA_NODES is both nodes, host:port of LISTEN_ADDRESS:METRICS_ADDRESS:ADMIN_ADDRESS", repr(got))
adm_bad = []
for n, s in sorted(nodes.items()):
    login = (nval(s, "admin_user"), nval(s, "admin_password"))
    if nval(s, "admin_address").rsplit(":", 1)[0] in ("127.0.0.1", "localhost", "[::1]", "::1"):
        adm_bad.append((n, "ADMIN_ADDRESS on loopback"))
    if login == ("admin", "admin"):
        adm_bad.append((n, "admin/admin works from loopback only"))
    adm_bad += [(a, n) for a, t in sorted(agents.items())
                if (aval(t, "node_admin_user"), aval(t, "node_admin_password")) != login]
ok(agents and not adm_bad, "compose agents: the nodes' admin ports listen on the compose network and take the agents' "
   "login (SHOAL_HA_NODE_ADMIN_USER/PASSWORD = ADMIN_USER/ADMIN_PASSWORD, not admin/admin)", repr(adm_bad))
want_hg = (r["destination_hostgroup"], sorted(hg[r["destination_hostgroup"]]))
reg = {}
for n, s in sorted(agents.items()):
    rows = [(h, port, int(aval(s, "node_weight"))) for h, port, _, _ in parse_nodes(aval(s, "nodes"))]
    if aval(s, "fallback"):
        fh, _, fp = aval(s, "fallback").partition(":")
        rows.append((fh, int(fp or 3306), int(aval(s, "fallback_weight"))))
    reg[n] = (int(aval(s, "hostgroup")), sorted(rows))
ok(agents and all(v == want_hg for v in reg.values()),
   "compose agents: register wants hostgroup %d as proxysql.cnf has it (the nodes at node_weight, the fallback "
   "at fallback_weight): on a new cluster it changes nothing" % want_hg[0], repr((reg, want_hg)))

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
    "$D/docker-compose.mariadb.yml" "$1"
}
mapfile -t sargs < <(compose_args db-source)
mapfile -t rargs < <(compose_args db-replica)
if mstart "$src" "$sport" "${sargs[@]}" && mstart "$rep" "$rport" "${rargs[@]}"; then
  ok "source and replica start with the compose file's options (${sargs[*]} / ${rargs[*]})"
else
  tail -n 5 "$src/error.log" "$rep/error.log" 2>/dev/null | sed 's/^/#   /'
  bail "source and replica start with the compose file's options"
fi
check "the source's init SQL runs (01-users.sql)" root_sql "$src" <"$D/mariadb/source/01-users.sql"
check "sakila loads on the source (02-sakila.sql)" root_sql "$src" <"$DATADIR/sakila/sakila.sql"
sed -e "s/'db-source'/'127.0.0.1'/" -e "s/MASTER_PORT = 3306/MASTER_PORT = $sport/" \
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
  node_env "$n" | sed -e "s#@db-replica:3306/#@127.0.0.1:$rport/#" \
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
  # the compose file's admin login (admin/admin when it sets none)
  au=$(sed -n 's/^ADMIN_USER=//p' "$work/$n.env") ap=$(sed -n 's/^ADMIN_PASSWORD=//p' "$work/$n.env")
  dg=$(mariadb --no-defaults -h127.0.0.1 -P"${NADM[$n]}" -u"${au:-admin}" -p"${ap:-admin}" -N -e \
    "SELECT digest FROM stats_shoal_query_digest WHERE digest_text LIKE 'SELECT c.customer_id%' LIMIT 1" 2>&1)
  is "$dg" "$(cat "$work/digest")" "$n: the leaderboard's digest is the one proxysql.cnf routes to hostgroup 30"
done
echo "$met" >"$work/metrics.txt"

# ------------------------------------------------------------ the agents
# Each agent service's entrypoint (the script the static checks wrote, the
# compose file's $$ made $) run as Docker runs it: /bin/sh -c, the
# service's environment and nothing else, shoal-ha on the PATH. Its hosts
# are moved to local ports: the two nodes above, the replica, and for
# ProxySQL tests/integration/lib/fake_proxysql.py with the compose login
# (ProxySQL's admin tables over SQLite; 77-proxysql-autoroute.t runs the
# agent against the real ProxySQL). The stand-in is seeded with
# proxysql.cnf's servers and, as ProxySQL would have counted it before any
# rule routes it (the walkthrough's state before step 3), the leaderboard's
# digest: 100 calls, 7 s on the replica. proxysql-2 is a closed port.
pxport=$(free_port) pxdown=$(free_port)
mkdir -p "$work/bin"
ln -sf "$AGENT_BIN" "$work/bin/shoal-ha"
export HOSTMAP="shoal-1:3307=127.0.0.1:${NPORT[shoal-1]} shoal-2:3307=127.0.0.1:${NPORT[shoal-2]} \
db-replica:3306=127.0.0.1:$rport db-source:3306=127.0.0.1:$sport \
proxysql-1:6032=127.0.0.1:$pxport proxysql-2:6032=127.0.0.1:$pxdown"
export NODEMAP="shoal-1=127.0.0.1:${NPORT[shoal-1]}:${NMET[shoal-1]}:${NADM[shoal-1]} \
shoal-2=127.0.0.1:${NPORT[shoal-2]}:${NMET[shoal-2]}:${NADM[shoal-2]}"
"$PY" - <<'PY' || diag "python part (the agents' environment) crashed"
import os, re, time, yaml
import deploy_check as dc
D, W = os.environ["D"], os.environ["WORK"]
hosts = dict(x.split("=", 1) for x in os.environ["HOSTMAP"].split())
nodes = dict(x.split("=", 1) for x in os.environ["NODEMAP"].split())
def moved(v):
    for k, to in hosts.items():
        v = re.sub(r"(^|[@,])%s(?=$|[,/])" % re.escape(k), lambda m: m.group(1) + to, v)
    return v
svcs = yaml.safe_load(open(D + "/docker-compose.yml"))["services"]
logins = set()
for n, s in svcs.items():
    if not n.startswith("shoal-ha-"):
        continue
    lines = []
    for k, v in (s.get("environment") or {}).items():
        v = str(v)
        if k == "SHOAL_HA_NODES":
            v = ",".join(nodes[x.strip().split(":")[0]] for x in v.split(",") if x.strip())
        elif k == "SHOAL_HA_STATE_FILE":
            v = "%s/%s/%s" % (W, n, os.path.basename(v))
        else:
            v = moved(v)
        if k == "SHOAL_HA_PROXYSQL_ADMIN":
            logins |= {re.match(r"mysql://([^@]*)@", x).group(1) for x in v.split(",")}
        lines.append("%s=%s" % (k, v))
    open("%s/%s.env" % (W, n), "w").write("\n".join(lines) + "\n")
open(W + "/pxusers", "w").write(",".join(sorted(logins | {"test:test"})))
p = dc.parse_libconfig(open(D + "/proxysql/proxysql.cnf").read())
rows = []
for x in p["mysql_servers"]:
    h, port = moved("%s:%d" % (x["hostname"], x["port"])).rsplit(":", 1)
    rows.append("(%d, '%s', %s, %d, %d, '%s')" % (x["hostgroup_id"], h, port, x["weight"], x["max_connections"], x["comment"]))
now, digest = int(time.time()), open(W + "/digest").read().strip()
open(W + "/seed.sql", "w").write(
    "INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, max_connections, comment) VALUES %s;\n"
    "LOAD MYSQL SERVERS TO RUNTIME;\nSAVE MYSQL SERVERS TO DISK;\n"
    "INSERT INTO stats_mysql_query_digest VALUES (20, 'sakila', 'app', '', '%s', "
    "'SELECT c.customer_id, ... (the leaderboard)', 100, %d, %d, 7000000, 60000, 80000, 0, 1000);\n"
    % (", ".join(rows), digest, now - 600, now))
PY
"$PY" "$TESTLIB/fake_proxysql.py" --port "$pxport" --log "$work/proxysql.log" --users "$(cat "$work/pxusers")" \
  >"$work/fake.out" 2>&1 &
pxpid=$!
on_exit "kill -CONT $pxpid; kill $pxpid"
for _ in $(seq 50); do port_refuses "$pxport" || break; sleep 0.1; done
px() { mariadb --no-defaults -h127.0.0.1 -P"$pxport" -utest -ptest -N -B "$@"; }
px <"$work/seed.sql" || diag "seeding the stand-in ProxySQL failed"
until_ok() { # SECONDS CMD...: until CMD succeeds
  local i
  for ((i = 0; i < $1 * 10; i++)); do "${@:2}" >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}
run_agent() { # SERVICE: its entrypoint in the background, pid in APID
  local aenv
  mapfile -t aenv <"$work/$1.env"
  env -i PATH="$work/bin:/usr/bin:/bin" "${aenv[@]}" /bin/sh -c "$(cat "$work/$1.sh")" \
    >"$work/$1.out" 2>"$work/$1.err" </dev/null &
  APID=$!
  on_exit "kill -TERM $APID"
}
is_watch() { [ "$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null)" = "shoal-ha watch --auto-route " ]; }
gone() { ! pid_alive "$1"; }
stop_agent() { # PID: SIGTERM, as docker stop; its exit status
  kill -TERM "$1" 2>/dev/null
  until_ok 10 gone "$1" || kill -KILL "$1" 2>/dev/null
  wait "$1"
}
warming() { [ "$(px -e "SELECT digest, mirror_hostgroup, apply FROM runtime_mysql_query_rules WHERE comment LIKE 'shoal-ha auto warming %'")" = "$(cat "$work/digest")	30	0" ]; }

# shoal-ha-1, its admin stalled at first (stopped: the connection is made,
# the greeting does not come), as when ProxySQL is not up yet
kill -STOP "$pxpid"
run_agent shoal-ha-1
until_ok 20 grep -q '^shoal-ha register: no ProxySQL admin reachable' "$work/shoal-ha-1.err"
kill -CONT "$pxpid"
until_ok 20 is_watch "$APID"
like "$(cat "$work/shoal-ha-1.err")" '^shoal-ha register: no ProxySQL admin reachable' \
  "shoal-ha-1's entrypoint (its compose environment): register is retried while no ProxySQL admin answers (exit 3)"
like "$(cat "$work/shoal-ha-1.out")" '^nothing to change: ProxySQL [^ ]+ already has these servers in hostgroup 30$' \
  "  then register finds proxysql.cnf's hostgroup 30 as it wants it: nothing to change"
check "  then the same process is \`shoal-ha watch --auto-route\` (exec)" is_watch "$APID"
until_ok 20 warming
st="$work/shoal-ha-1/watch.json"
is "$("$PY" -c 'import json,sys; print(" ".join(sorted(n for n, v in json.load(open(sys.argv[1]))["nodes"].items() if v["samples"])))' "$st" 2>&1)" \
  "$(printf '127.0.0.1:%s\n' "${NPORT[shoal-1]}" "${NPORT[shoal-2]}" | LC_ALL=C sort | paste -sd ' ')" \
  "  watch polls both nodes (samples in its state file, $(basename "$st"))"
check "  and routes by itself: it warms the leaderboard digest (a rule mirroring it to hostgroup 30, loaded), the nodes' verdict read with SHOAL_HA_NODE_ADMIN_PASSWORD" warming
stop_agent "$APID"
is "$?" 0 "  SIGTERM (docker stop): exit 0"

# shoal-ha-2: its own proxy (proxysql-2) does not answer; the other does
run_agent shoal-ha-2
until_ok 20 is_watch "$APID"
is "$(grep -c "^nothing to change: ProxySQL [^ ]*:$pxport already has" "$work/shoal-ha-2.out"):$(tr '\0' ' ' <"/proc/$APID/cmdline" 2>/dev/null)" \
  "1:shoal-ha watch --auto-route " \
  "shoal-ha-2's entrypoint: its own proxy down, register uses the other (nothing to change), then watch --auto-route"
stop_agent "$APID"
is "$?" 0 "  SIGTERM: exit 0"

# a configuration error (exit 2) is not retried
sed 's/^SHOAL_HA_HOSTGROUP=.*/SHOAL_HA_HOSTGROUP=thirty/' "$work/shoal-ha-1.env" >"$work/shoal-ha-bad.env"
cp "$work/shoal-ha-1.sh" "$work/shoal-ha-bad.sh"
run_agent shoal-ha-bad
until_ok 10 gone "$APID"
stop_agent "$APID"
is "$?:$(grep -c 'shoal-ha:' "$work/shoal-ha-bad.err")" "2:1" "a configuration error stops the entrypoint at once (exit 2, one message): not retried"

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

# ------------------------------------------------------------ the MySQL default, natively
# The compose file's own databases are MySQL 8.0 (docker-compose.yml;
# MariaDB above is docker-compose.mariadb.yml's): a source and a replica
# with the compose command lines (over scripts/lib/mysql.sh's options),
# its init files run as the public image runs them (01-users.sql, then
# 02-sakila.sh sourced with docker_process_sql, replica last), then a node
# started with the compose environment follows the replica's binlog and
# answers the leaderboard. On MySQL 8.0.39 where the machine has it, else
# on the MySQL 9.7 chroot (its binlog and caching_sha2 logins are 8.0's).
MYSQL_CHECKS=6
mroot=${SHOAL_MYSQL97_ROOT:-$BUILD_TEST/mysql97}
mkind=""
if mysql80_dir >/dev/null 2>"$work/mysql80.err"; then
  mkind=8.0
elif mysql97_root "$mroot" 2>"$work/mysql97.err"; then
  mkind=9.7
fi
mysql_default_pair() {
  local msp mrp mspid mrpid ssock rsock sa ra out n
  msp=$(free_port) mrp=$(free_port)
  mapfile -t sa < <("$PY" -c 'import yaml,sys; print("\n".join(yaml.safe_load(open(sys.argv[1]))["services"][sys.argv[2]]["command"]))' "$D/docker-compose.yml" db-source)
  mapfile -t ra < <("$PY" -c 'import yaml,sys; print("\n".join(yaml.safe_load(open(sys.argv[1]))["services"][sys.argv[2]]["command"]))' "$D/docker-compose.yml" db-replica)
  if [ "$mkind" = 8.0 ]; then
    mspid=$(mysql80_start "$work/m80s" "$msp" "${sa[@]}" 2>"$work/m-start.err")
    mrpid=$(mysql80_start "$work/m80r" "$mrp" "${ra[@]}" 2>>"$work/m-start.err")
    ssock="$work/m80s/sock" rsock="$work/m80r/sock"
  else
    mysql97_drop "$mroot" t98s
    mysql97_drop "$mroot" t98r
    mspid=$(mysql97_start "$mroot" t98s "$msp" "${sa[@]}" 2>"$work/m-start.err")
    mrpid=$(mysql97_start "$mroot" t98r "$mrp" "${ra[@]}" 2>>"$work/m-start.err")
    ssock=$(mysql97_socket "$mroot" t98s) rsock=$(mysql97_socket "$mroot" t98r)
    on_exit "mysql97_drop '$mroot' t98s; mysql97_drop '$mroot' t98r"
  fi
  on_exit "stop_mdb $mspid; stop_mdb $mrpid"
  if ! is_pid "$mspid" || ! is_pid "$mrpid"; then
    diag_file "$work/m-start.err"
    not_ok "MySQL $mkind source and replica start with the compose file's command lines"
    skip_n $((MYSQL_CHECKS - 1)) "the MySQL default" "the servers did not start"
    return
  fi
  ok "MySQL $mkind source and replica start with the compose file's command lines (${sa[*]} / ${ra[*]})"
  docker_process_sql() { mariadb --no-defaults --socket="$ssock" -uroot; }
  # shellcheck disable=SC1090 # the init file, as the image sources it (sakila's path moved here)
  out=$( { docker_process_sql <"$D/mysql/source/01-users.sql" &&
    . <(sed "s#/usr/share/shoal-demo/sakila.sql#$DATADIR/sakila/sakila.sql#" "$D/mysql/source/02-sakila.sh"); } 2>&1)
  n=$(mariadb --no-defaults --socket="$ssock" -uroot -N -e 'SELECT COUNT(*) FROM sakila.payment' 2>&1)
  is "$out|$n" "|16049" \
    "  the source's init files run (01-users.sql, 02-sakila.sh: sakila, MyISAM made InnoDB under GTIDs)"
  sed -e "s/'db-source'/'127.0.0.1'/" -e "s/SOURCE_PORT = 3306/SOURCE_PORT = $msp/" \
    "$D/mysql/replica/01-replication.sql" | mariadb --no-defaults --socket="$rsock" -uroot >"$work/m-repl.out" 2>&1
  n=""
  for _ in $(seq 1 240); do
    n=$(mariadb --no-defaults -h127.0.0.1 -P"$mrp" -uapp -ppw -N -e 'SELECT COUNT(*) FROM sakila.payment' 2>/dev/null)
    [ "$n" = 16049 ] && break
    sleep 0.25
  done
  is "$n" 16049 "  the replica's init SQL (CHANGE REPLICATION SOURCE, GTID auto-position): sakila and app arrive by replication"
  node_env shoal-1 | sed -e "s#@db-replica:3306/#@127.0.0.1:$mrp/#" \
    -e "s#^LISTEN_ADDRESS=.*#LISTEN_ADDRESS=127.0.0.1:$(free_port)#" -e "/^PROXYSQL_/d" \
    -e "s#^METRICS_ADDRESS=.*#METRICS_ADDRESS=127.0.0.1:$(free_port)#" >"$work/mnode.env"
  mapfile -t env <"$work/mnode.env"
  env -i PATH="$PATH" "${env[@]}" ADMIN_ADDRESS="127.0.0.1:$(free_port)" DATA_DIR="$work/mnode-data" \
    "$SHOAL_BIN" >"$SHOAL_LOG_DIR/98-deploy-files.mysql-node.log" 2>&1 </dev/null &
  local npid=$! np
  on_exit "kill -TERM $npid"
  np=$(sed -n 's/^LISTEN_ADDRESS=127.0.0.1://p' "$work/mnode.env")
  local up=0 lbq
  for _ in $(seq 1 100); do nq "$np" -e 'SELECT 1' >/dev/null 2>&1 && { up=1; break; }; sleep 0.1; done
  lbq=$(cat "$DATADIR/leaderboard.sql")
  is "$up|$(nq "$np" -e "$lbq" 2>&1 | wc -l)" "1|25" "  a node with the compose environment logs in as app and answers the leaderboard (25 rows)"
  like "$(grep -m1 'invalidation:' "$SHOAL_LOG_DIR/98-deploy-files.mysql-node.log")" 'invalidation: binlog \(auto\)' \
    "  it follows the replica's binlog (the users file grants app the replication privileges)"
  mariadb --no-defaults --socket="$ssock" -uroot -e "UPDATE sakila.payment SET amount = amount + 500 WHERE payment_id = 1"
  local top=""
  for _ in $(seq 1 100); do
    top=$(nq "$np" -e "$lbq" 2>/dev/null | head -n 1 | cut -f1)
    [ "$top" = 1 ] && break
    sleep 0.1
  done
  is "$top" 1 "  a write on the source reaches the node's cached leaderboard through the replica (customer 1 on top)"
  kill -TERM "$npid"
  stop_mdb "$mspid"
  stop_mdb "$mrpid"
}
if [ -n "$mkind" ]; then
  mysql_default_pair
else
  skip_n $MYSQL_CHECKS "the MySQL default natively" "no MySQL here: $(tail -n 1 "$work/mysql80.err"); $(grep '^mysql:' "$work/mysql97.err" | tail -n 1)"
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
check "they install /usr/bin/shoal and /usr/bin/shoal-ha (the compose file's agent)" \
  test -x "$work/out/usr/bin/shoal" -a -x "$work/out/usr/bin/shoal-ha"
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
