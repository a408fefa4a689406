/*
 * kill.c: KILL intercepted (see kill.h): the session table, reading the
 * KILL statement, the answer to the killer, the delivery to the session's
 * worker, and the upstream KILL, on a connection of its own.
 */
#include "kill.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "log.h"
#include "packet.h"
#include "upstream.h"
#include "worker.h"

#define ERR_NO_SUCH_THREAD 1094
#define ERR_KILL_DENIED 1095
#define ERR_NOT_SUPPORTED_YET 1235
#define ERR_QUERY_INTERRUPTED 1317
#define ERR_CONNECTION_KILLED 1927

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

void kill_free_all(void)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < NBUCKETS; i++) {
		while (buckets[i]) {
			struct sess *s = buckets[i];

			buckets[i] = s->next;
			free(s);
		}
	}
	pthread_mutex_unlock(&lock);
}

/* ---- reading the statement --------------------------------------------- */

struct kill_req {
	enum kill_kind kind;
	bool unsupported;         /* KILL QUERY ID n, KILL USER name */
	uint64_t id;
};

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

/* ---- answering ----------------------------------------------------------- */

static void reply_ok(struct client *c)
{
	pkt_put_ok(&c->io.out, 1, 0, 0, c->server_status & SESSION_STATUS_BITS, 0, c->caps);
}

/* The session a KILL names: by its node session id, else by the upstream
 * thread its last command ran on. 0 when none (or two) match. */
static uint32_t find_target(uint64_t id, struct worker **w, char *user, size_t cap)
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

bool kill_command(struct client *c, const uint8_t *pl, uint32_t len)
{
	struct kill_req r;
	struct worker *w = NULL;
	char user[HS_USER_MAX] = "";
	uint32_t target;

	if (pl[0] == CMD_PROCESS_KILL) {
		if (len < 5)
			return false;
		r = (struct kill_req){ .kind = KK_CONNECTION, .id = rd_u32(pl + 1) };
	} else if (pl[0] != CMD_QUERY || !parse_kill((const char *)pl + 1, len - 1, &r)) {
		return false;
	}
	if (r.unsupported) {
		client_send_err(c, 1, ERR_NOT_SUPPORTED_YET, "42000",
				"This version of MariaDB doesn't yet support '%s'",
				"KILL QUERY ID and KILL USER through Shoal (use KILL [QUERY] <connection id>)");
		return true;
	}
	target = r.id == c->id ? c->id : find_target(r.id, &w, user, sizeof(user));
	if (target == c->id && r.kind == KK_QUERY) {
		client_send_err(c, 1, ERR_QUERY_INTERRUPTED, "70100", "Query execution was interrupted");
		return true;
	}
	if (target == c->id) {
		client_send_err(c, 1, ERR_CONNECTION_KILLED, "70100", "Connection was killed");
		c->st = CS_CLOSING;
		return true;
	}
	if (!target) {
		client_send_err(c, 1, ERR_NO_SUCH_THREAD, "HY000", "Unknown thread id: %llu",
				(unsigned long long)r.id);
		return true;
	}
	if (strcmp(user, c->user) != 0) {
		client_send_err(c, 1, ERR_KILL_DENIED, "HY000", "You are not owner of thread %llu",
				(unsigned long long)r.id);
		return true;
	}
	worker_post(w, target, 0, r.kind == KK_QUERY ? WAKE_KILL_QUERY : WAKE_KILL_CONNECTION);
	reply_ok(c);
	return true;
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

/* Have the upstream kill what runs on the session's connection, on a
 * connection of its own opened on the session's worker as the session's
 * identity. The session's connection is never lent to another session
 * after this, so that a KILL arriving late cannot reach anyone else. */
static void kill_upstream(struct client *c, bool query_only)
{
	struct upstream_kill *k = malloc(sizeof(*k));
	struct upstream_params p = { .check = true, .ident = c->ident };

	c->up->dirty = true;
	if (!k)
		return;
	k->thread_id = mysql_thread_id(c->up->mysql);
	k->query_only = query_only;
	if (!upstream_open(c->w->loop, &p, upstream_kill_event, k)) {
		log_warn("KILL: out of memory for the upstream KILL");
		free(k);
	}
}

/* A command of the session is upstream (its answer not complete). */
static bool busy_upstream(const struct client *c)
{
	return c->up && (c->st == CS_RELAYING || c->st == CS_SETTINGS || c->st == CS_REFRESHING ||
			 c->st == CS_SYNCING);
}

void kill_deliver(struct worker *w, uint32_t id, enum kill_kind kind)
{
	struct client *c = w->clients;

	while (c && c->id != id)
		c = c->next;
	if (!c)
		return; /* ended meanwhile */
	if (kind == KK_QUERY) {
		if (busy_upstream(c))
			kill_upstream(c, true);
		return;
	}
	if (busy_upstream(c))
		kill_upstream(c, false);
	client_close(c, "killed (KILL CONNECTION)");
}
