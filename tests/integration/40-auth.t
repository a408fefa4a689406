#!/usr/bin/env bash
# 40-auth: client authentication at the node: wrong password / unknown user
# errors, --allowed-users, --auth-plugin caching_sha2_password (mariadb CLI and
# PyMySQL with RSA and TLS), client TLS (optional and required), and the
# monitor user while the upstream is down.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

work="$BUILD_TEST/auth"
mkdir -p "$work"

cli() { # port user password [mariadb args...] -> stdout+stderr, status in $CLI_RC
  local port=$1 user=$2 pw=$3; shift 3
  CLI_OUT=$(mariadb --no-defaults -h127.0.0.1 -P"$port" -u"$user" ${pw:+-p"$pw"} --connect-timeout=5 "$@" 2>&1)
  CLI_RC=$?
}

# The same 50 checks in fake mode: the node-only parts skip as many as they hold.
plan 50
if shoal_start node; then
  ok "node starts (port $node_PORT)"
else
  bail "node starts (port $node_PORT)"
fi

# ---- wrong password, unknown user, no password: same errors as MariaDB's
for spec in "app:wrong:YES" "nobody:whatever:YES" "app::NO"; do
  IFS=: read -r u p using <<<"$spec"
  if [ -n "$p" ]; then what="a wrong password"; else what="no password"; fi
  cli "$node_PORT" "$u" "$p" -e 'select 1'; via_out=$CLI_OUT; via_rc=$CLI_RC
  cli "$MDB_PORT" "$u" "$p" -e 'select 1'; direct_out=$CLI_OUT
  node_is "$via_out" "$direct_out" "ERROR 1045 (28000): Access denied for user '$u'@'127.0.0.1' (using password: $using)" \
    "user '$u' with $what: ERROR 1045 (28000) with MariaDB's text"
  is "$via_out" "$direct_out" "  ... identical to MariaDB's own error"
  if [ "$via_rc" -ne 0 ]; then ok "  ... and mariadb exits non-zero"; else not_ok "  ... and mariadb exits non-zero"; fi
done
cli "$node_PORT" app pw -N -e 'select 42'
is "$CLI_OUT" "42" "right password still logs in after failed attempts"

# ---- a schema name that is no text of the client's character set: the
# server's 1300 at login (main.mysql_not_windows), and a well-formed one
# the same error for an unknown schema as directly
for cs in utf8 binary utf8mb4; do
  cli "$node_PORT" app pw --default-character-set=$cs -e 'select 1' "test😁 "; via_out=$CLI_OUT
  cli "$MDB_PORT" app pw --default-character-set=$cs -e 'select 1' "test😁 "; direct_out=$CLI_OUT
  is "$via_out" "$direct_out" "schema 'test😁 ' with --default-character-set=$cs: MariaDB's error ($direct_out)"
done

# ---- --allowed-users
if fake_mode; then
  skip_n 5 "--allowed-users" "fake mode"
else
  # an allowed user acts upstream as itself: it exists there (scripts/start-mariadb)
  mdb_root -e "CREATE USER IF NOT EXISTS 'other'@'%' IDENTIFIED BY 'otherpw'; GRANT ALL ON shoaltest.* TO 'other'@'%'"
  if shoal_start allowed --allowed-users other:otherpw; then
    cli "$allowed_PORT" other otherpw -N -e 'select 1 + 1'
    is "$CLI_OUT" "2" "--allowed-users: other/otherpw logs in and queries"
    cli "$allowed_PORT" other otherpw -N -e 'select current_user()'
    is "$CLI_OUT" "other@%" "--allowed-users: other acts upstream as itself"
    cli "$allowed_PORT" other wrongpw -e 'select 1'
    is "$CLI_OUT" "ERROR 1045 (28000): Access denied for user 'other'@'127.0.0.1' (using password: YES)" \
      "--allowed-users: other with a wrong password is refused"
    cli "$allowed_PORT" app pw -N -e 'select 3'
    is "$CLI_OUT" "3" "--allowed-users: the upstream user app/pw still logs in"
    cli "$node_PORT" other otherpw -e 'select 1'
    like "$CLI_OUT" "^ERROR 1045 \(28000\)" "a node without --allowed-users refuses other/otherpw"
    shoal_stop allowed
  else
    not_ok "node with --allowed-users other:otherpw starts"
  fi
fi

# ---- caching_sha2_password
# Full authentication (the node has no cached hash yet) needs RSA or TLS.
# PyMySQL does RSA (it asks for the node's public key); Debian's mariadb CLI
# (Connector/C 3.3) sends the password in clear text instead, which a node
# must refuse on a plain connection (it accepts it over TLS: see below). Once
# a full authentication succeeded, the CLI's fast path (SHA-256 scramble) works.
if fake_mode; then
  skip_n 9 "caching_sha2_password node" "fake mode"
else
  if SHOAL_WAIT=greeting shoal_start sha2 --auth-plugin caching_sha2_password; then
    ok "node with --auth-plugin caching_sha2_password starts"
    plugin=$("$PY" -c 'import rawmysql,sys; print(rawmysql.Conn("127.0.0.1", int(sys.argv[1])).read_greeting().plugin)' "$sha2_PORT" 2>&1)
    is "$plugin" "caching_sha2_password" "greeting names caching_sha2_password"
    cli "$sha2_PORT" app pw -N -e 'select 4'
    if [ "$CLI_RC" -ne 0 ] && grep -q "^ERROR 1045 (28000)" <<<"$CLI_OUT"; then
      ok "cold cache: the mariadb CLI's clear-text password on a plain connection is refused (1045)"
    else
      not_ok "cold cache: the mariadb CLI's clear-text password on a plain connection is refused (1045)"; diag "exit $CLI_RC: $CLI_OUT"
    fi
    PORT=$sha2_PORT "$PY" - <<'PY' || not_ok "python part (caching_sha2) crashed"
import os, pymysql, taplib
port = int(os.environ["PORT"])
for attempt in ("first (full auth with RSA)", "second (fast path)"):
    try:
        c = pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw", database="shoaltest", connect_timeout=10)
        with c.cursor() as cur:
            cur.execute("SELECT 7")
            taplib.is_(cur.fetchone(), (7,), "PyMySQL caching_sha2 login, %s, and query" % attempt)
        c.close()
    except Exception as e:
        taplib.ok(False, "PyMySQL caching_sha2 login, %s" % attempt, repr(e))
try:
    pymysql.connect(host="127.0.0.1", port=port, user="app", password="bad", connect_timeout=10)
    taplib.ok(False, "PyMySQL caching_sha2 wrong password refused")
except pymysql.MySQLError as e:
    taplib.is_(e.args[0], 1045, "PyMySQL caching_sha2 wrong password refused with 1045")
taplib.done_testing(always_zero=True)
PY
    cli "$sha2_PORT" app pw -N -e 'select 5'
    is "$CLI_OUT" "5" "mariadb CLI (Connector/C caching_sha2 plugin, fast path) logs in and queries"
    cli "$sha2_PORT" app nope -e 'select 1'
    like "$CLI_OUT" "^ERROR 1045 \(28000\): Access denied for user 'app'@'127.0.0.1' \(using password: YES\)" \
      "caching_sha2: wrong password gives 1045"
    res=$("$PY" "$TESTLIB/rawmysql.py" login "$sha2_PORT" app pw)
    is "$res" "ok			" "raw client: caching_sha2 fast-path scramble accepted"
    shoal_stop sha2
  else
    not_ok "node with --auth-plugin caching_sha2_password starts"
  fi
fi

# ---- TLS
cert="$work/cert.pem" key="$work/key.pem"
if openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
    -keyout "$key" -out "$cert" >"$work/openssl.log" 2>&1; then
  ok "self-signed certificate generated"
else
  not_ok "openssl req"; diag_file "$work/openssl.log"
fi

cli "$node_PORT" app pw --ssl -e '\s'
like "$CLI_OUT" "SSL:[[:space:]]+Not in use" "node without a certificate: mariadb --ssl falls back to plain (SSL: Not in use)"

if fake_mode; then
  skip_n 13 "TLS node" "fake mode"
else
  if shoal_start tls --tls-cert "$cert" --tls-key "$key"; then
    ok "node with --tls-cert/--tls-key starts"
    caps=$("$PY" -c 'import rawmysql,sys; print(rawmysql.Conn("127.0.0.1", int(sys.argv[1])).read_greeting().caps & rawmysql.CLIENT_SSL)' "$tls_PORT" 2>&1)
    is "$caps" "2048" "greeting advertises CLIENT_SSL"
    cli "$tls_PORT" app pw --ssl -e '\s'
    like "$CLI_OUT" "SSL:[[:space:]]+Cipher in use is " "mariadb --ssl: the client's status shows a cipher in use"
    cli "$tls_PORT" app pw --ssl -N -e 'select "over tls"'
    is "$CLI_OUT" "over tls" "query over TLS"
    cli "$tls_PORT" app pw --skip-ssl -e '\s'
    like "$CLI_OUT" "SSL:[[:space:]]+Not in use" "TLS optional: --skip-ssl client connects in plain text"
    cli "$tls_PORT" app wrong --ssl -e 'select 1'
    like "$CLI_OUT" "^ERROR 1045 \(28000\)" "wrong password over TLS: 1045"
    PORT=$tls_PORT "$PY" - <<'PY' || not_ok "python part (TLS) crashed"
import os, ssl, pymysql, taplib
port = int(os.environ["PORT"])
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
try:
    c = pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw", database="shoaltest", ssl=ctx, connect_timeout=10)
    taplib.ok(isinstance(c._sock, ssl.SSLSocket), "PyMySQL with an SSL context: the socket is TLS (%s)" % (c._sock.version() if isinstance(c._sock, ssl.SSLSocket) else "plain",))
    with c.cursor() as cur:
        cur.execute("SELECT REPEAT('t', 100000)")
        taplib.is_(len(cur.fetchone()[0]), 100000, "PyMySQL over TLS: 100 KB value")
    c.close()
except Exception as e:
    taplib.ok(False, "PyMySQL over TLS", repr(e))
taplib.done_testing(always_zero=True)
PY
    shoal_stop tls
  else
    not_ok "node with --tls-cert/--tls-key starts"
  fi

  if shoal_start tlsreq --tls-cert "$cert" --tls-key "$key" --tls-mode required; then
    ok "node with --tls-mode required starts (TLS client logs in)"
    cli "$tlsreq_PORT" app pw --skip-ssl -e 'select 1'
    if [ "$CLI_RC" -ne 0 ] && grep -q '^ERROR' <<<"$CLI_OUT"; then
      ok "--tls-mode required refuses a --skip-ssl client with an error"
      diag "refusal: $CLI_OUT"
    else
      not_ok "--tls-mode required refuses a --skip-ssl client with an error"; diag "exit $CLI_RC, output: $CLI_OUT"
    fi
    cli "$tlsreq_PORT" app pw --ssl -e '\s'
    like "$CLI_OUT" "SSL:[[:space:]]+Cipher in use is " "--tls-mode required: a TLS client connects"
    shoal_stop tlsreq
  else
    not_ok "node with --tls-mode required starts"
  fi

  if SHOAL_WAIT=greeting shoal_start sha2tls --auth-plugin caching_sha2_password --tls-cert "$cert" --tls-key "$key"; then
    cli "$sha2tls_PORT" app pw --ssl -N -e 'select 9'
    is "$CLI_OUT" "9" "caching_sha2 over TLS, cold cache: mariadb --ssl logs in (clear-text full auth over TLS)"
    PORT=$sha2tls_PORT "$PY" - <<'PY' || not_ok "python part (caching_sha2 + TLS) crashed"
import os, ssl, pymysql, taplib
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
try:
    c = pymysql.connect(host="127.0.0.1", port=int(os.environ["PORT"]), user="app", password="pw", ssl=ctx, connect_timeout=10)
    with c.cursor() as cur:
        cur.execute("SELECT 8")
        taplib.is_(cur.fetchone(), (8,), "caching_sha2 over TLS (cleartext full auth): PyMySQL logs in")
    c.close()
except Exception as e:
    taplib.ok(False, "caching_sha2 over TLS: PyMySQL logs in", repr(e))
taplib.done_testing(always_zero=True)
PY
    shoal_stop sha2tls
  else
    not_ok "node with caching_sha2_password and TLS starts"
  fi
fi

# ---- monitor user
if fake_mode; then
  skip_n 6 "monitor user with the upstream down" "fake mode"
else
  out=$(mariadb-admin --no-defaults -h127.0.0.1 -P"$node_PORT" -umonitor -pmonitor --connect-timeout=5 ping 2>&1)
  is "$out" "mysqld is alive" "monitor/monitor pings the node (upstream up)"
  closed=$(free_port)
  if SHOAL_WAIT=greeting shoal_start down --upstream-db-url "mysql://app:pw@127.0.0.1:$closed/shoaltest"; then
    ok "node pointing at a closed upstream port starts"
    out=$(mariadb-admin --no-defaults -h127.0.0.1 -P"$down_PORT" -umonitor -pmonitor --connect-timeout=5 ping 2>&1); rc=$?
    is "$out" "mysqld is alive" "monitor/monitor pings the node while the upstream is down"
    is "$rc" 0 "  ... mariadb-admin ping exits 0"
    out=$(mariadb-admin --no-defaults -h127.0.0.1 -P"$down_PORT" -umonitor -pwrong --connect-timeout=5 ping 2>&1)
    like "$out" "Access denied for user 'monitor'" "monitor with a wrong password is refused"
    cli "$down_PORT" app pw -e 'select 1'
    like "$CLI_OUT" "^ERROR [0-9]+ \(HY000\): .*127\.0\.0\.1:$closed" "app login while the upstream is down: an error naming the upstream (see 50-faults)"
    shoal_stop down
  else
    not_ok "node pointing at a closed upstream port starts"
  fi
fi

check "main node still running" shoal_alive node
done_testing
