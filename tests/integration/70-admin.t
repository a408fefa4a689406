#!/usr/bin/env bash
# 70-admin: the admin port (docs/admin.md) with the stock mariadb CLI and raw
# protocol: the client's start-up chatter, every table readable, SET +
# LOAD ... TO RUNTIME changing runtime_global_variables, restart-only
# settings warned about, a bad value and an SQL error refused with the
# connection still usable, SAVE ... TO DISK surviving a restart, passwords
# never shown in plaintext, a wrong password (1045), the default admin/admin
# refused from a non-loopback address (a second address on lo, or a network
# namespace), the connection limit (1040), stats_shoal_global following
# data-port traffic, result sets with and without DEPRECATE_EOF, and an
# unusable data directory (SAVE ... TO DISK fails cleanly).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

work="$BUILD_TEST/admin"
rm -rf "$work"
mkdir -p "$work"

if fake_mode; then
  skip_all "the admin port is node-only (fake mode)"
fi

# start_admin NAME ADMIN_ADDRESS DATA_DIR [shoal_start args...]: shoal_start
# adds --admin-address 127.0.0.1:0 (disabled) after the extra args and the
# last flag wins, so the node runs through a wrapper that appends ours.
start_admin() {
  local name=$1 addr=$2 data=$3 wrap="$work/shoal-with-admin-$1"
  shift 3
  printf '#!/bin/sh\nexec %q "$@" --admin-address %q --data-dir %q\n' \
    "$SHOAL_BIN" "$addr" "$data" >"$wrap"
  chmod +x "$wrap"
  SHOAL_BIN=$wrap shoal_start "$name" "$@"
}

# adm PORT USER PW [mariadb args...]: sets OUT (stdout+stderr) and RC.
adm() {
  local port=$1 user=$2 pw=$3
  shift 3
  OUT=$(mariadb --no-defaults -h127.0.0.1 -P"$port" -u"$user" -p"$pw" --connect-timeout=5 \
    "$@" 2>&1)
  RC=$?
}
# a SQL...: one statement as admin/admin on $APORT, tab-separated, no headers.
a() { adm "$APORT" admin admin -N -B -e "$1"; }
# a_script: statements from stdin in one session, continuing after errors.
a_script() { OUT=$(mariadb --no-defaults -h127.0.0.1 -P"$APORT" -uadmin -padmin -N -B --force 2>&1); RC=$?; }
runtime_var() { a "SELECT variable_value FROM runtime_global_variables WHERE variable_name = '$1'"; echo "$OUT"; }
main_var() { a "SELECT variable_value FROM global_variables WHERE variable_name = '$1'"; echo "$OUT"; }
stat_of() { a "SELECT Variable_Value FROM stats_shoal_global WHERE Variable_Name = '$1'"; echo "$OUT"; }

# The same count everywhere: where script(1) or a second address is
# missing, those parts skip as many checks as they hold.
plan 108
data="$work/data"
APORT=$(free_port)
if start_admin node "127.0.0.1:$APORT" "$data"; then
  ok "node starts with the admin on 127.0.0.1:$APORT, data dir $data"
else
  bail "node starts with the admin on 127.0.0.1:$APORT, data dir $data"
fi
like "$(cat "$node_LOG")" "default admin/admin" "the log warns about the default admin/admin"
ok_file=0; [ -f "$data/shoal.db" ] && ok_file=1
is "$ok_file" 1 "the data directory and shoal.db are created"

# ---- the mariadb client's chatter
a "select @@version_comment limit 1"
is "$OUT" "Shoal admin" "select @@version_comment limit 1"
adm "$APORT" admin admin -e "select @@version_comment limit 1"
is "$(head -1 <<<"$OUT")" "@@version_comment" "  its column is named @@version_comment"
a "SELECT DATABASE()"
is "$OUT" "main" "SELECT DATABASE() is main"
adm "$APORT" admin admin -N -B stats -e "SELECT DATABASE()"
is "$OUT" "stats" "connecting with database stats (COM_INIT_DB / CONNECT_WITH_DB)"
adm "$APORT" admin admin nosuch -e "SELECT 1"
like "$OUT" "^ERROR 1049 \(42000\)" "an unknown database is refused with 1049"
a "SHOW DATABASES"
is "$(cut -f2 <<<"$OUT" | tr '\n' ' ')" "main disk stats " "SHOW DATABASES lists main, disk, stats"
a "SHOW TABLES"
is "$(tr '\n' ' ' <<<"$OUT")" \
  "caches global_variables query_rules runtime_caches runtime_global_variables runtime_query_rules runtime_users users " \
  "SHOW TABLES (main)"
a "SHOW TABLES FROM disk"
is "$(tr '\n' ' ' <<<"$OUT")" "caches global_variables query_rules users " "SHOW TABLES FROM disk"
a "SHOW TABLES FROM stats"
is "$(tr '\n' ' ' <<<"$OUT")" \
  "stats_shoal_caches stats_shoal_connection_pool stats_shoal_entry_constraints stats_shoal_global stats_shoal_query_digest stats_shoal_query_digest_reset " \
  "SHOW TABLES FROM stats"
pong=$(mariadb-admin --no-defaults -h127.0.0.1 -P"$APORT" -uadmin -padmin ping 2>&1)
like "$pong" "alive" "mariadb-admin ping (COM_PING)"
if command -v script >/dev/null; then
  inter=$(printf 'show tables;\nquit\n' | timeout 10 script -qec \
    "mariadb --no-defaults -h127.0.0.1 -P$APORT -uadmin -padmin" /dev/null 2>&1)
  like "$inter" "global_variables" "interactive mariadb: starts (with table-name completion) and runs SHOW TABLES"
  like "$inter" "Server version: .*Shoal admin" "  its banner shows the version comment"
else
  skip "interactive mariadb session" "script(1) is not installed"
  skip "  banner" "script(1) is not installed"
fi

# ---- every table readable
for t in global_variables runtime_global_variables users runtime_users caches runtime_caches \
  query_rules runtime_query_rules disk.global_variables disk.users disk.caches disk.query_rules \
  stats_shoal_global stats_shoal_query_digest \
  stats_shoal_query_digest_reset stats_shoal_caches stats_shoal_connection_pool stats_shoal_entry_constraints; do
  a "SELECT count(*) FROM $t"
  like "$OUT" "^[0-9]+$" "SELECT count(*) FROM $t"
done
a "SELECT count(*) FROM global_variables WHERE variable_name LIKE 'shoal-%'"
like "$OUT" "^[1-9][0-9]+$" "global_variables has the node's settings ($OUT)"
a "SELECT count(*) FROM stats_shoal_connection_pool"
is "$OUT" "1" "stats_shoal_connection_pool has the upstream's row"
a "SELECT srv_port FROM stats_shoal_connection_pool"
is "$OUT" "$MDB_PORT" "  with the upstream's port"

# ---- passwords are never shown in plaintext
a "SELECT * FROM global_variables; SELECT * FROM runtime_global_variables; SELECT * FROM users"
unlike "$OUT" ":pw@|password	(pw|monitor|admin)$" \
  "no plaintext password in global_variables, runtime_global_variables, users"
is "$(main_var shoal-monitor-password)" "*1975D095AC033CAF4E1BF94F7202A9BBFEEB66F1" \
  "shoal-monitor-password is shown as its mysql_native_password hash"
like "$(main_var shoal-upstream-db-url)" "^mysql://app:\*\*\*@" "shoal-upstream-db-url is redacted"
a "SELECT password FROM runtime_users WHERE username = 'app'"
is "$OUT" "*D821809F681A40A6E379B50D0463EFAE20BDD122" "runtime_users: app's password as a hash"

# ---- SET + LOAD TO RUNTIME
is "$(runtime_var shoal-cache-ttl-ms)" "10000" "runtime shoal-cache-ttl-ms is the default 10000"
a "SET shoal-cache-ttl-ms = 4321"
is "$RC" 0 "SET shoal-cache-ttl-ms = 4321"
is "$(main_var shoal-cache-ttl-ms)" "4321" "  global_variables has 4321"
is "$(runtime_var shoal-cache-ttl-ms)" "10000" "  runtime unchanged before LOAD"
a "LOAD SHOAL VARIABLES TO RUNTIME"
is "$RC" 0 "LOAD SHOAL VARIABLES TO RUNTIME"
is "$(runtime_var shoal-cache-ttl-ms)" "4321" "  runtime_global_variables has 4321"
a "UPDATE global_variables SET variable_value = 'debug' WHERE variable_name = 'shoal-log-level'"
a "  load    variables
   to runtime  "
is "$RC" 0 "'load variables to runtime' (lower case, extra whitespace)"
is "$(runtime_var shoal-log-level)" "debug" "  an UPDATE of global_variables is applied too"
a "SET shoal-log-level = info; LOAD VARIABLES TO RUNTIME"
a_script <<'SQL'
SET shoal-workers = 3;
LOAD SHOAL VARIABLES TO RUNTIME;
SHOW WARNINGS;
SQL
like "$OUT" "shoal-workers is read at start only" "a restart-only setting: LOAD warns that it is not applied"
is "$(runtime_var shoal-workers)" "2" "  and the runtime keeps 2 workers"
a "SET shoal-workers = 2"

# ---- a bad value, an SQL error: the connection stays usable
a_script <<'SQL'
SET shoal-cache-ttl-ms = 'soon';
SELECT 'alive after SET';
UPDATE global_variables SET variable_value = '0' WHERE variable_name = 'shoal-cache-ttl-ms';
LOAD SHOAL VARIABLES TO RUNTIME;
SELECT 'alive after LOAD';
selec 1;
SELECT 'alive after a syntax error';
SELECT * FROM no_such_table;
SELECT 'alive after an unknown table';
LOAD MYSQL SERVERS TO RUNTIME;
SELECT 'alive after an unknown module';
SQL
like "$OUT" "ERROR 1231 \(42000\) at line 1: shoal-cache-ttl-ms: invalid value for cache_ttl_ms .*'soon': not a number" \
  "SET with a bad value: ERROR 1231 with the reason"
like "$OUT" "alive after SET" "  the connection is still usable"
like "$OUT" "ERROR 1105 \(HY000\) at line 4: LOAD SHOAL VARIABLES TO RUNTIME failed: shoal-cache-ttl-ms: .*must be between 1 and" \
  "LOAD with a bad value in global_variables: ERROR 1105 naming the variable"
like "$OUT" "alive after LOAD" "  the connection is still usable"
like "$OUT" "ERROR 1064 \(42000\) at line 6: near \"selec\": syntax error" "an SQL syntax error: ERROR 1064"
like "$OUT" "alive after a syntax error" "  the connection is still usable"
like "$OUT" "ERROR 1105 \(HY000\) at line 8: no such table: no_such_table" "another SQL error: ERROR 1105"
like "$OUT" "alive after an unknown table" "  the connection is still usable"
like "$OUT" "ERROR 1064 \(42000\) at line 10: unknown module" "LOAD of an unknown module: ERROR 1064"
like "$OUT" "alive after an unknown module" "  the connection is still usable"
is "$(runtime_var shoal-cache-ttl-ms)" "4321" "the runtime value is unchanged by the failed LOAD"
a "SET shoal-cache-ttl-ms = 4321"

# ---- multi-statements in one COM_QUERY, DEPRECATE_EOF and not (raw protocol)
APORT=$APORT "$PY" - <<'PY' || not_ok "python part crashed"
import os, time
import rawmysql as r
from cache_proto import scalar
from taplib import ok, is_, diag, run, done_testing
port = int(os.environ["APORT"])
base = r.DEFAULT_CAPS | r.CLIENT_MULTI_STATEMENTS | r.CLIENT_MULTI_RESULTS

def check(deprecate):
    caps = base | r.CLIENT_DEPRECATE_EOF if deprecate else base & ~r.CLIENT_DEPRECATE_EOF
    mode = "DEPRECATE_EOF" if deprecate else "EOF"
    c = r.connect(port, user="admin", pw="admin", db=None, caps=caps)
    res = c.query("select @@version_comment limit 1")
    seqs = [s for s, _ in res]
    is_(seqs, list(range(1, len(seqs) + 1)), "%s: sequence ids 1.. in order" % mode)
    is_(len(res), 4 if deprecate else 5, "%s: count, column, [EOF,] row, terminator" % mode)
    ok(res[-2][1] == b"\x0bShoal admin", "%s: the row is 'Shoal admin'" % mode, r.describe(res))
    last = res[-1][1]
    ok(last[0] == 0xFE and len(last) == (7 if deprecate else 5),
       "%s: %s terminator" % (mode, "0xFE OK" if deprecate else "EOF"), r.describe(res))
    res = c.query("SELECT 1 AS a; SELECT NULL AS b; SET shoal-cache-ttl-ms = 4321")
    ok(res[-1][1][0] == 0x00, "%s: three statements end with the SET's OK" % mode, r.describe(res))
    ok(any(p == b"\xfb" for _, p in res), "%s: NULL is sent as 0xFB" % mode, r.describe(res))
    res = c.command(r.COM_PING, kind="one")
    ok(res[0][1][0] == 0x00, "%s: COM_PING gets OK" % mode)
    res = c.command(r.COM_INIT_DB, "disk", kind="one")
    ok(res[0][1][0] == 0x00, "%s: COM_INIT_DB disk gets OK" % mode)
    res = c.command(r.COM_FIELD_LIST, b"users\0", kind="fields")
    ok(len(res) == 1 and res[0][1][0] == 0xFE, "%s: COM_FIELD_LIST: an empty list" % mode)
    res = c.command(0x16, "SELECT 1", kind="one")
    ok(res[0][1][0] == 0xFF and r.parse_err(res[0][1])[0] == 1047, "%s: COM_STMT_PREPARE: 1047" % mode)
    c.close_and_wait()

run("raw protocol with DEPRECATE_EOF", check, True)
run("raw protocol with EOF", check, False)

def admin_sessions_settle(limit=15.0):
    """Wait until this session is the admin port's only one, then close it and
    wait for the node to drop it. The mariadb runs above end with COM_QUIT and
    leave at once; on a loaded machine the node may read those closes late,
    and each one still holds a slot."""
    c = r.connect(port, user="admin", pw="admin", db=None)
    sql = "SELECT Variable_Value FROM stats_shoal_global WHERE Variable_Name = 'Admin_Connections_connected'"
    deadline, n = time.time() + limit, None
    while time.time() < deadline:
        n = scalar(c, sql)
        if n == "1":
            break
        time.sleep(0.05)
    c.close_and_wait()
    return n

def limit():
    n = admin_sessions_settle()
    is_(n, "1", "before the limit: the other admin sessions are gone (Admin_Connections_connected)")
    conns = []
    try:
        for _ in range(64):
            c = r.Conn("127.0.0.1", port)
            c.read_greeting()
            conns.append(c)
        extra = r.Conn("127.0.0.1", port)
        _, p = extra.read_packet()
        ok(p[0] == 0xFF and r.parse_err(p)[0] == 1040,
           "the 65th admin connection gets ERROR 1040", r.hexdump(p[:40]))
        extra.close()
    finally:
        for c in conns:
            c.close()

run("admin connection limit", limit)
done_testing(always_zero=True)
PY

# ---- wrong password
adm "$APORT" admin wrong -e "select 1"
is "$OUT" "ERROR 1045 (28000): Access denied for user 'admin'@'127.0.0.1' (using password: YES)" \
  "a wrong password: ERROR 1045 (28000)"
adm "$APORT" nobody admin -e "select 1"
like "$OUT" "^ERROR 1045 \(28000\): Access denied for user 'nobody'@'127.0.0.1'" "an unknown user: ERROR 1045"
sleep 0.3  # the refused sessions above close
a "select 1"
is "$OUT" "1" "admin/admin still logs in from loopback"

# ---- stats follow the data port
before=$(stat_of Client_Connections_created)
for i in 1 2 3; do via -N -e "select $i" >/dev/null 2>&1; done
after=$(stat_of Client_Connections_created)
if [[ $before =~ ^[0-9]+$ && $after =~ ^[0-9]+$ ]] && ((after >= before + 3)); then
  ok "stats_shoal_global: Client_Connections_created moved from $before to $after after 3 logins"
else
  not_ok "stats_shoal_global: Client_Connections_created moves with data-port logins"
  diag "before '$before' after '$after'"
fi
like "$(stat_of Questions)" "^[1-9][0-9]*$" "stats_shoal_global: Questions counts the data port's queries"
like "$(stat_of Shoal_Uptime)" "^[0-9]+$" "stats_shoal_global: Shoal_Uptime"

# ---- persistence: SAVE ... TO DISK, restart, the values are back
a "SET shoal-cache-ttl-ms = 4321; LOAD VARIABLES TO RUNTIME; SAVE SHOAL VARIABLES TO DISK"
is "$RC" 0 "SAVE SHOAL VARIABLES TO DISK"
a "INSERT INTO users (username, password, comment) VALUES ('bob', 'b0bpw', 'added by 70-admin'); LOAD USERS TO RUNTIME; SAVE USERS TO DISK"
is "$RC" 0 "a new user, LOAD USERS TO RUNTIME, SAVE USERS TO DISK"
a "SELECT password FROM disk.users WHERE username = 'bob'"
want=$("$PY" -c 'import hashlib; print("*" + hashlib.sha1(hashlib.sha1(b"b0bpw").digest()).hexdigest().upper())')
is "$OUT" "$want" "  the plaintext password was saved as its hash, SHA1(SHA1(password))"
if shoal_stop node; then ok "node stops cleanly"; else not_ok "node stops cleanly (status $node_STATUS)"; fi
if start_admin node "127.0.0.1:$APORT" "$data"; then
  ok "node restarts with the same data dir"
else
  bail "node restarts with the same data dir"
fi
is "$(runtime_var shoal-cache-ttl-ms)" "4321" "after the restart: runtime shoal-cache-ttl-ms is 4321 again"
is "$(main_var shoal-cache-ttl-ms)" "4321" "  and global_variables too"
a "SELECT username, comment FROM runtime_users WHERE username = 'bob'"
is "$OUT" "bob	added by 70-admin" "  runtime_users has bob"
a "SELECT count(*) FROM runtime_users WHERE username IN ('app', 'monitor')"
is "$OUT" "2" "  and the configured users"
like "$(cat "$node_LOG")" "settings loaded from .*shoal.db" "  the log says the settings came from disk"

# ---- default credentials from a non-loopback address
REMOTE_IP=""
REMOTE_RUN=()
cleanup_net=()
setup_remote() {
  local ns="shoaladm$$" va="vsa$$" vb="vsb$$" out
  if out=$(ip addr add 10.200.0.1/32 dev lo 2>&1); then
    cleanup_net+=("ip addr del 10.200.0.1/32 dev lo")
    REMOTE_IP=10.200.0.1
    return 0
  fi
  if grep -q "File exists" <<<"$out"; then
    REMOTE_IP=10.200.0.1   # someone else's: use it, leave it
    return 0
  fi
  # a network namespace joined by a veth pair
  ip netns add "$ns" 2>/dev/null || return 1
  cleanup_net+=("ip netns del $ns")
  ip link add "$va" type veth peer name "$vb" 2>/dev/null || return 1
  cleanup_net+=("ip link del $va")
  ip link set "$vb" netns "$ns" && ip addr add 10.201.0.1/24 dev "$va" && ip link set "$va" up &&
    ip netns exec "$ns" ip addr add 10.201.0.2/24 dev "$vb" &&
    ip netns exec "$ns" ip link set "$vb" up && ip netns exec "$ns" ip link set lo up || return 1
  REMOTE_IP=10.201.0.1
  REMOTE_RUN=(ip netns exec "$ns")
}
teardown_remote() { local c; for c in "${cleanup_net[@]}"; do eval "$c" >/dev/null 2>&1; done; }
on_exit teardown_remote

if setup_remote; then
  RPORT=$(free_port)
  if start_admin remote "0.0.0.0:$RPORT" "$work/data-remote"; then
    ok "node with the admin on 0.0.0.0:$RPORT"
    r_out=$("${REMOTE_RUN[@]}" mariadb --no-defaults -h"$REMOTE_IP" -P"$RPORT" -uadmin -padmin \
      --connect-timeout=5 -N -e "select 1" 2>&1)
    like "$r_out" "^ERROR 1045 \(28000\): Access denied for user 'admin'@'[0-9.]+': the default admin credentials work from a loopback address only" \
      "admin/admin from a non-loopback address: ERROR 1045"
    adm "$RPORT" admin admin -N -e "SET shoal-admin-password = 'N0tDefault'; LOAD VARIABLES TO RUNTIME"
    is "$RC" 0 "from loopback: change the admin password"
    r_out=$("${REMOTE_RUN[@]}" mariadb --no-defaults -h"$REMOTE_IP" -P"$RPORT" -uadmin -pN0tDefault \
      --connect-timeout=5 -N -e "select 'remote ok'" 2>&1)
    is "$r_out" "remote ok" "  then the new password works from the non-loopback address"
    adm "$RPORT" admin admin -e "select 1"
    like "$OUT" "^ERROR 1045" "  and admin/admin no longer works"
    adm "$RPORT" admin N0tDefault -N -e "SELECT variable_value FROM global_variables WHERE variable_name = 'shoal-admin-password'"
    like "$OUT" "^\*[0-9A-F]{40}$" "  shoal-admin-password is stored as a hash"
    shoal_stop remote
  else
    not_ok "node with the admin on 0.0.0.0:$RPORT"
  fi
else
  teardown_remote
  cleanup_net=()
  skip_n 6 "admin/admin from a non-loopback address" "cannot add an address (ip addr / ip netns)"
fi

# ---- an unusable data directory
NP=$(free_port)
if start_admin nodisk "127.0.0.1:$NP" /dev/null/shoal; then
  like "$(cat "$nodisk_LOG")" "cannot create the data directory /dev/null/shoal" \
    "an unusable data dir: the node starts and logs a warning"
  adm "$NP" admin admin -N -e "SAVE VARIABLES TO DISK"
  like "$OUT" "^ERROR 1105 \(HY000\).*SAVE SHOAL VARIABLES TO DISK failed: the disk database is not available" \
    "  SAVE ... TO DISK fails with a clear error"
  adm "$NP" admin admin -N -e "SET shoal-cache-ttl-ms = 999; LOAD VARIABLES TO RUNTIME; SELECT variable_value FROM runtime_global_variables WHERE variable_name = 'shoal-cache-ttl-ms'"
  is "$OUT" "999" "  LOAD ... TO RUNTIME still works"
  shoal_stop nodisk
else
  not_ok "a node with an unusable data dir starts"
fi

done_testing
