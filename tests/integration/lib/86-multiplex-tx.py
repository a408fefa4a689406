"""86-multiplex part 2: transactions never interleave on one upstream
connection. 12 sessions over a pool of 4 (2 workers) each run transactions:
BEGIN; INSERT a marker with CONNECTION_ID(); SELECT CONNECTION_ID(); sleep;
INSERT again; SELECT CONNECTION_ID(); COMMIT (every fourth: ROLLBACK).
Within a transaction every statement must see one upstream connection id,
and no two transactions may hold one id at overlapping times (the interval
runs from the answer to the first statement to the sending of COMMIT, when
the transaction is certainly open). Rolled back markers must be gone.
Run by 86-multiplex.t (PORT, HPORT)."""
import os
import random
import threading
import time

from mux_help import connect, metric, one, rows, MaxSampler
from taplib import ok, is_, diag

PORT, HPORT = int(os.environ["PORT"]), int(os.environ["HPORT"])
SESSIONS, TXNS = 12, 6

records = []   # (txn, cids seen, t_open, t_close, committed)
errors = []
lock = threading.Lock()


def session(k):
    rnd = random.Random(k)
    try:
        c = connect(PORT)
        for j in range(TXNS):
            name = "s%d-t%d" % (k, j)
            commit = j % 4 != 3
            seen = []
            with c.cursor() as cur:
                cur.execute("BEGIN")
                cur.execute("INSERT INTO mux_tx (txn, step, cid) VALUES (%s, 1, CONNECTION_ID())", (name,))
                t_open = time.monotonic()
                cur.execute("SELECT CONNECTION_ID()")
                seen.append(cur.fetchone()[0])
                time.sleep(rnd.uniform(0.01, 0.06))
                cur.execute("INSERT INTO mux_tx (txn, step, cid) VALUES (%s, 2, CONNECTION_ID())", (name,))
                cur.execute("SELECT cid FROM mux_tx WHERE txn = %s ORDER BY step", (name,))
                seen.extend(r[0] for r in cur.fetchall())
                time.sleep(rnd.uniform(0.0, 0.03))
                cur.execute("SELECT CONNECTION_ID()")
                seen.append(cur.fetchone()[0])
                t_close = time.monotonic()
                cur.execute("COMMIT" if commit else "ROLLBACK")
            with lock:
                records.append((name, seen, t_open, t_close, commit))
            # an autocommit statement between transactions: the connection
            # may move to another session here
            one(c, "SELECT COUNT(*) FROM mux_cache")
        c.close()
    except Exception as e:  # noqa: BLE001
        with lock:
            errors.append("session %d: %r" % (k, e))


b0 = metric(HPORT, "shoal_upstream_pool_borrows_total")
with MaxSampler(HPORT, ["shoal_upstream_connections"], every=0.05) as smp:
    ts = [threading.Thread(target=session, args=(k,)) for k in range(SESSIONS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
b1 = metric(HPORT, "shoal_upstream_pool_borrows_total")

is_(errors, [], "%d sessions x %d transactions over a pool of 4: no errors" % (SESSIONS, TXNS))
is_(len(records), SESSIONS * TXNS, "every transaction ran")
mixed = [(n, s) for n, s, _, _, _ in records if len(s) != 4 or len(set(s)) != 1]
ok(not mixed, "within each transaction every statement saw one upstream CONNECTION_ID() (2 SELECTs, 2 markers read back in the transaction)",
   "mixed: %r" % mixed[:5])
clashes = []
by_cid = {}
for n, s, a, b, _ in records:
    by_cid.setdefault(s[0], []).append((a, b, n))
for cid, iv in by_cid.items():
    iv.sort()
    for (a1, b1_, n1), (a2, b2, n2) in zip(iv, iv[1:]):
        if a2 < b1_:
            clashes.append((cid, n1, n2))
ok(not clashes, "no two open transactions shared an upstream connection at overlapping times",
   "clashes: %r" % clashes[:5])
sessions_per_cid = {cid: len({n.split("-")[0] for _, _, n in iv}) for cid, iv in by_cid.items()}
diag("upstream ids used: %d; sessions per id: %r; borrows %d; max upstream connections %d"
     % (len(by_cid), sorted(sessions_per_cid.values()), b1 - b0, smp.max["shoal_upstream_connections"]))
ok(max(sessions_per_cid.values() or [0]) >= 2,
   "connections were shared: some upstream id served transactions of several sessions")
ok(0 < smp.max["shoal_upstream_connections"] <= 4,
   "upstream connections stayed <= 4 (max sampled %d)" % smp.max["shoal_upstream_connections"])

d = connect(PORT)
want_commit = sorted(n for n, _, _, _, cm in records if cm)
got = rows(d, "SELECT txn, COUNT(*) FROM mux_tx GROUP BY txn ORDER BY txn")
is_(sorted(r[0] for r in got), want_commit, "committed transactions are in the table, rolled back ones are not")
ok(all(r[1] == 2 for r in got), "each committed transaction left its 2 markers")
bad = rows(d, "SELECT t.txn FROM mux_tx t GROUP BY t.txn HAVING COUNT(DISTINCT cid) <> 1")
is_(list(bad), [], "the stored markers of each transaction carry one connection id")
d.close()
