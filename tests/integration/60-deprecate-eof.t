#!/usr/bin/env bash
# 60-deprecate-eof: raw protocol responses, byte for byte (sequence ids
# included), straight from MariaDB and through the node, for a list of
# COM_QUERY / COM_INIT_DB / COM_PING / COM_FIELD_LIST / COM_STMT_* commands,
# with CLIENT_DEPRECATE_EOF, without it, and with minimal capabilities.
# The handshake itself is not compared (connection ids and nonces differ),
# nor the statement id in COM_STMT_PREPARE responses (see below).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# node starts, 2 + 2 + 1 checks of the three capability variants (a
# differing response adds a failed check of its own), node still running
plan 7
load_types || bail "load types.sql"
if shoal_start node; then
  ok "node starts (port $node_PORT)"
else
  bail "node starts (port $node_PORT)"
fi

NODE_PORT=$node_PORT "$PY" - <<'PY' || not_ok "python part crashed"
import os, struct
import rawmysql as r
from taplib import ok, diag, run, done_testing

DPORT, VPORT = int(os.environ["MDB_PORT"]), int(os.environ["NODE_PORT"])

Q = lambda sql: ("query", sql)
steps = [
    Q("CREATE TEMPORARY TABLE t60 (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20)) CHARACTER SET utf8mb4"),
    Q("SELECT * FROM shoal_types ORDER BY id"),
    Q("SELECT id, c_varchar, c_json FROM shoal_types WHERE 1 = 0"),
    Q("SELECT 1; SELECT 'two', NULL"),
    Q("SELECT 1; SELECT * FROM no_such_table; SELECT 3"),
    Q("INSERT INTO t60 (v) VALUES ('a'); SELECT LAST_INSERT_ID(); UPDATE t60 SET v = 'z'"),
    Q("SELECT * FROM no_such_table"),
    Q("SELEC 1"),
    Q("INSERT INTO t60 (v) VALUES ('a'), ('b 🐟'), ('c')"),
    Q("UPDATE t60 SET v = 'changed' WHERE id >= 2"),
    Q("DELETE FROM t60 WHERE id = 3"),
    Q("SELECT * FROM t60 ORDER BY id"),
    Q("SET NAMES utf8mb4"),
    Q("SET NAMES latin1"),
    Q("SELECT c_varchar, 'é' FROM shoal_types WHERE id = 3"),
    Q("SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci"),
    Q("SET autocommit = 0"),
    Q("INSERT INTO t60 (v) VALUES ('tx')"),
    Q("ROLLBACK"),
    Q("SET autocommit = 1"),
    Q("BEGIN"),
    Q("SELECT COUNT(*) FROM t60"),
    Q("COMMIT"),
    Q("USE sbtest"),
    Q("SELECT DATABASE()"),
    Q("USE shoaltest"),
    Q("SET time_zone = '+01:00'"),
    Q("SELECT c_timestamp FROM shoal_types ORDER BY id"),
    Q("SELECT CAST('abc' AS INTEGER), 1 / 0"),
    Q("SHOW WARNINGS"),
    Q("SELECT REPEAT('x', 300000), REPEAT('y', 20000000)"),
    Q("SHOW WARNINGS"),
    Q("DO 1"),
    Q("SELECT seq, MD5(seq) FROM seq_1_to_5000"),
    ("init_db", "sbtest"),
    Q("SELECT DATABASE()"),
    ("init_db", "no_such_db"),
    ("init_db", "shoaltest"),
    ("ping", None),
    ("field_list", "shoal_types"),
    ("prepare", "SELECT id, c_int, c_varchar, c_datetime, c_decimal, c_blob, c_bit64, c_json FROM shoal_types WHERE id > ? ORDER BY id"),
    ("execute", [0]),
    ("execute", [3]),
    ("execute", ["1"]),
    ("close", None),
    ("prepare", "SELECT * FROM shoal_types WHERE id = ?"),
    ("execute", [4]),
    ("execute", [2]),
    ("execute", [None]),
    ("close", None),
    ("prepare", "INSERT INTO t60 (v) VALUES (?)"),
    ("execute", ["prep 🐟"]),
    ("execute", [None]),
    ("execute", [b"\x00\x01"]),
    ("close", None),
    ("prepare", "SELEC ?"),
    ("prepare", "SELECT ? + ?, ?"),
    ("execute", [1, 2.5, "x"]),
    ("execute", [1 << 40, -1, None]),
    ("prepare", "DO ?"),
    ("execute", [1]),
    Q("SELECT 'after prepares'"),
    ("ping", None),
]

def do(c, step, state):
    kind, arg = step
    if kind == "query":
        return c.query(arg)
    if kind == "init_db":
        return c.command(r.COM_INIT_DB, arg)
    if kind == "ping":
        return c.command(r.COM_PING, kind="one")
    if kind == "field_list":
        return c.command(r.COM_FIELD_LIST, arg.encode() + b"\0", kind="fields")
    if kind == "prepare":
        sid, ncols, nparams, pkts = c.prepare(arg)
        if sid is not None:
            state.append(sid)
            # Statement ids are not comparable: MariaDB numbers them per
            # server thread, and threads are reused, so even two direct
            # connections get different ids. Mask the id (bytes 1-4).
            seq, p = pkts[0]
            pkts = [(seq, p[:1] + b"<id>" + p[5:])] + pkts[1:]
        return pkts
    if kind == "execute":
        return c.execute(state[-1], arg)
    if kind == "close":
        c.close_stmt(state.pop())
        return c.command(r.COM_PING, kind="one")   # nothing to compare: ping after
    raise ValueError(kind)

variants = [
    ("DEPRECATE_EOF", r.DEFAULT_CAPS),
    ("classic EOF", r.BASE_CAPS),
    ("minimal capabilities", r.CLIENT_LONG_PASSWORD | r.CLIENT_PROTOCOL_41 | r.CLIENT_SECURE_CONNECTION
                            | r.CLIENT_PLUGIN_AUTH | r.CLIENT_TRANSACTIONS),
]
for vname, caps in variants:
    def variant():
        d = r.connect(DPORT, caps=caps)
        v = r.connect(VPORT, caps=caps)
        sd, sv = [], []
        direct_err = []
        same = 0
        diffs = []
        for i, step in enumerate(steps):
            try:
                pd = do(d, step, sd)
            except Exception as e:
                pd = [("exception", repr(e))]
            try:
                pv = do(v, step, sv)
            except Exception as e:
                pv = [("exception", repr(e))]
            label = "%s %s" % (step[0], (repr(step[1])[:70]))
            if pd and not isinstance(pd[0][0], str) and pd[0][1][:1] == b"\xff":
                direct_err.append((label, pd))
            if pd == pv:
                same += 1
            else:
                diffs.append(label)
                if isinstance(pv[0][0], str) or isinstance(pd[0][0], str):
                    diag_text = "direct: %r\nvia: %r" % (pd[:3], pv[:3])
                else:
                    diag_text = r.first_difference(pd, pv)
                ok(False, "[%s] %s: responses differ" % (vname, label), diag_text)
                # a desynchronised stream makes everything after it differ
                if any(isinstance(x[0], str) for x in pv):
                    ok(False, "[%s] via connection broken after %s; remaining steps not run" % (vname, label))
                    break
        if caps & r.CLIENT_MULTI_STATEMENTS:
            # guard against comparing two identical failures
            unexpected = [lbl for lbl, pk in direct_err if not any(w in lbl for w in ("no_such", "SELEC ", "nope"))]
            ok(not unexpected, "[%s] direct responses are errors only where errors are expected" % vname,
               "unexpected errors: %s" % ", ".join(unexpected[:8]))
        ok(not diffs and same == len(steps),
           "[%s] %d of %d command responses byte-identical" % (vname, same, len(steps)),
           "differing: %s" % ", ".join(diffs[:10]))
        d.close()
        v.close()
    run("[%s] runs" % vname, variant)
done_testing(always_zero=True)
PY
check "node still running" shoal_alive node
done_testing
