/*
 * loadgen: a closed-loop MySQL-protocol load generator for scripts/bench.
 * It owns everything the benchmark needs to drive thousands of client
 * connections from one process: the client side of the handshake
 * (mysql_native_password, scramble with OpenSSL SHA1; caching_sha2_password's
 * fast path when the server switches to it, as MySQL does), COM_QUERY and
 * COM_STMT_PREPARE/COM_STMT_EXECUTE, skipping result rows without keeping
 * them, and latency percentiles from a fixed histogram (nothing is
 * allocated per query).
 *
 * One process, T threads, each with its own epoll loop and its share of the
 * connections. Connections are opened in batches (at most -b handshakes in
 * flight per thread); RLIMIT_NOFILE is raised to its hard limit. Sockets are
 * closed with SO_LINGER 0 so that repeated runs of 8,000 connections do not
 * exhaust the ephemeral ports with TIME_WAIT.
 *
 *   cc -O2 -pthread -o loadgen loadgen.c -lcrypto
 *   loadgen -P PORT [-h HOST] [-u USER] [-U USERS] [-p PASS] [-D DB] [-c CONNS]
 *           [-t THREADS] [-d SECONDS] [-w WARMUP] [-m text|ps|psq] [-r RANGE]
 *           [-k KEY] [-n N] [-e SQL | -f FILE] [-S PID] [-b BATCH]
 *           [-C CONNECT_TIMEOUT] [-I] [-W]
 *
 * -U N: connection i logs in as USER followed by (i mod N) + 1 (bu1, bu2, ...
 * for -u bu), all with PASS: many users sharing one workload.
 * Default workload: `SELECT c FROM sbtest1 WHERE id=<id>`, id uniform in
 * 1..RANGE (-r, default 100000), or always KEY (-k); -m ps prepares
 * `SELECT c FROM sbtest1 WHERE id=?` once per connection and executes it
 * with the id as a MYSQL_TYPE_LONG parameter; -m psq prepares it for every
 * query (COM_STMT_CLOSE of the last one, COM_STMT_PREPARE, then the
 * execute: a query's latency covers both round trips), as drivers that
 * prepare each statement they run do. -e/-f send a fixed query
 * instead (text, or prepared without parameters with -m ps).
 * Modes: closed loop for -d seconds after -w seconds of warm-up (default);
 * -n N: every connection runs N queries, all starting together, and the run
 * ends when all are answered (elapsed_ms: the time until the last answer);
 * -W: warm a cache, every id of 1..RANGE exactly once over all connections;
 * -I: open the connections, authenticate, stay idle for -d seconds, and
 * report the RSS of process -S per idle connection.
 *
 * Prints one line of key=value pairs on stdout (see print_report). With
 * -S PID, the CPU time of that process over the measured window per query
 * (server_cpu_us_per_query); loadgen_cpu_us_per_query is this process's own.
 * Exits 0 when at least one connection was established, 1 otherwise.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CARRY 512         /* bytes of a packet kept across reads */
#define PEEK 64           /* payload bytes a result packet needs to be parsed */
#define NERR 32           /* distinct error codes counted per thread */
#define HSUB 64           /* histogram sub-buckets per power of two */
#define HLIN 128          /* linear histogram buckets (100 ns units) */
#define NBUCKET (HLIN + 40 * HSUB)

enum { CAP_LONG_PASSWORD = 1, CAP_CONNECT_WITH_DB = 8, CAP_PROTOCOL_41 = 0x200,
       CAP_TRANSACTIONS = 0x2000, CAP_SECURE_CONNECTION = 0x8000,
       CAP_PLUGIN_AUTH = 0x80000 };
enum { COM_QUERY = 3, COM_STMT_PREPARE = 22, COM_STMT_EXECUTE = 23, COM_STMT_CLOSE = 25 };
/* pseudo error codes for failures that are not MySQL errors */
enum { E_EOF = -1000, E_PROTO = -1001, E_AUTH = -1002, E_TIMEOUT = -1003 };

enum cstate { S_CONNECTING, S_GREETING, S_AUTH, S_PREPARE, S_IDLE, S_RESULT, S_DONE, S_DEAD };
enum rstate { R_HEAD, R_SKIP, R_ROWS };
enum phase { P_CONNECT, P_WARMUP, P_MEASURE, P_STOP };

struct opts {
	const char *host, *user, *pass, *db, *sql;
	int port, conns, threads, batch, ps, idle, warm, users;
	double secs, warmup, connect_timeout;
	long range, key, per_conn;
	int server_pid;
};

struct thread;

struct conn {
	int fd;
	uint8_t state, rstate, seq, nparams;
	uint16_t carry_len;
	uint32_t skip;      /* payload bytes of the current packet still to drop */
	uint32_t remaining; /* packets to drop before the rows (R_SKIP) */
	uint32_t stmt_id;
	uint32_t queries;   /* completed on this connection (-n, -W) */
	uint64_t sent_ns;
	uint8_t *pend;      /* unsent bytes of a request, rarely used */
	uint32_t pend_len, pend_off;
	struct thread *th;
	uint8_t carry[CARRY];
};

struct errcount { int code; uint64_t n; };

struct thread {
	pthread_t tid;
	int idx, ep, first, count, next_open, opening;
	int established, finished;
	struct conn *conns;
	uint64_t rng, next_id;
	uint64_t queries, last_ns;
	uint64_t hist[NBUCKET];
	struct errcount errs[NERR];
	uint64_t errs_other;
	int seen_phase;
};

static struct opts o = {
	.host = "127.0.0.1", .user = "app", .pass = "pw", .db = "sbtest",
	.port = 0, .conns = 8, .threads = 2, .batch = 32, .secs = 10,
	.warmup = 1, .connect_timeout = 120, .range = 100000, .key = 0, .per_conn = 0,
};
static struct sockaddr_in addr;
static _Atomic int phase = P_CONNECT;
static _Atomic int threads_connected, conns_finished;
static uint8_t *fixed_sql;
static size_t fixed_len;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		die("calloc");
	return p;
}

/* ------------------------------------------------------------ statistics */

static void count_error(struct thread *t, int code)
{
	for (int i = 0; i < NERR; i++) {
		if (t->errs[i].n && t->errs[i].code != code)
			continue;
		t->errs[i].code = code;
		t->errs[i].n++;
		return;
	}
	t->errs_other++;
}

static int bucket_of(uint64_t ns)
{
	uint64_t v = ns / 100;

	if (v < HLIN)
		return (int)v;
	int e = 63 - __builtin_clzll(v);
	int b = HLIN + (e - 7) * HSUB + (int)((v >> (e - 6)) & (HSUB - 1));
	return b < NBUCKET ? b : NBUCKET - 1;
}

/* the middle of a bucket, in microseconds */
static double bucket_us(int b)
{
	if (b < HLIN)
		return (b + 0.5) / 10.0;
	int e = (b - HLIN) / HSUB + 7, sub = (b - HLIN) % HSUB;
	double lo = (double)(1ull << e) + (double)sub * (double)(1ull << (e - 6));
	return (lo + (double)(1ull << (e - 6)) / 2) / 10.0;
}

static double percentile(const uint64_t *h, uint64_t total, double p)
{
	uint64_t want = (uint64_t)(p * (double)total + 0.999999), acc = 0;

	if (!total)
		return 0;
	for (int b = 0; b < NBUCKET; b++) {
		acc += h[b];
		if (acc >= want)
			return bucket_us(b);
	}
	return bucket_us(NBUCKET - 1);
}

/* ------------------------------------------------------------ sockets */

static void conn_close(struct conn *c, int code)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (code)
		count_error(c->th, code);
	if (c->fd >= 0) {
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
		close(c->fd);
	}
	if (c->state < S_IDLE)
		c->th->opening--;
	else
		c->th->established--;
	if (c->state != S_DONE)
		atomic_fetch_add(&conns_finished, 1);
	c->fd = -1;
	c->state = S_DEAD;
	free(c->pend);
	c->pend = NULL;
}

static void want_events(struct conn *c, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.ptr = c };

	if (epoll_ctl(c->th->ep, EPOLL_CTL_MOD, c->fd, &e) < 0)
		die("epoll_ctl MOD");
}

/* Send one packet (payload p of n bytes, sequence seq); keep what the socket
 * does not take and finish it on EPOLLOUT. Returns -1 when c was closed. */
static int send_packet(struct conn *c, uint8_t seq, const uint8_t *p, size_t n)
{
	uint8_t buf[4096], *b = buf, *big = NULL;

	if (n + 4 > sizeof buf) {
		big = malloc(n + 4);
		if (!big)
			die("malloc");
		b = big;
	}
	b[0] = (uint8_t)n; b[1] = (uint8_t)(n >> 8); b[2] = (uint8_t)(n >> 16); b[3] = seq;
	memcpy(b + 4, p, n);
	ssize_t w = send(c->fd, b, n + 4, MSG_NOSIGNAL);
	if (w < 0 && errno != EAGAIN && errno != EINTR) {
		free(big);
		conn_close(c, -errno);
		return -1;
	}
	if (w < 0)
		w = 0;
	if ((size_t)w < n + 4) {
		c->pend_len = (uint32_t)(n + 4 - (size_t)w);
		c->pend_off = 0;
		c->pend = malloc(c->pend_len);
		if (!c->pend)
			die("malloc");
		memcpy(c->pend, b + w, c->pend_len);
		want_events(c, EPOLLIN | EPOLLOUT);
	}
	free(big);
	return 0;
}

static void flush_pending(struct conn *c)
{
	ssize_t w = send(c->fd, c->pend + c->pend_off, c->pend_len - c->pend_off, MSG_NOSIGNAL);

	if (w < 0) {
		if (errno != EAGAIN && errno != EINTR)
			conn_close(c, -errno);
		return;
	}
	c->pend_off += (uint32_t)w;
	if (c->pend_off == c->pend_len) {
		free(c->pend);
		c->pend = NULL;
		want_events(c, EPOLLIN);
	}
}

static void open_one(struct thread *t)
{
	struct conn *c = &t->conns[t->next_open++];
	int one = 1;

	c->th = t;
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	t->opening++;
	c->state = S_CONNECTING;
	if (c->fd < 0) {
		conn_close(c, -errno);
		return;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(c->fd, (struct sockaddr *)&addr, sizeof addr) < 0 && errno != EINPROGRESS) {
		conn_close(c, -errno);
		return;
	}
	struct epoll_event e = { .events = EPOLLOUT, .data.ptr = c };
	if (epoll_ctl(t->ep, EPOLL_CTL_ADD, c->fd, &e) < 0)
		die("epoll_ctl ADD");
}

static void open_more(struct thread *t)
{
	while (t->opening < o.batch && t->next_open < t->count &&
	       atomic_load(&phase) == P_CONNECT)
		open_one(t);
}

/* ------------------------------------------------------------ requests */

static uint64_t next_id(struct thread *t)
{
	if (o.key)
		return (uint64_t)o.key;
	if (o.warm) {
		uint64_t id = t->next_id;
		t->next_id += (uint64_t)o.threads;
		return id;
	}
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return 1 + (t->rng * 2685821657736338717ull) % (uint64_t)o.range;
}

static const char POINT_TEXT[] = "SELECT c FROM sbtest1 WHERE id=";
static const char POINT_PS[] = "SELECT c FROM sbtest1 WHERE id=?";

static int send_query(struct conn *c, uint64_t id)
{
	uint8_t q[128];
	size_t n = 0;
	char digits[24];
	int nd = 0;

	if (fixed_sql && !o.ps) {
		uint8_t *p = malloc(fixed_len + 1);
		if (!p)
			die("malloc");
		p[0] = COM_QUERY;
		memcpy(p + 1, fixed_sql, fixed_len);
		int r = send_packet(c, 0, p, fixed_len + 1);
		free(p);
		return r;
	}
	if (o.ps) {
		q[n++] = COM_STMT_EXECUTE;
		memcpy(q + n, &c->stmt_id, 4); n += 4;            /* little-endian host */
		q[n++] = 0;                                       /* flags: no cursor */
		q[n++] = 1; q[n++] = 0; q[n++] = 0; q[n++] = 0;   /* iteration count */
		if (c->nparams) {
			uint32_t v = (uint32_t)id;
			q[n++] = 0;                               /* NULL bitmap */
			q[n++] = 1;                               /* types follow */
			q[n++] = 3; q[n++] = 0;                   /* MYSQL_TYPE_LONG */
			memcpy(q + n, &v, 4); n += 4;
		}
		return send_packet(c, 0, q, n);
	}
	q[n++] = COM_QUERY;
	memcpy(q + n, POINT_TEXT, sizeof POINT_TEXT - 1);
	n += sizeof POINT_TEXT - 1;
	do {
		digits[nd++] = (char)('0' + id % 10);
		id /= 10;
	} while (id);
	while (nd)
		q[n++] = (uint8_t)digits[--nd];
	return send_packet(c, 0, q, n);
}

static int start_prepare(struct conn *c);

/* Start the connection's next query, or finish it (-n, -W, phase over). */
static void next_query(struct conn *c)
{
	struct thread *t = c->th;
	int ph = atomic_load(&phase);

	c->state = S_IDLE;
	if (ph == P_CONNECT || ph == P_STOP || o.idle)
		return;
	if ((o.per_conn && c->queries >= o.per_conn) ||
	    (o.warm && t->next_id > (uint64_t)o.range)) {
		c->state = S_DONE;
		atomic_fetch_add(&conns_finished, 1);
		return;
	}
	c->sent_ns = now_ns();
	if (o.ps == 2) {
		start_prepare(c); /* on_prepare sends the execute */
		return;
	}
	c->state = S_RESULT;
	c->rstate = R_HEAD;
	send_query(c, next_id(t));
}

static void query_done(struct conn *c, int err)
{
	struct thread *t = c->th;
	uint64_t now = now_ns();

	c->queries++;
	if (atomic_load(&phase) == P_MEASURE) {
		if (err)
			count_error(t, err);
		else {
			t->queries++;
			t->hist[bucket_of(now - c->sent_ns)]++;
		}
		t->last_ns = now;
	}
	next_query(c);
}

/* ------------------------------------------------------------ handshake */

static void scramble(uint8_t out[20], const uint8_t salt[20], const char *pw)
{
	uint8_t h1[20], h2[20], h3[20], cat[40];

	SHA1((const uint8_t *)pw, strlen(pw), h1);
	SHA1(h1, 20, h2);
	memcpy(cat, salt, 20);
	memcpy(cat + 20, h2, 20);
	SHA1(cat, 40, h3);
	for (int i = 0; i < 20; i++)
		out[i] = h1[i] ^ h3[i];
}

/* caching_sha2_password's answer to a nonce: SHA256(pw) XOR
 * SHA256(SHA256(SHA256(pw)) . nonce). The server accepts it only while the
 * account's password is in its cache (after one login over TLS or a
 * socket); otherwise it asks for the full exchange, which is not done here. */
static void scramble_sha2(uint8_t out[32], const uint8_t nonce[20], const char *pw)
{
	uint8_t h1[32], h2[32], h3[32], cat[52];

	SHA256((const uint8_t *)pw, strlen(pw), h1);
	SHA256(h1, 32, h2);
	memcpy(cat, h2, 32);
	memcpy(cat + 32, nonce, 20);
	SHA256(cat, 52, h3);
	for (int i = 0; i < 32; i++)
		out[i] = h1[i] ^ h3[i];
}

/* Parse the server greeting (protocol 10) and send the login. */
static int on_greeting(struct conn *c, const uint8_t *p, size_t n)
{
	uint8_t salt[20], resp[512], *w = resp;
	const uint8_t *end = p + n, *q;

	if (n && p[0] == 0xff)
		return n >= 3 ? p[1] | p[2] << 8 : E_PROTO;
	if (n < 1 || p[0] != 10 || !(q = memchr(p + 1, 0, n - 1)) || end - q < 1 + 4 + 8 + 1 + 2 + 1 + 2 + 2 + 1 + 10 + 12)
		return E_PROTO;
	q += 1 + 4;
	memcpy(salt, q, 8);
	uint32_t caps = q[9] | q[10] << 8 | (uint32_t)q[14] << 16 | (uint32_t)q[15] << 24;
	memcpy(salt + 8, q + 27, 12);
	uint32_t mine = CAP_LONG_PASSWORD | CAP_PROTOCOL_41 | CAP_TRANSACTIONS |
			CAP_SECURE_CONNECTION | CAP_PLUGIN_AUTH;
	if (o.db[0] && (caps & CAP_CONNECT_WITH_DB))
		mine |= CAP_CONNECT_WITH_DB;
	memcpy(w, &mine, 4); w += 4;
	memset(w, 0, 4); w[2] = 0; w[3] = 1; w += 4;      /* max packet 16 MiB */
	*w++ = 45;                                        /* utf8mb4_general_ci */
	memset(w, 0, 23); w += 23;
	char user[128];
	if (o.users > 0)
		snprintf(user, sizeof user, "%s%d", o.user,
			 (int)((c->th->first + (c - c->th->conns)) % o.users) + 1);
	else
		snprintf(user, sizeof user, "%s", o.user);
	size_t ul = strlen(user), dl = strlen(o.db);
	memcpy(w, user, ul + 1); w += ul + 1;
	*w++ = 20;
	scramble(w, salt, o.pass); w += 20;
	if (mine & CAP_CONNECT_WITH_DB) {
		memcpy(w, o.db, dl + 1);
		w += dl + 1;
	}
	memcpy(w, "mysql_native_password", 22); w += 22;
	c->state = S_AUTH;
	return send_packet(c, (uint8_t)(c->seq + 1), resp, (size_t)(w - resp)) < 0 ? 1 : 0;
}

static int start_prepare(struct conn *c)
{
	size_t n = fixed_sql ? fixed_len : sizeof POINT_PS - 1;
	uint8_t *p = malloc(n + 1);

	if (!p)
		die("malloc");
	if (c->stmt_id) { /* -m psq: the last query's statement goes (no answer) */
		uint8_t cl[5] = { COM_STMT_CLOSE };

		memcpy(cl + 1, &c->stmt_id, 4);
		c->stmt_id = 0;
		if (send_packet(c, 0, cl, sizeof cl) < 0) {
			free(p);
			return -1;
		}
	}
	p[0] = COM_STMT_PREPARE;
	memcpy(p + 1, fixed_sql ? fixed_sql : (const uint8_t *)POINT_PS, n);
	c->state = S_PREPARE;
	c->rstate = R_HEAD;
	int r = send_packet(c, 0, p, n + 1);
	free(p);
	return r;
}

static void logged_in(struct conn *c)
{
	if (o.ps == 1) {
		start_prepare(c);
		return;
	}
	c->th->opening--;
	c->th->established++;
	next_query(c);
}

/* The server's answer to the login: OK, ERR, a switch to
 * mysql_native_password or caching_sha2_password with a new salt, or
 * caching_sha2_password's verdict (1, then 3: fast path taken, the OK
 * follows; 1, then 4: full exchange wanted, refused here). */
static int on_auth(struct conn *c, const uint8_t *p, size_t n)
{
	if (n && p[0] == 0) {
		logged_in(c);
		return 0;
	}
	if (n >= 3 && p[0] == 0xff)
		return p[1] | p[2] << 8;
	if (n == 2 && p[0] == 0x01)
		return p[1] == 3 ? 0 : E_AUTH;
	if (n && p[0] == 0xfe) {
		const uint8_t *nul = memchr(p + 1, 0, n - 1);
		uint8_t resp[32];
		if (!nul || p + n - (nul + 1) < 20)
			return E_AUTH;
		if (!strcmp((const char *)p + 1, "mysql_native_password")) {
			scramble(resp, nul + 1, o.pass);
			return send_packet(c, (uint8_t)(c->seq + 1), resp, 20) < 0 ? 1 : 0;
		}
		if (!strcmp((const char *)p + 1, "caching_sha2_password")) {
			scramble_sha2(resp, nul + 1, o.pass);
			return send_packet(c, (uint8_t)(c->seq + 1), resp, 32) < 0 ? 1 : 0;
		}
		return E_AUTH;
	}
	return E_AUTH;
}

/* ------------------------------------------------------------ results */

static uint64_t lenenc(const uint8_t *p, size_t n)
{
	if (!n)
		return 0;
	if (p[0] < 0xfb)
		return p[0];
	if (p[0] == 0xfc && n >= 3)
		return p[1] | (uint64_t)p[2] << 8;
	if (p[0] == 0xfd && n >= 4)
		return p[1] | (uint64_t)p[2] << 8 | (uint64_t)p[3] << 16;
	return 0;
}

/* One packet of a prepare answer. Returns an error code to close with. */
static int on_prepare(struct conn *c, const uint8_t *p, size_t have, size_t len)
{
	if (c->rstate == R_HEAD) {
		if (have && p[0] == 0xff)
			return have >= 3 ? p[1] | p[2] << 8 : E_PROTO;
		if (len < 12 || have < 12 || p[0] != 0)
			return E_PROTO;
		unsigned cols = p[5] | p[6] << 8, params = p[7] | p[8] << 8;
		if (params > 1)
			return E_PROTO;
		memcpy(&c->stmt_id, p + 1, 4);
		c->nparams = (uint8_t)params;
		c->remaining = params + (params ? 1 : 0) + cols + (cols ? 1 : 0);
		c->rstate = R_SKIP;
	} else {
		c->remaining--;
	}
	if (c->remaining == 0 && o.ps == 2) {
		c->state = S_RESULT; /* the query's execute, timed from its PREPARE */
		c->rstate = R_HEAD;
		return send_query(c, next_id(c->th)) < 0 ? 1 : 0;
	}
	if (c->remaining == 0) {
		c->th->opening--;
		c->th->established++;
		next_query(c);
	}
	return 0;
}

/* One packet of a query or execute answer. */
static void on_result(struct conn *c, const uint8_t *p, size_t have, size_t len)
{
	if (c->rstate != R_SKIP && have && p[0] == 0xff) {
		query_done(c, have >= 3 ? p[1] | p[2] << 8 : E_PROTO);
		return;
	}
	switch (c->rstate) {
	case R_HEAD:
		if (have && p[0] == 0) {
			query_done(c, 0);
			return;
		}
		c->remaining = (uint32_t)lenenc(p, have) + 1;    /* columns and their EOF */
		c->rstate = R_SKIP;
		return;
	case R_SKIP:
		if (--c->remaining == 0)
			c->rstate = R_ROWS;
		return;
	default:
		if (have && p[0] == 0xfe && len < 9)
			query_done(c, 0);
	}
}

/* Dispatch one packet (its first `have` bytes); returns an error code to
 * close the connection with, 0 to go on, 1 when it was closed already. */
static int on_packet(struct conn *c, const uint8_t *p, size_t have, size_t len)
{
	switch (c->state) {
	case S_GREETING:
		return on_greeting(c, p, have);
	case S_AUTH:
		return on_auth(c, p, have);
	case S_PREPARE:
		return on_prepare(c, p, have, len);
	case S_RESULT:
		on_result(c, p, have, len);
		return c->state == S_DEAD ? 1 : 0;
	default:
		return E_PROTO;   /* unsolicited data */
	}
}

/* Consume bytes: whole small packets, and the first PEEK bytes of large ones
 * (the rest is skipped); an incomplete head is kept in c->carry. */
static void consume(struct conn *c, const uint8_t *d, size_t n)
{
	while (n) {
		if (c->skip) {
			size_t k = n < c->skip ? n : c->skip;
			c->skip -= (uint32_t)k; d += k; n -= k;
			continue;
		}
		if (n < 4)
			break;
		size_t len = d[0] | d[1] << 8 | (size_t)d[2] << 16;
		size_t need = c->state < S_PREPARE ? len : (len < PEEK ? len : PEEK);
		if (need + 4 > CARRY) {
			conn_close(c, E_PROTO);
			return;
		}
		if (n - 4 < need)
			break;
		size_t have = n - 4 < len ? n - 4 : len;
		c->seq = d[3];
		c->skip = (uint32_t)(len - have);
		int r = on_packet(c, d + 4, have, len);
		if (r) {
			if (r != 1 && c->state != S_DEAD)
				conn_close(c, r);
			return;
		}
		if (c->state == S_DEAD)
			return;
		d += 4 + have; n -= 4 + have;
	}
	memmove(c->carry, d, n);
	c->carry_len = (uint16_t)n;
}

static void on_readable(struct conn *c, uint8_t *buf, size_t cap)
{
	size_t k = c->carry_len;

	memcpy(buf, c->carry, k);
	ssize_t r = recv(c->fd, buf + k, cap - k, 0);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		conn_close(c, r == 0 ? E_EOF : -errno);
		return;
	}
	c->carry_len = 0;
	consume(c, buf, k + (size_t)r);
}

static void on_event(struct conn *c, uint32_t ev, uint8_t *buf, size_t cap)
{
	if (c->state == S_CONNECTING) {
		int err = 0;
		socklen_t l = sizeof err;
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
			err = errno;
		if (err) {
			conn_close(c, -err);
			return;
		}
		c->state = S_GREETING;
		want_events(c, EPOLLIN);
		return;
	}
	if ((ev & EPOLLOUT) && c->pend) {
		flush_pending(c);
		if (c->state == S_DEAD)
			return;
	}
	if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP))
		on_readable(c, buf, cap);
}

/* ------------------------------------------------------------ threads */

/* React to a phase change: start the queries, or drop handshakes that did
 * not finish before the connect timeout. */
static void phase_changed(struct thread *t, int ph)
{
	for (int i = 0; i < t->next_open; i++) {
		struct conn *c = &t->conns[i];
		if (c->state < S_IDLE)
			conn_close(c, E_TIMEOUT);
		else if (c->state == S_IDLE && ph != P_STOP)
			next_query(c);
	}
	for (int i = t->next_open; i < t->count; i++) {
		t->conns[i].state = S_DEAD;
		count_error(t, E_TIMEOUT);
		atomic_fetch_add(&conns_finished, 1);
	}
	t->next_open = t->count;
}

static void *thread_main(void *arg)
{
	struct thread *t = arg;
	struct epoll_event evs[512];
	static _Thread_local uint8_t buf[65536];

	t->ep = epoll_create1(EPOLL_CLOEXEC);
	if (t->ep < 0)
		die("epoll_create1");
	t->seen_phase = P_CONNECT;
	for (;;) {
		int ph = atomic_load(&phase);
		if (ph != t->seen_phase) {
			if (t->seen_phase == P_CONNECT)
				phase_changed(t, ph);
			t->seen_phase = ph;
			if (ph == P_STOP)
				break;
		}
		if (ph == P_CONNECT) {
			open_more(t);
			if (t->opening == 0 && t->next_open == t->count && !t->finished) {
				t->finished = 1;
				atomic_fetch_add(&threads_connected, 1);
			}
		}
		int k = epoll_wait(t->ep, evs, 512, 5);
		if (k < 0 && errno != EINTR)
			die("epoll_wait");
		for (int i = 0; i < k; i++) {
			struct conn *c = evs[i].data.ptr;
			if (c->state != S_DEAD)
				on_event(c, evs[i].events, buf, sizeof buf);
		}
	}
	return NULL;
}

/* ------------------------------------------------------------ main */

static double proc_cpu_s(int pid)
{
	char path[64], buf[1024];
	unsigned long ut = 0, st = 0;

	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	/* after the name: state ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt cmajflt utime stime */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static long proc_rss_kb(int pid)
{
	char path[64], line[256];
	long kb = -1;

	snprintf(path, sizeof path, "/proc/%d/status", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static double self_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		die("getrusage");
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void usage(void)
{
	fprintf(stderr, "usage: loadgen -P PORT [-h HOST] [-u USER] [-p PASS] [-D DB] [-c CONNS] [-t THREADS]\n"
		"  [-d SECONDS] [-w WARMUP] [-m text|ps|psq] [-r RANGE] [-k KEY] [-n N] [-e SQL | -f FILE]\n"
		"  [-S PID] [-b BATCH] [-C CONNECT_TIMEOUT] [-I] [-W]   (see the comment in loadgen.c)\n");
	exit(2);
}

static void read_sql_file(const char *path)
{
	FILE *f = fopen(path, "r");
	static uint8_t sql[1 << 20];

	if (!f)
		die(path);
	fixed_len = fread(sql, 1, sizeof sql - 1, f);
	fclose(f);
	while (fixed_len && (sql[fixed_len - 1] == ';' || sql[fixed_len - 1] <= ' '))
		fixed_len--;
	fixed_sql = sql;
}

static void parse_args(int argc, char **argv)
{
	int ch;

	while ((ch = getopt(argc, argv, "h:P:u:U:p:D:c:t:d:w:m:r:k:n:e:f:S:b:C:IW")) != -1) {
		switch (ch) {
		case 'h': o.host = optarg; break;
		case 'P': o.port = atoi(optarg); break;
		case 'u': o.user = optarg; break;
		case 'U': o.users = atoi(optarg); break;
		case 'p': o.pass = optarg; break;
		case 'D': o.db = optarg; break;
		case 'c': o.conns = atoi(optarg); break;
		case 't': o.threads = atoi(optarg); break;
		case 'd': o.secs = atof(optarg); break;
		case 'w': o.warmup = atof(optarg); break;
		case 'm': o.ps = !strcmp(optarg, "ps") ? 1 : !strcmp(optarg, "psq") ? 2 : 0; break;
		case 'r': o.range = atol(optarg); break;
		case 'k': o.key = atol(optarg); break;
		case 'n': o.per_conn = atol(optarg); break;
		case 'e': fixed_sql = (uint8_t *)optarg; fixed_len = strlen(optarg); break;
		case 'f': read_sql_file(optarg); break;
		case 'S': o.server_pid = atoi(optarg); break;
		case 'b': o.batch = atoi(optarg); break;
		case 'C': o.connect_timeout = atof(optarg); break;
		case 'I': o.idle = 1; break;
		case 'W': o.warm = 1; break;
		default: usage();
		}
	}
	if (o.port <= 0 || o.conns <= 0 || o.threads <= 0 || o.range <= 0 || o.batch <= 0)
		usage();
	if (o.threads > o.conns)
		o.threads = o.conns;
}

static void resolve(void)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;

	if (getaddrinfo(o.host, NULL, &hints, &ai) != 0) {
		fprintf(stderr, "loadgen: cannot resolve %s\n", o.host);
		exit(2);
	}
	memcpy(&addr, ai->ai_addr, sizeof addr);
	addr.sin_port = htons((uint16_t)o.port);
	freeaddrinfo(ai);
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("getrlimit");
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("setrlimit");
	if (rl.rlim_cur < (rlim_t)o.conns + 64)
		fprintf(stderr, "loadgen: RLIMIT_NOFILE %lu is below %d connections\n",
			(unsigned long)rl.rlim_cur, o.conns);
}

static struct thread *start_threads(void)
{
	struct thread *ts = xcalloc((size_t)o.threads, sizeof *ts);
	struct conn *all = xcalloc((size_t)o.conns, sizeof *all);

	for (int i = 0, first = 0; i < o.threads; i++) {
		struct thread *t = &ts[i];
		t->idx = i;
		t->first = first;
		t->count = o.conns / o.threads + (i < o.conns % o.threads);
		t->conns = all + first;
		t->rng = 0x9e3779b97f4a7c15ull ^ (now_ns() + (uint64_t)i * 7919);
		t->next_id = (uint64_t)i + 1;
		for (int j = 0; j < t->count; j++) {
			t->conns[j].fd = -1;
			t->conns[j].th = t;
		}
		first += t->count;
		if (pthread_create(&t->tid, NULL, thread_main, t))
			die("pthread_create");
	}
	return ts;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* what the run measured, filled in by main and printed by print_report */
struct result {
	int established;
	double connect_s, window_s, elapsed_ms, server_cpu, self_cpu;
	long rss_before, rss_after;
};

static void print_errors(struct thread *ts, uint64_t *total)
{
	struct errcount all[NERR * 4];
	int n = 0;
	uint64_t other = 0;

	*total = 0;
	for (int i = 0; i < o.threads; i++) {
		other += ts[i].errs_other;
		for (int j = 0; j < NERR && ts[i].errs[j].n; j++) {
			int k = 0;
			while (k < n && all[k].code != ts[i].errs[j].code)
				k++;
			if (k == n) {
				if (n == (int)(sizeof all / sizeof all[0])) {
					other += ts[i].errs[j].n;
					continue;
				}
				all[n].code = ts[i].errs[j].code;
				all[n++].n = 0;
			}
			all[k].n += ts[i].errs[j].n;
		}
	}
	printf(" error_codes=");
	for (int k = 0; k < n; k++) {
		int c = all[k].code;
		const char *name = c == E_EOF ? "EOF" : c == E_PROTO ? "PROTOCOL" : c == E_AUTH ? "AUTH_PLUGIN"
				 : c == E_TIMEOUT ? "CONNECT_TIMEOUT" : c < 0 ? strerrorname_np(-c) : NULL;
		if (name)
			printf("%s%s:%llu", k ? "," : "", name, (unsigned long long)all[k].n);
		else
			printf("%s%d:%llu", k ? "," : "", c, (unsigned long long)all[k].n);
		*total += all[k].n;
	}
	if (other)
		printf("%sother:%llu", n ? "," : "", (unsigned long long)other);
	if (!n && !other)
		printf("none");
	*total += other;
}

static void print_report(struct thread *ts, const struct result *r)
{
	static uint64_t h[NBUCKET];
	uint64_t q = 0, errs;

	for (int i = 0; i < o.threads; i++) {
		q += ts[i].queries;
		for (int b = 0; b < NBUCKET; b++)
			h[b] += ts[i].hist[b];
	}
	int maxb = NBUCKET - 1;
	while (maxb > 0 && !h[maxb])
		maxb--;
	printf("mode=%s conns=%d threads=%d established=%d connect_s=%.2f window_s=%.2f queries=%llu qps=%.0f",
	       o.idle ? "idle" : o.ps == 2 ? "psq" : o.ps ? "ps" : "text", o.conns, o.threads, r->established, r->connect_s,
	       r->window_s, (unsigned long long)q, r->window_s > 0 ? (double)q / r->window_s : 0);
	printf(" p50_ms=%.3f p95_ms=%.3f p99_ms=%.3f max_ms=%.3f", percentile(h, q, 0.50) / 1000,
	       percentile(h, q, 0.95) / 1000, percentile(h, q, 0.99) / 1000, q ? bucket_us(maxb) / 1000 : 0);
	print_errors(ts, &errs);
	printf(" errors=%llu", (unsigned long long)errs);
	if (o.per_conn || o.warm)
		printf(" elapsed_ms=%.1f", r->elapsed_ms);
	if (o.server_pid && !o.idle && q)
		printf(" server_cpu_us_per_query=%.2f", r->server_cpu * 1e6 / (double)q);
	if (q)
		printf(" loadgen_cpu_us_per_query=%.2f", r->self_cpu * 1e6 / (double)q);
	if (o.idle && o.server_pid)
		printf(" rss_before_kb=%ld rss_after_kb=%ld rss_per_conn_bytes=%.0f", r->rss_before, r->rss_after,
		       r->established ? (double)(r->rss_after - r->rss_before) * 1024 / r->established : 0);
	printf("\n");
}

/* Run the phases after the connections are up; fills the timing fields. */
static void run_phases(struct thread *ts, struct result *r)
{
	double s0, c0;
	uint64_t t0;

	(void)ts;
	if (o.idle) {
		sleep_s(1);
		r->rss_after = proc_rss_kb(o.server_pid);
		atomic_store(&phase, P_MEASURE);
		sleep_s(o.secs);
		return;
	}
	if (!o.per_conn && !o.warm && o.warmup > 0) {
		atomic_store(&phase, P_WARMUP);
		sleep_s(o.warmup);
	}
	s0 = o.server_pid ? proc_cpu_s(o.server_pid) : 0;
	c0 = self_cpu_s();
	t0 = now_ns();
	atomic_store(&phase, P_MEASURE);
	if (o.per_conn || o.warm) {
		while (atomic_load(&conns_finished) < o.conns && now_ns() - t0 < (uint64_t)(o.secs * 1e9))
			sleep_s(0.001);
	} else {
		sleep_s(o.secs);
	}
	r->window_s = (double)(now_ns() - t0) / 1e9;
	r->server_cpu = o.server_pid ? proc_cpu_s(o.server_pid) - s0 : 0;
	r->self_cpu = self_cpu_s() - c0;
	atomic_store(&phase, P_STOP);
	uint64_t last = t0;
	for (int i = 0; i < o.threads; i++)
		if (ts[i].last_ns > last)
			last = ts[i].last_ns;
	r->elapsed_ms = (double)(last - t0) / 1e6;
	if (o.per_conn || o.warm)
		r->window_s = r->elapsed_ms / 1000;
}

int main(int argc, char **argv)
{
	struct result r = { 0 };
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	parse_args(argc, argv);
	resolve();
	raise_nofile();
	if (o.idle && o.server_pid)
		r.rss_before = proc_rss_kb(o.server_pid);
	uint64_t c0 = now_ns();
	struct thread *ts = start_threads();
	while (atomic_load(&threads_connected) < o.threads &&
	       now_ns() - c0 < (uint64_t)(o.connect_timeout * 1e9))
		sleep_s(0.005);
	r.connect_s = (double)(now_ns() - c0) / 1e9;
	for (int i = 0; i < o.threads; i++)
		r.established += __atomic_load_n(&ts[i].established, __ATOMIC_RELAXED);
	if (r.established)
		run_phases(ts, &r);
	atomic_store(&phase, P_STOP);
	for (int i = 0; i < o.threads; i++)
		if (pthread_join(ts[i].tid, NULL))
			die("pthread_join");
	for (int i = 0; i < o.conns; i++) {
		int fd = ts[0].conns[i].fd;   /* one array for all threads */
		if (fd >= 0) {
			setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
			close(fd);
		}
	}
	print_report(ts, &r);
	return r.established ? 0 : 1;
}
