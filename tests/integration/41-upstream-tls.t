#!/usr/bin/env bash
# 41-upstream-tls: the node's connections to the upstream over TLS
# (upstream_tls, upstream_tls_verify, upstream_tls_ca; docs/security.md).
# Against a private MariaDB with a certificate of its own:
#   - a login through a node with --upstream-tls works and its session is
#     encrypted upstream (Ssl_version); before, every login hung: the
#     connector hands its socket over blocking, and the relay's TLS read
#     loop waited in read() for a record after the last one;
#   - answers larger than one TLS record and than one read (100 KB) pass,
#     and a cached answer is served;
#   - --upstream-tls-verify with the server's CA works; with another CA the
#     login gets a clear error, not a hang;
#   - the same large answer over plain TCP (a read that fills its chunk
#     exactly must not wait for more).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "upstream TLS: needs a node (SHOAL_FAKE_DIRECT=1)"; fi
if ! command -v openssl >/dev/null; then skip_all "openssl is not installed"; fi

plan 10
work="$BUILD_TEST/t41"
rm -rf "$work"
mkdir -p "$work"
for who in server other; do
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/$who-key.pem" -out "$work/$who-cert.pem" \
    -days 2 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" >"$work/openssl.log" 2>&1
done
TLS_PORT=$(free_port)
TLS_PID=""
_stop_tls() { stop_mdb "$TLS_PID"; }
on_exit _stop_tls
if MARIADB_EXTRA_ARGS="--ssl-cert=$work/server-cert.pem --ssl-key=$work/server-key.pem" \
  "$SRCDIR/scripts/start-mariadb" "$work/mdb" "$TLS_PORT" >"$work/mdb.start.out" 2>&1 </dev/null &&
  TLS_PID=$(cat "$work/mdb/pid"); then
  ok "a MariaDB with a certificate (port $TLS_PORT)"
else
  diag_file "$work/mdb.start.out"
  bail "a MariaDB with a certificate"
fi
url="mysql://app:pw@127.0.0.1:$TLS_PORT/shoaltest"
big="SELECT LENGTH(REPEAT('x', 100000)), MD5(REPEAT('x', 100000)), REPEAT('y', 100000) LIKE 'y%'"
bigtext="SELECT REPEAT('z', 100000)"
# via NODE SQL: through a node, bounded in time (a hang is a failure)
via() { local v="${1}_PORT"; timeout 20 mariadb "${MDB_ARGS[@]}" -P"${!v}" -N shoaltest -e "$2" 2>&1; }
direct() { mariadb --no-defaults -h127.0.0.1 -P"$TLS_PORT" -uapp -ppw -N shoaltest -e "$1" 2>&1; }

if shoal_start tn --upstream-db-url "$url" --upstream-tls --auto-cache; then
  ok "a node with --upstream-tls starts"
else
  bail "a node with --upstream-tls starts"
fi
is "$(via tn "SELECT 1")" "1" "a login and a query through it (before: every login hung)"
like "$(via tn "SHOW SESSION STATUS LIKE 'Ssl_version'")" "Ssl_version	TLSv1\\.[23]" \
  "  ... its upstream session is encrypted"
is "$(via tn "$big")" "$(direct "$big")" "a 100 KB answer over TLS (many records and reads)"
via tn "$bigtext" >/dev/null
is "$(via tn "$bigtext" | md5sum)" "$(direct "$bigtext" | md5sum)" "  ... cached, and served again the same"
shoal_stop tn

if shoal_start tv --upstream-db-url "$url" --upstream-tls --upstream-tls-verify \
  --upstream-tls-ca "$work/server-cert.pem"; then
  is "$(via tv "SELECT 2")" "2" "--upstream-tls-verify with the server's CA: works"
  shoal_stop tv
else
  not_ok "--upstream-tls-verify with the server's CA: the node starts"
fi
# the node starts (its greeting), but no login can reach the upstream
if SHOAL_WAIT=greeting shoal_start tw --upstream-db-url "$url" --upstream-tls --upstream-tls-verify \
  --upstream-tls-ca "$work/other-cert.pem"; then
  out=$(via tw "SELECT 3")
  rc=$?
  if [ $rc != 124 ] && [[ $out == *ERROR* ]] && grep -q "certificate" "$tw_LOG"; then
    ok "another CA: the login gets an error, not a hang, and the log says why [${out:0:120}]"
  else
    not_ok "another CA: the login gets an error, not a hang"; diag "exit $rc: $out"
  fi
  shoal_stop tw
else
  not_ok "another CA: the node starts (its greeting)"
fi

if shoal_start tp --upstream-db-url "$url"; then
  is "$(via tp "$big")" "$(direct "$big")" "plain TCP: the 100 KB answer"
  is "$(via tp "$bigtext" | md5sum)" "$(direct "$bigtext" | md5sum)" "  ... and 100 KB of text"
  shoal_stop tp
else
  not_ok "plain TCP: a node starts"
fi

done_testing
