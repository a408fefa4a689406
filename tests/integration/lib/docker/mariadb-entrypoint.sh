#!/bin/bash
# The test MariaDB image's entrypoint (mariadb.Dockerfile): on the first
# start, create the data directory, set the root password and run the init
# SQL files with the server's own options (so a source's binary log records
# them), then run mariadbd with the given options on all addresses.
set -euo pipefail
[ "${1:0:1}" = - ] && set -- mariadbd "$@"
[ "$1" = mariadbd ] || exec "$@"
shift
sock=/run/mysqld/mysqld.sock
if [ ! -d /var/lib/mysql/mysql ]; then
  mariadb-install-db --user=mysql --datadir=/var/lib/mysql --skip-test-db \
    --auth-root-authentication-method=normal >/dev/null
  mariadbd --user=mysql --datadir=/var/lib/mysql --skip-networking --socket="$sock" "$@" &
  pid=$!
  for _ in $(seq 1 120); do
    mariadb-admin --socket="$sock" -uroot ping >/dev/null 2>&1 && break
    sleep 0.5
  done
  mariadb --socket="$sock" -uroot <<SQL
SET SESSION sql_log_bin = 0;
ALTER USER 'root'@'localhost' IDENTIFIED BY '${MARIADB_ROOT_PASSWORD:?}';
CREATE USER 'root'@'%' IDENTIFIED BY '${MARIADB_ROOT_PASSWORD}';
GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;
SQL
  for f in /docker-entrypoint-initdb.d/*.sql; do
    [ -e "$f" ] || continue
    echo "init: $f"
    mariadb --socket="$sock" -uroot -p"$MARIADB_ROOT_PASSWORD" <"$f"
  done
  mariadb-admin --socket="$sock" -uroot -p"$MARIADB_ROOT_PASSWORD" shutdown
  wait "$pid" || true
  echo "init: done"
fi
exec mariadbd --user=mysql --datadir=/var/lib/mysql --socket="$sock" --bind-address=0.0.0.0 "$@"
