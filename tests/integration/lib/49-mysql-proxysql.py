#!/usr/bin/python3
"""49-mysql-proxysql.py: the seed's story on MySQL (issue 41), with the real
ProxySQL ($PROXYSQL_BIN). 49-mysql-proxysql.t starts the MySQL source
(SRC_PORT, SRC_SOCK) and its replica (REP_PORT), with tables kv (250 rows)
and agg (60,000) and the monitor user; this part starts two ProxySQL
instances in a cluster and two nodes in binlog mode following the replica,
each node with proxysql_admin on both instances. Hostgroup 10 is the source
(the app user's default), hostgroup 30 the nodes (weight 1000) and the
replica (weight 1, the fallback), filled by shoal-ha register. Every check
prints one TAP line (taplib, numbered with lib.sh); LABEL names the server.
"""
import json
import os
import re
import statistics
import subprocess
import time
import urllib.request

import pymysql

from proxysql_help import KEYS, Load, Node, ProxySQL, kv_check, kv_query, wait_for
from taplib import diag, done_testing, is_, ok

LABEL = os.environ["LABEL"]
WORK = os.environ["WORK49"]
SRC, REP = int(os.environ["SRC_PORT"]), int(os.environ["REP_PORT"])
AGENT = os.path.join(os.environ["SRCDIR"], "ha/shoal-ha")
URL = "mysql://app:pw@127.0.0.1:%d/shoaltest" % REP
HG = 30
KV_TEXT = "SELECT v FROM kv WHERE id = ?"
QA = "SELECT g, COUNT(*), SUM(v), MAX(w) FROM agg WHERE g BETWEEN %d AND %d GROUP BY g"
WRITE_KEYS = range(KEYS + 1, KEYS + 51)   # kv's rows the write rounds change; the loads read 1..KEYS


def t(desc):
    return "%s: %s" % (LABEL, desc)


def source(*stmts):
    """Statements on the source as root (its socket); the last one's rows."""
    c = pymysql.connect(unix_socket=os.environ["SRC_SOCK"], user="root", database="shoaltest", autocommit=True)
    try:
        with c.cursor() as cur:
            rows = ()
            for s in stmts:
                cur.execute(s)
                rows = cur.fetchall()
            return rows
    finally:
        c.close()


def status(node):
    with urllib.request.urlopen("http://127.0.0.1:%d/status.json" % node.http_port, timeout=5) as f:
        return json.loads(f.read().decode())


def one(px, sql):
    c = px.client()
    try:
        with c.cursor() as cur:
            cur.execute(sql)
            return cur.fetchall()
    finally:
        c.close()


def pool(px, port):
    """(status, queries) of a server of hostgroup 30 in px's live pool."""
    rows = px.admin_rows("SELECT status, Queries FROM stats_mysql_connection_pool WHERE hostgroup = %d AND "
                         "srv_port = %d" % (HG, port))
    return (rows[0][0], int(rows[0][1])) if rows else (None, 0)


def start_all(nodes, pxs):
    for p in pxs:
        p.start()
    for n in nodes:
        n.start()
    streaming = wait_for(lambda: all(status(n)["node"]["binlog"]["state"] == "streaming"
                                     and status(n)["node"]["invalidation"] == "binlog" for n in nodes), 30, 0.2)
    ok(streaming, t("two ProxySQL instances in a cluster, two nodes following the replica in binlog mode"),
       repr([status(n)["node"]["binlog"] for n in nodes]))
    version = one(pxs[0], "SELECT @@version, @@port")
    ok(version and version[0][0].startswith(LABEL.split()[1]) and int(version[0][1]) == SRC,
       t("app logs in through ProxySQL, which reaches the source as app (caching_sha2_password): %r"
         % (version,)))


def register(px, nodes):
    dsn = "mysql://admin:admin@127.0.0.1:%d" % px.admin_port
    node_list = ",".join("127.0.0.1:%d:%d:%d" % (n.port, n.http_port, n.admin_port) for n in nodes)
    base = [AGENT, "--proxysql-admin", dsn, "--hostgroup", str(HG), "--nodes", node_list,
            "--fallback", "127.0.0.1:%d" % REP]
    p = subprocess.run(base + ["register"], capture_output=True, text=True, timeout=60)
    rows = px.admin_rows("SELECT port, weight FROM runtime_mysql_servers WHERE hostgroup_id = %d ORDER BY port"
                         % HG)
    want = sorted([(str(n.port), "1000") for n in nodes] + [(str(REP), "1")])
    ok(p.returncode == 0 and sorted(rows) == want,
       t("shoal-ha register: the nodes (weight 1000) and the replica (1) in hostgroup 30"),
       repr(rows) + p.stdout + p.stderr)
    for n in nodes:
        st = wait_for(lambda: pool(px, n.port)[0] == "ONLINE", 20, 0.2)
        if not st:
            break
    logs = wait_for(lambda: all(px.admin_rows(
        "SELECT COUNT(*) FROM monitor.mysql_server_%s_log WHERE port = %d AND %s_error IS NULL" % (k, n.port, k))
        [0][0] != "0" for n in nodes for k in ("ping", "connect")), 20, 0.5)
    errs = px.admin_rows("SELECT port, ping_error FROM monitor.mysql_server_ping_log WHERE ping_error IS NOT NULL "
                         "UNION ALL SELECT port, connect_error FROM monitor.mysql_server_connect_log "
                         "WHERE connect_error IS NOT NULL")
    ok(logs and not [e for e in errs if int(e[0]) in [n.port for n in nodes]],
       t("the monitor's ping and connect checks on both nodes: no error"), repr(errs))
    return base


def route_by_digest(pxs, nodes):
    px = pxs[0]
    one(px, "SELECT v FROM kv WHERE id = 1")
    rows = wait_for(lambda: px.admin_rows("SELECT digest, hostgroup FROM stats_mysql_query_digest WHERE "
                                          "digest_text = '%s'" % KV_TEXT), 10)
    ok(rows and rows[0][1] == "10", t("the shape in stats_mysql_query_digest, hostgroup 10 before the rule"),
       repr(rows))
    digest = rows[0][0] if rows else "0x0"
    px.admin_rows("INSERT INTO mysql_query_rules (rule_id, active, digest, destination_hostgroup, apply) "
                  "VALUES (50, 1, '%s', %d, 1)" % (digest, HG), "LOAD MYSQL QUERY RULES TO RUNTIME")
    fb0 = pool(px, REP)[1]
    rng = __import__("random").Random(49)
    good = 0
    c = px.client()
    with c.cursor() as cur:
        for _ in range(600):
            sql = kv_query(rng)
            cur.execute(sql)
            good += kv_check(sql, cur.fetchall())
    c.close()
    is_(good, 600, t("600 reads of the shape through ProxySQL, rule 50 active: all answered right"))
    rows = px.admin_rows("SELECT hostgroup, count_star FROM stats_mysql_query_digest WHERE digest = '%s'" % digest)
    ok(dict(rows).get(str(HG)) == "600", t("  stats_mysql_query_digest counts them in hostgroup 30"), repr(rows))
    qid = "q_" + digest[2:].lower()
    hits = [n.metric("shoal_cache_hits_total", 'query_id="%s"' % qid) or 0 for n in nodes]
    ok(all(h > 50 for h in hits), t("  both nodes' hit counters for the digest move (%r)" % hits))
    fb = pool(px, REP)[1] - fb0
    ok(fb <= 10, t("  weights 1000/1000/1: the replica served %d of 600" % fb))
    got = wait_for(lambda: pxs[1].admin_rows("SELECT destination_hostgroup FROM runtime_mysql_query_rules "
                                             "WHERE rule_id = 50") == ((str(HG),),)
                   and len(pxs[1].admin_rows("SELECT port FROM runtime_mysql_servers WHERE hostgroup_id = %d" % HG))
                   == 3, 20, 0.1)
    def served():   # the nodes' answers from the cache or the replica, both nodes
        return sum((n.metric("shoal_cache_hits_total") or 0) + (n.metric("shoal_cache_misses_total") or 0)
                   for n in nodes)
    s0 = served()
    load = Load(lambda: pxs[1].client(), kv_query, kv_check, threads=2).start()
    time.sleep(1.5)
    load.stop()
    answers, errors = load.snapshot()
    s1 = served()
    ok(got and errors == 0 and answers > 0 and s1 - s0 >= answers - 10,
       t("the cluster carries rule 50 and hostgroup 30 to the second instance; the nodes answer its %d reads "
         "(%d), %d errors" % (answers, s1 - s0, errors)), repr(load.errors[:3]))
    return digest


def writes_reach_reads(px, nodes):
    """UPDATEs through ProxySQL (the source), each read back with the routed
    digest until the new value comes, then read again: never the old one."""
    waits, undone, unseen = [], 0, 0
    w = px.client()
    r = px.client()
    for i, k in enumerate(WRITE_KEYS):
        sql = "SELECT v FROM kv WHERE id = %d" % k
        with r.cursor() as cur:      # the old value cached first
            cur.execute(sql)
            cur.fetchall()
        with w.cursor() as cur:
            cur.execute("UPDATE kv SET v = 'w%d' WHERE id = %d" % (i, k))
        t0 = time.time()
        seen = False
        while time.time() - t0 < 10 and not seen:
            with r.cursor() as cur:
                cur.execute(sql)
                seen = cur.fetchall() == (("w%d" % i,),)
        waits.append(time.time() - t0)
        unseen += not seen
        for _ in range(5):
            with r.cursor() as cur:
                cur.execute(sql)
                undone += seen and cur.fetchall() != (("w%d" % i,),)
    w.close()
    r.close()
    ok(unseen == 0, t("50 UPDATEs through ProxySQL (to the source): each reaches the routed read through the "
                      "replica's binlog (median %.0f ms, longest %.0f ms)"
                      % (1000 * statistics.median(waits), 1000 * max(waits))))
    is_(undone, 0, t("  and once seen, none of 250 reads after it gives the old value"))
    uuid = source("SELECT @@server_uuid")[0][0]
    pos = [status(n)["node"]["binlog"]["position"] for n in nodes]
    ok(all(p.startswith(uuid + ":") for p in pos),
       t("  the nodes' positions are the source's GTIDs, as the replica logged them (%r)" % pos))


def sigterm_one(pxs, nodes):
    turn = [0]

    def connect():   # the threads' connections alternate between the instances
        turn[0] += 1
        return pxs[turn[0] % 2].client()

    load = Load(connect, kv_query, kv_check, threads=4).start()
    time.sleep(1)
    n = nodes[0]
    t0 = time.time()
    st = n.stop(timeout=15)
    drain = time.time() - t0
    is_(st, 0, t("SIGTERM of node 1 under load (threads through both instances): exit 0 in %.1f s" % drain))
    n.start()
    back = wait_for(lambda: all(pool(p, n.port)[0] == "ONLINE" for p in pxs)
                    and (n.metric("shoal_queries_total") or 0) > 0, 30, 0.2)
    time.sleep(1)
    load.stop()
    answers, errors = load.snapshot()
    ok(back, t("  it starts again, ONLINE on both instances, and gets work"),
       repr([pool(p, n.port) for p in pxs]))
    is_(errors, 0, t("  0 client errors (%d answers)" % answers))
    if errors:
        diag("errors: %r" % [e[1] for e in load.errors[:5]])


def auto_route(px, base, nodes):
    state = os.path.join(WORK, "watch.json")
    args = base + ["--state-file", state, "--flat-window-ms", "0", "--route-min-saving-ms", "300",
                   "--route-min-share-pct", "5", "--warmup-ms", "3000", "--withdraw-after", "3",
                   "--min-hit-ratio-pct", "50", "--interval-ms", "1000", "--rule-id-base", "100"]
    load = Load(lambda: px.client(), lambda rng: QA % ((k := rng.randint(0, 4)), k + 10),
                lambda sql, rows: len(rows) == 11, threads=3).start()
    daemon = subprocess.Popen(args + ["watch", "--auto-route"], stdout=subprocess.DEVNULL,
                              stderr=open(os.path.join(WORK, "daemon.err"), "w"))
    try:
        da = wait_for(lambda: px.admin_rows("SELECT digest FROM stats_mysql_query_digest WHERE digest_text "
                                            "LIKE 'SELECT g,COUNT(*),SUM(v),MAX(w) FROM agg%'"), 30, 0.5)
        da = da[0][0] if da else None
        t0 = time.time()
        routed = wait_for(lambda: px.admin_rows("SELECT destination_hostgroup FROM runtime_mysql_query_rules "
                                                "WHERE digest = '%s'" % da) == ((str(HG),),), 90, 0.5)
        ok(routed, t("shoal-ha watch --auto-route routes the costly aggregate to hostgroup 30, from no rule "
                     "(%.1f s)" % (time.time() - t0)), open(os.path.join(WORK, "daemon.err")).read()[-1500:])
        h0 = sum(n.metric("shoal_cache_hits_total", 'query_id="q_%s"' % (da or "0x")[2:].lower()) or 0 for n in nodes)
        time.sleep(2)
        h1 = sum(n.metric("shoal_cache_hits_total", 'query_id="q_%s"' % (da or "0x")[2:].lower()) or 0 for n in nodes)
        ok(h1 - h0 > 10, t("  the nodes answer it (%d hits in 2 s)" % (h1 - h0)))
        c = px.client()
        with c.cursor() as cur:
            cur.execute("UPDATE agg SET v = v + 100000 WHERE id = 40")   # g = 0
        c.close()
        want = source(QA % (0, 10))
        got = wait_for(lambda: one(px, QA % (0, 10)) == want, 15, 0.1)
        ok(got, t("  a write through ProxySQL reaches the routed aggregate's answer"))
    finally:
        daemon.terminate()
        daemon.wait(20)
        load.stop()
    answers, errors = load.snapshot()
    diag("auto-route's clients: %d answers, %d errors %r" % (answers, errors, [e[1] for e in load.errors[:3]]))


def fallback(px, nodes):
    q = pool(px, REP)[1]
    load = Load(lambda: px.client(), kv_query, kv_check, threads=4).start()
    time.sleep(1)
    codes = [n.stop() for n in nodes]
    a0 = load.snapshot()[0]
    time.sleep(1.5)
    load.stop()
    answers, errors = load.snapshot()
    ok(codes == [0, 0] and errors == 0 and answers - a0 > 100,
       t("both nodes stopped under load (exit %r): 0 client errors, %d answers after the second stop"
         % (codes, answers - a0)), repr([e[1] for e in load.errors[:3]]))
    ok(pool(px, REP)[1] - q >= answers - a0,
       t("  answered by the replica, the weight-1 fallback (%d queries)" % (pool(px, REP)[1] - q)))


def main():
    os.makedirs(WORK, exist_ok=True)
    admin_vars = {"cluster_check_interval_ms": 200, "cluster_check_status_frequency": 100,
                  "cluster_mysql_servers_diffs_before_sync": 3, "cluster_mysql_query_rules_diffs_before_sync": 3}
    variables = {"monitor_ping_interval": 1000, "monitor_connect_interval": 1000, "server_version": "9.7.4" if "9.7" in LABEL else "8.0.39"}
    users = [{"username": "app", "password": "pw", "default_hostgroup": 10, "default_schema": "shoaltest"}]
    servers = [{"hostgroup_id": 10, "hostname": "127.0.0.1", "port": SRC}]
    pxs = [ProxySQL("px%d" % i, WORK, servers=servers, users=users, variables=variables,
                    admin_variables=admin_vars) for i in (1, 2)]
    peers = [{"hostname": "127.0.0.1", "port": p.admin_port, "weight": 0, "comment": p.name} for p in pxs]
    for p in pxs:
        p.peers = peers
    admins = ",".join("mysql://admin:admin@127.0.0.1:%d" % p.admin_port for p in pxs)
    args = ["--auto-cache", "--invalidation", "binlog", "--cache-ttl-ms", "600000", "--drain-timeout-ms", "8000",
            "--proxysql-admin", admins]
    name = re.sub(r"\W", "", LABEL.lower())
    nodes = [Node("49-mysql-proxysql.%s.n%d" % (name, i), WORK, URL, args) for i in (1, 2)]
    try:
        start_all(nodes, pxs)
        base = register(pxs[0], nodes)
        route_by_digest(pxs, nodes)
        writes_reach_reads(pxs[0], nodes)
        sigterm_one(pxs, nodes)
        auto_route(pxs[0], base, nodes)
        fallback(pxs[0], nodes)
    finally:
        for p in pxs:
            p.stop()
        for n in nodes:
            n.stop()
    done_testing(always_zero=True)


if __name__ == "__main__":
    main()
