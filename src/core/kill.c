/*
 * kill.c: KILL intercepted (see kill.h): the session table, reading the
 * KILL statement, finding the session it names, and the upstream KILL, on
 * a connection of its own. The answers and the delivery to the session's
 * worker are the session core's (client.c).
 */
#include "core/kill.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "proto/handshake.h"
#include "base/log.h"
#include "proto/packet.h"
#include "upstream/upstream.h"

#define NBUCKETS 1024

struct sess {
	struct sess *next;
	uint32_t id;
	struct worker *w;
	char user[HS_USER_MAX];
	/* the upstream thread id of the connection its last command ran on
	 * (what CONNECTION_ID() told it): written by its worker without the
	 * lock, read under it by a KILL */
	atomic_ulong up_thread;
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

/* No session has id: the session whose last command ran on upstream
 * thread id (its CONNECTION_ID(), or a SHOW PROCESSLIST id), if exactly one
 * such session exists. Under the lock. */
static struct sess *by_upstream_thread(uint64_t id)
{
	struct sess *found = NULL;

	for (int i = 0; i < NBUCKETS; i++) {
		for (struct sess *s = buckets[i]; s; s = s->next) {
			if (atomic_load_explicit(&s->up_thread, memory_order_relaxed) != id)
				continue;
			if (found)
				return NULL; /* two sessions: no way to tell */
			found = s;
		}
	}
	return found;
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

static const char *skip_space(const char *p, const char *e)
{
	while (p < e && isspace((unsigned char)*p))
		p++;
	return p;
}

/* The word w (case-insensitive) at p, as a whole word: the position after
 * it and the spaces that follow, or NULL. */
static const char *word(const char *p, const char *e, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(e - p) < n || strncasecmp(p, w, n) != 0)
		return NULL;
	if (p + n < e && (isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == '$'))
		return NULL;
	return skip_space(p + n, e);
}

/* KILL [HARD|SOFT] [CONNECTION|QUERY] <digits> [;], nothing else after.
 * false: not a statement the node answers (it goes upstream). */
static bool parse_kill(const char *q, size_t n, struct kill_req *r)
{
	const char *p = skip_space(q, q + n), *e = q + n, *t;
	uint64_t id = 0;

	memset(r, 0, sizeof(*r));
	r->kind = KK_CONNECTION;
	if (!(p = word(p, e, "KILL")))
		return false;
	if ((t = word(p, e, "HARD")) || (t = word(p, e, "SOFT")))
		p = t;
	if ((t = word(p, e, "CONNECTION"))) {
		p = t;
	} else if ((t = word(p, e, "QUERY"))) {
		p = t;
		r->kind = KK_QUERY;
		if (word(p, e, "ID")) {
			r->unsupported = true;
			return true;
		}
	}
	if (word(p, e, "USER")) {
		r->unsupported = true;
		return true;
	}
	if (p == e || !isdigit((unsigned char)*p))
		return false;
	while (p < e && isdigit((unsigned char)*p)) {
		if (id > (UINT64_MAX - 9) / 10)
			return false;
		id = id * 10 + (uint64_t)(*p++ - '0');
	}
	p = skip_space(p, e);
	if (p < e && *p == ';')
		p = skip_space(p + 1, e);
	if (p != e)
		return false;
	r->id = id;
	return true;
}

bool kill_statement(const char *q, size_t n)
{
	return word(skip_space(q, q + n), q + n, "KILL") != NULL;
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

bool kill_parse(const uint8_t *pl, uint32_t len, struct kill_req *r)
{
	if (pl[0] == CMD_PROCESS_KILL) {
		if (len < 5)
			return false;
		*r = (struct kill_req){ .kind = KK_CONNECTION, .id = rd_u32(pl + 1) };
		return true;
	}
	return pl[0] == CMD_QUERY && parse_kill((const char *)pl + 1, len - 1, r);
}

/* ---- finding the session ------------------------------------------------ */

/* The session a KILL names: by its node session id, else by the upstream
 * thread its last command ran on. 0 when none (or two) match. */
uint32_t kill_find(uint64_t id, struct worker **w, char *user, size_t cap)
{
	struct sess *s;
	uint32_t found = 0;

	pthread_mutex_lock(&lock);
	s = id <= UINT32_MAX ? *slot((uint32_t)id) : NULL;
	if (!s && id != 0)
		s = by_upstream_thread(id);
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
