/*
 * autoroute.c: `shoal-ha watch --auto-route` (see autoroute.h): each poll
 * looks at the agent's auto rules first (a warming one is routed once
 * warmup_ms has passed; a routed one is withdrawn when the nodes say it is
 * not cacheable, when the nodes answered more than max_error_pct of its
 * commands with an error, or its hit ratio on the nodes stayed below
 * min_hit_ratio, for withdraw_after polls, or when ProxySQL has not seen it
 * for absent_ms; a withdrawn one is deleted when its cooldown is over),
 * then routes the best new digests, at most max_changes changes a poll and
 * top rules in all. Every decision is logged and posted to the webhook
 * (alert.h); --dry-run logs them as "would" and changes nothing.
 */
#include "ha/autoroute.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ha/advise.h"
#include "ha/alert.h"
#include "ha/lead.h"
#include "ha/proxysql.h"
#include "ha/route.h"
#include "ha/state.h"
#include "ha/util.h"

/* Lookups on the nodes a hit ratio is judged from (one window). */
#define MIN_JUDGED 20

struct plan {
	const struct ha_config *cfg;
	struct sqlconn *c;
	struct autoroute *ar;
	struct ranking r;
	struct own_rule *o;
	size_t no;
	char (*others)[19];       /* digests an active rule of someone else's names */
	size_t nothers;
	int changes;
	long long next_id;
	int64_t now;
};

static const char *const state_names[] = { "", "warming", "routed", "withdrawn" };

const char *ar_state_name(enum ar_state s)
{
	return state_names[s];
}

enum ar_state ar_parse_comment(const char *rule_comment, const char *comment, int64_t *at_ms,
			       const char **reason)
{
	size_t n = strlen(rule_comment);
	const char *p;
	char *end;

	if (strncmp(comment, rule_comment, n) != 0 || strncmp(comment + n, " auto ", 6) != 0)
		return AR_NONE;
	p = comment + n + 6;
	for (int s = AR_WARMING; s <= AR_WITHDRAWN; s++) {
		size_t l = strlen(state_names[s]);
		const char *key = s == AR_WITHDRAWN ? " until=" : " since=";

		if (strncmp(p, state_names[s], l) != 0 || strncmp(p + l, key, 7) != 0)
			continue;
		*at_ms = strtoll(p + l + 7, &end, 10);
		*reason = strncmp(end, ": ", 2) == 0 ? end + 2 : "";
		return (enum ar_state)s;
	}
	return AR_NONE;
}

/* ---- decisions ----------------------------------------------------------- */

static void decision(struct plan *p, const char *event, const char *digest, const char *action,
		     const char *detail)
{
	struct alert a = { .event = event, .node = "", .action = action, .detail = detail,
			   .digest = digest };

	if (p->cfg->dry_run) {
		ha_log("info", "dry run: would %s digest %s: %s", action, digest, detail);
		return;
	}
	if (p->ar->st)
		state_note_decision(p->ar->st, p->now, event, digest, action, detail);
	alert_send(p->cfg, &a);
}

/* Nothing changes this poll: said once until the reason changes. */
static void no_change(struct autoroute *ar, const char *why)
{
	if (strncmp(ar->last_skip, why, sizeof ar->last_skip - 1) == 0)
		return;
	snprintf(ar->last_skip, sizeof ar->last_skip, "%.*s", (int)sizeof ar->last_skip - 1, why);
	ha_log("warning", "auto-route: no change: %s", why);
}

/* A statement changing the rules (not sent in a dry run): 0, or -1. */
static int change(struct plan *p, const char *sql)
{
	char err[1200];

	p->changes++;
	if (p->cfg->dry_run)
		return 0;
	if (sqlc_exec(p->c, sql, err, sizeof err) < 0) {
		ha_log("error", "auto-route: %s", err);
		return -1;
	}
	return 0;
}

static bool budget_left(const struct plan *p)
{
	return p->changes < p->cfg->max_changes;
}

/* A reason as it may stand in a rule's comment. */
static void comment_of(const struct plan *p, enum ar_state s, int64_t at, const char *reason,
		       char *out, size_t cap)
{
	size_t n = (size_t)snprintf(out, cap, "%s auto %s %s=%" PRId64 ": ", p->cfg->rule_comment,
				    state_names[s], s == AR_WITHDRAWN ? "until" : "since", at);

	for (const char *r = reason; *r && n + 1 < cap; r++)
		out[n++] = (*r >= ' ' && *r <= '~' && *r != '\'' && *r != '\\') ? *r : ' ';
	out[n < cap ? n : cap - 1] = '\0';
}

/* ---- the nodes' hit ratio, poll by poll ---------------------------------- */

/* The judging of digest, from the watch state; *fresh: made now (a first
 * look). NULL: no state, or HA_MAX_JUDGED digests judged already. */
static struct judged_digest *memory_of(struct autoroute *ar, const char *digest, bool *fresh)
{
	struct watch_state *st = ar->st;
	struct judged_digest *j;

	*fresh = false;
	if (!st)
		return NULL;
	for (int i = 0; i < st->n_judged; i++)
		if (strcmp(st->judged[i].digest, digest) == 0)
			return &st->judged[i];
	if (st->n_judged == HA_MAX_JUDGED)
		return NULL;
	j = &st->judged[st->n_judged++];
	memset(j, 0, sizeof *j);
	snprintf(j->digest, sizeof j->digest, "%s", digest);
	*fresh = true;
	return j;
}

/* What the nodes did with k: commands and errors since the last poll;
 * hits and misses since its window began. */
struct poll_view {
	uint64_t count, errors, node_errors, hits, misses;
};

/* k's figures into v; false on a first look or when a node restarted (its
 * counters went back): nothing is judged then, and a window begins. */
static bool poll_delta(struct judged_digest *m, bool fresh, const struct cand *k, struct poll_view *v)
{
	fresh = fresh || k->hits < m->win_hits || k->misses < m->win_misses || k->node_count < m->count ||
		k->errors < m->errors || k->node_errors < m->node_errors;
	if (fresh) {
		m->low_windows = m->error_polls = 0;
		m->win_hits = k->hits;
		m->win_misses = k->misses;
	} else {
		v->count = k->node_count - m->count;
		v->errors = k->errors - m->errors;
		v->node_errors = k->node_errors - m->node_errors;
		v->hits = k->hits - m->win_hits;
		v->misses = k->misses - m->win_misses;
	}
	m->count = k->node_count;
	m->errors = k->errors;
	m->node_errors = k->node_errors;
	return !fresh;
}

/* Judge k, routed since `since`, on the nodes: a poll with errors above
 * max_error_pct of its commands counts, and so does a window of MIN_JUDGED
 * lookups whose hit ratio is below min_hit_ratio (the first window begins
 * warmup_ms after the routing); withdraw_after of either in a row is the
 * verdict, written to buf. NULL: k stays. */
static const char *poll_verdict(struct plan *p, const struct cand *k, int64_t since, char *buf,
				size_t cap)
{
	bool fresh;
	struct judged_digest *m = memory_of(p->ar, k->digest, &fresh);
	struct poll_view v = { 0 };
	double pct = 0;

	if (!m || !poll_delta(m, fresh, k, &v))
		return NULL;
	if (p->now - since < p->cfg->warmup_ms) {
		/* just routed: each key's first lookup is a miss; the hit ratio
		 * is judged from warmup_ms on (errors at once) */
		v.hits = v.misses = 0;
		m->win_hits = k->hits;
		m->win_misses = k->misses;
	}
	if (v.errors && (double)v.errors * 100.0 > (double)p->cfg->max_error_pct * (double)v.count)
		m->error_polls++;
	else if (v.count)
		m->error_polls = 0;
	if (v.hits + v.misses >= MIN_JUDGED) {
		pct = 100.0 * (double)v.hits / (double)(v.hits + v.misses);
		m->low_windows = pct < p->cfg->min_hit_ratio_pct ? m->low_windows + 1 : 0;
		m->win_hits = k->hits;
		m->win_misses = k->misses;
	}
	if (m->error_polls >= p->cfg->withdraw_after) {
		snprintf(buf, cap, "errors on the nodes: %" PRIu64 " of %" PRIu64 " commands in the last "
			 "poll (%" PRIu64 " made by the nodes), above %d%% for %d polls", v.errors, v.count,
			 v.node_errors, p->cfg->max_error_pct, p->cfg->withdraw_after);
		return buf;
	}
	if (m->low_windows >= p->cfg->withdraw_after) {
		snprintf(buf, cap, "hit ratio %.1f%% on the nodes (last %" PRIu64 " lookups), below %d%% "
			 "%d times in a row", pct, v.hits + v.misses, p->cfg->min_hit_ratio_pct,
			 p->cfg->withdraw_after);
		return buf;
	}
	return NULL;
}

/* ---- the agent's auto rules ---------------------------------------------- */

static const struct cand *cand_of(const struct plan *p, const char *digest)
{
	for (size_t i = 0; i < p->r.n; i++)
		if (strcmp(p->r.k[i].digest, digest) == 0)
			return &p->r.k[i];
	return NULL;
}

static void withdraw(struct plan *p, const struct own_rule *o, const char *why)
{
	char comment[256], sql[512];

	comment_of(p, AR_WITHDRAWN, p->now + p->cfg->cooldown_ms, why, comment, sizeof comment);
	snprintf(sql, sizeof sql, "UPDATE mysql_query_rules SET active=0, comment='%s' WHERE rule_id=%lld",
		 comment, o->rule_id);
	if (change(p, sql) == 0)
		decision(p, "digest_withdrawn", o->digest, "withdraw", why);
}

/* Why a routed digest should go, or NULL. */
static const char *withdraw_reason(struct plan *p, const struct own_rule *o, int64_t since,
				   char *buf, size_t cap)
{
	const struct cand *k = cand_of(p, o->digest);
	int64_t seen_ms = k && k->last_seen ? k->last_seen * 1000 : since;

	if (p->cfg->absent_ms && p->now - seen_ms > p->cfg->absent_ms) {
		snprintf(buf, cap, "ProxySQL has not seen it for %" PRId64 " s", (p->now - seen_ms) / 1000);
		return buf;
	}
	if (!k)
		return NULL;
	if (k->v == V_NOT) {
		snprintf(buf, cap, "no longer cacheable (%s)", k->why);
		return buf;
	}
	return poll_verdict(p, k, since, buf, cap);
}

static void promote(struct plan *p, const struct own_rule *o, const char *reason)
{
	char comment[256], sql[600], why[300];

	snprintf(why, sizeof why, "warmed for %d s; %s", p->cfg->warmup_ms / 1000, reason);
	comment_of(p, AR_ROUTED, p->now, why, comment, sizeof comment);
	snprintf(sql, sizeof sql, "UPDATE mysql_query_rules SET destination_hostgroup=%d, "
		 "mirror_hostgroup=NULL, apply=1, comment='%s' WHERE rule_id=%lld", p->cfg->hostgroup,
		 comment, o->rule_id);
	if (change(p, sql) == 0)
		decision(p, "digest_routed", o->digest, "route", why);
}

static void drop_rule(struct plan *p, const struct own_rule *o, const char *event,
		      const char *action, const char *why)
{
	char sql[128];

	snprintf(sql, sizeof sql, "DELETE FROM mysql_query_rules WHERE rule_id=%lld", o->rule_id);
	if (change(p, sql) == 0)
		decision(p, event, o->digest, action, why);
}

static void review(struct plan *p, const struct own_rule *o)
{
	const char *reason, *why;
	const struct cand *k = cand_of(p, o->digest);
	enum ar_state s;
	int64_t at;
	char buf[300];

	s = ar_parse_comment(p->cfg->rule_comment, o->comment, &at, &reason);
	if (s == AR_NONE)
		return;
	/* a routed digest is judged every poll, changes left or not, so that
	 * each judgement covers one poll */
	why = s == AR_ROUTED ? withdraw_reason(p, o, at, buf, sizeof buf) : NULL;
	if (!budget_left(p))
		return;
	if (s == AR_WITHDRAWN && p->now >= at)
		drop_rule(p, o, "cooldown_over", "forget", "its cooldown is over: it may be routed again");
	else if (s == AR_WARMING && k && k->v == V_NOT)
		drop_rule(p, o, "digest_withdrawn", "stop warming", "not cacheable after all");
	else if (s == AR_WARMING && p->now - at >= p->cfg->warmup_ms)
		promote(p, o, reason);
	else if (why)
		withdraw(p, o, why);
}

/* ---- new routes ---------------------------------------------------------- */

static const struct own_rule *own_rule_for(const struct plan *p, const char *digest)
{
	for (size_t i = 0; i < p->no; i++)
		if (strcmp(p->o[i].digest, digest) == 0)
			return &p->o[i];
	return NULL;
}

static int active_rules(const struct plan *p)
{
	int n = 0;

	for (size_t i = 0; i < p->no; i++)
		n += p->o[i].active != 0;
	return n;
}

static int by_saving(const void *a, const void *b)
{
	const struct cand *x = *(const struct cand *const *)a, *y = *(const struct cand *const *)b;

	return x->saving < y->saving ? 1 : x->saving > y->saving ? -1 : strcmp(x->digest, y->digest);
}

static void route_one(struct plan *p, const struct cand *k)
{
	bool warm = p->cfg->warmup_ms > 0 && !k->measured;
	char why[300], comment[256], sql[700];
	char err[1200];

	snprintf(why, sizeof why, "expected saving %.1f s, %.1f%% of upstream time (hit ratio %.0f%%, %s)",
		 k->saving / 1e6, p->r.total_time ? 100.0 * k->saving / (double)p->r.total_time : 0.0,
		 100.0 * k->ratio, k->measured ? "measured on the nodes" : "assumed");
	if (route_free_rule_id(p->cfg, p->c, &p->next_id, err, sizeof err)) {
		ha_log("error", "auto-route: %s", err);
		return;
	}
	comment_of(p, warm ? AR_WARMING : AR_ROUTED, p->now, why, comment, sizeof comment);
	if (warm)
		snprintf(sql, sizeof sql, "INSERT INTO mysql_query_rules (rule_id, active, digest, "
			 "mirror_hostgroup, apply, comment) VALUES (%lld, 1, '%s', %d, 0, '%s')",
			 p->next_id, k->digest, p->cfg->hostgroup, comment);
	else
		snprintf(sql, sizeof sql, "INSERT INTO mysql_query_rules (rule_id, active, digest, "
			 "destination_hostgroup, apply, comment) VALUES (%lld, 1, '%s', %d, 1, '%s')",
			 p->next_id, k->digest, p->cfg->hostgroup, comment);
	p->next_id++;
	if (change(p, sql) == 0)
		decision(p, warm ? "digest_warming" : "digest_routed", k->digest,
			 warm ? "warm (mirror)" : "route", why);
}

/* The digests that active rules not the agent's name (the operator's own
 * routing, `shoal-ha route`'s included): the agent adds no rule for them. */
static int other_rules(struct plan *p, char *err, size_t errlen)
{
	char sql[400];
	MYSQL_RES *r;
	MYSQL_ROW row;

	snprintf(sql, sizeof sql, "SELECT DISTINCT digest FROM mysql_query_rules WHERE active = 1 AND "
		 "digest IS NOT NULL AND (comment IS NULL OR substr(comment, 1, %zu) <> '%s')",
		 strlen(p->cfg->rule_comment), p->cfg->rule_comment);
	if (!(r = sqlc_query(p->c, sql, err, errlen)))
		return -1;
	p->others = calloc(mysql_num_rows(r) + 1, sizeof *p->others);
	while (p->others && (row = mysql_fetch_row(r)))
		if (row[0] && ha_parse_digest(row[0], p->others[p->nothers]))
			p->nothers++;
	mysql_free_result(r);
	return p->others ? 0 : ha_fail(err, errlen, "out of memory");
}

static bool named_by_others(const struct plan *p, const char *digest)
{
	for (size_t i = 0; i < p->nothers; i++)
		if (strcmp(p->others[i], digest) == 0)
			return true;
	return false;
}

/* A digest that may get a rule: cacheable, and no rule of the agent's or
 * an active one of someone else's already. */
static bool routable(const struct plan *p, const struct cand *k)
{
	return k->v == V_CACHEABLE && !own_rule_for(p, k->digest) && !named_by_others(p, k->digest);
}

static void route_new(struct plan *p)
{
	const struct cand **best = calloc(p->r.n ? p->r.n : 1, sizeof *best);
	double floor_us = (double)p->cfg->route_min_saving_ms * 1000.0;
	double share_us = (double)p->r.total_time * p->cfg->route_min_share_pct / 100.0;
	int room = p->cfg->top - active_rules(p);
	size_t n = 0;

	if (!best)
		return;
	for (size_t i = 0; i < p->r.n; i++)
		if (routable(p, &p->r.k[i]) && p->r.k[i].saving >= floor_us &&
		    p->r.k[i].saving >= share_us && p->r.k[i].saving > 0)
			best[n++] = &p->r.k[i];
	qsort(best, n, sizeof *best, by_saving);
	for (size_t i = 0; i < n && room > 0 && budget_left(p); i++, room--)
		route_one(p, best[i]);
	free(best);
}

/* Forget the judging of digests the agent no longer routes. */
static void forget_unrouted(struct plan *p)
{
	struct watch_state *st = p->ar->st;
	int kept = 0;

	for (int i = 0; st && i < st->n_judged; i++) {
		const struct own_rule *o = own_rule_for(p, st->judged[i].digest);
		const char *reason;
		int64_t at;

		if (o && ar_parse_comment(p->cfg->rule_comment, o->comment, &at, &reason) == AR_ROUTED)
			st->judged[kept++] = st->judged[i];
	}
	if (st)
		st->n_judged = kept;
}

/* ---- one poll ------------------------------------------------------------ */

void autoroute_poll(const struct ha_config *cfg, struct sqlconn *c, struct autoroute *ar,
		    bool nodes_ok, int64_t now_ms)
{
	struct plan p = { .cfg = cfg, .c = c, .ar = ar, .now = now_ms };
	char err[1200], why[400], leader[300];

	if (!lead_decides(cfg, c, &ar->lead, now_ms, leader, sizeof leader)) {
		snprintf(why, sizeof why, "following the agent of ProxySQL %s (the first instance of the "
			 "cluster with a live agent decides)", leader);
		no_change(ar, why);
		return;
	}
	if (!nodes_ok) {
		no_change(ar, "a node is unreachable or not serving");
		return;
	}
	if (advise_rank(cfg, c, &p.r, err, sizeof err) ||
	    route_own_rules(cfg, c, &p.o, &p.no, err, sizeof err) || other_rules(&p, err, sizeof err)) {
		free(p.o);
		free(p.others);
		no_change(ar, err);
		advise_free(&p.r);
		return;
	}
	if (p.r.failed) {
		snprintf(why, sizeof why, "the statistics of %d node%s could not be read", p.r.failed,
			 p.r.failed == 1 ? "" : "s");
		no_change(ar, why);
	} else {
		ar->last_skip[0] = '\0';
		for (size_t i = 0; i < p.no; i++)
			review(&p, &p.o[i]);
		if (!cfg->dry_run)
			forget_unrouted(&p);
		route_new(&p);
		if (p.changes && !cfg->dry_run && px_load_save(c, "MYSQL QUERY RULES", true, err, sizeof err))
			ha_log("error", "auto-route: %s", err);
	}
	free(p.o);
	free(p.others);
	advise_free(&p.r);
}

void autoroute_free(struct autoroute *ar)
{
	memset(ar, 0, sizeof *ar);
}
