"""79-consistency-more: the python part of tests/integration/79-consistency-more.t.

Environment: BL_PORT (a MariaDB with its binlog on), NB (a node in binlog
mode on it), NW (a node in writes mode on it).
"""
import os
import time

import cache_proto as cp
import rawmysql as r
from taplib import done_testing, is_, ok, run

BL = int(os.environ["BL_PORT"])
NB = int(os.environ["NB"])
NW = int(os.environ["NW"])


def conn(port):
    return r.connect(port, timeout=30)


def val(c, sql):
    return cp.scalar(c, sql)


def do(c, *sqls):
    for s in sqls:
        cp.must_ok(c, s)


hits = cp.cache_hits
warm = cp.warm


def poll(c, sql, want, timeout=5.0):
    return cp.poll(c, sql, want, timeout, 0.005)


def poll_fn(fn, want, timeout=5.0):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if fn() == want:
            return time.time() - t0
        time.sleep(0.02)
    return None


D = conn(BL)


def read_uncommitted(port, name, t):
    do(D, "CREATE TABLE %s (id INT PRIMARY KEY, v INT) ENGINE=InnoDB" % t,
       "INSERT INTO %s VALUES (1, 1)" % t)
    time.sleep(0.3)  # past the binlog's settle window: a read now may be stored
    sel = "SELECT v FROM %s WHERE id = 1" % t
    w = conn(BL)
    do(w, "BEGIN", "UPDATE %s SET v = 99 WHERE id = 1" % t)
    ru = conn(port)
    do(ru, "SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED")
    got = (val(ru, sel), val(ru, sel))
    is_(got, ("99", "99"), "%s: a READ UNCOMMITTED session reads the uncommitted row, as directly" % name)
    dest, reason = cp.explain(ru)
    ok(dest == "upstream" and "READ UNCOMMITTED" in reason,
       "  ... from the upstream, saying why", repr((dest, reason)))
    is_(val(conn(port), sel), "1", "  ... another session does not get the uncommitted row")
    do(w, "ROLLBACK")
    time.sleep(0.1)
    is_(val(conn(port), sel), "1", "  ... nor does any session after the ROLLBACK")
    do(ru, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    is_(warm(ru, sel), "1", "  ... back at REPEATABLE READ the session is served from the cache again")


def autocommit_off(port, name, t):
    """A transaction under autocommit = 0 (sys_vars.autocommit_func): the
    status after its COMMIT still says autocommit off, and the node took
    the transaction to be open for good: another session's answer, read
    while it was open, was served after the COMMIT."""
    do(D, "CREATE TABLE %s (id INT PRIMARY KEY, v VARCHAR(8)) ENGINE=InnoDB" % t)
    time.sleep(0.3)  # past the binlog's settle window: a read now may be stored
    sel = "SELECT COUNT(*) FROM %s WHERE id > 0" % t
    w = conn(port)
    do(w, "SET autocommit = 0", "INSERT INTO %s VALUES (1, 'a')" % t)
    rd = conn(port)
    is_(warm(rd, sel), "0", "%s: another session reads 0 rows while the transaction is open (cached)" % name)
    do(w, "COMMIT")
    is_(val(rd, sel), "1", "  ... and the row at once after its COMMIT, autocommit still 0")
    do(w, "INSERT INTO %s VALUES (2, 'b')" % t)
    is_(warm(rd, sel), "1", "  ... the next transaction's row is not seen before its COMMIT")
    do(w, "ROLLBACK")
    do(w, "INSERT INTO %s VALUES (3, 'c')" % t, "COMMIT")
    is_(val(rd, sel), "2", "  ... and after a ROLLBACK and another COMMIT, that one's row")


def one_shot():
    t = "ru_once"
    do(D, "CREATE TABLE %s (id INT PRIMARY KEY, v INT) ENGINE=InnoDB" % t,
       "INSERT INTO %s VALUES (1, 1)" % t)
    time.sleep(0.3)  # past the binlog's settle window: a read now may be stored
    sel = "SELECT v FROM %s WHERE id = 1" % t
    w = conn(BL)
    do(w, "BEGIN", "UPDATE %s SET v = 99 WHERE id = 1" % t)
    s = conn(NB)
    do(s, "SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED")
    is_(val(s, sel), "99", "SET TRANSACTION ... READ UNCOMMITTED (the next transaction only): "
        "the next read sees the uncommitted row, as directly")
    is_(val(conn(NB), sel), "1", "  ... it was not stored: another session gets the committed row")
    is_(val(s, sel), "1", "  ... the session's read after it sees committed rows again, as directly")
    is_(warm(s, sel), "1", "  ... and is answered from the cache again")
    do(w, "ROLLBACK")


def temporary_sequence():
    do(D, "CREATE TABLE qs (id INT)", "INSERT INTO qs VALUES (1), (2)")
    sel = "SELECT COUNT(*) FROM qs"
    o = conn(NB)
    warm(o, sel)
    s = conn(NB)
    do(s, "CREATE TEMPORARY SEQUENCE qs")
    is_(val(s, sel), "1", "a session with a temporary sequence qs gets the sequence's row, not the cached "
        "rows of the table qs")
    is_(cp.explain(s), ("upstream", "reads a temporary table"), "  ... from the upstream, saying why")
    other = "SELECT COUNT(*) FROM qs WHERE 1 = 1"
    val(s, other)
    is_(val(o, other), "2", "  ... its row is never stored: another session gets the table's rows")
    do(s, "DROP TEMPORARY SEQUENCE qs")
    is_(val(s, sel), "2", "after DROP TEMPORARY SEQUENCE the session reads the table again")


def executable_comments():
    do(D, "CREATE TABLE va (id INT PRIMARY KEY)", "CREATE TABLE vb (id INT PRIMARY KEY)",
       "INSERT INTO va VALUES (1), (2)", "INSERT INTO vb VALUES (1), (2)")
    c, w = conn(NW), conn(NW)
    # MariaDB skips /*!50700 .. /*!99999 (MySQL 5.7+ runs them) and versions
    # above its own: which table such a text reads depends on the server
    sel = "SELECT COUNT(*) FROM /*!99999 vb */ va"
    val(c, sel)
    is_((val(c, sel), cp.explain(c)), ("2", ("upstream", "cannot determine the tables")),
        "a read with an executable comment the server skips (/*!99999) is not cached (it read vb, not va)")
    val(c, "SELECT COUNT(*) FROM va /*!50700 JOIN vb */")
    is_(cp.explain(c), ("upstream", "cannot determine the tables"),
        "  ... nor one with /*!50700 (run by MySQL 5.7+, skipped by MariaDB)")
    sel2 = "SELECT COUNT(*) FROM va WHERE id > 0"
    warm(c, sel2)
    do(w, "INSERT INTO /*!99999 vb */ va VALUES (3)")
    is_(val(c, sel2), "3", "writes mode: a write with such a comment invalidates the table it writes "
        "(it invalidated vb)")
    b, bw = conn(NB), conn(NB)
    warm(b, sel2)
    do(bw, "INSERT INTO /*!99999 vb */ va VALUES (4)")
    is_(val(b, sel2), "4", "binlog mode: ... seen at once too (its OK waits for the binlog)")
    sel3 = "SELECT COUNT(*) FROM /*!40101 vb, */ va"
    is_(warm(c, sel3), "8", "a comment every server runs (/*!40101) is read as code: cached")
    do(w, "INSERT INTO vb VALUES (3)")
    is_(val(c, sel3), "12", "  ... a write to the table named in it is seen at once")


def session_functions():
    do(D, "CREATE TABLE cr (id INT)", "INSERT INTO cr VALUES (1)",
       "CREATE TABLE dt (id INT, ts TIMESTAMP(6) DEFAULT CURRENT_TIMESTAMP(6))", "INSERT INTO dt (id) VALUES (1)")
    c = conn(NB)
    sel = "SELECT CURRENT_ROLE FROM cr"
    val(c, sel)
    val(c, sel)
    is_(cp.explain(c), ("upstream", "session-specific function"), "the bare CURRENT_ROLE is not cached")
    do(D, "CREATE ROLE qa79r", "GRANT qa79r TO 'app'@'%'", "SET DEFAULT ROLE qa79r FOR 'app'@'%'")
    try:
        t = poll_fn(lambda: val(conn(NB), sel), "qa79r")
        ok(t is not None, "  ... after SET DEFAULT ROLE on the upstream a new session gets its new role, as "
           "directly (the binlog brings the change, new logins use new upstream connections)")
    finally:
        do(D, "SET DEFAULT ROLE NONE FOR 'app'@'%'")
    sel = "SELECT DEFAULT(ts) FROM dt"
    a = val(c, sel)
    time.sleep(0.02)
    b = val(c, sel)
    ok(a != b, "DEFAULT(ts) of a CURRENT_TIMESTAMP(6) column is not cached: each read gets its own time",
       repr((a, b)))


def sequence_reads():
    """A sequence's row changes with every NEXT VALUE, also through a column's
    DEFAULT (an INSERT, even a SELECT DEFAULT(col)) that no text shows: a read
    of a sequence, or of a view over one, is never cached, in any mode."""
    do(D, "CREATE SEQUENCE qseq CACHE 2", "CREATE TABLE qdef (a INT DEFAULT NEXT VALUE FOR qseq, b INT)",
       "INSERT INTO qdef (b) VALUES (1)", "CREATE VIEW qseq_v AS SELECT next_not_cached_value FROM qseq")
    sel = "SELECT next_not_cached_value FROM qseq"
    writes = (("SELECT NEXTVAL(qseq)", "SELECT NEXTVAL(s)"), ("SELECT SETVAL(qseq, 100)", "SELECT SETVAL(s, n)"),
              ("DO SETVAL(qseq, 200)", "DO SETVAL(s, n)"), ("DO NEXTVAL(qseq)", "DO NEXTVAL(s)"),
              ("INSERT INTO qdef (b) VALUES (2)", "an INSERT whose column DEFAULT is NEXT VALUE FOR s"),
              ("SELECT DEFAULT(a) FROM qdef", "SELECT DEFAULT(col) of such a column"))
    for port, name in ((NW, "writes mode"), (NB, "binlog mode")):
        c, w = conn(port), conn(port)
        h0 = hits(c)
        val(c, sel)
        val(c, sel)
        ok(hits(c) == h0, name + ": a read of a sequence is not answered from the cache")
        is_(cp.explain(c), ("upstream", "shoaltest.qseq is a sequence: every NEXT VALUE changes it, a column's "
                            "DEFAULT too"), "  ... and EXPLAIN LAST STATEMENT says why")
        val(c, "SELECT * FROM qseq_v")
        is_(cp.explain(c)[0], "upstream", "  a read of a view over a sequence is not cached either")
        ok("sequence" in cp.explain(c)[1], "  ... naming the sequence", cp.explain(c)[1])
        for stmt, what in writes:
            if stmt.startswith("SELECT"):
                val(w, stmt)
            else:
                do(w, stmt)
            is_(val(c, sel), val(D, sel), "  %s through the node: the sequence is read fresh" % what)


def trigger_temporary():
    do(D, "CREATE TABLE tt2 (id INT)", "INSERT INTO tt2 VALUES (1), (2)", "CREATE TABLE fired (x INT)",
       "CREATE TABLE quiet (x INT)",
       "CREATE FUNCTION mk_tt2() RETURNS INT MODIFIES SQL DATA "
       "BEGIN CREATE TEMPORARY TABLE IF NOT EXISTS tt2 (id INT); RETURN 1; END",
       "CREATE FUNCTION plain_fn() RETURNS INT NO SQL RETURN 1",
       "CREATE TRIGGER fired_bi BEFORE INSERT ON fired FOR EACH ROW SET NEW.x = mk_tt2()",
       "CREATE TRIGGER quiet_bi BEFORE INSERT ON quiet FOR EACH ROW SET NEW.x = plain_fn()")
    sel = "SELECT COUNT(*) FROM tt2"
    for port, name in ((NB, "binlog mode"), (NW, "writes mode")):
        s = conn(port)
        warm(s, sel)
        do(s, "INSERT INTO quiet VALUES (0)")
        is_(warm(s, sel), "2", "%s: a write firing a trigger whose routine creates no temporary table: "
            "the session is still served from the cache" % name)
        do(s, "INSERT INTO fired VALUES (0)")
        is_((val(s, sel), cp.explain(s)[0]), ("0", "upstream"),
            "  ... one firing a trigger whose routine creates a temporary table tt2: the session gets its "
            "own tt2, not the cached rows of the table tt2")


def load_data_statement():
    do(D, "CREATE TABLE ld (id INT, v INT)", "INSERT INTO ld VALUES (0, 0)")
    time.sleep(0.3)
    sel = "SELECT COUNT(*) FROM ld"
    b = conn(NB)
    warm(b, sel)
    s = conn(BL)
    do(s, "SET SESSION binlog_format = 'STATEMENT'",
       "LOAD DATA INFILE '%s' INTO TABLE ld" % os.environ["LD_FILE"])
    ok(poll(b, sel, "4") is not None, "a LOAD DATA logged in statement format (Begin_load_query, which "
       "Connector/C cannot parse) is seen through the binlog")
    is_(warm(b, sel), "4", "  ... the stream goes on after it: reads are served from the cache again")
    do(D, "INSERT INTO ld VALUES (9, 9)")
    ok(poll(b, sel, "5") is not None, "  ... and a later direct write is seen")


run("READ UNCOMMITTED (binlog mode)", read_uncommitted, NB, "binlog mode", "ru_b")
run("READ UNCOMMITTED (writes mode)", read_uncommitted, NW, "writes mode", "ru_w")
run("one-shot READ UNCOMMITTED", one_shot)
run("autocommit = 0 (binlog mode)", autocommit_off, NB, "binlog mode", "ac0_b")
run("autocommit = 0 (writes mode)", autocommit_off, NW, "writes mode", "ac0_w")
run("temporary sequence", temporary_sequence)
run("executable comments", executable_comments)
run("session functions", session_functions)
run("sequence reads", sequence_reads)
run("LOAD DATA in statement format", load_data_statement)
run("a trigger's routine creates a temporary table", trigger_temporary)
done_testing(always_zero=True)
