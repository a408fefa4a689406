#!/usr/bin/python3
"""docker_load.py PORT CONTAINER...: 99-docker.t's clients. Four threads run
the seed's leaderboard query (tests/data/leaderboard.sql) through ProxySQL
on 127.0.0.1:PORT and check each answer (25 rows, the first one equal to
the first row of a direct answer); after 2 s of load each CONTAINER is
stopped in turn with `docker stop` (Docker's default 10 s grace), with 2 s of
load after each. Prints one JSON object: per container the stop's wall time,
its exit code and the answers and errors during and after it; the totals
and the first error texts."""
import json
import os
import subprocess
import sys
import time

import pymysql

from proxysql_help import Load

port = int(sys.argv[1])
with open(os.path.join(os.environ["DATADIR"], "leaderboard.sql")) as f:
    LEADERBOARD = f.read().strip().rstrip(";")


def connect():
    return pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw", database="sakila",
                           autocommit=True, connect_timeout=10, read_timeout=60)


first = os.environ.get("FIRST_ROW", "")


def check(sql, rows):
    return len(rows) == 25 and (not first or "\t".join(str(v) for v in rows[0][:4]) == first)


load = Load(connect, lambda rng: LEADERBOARD, check, threads=4).start()
time.sleep(2)
out = {"stops": []}
for c in sys.argv[2:]:
    before = load.snapshot()
    t0 = time.time()
    p = subprocess.run(["docker", "stop", c], capture_output=True, text=True)
    took = time.time() - t0
    code = subprocess.run(["docker", "inspect", "-f", "{{.State.ExitCode}}", c], capture_output=True,
                          text=True).stdout.strip()
    time.sleep(2)
    after = load.snapshot()
    out["stops"].append({"container": c, "rc": p.returncode, "stop_s": round(took, 2), "exit": code,
                         "answers": after[0] - before[0], "errors": after[1] - before[1]})
load.stop()
out["answers"], out["errors"] = load.snapshot()
out["error_texts"] = [e[1] for e in load.errors[:5]]
print(json.dumps(out))
