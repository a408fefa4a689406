#!/usr/bin/env bash
# 74-status-page: the node's status page on its HTTP port (issue #24,
# docs/status-page.md).
#   1 /status.json after real traffic: the cached shape with its hits,
#     misses and hit ratio, the shape not cached with its reason, the
#     per-second series, the pool's users; no secret in it; GET/HEAD only
#   1b the pool's gauges on a node with one upstream connection: a session
#     holding it in a transaction and another waiting show as in use 1 and
#     waiting 1 (node-wide and for the user), and both go back to 0
#   2 the page itself: HTML, self-contained (no external URL), its headers
#   3 a real headless Chromium renders it from that node: the DOM lists the
#     cached query with 4 hits of 5 (80.0%), the plots have points, no script
#     error; the screenshot is kept in build-test/logs
#   4 access from a non-loopback address (a network namespace of this
#     test, its own veth address): 401 without the admin login, 200 with it, 401 with a wrong one,
#     and 401 even with the right one while it is the default admin/admin;
#     /metrics and /health stay open
set -uo pipefail
. "$(dirname "$0")/lib.sh"

work="$BUILD_TEST/status-page"
rm -rf "$work"
mkdir -p "$work"

fake_mode && skip_all "the status page is node-only (fake mode)"
command -v curl >/dev/null || skip_all "curl is not installed"

plan 48
ADMIN_SECRET=St4tusAdminSecret

mport=$(free_port)
if shoal_start n --auto-cache --cache-ttl-ms 3600000 --data-dir "$work" \
  --metrics-address "127.0.0.1:$mport" --admin-password "$ADMIN_SECRET"; then
  ok "node starts"
else
  bail "node did not start"
fi
mdb -e "DROP TABLE IF EXISTS status_t; CREATE TABLE status_t (id INT PRIMARY KEY, c VARCHAR(20));
  INSERT INTO status_t VALUES (1, 'one'), (2, 'two')"
on_exit 'mdb -e "DROP TABLE IF EXISTS status_t"'

# ---- 1 /status.json
for _ in 1 2 3 4 5; do via -N -e "SELECT c FROM status_t WHERE id = 1" >/dev/null; done
for _ in 1 2 3; do via -N -e "SELECT NOW()" >/dev/null; done
# the per-second sampler has seen the hits once a sample with cache traffic is in
got_series=0
for _ in $(seq 1 50); do
  curl -s -m 5 -o "$work/status.json" "http://127.0.0.1:$mport/status.json"
  if "$PY" -c 'import json,sys; s=json.load(open(sys.argv[1]))["series"]; sys.exit(0 if any(v and v > 0 for v in s["cache_qps"]) else 1)' \
    "$work/status.json" 2>/dev/null; then got_series=1; break; fi
  sleep 0.2
done
is "$got_series" 1 "the series shows the hits within 10 s"

# jq-like reads of the saved body
jget() { "$PY" - "$work/status.json" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps(eval(sys.argv[2], {"d": d}), sort_keys=True))
PY
}
row='[c for c in d["caches"] if c["query"] == "SELECT c FROM status_t WHERE id = ?"]'
is "$(jget "len($row)")" 1 "caches lists the shape once"
is "$(jget "${row}[0]['hits']")" 4 "  its hits: 4"
is "$(jget "${row}[0]['misses']")" 1 "  its misses: 1"
is "$(jget "${row}[0]['hit_ratio']")" 0.8 "  its hit ratio: 0.8"
is "$(jget "${row}[0]['entries']")" 1 "  one entry"
like "$(jget "${row}[0]['digest']")" '^"0x[0-9A-F]{16}"$' "  its digest in ProxySQL's form"
is "$(jget "${row}[0]['state']")" '"cached"' "  state cached"
urow='[u for u in d["uncached"] if u["query"] == "SELECT NOW()"]'
is "$(jget "${urow}[0]['count']")" 3 "uncached lists SELECT NOW(): 3 executions"
is "$(jget "${urow}[0]['reason']")" '"non-deterministic function"' "  with the node's reason"
is "$(jget 'len(set(len(v) for k, v in d["series"].items() if isinstance(v, list)))')" 1 \
  "every series has the same length"
is "$(jget 'any(v is not None for v in d["series"]["hit_p99_ms"]) and any(v is not None for v in d["series"]["miss_p99_ms"])')" true \
  "a hit p99 and a miss p99 were measured"
is "$(jget 'd["totals"]["hits"] >= 4 and d["totals"]["misses"] >= 1')" true "totals count the hits and misses"
is "$(jget '[u["user"] for u in d["pool"]["users"] if u["user"] == "app"]')" '["app"]' "the pool lists the user app"
is "$(jget 'd["node"]["upstream"]')" "\"127.0.0.1:$MDB_PORT\"" "the upstream is host:port"
is "$(jget 'd["node"]["invalidation"] in ("writes", "binlog", "ttl") and d["node"]["cache_serving"]')" true \
  "the node's invalidation mode and cache state"
body=$(cat "$work/status.json")
unlike "$body" "$ADMIN_SECRET|mysql://|:pw@" "no password or upstream URL in status.json"
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST -d x "http://127.0.0.1:$mport/status.json")
is "$code" 405 "POST /status.json: 405"
code=$(curl -s -m 5 -I -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/status.json")
is "$code" 200 "HEAD /status.json: 200"

# ---- 1b the pool's gauges: one connection, one holder, one waiter
pport=$(free_port)
if shoal_start p --workers 1 --max-upstream-connections 1 --data-dir "$work/p" \
  --metrics-address "127.0.0.1:$pport"; then
  gauges=$("$PY" - "$p_PORT" "$pport" <<'PY'
import json, sys, threading, time, urllib.request
import pymysql

port, mport = int(sys.argv[1]), int(sys.argv[2])

def gauges():
    with urllib.request.urlopen("http://127.0.0.1:%d/status.json" % mport, timeout=5) as f:
        pool = json.load(f)["pool"]
    app = [u for u in pool["users"] if u["user"] == "app"][0]
    return (pool["in_use"], pool["waiting"], app["in_use"], app["waiting"])

def wait_until(want):
    for _ in range(100):
        got = gauges()
        if got == want:
            return got
        time.sleep(0.1)
    return got

conn = lambda: pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw",
                               database="shoaltest", autocommit=True)
holder, waiter = conn(), conn()
print("idle", wait_until((0, 0, 0, 0)))
holder.begin()                                   # pinned: it keeps the only connection
holder.cursor().execute("SELECT c FROM status_t WHERE id = 1")
done = threading.Event()
def wait_for_it():
    waiter.cursor().execute("SELECT c FROM status_t WHERE id = 2")
    done.set()
threading.Thread(target=wait_for_it, daemon=True).start()
print("queued", wait_until((1, 1, 1, 1)))
holder.commit()
done.wait(10)
print("answered", done.is_set())
print("released", wait_until((0, 0, 0, 0)))
PY
)
  diag "$gauges"
  like "$gauges" 'idle \(0, 0, 0, 0\)' "pool gauges at rest: nothing in use, nobody waiting"
  like "$gauges" 'queued \(1, 1, 1, 1\)' \
    "one session holds the only connection, one waits: in use 1, waiting 1, and so for the user app"
  like "$gauges" 'answered True' "  the waiting session is answered once the other commits"
  like "$gauges" 'released \(0, 0, 0, 0\)' "  and every gauge is back to 0 (in_use and waiting balance)"
  shoal_stop p
else
  skip_n 4 "the pool's gauges" "the node with one upstream connection did not start"
fi

# ---- 2 the page
hdr=$(curl -s -m 5 -D - -o "$work/page.html" "http://127.0.0.1:$mport/")
like "$hdr" '^HTTP/1\.[01] 200' "GET /: 200"
like "$hdr" '[Cc]ontent-[Tt]ype: text/html; charset=utf-8' "  as HTML"
like "$hdr" "[Cc]ontent-[Ss]ecurity-[Pp]olicy: default-src 'none'" "  with a CSP that allows nothing external"
page=$(cat "$work/page.html")
like "$page" '<title>Shoal status</title>' "  the status page"
unlike "$page" 'https?:|(src|href)=|url\(|@import|//[a-z0-9.-]+\.[a-z]{2,}/' "  no external URL in it"
is "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/status")" 200 "GET /status: the page too"

# ---- 3 a real browser
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
  skip_n 7 "the page in a real browser" "chromium is not installed (Debian package chromium)"
else
  shot="$SHOAL_LOG_DIR/74-status-page.png"
  rm -f "$shot"
  # shellcheck disable=SC2054 # the commas are inside one argument
  chrome=(timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run
    --user-data-dir="$work/chromium" --window-size=1400,1800 --virtual-time-budget=6000
    --enable-logging=stderr --v=0)
  HOME="$work" "${chrome[@]}" --dump-dom "http://127.0.0.1:$mport/" >"$work/dom.html" 2>"$work/chromium.err"
  HOME="$work" "${chrome[@]}" --screenshot="$shot" "http://127.0.0.1:$mport/" >/dev/null 2>>"$work/chromium.err"
  digest=$(jget "${row}[0]['digest']" | tr -d '"')
  dom=$("$PY" - "$work/dom.html" "$digest" <<'PY'
import sys
from html.parser import HTMLParser

class Walk(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.out, self.loaded, self.errors, self.points = [], {}, None, "", {}
        self.row = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.loaded = a.get("data-loaded")
        if tag == "tr" and a.get("data-digest") == sys.argv[2]:
            self.row = {}
        if tag == "svg" and "plot" in (a.get("class") or ""):
            self.points[a.get("id")] = a.get("data-points")
        cls = a.get("class") or ""
        self.stack.append((tag, cls, a.get("id")))
    def handle_endtag(self, tag):
        while self.stack:
            t, _, _ = self.stack.pop()
            if t == tag:
                break
        if tag == "tr" and self.row is not None:
            self.out = self.row
            self.row = None
    def handle_data(self, data):
        if not self.stack:
            return
        tag, cls, ident = self.stack[-1]
        if ident == "errors":
            self.errors += data
        if self.row is not None and tag == "td":
            for k in ("hits", "misses", "ratio", "query"):
                if k in cls.split():
                    self.row[k] = self.row.get(k, "") + data

w = Walk()
w.feed(open(sys.argv[1], encoding="utf-8").read())
text = open(sys.argv[1], encoding="utf-8").read()
print("loaded=%s" % w.loaded)
print("row=%s|%s|%s|%s" % (w.out.get("query"), w.out.get("hits"), w.out.get("misses"), w.out.get("ratio")))
print("errors=[%s]" % w.errors.strip())
print("qps_points=%s" % w.points.get("plot-qps"))
print("plots=%d" % len(w.points))
print("now=%s" % ("SELECT NOW()" in text and "non-deterministic function" in text))
PY
)
  diag "$dom"
  like "$dom" 'loaded=1' "chromium: the page rendered status.json (body data-loaded=1)"
  like "$dom" 'row=SELECT c FROM status_t WHERE id = \?\|4\|1\|80\.0%' \
    "chromium: the cached query's row shows 4 hits, 1 miss, 80.0%"
  like "$dom" 'now=True' "chromium: SELECT NOW() is listed as not cached, with its reason"
  like "$dom" 'plots=4' "chromium: the four plots are there"
  like "$dom" 'qps_points=[1-9]' "chromium: the queries/s plot has data points"
  like "$dom" 'errors=\[\]' "chromium: no script error on the page"
  if grep -E 'CONSOLE|Uncaught' "$work/chromium.err" | grep -qiE 'error|uncaught'; then
    not_ok "chromium: no console error"
    diag_file "$work/chromium.err"
  elif [ -s "$shot" ]; then
    ok "chromium: no console error; screenshot $shot"
  else
    not_ok "chromium: no screenshot was written"
    diag_file "$work/chromium.err"
  fi
fi

# ---- 4 access from another address
NS="shoal74-$$"
ADDR=10.251.74.1
ns_ok=0
if ip netns add "$NS" 2>/dev/null; then
  on_exit "ns_cleanup"
  ns_ok=1
  ip netns exec "$NS" true 2>/dev/null || ns_ok=0
fi
NS_PIDS=()
ns_cleanup() {
  local p
  for p in "${NS_PIDS[@]}"; do is_pid "$p" && kill -KILL "$p" 2>/dev/null; done
  for p in "${NS_PIDS[@]}"; do is_pid "$p" && wait "$p" 2>/dev/null; done
  ip netns del "$NS" 2>/dev/null
}
inns() { ip netns exec "$NS" "$@"; }
if [ $ns_ok = 1 ]; then
  # a veth pair with both ends inside: an address of the namespace's own
  # that is not loopback (the kernel may have no dummy interfaces)
  inns ip link set lo up && inns ip link add v74a type veth peer name v74b &&
    inns ip addr add "$ADDR/24" dev v74a && inns ip link set v74a up && inns ip link set v74b up || ns_ok=0
fi
if [ $ns_ok = 0 ]; then
  skip_n 11 "access from a non-loopback address" "network namespaces are not available here (ip netns)"
else
  # two nodes inside the namespace, their upstream a dead port: the HTTP
  # endpoint answers without one
  start_ns_node() { # NAME METRICS_PORT [args...]
    local name=$1 port=$2
    shift 2
    mkdir -p "$work/$name"
    ip netns exec "$NS" "$SHOAL_BIN" --upstream-db-url "mysql://app:pw@127.0.0.1:1/x" \
      --listen-address 127.0.0.1:0 --metrics-address "0.0.0.0:$port" --admin-address 127.0.0.1:0 \
      --data-dir "$work/$name" --workers 1 "$@" >"$SHOAL_LOG_DIR/74-status-page.$name.log" 2>&1 </dev/null &
    NS_PIDS+=($!)
    for _ in $(seq 1 100); do
      inns curl -s -m 1 -o /dev/null "http://127.0.0.1:$port/metrics" && return 0
      sleep 0.1
    done
    return 1
  }
  from_outside() { # PORT PATH [curl args]: the HTTP code, asked from $ADDR
    local port=$1 path=$2
    shift 2
    inns curl -s -m 5 --interface "$ADDR" -o /dev/null -w '%{http_code}' "$@" "http://$ADDR:$port$path"
  }
  if start_ns_node set 6034 --admin-password "$ADMIN_SECRET" && start_ns_node dflt 6044; then
    ok "two nodes in a namespace (one with an admin password, one with the default login)"
    is "$(from_outside 6034 /status.json)" 401 "from $ADDR without a login: 401"
    like "$(inns curl -s -m 5 --interface "$ADDR" -D - -o /dev/null "http://$ADDR:6034/")" \
      'WWW-Authenticate: Basic realm="shoal"' "  the page asks for basic auth"
    is "$(from_outside 6034 /status.json -u "admin:$ADMIN_SECRET")" 200 "with the admin login: 200"
    is "$(from_outside 6034 / -u "admin:$ADMIN_SECRET")" 200 "  the page too"
    is "$(from_outside 6034 /status.json -u "admin:wrong")" 401 "with a wrong password: 401"
    is "$(from_outside 6034 /status.json -u "nobody:$ADMIN_SECRET")" 401 "with another user: 401"
    is "$(from_outside 6044 /status.json -u admin:admin)" 401 "the default admin/admin from $ADDR: 401"
    is "$(inns curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:6044/status.json")" 200 \
      "  and from loopback the page needs no login: 200"
    is "$(from_outside 6034 /metrics)" 200 "/metrics stays open from $ADDR"
    like "$(from_outside 6034 /health)" '^(200|503)$' "/health stays open from $ADDR"
  else
    bail "the nodes in the namespace did not start"
  fi
fi

done_testing
