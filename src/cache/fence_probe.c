/*
 * fence_probe.c: the visibility probe's thread and connection (see
 * fence_probe.h).
 */
#include "cache/fence_probe.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cache/fence.h"
#include "cache/gtid_set.h"
#include "base/log.h"

#define POSITION_SQL "SHOW STATUS LIKE 'Binlog_snapshot_%'"
#define SCHEDULING_SQL "SELECT @@binlog_optimize_thread_scheduling"
#define EXECUTED_SQL "SELECT @@global.gtid_executed"   /* MySQL */
/* Pacing: a token bucket of BURST readings, one more every PACE_US (so at
 * most 200 readings a second however fast the commits come: one reading
 * proves all before it); after PATIENT readings in a row that prove
 * nothing, a pause doubling from PACE_US to PAUSE_MAX_US as well. */
#define PACE_US 5000
#define BURST 3
#define PATIENT 4
#define PAUSE_MAX_US 20000
#define IDLE_WAIT_MS 500         /* wait for a transaction, then look at stopping */
#define RECONNECT_MAX_MS 2000
#define UNSUPPORTED_RECHECK_S 30

static pthread_t thread;
static bool started;
static atomic_bool stopping;
static fence_connect_fn connect_fn;
static pthread_mutex_t sock_lock = PTHREAD_MUTEX_INITIALIZER;
static int sock_fd = -1;         /* the probe's socket (sock_lock), shut down to stop */
static bool upstream_mysql;      /* the probe's server is MySQL (the probe thread's) */
static struct gtid_set executed; /* MySQL: its last reading (the probe thread's) */

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleep us microseconds, in slices, so that a stop is not held up. */
static void pause_us(long us)
{
	while (us > 0 && !atomic_load(&stopping)) {
		long slice = us > 100000 ? 100000 : us;

		usleep((useconds_t)slice);
		us -= slice;
	}
}

static void set_sock(int fd)
{
	pthread_mutex_lock(&sock_lock);
	sock_fd = fd;
	pthread_mutex_unlock(&sock_lock);
}

static void close_conn(MYSQL *m)
{
	set_sock(-1);
	mysql_close(m);
}

/* Does the server publish its commit position with the commits? With
 * binlog_optimize_thread_scheduling OFF each transaction of a group runs
 * commit_ordered() in its own thread after the position was set for the
 * whole group: a reading could run ahead of a commit. A server without the
 * variable has no such mode. */
static bool scheduling_ok(MYSQL *m)
{
	MYSQL_RES *res;
	MYSQL_ROW r;
	bool ok = true;

	if (mysql_query(m, SCHEDULING_SQL) || !(res = mysql_store_result(m)))
		return true;   /* no such variable: no such mode */
	if ((r = mysql_fetch_row(res)) && r[0] && strcmp(r[0], "0") == 0)
		ok = false;
	mysql_free_result(res);
	return ok;
}

/* A connection, or NULL after a pause (failures counted). */
static MYSQL *probe_connect(int *fails)
{
	char err[512] = "";
	MYSQL *m = connect_fn(err, sizeof(err));
	long wait_ms;

	if (m && scheduling_ok(m)) {
		upstream_mysql = !strstr(mysql_get_server_info(m), "MariaDB");
		fence_set_supported(true);
		set_sock(mysql_get_socket(m));
		*fails = 0;
		return m;   /* connected to a server that can prove visibility */
	}
	if (m) {
		if (*fails == 0)
			log_warn("fence: the upstream runs binlog_optimize_thread_scheduling = OFF: its "
				 "commit position may run ahead of its commits, so no binlog transaction can "
				 "be proven visible: results of tables written are not stored");
		fence_set_supported(false);
		mysql_close(m);
		(*fails)++;
		pause_us(UNSUPPORTED_RECHECK_S * 1000000L);
		return NULL;
	}
	fence_count_probe(false, 0);
	if (*fails == 0)
		log_warn("fence: cannot connect the visibility probe: %s (fills of tables written "
			 "since are not stored until it can)", err);
	wait_ms = 100L << (*fails < 5 ? *fails : 5);
	(*fails)++;
	pause_us((wait_ms < RECONNECT_MAX_MS ? wait_ms : RECONNECT_MAX_MS) * 1000L);
	return NULL;
}

/* Read the server's last commit position into file / *pos. 0, or -1. */
static int read_position(MYSQL *m, char *file, size_t cap, unsigned long long *pos)
{
	MYSQL_RES *res;
	MYSQL_ROW r;
	bool have_file = false, have_pos = false;

	if (mysql_query(m, POSITION_SQL) || !(res = mysql_store_result(m)))
		return -1;   /* the connection or the server failed: the caller reconnects */
	while ((r = mysql_fetch_row(res))) {
		unsigned long *len = mysql_fetch_lengths(res);

		if (!r[0] || !r[1] || !len)
			continue;   /* (a status row without a name or value) */
		if (strcasecmp(r[0], "Binlog_snapshot_file") == 0 && len[1] < cap) {
			memcpy(file, r[1], len[1]);
			file[len[1]] = 0;
			have_file = len[1] > 0;
		} else if (strcasecmp(r[0], "Binlog_snapshot_position") == 0) {
			char *end;

			errno = 0;
			*pos = strtoull(r[1], &end, 10);
			have_pos = errno == 0 && end != r[1];
		}
	}
	mysql_free_result(res);
	return have_file && have_pos ? 0 : -1;
}

/* MySQL: read the server's gtid_executed into executed. 0, or -1. */
static int read_executed(MYSQL *m)
{
	MYSQL_RES *res;
	MYSQL_ROW r;
	unsigned long *len;
	char err[160] = "no value";
	int rc = -1;

	if (mysql_query(m, EXECUTED_SQL) || !(res = mysql_store_result(m)))
		return -1;   /* the connection or the server failed: the caller reconnects */
	if ((r = mysql_fetch_row(res)) && r[0] && (len = mysql_fetch_lengths(res)))
		rc = gtid_set_parse(&executed, r[0], len[0], err, sizeof(err));
	mysql_free_result(res);
	if (rc < 0)
		log_debug("fence: gtid_executed cannot be read: %s", err);
	return rc;
}

/* One reading, handed to the fence. -1: the connection must go. */
static int probe_once(MYSQL *m, enum fence_verdict *v)
{
	char file[256];
	unsigned long long pos = 0;
	double t0 = mono_s();

	if (upstream_mysql) {
		if (read_executed(m) < 0) {
			fence_count_probe(false, 0);
			return -1;
		}
		fence_count_probe(true, mono_s() - t0);
		*v = fence_observe_gtids(&executed);
		return 0;
	}

	if (read_position(m, file, sizeof(file), &pos) < 0) {
		fence_count_probe(false, 0);
		log_debug("fence: the probe's reading failed: %s", mysql_error(m));
		return -1;
	}
	fence_count_probe(true, mono_s() - t0);
	*v = fence_observe(file, strlen(file), pos);
	return 0;
}

/* Wait until the next reading may start: tokens (readings allowed now) are
 * refilled by the time since last_us, at most BURST; unproven readings in a
 * row add a pause of their own. */
static void pace(double *tokens, double *last_us, unsigned unproven)
{
	double now = mono_s() * 1e6;

	*tokens += (now - *last_us) / PACE_US;
	if (*tokens > BURST)
		*tokens = BURST;
	*last_us = now;
	if (unproven > PATIENT) {
		unsigned shift = unproven - PATIENT - 1;
		long us = shift < 4 ? (long)PACE_US << shift : PAUSE_MAX_US;

		pause_us(us < PAUSE_MAX_US ? us : PAUSE_MAX_US);
	} else if (*tokens < 1) {
		pause_us((long)((1 - *tokens) * PACE_US));
	}
	now = mono_s() * 1e6;
	*tokens += (now - *last_us) / PACE_US - 1;
	*last_us = now;
}

static void *probe_main(void *arg)
{
	MYSQL *m = NULL;
	int fails = 0;
	unsigned unproven = 0;
	double tokens = BURST, last_us = mono_s() * 1e6;

	(void)arg;
	pthread_setname_np(pthread_self(), "shoal-fence");
	mysql_thread_init();
	while (!atomic_load(&stopping)) {
		enum fence_verdict v = FENCE_BEHIND;

		if (!fence_pending()) {
			unproven = 0;
			fence_wait_received(IDLE_WAIT_MS);
			continue;
		}
		if (!m && !(m = probe_connect(&fails)))
			continue;   /* (probe_connect paused) */
		pace(&tokens, &last_us, unproven);
		if (probe_once(m, &v) < 0) {
			close_conn(m);
			m = NULL;
			continue;
		}
		/* behind: the commits are not visible yet; ahead: the stream has
		 * not brought that transaction yet; unmatched: a rotation's or a
		 * checkpoint's position (a later commit or checkpoint event helps) */
		unproven = v == FENCE_ADVANCED ? 0 : unproven + 1;
	}
	if (m)
		close_conn(m);
	gtid_set_free(&executed);
	mysql_thread_end();
	return NULL;
}

int fence_probe_start(fence_connect_fn connect)
{
	if (started)
		return 0;   /* one probe for the follower */
	connect_fn = connect;
	atomic_store(&stopping, false);
	if ((errno = pthread_create(&thread, NULL, probe_main, NULL)) != 0)
		return -1;   /* no probe: fences stay closed (the caller logs it) */
	started = true;
	return 0;
}

void fence_probe_stop(void)
{
	if (!started)
		return;   /* never started */
	atomic_store(&stopping, true);
	pthread_mutex_lock(&sock_lock);
	if (sock_fd >= 0)
		shutdown(sock_fd, SHUT_RDWR);
	pthread_mutex_unlock(&sock_lock);
	pthread_join(thread, NULL);
	started = false;
}
