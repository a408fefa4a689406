#!/usr/bin/env bash
# 51-mysql-basic: issue 41's first step, MySQL as the upstream: MySQL 9.7
# (Debian unstable's, in a chroot: scripts/lib/mysql.sh makes it once under
# build-test/mysql97, or uses $SHOAL_MYSQL97_ROOT) and, where the peers'
# build is beside the checkout, MySQL 8.0.39. Against each, a node in writes
# mode with auto-cache: logins with caching_sha2_password with and without
# TLS (mariadb, PyMySQL, MySQL's own client), a repeated SELECT served from
# the cache with the server's answer, UPDATE and INSERT invalidating it,
# views, foreign keys and triggers, session settings, SHOW, errors, KILL,
# prepared statements (SQL and DBD::MariaDB's server-side), another login's
# grants, a node whose upstream link is TLS, zstd protocol compression
# (MySQL's client with --compression-algorithms=zstd, at its default level
# and at 22 with a query it compresses; levels out of 1..22 by hand refused
# with 3923 as the server refuses them). Binlog and auto invalidation start
# and follow MySQL's binlog (47-mysql-binlog tests the follower).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/mysql.sh
. "$SRCDIR/scripts/lib/mysql.sh"

work="$BUILD_TEST/mysql-basic"
mkdir -p "$work"
root=${SHOAL_MYSQL97_ROOT:-$BUILD_TEST/mysql97}
PY_CHECKS=23   # tests/integration/lib/51-mysql-basic.py
PER_SERVER=$((PY_CHECKS + 25))

fake_mode && skip_all "the checks are of the node's cache and invalidation (SHOAL_FAKE_DIRECT=1 has no node)"

# Which servers can run here: found before the plan (the chroot may take a
# few minutes to make the first time).
mysql_servers_here "$root" "$work"
servers=("${MYSQL_SERVERS[@]}") why=("${MYSQL_MISSING[@]}")
[ ${#servers[@]} -gt 0 ] || skip_all "no MySQL can run here: ${why[*]}"
plan $((PER_SERVER * ${#servers[@]}))
for w in "${why[@]}"; do diag "not tested: $w"; done
diag_file "$work/mysql97-root.err" 5

cert="$work/cert.pem" key="$work/key.pem"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
  -keyout "$key" -out "$cert" >"$work/openssl.log" 2>&1 || diag_file "$work/openssl.log"

# How a server answers handshake responses asking for zstd
# (CLIENT_ZSTD_COMPRESSION_ALGORITHM, the level byte after the plugin name)
# at levels 0, 23 and 3, then for zstd and zlib (CLIENT_COMPRESS) with level
# 0: "ERR code sqlstate", or the first byte of its answer (0x01: the
# caching_sha2 exchange goes on), comma-separated.
zstd_levels() { # port
  timeout 60 "$PY" - "$1" <<'PY' 2>&1
import sys, rawmysql as r
out = []
for level, zlib in ((0, 0), (23, 0), (3, 0), (0, r.CLIENT_COMPRESS)):
    try:
        c = r.Conn("127.0.0.1", int(sys.argv[1]))
        g = c.read_greeting()
        p = c.handshake_response("app", r.sha2_token("pw", g.nonce), "shoaltest",
                                 r.DEFAULT_CAPS | (1 << 26) | zlib, plugin="caching_sha2_password")
        c.write_packet(p + bytes([level]), 1)
        _, a = c.read_packet()
        out.append("ERR %d %s" % r.parse_err(a)[:2] if a[:1] == b"\xff" else "0x%02x" % a[0])
        c.close()
    except Exception as e:
        out.append(repr(e))
print(",".join(out))
PY
}

# The schema the checks read and write, made as root over the socket.
schema() { # socket
  mariadb --no-defaults --socket="$1" -uroot shoaltest <<'SQL'
DROP TABLE IF EXISTS t51, child51, parent51, log51, secret51;
DROP VIEW IF EXISTS v51;
DROP TABLE IF EXISTS base51;
CREATE TABLE t51 (id INT PRIMARY KEY, v VARCHAR(20));
INSERT INTO t51 VALUES (1, 'one'), (2, 'two'), (3, 'three');
CREATE TABLE base51 (id INT PRIMARY KEY, n INT);
INSERT INTO base51 VALUES (1, 10), (2, 20);
CREATE VIEW v51 AS SELECT id, n * 2 AS n2 FROM base51;
CREATE TABLE parent51 (id INT PRIMARY KEY);
CREATE TABLE child51 (id INT PRIMARY KEY, pid INT,
  FOREIGN KEY (pid) REFERENCES parent51 (id) ON DELETE CASCADE);
INSERT INTO parent51 VALUES (1), (2);
INSERT INTO child51 VALUES (10, 1), (20, 2);
CREATE TABLE log51 (id INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(20));
CREATE TRIGGER trg51 AFTER UPDATE ON base51 FOR EACH ROW
  INSERT INTO log51 (what) VALUES (CONCAT('u', NEW.id));
CREATE TABLE secret51 (id INT PRIMARY KEY, s VARCHAR(20));
INSERT INTO secret51 VALUES (1, 'hidden');
CREATE USER IF NOT EXISTS 'lim'@'%' IDENTIFIED WITH caching_sha2_password BY 'limpw';
GRANT SELECT ON shoaltest.t51 TO 'lim'@'%';
CREATE USER IF NOT EXISTS 'nopw'@'%' IDENTIFIED WITH caching_sha2_password BY '';
GRANT SELECT ON shoaltest.t51 TO 'nopw'@'%';
SQL
}

# The mariadb client through a port, in a way that never hangs the test.
cli() { # port [mariadb args...]
  local port=$1; shift
  timeout 60 mariadb --no-defaults -h127.0.0.1 -P"$port" -uapp -ppw --connect-timeout=10 shoaltest "$@" 2>&1
}

# DBD::MariaDB with server-side prepared statements: the same SELECT
# executed twice; prints its rows, then the node's cache hits before and
# after the second execution (n/a straight to the server).
perl_prepared() { # port
  # shellcheck disable=SC2016 # perl's own variables, not the shell's
  timeout 60 perl -MDBI -e '
    my $dbh = DBI->connect("DBI:MariaDB:database=shoaltest;host=127.0.0.1;port=$ARGV[0];mariadb_server_prepare=1",
                           "app", "pw", { RaiseError => 1, PrintError => 0 });
    my $hits = sub { my $r = eval { $dbh->{mariadb_server_prepare} = 0;
                       my $h = $dbh->selectall_arrayref("SHOW SHOAL STATUS");
                       $dbh->{mariadb_server_prepare} = 1;
                       (map { $_->[1] } grep { $_->[0] eq "Cache Hits" } @$h)[0] }; $r // "n/a" };
    my $sth = $dbh->prepare("SELECT id, v FROM t51 WHERE id = ?");
    $sth->execute(3); my $rows = $sth->fetchall_arrayref;
    my $before = $hits->();
    $sth->execute(3); my $again = $sth->fetchall_arrayref;
    my $after = $hits->();
    print join(";", map { join(",", @$_) } @$rows, @$again), "\n$before $after\n";' "$1" 2>&1
}

# One MySQL's checks: PER_SERVER of them, whatever fails.
test_server() { # 97 | 80
  local ver=$1 label port pid sock out direct n up_url mysql_cli=() before_n a b
  if [ "$ver" = 97 ]; then label="MySQL 9.7"; else label="MySQL 8.0"; fi
  port=$(free_port)
  if [ "$ver" = 97 ]; then
    mysql97_drop "$root" t51
    pid=$(mysql97_start "$root" t51 "$port" 2>"$work/start$ver.err")
    sock=$(mysql97_socket "$root" t51)
  else
    rm -rf "$work/mysql80"
    pid=$(mysql80_start "$work/mysql80" "$port" 2>"$work/start$ver.err")
    sock="$work/mysql80/sock"
  fi
  if ! is_pid "$pid"; then
    diag_file "$work/start$ver.err"
    not_ok "$label starts (port $port)"
    skip_n $((PER_SERVER - 1)) "$label" "the server did not start"
    return
  fi
  on_exit "stop_mdb $pid"
  [ "$ver" = 97 ] && on_exit "cp '$root/var/lib/shoal-t51/error.log' '$work/mysql97-error.log'; mysql97_drop '$root' t51"
  ok "$label starts (port $port, pid $pid)"
  if mysql_create_app "$sock" 2>"$work/app$ver.err" && schema "$sock" >"$work/schema$ver.log" 2>&1; then
    ok "$label: the app user (caching_sha2_password) and the test's tables"
  else
    diag_file "$work/app$ver.err"; diag_file "$work/schema$ver.log"
    not_ok "$label: the app user (caching_sha2_password) and the test's tables"
  fi
  up_url="mysql://app:pw@127.0.0.1:$port/shoaltest"
  if shoal_start "n$ver" --upstream-db-url "$up_url" --invalidation writes --auto-cache \
    --auth-plugin caching_sha2_password --tls-cert "$cert" --tls-key "$key" --allowed-users lim:limpw,nopw:; then
    ok "$label: a node in writes mode with auto-cache starts"
  else
    not_ok "$label: a node in writes mode with auto-cache starts"
    skip_n $((PER_SERVER - 3)) "$label" "no node"
    return
  fi
  local np_var="n${ver}_PORT" nlog_var="n${ver}_LOG"
  local np=${!np_var} nlog=${!nlog_var}

  # ---- the mariadb client, plain and TLS
  out=$(cli "$np" --skip-ssl -e '\s')
  direct=$(cli "$port" --skip-ssl -e 'SELECT @@version' -N)
  like "$out" "SSL:[[:space:]]+Not in use" "$label: mariadb logs in without TLS (caching_sha2_password)"
  out=$(cli "$np" --ssl -e '\s')
  like "$out" "SSL:[[:space:]]+Cipher in use" "$label: mariadb logs in with TLS"
  like "$out" "Server version:[[:space:]]+$direct" "$label: mariadb sees the server's version ($direct)"

  # ---- PyMySQL
  before_n=$(tap_count)
  DIRECT_PORT=$port NODE_PORT=$np LABEL="$label" "$PY" "$TESTLIB/51-mysql-basic.py"
  n=$(($(tap_count) - before_n))
  while [ "$n" -lt "$PY_CHECKS" ]; do not_ok "$label: a check of the python part did not run"; n=$((n + 1)); done

  # ---- MySQL's limits in the key: a recursive CTE another session cached
  # is refused (3636) to a session whose cte_max_recursion_depth it exceeds
  local cte="WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 20)
    SELECT COUNT(*) FROM s JOIN t51 ON t51.id = 1"
  cli "$np" -N -e "$cte; $cte" >/dev/null
  out=$(cli "$np" -N -e "SET SESSION cte_max_recursion_depth = 10; $cte")
  direct=$(cli "$port" -N -e "SET SESSION cte_max_recursion_depth = 10; $cte")
  is "$out" "$direct" "$label: a cached recursive CTE over a session's cte_max_recursion_depth: the server's error"

  # ---- optimizer_switch in the key: under the hypergraph optimizer (9.x),
  # a subquery transform the server refuses (3973) after a switch another
  # answer was cached under (8.0 refuses the hypergraph switch itself: the
  # server's answers either way)
  cli "$port" -e "DROP TABLE IF EXISTS ot51, it51; CREATE TABLE ot51 (v INT); CREATE TABLE it51 (val INT);
    INSERT INTO ot51 VALUES (1), (2); INSERT INTO it51 VALUES (1)" >/dev/null
  local hq="SELECT v >= ALL (SELECT val FROM it51) AS b, SUM((SELECT b)) OVER () AS s FROM ot51"
  local hs="SET optimizer_switch = 'hypergraph_optimizer=on'; $hq; $hq;
    SET optimizer_switch = 'semijoin=off,subquery_to_derived=on'; $hq"
  out=$(cli "$np" -N --force -e "$hs" | tr '\n' ' ')
  direct=$(cli "$port" -N --force -e "$hs" | tr '\n' ' ')
  is "$out" "$direct" "$label: an optimizer_switch the server refuses a statement under: the server's answer"

  # ---- a session's foreign_key_checks = 0 stays its own: MySQL's DEFAULT
  # leaves it as it is, so a pooled connection went to the next sessions
  # with 0 (conformance, MySQL mode, main.foreign_key_fkc). 10 new sessions
  # (2 workers, each a pool) read it after one set it and left.
  cli "$np" -e "SET SESSION foreign_key_checks = 0, unique_checks = 0; SELECT 1" >/dev/null
  out=$(for i in $(seq 1 10); do cli "$np" -N -e "SELECT @@foreign_key_checks, @@unique_checks"; done | sort | uniq -c | awk '{print $1, $2, $3}')
  is "$out" "10 1 1" "$label: another session's foreign_key_checks = 0 and unique_checks = 0 reach no new session"

  # ---- server-side prepared statements (DBD::MariaDB)
  out=$(perl_prepared "$np")
  direct=$(perl_prepared "$port")
  is "$(head -n 1 <<<"$out")" "$(head -n 1 <<<"$direct")" "$label: a server-side prepared SELECT gives the server's rows"
  read -r b a < <(tail -n 1 <<<"$out")
  if [[ $b =~ ^[0-9]+$ && $a =~ ^[0-9]+$ ]] && [ "$a" -gt "$b" ]; then
    ok "$label: its second execution is a cache hit"
  else
    not_ok "$label: its second execution is a cache hit"; diag "$out"
  fi

  # ---- the zstd level byte, by hand (MySQL's client keeps its level within
  # 1..22): out of range, the node refuses the login as the server does;
  # with zlib asked for too, zlib is chosen and the byte not even read
  out=$(zstd_levels "$np")
  direct=$(zstd_levels "$port")
  is "$out|$direct" "ERR 3923 HY000,ERR 3923 HY000,0x01,0x01|ERR 3923 HY000,ERR 3923 HY000,0x01,0x01" \
    "$label: handshakes asking zstd at level 0, 23, 3, and zstd with zlib at 0: 3923 (HY000) twice, then the logins go on, as the server's"

  # ---- MySQL 9.7's own client (the chroot's), where the chroot is here
  if [ -f "$root/$MYSQL97_MARKER" ]; then
    mysql_cli=(timeout 60 chroot "$root" mysql -h127.0.0.1 -uapp -ppw -N shoaltest)
    out=$("${mysql_cli[@]}" -P"$np" --ssl-mode=REQUIRED -e 'SELECT v FROM t51 WHERE id = 3' 2>&1 | grep -v 'password on the command line')
    is "$out" "three" "$label: MySQL 9.7's mysql client logs in through the node (TLS required)"
    # an empty password with caching_sha2_password: decided at once (the
    # client waits for OK or ERR; a full-authentication request was read as
    # a malformed packet, 2027)
    out=$(timeout 60 chroot "$root" mysql -h127.0.0.1 -P"$np" -unopw -N shoaltest -e 'SELECT v FROM t51 WHERE id = 3' 2>&1)
    is "$out" "three" "$label: MySQL 9.7's client logs in through the node with an empty password"
    out=$(timeout 60 chroot "$root" mysql -h127.0.0.1 -P"$np" -ulim -N shoaltest -e 'SELECT 1' 2>&1 | grep -o 'ERROR [0-9]*')
    is "$out" "ERROR 1045" "$label: ... and a user with a password who sends none is refused (1045)"
    out=$("${mysql_cli[@]}" -P"$np" --compression-algorithms=zstd -e 'SELECT v FROM t51 WHERE id = 3' 2>&1 | grep -v 'password on the command line')
    direct=$("${mysql_cli[@]}" -P"$port" --compression-algorithms=zstd -e 'SELECT v FROM t51 WHERE id = 3' 2>&1 | grep -v 'password on the command line')
    is "$out|$direct" "three|three" "$label: MySQL's client with zstd compression through the node, as directly"
    # a query over 50 bytes (the client compresses it) at the client's
    # highest level; the node answers at its own (3)
    q="SELECT v FROM t51 WHERE id = 3 AND v <> 'a literal that makes the query longer than fifty bytes'"
    out=$("${mysql_cli[@]}" -P"$np" --compression-algorithms=zstd --zstd-compression-level=22 -e "$q" 2>&1 | grep -v 'password on the command line')
    direct=$("${mysql_cli[@]}" -P"$port" --compression-algorithms=zstd --zstd-compression-level=22 -e "$q" 2>&1 | grep -v 'password on the command line')
    is "$out|$direct" "three|three" "$label: ... at zstd level 22, a query the client compresses, as directly"
  else
    skip_n 5 "$label: MySQL's own client" "no MySQL 9.7 chroot, whose mysql client it is"
  fi

  # ---- a node whose upstream link is TLS: every login hung before ba8f63d
  # (waited for here with cli's time limit: shoal_start's login wait has none)
  local tp_var="tls${ver}_PORT"
  if SHOAL_WAIT=greeting shoal_start "tls$ver" --upstream-db-url "$up_url" --invalidation writes \
    --auto-cache --upstream-tls; then
    out=$(cli "${!tp_var}" -N -e "SELECT v FROM t51 WHERE id = 3")
    is "$out" "three" "$label: a node with --upstream-tls logs in and answers"
    if [ "$out" = three ]; then
      out=$(cli "${!tp_var}" -N -e "SHOW SESSION STATUS LIKE 'Ssl_cipher'")
      like "$out" "Ssl_cipher[[:space:]]+TLS" "$label: its upstream session is encrypted ($out)"
    else
      skip "$label: its upstream session is encrypted" "no login"
    fi
    shoal_stop "tls$ver"
  else
    not_ok "$label: a node with --upstream-tls starts"
    skip "$label: its upstream session is encrypted" "no node"
  fi

  # ---- binlog and auto invalidation: the follower reads MySQL's binlog
  # (47-mysql-binlog checks what it does with it)
  if shoal_start "bl$ver" --upstream-db-url "$up_url" --invalidation binlog; then
    local bl_log_var="bl${ver}_LOG"
    like "$(cat "${!bl_log_var}")" "invalidation: binlog \(set by invalidation\): the MySQL upstream's binlog is on" \
      "$label: a node with --invalidation binlog runs (the follower starts at the first cached read)"
    check "$label: ... and still runs" shoal_alive "bl$ver"
    shoal_stop "bl$ver"
  else
    not_ok "$label: a node with --invalidation binlog runs"
    skip "$label: ... and still runs" "no node"
  fi
  if shoal_start "auto$ver" --upstream-db-url "$up_url" --invalidation auto --auto-cache; then
    local auto_log_var="auto${ver}_LOG"
    out=$(cat "${!auto_log_var}")
    like "$out" "invalidation: binlog \(auto\): the MySQL upstream's binlog is on with GTIDs" \
      "$label: --invalidation auto chooses the binlog, saying why"
    like "$out" "binlog: following MySQL" "$label: --invalidation auto follows the binlog (ROW, GTIDs on)"
    shoal_stop "auto$ver"
  else
    not_ok "$label: --invalidation auto chooses the binlog"
    skip "$label: --invalidation auto follows the binlog" "no node"
  fi
  unlike "$(grep -E ' (ERROR|FATAL) ' "$nlog" || true)" . "$label: no error in the node's log"
  check "$label: the node still runs" shoal_alive "n$ver"
  shoal_stop "n$ver"
}

for s in "${servers[@]}"; do test_server "$s"; done
done_testing
