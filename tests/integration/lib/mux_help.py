"""mux_help: small helpers for the multiplexing tests (86-, 87-multiplex).

metrics(hport) reads the node's /metrics into {name: value} (labelled
series keep their labels in the name); sample_metrics polls in a thread and
keeps the maximum of chosen gauges.
"""
import threading
import time

import pymysql

from ha_help import http_get


def metrics(hport):
    _, body = http_get(hport, "/metrics")
    out = {}
    for line in body.splitlines():
        if not line or line.startswith("#"):
            continue
        name, _, val = line.rpartition(" ")
        try:
            out[name] = float(val)
        except ValueError:
            pass
    return out


def metric(hport, name):
    return int(metrics(hport).get(name, -1))


class MaxSampler:
    """Polls /metrics every `every` seconds and keeps each gauge's maximum."""

    def __init__(self, hport, names, every=0.1):
        self.hport, self.names, self.every = hport, names, every
        self.max = {n: -1 for n in names}
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                m = metrics(self.hport)
                for n in self.names:
                    if n in m:
                        self.max[n] = max(self.max[n], int(m[n]))
            except Exception:  # noqa: BLE001 - a missed sample is fine
                pass
            self._stop.wait(self.every)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *a):
        self._stop.set()
        self._t.join()


def connect(port, db="shoaltest", **kw):
    kw.setdefault("connect_timeout", 30)
    kw.setdefault("read_timeout", 60)
    return pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw",
                           database=db, autocommit=True, **kw)


def one(conn, sql, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        row = cur.fetchone()
    return row


def rows(conn, sql, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchall()


def now():
    return time.monotonic()


def todo_ok(cond, desc, why="node bug", *diags):
    """A TAP result marked TODO (a known node bug): reported, not counted
    as a failure (taplib's counter is bumped as a pass)."""
    import sys
    import taplib
    n = taplib._bump(False)
    sys.stdout.write("%s %d - %s # TODO %s\n" % ("ok" if cond else "not ok", n, desc, why))
    if not cond:
        for d in diags:
            taplib.diag(d)
    sys.stdout.flush()
    return bool(cond)
