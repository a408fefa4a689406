-- deploy/mariadb/replica/01-replication.sql: first-start init of the
-- replica: replicate everything from the source's first binary log (users,
-- sakila) using GTIDs. The replication threads start again by themselves
-- after the entrypoint restarts the server.
CHANGE MASTER TO
  MASTER_HOST = 'db-source',
  MASTER_PORT = 3306,
  MASTER_USER = 'repl',
  MASTER_PASSWORD = 'replpw',
  MASTER_USE_GTID = slave_pos,
  MASTER_CONNECT_RETRY = 5;
START SLAVE;
