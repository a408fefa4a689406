#!/usr/bin/python3
"""94-proxysql.py: what docs/proxysql.md and docs/operations.md say ProxySQL
does with Shoal nodes, checked against the real ProxySQL ($PROXYSQL_BIN).

Two nodes (auto-cache) on the private MariaDB, which is also the weight-1
fallback; two ProxySQL instances in cluster mode; client threads through
ProxySQL. Every check prints one TAP line (taplib, numbered with lib.sh).
"""
import os
import random
import re
import subprocess
import time

import pymysql

from proxysql_help import (KEYS, Load, Node, ProxySQL, free_port, kv_check, kv_query, prepare_upstream,
                           wait_for)
from taplib import diag, done_testing, is_, ok

WORK = os.path.join(os.environ["BUILD_TEST"], "proxysql94")
MDB = int(os.environ["MDB_PORT"])
AGENT = os.path.join(os.environ["SRCDIR"], "ha/shoal-ha")
URL = "mysql://app:pw@127.0.0.1:%d/shoaltest" % MDB
DIGEST_TEXT = "SELECT v FROM kv WHERE id = ?"
HG, RO_HG = 30, 40


def run_queries(px, n, sql_of=lambda i: "SELECT v FROM kv WHERE id = %d" % (i % KEYS + 1)):
    """n queries on one client connection; (answers, errors, last error)."""
    good, bad, last = 0, 0, None
    c = None
    for i in range(n):
        sql = sql_of(i)
        try:
            if c is None:
                c = px.client()
            with c.cursor() as cur:
                cur.execute(sql)
                rows = cur.fetchall()
            if sql.startswith("SELECT v FROM kv") and not kv_check(sql, rows):
                raise AssertionError("wrong answer %r" % (rows,))
            good += 1
        except Exception as e:  # noqa: BLE001 - counted
            bad, last, c = bad + 1, repr(e), None
    if c:
        c.close()
    return good, bad, last


def pool(px, node):
    """(status, queries, free connections) of node in hostgroup 30 of px."""
    rows = px.admin_rows("SELECT status, Queries, ConnFree FROM stats_mysql_connection_pool "
                         "WHERE hostgroup = %d AND srv_port = %d" % (HG, node if isinstance(node, int) else node.port))
    return (rows[0][0], int(rows[0][1]), int(rows[0][2])) if rows else (None, 0, 0)


def monitor_checks(px, nodes):
    """The monitor user's checks on the nodes (docs/operations.md)."""
    for n in nodes:
        ping = wait_for(lambda: px.admin_rows(
            "SELECT ping_error FROM monitor.mysql_server_ping_log WHERE port = %d "
            "ORDER BY time_start_us DESC LIMIT 3" % n.port), 15, 0.5)
        ok(ping and all(r[0] is None for r in ping), "%s: the monitor's pings (COM_PING as monitor) succeed" % n.name,
           repr(ping))
        conn = wait_for(lambda: px.admin_rows(
            "SELECT connect_error FROM monitor.mysql_server_connect_log WHERE port = %d "
            "ORDER BY time_start_us DESC LIMIT 2" % n.port), 15, 0.5)
        ok(conn and all(r[0] is None for r in conn), "%s: the monitor's connect checks (login as monitor) succeed"
           % n.name, repr(conn))
        ro = wait_for(lambda: px.admin_rows(
            "SELECT read_only, error FROM monitor.mysql_server_read_only_log WHERE port = %d "
            "ORDER BY time_start_us DESC LIMIT 2" % n.port), 15, 0.5)
        ok(ro and all(r[0] == "1" and r[1] is None for r in ro),
           "%s: read_only check (mysql_replication_hostgroups) reads 1: a reader" % n.name, repr(ro))
        lag = wait_for(lambda: px.admin_rows(
            "SELECT repl_lag, error FROM monitor.mysql_server_replication_lag_log WHERE port = %d "
            "ORDER BY time_start_us DESC LIMIT 2" % n.port), 15, 0.5)
        ok(lag and all(r[1] is None for r in lag),
           "%s: replication lag check (max_replication_lag > 0) answered without error" % n.name, repr(lag))
        diag("%s: replication lag as ProxySQL records it: %r" % (n.name, [r[0] for r in lag or ()]))
        st = px.admin_rows("SELECT hostgroup, status FROM stats_mysql_connection_pool WHERE srv_port = %d "
                           "ORDER BY hostgroup" % n.port)
        ok(st and all(s == "ONLINE" for _, s in st), "%s: ONLINE in every hostgroup after the checks" % n.name,
           repr(st))
    # The readers' hostgroup keeps the nodes (read_only=1), none moved to the writers'.
    rows = px.admin_rows("SELECT hostgroup_id, port FROM runtime_mysql_servers WHERE hostgroup_id IN (%d, %d)"
                         % (RO_HG, RO_HG + 1))
    ok(sorted(p for h, p in rows if h == str(RO_HG)) == sorted(str(n.port) for n in nodes)
       and not [p for h, p in rows if h == str(RO_HG + 1)],
       "nodes stay in the reader hostgroup of mysql_replication_hostgroups", repr(rows))


def route_by_digest(px, nodes):
    """Operator steps 1-4 of docs/proxysql.md: the digest, hostgroup 30, rule 50, the three checks."""
    run_queries(px, 3)
    rows = wait_for(lambda: px.admin_rows("SELECT digest, hostgroup FROM stats_mysql_query_digest WHERE "
                                          "digest_text = '%s'" % DIGEST_TEXT), 10)
    ok(rows and rows[0][1] == "10", "the query shape shows in stats_mysql_query_digest (hostgroup 10 before the rule)",
       repr(rows))
    digest = rows[0][0] if rows else "0x0"
    px.admin_rows(*["INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, max_connections, comment) "
                    "VALUES (%d, '127.0.0.1', %d, 1000, 500, '%s')" % (HG, n.port, n.name) for n in nodes],
                  "INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, max_connections, comment) "
                  "VALUES (%d, '127.0.0.1', %d, 1, 500, 'mysql-replica-fallback')" % (HG, MDB),
                  "INSERT INTO mysql_query_rules (rule_id, active, digest, destination_hostgroup, apply) "
                  "VALUES (50, 1, '%s', %d, 1)" % (digest, HG),
                  "LOAD MYSQL SERVERS TO RUNTIME", "LOAD MYSQL QUERY RULES TO RUNTIME",
                  "SAVE MYSQL SERVERS TO DISK", "SAVE MYSQL QUERY RULES TO DISK")
    good, bad, last = run_queries(px, 600)
    is_((good, bad), (600, 0), "600 reads of the shape through ProxySQL, rule 50 active: all answered")
    rows = px.admin_rows("SELECT hostgroup, count_star FROM stats_mysql_query_digest WHERE digest = '%s' "
                         "ORDER BY hostgroup" % digest)
    ok(dict(rows).get(str(HG)) == "600", "check 1: stats_mysql_query_digest counts 600 in hostgroup 30", repr(rows))
    hits = wait_for(lambda: [r for r in px.admin_rows(
        "SELECT s.rule_id, s.hits, r.destination_hostgroup FROM stats_mysql_query_rules s "
        "JOIN runtime_mysql_query_rules r USING(rule_id) ORDER BY s.rule_id") if r[1] == "600"], 10, 0.5)
    ok(hits and hits[0][0] == "50" and hits[0][2] == str(HG),
       "  the docs' join of stats_mysql_query_rules and runtime_mysql_query_rules: rule 50, 600 hits, hostgroup 30",
       repr(hits))
    qid = "q_" + digest[2:].lower()
    per_node = [n.metric("shoal_cache_hits_total", 'query_id="%s"' % qid) or 0 for n in nodes]
    ok(all(h > 50 for h in per_node), "check 2: both nodes' hit counters for %s move (%r)" % (qid, per_node))
    misses = [n.metric("shoal_cache_misses_total", 'query_id="%s"' % qid) or 0 for n in nodes]
    ok(sum(misses) <= 2 * KEYS, "  misses stay at most one per key and node (%r)" % misses)
    fb = pool(px, MDB)[1]
    ok(fb <= 10, "weights 1000/1000/1: the fallback served %d of 600 (about 1 in 2001 expected)" % fb)
    diag("digest %s, node hits %r, fallback queries %d" % (digest, per_node, fb))
    return digest


def retries(px, nodes):
    """mysql-query_retries_on_failure: a pooled connection that breaks before
    any answer (break_relay.py resets it on its next command) is retried on a
    new one, and the client never knows; with 0 retries it gets the error.
    And a node's idle timeout (ERR 4031, then close) reaches the client."""
    n3 = nodes[2]
    port_file, flag, log = (os.path.join(WORK, f) for f in ("relay.port", "relay.flag", "relay.log"))
    for f in (port_file, flag):
        if os.path.exists(f):
            os.unlink(f)
    relay = subprocess.Popen([os.environ.get("PY", "/usr/bin/python3"), os.path.join(os.environ["TESTLIB"],
                              "break_relay.py"), port_file, str(n3.port), flag, log])
    try:
        wait_for(lambda: os.path.exists(port_file), 10)
        with open(port_file) as f:
            rport = int(f.read())
        px.admin_rows("INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment) "
                      "VALUES (50, '127.0.0.1', %d, 1, 'n3 through break_relay')" % rport,
                      "INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment) "
                      "VALUES (51, '127.0.0.1', %d, 1, 'n3')" % n3.port,
                      "INSERT INTO mysql_query_rules (rule_id, active, match_digest, destination_hostgroup, apply) "
                      "VALUES (45, 1, '^SELECT \\? AS relay94', 50, 1), "
                      "(46, 1, '^SELECT \\? AS idle94', 51, 1)",
                      "LOAD MYSQL SERVERS TO RUNTIME", "LOAD MYSQL QUERY RULES TO RUNTIME")
        results = []
        for retries_ in (1, 0):
            px.admin_rows("SET mysql-query_retries_on_failure = %d" % retries_, "LOAD MYSQL VARIABLES TO RUNTIME")
            c = px.client()
            errors = 0
            for i in range(3):
                with c.cursor() as cur:  # a pooled connection exists and is older than 0.5 s
                    cur.execute("SELECT %d AS relay94" % (i + 1))
                time.sleep(0.7)
                open(flag, "w").close()
                try:
                    with c.cursor() as cur:
                        cur.execute("SELECT %d AS relay94" % (i + 10))
                        cur.fetchall()
                except pymysql.err.MySQLError as e:
                    errors += 1
                    diag("retries=%d: %r" % (retries_, e))
                    c = px.client()
            c.close()
            results.append(errors)
        px.admin_rows("SET mysql-query_retries_on_failure = 1", "LOAD MYSQL VARIABLES TO RUNTIME")
        with open(log) as f:
            broken = f.read().count("broken")
        ok(results[0] == 0 and broken >= 3, "query_retries_on_failure=1: a pooled connection broken before any "
           "answer is retried on a new one, the client sees no error (%d broken)" % broken, repr(results))
        ok(results[1] >= 1, "  with query_retries_on_failure=0 the client gets the error (%d of 3)" % results[1])
        c = px.client()
        with c.cursor() as cur:
            cur.execute("SELECT 1 AS idle94")
        time.sleep(1.6)
        try:
            with c.cursor() as cur:
                cur.execute("SELECT 2 AS idle94")
            got = "answered"
        except pymysql.err.MySQLError as e:
            got = repr(e)
        ok("4031" in got, "a node's client_idle_timeout_ms (here 1 s) closing ProxySQL's idle connection: "
           "ProxySQL passes its ERR 4031 to the client, no retry (%s)" % got)
    finally:
        relay.kill()
        relay.wait()


def offline_soft(px, nodes):
    n1, n2 = nodes[0], nodes[1]
    # ProxySQL's sessions on the node are the app user's (its monitor's
    # checks, which come and go, log in as monitor)
    sessions = n1.sessions_of("app")
    free = pool(px, n1)[2]
    px.admin_rows("UPDATE mysql_servers SET status='OFFLINE_SOFT' WHERE hostgroup_id=%d AND port=%d" % (HG, n1.port),
                  "LOAD MYSQL SERVERS TO RUNTIME")
    q1, q2 = pool(px, n1)[1], pool(px, n2)[1]
    good, bad, _ = run_queries(px, 200)
    a1, a2 = pool(px, n1)[1], pool(px, n2)[1]
    ok(good == 200 and a1 == q1 and a2 - q2 >= 190,
       "OFFLINE_SOFT: no new work for that node, the other takes it (%d -> %d, %d -> %d), no error"
       % (q1, a1, q2, a2))
    st = pool(px, n1)
    ok(st[0] == "OFFLINE_SOFT" and st[2] == 0,
       "  reading stats_mysql_connection_pool drops its idle connections at once (%r)" % (st,))
    left = wait_for(lambda: n1.sessions_of("app") <= sessions - free, 5, 0.1)
    ok(free > 0 and left, "  ... which closes those %d sessions of the node from ProxySQL's side (%d -> %r)"
       % (free, sessions, n1.sessions_of("app")))
    px.admin_rows("UPDATE mysql_servers SET status='ONLINE' WHERE hostgroup_id=%d AND port=%d" % (HG, n1.port),
                  "LOAD MYSQL SERVERS TO RUNTIME")
    good, bad, _ = run_queries(px, 200)
    ok(good == 200 and pool(px, n1)[1] > a1, "  ONLINE again: it gets work again, no error")


def shun_and_back(px, nodes):
    """SIGKILL one node under load: SHUNNED, the other serves; restarted: back."""
    n2 = nodes[1]
    load = Load(lambda: px.client(), kv_query, kv_check, threads=4).start()
    time.sleep(1)
    n2.stop(sig=9)
    killed = time.time()
    shunned = wait_for(lambda: pool(px, n2)[0] == "SHUNNED", 20, 0.2)
    ok(shunned, "SIGKILL a node under load: ProxySQL marks it SHUNNED (after %.1f s)" % (time.time() - killed))
    e0 = load.snapshot()
    time.sleep(2)
    e1 = load.snapshot()
    ok(e1[1] == e0[1] and e1[0] > e0[0], "  once SHUNNED the other node serves with no error (%d answers)"
       % (e1[0] - e0[0]))
    diag("client errors at the kill (queries in flight): %d: %r" % (e0[1], [e[1] for e in load.errors[:3]]))
    n2.start()
    back = wait_for(lambda: pool(px, n2)[0] == "ONLINE" and pool(px, n2)[1] > 0, 30, 0.2)
    q = pool(px, n2)[1]
    time.sleep(1)
    ok(back and pool(px, n2)[1] > q, "  restarted: ONLINE again after shun_recovery_time_sec, and it gets work "
       "(%.1f s after the kill)" % (time.time() - killed))
    load.stop()
    is_(load.snapshot()[1] - e1[1], 0, "  no client error while it came back")


def fallback(px, nodes):
    """Both nodes stopped under load, each with proxysql_admin (the node takes
    itself out before closing anything): no error, the fallback serves."""
    for n in nodes[:2]:
        n.stop()
        n.extra += ["--proxysql-admin", "mysql://admin:admin@127.0.0.1:%d" % px.admin_port]
        n.start()
    wait_for(lambda: all(pool(px, n)[0] == "ONLINE" for n in nodes[:2]), 10)
    q = pool(px, MDB)[1]
    load = Load(lambda: px.client(), kv_query, kv_check, threads=4).start()
    time.sleep(1)
    for n in nodes[:2]:
        is_(n.stop(), 0, "%s: SIGTERM under load (proxysql_admin set), exit 0" % n.name)
    a0 = load.snapshot()[0]
    time.sleep(1.5)
    load.stop()
    answers, errors = load.snapshot()
    ok(errors == 0 and answers - a0 > 100, "both nodes stopped under load: 0 client errors, %d answers after "
       "the second stop" % (answers - a0), repr([e[1] for e in load.errors[:3]]))
    ok(pool(px, MDB)[1] - q >= answers - a0, "  ... answered by the weight-1 fallback (%d queries)"
       % (pool(px, MDB)[1] - q))
    rows = px.admin_rows("SELECT status FROM runtime_mysql_servers WHERE hostgroup_id = %d AND port IN (%d, %d)"
                         % (HG, nodes[0].port, nodes[1].port))
    is_(rows, (("OFFLINE_SOFT",), ("OFFLINE_SOFT",)), "  the nodes set themselves OFFLINE_SOFT")


def late_proxysql():
    """A node that starts before its ProxySQL (a host's reboot, compose's
    start order) puts its row ONLINE once ProxySQL answers."""
    n = Node("94-proxysql.n4", WORK, URL, [])
    px3 = ProxySQL("px3", WORK, servers=[{"hostgroup_id": HG, "hostname": "127.0.0.1", "port": n.port,
                                          "status": "OFFLINE_SOFT", "comment": "left out by a drain"}])
    n.extra += ["--proxysql-admin", "mysql://admin:admin@127.0.0.1:%d" % px3.admin_port]
    try:
        n.start()
        time.sleep(2.5)
        px3.start()
        t0 = time.time()
        st = wait_for(lambda: px3.admin_rows("SELECT status FROM runtime_mysql_servers WHERE port = %d"
                                             % n.port) == (("ONLINE",),), 20, 0.2)
        ok(st, "a node started before its ProxySQL sets its OFFLINE_SOFT row ONLINE once ProxySQL answers "
           "(%.1f s after)" % (time.time() - t0))
    finally:
        n.stop()
        px3.stop()


def cluster(px1, px2):
    t0 = time.time()
    px1.admin_rows("INSERT INTO mysql_query_rules (rule_id, active, match_digest, destination_hostgroup, apply, "
                   "comment) VALUES (60, 1, '^SELECT cluster94', 20, 1, 'cluster test')",
                   "LOAD MYSQL QUERY RULES TO RUNTIME")
    got = wait_for(lambda: px2.admin_rows("SELECT rule_id FROM runtime_mysql_query_rules WHERE rule_id = 60"), 20, 0.05)
    took = time.time() - t0
    ok(got, "cluster: a rule loaded on proxy 1 only reaches proxy 2's runtime (%.2f s)" % took)
    disk = px2.admin_rows("SELECT rule_id FROM disk.mysql_query_rules WHERE rule_id = 60")
    ok(disk, "  and its disk (cluster_mysql_query_rules_save_to_disk)")
    px1.admin_rows("UPDATE mysql_servers SET weight=2 WHERE hostgroup_id=%d AND port=%d" % (HG, MDB),
                   "LOAD MYSQL SERVERS TO RUNTIME")
    got = wait_for(lambda: px2.admin_rows("SELECT weight FROM runtime_mysql_servers WHERE hostgroup_id=%d AND "
                                          "port=%d" % (HG, MDB)) == (("2",),), 20, 0.05)
    ok(got, "  a mysql_servers change too")
    px1.admin_rows("UPDATE mysql_servers SET weight=1 WHERE hostgroup_id=%d AND port=%d" % (HG, MDB),
                   "DELETE FROM mysql_query_rules WHERE rule_id = 60",
                   "LOAD MYSQL SERVERS TO RUNTIME", "LOAD MYSQL QUERY RULES TO RUNTIME")
    return took


def agent(px, nodes, digest):
    """shoal-ha against the real admin, hostgroup 60."""
    dsn = "mysql://admin:admin@127.0.0.1:%d" % px.admin_port
    node_list = ",".join("127.0.0.1:%d:%d:%d" % (n.port, n.http_port, n.admin_port) for n in nodes[:2])
    base = [AGENT, "--proxysql-admin", dsn, "--hostgroup", "60", "--nodes", node_list,
            "--fallback", "127.0.0.1:%d" % MDB]

    def sh(*args):
        p = subprocess.run(base + list(args), capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout, p.stderr

    rc, out, err = sh("register")
    rows = px.admin_rows("SELECT port, weight, status FROM runtime_mysql_servers WHERE hostgroup_id = 60 ORDER BY port")
    want = sorted([(str(n.port), "1000", "ONLINE") for n in nodes[:2]] + [(str(MDB), "1", "ONLINE")])
    ok(rc == 0 and sorted(rows) == want, "shoal-ha register: nodes and fallback in runtime hostgroup 60", out + err)
    ok(len(px.admin_rows("SELECT 1 FROM disk.mysql_servers WHERE hostgroup_id = 60")) == 3, "  and on disk")
    rc, out, err = sh("register")
    ok(rc == 0 and "nothing to change" in out, "  a second register changes nothing", out + err)
    rc, out, err = sh("route", digest, "--rule-id-base", "10")
    rules = px.admin_rows("SELECT rule_id, digest, destination_hostgroup, apply FROM runtime_mysql_query_rules "
                          "WHERE rule_id = 10")
    ok(rc == 0 and rules == (("10", digest, "60", "1"),), "shoal-ha route: rule 10 for %s in the runtime" % digest,
       out + err + repr(rules))
    good, bad, _ = run_queries(px, 100)
    rows = px.admin_rows("SELECT count_star FROM stats_mysql_query_digest WHERE hostgroup = 60 AND digest = '%s'"
                         % digest)
    ok(good == 100 and rows and int(rows[0][0]) == 100, "  ProxySQL now sends the shape to hostgroup 60", repr(rows))
    rc, out, err = sh("advise")
    ok(rc == 0 and re.search(r"%s\s.*routed\s+cacheable" % digest, out), "shoal-ha advise: the digest is "
       "ranked from the real stats_mysql_query_digest, routed, cacheable by the nodes", out + err)
    state = os.path.join(WORK, "watch.json")
    rc, out, err = sh("watch", "--once", "--state-file", state, "--flat-window-ms", "0")
    ok(rc == 0, "shoal-ha watch --once: both nodes serving, exit 0", out + err)
    nodes[0].stop()
    rc, out, err = sh("watch", "--once", "--state-file", state, "--flat-window-ms", "0")
    st = px.admin_rows("SELECT status FROM runtime_mysql_servers WHERE hostgroup_id = 60 AND port = %d"
                       % nodes[0].port)
    ok(rc == 4 and st == (("OFFLINE_SOFT",),), "  a stopped node: OFFLINE_SOFT in the runtime, exit 4", out + err)
    nodes[0].start()
    wait_for(lambda: nodes[0].metric("shoal_up"), 10)
    rc, out, err = sh("watch", "--once", "--state-file", state, "--flat-window-ms", "0")
    st = px.admin_rows("SELECT status FROM runtime_mysql_servers WHERE hostgroup_id = 60 AND port = %d"
                       % nodes[0].port)
    ok(rc == 0 and st == (("ONLINE",),), "  restarted: ONLINE again", out + err)
    good, bad, last = run_queries(px, 100)
    is_((good, bad), (100, 0), "  and the reads go on without error (%s)" % (last or "no error"))
    agent_status(sh, nodes, digest, state, node_list)
    rc, out, err = sh("route", "--remove", "--all")
    ok(rc == 0 and not px.admin_rows("SELECT 1 FROM runtime_mysql_query_rules WHERE rule_id = 10"),
       "shoal-ha route --remove --all: the rule is gone", out + err)


def agent_status(sh, nodes, digest, state, node_list):
    """shoal-ha status, text and --html, against the real admin."""
    rc, out, err = sh("status", "--state-file", state)
    diag("shoal-ha status:\n" + out)
    node_lines = [l for l in out.splitlines() if any(("127.0.0.1:%d " % n.port) in l for n in nodes[:2])]
    ok(rc == 0 and len(node_lines) == 2 and all("proxysql ONLINE" in l and "serving" in l for l in node_lines)
       and ("rule 10 %s -> hostgroup 60" % digest) in out and re.search(r"SELECT v FROM kv WHERE id ?= ?\?", out),
       "shoal-ha status: both nodes ONLINE and serving, rule 10 with its digest text", out + err)
    page = os.path.join(WORK, "status.html")
    rc, out, err = sh("status", "--html", page, "--state-file", state)
    html = open(page, encoding="utf-8").read() if os.path.exists(page) else ""
    links = re.findall(r'href="([^"]*)"', html)
    ok(rc == 0 and digest in html and re.search(r"SELECT v FROM kv WHERE id ?= ?\?", html)
       and sorted(links) == sorted("http://127.0.0.1:%d/" % n.http_port for n in nodes[:2]),
       "shoal-ha status --html: the same digest and text, each node linked to its own status page",
       out + err + html[:2000])
    parser = html_parser_errors(html)
    ok(html.startswith("<!DOCTYPE html>") and not parser and "<script" not in html and "src=" not in html,
       "  one self-contained page: well-formed, no script, nothing loaded from elsewhere", repr(parser))
    p = subprocess.run([AGENT, "--proxysql-admin", "mysql://admin:admin@127.0.0.1:1", "status"],
                       capture_output=True, text=True, timeout=60)
    ok(p.returncode == 3, "shoal-ha status without a reachable ProxySQL admin: exit 3", p.stdout + p.stderr)
    rc, out, err = sh("status", "--nodes", node_list + ",127.0.0.1:9:9:9")
    ok(rc == 4 and re.search(r"127\.0\.0\.1:9 .*health unreachable", out) and ("rule 10 %s" % digest) in out,
       "shoal-ha status with a node that does not answer: exit 4, the node shown unreachable, the rest printed",
       out + err)


def html_parser_errors(text):
    """Tags closed out of order or left open (void elements aside)."""
    from html.parser import HTMLParser
    void = {"meta", "br", "hr", "img", "link", "input"}
    stack, errors = [], []

    class P(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag not in void:
                stack.append(tag)

        def handle_endtag(self, tag):
            if not stack or stack[-1] != tag:
                errors.append("</%s> with %s open" % (tag, stack[-1:] or "nothing"))
            else:
                stack.pop()

    P().feed(text)
    return errors + (["left open: %s" % stack] if stack else [])


def main():
    os.makedirs(WORK, exist_ok=True)
    prepare_upstream(MDB)
    nodes = [Node("94-proxysql.n%d" % i, WORK, URL, ["--auto-cache", "--cache-ttl-ms", "600000"]) for i in (1, 2)]
    nodes.append(Node("94-proxysql.n3", WORK, URL, ["--client-idle-timeout-ms", "1000"]))
    servers = [{"hostgroup_id": 10, "hostname": "127.0.0.1", "port": MDB}]
    for n in nodes[:2]:
        servers.append({"hostgroup_id": RO_HG, "hostname": "127.0.0.1", "port": n.port, "max_replication_lag": 30})
    users = [{"username": "app", "password": "pw", "default_hostgroup": 10, "default_schema": "shoaltest"}]
    variables = {"monitor_ping_interval": 1000, "monitor_connect_interval": 1000,
                 "monitor_read_only_interval": 1000, "monitor_replication_lag_interval": 1000,
                 "shun_recovery_time_sec": 2}
    admin_vars = {"cluster_check_interval_ms": 200, "cluster_check_status_frequency": 100,
                  "cluster_mysql_servers_diffs_before_sync": 3, "cluster_mysql_query_rules_diffs_before_sync": 3,
                  "cluster_mysql_query_rules_save_to_disk": True, "cluster_mysql_servers_save_to_disk": True}
    pxs = [ProxySQL("px%d" % i, WORK, servers=servers, users=users, variables=variables,
                    admin_variables=admin_vars) for i in (1, 2)]
    peers = [{"hostname": "127.0.0.1", "port": p.admin_port, "weight": 0, "comment": p.name} for p in pxs]
    for p in pxs:
        p.peers = peers
    try:
        for n in nodes:
            n.start()
        for p in pxs:
            p.start()
        pxs[0].admin_rows("INSERT INTO mysql_replication_hostgroups (writer_hostgroup, reader_hostgroup, comment) "
                          "VALUES (%d, %d, 'read_only check')" % (RO_HG + 1, RO_HG),
                          "LOAD MYSQL SERVERS TO RUNTIME")
        ok(True, "three nodes, two ProxySQL instances in cluster mode (admin ports %d, %d)"
           % (pxs[0].admin_port, pxs[1].admin_port))
        monitor_checks(pxs[0], nodes[:2])
        digest = route_by_digest(pxs[0], nodes[:2])
        took = cluster(pxs[0], pxs[1])
        diag("cluster propagation: %.2f s" % took)
        retries(pxs[0], nodes)
        offline_soft(pxs[0], nodes)
        shun_and_back(pxs[0], nodes)
        agent(pxs[0], nodes, digest)
        fallback(pxs[0], nodes)
        late_proxysql()
    finally:
        for p in pxs:
            p.stop()
        for n in nodes:
            n.stop()
    done_testing(always_zero=True)


if __name__ == "__main__":
    main()
