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

#include "cache/inval.h"
#include "cache/registry.h"
#include "config/config.h"
#include "upstream/ident.h"
#include "base/log.h"
#include "sql/stmt.h"
#include "base/stats.h"

#define GRANT_SLOTS 4096          /* per worker, a power of two */
#define GRANT_PROBE 8
/* While one session checks a user's expired "allowed" verdict, the user's
 * other sessions on the worker are served under it, for this long at most
 * (the check's round trip): one check per expiry, not one per session. */
#define GRANT_CHECK_GRACE_MS 2000

enum { V_NONE, V_ALLOWED, V_REFUSED };
/* grant_session.state */
enum { GS_NONE, GS_CHECKING, GS_ALLOWED, GS_REFUSED };

struct grant_slot {
	const struct cache_def *def;
	uint32_t ident;
	uint32_t scope;               /* the session settings (schema) it holds for */
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
	ident_privileges_changed();  /* new logins use new upstream connections */
	log_debug("grant verdicts forgotten (%s)", user ? user : "privileges changed");
}

static uint32_t epoch_now(void)
{
	return atomic_load_explicit(&grant_epoch, memory_order_relaxed);
}

uint32_t grants_epoch(void)
{
	return epoch_now();
}

uint32_t grants_key_id(const struct ident *id)
{
	if (__atomic_load_n(&g_config.cache_scope, __ATOMIC_RELAXED) == CACHE_SCOPE_SHARED)
		return 0;
	return id ? id->id : 0;
}

bool grants_session_may_cache(const struct ident *id)
{
	return !id || !id->role_set;
}

static struct grant_table *table_of(struct grant_worker *gw)
{
	if (!gw->t)
		gw->t = calloc(1, sizeof(struct grant_table));
	return gw->t;
}

void grants_worker_free(struct grant_worker *gw)
{
	free(gw->t);
	gw->t = NULL;
}

static size_t slot_hash(const struct cache_def *d, uint32_t ident, uint32_t scope)
{
	uint64_t h = (uint64_t)(uintptr_t)d * 0x9E3779B97F4A7C15ull ^ (uint64_t)ident * 0xC2B2AE3D27D4EB4Full ^
		     (uint64_t)scope * 0x165667B19E3779F9ull;

	return (size_t)(h >> 40) & (GRANT_SLOTS - 1);
}

static uint32_t ident_of(const struct ident *id)
{
	return id ? id->id : 0;
}

/* stale: an expired verdict still counts (serve-stale while the upstream is
 * down: it cannot be checked, and no privilege can change there meanwhile) */
static struct grant_slot *find_slot(struct grant_table *t, const struct cache_def *d, uint32_t id,
				    uint32_t scope)
{
	size_t h = slot_hash(d, id, scope);

	for (int i = 0; i < GRANT_PROBE; i++) {
		struct grant_slot *s = &t->s[(h + (size_t)i) & (GRANT_SLOTS - 1)];

		if (s->def == d && s->ident == id && s->scope == scope)
			return s;
	}
	return NULL;
}

/* The verdict that holds now. stale: an expired verdict still counts
 * (serve-stale while the upstream is down: it cannot be checked, and no
 * privilege can change there meanwhile); an expired "allowed" one also
 * holds while another session checks it (GRANT_CHECK_GRACE_MS). */
static int lookup(struct grant_worker *gw, const struct ident *id, const struct cache_def *d,
		  uint32_t scope, int64_t now, bool stale)
{
	struct grant_table *t = gw->t; /* allocated by record(): never on a hit */
	const struct grant_slot *s = t ? find_slot(t, d, ident_of(id), scope) : NULL;
	bool checking;

	if (!s || s->epoch != epoch_now())
		return V_NONE;
	if (s->expires_ms > now || stale)
		return s->verdict;
	checking = s->checking_ms && now - s->checking_ms < GRANT_CHECK_GRACE_MS &&
		   __atomic_load_n(&g_config.grant_check_ms, __ATOMIC_RELAXED) > 0;
	return checking && s->verdict == V_ALLOWED ? V_ALLOWED : V_NONE;
}

/* A check of the verdict on d starts: the user's other sessions wait for it
 * under the old verdict (lookup). */
static void mark_checking(struct grant_worker *gw, const struct ident *id, const struct cache_def *d,
			  uint32_t scope, int64_t now)
{
	struct grant_slot *s = gw->t ? find_slot(gw->t, d, ident_of(id), scope) : NULL;

	if (s)
		s->checking_ms = now;
}

/* How long a verdict holds. In binlog mode every privilege change made on
 * the upstream reaches the node through the binlog (grants_invalidate), so
 * a verdict lasts until one is seen, bounded by grant_check_binlog_ms (the
 * safety net: changes the binlog does not show, docs/security.md); in the
 * other modes nothing tells, and grant_check_ms bounds it. */
static int64_t verdict_ms(void)
{
	int64_t check = __atomic_load_n(&g_config.grant_check_ms, __ATOMIC_RELAXED);
	int64_t binlog = __atomic_load_n(&g_config.grant_check_binlog_ms, __ATOMIC_RELAXED);

	return inval_mode() == INVAL_BINLOG && check > 0 && binlog > check ? binlog : check;
}

static void record(struct grant_worker *gw, const struct ident *who, const struct cache_def *d,
		   uint32_t scope, int verdict, int64_t now)
{
	struct grant_table *t = table_of(gw);
	uint32_t id = ident_of(who);
	struct grant_slot *victim = NULL;
	size_t h;

	if (!t || !d || !scope)
		return;
	h = slot_hash(d, id, scope);
	for (int i = 0; i < GRANT_PROBE; i++) {
		struct grant_slot *s = &t->s[(h + (size_t)i) & (GRANT_SLOTS - 1)];

		if ((s->def == d && s->ident == id && s->scope == scope) || !s->def) {
			victim = s;
			break;
		}
		if (!victim || s->expires_ms < victim->expires_ms)
			victim = s;
	}
	victim->def = d;
	victim->ident = id;
	victim->scope = scope;
	victim->checking_ms = 0;
	victim->epoch = epoch_now();
	victim->expires_ms = now + verdict_ms();
	victim->verdict = (uint8_t)verdict;
}

enum grant_gate grants_gate(struct grant_session *gs, struct grant_worker *gw, const struct ident *id,
			    struct cache_def *d, uint32_t scope, int64_t now, bool stale)
{
	int v;

	/* the answer of the check just made for this command counts once, even
	 * with grant_check_ms 0 or the verdict already evicted */
	if (gs->def == d && gs->scope == scope && (gs->state == GS_ALLOWED || gs->state == GS_REFUSED)) {
		v = gs->state == GS_ALLOWED ? V_ALLOWED : V_REFUSED;
		gs->def = NULL;
		gs->state = GS_NONE;
		return v == V_ALLOWED ? GRANT_OK : GRANT_REFUSED;
	}
	gs->scope = scope;   /* a check, if one is needed, is of this scope */
	v = lookup(gw, id, d, scope, now, stale);
	if (v == V_ALLOWED)
		return GRANT_OK;
	if (v == V_REFUSED)
		return GRANT_REFUSED;
	return GRANT_CHECK;
}

void grants_note_allowed(struct grant_worker *gw, const struct ident *id, struct cache_def *d,
			 uint32_t scope, int64_t now)
{
	if (grants_session_may_cache(id))
		record(gw, id, d, scope, V_ALLOWED, now);
}

/* ---- statements that change privileges -------------------------------- */

void grants_note_statement(struct ident *id, const struct stmt *st)
{
	/* every statement of a multi-statement text counts (stmt.h marks) */
	if (!st || (st->flags & STMT_PRIVILEGES))
		grants_invalidate(id ? id->up_user : NULL);   /* unread: it may have */
	if (id && (!st || (st->flags & STMT_SET_ROLE)))
		id->role_set = true;
}

bool grants_text_changes_privileges(const char *text, size_t n)
{
	return sql_changes_privileges(text, n);
}

bool grants_table_is_privileges(const char *schema, size_t slen, const char *table, size_t tlen)
{
	static const char *const tables[] = { "user", "global_priv", "db", "tables_priv", "columns_priv",
					      "procs_priv", "proxies_priv", "roles_mapping" };

	if (slen != 5 || strncasecmp(schema, "mysql", 5) != 0)
		return false;
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (strlen(tables[i]) == tlen && strncasecmp(table, tables[i], tlen) == 0)
			return true;
	return false;
}

/* ---- the upstream check ----------------------------------------------- */

void grants_abort(struct grant_session *gs)
{
	gs->def = NULL;
	gs->state = GS_NONE;
}

void grants_check_sent(struct grant_session *gs, struct grant_worker *gw, const struct ident *id,
		       int64_t now)
{
	STAT_INC(grant_checks);
	mark_checking(gw, id, gs->def, gs->scope, now);
	gs->state = GS_CHECKING;
}

uint32_t grants_check_done(struct grant_session *gs, struct grant_worker *gw, const struct ident *id,
			   const struct relay *r, const struct pbuf *b, int64_t now, uint32_t conn_id)
{
	bool allowed = b->len >= PKT_HEADER_LEN + 5 && b->data[PKT_HEADER_LEN] == 0x00 && !r->saw_err;

	if (!allowed) {
		STAT_INC(grant_denied);
		if (b->len >= PKT_HEADER_LEN + 3 && b->data[PKT_HEADER_LEN] == 0xff)
			log_debug("client %u: grant check refused for '%s': error %u", conn_id,
				  id ? id->up_user : "", rd_u16(b->data + PKT_HEADER_LEN + 1));
	}
	record(gw, id, gs->def, gs->scope, allowed ? V_ALLOWED : V_REFUSED, now);
	gs->state = allowed ? GS_ALLOWED : GS_REFUSED;
	return allowed ? rd_u32(b->data + PKT_HEADER_LEN + 1) : 0;
}
