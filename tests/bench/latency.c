/*
 * latency: run one query N times on one connection (concurrency 1) and print
 * its latency percentiles. The benchmark's sub-millisecond figures (a cached
 * hit, the floor server) are close to the client's own cost, so this is
 * plain C on Connector/C's blocking API: mysql_real_query, then
 * mysql_store_result (every row is read), then mysql_free_result, timed
 * with CLOCK_MONOTONIC around the three. Nothing else happens per query.
 *
 *   cc -O2 -o latency latency.c $(mariadb_config --cflags --libs)
 *   latency -h HOST -P PORT -u USER -p PASS [-D DB] [-n N] [-w WARMUP]
 *           [-T MAX_SECONDS] [-d] (-e SQL | -f FILE)
 *
 * -n  measured executions (default 1000); -w unmeasured ones first
 * (default 10); -T stops the measured loop early after that many seconds
 * (for slow queries; at least 5 executions are measured). A trailing ';' and
 * whitespace are removed from the query, as the mariadb client does.
 * -d prints the first measured answer's rows, tab-separated, to stderr.
 *
 * Prints one line of key=value pairs: n, p50_us, p95_us, p99_us, min_us,
 * mean_us, max_us, qps, rows, cols, checksum and stable. checksum is the sum
 * of one FNV-1a hash per row (over every field) of the first measured answer:
 * independent of row order, since a server may order ties differently from
 * one execution to the next, and comparable between two servers' answers.
 * stable=1 when the last answer has the same rows and checksum as the first.
 * Exits 1 on any error.
 */
#include <mysql.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const uint64_t *v, size_t n, double p)
{
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);

	return (double)v[i < n ? i : n - 1] / 1000.0;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = 0;
	fclose(f);
	return buf;
}

struct answer { uint64_t rows; unsigned cols; uint64_t sum; };
static int dump;

/* One execution; with ans, also walk the rows into a checksum. */
static int run_once(MYSQL *m, const char *q, size_t qlen, struct answer *ans)
{
	MYSQL_RES *res;

	if (mysql_real_query(m, q, (unsigned long)qlen)) {
		fprintf(stderr, "latency: query failed: %s\n", mysql_error(m));
		return -1;
	}
	res = mysql_store_result(m);
	if (!res && mysql_field_count(m)) {
		fprintf(stderr, "latency: reading the result failed: %s\n", mysql_error(m));
		return -1;
	}
	if (ans && res) {
		MYSQL_ROW row;
		uint64_t sum = 0;

		ans->rows = mysql_num_rows(res);
		ans->cols = mysql_num_fields(res);
		while ((row = mysql_fetch_row(res))) {
			unsigned long *len = mysql_fetch_lengths(res);
			uint64_t h = 1469598103934665603ull;

			for (unsigned i = 0; i < ans->cols; i++) {
				const unsigned char *p = (const unsigned char *)(row[i] ? row[i] : "");
				unsigned long n = row[i] ? len[i] : 0;

				h = (h ^ (row[i] ? 1u : 2u)) * 1099511628211ull;
				for (unsigned long k = 0; k < n; k++)
					h = (h ^ p[k]) * 1099511628211ull;
				if (dump)
					fprintf(stderr, "%s%.*s", i ? "\t" : "", row[i] ? (int)n : 4,
						row[i] ? (const char *)p : "NULL");
			}
			if (dump)
				fputc('\n', stderr);
			sum += h;
		}
		ans->sum = sum;
		dump = 0;
	} else if (ans) {
		ans->rows = 0;
		ans->cols = 0;
		ans->sum = 0;
	}
	if (res)
		mysql_free_result(res);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: latency -h HOST -P PORT -u USER -p PASS [-D DB] [-n N] [-w WARMUP]\n"
			"               [-T MAX_SECONDS] [-d] (-e SQL | -f FILE)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *host = "127.0.0.1", *user = "root", *pass = "", *db = NULL, *sql = NULL, *file = NULL;
	unsigned port = 3306;
	long n = 1000, warm = 10;
	double max_s = 0;
	int opt;

	while ((opt = getopt(argc, argv, "h:P:u:p:D:n:w:T:e:f:d")) != -1) {
		switch (opt) {
		case 'h': host = optarg; break;
		case 'P': port = (unsigned)atoi(optarg); break;
		case 'u': user = optarg; break;
		case 'p': pass = optarg; break;
		case 'D': db = optarg; break;
		case 'n': n = atol(optarg); break;
		case 'w': warm = atol(optarg); break;
		case 'T': max_s = atof(optarg); break;
		case 'e': sql = optarg; break;
		case 'f': file = optarg; break;
		case 'd': dump = 1; break;
		default: usage();
		}
	}
	if ((!sql) == (!file) || n < 1 || warm < 0)
		usage();

	char *q = file ? read_file(file) : strdup(sql);
	if (!q) {
		fprintf(stderr, "latency: cannot read %s\n", file ? file : "the query");
		return 1;
	}
	size_t qlen = strlen(q);
	while (qlen && (q[qlen - 1] == ';' || q[qlen - 1] == ' ' || q[qlen - 1] == '\n' ||
			q[qlen - 1] == '\r' || q[qlen - 1] == '\t'))
		qlen--;
	q[qlen] = 0;

	MYSQL *m = mysql_init(NULL);
	if (!m || !mysql_real_connect(m, host, user, pass, db, port, NULL, 0)) {
		fprintf(stderr, "latency: cannot connect to %s:%u: %s\n", host, port, m ? mysql_error(m) : "oom");
		return 1;
	}
	for (long i = 0; i < warm; i++)
		if (run_once(m, q, qlen, NULL) < 0)
			return 1;

	uint64_t *lat = calloc((size_t)n, sizeof(*lat));
	struct answer first = {0}, last = {0};
	uint64_t t_begin = now_ns(), sum = 0;
	long done = 0;

	if (!lat)
		return 1;
	for (long i = 0; i < n; i++) {
		struct answer *a = i == 0 ? &first : i == n - 1 ? &last : NULL;
		uint64_t t0 = now_ns(), t1;

		if (run_once(m, q, qlen, a) < 0)
			return 1;
		t1 = now_ns();
		lat[done++] = t1 - t0;
		sum += t1 - t0;
		if (max_s > 0 && done >= 5 && (double)(t1 - t_begin) / 1e9 >= max_s)
			break;
	}
	double wall = (double)(now_ns() - t_begin) / 1e9;
	int stable = done < n || n == 1 || (last.rows == first.rows && last.sum == first.sum);
	qsort(lat, (size_t)done, sizeof(*lat), cmp_u64);
	printf("n=%ld p50_us=%.1f p95_us=%.1f p99_us=%.1f min_us=%.1f mean_us=%.1f max_us=%.1f "
	       "qps=%.1f rows=%llu cols=%u checksum=%016llx stable=%d\n",
	       done, pct(lat, (size_t)done, 0.50), pct(lat, (size_t)done, 0.95), pct(lat, (size_t)done, 0.99),
	       (double)lat[0] / 1000.0, (double)sum / (double)done / 1000.0,
	       (double)lat[done - 1] / 1000.0, (double)done / wall,
	       (unsigned long long)first.rows, first.cols, (unsigned long long)first.sum, stable);
	free(lat);
	free(q);
	mysql_close(m);
	return 0;
}
