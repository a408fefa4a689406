#!/bin/bash
# healthcheck.sh of the test MariaDB image: the options of the public
# image's script that deploy/docker-compose.yml uses.
#   --connect             the server answers a query
#   --innodb_initialized  InnoDB is up
#   --replication_io / --replication_sql   the replica's threads run
#   --replication         both, and no error
set -u
q() { mariadb --socket=/run/mysqld/mysqld.sock -uroot -p"${MARIADB_ROOT_PASSWORD:-}" -N -B -e "$1"; }
slave() { mariadb --socket=/run/mysqld/mysqld.sock -uroot -p"${MARIADB_ROOT_PASSWORD:-}" -e 'SHOW SLAVE STATUS\G'; }
for a in "$@"; do
  case $a in
    --connect) q 'SELECT 1' >/dev/null || exit 1 ;;
    --innodb_initialized) [ "$(q "SELECT COUNT(*) FROM information_schema.ENGINES WHERE ENGINE='InnoDB' AND SUPPORT IN ('YES','DEFAULT')")" = 1 ] || exit 1 ;;
    --replication_io) slave | grep -q 'Slave_IO_Running: Yes' || exit 1 ;;
    --replication_sql) slave | grep -q 'Slave_SQL_Running: Yes' || exit 1 ;;
    --replication) s=$(slave); grep -q 'Slave_IO_Running: Yes' <<<"$s" &&
      grep -q 'Slave_SQL_Running: Yes' <<<"$s" && grep -q 'Last_Errno: 0' <<<"$s" || exit 1 ;;
    *) echo "healthcheck.sh: unknown option $a" >&2; exit 2 ;;
  esac
done
exit 0
