/*
 * pxadmin.c: the node's optional link to ProxySQL's admin (see pxadmin.h).
 * It owns the parsed admin list (filled on first use from g_config, which
 * is read-only by then), one detached thread per admin while a status
 * change runs, and an atomic counter (pending) that the drain
 * reads. Each thread makes its own blocking MariaDB Connector/C connection
 * and closes it; nothing is shared between the threads but the counter.
 */
#include "ops/pxadmin.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mysql.h>

#include "base/health.h"
#include "config/config_parse.h"
#include "base/log.h"

#define PXADMIN_TIMEOUT_S 3   /* connect, read and write timeout of each admin connection */
#define PXADMIN_RETRY_MS 2000 /* going ONLINE: a ProxySQL not up yet is tried again this often */

static struct shoal_mysql_url admins[PROXYSQL_ADMIN_MAX];
static int n_admins = -1; /* -1: not parsed yet */
static char node_host[256];
static uint16_t node_port;
static atomic_int pending;

struct job {
	const struct shoal_mysql_url *admin;
	char status[16];
	bool retry; /* try again while the admin cannot be reached (going ONLINE) */
};

/* Parse the settings once (they were checked at start). */
static int setup(void)
{
	char err[256];

	if (n_admins >= 0)
		return n_admins;
	n_admins = config_parse_proxysql_admin(g_config.proxysql_admin, admins, PROXYSQL_ADMIN_MAX, err, sizeof err);
	if (n_admins < 0) {
		log_error("proxysql_admin: %s", err);
		n_admins = 0;
	} else if (n_admins > 0 &&
		   config_node_address(&g_config, node_host, sizeof node_host, &node_port, err, sizeof err) < 0) {
		log_error("proxysql_admin: %s", err);
		n_admins = 0;
	}
	return n_admins;
}

static MYSQL *admin_connect(const struct shoal_mysql_url *a, char *err, size_t errlen)
{
	unsigned int timeout = PXADMIN_TIMEOUT_S;
	MYSQL *m = mysql_init(NULL);

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &timeout);
	mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &timeout);
	mysql_optionsv(m, MYSQL_OPT_CONNECT_ATTR_ADD, "program_name", "shoal");
	if (!mysql_real_connect(m, a->host, a->user.name, a->user.password, NULL, a->port, NULL, 0)) {
		snprintf(err, errlen, "%s", mysql_error(m));
		mysql_close(m);
		return NULL;
	}
	return m;
}

/* Run sql; -1 with err on failure, else the affected rows (0 for others). */
static long long run(MYSQL *m, const char *sql, char *err, size_t errlen)
{
	MYSQL_RES *res;
	long long n;

	if (mysql_query(m, sql) != 0) {
		snprintf(err, errlen, "%s: %s", sql, mysql_error(m));
		return -1;
	}
	n = (long long)mysql_affected_rows(m);
	res = mysql_store_result(m);
	if (res)
		mysql_free_result(res);
	return n < 0 ? 0 : n;
}

/* Reading stats_mysql_connection_pool makes ProxySQL drop, at once, the
 * idle pooled connections of every server that is not ONLINE (otherwise
 * they stay until its next idle sweep, every mysql-ping_interval_server_msec,
 * 10 s by default). Before going OFFLINE_SOFT: ProxySQL closes the node's
 * idle connections itself. Before going ONLINE again: connections to the
 * node's previous process, closed by it, are not reused. */
static const char drop_idle_sql[] = "SELECT COUNT(*) FROM stats_mysql_connection_pool";

/* UPDATE this node's rows from one status to another; LOAD when any
 * changed. The number changed, or -1 with err. */
static long long move_rows(MYSQL *m, const char *from, const char *to, char *err, size_t errlen)
{
	char sql[512];
	long long n;

	snprintf(sql, sizeof sql,
		 "UPDATE mysql_servers SET status='%s' WHERE hostname='%s' AND port=%u AND status='%s'", to,
		 node_host, (unsigned)node_port, from);
	n = run(m, sql, err, errlen);
	if (n > 0 && run(m, "LOAD MYSQL SERVERS TO RUNTIME", err, errlen) < 0)
		return -1;
	return n;
}

/* On one admin. Going out: ONLINE -> OFFLINE_SOFT, then drop the idle
 * connections (ProxySQL closes them; the ones in use close when they are
 * returned). Coming back: first out as well, so that idle connections to
 * this node's previous process (closed by it, or by its crash) are dropped
 * even when its rows are still ONLINE; then OFFLINE_SOFT -> ONLINE. */
static bool apply_status(const struct job *j, char *err, size_t errlen, long long *changed,
			 bool *connected)
{
	bool online = strcmp(j->status, "ONLINE") == 0;
	MYSQL *m = admin_connect(j->admin, err, errlen);
	bool ok = false;

	*connected = m != NULL;
	if (!m)
		return false;
	*changed = move_rows(m, "ONLINE", "OFFLINE_SOFT", err, errlen);
	if (*changed < 0 || run(m, drop_idle_sql, err, errlen) < 0)
		goto out;
	/* (a drain that began meanwhile wants the node out: it stays out) */
	if (online && !health_draining() && (*changed = move_rows(m, "OFFLINE_SOFT", "ONLINE", err, errlen)) < 0)
		goto out;
	ok = true;
out:
	mysql_close(m);
	return ok;
}

/* Wait ms unless the node starts to drain (then false). */
static bool retry_wait(int ms)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };

	for (int waited = 0; waited < ms; waited += 100) {
		if (health_draining())
			return false;
		nanosleep(&ts, NULL);
	}
	return !health_draining();
}

static void *job_main(void *arg)
{
	struct job *j = arg;
	const struct shoal_mysql_url *a = j->admin;
	char err[600] = "";
	long long changed = 0;
	bool ok, connected;
	int attempts = 0;

	mysql_thread_init();
	/* A node may start before ProxySQL (a host's reboot, compose's order):
	 * going ONLINE waits for it, however long, unless a drain begins. */
	for (;;) {
		attempts++;
		ok = apply_status(j, err, sizeof err, &changed, &connected);
		if (ok || connected || !j->retry)
			break;
		if (attempts == 1)
			log_warn("proxysql_admin %s@%s:%u: cannot connect (%s); trying again every %d ms to set "
				 "%s:%u %s", a->user.name, a->host, (unsigned)a->port, err, PXADMIN_RETRY_MS,
				 node_host, (unsigned)node_port, j->status);
		if (!retry_wait(PXADMIN_RETRY_MS))
			break;
	}
	if (ok && changed > 0)
		log_info("proxysql_admin %s@%s:%u: %s:%u set %s (%lld row%s), loaded to runtime%s", a->user.name,
			 a->host, (unsigned)a->port, node_host, (unsigned)node_port, j->status, changed,
			 changed == 1 ? "" : "s", attempts > 1 ? " (ProxySQL is up now)" : "");
	else if (ok)
		log_info("proxysql_admin %s@%s:%u: no row for %s:%u to set %s (already so, or not in "
			 "mysql_servers under that name: see proxysql_node_address)", a->user.name, a->host,
			 (unsigned)a->port, node_host, (unsigned)node_port, j->status);
	else
		log_warn("proxysql_admin %s@%s:%u: could not set %s:%u %s: %s", a->user.name, a->host,
			 (unsigned)a->port, node_host, (unsigned)node_port, j->status, err);
	free(j);
	mysql_thread_end();
	atomic_fetch_sub(&pending, 1);
	return NULL;
}

int pxadmin_set_status(const char *status)
{
	int n = setup(), started = 0;
	pthread_attr_t attr;

	if (n == 0)
		return 0;
	if (pthread_attr_init(&attr) != 0)
		return -1;
	if (pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) != 0) {
		pthread_attr_destroy(&attr);
		log_error("proxysql_admin: cannot make detached threads");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		struct job *j = calloc(1, sizeof *j);
		pthread_t t;
		int rc;

		if (!j) {
			log_error("proxysql_admin: out of memory");
			break;
		}
		j->admin = &admins[i];
		snprintf(j->status, sizeof j->status, "%s", status);
		j->retry = strcmp(status, "ONLINE") == 0;
		atomic_fetch_add(&pending, 1);
		rc = pthread_create(&t, &attr, job_main, j);
		if (rc != 0) {
			atomic_fetch_sub(&pending, 1);
			free(j);
			log_error("proxysql_admin: cannot start a thread: %s", strerror(rc));
			break;
		}
		started++;
	}
	pthread_attr_destroy(&attr);
	return started == n ? n : -1;
}

int pxadmin_pending(void)
{
	return atomic_load(&pending);
}

void pxadmin_wait(int timeout_ms)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	for (int waited = 0; atomic_load(&pending) > 0 && waited < timeout_ms; waited += 10)
		nanosleep(&ts, NULL);
}
