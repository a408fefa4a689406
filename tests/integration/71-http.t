#!/usr/bin/env bash
# 71-http: the HTTP endpoint (--metrics-address): GET/HEAD /metrics in the
# Prometheus text format (checked with promtool when installed, else with the
# strict checker below), counters that move with traffic, /health and /ready
# while the upstream is up and after it has been down past the threshold,
# 404/405, garbage requests, a stalled client, and that no secret (password,
# upstream URL) appears in any response.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

work="$BUILD_TEST/http"
mkdir -p "$work"
rm -f "$work"/*.resp

if fake_mode; then
  skip_all "the HTTP endpoint is node-only (fake mode)"
fi
if ! command -v curl >/dev/null; then
  skip_all "curl is not installed"
fi

plan 57
SECRET_ALLOWED=Sh0alAllowedSecret
SECRET_UPSTREAM=Sh0alUpstreamSecret
DOWN_AFTER_S=3   # the node's default threshold (HTTP_DEFAULT_DOWN_AFTER_MS)

# req METHOD PORT PATH [curl args...]: sets CODE, CTYPE, BODY; every response
# (headers and body) is kept in $work/*.resp for the secret check at the end.
n_req=0
req() {
  local method=$1 port=$2 path=$3 out
  shift 3
  n_req=$((n_req + 1))
  local f="$work/$n_req.resp"
  if [ "$method" = HEAD ]; then
    out=$(curl -s -m 5 -I -D "$f.h" -o /dev/null -w '%{http_code} %{content_type}' "$@" \
      "http://127.0.0.1:$port$path")
    : >"$f.b"
  else
    out=$(curl -s -m 5 -X "$method" -D "$f.h" -o "$f.b" -w '%{http_code} %{content_type}' "$@" \
      "http://127.0.0.1:$port$path")
  fi
  cat "$f.h" "$f.b" >"$f" 2>/dev/null
  rm -f "$f.h"
  CODE=${out%% *}
  CTYPE=${out#* }
  BODY=$(cat "$f.b" 2>/dev/null)
  mv "$f.b" "$work/last.body" 2>/dev/null
}

# metric TEXT SERIES: the value of a series written exactly as SERIES.
metric() { awk -v s="$2" '$1 == s { print $2; exit }' <<<"$1"; }

# json_field FIELD: a field of the last body, as python prints it.
json_field() {
  "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); v=d[sys.argv[2]]; print(json.dumps(v))' \
    "$work/last.body" "$1" 2>/dev/null
}

# check_format FILE: the text exposition format. promtool when present (it
# also lints names), else a strict python checker: every non-comment line is
# name{labels} value [timestamp] with valid names and escapes and a float
# value; each family has at most one HELP and exactly one TYPE, both before
# its samples; a family's samples are together; no series twice.
check_format() {
  if command -v promtool >/dev/null; then
    FORMAT_TOOL=promtool
    FORMAT_ERR=$(promtool check metrics <"$1" 2>&1)
    return
  fi
  FORMAT_TOOL="python checker"
  FORMAT_ERR=$("$PY" - "$1" <<'PY' 2>&1
import re, sys
NAME = r'[a-zA-Z_:][a-zA-Z0-9_:]*'
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*'
VALUE = r'(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|NaN|[+-]Inf)'
LVAL = r'"(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r'^(%s)(?:\{((?:%s=%s)(?:,%s=%s)*)?,?\})? (%s)(?: (-?\d+))?$'
                    % (NAME, LABEL, LVAL, LABEL, LVAL, VALUE))
PAIR = re.compile(r'(%s)=(%s)' % (LABEL, LVAL))
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}
data = open(sys.argv[1], "rb").read()
errs = []
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit("not UTF-8: %s" % e)
if not text.endswith("\n"):
    errs.append("does not end with a newline")
fam_type, fam_help, done, seen = {}, set(), set(), set()
current = None
def family_of(name):
    if name in fam_type:
        return name
    for sfx in ("_bucket", "_sum", "_count"):
        base = name[:-len(sfx)]
        if name.endswith(sfx) and fam_type.get(base) in ("histogram", "summary"):
            if sfx == "_bucket" and fam_type[base] != "histogram":
                continue
            return base
    return None
for no, line in enumerate(text.split("\n")[:-1], 1):
    where = "line %d %r" % (no, line[:100])
    if line.startswith("#"):
        m = re.match(r'^# (HELP|TYPE) (\S+)(?: (.*))?$', line)
        if not m:
            continue
        kind, name, rest = m.group(1), m.group(2), m.group(3) or ""
        if not re.fullmatch(NAME, name):
            errs.append("%s: bad metric name" % where)
        if name in done or name == current:
            errs.append("%s: %s after the family's samples" % (where, kind))
        if kind == "TYPE":
            if name in fam_type:
                errs.append("%s: second TYPE" % where)
            if rest not in TYPES:
                errs.append("%s: unknown type" % where)
            fam_type[name] = rest
        else:
            if name in fam_help:
                errs.append("%s: second HELP" % where)
            fam_help.add(name)
            if re.search(r'\\[^\\n]|\\$', rest):
                errs.append("%s: bad escape in HELP" % where)
        continue
    m = SAMPLE.match(line)
    if not m:
        errs.append("%s: not name{labels} value" % where)
        continue
    name, labels, value = m.group(1), m.group(2) or "", m.group(3)
    fam = family_of(name)
    if fam is None:
        errs.append("%s: no TYPE line before this sample" % where)
        continue
    if fam != current:
        if fam in done:
            errs.append("%s: the family's samples are not together" % where)
        if current:
            done.add(current)
        current = fam
    names = [p.group(1) for p in PAIR.finditer(labels)]
    if len(names) != len(set(names)) or any(n.startswith("__") for n in names):
        errs.append("%s: duplicate or reserved label" % where)
    if name.endswith("_bucket") and fam_type[fam] == "histogram" and "le" not in names:
        errs.append("%s: bucket without le" % where)
    if fam_type[fam] == "counter" and (value == "NaN" or float(value) < 0):
        errs.append("%s: counter is negative or NaN" % where)
    key = (name, tuple(sorted(PAIR.findall(labels))))
    if key in seen:
        errs.append("%s: duplicate series" % where)
    seen.add(key)
if not fam_type:
    errs.append("no families at all")
if errs:
    sys.exit("\n".join(errs[:20]))
PY
)
}

# raw PORT: send each payload of the python list below to the port on its
# own connection; print one line per payload: the status line, or "closed".
raw() {
  "$PY" - "$1" <<'PY'
import socket, sys
from concurrent.futures import ThreadPoolExecutor
port = int(sys.argv[1])
payloads = [
    b"garbage\r\n\r\n",
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(256)) + b"\r\n\r\n",
    b"GET /metrics\r\n\r\n",
    b"GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n",
    b"GET /" + b"A" * 100000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 70000 + b"\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n",
    b"GET /%00%ff/../metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    b"\x00" * 4096,
    b"\r\n" * 50,
]
def one(p):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError as e:
        return "cannot connect: %s" % e
    data = b""
    try:
        s.sendall(p)
        s.shutdown(socket.SHUT_WR)
        s.settimeout(15)  # the node drops an idle connection after 10 s
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except socket.timeout:
        return "no answer and not closed after 15 s"
    except OSError:
        pass  # reset: closed
    finally:
        s.close()
    return data.split(b"\r\n")[0].decode("latin-1") if data else "closed"
with ThreadPoolExecutor(len(payloads)) as ex:
    for line in ex.map(one, payloads):
        print(line)
PY
}

# start_http NAME METRICS_PORT [shoal_start args...]: shoal_start with the
# metrics endpoint on 127.0.0.1:METRICS_PORT. shoal_start adds its own
# --metrics-address 127.0.0.1:0 after the extra args, and the last flag wins,
# so the node is run through a wrapper that puts ours at the very end.
start_http() {
  local name=$1 port=$2 wrap="$work/shoal-with-metrics"
  shift 2
  # shellcheck disable=SC2016 # "$@" and $SHOAL_TEST_METRICS are the wrapper's own
  printf '#!/bin/sh\nexec %q "$@" --metrics-address "$SHOAL_TEST_METRICS"\n' "$SHOAL_BIN" >"$wrap"
  chmod +x "$wrap"
  SHOAL_BIN=$wrap SHOAL_TEST_METRICS="127.0.0.1:$port" shoal_start "$name" \
    --metrics-address "127.0.0.1:$port" "$@"
}

# ------------------------------------------------------------ a healthy node
mport=$(free_port)
if start_http node "$mport" --allowed-users "other:$SECRET_ALLOWED"; then
  ok "node starts with --metrics-address 127.0.0.1:$mport"
else
  bail "node starts with --metrics-address 127.0.0.1:$mport"
fi

req GET "$mport" /metrics
is "$CODE" 200 "GET /metrics: 200"
like "$CTYPE" '^text/plain; *version=0\.0\.4' "  Content-Type text/plain; version=0.0.4"
m1=$BODY
cp "$work/last.body" "$work/metrics.txt"
check_format "$work/metrics.txt"
if [ -z "$FORMAT_ERR" ]; then ok "  valid text exposition format ($FORMAT_TOOL)"; else
  not_ok "  valid text exposition format ($FORMAT_TOOL)"; diag "$FORMAT_ERR"
fi
absent=""
for f in shoal_client_connections:gauge shoal_client_connections_created_total:counter \
  shoal_client_connections_aborted_total:counter shoal_client_connections_refused_total:counter \
  shoal_auth_failures_total:counter shoal_upstream_connections:gauge \
  shoal_upstream_connect_errors_total:counter shoal_upstream_up:gauge shoal_queries_total:counter \
  shoal_protocol_errors_total:counter shoal_up:gauge shoal_build_info:gauge; do
  grep -qx "# TYPE ${f%%:*} ${f#*:}" <<<"$m1" || absent+=" $f"
done
is "$absent" "" "  every node-wide family with its type"
is "$(metric "$m1" shoal_up)" 1 "  shoal_up 1"
is "$(metric "$m1" shoal_upstream_up)" 1 "  shoal_upstream_up 1"
like "$(grep '^shoal_build_info{' <<<"$m1")" '^shoal_build_info\{version="[^"]+"\} 1$' "  shoal_build_info{version} 1"
is "$(metric "$m1" 'shoal_queries_total{destination="cache"}')" 0 "  shoal_queries_total{destination=\"cache\"} 0"

# ---- counters move with traffic
q0=$(metric "$m1" 'shoal_queries_total{destination="upstream"}')
c0=$(metric "$m1" shoal_client_connections_created_total)
a0=$(metric "$m1" shoal_auth_failures_total)
for i in 1 2 3; do via_to node -N -e "select $i" >/dev/null; done
via_to node -N -e 'select 1; select 2; select 3' >/dev/null
mariadb --no-defaults -h127.0.0.1 -P"$node_PORT" -uapp -pwrong -e 'select 1' >/dev/null 2>&1
req GET "$mport" /metrics
q1=$(metric "$BODY" 'shoal_queries_total{destination="upstream"}')
c1=$(metric "$BODY" shoal_client_connections_created_total)
a1=$(metric "$BODY" shoal_auth_failures_total)
if [ -n "$q0" ] && [ -n "$q1" ] && [ "$q1" -ge $((q0 + 6)) ]; then
  ok "shoal_queries_total{destination=\"upstream\"} moved by at least 6 ($q0 -> $q1)"
else not_ok "shoal_queries_total{destination=\"upstream\"} moved by at least 6 ($q0 -> $q1)"; fi
if [ -n "$c0" ] && [ -n "$c1" ] && [ "$c1" -ge $((c0 + 5)) ]; then
  ok "shoal_client_connections_created_total moved by at least 5 ($c0 -> $c1)"
else not_ok "shoal_client_connections_created_total moved by at least 5 ($c0 -> $c1)"; fi
is "$((a1 - a0))" 1 "shoal_auth_failures_total moved by 1 after a wrong password"
cp "$work/last.body" "$work/metrics2.txt"
check_format "$work/metrics2.txt"
is "$FORMAT_ERR" "" "  still valid after traffic"

# ---- /health, /ready
req GET "$mport" /health
is "$CODE" 200 "GET /health: 200 while the upstream is up"
like "$CTYPE" '^application/json' "  Content-Type application/json"
is "$(json_field status)" '"serving"' "  status serving"
is "$(json_field upstream)" '"up"' "  upstream up"
is "$(json_field upstream_down_seconds)" 0.0 "  upstream_down_seconds 0"
is "$(json_field draining)" false "  draining false"
like "$(json_field client_connections)" '^[0-9]+$' "  client_connections is an integer"
req GET "$mport" /ready
is "$CODE $BODY" "200 ready" "GET /ready: 200 ready"

# ---- HEAD, 404, 405
req HEAD "$mport" /metrics
is "$CODE" 200 "HEAD /metrics: 200"
req HEAD "$mport" /health
is "$CODE" 200 "HEAD /health: 200"
headbody=$("$PY" - "$mport" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
data = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    data += d
head, _, body = data.partition(b"\r\n\r\n")
print(len(body), b"content-length" in head.lower())
PY
)
is "$headbody" "0 True" "  HEAD has a Content-Length and no body"
for p in /nope /metrics/ /metricsx /statusx /health/x; do
  req GET "$mport" "$p"
  is "$CODE" 404 "GET $p: 404"
done
req POST "$mport" /metrics -d 'a=1'
is "$CODE" 405 "POST /metrics: 405"
like "$(cat "$work/$n_req.resp")" $'Allow: GET, HEAD' "  with Allow: GET, HEAD"
req PUT "$mport" /health -d '{}'
is "$CODE" 405 "PUT /health: 405"
req DELETE "$mport" /ready
is "$CODE" 405 "DELETE /ready: 405"
req GET "$mport" '/metrics?x=%zz&y'
is "$CODE" 200 "GET /metrics with a query string: 200"

# ---- garbage and a stalled client
bad="" n_raw=0
while IFS= read -r line; do
  n_raw=$((n_raw + 1))
  case $line in
    closed | "HTTP/1."[01]" "[45][0-9][0-9]*) ;;
    *) bad+=" [$line]" ;;
  esac
done < <(raw "$mport")
is "$n_raw:$bad" "12:" "12 garbage requests: each answered 4xx/5xx or closed"
req GET "$mport" /metrics
is "$CODE" 200 "  /metrics still 200 afterwards"
check "  node still running" shoal_alive node
is "$(via_to node -N -e 'select 71')" 71 "  node still relays queries"

exec 7<>/dev/tcp/127.0.0.1/"$mport"
printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n' >&7   # headers never finished
start=$(date +%s%N)
req GET "$mport" /ready
ms=$((($(date +%s%N) - start) / 1000000))
is "$CODE" 200 "a client that stalls mid-request does not block others (/ready in ${ms} ms)"
exec 7>&-

# ---- the upstream is down: nothing listens on its port
dport=$(free_port)
cport=$(free_port)
while [ "$cport" = "$dport" ]; do cport=$(free_port); done
if SHOAL_WAIT=greeting start_http down "$dport" \
  --upstream-db-url "mysql://app:$SECRET_UPSTREAM@127.0.0.1:$cport/shoaltest"; then
  ok "node with an unreachable upstream starts"
  mariadb --no-defaults -h127.0.0.1 -P"$down_PORT" -uapp -p"$SECRET_UPSTREAM" --connect-timeout=5 \
    -e 'select 1' >"$work/down-login.out" 2>&1
  rc=$?
  failed_at=$(date +%s%N)
  if [ $rc -ne 0 ]; then ok "  a login attempt fails (the failure is recorded)"; else
    not_ok "  a login attempt fails (the failure is recorded)"; fi
  req GET "$dport" /health
  is "$(json_field upstream)" '"down"' "  /health says upstream down right away"
  req GET "$dport" /metrics
  is "$CODE" 200 "  /metrics 200 while the upstream is down"
  is "$(metric "$BODY" shoal_upstream_up)" 0 "  shoal_upstream_up 0"
  # the login is refused without a connection attempt (the upstream counts
  # as down); the upstream check's attempts (one a second) are counted
  for _ in $(seq 1 30); do
    [ "$(metric "$BODY" shoal_upstream_connect_errors_total)" -gt 0 ] 2>/dev/null && break
    sleep 0.1
    req GET "$dport" /metrics
  done
  like "$(metric "$BODY" shoal_upstream_connect_errors_total)" '^[1-9][0-9]*$' \
    "  shoal_upstream_connect_errors_total > 0"
  # wait until the threshold has passed since the failure
  left_ms=$((DOWN_AFTER_S * 1000 + 400 - ($(date +%s%N) - failed_at) / 1000000))
  [ $left_ms -gt 0 ] && sleep "$(printf '%d.%03d' $((left_ms / 1000)) $((left_ms % 1000)))"
  req GET "$dport" /health
  is "$CODE" 503 "  /health: 503 after ${DOWN_AFTER_S}s down"
  is "$(json_field status)" '"upstream_down"' "  status upstream_down"
  is "$(json_field upstream)" '"down"' "  upstream down"
  down_s=$(json_field upstream_down_seconds)
  if "$PY" -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)' \
    "${down_s:-0}" "$DOWN_AFTER_S" 2>/dev/null; then
    ok "  upstream_down_seconds >= $DOWN_AFTER_S ($down_s)"
  else not_ok "  upstream_down_seconds >= $DOWN_AFTER_S ($down_s)"; fi
  req HEAD "$dport" /health
  is "$CODE" 503 "  HEAD /health: 503"
  req GET "$dport" /ready
  is "$CODE" 503 "  /ready: 503"
  like "$BODY" upstream_down "  /ready says why"
  req GET "$mport" /health
  is "$CODE" 200 "  the healthy node's /health is still 200"
  check "  the node keeps running" shoal_alive down
else
  not_ok "node with an unreachable upstream starts"
fi

# ---- no secret in any response
leaks=$(grep -l -e "$SECRET_ALLOWED" -e "$SECRET_UPSTREAM" -e 'mysql://' "$work"/*.resp 2>/dev/null)
is "$leaks" "" "no response contains a password or the upstream URL ($n_req responses)"

# ---- clean stop with the HTTP thread running
shoal_stop node
is "${node_STATUS:-}" 0 "node stops on SIGTERM with status 0"
curl -s -m 5 -o /dev/null "http://127.0.0.1:$mport/ready"
is "$?" 7 "  the metrics port refuses connections (curl: could not connect)"
done_testing
