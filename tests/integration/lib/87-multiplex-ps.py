"""87-multiplex part 5: prepared statements (binary protocol, rawmysql's
COM_STMT_PREPARE / EXECUTE / CLOSE) under multiplexing. Run by
87-multiplex-more.t (PORT, HPORT, MDB_SOCK).

- a statement prepared and executed, then every upstream connection of user
  app is KILLed from MariaDB's side: the next execute of the same client
  statement id works (prepared lazily on a new connection), right after the
  KILL and again after the pool noticed;
- COM_STMT_CLOSE, and COM_RESET_CONNECTION, forget the statement: executing
  its id gives error 1243;
- two sessions preparing the same texts in another order get their own
  stable ids, each executing its own;
- a PREPARE of a text the registry knows is answered without an upstream
  round trip (MariaDB's Com_stmt_prepare does not move) and with the same
  answer as the first (apart from the statement id).
"""
import os
import struct
import subprocess
import time

import rawmysql as r
from ha_help import wait_for
from mux_help import metric
from taplib import ok, is_, diag, run

PORT, HPORT, SOCK = int(os.environ["PORT"]), int(os.environ["HPORT"]), os.environ["MDB_SOCK"]
TEXT_A = "SELECT v FROM mux_ps WHERE id = ?"
TEXT_B = "SELECT CONCAT('id=', id) FROM mux_ps WHERE v = ?"
COM_RESET_CONNECTION = 0x1F


def root(sql):
    out = subprocess.run(["mariadb", "--no-defaults", "--socket=" + SOCK, "-uroot", "-N", "-e", sql],
                         capture_output=True, text=True, check=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def com_stmt_prepare():
    return int(root("SHOW GLOBAL STATUS LIKE 'Com_stmt_prepare'")[0][1])


def app_ids():
    return sorted(int(x[0]) for x in root(
        "SELECT id FROM information_schema.processlist WHERE user = 'app'"))


def kill_app():
    ids = app_ids()
    for i in ids:
        try:
            root("KILL %d" % i)
        except subprocess.CalledProcessError:
            pass
    return ids


def execute(c, sid, params):
    """("row", first column str) / ("none",) / ("err", code, state, msg)."""
    pkts = c.execute(sid, params)
    p = pkts[0][1]
    if p[0] == 0xFF:
        return ("err",) + r.parse_err(p)
    if p[0] == 0x00:
        return ("ok",)
    ncols, _ = r.read_lenenc(p, 0)
    rest = pkts[1 + ncols + (0 if c._deprecate_eof() else 1):]
    for _, q in rest:
        if q[0] == 0x00:   # binary row: header, null bitmap, values
            nb = (ncols + 7 + 2) // 8
            n, pos = r.read_lenenc(q, 1 + nb)
            return ("row", q[pos:pos + n].decode())
        break
    return ("none",)


def prepare(c, text):
    sid, ncols, nparams, pkts = c.prepare(text)
    return sid, pkts


def masked(pkts):
    """Prepare answer with the statement id zeroed (for comparison)."""
    out = [p for _, p in pkts]
    out[0] = out[0][:1] + b"\0\0\0\0" + out[0][5:]
    return out


def main():
    c1 = r.connect(PORT)
    a1, pk_a1 = prepare(c1, TEXT_A)
    ok(a1 is not None, "session 1 prepares A (id %r)" % a1, r.describe(pk_a1))
    is_(execute(c1, a1, [2]), ("row", "b"), "session 1 executes A(2) -> b")
    before = app_ids()
    killed = kill_app()
    ok(len(killed) >= 1, "KILLed the node's upstream connections from MariaDB (%r)" % killed)
    p0 = com_stmt_prepare()
    is_(execute(c1, a1, [3]), ("row", "c"),
        "right after the KILL: the same statement id executes, A(3) -> c")
    diag("Com_stmt_prepare delta for that execute: %d; retries %d"
         % (com_stmt_prepare() - p0, metric(HPORT, "shoal_upstream_retries_total")))
    ok(com_stmt_prepare() - p0 >= 1, "... prepared again on the new upstream connection (Com_stmt_prepare moved)")
    now = app_ids()
    ok(now and not set(now) & set(before), "... which is a new connection (%r, before %r)" % (now, before))
    kill_app()
    ok(wait_for(lambda: metric(HPORT, "shoal_upstream_connections") == 0, 5),
       "after a second KILL the pool notices its idle connections are gone")
    is_(execute(c1, a1, [1]), ("row", "a"), "the statement id still executes, A(1) -> a")

    # two sessions, same texts, other order: own stable ids
    b1, _ = prepare(c1, TEXT_B)
    c2 = r.connect(PORT)
    p0 = com_stmt_prepare()
    b2, pk_b2 = prepare(c2, TEXT_B)
    a2, pk_a2 = prepare(c2, TEXT_A)
    is_(com_stmt_prepare() - p0, 0,
        "session 2's PREPAREs of texts the node knows made no upstream round trip (Com_stmt_prepare +0)")
    ok(masked(pk_a2) == masked(pk_a1), "... and are answered like the first PREPARE of A (metadata from the registry)",
       r.describe(pk_a1, 4), r.describe(pk_a2, 4))
    diag("ids: session 1 A=%r B=%r; session 2 B=%r A=%r" % (a1, b1, b2, a2))
    ok(a1 != b1 and a2 != b2, "each session's ids are distinct per statement")
    for _ in range(2):
        is_(execute(c2, a2, [2]), ("row", "b"), "session 2 executes its A(2) -> b")
        is_(execute(c2, b2, ["c"]), ("row", "id=3"), "session 2 executes its B('c') -> id=3")
        is_(execute(c1, b1, ["a"]), ("row", "id=1"), "session 1 executes its B('a') -> id=1")
        is_(execute(c1, a1, [3]), ("row", "c"), "session 1 executes its A(3) -> c")
        kill_app()   # and again on fresh connections

    # COM_STMT_CLOSE
    c1.close_stmt(a1)
    e = execute(c1, a1, [1])
    ok(e[0] == "err" and e[1] == 1243, "after COM_STMT_CLOSE, executing its id gives error 1243", repr(e))
    is_(execute(c1, b1, ["b"]), ("row", "id=2"), "the session's other statement still works")
    is_(execute(c2, a2, [1]), ("row", "a"), "the other session's statement of the same text still works")
    # COM_RESET_CONNECTION
    pk = c2.command(COM_RESET_CONNECTION)
    ok(pk[0][1][0] == 0x00, "COM_RESET_CONNECTION answers OK", r.describe(pk, 2))
    e = execute(c2, a2, [1])
    ok(e[0] == "err" and e[1] == 1243, "after COM_RESET_CONNECTION, executing an old id gives error 1243", repr(e))
    a3, _ = prepare(c2, TEXT_A)
    is_(execute(c2, a3, [2]), ("row", "b"), "a statement prepared after the reset works")
    c1.close()
    c2.close()


run("prepared statements under multiplexing", main)
