#!/usr/bin/python3
"""tests/bench/autoroute.py: section 13 of scripts/bench (issue #22): what
`shoal-ha watch --auto-route` saves the replica, against an operator who
routes only the top digest, how soon it serves the first hit with its
default settings, and whether two agents (one beside each ProxySQL of a
cluster) keep the rules steady for five minutes.

Set-up: the bench's MariaDB with its binlog on (BL_PORT, BL_SOCK; sakila
loaded); two nodes (binlog mode, auto-cache) acting upstream as the
clients' user; two ProxySQL instances ($PROXYSQL_BIN) in a cluster whose
user app goes to hostgroup 10 (the MariaDB); `shoal-ha register` puts the
nodes into hostgroup 30. The application is an open-loop schedule (each
kind of statement at a fixed rate, half through each ProxySQL):
  leaderboard  seed 004's report query (tests/data/leaderboard.sql)    2/s
  categories   revenue per film category since a month (4 months)     2/s
  hot          an aggregate of arbench.hot, a table written every 20 ms
               straight on the MariaDB (its cache never stays valid)  4/s
  now          SELECT NOW()                                          20/s
  point        a film by id (cheap)                                  50/s
The replica's time is MariaDB's own account of the application's
statements: information_schema.USER_STATISTICS (userstat) BUSY_TIME and
CPU_TIME of the user app, whether they came straight from ProxySQL or from
a node's miss (the nodes' own work, the binlog stream and the catalog,
logs in as shoalnode and is not in it).

Phases, each measured over PHASE_S seconds (60; 20 with --quick):
  1. no routing;
  2. the operator's routing: one rule for the digest with the most total
     time in ProxySQL's statistics (what `advise` would put first), after
     10 s for the cache to fill;
  3. one agent, default settings, from no rules and fresh nodes: the time
     from its start to its first warming rule, its first routing rule and
     the first client hit; measured once its rules stay put;
  4. the rules deleted, two agents (one per instance) for SOAK_S seconds
     (300; 60 with --quick): every rule sampled on both instances every 2 s;
     each digest's rules created (from the agents' logs); flaps (a digest
     routed again after a withdrawal); measured over the last PHASE_S.
Writes a markdown block to OUT and prints a summary line per phase.
"""
import os
import re
import subprocess
import sys
import threading
import time

import pymysql

sys.path.insert(0, os.path.join(os.environ["SRCDIR"], "tests", "integration", "lib"))
from proxysql_help import Node, ProxySQL, wait_for  # noqa: E402

SRCDIR = os.environ["SRCDIR"]
WORK = os.environ["WORK"]
BL = int(os.environ["BL_PORT"])
SOCK = os.environ["BL_SOCK"]
AGENT = os.path.join(SRCDIR, "ha/shoal-ha")
QUICK = os.environ.get("BENCH_QUICK", "0") == "1"
PHASE_S = int(os.environ.get("AR_PHASE_S", "20" if QUICK else "60"))
SOAK_S = int(os.environ.get("AR_SOAK_S", "60" if QUICK else "300"))
HG = 30
LEADERBOARD = open(os.path.join(SRCDIR, "tests/data/leaderboard.sql")).read().strip().rstrip(";")
CATEGORIES = ("SELECT cat.name, COUNT(*), SUM(p.amount) FROM payment p JOIN rental r ON r.rental_id = p.rental_id "
              "JOIN inventory i ON i.inventory_id = r.inventory_id JOIN film_category fc ON fc.film_id = i.film_id "
              "JOIN category cat ON cat.category_id = fc.category_id WHERE p.payment_date >= '2005-%02d-01' "
              "GROUP BY cat.name ORDER BY 3 DESC")
HOT = "SELECT g, COUNT(*), SUM(v), MAX(w) FROM arbench.hot WHERE g BETWEEN %d AND %d GROUP BY g"
# (name, statements per second, text of the k-th execution)
KINDS = (("leaderboard", 2, lambda k: LEADERBOARD),
         ("categories", 2, lambda k: CATEGORIES % (5 + k % 4)),
         ("hot", 4, lambda k: HOT % (k % 5, k % 5 + 10)),
         ("now", 20, lambda k: "SELECT NOW()"),
         ("point", 50, lambda k: "SELECT title, length FROM film WHERE film_id = %d" % (1 + k * 37 % 1000)))


def log(msg):
    print("[autoroute %s] %s" % (time.strftime("%T"), msg), file=sys.stderr, flush=True)


def root(*stmts):
    c = pymysql.connect(unix_socket=SOCK, user="root", autocommit=True)
    try:
        with c.cursor() as cur:
            for s in stmts:
                cur.execute(s)
            return cur.fetchall()
    finally:
        c.close()


def setup_upstream():
    root("CREATE USER IF NOT EXISTS 'shoalnode'@'%' IDENTIFIED BY 'np'",
         "GRANT SELECT, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'shoalnode'@'%'",
         "CREATE USER IF NOT EXISTS 'monitor'@'%' IDENTIFIED BY 'monitor'",
         "GRANT REPLICATION CLIENT ON *.* TO 'monitor'@'%'",
         "CREATE DATABASE IF NOT EXISTS arbench",
         "DROP TABLE IF EXISTS arbench.hot",
         "CREATE TABLE arbench.hot (id INT PRIMARY KEY, g INT, v INT, w VARCHAR(20), KEY (g))",
         "INSERT INTO arbench.hot SELECT seq, seq % 40, seq * 7 % 1000, CONCAT('w', seq % 97) "
         "FROM arbench.seq_1_to_40000",
         "SET GLOBAL userstat = ON")


def replica_time():
    """(busy s, cpu s, statements) of the user app, MariaDB's own account."""
    r = root("SELECT BUSY_TIME, CPU_TIME, SELECT_COMMANDS FROM information_schema.USER_STATISTICS "
             "WHERE USER = 'app'")
    return tuple(float(x) for x in r[0]) if r else (0.0, 0.0, 0.0)


class App:
    """The application: one thread per kind and ProxySQL instance, each on its
    schedule (open loop: a late thread skips what it missed, counted)."""

    def __init__(self, proxies):
        self.proxies, self.on = proxies, True
        self.lock = threading.Lock()
        self.n = self.errors = self.skipped = 0
        self.last_error = None
        self.lat = {}          # kind -> [(when, seconds)], the leaderboard's only
        self.threads = [threading.Thread(target=self.run, args=(px, kind, i), daemon=True)
                        for i, px in enumerate(proxies) for kind in KINDS]

    def run(self, px, kind, i):
        name, rate, text = kind
        period = len(self.proxies) / rate
        c, k, due = None, i, time.time() + period * i / len(self.proxies)
        while self.on:
            now = time.time()
            if now < due:
                time.sleep(min(due - now, 0.5))
                continue
            while due + period < now:   # late: skip, do not burst
                due += period
                with self.lock:
                    self.skipped += 1
            due += period
            try:
                if c is None:
                    c = pymysql.connect(host="127.0.0.1", port=px.mysql_port, user="app", password="pw",
                                        database="sakila", autocommit=True, connect_timeout=5, read_timeout=30)
                t = time.time()
                with c.cursor() as cur:
                    cur.execute(text(k))
                    cur.fetchall()
                t = time.time() - t
                with self.lock:
                    self.n += 1
                    if name == "leaderboard":
                        self.lat.setdefault(name, []).append((time.time(), t))
            except Exception as e:  # noqa: BLE001 - counted
                with self.lock:
                    self.errors += 1
                    self.last_error = repr(e)
                c = None
            k += len(self.proxies)

    def start(self):
        for t in self.threads:
            t.start()
        return self

    def stop(self):
        self.on = False
        for t in self.threads:
            t.join(40)


class Writer(threading.Thread):
    """An UPDATE of arbench.hot every 20 ms, straight on the MariaDB."""

    def __init__(self):
        super().__init__(daemon=True)
        self.on = True

    def run(self):
        c = pymysql.connect(unix_socket=SOCK, user="root", database="arbench", autocommit=True)
        i = 0
        while self.on:
            with c.cursor() as cur:
                cur.execute("UPDATE hot SET v = v + 1 WHERE id = %d" % (i % 40000 + 1))
            i += 1
            time.sleep(0.02)
        c.close()


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def measure(app, seconds):
    """The replica's time and the app's figures over the next seconds, and
    the leaderboard's median latency through ProxySQL (ms)."""
    b0, c0, s0 = replica_time()
    n0, e0, t0 = app.n, app.errors, time.time()
    time.sleep(seconds)
    b1, c1, s1 = replica_time()
    with app.lock:
        lb = [x for w, x in app.lat.get("leaderboard", []) if w >= t0]
    return {"busy": b1 - b0, "cpu": c1 - c0, "selects": s1 - s0, "n": app.n - n0, "errors": app.errors - e0,
            "lb_ms": 1000.0 * median(lb)}


def runtime_rules(px):
    return sorted(px.admin_rows("SELECT rule_id, digest, destination_hostgroup, mirror_hostgroup, comment "
                                "FROM runtime_mysql_query_rules WHERE comment LIKE 'shoal-ha%'"))


def digest_names(px):
    """{digest: kind} from ProxySQL's statistics."""
    names = {}
    marks = (("leaderboard", "SELECT c.customer_id"), ("categories", "SELECT cat.name"),
             ("hot", "SELECT g,COUNT(*)"), ("now", "SELECT NOW()"), ("point", "SELECT title"))
    for d, text in px.admin_rows("SELECT DISTINCT digest, digest_text FROM stats_mysql_query_digest"):
        for name, start in marks:
            if text.startswith(start):
                names[d] = name
    return names


def hits(nodes):
    return sum(n.metric("shoal_cache_hits_total") or 0 for n in nodes)


def agent(px, i, extra=()):
    state = os.path.join(WORK, "agent%d.json" % i)
    if os.path.exists(state):
        os.unlink(state)
    args = [AGENT, "--proxysql-admin", "mysql://admin:admin@127.0.0.1:%d" % px.admin_port,
            "--hostgroup", str(HG), "--nodes", NODE_LIST, "--fallback", "127.0.0.1:%d" % BL,
            "--state-file", state, "watch", "--auto-route"] + list(extra)
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(os.path.join(WORK, "agent%d.err" % i), "w"))


def stop_agents(agents):
    for a in agents:
        a.terminate()
        a.wait(20)


def delete_auto_rules(px):
    px.admin_rows("DELETE FROM mysql_query_rules WHERE comment LIKE 'shoal-ha%'", "LOAD MYSQL QUERY RULES TO RUNTIME")


NODE_LIST = ""


def phase_one_agent(app, px, nodes, names):
    """Phase 3: the first warming rule, routing rule and client hit."""
    t0 = time.time()
    a = agent(px, 0)
    first = {}
    h0 = hits(nodes)
    while time.time() - t0 < 120 and len(first) < 3:
        r = runtime_rules(px)
        if "warm" not in first and any(x[3] == str(HG) for x in r):
            first["warm"] = time.time() - t0
        routed = any(x[2] == str(HG) for x in r)
        if "route" not in first and routed:
            first["route"] = time.time() - t0
            h0 = hits(nodes)
        if "route" in first and "hit" not in first and hits(nodes) > h0:
            first["hit"] = time.time() - t0
        time.sleep(0.1)
    # steady: no rule change for 3 polls (the default 5 s each), at most 3 min
    last, since = runtime_rules(px), time.time()
    while time.time() - since < 15 and time.time() - t0 < 180:
        time.sleep(1)
        now = runtime_rules(px)
        if now != last:
            last, since = now, time.time()
    log("one agent: settled %.0f s after its start" % (time.time() - t0))
    m = measure(app, PHASE_S)
    st = subprocess.run([AGENT, "--proxysql-admin", "mysql://admin:admin@127.0.0.1:%d" % px.admin_port,
                         "--hostgroup", str(HG), "--nodes", NODE_LIST, "--state-file",
                         os.path.join(WORK, "agent0.json"), "status"], capture_output=True, text=True, timeout=60)
    with open(os.path.join(WORK, "status.txt"), "w") as f:
        f.write(st.stdout + st.stderr)
    routed = sorted(names.get(x[1], x[1]) for x in runtime_rules(px) if x[2] == str(HG))
    withdrawn = sorted(names.get(d, d) for d, c in px.admin_rows(
        "SELECT digest, comment FROM mysql_query_rules WHERE comment LIKE 'shoal-ha auto withdrawn%'"))
    stop_agents([a])
    return first, m, routed, withdrawn, open(os.path.join(WORK, "agent0.err")).read()


def phase_two_agents(app, pxs, names):
    """Phase 4: two agents for SOAK_S seconds, rules sampled every 2 s."""
    agents = [agent(px, i + 1) for i, px in enumerate(pxs)]
    t0 = time.time()
    samples = differ = 0
    history = {}           # digest -> list of states in order, changes only
    m = None
    while time.time() - t0 < SOAK_S:
        if m is None and SOAK_S - (time.time() - t0) <= PHASE_S:
            m = measure(app, PHASE_S)
            continue
        rs = [runtime_rules(px) for px in pxs]
        samples += 1
        differ += rs[0] != rs[1]
        for x in rs[0]:
            st = "routed" if x[2] == str(HG) else "warming" if x[3] == str(HG) else "other"
            h = history.setdefault(x[1], [])
            if not h or h[-1] != st:
                h.append(st)
        for d, h in history.items():
            if d not in [x[1] for x in rs[0]] and h[-1] != "out":
                h.append("out")
        time.sleep(2)
    stop_agents(agents)
    logs = [open(os.path.join(WORK, "agent%d.err" % (i + 1))).read() for i in range(2)]
    made = {}
    for d in history:
        made[d] = sum(len(re.findall(r"digest_(?:warming|routed): digest %s: (?:warm \(mirror\)|route): "
                                     r"expected" % d, lg)) for lg in logs)
    deciders = [i for i, lg in enumerate(logs) if "digest_" in lg]
    flaps = {d: h for d, h in history.items() if h.count("routed") > 1}
    routed = sorted(names.get(x[1], x[1]) for x in runtime_rules(pxs[0]) if x[2] == str(HG))
    return m, samples, differ, history, made, deciders, flaps, routed


def fmt_phase(name, m, base):
    saved = 100.0 * (1 - m["busy"] / base["busy"]) if base and base["busy"] else 0.0
    per_min = 60.0 / PHASE_S
    return "| %s | %.2f | %.2f | %.0f | %s | %.2f | %d / %d |" % (
        name, m["busy"] * per_min, m["cpu"] * per_min, m["selects"] * per_min,
        "—" if base is None else "**%.1f %%**" % saved, m["lb_ms"], m["n"], m["errors"])


def main():
    global NODE_LIST
    os.makedirs(WORK, exist_ok=True)
    setup_upstream()
    url = "mysql://shoalnode:np@127.0.0.1:%d/sakila" % BL
    nodes = [Node("ar-n%d" % i, WORK, url, ["--auto-cache", "--invalidation", "binlog", "--allowed-users", "app:pw"],
                  binary=os.environ.get("NODE_BIN")) for i in (1, 2)]
    servers = [{"hostgroup_id": 10, "hostname": "127.0.0.1", "port": BL, "max_connections": 200}]
    users = [{"username": "app", "password": "pw", "default_hostgroup": 10, "default_schema": "sakila"}]
    admin_vars = {"cluster_check_interval_ms": 200, "cluster_check_status_frequency": 100,
                  "cluster_mysql_servers_diffs_before_sync": 3, "cluster_mysql_query_rules_diffs_before_sync": 3}
    pxs = [ProxySQL("ar-px%d" % i, WORK, servers=servers, users=users, admin_variables=admin_vars,
                    variables={"monitor_ping_interval": 2000, "monitor_connect_interval": 2000}) for i in (1, 2)]
    peers = [{"hostname": "127.0.0.1", "port": p.admin_port, "weight": 0, "comment": p.name} for p in pxs]
    for p in pxs:
        p.peers = peers
    pxs.sort(key=lambda p: p.admin_port)
    NODE_LIST = ",".join("127.0.0.1:%d:%d:%d" % (n.port, n.http_port, n.admin_port) for n in nodes)
    writer, app = Writer(), None
    rows = []
    try:
        for n in nodes:
            n.start()
        for p in pxs:
            p.start()
        p = subprocess.run([AGENT, "--proxysql-admin", "mysql://admin:admin@127.0.0.1:%d" % pxs[0].admin_port,
                            "--hostgroup", str(HG), "--nodes", NODE_LIST, "--fallback", "127.0.0.1:%d" % BL,
                            "register"], capture_output=True, text=True, timeout=60)
        if p.returncode:
            raise RuntimeError("shoal-ha register failed: " + p.stdout + p.stderr)
        with open(os.path.join(WORK, "register.txt"), "w") as f:
            f.write(p.stdout + p.stderr)
        wait_for(lambda: len(pxs[1].admin_rows("SELECT 1 FROM runtime_mysql_servers WHERE hostgroup_id = %d"
                                               % HG)) == 3, 20, 0.3)
        writer.start()
        app = App(pxs).start()
        log("phase 1: no routing, %d s after 10 s of warm-up" % PHASE_S)
        time.sleep(10)
        base = measure(app, PHASE_S)
        names = digest_names(pxs[0])
        rows.append(fmt_phase("none: every statement to the replica", base, None))
        top = pxs[0].admin_rows("SELECT digest, SUM(sum_time) t FROM stats_mysql_query_digest "
                                "WHERE hostgroup = 10 GROUP BY digest ORDER BY t DESC LIMIT 1")[0][0]
        log("phase 2: the operator routes the top digest (%s, %s)" % (top, names.get(top, "?")))
        pxs[0].admin_rows("INSERT INTO mysql_query_rules (rule_id, active, digest, destination_hostgroup, apply, "
                          "comment) VALUES (900, 1, '%s', %d, 1, 'operator')" % (top, HG),
                          "LOAD MYSQL QUERY RULES TO RUNTIME")
        time.sleep(10)
        op = measure(app, PHASE_S)
        rows.append(fmt_phase("an operator's rule for the top digest (%s)" % names.get(top, top), op, base))
        pxs[0].admin_rows("DELETE FROM mysql_query_rules WHERE rule_id = 900", "LOAD MYSQL QUERY RULES TO RUNTIME")
        log("phase 3: one agent, default settings, fresh nodes")
        for n in nodes:   # fresh: the agent measures nothing that phase 2 left
            n.stop()
            for f in os.listdir(n.data_dir):
                os.unlink(os.path.join(n.data_dir, f))
            n.start()
        time.sleep(3)
        first, one, routed1, _, log1 = phase_one_agent(app, pxs[0], nodes, names)
        rows.append(fmt_phase("`shoal-ha watch --auto-route`, one agent (routed: %s)" % ", ".join(routed1), one, base))
        delete_auto_rules(pxs[0])
        log("phase 4: two agents, %d s" % SOAK_S)
        m, samples, differ, history, made, deciders, flaps, routed2 = phase_two_agents(app, pxs, names)
        rows.append(fmt_phase("two agents, last %d s of %d (routed: %s)" % (PHASE_S, SOAK_S, ", ".join(routed2)),
                              m, base))
    finally:
        if app:
            app.stop()
        writer.on = False
        for p in pxs:
            if p.proc:
                p.stop()
        for n in nodes:
            if n.proc:
                n.stop()
    out = []
    out.append("The seed's tier, auto-routed: two nodes (binlog mode, auto-cache), two ProxySQL %s instances in a "
               "cluster, the bench's MariaDB with its binlog on as the replica. The application (an open-loop "
               "schedule, half through each instance) runs the leaderboard 2/s, revenue per category since a "
               "month 2/s (4 months), an aggregate of a table written every 20 ms 4/s, `SELECT NOW()` 20/s and "
               "a film by id 50/s. **Replica time** is MariaDB's own account of the application's statements "
               "(`USER_STATISTICS` of user app: BUSY_TIME, CPU_TIME), whether they came from ProxySQL or from a "
               "node's miss; each line is measured over %d s and shown per minute." % (
                   subprocess.run([os.environ.get("PROXYSQL_BIN", "proxysql"), "--version"], capture_output=True,
                                  text=True).stdout.split()[2].rstrip(",") if os.environ.get("PROXYSQL_BIN") else "",
                   PHASE_S))
    out.append("")
    out.append("| routing | replica busy s/min | replica CPU s/min | SELECTs/min on the replica | replica time "
               "saved | leaderboard p50 ms (through ProxySQL) | app statements / errors |")
    out.append("|---|---|---|---|---|---|---|")
    out.extend(rows)
    out.append("")
    out.append("**Time to the first hit without an operator** (one agent, every setting at its default: polls "
               "every 5 s, 10 s of mirroring, thresholds 1 %% of the upstream time and 1 s): first warming rule "
               "%.1f s after the agent started, first routing rule %.1f s, first client answered from the cache "
               "%.1f s." % (first.get("warm", -1), first.get("route", -1), first.get("hit", -1)))
    out.append("")
    out.append("One agent's withdrawals (its log): %s." % ("; ".join(
        "%s, %s" % (names.get(d, d), why) for d, why in
        re.findall(r"digest_withdrawn: digest (\S+): withdraw: ([^\n]*)", log1)) or "none"))
    out.append("")
    out.append("**Two agents for %d s** (one beside each instance, defaults): the rules of both instances sampled "
               "%d times, %d samples differed (cluster sync in flight); decisions made by agent%s %s; rules "
               "created per digest: %s; digests routed again after a withdrawal (flapping): %s; final routed set "
               "%s the one agent's." % (
                   SOAK_S, samples, differ, "s" if len(deciders) != 1 else "",
                   " and ".join(str(i + 1) for i in deciders) or "none",
                   ", ".join("%s %d" % (names.get(d, d), n) for d, n in sorted(made.items())) or "none",
                   ", ".join(names.get(d, d) for d in flaps) or "none",
                   "equals" if routed2 == routed1 else "differs from"))
    out.append("")
    out.append("Each digest's history on the first instance: %s." % "; ".join(
        "%s: %s" % (names.get(d, d), " → ".join(h)) for d, h in sorted(history.items())))
    with open(os.environ["OUT"], "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
