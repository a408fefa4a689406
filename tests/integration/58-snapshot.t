#!/usr/bin/env bash
# 58-snapshot: the cache snapshot a node writes at the end of a graceful
# stop (cache_snapshot; docs/operations.md, "Cache snapshot"), read back by
# `shoal --check-snapshot`:
#   - binlog mode, SIGTERM: the file is 0600, holds every entry that could be
#     served (text and prepared keys, their settings and user), the binlog
#     position the follower had applied (the server's, with no write since)
#     and the upstream's server id; the log says what was written;
#   - a write on the upstream, then SIGINT: only the written row's entry was
#     invalidated (row-precise invalidation; read again since, it is in the
#     file), the table's other keys and the other table's kept, the
#     position moved on; the file replaced;
#   - writes mode: no position;
#   - cache_snapshot_data off: the same keys, no result (no row in the file);
#   - a write that cannot be made (its temporary file a folder; its folder
#     missing): the node says why, stops cleanly, and the file before it stays
#     byte for byte;
#   - bad files: cut short, a flipped byte, not a snapshot, another format
#     version, bytes after the end, a folder, a missing file: each refused
#     with its reason (exit 1, or 2 when it cannot be read).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "snapshot: needs a node (SHOAL_FAKE_DIRECT=1)"; fi

plan 44
work="$BUILD_TEST/t58"
rm -rf "$work"
mkdir -p "$work"
binlog_mdb "$work/bl"
bl() { mariadb --no-defaults -h127.0.0.1 -P"$BL_PORT" -uapp -ppw shoaltest "$@"; }
bl -e "CREATE TABLE t58 (id INT PRIMARY KEY, v VARCHAR(20));
       INSERT INTO t58 SELECT seq, CONCAT('v', seq) FROM seq_1_to_20;
       CREATE TABLE t58b (id INT PRIMARY KEY, w VARCHAR(20));
       INSERT INTO t58b SELECT seq, CONCAT('w', seq) FROM seq_1_to_5"
snap="$work/cache.snap"
check_snap() { "$SHOAL_BIN" --check-snapshot "$@" 2>&1; }

start_node() { # name mode extra...
  local name=$1 mode=$2; shift 2
  mkdir -p "$work/$name"
  shoal_start "$name" --upstream-db-url "mysql://app:pw@127.0.0.1:$BL_PORT/shoaltest" --auto-cache \
    --cache-ttl-ms 3600000 --invalidation "$mode" --binlog-user app --binlog-password pw \
    --data-dir "$work/$name" --drain-handoff-ms 0 --cache-snapshot "$snap" "$@"
}

# fill NODE: 20 keys of t58 and 5 of t58b, each read twice (the second a hit),
# and one prepared statement executed with 3 values, twice each (with the
# SELECT 1 shoal_start's check made, 29 entries)
fill() {
  local port=$1 i sql=""
  for i in $(seq 1 20); do sql+="SELECT v FROM t58 WHERE id = $i; SELECT v FROM t58 WHERE id = $i; "; done
  for i in $(seq 1 5); do sql+="SELECT w FROM t58b WHERE id = $i; SELECT w FROM t58b WHERE id = $i; "; done
  mariadb --no-defaults -h127.0.0.1 -P"$port" -uapp -ppw shoaltest -e "$sql" >/dev/null || return 1
  "$PY" - "$port" <<'EOF'
import sys, rawmysql
c = rawmysql.connect(int(sys.argv[1]))
sid, _, _, _ = c.prepare(b"SELECT w FROM t58b WHERE id = ?")
assert sid is not None
for v in (1, 2, 3, 1, 2, 3):
    c.execute(sid, (v,))
c.close_stmt(sid)
c.close()
EOF
}

# ---- binlog mode, SIGTERM
if start_node nb binlog; then ok "a node in binlog mode starts with --cache-snapshot"; else bail "the node starts"; fi
check "25 text keys and 3 prepared ones are filled through it" fill "$nb_PORT"
pos=$(bl -N -e "SELECT @@gtid_binlog_pos")
server_id=$(bl -N -e "SELECT @@server_id")
shoal_stop nb
is "$?" 0 "SIGTERM: the node stops with status 0"
check "the snapshot file is there" test -f "$snap"
is "$(stat -c %a "$snap" 2>/dev/null)" 600 "it is mode 0600 (it holds query results)"
like "$(cat "$nb_LOG")" "cache snapshot .*cache.snap written at the stop: 29 entries of 3 shapes, [0-9]+ bytes of keys and results, [0-9]+ bytes on disk, 0 left out, in [0-9.]+ s" \
  "the log says how many entries and bytes were written, and how long it took"
out=$(check_snap "$snap")
is "$?" 0 "--check-snapshot: the file is sound"
like "$out" $'entries: +29 ' "it holds the 29 entries (25 text keys, 3 prepared, the start check's SELECT 1)"
like "$out" $'\nshapes: +3\n' "... of 3 shapes (the prepared one is t58b's text shape)"
like "$out" $'\nsettings lists: +[12]\nusers: +1' "... with the settings and the user their keys name"
like "$out" $'\nposition: +'"$pos"$'\n' "the position is the server's GTID position ($pos): the follower had applied it"
like "$out" "upstream: +127.0.0.1:$BL_PORT \\(server_id $server_id\\)" "the upstream and its server id"
like "$out" $'\ninvalidation: +binlog\n' "the mode it was written in"
cp "$snap" "$work/first.snap"

# ---- a write on the upstream, then SIGINT
if start_node nb2 binlog; then ok "a second node starts (cold: a snapshot is not loaded yet)"; else bail "the second node starts"; fi
check "it is filled the same way" fill "$nb2_PORT"
bl -e "UPDATE t58 SET v = 'changed' WHERE id = 1"
pos2=$(bl -N -e "SELECT @@gtid_binlog_pos")
got=""
for _ in $(seq 1 100); do
  got=$(via_to nb2 -N -e "SELECT v FROM t58 WHERE id = 1" 2>&1)
  [ "$got" = changed ] && break
  sleep 0.1
done
is "$got" changed "the follower saw the write (t58 invalidated; this read fills id 1 again)"
kill -INT "$nb2_PID"
for _ in $(seq 1 100); do pid_alive "$nb2_PID" || break; sleep 0.1; done
wait "$nb2_PID"
st=$?
nb2_PID=""
is "$st" 0 "SIGINT: the node stops with status 0"
out=$(check_snap "$snap")
is "$?" 0 "the new file is sound"
like "$out" $'entries: +29 ' "it holds all 29: the write invalidated only its own row's entry (row-precise), filled again by the read"
like "$out" $'\nposition: +'"$pos2"$'\n' "the position moved on to the write's ($pos2)"
if cmp -s "$snap" "$work/first.snap"; then not_ok "the file was replaced"; else ok "the file was replaced"; fi

# ---- writes mode
if start_node nw writes; then ok "a node in writes mode starts"; else bail "the writes-mode node starts"; fi
check "it is filled" fill "$nw_PORT"
shoal_stop nw
out=$(check_snap "$snap")
like "$out" $'\ninvalidation: +writes\nposition: +\\(none\\)\n' "writes mode: no binlog position in the file"

# ---- keys only (cache_snapshot_data off): no result on disk
check "a file with results holds t58b's rows (w1)" grep -aq 'w1' "$snap"
if start_node nk writes --cache-snapshot-data=false; then ok "a node with --cache-snapshot-data=false starts"; else bail "nk"; fi
check "it is filled" fill "$nk_PORT"
shoal_stop nk
like "$(cat "$nk_LOG")" "cache snapshot .*cache.snap written at the stop: 29 entries of 3 shapes, [0-9]+ bytes of keys \\(keys only: cache_snapshot_data is off\\)" \
  "the log says the file holds the keys only"
out=$(check_snap "$snap")
is "$?" 0 "the keys-only file is sound"
like "$out" $'\nresults: +none \\(keys only' "--check-snapshot says it holds no result"
like "$out" $'entries: +29 ' "  ... and the 29 keys"
if grep -aq 'w1' "$snap"; then not_ok "no row is in the file"; else ok "no row is in the file"; fi

# ---- a write that cannot be made leaves the file before it
cp "$snap" "$work/before.snap"
mkdir -p "$snap.tmp"
start_node nx writes >/dev/null && fill "$nx_PORT"
shoal_stop nx
is "$?" 0 "the temporary file cannot be made (a folder is in its place): the node still stops with status 0"
like "$(cat "$nx_LOG")" "cache snapshot .*cache.snap not written at the stop \\(the file before it stays\\): cannot remove .*cache.snap.tmp" \
  "the log says the snapshot was not written, and why"
check "the file before it stays, byte for byte" cmp -s "$snap" "$work/before.snap"
rmdir "$snap.tmp"

# ---- bad files
bad() { # file want-exit reason-regex desc
  local out rc
  out=$(check_snap "$1"); rc=$?
  if [ "$rc" = "$2" ] && grep -Eq "$3" <<<"$out"; then ok "$4"; else not_ok "$4"; diag "exit $rc: $out"; fi
}
size=$(stat -c %s "$work/first.snap")
head -c $((size - 7)) "$work/first.snap" >"$work/cut.snap"
bad "$work/cut.snap" 1 "not a sound snapshot, at byte [0-9]+: the file is cut short" "a file cut short is refused"
cp "$work/first.snap" "$work/flip.snap"
printf '\xff' | dd of="$work/flip.snap" bs=1 seek=$((size / 2)) conv=notrunc status=none
bad "$work/flip.snap" 1 "checksum does not match" "a flipped byte is refused (a checksum)"
printf 'hello, not a snapshot\n' >"$work/text.snap"
bad "$work/text.snap" 1 "no SHOALSNP magic" "a file that is no snapshot is refused"
cp "$work/first.snap" "$work/v9.snap"
printf '\x09' | dd of="$work/v9.snap" bs=1 seek=8 conv=notrunc status=none
bad "$work/v9.snap" 1 "format version 9 \\(this node reads versions 1 to 2\\)" "another format version is refused, named"
{ cat "$work/first.snap"; printf 'x'; } >"$work/tail.snap"
bad "$work/tail.snap" 1 "bytes after the end record" "bytes after the end record are refused"
bad "$work" 2 "cannot be read" "a folder cannot be read (exit 2)"
bad "$work/none.snap" 2 "cannot be read: No such file" "a missing file cannot be read (exit 2)"
bad "$work/first.snap" 0 "entries: +29" "the first file still reads (the checks above used copies)"
done_testing
