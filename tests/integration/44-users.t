#!/usr/bin/env bash
# 44-users: each client login acts upstream as itself, against a real
# MariaDB: allowed_users (clear password) and the admin's users table (only
# the password hash: the node logs in upstream with the SHA1(password) the
# client's own login proves); default_schema; max_connections (ERR 1040
# naming the user); 1045 for unknown users and wrong passwords, as MariaDB
# says it; LOAD USERS and SIGHUP without a restart; a removed or deactivated
# user's sessions end at their next command and its idle upstream connections
# close; a password changed upstream; an ed25519 upstream user; the monitor
# user acting as nobody else; shared_upstream_user (the old behaviour, with a
# warning); two users with different default schemas on one pool of one
# connection, in both modes.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

plan 45
if fake_mode; then
  skip_n 45 "users" "fake mode (node only)"
  exit 0
fi

work="$BUILD_TEST/users"
rm -rf "$work"
mkdir -p "$work"

USERS="uu_conf uu_pw uu_adm uu_cap uu_s1 uu_s2 uu_ed uu_ed2"
drop_users() {
  local u
  for u in $USERS; do mdb_root -e "DROP USER IF EXISTS '$u'@'%'"; done
  mdb_root -e "DROP DATABASE IF EXISTS uu_a; DROP DATABASE IF EXISTS uu_b"
}
drop_users
on_exit drop_users
mdb_root <<'SQL'
CREATE DATABASE uu_a;
CREATE DATABASE uu_b;
CREATE TABLE uu_a.t (id INT PRIMARY KEY, v VARCHAR(20));
INSERT INTO uu_a.t VALUES (1, 'in uu_a');
CREATE TABLE uu_b.t (id INT PRIMARY KEY, v VARCHAR(20));
INSERT INTO uu_b.t VALUES (1, 'in uu_b');
CREATE USER 'uu_conf'@'%' IDENTIFIED BY 'confpw1';
CREATE USER 'uu_pw'@'%' IDENTIFIED BY 'oldpw';
CREATE USER 'uu_adm'@'%' IDENTIFIED BY 'admpw';
CREATE USER 'uu_cap'@'%' IDENTIFIED BY 'cappw';
CREATE USER 'uu_s1'@'%' IDENTIFIED BY 's1pw';
CREATE USER 'uu_s2'@'%' IDENTIFIED BY 's2pw';
GRANT SELECT ON uu_a.* TO 'uu_conf'@'%', 'uu_pw'@'%', 'uu_adm'@'%', 'uu_cap'@'%', 'uu_s1'@'%', 'uu_s2'@'%';
GRANT SELECT ON uu_b.* TO 'uu_s1'@'%', 'uu_s2'@'%';
CREATE USER IF NOT EXISTS 'monitor'@'%' IDENTIFIED BY 'monitor';
SQL
# an ed25519 user needs the clear password upstream (skipped without the plugin)
ED=0
if mdb_root -e "INSTALL SONAME 'auth_ed25519'" 2>/dev/null || mdb_root -e "SELECT 1 FROM information_schema.PLUGINS WHERE PLUGIN_NAME='ed25519' AND PLUGIN_STATUS='ACTIVE'" -N 2>/dev/null | grep -q 1; then
  mdb_root -e "CREATE USER 'uu_ed'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('edpw'); CREATE USER 'uu_ed2'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('ed2pw'); GRANT SELECT ON uu_a.* TO 'uu_ed'@'%', 'uu_ed2'@'%'" && ED=1
fi

conf="$work/shoal.conf"
write_conf() { printf 'auto_cache = true\nallowed_users = %s\n' "$1" >"$conf"; }
write_conf "uu_conf:confpw1, uu_pw:oldpw"
APORT=$(free_port) HPORT=$(free_port)
if ! shoal_start main --config "$conf" --admin-address "127.0.0.1:$APORT" --metrics-address "127.0.0.1:$HPORT" \
  --data-dir "$work/d"; then
  for i in $(seq 45); do not_ok "node starts"; done
  exit 1
fi

PORT=$main_PORT APORT=$APORT HPORT=$HPORT CONF=$conf PID=$main_PID ED=$ED "$PY" - <<'PY' || not_ok "python part crashed"
import os, signal, time
from taplib import ok, is_, skip, run as _unused, done_testing
from users_help import (connect, login, once, run, norm, root, upstream_sessions, wait_for,
                        admin, MDB_PORT)

port, aport, pid, conf = int(os.environ["PORT"]), int(os.environ["APORT"]), int(os.environ["PID"]), os.environ["CONF"]

def via(user, pw, sql, db=None):
    return once(port, user, pw, sql, db)

def direct(user, pw, sql, db=None):
    return once(MDB_PORT, user, pw, sql, db)

# ---- allowed_users act upstream as themselves
is_(via("uu_conf", "confpw1", "SELECT CURRENT_USER()"), ("rows", [["uu_conf@%"]]),
    "allowed_users: uu_conf acts upstream as itself")
is_(norm(via("uu_conf", "confpw1", "SELECT * FROM shoaltest.nosuch_or_not_granted")),
    norm(direct("uu_conf", "confpw1", "SELECT * FROM shoaltest.nosuch_or_not_granted")),
    "  and gets its own privileges (the same error as directly)")
is_(norm(via("uu_nobody", "x", "SELECT 1")), norm(direct("uu_nobody", "x", "SELECT 1")),
    "an unknown user: the same 1045 as MariaDB's")
is_(norm(via("uu_conf", "wrong", "SELECT 1")), norm(direct("uu_conf", "wrong", "SELECT 1")),
    "a wrong password: the same 1045 as MariaDB's")

# ---- the admin's users table: the hash only
admin(aport, "INSERT INTO users (username, password, default_schema, max_connections) "
             "VALUES ('uu_adm', 'admpw', 'uu_a', 5);\nLOAD USERS TO RUNTIME")
h = admin(aport, "SELECT password FROM runtime_users WHERE username = 'uu_adm'")
ok(h and h[0][0].startswith("*") and len(h[0][0]) == 41, "LOAD USERS: uu_adm is kept as its hash", repr(h))
s = login(port, "uu_adm", "admpw")
ok(not isinstance(s, tuple), "uu_adm (hash only) logs in", repr(s))
if isinstance(s, tuple):
    s = None
is_(run(s, "SELECT CURRENT_USER(), DATABASE()") if s else None, ("rows", [["uu_adm@%", "uu_a"]]),
    "  acts upstream as itself (SHA1(pw) from its own login), in its default_schema")
is_(run(s, "SELECT v FROM t") if s else None, ("rows", [["in uu_a"]]), "  an unqualified table is its schema's")
ok(upstream_sessions("uu_adm") >= 1, "  the upstream sees a uu_adm connection")

# ---- max_connections
admin(aport, "INSERT INTO users (username, password, max_connections) VALUES ('uu_cap', 'cappw', 2);\n"
             "LOAD USERS TO RUNTIME")
c1, c2 = login(port, "uu_cap", "cappw"), login(port, "uu_cap", "cappw")
third = login(port, "uu_cap", "cappw")
ok(isinstance(third, tuple) and third[1] == 1040 and "uu_cap" in third[2] and "max_connections=2" in third[2],
   "max_connections 2: the third login gets 1040 naming the user", repr(third))
if not isinstance(c2, tuple):
    c2.close()
time.sleep(0.3)
third = login(port, "uu_cap", "cappw")
ok(not isinstance(third, tuple), "  one closed: the next login is in", repr(third))
st = dict(admin(aport, "SELECT * FROM stats.stats_shoal_global WHERE Variable_Name = 'Access_Denied_Max_User_Connections'"))
ok(int(st.get("Access_Denied_Max_User_Connections", 0)) >= 1, "  counted in Access_Denied_Max_User_Connections", repr(st))

# ---- a removed user, a deactivated user
admin(aport, "DELETE FROM users WHERE username = 'uu_adm';\nUPDATE users SET active = 0 WHERE username = 'uu_cap';\n"
             "LOAD USERS TO RUNTIME")
r = run(s, "SELECT 1") if s else None
ok(r and r[0] == "err" and r[1] == 1045 and "removed or deactivated" in r[2],
   "removed user: its open session's next command gets 1045 saying why", repr(r))
r = run(s, "SELECT 1") if s else None
ok(r and r[0] == "err" and r[1] in (2006, 2013, 0), "  and the session is closed", repr(r))
r = via("uu_adm", "admpw", "SELECT 1")
ok(r[0] == "err" and r[1] == 1045, "  a new login is refused", repr(r))
ok(wait_for(lambda: upstream_sessions("uu_adm") == 0, 10), "  its idle upstream connections are closed",
   upstream_sessions("uu_adm"))
r = run(c1, "SELECT 1") if not isinstance(c1, tuple) else None
ok(r and r[0] == "err" and r[1] == 1045, "deactivated user: its session ends at the next command", repr(r))
admin(aport, "SAVE USERS TO DISK")
cols = [row[1] for row in admin(aport, "PRAGMA disk.table_info(users)")]
ok("default_schema" in cols and "max_connections" in cols, "SAVE USERS TO DISK keeps default_schema and max_connections", repr(cols))

# ---- a password changed upstream, then in the configuration (SIGHUP)
old = login(port, "uu_pw", "oldpw")
ok(not isinstance(old, tuple), "uu_pw logs in with its password", repr(old))
root("ALTER USER 'uu_pw'@'%' IDENTIFIED BY 'newpw'")
r = via("uu_pw", "oldpw", "SELECT 1")
ok(r[0] == "err" and r[1] == 1045 and "uu_pw" in r[2],
   "password changed upstream: a new login with the old one is refused (the upstream's 1045)", repr(r))
is_(run(old, "SELECT CURRENT_USER()") if not isinstance(old, tuple) else None, ("rows", [["uu_pw@%"]]),
    "  a session already open goes on, as directly")
with open(conf, "w") as f:
    f.write("auto_cache = true\nallowed_users = uu_conf:confpw1, uu_pw:newpw\n")
os.kill(pid, signal.SIGHUP)
ok(wait_for(lambda: via("uu_pw", "newpw", "SELECT CURRENT_USER()") == ("rows", [["uu_pw@%"]]), 10),
   "SIGHUP: the new password in allowed_users works")
r = via("uu_pw", "oldpw", "SELECT 1")
ok(r[0] == "err" and r[1] == 1045, "  the old one is refused by the node", repr(r))
conf_s = login(port, "uu_conf", "confpw1")
ok(not isinstance(conf_s, tuple), "  uu_conf still logs in", repr(conf_s))
with open(conf, "w") as f:
    f.write("auto_cache = true\nallowed_users = uu_pw:newpw\n")
os.kill(pid, signal.SIGHUP)
ok(wait_for(lambda: via("uu_conf", "confpw1", "SELECT 1")[0] == "err", 10),
   "SIGHUP without uu_conf: it can no longer log in")
r = run(conf_s, "SELECT 1") if not isinstance(conf_s, tuple) else None
ok(r and r[0] == "err" and r[1] == 1045, "  and its open session ends at the next command", repr(r))

# ---- the monitor
is_(via("monitor", "monitor", "SELECT @@global.read_only read_only"), ("rows", [[1]]),
    "monitor: its check is answered (by the node: read-only)")
is_(via("monitor", "monitor", "SELECT CURRENT_USER()"), ("rows", [["monitor@%"]]),
    "  anything else runs upstream as the monitor itself")

# ---- ed25519 upstream users
if os.environ["ED"] == "1":
    with open(conf, "w") as f:
        f.write("auto_cache = true\nallowed_users = uu_pw:newpw, uu_ed:edpw\n")
    os.kill(pid, signal.SIGHUP)
    ok(wait_for(lambda: via("uu_ed", "edpw", "SELECT CURRENT_USER()") == ("rows", [["uu_ed@%"]]), 10),
       "ed25519 upstream user with its clear password (allowed_users): logs in upstream")
    admin(aport, "INSERT INTO users (username, password) VALUES ('uu_ed2', 'ed2pw');\nLOAD USERS TO RUNTIME")
    r = via("uu_ed2", "ed2pw", "SELECT 1")
    ok(r[0] == "err" and "client_ed25519" in r[2] and "hash" in r[2],
       "ed25519 upstream user known by its hash only: a clear error naming the plugin", repr(r))
else:
    skip("ed25519 upstream user with its clear password", "no auth_ed25519 plugin")
    skip("ed25519 upstream user known by its hash only", "no auth_ed25519 plugin")
for c in (c1, third, old):
    if not isinstance(c, tuple):
        try:
            c.close()
        except Exception:
            pass
done_testing(always_zero=True)
PY

# ---- two users with different default schemas on one pool of one connection
for mode in own shared; do
  extra=()
  [ $mode = shared ] && extra=(--shared-upstream-user --monitor-user uu_mon --monitor-password monpw)
  AP=$(free_port)
  if ! shoal_start "one_$mode" --workers 1 --max-upstream-connections 1 --auto-cache \
    --allowed-users "uu_s1:s1pw,uu_s2:s2pw" --admin-address "127.0.0.1:$AP" --data-dir "$work/$mode" "${extra[@]}"; then
    n=7; [ $mode = shared ] && n=8
    for i in $(seq $n); do not_ok "node ($mode) starts"; done
    continue
  fi
  logv="one_${mode}_LOG"
  PORT=$(eval echo "\$one_${mode}_PORT") APORT=$AP MODE=$mode LOG=${!logv} "$PY" - <<'PY' || not_ok "python part ($mode) crashed"
import os
from taplib import ok, is_, done_testing
from users_help import connect, run, admin, once

port, aport, mode = int(os.environ["PORT"]), int(os.environ["APORT"]), os.environ["MODE"]
admin(aport, "UPDATE users SET default_schema = 'uu_a' WHERE username = 'uu_s1';\n"
             "UPDATE users SET default_schema = 'uu_b' WHERE username = 'uu_s2';\nLOAD USERS TO RUNTIME")
s1, s2 = connect(port, "uu_s1", "s1pw"), connect(port, "uu_s2", "s2pw")
is_((run(s1, "SELECT DATABASE()"), run(s2, "SELECT DATABASE()")), (("rows", [["uu_a"]]), ("rows", [["uu_b"]])),
    "%s: two users, one connection: each in its default schema" % mode)
got = []
for i in range(2):   # the second round from the cache
    got.append((run(s1, "SELECT v FROM t"), run(s2, "SELECT v FROM t")))
is_(got[0], (("rows", [["in uu_a"]]), ("rows", [["in uu_b"]])),
    "%s:   an unqualified table is each one's schema's" % mode)
is_(got[1], got[0], "%s:   again, interleaved" % mode)
is_(run(s2, "EXPLAIN LAST STATEMENT"), ("rows", [["readyset_shallow", "ok"]]),
    "%s:   ... from the cache" % mode)
cu = run(s1, "SELECT CURRENT_USER()")
if mode == "shared":
    is_(cu, ("rows", [["app@%"]]), "shared_upstream_user: uu_s1 acts upstream as the URL's user")
    log = open(os.environ["LOG"]).read()
    ok("shared_upstream_user is on" in log, "  and the node warned at start")
    r = once(port, "uu_mon", "monpw", "SELECT @@global.read_only read_only")
    is_(r, ("rows", [[1]]), "  a monitor without an upstream account: its check is answered")
    r = once(port, "uu_mon", "monpw", "SELECT 1")
    ok(r[0] == "err" and r[1] == 1045 and "uu_mon" in r[2],
       "  anything else is refused upstream: it never acts as the URL's user", repr(r))
else:
    is_(cu, ("rows", [["uu_s1@%"]]), "own identity: uu_s1 acts upstream as itself")
    # COM_CHANGE_USER: the session takes the new user's identity (and schema)
    import struct
    import rawmysql as r
    c = r.Conn("127.0.0.1", port)
    c.login("uu_s1", "s1pw")
    g = c.greeting
    def change(user, pw):
        tok = r.native_token(pw, g.nonce)
        body = user.encode() + b"\0" + bytes([len(tok)]) + tok + b"\0" + struct.pack("<H", 45) + b"mysql_native_password\0"
        c.write_packet(bytes([r.COM_CHANGE_USER]) + body, 0)
        _, p = c.read_packet()
        return ("ok",) if p[0] == 0 else ("err",) + r.parse_err(p)
    res = change("uu_s2", "s2pw")
    rows = c.query("SELECT CURRENT_USER(), DATABASE()") if res == ("ok",) else None
    ok(res == ("ok",) and rows and b"uu_s2@%" in rows[-2][1] and b"uu_b" in rows[-2][1],
       "COM_CHANGE_USER uu_s1 -> uu_s2: acts upstream as uu_s2, in its default schema", repr((res, rows)))
    res = change("uu_s1", "wrong")
    ok(res[0] == "err" and res[1] == 1045, "COM_CHANGE_USER with a wrong password: 1045", repr(res))
s1.close()
s2.close()
done_testing(always_zero=True)
PY
  shoal_stop "one_$mode"
done
done_testing
