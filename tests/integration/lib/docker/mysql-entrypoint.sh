#!/bin/bash
# The test MySQL 8.0 image's entrypoint (mysql.Dockerfile): on the first
# start, initialize the data directory, set the root password and run the
# init files (*.sql, *.sh) with the server's own options (so a source's binary log
# records them), then run mysqld with the given options on all addresses.
set -euo pipefail
[ "${1:0:1}" = - ] && set -- mysqld "$@"
[ "$1" = mysqld ] || exec "$@"
shift
M=/usr/local/mysql
sock=/run/mysqld/mysqld.sock
base=(--no-defaults --user=root --basedir="$M" --lc-messages-dir="$M/share"
  --character-sets-dir="$M/share/charsets" --datadir=/var/lib/mysql --socket="$sock")
if [ ! -d /var/lib/mysql/mysql ]; then
  "$M/bin/mysqld" "${base[@]}" --initialize-insecure >/dev/null 2>&1
  "$M/bin/mysqld" "${base[@]}" --skip-networking "$@" &
  pid=$!
  for _ in $(seq 1 240); do
    mysql --no-defaults --socket="$sock" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break
    sleep 0.5
  done
  mysql --no-defaults --socket="$sock" -uroot <<SQL
SET SESSION sql_log_bin = 0;
ALTER USER 'root'@'localhost' IDENTIFIED BY '${MYSQL_ROOT_PASSWORD:?}';
CREATE USER 'root'@'%' IDENTIFIED BY '${MYSQL_ROOT_PASSWORD}';
GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;
SQL
  # as the public image: *.sql run as root, *.sh are sourced with
  # docker_process_sql (SQL from standard input, as root)
  docker_process_sql() { mysql --no-defaults --socket="$sock" -uroot -p"$MYSQL_ROOT_PASSWORD"; }
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
  kill -TERM "$pid"
  wait "$pid" || true
  echo "init: done"
fi
exec "$M/bin/mysqld" "${base[@]}" --bind-address=0.0.0.0 "$@"
