#!/usr/bin/env bash
# f40-client-disconnects: clients vanish (RST) mid-result, mid-transaction,
# mid-prepare and mid-query, 10 times each. Afterwards the node's gauge
# shoal_upstream_connections is back at its baseline, the upstream's own
# process list has no session left of the node's upstream user, and the
# unfinished transactions were rolled back. About 10 s.
set -uo pipefail
. "$(dirname "$0")/lib-faults.sh"
if fake_mode; then skip_all "node-only"; fi
# node, 5 checks of the python part, node still running
plan 7

U=f40_$$
mdb_root -e "CREATE USER '$U'@'%' IDENTIFIED BY 'f40pw'; GRANT ALL ON shoaltest.* TO '$U'@'%';
             DROP TABLE IF EXISTS shoaltest.f40_t; CREATE TABLE shoaltest.f40_t (id INT PRIMARY KEY) ENGINE=InnoDB"
on_exit "mdb_root -e \"DROP USER '$U'@'%'; DROP TABLE IF EXISTS shoaltest.f40_t\""
MPORT=$(free_port)
if ! shoal_start d --upstream-db-url "mysql://$U:f40pw@127.0.0.1:$MDB_PORT/shoaltest" \
  --allowed-users app:pw --metrics-address "127.0.0.1:$MPORT"; then
  bail "node starts"
fi
ok "node starts (upstream user $U)"

PORT=$d_PORT MPORT=$MPORT U=$U "$PY" - <<'PY' || not_ok "python part crashed"
import os, socket, struct, subprocess, time, urllib.request
import rawmysql as r
from taplib import ok, is_, diag, done_testing
port, mport, U = int(os.environ["PORT"]), int(os.environ["MPORT"]), os.environ["U"]

def metric(name):
    for line in urllib.request.urlopen("http://127.0.0.1:%d/metrics" % mport, timeout=5).read().decode().splitlines():
        if line.startswith(name + " "):
            return int(float(line.split()[1]))

def gauge():
    return metric("shoal_upstream_connections")

def upstream_sessions():
    out = subprocess.run(["mariadb", "--no-defaults", "--socket=" + os.environ["MDB_SOCK"], "-uroot", "-N", "-e",
                          "SELECT COUNT(*) FROM information_schema.processlist WHERE user = '%s'" % U],
                         capture_output=True, text=True).stdout.strip()
    return int(out or -1)

# Pooled connections outlive sessions: "no leak" means every connection the
# node still has is idle in its pool (none lent to a session that is gone),
# and the upstream has no more sessions of the node's user than the node
# has connections (the upstream check's own short connection aside).
def settle(want_gauge, want_up, secs=8):
    end = time.time() + secs
    while time.time() < end:
        g, u = gauge(), upstream_sessions()
        if g is not None and g <= want_gauge and u <= want_up and g == metric("shoal_upstream_pool_idle"):
            break
        time.sleep(0.2)
    return g, u

c = r.connect(port); c.query("SELECT 1"); c.close()
time.sleep(0.5)
base_g, base_u = gauge(), upstream_sessions()
diag("baseline: shoal_upstream_connections %s, upstream sessions of %s: %s" % (base_g, U, base_u))

def login():
    c = r.connect(port)
    return c

def cmd(c, code, data):
    c.write_packet(bytes([code]) + data, 0)

kinds = {}
def mid_result():
    c = login()
    cmd(c, 0x03, b"SELECT REPEAT('x', 1000) FROM seq_1_to_200000")
    c.sock.recv(20000)
    c.abort()
def mid_transaction(i):
    c = login()
    c.query("BEGIN")
    c.query("INSERT INTO f40_t VALUES (%d)" % i)
    c.abort()
def mid_prepare():
    c = login()
    cmd(c, 0x16, b"SELECT id FROM f40_t WHERE id = ?")
    c.abort()
def mid_query():
    c = login()
    cmd(c, 0x03, b"SELECT SLEEP(1)")
    time.sleep(0.05)
    c.abort()
def mid_login():
    c = r.Conn("127.0.0.1", port)
    c.read_greeting()
    c.abort()

for i in range(10):
    mid_result(); mid_transaction(i); mid_prepare(); mid_query(); mid_login()
diag("50 clients vanished: 10 each mid-result, mid-transaction, mid-prepare, mid-query, mid-login")
g, u = settle(base_g, base_u)
ok(g is not None and g <= base_g, "shoal_upstream_connections %s, not above its baseline (%s)" % (g, base_g))
is_(g, metric("shoal_upstream_pool_idle"), "every upstream connection left is idle in the pool (none leaked)")
ok(u <= max(base_u, g or 0) + 1, "the upstream has no session of the node's user left beyond the pool's (%d)" % u)
n = subprocess.run(["mariadb", "--no-defaults", "--socket=" + os.environ["MDB_SOCK"], "-uroot", "-N", "-e",
                    "SELECT COUNT(*) FROM shoaltest.f40_t"], capture_output=True, text=True).stdout.strip()
is_(n, "0", "the 10 unfinished transactions were rolled back")
c = r.connect(port); res = c.query("SELECT 7"); c.close()
ok(any(p == b"\x017" for _, p in res), "the node still serves")
print("# FAULT-FIGURES f40 disconnects=50 leaked=%d" % (max(0, (g or 0) - base_g) + max(0, u - base_u)))
done_testing(always_zero=True)
PY
check "node still running" shoal_alive d
done_testing
