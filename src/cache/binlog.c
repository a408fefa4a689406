/*
 * binlog.c: the binlog follower (see binlog.h): its thread, the connection
 * and dump set-up, the event loop, the transaction's table set, the GTID
 * position, the serving state.
 *
 * Per transaction (GTID event .. XID / COMMIT, or one statement for a
 * standalone GTID) the follower hands each TABLE_MAP and rows event to
 * binlog_rows.c, which invalidates the entries each changed row can change
 * (row-precise invalidation) and names the tables that go whole; it
 * collects those, and the tables written by QUERY events (statement
 * format, DDL), and invalidates them, with what writes to them also
 * change, when the transaction ends; then the transaction's GTID becomes
 * the position. A statement whose tables cannot be determined invalidates
 * everything.
 *
 * The thread blocks in mariadb_rpl_fetch(); the server sends a heartbeat
 * every BINLOG_HEARTBEAT_NS while there is nothing else, and a read timeout
 * catches a silent connection. binlog_stop() shuts the socket down to wake
 * the thread.
 */
#include "cache/binlog.h"

#include <errmsg.h>
#include <errno.h>
#include <mysql.h>
#include <mysqld_error.h>
#include <mariadb_rpl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cache/binlog_conn.h"
#include "cache/binlog_follow.h"
#include "cache/binlog_rows.h"
#include "cache/binlog_start.h"
#include "cache/catalog.h"
#include "cache/fence.h"
#include "cache/fence_probe.h"
#include "cache/grants.h"
#include "cache/gtid_set.h"
#include "cache/mysql_dump.h"
#include "cache/inval.h"
#include "cache/store.h"
#include "config/config.h"
#include "base/log.h"
#include "sql/spooky.h"
#include "sql/tables.h"
#include "upstream/upstream.h"

#define MAX_DOMAINS START_MAX_DOMAINS   /* GTIDs of a position (binlog_start.h) */
#define CLOSURE_MAX 64        /* tables a written table's closure may name */
#define REPLAY_CATALOG_WAIT_MS 10000
#define RESUME_GATE_MS 60000     /* the longest wait for the snapshot's entries */

struct follower {
	MYSQL *m;
	bool mysql;                        /* the upstream is MySQL: its stream, its GTID sets */
	MARIADB_RPL *rpl;                  /* MariaDB's stream */
	struct mysql_dump dump;            /* MySQL's stream */
	struct gtid pos[MAX_DOMAINS];      /* MariaDB: last transaction applied, per domain */
	unsigned npos;
	struct gtid target[MAX_DOMAINS];   /* MariaDB: the server's position when we connected */
	unsigned ntarget;
	struct gtid_set mpos, mtarget;     /* MySQL: the same, as GTID sets */
	uint8_t trx_uuid[GTID_UUID_LEN];   /* MySQL: the transaction's GTID (trx_gno 0: none) */
	char trx_tag[GTID_TAG_MAX + 1];    /* ... its tag ("" none) */
	uint64_t trx_gno;
	bool fresh;                        /* no position yet: start at the server's */
	bool locating;                     /* the start's position not found yet (binlog_start.h) */
	struct binlog_start start;
	/* the transaction being read */
	bool in_trx, standalone;
	struct gtid trx;
	struct trx_set set;                /* the tables it invalidates whole */
	uint32_t ev_end;                   /* where the last event read ends in its file */
	unsigned checksum_len;             /* bytes of checksum after each event (4: CRC32) */
};

static struct follower F;
static pthread_t thread;
static bool started;
static atomic_bool stopping;
static _Atomic int sock_fd = -1;

/* Status, shared with the admin and /metrics (under status_lock); the
 * per-event counters are atomics of their own (no lock per event) and the
 * position is formatted when read (from applied[], under pos_lock). */
static pthread_mutex_t status_lock = PTHREAD_MUTEX_INITIALIZER;
static struct binlog_status status;
static _Atomic int cur_state = BINLOG_OFF;
static atomic_uint_fast64_t n_events, n_transactions;

static int64_t wall_s(void)
{
	return (int64_t)time(NULL);
}

/* The resume position (binlog_resume_from): set before the thread starts,
 * read by it; the result is an atomic any thread reads. */
static struct gtid resume_pos[MAX_DOMAINS];
static unsigned resume_npos;
static struct gtid_set resume_set;   /* a MySQL snapshot's (resume_npos 0) */
static uint32_t resume_server_id;
static atomic_bool resume_released;
static _Atomic int resume_result = BINLOG_RESUME_NONE;

/* Move the resume's result from `from` to `to` (no move from another). */
static void resume_settle(enum binlog_resume from, enum binlog_resume to)
{
	int expect = (int)from;

	atomic_compare_exchange_strong(&resume_result, &expect, (int)to);
}

static void set_state(enum binlog_state st, const char *err)
{
	bool serve = st == BINLOG_STREAMING;

	atomic_store(&cur_state, (int)st);
	if (st == BINLOG_STREAMING)
		resume_settle(BINLOG_RESUME_REPLAYING, BINLOG_RESUME_DONE);
	pthread_mutex_lock(&status_lock);
	status.state = st;
	if (err)
		snprintf(status.error, sizeof(status.error), "%s", err);
	if (st != BINLOG_STREAMING && st != BINLOG_BEHIND && st != BINLOG_CATCHING_UP)
		status.lag_seconds = 0;
	pthread_mutex_unlock(&status_lock);
	inval_set_serving(serve, st == BINLOG_BEHIND ? WHY_BINLOG_BEHIND
			  : st == BINLOG_CATCHING_UP ? WHY_BINLOG_CATCHING_UP
			  : st == BINLOG_CONNECTING ? WHY_BINLOG_CONNECTING : WHY_BINLOG_DOWN);
}

const char *binlog_state_name(enum binlog_state s)
{
	switch (s) {
	case BINLOG_CONNECTING: return "connecting";
	case BINLOG_CATCHING_UP: return "catching up";
	case BINLOG_STREAMING: return "streaming";
	case BINLOG_BEHIND: return "behind";
	case BINLOG_DOWN: return "down";
	default: return "off";
	}
}

/* ---- positions -------------------------------------------------------------- */

static void format_pos(const struct gtid *g, unsigned n, char *out, size_t cap)
{
	size_t o = 0;

	out[0] = 0;
	for (unsigned i = 0; i < n && o < cap; i++)
		o += (size_t)snprintf(out + o, cap - o, "%s%u-%u-%llu", i ? "," : "", g[i].domain,
				      g[i].server, (unsigned long long)g[i].seq);
}

/* "d-s-n,d-s-n" into g; the count, or -1 on a malformed list. */
static int parse_pos(const char *s, struct gtid *g, unsigned cap)
{
	unsigned n = 0;

	while (s && *s) {
		unsigned long d, sv;
		unsigned long long q;
		int used = 0;

		if (n == cap || sscanf(s, "%lu-%lu-%llu%n", &d, &sv, &q, &used) != 3)
			return -1;
		g[n++] = (struct gtid){ (uint32_t)d, (uint32_t)sv, q };
		s += used;
		while (*s == ',' || *s == ' ' || *s == '\n')
			s++;
	}
	return (int)n;
}

static void pos_set(struct gtid *g, unsigned *n, const struct gtid *v)
{
	for (unsigned i = 0; i < *n; i++)
		if (g[i].domain == v->domain) {
			g[i] = *v;
			return;
		}
	if (*n < MAX_DOMAINS)
		g[(*n)++] = *v;
}

/* Has the follower applied everything up to the target position? */
static bool caught_up(void)
{
	if (F.mysql)
		return gtid_set_subset(&F.mtarget, &F.mpos);
	for (unsigned i = 0; i < F.ntarget; i++) {
		bool found = false;

		for (unsigned k = 0; k < F.npos; k++)
			if (F.pos[k].domain == F.target[i].domain && F.pos[k].seq >= F.target[i].seq)
				found = true;
		if (!found)
			return false;
	}
	return true;
}

/* The applied position, shared with the barrier thread. */
static pthread_mutex_t pos_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pos_cond;
static struct gtid applied[MAX_DOMAINS];
static unsigned napplied;
static uint32_t upstream_server_id;    /* @@server_id of the server followed (pos_lock) */
static bool applied_mysql;             /* the position is applied_set's (pos_lock) */
static struct gtid_set applied_set;    /* MySQL: the GTID set applied (pos_lock) */

static void publish_pos(void)
{
	pthread_mutex_lock(&pos_lock);
	memcpy(applied, F.pos, sizeof(applied));
	napplied = F.npos;
	applied_mysql = F.mysql;
	if (F.mysql && gtid_set_copy(&applied_set, &F.mpos) < 0)
		gtid_set_clear(&applied_set);   /* out of memory: nothing is claimed applied */
	pthread_cond_broadcast(&pos_cond);
	pthread_mutex_unlock(&pos_lock);
}

/* Does the applied position cover target? pos_lock held. */
static bool covers(const struct gtid *target, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		bool found = false;

		for (unsigned k = 0; k < napplied; k++)
			if (applied[k].domain == target[i].domain && applied[k].seq >= target[i].seq)
				found = true;
		if (!found)
			return false;
	}
	return true;
}

/* ---- the transaction's tables ------------------------------------------------- */

/* A written table and what writes to it also change (a statement). */
static void trx_add_closure(struct inval_table *const *also, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		trx_set_add(&F.set, also[i], IW_T_STATEMENT);
	if (n == 0)
		trx_set_all(&F.set, IW_A_UNKNOWN);  /* not even the table itself could be named */
	else if (!catalog_ready())
		trx_set_all(&F.set, IW_A_UNKNOWN);  /* a DDL since the catalog's last read may
						     * have added a cascading key or a trigger */
}

/* Catching up (nothing is served meanwhile), a write waits for the catalog
 * to be read (at start, or after a DDL of the replay) rather than flush
 * everything: a restart's replay keeps what the writes of the outage did
 * not touch. */
static void replay_await_catalog(void)
{
	if (atomic_load(&cur_state) == BINLOG_CATCHING_UP && !catalog_ready() &&
	    !catalog_await_ready(REPLAY_CATALOG_WAIT_MS))
		log_warn("binlog: the catalog could not be read within %d ms while catching up: "
			 "writes flush the whole cache until it is", REPLAY_CATALOG_WAIT_MS);
}

static void trx_add_written(const char *schema, size_t slen, const char *name, size_t nlen)
{
	struct inval_table *also[CLOSURE_MAX];
	unsigned n = 0;
	bool opaque = false;

	replay_await_catalog();
	catalog_write_closure(schema, slen, name, nlen, also, CLOSURE_MAX, &n, &opaque);
	trx_add_closure(also, n);
}

static void trx_begin(const struct gtid *g, bool standalone)
{
	F.in_trx = true;
	F.standalone = standalone;
	F.trx = *g;
	F.set.n = 0;
	F.set.all = false;
	F.set.seq++;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Every GTID of the dump's start position is covered (binlog_start.h):
 * the start fence waits for the start's position to be proven visible. */
static void start_found(void)
{
	char want[1024], where[320];

	F.locating = false;
	format_pos(F.start.want, F.start.n, want, sizeof(want));
	fence_format(F.start.pos, where, sizeof(where));
	log_info("binlog: the start of the stream (GTID position '%s') is at %s: cached results are "
		 "stored and served once it is proven visible", want, where);
	fence_start_at(F.start.pos);
}

/* What was just covered of the start ends at binlog position pos. */
static void start_covered(uint64_t pos)
{
	start_cover_at(&F.start, pos);
	if (start_located(&F.start))
		start_found();
}

/* The transaction ends where the last event read ends (F.ev_end): its
 * tables are fenced with that position until the probe proves it visible
 * (fence.h); binlog_settle_ms is an optional extra window on top. */
static void trx_end(void)
{
	int settle = __atomic_load_n(&g_config.binlog_settle_ms, __ATOMIC_RELAXED);
	bool gtid = F.mysql && F.in_trx && F.trx_gno;
	uint64_t fence = F.mysql ? fence_note_trx_end_gtid(F.ev_end, mono_ms(), gtid ? F.trx_uuid : NULL,
							   F.trx_tag, gtid ? F.trx_gno : 0)
				 : fence_note_trx_end(F.ev_end, mono_ms());

	for (unsigned i = 0; i < F.set.n; i++)
		inval_bump_why(F.set.t[i], fence, settle, (enum inval_why)F.set.why[i]);
	if (F.set.all) {
		inval_all_fenced(fence);
		inval_count_why((enum inval_why)F.set.all_why, 1);
	}
	if (F.in_trx && F.locating && start_cover_group(&F.start, &F.trx))
		start_covered(fence);
	if (F.in_trx && !F.mysql)
		pos_set(F.pos, &F.npos, &F.trx);
	if (gtid && gtid_set_add(&F.mpos, F.trx_uuid, F.trx_tag, F.trx_gno) < 0)
		log_error("binlog: out of memory for the GTID set applied: the follower stays behind "
			  "until it reconnects");
	F.in_trx = false;
	F.set.n = 0;
	F.set.all = false;
	F.set.seq++;
	atomic_fetch_add_explicit(&n_transactions, 1, memory_order_relaxed);
	publish_pos();
}

/* ---- events -------------------------------------------------------------------- */

static void follow_table_map(const struct rows_map_event *e)
{
	/* a table map precedes the row events of each table the transaction
	 * changed: binlog_rows.c reads it, and the row events against it */
	if (grants_table_is_privileges(e->db, e->dlen, e->table, e->tlen))
		grants_invalidate("a write to a privilege table in the binlog");
	replay_await_catalog();
	rows_table_map(&F.set, e);
}

static void on_table_map(const MARIADB_RPL_EVENT *ev)
{
	const struct st_mariadb_rpl_table_map_event *tm = &ev->event.table_map;
	bool kept = ev->raw_data && ev->raw_data_ofs + ev->event_length <= ev->raw_data_size;
	struct rows_map_event e = {
		.table_id = tm->table_id, .db = tm->database.str, .dlen = tm->database.length,
		.table = tm->table.str, .tlen = tm->table.length,
		.raw = kept ? ev->raw_data + ev->raw_data_ofs : NULL, .len = ev->event_length,
		.checksum_len = F.checksum_len,
	};

	follow_table_map(&e);
}

static void follow_rows(const struct rows_event_bytes *ev)
{
	rows_event(&F.set, ev, F.ev_end, __atomic_load_n(&g_config.binlog_settle_ms, __ATOMIC_RELAXED));
}

static void on_rows(const MARIADB_RPL_EVENT *ev)
{
	bool kept = ev->raw_data && ev->raw_data_ofs + ev->event_length <= ev->raw_data_size;
	struct rows_event_bytes r = { ev->event_type, kept ? ev->raw_data + ev->raw_data_ofs : NULL,
				      ev->event_length, F.checksum_len };

	follow_rows(&r);
}

static bool word_is(const char *s, size_t len, const char *w)
{
	size_t n = strlen(w);

	return len == n && strncasecmp(s, w, n) == 0;
}

/* The tables a statement of the binlog writes, into the transaction. */
static void query_tables(const struct sql_tables *t, const char *schema, size_t slen,
			 const char *stmt, size_t stmt_len)
{
	if ((t->flags & SQL_TABLES_UNKNOWN) || t->kind == SQL_STMT_OPAQUE ||
	    (stmt_len >= 9 && strncasecmp(stmt, "XA COMMIT", 9) == 0)) {
		/* (an XA transaction's row events came before XA PREPARE) */
		trx_set_all(&F.set, IW_A_UNKNOWN);
		return;
	}
	if (t->kind != SQL_STMT_WRITE && t->kind != SQL_STMT_DDL)
		return;
	for (unsigned i = 0; i < t->n; i++) {
		const struct sql_table_ref *r = &t->refs[i];

		if (!(r->flags & SQL_TREF_WRITE))
			continue;
		if (r->schema)
			trx_add_written(r->schema, r->schema_len, r->name, r->name_len);
		else if (slen)
			trx_add_written(schema, slen, r->name, r->name_len);
		else
			trx_set_all(&F.set, IW_A_UNKNOWN);
	}
}

static void follow_query(const char *db, size_t dlen, const char *stmt, size_t stmt_len)
{
	struct sql_tables t;
	char schema[256];
	size_t slen = dlen < sizeof(schema) ? dlen : 0;

	if (word_is(stmt, stmt_len, "BEGIN") ||
	    (stmt_len > 9 && strncasecmp(stmt, "XA START ", 9) == 0)) {
		F.standalone = false;   /* (MySQL: a GTID's transaction is one statement without it;
					 * an XA transaction ends at its XA_PREPARE event) */
		return;
	}
	if (stmt_len > 7 && strncasecmp(stmt, "XA END ", 7) == 0)
		return;   /* (its XA PREPARE follows) */
	if (word_is(stmt, stmt_len, "COMMIT") || word_is(stmt, stmt_len, "ROLLBACK")) {
		trx_end();
		return;
	}
	if (slen) /* no default schema: the connector's str may be NULL */
		memcpy(schema, db, slen);
	schema[slen] = 0;
	if (grants_text_changes_privileges(stmt, stmt_len))
		grants_invalidate("a privilege change in the binlog");
	sql_tables(stmt, stmt_len, &t);
	/* a session's temporary table (statement format) changes nothing
	 * shared; a DDL's own tables are worked out on the catalog before it
	 * (a redefined view still names the tables its old entries read), and
	 * the writes after it wait for the catalog to be read again */
	if (!(t.flags & SQL_TABLES_TEMPORARY)) {
		query_tables(&t, schema, slen, stmt, stmt_len);
		if (t.flags & SQL_TABLES_CATALOG)
			catalog_changed();
	}
	if (!F.in_trx || F.standalone)
		trx_end();
}

static void on_query(const MARIADB_RPL_EVENT *ev)
{
	const struct st_mariadb_rpl_query_event *q = &ev->event.query;

	follow_query(q->database.str, q->database.length, q->statement.str, q->statement.length);
}

static void follow_begin_gtid(const uint8_t *uuid, const char *tag, uint64_t gno)
{
	struct gtid none = { 0, 0, 0 };

	if (F.in_trx)
		trx_end();   /* an unterminated group: apply what it had */
	trx_begin(&none, true);   /* a DDL is its one statement; BEGIN says otherwise */
	F.trx_gno = uuid ? gno : 0;
	if (uuid)
		memcpy(F.trx_uuid, uuid, GTID_UUID_LEN);
	snprintf(F.trx_tag, sizeof(F.trx_tag), "%s", uuid && tag ? tag : "");
}

static void follow_trx_end(void)
{
	trx_end();
}

static void follow_event_end(uint32_t next_pos)
{
	F.ev_end = next_pos;
}

#define EVENT_HEADER_LEN 19
#define ROTATE_POS_LEN 8

/* The file a ROTATE event names, read from the event's bytes: Connector/C
 * 3.3 parses a rotate event read from a binlog file 8 bytes off (it names
 * "00004" for "binlog.000004"). Layout: header, position, name, checksum. */
static void note_rotate(const MARIADB_RPL_EVENT *ev)
{
	size_t fixed = EVENT_HEADER_LEN + ROTATE_POS_LEN + F.checksum_len;
	const unsigned char *body;

	if (ev->event_length <= fixed || ev->raw_data_ofs + ev->event_length > ev->raw_data_size)
		return;   /* not a rotate event's layout: the file stays unknown, fences closed */
	body = ev->raw_data + ev->raw_data_ofs + EVENT_HEADER_LEN;
	fence_note_file((const char *)body + ROTATE_POS_LEN, ev->event_length - fixed);
}

/* A GTID_LIST event while the start is not found: the binlog state at the
 * head of a file (the groups it names are in the files before), or the
 * artificial one the server sends where a group of the start position it
 * skipped ends (binlog_start.h). */
static void on_gtid_list(const MARIADB_RPL_EVENT *ev)
{
	const struct st_mariadb_rpl_gtid_list_event *gl = &ev->event.gtid_list;
	unsigned newly = 0;

	if (!F.locating)
		return;   /* the start is found: a file's head says nothing new */
	for (uint32_t i = 0; i < gl->gtid_cnt; i++) {
		struct gtid g = { gl->gtid[i].domain_id, gl->gtid[i].server_id, gl->gtid[i].sequence_nr };

		newly += start_cover_list(&F.start, &g, 1);
	}
	if (!newly)
		return;   /* nothing of the start's position is covered by it */
	if (!(ev->flags & LOG_EVENT_ARTIFICIAL_F))
		start_covered(fence_note_before_file());
	else
		start_covered(ev->next_event_pos ? fence_note_skipped_end(ev->next_event_pos) : UINT64_MAX);
}

static void on_event(const MARIADB_RPL_EVENT *ev)
{
	/* where the event ends in its file (0: an artificial event); a GTID
	 * event's is taken after it, as it may end the group before it */
	bool has_end = ev->next_event_pos && ev->event_type != ROTATE_EVENT;

	if (has_end && ev->event_type != GTID_EVENT)
		F.ev_end = ev->next_event_pos;
	switch (ev->event_type) {
	case GTID_EVENT: {
		struct gtid g = { ev->event.gtid.domain_id, ev->server_id, ev->event.gtid.sequence_nr };

		if (F.in_trx)
			trx_end();  /* an unterminated group: apply what it had (it
				     * ends where the last event read ends) */
		trx_begin(&g, (ev->event.gtid.flags & FL_STANDALONE) != 0);
		if (has_end)
			F.ev_end = ev->next_event_pos;
		break;
	}
	case ROTATE_EVENT:
		note_rotate(ev);
		return;     /* (an artificial one has no position of its own) */
	case BINLOG_CHECKPOINT_EVENT:
		fence_note_checkpoint(ev->event.checkpoint.filename.str,
				      ev->event.checkpoint.filename.length);
		break;
	case GTID_LIST_EVENT:
		on_gtid_list(ev);
		break;
	case TABLE_MAP_EVENT:
		on_table_map(ev);
		break;
	case QUERY_EVENT:
	case QUERY_COMPRESSED_EVENT:
		on_query(ev);
		break;
	case XID_EVENT:
		trx_end();
		break;
	default:
		if (rows_is_rows_event(ev->event_type))
			on_rows(ev);
		break;  /* (rotate, heartbeat, ...) */
	}
}

/* ---- read-your-writes barrier ------------------------------------------------------ */

#define BARRIER_BATCH 256
#define BARRIER_WAIT_S 5

struct barrier_req {
	struct worker *w;
	uint32_t client_id, gen;
};

static pthread_mutex_t bar_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bar_cond;
static struct store_waiter *bar_pending;
static pthread_t bar_thread;
static bool bar_started;
static void (*bar_wake)(struct worker *w, uint32_t client_id, uint32_t gen);

void binlog_set_wake(void (*wake)(struct worker *w, uint32_t client_id, uint32_t gen))
{
	bar_wake = wake;
}

int binlog_barrier(struct store_waiter *w)
{
	if (!bar_started || atomic_load(&cur_state) != BINLOG_STREAMING)
		return -1;
	pthread_mutex_lock(&bar_lock);
	w->next = bar_pending;
	bar_pending = w;
	pthread_cond_signal(&bar_cond);
	pthread_mutex_unlock(&bar_lock);
	return 0;
}

void binlog_barrier_cancel(struct store_waiter *w)
{
	pthread_mutex_lock(&bar_lock);
	for (struct store_waiter **p = &bar_pending; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	pthread_mutex_unlock(&bar_lock);
}

/* Take up to BARRIER_BATCH requests (copies: the sessions may go away). */
static unsigned take_batch(struct barrier_req *out)
{
	unsigned n = 0;
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += 1;
	pthread_mutex_lock(&bar_lock);
	while (!bar_pending && !atomic_load(&stopping) &&
	       pthread_cond_timedwait(&bar_cond, &bar_lock, &until) == 0)
		;
	while (bar_pending && n < BARRIER_BATCH) {
		struct store_waiter *w = bar_pending;

		bar_pending = w->next;
		out[n++] = (struct barrier_req){ w->w, w->client_id, w->gen };
	}
	pthread_mutex_unlock(&bar_lock);
	return n;
}

/* What the barrier waits for: MariaDB's position, or MySQL's set. */
struct barrier_target {
	struct gtid g[MAX_DOMAINS];
	unsigned n;
	struct gtid_set set;
	bool mysql;
};

static bool target_covered(const struct barrier_target *t)
{
	if (t->mysql)
		return applied_mysql && gtid_set_subset(&t->set, &applied_set);
	return !applied_mysql && covers(t->g, t->n);
}

/* Wait until the follower covers target (or BARRIER_WAIT_S pass). */
static bool wait_covered(const struct barrier_target *target)
{
	struct timespec until;
	bool ok;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += BARRIER_WAIT_S;
	pthread_mutex_lock(&pos_lock);
	while (!(ok = target_covered(target)) && !atomic_load(&stopping) &&
	       pthread_cond_timedwait(&pos_cond, &pos_lock, &until) == 0)
		;
	pthread_mutex_unlock(&pos_lock);
	return ok;
}

static int query_gtid_set(MYSQL *m, const char *sql, struct gtid_set *set, char *err, size_t cap);

/* What the server has committed now. 0, or -1. */
static int read_target(MYSQL *m, struct barrier_target *t, char *err, size_t cap)
{
	char pos[1024];
	int n;

	t->mysql = !strstr(mysql_get_server_info(m), "MariaDB");
	if (t->mysql)
		return query_gtid_set(m, "SELECT @@global.gtid_executed", &t->set, err, cap);
	if (binlog_query_value(m, "SELECT @@gtid_binlog_pos", pos, sizeof(pos)) < 0 ||
	    (n = parse_pos(pos, t->g, MAX_DOMAINS)) < 0)
		return -1;
	t->n = (unsigned)n;
	return 0;
}

static void *barrier_main(void *arg)
{
	static struct barrier_req batch[BARRIER_BATCH];
	static struct barrier_target target;
	MYSQL *m = NULL;

	(void)arg;
	pthread_setname_np(pthread_self(), "shoal-barrier");
	mysql_thread_init();
	gtid_set_init(&target.set);
	while (!atomic_load(&stopping)) {
		char err[256];
		unsigned n = take_batch(batch);

		if (n == 0)
			continue;
		if (!m)
			m = binlog_connect(err, sizeof(err));
		if (!m || read_target(m, &target, err, sizeof(err)) < 0) {
			if (m)
				mysql_close(m);
			m = NULL;
			continue;   /* no wake-ups: the sessions time out and flush */
		}
		if (!wait_covered(&target))
			continue;
		for (unsigned i = 0; i < n; i++)
			if (bar_wake)
				bar_wake(batch[i].w, batch[i].client_id, batch[i].gen);
	}
	if (m)
		mysql_close(m);
	gtid_set_free(&target.set);
	mysql_thread_end();
	return NULL;
}

static void cond_init_mono(pthread_cond_t *c)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
}

/* ---- the thread ------------------------------------------------------------------ */

static pthread_mutex_t sock_lock = PTHREAD_MUTEX_INITIALIZER;

static void close_conn(void)
{
	if (F.rpl) {
		mariadb_rpl_close(F.rpl);
		F.rpl = NULL;
	}
	mysql_dump_close(&F.dump);
	pthread_mutex_lock(&sock_lock);
	atomic_store(&sock_fd, -1);
	pthread_mutex_unlock(&sock_lock);
	if (F.m) {
		mysql_close(F.m);
		F.m = NULL;
	}
	F.in_trx = false;
	F.set.n = 0;
	F.set.all = false;
	F.set.seq++;
}

/* Replaying from a snapshot's position: is this the server it was written
 * against? Its @@server_id (id, "" when unread) must be the snapshot's;
 * else its entries are dropped and the follower starts afresh. */
static void resume_check_server(const char *id)
{
	if (atomic_load(&resume_result) != BINLOG_RESUME_REPLAYING || !resume_server_id ||
	    (id[0] && strtoul(id, NULL, 10) == resume_server_id))
		return;
	log_warn("binlog: the cache snapshot was written against server id %u, the upstream is %s%s: "
		 "its entries are dropped and the follower starts at the server's position",
		 resume_server_id, id[0] ? "server id " : "a server whose id cannot be read", id);
	inval_all_why(INVAL_SRC_FLUSH, IW_A_FLUSH);
	F.fresh = true;
	resume_settle(BINLOG_RESUME_REPLAYING, BINLOG_RESUME_FOREIGN);
}

/* A position of the other server kind (a snapshot's, or the last
 * server's): what the cache holds is dropped and the follower starts at
 * the server's position. */
static void drop_foreign_position(const char *why)
{
	if (F.fresh)
		return;   /* no position to drop */
	log_warn("binlog: %s: the cached entries are dropped and the follower starts at the server's "
		 "position", why);
	inval_all_why(INVAL_SRC_FLUSH, IW_A_FLUSH);
	resume_settle(BINLOG_RESUME_REPLAYING, BINLOG_RESUME_FOREIGN);
	F.fresh = true;
}

/* A GTID set the server prints (gtid_executed) into set. 0, or -1. */
static int query_gtid_set(MYSQL *m, const char *sql, struct gtid_set *set, char *err, size_t cap)
{
	MYSQL_RES *res;
	MYSQL_ROW r;
	unsigned long *len;
	int rc = -1;

	if (mysql_query(m, sql) || !(res = mysql_store_result(m))) {
		snprintf(err, cap, "%s: %s", sql, mysql_error(m));
		return -1;
	}
	if ((r = mysql_fetch_row(res)) && (len = mysql_fetch_lengths(res)))
		rc = gtid_set_parse(set, r[0] ? r[0] : "", r[0] ? len[0] : 0, err, cap);
	else
		snprintf(err, cap, "%s: no row", sql);
	mysql_free_result(res);
	return rc;
}

/* MySQL: the dump from the GTID set applied. Every transaction the server
 * skips is in that set, and the set is within the server's gtid_executed
 * (else it is dropped): MySQL adds a GTID to gtid_executed only after the
 * engine commit of its transaction, so what is skipped is visible, and the
 * start fence opens at once. */
static int start_mysql(char *err, size_t cap)
{
	char pos[1024];

	if (query_gtid_set(F.m, "SELECT @@global.gtid_executed", &F.mtarget, err, cap) < 0)
		return -1;
	if (!F.fresh && gtid_set_empty(&F.mpos) && F.npos > 0)
		drop_foreign_position("the position is a MariaDB GTID position and the upstream is MySQL");
	if (!F.fresh && !gtid_set_subset(&F.mpos, &F.mtarget))
		drop_foreign_position("the server has not executed every transaction the cache reflects "
				      "(another source, or a replica behind)");
	if (F.fresh) {
		if (gtid_set_copy(&F.mpos, &F.mtarget) < 0) {
			snprintf(err, cap, "out of memory for a GTID set");
			return -1;
		}
		F.fresh = false;
	}
	F.npos = 0;
	publish_pos();
	if (F.locating) {
		F.locating = false;
		fence_start_at(0);
	}
	if (gtid_set_format(&F.mpos, pos, sizeof(pos)) >= sizeof(pos))
		snprintf(pos + sizeof(pos) - 5, 5, "...");
	if (mysql_follow_open(&F.dump, F.m, &F.mpos, err, cap) < 0)
		return -1;
	log_info("binlog: following MySQL %s:%u from GTID set '%s' as server id %u",
		 g_config.upstream_host, g_config.upstream_port, pos, binlog_server_id());
	return 0;
}

/* Connect and open the dump at the follower's position. 0, or -1. */
static int start_stream(char *err, size_t cap)
{
	char target[1024], pos[1024], id[24];
	int n;

	F.m = binlog_connect(err, cap);
	if (!F.m)
		return -1;
	pthread_mutex_lock(&sock_lock);
	atomic_store(&sock_fd, mysql_get_socket(F.m));
	pthread_mutex_unlock(&sock_lock);
	F.mysql = !strstr(mysql_get_server_info(F.m), "MariaDB");
	if (binlog_query_value(F.m, "SELECT @@server_id", id, sizeof(id)) == 0) {
		pthread_mutex_lock(&pos_lock);
		upstream_server_id = (uint32_t)strtoul(id, NULL, 10);
		pthread_mutex_unlock(&pos_lock);
	} else {
		id[0] = 0;
	}
	if (F.mysql)
		return start_mysql(err, cap);
	if (!F.fresh && F.npos == 0 && !gtid_set_empty(&F.mpos))
		drop_foreign_position("the position is a MySQL GTID set and the upstream is MariaDB");
	if (binlog_query_value(F.m, "SELECT @@gtid_binlog_pos", target, sizeof(target)) < 0 ||
	    (n = parse_pos(target, F.target, MAX_DOMAINS)) < 0) {
		snprintf(err, cap, "cannot read the server's GTID position: %s", mysql_error(F.m));
		return -1;
	}
	F.ntarget = (unsigned)n;
	resume_check_server(id);
	if (F.fresh) {
		memcpy(F.pos, F.target, sizeof(F.pos));
		F.npos = F.ntarget;
		F.fresh = false;
		publish_pos();
	}
	if (F.locating) {   /* (again after a reconnect, from the position reached) */
		start_begin(&F.start, F.pos, F.npos, F.target, F.ntarget);
		if (start_located(&F.start))
			start_found();   /* nothing the server could skip */
	}
	format_pos(F.pos, F.npos, pos, sizeof(pos));
	if (binlog_prepare_dump(F.m, pos, err, cap) < 0)
		return -1;
	/* the dump's events carry the checksum the session asked for */
	F.checksum_len = binlog_query_value(F.m, "SELECT @@global.binlog_checksum", id, sizeof(id)) == 0 &&
			 strcasecmp(id, "NONE") != 0 ? 4 : 0;
	F.rpl = binlog_open_dump(F.m, 0, err, cap);
	if (!F.rpl)
		return -1;
	log_info("binlog: following %s:%u from GTID position '%s' as server id %u",
		 g_config.upstream_host, g_config.upstream_port, pos, binlog_server_id());
	return 0;
}

static bool is_transaction_event(const MARIADB_RPL_EVENT *ev)
{
	if (ev->flags & LOG_EVENT_ARTIFICIAL_F)
		return false;
	switch (ev->event_type) {
	case GTID_EVENT: case QUERY_EVENT: case QUERY_COMPRESSED_EVENT: case XID_EVENT:
	case TABLE_MAP_EVENT:
		return true;
	default:
		return false;
	}
}

static void follow_update_state(bool heartbeat, bool transaction_event, uint32_t timestamp)
{
	double lag = 0;
	enum binlog_state st;

	if (!heartbeat && !transaction_event) {
		atomic_fetch_add_explicit(&n_events, 1, memory_order_relaxed);
		if (caught_up() && atomic_load(&cur_state) == BINLOG_CATCHING_UP)
			set_state(BINLOG_STREAMING, NULL);
		return;
	}

	/* the lag is measured on transactions: the events that open a dump (the
	 * binlog's format description, GTID list, ...) carry old times */
	if (!heartbeat && timestamp) {
		int64_t d = wall_s() - (int64_t)timestamp;

		lag = d > 0 ? (double)d : 0;
	}
	if (!heartbeat && !caught_up())
		st = BINLOG_CATCHING_UP;
	else if (lag * 1000 > __atomic_load_n(&g_config.binlog_max_lag_ms, __ATOMIC_RELAXED))
		st = BINLOG_BEHIND;
	else
		st = BINLOG_STREAMING;
	atomic_fetch_add_explicit(&n_events, 1, memory_order_relaxed);
	/* whole seconds, so the lock is rarely taken; only this thread writes
	 * lag_seconds (set_state too), so it may read it without the lock */
	if (lag != status.lag_seconds) {
		pthread_mutex_lock(&status_lock);
		status.lag_seconds = lag;
		pthread_mutex_unlock(&status_lock);
	}
	if ((int)st != atomic_load(&cur_state))
		set_state(st, NULL);
}

static void update_state(bool heartbeat, const MARIADB_RPL_EVENT *ev)
{
	follow_update_state(heartbeat, !heartbeat && is_transaction_event(ev), ev->timestamp);
}

/* What a MySQL stream's events do (binlog_mysql.c). */
static const struct follow_ops mysql_ops = {
	.begin_gtid = follow_begin_gtid,
	.trx_end = follow_trx_end,
	.event_end = follow_event_end,
	.query = follow_query,
	.table_map = follow_table_map,
	.rows = follow_rows,
	.update_state = follow_update_state,
};

/* Read events until the stream ends. */
static enum stream_end stream(char *err, size_t cap)
{
	MARIADB_RPL_EVENT *ev = NULL;
	unsigned code;

	set_state(caught_up() ? BINLOG_STREAMING : BINLOG_CATCHING_UP, "");
	if (F.mysql)
		return mysql_follow_stream(&F.dump, &mysql_ops, &stopping, err, cap);
	/* one event structure for the whole stream: mariadb_rpl_fetch() clears
	 * and refills the one it is given, instead of allocating a new one (and
	 * its arena) that is freed after each event; when it returns NULL it
	 * has freed the one it was given */
	while (!atomic_load(&stopping) && (ev = mariadb_rpl_fetch(F.rpl, ev))) {
		bool hb = ev->event_type == HEARTBEAT_LOG_EVENT;

		if (!hb)
			on_event(ev);
		update_state(hb, ev);
	}
	if (ev)
		mariadb_free_rpl_event(ev);   /* stopping */
	code = mysql_errno(F.m);
	if (code)
		snprintf(err, cap, "%s (%u)", mysql_error(F.m), code);
	else if (mariadb_rpl_errno(F.rpl))
		snprintf(err, cap, "%s", mariadb_rpl_error(F.rpl));
	else
		snprintf(err, cap, "the server ended the binlog stream");
	if (code == ER_MASTER_FATAL_ERROR_READING_BINLOG)
		return STREAM_GONE;
	return code == CR_BINLOG_ERROR ? STREAM_UNREADABLE : STREAM_LOST;
}

/* The stream cannot go on where it is: the whole cache is flushed (what
 * was written meanwhile is not known), and the follower goes on after the
 * transaction it could not read, or from the server's current position. */
static void skip_ahead(enum stream_end end)
{
	inval_all_why(INVAL_SRC_FLUSH, IW_A_FLUSH);
	/* what is skipped is never received: the new start must be proven */
	fence_start_close();
	F.locating = true;
	/* privileges may have changed in what is skipped too */
	grants_invalidate("the binlog position was lost");
	if (end == STREAM_UNREADABLE && F.in_trx && F.mysql && F.trx_gno) {
		if (gtid_set_add(&F.mpos, F.trx_uuid, F.trx_tag, F.trx_gno) < 0)
			F.fresh = true;   /* (out of memory: from the server's position) */
		publish_pos();
	} else if (end == STREAM_UNREADABLE && F.in_trx && !F.mysql) {
		pos_set(F.pos, &F.npos, &F.trx);
		publish_pos();
	} else {
		F.fresh = true;
	}
	F.in_trx = false;
	F.set.n = 0;
	F.set.all = false;
	F.set.seq++;
}

static const char *end_reason(enum stream_end end)
{
	switch (end) {
	case STREAM_GONE:
		return "; the position is gone from the server's binlogs: the whole cache is flushed "
		       "and the follower starts from the server's current position";
	case STREAM_UNREADABLE:
		return "; an event cannot be read: the whole cache is flushed and the follower goes on "
		       "after its transaction";
	default:
		return "; reconnecting";
	}
}

static void pause_s(int secs)
{
	for (int i = 0; i < secs * 10 && !atomic_load(&stopping); i++)
		usleep(100000);
}

/* A resume (binlog_resume_from): the snapshot's entries must be in the
 * store before the first event is applied (their tables' generations are
 * taken as they are put there), and the catalog read (else each write of
 * the replay flushes everything); then the follower starts at its
 * position. binlog_resume_release() always comes (main.c). */
static void resume_begin(void)
{
	int waited = 0;

	if (atomic_load(&resume_result) != BINLOG_RESUME_WAITING)
		return;
	while (!atomic_load(&resume_released) && !atomic_load(&stopping)) {
		usleep(20000);
		if ((waited += 20) % RESUME_GATE_MS == 0)
			log_warn("binlog: still waiting for the cache snapshot's entries (%d s)", waited / 1000);
	}
	if (atomic_load(&stopping))
		return;
	if (!catalog_await_ready(REPLAY_CATALOG_WAIT_MS))
		log_warn("binlog: the catalog could not be read within %d ms: the replay's writes flush "
			 "the whole cache until it is", REPLAY_CATALOG_WAIT_MS);
	memcpy(F.pos, resume_pos, sizeof(F.pos));
	F.npos = resume_npos;
	if (gtid_set_copy(&F.mpos, &resume_set) < 0) {
		resume_settle(BINLOG_RESUME_WAITING, BINLOG_RESUME_GONE);
		inval_all_why(INVAL_SRC_FLUSH, IW_A_FLUSH);   /* out of memory: no replay */
		return;
	}
	F.fresh = false;
	publish_pos();
	resume_settle(BINLOG_RESUME_WAITING, BINLOG_RESUME_REPLAYING);
}

static void *follower_main(void *arg)
{
	int backoff = 1;

	(void)arg;
	pthread_setname_np(pthread_self(), "shoal-binlog");
	mysql_thread_init();
	F.fresh = true;
	F.locating = true;   /* nothing received yet (binlog_start closed the start fence) */
	resume_begin();
	while (!atomic_load(&stopping)) {
		char err[512] = "";
		enum stream_end end = STREAM_LOST;

		if (start_stream(err, sizeof(err)) == 0) {
			backoff = 1;
			end = stream(err, sizeof(err));
		}
		close_conn();
		if (atomic_load(&stopping))
			break;
		set_state(BINLOG_DOWN, err);
		log_warn("binlog: stream lost: %s%s", err, end_reason(end));
		pthread_mutex_lock(&status_lock);
		status.reconnects++;
		status.resume_failures += end != STREAM_LOST;
		pthread_mutex_unlock(&status_lock);
		if (end != STREAM_LOST) {
			resume_settle(BINLOG_RESUME_REPLAYING, BINLOG_RESUME_GONE);
			skip_ahead(end);
		}
		if (end == STREAM_UNREADABLE)
			continue;   /* at once: the server is there */
		pause_s(backoff);
		backoff = backoff < 5 ? backoff + 1 : 5;
	}
	close_conn();
	gtid_set_free(&F.mpos);
	gtid_set_free(&F.mtarget);
	mysql_thread_end();
	return NULL;
}

/* binlog_demand() may start the follower from any worker; binlog_stop()
 * closes the door. A start that fails (no thread) stays deferred and is
 * tried again at a demand at least a second later: until then nothing
 * filled is served (the stream is not up). */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static bool deferred, closed;
static time_t start_failed_at;

void binlog_defer(void)
{
	pthread_mutex_lock(&start_lock);
	deferred = true;
	pthread_mutex_unlock(&start_lock);
	inval_set_serving(false, WHY_BINLOG_NOT_STARTED);
}

void binlog_demand(void)
{
	if (!__atomic_load_n(&deferred, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&start_lock);
	if (deferred && !closed && (!start_failed_at || time(NULL) != start_failed_at)) {
		log_info("binlog: something is cached now: starting the follower");
		if (binlog_start() < 0) {
			start_failed_at = time(NULL);
			log_error("cannot start the binlog follower (thread: %s): tried again at a "
				  "cacheable read in a later second", strerror(errno));
		} else {
			deferred = false;
		}
	}
	pthread_mutex_unlock(&start_lock);
}

int binlog_start(void)
{
	memset(&F, 0, sizeof(F));
	atomic_store(&stopping, false);
	cond_init_mono(&pos_cond);
	cond_init_mono(&bar_cond);
	set_state(BINLOG_CONNECTING, "");
	fence_reset();
	fence_start_close();   /* nothing received yet: the stream's start must be proven */
	if ((errno = pthread_create(&thread, NULL, follower_main, NULL)) != 0)
		return -1;
	started = true;
	if (fence_probe_start(binlog_connect) < 0)
		log_error("cannot start the visibility probe (thread: %s): results of tables the "
			  "binlog invalidates are not stored", strerror(errno));
	if (pthread_create(&bar_thread, NULL, barrier_main, NULL) != 0)
		return 0;   /* no barrier: statements whose writes are unknown flush instead */
	bar_started = true;
	return 0;
}

void binlog_stop(void)
{
	pthread_mutex_lock(&start_lock);
	closed = true;
	deferred = false;
	pthread_mutex_unlock(&start_lock);
	if (!started)
		return;
	atomic_store(&stopping, true);
	pthread_mutex_lock(&sock_lock);
	if (atomic_load(&sock_fd) >= 0)
		shutdown(atomic_load(&sock_fd), SHUT_RDWR);
	pthread_mutex_unlock(&sock_lock);
	pthread_join(thread, NULL);
	started = false;
	fence_probe_stop();
	if (bar_started) {
		pthread_mutex_lock(&bar_lock);
		pthread_cond_signal(&bar_cond);
		pthread_mutex_unlock(&bar_lock);
		pthread_mutex_lock(&pos_lock);
		pthread_cond_broadcast(&pos_cond);
		pthread_mutex_unlock(&pos_lock);
		pthread_join(bar_thread, NULL);
		bar_started = false;
	}
	atomic_store(&cur_state, BINLOG_OFF);
}

void binlog_get_status(struct binlog_status *out)
{
	pthread_mutex_lock(&status_lock);
	*out = status;
	out->state = (enum binlog_state)atomic_load(&cur_state);
	pthread_mutex_unlock(&status_lock);
	out->events = atomic_load_explicit(&n_events, memory_order_relaxed);
	out->transactions = atomic_load_explicit(&n_transactions, memory_order_relaxed);
	pthread_mutex_lock(&pos_lock);
	if (applied_mysql)
		gtid_set_format(&applied_set, out->position, sizeof(out->position));
	else
		format_pos(applied, napplied, out->position, sizeof(out->position));
	pthread_mutex_unlock(&pos_lock);
}

bool binlog_identity(uint32_t *server_id, char *pos, size_t cap)
{
	size_t need = 0;

	pthread_mutex_lock(&pos_lock);
	*server_id = upstream_server_id;
	if (applied_mysql) {
		bool ok = !gtid_set_empty(&applied_set) && gtid_set_format(&applied_set, pos, cap) < cap;

		pthread_mutex_unlock(&pos_lock);
		return ok && *server_id;
	}
	for (unsigned i = 0; i < napplied; i++)
		need += (size_t)snprintf(NULL, 0, "%s%u-%u-%llu", i ? "," : "", applied[i].domain,
					 applied[i].server, (unsigned long long)applied[i].seq);
	if (napplied && need < cap)
		format_pos(applied, napplied, pos, cap);
	pthread_mutex_unlock(&pos_lock);
	return napplied && need < cap && *server_id;
}

int binlog_resume_from(const char *pos, uint32_t server_id)
{
	struct gtid g[MAX_DOMAINS];
	char err[160];
	int n = strchr(pos, ':') ? 0 : parse_pos(pos, g, MAX_DOMAINS);

	/* "d-s-n,..." is MariaDB's; "uuid:1-n,..." MySQL's */
	if (n < 0 || (n == 0 && (gtid_set_parse(&resume_set, pos, strlen(pos), err, sizeof(err)) < 0 ||
				 gtid_set_empty(&resume_set))))
		return -1;
	if (n > 0)
		gtid_set_clear(&resume_set);
	memcpy(resume_pos, g, sizeof(resume_pos));
	resume_npos = (unsigned)n;
	resume_server_id = server_id;
	atomic_store(&resume_released, false);
	atomic_store(&resume_result, BINLOG_RESUME_WAITING);
	return 0;
}

void binlog_resume_release(void)
{
	atomic_store(&resume_released, true);
}

enum binlog_resume binlog_resume_result(void)
{
	return (enum binlog_resume)atomic_load(&resume_result);
}
