"""cache_load: push many distinct queries through a node quickly (for
85-cache-eviction.t): several processes, each with one raw connection that
pipelines its queries in batches (sends a batch of COM_QUERY packets, then
reads the batch's answers in order).

    run(port, template, first, last, procs=4, batch=100) -> dict(
        queries=N, errors=[...], wrong=[...], seconds=S)

template is formatted with each n in first..last; every answer must be a
result set (not an ERR), and every 97th is decoded and must contain n in its
first column.
"""
import multiprocessing as mp
import struct
import time

import rawmysql as r
import cache_proto as cp


def _packet(sql):
    p = b"\x03" + sql.encode()
    return struct.pack("<I", len(p))[:3] + b"\x00" + p


def _worker(port, template, ns, batch, out):
    errors, wrong, done = [], [], 0
    try:
        c = r.connect(port, timeout=60)
        de = c._deprecate_eof()
        for s in range(0, len(ns), batch):
            chunk = ns[s:s + batch]
            c.sock.sendall(b"".join(_packet(template % n) for n in chunk))
            for n in chunk:
                pk = c.read_result()
                done += 1
                e = cp.err_of(pk)
                if e:
                    if len(errors) < 5:
                        errors.append("n=%d: %r" % (n, e))
                    continue
                if n % 97 == 0:
                    _, rows = cp.decode_text(pk, de)
                    if not rows or rows[0][0] != str(n).encode():
                        if len(wrong) < 5:
                            wrong.append("n=%d: %r" % (n, rows[:1]))
        c.close()
    except Exception as e:  # noqa: BLE001
        errors.append("worker died after %d queries: %r" % (done, e))
    out.put((done, errors, wrong))


def run(port, template, first, last, procs=4, batch=100):
    ns = list(range(first, last + 1))
    parts = [ns[i::procs] for i in range(procs)]
    q = mp.Queue()
    t0 = time.monotonic()
    ps = [mp.Process(target=_worker, args=(port, template, part, batch, q)) for part in parts]
    for p in ps:
        p.start()
    res = [q.get() for _ in ps]
    for p in ps:
        p.join()
    return dict(queries=sum(x[0] for x in res), errors=sum((x[1] for x in res), []),
                wrong=sum((x[2] for x in res), []), seconds=time.monotonic() - t0)
