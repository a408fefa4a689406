#!/usr/bin/python3
"""px_drain.py: SIGTERM Shoal nodes under load behind a real ProxySQL and
count what the clients see (tests/integration/94-proxysql.t, and by hand for
the figures in docs/operations.md).

Topology (seed 004, on one machine): two nodes with auto-cache on the private
MariaDB; ProxySQL hostgroup 30 = the two nodes at weight 1000 and MariaDB at
weight 1 (the fallback), hostgroup 10 = MariaDB; a digest rule sends
`SELECT v FROM kv WHERE id = ?` to 30. --proxies 2 runs two ProxySQL
instances in cluster mode (the rule and servers are applied to the first
only) and spreads the client threads over both. --agent runs
`shoal-ha watch` (daemon) against the proxies' admins.

Each round SIGTERMs one node (alternating), waits for it to exit, starts it
again on the same ports (a rolling restart), and waits until ProxySQL sends
it traffic again. Prints one JSON object: rounds, answers, errors (with
their texts), each round's drain time and exit status.

For warm restarts (tests/integration/76-proxysql-warm.t): --snapshot gives
each node its own cache_snapshot in its data folder; --upstream-log counts the
keys' SELECTs the upstream ran (its general log): over a window of the same
load without restarts first (baseline_selects, baseline_s; after a warm-up
of 2 x settle, in which the nodes fill under ProxySQL's session settings),
then over the rounds (rounds_selects, rounds_s).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import pymysql

from proxysql_help import (Load, Node, ProxySQL, kv_check, kv_query, prepare_upstream, stop_pid,
                           wait_for)

QUERY = "SELECT v FROM kv WHERE id = %d"


def proxies_for(args, work):
    servers = [{"hostgroup_id": 10, "hostname": "127.0.0.1", "port": args.mdb_port, "weight": 1}]
    users = [{"username": "app", "password": "pw", "default_hostgroup": 10, "default_schema": "shoaltest"}]
    variables = dict(v.split("=", 1) for v in args.var)
    for k, v in list(variables.items()):
        variables[k] = int(v) if v.isdigit() else v
    proxies = [ProxySQL("px%d" % (i + 1), work, servers=servers, users=users, variables=variables)
               for i in range(args.proxies)]
    if args.proxies > 1:
        peers = [{"hostname": "127.0.0.1", "port": p.admin_port, "weight": 0, "comment": p.name} for p in proxies]
        for p in proxies:
            p.peers = peers
            p.admin_variables.update({"cluster_check_interval_ms": 200, "cluster_check_status_frequency": 100,
                                      "cluster_mysql_servers_diffs_before_sync": 3,
                                      "cluster_mysql_query_rules_diffs_before_sync": 3})
    return proxies


def configure_hostgroup(px, nodes, args):
    """The operator's step on one proxy: hostgroup 30 and the digest rule."""
    c = px.client()
    with c.cursor() as cur:
        cur.execute(QUERY % 1)
    c.close()
    rows = wait_for(lambda: px.admin_rows("SELECT digest FROM stats_mysql_query_digest WHERE digest_text = "
                                          "'SELECT v FROM kv WHERE id = ?'"), 10)
    digest = rows[0][0]
    stmts = ["INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, max_connections, comment) "
             "VALUES (30, '127.0.0.1', %d, 1000, 500, '%s')" % (n.port, n.name) for n in nodes]
    stmts.append("INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, max_connections, comment) "
                 "VALUES (30, '127.0.0.1', %d, 1, 500, 'fallback')" % args.mdb_port)
    stmts += ["INSERT INTO mysql_query_rules (rule_id, active, digest, destination_hostgroup, apply) "
              "VALUES (50, 1, '%s', 30, 1)" % digest,
              "LOAD MYSQL SERVERS TO RUNTIME", "LOAD MYSQL QUERY RULES TO RUNTIME"]
    px.admin_rows(*stmts)
    return digest


def routed_everywhere(proxies, nodes):
    for p in proxies:
        st = p.servers_status(30)
        if any(st.get(("127.0.0.1", n.port)) != "ONLINE" for n in nodes):
            return False
        if not p.admin_rows("SELECT 1 FROM runtime_mysql_query_rules WHERE rule_id = 50"):
            return False
    return True


def upstream_log(port, restart):
    """The keys' SELECTs in the upstream's general log so far (a table);
    restart: empty it and go on logging."""
    c = pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw", autocommit=True)
    with c.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM mysql.general_log WHERE command_type = 'Query' AND "
                    "argument LIKE 'SELECT v FROM kv WHERE id = %%'")
        n = cur.fetchone()[0]
        if restart:
            cur.execute("SET GLOBAL log_output = 'TABLE'")
            cur.execute("SET GLOBAL general_log = 0")
            cur.execute("TRUNCATE mysql.general_log")
            cur.execute("SET GLOBAL general_log = 1")
    c.close()
    return n


def node_queries(n):
    return n.metric("shoal_queries_total") or 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--mdb-port", type=int, required=True)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--proxies", type=int, default=1)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--agent", action="store_true")
    ap.add_argument("--node-admin", type=int, default=0,
                    help="give the nodes proxysql_admin for the first N proxies")
    ap.add_argument("--sig", default="TERM")
    ap.add_argument("--settle", type=float, default=1.0, help="seconds of load between rounds")
    ap.add_argument("--node-arg", action="append", default=[], help="extra node argument (repeat)")
    ap.add_argument("--var", action="append", default=[], help="mysql_variables NAME=VALUE (repeat)")
    ap.add_argument("--snapshot", action="store_true", help="each node writes and loads <data>/cache.snap")
    ap.add_argument("--upstream-log", action="store_true", help="count the keys' SELECTs upstream")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    prepare_upstream(args.mdb_port)

    url = "mysql://app:pw@127.0.0.1:%d/shoaltest" % args.mdb_port
    proxies = proxies_for(args, args.work)
    node_args = ["--auto-cache", "--cache-ttl-ms", "600000", "--drain-timeout-ms", "8000"] + args.node_arg
    if args.node_admin:
        node_args += ["--proxysql-admin", ",".join("mysql://admin:admin@127.0.0.1:%d" % p.admin_port
                                                   for p in proxies[:args.node_admin])]
    nodes = [Node("px_drain.n%d" % i, args.work, url, node_args) for i in (1, 2)]
    if args.snapshot:
        for n in nodes:
            n.extra += ["--cache-snapshot", os.path.join(n.data_dir, "cache.snap")]
    agent = None
    result = {"rounds": [], "proxies": args.proxies, "agent": args.agent, "node_admin": args.node_admin,
              "threads": args.threads}
    load = None
    try:
        for n in nodes:
            n.start()
        for p in proxies:
            p.start()
        result["digest"] = configure_hostgroup(proxies[0], nodes, args)
        if not wait_for(lambda: routed_everywhere(proxies, nodes), 30, 0.2):
            raise RuntimeError("hostgroup 30 not ONLINE on every proxy")
        if args.agent:
            dsns = ",".join("mysql://admin:admin@127.0.0.1:%d" % p.admin_port for p in proxies)
            nodes_arg = ",".join("127.0.0.1:%d:%d:%d" % (n.port, n.http_port, n.admin_port) for n in nodes)
            alog = open(os.path.join(args.work, "agent.log"), "ab")
            agent = subprocess.Popen([os.path.join(os.environ["SRCDIR"], "ha/shoal-ha"), "watch",
                                      "--proxysql-admin", dsns, "--nodes", nodes_arg,
                                      "--fallback", "127.0.0.1:%d" % args.mdb_port,
                                      "--interval-ms", "500", "--flat-window-ms", "0", "--state-file", ""],
                                     stdout=alog, stderr=subprocess.STDOUT)
        ports = [p.mysql_port for p in proxies]
        counter = [0]

        def connect():
            counter[0] += 1
            port = ports[counter[0] % len(ports)]
            return pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw", database="shoaltest",
                                   autocommit=True, connect_timeout=10, read_timeout=30)

        if args.upstream_log:
            upstream_log(args.mdb_port, True)
        load = Load(connect, kv_query, kv_check, threads=args.threads).start()
        time.sleep(args.settle * 2)
        if args.upstream_log:
            upstream_log(args.mdb_port, True)   # from here: the warm-up's misses are not counted
            t_base = time.time()
            time.sleep(args.settle * 2)
            result["baseline_selects"] = upstream_log(args.mdb_port, True)
            result["baseline_s"] = round(time.time() - t_base, 2)
            t_rounds = time.time()
        sig = getattr(__import__("signal"), "SIG" + args.sig)
        for r in range(args.rounds):
            n = nodes[r % 2]
            before = load.snapshot()
            t0 = time.time()
            st = n.stop(timeout=15, sig=sig)
            drain_s = time.time() - t0
            n.start()
            back = wait_for(lambda: node_queries(n) > 0, 30, 0.1)
            back_s = time.time() - t0
            time.sleep(args.settle)
            after = load.snapshot()
            result["rounds"].append({"node": n.name, "exit": st, "drain_s": round(drain_s, 2),
                                     "back_s": round(back_s, 2) if back else None,
                                     "answers": after[0] - before[0], "errors": after[1] - before[1]})
        if args.upstream_log:
            result["rounds_selects"] = upstream_log(args.mdb_port, False)
            result["rounds_s"] = round(time.time() - t_rounds, 2)
            result["warm"] = [n.metric("shoal_warm_state", 'state="warm"') for n in nodes]
    finally:
        if load:
            load.stop()
            result["answers"] = load.answers
            result["errors"] = len(load.errors)
            result["error_texts"] = [e[1] for e in load.errors[:20]]
        if agent:
            stop_pid(agent)
        for p in proxies:
            p.stop()
        for n in nodes:
            n.stop()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
