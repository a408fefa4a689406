"""86-multiplex part 4: the pool limit. Run by 86-multiplex.t with MODE:

wait  (1 worker, pool of 1, --upstream-wait-timeout-ms 1000, auto-cache):
      a session holds the only connection (open transaction); another
      session's uncached query waits and gets ERROR 1040 SQLSTATE 08004 naming
      the pool, while a third session's cache hit is answered during that
      wait (ordering, not latency: the hit returns while the waiter is still
      waiting).
fifo  (1 worker, pool of 1, long wait): four waiters queued one after the
      other (each queued before the next is sent, by the waits counter) are
      served in arrival order once the holder commits.
maxc  (--max-client-connections 3): the 4th client gets 1040 "Too many
      connections", the refusal counter moves, and after one leaves a new
      client gets in.
"""
import os
import threading
import time

import rawmysql as r
from ha_help import wait_for
from mux_help import connect, metric, one, rows
from taplib import ok, is_, diag, run

PORT, HPORT, MODE = int(os.environ["PORT"]), int(os.environ["HPORT"]), os.environ["MODE"]
HIT_Q = "SELECT v FROM mux_cache WHERE id = 2"


def raw_query(c, sql):
    """("rows", [first column values]) / ("err", code, state, msg) / ("ok",)."""
    pkts = c.query(sql)
    p = pkts[0][1]
    if p[0] == 0xFF:
        return ("err",) + r.parse_err(p)
    if p[0] == 0x00:
        return ("ok",)
    ncols, _ = r.read_lenenc(p, 0)
    rest = pkts[1 + ncols + (0 if c._deprecate_eof() else 1):]
    vals = []
    for _, q in rest:
        if q[0] == 0xFE and len(q) < 0xFFFFFF:
            break
        n, pos = r.read_lenenc(q, 0)   # first column: a length-encoded string
        vals.append(None if n is None else q[pos:pos + n])
    return ("rows", vals)


def cache_hits():
    return metric(HPORT, 'shoal_queries_total{destination="cache"}')


def wait_mode():
    w = connect(PORT)
    one(w, HIT_Q)
    h0 = cache_hits()
    is_(one(w, HIT_Q)[0], "b", "warm-up: the query is answered again")
    ok(cache_hits() == h0 + 1, "... from the cache (cache hits %d -> %d)" % (h0, cache_hits()))
    x = r.connect(PORT)                     # logged in before the pool is taken
    h = connect(PORT)
    h.begin()
    one(h, "SELECT COUNT(*) FROM mux_cache")  # h now holds the only connection
    w0, t0 = metric(HPORT, "shoal_upstream_pool_waits_total"), \
        metric(HPORT, "shoal_upstream_pool_wait_timeouts_total")
    res = {}
    th = threading.Thread(target=lambda: res.update(x=raw_query(x, "SELECT COUNT(*) FROM mux_ai")))
    th.start()
    queued = wait_for(lambda: metric(HPORT, "shoal_upstream_pool_waits_total") > w0, 5)
    ok(queued, "a second session's uncached query waits for the pool (waits counter moved)")
    h1 = cache_hits()
    got = one(w, HIT_Q)[0]
    still_waiting = th.is_alive() and "x" not in res
    is_(got, "b", "a third session's cached query is answered while the pool is exhausted")
    ok(still_waiting and cache_hits() == h1 + 1,
       "... as a cache hit, while the waiting session was still waiting (cache hits never wait)",
       "waiter done: %r, hits %d -> %d" % (res.get("x"), h1, cache_hits()))
    th.join(30)
    e = res.get("x")
    ok(e and e[0] == "err" and e[1] == 1040 and e[2] == "08004",
       "the waiter gets ERROR 1040 SQLSTATE 08004 after --upstream-wait-timeout-ms", repr(e))
    ok(e and e[0] == "err" and "pool" in e[3] and "max_upstream_connections=1" in e[3],
       "... whose message names the pool (%s)" % (e[3] if e and e[0] == "err" else "?"), repr(e))
    is_(metric(HPORT, "shoal_upstream_pool_wait_timeouts_total") - t0, 1, "wait timeouts counter +1")
    t_login = time.time()
    late = r.login_result(PORT)
    ok(late[0] == "ok" and time.time() - t_login < 0.9,
       "a login while the pool is exhausted does not wait for it (%.2f s)" % (time.time() - t_login), repr(late))
    h.commit()
    after = raw_query(x, "SELECT COUNT(*) FROM mux_ai")
    ok(after[0] == "rows", "once the holder commits, the same session's next query runs", repr(after))
    for c in (w, h):
        c.close()
    x.close()


def fifo_mode():
    waiters = [r.connect(PORT) for _ in range(4)]   # logins borrow too: log in first
    h = connect(PORT)
    h.begin()
    one(h, "SELECT COUNT(*) FROM mux_cache")
    base = metric(HPORT, "shoal_upstream_pool_waits_total")
    res = {}
    threads = []
    for i, c in enumerate(waiters):
        t = threading.Thread(target=lambda i=i, c=c: res.update(
            {i: raw_query(c, "SELECT CONCAT('w%d ', SYSDATE(6))" % i)}))
        t.start()
        threads.append(t)
        ok(wait_for(lambda: metric(HPORT, "shoal_upstream_pool_waits_total") >= base + i + 1, 10),
           "waiter %d queued (waits counter %d)" % (i, base + i + 1))
    ok(not res, "no waiter ran while the holder's transaction was open", repr(res))
    h.commit()
    for t in threads:
        t.join(30)
    vals = [res.get(i) for i in range(4)]
    ok(all(v and v[0] == "rows" for v in vals), "all four waiters answered after the commit", repr(vals))
    if all(v and v[0] == "rows" for v in vals):
        served = [v[1][0].decode().split(" ", 1) for v in vals]
        order = [w for w, _ in sorted(served, key=lambda x: x[1])]
        is_(order, ["w0", "w1", "w2", "w3"], "waiters were served in arrival order (FIFO, by SYSDATE(6))")
    h.close()
    for c in waiters:
        c.close()


def maxc_mode():
    wait_for(lambda: metric(HPORT, "shoal_client_connections") == 0, 5)
    held = [connect(PORT) for _ in range(3)]
    ref0 = metric(HPORT, "shoal_client_connections_refused_total")
    res = r.login_result(PORT)
    ok(res[0] == "err" and res[1] == 1040 and "Too many connections" in (res[3] or ""),
       "with 3 clients connected and --max-client-connections 3, the 4th gets ERROR 1040 "
       "Too many connections", repr(res))
    is_(metric(HPORT, "shoal_client_connections_refused_total") - ref0, 1,
        "shoal_client_connections_refused_total +1")
    is_(one(held[0], "SELECT 1")[0], 1, "the connected clients still work")
    held.pop().close()
    ok(wait_for(lambda: metric(HPORT, "shoal_client_connections") == 2, 5), "one client left")
    again = r.login_result(PORT)
    is_(again[0], "ok", "a new client gets in again")
    for c in held:
        c.close()


run("pool limit (%s)" % MODE, {"wait": wait_mode, "fifo": fifo_mode, "maxc": maxc_mode}[MODE])
