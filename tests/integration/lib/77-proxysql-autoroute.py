#!/usr/bin/python3
"""77-proxysql-autoroute.py: `shoal-ha watch --auto-route` against the real
ProxySQL ($PROXYSQL_BIN), from no rules, under application traffic (issue
#22).

A MariaDB with its binlog on (BL_PORT, BL_SOCK); two nodes in binlog mode
with auto-cache; one ProxySQL whose user app goes to hostgroup 10 (the
MariaDB); `shoal-ha register` puts the nodes into hostgroup 30. Client
threads through ProxySQL run two costly cacheable aggregates (on tables ra
and rb), SELECT NOW() and point selects, and count every error. Then:
  - --dry-run decides and changes nothing;
  - --max-changes 1: one rule a poll;
  - the daemon warms both aggregates (mirror rule), then routes them;
    SELECT NOW() is never routed; a rule that is not the agent's is left
    alone; shoal-ha status shows the rules' state and the decisions;
  - a node stopped: no rule changes while it is down;
  - rb written every 20 ms straight on the MariaDB: rb's aggregate is
    withdrawn (cooldown), ra's stays routed;
  - 0 client errors throughout;
  - a third aggregate (re) routed, then the nodes' own upstream account
    (they run with shared_upstream_user as shoalnode) loses SELECT on re:
    the nodes answer it with errors, ProxySQL's user still reads it
    directly; it is withdrawn for its errors, and its clients then see
    none;
  - a costly aggregate (rf) that an operator's own rule pins to the
    replica gets no rule of the agent's;
  - `watch --once --auto-route` run a process a poll withdraws ra's
    aggregate once its table is written (the judging is in the state file).
Then two ProxySQL instances in a cluster, one agent beside each, traffic
through both: only the first instance's agent decides (the other follows),
each digest's rule is created once, the two instances have the same rules
and they do not change over 15 s; each instance's scheduler holds its own
agent's heartbeat only; the first instance's agent stopped (its ProxySQL
still up), the other agent takes over once that heartbeat stays (it
withdraws rd's aggregate once its table is written); the first instance
stopped too, the other agent still decides (rc's aggregate withdrawn).
"""
import os
import re
import shutil
import subprocess
import threading
import time

import pymysql

from proxysql_help import Node, ProxySQL, wait_for
from taplib import diag, done_testing, ok

WORK = os.path.join(os.environ["BUILD_TEST"], "proxysql94ar")
BL = int(os.environ["BL_PORT"])
AGENT = os.path.join(os.environ["SRCDIR"], "ha/shoal-ha")
# the nodes act upstream as shoalnode (shared_upstream_user), which may read
# the test's tables one by one, so that one can be taken from the nodes only
URL = "mysql://shoalnode:np@127.0.0.1:%d/shoaltest" % BL
NODE_ARGS = ["--auto-cache", "--invalidation", "binlog", "--shared-upstream-user", "--allowed-users", "app:pw"]
HG = 30
QA = "SELECT g, COUNT(*), SUM(v), MAX(w) FROM ra WHERE g BETWEEN %d AND %d GROUP BY g"
QB = "SELECT g, COUNT(*), SUM(v), MIN(w) FROM rb WHERE g >= %d GROUP BY g ORDER BY g LIMIT 5"


def mdb(*stmts):
    c = pymysql.connect(unix_socket=os.environ["BL_SOCK"], user="root", database="shoaltest", autocommit=True)
    try:
        with c.cursor() as cur:
            for s in stmts:
                cur.execute(s)
            return cur.fetchall()
    finally:
        c.close()


def setup_upstream():
    mdb("CREATE USER IF NOT EXISTS 'monitor'@'%' IDENTIFIED BY 'monitor'",
        "GRANT REPLICATION CLIENT ON *.* TO 'monitor'@'%'")
    mdb("CREATE USER IF NOT EXISTS 'shoalnode'@'%' IDENTIFIED BY 'np'",
        "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'shoalnode'@'%'")
    for t in ("ra", "rb", "rc", "rd", "re", "rf"):
        mdb("DROP TABLE IF EXISTS %s" % t,
            "CREATE TABLE %s (id INT PRIMARY KEY, g INT, v INT, w VARCHAR(20), KEY (g))" % t,
            "INSERT INTO %s SELECT seq, seq %% 40, seq * 7 %% 1000, CONCAT('w', seq %% 97) "
            "FROM seq_1_to_60000" % t,
            "GRANT SELECT ON shoaltest.%s TO 'shoalnode'@'%%'" % t)


class Traffic:
    """Client threads through ProxySQL; every error counted (a connection is
    dropped after an error, but for the errnos of keep_errnos)."""

    keep_errnos = ()

    def __init__(self, px, threads=4, tables=("ra", "rb")):
        self.px, self.stop, self.errors, self.last, self.n = px, False, 0, None, 0
        self.tables = tables
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True) for i in range(threads)]

    def statements(self, i, k):
        a, b = self.tables
        return (QA.replace("ra", a) % (k % 5, k % 5 + 10), QB.replace("rb", b) % (k % 30), "SELECT NOW()",
                "SELECT v FROM %s WHERE id = %d" % (a, k + 1))

    def run(self, i):
        c, k = None, i
        while not self.stop:
            for sql in self.statements(i, k):
                try:
                    if c is None:
                        c = self.px.client()
                    with c.cursor() as cur:
                        cur.execute(sql)
                        cur.fetchall()
                    with self.lock:
                        self.n += 1
                except Exception as e:  # noqa: BLE001 - counted
                    with self.lock:
                        self.errors += 1
                        self.last = repr(e)
                    if not isinstance(e, pymysql.err.OperationalError) or e.args[0] not in self.keep_errnos:
                        c = None
            k += 1

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *a):
        self.stop = True
        for t in self.threads:
            t.join(30)


class Writer:
    """UPDATEs of table every 20 ms, straight on the MariaDB."""

    def __init__(self, table):
        self.table, self.on = table, True
        self.t = threading.Thread(target=self.run, daemon=True)

    def run(self):
        c = pymysql.connect(unix_socket=os.environ["BL_SOCK"], user="root", database="shoaltest", autocommit=True)
        i = 0
        while self.on:
            with c.cursor() as cur:
                cur.execute("UPDATE %s SET v = v + 1 WHERE id = %d" % (self.table, i % 60000 + 1))
            i += 1
            time.sleep(0.02)
        c.close()

    def __enter__(self):
        self.t.start()
        return self

    def __exit__(self, *a):
        self.on = False
        self.t.join(10)


def digest_of(px, text_start):
    rows = px.admin_rows("SELECT digest FROM stats_mysql_query_digest WHERE digest_text LIKE '%s%%'" % text_start)
    return rows[0][0] if rows else None


def rules(px, table="runtime_mysql_query_rules"):
    """{digest: (active, destination, mirror, apply, comment)} of the runtime
    rules (only active ones are loaded), or of mysql_query_rules."""
    return {r[0]: r[1:] for r in px.admin_rows(
        "SELECT digest, active, destination_hostgroup, mirror_hostgroup, apply, comment "
        "FROM %s" % table)}


def configured(px):
    return rules(px, "mysql_query_rules")


def main():
    shutil.rmtree(WORK, ignore_errors=True)   # no state file of an earlier run
    os.makedirs(WORK)
    setup_upstream()
    nodes = [Node("77-proxysql-autoroute.n%d" % i, WORK, URL, NODE_ARGS) for i in (1, 2)]
    servers = [{"hostgroup_id": 10, "hostname": "127.0.0.1", "port": BL}]
    users = [{"username": "app", "password": "pw", "default_hostgroup": 10, "default_schema": "shoaltest"}]
    variables = {"monitor_ping_interval": 1000, "monitor_connect_interval": 1000}
    px = ProxySQL("px", WORK, servers=servers, users=users, variables=variables)
    node_list = ",".join("127.0.0.1:%d:%d:%d" % (n.port, n.http_port, n.admin_port) for n in nodes)
    state = os.path.join(WORK, "watch.json")
    base = [AGENT, "--proxysql-admin", "mysql://admin:admin@127.0.0.1:%d" % px.admin_port, "--hostgroup", str(HG),
            "--nodes", node_list, "--fallback", "127.0.0.1:%d" % BL, "--state-file", state,
            "--flat-window-ms", "0", "--route-min-saving-ms", "300", "--route-min-share-pct", "5", "--warmup-ms", "3000",
            "--withdraw-after", "3", "--min-hit-ratio-pct", "50", "--interval-ms", "1000",
            "--rule-id-base", "100"]
    daemon = None
    try:
        for n in nodes:
            n.start()
        px.start()
        px.admin_rows("INSERT INTO mysql_query_rules (rule_id, active, digest, destination_hostgroup, apply, "
                      "comment) VALUES (500, 1, '0x0000000000000001', 10, 1, 'the operator''s own')",
                      "LOAD MYSQL QUERY RULES TO RUNTIME")
        p = subprocess.run(base + ["register"], capture_output=True, text=True, timeout=60)
        ok(p.returncode == 0, "two nodes in binlog mode, one ProxySQL, shoal-ha register (hostgroup 30)",
           p.stdout + p.stderr)
        with Traffic(px) as traffic:
            da = wait_for(lambda: digest_of(px, "SELECT g,COUNT(*),SUM(v),MAX(w) FROM ra"), 30, 0.5)
            db = wait_for(lambda: digest_of(px, "SELECT g,COUNT(*),SUM(v),MIN(w) FROM rb"), 30, 0.5)
            dn = digest_of(px, "SELECT NOW()")
            time.sleep(3)   # some upstream time for them
            before = px.admin_rows("SELECT COUNT(*) FROM mysql_query_rules")[0][0]
            p = subprocess.run(base + ["watch", "--once", "--auto-route", "--dry-run"], capture_output=True,
                               text=True, timeout=60)
            after = px.admin_rows("SELECT COUNT(*) FROM mysql_query_rules")[0][0]
            ok(before == after == "1" and "dry run: would warm (mirror) digest %s" % da in p.stderr
               and "dry run: would warm (mirror) digest %s" % db in p.stderr,
               "--dry-run: both aggregates would be warmed, nothing changed in ProxySQL (%s rule)" % after,
               p.stdout + p.stderr)
            p = subprocess.run(base + ["watch", "--once", "--auto-route", "--max-changes", "1"],
                               capture_output=True, text=True, timeout=60)
            r = rules(px)
            ok(len(r) == 2 and (da in r or db in r) and re.search(r"auto warming since=\d+",
                                                                 (r.get(da) or r.get(db))[4]),
               "--max-changes 1: one rule added in the poll, a warming one (mirror_hostgroup %s)"
               % (r.get(da) or r.get(db) or ("?",) * 5)[2], repr(r) + p.stderr)
            daemon = subprocess.Popen(base + ["watch", "--auto-route"], stdout=subprocess.PIPE,
                                      stderr=open(os.path.join(WORK, "daemon.err"), "w"), text=True)
            t0 = time.time()
            routed = wait_for(lambda: all(d in rules(px) and rules(px)[d][1] == str(HG) for d in (da, db)), 60, 0.5)
            ok(routed, "the daemon routes both aggregates to hostgroup 30 within 60 s (%.1f s)" % (time.time() - t0),
               repr(rules(px)))
            log = open(os.path.join(WORK, "daemon.err")).read()
            ok(re.search(r"digest_warming: digest %s" % db, log) or re.search(r"digest_warming: digest %s" % da, log),
               "  each was warmed through a mirror rule first (the log)", log[-2000:])
            r = rules(px)
            ok(dn not in r and "the operator's own" in [v[4] for v in r.values()] and len(r) == 3,
               "  SELECT NOW() (and the cheap point select) not routed; the operator's rule is still there",
               repr(r))
            hits0 = sum(n.metric("shoal_cache_hits_total") or 0 for n in nodes)
            time.sleep(3)
            hits1 = sum(n.metric("shoal_cache_hits_total") or 0 for n in nodes)
            ok(hits1 > hits0, "  the nodes now answer them (hits %d -> %d)" % (hits0, hits1))
            p = subprocess.run(base + ["status"], capture_output=True, text=True, timeout=60)
            diag("shoal-ha status:\n" + p.stdout)
            ok(re.search(r"auto-route: routed for \d+ s: warmed for 3 s; expected saving", p.stdout)
               and "auto-route's recent decisions" in p.stdout and "route %s" % da in p.stdout,
               "shoal-ha status: the routed digests with their age and reason, and the decisions", p.stdout)
            # a node down: nothing changes
            nodes[1].stop()
            time.sleep(1.5)
            snap = rules(px)
            time.sleep(3)
            same = rules(px) == snap
            nodes[1].start()
            log = open(os.path.join(WORK, "daemon.err")).read()
            ok(same and "auto-route: no change: a node is unreachable or not serving" in log,
               "a node down: no rule changes, and the log says why", log[-1500:])
            # rb written every 20 ms: its aggregate stops paying
            t0 = time.time()
            with Writer("rb"):
                gone = wait_for(lambda: configured(px).get(db, ("1",))[0] == "0", 90, 0.5)
            r = configured(px)
            ok(gone and db not in rules(px) and re.search(r"auto withdrawn until=\d+: hit ratio", r[db][4]),
               "rb written every 20 ms: its aggregate withdrawn within 90 s (%.1f s), cooling down" % (time.time() - t0),
               repr(r.get(db)))
            ok(r.get(da, ("0", ""))[0] == "1" and r[da][1] == str(HG) and "auto routed" in r[da][4],
               "  the ra aggregate stays routed", repr(r.get(da)))
            time.sleep(3)
            ok(configured(px).get(db, ("1",))[0] == "0" and db not in rules(px),
               "  and rb's is not routed again during its cooldown", repr(configured(px).get(db)))
        ok(traffic.errors == 0 and traffic.n > 1000, "clients: %d statements, %d errors (%s)" %
           (traffic.n, traffic.errors, traffic.last or "none"))
        errors_on_nodes(px, nodes)
        operators_rule(px)
        daemon.terminate()
        daemon.wait(20)
        daemon = None
        once_runs(px, base)
        px.stop()
        two_agents(nodes, node_list)
    finally:
        if daemon:
            daemon.terminate()
            daemon.wait(20)
        if px.proc:
            px.stop()
        for n in nodes:
            n.stop()
    done_testing(always_zero=True)


class Reader(Traffic):
    """Threads reading table's aggregate through ProxySQL; errors counted
    (the connection kept after a 1142, a denied SELECT)."""

    keep_errnos = (1142,)

    def __init__(self, px, table, threads=2):
        super().__init__(px, threads, (table, table))

    def statements(self, i, k):
        return (QA.replace("ra", self.tables[0]) % (k % 5, k % 5 + 10),)


def errors_on_nodes(px, nodes):
    """A routed digest the nodes answer with errors, though it reads fine
    directly: the nodes' upstream account loses SELECT on its table."""
    with Reader(px, "re") as rd:
        de = wait_for(lambda: digest_of(px, "SELECT g,COUNT(*),SUM(v),MAX(w) FROM re"), 30, 0.5)
        routed = wait_for(lambda: rules(px).get(de, ("", ""))[1] == str(HG), 90, 0.5)
        ok(routed and rd.errors == 0, "a third aggregate (table re) routed by the daemon (%d errors)" % rd.errors,
           repr(rules(px)))
        mdb("REVOKE SELECT ON shoaltest.re FROM 'shoalnode'@'%'")
        t0 = time.time()
        gone = wait_for(lambda: configured(px).get(de, ("1",))[0] == "0", 60, 0.3)
        took = time.time() - t0
        r = configured(px).get(de, ("", "", "", "", ""))
        ok(gone and re.search(r"auto withdrawn until=\d+: errors on the nodes: \d+ of \d+ commands", r[4]),
           "the nodes' account loses SELECT on re: its aggregate errors on the nodes (%d errors), withdrawn in "
           "%.1f s" % (rd.errors, took), repr(r) + repr(rd.last))
        e0, n0 = rd.errors, rd.n
        time.sleep(3)
        ok(rd.errors == e0 and rd.n > n0 + 5, "  then its clients read it directly: %d statements, %d errors"
           % (rd.n - n0, rd.errors - e0), repr(rd.last))
    a = pymysql.connect(host="127.0.0.1", port=nodes[0].admin_port, user="admin", password="admin")
    with a.cursor() as cur:
        cur.execute("SELECT count_star, errors, node_errors FROM stats.stats_shoal_query_digest "
                    "WHERE digest = '%s'" % de)
        diag("node 1's count_star, errors, node_errors of it: %r" % (cur.fetchall(),))
    a.close()
    mdb("GRANT SELECT ON shoaltest.re TO 'shoalnode'@'%'")


def operators_rule(px):
    """A digest an operator's own active rule names (here: pinned to the
    replica) gets no rule of the agent's, however costly it is."""
    c = px.client()
    with c.cursor() as cur:
        cur.execute(QA.replace("ra", "rf") % (0, 10))
    c.close()
    df = wait_for(lambda: digest_of(px, "SELECT g,COUNT(*),SUM(v),MAX(w) FROM rf"), 30, 0.5)
    px.admin_rows("INSERT INTO mysql_query_rules (rule_id, active, digest, destination_hostgroup, apply, comment) "
                  "VALUES (501, 1, '%s', 10, 1, 'the operator pins it to the replica')" % df,
                  "LOAD MYSQL QUERY RULES TO RUNTIME")
    with Reader(px, "rf"):
        time.sleep(12)   # its time passes the thresholds; then 4 more polls of 1 s
        time.sleep(4)
    t = px.admin_rows("SELECT SUM(CASE WHEN digest = '%s' THEN sum_time ELSE 0 END), SUM(sum_time) "
                      "FROM stats_mysql_query_digest" % df)[0]
    share = 100.0 * int(t[0]) / max(1, int(t[1]))
    mine = px.admin_rows("SELECT rule_id, comment FROM mysql_query_rules WHERE digest = '%s' AND "
                         "comment LIKE 'shoal-ha%%'" % df)
    ok(not mine and int(t[0]) > 300000 and share > 10,
       "a digest an operator's active rule names (pinned to the replica): no rule of the agent's, though it "
       "passes the thresholds (%.1f s, %.0f%% of the upstream time)" % (int(t[0]) / 1e6, share), repr(mine))
    px.admin_rows("DELETE FROM mysql_query_rules WHERE rule_id = 501", "LOAD MYSQL QUERY RULES TO RUNTIME")


def once_runs(px, base):
    """`watch --once --auto-route`, a process a poll (ProxySQL's scheduler
    way): the judging carries over in the state file, so ra's aggregate,
    its table now written every 20 ms, is withdrawn by such runs too."""
    da = digest_of(px, "SELECT g,COUNT(*),SUM(v),MAX(w) FROM ra")
    runs, gone = 0, False
    with Traffic(px, 2, ("ra", "ra")), Writer("ra"):
        t0 = time.time()
        while not gone and time.time() - t0 < 60:
            subprocess.run(base + ["watch", "--once", "--auto-route"], capture_output=True, timeout=60)
            runs += 1
            gone = configured(px).get(da, ("1",))[0] == "0"
            time.sleep(1)
    r = configured(px).get(da, ("", "", "", "", ""))
    ok(gone and re.search(r"auto withdrawn until=\d+: hit ratio", r[4]),
       "watch --once, a process a poll: ra's aggregate, its table now written every 20 ms, withdrawn by "
       "run %d (the judging is kept in the state file)" % runs, repr(r))


def agent_log(i):
    return open(os.path.join(WORK, "agent%d.err" % i)).read()


def agreed_rules(pxs, timeout=20):
    """Each instance's runtime rules, read once both instances show the same
    ones (at most timeout seconds): a rule the deciding agent has just made
    on one instance reaches the other with the cluster's next sync, and a
    reading between the two is no disagreement. After the timeout, the last
    readings, which the caller's check then finds apart."""
    q = "SELECT rule_id, digest, destination_hostgroup, comment FROM runtime_mysql_query_rules"
    deadline = time.time() + timeout
    while True:
        rs = [sorted(p.admin_rows(q)) for p in pxs]
        if rs[0] == rs[1] or time.time() >= deadline:
            return rs
        time.sleep(0.3)


def kept_or_progressed(before, after):
    """Every rule of before is in after unchanged, or (a digest being warmed
    then) is the same rule for the same digest, now routed: warming ->
    routed is the agent's progress, not flapping."""
    later = {(r[0], r[1]): r for r in after}
    for r in before:
        a = later.get((r[0], r[1]))
        if a == r:
            continue
        if a is None or " auto warming " not in " %s " % r[3] or " auto routed " not in " %s " % a[3]:
            return False
    return True


def two_agents(nodes, node_list):
    """Two ProxySQL instances in a cluster, an agent beside each."""
    servers = [{"hostgroup_id": 10, "hostname": "127.0.0.1", "port": BL}]
    users = [{"username": "app", "password": "pw", "default_hostgroup": 10, "default_schema": "shoaltest"}]
    admin_vars = {"cluster_check_interval_ms": 200, "cluster_check_status_frequency": 100,
                  "cluster_mysql_servers_diffs_before_sync": 3, "cluster_mysql_query_rules_diffs_before_sync": 3,
                  "cluster_mysql_query_rules_save_to_disk": True, "cluster_mysql_servers_save_to_disk": True}
    pxs = [ProxySQL("cpx%d" % i, WORK, servers=servers, users=users, admin_variables=admin_vars,
                    variables={"monitor_ping_interval": 1000, "monitor_connect_interval": 1000}) for i in (1, 2)]
    peers = [{"hostname": "127.0.0.1", "port": p.admin_port, "weight": 0, "comment": p.name} for p in pxs]
    for p in pxs:
        p.peers = peers
    first = min(pxs, key=lambda p: p.admin_port)
    second = pxs[1] if first is pxs[0] else pxs[0]
    agents = []
    try:
        for p in pxs:
            p.start()
        hg = "31"
        common = ["--hostgroup", hg, "--nodes", node_list, "--fallback", "127.0.0.1:%d" % BL,
                  "--flat-window-ms", "0", "--route-min-saving-ms", "300", "--route-min-share-pct", "5",
                  "--warmup-ms", "2000", "--withdraw-after", "3", "--interval-ms", "1000", "--rule-id-base", "200",
                  "--leader-timeout-ms", "3000"]
        dsn = lambda p: "mysql://admin:admin@127.0.0.1:%d" % p.admin_port  # noqa: E731
        subprocess.run([AGENT, "--proxysql-admin", dsn(first)] + common + ["register"], capture_output=True,
                       timeout=60)
        ok(wait_for(lambda: len(second.admin_rows("SELECT 1 FROM runtime_mysql_servers WHERE hostgroup_id = %s"
                                                  % hg)) == 3, 20, 0.3),
           "two ProxySQL instances in a cluster: register on one, the hostgroup on both")
        for i, p in enumerate(pxs):
            agents.append(subprocess.Popen([AGENT, "--proxysql-admin", dsn(p), "--state-file",
                                            os.path.join(WORK, "agent%d.json" % i), "watch", "--auto-route"]
                                           + common, stdout=subprocess.DEVNULL,
                                           stderr=open(os.path.join(WORK, "agent%d.err" % i), "w")))
        tf, ts = Traffic(first, 2, ("rc", "rd")), Traffic(second, 2, ("rc", "rd"))
        with tf, ts:
            dc = wait_for(lambda: digest_of(first, "SELECT g,COUNT(*),SUM(v),MAX(w) FROM rc"), 30, 0.5)
            dd = wait_for(lambda: digest_of(first, "SELECT g,COUNT(*),SUM(v),MIN(w) FROM rd"), 30, 0.5)
            both = lambda: all(d in rules(p) and rules(p)[d][1] == hg for p in pxs for d in (dc, dd))  # noqa: E731
            t0 = time.time()
            ok(wait_for(both, 60, 0.5), "two agents: both aggregates routed on both instances within 60 s (%.1f s)"
               % (time.time() - t0), repr([rules(p) for p in pxs]))
            snap = agreed_rules(pxs)
            time.sleep(15)
            now = agreed_rules(pxs)
            # (a digest may still be warmed or routed meanwhile, a rule the
            # cluster copies to the other instance within a few of its
            # checks; none may change or go)
            ok(now[0] == now[1] and kept_or_progressed(snap[0], now[0]) and snap[0] == snap[1],
               "  the same rules on both instances; none changed or removed over 15 s (no flapping)",
               repr(snap) + repr(now))
            ia, ib = pxs.index(first), pxs.index(second)
            la, lb = agent_log(ia), agent_log(ib)
            made = [len(re.findall(r"digest_(?:warming|routed): digest %s: (?:warm \(mirror\)|route): expected" % d, la + lb))
                    for d in (dc, dd)]
            ok(made == [1, 1] and "ALERT: digest_" not in lb and
               "following the agent of ProxySQL 127.0.0.1:%d" % first.admin_port in lb,
               "  each rule created once, by the first instance's agent; the other follows", "%r\n%s\n%s"
               % (made, la[-1500:], lb[-1500:]))
            beats = [[c for (c,) in p.admin_rows("SELECT comment FROM scheduler")] for p in pxs]
            ok(all(len(b) == 1 and re.match(r"shoal-ha agent heartbeat seq=\d+$", b[0]) for b in beats),
               "  each instance's scheduler holds one heartbeat row, its own agent's (not synced)", repr(beats))
            # the first instance's agent stops; its ProxySQL still serves
            agents[ia].terminate()
            agents[ia].wait(20)
            with Writer("rd"):
                t0 = time.time()
                gone = wait_for(lambda: rules(second, "mysql_query_rules").get(dd, ("1",))[0] == "0", 60, 0.5)
            ok(gone and "digest_withdrawn: digest %s" % dd in agent_log(ib),
               "  the first instance's agent stopped, its ProxySQL still up: the other agent takes over once the "
               "heartbeat stays (leader_timeout_ms 3 s) and withdraws rd's aggregate (%.1f s)" % (time.time() - t0),
               agent_log(ib)[-1500:])
            tf.stop = True   # its clients leave the first instance, which then stops
        first.stop()
        with Traffic(second, 2, ("rc", "rd")) as t2, Writer("rc"):
            t0 = time.time()
            gone = wait_for(lambda: rules(second, "mysql_query_rules").get(dc, ("1",))[0] == "0", 60, 0.5)
        ok(gone and "digest_withdrawn: digest %s" % dc in agent_log(ib),
           "  the first instance stopped too: the other agent decides (rc's aggregate withdrawn in %.1f s)"
           % (time.time() - t0), agent_log(ib)[-1500:])
        ok(tf.errors == ts.errors == t2.errors == 0, "  clients of both instances: %d errors (%s)"
           % (tf.errors + ts.errors + t2.errors, tf.last or ts.last or t2.last or "none"))
    finally:
        for a in agents:
            a.terminate()
            a.wait(20)
        for p in pxs:
            if p.proc:
                p.stop()


if __name__ == "__main__":
    main()
