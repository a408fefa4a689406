#!/usr/bin/env bash
# 45-grants: grant-correct cache hits against a real MariaDB, in both cache
# scopes (user: results per upstream user; shared: shared results, each
# user's hit allowed by its own verdict). A privileged user fills the cache
# first; then users with table-, column- and database-level grants, views
# (SQL SECURITY DEFINER and INVOKER, and one whose rows depend on USER()),
# roles (granted but not active, a default role, SET ROLE) run the same
# queries through the node, twice (a miss or a check, then a hit), and must
# get exactly what they get directly: the rows, or the same error. Then
# REVOKE while an entry is cached: made directly (the verdict expires after
# grant_check_ms) and through the node (forgotten at once).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

PER_SCOPE=14
plan $((2 * PER_SCOPE))
if fake_mode; then
  skip_n $((2 * PER_SCOPE)) "grants" "fake mode (node only)"
  exit 0
fi

work="$BUILD_TEST/grants"
rm -rf "$work"
mkdir -p "$work"

USERS="ug_all ug_tab ug_col ug_db ug_roled ug_defrole ug_rev"
drop_all() {
  local u
  for u in $USERS; do mdb_root -e "DROP USER IF EXISTS '$u'@'%'"; done
  mdb_root -e "DROP ROLE IF EXISTS ug_role; DROP DATABASE IF EXISTS ug; DROP DATABASE IF EXISTS ug2"
}
drop_all
on_exit drop_all
mdb_root <<'SQL'
CREATE DATABASE ug;
CREATE DATABASE ug2;
CREATE TABLE ug.t (id INT PRIMARY KEY, v VARCHAR(20));
INSERT INTO ug.t VALUES (1, 't1'), (2, 't2');
CREATE TABLE ug.secret (id INT PRIMARY KEY, s VARCHAR(20));
INSERT INTO ug.secret VALUES (1, 'the secret');
CREATE TABLE ug.cols (id INT PRIMARY KEY, pub VARCHAR(20), priv VARCHAR(20));
INSERT INTO ug.cols VALUES (1, 'public', 'private');
CREATE TABLE ug.owned (owner VARCHAR(64), v VARCHAR(20));
INSERT INTO ug.owned VALUES ('ug_tab', 'mine: ug_tab'), ('app', 'mine: app'), ('ug_col', 'mine: ug_col');
CREATE TABLE ug2.t2 (id INT PRIMARY KEY, v VARCHAR(20));
INSERT INTO ug2.t2 VALUES (1, 'in ug2');
CREATE DEFINER = 'root'@'localhost' SQL SECURITY DEFINER VIEW ug.v_def AS SELECT id, s FROM ug.secret;
CREATE DEFINER = 'root'@'localhost' SQL SECURITY INVOKER VIEW ug.v_inv AS SELECT id, s FROM ug.secret;
CREATE DEFINER = 'root'@'localhost' SQL SECURITY DEFINER VIEW ug.v_mine AS
  SELECT v FROM ug.owned WHERE owner = SUBSTRING_INDEX(USER(), '@', 1);
CREATE ROLE ug_role;
GRANT SELECT ON ug.secret TO ug_role;
CREATE USER 'ug_all'@'%' IDENTIFIED BY 'ug_allpw';
GRANT SELECT ON ug.* TO 'ug_all'@'%';
GRANT SELECT ON ug2.* TO 'ug_all'@'%';
CREATE USER 'ug_tab'@'%' IDENTIFIED BY 'ug_tabpw';
CREATE USER 'ug_col'@'%' IDENTIFIED BY 'ug_colpw';
CREATE USER 'ug_db'@'%' IDENTIFIED BY 'ug_dbpw';
CREATE USER 'ug_roled'@'%' IDENTIFIED BY 'ug_roledpw';
CREATE USER 'ug_defrole'@'%' IDENTIFIED BY 'ug_defrolepw';
CREATE USER 'ug_rev'@'%' IDENTIFIED BY 'ug_revpw';
GRANT SELECT ON ug.t TO 'ug_tab'@'%';
GRANT SELECT ON ug.v_def TO 'ug_tab'@'%';
GRANT SELECT ON ug.v_inv TO 'ug_tab'@'%';
GRANT SELECT ON ug.v_mine TO 'ug_tab'@'%', 'ug_col'@'%';
GRANT SELECT (id, pub) ON ug.cols TO 'ug_col'@'%';
GRANT SELECT ON ug2.* TO 'ug_db'@'%';
GRANT ug_role TO 'ug_roled'@'%';
GRANT ug_role TO 'ug_defrole'@'%';
SET DEFAULT ROLE ug_role FOR 'ug_defrole'@'%';
GRANT SELECT ON ug.t TO 'ug_rev'@'%';
SQL

allowed="ug_all:ug_allpw,ug_tab:ug_tabpw,ug_col:ug_colpw,ug_db:ug_dbpw,ug_roled:ug_roledpw,ug_defrole:ug_defrolepw,ug_rev:ug_revpw"
for scope in user shared; do
  AP=$(free_port)
  if ! shoal_start "g_$scope" --auto-cache --cache-ttl-ms 60000 --grant-check-ms 400 --cache-scope "$scope" \
    --allowed-users "$allowed" --admin-address "127.0.0.1:$AP" --data-dir "$work/$scope"; then
    for i in $(seq $PER_SCOPE); do not_ok "node (cache_scope=$scope) starts"; done
    continue
  fi
  PORT=$(eval echo "\$g_${scope}_PORT") APORT=$AP SCOPE=$scope "$PY" - <<'PY' || not_ok "python part ($scope) crashed"
import os, time
from taplib import ok, is_, done_testing
from users_help import connect, once, run, norm, root, admin, MDB_PORT

port, aport, scope = int(os.environ["PORT"]), int(os.environ["APORT"]), os.environ["SCOPE"]
PW = lambda u: u + "pw"

def via(user, sql, db=None):
    return norm(once(port, user, PW(user) if user != "app" else "pw", sql, db))

def direct(user, sql):
    return norm(once(MDB_PORT, user, PW(user) if user != "app" else "pw", sql))

def stats():
    rows = admin(aport, "SELECT * FROM stats.stats_shoal_global")
    d = dict(rows)
    return (int(d["Query_Cache_count_GET_OK"]), int(d["Query_Cache_grant_checks"]),
            int(d["Query_Cache_grant_denied"]))

Q = ["SELECT id, v FROM ug.t ORDER BY id",
     "SELECT id, s FROM ug.secret",
     "SELECT id, pub FROM ug.cols",
     "SELECT id, pub, priv FROM ug.cols",
     "SELECT id, v FROM ug2.t2",
     "SELECT id, s FROM ug.v_def",
     "SELECT id, s FROM ug.v_inv"]
if scope == "user":
    # rows that depend on the user: never shared (docs/security.md)
    Q.append("SELECT v FROM ug.v_mine")

# privileged users fill the cache (in no schema, as the others, and in
# schema ug: the schema is part of the key)
for q in Q:
    via("ug_all", q)
    via("ug_all", q)
    via("app", q, "ug")

# ug_tab's first reads, counted: a hit of app's entry only when shared
s0 = stats()
t0 = time.monotonic()
via("ug_tab", Q[0], "ug")
s1 = stats()
via("ug_tab", Q[0], "ug")
t2 = time.monotonic()
s2 = stats()
via("ug_tab", Q[1], "ug")
s3 = stats()
t3 = time.monotonic()
print("# %s: ug_tab's three reads and the counters took %.3f s" % (scope, t3 - t0))
got = (s1[0] - s0[0], s2[0] - s1[0], s3[1] - s0[1] > 0, s3[2] - s2[2] > 0)
want = (1, 1, True, True) if scope == "shared" else (0, 1, False, False)
if scope == "user" and t3 - t0 >= 0.4:
    # the counters were read grant_check_ms (400 ms) or more after the
    # fill's verdict (a loaded machine): a check was then due, and may
    # have run before the last read of the counters
    got = got[:2] + (False,) + got[3:]
is_(got, want, "%s: ug_tab's reads (hits of its 1st and 2nd read, grant checked, refused)" % scope)

# every user, every query: twice through the node = directly (when shared,
# the first of each is a hit of ug_all's entry, allowed or refused by the
# user's own check)
for u in ["ug_tab", "ug_col", "ug_db", "ug_roled", "ug_defrole"]:
    d = [(q, direct(u, q)) for q in Q]
    v = [(q, via(u, q)) for q in Q] + [(q, via(u, q)) for q in Q]
    diffs = [(q, a, b) for (q, a), (_, b) in zip(d + d, v) if a != b]
    ok(not diffs, "%s: %s gets exactly what it gets directly (%d queries, twice)" % (scope, u, len(Q)),
       *["%s: direct %r, node %r" % x for x in diffs[:4]])

# SET ROLE: the session's privileges become its own
c = connect(port, "ug_roled", "ug_roledpw")
r1 = norm(run(c, Q[1]))
ok(r1[0] == "err" and r1[1] == 1142, "%s: ug_roled without its role: 1142 on the secret" % scope, repr(r1))
run(c, "SET ROLE ug_role")
is_(run(c, Q[1]), ("rows", [[1, "the secret"]]), "%s:   after SET ROLE: the rows, as directly" % scope)
is_(run(c, "EXPLAIN LAST STATEMENT"), ("rows", [["upstream", "SET ROLE: the session has its own privileges"]]),
    "%s:   and the cache is not used for that session" % scope)
c.close()

# REVOKE while an entry is cached
q = Q[0]
via("ug_rev", q)
c = connect(port, "ug_rev", "ug_revpw")
run(c, q)
is_(run(c, "EXPLAIN LAST STATEMENT"), ("rows", [["readyset_shallow", "ok"]]), "%s: ug_rev's read is cached" % scope)
c.close()
root("REVOKE SELECT ON ug.t FROM 'ug_rev'@'%'")
time.sleep(1.5)   # > grant_check_ms: the verdict has expired
r = via("ug_rev", q)
is_(r, direct("ug_rev", q), "%s: REVOKE made directly: after grant_check_ms the node refuses too" % scope)
root("GRANT SELECT ON ug.t TO 'ug_rev'@'%'")
time.sleep(1.5)
is_(via("ug_rev", q), ("rows", [[1, "t1"], [2, "t2"]]), "%s:   GRANT again: the rows again" % scope)
once(port, "app", "pw", "REVOKE SELECT ON ug.t FROM 'ug_rev'@'%'")
r = via("ug_rev", q)
ok(r[0] == "err" and r[1] == 1142, "%s: REVOKE through the node: refused at once" % scope, repr(r))
once(port, "app", "pw", "GRANT SELECT ON ug.t TO 'ug_rev'@'%'")
is_(via("ug_rev", q), ("rows", [[1, "t1"], [2, "t2"]]), "%s:   GRANT through the node: the rows at once" % scope)
done_testing(always_zero=True)
PY
  shoal_stop "g_$scope"
done
done_testing
