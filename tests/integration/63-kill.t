#!/usr/bin/env bash
# 63-kill: KILL through the node (issue #11, item 4). Ids are the node's
# session ids (the handshake's connection id, what drivers know): KILL QUERY
# interrupts that session's running query (1317 for it, the session goes
# on), KILL [CONNECTION] and COM_PROCESS_KILL end it; 1094 for an unknown
# id, 1095 for another user's session, 1927/1317 for oneself, 1235 for
# KILL QUERY ID and KILL USER. Sessions on both workers; a bystander's
# queries are never interrupted. The same errors as MariaDB gives directly.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

plan 20
if fake_mode; then
  for i in $(seq 1 20); do skip "KILL through the node" "fake mode: node-only ids"; done
  exit 0
fi
if ! shoal_start node --workers 2 --allowed-users other:otherpw; then
  not_ok "node starts"; done_testing; exit 1
fi
ok "node starts (port $node_PORT)"

NODE_PORT=$node_PORT "$PY" - <<'PY'
import os, threading, time
import pymysql
from taplib import ok, is_, diag

DPORT, VPORT = int(os.environ["MDB_PORT"]), int(os.environ["NODE_PORT"])

def conn(port, user="app", pw="pw"):
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=pw, database="shoaltest",
                           autocommit=True)

def err(f):
    try:
        f()
        return "ok"
    except pymysql.MySQLError as e:
        return e.args[0]

def sleeper(c, out, secs=20):
    t0 = time.time()
    try:
        cur = c.cursor()
        cur.execute("SELECT SLEEP(%d)" % secs)
        out["result"] = cur.fetchall()
    except pymysql.MySQLError as e:
        out["result"] = e.args[0]
    out["secs"] = time.time() - t0

def kill_running(port, how):
    """A session sleeps; another session kills it (how: 'query',
    'connection', 'process'). Returns what the sleeper got, how long it
    slept, the killer's answer and the sleeper's next answer."""
    a, b = conn(port), conn(port)
    out = {}
    t = threading.Thread(target=sleeper, args=(a, out))
    t.start()
    time.sleep(1.0)
    if how == "process":
        killer = err(lambda: b.kill(a.thread_id()))
    else:
        killer = err(lambda: b.cursor().execute("KILL %s%d" % ("QUERY " if how == "query" else "", a.thread_id())))
    t.join(30)
    def next_query():
        cur = a.cursor()
        cur.execute("SELECT 2")
        return cur.fetchall()
    nxt = err(next_query) if how == "query" else None
    if how == "query":
        nxt = next_query() if nxt == "ok" else nxt
    for c in (a, b):
        try:
            c.close()
        except Exception:
            pass
    return out.get("result"), out.get("secs", 99), killer, nxt

# a bystander runs queries all along: none may be interrupted
stop = threading.Event()
bystander = {"n": 0, "errors": []}
def bystand():
    c = conn(VPORT)
    while not stop.is_set():
        try:
            cur = c.cursor()
            cur.execute("SELECT SLEEP(0.05), 1")
            cur.fetchall()
            bystander["n"] += 1
        except pymysql.MySQLError as e:
            bystander["errors"].append(e.args)
            c = conn(VPORT)
    c.close()
bt = threading.Thread(target=bystand, daemon=True)
bt.start()
try:

    d, v = kill_running(DPORT, "query"), kill_running(VPORT, "query")
    is_((v[0], v[2], v[3]), (d[0], d[2], d[3]), "KILL QUERY: the sleeper gets 1317 and goes on, as directly")
    ok(v[0] == 1317 and v[1] < 10, "  interrupted after %.1f s" % v[1], repr(v))
    d, v = kill_running(DPORT, "connection"), kill_running(VPORT, "connection")
    is_((v[0], v[2]), (d[0], d[2]), "KILL <id>: the sleeper loses its connection, the killer gets OK, as directly")
    ok(v[1] < 10, "  ended after %.1f s" % v[1])
    d, v = kill_running(DPORT, "process"), kill_running(VPORT, "process")
    is_((v[0], v[2]), (d[0], d[2]), "COM_PROCESS_KILL: the same")

    def errors(port):
        a, b = conn(port), conn(port)
        res = {}
        res["unknown"] = err(lambda: a.cursor().execute("KILL 4000000000"))
        res["unknown query"] = err(lambda: a.cursor().execute("KILL QUERY 4000000000"))
        res["unknown process"] = err(lambda: a.kill(4000000000))
        res["self query"] = err(lambda: a.cursor().execute("KILL QUERY %d" % a.thread_id()))
        res["after self query"] = err(lambda: a.cursor().execute("SELECT 1"))
        res["idle victim"] = err(lambda: a.cursor().execute("KILL CONNECTION %d" % b.thread_id()))
        time.sleep(0.5)
        res["victim after"] = err(lambda: b.cursor().execute("SELECT 1"))
        res["self"] = err(lambda: a.cursor().execute("KILL %d" % a.thread_id()))
        res["after self"] = err(lambda: a.cursor().execute("SELECT 1"))
        return res

    d, v = errors(DPORT), errors(VPORT)
    for k in d:
        is_(v[k], d[k], "%s: %s, as directly" % (k, d[k]))

    # an id from CONNECTION_ID() (the upstream's thread id: it is no node
    # session's, so the session whose last command ran there is meant)
    def by_connection_id(port):
        a, b = conn(port), conn(port)
        cur = b.cursor()
        cur.execute("BEGIN")            # pinned: its CONNECTION_ID() stays
        cur.execute("SELECT CONNECTION_ID()")
        tid = cur.fetchall()[0][0]
        out = {}
        t = threading.Thread(target=sleeper, args=(b, out))
        t.start()
        time.sleep(1.0)
        killer = err(lambda: a.cursor().execute("KILL QUERY %d" % tid))
        t.join(30)
        a.close(); b.close()
        return out.get("result"), killer
    d, v = by_connection_id(DPORT), by_connection_id(VPORT)
    is_(v, d, "KILL QUERY <the session's CONNECTION_ID()>: its query interrupted, as directly")

    # the same without a transaction: under multiplexing the sleeper may run
    # on another pooled connection than the one CONNECTION_ID() answered on
    # (another session holds that one), and the killer, a new session, may
    # have logged in on it: the id still names the session it was told to
    # (main.myisam_icp_notembedded)
    def told_id(port):
        b, h = conn(port), conn(port)
        cur = b.cursor()
        cur.execute("SELECT CONNECTION_ID()")
        tid = cur.fetchall()[0][0]
        hc = h.cursor()
        hc.execute("BEGIN")
        hc.execute("SELECT 1")          # h is pinned now, maybe to tid's connection
        out = {}
        t = threading.Thread(target=sleeper, args=(b, out, 5))
        t.start()
        time.sleep(1.0)
        a = conn(port)
        killer = err(lambda: a.cursor().execute("KILL QUERY %d" % tid))
        t.join(30)
        a.close(); b.close(); h.close()
        return out.get("result"), killer
    d, v = told_id(DPORT), told_id(VPORT)
    is_(v, d, "KILL QUERY <CONNECTION_ID()> from outside a transaction: its query interrupted, as directly")

    # node-only: another user's session, the refused forms
    a, o = conn(VPORT), conn(VPORT, "other", "otherpw")
    is_(err(lambda: o.cursor().execute("KILL %d" % a.thread_id())), 1095, "another user's session: 1095")
    is_((err(lambda: a.cursor().execute("KILL QUERY ID 5")), err(lambda: a.cursor().execute("KILL USER app"))),
        (1235, 1235), "KILL QUERY ID, KILL USER: 1235")
    a.close(); o.close()

finally:
    stop.set()
bt.join(30)
ok(bystander["n"] > 10 and not bystander["errors"],
   "a bystander's %d queries meanwhile: none interrupted" % bystander["n"], repr(bystander["errors"][:3]))
PY
done_testing
