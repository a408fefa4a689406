#!/usr/bin/env bash
# 53-row-inval: issue 40, row-precise invalidation (docs/caching.md, "What a
# write invalidates"). Against a private MariaDB with its binlog on (ROW) and
# an AUTO_CACHE node in binlog mode, writes made directly on the upstream
# must invalidate the cached answers they can change (no stale answer: a
# read through the node gives the upstream's answer once the write is
# applied) and leave the other keys of the same table cached (a read of
# them is a hit). The traps of the issue:
#   - a row moving out of an entry's constraint (the before image matches),
#     and into another's (the after image);
#   - an UPDATE of the constrained (primary key) column;
#   - REPLACE over an existing row (its old row's values);
#   - INSERT ... ON DUPLICATE KEY UPDATE;
#   - a multi-table UPDATE;
#   - TRUNCATE (a statement: the whole table);
#   - a cascading delete (the child's rows are not logged: the child goes whole);
#   - a trigger writing another table (its rows are logged: matched by row);
#   - an UPDATE through a MINIMAL row image (columns absent: counted as a match);
#   - tables and views named in mixed case (`CamelItems`) on a server whose
#     names are case-sensitive: cached, and invalidated by their rows;
#   - invalidation_granularity = table turns row precision off: a changed
#     row invalidates every answer of its table, counted as such;
# (each table is read once first: a fill before the catalog reader has read
# the table's columns keeps no constraint on it);
# then what is seen from outside: /metrics, SHOW SHOAL STATUS and the
# admin's stats_shoal_entry_constraints.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then skip_all "row-precise invalidation: needs a node (SHOAL_FAKE_DIRECT=1)"; fi

plan 54
work="$BUILD_TEST/t53"
rm -rf "$work"
mkdir -p "$work"
binlog_mdb "$work/mdb"
bl() { mariadb --no-defaults -h127.0.0.1 -uapp -ppw -P"$BL_PORT" shoaltest "$@"; }

bl -e "
CREATE TABLE t (id INT PRIMARY KEY, k INT, v INT, name VARCHAR(20)) ENGINE=InnoDB;
INSERT INTO t SELECT seq, seq % 3, 0, CONCAT('n', seq) FROM seq_1_to_20;
CREATE TABLE m1 (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
CREATE TABLE m2 (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
INSERT INTO m1 VALUES (1, 0), (2, 0); INSERT INTO m2 VALUES (1, 0), (2, 0);
CREATE TABLE tt (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
INSERT INTO tt VALUES (1, 1), (2, 2);
CREATE TABLE parent (id INT PRIMARY KEY) ENGINE=InnoDB;
CREATE TABLE child (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES parent (id)
  ON DELETE CASCADE) ENGINE=InnoDB;
INSERT INTO parent VALUES (1), (2); INSERT INTO child VALUES (10, 1), (11, 1), (20, 2);
CREATE TABLE src (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
CREATE TABLE audit (n INT AUTO_INCREMENT PRIMARY KEY, sid INT, v INT) ENGINE=InnoDB;
INSERT INTO src VALUES (1, 0), (2, 0); INSERT INTO audit (sid, v) VALUES (1, 0), (2, 0);
CREATE TRIGGER src_audit AFTER UPDATE ON src FOR EACH ROW
  INSERT INTO audit (sid, v) VALUES (NEW.id, NEW.v);
CREATE TABLE mini (id INT PRIMARY KEY, k INT, v INT) ENGINE=InnoDB;
INSERT INTO mini VALUES (1, 1, 0), (2, 2, 0), (3, 3, 0);
CREATE TABLE CamelItems (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
INSERT INTO CamelItems VALUES (1, 0), (2, 0);
CREATE VIEW CamelView AS SELECT id, v FROM CamelItems;" 2>&1 | head -5

METRICS_P=$(free_port)
ADMIN_P=$(free_port)
mkdir -p "$work/nb"
if shoal_start nb --auto-cache --upstream-db-url "mysql://app:pw@127.0.0.1:$BL_PORT/shoaltest" \
  --invalidation binlog --metrics-address "127.0.0.1:$METRICS_P" --admin-address "127.0.0.1:$ADMIN_P" \
  --data-dir "$work/nb"; then
  ok "an AUTO_CACHE node in binlog mode"
else
  bail "an AUTO_CACHE node in binlog mode"
fi

NODE=nb   # the node q, hits, warm and cached read through
q() { via_to "$NODE" -N -e "$1" 2>&1; }
d() { bl -N -e "$1" 2>&1; }
hits() { via_to "$NODE" -N -e "SHOW SHOAL STATUS" 2>/dev/null | awk -F'\t' '$1 == "Cache Hits" {print $2}'; }
# warm SQL...: each read through the node until it is a hit (stored: its
# tables checked by the catalog reader, no fence open)
warm() {
  local s h0 i
  for s in "$@"; do
    for ((i = 0; i < 40; i++)); do
      h0=$(hits)
      q "$s" >/dev/null
      [ "$(hits)" -gt "$h0" ] && break
      sleep 0.05
    done
  done
}
# fresh SQL DESC: the node gives the upstream's answer (within 3 s: the
# follower applies the write; an entry not invalidated would stay stale)
fresh() {
  local want got i
  want=$(d "$1")
  for ((i = 0; i < 60; i++)); do
    got=$(q "$1")
    [ "$got" = "$want" ] && break
    sleep 0.05
  done
  is "$got" "$want" "$2"
}
# cached SQL DESC: a read through the node is a hit, and right
cached() {
  local h0 h1 got want
  h0=$(hits)
  got=$(q "$1")
  h1=$(hits)
  want=$(d "$1")
  if [ "$got" = "$want" ] && [ "${h1:-0}" -gt "${h0:-0}" ]; then ok "$2"; else
    not_ok "$2"
    diag "got '$got' want '$want', hits $h0 -> $h1"
  fi
}
# The first read of a table after the start (or a DDL) has the catalog
# reader read its columns: until then a fill keeps no row constraint on it
# (any change to the table invalidates that one entry). Read each once.
for tb in t m1 m2 tt parent child src audit mini CamelItems; do warm "SELECT COUNT(*) FROM $tb"; done

# ---- a row moving out of a constraint, and into another
warm "SELECT COUNT(*), SUM(v) FROM t WHERE k = 1" "SELECT COUNT(*), SUM(v) FROM t WHERE k = 2" \
  "SELECT COUNT(*), SUM(v) FROM t WHERE k = 0" "SELECT v, name FROM t WHERE id = 1" \
  "SELECT v, name FROM t WHERE id = 2" "SELECT v, name FROM t WHERE id = 5"
cached "SELECT COUNT(*), SUM(v) FROM t WHERE k = 1" "warm: the k = 1 answer is cached"
bl -e "UPDATE t SET k = 2 WHERE id = 1"    # k 1 -> 2
fresh "SELECT COUNT(*), SUM(v) FROM t WHERE k = 1" "a row moves out of k = 1: that answer is invalidated (before image)"
fresh "SELECT COUNT(*), SUM(v) FROM t WHERE k = 2" "  ... and into k = 2: that one too (after image)"
cached "SELECT COUNT(*), SUM(v) FROM t WHERE k = 0" "  ... k = 0 stays cached"
cached "SELECT v, name FROM t WHERE id = 2" "  ... and so does another key of the table"
fresh "SELECT v, name FROM t WHERE id = 1" "  ... the row's own key is invalidated"

# ---- an UPDATE of the constrained column (the primary key)
warm "SELECT v, name FROM t WHERE id = 1" "SELECT v, name FROM t WHERE id = 3" "SELECT name FROM t WHERE id IN (5, 6)"
bl -e "UPDATE t SET id = 55 WHERE id = 5"
fresh "SELECT v, name FROM t WHERE id = 5" "UPDATE of the key: the old key's answer is invalidated"
fresh "SELECT name FROM t WHERE id IN (5, 6)" "  ... and an IN over it"
fresh "SELECT v, name FROM t WHERE id = 55" "  ... the new key reads the moved row"
cached "SELECT v, name FROM t WHERE id = 3" "  ... another key stays cached"

# ---- REPLACE over an existing row
warm "SELECT COUNT(*) FROM t WHERE k = 0" "SELECT v, name FROM t WHERE id = 3" "SELECT v, name FROM t WHERE id = 4" \
  "SELECT COUNT(*) FROM t WHERE name = 'N3'"
bl -e "REPLACE INTO t VALUES (3, 7, 100, 'r3')"    # id 3 was k 0, name n3
fresh "SELECT v, name FROM t WHERE id = 3" "REPLACE: the replaced key's answer is invalidated"
fresh "SELECT COUNT(*) FROM t WHERE k = 0" "  ... and the old row's k = 0 (its old values)"
fresh "SELECT COUNT(*) FROM t WHERE name = 'N3'" "  ... and its old name, compared case-insensitively"
cached "SELECT v, name FROM t WHERE id = 4" "  ... another key stays cached"

# ---- INSERT ... ON DUPLICATE KEY UPDATE
warm "SELECT v FROM t WHERE id = 4" "SELECT v FROM t WHERE id = 6"
bl -e "INSERT INTO t VALUES (4, 1, 0, 'x') ON DUPLICATE KEY UPDATE v = v + 10"
fresh "SELECT v FROM t WHERE id = 4" "INSERT ... ON DUPLICATE KEY UPDATE: the key's answer is invalidated"
cached "SELECT v FROM t WHERE id = 6" "  ... another key stays cached"

# ---- a multi-table UPDATE
warm "SELECT v FROM m1 WHERE id = 1" "SELECT v FROM m2 WHERE id = 1" "SELECT v FROM m1 WHERE id = 2" \
  "SELECT v FROM m2 WHERE id = 2"
bl -e "UPDATE m1 JOIN m2 ON m1.id = m2.id SET m1.v = m1.v + 1, m2.v = m2.v + 1 WHERE m1.id = 1"
fresh "SELECT v FROM m1 WHERE id = 1" "multi-table UPDATE: m1's key is invalidated"
fresh "SELECT v FROM m2 WHERE id = 1" "  ... and m2's"
cached "SELECT v FROM m1 WHERE id = 2" "  ... m1's other key stays cached"
cached "SELECT v FROM m2 WHERE id = 2" "  ... and m2's"

# ---- TRUNCATE: a statement, the whole table
warm "SELECT v FROM tt WHERE id = 1" "SELECT v FROM tt WHERE id = 2"
bl -e "TRUNCATE TABLE tt"
fresh "SELECT v FROM tt WHERE id = 1" "TRUNCATE: every answer of the table is invalidated"
fresh "SELECT v FROM tt WHERE id = 2" "  ... whatever its key"

# ---- a cascading delete: the child's rows are not in the binlog
warm "SELECT COUNT(*) FROM child WHERE pid = 1" "SELECT COUNT(*) FROM child WHERE pid = 2" \
  "SELECT id FROM child WHERE id = 10" "SELECT id FROM parent WHERE id = 2"
bl -e "DELETE FROM parent WHERE id = 1"
fresh "SELECT COUNT(*) FROM child WHERE pid = 1" "a cascading delete: the child's answers are invalidated"
fresh "SELECT id FROM child WHERE id = 10" "  ... by key too (the child goes whole)"
fresh "SELECT COUNT(*) FROM child WHERE pid = 2" "  ... and the rest of the child is right"
cached "SELECT id FROM parent WHERE id = 2" "  ... the parent's other key stays cached"

# ---- a trigger writing another table: its rows are logged
warm "SELECT COUNT(*), SUM(v) FROM audit WHERE sid = 1" "SELECT COUNT(*), SUM(v) FROM audit WHERE sid = 2" \
  "SELECT v FROM src WHERE id = 1" "SELECT v FROM src WHERE id = 2"
bl -e "UPDATE src SET v = 5 WHERE id = 1"
fresh "SELECT v FROM src WHERE id = 1" "a trigger's table: the written key is invalidated"
fresh "SELECT COUNT(*), SUM(v) FROM audit WHERE sid = 1" "  ... the trigger's row invalidates what it matches"
cached "SELECT COUNT(*), SUM(v) FROM audit WHERE sid = 2" "  ... and not the rest of the trigger's table"
cached "SELECT v FROM src WHERE id = 2" "  ... nor another key of the written table"

# ---- MINIMAL row images: the before image has the key only
warm "SELECT v FROM mini WHERE id = 2" "SELECT v FROM mini WHERE id = 3" "SELECT COUNT(*) FROM mini WHERE k = 1"
bl -e "SET SESSION binlog_row_image = 'MINIMAL'; UPDATE mini SET k = 1 WHERE id = 2"
fresh "SELECT COUNT(*) FROM mini WHERE k = 1" "MINIMAL: an entry on a column the before image lacks is invalidated"
fresh "SELECT v FROM mini WHERE id = 2" "  ... and the key's"
cached "SELECT v FROM mini WHERE id = 3" "  ... another key, compared on the key, stays cached"

# ---- a prepared statement: its placeholders' values are its constraints
# pq ID: SELECT v FROM t WHERE id = ? executed through the node (binary protocol)
pq() {
  perl -MDBI -e 'my $d = DBI->connect("DBI:MariaDB:database=shoaltest;host=127.0.0.1;port=$ARGV[0];mariadb_server_prepare=1",
    "app", "pw", { RaiseError => 1 }); my $s = $d->prepare("SELECT v FROM t WHERE id = ?");
    $s->execute($ARGV[1]); print join(",", map { $_->[0] } @{ $s->fetchall_arrayref }), "\n"' "$nb_PORT" "$1" 2>&1
}
for i in 1 2 3; do pq 8 >/dev/null; pq 9 >/dev/null; done
bl -e "UPDATE t SET v = v + 1 WHERE id = 8"
want=$(d "SELECT v FROM t WHERE id = 8")
for ((i = 0; i < 60; i++)); do got=$(pq 8); [ "$got" = "$want" ] && break; sleep 0.05; done
is "$got" "$want" "a prepared statement's execute: the written key's answer is invalidated"
h0=$(hits)
got=$(pq 9)
h1=$(hits)
if [ "$got" = "$(d "SELECT v FROM t WHERE id = 9")" ] && [ "${h1:-0}" -gt "${h0:-0}" ]; then
  ok "  ... another key's execute stays cached (its bound value is its constraint)"
else
  not_ok "  ... another key's execute stays cached"; diag "got $got, hits $h0 -> $h1"
fi

# ---- names in mixed case: the server knows `CamelItems`, not `camelitems`
# (before, the check of its generated columns asked by the folded name,
# found no column and never cached the table)
warm "SELECT v FROM CamelItems WHERE id = 1" "SELECT v FROM CamelItems WHERE id = 2" \
  "SELECT v FROM CamelView WHERE id = 2"
cached "SELECT v FROM CamelItems WHERE id = 1" "a table named in mixed case is cached"
cached "SELECT v FROM CamelView WHERE id = 2" "  ... and a view named so"
bl -e "UPDATE CamelItems SET v = 7 WHERE id = 2"
fresh "SELECT v FROM CamelView WHERE id = 2" "  ... the view's answer is invalidated by its base table's row"
cached "SELECT v FROM CamelItems WHERE id = 1" "  ... and the table's other key stays cached"

# ---- seen from outside
m=$(curl -s "http://127.0.0.1:$METRICS_P/metrics")
rows=$(awk '$1 == "shoal_invalidations_by_row_total{reason=\"row_matched\"}" {print $2}' <<<"$m")
if [ "${rows:-0}" -gt 0 ]; then ok "/metrics: $rows entries invalidated by row"; else
  not_ok "/metrics: entries invalidated by row"; diag "$(grep '^shoal_invalidations_by' <<<"$m")"
fi
like "$m" 'shoal_invalidations_by_table_total\{reason="cascade"\} [1-9]' "/metrics: a cascade counted by table"
like "$m" 'shoal_invalidations_by_table_total\{reason="statement_event"\} [1-9]' "/metrics: TRUNCATE's statement counted"
like "$m" 'shoal_row_index_postings [1-9]' "/metrics: the index's postings"
st=$(via_to nb -e "SHOW SHOAL STATUS" 2>&1)
like "$st" "Invalidations By Row" "SHOW SHOAL STATUS: invalidations by row"
like "$st" "Invalidations By Table" "  ... by table"
warm "SELECT v, name FROM t WHERE id = 7"
ad=$(mariadb --no-defaults -h127.0.0.1 -P"$ADMIN_P" -uadmin -padmin -N \
  -e "SELECT query, constraints FROM stats_shoal_entry_constraints" 2>&1)
like "$ad" "WHERE id = 7.*shoaltest\.t: id IN \(7\)" "admin: stats_shoal_entry_constraints shows an entry's constraints"

# ---- invalidation_granularity = table: a second node, row precision off
out=$("$SHOAL_BIN" --invalidation-granularity column --upstream-db-url "mysql://app:pw@127.0.0.1:$BL_PORT/shoaltest" 2>&1)
rc=$?
if [ $rc = 2 ] && [[ $out == *invalidation-granularity* ]] && [[ $out == *row* ]]; then
  ok "an unknown granularity is a start-up error naming the setting and its values (exit 2)"
else
  not_ok "an unknown granularity is a start-up error"; diag "exit $rc: $out"
fi
MT_P=$(free_port)
mkdir -p "$work/nt"
if shoal_start nt --auto-cache --upstream-db-url "mysql://app:pw@127.0.0.1:$BL_PORT/shoaltest" \
  --invalidation binlog --invalidation-granularity table --metrics-address "127.0.0.1:$MT_P" \
  --data-dir "$work/nt"; then
  ok "a node with invalidation_granularity = table"
else
  bail "a node with invalidation_granularity = table"
fi
NODE=nt
warm "SELECT COUNT(*) FROM t" "SELECT v FROM t WHERE id = 10" "SELECT v FROM t WHERE id = 11"
cached "SELECT v FROM t WHERE id = 11" "table granularity: warm, id = 11 is cached"
bl -e "UPDATE t SET v = v + 1 WHERE id = 10"
fresh "SELECT v FROM t WHERE id = 10" "  ... a changed row: its key's answer is invalidated"
# the row change reached this node (its key read the new value): was the
# other key's answer invalidated with it? A read of it is a miss.
h0=$(hits)
got=$(q "SELECT v FROM t WHERE id = 11")
h1=$(hits)
if [ "$got" = "$(d "SELECT v FROM t WHERE id = 11")" ] && [ "${h1:-0}" = "${h0:-0}" ]; then
  ok "  ... and the other key of the table too (a miss, the right answer)"
else
  not_ok "  ... and the other key of the table too"; diag "got $got, hits $h0 -> $h1"
fi
like "$(curl -s "http://127.0.0.1:$MT_P/metrics")" \
  'shoal_invalidations_by_table_total\{reason="granularity_table"\} [1-9]' \
  "  ... counted as granularity_table by table"

done_testing
