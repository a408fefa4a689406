#!/bin/bash
# The test MariaDB image's entrypoint (mariadb.Dockerfile): on the first
# start, create the data directory, set the root password and run the init
# files (*.sql, *.sh) with the server's own options (so a source's binary log records
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
  # as the public image: *.sql run as root, *.sh are sourced with
  # docker_process_sql (SQL from standard input, as root)
  docker_process_sql() { mariadb --socket="$sock" -uroot -p"$MARIADB_ROOT_PASSWORD"; }
  for f in /docker-entrypoint-initdb.d/*; do
    case $f in
      *.sql) echo "init: $f"; docker_process_sql <"$f" ;;
      *.sh)
        echo "init: $f"
        # shellcheck disable=SC1090 # the init files of the image's user
        . "$f"
        ;;
    esac
  done
  mariadb-admin --socket="$sock" -uroot -p"$MARIADB_ROOT_PASSWORD" shutdown
  wait "$pid" || true
  echo "init: done"
fi
exec mariadbd --user=mysql --datadir=/var/lib/mysql --socket="$sock" --bind-address=0.0.0.0 "$@"
