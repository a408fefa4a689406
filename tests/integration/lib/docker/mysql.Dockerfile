# tests/integration/lib/docker/mysql.Dockerfile: a MySQL 8.0 image for
# 99-docker.t, made from the MySQL 8.0.39 build the test machine keeps
# beside the checkout (../shared/peers/mysql-8.0: mysqld, its libraries and
# share/), on the local Debian base image, with Debian's MariaDB client as
# `mysql` (no registry is reachable where the tests run). It stands in for
# the public mysql:8.0 image of deploy/docker-compose.yml and understands
# the same parts of it: MYSQL_ROOT_PASSWORD, the command line given to
# mysqld, /docker-entrypoint-initdb.d/*.sql on the first start, and a
# `mysql` client for the health checks. The build context holds mysql-8.0/
# and mysql-entrypoint.sh (99-docker.t copies them there).
FROM debian:bookworm-slim
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y -q --no-install-recommends libaio1 libnuma1 libicu72 liblz4-1 libzstd1 libssl3 \
      zlib1g mariadb-client \
 && rm -rf /var/lib/apt/lists/* \
 && install -d /var/lib/mysql /run/mysqld /docker-entrypoint-initdb.d
COPY mysql-8.0 /usr/local/mysql
COPY mysql-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
VOLUME /var/lib/mysql
EXPOSE 3306
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["mysqld"]
