#!/usr/bin/env python3
"""gen_vectors.py: capture the row-image test vectors from real servers.

    tests/unit/rowimage/gen_vectors.py --maria-socket SOCK --maria-datadir DIR \
        [--mysql-socket SOCK --mysql-datadir DIR] [--out tests/unit/rowimage_vectors.h]

Needs a private MariaDB 10.11 started with --log-bin=binlog
--binlog-format=ROW --binlog-row-image=FULL --binlog-row-metadata=FULL
--server-id=1 (scripts/start-mariadb with MARIADB_EXTRA_ARGS), and for
the MySQL vectors a MySQL 8.0 (../shared/peers/mysql-8.0, as
../shared/peers/README.md starts it) with the same binlog options and
--gtid-mode=ON --enforce-gtid-consistency=ON. Both binlogs are read from
their data directories, so run it as the servers' user. The vectors in
the tree came from MariaDB 10.11.19 (Debian 12) and MySQL 8.0.39.
For each scenario below (and mysql_scenarios.py's) it runs FLUSH BINARY LOGS,
the scenario's statements, FLUSH BINARY LOGS again, and reads the closed
binlog file: the TABLE_MAP and rows events it holds, whole (common header,
body, CRC32), go into the header as hex, in binlog order. The decoded
values expected are written in tests/unit/test_rowimage.c by hand, from
the statements here, not from the decoder.
"""
import argparse
import os
import subprocess

TABLE_MAP = 19
ROWS = {23, 24, 25, 30, 31, 32, 39, 166, 167, 168, 169, 170, 171}

WIDE_COLS = 300


def wide_sql():
    cols = ", ".join("c%d TINYINT" % i for i in range(1, WIDE_COLS))
    vals = ", ".join("NULL" if i % 7 == 0 else str(i % 128) for i in range(1, WIDE_COLS))
    return ("CREATE TABLE rowimg.t_wide (id INT NOT NULL PRIMARY KEY, %s) ENGINE=InnoDB;\n" % cols,
            "INSERT INTO t_wide VALUES (1, %s);\n" % vals)


MARIA = [
    ("m_full", """
SET time_zone = '+00:00';
SET sql_mode = '';
INSERT INTO t_int VALUES
 (1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295,
  -9223372036854775808, 18446744073709551615),
 (2, 127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 0),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE t_int SET ti = -1, bu = 42 WHERE id = 1;
DELETE FROM t_int WHERE id = 2;
INSERT INTO t_num VALUES
 (1, 12345678.91, -12345678901234567890123456789012345.123456789012345678901234567891,
  0, 0.0000000001, 1.5, -2.25e-300, 1, 0xABC, 0xFFFFFFFFFFFFFFFF, 2024),
 (2, -0.05, 0, -99999, 9999999999.9999999999, -0.0, 3.141592653589793, 0, 0, 1, 1901),
 (3, 100, 1.000000000000000000000000000001, 7, 1, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO t_str VALUES
 (1, 'ab', CONVERT(0x68C3A96C6C6F USING utf8mb4), 'x', REPEAT('x', 300), 'ab', 0x00FF, 'b', 'x,z', 'm1,m18'),
 (2, '  sp  ', '', '', '', '', '', 'a', '', ''),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE t_str SET c2 = CONVERT(0x68C3A96C6C6F20F09F909F USING utf8mb4), v = 'changed' WHERE id = 1;
DELETE FROM t_str WHERE id = 3;
INSERT INTO t_blob VALUES
 (1, 0x00FF, 'blob', REPEAT('m', 300), 'long', CONVERT(0x636166C3A9 USING utf8mb4), '{"a": [1, 2]}', ST_GeomFromText('POINT(1 2)')),
 (2, '', '', '', '', '', NULL, NULL);
INSERT INTO t_time VALUES
 (1, '2024-02-29', '-838:59:59', '12:34:56.789', '-00:00:01.5', '1000-01-01 00:00:00',
  '2024-02-29 23:59:59.9', '9999-12-31 23:59:59.9999', '2001-02-03 04:05:06.000007',
  '2038-01-19 03:14:07', '1970-01-01 00:00:01.01', '2024-06-01 12:00:00.123456', 1901),
 (2, '0000-00-00', '00:00:00', '-12:34:56.789', '838:59:59.999999', '0000-00-00 00:00:00',
  '0000-00-00 00:00:00.0', '1999-12-31 23:59:59.0001', '2000-01-01 00:00:00.5',
  '0000-00-00 00:00:00', '2000-01-01 00:00:00.99', '2000-01-01 00:00:00.000001', 0),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO t_nopk VALUES (1, 'a'), (2, NULL);
INSERT INTO t_sign VALUES (1, 2001, 5, 4294967295, -2, -1.5, 999.9, 200);
INSERT INTO t_oldtime VALUES (1, '-01:02:03', '2024-02-29 12:34:56', '2024-06-01 00:00:00',
  '-01:02:03.456', '2024-02-29 12:34:56.000789');
""" + "%WIDE%"),
    ("m_minimal", """
SET time_zone = '+00:00';
SET SESSION binlog_row_image = MINIMAL;
UPDATE t_int SET ti = 5 WHERE id = 1;
UPDATE t_str SET e = 'c', s = '' WHERE id = 1;
DELETE FROM t_time WHERE id = 2;
INSERT INTO t_int (id, ti) VALUES (10, 7);
UPDATE t_nopk SET b = 'q' WHERE a = 1;
"""),
    ("m_noblob", """
SET SESSION binlog_row_image = NOBLOB;
UPDATE t_blob SET tb = 0x01 WHERE id = 1;
UPDATE t_blob SET id = 3 WHERE id = 2;
"""),
    ("m_meta", """
SET GLOBAL binlog_row_metadata = MINIMAL;
UPDATE t_str SET v = 'm' WHERE id = 1;
UPDATE t_int SET tu = 254 WHERE id = 1;
SET GLOBAL binlog_row_metadata = NO_LOG;
UPDATE t_int SET tu = 200 WHERE id = 1;
UPDATE t_str SET v = 'n' WHERE id = 1;
SET GLOBAL binlog_row_metadata = FULL;
"""),
    ("m_compress", """
SET GLOBAL log_bin_compress = ON;
SET GLOBAL log_bin_compress_min_len = 10;
INSERT INTO t_str VALUES (5, 'cmp', 'compressed row', 'v5', REPEAT('z', 40), 'q', 0x0102, 'c', 'y', 'm2');
UPDATE t_str SET v = 'v5b' WHERE id = 5;
DELETE FROM t_str WHERE id = 5;
SET GLOBAL log_bin_compress = OFF;
"""),
    ("m_multi", """
INSERT INTO t_int (id, i) SELECT 100 + seq, seq * 1000 FROM seq_1_to_40;
DELETE FROM t_int WHERE id > 100;
"""),
]


def run_sql(sock, sql, binary="mariadb"):
    subprocess.run([binary, "--no-defaults", "--socket=" + sock, "-uroot", "--batch"],
                   input=sql.encode(), check=True)


def last_binlog(sock, binary="mariadb"):
    out = subprocess.run([binary, "--no-defaults", "--socket=" + sock, "-uroot", "--batch",
                          "--skip-column-names", "-e", "SHOW BINARY LOGS"],
                         check=True, capture_output=True).stdout.decode().split("\n")
    return [line.split("\t")[0] for line in out if line.strip()][-1]


def events(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"\xfebin", path
    pos = 4
    while pos + 19 <= len(data):
        length = int.from_bytes(data[pos + 9:pos + 13], "little")
        etype = data[pos + 4]
        yield etype, data[pos:pos + length]
        pos += length


def capture(sock, datadir, scenarios, binary):
    out = []
    for name, sql in scenarios:
        run_sql(sock, "FLUSH BINARY LOGS;", binary)
        f = last_binlog(sock, binary)
        run_sql(sock, "USE rowimg;\n" + sql, binary)
        run_sql(sock, "FLUSH BINARY LOGS;", binary)
        evs = [(t, b) for t, b in events(os.path.join(datadir, f)) if t == TABLE_MAP or t in ROWS]
        out.append((name, evs))
    return out


def emit(out_path, groups):
    with open(out_path, "w") as o:
        o.write("/* Generated by tests/unit/rowimage/gen_vectors.py from real servers:\n"
                " * whole binlog events (header, body, CRC32), in binlog order. Do not edit. */\n")
        o.write("struct rv_event {\n\tconst char *scenario;\n\tunsigned type;\n\tunsigned len;\n"
                "\tconst char *hex;\n};\n\nstatic const struct rv_event rv_events[] = {\n")
        n = 0
        for name, evs in groups:
            for t, b in evs:
                h = b.hex()
                o.write('\t{ "%s", %d, %d,\n' % (name, t, len(b)))
                for i in range(0, len(h), 96):
                    o.write('\t  "%s"%s\n' % (h[i:i + 96], "" if i + 96 < len(h) else " },"))
                n += 1
        o.write("};\n#define RV_NEVENTS %d\n" % n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--maria-socket", required=True)
    ap.add_argument("--maria-datadir", required=True)
    ap.add_argument("--mysql-socket")
    ap.add_argument("--mysql-datadir")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "..", "rowimage_vectors.h"))
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    create, insert = wide_sql()
    with open(os.path.join(here, "maria_schema.sql")) as f:
        run_sql(a.maria_socket, f.read() + create)
    scen = [(n, s.replace("%WIDE%", insert)) for n, s in MARIA]
    groups = capture(a.maria_socket, a.maria_datadir, scen, "mariadb")
    if a.mysql_socket:
        import mysql_scenarios  # noqa: E402  (beside this file)
        with open(os.path.join(here, "mysql_schema.sql")) as f:
            run_sql(a.mysql_socket, f.read(), "mariadb")
        groups += capture(a.mysql_socket, a.mysql_datadir, mysql_scenarios.SCENARIOS, "mariadb")
    emit(a.out, groups)
    for name, evs in groups:
        print("%-12s %d events" % (name, len(evs)))


if __name__ == "__main__":
    main()
