# tests/integration/lib/docker/mariadb.Dockerfile: a MariaDB image for
# 99-docker.t, made from Debian's own packages on the local base image
# (no registry is reachable where the tests run). It stands in for the
# public mariadb:10.11 image of deploy/docker-compose.yml and understands
# the same parts of it: MARIADB_ROOT_PASSWORD, the command line given to
# mariadbd, /docker-entrypoint-initdb.d/*.sql on the first start, and
# healthcheck.sh --connect / --innodb_initialized / --replication*.
FROM debian:bookworm-slim
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y -q --no-install-recommends mariadb-server mariadb-client \
 && rm -rf /var/lib/apt/lists/* /var/lib/mysql/* \
 && install -d -o mysql -g mysql /run/mysqld /docker-entrypoint-initdb.d
COPY mariadb-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
COPY mariadb-healthcheck.sh /usr/local/bin/healthcheck.sh
VOLUME /var/lib/mysql
EXPOSE 3306
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["mariadbd"]
