/*
 * autoroute.c: `shoal-ha watch --auto-route` (see autoroute.h): each poll
 * looks at the agent's auto rules first (a warming one is routed once
 * warmup_ms has passed; a routed one is withdrawn when the nodes say it is
 * not cacheable, when its hit ratio on the nodes stayed below
 * min_hit_ratio for withdraw_after polls, or when ProxySQL has not seen it
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
#include "ha/proxysql.h"
#include "ha/route.h"
#include "ha/state.h"
#include "ha/util.h"

/* Lookups on the nodes in one poll below which its hit ratio is not judged. */
#define MIN_JUDGED 20

struct plan {
	const struct ha_config *cfg;
	struct sqlconn *c;
	struct autoroute *ar;
	struct ranking r;
	struct own_rule *o;
	size_t no;
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

static struct ar_digest *memory_of(struct autoroute *ar, const char *digest)
{
	struct ar_digest *d;

	for (size_t i = 0; i < ar->n; i++)
		if (strcmp(ar->d[i].digest, digest) == 0)
			return &ar->d[i];
	if (ar->n == ar->cap) {
		size_t cap = ar->cap ? ar->cap * 2 : 16;

		d = realloc(ar->d, cap * sizeof *d);
		if (!d)
			return NULL;
		ar->d = d;
		ar->cap = cap;
	}
	d = &ar->d[ar->n++];
	memset(d, 0, sizeof *d);
	snprintf(d->digest, sizeof d->digest, "%s", digest);
	return d;
}

/* The poll's hit ratio of k on the nodes, judged: true when it is below
 * min_hit_ratio for withdraw_after polls in a row (*pct: the last one). */
static bool ratio_low(struct plan *p, const struct cand *k, double *pct)
{
	struct ar_digest *m = memory_of(p->ar, k->digest);
	uint64_t dh, dm;

	if (!m)
		return false;
	if (!m->seen || k->hits < m->hits || k->misses < m->misses) {
		m->seen = true; /* first look, or a node restarted: start again */
		m->low_polls = 0;
	} else {
		dh = k->hits - m->hits;
		dm = k->misses - m->misses;
		if (dh + dm >= MIN_JUDGED) {
			*pct = 100.0 * (double)dh / (double)(dh + dm);
			m->low_polls = *pct < p->cfg->min_hit_ratio_pct ? m->low_polls + 1 : 0;
		}
	}
	m->hits = k->hits;
	m->misses = k->misses;
	return m->low_polls >= p->cfg->withdraw_after;
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
	double pct = 0;

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
	if (ratio_low(p, k, &pct)) {
		snprintf(buf, cap, "hit ratio %.1f%% on the nodes, below %d%% for %d polls", pct,
			 p->cfg->min_hit_ratio_pct, p->cfg->withdraw_after);
		return buf;
	}
	return NULL;
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
	if (s == AR_NONE || !budget_left(p))
		return;
	if (s == AR_WITHDRAWN && p->now >= at)
		drop_rule(p, o, "cooldown_over", "forget", "its cooldown is over: it may be routed again");
	else if (s == AR_WARMING && k && k->v == V_NOT)
		drop_rule(p, o, "digest_withdrawn", "stop warming", "not cacheable after all");
	else if (s == AR_WARMING && p->now - at >= p->cfg->warmup_ms)
		promote(p, o, reason);
	else if (s == AR_ROUTED && (why = withdraw_reason(p, o, at, buf, sizeof buf)))
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
		if (p->r.k[i].v == V_CACHEABLE && !own_rule_for(p, p->r.k[i].digest) &&
		    p->r.k[i].saving >= floor_us && p->r.k[i].saving >= share_us && p->r.k[i].saving > 0)
			best[n++] = &p->r.k[i];
	qsort(best, n, sizeof *best, by_saving);
	for (size_t i = 0; i < n && room > 0 && budget_left(p); i++, room--)
		route_one(p, best[i]);
	free(best);
}

/* ---- a cluster: one agent decides ---------------------------------------- */

/* With several ProxySQL instances in a cluster (runtime_proxysql_servers),
 * one agent per instance, only the agent of the first instance (by
 * hostname, then port) whose admin accepts the agent's login decides; the
 * others follow (cluster sync brings them the rules), and take over when
 * those before them stop answering. So two agents never write rules at the
 * same time from different statistics. true: this agent decides (no
 * cluster; its own instance comes first among the live ones; or its own
 * instance is not in the list, which is logged). */
static bool decides(struct plan *p, char *leader, size_t cap)
{
	const struct ha_dsn *me = p->c->dsn;
	MYSQL_RES *r;
	MYSQL_ROW row;
	char err[1200];
	bool mine = false, listed = false;

	r = sqlc_query(p->c, "SELECT hostname, port FROM runtime_proxysql_servers ORDER BY hostname, port",
		       err, sizeof err);
	if (!r || !me)
		return true;
	while (!mine && (row = mysql_fetch_row(r))) {
		struct ha_dsn peer = *me;
		struct sqlconn pc = { 0 };

		if (!row[0] || !row[1])
			continue;
		listed = true;
		if (strcmp(row[0], me->host) == 0 && atoi(row[1]) == me->port) {
			mine = true;
			break;
		}
		snprintf(peer.host, sizeof peer.host, "%s", row[0]);
		peer.port = atoi(row[1]);
		snprintf(peer.shown, sizeof peer.shown, "%s@%s:%d", me->user, row[0], peer.port);
		if (sqlc_open(&pc, &peer, p->cfg->connect_timeout_ms, err, sizeof err) == 0) {
			sqlc_close(&pc);
			snprintf(leader, cap, "%s:%d", row[0], peer.port);
			mysql_free_result(r);
			return false;
		}
	}
	mysql_free_result(r);
	if (listed && !mine && !p->ar->alone_warned) {
		ha_log("warning", "auto-route: this agent's ProxySQL admin %s:%d is not in "
		       "runtime_proxysql_servers as host:port: it decides alone", me->host, me->port);
		p->ar->alone_warned = true;
	}
	return true;
}

/* ---- one poll ------------------------------------------------------------ */

void autoroute_poll(const struct ha_config *cfg, struct sqlconn *c, struct autoroute *ar,
		    bool nodes_ok, int64_t now_ms)
{
	struct plan p = { .cfg = cfg, .c = c, .ar = ar, .now = now_ms };
	char err[1200], why[400], leader[300];

	if (!decides(&p, leader, sizeof leader)) {
		snprintf(why, sizeof why, "following the agent of ProxySQL %s (the first live instance of "
			 "the cluster decides)", leader);
		no_change(ar, why);
		return;
	}
	if (!nodes_ok) {
		no_change(ar, "a node is unreachable or not serving");
		return;
	}
	if (advise_rank(cfg, c, &p.r, err, sizeof err) ||
	    route_own_rules(cfg, c, &p.o, &p.no, err, sizeof err)) {
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
		route_new(&p);
		if (p.changes && !cfg->dry_run && px_load_save(c, "MYSQL QUERY RULES", true, err, sizeof err))
			ha_log("error", "auto-route: %s", err);
	}
	free(p.o);
	advise_free(&p.r);
}

void autoroute_free(struct autoroute *ar)
{
	free(ar->d);
	memset(ar, 0, sizeof *ar);
}
