/*
 * grants.c: the per-(upstream user, shape) grant verdicts that gate cache
 * hits, their upstream check (COM_STMT_PREPARE as the user), and the epoch
 * that forgets them all. See grants.h and docs/security.md.
 */
#include "cache/grants.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cache/registry.h"
#include "client.h"
#include "config.h"
#include "ident.h"
#include "log.h"
#include "packet.h"
#include "relay.h"
#include "sql/tokenizer.h"
#include "stats.h"
#include "worker.h"

#define GRANT_SLOTS 4096          /* per worker, a power of two */
#define GRANT_PROBE 8
/* While one session checks a user's expired "allowed" verdict, the user's
 * other sessions on the worker are served under it, for this long at most
 * (the check's round trip): one check per expiry, not one per session. */
#define GRANT_CHECK_GRACE_MS 2000

enum { V_NONE, V_ALLOWED, V_REFUSED };
/* c->grant_state */
enum { GS_NONE, GS_CHECKING, GS_ALLOWED, GS_REFUSED };

struct grant_slot {
	const struct cache_def *def;
	uint32_t ident;
	uint32_t epoch;
	int64_t expires_ms;
	int64_t checking_ms;          /* a check of this verdict started then (0: none) */
	uint8_t verdict;
};

struct grant_table {
	struct grant_slot s[GRANT_SLOTS];
};

/* Shared by all threads: bumped to forget every verdict (relaxed: a
 * worker that reads the old value a moment longer serves what it would
 * have served just before the change). */
static atomic_uint grant_epoch = 1;

void grants_invalidate(const char *user)
{
	atomic_fetch_add_explicit(&grant_epoch, 1, memory_order_relaxed);
	log_debug("grant verdicts forgotten (%s)", user ? user : "privileges changed");
}

static uint32_t epoch_now(void)
{
	return atomic_load_explicit(&grant_epoch, memory_order_relaxed);
}

uint32_t grants_key_id(const struct client *c)
{
	if (__atomic_load_n(&g_config.cache_scope, __ATOMIC_RELAXED) == CACHE_SCOPE_SHARED)
		return 0;
	return c->ident ? c->ident->id : 0;
}

bool grants_session_may_cache(const struct client *c)
{
	return !c->ident || !c->ident->role_set;
}

static struct grant_table *table_of(struct client *c)
{
	if (!c->w->grants)
		c->w->grants = calloc(1, sizeof(struct grant_table));
	return c->w->grants;
}

void grants_worker_free(struct worker *w)
{
	free(w->grants);
	w->grants = NULL;
}

static size_t slot_hash(const struct cache_def *d, uint32_t ident)
{
	uint64_t h = (uint64_t)(uintptr_t)d * 0x9E3779B97F4A7C15ull ^ (uint64_t)ident * 0xC2B2AE3D27D4EB4Full;

	return (size_t)(h >> 40) & (GRANT_SLOTS - 1);
}

static uint32_t ident_of(const struct client *c)
{
	return c->ident ? c->ident->id : 0;
}

/* stale: an expired verdict still counts (serve-stale while the upstream is
 * down: it cannot be checked, and no privilege can change there meanwhile) */
static struct grant_slot *find_slot(struct grant_table *t, const struct cache_def *d, uint32_t id)
{
	size_t h = slot_hash(d, id);

	for (int i = 0; i < GRANT_PROBE; i++) {
		struct grant_slot *s = &t->s[(h + (size_t)i) & (GRANT_SLOTS - 1)];

		if (s->def == d && s->ident == id)
			return s;
	}
	return NULL;
}

/* The verdict that holds now. stale: an expired verdict still counts
 * (serve-stale while the upstream is down: it cannot be checked, and no
 * privilege can change there meanwhile); an expired "allowed" one also
 * holds while another session checks it (GRANT_CHECK_GRACE_MS). */
static int lookup(struct client *c, const struct cache_def *d, int64_t now, bool stale)
{
	struct grant_table *t = c->w->grants; /* allocated by record(): never on a hit */
	const struct grant_slot *s = t ? find_slot(t, d, ident_of(c)) : NULL;
	bool checking;

	if (!s || s->epoch != epoch_now())
		return V_NONE;
	if (s->expires_ms > now || stale)
		return s->verdict;
	checking = s->checking_ms && now - s->checking_ms < GRANT_CHECK_GRACE_MS &&
		   __atomic_load_n(&g_config.grant_check_ms, __ATOMIC_RELAXED) > 0;
	return checking && s->verdict == V_ALLOWED ? V_ALLOWED : V_NONE;
}

/* A check of c's verdict on d starts: the user's other sessions wait for it
 * under the old verdict (lookup). */
static void mark_checking(struct client *c, const struct cache_def *d, int64_t now)
{
	struct grant_slot *s = c->w->grants ? find_slot(c->w->grants, d, ident_of(c)) : NULL;

	if (s)
		s->checking_ms = now;
}

static void record(struct client *c, const struct cache_def *d, int verdict, int64_t now)
{
	struct grant_table *t = table_of(c);
	uint32_t id = ident_of(c);
	struct grant_slot *victim = NULL;
	size_t h;

	if (!t || !d)
		return;
	h = slot_hash(d, id);
	for (int i = 0; i < GRANT_PROBE; i++) {
		struct grant_slot *s = &t->s[(h + (size_t)i) & (GRANT_SLOTS - 1)];

		if ((s->def == d && s->ident == id) || !s->def) {
			victim = s;
			break;
		}
		if (!victim || s->expires_ms < victim->expires_ms)
			victim = s;
	}
	victim->def = d;
	victim->ident = id;
	victim->checking_ms = 0;
	victim->epoch = epoch_now();
	victim->expires_ms = now + __atomic_load_n(&g_config.grant_check_ms, __ATOMIC_RELAXED);
	victim->verdict = (uint8_t)verdict;
}

enum grant_gate grants_gate(struct client *c, struct cache_def *d, int64_t now, bool stale)
{
	int v;

	/* the answer of the check just made for this command counts once, even
	 * with grant_check_ms 0 or the verdict already evicted */
	if (c->grant_def == d && (c->grant_state == GS_ALLOWED || c->grant_state == GS_REFUSED)) {
		v = c->grant_state == GS_ALLOWED ? V_ALLOWED : V_REFUSED;
		c->grant_def = NULL;
		c->grant_state = GS_NONE;
		return v == V_ALLOWED ? GRANT_OK : GRANT_REFUSED;
	}
	v = lookup(c, d, now, stale);
	if (v == V_ALLOWED)
		return GRANT_OK;
	if (v == V_REFUSED)
		return GRANT_REFUSED;
	return GRANT_CHECK;
}

void grants_note_allowed(struct client *c, struct cache_def *d, int64_t now)
{
	if (grants_session_may_cache(c))
		record(c, d, V_ALLOWED, now);
}

/* ---- statements that change privileges -------------------------------- */

static bool starts_with_words(const char *p, const char *words)
{
	size_t n = strlen(words);

	return strncasecmp(p, words, n) == 0 && (p[n] == ' ' || p[n] == '\0' || p[n] == ';');
}

/* One statement of the digest text: 1 a privilege change, 2 SET ROLE. */
static int statement_kind(const char *p)
{
	static const char *const changes[] = {
		"GRANT", "REVOKE", "ALTER USER", "DROP USER", "RENAME USER", "SET PASSWORD",
		"SET DEFAULT ROLE", "DROP ROLE", "FLUSH PRIVILEGES", NULL,
	};

	while (*p == ' ' || *p == '(')
		p++;
	if (starts_with_words(p, "SET ROLE"))
		return 2;
	for (int i = 0; changes[i]; i++)
		if (starts_with_words(p, changes[i]))
			return 1;
	return 0;
}

void grants_note_statement(struct client *c, const struct sql_tok_result *tok)
{
	const char *p = tok->text;

	/* every statement of a multi-statement text counts */
	while (p && *p) {
		int k = statement_kind(p);

		if (k == 2 && c->ident) {
			c->ident->role_set = true;
		} else if (k == 1) {
			grants_invalidate(c->ident ? c->ident->up_user : NULL);
		}
		p = strchr(p, ';');
		if (p)
			p++;
	}
}

/* ---- the upstream check ----------------------------------------------- */

bool grants_checking(const struct client *c)
{
	return c->grant_state == GS_CHECKING;
}

void grants_abort(struct client *c)
{
	c->grant_def = NULL;
	c->grant_state = GS_NONE;
}

bool grants_start_check(struct client *c, struct cache_def *d, const char *q, size_t n)
{
	struct pbuf *o;
	size_t start;
	int rc;

	if (!c->up || c->st != CS_READY || n == 0)
		return false;
	o = &c->up->io.out;
	rc = pkt_begin(o, &start);
	rc |= put_u8(o, CMD_STMT_PREPARE);
	rc |= pbuf_append(o, q, n);
	if (rc)
		return false;
	pkt_end(o, start, 0);
	STAT_INC(grant_checks);
	mark_checking(c, d, (int64_t)(ev_now(c->w->loop) * 1000.0));
	c->scratch.len = 0;
	relay_start(&c->relay, CMD_STMT_PREPARE, 0);
	relay_upstream(&c->relay, c->up->cache_meta, c->up->progress, NULL, NULL);
	c->grant_def = d;
	c->grant_state = GS_CHECKING;
	c->st = CS_SETTINGS;
	return true;
}

/* Close the statement the check prepared (no answer comes). */
static void close_statement(struct client *c, uint32_t stmt_id)
{
	struct pbuf *o = &c->up->io.out;
	size_t start;
	int rc;

	rc = pkt_begin(o, &start);
	rc |= put_u8(o, CMD_STMT_CLOSE);
	rc |= put_u32(o, stmt_id);
	if (rc == 0)
		pkt_end(o, start, 0);
	else
		c->up->dirty = true; /* the statement stays: no other session gets it */
}

void grants_check_done(struct client *c)
{
	const struct pbuf *b = &c->scratch;
	bool allowed = b->len >= PKT_HEADER_LEN + 5 && b->data[PKT_HEADER_LEN] == 0x00 &&
		       !c->relay.saw_err;
	int64_t now = (int64_t)(ev_now(c->w->loop) * 1000.0);

	if (allowed && c->up)
		close_statement(c, rd_u32(b->data + PKT_HEADER_LEN + 1));
	if (!allowed) {
		STAT_INC(grant_denied);
		if (b->len >= PKT_HEADER_LEN + 3 && b->data[PKT_HEADER_LEN] == 0xff)
			log_debug("client %u: grant check refused for '%s': error %u", c->id,
				  c->ident ? c->ident->up_user : c->user, rd_u16(b->data + PKT_HEADER_LEN + 1));
	}
	record(c, c->grant_def, allowed ? V_ALLOWED : V_REFUSED, now);
	c->grant_state = allowed ? GS_ALLOWED : GS_REFUSED;
}
