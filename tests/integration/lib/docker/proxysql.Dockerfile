# tests/integration/lib/docker/proxysql.Dockerfile: packs the ProxySQL
# binary of the test machine ($PROXYSQL_BIN, copied into the build context
# by 99-docker.t) into an image that stands in for the public
# proxysql/proxysql image of deploy/docker-compose.yml: the same config file
# (/etc/proxysql.cnf), data directory and command. For the test only: the
# binary is never part of the project.
FROM debian:bookworm-slim
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y -q --no-install-recommends libssl3 libcurl4 libgnutls30 libuuid1 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && install -d /var/lib/proxysql
COPY proxysql /usr/bin/proxysql
VOLUME /var/lib/proxysql
EXPOSE 6032 6033 6070
CMD ["proxysql", "-f", "--idle-threads", "-D", "/var/lib/proxysql"]
