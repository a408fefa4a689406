#!/usr/bin/env bash
# 65-prepared-fidelity: prepared statements through the node are what the
# server makes of them now (issue #11, item 1), byte for byte against
# MariaDB (statement ids masked), in the binary protocol, with and without
# CLIENT_DEPRECATE_EOF and MariaDB's extended metadata:
#  - an execute after another client changed the table (the server
#    re-prepares; the answer carries the new column definitions), and a new
#    PREPARE of the same text;
#  - the same text prepared by two sessions under different sql_mode and
#    character sets (no answer shared between them);
#  - CALL of a procedure that opens a cursor and returns several result
#    sets, executed (PS multi-results, a cursor flag left set);
#  - a prepared SET carried to the next connection the session borrows;
#  - statements the client closed are closed upstream too;
#  - a statement executed, after the session changed its sql_mode and
#    character set, on a connection that never had it: prepared there in
#    the state it was first prepared in;
#  - (issue #23) a node in default mode answers no PREPARE itself; a node
#    in binlog mode answers PREPAREs with the upstream's earlier answer, and
#    gives exactly what the server gives after a column is added, dropped
#    or retyped, a table dropped and made again, a view redefined (each
#    made straight on the server by another client), DDL through the node,
#    sql_mode and character-set changes, and a user's grants changed
#    between two PREPAREs; 4,000 prepare-execute-close point selects, all
#    cached, send at most 0.01 PREPARE per query upstream
#    (lib/65-prepare-answers.py).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

plan 39
DM=$(free_port)
if ! shoal_start node --workers 2 --metrics-address "127.0.0.1:$DM"; then not_ok "node starts"; done_testing; exit 1; fi
ok "node starts (port $node_PORT)"
on_exit 'mdb -e "DROP TABLE IF EXISTS t65, t65b; DROP PROCEDURE IF EXISTS p65"'

NODE_PORT=$node_PORT "$PY" - <<'PY'
import os, struct, time
import rawmysql as r
from taplib import ok, is_, diag

EXT_FLAG = 1 << 40  # in this file's caps: also ask for MariaDB's extended metadata

DPORT, VPORT = int(os.environ["MDB_PORT"]), int(os.environ["NODE_PORT"])
def session(port, caps):
    c = r.Conn("127.0.0.1", port)
    ext = r.MARIADB_CLIENT_EXTENDED_METADATA if caps & EXT_FLAG else 0
    c.login("app", "pw", db="shoaltest", caps=caps & ~EXT_FLAG, ext_caps=ext)
    return c

def masked(pkts):
    """Packets with the statement id of a PREPARE OK zeroed."""
    out = []
    for seq, p in pkts:
        if len(p) >= 12 and p[0] == 0 and len(p) in (12, 13):
            p = p[:1] + b"\0\0\0\0" + p[5:]
        out.append((seq, p))
    return out

def ddl(sql):
    c = session(DPORT, r.BASE_CAPS)   # another client, straight to the server
    for s in sql.split(";"):
        if s.strip():
            c.query(s)
    c.close()

def ddl_scenario(port, caps):
    ddl("DROP TABLE IF EXISTS t65; CREATE TABLE t65 (a INT, b VARCHAR(10));"
        "INSERT INTO t65 VALUES (1, 'x'), (2, 'y')")
    c = session(port, caps)
    trace = []
    sid, _, _, p = c.prepare("SELECT * FROM t65 ORDER BY 1")
    trace.append(("prepare", masked(p)))
    trace.append(("execute", c.execute(sid)))
    ddl("CREATE OR REPLACE TABLE t65 (d DATE, n DECIMAL(6,2), t TEXT);"
        "INSERT INTO t65 VALUES ('2001-02-03', 1.5, 'new shape')")
    trace.append(("execute after DDL", c.execute(sid)))
    trace.append(("execute again", c.execute(sid)))
    sid2, _, _, p = c.prepare("SELECT * FROM t65 ORDER BY 1")
    trace.append(("PREPARE again after DDL", masked(p)))
    trace.append(("its execute", c.execute(sid2)))
    ddl("ALTER TABLE t65 DROP COLUMN t")
    trace.append(("execute after a dropped column", c.execute(sid2)))
    c.close()
    return trace

def modes_scenario(port, caps):
    ddl("DROP TABLE IF EXISTS t65b; CREATE TABLE t65b (a INT); INSERT INTO t65b VALUES (1),(2),(3),(4)")
    a, b = session(port, caps), session(port, caps)
    trace = []
    a.query("SET sql_mode = 'HIGH_NOT_PRECEDENCE'")
    text = "SELECT a FROM t65b WHERE NOT a BETWEEN 2 AND 3 ORDER BY a"
    for name, c in (("HIGH_NOT_PRECEDENCE", a), ("default sql_mode", b), ("HIGH_NOT_PRECEDENCE again", a)):
        sid, _, _, p = c.prepare(text)
        trace.append(("prepare under " + name, masked(p)))
        trace.append(("execute under " + name, c.execute(sid)))
    a.query("SET NAMES latin1")
    b.query("SET NAMES utf8mb4")
    text = "SELECT '\u00e9' AS e, LENGTH('\u00e9') AS l".encode("utf-8")
    for name, c in (("latin1", a), ("utf8mb4", b)):
        sid, _, _, p = c.prepare(text)
        trace.append(("prepare under " + name, masked(p)))
        trace.append(("execute under " + name, c.execute(sid)))
    a.close()
    b.close()
    return trace

def call_scenario(port, caps):
    ddl("DROP PROCEDURE IF EXISTS p65")
    c = session(DPORT, r.BASE_CAPS)
    c.query("CREATE PROCEDURE p65(n INT) BEGIN DECLARE x INT; DECLARE cur CURSOR FOR "
            "SELECT a FROM t65b ORDER BY a; OPEN cur; FETCH cur INTO x; SELECT x, n; "
            "SELECT COUNT(*) FROM t65b; CLOSE cur; END")
    c.close()
    c = session(port, caps)
    sid, _, _, p = c.prepare("CALL p65(?)")
    trace = [("prepare CALL", masked(p)), ("execute CALL", c.execute(sid, (7,))),
             ("execute CALL again", c.execute(sid, (8,))), ("then a query", c.query("SELECT 'next'"))]
    c.close()
    return trace

def set_scenario(port, caps):
    c = session(port, caps)
    sid, _, _, p = c.prepare("SET @@session.sql_mode = 'PIPES_AS_CONCAT'")
    trace = [("prepared SET", c.execute(sid))]
    # other sessions borrow connections meanwhile
    others = [session(port, caps) for _ in range(3)]
    for o in others:
        o.query("SELECT SLEEP(0.01)")
    trace.append(("the mode after", c.query("SELECT 'a' || 'b', @@session.sql_mode")))
    for o in others:
        trace.append(("another session's mode", o.query("SELECT 'a' || 'b'")))
        o.close()
    c.close()
    return trace

def kill_app_threads(keep):
    """The server closes every connection of user app but keep (the node
    sees its idle pooled connections go, and opens new ones)."""
    import pymysql
    root = pymysql.connect(unix_socket=os.environ["MDB_SOCK"], user="root")
    cur = root.cursor()
    cur.execute("SELECT id FROM information_schema.PROCESSLIST WHERE user = 'app' AND id <> %d" % keep)
    for (tid,) in cur.fetchall():
        try:
            cur.execute("KILL %d" % tid)
        except pymysql.MySQLError:
            pass
    root.close()
    time.sleep(0.3)

def ctx_scenario(port, caps):
    """Prepared under one sql_mode and character set, executed after the
    session changed both, on a connection that has never seen the statement
    (the server closed the others): parsed as when it was prepared."""
    ddl("DROP TABLE IF EXISTS t65b; CREATE TABLE t65b (a INT); INSERT INTO t65b VALUES (1),(2),(3),(4)")
    c = session(port, caps)
    c.query("SET sql_mode = 'HIGH_NOT_PRECEDENCE,PIPES_AS_CONCAT'")
    c.query("SET NAMES latin1")
    sid, _, _, p = c.prepare("SELECT a, 'x' || 'y', '\xe9' FROM t65b WHERE NOT a BETWEEN 2 AND 3 ORDER BY a".encode("latin1"))
    c.query("SET sql_mode = DEFAULT")
    c.query("SET NAMES utf8mb4")
    kill_app_threads(c.greeting.connection_id if port == DPORT else 0)
    trace = [("prepare", masked(p)), ("execute on a new connection", c.execute(sid)),
             ("the session's own mode", c.query("SELECT 'x' || 'y', @@sql_mode"))]
    c.close()
    return trace

def prepared_stmt_count():
    import pymysql
    root = pymysql.connect(unix_socket=os.environ["MDB_SOCK"], user="root")
    cur = root.cursor()
    cur.execute("SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'")
    n = int(cur.fetchall()[0][1])
    root.close()
    return n

def closed_upstream(port):
    """300 distinct statements prepared, executed and closed by one client,
    then one more command: the upstream keeps none of the closed ones."""
    c = session(port, r.BASE_CAPS)
    base = prepared_stmt_count()
    for i in range(300):
        sid, _, _, _ = c.prepare("SELECT %d AS n" % i)
        c.execute(sid)
        c.close_stmt(sid)
    c.query("SELECT 1")
    n = prepared_stmt_count() - base
    c.close()
    return n

d, v = closed_upstream(DPORT), closed_upstream(VPORT)
ok(d <= 1 and v <= 1, "300 statements prepared and closed by the client: the upstream holds %d of them "
   "afterwards (directly: %d)" % (v, d))

CAPS = (("classic", r.BASE_CAPS), ("deprecate_eof", r.DEFAULT_CAPS),
        ("extended metadata", r.DEFAULT_CAPS | EXT_FLAG))
for scen in (ddl_scenario, modes_scenario, call_scenario, set_scenario, ctx_scenario):
    for name, caps in CAPS:
        d, v = scen(DPORT, caps), scen(VPORT, caps)
        same = len(d) == len(v) and all(x == y for x, y in zip(d, v))
        bad = [s for (s, x), (_, y) in zip(d, v) if x != y]
        ok(same, "%s (%s): %d steps, the same bytes" % (scen.__name__, name, len(d)),
           "differ: %s" % bad[:3])
        if bad:
            (s, x), (_, y) = next(((a, b) for a, b in zip(d, v) if a[1] != b[1]))
            diag("direct %s" % r.describe(x)[:600])
            diag("node   %s" % r.describe(y)[:600])
PY

# the same, with MariaDB's extended metadata (the mariadb CLI's binary
# protocol is not reachable from the shell: a prepared statement through
# mariadb-test --ps-protocol is tests/conformance/shoal/prepared.test)
VIA_PORT=$node_PORT
for q in "SELECT * FROM t65" "SELECT a FROM t65b WHERE NOT a BETWEEN 2 AND 3"; do
  d=$(mdb -e "PREPARE s FROM '$q'; EXECUTE s; ALTER TABLE t65 ADD COLUMN z INT DEFAULT 9; EXECUTE s; ALTER TABLE t65 DROP COLUMN z" 2>&1)
  v=$(via -e "PREPARE s FROM '$q'; EXECUTE s; ALTER TABLE t65 ADD COLUMN z INT DEFAULT 9; EXECUTE s; ALTER TABLE t65 DROP COLUMN z" 2>&1)
  is "$v" "$d" "SQL PREPARE/EXECUTE around DDL: $q"
done
n=$(curl -fsS "http://127.0.0.1:$DM/metrics" | awk '$1 == "shoal_prepares_local_total" { print $2 }')
is "$n" "0" "default mode (no binlog): the node answered no PREPARE itself"

# ---- binlog mode: PREPARE answered by the node (issue #23)
work="$BUILD_TEST/t65"
rm -rf "$work"
mkdir -p "$work"
binlog_mdb "$work/mdb"
mariadb --no-defaults --socket="$work/mdb/sock" -uroot -e "CREATE USER gp IDENTIFIED BY 'gppw'"
BM=$(free_port)
if shoal_start binlog --auto-cache --invalidation binlog --upstream-db-url "mysql://app:pw@127.0.0.1:$BL_PORT/shoaltest" \
  --allowed-users app:pw,gp:gppw --data-dir "$work" --metrics-address "127.0.0.1:$BM"; then
  ok "a node in binlog mode starts"
  BL_SOCK="$work/mdb/sock" NODE=$binlog_PORT NODE_M=$BM BL_PORT=$BL_PORT "$PY" "$TESTLIB/65-prepare-answers.py"
  [ $? -le 1 ] || not_ok "the python part ran to its end"
else
  not_ok "a node in binlog mode starts"
fi
done_testing
