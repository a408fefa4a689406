#!/usr/bin/env bash
# 67-compress: protocol compression (CLIENT_COMPRESS, zlib) on the data port
# (issue #19, item 6), each answer compared with MariaDB's own, directly:
#   - `mariadb --compress` through the node prints what it prints straight
#     to MariaDB, for a set of queries: several result sets, a 20,000-row
#     result, a 15 MB value (many frames), an 18 MB row (a packet over
#     16 MiB, split), an error, LOAD DATA LOCAL INFILE (the client's file
#     goes in frames within the command: the sequence ids run on);
#   - Connector/C with MYSQL_OPT_COMPRESS (lib/compress_client.c, compiled
#     here): text queries, prepared statements with a blob parameter, long
#     data, a cursor, a multi-frame value, an error, COM_CHANGE_USER and a
#     ping, the same output as directly, the session compressed;
#   - under --auto-cache, cache hits are served in compressed frames and
#     are the same as directly;
#   - a client that does not ask for compression on the same node gets a
#     plain session; with --no-compression CLIENT_COMPRESS is not offered
#     and `mariadb --compress` still works (uncompressed);
#   - TLS and compression together (the frames inside TLS);
#   - --upstream-compression: the node's links to MariaDB compressed (the
#     server's status says so), plain and compressed clients get the same
#     output as directly, multi-statement answers renumbered as plain;
#   - bad frames (a length over the limit, corrupt zlib data, an id out of
#     order) get 1153 / 1157 / 1156 (08S01) and the session ends; the node
#     serves on. PyMySQL has no compression (it refuses compress=True): that
#     check is skipped with that reason.
#   - the documented difference: SHOW STATUS 'Compression' says OFF through
#     the node (the upstream link is not compressed).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "compression: compares a node with MariaDB (SHOAL_FAKE_DIRECT=1)"; fi
plan 38

work="$BUILD_TEST/t67"
rm -rf "$work"
mkdir -p "$work/dd"
mport=$(free_port)
aport=$(free_port)
pport=$(free_port)
shoal_start node --metrics-address "127.0.0.1:$mport" || bail "node starts"
ok "node starts (port $node_PORT)"
if shoal_start ac --auto-cache --cache-ttl-ms 3600000 --data-dir "$work/dd" --metrics-address "127.0.0.1:$aport"; then
  ok "AUTO_CACHE node starts (port $ac_PORT)"
else
  not_ok "AUTO_CACHE node starts"
fi
if shoal_start plain --no-compression --metrics-address "127.0.0.1:$pport"; then
  ok "--no-compression node starts (port $plain_PORT)"
else
  not_ok "--no-compression node starts"
fi
if shoal_start upz --upstream-compression; then
  ok "--upstream-compression node starts (port $upz_PORT)"
else
  not_ok "--upstream-compression node starts"
fi
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 2 \
  -subj /CN=shoal-test >/dev/null 2>&1
if shoal_start small --max-allowed-packet 1M --tls-cert "$work/cert.pem" --tls-key "$work/key.pem"; then
  ok "--max-allowed-packet 1M node with TLS starts (port $small_PORT)"
else
  not_ok "--max-allowed-packet 1M node with TLS starts"
fi
on_exit 'mdb -e "DROP TABLE IF EXISTS t67, t67ld"'
metric() { # metric PORT NAME: a sample's value
  curl -s "http://127.0.0.1:$1/metrics" | awk -v n="$2" '$1 == n { print $2 }'
}

# ---- the mariadb CLI, compressed, direct and through the node
mdb -e "DROP TABLE IF EXISTS t67ld; CREATE TABLE t67ld (id INT, s VARCHAR(100))"
seq 1 30000 | awk '{ printf "%d\tline %d of the file, %s\n", $1, $1, substr("abcdefghijklmnopqrstuvwxyz", 1 + $1 % 26) }' \
  >"$work/ld.tsv"
cat >"$work/queries.sql" <<SQL
SELECT 1, 'two', NULL, 1.5e3, CAST('2024-01-02' AS DATE);
SELECT ID, COLLATION_NAME, CHARACTER_SET_NAME FROM information_schema.COLLATIONS ORDER BY COLLATION_NAME;
SELECT seq, REPEAT(CHAR(65 + seq % 26), seq % 300) FROM seq_1_to_20000;
SELECT MD5(REPEAT('abc', 5000000)), LENGTH(REPEAT('abc', 5000000));
SELECT REPEAT('abc', 5000000) AS fifteen_mb;
SELECT REPEAT('a', 9000000) AS a, REPEAT('b', 9000000) AS b;
SELECT no_such_column FROM seq_1_to_3;
DELETE FROM t67ld;
LOAD DATA LOCAL INFILE '$work/ld.tsv' INTO TABLE t67ld;
SELECT COUNT(*), SUM(id), MD5(GROUP_CONCAT(s ORDER BY id)) FROM t67ld;
SELECT 'after' AS the_end;
SQL
cli() { # cli PORT OUT: the queries through mariadb --compress
  mariadb --no-defaults -h127.0.0.1 -P"$1" -uapp -ppw shoaltest --compress --force --local-infile=1 \
    --max-allowed-packet=1G <"$work/queries.sql" >"$2" 2>&1
}
cli "$MDB_PORT" "$work/cli.direct"
in0=$(metric "$mport" shoal_compressed_frames_in_total)
out0=$(metric "$mport" shoal_compressed_frames_out_total)
cli "$node_PORT" "$work/cli.node"
if cmp -s "$work/cli.direct" "$work/cli.node" && [ "$(stat -c %s "$work/cli.node")" -gt 30000000 ] &&
  grep -q "^30000	450015000	" "$work/cli.node" && grep -q "ERROR 1054" "$work/cli.node"; then
  ok "mariadb --compress: the same output as directly ($(stat -c %s "$work/cli.node") bytes: 20,000 rows, 15 MB value, 18 MB row, an error, LOAD DATA LOCAL of 30,000 lines)"
else
  diff <(cut -c1-200 "$work/cli.direct") <(cut -c1-200 "$work/cli.node") | head -n 20 | diag_file /dev/stdin
  not_ok "mariadb --compress: the same output as directly"
fi
is "$(metric "$mport" shoal_compressed_sessions_total)" 1 "the session negotiated compression (shoal_compressed_sessions_total)"
in1=$(metric "$mport" shoal_compressed_frames_in_total)
out1=$(metric "$mport" shoal_compressed_frames_out_total)
# 11 commands (the file in frames of its own or with the next); 30 MB out in 64 KiB frames
if [ $((in1 - in0)) -ge 10 ] && [ $((out1 - out0)) -gt 450 ]; then
  ok "frames both ways ($((in1 - in0)) in, $((out1 - out0)) out)"
else
  not_ok "frames both ways (got $((in1 - in0)) in, $((out1 - out0)) out)"
fi

# ---- a plain client on the same node
mariadb --no-defaults -h127.0.0.1 -P"$node_PORT" -uapp -ppw shoaltest --force --local-infile=1 \
  --max-allowed-packet=1G <"$work/queries.sql" >"$work/cli.plain" 2>&1
if cmp -s "$work/cli.direct" "$work/cli.plain"; then
  ok "a client without compression on the same node: the same output"
else
  diff <(cut -c1-200 "$work/cli.direct") <(cut -c1-200 "$work/cli.plain") | head -n 10 | diag_file /dev/stdin
  not_ok "a client without compression on the same node: the same output"
fi
is "$(metric "$mport" shoal_compressed_sessions_total)" 1 "... and its session is not compressed"
is "$(metric "$mport" shoal_compressed_frames_out_total)" "$out1" "... no frames for it"

# the one documented difference (docs/architecture.md, "Compression"): the
# session status is the upstream connection's, which is not compressed
st=$(mariadb --no-defaults -h127.0.0.1 -P"$node_PORT" -uapp -ppw --compress -N -e "SHOW SESSION STATUS LIKE 'Compression'")
is "$st" "Compression	OFF" "SHOW STATUS 'Compression' through the node: OFF (the upstream link's, documented)"

# ---- --upstream-compression: the node's links to MariaDB compressed
st=$(mariadb --no-defaults -h127.0.0.1 -P"$upz_PORT" -uapp -ppw -N -e "SHOW SESSION STATUS LIKE 'Compression'")
is "$st" "Compression	ON" "--upstream-compression: the upstream session is compressed (its status: ON)"
mariadb --no-defaults -h127.0.0.1 -P"$upz_PORT" -uapp -ppw shoaltest --force --local-infile=1 \
  --max-allowed-packet=1G <"$work/queries.sql" >"$work/cli.upz" 2>&1
mariadb --no-defaults -h127.0.0.1 -P"$upz_PORT" -uapp -ppw shoaltest --compress --force --local-infile=1 \
  --max-allowed-packet=1G <"$work/queries.sql" >"$work/cli.upzc" 2>&1
if cmp -s "$work/cli.direct" "$work/cli.upz"; then
  ok "--upstream-compression: a plain client, the same output as directly (18 MB row, LOAD DATA LOCAL)"
else
  diff <(cut -c1-200 "$work/cli.direct") <(cut -c1-200 "$work/cli.upz") | head -n 10 | diag_file /dev/stdin
  not_ok "--upstream-compression: a plain client, the same output as directly"
fi
if cmp -s "$work/cli.direct" "$work/cli.upzc"; then
  ok "--upstream-compression: a compressed client, the same output as directly"
else
  not_ok "--upstream-compression: a compressed client, the same output as directly"
fi
# multi-statement answers: MariaDB numbers a compressed link's packets from
# its frame counter after each flush; the node renumbers them as plain
NODE_PORT=$upz_PORT "$PY" - <<'PY' || not_ok "python part crashed or failed"
import os
import pymysql
from pymysql.constants import CLIENT
from taplib import ok, done_testing
def run(port):
    c = pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw", database="shoaltest",
                        client_flag=CLIENT.MULTI_STATEMENTS, read_timeout=10)
    cur = c.cursor()
    cur.execute("SELECT seq FROM seq_1_to_3000; SELECT 2; DO 1; SELECT REPEAT('z', 3000000)")
    out = [cur.fetchall()]
    while cur.nextset():
        out.append(cur.fetchall())
    c.close()
    return out
d, n = run(int(os.environ["MDB_PORT"])), run(int(os.environ["NODE_PORT"]))
ok(d == n and len(n) == 4, "--upstream-compression: PyMySQL multi-statement results (3,000 rows, a 3 MB value): the same as directly")
done_testing(always_zero=True)
PY

# ---- compressed frames inside TLS
TQ="SELECT seq, REPEAT(CHAR(65 + seq % 26), seq % 300) FROM seq_1_to_5000; SELECT 'after' AS the_end"
mariadb --no-defaults -h127.0.0.1 -P"$MDB_PORT" -uapp -ppw shoaltest -e "$TQ" >"$work/tls.direct" 2>&1
mariadb --no-defaults -h127.0.0.1 -P"$small_PORT" -uapp -ppw shoaltest --compress --ssl --ssl-verify-server-cert=0 \
  -e "$TQ" >"$work/tls.node" 2>&1
if cmp -s "$work/tls.direct" "$work/tls.node" && [ "$(wc -l <"$work/tls.node")" = 5003 ]; then
  ok "TLS and compression together: the same 5,000 rows as directly"
else
  diff "$work/tls.direct" "$work/tls.node" | head -n 5 | diag_file /dev/stdin
  not_ok "TLS and compression together: the same rows as directly"
fi
st=$(mariadb --no-defaults -h127.0.0.1 -P"$small_PORT" -uapp -ppw --compress --ssl --ssl-verify-server-cert=0 -e '\s')
like "$st" "SSL:.*Cipher in use" "... the session is TLS (the client's status: $(grep -m1 -o 'Cipher in use is [^ ]*' <<<"$st"))"
like "$st" "Protocol:[[:space:]]+Compressed" "... and compressed (Protocol: Compressed)"

# ---- Connector/C with MYSQL_OPT_COMPRESS
client="$work/compress_client"
capi_compile "$SRCDIR/tests/integration/lib/compress_client.c" "$client"
"$client" 127.0.0.1 "$MDB_PORT" >"$work/c.direct" 2>&1
c_same() { # name port
  local rc=0
  "$client" 127.0.0.1 "$2" >"$work/c.$1" 2>&1 || rc=$?
  if [ $rc = 0 ] && cmp -s "$work/c.direct" "$work/c.$1" && grep -q "^compressed session: yes" "$work/c.$1" &&
    grep -q "^cursor: 3 rows" "$work/c.$1" && grep -q "^a 6 MB value row 1: 6000003 bytes" "$work/c.$1" &&
    grep -q "^change_user: ok, still compressed: yes" "$work/c.$1"; then
    ok "$1: Connector/C, compressed: prepared statements, long data, a cursor, change user: the same as direct"
  else
    diff "$work/c.direct" "$work/c.$1" | head -n 20 | diag_file /dev/stdin
    not_ok "$1: Connector/C, compressed: the same as direct (exit $rc)"
  fi
}
c_same node "$node_PORT"
c_same ac "$ac_PORT"

# ---- cache hits, compressed
hits() { curl -s "http://127.0.0.1:$aport/metrics" | awk '$1 == "shoal_queries_total{destination=\"cache\"}" { print $2 }'; }
HQ="SELECT seq, MD5(seq) FROM seq_1_to_3000 WHERE seq % 7 = 3"
mariadb --no-defaults -h127.0.0.1 -P"$MDB_PORT" -uapp -ppw shoaltest --compress -e "$HQ" >"$work/hit.direct"
mariadb --no-defaults -h127.0.0.1 -P"$ac_PORT" -uapp -ppw shoaltest --compress -e "$HQ" >"$work/hit.0"
h0=$(hits)
f0=$(metric "$aport" shoal_compressed_frames_out_total)
mariadb --no-defaults -h127.0.0.1 -P"$ac_PORT" -uapp -ppw shoaltest --compress -e "$HQ; $HQ; $HQ" >"$work/hit.1"
h1=$(hits)
f1=$(metric "$aport" shoal_compressed_frames_out_total)
cat "$work/hit.direct" "$work/hit.direct" "$work/hit.direct" >"$work/hit.want"
if [ $((h1 - h0)) -ge 3 ] && cmp -s "$work/hit.direct" "$work/hit.0" && cmp -s "$work/hit.want" "$work/hit.1"; then
  ok "AUTO_CACHE: $((h1 - h0)) cache hits in a compressed session, the same rows as directly"
else
  not_ok "AUTO_CACHE: cache hits in a compressed session (hits $h0 -> $h1)"
fi
if [ $((f1 - f0)) -ge 3 ]; then
  ok "... served in compressed frames ($((f1 - f0)) frames)"
else
  not_ok "... served in compressed frames (got $((f1 - f0)))"
fi

# ---- --no-compression
mariadb --no-defaults -h127.0.0.1 -P"$plain_PORT" -uapp -ppw shoaltest --compress --force --local-infile=1 \
  --max-allowed-packet=1G <"$work/queries.sql" >"$work/cli.nocomp" 2>&1
if cmp -s "$work/cli.direct" "$work/cli.nocomp"; then
  ok "--no-compression: mariadb --compress works, the same output (uncompressed)"
else
  not_ok "--no-compression: mariadb --compress works, the same output"
fi
is "$(metric "$pport" shoal_compressed_sessions_total)" 0 "--no-compression: no session compressed"

# ---- the greeting, the framing and bad frames, in raw protocol
NODE_PORT=$node_PORT PLAIN_PORT=$plain_PORT SMALL_PORT=$small_PORT "$PY" - <<'PY' || not_ok "python part crashed or failed"
import os, socket, struct, zlib
import rawmysql as r
from taplib import ok, skip, done_testing

DPORT, VPORT, PPORT = int(os.environ["MDB_PORT"]), int(os.environ["NODE_PORT"]), int(os.environ["PLAIN_PORT"])
SPORT = int(os.environ["SMALL_PORT"])
CAPS = r.DEFAULT_CAPS | r.CLIENT_COMPRESS

def greeting_caps(port):
    c = r.Conn("127.0.0.1", port)
    g = c.read_greeting()
    c.close()
    return g.caps

ok(greeting_caps(VPORT) & r.CLIENT_COMPRESS and greeting_caps(DPORT) & r.CLIENT_COMPRESS,
   "the greeting offers CLIENT_COMPRESS, as MariaDB's")
ok(not greeting_caps(PPORT) & r.CLIENT_COMPRESS, "--no-compression: not offered")

def frame(payload, seq, compress=True):
    if compress:
        z = zlib.compress(payload)
        return struct.pack("<I", len(z))[:3] + bytes([seq]) + struct.pack("<I", len(payload))[:3] + z
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + b"\0\0\0" + payload

def read_frame(c):
    h = c.recv_exact(7)
    clen, seq, ulen = h[0] | h[1] << 8 | h[2] << 16, h[3], h[4] | h[5] << 8 | h[6] << 16
    body = c.recv_exact(clen)
    return seq, (zlib.decompress(body) if ulen else body), ulen

def login(port):
    c = r.Conn("127.0.0.1", port)
    res = c.login("app", "pw", db="shoaltest", caps=CAPS)
    return c, res

def trace(port):
    """What a compressed session looks like on the wire: the login's OK,
    then a query's reply frames (ids, whether compressed, inner packets)."""
    c, res = login(port)
    out = [("login", res[0])]
    q = b"\x03SELECT seq, REPEAT('x', 40) FROM seq_1_to_3"
    c.send_raw(frame(struct.pack("<I", len(q))[:3] + b"\0" + q, 0))
    seq, data, ulen = read_frame(c)
    out.append(("reply frame", seq, ulen > 0, data))
    c.send_raw(frame(b"\x01\0\0\0\x0e", 0, compress=False))   # COM_PING, a new command
    seq, data, ulen = read_frame(c)
    out.append(("ping frame", seq, ulen > 0, data))
    c.close()
    return out

d, n = trace(DPORT), trace(VPORT)
ok(d[0] == n[0] == ("login", "ok"), "raw compressed login: OK read as a plain packet, as from MariaDB")
ok(d[1] == n[1], "a query's reply: one frame, id 1, compressed, the same packets inside", "direct %r" % (d[1],), "node   %r" % (n[1],))
ok(d[2] == n[2] and n[2][1] == 1 and not n[2][2], "a ping's OK: id 1 again (reset per command), sent uncompressed (under 50 bytes)",
   "direct %r" % (d[2],), "node   %r" % (n[2],))

def bad(port, data):
    c, res = login(port)
    c.send_raw(data)
    try:
        seq, p, _ = read_frame(c)
        err = r.parse_err(p[4:]) if p[4:5] == b"\xff" else None
    except (EOFError, ConnectionError, OSError) as e:
        err = ("closed", repr(e))
    closed = c.is_closed()
    c.close()
    return err, closed

ping = b"\x01\0\0\0\x0e"
big = struct.pack("<I", 2 << 20)[:3] + b"\0" + struct.pack("<I", 5)[:3]
for name, port, data, code in (
        ("2 MB declared, max_allowed_packet 1M (only the header sent)", SPORT, big, 1153),
        ("corrupt zlib data", VPORT, struct.pack("<I", 20)[:3] + b"\0" + struct.pack("<I", 60)[:3] + bytes(range(20)), 1157),
        ("a length that does not match what it inflates to", VPORT,
         (lambda z: struct.pack("<I", len(z))[:3] + b"\0" + struct.pack("<I", 6)[:3] + z)(zlib.compress(ping)), 1157),
        ("an id out of order", VPORT, frame(ping, 7, compress=False), 1156)):
    err, closed = bad(port, data)
    ok(err is not None and err[0] == code and err[1] == "08S01" and closed,
       "bad frame: %s: ERR %d (08S01), then closed" % (name, code), "got %r, closed %r" % (err, closed))
for port in (VPORT, SPORT):
    c, res = login(port)
    c.send_raw(frame(ping, 0))
    ok(res[0] == "ok" and read_frame(c)[1][4:5] == b"\x00", "the node serves on after bad frames (port %d)" % port)
    c.close()

try:
    import pymysql
    pymysql.connect(host="127.0.0.1", port=VPORT, user="app", password="pw", compress=True)
    ok(True, "PyMySQL with compress=True")
except NotImplementedError as e:
    skip("PyMySQL with compress=True", "PyMySQL %s does not implement compression: %s" % (pymysql.__version__, e))
done_testing(always_zero=True)
PY
done_testing
