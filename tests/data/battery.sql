-- tests/data/battery.sql: statement groups for tests/integration/10-battery.t.
-- Each group (from one "-- group: NAME" line to the next) is fed to one
-- `mariadb --column-type-info --show-warnings -vvv --force` session, once
-- straight to MariaDB and once through the node, and the two outputs must be
-- identical. An optional "-- args: ..." line right after the group line adds
-- client options (default: --default-character-set=utf8mb4).
-- Groups run one after the other on the same server, direct first: anything a
-- group creates it must drop again (or use TEMPORARY tables), and nothing may
-- depend on connection ids, the clock or the server's counters.
-- Needs tests/data/types.sql loaded (table shoal_types).

-- group: select-all-types
SELECT * FROM shoal_types ORDER BY id;

-- group: select-nulls-and-empties
SELECT * FROM shoal_types WHERE id IN (4, 5) ORDER BY id;
SELECT id, c_int IS NULL, c_json IS NULL, COALESCE(c_varchar, 'was null') FROM shoal_types ORDER BY id;

-- group: select-ints-and-decimals
SELECT id, c_tinyint, c_tinyint_u, c_smallint, c_smallint_u, c_mediumint, c_mediumint_u,
       c_int, c_int_u, c_bigint, c_bigint_u, c_decimal, c_float, c_double, c_bool
  FROM shoal_types ORDER BY id;
SELECT c_bigint_u + 0, c_decimal * 2, c_float / 3, c_double - 1 FROM shoal_types WHERE id = 3;

-- group: select-temporal
SELECT id, c_date, c_time, c_datetime, c_timestamp, c_year FROM shoal_types ORDER BY id;
SELECT DATE_FORMAT(c_datetime, '%Y-%m-%d %H:%i:%s.%f'), TIME_TO_SEC(c_time), UNIX_TIMESTAMP(c_datetime) FROM shoal_types WHERE id = 3;

-- group: select-binary-and-bits
SELECT id, c_bit8, c_bit64, c_binary, c_varbinary, c_tinyblob, LENGTH(c_blob), LENGTH(c_mediumblob), LENGTH(c_longblob) FROM shoal_types ORDER BY id;
SELECT HEX(c_bit8), c_bit64 + 0, HEX(c_binary), HEX(c_varbinary), MD5(c_longblob) FROM shoal_types ORDER BY id;

-- group: select-text-utf8mb4
SELECT id, c_char, c_varchar, c_tinytext, CHAR_LENGTH(c_mediumtext), LENGTH(c_mediumtext), c_latin1 FROM shoal_types ORDER BY id;
SELECT c_varchar, CHAR_LENGTH(c_varchar), LENGTH(c_varchar), HEX(c_varchar) FROM shoal_types WHERE id = 3;
SELECT 'Shoal 🐟 — 😀' AS fish, _utf8mb4 X'F09F9180' AS eyes;

-- group: select-enum-set-json-geometry
SELECT id, c_enum, c_set, c_json, ST_AsText(c_geometry), ST_AsText(c_point), c_geometry, c_inet6, c_uuid FROM shoal_types ORDER BY id;
SELECT JSON_EXTRACT(c_json, '$.a'), JSON_VALUE(c_json, '$.n'), JSON_TYPE(c_json), JSON_LENGTH(c_json) FROM shoal_types ORDER BY id;

-- group: literals-and-expressions
SELECT 1, -1, 1.5, 'abc', NULL, 1e10, -0.0, 18446744073709551615, -9223372036854775808, 0x41, b'101', TRUE;
SELECT CAST(1 AS UNSIGNED), CAST(-1 AS UNSIGNED), CAST('2024-01-02' AS DATE), CAST(1.23456 AS DECIMAL(10,2)), CAST(NULL AS CHAR), CONVERT('x', BINARY);

-- group: aggregates-and-windows
SELECT c_enum, COUNT(*), SUM(c_int), AVG(c_double), MIN(c_date), MAX(c_datetime), GROUP_CONCAT(id ORDER BY id) FROM shoal_types GROUP BY c_enum ORDER BY c_enum;
SELECT id, ROW_NUMBER() OVER (ORDER BY c_int DESC), SUM(c_smallint) OVER (ORDER BY id) FROM shoal_types ORDER BY id;
WITH RECURSIVE cte (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM cte WHERE n < 5) SELECT n, n * n FROM cte;
SELECT id FROM shoal_types WHERE id < 3 UNION ALL SELECT id * 10 FROM shoal_types WHERE id > 3 ORDER BY 1;

-- group: empty-results
SELECT * FROM shoal_types WHERE 1 = 0;
SELECT id, c_json FROM shoal_types WHERE id > 100;

-- group: many-rows
SELECT seq, REPEAT('x', seq % 97), seq * 1.5 FROM seq_1_to_3000;

-- group: big-values
SELECT REPEAT('a', 1000000) AS a_million;
SELECT LENGTH(REPEAT('b', 5000000)) AS five_million;

-- group: warnings-cast
SELECT CAST('abc' AS INTEGER);
SHOW WARNINGS;
SELECT 1 / 0, CAST('2024-13-45' AS DATE), CAST('12abc' AS DECIMAL(5,2));
SHOW WARNINGS;
SELECT @@warning_count, @@error_count;

-- group: warnings-insert
SET SESSION sql_mode = '';
CREATE TEMPORARY TABLE tw (a TINYINT, b VARCHAR(3), c DATE);
INSERT INTO tw VALUES (300, 'abcdef', '2024-02-30'), (-300, 'x', '2024-01-01');
SHOW WARNINGS;
SHOW COUNT(*) WARNINGS;
SELECT * FROM tw;
DROP TEMPORARY TABLE tw;

-- group: warnings-too-large
SELECT REPEAT('a', 20000000) IS NULL;
SHOW WARNINGS;

-- group: errors
SELECT * FROM no_such_table;
SELEC 1;
SELECT nosuchcol FROM shoal_types;
SELECT 1 FROM shoal_types WHERE id = (SELECT id FROM shoal_types);
SHOW ERRORS;
SELECT 'still here after errors';

-- group: errors-strict-insert
SET SESSION sql_mode = 'STRICT_ALL_TABLES';
CREATE TEMPORARY TABLE te (a TINYINT NOT NULL, b INT PRIMARY KEY);
INSERT INTO te VALUES (300, 1);
INSERT INTO te VALUES (1, 1);
INSERT INTO te VALUES (2, 1);
INSERT INTO te VALUES (NULL, 2);
SELECT * FROM te;
DROP TEMPORARY TABLE te;

-- group: multi-statements
DELIMITER //
SELECT 1; SELECT 2//
SELECT 1 AS a; SELECT 'x' AS b, 2 AS c; DO 1; SELECT 3 AS d//
SELECT 1 AS before_error; SELECT * FROM nope; SELECT 3 AS never//
SET @m = 5; SELECT @m * 2 AS ten//
DELIMITER ;
SELECT 'after multi';

-- group: stored-procedure-results
DROP PROCEDURE IF EXISTS shoal_proc;
DELIMITER //
CREATE PROCEDURE shoal_proc(IN n INT)
BEGIN
  SELECT n AS first_result;
  SELECT id, c_varchar FROM shoal_types WHERE id <= n ORDER BY id;
  SELECT 'done' AS last_result;
END//
DELIMITER ;
CALL shoal_proc(2);
CALL shoal_proc(0);
DROP PROCEDURE shoal_proc;

-- group: transaction-rollback-commit
CREATE TEMPORARY TABLE tx (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB;
BEGIN;
INSERT INTO tx VALUES (1, 'one'), (2, 'two');
SELECT * FROM tx;
SELECT @@in_transaction;
ROLLBACK;
SELECT COUNT(*) FROM tx;
START TRANSACTION;
INSERT INTO tx VALUES (3, 'three');
UPDATE tx SET v = 'THREE' WHERE id = 3;
COMMIT;
SELECT * FROM tx;
SET autocommit = 0;
INSERT INTO tx VALUES (4, 'four');
ROLLBACK;
SELECT COUNT(*), @@autocommit FROM tx;
SET autocommit = 1;
DROP TEMPORARY TABLE tx;

-- group: transaction-real-table
DROP TABLE IF EXISTS shoal_battery_tx;
CREATE TABLE shoal_battery_tx (id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB;
BEGIN;
INSERT INTO shoal_battery_tx (v) VALUES (10), (20);
SELECT id, v FROM shoal_battery_tx FOR UPDATE;
ROLLBACK;
SELECT COUNT(*) FROM shoal_battery_tx LOCK IN SHARE MODE;
DROP TABLE shoal_battery_tx;

-- group: last-insert-id
CREATE TEMPORARY TABLE ai (id INT AUTO_INCREMENT PRIMARY KEY, v INT);
INSERT INTO ai (v) VALUES (1), (2), (3);
SELECT LAST_INSERT_ID(), ROW_COUNT();
INSERT INTO ai (v) VALUES (4);
SELECT LAST_INSERT_ID(), ROW_COUNT();
UPDATE ai SET v = v + 1 WHERE id > 1;
SELECT ROW_COUNT();
UPDATE ai SET v = v WHERE id = 1;
INSERT INTO ai VALUES (4, 40) ON DUPLICATE KEY UPDATE v = 44;
REPLACE INTO ai VALUES (1, 100);
DELETE FROM ai WHERE id = 2;
SELECT SQL_CALC_FOUND_ROWS * FROM ai ORDER BY id LIMIT 1;
SELECT FOUND_ROWS();
SELECT LAST_INSERT_ID(77), LAST_INSERT_ID();
DROP TEMPORARY TABLE ai;

-- group: use-database
SELECT DATABASE();
USE sbtest;
SELECT DATABASE();
USE no_such_db;
SELECT DATABASE();
USE shoaltest;
SELECT DATABASE(), COUNT(*) FROM shoal_types;

-- group: set-names-latin1
SET NAMES latin1;
SELECT c_varchar, c_char, c_latin1 FROM shoal_types WHERE id = 3;
SELECT @@character_set_client, @@character_set_connection, @@character_set_results, @@collation_connection;
SELECT 'é' AS e_acute, HEX('é');
SET NAMES utf8mb4 COLLATE utf8mb4_bin;
SELECT c_varchar, c_char, c_latin1 FROM shoal_types WHERE id = 3;
SELECT @@character_set_client, @@collation_connection;
SET character_set_results = NULL;
SELECT c_varchar FROM shoal_types WHERE id = 3;

-- group: client-charset-latin1
-- args: --default-character-set=latin1
SELECT @@character_set_client, @@character_set_connection, @@character_set_results, @@collation_connection;
SELECT c_varchar, c_char, c_latin1 FROM shoal_types WHERE id = 3;

-- group: client-charset-utf8mb3
-- args: --default-character-set=utf8mb3
SELECT @@character_set_client, @@character_set_connection, @@character_set_results, @@collation_connection;
SELECT c_varchar, c_char, c_latin1 FROM shoal_types WHERE id = 3;

-- group: session-variables
SELECT @@autocommit, @@sql_mode, @@tx_isolation, @@max_allowed_packet, @@net_buffer_length;
SELECT @@character_set_client, @@character_set_connection, @@character_set_results, @@collation_connection;
SELECT @@time_zone, @@wait_timeout, @@interactive_timeout, @@net_read_timeout, @@net_write_timeout;
SELECT @@sql_select_limit, @@sql_auto_is_null, @@big_tables, @@group_concat_max_len, @@div_precision_increment;
SELECT @@session.transaction_read_only, @@session.sql_safe_updates, @@session.foreign_key_checks, @@session.unique_checks;
SELECT @@session_track_system_variables, @@session_track_schema, @@session_track_state_change;
SET @x := 42, @y := 'why';
SELECT @x, @y, @undefined;
SET SESSION sql_mode = 'ANSI_QUOTES';
SELECT @@sql_mode;
SELECT "id" FROM shoal_types WHERE id = 1;
SET time_zone = '+05:30';
SELECT c_timestamp FROM shoal_types WHERE id = 3;

-- group: version-and-server
SELECT VERSION(), @@version, @@version_comment, @@protocol_version, @@port, @@hostname;
SELECT @@global.max_connections, @@have_ssl, @@lower_case_table_names;
SELECT CURRENT_USER(), DATABASE(), SCHEMA();

-- group: sql-prepared
PREPARE s FROM 'SELECT ? + 1 AS answer, ? AS s';
SET @a = 41, @b = 'str 🐟';
EXECUTE s USING @a, @b;
EXECUTE s USING 1, NULL;
DEALLOCATE PREPARE s;
EXECUTE s USING @a, @b;
PREPARE t FROM 'SELECT id, c_decimal FROM shoal_types WHERE id = ?';
EXECUTE t USING 3;
DEALLOCATE PREPARE t;

-- group: show-commands
SHOW CREATE TABLE shoal_types;
SHOW COLUMNS FROM shoal_types;
SHOW INDEX FROM shoal_types;
DESCRIBE shoal_types c_json;
SHOW TABLES LIKE 'shoal_typ%';
SHOW VARIABLES LIKE 'character_set_c%';
SHOW COLLATION LIKE 'utf8mb4_bin';
SHOW ENGINES;

-- group: explain-and-information-schema
EXPLAIN SELECT * FROM shoal_types WHERE id = 1;
SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, CHARACTER_SET_NAME
  FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'shoaltest' AND TABLE_NAME = 'shoal_types'
  ORDER BY ORDINAL_POSITION;

-- group: ddl-and-dml-info
DROP TABLE IF EXISTS shoal_battery_ddl;
CREATE TABLE shoal_battery_ddl (a INT PRIMARY KEY, b TEXT);
INSERT INTO shoal_battery_ddl VALUES (1, 'x'), (2, 'y'), (3, 'z');
INSERT INTO shoal_battery_ddl SELECT a + 10, b FROM shoal_battery_ddl;
INSERT IGNORE INTO shoal_battery_ddl VALUES (1, 'dup'), (20, 'new');
UPDATE shoal_battery_ddl SET b = 'w' WHERE a > 10;
ALTER TABLE shoal_battery_ddl ADD COLUMN c INT DEFAULT 7;
SELECT * FROM shoal_battery_ddl ORDER BY a;
TRUNCATE TABLE shoal_battery_ddl;
DROP TABLE shoal_battery_ddl;
DROP TABLE IF EXISTS shoal_battery_ddl;

-- group: sleep-and-do
DO SLEEP(0.2);
SELECT SLEEP(0.1);
SELECT BENCHMARK(1000, MD5('x'));
