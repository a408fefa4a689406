#!/usr/bin/env bash
# 56-security: the auth and exposure rules.
#   - no user enumeration: unknown user and wrong password get the same 1045
#     (28000) answer shape, with mysql_native_password and caching_sha2_password
#   - failed logins are counted; past --auth-failure-threshold failures from one
#     address each further failure is answered --auth-failure-delay-ms late,
#     without holding up other sessions; a good login clears the count
#   - the admin's default credentials are refused from a non-loopback peer
#     (the admin bound to this machine's own global address)
#   - client TLS: 1.2 and later only, forward-secret ciphers; certificate and key
#     problems stop the start with a clear message
#   - secrets given as flags are not in ps / /proc/PID/cmdline, the log,
#     /metrics, /health, the admin's variables or error messages
# About 25 s.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "node-only checks"; fi
# node 1, python part 11, admin 3, TLS 7, caching_sha2 3, start failures 5,
# secrets 12, node still running 1
plan 43
work="$BUILD_TEST/security"
rm -rf "$work"; mkdir -p "$work"

MPORT=$(free_port)
if shoal_start sec --auth-failure-threshold 3 --auth-failure-delay 1s \
  --metrics-address "127.0.0.1:$MPORT"; then
  ok "node starts (failure threshold 3, delay 1 s)"
else
  bail "node starts (failure threshold 3, delay 1 s)"
fi
SHA2_PORT=""

PORT=$sec_PORT MPORT=$MPORT SHA2_PORT=$SHA2_PORT "$PY" - <<'PY' || not_ok "python part crashed"
import os, threading, time, urllib.request
import rawmysql as r
from taplib import ok, is_, diag, run, skip, done_testing
port, mport = int(os.environ["PORT"]), int(os.environ["MPORT"])

def metric(name):
    text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % mport, timeout=5).read().decode()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return int(float(line.split()[1]))

def shape(res, user):
    return (res[0], res[1], res[2], res[3].replace("'%s'@" % user, "'USER'@") if res[3] else None)

def enumeration(p, plugin):
    a = r.login_result(p, user="app", pw="wrong")
    b = r.login_result(p, user="nosuchuser", pw="wrong")
    ok(a[:3] == ("err", 1045, "28000"), "%s: wrong password -> 1045 (28000)" % plugin, repr(a))
    is_(shape(b, "nosuchuser"), shape(a, "app"), "%s: unknown user -> the same answer shape as a wrong password" % plugin)
    e = r.login_result(p, user="nosuchuser", pw="")
    f = r.login_result(p, user="app", pw="")
    is_(shape(e, "nosuchuser"), shape(f, "app"), "%s: unknown user and known user without password: same shape" % plugin)

def counted_and_delayed():
    # the enumeration checks above failed 4 logins from 127.0.0.1: clear that first
    is_(r.login_result(port)[0], "ok", "a good login (clears this address's failures)")
    before, dbefore = metric("shoal_auth_failures_total"), metric("shoal_auth_failures_delayed_total")
    times = []
    for i in range(3):
        t = time.time(); res = r.login_result(port, pw="bad%d" % i); times.append(time.time() - t)
    ok(max(times) < 0.5, "failures 1-3 from one address answered at once (%s s)" % [round(x, 3) for x in times])
    is_(metric("shoal_auth_failures_total") - before, 3, "shoal_auth_failures_total counts each failure")
    # the 4th is delayed; meanwhile another session runs queries
    out = {}
    def late():
        t = time.time(); out["res"] = r.login_result(port, pw="bad4"); out["t"] = time.time() - t
    th = threading.Thread(target=late); th.start()
    # the other session logs in only once the node holds the 4th failure
    # (a good login from this address would clear the count before it)
    deadline = time.time() + 10
    while metric("shoal_auth_failures_delayed_total") - dbefore < 1 and time.time() < deadline:
        time.sleep(0.02)
    t = time.time(); c = r.connect(port); q = c.query("SELECT 42"); c.close(); other = time.time() - t
    still_waiting = th.is_alive()
    th.join()
    ok(out["res"][:3] == ("err", 1045, "28000") and out["t"] >= 0.9,
       "failure 4: the same 1045 answer, delayed (%.2f s)" % out["t"], repr(out["res"]))
    ok(still_waiting and any(p == b"\x0242" for _, p in q),
       "while it waits, another client logs in and runs a query (%.3f s): the worker is not blocked" % other)
    is_(metric("shoal_auth_failures_delayed_total") - dbefore, 1, "shoal_auth_failures_delayed_total +1")
    is_(r.login_result(port)[0], "ok", "the right password still logs in at once from that address")
    t = time.time(); r.login_result(port, pw="bad5"); d = time.time() - t
    ok(d < 0.5, "after a good login the address's count starts again (%.3f s)" % d)

run("native enumeration", enumeration, port, "mysql_native_password")
run("counted and delayed", counted_and_delayed)
done_testing(always_zero=True)
PY

# ---- admin default credentials off loopback
ADDR=$(ip -4 -o addr show scope global 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | head -n1)
like "$("$SHOAL_BIN" --help | grep -A2 -- '--admin-address' | tail -n1)" '127\.0\.0\.1:6035' "admin binds to 127.0.0.1:6035 by default"
if [ -z "$ADDR" ]; then
  skip "default admin credentials refused off loopback" "no global IPv4 address here"
  skip "a set admin password works off loopback" "no global IPv4 address here"
else
  AP=$(free_port)
  if shoal_start offhost --admin-address "$ADDR:$AP"; then
    res=$("$PY" -c 'import rawmysql,sys; print(rawmysql.login_result(int(sys.argv[2]), user="admin", pw="admin", db=None, host=sys.argv[1]))' "$ADDR" "$AP")
    like "$res" "1045, '28000', .*default admin credentials work from a loopback address only" \
      "admin/admin from $ADDR (not loopback) refused with 1045"
  else
    not_ok "node with the admin on $ADDR starts"
  fi
  AP2=$(free_port)
  if SHOAL_WAIT=login ADMIN_PASSWORD=Adm1n-s3t shoal_start offhost2 --admin-address "$ADDR:$AP2"; then
    res=$("$PY" -c 'import rawmysql,sys; print(rawmysql.login_result(int(sys.argv[2]), user="admin", pw="Adm1n-s3t", db=None, host=sys.argv[1]))' "$ADDR" "$AP2")
    like "$res" "^\('ok'" "with admin_password set, the admin logs in from $ADDR"
  else
    not_ok "node with a set admin password starts"
  fi
fi

# ---- TLS
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 2 \
  -subj /CN=shoal-test >/dev/null 2>&1
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key2.pem" -out "$work/cert2.pem" -days 2 \
  -subj /CN=other >/dev/null 2>&1
TM=$(free_port)
if shoal_start tls --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" --metrics-address "127.0.0.1:$TM"; then
  perr() { curl -s "http://127.0.0.1:$TM/metrics" | awk '$1=="shoal_protocol_errors_total"{print $2}'; }
  sc() { timeout 10 openssl s_client -starttls mysql -connect "127.0.0.1:$tls_PORT" "$@" </dev/null 2>&1; }
  out=$(sc -tls1_2)
  like "$out" "Protocol *: TLSv1\.2" "TLS 1.2 is accepted (openssl s_client -starttls mysql -tls1_2)"
  like "$out" "Cipher *: ECDHE-[A-Z0-9-]*(GCM|CHACHA20)" "  ... with a forward-secret AEAD cipher [$(grep -m1 -o 'Cipher *: .*' <<<"$out")]"
  like "$(sc -tls1_3)" "TLSv1\.3, Cipher is" "TLS 1.3 is accepted"
  e0=$(perr)
  refused='alert protocol version|no protocols available|handshake failure|Cipher is \(NONE\)'
  out=$(sc -tls1_1 -cipher 'DEFAULT@SECLEVEL=0')
  like "$out" "$refused" "TLS 1.1 is refused [$(grep -m1 -oE "$refused" <<<"$out")]"
  out=$(sc -tls1 -cipher 'DEFAULT@SECLEVEL=0')
  like "$out" "$refused" "TLS 1.0 is refused"
  out=$(sc -tls1_2 -cipher 'AES128-SHA:AES256-SHA:AES128-GCM-SHA256')
  like "$out" "$refused" "TLS 1.2 with only non-forward-secret ciphers (RSA key exchange) is refused"
  e1=$(perr)
  ok_if() { if [ "$1" = 1 ]; then ok "$2"; else not_ok "$2"; fi; }
  ok_if "$([ $((e1 - e0)) -ge 3 ] && echo 1)" "  ... by the node: its protocol error count moved by 3 ($e0 -> $e1)"
else
  not_ok "node with TLS starts"
fi
# caching_sha2_password (full authentication over TLS, by the mariadb client)
if SHOAL_WAIT=greeting shoal_start sha2 --auth-plugin caching_sha2_password \
  --tls-cert "$work/cert.pem" --tls-key "$work/key.pem"; then
  sha2() { mariadb --no-defaults -h127.0.0.1 -P"$sha2_PORT" --ssl --ssl-verify-server-cert=0 "$@" -e 'select 1' 2>&1; }
  is "$(sha2 -uapp -ppw -N)" 1 "caching_sha2_password: app/pw logs in (full authentication over TLS)"
  a=$(sha2 -uapp -pwrong); b=$(sha2 -unosuchuser -pwrong)
  like "$a" "^ERROR 1045 \(28000\)" "caching_sha2_password: wrong password -> 1045 (28000)"
  is "${b//nosuchuser/USER}" "${a//\'app\'/\'USER\'}" "caching_sha2_password: unknown user -> the same answer as a wrong password"
else
  not_ok "caching_sha2_password node starts"
fi

start_fail() { # expect the node to refuse to start: prints exit status and stderr
  timeout 10 "$SHOAL_BIN" --upstream-db-url "mysql://app:pw@127.0.0.1:$MDB_PORT/shoaltest" \
    --listen-address 127.0.0.1:0 --metrics-address 127.0.0.1:0 --admin-address 127.0.0.1:0 \
    --data-dir "$work/d" "$@" 2>&1; echo "exit=$?"
}
out=$(start_fail --tls-cert "$work/missing.pem" --tls-key "$work/key.pem")
like "$out" "TLS certificate \(tls_cert\) '.*missing.pem': cannot read it: No such file or directory" "missing certificate file: clear message"
like "$out" "exit=2$" "  ... exit status 2"
out=$(start_fail --tls-cert "$work/cert.pem" --tls-key "$work/key2.pem")
like "$out" "TLS key \(tls_key\) '.*key2.pem': the key does not match the certificate" "key of another certificate: clear message"
like "$out" "exit=2$" "  ... exit status 2"
out=$(start_fail --tls-cert "$work/key.pem" --tls-key "$work/key.pem")
like "$out" "TLS certificate \(tls_cert\) '.*key.pem': no PEM block" "a key given as the certificate: clear message"

# ---- secrets
S_URL=UrlS3cret-$$ S_MON=MonS3cret-$$ S_ADM=AdmS3cret-$$ S_USR=UsrS3cret-$$
SM=$(free_port) SA=$(free_port) SP=$(free_port)
S_DBUSER=sec_$$
mdb_root -e "CREATE USER '$S_DBUSER'@'%' IDENTIFIED BY '$S_URL'; GRANT ALL ON shoaltest.* TO '$S_DBUSER'@'%'"
on_exit "mdb_root -e \"DROP USER '$S_DBUSER'@'%'\""
# bob acts upstream as itself (same password)
mdb_root -e "DROP USER IF EXISTS 'bob'@'%'; CREATE USER 'bob'@'%' IDENTIFIED BY '$S_USR'; GRANT ALL ON shoaltest.* TO 'bob'@'%'"
on_exit "mdb_root -e \"DROP USER IF EXISTS 'bob'@'%'\""
slog="$SHOAL_LOG_DIR/56-security.secrets.log"
"$SHOAL_BIN" --upstream-db-url "mysql://$S_DBUSER:$S_URL@127.0.0.1:$MDB_PORT/shoaltest" \
  --listen-address "127.0.0.1:$SP" --metrics-address "127.0.0.1:$SM" --admin-address "127.0.0.1:$SA" \
  --allowed-users "bob:$S_USR" --monitor-password "$S_MON" --admin-password="$S_ADM" \
  --log-level debug --workers 1 --data-dir "$work/sd" >"$slog" 2>&1 &
spid=$!
on_exit "kill $spid"
for _ in $(seq 50); do mariadb --no-defaults -h127.0.0.1 -P"$SP" -ubob -p"$S_USR" -e 'select 1' >/dev/null 2>&1 && break; sleep 0.1; done
grep_secrets() { grep -cE "$S_URL|$S_MON|$S_ADM|$S_USR" || true; }
is "$(tr '\0' ' ' <"/proc/$spid/cmdline" | grep_secrets)" 0 "/proc/PID/cmdline shows no password"
like "$(tr '\0' ' ' <"/proc/$spid/cmdline")" "mysql://$S_DBUSER:x+@127.*--allowed-users bob:x+ .*--monitor-password x+ .*--admin-password=x+" "  ... each password overwritten in place"
is "$(ps -ww -o args= -p "$spid" | grep_secrets)" 0 "ps shows no password"
login_err=$(mariadb --no-defaults -h127.0.0.1 -P"$SP" -ubob -pwrong -e 'select 1' 2>&1)
upstream_err=$(mariadb --no-defaults -h127.0.0.1 -P"$SP" -ubob -p"$S_USR" -e 'select nosuchcolumn' 2>&1)
mariadb --no-defaults -h127.0.0.1 -P"$SA" -uadmin -p"$S_ADM" -e "SELECT * FROM global_variables; SELECT * FROM runtime_global_variables" >"$work/vars.txt" 2>&1
like "$(cat "$work/vars.txt")" "shoal-admin-password" "admin variables list the password settings"
is "$(grep_secrets <"$work/vars.txt")" 0 "admin variables show no password"
curl -s "http://127.0.0.1:$SM/metrics" >"$work/metrics.txt"
curl -s "http://127.0.0.1:$SM/health" >"$work/health.txt"
curl -s "http://127.0.0.1:$SM/ready" >>"$work/health.txt"
like "$(cat "$work/metrics.txt")" "shoal_auth_failures_total" "/metrics answered"
is "$(cat "$work/metrics.txt" "$work/health.txt" | grep_secrets)" 0 "/metrics, /health and /ready show no password"
is "$(printf '%s\n%s\n' "$login_err" "$upstream_err" | grep_secrets)" 0 "error messages to clients show no password [$(tr "\n" " " <<<"$upstream_err" | cut -c1-100)]"
kill -HUP "$spid"; sleep 0.3
kill "$spid"; wait "$spid" 2>/dev/null
like "$(cat "$slog")" "access denied for user 'bob'" "the node logged the failed login (debug level)"
is "$(grep_secrets <"$slog")" 0 "the node's log (debug level, failed logins, SIGHUP) shows no password"
out=$(start_fail --upstream-db-url "mysql://app:$S_URL@127.0.0.1:99999/x")
like "$out" "invalid value for upstream_db_url.*\*\*\*" "a bad upstream URL is reported with the password as ***"
is "$(grep_secrets <<<"$out")" 0 "  ... and not in the message"

check "node still running" shoal_alive sec
done_testing
