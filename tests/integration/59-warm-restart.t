#!/usr/bin/env bash
# 59-warm-restart: a node restarted with --cache-snapshot starts with its
# cache, and never serves a row that changed while it was down
# (docs/operations.md, "Warm restarts"; docs/caching.md, "A loaded entry"):
#   - binlog mode, 2,000 keys over 100 tables: SIGTERM, 20 rows changed
#     directly on the upstream (two tables), start again: the log and
#     /metrics say what was loaded and kept; reading all 2,000 keys gives 0
#     answers that differ from the upstream's, and the upstream runs 21 of
#     the keys' SELECTs (the changed rows' keys, matched by row, and one
#     entry that has no row constraint), not 2,000;
#   - DDL on one table while down: that table's 20 entries are gone, the
#     other 1,980 served (the replay waits for the catalog instead of
#     flushing everything);
#   - the refill: the 21 (then 20) keys the replay invalidated are read
#     again from the upstream by the node itself, so every client read is a
#     hit;
#   - the binlogs purged past the snapshot's position: nothing is served
#     from the file, the state says why, and the 2,000 keys are refilled
#     (the upstream runs each once, the clients' reads are all hits);
#   - another server (its server_id changed): nothing served from the file;
#   - writes mode: nothing of the file is loaded; the keys are refilled, with
#     the rows changed while the node was down;
#   - the refill's pace and deadline: warm_rate 10 and warm_timeout 1 s read
#     about 10 keys, the most read ones first, and stop; settings and
#     capabilities: keys read under other session settings and with
#     CLIENT_DEPRECATE_EOF are refilled under the same key; a user whose
#     clear password the node does not have is not refilled (and says so);
#   - a file of keys only (cache_snapshot_data off): no data loaded, even in
#     binlog mode; every key refilled;
#   - memory_limit below the file: the most valuable entries are loaded (the
#     keys read most), the rest left out and counted;
#   - a corrupt file: refused with its reason; the node starts cold;
#   - SAVE CACHE TO DISK on the admin port writes the file now (refused with
#     the reason when cache_snapshot is not set);
#   - a warm join: a peer with --snapshot-serve answers GET /snapshot only to
#     the admin login (401 otherwise, 404 on a node without it); a new node
#     with --warm-from fetches it, replays the binlog from the peer's position
#     and answers its first 2,000 reads from the cache (its hit ratio at least
#     95% of the peer's within 5 s); a refused or missing peer: it says why
#     and starts cold.
# The keys' SELECTs that reach the upstream are counted in its general log.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "warm restart: needs a node (SHOAL_FAKE_DIRECT=1)"; fi

plan 117
work="$BUILD_TEST/t59"
rm -rf "$work"
mkdir -p "$work"
binlog_mdb "$work/bl"
bl() { mariadb --no-defaults -h127.0.0.1 -P"$BL_PORT" -uapp -ppw shoaltest "$@"; }
bl_root() { mariadb --no-defaults -h127.0.0.1 -P"$BL_PORT" -uapp -ppw "$@"; }
sql=""
for t in $(seq 0 99); do
  sql+="CREATE TABLE w$t (id INT PRIMARY KEY, v VARCHAR(600));
        INSERT INTO w$t SELECT seq, CONCAT('t$t-', seq, '-', REPEAT('x', 400)) FROM seq_1_to_20; "
done
if bl -e "$sql"; then ok "100 tables of 20 rows (2,000 keys)"; else bail "the tables"; fi
bl_root -e "SET GLOBAL log_output = 'TABLE'; SET GLOBAL general_log = 1"
snap="$work/cache.snap"
MPORT=$(free_port)
APORT=$(free_port)

start_node() { # name extra...
  local name=$1; shift
  mkdir -p "$work/$name"
  shoal_start "$name" --upstream-db-url "mysql://app:pw@127.0.0.1:$BL_PORT/shoaltest" --auto-cache \
    --binlog-user app --binlog-password pw --data-dir "$work/$name" --drain-handoff-ms 0 \
    --metrics-address "127.0.0.1:$MPORT" --admin-address "127.0.0.1:$APORT" --cache-snapshot "$snap" \
    --cache-ttl-ms 600000 "$@"
}
metric() { curl -s "http://127.0.0.1:$MPORT/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
# wait_state FAMILY STATE: FAMILY{state="STATE"} reaches 1 within 30 s
wait_state() {
  local i
  for i in $(seq 1 300); do
    [ "$(metric "$1{state=\"$2\"}")" = 1 ] && return 0
    sleep 0.1
  done
  diag "$1: $(curl -s "http://127.0.0.1:$MPORT/metrics" | grep "^$1{.* 1$")"
  return 1
}
wait_warm() { wait_state shoal_warm_state "$1"; }
wait_refill() { wait_state shoal_warm_refill_state "$1"; }
refill() { metric "shoal_warm_refill_keys{kind=\"$1\"}"; }
# READ+PRESENT/FAILED, when the keys read again are at least the 2,000 w
# keys: the start check's SELECT 1 may be filled before the refill reaches it
refill_done() {
  local r p
  r=$(refill read); p=$(refill present)
  if [ "${r:-0}" -ge 2000 ]; then echo "$((r + p))/$(refill failed)"; else echo "read $r, present $p"; fi
}
misses() { curl -s "http://127.0.0.1:$MPORT/metrics" | awk 'index($1, "shoal_cache_misses_total{") == 1 { s += $2 } END { print s + 0 }'; }
hits() { curl -s "http://127.0.0.1:$MPORT/metrics" | awk 'index($1, "shoal_cache_hits_total{") == 1 { s += $2 } END { print s + 0 }'; }
# wait_start_proven: the stream's start is proven visible (fills are stored
# from then on; before, each is answered and not kept), within 60 s
wait_start_proven() {
  local i
  for i in $(seq 1 600); do
    curl -s "http://127.0.0.1:$MPORT/status.json" | grep -q '"fence_start_pending": *false' && return 0
    sleep 0.1
  done
  return 1
}
# select1_stored PORT: the start check's SELECT 1 is read until it is a hit.
# Whether the start check's own fill was stored depends on the machine's
# load: it is refused while the stream's start is not yet proven visible
# (57-fence-start). After this the file always holds 2,001 entries.
select1_stored() {
  local i h0 h1
  for i in $(seq 1 200); do
    h0=$(hits)
    mariadb --no-defaults -h127.0.0.1 -P"$1" -uapp -ppw -N -e 'select 1' >/dev/null 2>&1   # (lib.sh's text)
    h1=$(hits)
    [ "$h1" -gt "$h0" ] && return 0
    sleep 0.05
  done
  return 1
}
# the keys' SELECTs the upstream ran (not the grant checks' PREPAREs, one per
# shape and user: docs/caching.md, "Privileges")
upstream_selects() { bl_root -N -e "SELECT COUNT(*) FROM mysql.general_log WHERE command_type = 'Query' AND argument LIKE '${1:-SELECT v FROM w}%'"; }
reset_log() { bl_root -e "SET GLOBAL general_log = 0; TRUNCATE mysql.general_log; SET GLOBAL general_log = 1"; }

# read PORT [extra-reads-of-w0]: every key through the node and directly;
# prints how many answers differ
read_all() {
  "$PY" - "$1" "$BL_PORT" "${2:-0}" <<'EOF'
import sys, pymysql
node, direct, extra = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
def conn(port):
    return pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw",
                           database="shoaltest", autocommit=True)
n, d = conn(node).cursor(), conn(direct).cursor()
differ = 0
for t in range(100):
    for i in range(1, 21):
        q = "SELECT v FROM w%d WHERE id = %d" % (t, i)
        n.execute(q)
        got = n.fetchall()
        d.execute(q.replace("SELECT v", "SELECT /* direct */ v"))
        if got != d.fetchall():
            differ += 1
for _ in range(extra):
    for i in range(1, 21):
        n.execute("SELECT v FROM w0 WHERE id = %d" % i)
        n.fetchall()
print(differ)
EOF
}

# ---- a cold start, filled, stopped
if start_node n1 --invalidation binlog; then ok "a node in binlog mode starts (no snapshot yet)"; else bail "the node starts"; fi
like "$(cat "$n1_LOG")" "cache snapshot .*cache.snap: none yet; the node starts cold" "no file yet: it says it starts cold"
check "the stream's start is proven visible before the keys are filled" wait_start_proven
is "$(read_all "$n1_PORT" 30)" 0 "2,000 keys read through it (w0's 20 read 30 times more): none differs"
is "$(read_all "$n1_PORT")" 0 "read again (hits): none differs"
check "the start check's SELECT 1 is stored (a hit): the 2,001st entry" select1_stored "$n1_PORT"
shoal_stop n1
like "$(cat "$n1_LOG")" "cache snapshot .*cache.snap written at the stop: 2001 entries" "SIGTERM: 2,001 entries written (with the start check's SELECT 1)"
cp "$snap" "$work/full.snap"

# ---- 20 rows changed while it is down
bl -e "UPDATE w3 SET v = CONCAT(v, '-changed') WHERE id <= 10; UPDATE w7 SET v = CONCAT(v, '-changed') WHERE id > 10"
reset_log
if start_node n2 --invalidation binlog; then ok "it starts again with the snapshot"; else bail "the restart"; fi
like "$(cat "$n2_LOG")" "cache snapshot .*: 2001 entries of 101 shapes, written [0-9.]+ s ago by shoal .* in binlog mode at GTID position '0-1-[0-9]+'" \
  "the log names the file: entries, shapes, age, mode and position"
like "$(cat "$n2_LOG")" "cache snapshot: 2001 entries loaded \\([0-9]+ bytes of keys and results\\), 0 left out" "all 2,001 are loaded"
check "the replay is done: the state is warm" wait_warm warm
# The replay matches each changed row (row-precise invalidation): it
# invalidates the 20 changed rows' entries, and w7's entry of id 1, which
# was its table's first fill (filled before the catalog reader had read
# w7's columns, it keeps no row constraint: any change to w7 invalidates
# it). w3's first, id 1, is one of the rows changed.
is "$(metric 'shoal_warm_entries{kind="kept"}')" 1980 "1,980 kept: the replay invalidated the 20 changed rows' entries and w7's first (no constraint)"
is "$(metric 'shoal_warm_entries{kind="loaded"}')" 2001 "shoal_warm_entries{kind=\"loaded\"} 2001"
like "$(cat "$n2_LOG")" "the binlog replay is done: 1980 of the 2001 entries loaded are served" "the log says how many are served"
like "$(curl -s "http://127.0.0.1:$MPORT/health")" '"warm":"warm","warm_entries_kept":1980' "/health says warm, with the entries kept"
like "$(mariadb --no-defaults -h127.0.0.1 -P"$APORT" -uadmin -padmin -N -e "SELECT variable_value FROM stats_shoal_global WHERE variable_name = 'Warm_state'")" '^warm$' \
  "the admin's stats_shoal_global: Warm_state warm"
check "the refill is done" wait_refill "done"
is "$(metric shoal_warm_warming)" 0 "  ... so the node is no longer warming (shoal_warm_warming 0)"
is "$(refill read)/$(refill present)/$(refill failed)" 21/1980/0 \
  "the refill read the 21 invalidated keys again; the 1,980 kept were served already; none failed"
like "$(cat "$n2_LOG")" "refill done in [0-9.]+ s: 21 keys read again, 1980 served already, 0 failed, 0 not reached" \
  "the log says what the refill did"
m0=$(misses)
is "$(read_all "$n2_PORT")" 0 "all 2,000 keys read: 0 answers differ from the upstream's"
is "$(( $(misses) - m0 ))" 0 "  ... all 2,000 from the cache (0 misses): the refill read the changed rows"
is "$(upstream_selects)" 21 "the upstream ran 21 of the keys' SELECTs (the changed rows' and w7's first, the refill's), not 2,000"
out=$(mariadb --no-defaults -h127.0.0.1 -P"$APORT" -uadmin -padmin -vv -e "SAVE CACHE TO DISK" 2>&1)
like "$out" "Query OK, 2001 rows affected" "the admin's SAVE CACHE TO DISK writes the snapshot now: 2,001 entries"
like "$(cat "$n2_LOG")" "cache snapshot .*cache.snap written by SAVE CACHE TO DISK: 2001 entries of 101 shapes" "  ... and the log says so"
like "$("$SHOAL_BIN" --check-snapshot "$snap")" $'entries: +2001 ' "  ... a sound file"
shoal_stop n2

# ---- DDL on one table while it is down
bl -e "ALTER TABLE w5 ADD COLUMN extra INT NOT NULL DEFAULT 7"
reset_log
if start_node n3 --invalidation binlog; then ok "restart after an ALTER TABLE made while it was down"; else bail "the restart after DDL"; fi
check "the replay is done" wait_warm warm
is "$(metric 'shoal_warm_entries{kind="kept"}')" 1981 "1,981 kept: w5's 20 entries are gone, the other tables' served"
is "$(read_all "$n3_PORT")" 0 "all 2,000 keys read: 0 answers differ"
is "$(upstream_selects)" 20 "the upstream ran w5's 20 SELECTs only"
shoal_stop n3
cp "$snap" "$work/after-ddl.snap"

# ---- the binlogs purged past the snapshot's position
bl -e "UPDATE w1 SET v = CONCAT(v, '-p') WHERE id = 1; FLUSH BINARY LOGS; UPDATE w2 SET v = CONCAT(v, '-p') WHERE id = 1; FLUSH BINARY LOGS"
cur=$(bl_root -N -e "SHOW MASTER STATUS" | cut -f1)
# the server keeps a file until its binlog checkpoint has passed it
for _ in $(seq 1 50); do
  bl_root -e "PURGE BINARY LOGS TO '$cur'"
  [ "$(bl_root -N -e "SHOW BINARY LOGS" | wc -l)" = 1 ] && break
  sleep 0.2
done
is "$(bl_root -N -e "SHOW BINARY LOGS" | cut -f1)" "$cur" "the binlogs are purged up to the current file ($cur)"
reset_log
if start_node n4 --invalidation binlog --warm-rate 100000; then ok "restart after the binlogs were purged"; else bail "the restart after purge"; fi
check "the state is dropped" wait_warm dropped
like "$(mariadb --no-defaults -h127.0.0.1 -P"$APORT" -uadmin -padmin -N -e "SELECT variable_value FROM stats_shoal_global WHERE variable_name = 'Warm_reason'")" \
  "position is gone" "the reason: its position is gone from the server's binlogs"
check "the keys are refilled" wait_refill "done"
is "$(refill_done)" 2001/0 "  ... all 2,001 read again from the upstream (or filled by the start check: SELECT 1), none failed"
m0=$(misses)
is "$(read_all "$n4_PORT")" 0 "all 2,000 keys read: 0 answers differ"
is "$(( $(misses) - m0 ))" 0 "  ... all from the cache"
is "$(upstream_selects)" 2000 "none was served from the file: the upstream ran each of the 2,000 SELECTs once (the refill)"
shoal_stop n4

# ---- another server
bl_root -e "SET GLOBAL server_id = 9"
reset_log
if start_node n5 --invalidation binlog --warm-rate 0; then ok "restart against a server with another server_id"; else bail "the restart against another server"; fi
check "the state is dropped" wait_warm dropped
like "$(cat "$n5_LOG")" "written against server id 1, the upstream is server id 9: its entries are dropped" "the log names both server ids"
is "$(read_all "$n5_PORT")" 0 "all 2,000 keys read: 0 answers differ"
is "$(upstream_selects)" 2000 "none was served from the file"
shoal_stop n5
bl_root -e "SET GLOBAL server_id = 1"

# ---- writes mode
cp "$work/after-ddl.snap" "$snap"
bl -e "UPDATE w4 SET v = CONCAT(v, '-down') WHERE id = 3"
reset_log
if start_node n6 --invalidation writes --warm-rate 100000; then ok "a node in writes mode starts with a binlog-mode snapshot"; else bail "the writes-mode node"; fi
check "the state is discarded" wait_warm discarded
like "$(cat "$n6_LOG")" "its 2001 entries are not loaded: only binlog mode can tell what changed.*; their keys are refilled from the upstream" \
  "the log says why nothing is loaded, and that the keys are refilled"
check "the refill is done" wait_refill "done"
is "$(refill_done)" 2001/0 "  ... every key read again (none was served from the file; SELECT 1 perhaps by the start check)"
m0=$(misses)
is "$(read_all "$n6_PORT")" 0 "all 2,000 keys read (a row changed while the node was down): 0 answers differ"
is "$(( $(misses) - m0 ))" 0 "  ... all from the cache"
is "$(upstream_selects)" 2000 "the upstream ran each SELECT once: the refill's"
shoal_stop n6
check "its own snapshot (writes mode) replaced the file" bash -c "'$SHOAL_BIN' --check-snapshot '$snap' | grep -q 'position: *(none)'"
reset_log
if start_node n6b --invalidation binlog --warm-rate 0; then ok "binlog mode with a snapshot written in writes mode"; else bail "n6b"; fi
check "the state is discarded (no binlog position)" wait_warm discarded
is "$(read_all "$n6b_PORT" 200)" 0 "all 2,000 keys read (w0's 200 times more): 0 answers differ"
is "$(upstream_selects)" 2000 "none was served from the file"
shoal_stop n6b
cp "$snap" "$work/hot.snap"

# ---- memory_limit below the file (the one the last node wrote)
reset_log
if start_node n7 --invalidation binlog --memory-limit 1048576 --warm-rate 0; then ok "memory_limit 1 MiB, below the file's entries"; else bail "n7"; fi
check "the replay is done" wait_warm warm
loaded=$(metric 'shoal_warm_entries{kind="loaded"}')
left=$(metric 'shoal_warm_entries{kind="left_out"}')
if [ -n "$loaded" ] && [ "$loaded" -gt 100 ] && [ "$loaded" -lt 2001 ] && [ $((loaded + left)) -eq 2001 ]; then
  ok "part of the file is loaded ($loaded), the rest counted as left out ($left)"
else
  not_ok "part of the file is loaded, the rest left out"; diag "loaded $loaded left out $left"
fi
like "$(cat "$n7_LOG")" "[0-9]+ beyond memory_limit" "the log counts those beyond memory_limit"
"$PY" - "$n7_PORT" <<'EOF' >/dev/null
import pymysql, sys
c = pymysql.connect(host="127.0.0.1", port=int(sys.argv[1]), user="app", password="pw", database="shoaltest", autocommit=True).cursor()
for i in range(1, 21):
    c.execute("SELECT v FROM w0 WHERE id = %d" % i); c.fetchall()
EOF
is "$(upstream_selects 'SELECT v FROM w0 ')" 0 \
  "the most valuable were loaded: w0's 20 keys (read most) are all served from it"
shoal_stop n7

# ---- the refill's pace, deadline and order (writes mode: keys only)
cp "$work/hot.snap" "$snap"
reset_log
if start_node n10 --invalidation writes --warm-rate 10 --warm-timeout 1s; then ok "warm_rate 10, warm_timeout 1s"; else bail "n10"; fi
check "the refill stops at warm_timeout" wait_refill stopped
like "$(cat "$n10_LOG")" "refill stopped in [0-9.]+ s: [0-9]+ keys read again.*not reached: warm_timeout_ms passed" "  ... and the log says why"
got=$(refill read); left=$(refill left)
if [ -n "$got" ] && [ "$got" -ge 1 ] && [ "$got" -le 11 ] && [ "$left" -ge 1990 ]; then
  ok "at most 10 a second for 1 s: $got keys read, $left not reached"
else
  not_ok "at most 10 a second for 1 s"; diag "read $got, left $left"
fi
# The order is the time each key saved, (hits + 1) x the upstream time of
# its fill, as the node measured it: w0's keys were read 200 times more,
# but one fill that a loaded machine slowed 200-fold outranks one of them
# (an ASan run at load 14 read 9 of w0's and one other). So: the keys read
# are all reads of the refill (none twice), and at least 8 of 10 are w0's.
w0_read=$(upstream_selects 'SELECT v FROM w0 ') all_read=$(upstream_selects)
if [ "$all_read" = "$got" ] && [ "$w0_read" -ge $((got * 8 / 10)) ]; then
  ok "the costliest first: $w0_read of the $got keys read are w0's (read 200 times more than the others)"
else
  not_ok "the costliest first: the keys read are w0's (read 200 times more than the others)"
  diag "w0's keys read $w0_read, all keys read $all_read, the refill counts $got"
fi
shoal_stop n10
cp "$work/hot.snap" "$snap"
if start_node n10b --invalidation writes --warm-rate 5 --drain-handoff-ms 60000 --drain-quiet-ms 500; then
  ok "warm_rate 5 (2,000 keys: 400 s), a drain hand-off of 60 s"
else
  bail "n10b"
fi
check "the refill runs" wait_refill running
is "$(metric shoal_warm_warming)" 1 "  ... shoal_warm_warming 1 meanwhile"
like "$(curl -s "http://127.0.0.1:$MPORT/health")" '"warming":true,"warm_refill":"running"' "  ... and /health says warming, refill running"
shoal_stop n10b
like "$(cat "$n10b_LOG")" "refill stopped in [0-9.]+ s: .*: the node stops" "SIGTERM: the refill stops at the drain's start"
like "$(cat "$n10b_LOG")" "drain: (no query for drain_quiet_ms|no session open) after" \
  "  ... so the drain goes quiet (its sessions do not hold it for drain_handoff_ms)"

# ---- settings, capabilities and users: a key is refilled under its own
keys_py() { # PORT: reads under other settings, with CLIENT_DEPRECATE_EOF, and as a hash-only user
  "$PY" - "$1" <<'EOF'
import sys, pymysql
import rawmysql as r
port = int(sys.argv[1])
def conn(user, pw):
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=pw, database="shoaltest",
                           autocommit=True).cursor()
s = conn("app", "pw")
s.execute("SET time_zone = '+05:00', sql_mode = 'ANSI_QUOTES', div_precision_increment = 7, "
          "max_join_size = 1000000, character_set_results = NULL, lc_time_names = 'de_DE'")
for i in range(1, 6):
    s.execute("SELECT v FROM w9 WHERE id = %d" % i); s.fetchall()
x = r.Conn("127.0.0.1", port)
x.login("app", "pw", db="shoaltest", caps=r.DEFAULT_CAPS | r.CLIENT_DEPRECATE_EOF)
for i in range(1, 6):
    x.query("SELECT v FROM w8 WHERE id = %d" % i)
x.close()
h = conn("hashy", "hpw")
for i in range(1, 6):
    h.execute("SELECT v FROM w10 WHERE id = %d" % i); h.fetchall()
EOF
}
bl_root -e "CREATE USER IF NOT EXISTS 'hashy'@'%' IDENTIFIED BY 'hpw'; GRANT SELECT ON shoaltest.* TO 'hashy'@'%'"
rm -f "$snap"
mkdir -p "$work/n11"
if start_node n11 --invalidation writes --data-dir "$work/n11"; then ok "a node for the settings, capabilities and users"; else bail "n11"; fi
mariadb --no-defaults -h127.0.0.1 -P"$APORT" -uadmin -padmin -e \
  "INSERT INTO users (username, password) VALUES ('hashy', 'hpw'); LOAD USERS TO RUNTIME; SAVE USERS TO DISK"
check "15 keys read: 5 under other settings, 5 with CLIENT_DEPRECATE_EOF, 5 as a hash-only user" keys_py "$n11_PORT"
shoal_stop n11
reset_log
if start_node n12 --invalidation writes --data-dir "$work/n11" --warm-rate 100000; then ok "restarted (writes mode: keys only)"; else bail "n12"; fi
check "the refill ends" wait_refill "done"
like "$(cat "$n12_LOG")" "refill: the keys of user 'hashy' are not refilled: .*clear password" \
  "the hash-only user's keys are not refilled: the log says why"
is "$(refill failed)" 5 "  ... its 5 keys counted as failed"
m0=$(misses)
check "the same 15 reads" keys_py "$n12_PORT"
is "$(( $(misses) - m0 ))" 5 "  ... 10 from the cache (the settings' and CLIENT_DEPRECATE_EOF's keys refilled under the same key), the hash-only user's 5 missed"
shoal_stop n12

# ---- a file of keys only (cache_snapshot_data off): refilled, in binlog mode too
cp "$work/hot.snap" "$snap"
if start_node n13 --invalidation binlog --cache-snapshot-data=false; then ok "a node writing keys only"; else bail "n13"; fi
is "$(read_all "$n13_PORT")" 0 "all 2,000 keys read"
shoal_stop n13
like "$("$SHOAL_BIN" --check-snapshot "$snap")" $'\nresults: +none \\(keys only' "its file holds the keys only"
reset_log
if start_node n14 --invalidation binlog --warm-rate 100000; then ok "restart with the keys-only file"; else bail "n14"; fi
check "the state is discarded" wait_warm discarded
like "$(cat "$n14_LOG")" "not loaded: it holds the keys only .*; their keys are refilled" "the log says why no data is loaded, and that the keys are refilled"
check "the refill is done" wait_refill "done"
m0=$(misses)
is "$(read_all "$n14_PORT")" 0 "all 2,000 keys read: 0 answers differ"
is "$(( $(misses) - m0 ))/$(upstream_selects)" 0/2000 "  ... all from the cache: the refill read each once"
shoal_stop n14

# ---- a corrupt file
cp "$work/full.snap" "$snap"
size=$(stat -c %s "$snap")
printf '\xff' | dd of="$snap" bs=1 seek=$((size / 2)) conv=notrunc status=none
reset_log
if start_node n8 --invalidation binlog; then ok "a node starts with a corrupt snapshot"; else bail "n8"; fi
like "$(cat "$n8_LOG")" "cache snapshot .*cache.snap ignored \\(nothing of it is used\\): at byte [0-9]+: .*checksum does not match" \
  "the log names the file and the reason"
is "$(metric 'shoal_warm_state{state="refused"}')" 1 "the state is refused"
is "$(read_all "$n8_PORT")" 0 "all 2,000 keys read: 0 answers differ"
is "$(upstream_selects)" 2000 "it started cold"
shoal_stop n8

# ---- a warm join: a new node fetches a running peer's snapshot
sum_metric() { curl -s "http://127.0.0.1:$1/metrics" | awk -v m="$2" 'index($1, m "{") == 1 { s += $2 } END { print s + 0 }'; }
PM=$(free_port)
if start_node p1 --invalidation binlog --snapshot-serve --admin-password s3cret --metrics-address "127.0.0.1:$PM" \
  --cache-snapshot "$work/p1.snap"; then ok "a peer starts with --snapshot-serve"; else bail "the peer"; fi
is "$(read_all "$p1_PORT")" 0 "it is filled: 2,000 keys"
h0=$(sum_metric "$PM" shoal_cache_hits_total); m0=$(sum_metric "$PM" shoal_cache_misses_total)
is "$(read_all "$p1_PORT")" 0 "read again"
h1=$(sum_metric "$PM" shoal_cache_hits_total); m1=$(sum_metric "$PM" shoal_cache_misses_total)
is "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PM/snapshot")" 401 "GET /snapshot without the admin login: 401"
is "$(curl -s -o /dev/null -w '%{http_code}' -u admin:wrong "http://127.0.0.1:$PM/snapshot")" 401 "  ... with a wrong password: 401"
code=$(curl -s -o "$work/peer.snap" -w '%{http_code}' -u admin:s3cret "http://127.0.0.1:$PM/snapshot")
is "$code" 200 "  ... with the admin login: 200"
like "$("$SHOAL_BIN" --check-snapshot "$work/peer.snap")" $'entries: +2001 ' "  ... a sound snapshot of its 2,001 entries"
reset_log
JM=$(free_port)
if shoal_start j1 --upstream-db-url "mysql://app:pw@127.0.0.1:$BL_PORT/shoaltest" --auto-cache --invalidation binlog \
  --binlog-user app --binlog-password pw --data-dir "$work/j1" --admin-password s3cret --metrics-address "127.0.0.1:$JM" \
  --warm-from "http://127.0.0.1:$PM/snapshot"; then ok "a new node starts with --warm-from the peer"; else bail "j1"; fi
like "$(cat "$j1_LOG")" "cache snapshot from the peer http://127.0.0.1:$PM/snapshot fetched: [0-9]+ bytes" "it fetched the peer's snapshot"
ok_warm=0
for _ in $(seq 1 100); do
  [ "$(curl -s "http://127.0.0.1:$JM/metrics" | awk '$1 == "shoal_warm_state{state=\"warm\"}" { print $2 }')" = 1 ] && { ok_warm=1; break; }
  sleep 0.1
done
is "$ok_warm" 1 "  ... validated by the binlog replay from the peer's position: warm"
t0=$(date +%s.%N)
is "$(read_all "$j1_PORT")" 0 "its first client traffic, 2,000 keys: 0 answers differ"
t1=$(date +%s.%N)
hj=$(sum_metric "$JM" shoal_cache_hits_total); mj=$(sum_metric "$JM" shoal_cache_misses_total)
ratio_p=$(awk -v h=$((h1 - h0)) -v m=$((m1 - m0)) 'BEGIN { printf "%.4f", h / (h + m) }')
ratio_j=$(awk -v h="$hj" -v m="$mj" 'BEGIN { printf "%.4f", h / (h + m) }')
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
diag "peer's hit ratio $ratio_p; the new node's over its first $secs s of traffic: $ratio_j ($hj hits, $mj misses)"
if awk -v j="$ratio_j" -v p="$ratio_p" -v s="$secs" 'BEGIN { exit !(j >= 0.95 * p && s < 5) }'; then
  ok "within 5 s of its first traffic its hit ratio is at least 95% of the peer's"
else
  not_ok "within 5 s of its first traffic its hit ratio is at least 95% of the peer's"
fi
is "$(upstream_selects)" 0 "the upstream ran none of the keys' SELECTs for it"
is "$(curl -s -o /dev/null -w '%{http_code}' -u admin:s3cret "http://127.0.0.1:$JM/snapshot")" 404 "a node without snapshot_serve answers /snapshot 404"
shoal_stop j1
if shoal_start j2 --upstream-db-url "mysql://app:pw@127.0.0.1:$BL_PORT/shoaltest" --auto-cache --invalidation binlog \
  --binlog-user app --binlog-password pw --data-dir "$work/j2" --admin-password other \
  --warm-from "http://127.0.0.1:$PM/snapshot"; then
  like "$(cat "$j2_LOG")" "cache snapshot from the peer .* not fetched: HTTP 401: the snapshot needs the admin login.*; the node starts cold" \
    "another admin login: the peer refuses, the new node says why and starts cold"
  is "$(read_all "$j2_PORT")" 0 "  ... and answers right"
  shoal_stop j2
else
  not_ok "j2 starts"; not_ok "(skipped)"
fi
if shoal_start j3 --upstream-db-url "mysql://app:pw@127.0.0.1:$BL_PORT/shoaltest" --data-dir "$work/j3" \
  --admin-password s3cret --warm-from "http://127.0.0.1:$(free_port)/snapshot"; then
  like "$(cat "$j3_LOG")" "cache snapshot from the peer .* not fetched: .*; the node starts cold" "a peer that does not answer: the node says why and starts cold"
  shoal_stop j3
else
  not_ok "j3 starts"
fi
shoal_stop p1

# ---- SAVE CACHE TO DISK without cache_snapshot
if shoal_start n9 --upstream-db-url "mysql://app:pw@127.0.0.1:$BL_PORT/shoaltest" --admin-address "127.0.0.1:$APORT" \
  --data-dir "$work/n8"; then
  out=$(mariadb --no-defaults -h127.0.0.1 -P"$APORT" -uadmin -padmin --force -N -e "SAVE CACHE TO DISK; SELECT 'after'" 2>&1)
  like "$out" "ERROR 1105 \(HY000\).*SAVE CACHE TO DISK: cache_snapshot is not set" "without cache_snapshot, SAVE CACHE TO DISK is refused with the reason"
  like "$out" $'\nafter$' "  ... and the admin session goes on"
  shoal_stop n9
else
  not_ok "a node without cache_snapshot starts"; not_ok "(skipped)"
fi

bl_root -e "SET GLOBAL general_log = 0"
done_testing
