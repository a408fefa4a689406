/*
 * refill.c: the refill thread (see refill.h): its sessions to the node
 * itself, the settings a key was read under set again, each statement sent
 * and its answer read to the end, the pace and the deadline.
 */
#include "core/refill.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "cache/binlog.h"
#include "cache/settings.h"
#include "cache/store.h"
#include "cache/warm.h"
#include "config/config.h"
#include "core/worker.h"
#include "proto/handshake.h"
#include "proto/packet.h"

#define REFILL_CONNS 4               /* sessions kept open (user, capabilities, schema) */
#define REFILL_READ_TIMEOUT_S 300    /* longest one answer may take */
#define REFILL_GIVE_UP 100           /* consecutive failures that stop the refill */
#define REFILL_COLLATION 45          /* utf8mb4_general_ci: the settings then set the rest */
#define SCHEMA_FIELD 13              /* DATABASE() in the settings list (cache/session.c) */
#define MORE_RESULTS 0x0008          /* SERVER_MORE_RESULTS_EXISTS */

/* The capabilities of the refill's sessions: those of a common client; the
 * key's own bits (key[1]) are added. */
#define REFILL_CAPS (CAP_LONG_PASSWORD | CAP_LONG_FLAG | CAP_PROTOCOL_41 | CAP_TRANSACTIONS | \
	CAP_SECURE_CONNECTION | CAP_MULTI_RESULTS | CAP_PS_MULTI_RESULTS | CAP_PLUGIN_AUTH)

struct rconn {
	int fd;                     /* -1: unused */
	uint32_t user;              /* warm_keys.users index */
	uint8_t bits;               /* the key's capability bits */
	char db[256];
	uint32_t settings_id;       /* the settings set on it (0: none yet) */
	uint64_t used;              /* R.clock at last use */
};

static struct {
	pthread_t thread;
	bool started;
	atomic_bool stop;
	pthread_mutex_t lock;       /* guards conns[].fd against refill_stop's shutdown */
	struct warm_keys keys;
	bool *refused;              /* by user: its login was refused, its keys are skipped */
	struct rconn conns[REFILL_CONNS];
	uint64_t clock;
	struct pbuf pkt;            /* the packet read last */
	struct pbuf out;            /* the command sent */
	uint32_t failures;          /* in a row */
} R = { .lock = PTHREAD_MUTEX_INITIALIZER };

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleep until mono time t (or the stop): false when stopped. */
static bool sleep_until(double t)
{
	while (!atomic_load(&R.stop)) {
		double left = t - mono_s();
		struct timespec ts;

		if (left <= 0)
			return true;
		if (left > 0.1)
			left = 0.1;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(left * 1e9);
		nanosleep(&ts, NULL);
	}
	return false;
}

/* ---- one session's bytes ------------------------------------------------------- */

/* Read (or write) exactly n bytes: 0, or -1 (closed, an error, the read
 * timeout). */
static int io_full(int fd, uint8_t *p, size_t n, bool wr)
{
	while (n) {
		ssize_t r = wr ? write(fd, p, n) : read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* The next packet's payload into R.pkt. Its length, or -1. */
static int64_t read_packet(struct rconn *c)
{
	uint8_t head[PKT_HEADER_LEN];
	uint32_t len;

	if (io_full(c->fd, head, sizeof head, false) < 0)
		return -1;
	len = rd_u24(head);
	R.pkt.len = 0;
	if (pbuf_reserve(&R.pkt, len + 1) < 0 || io_full(c->fd, R.pkt.data, len, false) < 0)
		return -1;
	R.pkt.len = len;
	return len;
}

/* Send a command (cmd, then n bytes of arg) as one packet, sequence 0. */
static int send_command(struct rconn *c, uint8_t cmd, const void *arg, size_t n)
{
	size_t start;

	R.out.len = 0;
	if (n + 1 >= PKT_MAX_PAYLOAD || pkt_begin(&R.out, &start) < 0 || put_u8(&R.out, cmd) < 0 ||
	    pbuf_append(&R.out, arg, n) < 0)
		return -1;
	pkt_end(&R.out, start, 0);
	return io_full(c->fd, R.out.data, R.out.len, true);
}

/* The status flags of an OK packet (0x00, or 0xfe ending rows under
 * CLIENT_DEPRECATE_EOF) or of a classic EOF packet. */
static uint16_t end_status(const uint8_t *pl, size_t n, bool ok_form)
{
	struct pcur cur;

	pcur_init(&cur, pl + 1, n - 1);
	if (ok_form) {
		pcur_lenenc(&cur, NULL);
		pcur_lenenc(&cur, NULL);
		return cur.err ? 0 : pcur_u16(&cur);
	}
	pcur_u16(&cur); /* warnings */
	return cur.err ? 0 : pcur_u16(&cur);
}

/* Copy an ERR packet's message into err. */
static void err_text(const uint8_t *pl, size_t n, char *err, size_t cap)
{
	size_t skip = n > 9 && pl[3] == '#' ? 9 : 3;

	snprintf(err, cap, "%u: %.*s", n >= 3 ? rd_u16(pl + 1) : 0, n > skip ? (int)(n - skip) : 0,
		 (const char *)pl + skip);
}

/* A result set's rows up to their end packet: its status; -1 broken, -2
 * an ERR (err set). */
static int read_rows(struct rconn *c, bool deprecate_eof, char *err, size_t cap)
{
	for (;;) {
		int64_t n = read_packet(c);
		const uint8_t *pl = R.pkt.data;

		if (n < 0)
			return -1;
		while (n == PKT_MAX_PAYLOAD)    /* a row over 16 MiB: its continuations */
			if ((n = read_packet(c)) < 0)
				return -1;
		if (n >= 1 && pl[0] == 0xff) {
			err_text(pl, (size_t)n, err, cap);
			return -2;
		}
		if (n >= 1 && pl[0] == 0xfe && (deprecate_eof ? n < PKT_MAX_PAYLOAD : n < 9))
			return end_status(pl, (size_t)n, deprecate_eof);
	}
}

/* Read one command's whole answer (every result of it): 0; 1 an error
 * (err says which; the session goes on); -1 the session is broken. */
static int read_answer(struct rconn *c, char *err, size_t cap)
{
	bool deprecate_eof = (c->bits & 1) != 0;

	snprintf(err, cap, "the session closed");
	for (;;) {
		int64_t n = read_packet(c);
		const uint8_t *pl = R.pkt.data;
		struct pcur cur;
		uint64_t cols;
		int status;

		if (n < 1)
			return -1;
		if (pl[0] == 0xff) {
			err_text(pl, (size_t)n, err, cap);
			return 1;
		}
		if (pl[0] == 0x00) {
			if (!(end_status(pl, (size_t)n, true) & MORE_RESULTS))
				return 0;
			continue;
		}
		if (pl[0] == 0xfb) {
			snprintf(err, cap, "LOAD DATA LOCAL asked for");
			return -1;
		}
		pcur_init(&cur, pl, (size_t)n);
		cols = pcur_lenenc(&cur, NULL);
		for (uint64_t i = 0; i < cols + (deprecate_eof ? 0 : 1); i++)
			if (read_packet(c) < 0)
				return -1;
		status = read_rows(c, deprecate_eof, err, cap);
		if (status < 0)
			return status == -2 ? 1 : -1;
		if (!(status & MORE_RESULTS))
			return 0;
	}
}

/* ---- the settings a key was read under ----------------------------------------- */

/* The SET names of the settings list's fields (cache/session.c,
 * SETTINGS_SQL), in order; NULL: handled apart. numeric: unquoted. */
static const struct {
	const char *name;
	bool numeric;
} FIELDS[] = {
	{ "character_set_client", false }, { "character_set_connection", false },
	{ "character_set_results", false }, { "collation_connection", false },
	{ "time_zone", false }, { "sql_mode", false }, { "lc_time_names", false },
	{ "div_precision_increment", true }, { "sql_select_limit", true },
	{ "group_concat_max_len", true }, { "max_sort_length", true },
	{ "default_week_format", true }, { "sql_auto_is_null", true },
	{ NULL, false },  /* DATABASE(): the session's schema */
	{ NULL, false },  /* IF(@@sql_big_selects,'',@@max_join_size) */
	{ "default_regex_flags", false }, { "system_versioning_asof", false },
	{ "old_mode", false }, { "max_recursive_iterations", true },
	{ NULL, false },  /* the temporary tables' limits, "disk/memory/heap" or '' */
};
#define NFIELDS (sizeof FIELDS / sizeof FIELDS[0])
#define MYSQL_FIELDS 15  /* a MySQL upstream's list ends after the join limit */

static bool all_digits(const char *v, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (v[i] < '0' || v[i] > '9')
			return false;
	return true;
}

/* Append ", name=value" (value quoted unless numeric; NULL when null). */
static bool put_set(struct pbuf *b, const char *name, const char *v, size_t n, bool null, bool numeric)
{
	int rc = pbuf_append(b, b->len ? ", " : "SET SESSION ", b->len ? 2 : 12);

	rc |= pbuf_append(b, name, strlen(name));
	rc |= pbuf_append(b, "=", 1);
	if (null)
		return (rc | pbuf_append(b, "NULL", 4)) == 0;
	if (numeric)
		return all_digits(v, n) && (rc | pbuf_append(b, v, n)) == 0;
	if (strcmp(name, "system_versioning_asof") == 0 && n == 7 && memcmp(v, "DEFAULT", 7) == 0)
		return (rc | pbuf_append(b, "DEFAULT", 7)) == 0;
	rc |= pbuf_append(b, "'", 1);
	for (size_t i = 0; i < n; i++) {
		if (v[i] == '\'' || v[i] == '\\')
			rc |= pbuf_append(b, "\\", 1);
		rc |= pbuf_append(b, v + i, 1);
	}
	return (rc | pbuf_append(b, "'", 1)) == 0;
}

/* The limits kept apart: the join limit (field 14) and the temporary
 * tables' (field 19). */
static bool put_limits(struct pbuf *b, unsigned idx, const char *v, size_t n)
{
	static const char *const tmp[] = { "tmp_disk_table_size", "tmp_memory_table_size",
					   "max_heap_table_size" };
	unsigned k = 0;

	if (idx == 14)
		return n == 0 ? put_set(b, "sql_big_selects", "1", 1, false, true)
			      : put_set(b, "max_join_size", v, n, false, true);
	if (n == 0)
		return put_set(b, "tmp_disk_table_size", "18446744073709551615", 20, false, true);
	while (n && k < 3) {
		const char *slash = memchr(v, '/', n);
		size_t len = slash ? (size_t)(slash - v) : n;

		if (!put_set(b, tmp[k++], v, len, false, true))
			return false;
		n -= slash ? len + 1 : len;
		v += slash ? len + 1 : len;
	}
	return k == 3 && n == 0;
}

/* The SET statement that gives a session the settings of list id (into
 * b); false when they cannot be written (unknown id, a bad value). */
static bool settings_statement(uint32_t id, struct pbuf *b)
{
	uint8_t list[1024];          /* SETTINGS_MAX (cache/session.h) */
	size_t len = settings_get(id, list, sizeof list), pos = 0;
	unsigned idx = 0;

	b->len = 0;
	while (pos < len && idx < NFIELDS) {
		const uint8_t *end = memchr(list + pos, 0x1f, len - pos);
		const uint8_t *null = memchr(list + pos, 0x02, len - pos);
		bool is_null = null && (!end || null < end);
		const uint8_t *stop = is_null ? null : end;
		size_t n = stop ? (size_t)(stop - (list + pos)) : 0;
		const char *v = (const char *)list + pos;

		if (!stop)
			return false;
		if (FIELDS[idx].name) {
			if (!put_set(b, FIELDS[idx].name, v, is_null ? 0 : n, is_null, FIELDS[idx].numeric))
				return false;
		} else if (idx != SCHEMA_FIELD && !put_limits(b, idx, v, is_null ? 0 : n)) {
			return false;
		}
		pos += n + 1;
		idx++;
	}
	return pos == len && (idx == NFIELDS || idx == MYSQL_FIELDS);
}

/* ---- the sessions -------------------------------------------------------------- */

static void conn_close(struct rconn *c)
{
	pthread_mutex_lock(&R.lock);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	pthread_mutex_unlock(&R.lock);
}

static uint32_t key_caps(uint8_t bits, bool db)
{
	return REFILL_CAPS | (db ? CAP_CONNECT_WITH_DB : 0) | ((bits & 1) ? CAP_DEPRECATE_EOF : 0) |
	       ((bits & 2) ? CAP_SESSION_TRACK : 0) | ((bits & 4) ? CAP_X_EXT_METADATA : 0);
}

/* Open a session of the node's own on c (its user, bits and db set) and
 * read its OK. 0, or -1 with err set. */
static int conn_open(struct rconn *c, char *err, size_t cap)
{
	struct internal_login *in = calloc(1, sizeof *in);
	struct timeval tv = { .tv_sec = REFILL_READ_TIMEOUT_S };
	int sv[2] = { -1, -1 };

	snprintf(err, cap, "no session: %s", strerror(errno ? errno : ENOMEM));
	if (!in || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 ||
	    fcntl(sv[1], F_SETFL, O_NONBLOCK) < 0 ||
	    setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0) {
		free(in);
		if (sv[0] >= 0)
			close(sv[0]);
		if (sv[1] >= 0)
			close(sv[1]);
		return -1;
	}
	snprintf(in->user, sizeof in->user, "%s", R.keys.users[c->user]);
	snprintf(in->db, sizeof in->db, "%s", c->db);
	in->caps = key_caps(c->bits, c->db[0] != 0);
	in->collation = REFILL_COLLATION;
	if (worker_hand_off_internal(workers_pick(), sv[1], in) < 0) {
		free(in);
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	pthread_mutex_lock(&R.lock);
	c->fd = sv[0];
	pthread_mutex_unlock(&R.lock);
	c->settings_id = 0;
	if (read_packet(c) < 1 || R.pkt.data[0] != 0x00) {
		if (R.pkt.len > 0 && R.pkt.data[0] == 0xff)
			err_text(R.pkt.data, R.pkt.len, err, cap);
		else
			snprintf(err, cap, "the session closed");
		conn_close(c);
		return -1;
	}
	return 0;
}

/* The open session for k's user, capabilities and schema, or a new one (in
 * place of the least recently used). NULL with err set. */
static struct rconn *conn_for(const struct warm_key *k, const char *db, char *err, size_t cap)
{
	struct rconn *lru = &R.conns[0];

	R.clock++;
	for (unsigned i = 0; i < REFILL_CONNS; i++) {
		struct rconn *c = &R.conns[i];

		if (c->fd >= 0 && c->user == k->user && c->bits == k->key[1] && strcmp(c->db, db) == 0) {
			c->used = R.clock;
			return c;
		}
		if (c->fd < 0 || (lru->fd >= 0 && c->used < lru->used))
			lru = c;
	}
	if (lru->fd >= 0) {
		send_command(lru, 0x01, NULL, 0); /* COM_QUIT */
		conn_close(lru);
	}
	lru->user = k->user;
	lru->bits = k->key[1];
	snprintf(lru->db, sizeof lru->db, "%s", db);
	lru->used = R.clock;
	return conn_open(lru, err, cap) == 0 ? lru : NULL;
}

/* ---- one key ------------------------------------------------------------------- */

static uint32_t key_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Read k again through a session of its user under its settings. */
static enum warm_refill_outcome refill_key(const struct warm_key *k, char *err, size_t cap)
{
	uint32_t settings = key_u32(k->key + 2);
	char db[256];
	struct rconn *c;
	struct pbuf set = { 0 };
	bool ok;
	int rc;

	settings_field(settings, SCHEMA_FIELD, db, sizeof db);
	if (!(c = conn_for(k, db, err, cap))) {
		if (strstr(err, "clear password"))
			R.refused[k->user] = true;
		return WARM_REFILL_FAILED;
	}
	if (c->settings_id != settings) {
		ok = settings_statement(settings, &set);
		if (!ok)
			snprintf(err, cap, "its settings cannot be set again");
		else if (send_command(c, 0x03, set.data, set.len) < 0 || read_answer(c, err, cap) != 0)
			ok = false;
		pbuf_free(&set);
		if (!ok) {
			conn_close(c);
			return WARM_REFILL_FAILED;
		}
		c->settings_id = settings;
	}
	rc = send_command(c, 0x03, k->key + WARM_KEY_HEAD, k->key_len - WARM_KEY_HEAD) < 0 ? -1
		: read_answer(c, err, cap);
	if (rc < 0)
		conn_close(c);
	if (rc != 0)
		return WARM_REFILL_FAILED;
	if (store_has(k->key, k->key_len, wall_ms()))
		return WARM_REFILLED;
	snprintf(err, cap, "its answer is not cached under its key");
	return WARM_REFILL_FAILED;
}

/* ---- the thread ---------------------------------------------------------------- */

static int by_saving(const void *a, const void *b)
{
	double x = ((const struct warm_key *)a)->saved_us, y = ((const struct warm_key *)b)->saved_us;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Wait (at most until deadline) for what must come first: the binlog
 * replay of a loaded snapshot, and in binlog mode the follower caught up
 * (fills are not stored before). false when stopped or past the deadline. */
static bool wait_ready(double deadline)
{
	for (;;) {
		struct warm_status w;
		struct binlog_status b;

		warm_status(&w);
		binlog_get_status(&b);
		if (w.state != WARM_LOADING && w.state != WARM_REPLAYING && b.state != BINLOG_CONNECTING &&
		    b.state != BINLOG_CATCHING_UP && b.state != BINLOG_DOWN)
			return true;
		if (mono_s() >= deadline || !sleep_until(mono_s() + 0.05))
			return false;
	}
}

/* One key: skipped when served already or its user refused, else read
 * again at the pace of warm_rate. false when the refill must stop. */
static bool step(const struct warm_key *k, double *next_at, double deadline, const char **why)
{
	char err[512];
	int rate = __atomic_load_n(&g_config.warm_rate, __ATOMIC_RELAXED);
	enum warm_refill_outcome o;

	if (store_has(k->key, k->key_len, wall_ms())) {
		warm_refill_count(WARM_REFILL_PRESENT);
		return true;
	}
	if (R.refused[k->user]) {
		warm_refill_count(WARM_REFILL_FAILED);
		return true;
	}
	if (rate <= 0) {
		*why = "warm_rate was set to 0";
		return false;
	}
	if (g_config.memory_limit && store_bytes() >= g_config.memory_limit / 20 * 19) {
		*why = "the cache is at memory_limit (a refill now would only evict)";
		return false;
	}
	if (*next_at > deadline || !sleep_until(*next_at)) {
		*why = atomic_load(&R.stop) ? "the node stops" : "warm_timeout_ms passed";
		return false;
	}
	*next_at = (*next_at > mono_s() ? *next_at : mono_s()) + 1.0 / rate;
	o = refill_key(k, err, sizeof err);
	warm_refill_count(o);
	if (o != WARM_REFILL_FAILED) {
		R.failures = 0;
		return true;
	}
	if (R.refused[k->user])
		log_warn("refill: the keys of user '%s' are not refilled: %s", R.keys.users[k->user], err);
	else
		log_debug("refill: a key of user '%s' not refilled: %s", R.keys.users[k->user], err);
	if (++R.failures < REFILL_GIVE_UP)
		return true;
	*why = "too many failures in a row (is the upstream down?)";
	return false;
}

static void *refill_main(void *arg)
{
	double t0 = mono_s(), deadline = t0 + g_config.warm_timeout_ms / 1000.0, next_at;
	const char *why = NULL;
	size_t i = 0;
	struct warm_status w;

	(void)arg;
	if (!wait_ready(deadline))
		why = atomic_load(&R.stop) ? "the node stops" : "warm_timeout_ms passed during the replay";
	qsort(R.keys.v, R.keys.n, sizeof *R.keys.v, by_saving);
	warm_refill_begin(R.keys.n);
	log_info("refill: %zu saved keys; those not served are read again, the costliest first, at most %d a "
		 "second for at most %.0f s",
		 R.keys.n, g_config.warm_rate, deadline - mono_s());
	for (next_at = mono_s(); !why && i < R.keys.n; i++)
		if (!step(&R.keys.v[i], &next_at, deadline, &why))
			break;
	for (unsigned c = 0; c < REFILL_CONNS; c++)
		if (R.conns[c].fd >= 0) {
			send_command(&R.conns[c], 0x01, NULL, 0);
			conn_close(&R.conns[c]);
		}
	warm_refill_end(why ? WARM_REFILL_STOPPED : WARM_REFILL_DONE, R.keys.n - i, mono_s() - t0);
	warm_status(&w);
	log_info("refill %s in %.1f s: %" PRIu64 " keys read again, %" PRIu64 " served already, %" PRIu64
		 " failed, %zu not reached%s%s", why ? "stopped" : "done", mono_s() - t0, w.refill_done,
		 w.refill_present, w.refill_failed, R.keys.n - i, why ? ": " : "", why ? why : "");
	return NULL;
}

int refill_start(void)
{
	int rc;

	if (!warm_keys_take(&R.keys))
		return 0;
	if (g_config.warm_rate <= 0) {
		log_info("refill: warm_rate is 0: the %zu saved keys are not refilled", R.keys.n);
		warm_keys_free(&R.keys);
		return 0;
	}
	R.refused = calloc(R.keys.nusers, sizeof *R.refused);
	if (!R.refused) {
		log_warn("refill: out of memory: the saved keys are not refilled");
		warm_keys_free(&R.keys);
		return -1;
	}
	for (unsigned c = 0; c < REFILL_CONNS; c++)
		R.conns[c].fd = -1;
	atomic_store(&R.stop, false);
	warm_refill_end(WARM_REFILL_WAITING, R.keys.n, 0);
	rc = pthread_create(&R.thread, NULL, refill_main, NULL);
	if (rc != 0) {
		log_warn("refill: cannot start its thread: %s", strerror(rc));
		warm_refill_end(WARM_REFILL_STOPPED, R.keys.n, 0);
		warm_keys_free(&R.keys);
		free(R.refused);
		R.refused = NULL;
		return -1;
	}
	R.started = true;
	return 0;
}

void refill_interrupt(void)
{
	if (!R.started)
		return;
	atomic_store(&R.stop, true);
	/* a blocking read of an answer returns at once */
	pthread_mutex_lock(&R.lock);
	for (unsigned c = 0; c < REFILL_CONNS; c++)
		if (R.conns[c].fd >= 0)
			shutdown(R.conns[c].fd, SHUT_RDWR);
	pthread_mutex_unlock(&R.lock);
}

void refill_stop(void)
{
	if (!R.started)
		return;
	refill_interrupt();
	pthread_join(R.thread, NULL);
	R.started = false;
	warm_keys_free(&R.keys);
	free(R.refused);
	R.refused = NULL;
	pbuf_free(&R.pkt);
	pbuf_free(&R.out);
}
