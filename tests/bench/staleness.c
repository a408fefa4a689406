/*
 * staleness: how long after a commit on the upstream a node serves the new
 * value (scripts/bench, section "staleness"; docs/benchmarks.md).
 *
 * A writer, connected straight to the upstream, updates row 1 of table
 * st<k mod T> to value k, for k = 1, 2, ..., paced to RATE writes a second,
 * and notes when each UPDATE returned (its commit). R reader threads,
 * connected to the node, poll `SELECT v FROM st<j> WHERE id = 1` over
 * their share of the T tables, round robin, and note for each table the
 * first read that returned a value >= k and the time that read ended. The
 * staleness of write k is that time minus its commit time: an upper bound
 * (it includes the read itself and the time until the reader came back to
 * the table). Writes whose table was written again before any read saw
 * them are counted as superseded, not measured.
 *
 *   cc -O2 -pthread -o staleness staleness.c $(mariadb_config --cflags --libs)
 *   staleness -u HOST:PORT (upstream) -n HOST:PORT (node) [-U USER] [-p PASS]
 *             [-D DB] [-T TABLES] [-r RATE] [-d SECONDS] [-R READERS] [-s]
 *             [-o CDF_FILE]
 *   -s: create the tables st0.. (id INT PRIMARY KEY, v BIGINT) first.
 *   -o: also write the whole distribution (percentile, ms) to CDF_FILE.
 *
 * Prints one line: writes=, rate=, measured=, superseded=, never=,
 * p50_ms=, p99_ms=, max_ms=, reads=, read_qps=.
 */
#include <mysql.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_TABLES 256
#define MAX_WRITES 1000000

struct endpoint {
	char host[128];
	unsigned port;
};

static struct endpoint up, node;
static const char *user = "app", *pass = "pw", *db = "sbtest";
static int ntables = 50, rate = 500, seconds = 20, nreaders = 4;

static int64_t *commit_ns;           /* per write k */
static int64_t *seen_ns;             /* per write k: first read that saw it ended */
static _Atomic int64_t latest[MAX_TABLES]; /* last value written per table */
static atomic_long writes_done, reads;
static atomic_bool stop;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int parse_ep(const char *s, struct endpoint *e)
{
	const char *c = strrchr(s, ':');

	if (!c || (size_t)(c - s) >= sizeof(e->host))
		return -1;
	memcpy(e->host, s, (size_t)(c - s));
	e->host[c - s] = 0;
	e->port = (unsigned)atoi(c + 1);
	return e->port ? 0 : -1;
}

static MYSQL *open_conn(const struct endpoint *e)
{
	MYSQL *m = mysql_init(NULL);

	if (!m || !mysql_real_connect(m, e->host, user, pass, db, e->port, NULL, 0)) {
		fprintf(stderr, "staleness: connect %s:%u: %s\n", e->host, e->port, m ? mysql_error(m) : "oom");
		exit(1);
	}
	return m;
}

static void must(MYSQL *m, const char *sql)
{
	if (mysql_query(m, sql)) {
		fprintf(stderr, "staleness: %s: %s\n", sql, mysql_error(m));
		exit(1);
	}
}

static void setup(void)
{
	MYSQL *m = open_conn(&up);
	char sql[256];

	for (int t = 0; t < ntables; t++) {
		/* DROP and CREATE, not CREATE OR REPLACE: MySQL has no OR REPLACE */
		snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS st%d", t);
		must(m, sql);
		snprintf(sql, sizeof(sql), "CREATE TABLE st%d (id INT PRIMARY KEY, v BIGINT)", t);
		must(m, sql);
		snprintf(sql, sizeof(sql), "INSERT INTO st%d VALUES (1, 0), (2, 0)", t);
		must(m, sql);
	}
	mysql_close(m);
}

static void *writer(void *arg)
{
	MYSQL *m = open_conn(&up);
	int64_t start = now_ns(), step = 1000000000LL / rate;
	char sql[128];

	(void)arg;
	for (long k = 1; k < MAX_WRITES && !atomic_load(&stop); k++) {
		int64_t due = start + (k - 1) * step, t;

		while ((t = now_ns()) < due)
			usleep((useconds_t)((due - t) / 1000 > 1000 ? 1000 : (due - t) / 1000 + 1));
		snprintf(sql, sizeof(sql), "UPDATE st%ld SET v = %ld WHERE id = 1", k % ntables, k);
		must(m, sql);
		commit_ns[k] = now_ns();
		atomic_store(&latest[k % ntables], k);
		atomic_store(&writes_done, k);
	}
	mysql_close(m);
	return NULL;
}

static void *reader(void *arg)
{
	int id = (int)(intptr_t)arg;
	MYSQL *m = open_conn(&node);
	int64_t last_seen[MAX_TABLES] = { 0 };
	char sql[MAX_TABLES][96];
	int mine[MAX_TABLES], n = 0;

	for (int t = id; t < ntables; t += nreaders) {
		mine[n] = t;
		snprintf(sql[n], sizeof(sql[n]), "SELECT v FROM st%d WHERE id = 1", t);
		n++;
	}
	while (!atomic_load(&stop)) {
		for (int i = 0; i < n && !atomic_load(&stop); i++) {
			MYSQL_RES *res;
			MYSQL_ROW row;
			int64_t v = -1, end;

			if (mysql_query(m, sql[i]) || !(res = mysql_store_result(m))) {
				fprintf(stderr, "staleness: read: %s\n", mysql_error(m));
				exit(1);
			}
			if ((row = mysql_fetch_row(res)) && row[0])
				v = atoll(row[0]);
			mysql_free_result(res);
			end = now_ns();
			atomic_fetch_add(&reads, 1);
			/* every write of this table up to v is now seen */
			for (int64_t k = v; k > last_seen[i] && k > 0; k -= ntables)
				if (k % ntables == mine[i] && commit_ns[k] && !seen_ns[k])
					seen_ns[k] = end;
			if (v > last_seen[i])
				last_seen[i] = v;
		}
	}
	mysql_close(m);
	return NULL;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* -o FILE: the distribution, one line "percentile ms" per percent and at
 * 99.5 and 99.9 (scripts/bench draws it: docs/bench/staleness.svg). */
static void write_cdf(const char *path, const int64_t *lat, long measured)
{
	static const double extra[] = { 99.5, 99.9 };
	FILE *f;

	if (!path || measured == 0)
		return;
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return;
	}
	fprintf(f, "# percentile staleness_ms (%ld writes measured)\n", measured);
	for (int p = 0; p <= 100; p++) {
		long i = p == 100 ? measured - 1 : (long)((double)measured * p / 100.0);

		fprintf(f, "%d %.3f\n", p, lat[i] / 1e6);
		if (p == 99)
			for (int j = 0; j < 2; j++)
				fprintf(f, "%.1f %.3f\n", extra[j], lat[(long)((double)measured * extra[j] / 100.0)] / 1e6);
	}
	if (fclose(f) != 0)
		perror(path);
}

static void report(double secs, const char *cdf_path)
{
	long n = atomic_load(&writes_done), measured = 0, superseded = 0, never = 0;
	int64_t *lat = calloc((size_t)n + 1, sizeof(*lat));

	for (long k = 1; k <= n; k++) {
		if (seen_ns[k]) {
			lat[measured++] = seen_ns[k] - commit_ns[k];
		} else if (k + ntables <= n) {
			superseded++;  /* overwritten before a read came back to it */
		} else {
			never++;       /* the last writes of each table: not seen by the end */
		}
	}
	qsort(lat, (size_t)measured, sizeof(*lat), cmp64);
	printf("writes=%ld rate=%.0f measured=%ld superseded=%ld never=%ld p50_ms=%.2f p90_ms=%.2f "
	       "p99_ms=%.2f max_ms=%.2f reads=%ld read_qps=%.0f\n", n, n / secs, measured, superseded,
	       never, measured ? lat[measured / 2] / 1e6 : 0, measured ? lat[measured * 9 / 10] / 1e6 : 0,
	       measured ? lat[measured * 99 / 100] / 1e6 : 0, measured ? lat[measured - 1] / 1e6 : 0,
	       atomic_load(&reads), atomic_load(&reads) / secs);
	write_cdf(cdf_path, lat, measured);
	free(lat);
}

int main(int argc, char **argv)
{
	pthread_t w, r[64];
	int opt, do_setup = 0;
	int64_t t0;
	const char *cdf_path = NULL;

	while ((opt = getopt(argc, argv, "u:n:U:p:D:T:r:d:R:so:")) != -1) {
		switch (opt) {
		case 'u': if (parse_ep(optarg, &up)) return 2; break;
		case 'n': if (parse_ep(optarg, &node)) return 2; break;
		case 'U': user = optarg; break;
		case 'p': pass = optarg; break;
		case 'D': db = optarg; break;
		case 'T': ntables = atoi(optarg); break;
		case 'r': rate = atoi(optarg); break;
		case 'd': seconds = atoi(optarg); break;
		case 'R': nreaders = atoi(optarg); break;
		case 's': do_setup = 1; break;
		case 'o': cdf_path = optarg; break;
		default: return 2;
		}
	}
	if (!up.port || !node.port || ntables < 1 || ntables > MAX_TABLES || rate < 1 ||
	    nreaders < 1 || nreaders > 64 || (long)rate * seconds >= MAX_WRITES) {
		fprintf(stderr, "usage: staleness -u HOST:PORT -n HOST:PORT [-T tables] [-r rate] "
			"[-d seconds] [-R readers] [-s] [-o CDF_FILE]\n");
		return 2;
	}
	commit_ns = calloc(MAX_WRITES, sizeof(*commit_ns));
	seen_ns = calloc(MAX_WRITES, sizeof(*seen_ns));
	if (!commit_ns || !seen_ns)
		return 1;
	mysql_library_init(0, NULL, NULL);
	if (do_setup)
		setup();
	for (int i = 0; i < nreaders; i++)
		pthread_create(&r[i], NULL, reader, (void *)(intptr_t)i);
	usleep(500000);       /* readers warm the cache */
	t0 = now_ns();
	pthread_create(&w, NULL, writer, NULL);
	sleep((unsigned)seconds);
	atomic_store(&stop, true);
	pthread_join(w, NULL);
	for (int i = 0; i < nreaders; i++)
		pthread_join(r[i], NULL);
	report((double)(now_ns() - t0) / 1e9, cdf_path);
	return 0;
}
