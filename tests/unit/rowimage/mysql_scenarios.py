"""The MySQL 8.0 scenarios of gen_vectors.py (the server started with
--log-bin=binlog --binlog-format=ROW --binlog-row-metadata=FULL)."""

SCENARIOS = [
    ("y_full", """
SET time_zone = '+00:00';
SET sql_mode = '';
INSERT INTO t_int VALUES
 (1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295,
  -9223372036854775808, 18446744073709551615),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE t_int SET ti = -1, bu = 42 WHERE id = 1;
DELETE FROM t_int WHERE id = 3;
INSERT INTO t_num VALUES
 (1, 12345678.91, -12345678901234567890123456789012345.123456789012345678901234567891,
  0, 0.0000000001, 1.5, -2.25e-300, 1, 0xABC, 0xFFFFFFFFFFFFFFFF, 2024);
INSERT INTO t_str VALUES
 (1, 'ab', CONVERT(0x68C3A96C6C6F USING utf8mb4), 'x', REPEAT('x', 300), 'ab', 0x00FF, 'b', 'x,z', 'm1,m18');
INSERT INTO t_blob VALUES
 (1, 0x00FF, 'blob', REPEAT('m', 300), 'long', CONVERT(0x636166C3A9 USING utf8mb4), '{"a": [1, 2]}', ST_GeomFromText('POINT(1 2)'));
INSERT INTO t_time VALUES
 (1, '2024-02-29', '-838:59:59', '12:34:56.789', '-00:00:01.5', '1000-01-01 00:00:00',
  '2024-02-29 23:59:59.9', '9999-12-31 23:59:59.9999', '2001-02-03 04:05:06.000007',
  '2038-01-19 03:14:07', '1970-01-01 00:00:01.01', '2024-06-01 12:00:00.123456', 1901);
INSERT INTO t_sign VALUES (1, 2001, 5, 4294967295, -2, -1.5, 999.9, 200);
INSERT INTO t_json VALUES (1, '{"a": 1, "b": "long string value", "c": [1, 2, 3]}', 'v');
"""),
    ("y_minimal", """
SET SESSION binlog_row_image = MINIMAL;
UPDATE t_int SET ti = 5 WHERE id = 1;
INSERT INTO t_int (id, ti) VALUES (10, 7);
DELETE FROM t_int WHERE id = 10;
"""),
    ("y_partial", """
SET SESSION binlog_row_image = MINIMAL;
SET SESSION binlog_row_value_options = PARTIAL_JSON;
UPDATE t_json SET j = JSON_SET(j, '$.a', 5) WHERE id = 1;
UPDATE t_json SET j = JSON_REPLACE(j, '$.b', 'x'), v = 'w' WHERE id = 1;
UPDATE t_json SET j = '[]' WHERE id = 1;
"""),
]
