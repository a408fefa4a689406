/*
 * binlog_conn.c: the binlog follower's connections (see binlog_conn.h):
 * the login, the dump's set-up, and the start-up check.
 */
#include "cache/binlog_conn.h"

#include <mysqld_error.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cache/gtid_set.h"
#include "cache/mysql_dump.h"
#include "config/config.h"
#include "sql/spooky.h"
#include "upstream/upstream.h"

#define BINLOG_HEARTBEAT_NS "500000000"   /* 0.5 s */
#define READ_TIMEOUT_S 5

static const char *login_user(void)
{
	return g_config.binlog_user[0] ? g_config.binlog_user : g_config.upstream_user.name;
}

static const char *login_password(void)
{
	return g_config.binlog_user[0] ? g_config.binlog_password : g_config.upstream_user.password;
}

uint32_t binlog_server_id(void)
{
	char host[256] = "";
	uint64_t h;

	if (g_config.binlog_server_id > 0)
		return (uint32_t)g_config.binlog_server_id;
	gethostname(host, sizeof(host) - 1);
	h = spooky_hash64(host, strlen(host), g_config.n_listen ? g_config.listen[0].port : 3307);
	return 0x40000000u + (uint32_t)(h % 0x3fffffffu);
}

MYSQL *binlog_connect(char *err, size_t cap)
{
	MYSQL *m = mysql_init(NULL);
	unsigned timeout = READ_TIMEOUT_S;

	if (!m) {
		snprintf(err, cap, "out of memory");
		return NULL;
	}
	upstream_set_common_options(m);
	mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &timeout);
	mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &timeout);
	if (!mysql_real_connect(m, g_config.upstream_host, login_user(), login_password(), NULL,
				g_config.upstream_port, NULL, 0)) {
		snprintf(err, cap, "%s", mysql_error(m));
		mysql_close(m);
		return NULL;
	}
	return m;
}

/* One-row, one-column query into out. */
int binlog_query_value(MYSQL *m, const char *sql, char *out, size_t cap)
{
	MYSQL_RES *res;
	MYSQL_ROW r;

	out[0] = 0;
	if (mysql_query(m, sql) || !(res = mysql_store_result(m)))
		return -1;
	if ((r = mysql_fetch_row(res)) && r[0])
		snprintf(out, cap, "%s", r[0]);
	mysql_free_result(res);
	return 0;
}

/* The session variables a MariaDB replica sets before COM_BINLOG_DUMP. */
int binlog_prepare_dump(MYSQL *m, const char *pos, char *err, size_t cap)
{
	char sql[512];
	const char *stmts[] = {
		"SET @master_binlog_checksum = @@global.binlog_checksum",
		"SET @mariadb_slave_capability = 4",
		"SET @master_heartbeat_period = " BINLOG_HEARTBEAT_NS,
		"SET @slave_gtid_strict_mode = 0",
		"SET @slave_gtid_ignore_duplicates = 0",
		sql,
	};

	snprintf(sql, sizeof(sql), "SET @slave_connect_state = '%s'", pos);
	for (size_t i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++)
		if (mysql_query(m, stmts[i])) {
			snprintf(err, cap, "%s: %s", stmts[i], mysql_error(m));
			return -1;
		}
	return 0;
}

MARIADB_RPL *binlog_open_dump(MYSQL *m, unsigned flags, char *err, size_t cap)
{
	MARIADB_RPL *rpl = mariadb_rpl_init(m);

	if (!rpl) {
		snprintf(err, cap, "mariadb_rpl_init: %s", mysql_error(m));
		return NULL;
	}
	mariadb_rpl_optionsv(rpl, MARIADB_RPL_SERVER_ID, binlog_server_id());
	mariadb_rpl_optionsv(rpl, MARIADB_RPL_FLAGS, flags);
	mariadb_rpl_optionsv(rpl, MARIADB_RPL_FILENAME, "", (size_t)0);
	mariadb_rpl_optionsv(rpl, MARIADB_RPL_START, (unsigned long)4);
	if (mariadb_rpl_open(rpl)) {
		snprintf(err, cap, "%s", mysql_error(m));
		mariadb_rpl_close(rpl);
		return NULL;
	}
	return rpl;
}

/* ---- the start-up check ------------------------------------------------------------ */

/* Is the upstream a replica (a replica needs log_slave_updates)? -1: the
 * login may not ask. */
static int is_replica(MYSQL *m)
{
	MYSQL_RES *res;
	int rows;

	if (mysql_query(m, "SHOW ALL SLAVES STATUS") || !(res = mysql_store_result(m)))
		return -1;
	rows = (int)mysql_num_rows(res);
	mysql_free_result(res);
	return rows > 0;
}

/* Open a dump at the server's current position that ends at once: proves
 * the privilege and that the position can be read from. */
static int try_dump(MYSQL *m, char *why, size_t cap)
{
	char pos[1024], err[512];
	MARIADB_RPL *rpl;
	MARIADB_RPL_EVENT *ev;

	if (binlog_query_value(m, "SELECT @@gtid_binlog_pos", pos, sizeof(pos)) < 0 ||
	    binlog_prepare_dump(m, pos, err, sizeof(err)) < 0) {
		snprintf(why, cap, "cannot prepare a binlog dump: %s", mysql_error(m));
		return 1;
	}
	rpl = binlog_open_dump(m, MARIADB_RPL_BINLOG_DUMP_NON_BLOCK, err, sizeof(err));
	if (!rpl) {
		snprintf(why, cap, "cannot read the binlog: %s", err);
		return 1;
	}
	while ((ev = mariadb_rpl_fetch(rpl, NULL)))
		mariadb_free_rpl_event(ev);
	if (mysql_errno(m)) {
		snprintf(why, cap, "cannot read the binlog as '%s': %s%s", login_user(), mysql_error(m),
			 mysql_errno(m) == ER_SPECIFIC_ACCESS_DENIED_ERROR ||
			 mysql_errno(m) == ER_ACCESS_DENIED_ERROR ?
			 " (the login needs REPLICATION SLAVE: GRANT REPLICATION SLAVE ON *.* TO ...)" : "");
		mariadb_rpl_close(rpl);
		return 1;
	}
	mariadb_rpl_close(rpl);
	return 0;
}

/* MySQL: a dump from the server's gtid_executed that ends at once. */
static int try_mysql_dump(MYSQL *m, char *why, size_t cap)
{
	struct gtid_set set;
	struct mysql_dump d;
	struct mysql_event ev;
	char v[8192], err[512];
	int rc = 1;

	gtid_set_init(&set);
	if (binlog_query_value(m, "SELECT @@global.gtid_executed", v, sizeof(v)) < 0 ||
	    gtid_set_parse(&set, v, strlen(v), err, sizeof(err)) < 0) {
		snprintf(why, cap, "cannot read gtid_executed: %s", mysql_error(m));
		gtid_set_free(&set);
		return 1;
	}
	if (mysql_dump_open(&d, m, binlog_server_id(), &set, 0, true, err, sizeof(err)) < 0) {
		snprintf(why, cap, "cannot read the binlog: %s", err);
	} else {
		int got;

		while ((got = mysql_dump_next(&d, &ev, err, sizeof(err))) > 0)
			;
		if (got == 0)
			rc = 0;
		else
			snprintf(why, cap, "cannot read the binlog as '%s': %s%s", login_user(), err,
				 d.server_error == ER_SPECIFIC_ACCESS_DENIED_ERROR ||
				 d.server_error == ER_ACCESS_DENIED_ERROR ?
				 " (the login needs REPLICATION SLAVE: GRANT REPLICATION SLAVE ON *.* TO ...)" : "");
	}
	mysql_dump_close(&d);
	gtid_set_free(&set);
	return rc;
}

/* Is the MySQL upstream a replica? -1: the login may not ask. */
static int mysql_is_replica(MYSQL *m)
{
	MYSQL_RES *res;
	int rows;

	if ((mysql_query(m, "SHOW REPLICA STATUS") && mysql_query(m, "SHOW SLAVE STATUS")) ||
	    !(res = mysql_store_result(m)))
		return -1;
	rows = (int)mysql_num_rows(res);
	mysql_free_result(res);
	return rows > 0;
}

/* The checks of a MySQL upstream: log_bin, GTIDs, a replica's
 * log_replica_updates, the privilege. */
static int check_mysql(MYSQL *m, char *why, size_t cap)
{
	char v[64];
	int replica;

	if (binlog_query_value(m, "SELECT @@log_bin", v, sizeof(v)) < 0 || strcmp(v, "1") != 0) {
		snprintf(why, cap, "the upstream's binlog is off (log_bin = OFF)");
		return 1;
	}
	if (binlog_query_value(m, "SELECT @@global.gtid_mode", v, sizeof(v)) < 0 || strcmp(v, "ON") != 0) {
		snprintf(why, cap, "the MySQL upstream runs gtid_mode = %s: binlog invalidation follows "
			 "MySQL by GTID and needs gtid_mode = ON (and enforce_gtid_consistency = ON)",
			 v[0] ? v : "unknown");
		return 1;
	}
	replica = mysql_is_replica(m);
	if (replica > 0 && binlog_query_value(m, "SELECT @@log_replica_updates", v, sizeof(v)) < 0 &&
	    binlog_query_value(m, "SELECT @@log_slave_updates", v, sizeof(v)) < 0)
		v[0] = 0;   /* neither name: taken as off */
	if (replica > 0 && strcmp(v, "1") != 0) {
		snprintf(why, cap, "the upstream is a replica with log_replica_updates = OFF: what it "
			 "replicates is not in its binlog (set log_replica_updates = ON)");
		return 1;
	}
	if (try_mysql_dump(m, why, cap) != 0)
		return 1;
	if (replica < 0)
		snprintf(why, cap, "binlog readable (whether the upstream is a replica could not be "
			 "checked: the login lacks REPLICATION CLIENT)");
	else
		snprintf(why, cap, "the MySQL upstream's binlog is on with GTIDs and '%s' may read it",
			 login_user());
	return 0;
}

int binlog_check(char *why, size_t cap)
{
	char err[512], v[256];
	MYSQL *m = binlog_connect(err, sizeof(err));
	int rc = 0, replica;

	if (!m) {
		snprintf(why, cap, "cannot connect as '%s': %s", login_user(), err);
		return -1;
	}
	if (!strstr(mysql_get_server_info(m), "MariaDB")) {
		rc = check_mysql(m, why, cap);
	} else if (binlog_query_value(m, "SELECT @@log_bin", v, sizeof(v)) < 0 || strcmp(v, "1") != 0) {
		snprintf(why, cap, "the upstream's binlog is off (log_bin = OFF): start it with "
			 "--log-bin");
		rc = 1;
	} else if ((replica = is_replica(m)) > 0 &&
		   (binlog_query_value(m, "SELECT @@log_slave_updates", v, sizeof(v)) < 0 || strcmp(v, "1") != 0)) {
		snprintf(why, cap, "the upstream is a replica with log_slave_updates = OFF: what it "
			 "replicates is not in its binlog (set log_slave_updates = ON)");
		rc = 1;
	} else {
		rc = try_dump(m, why, cap);
		if (rc == 0 && replica < 0)
			snprintf(why, cap, "binlog readable (whether the upstream is a replica could not "
				 "be checked: the login lacks SLAVE MONITOR)");
		else if (rc == 0)
			snprintf(why, cap, "the upstream's binlog is on and '%s' may read it", login_user());
	}
	mysql_close(m);
	return rc;
}
