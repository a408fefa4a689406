-- deploy/mysql/replica/01-replication.sql: first-start init of the MySQL
-- replica: replicate everything from the source (users, sakila) by GTID
-- auto-positioning. GET_SOURCE_PUBLIC_KEY lets the replication login
-- (caching_sha2_password) complete without TLS. The replication threads
-- start again by themselves after the entrypoint restarts the server.
CHANGE REPLICATION SOURCE TO
  SOURCE_HOST = 'db-source',
  SOURCE_PORT = 3306,
  SOURCE_USER = 'repl',
  SOURCE_PASSWORD = 'replpw',
  SOURCE_AUTO_POSITION = 1,
  GET_SOURCE_PUBLIC_KEY = 1,
  SOURCE_CONNECT_RETRY = 5;
START REPLICA;
