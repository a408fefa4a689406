"""87-multiplex part 6: no head-of-line blocking. One worker: a session runs
SELECT SLEEP(2) upstream while another session on the same worker gets 20
cache hits; the hits must all be answered while the SLEEP is still running
(ordering: the sleeping session's answer has not arrived yet, and MariaDB
still shows the SLEEP), not a latency threshold. Run by 87-multiplex-more.t
(PORT, HPORT, MDB_SOCK)."""
import os
import subprocess
import threading

from ha_help import wait_for
from mux_help import connect, metric, one
from taplib import ok, is_, run

PORT, HPORT, SOCK = int(os.environ["PORT"]), int(os.environ["HPORT"]), os.environ["MDB_SOCK"]
HIT_Q = "SELECT v FROM mux_ps WHERE id = 1"


def sleeping():
    out = subprocess.run(["mariadb", "--no-defaults", "--socket=" + SOCK, "-uroot", "-N", "-e",
                          "SELECT COUNT(*) FROM information_schema.processlist "
                          "WHERE user = 'app' AND info LIKE 'SELECT SLEEP%'"],
                         capture_output=True, text=True, check=True).stdout
    return int(out.strip() or 0)


def main():
    a, b = connect(PORT), connect(PORT)
    one(b, HIT_Q)
    h0 = metric(HPORT, 'shoal_queries_total{destination="cache"}')
    is_(one(b, HIT_Q)[0], "a", "warm-up: the query is cached")
    ok(metric(HPORT, 'shoal_queries_total{destination="cache"}') == h0 + 1, "... a cache hit")
    done = threading.Event()
    res = {}

    def slow():
        res["sleep"] = one(a, "SELECT SLEEP(2)")[0]
        done.set()

    t = threading.Thread(target=slow)
    t.start()
    ok(wait_for(lambda: sleeping() == 1, 5), "MariaDB runs the first session's SELECT SLEEP(2)")
    h1 = metric(HPORT, 'shoal_queries_total{destination="cache"}')
    got = [one(b, HIT_Q)[0] for _ in range(20)]
    before_end = not done.is_set()
    still = sleeping() == 1
    hits = metric(HPORT, 'shoal_queries_total{destination="cache"}') - h1
    t.join(30)
    is_(got, ["a"] * 20, "the second session's 20 queries were answered")
    is_(hits, 20, "... all 20 from the cache")
    ok(before_end and still, "... all of them while the SLEEP(2) on the same worker was still running "
       "(no head-of-line blocking)", "sleep done first: %r, still in processlist: %r" % (not before_end, still))
    is_(res.get("sleep"), 0, "the SLEEP(2) then returns 0")
    a.close()
    b.close()


run("head-of-line blocking", main)
