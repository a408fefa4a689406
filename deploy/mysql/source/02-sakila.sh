# shellcheck shell=sh
# deploy/mysql/source/02-sakila.sh: first-start init of the source, after
# 01-users.sql: loads sakila (docker-compose.yml mounts the dump at
# /usr/share/shoal-demo/sakila.sql). The images' entrypoints source this
# file and give it docker_process_sql, which runs SQL from its standard
# input as root. The dump's MyISAM tables are made InnoDB: with GTIDs on,
# MySQL refuses a statement that changes both kinds of table (sakila's
# film triggers write film_text), and InnoDB is what a replica wants.
# Used as it is by docker-compose.mariadb.yml too.
sed -e 's/ENGINE=MyISAM/ENGINE=InnoDB/' /usr/share/shoal-demo/sakila.sql | docker_process_sql
