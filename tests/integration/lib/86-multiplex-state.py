"""86-multiplex part 3: per-session state never leaks between sessions that
share upstream connections. Run by 86-multiplex.t (PORT, HPORT, MODE).

MODE=carried (1 worker, pool of 1): sessions that change their schema,
character set, time zone, sql_mode, isolation level (state the node carries
to whichever connection runs the session's next command) interleaved,
statement by statement, with sessions that changed nothing; after every
step each session checks that it sees exactly its own state. Nothing pins.

MODE=pinned (1 worker, pool of 2): one session at a time uses what cannot
be carried (a user variable, LOCK TABLES, GET_LOCK, BACKUP STAGE, a temporary table,
SQL_CALC_FOUND_ROWS, LAST_INSERT_ID, SHOW WARNINGS, SQL PREPARE) while a
plain session works on the other connection; each sees only its own.
"""
import os
import random

import pymysql

from mux_help import connect, metric, one, rows, todo_ok
from ha_help import wait_for
from taplib import ok, is_, diag, run

PORT, HPORT, MODE = int(os.environ["PORT"]), int(os.environ["HPORT"]), os.environ["MODE"]
MDB_PORT = int(os.environ["MDB_PORT"])
STATE = ("SELECT DATABASE(), @@character_set_client, @@time_zone, @@sql_mode, @uv, "
         "@@tx_isolation, @@character_set_results, @@collation_connection, @@sql_select_limit, "
         "CONNECTION_ID()")
KEYS = ("db", "charset", "tz", "sql_mode", "uv", "iso", "results", "coll", "limit")


def state_of(c):
    r = one(c, STATE)
    return dict(zip(KEYS, r[:-1])), r[-1]


# Defaults: a fresh session straight to MariaDB.
_d = connect(MDB_PORT)
DEFAULT, _ = state_of(_d)
_d.close()
diag("a fresh session's state: %r" % (DEFAULT,))


class Sess:
    def __init__(self, name, db="shoaltest", **want):
        self.name = name
        self.c = connect(PORT, db=db)
        self.want = dict(DEFAULT, db=db, **want)
        self.cids = set()
        self.bad = []

    def check(self, step):
        got, cid = state_of(self.c)
        self.cids.add(cid)
        if got != self.want:
            self.bad.append((step, {k: (got[k], self.want[k]) for k in KEYS if got[k] != self.want[k]}))

    def q(self, sql):
        with self.c.cursor() as cur:
            cur.execute(sql)
            return cur.fetchall()


def carried():
    # (name, login schema, [(statement, changes to the wanted state)...])
    plans = [
        ("plain", "shoaltest", []),
        ("use", "shoaltest", [("USE sbtest", dict(db="sbtest"))]),
        ("names", "shoaltest", [("SET NAMES latin1", dict(charset="latin1", results="latin1",
                                                                 coll="latin1_swedish_ci"))]),
        ("tz", "shoaltest", [("SET time_zone = '+05:00'", dict(tz="+05:00")),
                             ("SET time_zone = DEFAULT", dict(tz=DEFAULT["tz"]))]),
        ("mode", "shoaltest", [("SET sql_mode = 'ANSI_QUOTES'", dict(sql_mode="ANSI_QUOTES"))]),
        ("iso", "shoaltest", [("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
                               dict(iso="READ-COMMITTED"))]),
        ("all", "shoaltest", [("USE sbtest", dict(db="sbtest")),
                              ("SET NAMES latin1", dict(charset="latin1", results="latin1",
                                                              coll="latin1_swedish_ci")),
                              ("SET @@session.time_zone = '-03:00', SESSION sql_mode = 'ANSI_QUOTES'",
                               dict(tz="-03:00", sql_mode="ANSI_QUOTES")),
                              ("SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE",
                               dict(iso="SERIALIZABLE")),
                              ("SET NAMES utf8mb4", dict(charset="utf8mb4", results="utf8mb4",
                                                               coll="utf8mb4_general_ci"))]),
        ("nodb", None, []),
        ("limit", "shoaltest", [("SET max_join_size = 1000000, @@session.sql_select_limit = 5",
                                 dict(limit=5))]),
        ("plain2", "shoaltest", []),
    ]
    rnd = random.Random(86)
    sess = {}
    for name, db, _ in plans:
        sess[name] = Sess(name, db=db)
        if not db:   # no schema at login: the one in the upstream URL (login.c, as Readyset)
            sess[name].want["db"] = "shoaltest"
    syncs0 = metric(HPORT, "shoal_upstream_state_syncs_total")
    steps = {name: list(p) for name, _, p in plans}
    rounds = 0
    while any(steps.values()) or rounds < 3:
        rounds += 1
        order = list(sess)
        rnd.shuffle(order)
        for name in order:
            s = sess[name]
            if steps[name]:
                sql, change = steps[name].pop(0)
                s.q(sql)
                s.want.update(change)
            s.check("round %d" % rounds)
            # a statement that uses the state: a table of the session's schema
            if s.want["db"] == "sbtest":
                s.q("SELECT COUNT(*) FROM mux_sb")
            elif s.want["db"]:
                s.q("SELECT COUNT(*) FROM mux_cache")
            s.check("round %d, after a query" % rounds)
    # a session that logs in now gets the defaults on the shared connection
    late = Sess("late")
    late.check("fresh login after the others")
    sess["late"] = late
    for s in sess.values():
        ok(not s.bad, "session '%s' saw exactly its own state after every step (%s)"
           % (s.name, ", ".join("%s=%r" % (k, s.want[k]) for k in KEYS if s.want[k] != DEFAULT[k])
              or "defaults"), "differences (got, want): %r" % s.bad[:4])
    all_cids = set().union(*(s.cids for s in sess.values()))
    diag("upstream connection ids seen: %r; state syncs %d"
         % (sorted(all_cids), metric(HPORT, "shoal_upstream_state_syncs_total") - syncs0))
    shared = [n for n, s in sess.items() if s.cids & sess["plain"].cids]
    ok(len(shared) >= 5, "sessions with different state ran on the same upstream connection "
       "(%d sessions shared one with 'plain')" % len(shared), "cids per session: %r"
       % {n: sorted(s.cids) for n, s in sess.items()})
    ok(metric(HPORT, "shoal_upstream_state_syncs_total") - syncs0 > 0,
       "state syncs counted (shoal_upstream_state_syncs_total moved)")
    is_(metric(HPORT, "shoal_upstream_pinned_sessions"), 0, "carried state pins nothing (pinned sessions 0)")
    # a SET the upstream rejects: the upstream's error, and the state unchanged
    s = sess["plain"]
    try:
        s.q("SET time_zone = 'Nowhere/Atlantis'")
        ok(False, "SET time_zone to an unknown zone fails with the upstream's error 1298")
    except pymysql.MySQLError as e:
        is_(e.args[0], 1298, "SET time_zone to an unknown zone: the upstream's error 1298")
    s.check("after a rejected SET")
    ok(not s.bad, "a rejected SET leaves the session's state as it was", repr(s.bad))
    sess["plain2"].check("after another's rejected SET")
    ok(not sess["plain2"].bad, "... and the other sessions' too", repr(sess["plain2"].bad))
    for s in sess.values():
        s.c.close()
    dropped_schema()
    charset_vars()
    released()
    last_insert_ids()


def last_insert_ids():
    """LAST_INSERT_ID() (and @@identity, @@last_insert_id) is the session's
    own (sys_vars.identity_func): a new session sees 0, not the id another
    session's INSERT left on the shared connection, and a session that
    inserted sees its own id after others used the connection."""
    ids = "SELECT LAST_INSERT_ID(), @@identity, @@last_insert_id"
    a = Sess("inserter")
    a.q("INSERT INTO mux_ai (who) VALUES ('lid-a')")
    mine = one(a.c, "SELECT LAST_INSERT_ID()")[0]
    a.c.close()
    b = Sess("fresh")
    is_(one(b.c, ids), (0, 0, 0), "a new session's LAST_INSERT_ID(), @@identity, @@last_insert_id: 0, "
        "not the %d another session's INSERT left on the connection" % mine)
    a = Sess("inserter-2")
    a.q("INSERT INTO mux_ai (who) VALUES ('lid-b')")
    a.q("SELECT 1")
    b.q("INSERT INTO mux_ai (who) VALUES ('lid-c')")
    b.q("SELECT 1")
    got = one(a.c, "SELECT LAST_INSERT_ID(), who FROM mux_ai WHERE id = LAST_INSERT_ID()")
    is_(got[1], "lid-b", "a session that inserted reads its own id after another session's INSERT "
        "on the same connection (%r)" % (got,))
    is_(one(b.c, "SELECT who FROM mux_ai WHERE id = @@identity")[0], "lid-c",
        "... and so does the other one, through @@identity")
    a.c.close()
    b.c.close()
    a = Sess("inserter-3")
    a.q("INSERT INTO mux_ai (who) VALUES ('lid-d')")
    a.c.close()
    e = Sess("explicit")
    e.q("INSERT INTO mux_ai (id, who) VALUES (100000, 'lid-e')")
    is_(one(e.c, "SELECT @@identity = 0, LAST_INSERT_ID()"), (1, 0),
        "an INSERT of an explicit id leaves the session's LAST_INSERT_ID() at 0, as directly, "
        "not at another session's id")
    e.c.close()


def gone(c, sql):
    """The error a query gets on a session the server ended (None if it ran)."""
    try:
        with c.cursor() as cur:
            cur.execute(sql)
        return None
    except pymysql.MySQLError as e:
        return e.args[0]


def released():
    """COMMIT/ROLLBACK with RELEASE, written out or by completion_type = 2
    (sys_vars.completion_type_func): the server closes the connection after
    its OK, and so does the node; the session's next query fails as it
    would directly (2013 or 2006), its commit stands, and other sessions on
    the same (only) upstream connection go on."""
    s = Sess("release-type")
    s.q("SET completion_type = 'RELEASE'")
    s.q("INSERT INTO mux_ai (who) VALUES ('rel-1')")
    s.q("COMMIT")
    ok(gone(s.c, "SELECT 1") in (2006, 2013), "completion_type RELEASE: the session ends after COMMIT")
    s = Sess("release-word")
    s.q("BEGIN")
    s.q("INSERT INTO mux_ai (who) VALUES ('rel-2')")
    s.q("COMMIT WORK AND NO CHAIN RELEASE")
    ok(gone(s.c, "SELECT 1") in (2006, 2013), "COMMIT ... RELEASE: the session ends after it")
    s = Sess("release-no")
    s.q("SET completion_type = 2")
    s.q("BEGIN")
    s.q("INSERT INTO mux_ai (who) VALUES ('rel-3')")
    s.q("ROLLBACK NO RELEASE")
    s.q("SET completion_type = DEFAULT")
    s.q("COMMIT")
    is_(gone(s.c, "SELECT 1"), None, "ROLLBACK NO RELEASE, and COMMIT after completion_type DEFAULT: the session goes on")
    s.c.close()
    p = Sess("after-release")
    is_(one(p.c, "SELECT GROUP_CONCAT(who ORDER BY who) FROM mux_ai WHERE who LIKE 'rel-%'")[0],
        "rel-1,rel-2", "the released sessions' commits stand, the rolled back row is not there")
    p.check("after others were released")
    ok(not p.bad, "another session on the (only) connection goes on with the default state", repr(p.bad))
    p.c.close()


def dropped_schema():
    """DROP DATABASE of the session's own schema (main.mysqlslap): the
    session has none after it, as directly, and the shared connection is
    no longer taken to be in it: a session that logs in to the schema made
    again finds it selected (it got "No database selected")."""
    d = Sess("dropper")
    d.q("CREATE DATABASE mux_drop86")
    d.q("USE mux_drop86")
    d.q("DROP DATABASE mux_drop86")
    d.want["db"] = None
    d.check("after DROP DATABASE of its schema")
    ok(not d.bad, "DROP DATABASE of the session's schema: DATABASE() is NULL after it, as directly",
       repr(d.bad))
    d.q("CREATE DATABASE mux_drop86")
    d.q("CREATE TABLE mux_drop86.t (a INT)")
    e = Sess("back", db="mux_drop86")
    try:
        e.q("INSERT INTO t VALUES (1)")
        e.check("after an INSERT into its schema")
        ok(not e.bad, "a session that logs in to the schema made again has it selected", repr(e.bad))
    except pymysql.MySQLError as err:
        ok(False, "a session that logs in to the schema made again has it selected", repr(err))
    d.q("DROP DATABASE mux_drop86")
    d.c.close()
    e.c.close()


def charset_vars():
    """A variable of the character set family set on its own must not be
    reverted with SET @@session.x = DEFAULT when the connection passes to
    another session (that gives the server's global value, latin1 here):
    the node sends SET NAMES with the session's own character set."""
    for sql, key, val in (("SET character_set_results = latin1", "results", "latin1"),
                          ("SET collation_connection = utf8mb4_bin", "coll", "utf8mb4_bin")):
        y = Sess("fresh")
        x = Sess("setter")
        x.q(sql)
        x.want[key] = val
        got, _ = state_of(x.c)
        is_(got[key], val, "%s: the session sees it" % sql)
        y.check("after another session's " + sql)
        ok(not y.bad, "%s by one session: another session on the same connection keeps its "
           "own (handshake) value" % sql, "differences (got, want): %r" % y.bad)
        x.c.close()
        y.c.close()


def pinned_count():
    return metric(HPORT, "shoal_upstream_pinned_sessions")


def wait_pinned(n):
    return wait_for(lambda: pinned_count() == n, 5) and True


def pinned():
    q = Sess("plain")

    def qcheck(step):
        q.check(step)
        return not q.bad

    # user variable
    p = Sess("uv")
    p.q("SET @uv = 42")
    p.want["uv"] = 42
    for i in range(3):
        qcheck("uv %d" % i)
        p.check("uv %d" % i)
    ok(not p.bad, "SET @uv = 42: the session keeps seeing @uv = 42", repr(p.bad))
    ok(not q.bad, "another session meanwhile sees @uv NULL", repr(q.bad))
    is_(pinned_count(), 1, "the session with a user variable is pinned (pinned sessions 1)")
    ok(not (p.cids & q.cids), "... and the other session never ran on its connection",
       "%r %r" % (p.cids, q.cids))
    p.c.close()
    ok(wait_pinned(0), "pinned sessions back to 0 when it disconnects")
    qcheck("after uv closed")
    ok(not q.bad, "the next session on the pool still sees @uv NULL", repr(q.bad))

    # LOCK TABLES ... UNLOCK TABLES
    p = Sess("lock")
    p.q("LOCK TABLES mux_lk WRITE")
    _, cid_locked = state_of(p.c)
    for i in range(3):
        qcheck("lock %d" % i)
        p.q("INSERT INTO mux_lk VALUES (%d)" % i)
    is_(pinned_count(), 1, "LOCK TABLES pins the session (pinned sessions 1)")
    _, cid2 = state_of(p.c)
    is_(cid2, cid_locked, "the locking session stays on one connection")
    with q.c.cursor() as cur:
        cur.execute("SELECT IS_FREE_LOCK('nothing')")
    p.q("UNLOCK TABLES")
    ok(wait_pinned(0), "UNLOCK TABLES unpins it (pinned sessions 0)")
    is_(one(q.c, "SELECT COUNT(*) FROM mux_lk")[0], 3, "the other session reads the table after UNLOCK")
    p.c.close()

    # GET_LOCK
    p = Sess("getlock")
    is_(one(p.c, "SELECT GET_LOCK('mux86', 0)")[0], 1, "GET_LOCK('mux86') granted")
    _, pcid = state_of(p.c)
    is_(one(q.c, "SELECT IS_USED_LOCK('mux86')")[0], pcid,
        "another session sees the lock held by the first session's connection")
    o = Sess("other")   # GET_LOCK pins: a throwaway session tries it
    is_(one(o.c, "SELECT GET_LOCK('mux86', 0)")[0], 0, "... and cannot take it")
    o.c.close()
    wait_pinned(1)
    is_(pinned_count(), 1, "GET_LOCK pins the session (pinned sessions 1)")
    qcheck("getlock")
    is_(one(p.c, "SELECT RELEASE_LOCK('mux86')")[0], 1, "RELEASE_LOCK by the holder succeeds (same connection)")
    p.c.close()
    wait_pinned(0)

    # BACKUP STAGE: a backup lock the connection holds until it ends; the
    # connection must not go back to the pool holding it (a backup run
    # elsewhere would wait on it: conformance, main.backup_log)
    p = Sess("backup")
    p.q("BACKUP STAGE START")
    is_(pinned_count(), 1, "BACKUP STAGE pins the session (pinned sessions 1)")
    qcheck("backup")
    p.c.close()
    ok(wait_pinned(0), "pinned sessions back to 0 when the backup session disconnects")
    d = connect(MDB_PORT)
    try:
        with d.cursor() as cur:
            cur.execute("SET SESSION lock_wait_timeout = 5")
            cur.execute("BACKUP STAGE START")
            cur.execute("BACKUP STAGE END")
        ok(True, "a backup straight to MariaDB is not blocked by the node's connections")
    except pymysql.MySQLError as e:
        ok(False, "a backup straight to MariaDB is not blocked by the node's connections", repr(e))
    d.close()

    # temporary table
    p = Sess("temp")
    p.q("CREATE TEMPORARY TABLE mux_tmp (x INT)")
    p.q("INSERT INTO mux_tmp VALUES (1), (2)")
    qcheck("temp")
    is_(pinned_count(), 1, "a temporary table pins the session (pinned sessions 1)")
    try:
        q.q("SELECT * FROM mux_tmp")
        ok(False, "another session cannot see the temporary table")
    except pymysql.MySQLError as e:
        is_(e.args[0], 1146, "another session cannot see the temporary table (error 1146)")
    is_(one(p.c, "SELECT COUNT(*) FROM mux_tmp")[0], 2, "the creating session still has its temporary table")
    p.c.close()
    wait_pinned(0)

    # SQL_CALC_FOUND_ROWS / FOUND_ROWS, interleaved with the other session's
    p = Sess("found")
    p.q("SELECT SQL_CALC_FOUND_ROWS * FROM mux_cache LIMIT 1")
    q.q("SELECT SQL_CALC_FOUND_ROWS * FROM mux_lk WHERE x < 2 LIMIT 1")
    is_(one(p.c, "SELECT FOUND_ROWS()")[0], 3, "FOUND_ROWS() gives the session's own count (3)")
    is_(one(q.c, "SELECT FOUND_ROWS()")[0], 2, "... and the other session's its own (2)")

    # INSERT + LAST_INSERT_ID()
    with p.c.cursor() as cur:
        cur.execute("INSERT INTO mux_ai (who) VALUES ('p')")
        pid = cur.lastrowid
    with q.c.cursor() as cur:
        cur.execute("INSERT INTO mux_ai (who) VALUES ('q')")
        qid = cur.lastrowid
    is_(one(p.c, "SELECT LAST_INSERT_ID()")[0], pid, "LAST_INSERT_ID() is the session's own insert id")
    is_(one(q.c, "SELECT LAST_INSERT_ID()")[0], qid, "... for the other session too")

    # warnings
    p.q("SELECT CAST('12abc' AS SIGNED)")
    q.q("SELECT 1/0")
    pw = rows(p.c, "SHOW WARNINGS")
    qw = rows(q.c, "SHOW WARNINGS")
    ok(len(pw) == 1 and pw[0][1] == 1292, "SHOW WARNINGS gives the session's own warning (1292)", repr(pw))
    ok(len(qw) == 1 and qw[0][1] == 1365, "... and the other session's its own (1365)", repr(qw))
    p.c.close()

    # SQL-level PREPARE / EXECUTE
    p = Sess("prepare")
    p.q("PREPARE mux_s FROM 'SELECT ? + 1'")
    qcheck("prepare")
    o = Sess("other")   # EXECUTE pins: a throwaway session tries it
    try:
        o.q("EXECUTE mux_s USING 1")
        ok(False, "another session cannot EXECUTE the statement")
    except pymysql.MySQLError as e:
        is_(e.args[0], 1243, "another session cannot EXECUTE the statement (error 1243)")
    o.c.close()
    wait_pinned(1)
    is_(int(one(p.c, "EXECUTE mux_s USING 41")[0]), 42, "the preparing session EXECUTEs it (41 + 1)")
    is_(pinned_count(), 1, "SQL PREPARE pins the session (pinned sessions 1)")
    p.q("DEALLOCATE PREPARE mux_s")
    p.c.close()
    ok(wait_pinned(0), "pinned sessions 0 after the last pinned session left")

    # autocommit = 0: an implicit transaction, pinned; dropped with the session
    p = Sess("noautocommit")
    p.q("SET autocommit = 0")
    p.q("INSERT INTO mux_ai (who) VALUES ('ac0')")
    is_(pinned_count(), 1, "SET autocommit = 0 and an INSERT: the session is pinned")
    is_(one(q.c, "SELECT COUNT(*) FROM mux_ai WHERE who = 'ac0'")[0], 0,
        "another session does not see the uncommitted row")
    qcheck("autocommit 0")
    p.c.close()
    ok(wait_pinned(0), "the session leaves without COMMIT: unpinned")
    is_(one(q.c, "SELECT COUNT(*) FROM mux_ai WHERE who = 'ac0'")[0], 0, "... and its row was rolled back")
    p = Sess("autocommit-back")
    p.q("SET autocommit = 0")
    p.q("SELECT COUNT(*) FROM mux_ai")
    p.q("SET autocommit = 1")
    ok(wait_pinned(0), "SET autocommit = 1 again: unpinned")
    q.q("INSERT INTO mux_ai (who) VALUES ('q-ac')")
    is_(one(q.c, "SELECT @@autocommit, @@in_transaction")[0:2], (1, 0),
        "the other session runs with autocommit 1, no transaction open")
    p.c.close()
    d = connect(int(os.environ["MDB_PORT"]))
    is_(one(d, "SELECT COUNT(*) FROM mux_ai WHERE who = 'q-ac'")[0], 1,
        "its INSERT is committed (seen straight on MariaDB)")
    d.close()
    ok(not q.bad, "the plain session saw the defaults after every step", repr(q.bad[:4]))
    q.c.close()


run("session state (%s)" % MODE, carried if MODE == "carried" else pinned)
