/*
 * binlog_conn.h: the binlog follower's connections to the upstream, with
 * the binlog login (binlog_user, else the upstream user): connecting, the
 * session variables a MariaDB replica sets before COM_BINLOG_DUMP, opening
 * the dump, and the start-up check of whether the node can follow the
 * upstream's binlog at all. Used by the follower (binlog.c), its
 * read-your-writes barrier and the visibility probe (fence_probe.c).
 *
 * Thread-safety: no state of its own; each connection belongs to its
 * caller.
 */
#ifndef SHOAL_CACHE_BINLOG_CONN_H
#define SHOAL_CACHE_BINLOG_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <mysql.h>
#include <mariadb_rpl.h>

/* Can the node follow the upstream's binlog? Connects with the binlog
 * login and checks log_bin, log_slave_updates on a replica, the privilege
 * (by opening a dump that ends at once) and that the server is MariaDB.
 * 0: yes. 1: no, why says so (the server's state or the login's grants).
 * -1: the upstream could not be reached (why says so). */
int binlog_check(char *why, size_t cap);

/* The server id the follower uses (binlog_server_id, or derived). */
uint32_t binlog_server_id(void);

/* A connection with the binlog login (read and write timeouts set), or
 * NULL with err set. */
MYSQL *binlog_connect(char *err, size_t cap);
/* One-row, one-column query into out ("" for NULL or no row). 0, or -1. */
int binlog_query_value(MYSQL *m, const char *sql, char *out, size_t cap);
/* The session variables a MariaDB replica sets before COM_BINLOG_DUMP,
 * with @slave_connect_state = pos. 0, or -1 with err set. */
int binlog_prepare_dump(MYSQL *m, const char *pos, char *err, size_t cap);
/* Open the dump (flags: MARIADB_RPL_*), or NULL with err set. */
MARIADB_RPL *binlog_open_dump(MYSQL *m, unsigned flags, char *err, size_t cap);

#endif
