"""78-fence-race: the commit race of issue 38, the python part of
tests/integration/78-fence-race.t (also run by hand, for more rounds).

Commits made directly on the upstream (not through the node) change one row
while READERS threads read it through a node in binlog mode (AUTO_CACHE), so
that fills of its key race every commit. GRACE seconds after each commit's
OK, a read through the node must give the committed value. A read that does
not is read again until it does (at most STUCK_AFTER seconds):
  - "late": right within STUCK_AFTER (the binlog event came late: the
    invalidation's lag, not a stale entry);
  - "stuck": still the old value after STUCK_AFTER with no write meanwhile:
    an entry filled from a read that raced the commit was stored. Must be 0.

Environment: BL_PORT (the upstream, its binlog on), NB (the node), ROUNDS
(default 200), READERS (6), GRACE (0.1), STUCK_AFTER (3), PHASE (a label),
MAX_SECONDS (a bound on the whole run, default 80), TABLE (fr78).
Prints TAP (taplib) and the figures as diagnostics.
"""
import os
import threading
import time

import cache_proto as cp
import rawmysql as r
from taplib import diag, done_testing, ok

BL = int(os.environ["BL_PORT"])
NB = int(os.environ["NB"])
ROUNDS = int(os.environ.get("ROUNDS", "200"))
READERS = int(os.environ.get("READERS", "6"))
GRACE = float(os.environ.get("GRACE", "0.1"))
STUCK_AFTER = float(os.environ.get("STUCK_AFTER", "3"))
PHASE = os.environ.get("PHASE", "")
MAX_SECONDS = float(os.environ.get("MAX_SECONDS", "80"))
TABLE = os.environ.get("TABLE", "fr78")
SEL = "SELECT v FROM %s WHERE id = 1" % TABLE


def conn(port):
    return r.connect(port, timeout=30)


class Readers:
    """READERS threads reading SEL through the node until stopped."""

    def __init__(self):
        self.stop = threading.Event()
        self.reads = 0
        self.errors = []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.run, daemon=True) for _ in range(READERS)]

    def run(self):
        try:
            c = conn(NB)
        except Exception as e:  # noqa: BLE001 (reported, not raised in a thread)
            self.errors.append(repr(e))
            return
        n = 0
        while not self.stop.is_set():
            try:
                cp.scalar(c, SEL)
                n += 1
            except Exception as e:  # noqa: BLE001
                self.errors.append(repr(e))
                break
        with self.lock:
            self.reads += n
        c.close()

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(30)


def settle_value(chk, want):
    """Seconds until the node gives want (None: not within STUCK_AFTER)."""
    t0 = time.time()
    while time.time() - t0 < STUCK_AFTER:
        if cp.scalar(chk, SEL) == want:
            return time.time() - t0
        time.sleep(0.01)
    return None


def main():
    d = conn(BL)
    for s in ("DROP TABLE IF EXISTS %s" % TABLE,
              "CREATE TABLE %s (id INT PRIMARY KEY, v INT) ENGINE=InnoDB" % TABLE,
              "INSERT INTO %s VALUES (1, 0)" % TABLE):
        cp.must_ok(d, s)
    chk = conn(NB)
    cp.poll(chk, SEL, "0", 10)
    late, stuck, rounds = [], [], 0
    deadline = time.time() + MAX_SECONDS
    with Readers() as rd:
        time.sleep(0.2)
        for i in range(1, ROUNDS + 1):
            if time.time() > deadline:
                break
            cp.must_ok(d, "UPDATE %s SET v = %d WHERE id = 1" % (TABLE, i))
            t_ok = time.time()
            time.sleep(max(0.0, t_ok + GRACE - time.time()))
            got = cp.scalar(chk, SEL)
            rounds = i
            if got == str(i):
                continue
            took = settle_value(chk, str(i))
            if took is None:
                stuck.append((i, got))
                diag("%s round %d: still %s, not %d, %.1f s after the commit" %
                     (PHASE, i, got, i, GRACE + STUCK_AFTER))
            else:
                late.append((i, got, took))
    reads, errors = rd.reads, rd.errors
    diag("%s: %d rounds, %d reads by %d readers; %d answers stale %.0f ms after the commit "
         "(right within %.1f s more: the invalidation's lag), %d still stale after it" %
         (PHASE, rounds, reads, READERS, len(late), GRACE * 1000, STUCK_AFTER, len(stuck)))
    if late:
        diag("%s late rounds (round, answer, s more): %r" % (PHASE, late[:10]))
    ok(not errors, "%s: the readers ran without errors" % PHASE, *errors[:3])
    ok(rounds == ROUNDS, "%s: %d rounds of a commit racing %d readers" % (PHASE, rounds, READERS),
       "the run was cut at %.0f s after %d rounds" % (MAX_SECONDS, rounds))
    ok(not stuck, "%s: no answer still stale after a commit (a fill that raced it was not stored)"
       % PHASE, *["round %d gave %s" % s for s in stuck[:5]])
    diag("FIGURES phase=%s rounds=%d reads=%d late=%d stuck=%d" %
         (PHASE, rounds, reads, len(late), len(stuck)))


if __name__ == "__main__":
    main()
    done_testing()
