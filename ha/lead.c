/*
 * lead.c: the agent that decides in a ProxySQL cluster (see lead.h): its
 * heartbeat in its own instance's scheduler table, and the walk down
 * runtime_proxysql_servers to the first instance that answers with a live
 * agent.
 */
#include "ha/lead.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ha/util.h"

long long lead_parse_beat(const char *mark, const char *comment)
{
	size_t n = strlen(mark);
	const char *key = " agent heartbeat seq=";
	char *end;
	long long seq;

	if (!comment || strncmp(comment, mark, n) != 0 || strncmp(comment + n, key, strlen(key)) != 0)
		return -1;
	seq = strtoll(comment + n + strlen(key), &end, 10);
	return *end == '\0' && seq >= 0 ? seq : -1;
}

/* The id of this instance's heartbeat row (*found), and the largest id of
 * its scheduler table. 0, or -1 with err. */
static int find_beat(const struct ha_config *cfg, struct sqlconn *c, long long *id, bool *found,
		     long long *max_id, char *err, size_t errlen)
{
	MYSQL_RES *r = sqlc_query(c, "SELECT id, comment FROM scheduler", err, errlen);
	MYSQL_ROW row;

	*found = false;
	*max_id = 0;
	if (!r)
		return -1;
	while ((row = mysql_fetch_row(r))) {
		long long v = row[0] ? atoll(row[0]) : 0;

		if (v > *max_id)
			*max_id = v;
		if (!*found && lead_parse_beat(cfg->rule_comment, row[1]) >= 0) {
			*id = v;
			*found = true;
		}
	}
	mysql_free_result(r);
	return 0;
}

/* This agent's heartbeat: its row's seq moved on, or the row made (the next
 * free id; inactive, in memory only: the agent never loads or saves the
 * scheduler). */
static void beat(const struct ha_config *cfg, struct sqlconn *c, struct lead *l)
{
	char sql[700], err[1200];
	long long id = 0, max_id = 0;
	bool found;
	int rc;

	l->seq++;
	rc = find_beat(cfg, c, &id, &found, &max_id, err, sizeof err);
	if (rc == 0 && found)
		snprintf(sql, sizeof sql, "UPDATE scheduler SET comment='%s agent heartbeat seq=%lld' WHERE "
			 "id=%lld", cfg->rule_comment, l->seq, id);
	else
		snprintf(sql, sizeof sql, "INSERT INTO scheduler (id, active, interval_ms, filename, comment) "
			 "VALUES (%lld, 0, 100000000, 'shoal-ha', '%s agent heartbeat seq=%lld')", max_id + 1,
			 cfg->rule_comment, l->seq);
	if (rc == 0)
		rc = sqlc_exec(c, sql, err, sizeof err) < 0 ? -1 : 0;
	if (rc < 0 && !l->beat_warned)
		ha_log("warning", "auto-route: cannot keep this agent's heartbeat in its ProxySQL (the "
		       "other instances' agents then take it for gone): %s", err);
	l->beat_warned = rc < 0;
}

static struct lead_peer *peer_of(struct lead *l, const char *where)
{
	struct lead_peer *p;

	for (int i = 0; i < l->n_peers; i++)
		if (strcmp(l->peers[i].where, where) == 0)
			return &l->peers[i];
	if (l->n_peers == LEAD_MAX_PEERS)
		return NULL;
	p = &l->peers[l->n_peers++];
	memset(p, 0, sizeof *p);
	snprintf(p->where, sizeof p->where, "%s", where);
	p->seq = -2;
	return p;
}

/* Whether the agent beside the instance on pc is alive: a heartbeat that
 * moved within leader_timeout_ms (first seen: alive until it stays). */
static bool agent_alive(const struct ha_config *cfg, struct sqlconn *pc, struct lead *l,
			const char *where, int64_t now)
{
	char sql[400], err[1200];
	struct lead_peer *p = peer_of(l, where);
	long long seq = -1;
	MYSQL_RES *r;
	MYSQL_ROW row;

	snprintf(sql, sizeof sql, "SELECT comment FROM scheduler WHERE active=0 AND substr(comment, 1, %zu) = "
		 "'%s agent heartbeat seq='", strlen(cfg->rule_comment) + 21, cfg->rule_comment);
	if (!p || !(r = sqlc_query(pc, sql, err, sizeof err)))
		return false;
	while ((row = mysql_fetch_row(r)))
		if (seq < 0)
			seq = lead_parse_beat(cfg->rule_comment, row[0]);
	mysql_free_result(r);
	if (seq < 0)
		return false;             /* no agent beside it */
	if (seq != p->seq) {
		p->seq = seq;
		p->moved_ms = now;
	}
	return now - p->moved_ms <= cfg->leader_timeout_ms;
}

bool lead_decides(const struct ha_config *cfg, struct sqlconn *c, struct lead *l, int64_t now_ms,
		  char *leader, size_t cap)
{
	const struct ha_dsn *me = c->dsn;
	MYSQL_RES *r;
	MYSQL_ROW row;
	char err[1200];
	bool mine = false, listed = false, follow = false;

	if (!l->seq)
		l->seq = now_ms;  /* a restarted agent's beats differ from its earlier ones */
	if (!cfg->dry_run)
		beat(cfg, c, l);
	r = sqlc_query(c, "SELECT hostname, port FROM runtime_proxysql_servers ORDER BY hostname, port",
		       err, sizeof err);
	if (!r || !me)
		return true;
	while (!mine && !follow && (row = mysql_fetch_row(r))) {
		struct ha_dsn peer = *me;
		struct sqlconn pc = { 0 };
		char where[300];

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
		snprintf(where, sizeof where, "%s:%d", row[0], peer.port);
		if (sqlc_open(&pc, &peer, cfg->connect_timeout_ms, err, sizeof err) == 0) {
			follow = agent_alive(cfg, &pc, l, where, now_ms);
			sqlc_close(&pc);
			if (follow)
				snprintf(leader, cap, "%s", where);
		}
	}
	mysql_free_result(r);
	if (follow)
		return false;
	if (listed && !mine && !l->alone_warned) {
		ha_log("warning", "auto-route: this agent's ProxySQL admin %s:%d is not in "
		       "runtime_proxysql_servers as host:port: it decides alone", me->host, me->port);
		l->alone_warned = true;
	}
	return true;
}
