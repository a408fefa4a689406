"""65-prepare-answers: the python part of 65-prepared-fidelity's binlog half
(issue #23): in binlog mode the node answers a COM_STMT_PREPARE itself
with the upstream's earlier answer to the same one. Each scenario runs
straight against the server, then through the node, byte for byte (the
statement ids masked), in the binary protocol with and without
CLIENT_DEPRECATE_EOF and MariaDB's extended metadata; every PREPARE is
made three times before a change, so that the node holds an answer it
could wrongly give.

Environment: BL_PORT, BL_SOCK (a MariaDB with its binlog on), NODE (a
binlog-mode node on it, logins app/pw and gp/gppw), NODE_M (its metrics
port).
"""
import os
import re
import subprocess
import time
import urllib.request

import cache_proto as cp
import rawmysql as r
from taplib import diag, done_testing, ok

DIRECT, NODE, NODE_M = int(os.environ["BL_PORT"]), int(os.environ["NODE"]), int(os.environ["NODE_M"])
EXT_FLAG = 1 << 40  # here: also ask for MariaDB's extended metadata
CAPS = (("classic", r.BASE_CAPS), ("deprecate_eof", r.DEFAULT_CAPS),
        ("extended metadata", r.DEFAULT_CAPS | EXT_FLAG))


def session(port, caps, user="app", pw="pw"):
    c = r.Conn("127.0.0.1", port, timeout=30)
    ext = r.MARIADB_CLIENT_EXTENDED_METADATA if caps & EXT_FLAG else 0
    c.login(user, pw, db="shoaltest", caps=caps & ~EXT_FLAG, ext_caps=ext)
    return c


def root(*sqls):
    subprocess.run(["mariadb", "--no-defaults", "--socket=" + os.environ["BL_SOCK"], "-uroot",
                    "shoaltest", "-e", ";".join(sqls)], check=True)


def root_value(sql):
    out = subprocess.run(["mariadb", "--no-defaults", "--socket=" + os.environ["BL_SOCK"], "-uroot",
                          "-N", "-B", "-e", sql], check=True, capture_output=True, text=True)
    return out.stdout.strip()


def metric(name):
    text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % NODE_M, timeout=10).read().decode()
    m = re.search(r"^%s (\S+)$" % name, text, re.M)
    return float(m.group(1)) if m else -1


def node_caught_up():
    """Wait until the node's follower has read the server's binlog to its
    end (the DDL just made is seen)."""
    want = root_value("SELECT @@gtid_binlog_pos")
    c = r.connect(NODE, timeout=30)
    t0 = time.time()
    while time.time() - t0 < 15 and cp.status(c).get("Binlog Position") != want:
        time.sleep(0.01)
    c.close()


def masked(pkts):
    out = []
    for seq, p in pkts:
        if len(p) in (12, 13) and p[0] == 0:
            p = p[:1] + b"\0\0\0\0" + p[5:]
        out.append((seq, p))
    return out


def prepare_thrice(c, text, trace, label):
    """PREPARE, EXECUTE and CLOSE three times, all answers traced: after a
    DDL the node keeps no answer until a read has had the catalog read
    again (the first execute), so the third PREPARE is the node's own."""
    for n in (1, 2, 3):
        sid, _, nparams, p = c.prepare(text)
        trace.append(("%s #%d" % (label, n), masked(p)))
        if sid is None:
            continue
        trace.append(("%s #%d execute" % (label, n), c.execute(sid, (1,) * nparams)))
        c.close_stmt(sid)


def after_change(port, c, change, text, trace, label):
    """A change made straight on the server by another client, seen by
    the node's follower, then the same PREPARE again."""
    root(change)
    if port == NODE:
        node_caught_up()
    prepare_thrice(c, text, trace, label)


def columns(port, caps):
    root("DROP TABLE IF EXISTS pa1", "CREATE TABLE pa1 (id INT PRIMARY KEY, v VARCHAR(10))",
         "INSERT INTO pa1 VALUES (1, 'x'), (2, 'y')")
    if port == NODE:
        node_caught_up()
    c, trace, text = session(port, caps), [], "SELECT * FROM pa1 WHERE id = ?"
    prepare_thrice(c, text, trace, "prepare")
    after_change(port, c, "ALTER TABLE pa1 ADD COLUMN w DATE DEFAULT '2001-02-03'", text, trace,
                 "a column added")
    after_change(port, c, "ALTER TABLE pa1 DROP COLUMN v", text, trace, "a column dropped")
    after_change(port, c, "ALTER TABLE pa1 MODIFY w DECIMAL(12,3)", text, trace, "a column retyped")
    after_change(port, c, "DROP TABLE pa1", text, trace, "the table dropped")
    after_change(port, c, "CREATE TABLE pa1 (id BIGINT PRIMARY KEY, t TEXT)", text, trace,
                 "the table made again")
    c.close()
    return trace


def view(port, caps):
    root("DROP VIEW IF EXISTS pav", "DROP TABLE IF EXISTS pa2",
         "CREATE TABLE pa2 (id INT PRIMARY KEY, a INT, b VARCHAR(5))", "INSERT INTO pa2 VALUES (1, 2, 'z')",
         "CREATE VIEW pav AS SELECT id, a FROM pa2")
    if port == NODE:
        node_caught_up()
    c, trace, text = session(port, caps), [], "SELECT * FROM pav WHERE id = ?"
    prepare_thrice(c, text, trace, "prepare on the view")
    after_change(port, c, "CREATE OR REPLACE VIEW pav AS SELECT id, b, a * 2 AS a2 FROM pa2", text,
                 trace, "the view redefined")
    c.close()
    return trace


def through_node(port, caps):
    """DDL sent through the node itself: the next PREPARE, at once."""
    root("DROP TABLE IF EXISTS pa3", "CREATE TABLE pa3 (id INT PRIMARY KEY, v INT)", "INSERT INTO pa3 VALUES (1, 1)")
    if port == NODE:
        node_caught_up()
    c, trace, text = session(port, caps), [], "SELECT * FROM pa3 WHERE id = ?"
    prepare_thrice(c, text, trace, "prepare")
    c.query("ALTER TABLE pa3 ADD COLUMN s CHAR(3) DEFAULT 'abc'")
    prepare_thrice(c, text, trace, "after ALTER TABLE through the same session")
    other = session(port, caps)
    other.query("ALTER TABLE pa3 CHANGE s s2 VARCHAR(30)")
    other.close()
    prepare_thrice(c, text, trace, "after ALTER TABLE by another session of the node")
    c.close()
    return trace


def modes(port, caps):
    """The session's sql_mode and character sets change what the server
    makes of the same text."""
    root("DROP TABLE IF EXISTS pa4", "CREATE TABLE pa4 (id INT PRIMARY KEY, v VARCHAR(10))",
         "INSERT INTO pa4 VALUES (1, 'q')")
    if port == NODE:
        node_caught_up()
    c, trace = session(port, caps), []
    text = "SELECT \"id\" || 'x', v, '\u00e9' AS e FROM pa4 WHERE id = ?".encode()
    prepare_thrice(c, text, trace, "default sql_mode")
    for change in ("SET sql_mode = 'ANSI_QUOTES'", "SET sql_mode = 'PIPES_AS_CONCAT,ANSI_QUOTES'",
                   "SET NAMES latin1", "SET character_set_results = utf8mb4",
                   "SET collation_connection = latin1_bin", "SET character_set_results = NULL",
                   "SET sql_mode = DEFAULT, NAMES utf8mb4"):
        c.query(change)
        prepare_thrice(c, text, trace, change)
    c.close()
    return trace


def grants(port, caps):
    """A user whose grants change between two PREPAREs."""
    root("DROP TABLE IF EXISTS pa5", "CREATE TABLE pa5 (id INT PRIMARY KEY, v INT, secret INT)",
         "INSERT INTO pa5 VALUES (1, 2, 3)", "GRANT SELECT ON shoaltest.pa5 TO gp")
    if port == NODE:
        node_caught_up()
    c, trace = session(port, caps, "gp", "gppw"), []
    prepare_thrice(c, "SELECT * FROM pa5 WHERE id = ?", trace, "prepare")
    prepare_thrice(c, "SELECT v FROM pa5 WHERE id = ?", trace, "prepare one column")
    after_change(port, c, "REVOKE SELECT ON shoaltest.pa5 FROM gp", "SELECT v FROM pa5 WHERE id = ?", trace,
                 "after REVOKE")
    after_change(port, c, "GRANT SELECT (id, v) ON shoaltest.pa5 TO gp", "SELECT * FROM pa5 WHERE id = ?",
                 trace, "after a column grant, all columns")
    prepare_thrice(c, "SELECT v FROM pa5 WHERE id = ?", trace, "after a column grant, a granted column")
    root("REVOKE SELECT (id, v) ON shoaltest.pa5 FROM gp")
    c.close()
    return trace


root("CREATE USER IF NOT EXISTS gp IDENTIFIED BY 'gppw'")
local0 = metric("shoal_prepares_local_total")
for scen in (columns, view, through_node, modes, grants):
    for name, caps in CAPS:
        d, v = scen(DIRECT, caps), scen(NODE, caps)
        bad = [s for (s, x), (_, y) in zip(d, v) if x != y]
        ok(len(d) == len(v) and not bad, "binlog mode, %s (%s): %d steps, the same bytes" %
           (scen.__name__, name, len(d)), "differ: %s" % bad[:3])
        for (s, x), (_, y) in zip(d, v):
            if x != y:
                diag("%s: direct %s" % (s, r.describe(x)[:500]))
                diag("%s: node   %s" % (s, r.describe(y)[:500]))
                break
local = metric("shoal_prepares_local_total") - local0
ok(local >= 30, "the node answered %d of those PREPAREs itself (a scenario proves nothing otherwise)" % local)

# the headline: prepare, execute and close each cached point select
root("DROP TABLE IF EXISTS pa6", "CREATE TABLE pa6 (id INT PRIMARY KEY, v VARCHAR(20))",
     "INSERT INTO pa6 SELECT seq, CONCAT('row ', seq) FROM seq_1_to_100")
node_caught_up()
c = session(NODE, r.DEFAULT_CAPS)
for i in range(1, 101):  # every id once: the cache holds them all
    sid, _, _, _ = c.prepare("SELECT v FROM pa6 WHERE id = ?")
    c.execute(sid, (i,))
    c.close_stmt(sid)
before = int(root_value("SHOW GLOBAL STATUS LIKE 'Com_stmt_prepare'").split()[1])
errors = 0
for i in range(4000):
    sid, _, _, _ = c.prepare("SELECT v FROM pa6 WHERE id = ?")
    if sid is None:
        errors += 1
        continue
    rows = c.execute(sid, (1 + i % 100,))
    c.close_stmt(sid)
    if not any(p.endswith(("row %d" % (1 + i % 100)).encode()) for _, p in rows):
        errors += 1
upstream = int(root_value("SHOW GLOBAL STATUS LIKE 'Com_stmt_prepare'").split()[1]) - before
c.close()
ok(upstream <= 40 and errors == 0, "4,000 prepare-execute-close point selects, all cached: %d upstream "
   "COM_STMT_PREPARE (%.4f per query, at most 0.01), %d wrong answers" % (upstream, upstream / 4000.0, errors))
done_testing()
