#!/usr/bin/env bash
# 92-ha-watch: `shoal-ha watch` against real nodes (docs/ha-agent.md), with
# the fake ProxySQL admin of 91 holding mysql_servers and a local HTTP
# listener as the alert webhook.
#   n1: explicit cache mode, so its queries all go upstream: the hit counter
#       stays flat while the query counter moves;
#   n2: auto-cache (hits), its upstream through a TCP relay this test kills
#       and restarts, --upstream-down-policy shun after 500 ms.
# watch --once (state file between runs): flat n1 -> OFFLINE_SOFT + webhook,
# back ONLINE on trial after flat_retry_ms; n2 failing /health (upstream
# down) -> OFFLINE_SOFT, back ONLINE when it recovers; the last serving node
# is kept ONLINE (alert once) until a fallback is in the hostgroup. The
# daemon: a stopped (SIGSTOP) node goes OFFLINE_SOFT and comes back, a
# status set by someone else is left alone, ProxySQL down is retried, SIGTERM
# ends it with status 0.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then
  skip_all "watch needs real nodes (fake mode)"
fi

plan 40
AGENT="$SRCDIR/ha/shoal-ha"
work="$BUILD_TEST/ha-watch"
rm -rf "$work"; mkdir -p "$work"

# ------------------------------------------------------------ helpers
pxport=$(free_port)
pxlog="$work/proxysql.log"
"$PY" "$TESTLIB/fake_proxysql.py" --port "$pxport" --log "$pxlog" >"$work/fake.out" 2>&1 &
pxpid=$!
on_exit "is_pid $pxpid && kill $pxpid"

whport=$(free_port)
hooks="$work/webhook.jsonl"
: >"$hooks"
"$PY" - "$whport" "$hooks" >"$work/webhook.out" 2>&1 <<'PY' &
import http.server, sys
port, path = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(path, "a") as f:
            f.write(self.headers.get("Content-Type", "") + "\t" + body.decode() + "\n")
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
whpid=$!
on_exit "is_pid $whpid && kill $whpid"

relay_port=$(free_port)
relay_start() {
  "$PY" - "$relay_port" "$MDB_PORT" >>"$work/relay.out" 2>&1 <<'PY' &
import socket, sys, threading
lport, dport = int(sys.argv[1]), int(sys.argv[2])
def pump(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d: break
            b.sendall(d)
    except OSError: pass
    finally:
        for s in (a, b):
            try: s.shutdown(socket.SHUT_RDWR)
            except OSError: pass
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", lport)); srv.listen(64)
while True:
    c, _ = srv.accept()
    u = socket.create_connection(("127.0.0.1", dport))
    threading.Thread(target=pump, args=(c, u), daemon=True).start()
    threading.Thread(target=pump, args=(u, c), daemon=True).start()
PY
  relay_pid=$!
  for _ in $(seq 50); do port_refuses "$relay_port" || break; sleep 0.1; done
}
relay_stop() { is_pid "${relay_pid:-}" && kill "$relay_pid" 2>/dev/null; wait "$relay_pid" 2>/dev/null; relay_pid=; }
relay_start
on_exit relay_stop
for _ in $(seq 50); do port_refuses "$pxport" || break; sleep 0.1; done

px() { mariadb --no-defaults -h127.0.0.1 -P"$pxport" -utest -ptest -N -B -e "$1"; }
sent() { grep -P '^admin\t' "$pxlog" | cut -f2-; : >"$pxlog"; }
status_of() { px "SELECT status FROM runtime_mysql_servers WHERE hostgroup_id=30 AND port=$1"; }
health() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$1/health"; }
wait_health() { # port code seconds
  local i
  for ((i = 0; i < $3 * 10; i++)); do [ "$(health "$1")" = "$2" ] && return 0; sleep 0.1; done
  return 1
}
hook_count() { grep -c . "$hooks"; }
last_hook() { tail -n 1 "$hooks"; }

hp1=$(free_port); hp2=$(free_port)
shoal_start n1 --metrics-address "127.0.0.1:$hp1" || bail "n1 starts"
if shoal_start n2 --auto-cache --cache-ttl-ms 600000 --metrics-address "127.0.0.1:$hp2" \
  --upstream-db-url "mysql://app:pw@127.0.0.1:$relay_port/shoaltest" --upstream-down-after-ms 500; then
  ok "fake ProxySQL $pxport, webhook $whport, n1 $n1_PORT (explicit mode), n2 $n2_PORT (auto-cache, via relay)"
else
  bail "fake ProxySQL $pxport, webhook $whport, n1 $n1_PORT (explicit mode), n2 $n2_PORT (auto-cache, via relay)"
fi

DSN="mysql://admin:admin@127.0.0.1:$pxport"
NODES="127.0.0.1:$n1_PORT:$hp1,127.0.0.1:$n2_PORT:$hp2"
cat >"$work/watch.conf" <<EOF
proxysql_admin = $DSN
nodes = $NODES
webhook_url = http://127.0.0.1:$whport/alert
state_file = $work/state.json
flat_window_ms = 1000
flat_min_queries = 5
flat_retry_ms = 1500
http_timeout_ms = 1000
interval_ms = 200
EOF
agent() { "$AGENT" "$@" --config "$work/watch.conf" >"$work/out" 2>"$work/err"; rc=$?; out=$(cat "$work/out"); err=$(cat "$work/err"); }
agent register
is "$rc" 0 "register both nodes (no fallback)"
sent >/dev/null

mdb -e "DROP TABLE IF EXISTS t92; CREATE TABLE t92 (id INT PRIMARY KEY, v VARCHAR(20)); INSERT INTO t92 VALUES (1,'a')"
on_exit "mdb -e 'DROP TABLE IF EXISTS t92'"
traffic() { # node count: the same cacheable query, count times
  local i
  for ((i = 0; i < $2; i++)); do echo "select v from t92 where id = 1;"; done | via_to "$1" >/dev/null
}

# ------------------------------------------------------------ flat hit counter (--once)
agent watch --once
is "$rc" 0 "watch --once: both nodes serving: exit 0"
is "$(sent)" "SELECT hostname, port, status, weight, comment FROM mysql_servers WHERE hostgroup_id=30 ORDER BY hostname, port" \
  "watch --once with nothing to do: only reads mysql_servers"
check "the state file holds both nodes' samples" grep -q "\"127.0.0.1:$n1_PORT\":{\"out\":\"none\".*\"samples\":\[\[" "$work/state.json"
traffic n1 10
traffic n2 10
sleep 1.1
agent watch --once
is "$rc" 0 "watch --once after the window: exit 0"
is "$(sent)" "SELECT hostname, port, status, weight, comment FROM mysql_servers WHERE hostgroup_id=30 ORDER BY hostname, port
UPDATE mysql_servers SET status='OFFLINE_SOFT' WHERE hostgroup_id=30 AND hostname='127.0.0.1' AND port=$n1_PORT
LOAD MYSQL SERVERS TO RUNTIME
SELECT COUNT(*) FROM stats_mysql_connection_pool" "flat n1: UPDATE to OFFLINE_SOFT, LOAD to runtime (not saved to disk), read the pool (ProxySQL drops the idle connections)"
is "$(status_of "$n1_PORT") $(status_of "$n2_PORT")" "OFFLINE_SOFT ONLINE" "flat n1 is OFFLINE_SOFT in the runtime, n2 (hits) stays ONLINE"
is "$(hook_count)" 1 "one webhook POST"
h=$(last_hook)
like "$h" "^application/json	" "  as application/json"
like "$h" "\"event\":\"flat_hit_counter\",\"node\":\"127.0.0.1:$n1_PORT\",\"hostgroup\":30,\"action\":\"OFFLINE_SOFT\"" "  event, node, hostgroup, action"
like "$h" "\"hits_delta\":0,\"queries_delta\":(1[0-9]|[2-9][0-9])," "  hits flat, queries moved by 10 or more"
like "$err" "ALERT: flat_hit_counter: node 127.0.0.1:$n1_PORT: OFFLINE_SOFT: hit counter flat for [1-9][0-9]*\.[0-9] s while the query counter grew by" \
  "  and a log line"
# (with flat_retry_ms out of reach for this one run: on a loaded machine the
# checks above may take longer than the config's 1.5 s, and the run would
# rightly put n1 back on trial)
agent watch --once --flat-retry-ms 600000
is "$(sent | wc -l):$(hook_count)" "1:1" "the next run changes nothing and posts nothing"
# (at least flat_retry_ms since n1 went out: a lower bound, load only adds)
sleep 1.6
agent watch --once
is "$(status_of "$n1_PORT")" ONLINE "after flat_retry_ms n1 is back ONLINE on trial"
like "$(last_hook)" "\"event\":\"node_online\",\"node\":\"127.0.0.1:$n1_PORT\",.*\"action\":\"ONLINE\",\"detail\":\"back on trial" \
  "  with a node_online alert"
sent >/dev/null

# ------------------------------------------------------------ health failure (upstream down, shun)
relay_stop
via_to n2 -e "select 'refused'" >/dev/null 2>&1
if wait_health "$hp2" 503 5; then ok "n2's upstream is down: /health 503"; else not_ok "n2's upstream is down: /health 503"; fi
agent watch --once
is "$rc" 4 "watch --once with a node not serving: exit 4"
like "$err" "node 127.0.0.1:$n2_PORT not serving: /health answered HTTP 503, status upstream_down" "  and says why"
is "$(status_of "$n2_PORT") $(status_of "$n1_PORT")" "OFFLINE_SOFT ONLINE" "n2 failing /health is OFFLINE_SOFT, n1 ONLINE"
like "$(last_hook)" "\"event\":\"node_unhealthy\",\"node\":\"127.0.0.1:$n2_PORT\",.*\"action\":\"OFFLINE_SOFT\"" "  node_unhealthy alert"
sent >/dev/null

# ------------------------------------------------------------ the last serving node
traffic n1 10
sleep 1.1
n=$(hook_count)
agent watch --once
is "$(status_of "$n1_PORT")" ONLINE "flat n1, the last serving node, no fallback: kept ONLINE"
unlike "$(sent)" "UPDATE" "  no UPDATE sent"
like "$(last_hook)" "\"event\":\"flat_hit_counter\",\"node\":\"127.0.0.1:$n1_PORT\",.*\"action\":\"kept ONLINE \(last serving server of the hostgroup, no fallback\)\"" \
  "  alert says it was kept"
is "$(hook_count)" $((n + 1)) "  one alert"
agent watch --once
is "$(hook_count)" $((n + 1)) "  not repeated on the next run"
agent register --fallback "127.0.0.1:$MDB_PORT"
like "$out" "added: fallback 127.0.0.1:$MDB_PORT to hostgroup 30, weight 1" "register the fallback"
traffic n1 10
sleep 1.1
agent watch --once
is "$(status_of "$n1_PORT") $(status_of "$MDB_PORT")" "OFFLINE_SOFT ONLINE" "with the fallback in the hostgroup, flat n1 goes OFFLINE_SOFT"

relay_start
if wait_health "$hp2" 200 6; then ok "n2 recovers by itself: /health 200"; else not_ok "n2 recovers by itself: /health 200"; fi
agent watch --once
is "$rc" 0 "watch --once: exit 0 again"
is "$(status_of "$n2_PORT")" ONLINE "n2 back ONLINE"
like "$(tail -n 2 "$hooks")" "\"event\":\"node_online\",\"node\":\"127.0.0.1:$n2_PORT\",.*\"detail\":\"recovered\"" "  node_online alert"

# ------------------------------------------------------------ the daemon
px "UPDATE mysql_servers SET status='ONLINE' WHERE port=$n1_PORT; UPDATE mysql_servers SET status='OFFLINE_HARD' WHERE port=$MDB_PORT; LOAD MYSQL SERVERS TO RUNTIME"
"$AGENT" watch --config "$work/watch.conf" --state-file "$work/daemon.json" --flat-window-ms 0 \
  >"$work/daemon.out" 2>"$work/daemon.err" &
dpid=$!
on_exit "is_pid \$dpid && kill \$dpid"
wait_status() { # port status seconds
  local i
  for ((i = 0; i < $3 * 10; i++)); do [ "$(status_of "$1")" = "$2" ] && return 0; sleep 0.1; done
  return 1
}
kill -STOP "$n2_PID"
if wait_status "$n2_PORT" OFFLINE_SOFT 8; then ok "daemon: a stopped node (no /health answer) goes OFFLINE_SOFT"
else not_ok "daemon: a stopped node (no /health answer) goes OFFLINE_SOFT"; diag_file "$work/daemon.err"; fi
like "$(cat "$work/daemon.err")" "node 127.0.0.1:$n2_PORT unreachable: http://127.0.0.1:$hp2/health: " "daemon: logs the node as unreachable"
kill -CONT "$n2_PID"
if wait_status "$n2_PORT" ONLINE 8; then ok "daemon: back ONLINE when it answers again"
else not_ok "daemon: back ONLINE when it answers again"; diag_file "$work/daemon.err"; fi
is "$(status_of "$MDB_PORT")" OFFLINE_HARD "daemon: a status set by someone else is left alone"
kill "$pxpid"; wait "$pxpid" 2>/dev/null; pxpid=
sleep 0.8
check "daemon: still running with ProxySQL down" kill -0 "$dpid"
like "$(tail -n 3 "$work/daemon.err")" "no ProxySQL admin reachable" "daemon: logs it and retries"
agent watch --once
is "$rc" 3 "watch --once with ProxySQL down: exit 3"
kill -TERM "$dpid"; wait "$dpid"; st=$?; dpid=
is "$st" 0 "daemon: SIGTERM ends it with status 0"

done_testing
