#!/usr/bin/env bash
# 55-limits: the node's limits, each against its setting:
#   --handshake-timeout-ms   a client that sends nothing, and one that dribbles
#                            its handshake response a byte at a time, are both
#                            closed after the timeout (dribbling does not extend it)
#   --client-idle-timeout    an idle logged-in client gets ERR 4031 and is closed;
#                            a long query and a steadily active client are not
#   read backpressure        a client that reads a 200 MB uncached result slowly:
#                            node RSS stays bounded, the upstream waits
#   --max-client-connections one more gets 1040 (08004) "Too many connections",
#                            shoal_client_connections_refused_total moves
#   --admin-max-connections  the admin port's own limit, 1040 too
# About 35 s.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "node-only limits"; fi
# node starts, 13 + 4 checks of the two python parts, node still running
plan 20

MPORT=$(free_port) APORT=$(free_port)
if shoal_start lim --handshake-timeout-ms 1500 --client-idle-timeout 1s \
  --max-client-connections 6 --admin-max-connections 2 \
  --metrics-address "127.0.0.1:$MPORT" --admin-address "127.0.0.1:$APORT" \
  --data-dir "$BUILD_TEST/limits-data"; then
  ok "node starts (handshake 1.5 s, idle 1 s, 6 clients, 2 admin sessions)"
else
  bail "node starts (handshake 1.5 s, idle 1 s, 6 clients, 2 admin sessions)"
fi

PORT=$lim_PORT MPORT=$MPORT APORT=$APORT PID=$lim_PID "$PY" - <<'PY' || not_ok "python part (handshake, idle, limits) crashed"
import os, socket, struct, threading, time, urllib.request, subprocess
import rawmysql as r
from taplib import ok, is_, diag, run, done_testing
port, mport, aport, pid = (int(os.environ[k]) for k in ("PORT", "MPORT", "APORT", "PID"))

def metric(name):
    text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % mport, timeout=5).read().decode()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return int(float(line.split()[1]))
    return None

def wait_metric(name, value, limit=15.0):
    """Poll /metrics until name reads value (the node reads a client's close
    when its loop gets to it); returns the last value read."""
    deadline = time.time() + limit
    while True:
        v = metric(name)
        if v == value or time.time() > deadline:
            return v
        time.sleep(0.05)

def closed_after(c, limit):
    """Seconds until the node closes c (reading and discarding), or None."""
    t0 = time.time()
    c.sock.settimeout(0.2)
    while time.time() - t0 < limit:
        try:
            if c.sock.recv(4096) == b"":
                return time.time() - t0
        except socket.timeout:
            pass
        except ConnectionError:
            return time.time() - t0
    return None

# ---- handshake timeout
def silent():
    c = r.Conn("127.0.0.1", port)
    c.read_greeting()
    t = closed_after(c, 6)
    ok(t is not None and t >= 1.0, "handshake: a client that sends nothing is closed after the timeout (%s s)" % (t and round(t, 2)))
    c.close()
run("silent client", silent)

def dribbler():
    c = r.Conn("127.0.0.1", port)
    g = c.read_greeting()
    resp = c.handshake_response("app", r.native_token("pw", g.nonce), "shoaltest")
    pkt = struct.pack("<I", len(resp))[:3] + b"\x01" + resp
    t0, sent, closed = time.time(), 0, None
    c.sock.settimeout(0.25)
    while time.time() - t0 < 6 and sent < len(pkt):
        try:
            c.sock.send(pkt[sent:sent + 1]); sent += 1
        except OSError:
            closed = time.time() - t0; break
        try:
            if c.sock.recv(4096) == b"":
                closed = time.time() - t0; break
        except socket.timeout:
            pass
        except ConnectionError:
            closed = time.time() - t0; break
    ok(closed is not None and 1.0 <= closed < 4.5 and sent < len(pkt),
       "handshake: a client dribbling a byte every 0.25 s is closed after the timeout anyway "
       "(%s s, %d of %d bytes sent)" % (closed and round(closed, 2), sent, len(pkt)))
    c.close()
run("dribbling client", dribbler)

# ---- idle timeout
def idle():
    before = metric("shoal_client_idle_timeouts_total")
    c = r.connect(port)
    time.sleep(1.6)
    try:
        seq, p = c.read_packet()
        code, state, msg = r.parse_err(p) if p[:1] == b"\xff" else (None, None, None)
    except Exception as e:
        seq, code, state, msg = None, None, None, repr(e)
    ok(code == 4031 and state == "HY000" and seq == 0,
       "idle: an idle client gets ERR 4031 (HY000), sequence id 0 [%s]" % msg, "seq %r code %r" % (seq, code))
    ok(c.is_closed(3), "idle: ... and is closed")
    is_(metric("shoal_client_idle_timeouts_total") - before, 1, "idle: shoal_client_idle_timeouts_total +1")

    busy = r.connect(port)
    res = busy.query("SELECT SLEEP(2.2)")
    ok(res and res[-1][1][:1] in (b"\xfe", b"\x00") and any(p == b"\x010" for _, p in res),
       "idle: a query running longer than the timeout is not cut", r.describe(res))
    active = r.connect(port)
    alive = True
    for i in range(6):
        time.sleep(0.5)
        q = active.query("SELECT %d" % i)
        alive = alive and any(p == b"\x01" + str(i).encode() for _, p in q)
    ok(alive, "idle: a client sending a query every 0.5 s for 3 s stays connected")
    busy.close(); active.close()
run("idle timeout", idle)

# ---- client connection limit
def conn_limit():
    base = wait_metric("shoal_client_connections", 0)
    is_(base, 0, "max_client_connections: the sessions of the parts above are gone")
    before = metric("shoal_client_connections_refused_total")
    held = [r.connect(port) for _ in range(6 - (base or 0))]
    res = r.login_result(port)
    ok(res[:3] == ("err", 1040, "08004") and res[3] == "Too many connections",
       "max_client_connections: one more connection gets 1040 (08004) Too many connections", repr(res))
    is_(metric("shoal_client_connections_refused_total") - before, 1,
        "max_client_connections: shoal_client_connections_refused_total +1")
    held.pop().close_and_wait()
    wait_metric("shoal_client_connections", 5)
    is_(r.login_result(port)[0], "ok", "max_client_connections: a slot freed is usable again")
    for c in held:
        c.close_and_wait()
run("connection limit", conn_limit)

# ---- admin connection limit
def admin_limit():
    before = metric("shoal_admin_connections_refused_total")
    held = []
    for _ in range(2):
        c = r.Conn("127.0.0.1", aport); c.read_greeting(); held.append(c)
    res = r.login_result(aport, user="admin", pw="admin", db=None)
    ok(res[:3] == ("err", 1040, "08004"), "admin_max_connections: a third admin session gets 1040 (08004)", repr(res))
    is_(metric("shoal_admin_connections_refused_total") - before, 1,
        "admin_max_connections: shoal_admin_connections_refused_total +1")
    held[0].close_and_wait()
    is_(r.login_result(aport, user="admin", pw="admin", db=None)[0], "ok",
        "admin_max_connections: below the limit the admin logs in")
    held[1].close_and_wait()
run("admin limit", admin_limit)
done_testing(always_zero=True)
PY

# ---- read backpressure: a 200 MB uncached result read slowly
PORT=$lim_PORT PID=$lim_PID MDB_SOCK=$MDB_SOCK "$PY" - <<'PY' || not_ok "python part (backpressure) crashed"
import os, socket, subprocess, time
import rawmysql as r
from taplib import ok, is_, diag, run, done_testing
port, pid = int(os.environ["PORT"]), int(os.environ["PID"])
ROWS, WIDTH = 200 * 1024, 1024            # 200 MiB of row data
SQL = "SELECT REPEAT('x', %d) AS big FROM seq_1_to_%d" % (WIDTH, ROWS)

def rss_kib():
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])

def upstream_running():
    out = subprocess.run(["mariadb", "--no-defaults", "--socket=" + os.environ["MDB_SOCK"], "-uroot", "-N", "-e",
                          "SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE 'SELECT REPEAT(%seq_1_to_%'"],
                         capture_output=True, text=True).stdout.strip()
    return int(out or 0)

def slow_reader():
    c = r.Conn("127.0.0.1", port, timeout=60)
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    g = c.read_greeting()
    c.write_packet(c.handshake_response("app", r.native_token("pw", g.nonce), "shoaltest"), 1)
    _, p = c.read_packet()
    ok(p[:1] == b"\x00", "backpressure: logged in")
    base = rss_kib()
    c.write_packet(b"\x03" + SQL.encode(), 0)
    got, peak, first = 0, base, bytearray()
    for _ in range(30):                     # 3 s: about 1.5 MB read
        chunk = c.sock.recv(50000)
        first += chunk
        got += len(chunk)
        peak = max(peak, rss_kib())
        time.sleep(0.1)
    running = upstream_running()
    peak = max(peak, rss_kib())
    diag("node RSS %d KiB before, peak %d KiB while the client had read %d bytes of ~%d MB" %
         (base, peak, got, ROWS * WIDTH >> 20))
    ok(peak - base < 48 * 1024, "backpressure: node RSS grew by %d KiB (< 48 MiB) during a 200 MiB result read slowly" % (peak - base))
    ok(running >= 1, "backpressure: the upstream query is still running (waiting for the node)")
    # now read everything: every row arrives
    rows, last = 0, b""
    c.sock.settimeout(60)
    deadline = time.time() + 120
    data = first
    while time.time() < deadline:
        chunk = c.sock.recv(1 << 20)
        if not chunk:
            break
        data += chunk
        # count whole packets as they come, keep the tail
        pos = 0
        while len(data) - pos >= 4:
            ln = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
            if len(data) - pos < 4 + ln:
                break
            if ln == 4 + WIDTH - 3 or ln == 3 + WIDTH:  # a row: lenenc(1024) = 3 bytes + 1024
                rows += 1
            last = bytes(data[pos + 4:pos + 4 + min(ln, 9)])
            pos += 4 + ln
        del data[:pos]
        if rows >= ROWS and last[:1] in (b"\xfe", b"\x00"):
            break
    is_(rows, ROWS, "backpressure: after the pause every row arrives (%d rows)" % rows)
    c.close()
run("slow reader", slow_reader)
done_testing(always_zero=True)
PY

check "node still running" shoal_alive lim
done_testing
