-- deploy/mysql/source/01-users.sql: first-start init of the MySQL source
-- (docker-compose.yml mounts it into /docker-entrypoint-initdb.d; sakila is
-- loaded after it as 02-sakila.sql). Runs with the binary log and GTIDs
-- on, so these users and sakila replicate to the replica, which must not
-- create them itself. Every user is caching_sha2_password, MySQL 8's
-- default and MySQL 9's only password plugin; ProxySQL 2.7 and the Shoal
-- nodes log in with it.

-- The replica's login to the source.
CREATE USER 'repl'@'%' IDENTIFIED BY 'replpw';
GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%';

-- The application's user: ProxySQL's backend user for every hostgroup, and
-- the user in the Shoal nodes' UPSTREAM_DB_URL (a node accepts the logins of
-- its upstream user, so the two must be the same). The nodes follow the
-- replica's binlog with it (binlog invalidation: a write made anywhere
-- reaches their cached answers), which needs the two replication
-- privileges.
CREATE USER 'app'@'%' IDENTIFIED BY 'pw';
GRANT ALL ON sakila.* TO 'app'@'%';
GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'app'@'%';

-- ProxySQL's monitor user (mysql-monitor_username). The Shoal nodes answer
-- it themselves (MONITOR_USER / MONITOR_PASSWORD).
CREATE USER 'monitor'@'%' IDENTIFIED BY 'monitorpw';
GRANT REPLICATION CLIENT ON *.* TO 'monitor'@'%';
