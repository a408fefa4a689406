/*
 * kill.c: KILL intercepted (see kill.h): the session table, reading the
 * KILL statement, finding the session it names, and the upstream KILL, on
 * a connection of its own. The answers and the delivery to the session's
 * worker are the session core's (client.c).
 */
#include "core/kill.h"

#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "proto/handshake.h"
#include "session/stmts.h"
#include "base/log.h"
#include "proto/packet.h"
#include "sql/local.h"
#include "upstream/upstream.h"

#define NBUCKETS 1024
#define KILL_TOLD 4

struct sess {
	struct sess *next;
	uint32_t id;
	struct worker *w;
	char user[HS_USER_MAX];
	/* the upstream thread id of the connection its last command ran on:
	 * written by its worker without the lock, read under it by a KILL */
	atomic_ulong up_thread;
	/* the last KILL_TOLD thread ids CONNECTION_ID() answered it (a ring):
	 * under multiplexing its later commands may run elsewhere, and an id
	 * it was told is still its own to the client (main.myisam_icp_notembedded) */
	atomic_ulong told[KILL_TOLD];
	atomic_uint told_next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sess *buckets[NBUCKETS];

static struct sess **slot(uint32_t id)
{
	struct sess **pp = &buckets[id % NBUCKETS];

	while (*pp && (*pp)->id != id)
		pp = &(*pp)->next;
	return pp;
}

void *kill_register(uint32_t id, struct worker *w)
{
	struct sess *s = calloc(1, sizeof(*s));

	if (!s) {
		log_warn("client %u: out of memory for the session table (KILL cannot find it)", id);
		return NULL;
	}
	s->id = id;
	s->w = w;
	pthread_mutex_lock(&lock);
	s->next = buckets[id % NBUCKETS];
	buckets[id % NBUCKETS] = s;
	pthread_mutex_unlock(&lock);
	return s;
}

void kill_note_upstream(void *entry, unsigned long thread_id)
{
	struct sess *s = entry;

	if (s && atomic_load_explicit(&s->up_thread, memory_order_relaxed) != thread_id)
		atomic_store_explicit(&s->up_thread, thread_id, memory_order_relaxed);
}

void kill_note_told(void *entry, unsigned long thread_id)
{
	struct sess *s = entry;
	unsigned k;

	if (!s)
		return;
	for (k = 0; k < KILL_TOLD; k++)
		if (atomic_load_explicit(&s->told[k], memory_order_relaxed) == thread_id)
			return;
	k = atomic_fetch_add_explicit(&s->told_next, 1, memory_order_relaxed) % KILL_TOLD;
	atomic_store_explicit(&s->told[k], thread_id, memory_order_relaxed);
}

static bool was_told(struct sess *s, uint64_t id)
{
	for (unsigned k = 0; k < KILL_TOLD; k++)
		if (atomic_load_explicit(&s->told[k], memory_order_relaxed) == id)
			return true;
	return false;
}

/* The one session that matches (told: CONNECTION_ID() gave it id; else:
 * its last command ran on id), the killer itself left out of the second
 * (its login may have run on that pooled connection). NULL when none, or
 * two: no way to tell. Under the lock. */
static struct sess *one_match(uint64_t id, uint32_t killer, bool told)
{
	struct sess *found = NULL;

	for (int i = 0; i < NBUCKETS; i++) {
		for (struct sess *s = buckets[i]; s; s = s->next) {
			bool m = told ? was_told(s, id) :
				 s->id != killer && atomic_load_explicit(&s->up_thread, memory_order_relaxed) == id;

			if (!m)
				continue;
			if (found)
				return NULL;
			found = s;
		}
	}
	return found;
}

/* No session has id: the session CONNECTION_ID() told id, else the one
 * whose last command ran on upstream thread id (a SHOW PROCESSLIST id). */
static struct sess *by_upstream_thread(uint64_t id, uint32_t killer)
{
	struct sess *s = one_match(id, killer, true);

	return s ? s : one_match(id, killer, false);
}

void kill_set_user(uint32_t id, const char *user)
{
	struct sess *s;

	pthread_mutex_lock(&lock);
	s = *slot(id);
	if (s)
		snprintf(s->user, sizeof(s->user), "%s", user);
	pthread_mutex_unlock(&lock);
}

void kill_unregister(uint32_t id)
{
	struct sess **pp, *s;

	pthread_mutex_lock(&lock);
	pp = slot(id);
	s = *pp;
	if (s)
		*pp = s->next;
	pthread_mutex_unlock(&lock);
	free(s);
}

/* ---- reading the statement --------------------------------------------- */

/* KILL [HARD|SOFT] [CONNECTION|QUERY] <digits> [;], nothing else after
 * (sql/local.h reads it). false: not a statement the node answers (it goes
 * upstream). */
static bool parse_kill(const char *q, size_t n, struct kill_req *r)
{
	struct sql_kill k;

	sql_kill_read(q, n, &k);
	if (k.kind != SQL_KILL_ID && k.kind != SQL_KILL_UNSUPPORTED)
		return false;   /* no KILL, or one that goes upstream as written */
	memset(r, 0, sizeof(*r));
	r->kind = k.query ? KK_QUERY : KK_CONNECTION;
	r->id = k.id;
	r->unsupported = k.kind == SQL_KILL_UNSUPPORTED;
	return true;
}

bool kill_statement(const char *q, size_t n)
{
	struct sql_kill k;

	sql_kill_read(q, n, &k);
	return k.kind != SQL_KILL_NONE;
}

static atomic_uint kill_gen;

void kill_went_upstream(void)
{
	atomic_fetch_add_explicit(&kill_gen, 1, memory_order_relaxed);
}

unsigned kill_generation(void)
{
	return atomic_load_explicit(&kill_gen, memory_order_relaxed);
}

/* The text of the prepared statement a COM_STMT_EXECUTE runs (NULL when
 * none), and how many parameters it has. */
static const char *executed_text(const uint8_t *pl, uint32_t len, struct stmt_table *st, size_t *n,
				 uint16_t *nparams)
{
	struct stmt_info *s;

	if (pl[0] != CMD_STMT_EXECUTE || len < 5)
		return NULL;
	s = stmts_find(st, rd_u32(pl + 1));
	if (!s || !s->text)
		return NULL;
	*n = s->text_len;
	*nparams = s->nparams;
	return s->text;
}

bool kill_parse(const uint8_t *pl, uint32_t len, struct stmt_table *st, struct kill_req *r)
{
	const char *q;
	size_t n;
	uint16_t nparams;

	if (pl[0] == CMD_PROCESS_KILL) {
		if (len < 5)
			return false;
		*r = (struct kill_req){ .kind = KK_CONNECTION, .id = rd_u32(pl + 1) };
		return true;
	}
	if (pl[0] == CMD_QUERY)
		return parse_kill((const char *)pl + 1, len - 1, r);
	/* a prepared KILL 12 (mariadb-test --ps-protocol sends one): as its
	 * text; upstream the id may name the pooled connection the killer
	 * runs on (main.myisam_icp_notembedded); its id must be written in */
	q = executed_text(pl, len, st, &n, &nparams);
	return q && nparams == 0 && parse_kill(q, n, r);
}

bool kill_forwarded(const uint8_t *pl, uint32_t len, struct stmt_table *st)
{
	const char *q;
	size_t n;
	uint16_t nparams;

	if (pl[0] == CMD_QUERY)
		return kill_statement((const char *)pl + 1, len - 1);
	q = executed_text(pl, len, st, &n, &nparams);
	return q && kill_statement(q, n);
}

/* ---- finding the session ------------------------------------------------ */

/* The session a KILL names: by its node session id, else by an upstream
 * thread id (by_upstream_thread). 0 when none (or two) match. */
uint32_t kill_find(uint64_t id, uint32_t killer, struct worker **w, char *user, size_t cap)
{
	struct sess *s;
	uint32_t found = 0;

	pthread_mutex_lock(&lock);
	s = id <= UINT32_MAX ? *slot((uint32_t)id) : NULL;
	if (!s && id != 0)
		s = by_upstream_thread(id, killer);
	if (s) {
		found = s->id;
		*w = s->w;
		snprintf(user, cap, "%s", s->user);
	}
	pthread_mutex_unlock(&lock);
	return found;
}

/* ---- the killed session's side -------------------------------------------- */

/* An upstream KILL in flight: a connection of its own, acting as the
 * session's own identity (a user may always kill its own threads). */
struct upstream_kill {
	unsigned long thread_id;
	bool query_only;
};

static void upstream_kill_end(struct upstream *u, struct upstream_kill *k, const char *why)
{
	if (why)
		log_info("KILL %s%lu on the upstream: %s", k->query_only ? "QUERY " : "", k->thread_id, why);
	upstream_close(u, why == NULL);
	free(k);
}

static void upstream_kill_event(struct upstream *u, enum upstream_event ev, void *owner)
{
	struct upstream_kill *k = owner;
	char sql[64];
	size_t start;
	uint32_t len;
	uint8_t seq;
	int rc;

	switch (ev) {
	case UP_EV_CONNECTED:
		rc = pkt_begin(&u->io.out, &start);
		rc |= put_u8(&u->io.out, CMD_QUERY);
		snprintf(sql, sizeof(sql), "KILL %s%lu", k->query_only ? "QUERY " : "", k->thread_id);
		rc |= pbuf_append(&u->io.out, sql, strlen(sql));
		if (rc) {
			upstream_kill_end(u, k, "out of memory");
			return;
		}
		pkt_end(&u->io.out, start, 0);
		upstream_want(u, true, true);
		return;
	case UP_EV_FAILED:
		upstream_kill_end(u, k, u->err);
		return;
	case UP_EV_IO:
		break;
	}
	if (sbuf_out_pending(&u->io) > 0 && sbuf_flush(&u->io) == SBUF_ERROR) {
		upstream_kill_end(u, k, "write failed");
		return;
	}
	rc = sbuf_read(&u->io, 4096);
	if (sbuf_packet_ready(&u->io, &len, &seq)) {
		const uint8_t *pl = sbuf_in_ptr(&u->io) + PKT_HEADER_LEN;

		/* an error: the query or the thread ended meanwhile */
		upstream_kill_end(u, k, len && pl[0] == 0xff ? "refused (it may have ended)" : NULL);
		return;
	}
	if (rc == SBUF_EOF || rc == SBUF_ERROR) {
		upstream_kill_end(u, k, "connection lost");
		return;
	}
	upstream_want(u, true, sbuf_out_pending(&u->io) > 0);
}

void kill_upstream(struct ev_loop *loop, const struct ident *id, unsigned long thread_id, bool query_only)
{
	struct upstream_kill *k = malloc(sizeof(*k));
	struct upstream_params p = { .check = true, .ident = id };

	kill_went_upstream();
	if (!k)
		return;
	k->thread_id = thread_id;
	k->query_only = query_only;
	if (!upstream_open(loop, &p, upstream_kill_event, k)) {
		log_warn("KILL: out of memory for the upstream KILL");
		free(k);
	}
}
