-- The tables of the row-image vectors (MariaDB 10.11). Every type the
-- decoder reads; tests/unit/rowimage/gen_vectors.py loads this, then runs
-- each scenario in a binlog file of its own.
DROP DATABASE IF EXISTS rowimg;
CREATE DATABASE rowimg;
USE rowimg;
CREATE TABLE t_int (
  id INT NOT NULL PRIMARY KEY,
  ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED,
  mi MEDIUMINT, mu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED,
  bi BIGINT, bu BIGINT UNSIGNED
) ENGINE=InnoDB;
CREATE TABLE t_num (
  id INT NOT NULL PRIMARY KEY,
  d DECIMAL(10,2), d2 DECIMAL(65,30), d3 DECIMAL(5,0), d4 DECIMAL(20,10) UNSIGNED,
  f FLOAT, db DOUBLE, b1 BIT(1), b12 BIT(12), b64 BIT(64), y YEAR
) ENGINE=InnoDB;
CREATE TABLE t_str (
  id INT NOT NULL PRIMARY KEY,
  c CHAR(10) CHARACTER SET latin1 COLLATE latin1_swedish_ci,
  c2 CHAR(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci,
  v VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
  v2 VARCHAR(300) CHARACTER SET latin1 COLLATE latin1_bin,
  b BINARY(4), vb VARBINARY(10),
  e ENUM('a','b','c'), s SET('x','y','z'),
  s2 SET('m1','m2','m3','m4','m5','m6','m7','m8','m9','m10','m11','m12','m13','m14','m15','m16','m17','m18')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE TABLE t_blob (
  id INT NOT NULL PRIMARY KEY,
  tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB,
  tt TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci,
  js JSON, g GEOMETRY
) ENGINE=InnoDB;
CREATE TABLE t_time (
  id INT NOT NULL PRIMARY KEY,
  dt DATE, tm TIME, tm3 TIME(3), tm6 TIME(6),
  dtt DATETIME, dtt1 DATETIME(1), dtt4 DATETIME(4), dtt6 DATETIME(6),
  ts TIMESTAMP NULL DEFAULT NULL, ts2 TIMESTAMP(2) NULL DEFAULT NULL,
  ts6 TIMESTAMP(6) NULL DEFAULT NULL, y YEAR
) ENGINE=InnoDB;
CREATE TABLE t_sign (id INT NOT NULL PRIMARY KEY, y YEAR, b BIT(3), u INT UNSIGNED, s SMALLINT,
  f FLOAT, du DECIMAL(4,1) UNSIGNED, tu TINYINT UNSIGNED) ENGINE=InnoDB;
CREATE TABLE t_nopk (a INT, b VARCHAR(10)) ENGINE=InnoDB DEFAULT CHARSET=latin1;
SET GLOBAL mysql56_temporal_format = OFF;
CREATE TABLE t_oldtime (id INT NOT NULL PRIMARY KEY, tm TIME, dtt DATETIME, ts TIMESTAMP NULL DEFAULT NULL,
  tm3 TIME(3), dtt6 DATETIME(6)) ENGINE=InnoDB;
SET GLOBAL mysql56_temporal_format = ON;
