#!/usr/bin/env bash
# 50-faults: misbehaving clients (raw protocol: unknown command, oversized
# packet, bad sequence id, truncated handshake, garbage), an upstream that is
# down, dies and comes back (a second private MariaDB), a client that vanishes
# mid-result, and a clean SIGTERM.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

work="$BUILD_TEST/faults"
mkdir -p "$work"

# The same 42 checks in fake mode: the node-only parts skip as many as they hold.
plan 42
if shoal_start node; then
  ok "node starts (port $node_PORT)"
else
  bail "node starts (port $node_PORT)"
fi

login_works() { # port -> ok if app/pw can run a query
  [ "$(mariadb --no-defaults -h127.0.0.1 -P"$1" -uapp -ppw --connect-timeout=5 -N -e 'select 11' 2>/dev/null)" = 11 ]
}

# ---- raw protocol faults against the main node
PORT=$node_PORT "$PY" - <<'PY' || not_ok "python part (raw faults) crashed"
import os, random, socket, struct, time
import rawmysql as r
from taplib import ok, is_, diag, run, done_testing
port = int(os.environ["PORT"])

def still_serves(what):
    try:
        c = r.connect(port)
        res = c.query("SELECT 'alive'")
        c.close()
        ok(res and res[-1][1][0] in (0xFE, 0x00) and any(p == b"\x05alive" for _, p in res),
           "node still serves a new client after %s" % what, r.describe(res))
    except Exception as e:
        ok(False, "node still serves a new client after %s" % what, repr(e))

def unknown_command():
    c = r.connect(port)
    res = c.command(0x3F, kind="one")
    p = res[0][1]
    code, state, msg = r.parse_err(p) if p[0] == 0xFF else (None, None, None)
    ok(p[0] == 0xFF and code == 1047 and state == "08S01",
       "unknown command 0x3f: ERR 1047 (08S01) [%r]" % (msg,), r.describe(res))
    is_(res[0][0], 1, "  ... ERR has sequence id 1")
    pong = c.command(r.COM_PING, kind="one")
    ok(pong[0][1][:1] == b"\x00", "  ... and the connection still answers COM_PING", r.describe(pong))
    q = c.query("SELECT 2")
    ok(any(p == b"\x012" for _, p in q), "  ... and still runs a query")
    c.close()
run("unknown command", unknown_command)

def bad_sequence():
    c = r.Conn("127.0.0.1", port)
    g = c.read_greeting()
    c.write_packet(c.handshake_response("app", r.native_token("pw", g.nonce), "shoaltest"), 5)
    try:
        seq, p = c.read_packet()
        got = "ERR %r" % (r.parse_err(p),) if p[0] == 0xFF else "packet %r" % p[:20]
        closed = c.is_closed(5)
        ok(p[0] == 0xFF and closed, "handshake response with sequence id 5: ERR then closed (%s)" % got,
           "closed afterwards: %r" % closed)
    except (EOFError, ConnectionResetError):
        ok(True, "handshake response with sequence id 5: connection closed")
    c.close()
run("bad sequence id", bad_sequence)
still_serves("a bad sequence id")

def truncated():
    c = r.Conn("127.0.0.1", port)
    c.read_greeting()
    c.send_raw(struct.pack("<I", 100)[:3] + b"\x01" + b"\x85\xa6\x3f\x20\x00\x00\x00\x01\x2d\x00")
    c.close()
    c = r.Conn("127.0.0.1", port)
    c.read_greeting()
    c.send_raw(b"\x0a\x00")  # half a header
    c.abort()
    c = r.Conn("127.0.0.1", port)
    c.close()                # connect and leave before the greeting is read
    time.sleep(0.3)
    ok(True, "sent a truncated handshake response, half a header, and an early close")
run("truncated handshake", truncated)
still_serves("truncated handshakes")

def garbage():
    rnd = random.Random(7)
    c = r.Conn("127.0.0.1", port)
    c.read_greeting()
    c.send_raw(bytes(rnd.randrange(256) for _ in range(64)))
    ok(c.is_closed(12), "random garbage as the first packet: connection closed")
    c.close()
    c = r.Conn("127.0.0.1", port)
    c.read_greeting()
    # a well-formed packet whose payload is nonsense
    c.write_packet(b"\xff" * 40, 1)
    ok(c.is_closed(12), "a nonsense handshake response: connection closed")
    c.close()
    c = r.Conn("127.0.0.1", port)
    c.send_raw(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + bytes(rnd.randrange(256) for _ in range(4000)))
    ok(c.is_closed(12), "an HTTP request and 4 KB of noise: connection closed")
    c.close()
run("garbage", garbage)
still_serves("garbage")

def commands_after_login():
    c = r.connect(port)
    res = c.command(r.COM_QUERY, b"")          # empty query
    ok(res and res[0][1][0] == 0xFF, "empty COM_QUERY: ERR", r.describe(res))
    res = c.command(r.COM_STMT_EXECUTE, struct.pack("<IBI", 999999, 0, 1))
    ok(res and res[0][1][0] == 0xFF, "COM_STMT_EXECUTE of an unknown statement id: ERR", r.describe(res))
    c.command(r.COM_STMT_CLOSE, struct.pack("<I", 424242), kind="none")
    pong = c.command(r.COM_PING, kind="one")
    ok(pong[0][1][:1] == b"\x00", "connection usable after those (COM_PING)", r.describe(pong))
    c.command(r.COM_QUIT, kind="none")
    ok(c.is_closed(5), "COM_QUIT: the node closes the connection")
run("odd commands", commands_after_login)
done_testing(always_zero=True)
PY
check "node still running after the raw faults" shoal_alive node

# ---- oversized packet
if fake_mode; then
  skip_n 4 "packet larger than --max-allowed-packet" "fake mode"
else
  if shoal_start small --max-allowed-packet 1048576; then
    PORT=$small_PORT "$PY" - <<'PY' || not_ok "python part (oversized packet) crashed"
import os, struct
import rawmysql as r
from taplib import ok, is_, run, done_testing
port = int(os.environ["PORT"])
def big_header():
    c = r.connect(port)
    c.send_raw(struct.pack("<I", 2 * 1024 * 1024)[:3] + b"\x00")   # claims 2 MB, no body
    try:
        seq, p = c.read_packet()
        code, state, msg = r.parse_err(p) if p[0] == 0xFF else (None, None, None)
        ok(p[0] == 0xFF and code == 1153 and state == "08S01",
           "2 MB packet header on a 1 MB node: ERR 1153 (08S01) [%r]" % (msg,), r.describe([(seq, p)]))
    except EOFError as e:
        ok(False, "2 MB packet header on a 1 MB node: ERR 1153 (08S01)", "closed without an ERR: %r" % e)
    ok(c.is_closed(5), "  ... then the connection is closed")
    c.close()
run("oversized packet", big_header)
def under_limit():
    c = r.connect(port)
    res = c.query("SELECT LENGTH('%s')" % ("x" * 900000))
    ok(any(p == b"\x06900000" for _, p in res), "a 900 KB query on a 1 MB node works", r.describe(res))
    c.close()
run("under the limit", under_limit)
done_testing(always_zero=True)
PY
    check "node with --max-allowed-packet survives" shoal_alive small
    shoal_stop small
  else
    not_ok "node with --max-allowed-packet 1048576 starts"
  fi
fi

# ---- upstream down at login: an error naming the upstream, never the password
# Connector/C 3.3 (the mariadb CLI, DBD::MariaDB) replaces any server-sent
# error whose code is in the client range 2000-2999 (2002, 2003, 2013...) by
# its own "ERROR 2027 (HY000): Received malformed packet", so a node must use
# a server-range code for the message to reach such users (the node uses 1429,
# ER_CONNECT_TO_FOREIGN_DATA_SOURCE). Checked: the raw ERR (code outside
# 2000-2999, SQLSTATE HY000, the upstream's address, no password) and what the
# mariadb CLI prints.
# (in fake mode there is no node: the TCP connection itself is refused)
e_down="^err	(1[0-9]{3}|[3-9][0-9]{3})	HY000	"; fake_mode && e_down="^closed	"
closed=$(free_port)
if SHOAL_WAIT=greeting shoal_start down --upstream-db-url "mysql://app:s3cretPW@127.0.0.1:$closed/shoaltest"; then
  res=$("$PY" "$TESTLIB/rawmysql.py" login "$down_PORT" app s3cretPW)
  like "$res" "$e_down" "login while the upstream is down: ERR with a server-range code, SQLSTATE HY000"
  diag "login result: $res"
  unlike "$res" "s3cretPW" "  ... without the password"
  out=$(mariadb --no-defaults -h127.0.0.1 -P"$down_PORT" -uapp -ps3cretPW --connect-timeout=10 -e 'select 1' 2>&1); rc=$?
  diag "mariadb CLI: $out"
  if fake_mode; then
    skip "the mariadb CLI's error names the upstream address" "fake mode"
  else
    if [ $rc -eq 0 ]; then not_ok "  ... the mariadb CLI fails (it exited 0)"; else
      like "$out" "^ERROR [0-9]+ \(HY000\): .*127\.0\.0\.1:$closed" "  ... the mariadb CLI's error names the upstream address 127.0.0.1:$closed"
    fi
  fi
  unlike "$out" "s3cretPW" "  ... and has no password"
  if fake_mode; then skip "log has no password" "fake mode"; else
    if grep -q s3cretPW "$down_LOG"; then not_ok "the node's log never shows the upstream password"; grep -n s3cretPW "$down_LOG" | head -3 | sed 's/^/#   /'
    else ok "the node's log never shows the upstream password"; fi
  fi
  shoal_stop down
else
  not_ok "node pointing at a closed upstream port starts"
fi

# ---- a second MariaDB that goes away and comes back
mdb2_dir="$BUILD_TEST/mdb2"
mdb2_port=$(free_port)
mdb2_pid=""
mdb2_start() {
  local old
  old=$(cat "$mdb2_dir/pid" 2>/dev/null || true)
  if is_pid "$old" && grep -q mariadbd "/proc/$old/cmdline" 2>/dev/null; then
    kill -KILL "$old"; sleep 1
  fi
  rm -f "$mdb2_dir/pid"
  "$SRCDIR/scripts/start-mariadb" "$mdb2_dir" "$mdb2_port" >"$work/mdb2-start.out" 2>&1 </dev/null || return 1
  # (the pid file, not the script's output, where mariadbd's warnings land too)
  mdb2_pid=$(cat "$mdb2_dir/pid" 2>/dev/null || true)
  if ! is_pid "$mdb2_pid" || ! grep -q mariadbd "/proc/$mdb2_pid/cmdline" 2>/dev/null; then
    mdb2_pid=""
    return 1
  fi
}
mdb2_kill() { # signal
  is_pid "$mdb2_pid" || return 0
  kill -"$1" "$mdb2_pid" 2>/dev/null
  wait_gone "$mdb2_pid" 60
  mdb2_pid=""
}
on_exit 'mdb2_kill TERM'

if mdb2_start; then
  ok "second MariaDB started on port $mdb2_port"
  if shoal_start flaky --upstream-db-url "mysql://app:pw@127.0.0.1:$mdb2_port/shoaltest"; then
    check "login through a node on the second MariaDB" login_works "$flaky_PORT"
    mdb2_kill TERM
    res=$("$PY" "$TESTLIB/rawmysql.py" login "$flaky_PORT" app pw)
    like "$res" "$e_down" "upstream stopped: login gives an ERR (server-range code, HY000)"
    check "node survives its upstream stopping" shoal_alive flaky
    if mdb2_start; then
      back=0
      for _ in $(seq 1 50); do login_works "$flaky_PORT" && { back=1; break; }; sleep 0.2; done
      is "$back" 1 "upstream started again: new sessions work without restarting the node"
      # mid-query death (raw client, so that the error code is visible: the
      # mariadb CLI shows any 2xxx code from a server as 2027 "malformed")
      rm -f "$work/midq.ready"
      PORT=$flaky_PORT READY="$work/midq.ready" "$PY" - >"$work/midq.out" 2>&1 <<'PY' &
import os, time, rawmysql as r
c = r.connect(int(os.environ["PORT"]), timeout=30)
c.write_packet(b"\x03SELECT SLEEP(5)", 0)
open(os.environ["READY"], "w").close()
t0 = time.time()
try:
    seq, p = c.read_packet()
    if p[0] == 0xFF:
        print("err\t%d\t%s\t%s" % r.parse_err(p))
    else:
        print("packet\t%s" % p[:40].hex())
except Exception as e:
    print("closed\t\t\t%r" % (e,))
print("after %.1f s" % (time.time() - t0))
PY
      cpid=$!
      for _ in $(seq 1 50); do [ -f "$work/midq.ready" ] && break; sleep 0.1; done
      sleep 1
      mdb2_kill KILL
      wait $cpid
      res=$(head -n1 "$work/midq.out")
      secs=$(sed -nE 's/^after ([0-9]+)\..*/\1/p' "$work/midq.out")
      if grep -Eq '^(err|closed)' <<<"$res"; then
        ok "upstream killed mid-query: the client gets an error or a close ($(cut -f1-3 <<<"$res" | tr '\t' ' '))"
      else
        not_ok "upstream killed mid-query: the client gets an error or a close"
      fi
      diag "mid-query result: $(cat "$work/midq.out")"
      if [ -n "$secs" ] && [ "$secs" -le 5 ]; then
        ok "  ... promptly (before the 5 s query would have ended)"
      else
        not_ok "  ... promptly (before the 5 s query would have ended)"
      fi
      check "node survives its upstream dying mid-query" shoal_alive flaky
      if mdb2_start; then
        back=0
        for _ in $(seq 1 50); do login_works "$flaky_PORT" && { back=1; break; }; sleep 0.2; done
        is "$back" 1 "upstream back after a crash: new sessions work"
      else
        not_ok "second MariaDB restarts after SIGKILL"; diag_file "$work/mdb2-start.out"
      fi
    else
      not_ok "second MariaDB starts again"; diag_file "$work/mdb2-start.out"
    fi
    shoal_stop flaky
  else
    not_ok "node on the second MariaDB starts"
  fi
  mdb2_kill TERM
else
  not_ok "second MariaDB starts"; diag_file "$work/mdb2-start.out"; tail -n 20 "$mdb2_dir/error.log" 2>/dev/null | sed 's/^/#   /'
fi

# ---- a client vanishing mid-result does not disturb another session
PORT=$node_PORT "$PY" - <<'PY' || not_ok "python part (vanishing clients) crashed"
import os, threading, time
import pymysql
import rawmysql as r
from taplib import ok, run, done_testing
port = int(os.environ["PORT"])
stop = threading.Event()
errors, rounds = [], [0]
def steady():
    try:
        c = pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw", database="shoaltest", read_timeout=60)
        with c.cursor() as cur:
            while not stop.is_set():
                cur.execute("SELECT seq, MD5(seq) FROM seq_1_to_2000")
                rows = cur.fetchall()
                if len(rows) != 2000 or rows[-1][0] != 2000:
                    errors.append("bad result: %d rows" % len(rows))
                    break
                rounds[0] += 1
        c.close()
    except Exception as e:
        errors.append(repr(e))
t = threading.Thread(target=steady)
t.start()
def vanish():
    for i in range(8):
        c = r.connect(port)
        c.write_packet(b"\x03SELECT seq, REPEAT('x', 200), MD5(seq) FROM seq_1_to_100000", 0)
        for _ in range(50 + 500 * i):
            c.read_packet()
        c.abort() if i % 2 else c.close()
    time.sleep(0.5)
run("vanishing clients", vanish)
before = rounds[0]
time.sleep(1)
stop.set()
t.join(60)
ok(not errors and rounds[0] > before, "another session ran %d queries correctly while 8 clients vanished mid-result" % rounds[0], *errors[:3])
done_testing(always_zero=True)
PY
check "node still running" shoal_alive node

# ---- SIGTERM
if fake_mode; then
  skip_n 3 "SIGTERM: exit 0" "fake mode"
else
  if shoal_start term; then
    exec 7< <(mariadb --no-defaults -h127.0.0.1 -P"$term_PORT" -uapp -ppw -e 'select sleep(0.5)' 2>&1)
    sleep 0.1
    t0=$(date +%s%N)
    shoal_stop term; st=$?
    t1=$(date +%s%N)
    is "$st" 0 "SIGTERM: the node exits with status 0"
    ms=$(((t1 - t0) / 1000000))
    if [ $ms -le 5000 ]; then ok "  ... within 5 s ($ms ms)"; else not_ok "  ... within 5 s (took $ms ms)"; fi
    if port_refuses "$term_PORT"; then ok "  ... and its port refuses connections"; else not_ok "  ... and its port refuses connections"; fi
    diag "client in flight during SIGTERM saw: $(cat <&7 2>/dev/null | tr '\n' ' ')"
    exec 7<&-
  else
    not_ok "node for the SIGTERM test starts"
  fi
fi
check "main node still running" shoal_alive node
done_testing
