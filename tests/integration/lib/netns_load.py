#!/usr/bin/python3
"""netns_load.py: the load generator of 93-ha-netns.t.

N threads read `SELECT v FROM kv WHERE id = <k>` (k random in 1..KEYS) through
a router (HAProxy standing in for ProxySQL's hostgroup 30), check every answer
(v must be 'v<k>'), and count what the clients saw. It runs until the stop
file exists (or --duration passes) and prints one JSON object.

What a client does, and why it models a ProxySQL client
--------------------------------------------------------
ProxySQL authenticates its clients itself and keeps its own connections to
the backends. A failure to get a backend connection (refused, closed during
the handshake, an ERR instead of the greeting or at login) is never seen by
the client: ProxySQL retries the connect, on another server if need be
(mysql-connect_retries_on_failure). A TCP router cannot do that once the TCP
connection is up, so this client does it itself: everything up to the OK of
the login is the "connect phase", and a failure there is retried on a new
connection (counted under "retried", by class; an error only when the retries
run out after --connect-deadline seconds).

Mode "request" (default): one connection per query. The query's COM_QUERY is
written in the same send as the handshake response, so it is in the node's
input before the session exists: a draining node (which closes a session only
when it has no command in flight or buffered) must answer it. Once the login
OK has arrived, the query counts as accepted by the server, and any failure
after that (EOF, reset, an ERR packet, a wrong row, a timeout) is an error,
never retried. This is stricter than ProxySQL, which also retries a query
whose backend connection broke before any byte of the answer arrived.

Mode "pool": each thread keeps its connection and sends query after query on
it (as ProxySQL's backend pool does). Before each query the pool checks the
idle connection with a zero-timeout poll: if the server closed it (EOF, or an
unsolicited ERR packet), the connection is dropped and a new one is made
(counted as retried "closed_idle"); ProxySQL's pool drops such connections
likewise. A query that was written and then failed is an error.

Errors are counted by class: lost (EOF/reset after the query was accepted),
err_<code> (an ERR packet answering the query), timeout, wrong (a row other
than the expected one), connect_gave_up.

Phases: the test writes a phase name into --phase-file; every outcome is also
counted under the phase current when the query started, so a test can ask
"how many errors after HAProxy noticed".
"""
import argparse
import json
import os
import random
import select
import socket
import struct
import sys
import threading
import time

import rawmysql as r

COM_QUIT = b"\x01"
RETRY_LOG = []


class ConnectFailed(Exception):
    """The connect phase failed: retried like ProxySQL's backend connect."""

    def __init__(self, cls, detail=""):
        Exception.__init__(self, cls)
        self.cls = cls
        self.detail = detail


class QueryFailed(Exception):
    """A query accepted by the server failed: a client-visible error."""

    def __init__(self, cls, detail=""):
        Exception.__init__(self, cls)
        self.cls = cls
        self.detail = detail


def exc_class(e):
    if isinstance(e, socket.timeout):
        return "timeout"
    if isinstance(e, ConnectionRefusedError):
        return "refused"
    if isinstance(e, ConnectionResetError):
        return "reset"
    if isinstance(e, EOFError):
        return "eof"
    if isinstance(e, OSError):
        return "oserror_%s" % (e.errno,)
    return type(e).__name__


def query_packet(sql):
    body = b"\x03" + sql.encode()
    return struct.pack("<I", len(body))[:3] + b"\x00" + body


def parse_one_value(c, pkts):
    """The single cell of a one-row one-column result, or raise QueryFailed."""
    p = pkts[0][1]
    if p[0] == 0xFF:
        code, _, msg = r.parse_err(p)
        raise QueryFailed("err_%d" % code, msg)
    if p[0] == 0x00:
        raise QueryFailed("wrong", "OK packet instead of a result set")
    ncols, _ = r.read_lenenc(p, 0)
    start = 1 + ncols + (0 if c.caps & r.CLIENT_DEPRECATE_EOF else 1)
    rows = [pl for _, pl in pkts[start:-1]]
    if ncols != 1 or len(rows) != 1:
        raise QueryFailed("wrong", "%d columns, %d rows" % (ncols, len(rows)))
    n, pos = r.read_lenenc(rows[0], 0)
    return rows[0][pos:pos + n].decode()


class Client:
    def __init__(self, args, phase=None, retry_log=None):
        self.a = args
        self.conn = None
        self.phase = phase or ["start"]
        self.retry_log = retry_log

    def _connect(self, first_query=None):
        """Connect and log in; with first_query, that COM_QUERY is sent in the
        same write as the handshake response. Raises ConnectFailed."""
        a = self.a
        try:
            c = r.Conn(a.host, a.port, timeout=a.timeout)
        except OSError as e:
            raise ConnectFailed("connect_" + exc_class(e), str(e))
        try:
            _, p = c.read_packet()
            if p[:1] == b"\xff":
                code, _, msg = r.parse_err(p)
                raise ConnectFailed("greeting_err_%d" % code, msg)
            g = r.Greeting(p)
            token = r.native_token(a.password, g.nonce)
            resp = c.handshake_response(a.user, token, a.db, r.DEFAULT_CAPS, plugin="mysql_native_password")
            out = struct.pack("<I", len(resp))[:3] + b"\x01" + resp
            if first_query:
                out += query_packet(first_query)
            c.sock.sendall(out)
            _, p = c.read_packet()
            if p[0] == 0xFF:
                code, _, msg = r.parse_err(p)
                raise ConnectFailed("login_err_%d" % code, msg)
            if p[0] != 0x00:
                raise ConnectFailed("login_unexpected", repr(p[:16]))
        except ConnectFailed:
            c.close()
            raise
        except (OSError, EOFError, r.ProtocolError, IndexError, struct.error) as e:
            c.close()
            raise ConnectFailed("handshake_" + exc_class(e), str(e))
        return c

    def _read_answer(self, c, key):
        try:
            got = parse_one_value(c, c.read_result())
        except QueryFailed:
            raise
        except socket.timeout as e:
            raise QueryFailed("timeout", str(e))
        except (OSError, EOFError, r.ProtocolError, IndexError, struct.error) as e:
            raise QueryFailed("lost", "%s: %s" % (exc_class(e), e))
        if got != "v%d" % key:
            raise QueryFailed("wrong", "id %d: got %r" % (key, got))

    def _idle_closed(self, c):
        """The pooled connection was closed by the server while idle."""
        try:
            rd, _, _ = select.select([c.sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(rd)  # an idle connection has nothing to read unless closed or errored

    def run_query(self, key, retried):
        """One query; returns normally on success, raises QueryFailed.
        Connect-phase failures are retried until --connect-deadline."""
        sql = "SELECT v FROM kv WHERE id = %d" % key
        deadline = time.monotonic() + self.a.connect_deadline
        while True:
            try:
                if self.a.mode == "request":
                    c = self._connect(sql)
                    try:
                        self._read_answer(c, key)
                        try:
                            c.sock.sendall(struct.pack("<I", 1)[:3] + b"\x00" + COM_QUIT)
                        except OSError:
                            pass
                    finally:
                        c.close()
                    return
                if self.conn is not None and self._idle_closed(self.conn):
                    self.conn.close()
                    self.conn = None
                    retried["closed_idle"] = retried.get("closed_idle", 0) + 1
                if self.conn is None:
                    self.conn = self._connect()
                c = self.conn
                try:
                    c.sock.sendall(query_packet(sql))
                except OSError as e:
                    self.conn = None
                    c.close()
                    raise QueryFailed("lost", "send: %s" % exc_class(e))
                try:
                    self._read_answer(c, key)
                except QueryFailed as e:
                    if e.cls in ("lost", "timeout"):
                        self.conn = None
                        c.close()
                    raise
                return
            except ConnectFailed as e:
                retried[e.cls] = retried.get(e.cls, 0) + 1
                if self.retry_log is not None and len(self.retry_log) < 400:
                    self.retry_log.append("%.3f %s %s %s" % (time.monotonic(), self.phase[0], e.cls, e.detail[:120]))
                if time.monotonic() >= deadline:
                    raise QueryFailed("connect_gave_up", "%s %s" % (e.cls, e.detail))
                time.sleep(0.01)


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.ok = 0
        self.errors = {}
        self.retried = {}
        self.phases = {}
        self.samples = []
        self.done_times = []
        self.started = time.monotonic()

    def record(self, phase, err, detail, retried, t_done):
        with self.lock:
            ph = self.phases.setdefault(phase, {"ok": 0, "errors": {}, "retried": {}})
            if err is None:
                self.ok += 1
                ph["ok"] += 1
                self.done_times.append(t_done)
            else:
                self.errors[err] = self.errors.get(err, 0) + 1
                ph["errors"][err] = ph["errors"].get(err, 0) + 1
                if len(self.samples) < 10:
                    self.samples.append("%s [%s] %s" % (err, phase, detail[:200]))
            for k, v in retried.items():
                self.retried[k] = self.retried.get(k, 0) + v
                ph["retried"][k] = ph["retried"].get(k, 0) + v


def read_phase(path):
    try:
        with open(path) as f:
            return f.read().strip() or "start"
    except OSError:
        return "start"


def worker(args, stats, stop, phase):
    cl = Client(args, phase, RETRY_LOG if args.retry_log else None)
    rnd = random.Random()
    while not stop.is_set():
        key = rnd.randint(1, args.keys)
        ph = phase[0]
        retried = {}
        err, detail = None, ""
        try:
            cl.run_query(key, retried)
        except QueryFailed as e:
            err, detail = e.cls, e.detail
        stats.record(ph, err, detail, retried, time.monotonic())
        if args.think_ms:
            time.sleep(args.think_ms / 1000.0)
    if cl.conn is not None:
        cl.conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--user", default="app")
    ap.add_argument("--password", default="pw")
    ap.add_argument("--db", default="shoaltest")
    ap.add_argument("--threads", type=int, default=6)
    ap.add_argument("--keys", type=int, default=50)
    ap.add_argument("--mode", choices=("request", "pool"), default="request")
    ap.add_argument("--timeout", type=float, default=8.0, help="socket timeout, seconds")
    ap.add_argument("--connect-deadline", type=float, default=8.0)
    ap.add_argument("--think-ms", type=float, default=0.0)
    ap.add_argument("--duration", type=float, default=120.0)
    ap.add_argument("--stop-file", default="")
    ap.add_argument("--phase-file", default="")
    ap.add_argument("--progress-file", default="", help="'<ok> <errors>' written every 20 ms")
    ap.add_argument("--sweep", action="store_true", help="read keys 1..KEYS once each and exit")
    ap.add_argument("--retry-log", default="", help="write the first 400 retried connects here")
    ap.add_argument("--ready-file", default="", help="touched once the first query succeeded")
    args = ap.parse_args()

    if args.sweep:  # every key once, in order, on one connection each: warms a cache
        cl, bad = Client(args), []
        for key in range(1, args.keys + 1):
            try:
                cl.run_query(key, {})
            except QueryFailed as e:
                bad.append("%d: %s %s" % (key, e.cls, e.detail[:100]))
        json.dump({"keys": args.keys, "failed": bad}, sys.stdout)
        sys.stdout.write("\n")
        return
    stats, stop, phase = Stats(), threading.Event(), ["start"]
    threads = [threading.Thread(target=worker, args=(args, stats, stop, phase), daemon=True)
               for _ in range(args.threads)]
    for t in threads:
        t.start()
    end = time.monotonic() + args.duration
    ready = False
    while time.monotonic() < end:
        if args.stop_file and os.path.exists(args.stop_file):
            break
        if args.phase_file:
            ph = read_phase(args.phase_file)
            if ph != phase[0]:
                RETRY_LOG.append("%.3f phase %s" % (time.monotonic(), ph))
                phase[0] = ph
        if args.progress_file:
            with open(args.progress_file + ".tmp", "w") as f:
                f.write("%d %d\n" % (stats.ok, sum(stats.errors.values())))
            os.replace(args.progress_file + ".tmp", args.progress_file)
        if args.ready_file and not ready and stats.ok > 0:
            open(args.ready_file, "w").close()
            ready = True
        time.sleep(0.02)
    stop.set()
    for t in threads:
        t.join(args.timeout + args.connect_deadline + 5)
    times = sorted(stats.done_times)
    gap = 0.0
    for a, b in zip(times, times[1:]):
        gap = max(gap, b - a)
    out = {
        "ok": stats.ok,
        "errors": stats.errors,
        "error_total": sum(stats.errors.values()),
        "retried": stats.retried,
        "retried_total": sum(stats.retried.values()),
        "phases": stats.phases,
        "max_gap_ms": int(gap * 1000),
        "seconds": round(time.monotonic() - stats.started, 2),
        "samples": stats.samples,
        "threads_stuck": sum(1 for t in threads if t.is_alive()),
    }
    if args.retry_log:
        with open(args.retry_log, "w") as f:
            f.write("\n".join(RETRY_LOG) + "\n")
    json.dump(out, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
