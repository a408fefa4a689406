#!/usr/bin/env bash
# 96-valgrind: the node under valgrind memcheck for a short smoke run: logins
# (good and bad), cache misses and hits (auto cache), a prepared statement,
# a transaction, cache SQL, the admin port, /metrics, /health, a client that
# vanishes mid-result, SIGHUP, then a clean SIGTERM. Passes when the node
# exits 0 and memcheck reports no invalid access or use of uninitialised
# memory (ERROR SUMMARY: 0) and no leak (definitely and indirectly lost:
# 0 bytes). About 40 s.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
if fake_mode; then skip_all "node-only"; fi
if ! command -v valgrind >/dev/null; then skip_all "valgrind is not installed"; fi
case "$(cat "$BUILD_TEST/.configure-flags" 2>/dev/null)" in
  *sanitize*) skip_all "the node is built with sanitizers" ;;
esac

plan 14
work="$BUILD_TEST/valgrind"
rm -rf "$work"; mkdir -p "$work"
vlog="$SHOAL_LOG_DIR/96-valgrind.memcheck.log"
nlog="$SHOAL_LOG_DIR/96-valgrind.node.log"
# a key made by openssl: generating one under valgrind takes long
openssl genrsa -out "$work/rsa.pem" 2048 >/dev/null 2>&1
P=$(free_port) M=$(free_port) A=$(free_port)
valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect \
  --errors-for-leak-kinds=definite,indirect --track-origins=yes --num-callers=30 \
  --log-file="$vlog" "$SHOAL_BIN" --upstream-db-url "mysql://app:pw@127.0.0.1:$MDB_PORT/shoaltest" \
  --listen-address "127.0.0.1:$P" --metrics-address "127.0.0.1:$M" --admin-address "127.0.0.1:$A" \
  --workers 2 --auto-cache --cache-ttl 1m --rsa-private-key "$work/rsa.pem" \
  --data-dir "$work/data" --drain-timeout 5s >"$nlog" 2>&1 </dev/null &
vpid=$!
on_exit "kill -KILL $vpid"
q() { mariadb --no-defaults -h127.0.0.1 -P"$P" -uapp -ppw shoaltest -N "$@" 2>&1; }
up=0
for _ in $(seq 1 300); do q -e 'SELECT 1' >/dev/null 2>&1 && { up=1; break; }; sleep 0.2; done
if [ $up != 1 ]; then diag_file "$nlog"; bail "node starts under valgrind"; fi
ok "node starts under valgrind"

mdb -e "DROP TABLE IF EXISTS vg_t; CREATE TABLE vg_t (id INT PRIMARY KEY, v VARCHAR(10)); INSERT INTO vg_t VALUES (1,'a'),(2,'b')"
on_exit "mdb -e 'DROP TABLE IF EXISTS vg_t'"
is "$(q -e 'SELECT v FROM vg_t WHERE id = 1; SELECT v FROM vg_t WHERE id = 1; SELECT v FROM vg_t WHERE id = 2' | tr '\n' ' ')" "a a b " "misses and a hit"
like "$(q -e 'BEGIN; INSERT INTO vg_t VALUES (3, "c"); ROLLBACK; SELECT COUNT(*) FROM vg_t')" "^2$" "a transaction"
like "$(mariadb --no-defaults -h127.0.0.1 -P"$P" -uapp -pwrong -e 'SELECT 1' 2>&1)" "ERROR 1045" "a failed login"
PORT=$P "$PY" - <<'PY' || not_ok "python part crashed"
import os, pymysql
import rawmysql as r
from taplib import ok, done_testing
port = int(os.environ["PORT"])
c = pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw", database="shoaltest")
cur = c.cursor()
cur.execute("SELECT v FROM vg_t WHERE id = %s", (2,))
ok(cur.fetchall() == (("b",),), "pymysql: a parameterised query")
cur.execute("SHOW CACHES")
ok(len(cur.fetchall()) >= 1, "cache SQL: SHOW CACHES lists the auto-cached shape")
c.close()
k = r.connect(port)
sid, ncols, nparams, _ = k.prepare("SELECT v FROM vg_t WHERE id = ?")
rows = [k.execute(sid, (1,)) for _ in range(2)]
ok(sid is not None and all(any(p[-1:] == b"a" for _, p in res) for res in rows),
   "a prepared statement executed twice (miss, then binary hit)")
k.close_stmt(sid)
k.close()
v = r.connect(port)
v.write_packet(b"\x03SELECT REPEAT('x', 1000) FROM seq_1_to_20000", 0)
v.sock.recv(10000)
v.abort()                                # a client vanishing mid-result
done_testing(always_zero=True)
PY
like "$(mariadb --no-defaults -h127.0.0.1 -P"$A" -uadmin -padmin -N -e "SELECT COUNT(*) FROM global_variables; SELECT * FROM stats_shoal_connection_pool" 2>&1 | head -1)" "^[0-9]+$" "the admin port answers"
like "$(curl -s "http://127.0.0.1:$M/metrics")" "shoal_cache_hits_total\{[^}]*\} [1-9]" "/metrics answers, with cache hits counted"
like "$(curl -s "http://127.0.0.1:$M/health")" "." "/health answers"
kill -HUP "$vpid"; sleep 1
is "$(q -e 'SELECT 9')" 9 "still serves after SIGHUP"
kill -TERM "$vpid"
st=124
for _ in $(seq 1 300); do kill -0 "$vpid" 2>/dev/null || { wait "$vpid"; st=$?; break; }; sleep 0.2; done
is "$st" 0 "SIGTERM: the node exits 0 under valgrind"
summary=$(grep -E "ERROR SUMMARY|definitely lost|indirectly lost|Invalid|uninitialised" "$vlog" | sed 's/^==[0-9]*== *//' | sort | uniq -c | head -n 20)
diag "$summary"
like "$(grep 'ERROR SUMMARY' "$vlog")" "ERROR SUMMARY: 0 errors" "memcheck: 0 errors (no invalid access, no uninitialised use, no definite/indirect leak)"
unlike "$(grep -E 'definitely lost: [1-9]|indirectly lost: [1-9]' "$vlog")" "." "memcheck: definitely lost 0, indirectly lost 0"
if ! grep -q "ERROR SUMMARY: 0 errors" "$vlog"; then grep -m 3 -A 25 -E "Invalid|uninitialised|definitely lost in" "$vlog" | sed 's/^/#   /' | head -n 80; fi
done_testing
