/*
 * watch.c: `shoal-ha watch` (see watch.h). Each poll: ask every node
 * (nodes.c), decide per node (decide.c), then on the first reachable
 * ProxySQL admin set the nodes to take out OFFLINE_SOFT and the recovered
 * ones the agent had taken out back ONLINE, in mysql_servers, followed by
 * LOAD MYSQL SERVERS TO RUNTIME (not saved to disk: these are transient).
 * Nodes coming back are handled before nodes going out, and a node is
 * never taken out while no other server of the hostgroup is ONLINE with a
 * weight above 0 (another node or the fallback). A node someone else set to
 * another status is left alone.
 */
#include "ha/watch.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ha/alert.h"
#include "ha/autoroute.h"
#include "ha/decide.h"
#include "ha/nodes.h"
#include "ha/proxysql.h"
#include "ha/state.h"
#include "ha/util.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

struct poll {
	const struct ha_config *cfg;
	struct watch_state *st;
	struct node_sample s[HA_MAX_NODES];
	struct decision d[HA_MAX_NODES];
	struct px_server *srv;
	size_t nsrv;
	struct sqlconn c;
	int changed;
	int back, out;            /* nodes set ONLINE / OFFLINE_SOFT in this poll */
	int64_t now;
};

static struct px_server *server_of(struct poll *p, const struct ha_node *n)
{
	for (size_t i = 0; i < p->nsrv; i++)
		if (strcmp(p->srv[i].host, n->host) == 0 && p->srv[i].port == n->data_port)
			return &p->srv[i];
	return NULL;
}

static bool others_serving(const struct poll *p, const struct px_server *me)
{
	for (size_t i = 0; i < p->nsrv; i++)
		if (&p->srv[i] != me && strcmp(p->srv[i].status, "ONLINE") == 0 && p->srv[i].weight > 0)
			return true;
	return false;
}

static int set_status(struct poll *p, struct px_server *srv, const char *status)
{
	struct sbuf_s q = { 0 };
	char err[1200];
	long long rc;

	sb_printf(&q, "UPDATE mysql_servers SET status='%s' WHERE hostgroup_id=%d AND hostname=",
		  status, p->cfg->hostgroup);
	sb_quote(&q, srv->host);
	sb_printf(&q, " AND port=%d", srv->port);
	rc = q.oom ? -1 : sqlc_exec(&p->c, q.p, err, sizeof err);
	sb_free(&q);
	if (rc < 0) {
		ha_log("error", "%s", q.oom ? "out of memory" : err);
		return -1;
	}
	snprintf(srv->status, sizeof srv->status, "%s", status);
	p->changed++;
	if (strcmp(status, "ONLINE") == 0)
		p->back++;
	else
		p->out++;
	return 0;
}

static void describe(const struct poll *p, int i, char *buf, size_t cap)
{
	const struct decision *d = &p->d[i];

	if (d->want == OUT_FLAT || d->flat)
		snprintf(buf, cap, "hit counter flat for %.1f s while the query counter grew by %llu",
			 d->span_ms / 1000.0, (unsigned long long)d->queries_delta);
	else
		snprintf(buf, cap, "%s", p->s[i].err[0] ? p->s[i].err : "not serving");
}

static void notify(const struct poll *p, int i, const char *event, const char *action,
		 const char *detail)
{
	struct alert a = { event, p->cfg->nodes[i].name, action, detail, p->d[i].hits_delta,
			   p->d[i].queries_delta, p->d[i].span_ms, NULL };

	alert_send(p->cfg, &a);
}

/* A node that may come back. */
static void bring_back(struct poll *p, int i)
{
	struct node_state *ns = &p->st->nodes[i];
	struct px_server *srv = server_of(p, &p->cfg->nodes[i]);
	const char *why = p->d[i].retry ? "back on trial after flat_retry_ms" : "recovered";

	if (p->d[i].want != OUT_NONE)
		return;
	ns->kept = false;
	if (ns->out == OUT_NONE || !srv)
		return;
	if (strcmp(srv->status, "OFFLINE_SOFT") == 0) {
		if (set_status(p, srv, "ONLINE"))
			return;
		notify(p, i, "node_online", "ONLINE", why);
	}
	ns->out = OUT_NONE;
	if (p->d[i].retry && ns->n > 1) { /* the window starts again */
		ns->s[0] = ns->s[ns->n - 1];
		ns->n = 1;
	}
}

/* A node that should be out. */
static void take_out(struct poll *p, int i)
{
	struct node_state *ns = &p->st->nodes[i];
	struct px_server *srv = server_of(p, &p->cfg->nodes[i]);
	int want = p->d[i].want;
	char detail[600];

	if (want == OUT_NONE || !srv)
		return;
	if (ns->out != OUT_NONE && strcmp(srv->status, "OFFLINE_SOFT") == 0) {
		ns->out = want; /* still out; the reason may have changed */
		return;
	}
	ns->out = OUT_NONE;
	if (strcmp(srv->status, "ONLINE") != 0)
		return; /* someone else's status: left alone */
	describe(p, i, detail, sizeof detail);
	if (!others_serving(p, srv)) {
		if (!ns->kept)
			notify(p, i, want == OUT_FLAT ? "flat_hit_counter" : "node_unhealthy",
			       "kept ONLINE (last serving server of the hostgroup, no fallback)",
			       detail);
		ns->kept = true;
		return;
	}
	if (set_status(p, srv, "OFFLINE_SOFT"))
		return;
	ns->out = want;
	ns->out_since_ms = p->now;
	ns->kept = false;
	notify(p, i, want == OUT_FLAT ? "flat_hit_counter" : "node_unhealthy", "OFFLINE_SOFT", detail);
}

static void poll_nodes(struct poll *p, int *bad)
{
	const struct ha_config *cfg = p->cfg;

	*bad = 0;
	for (int i = 0; i < cfg->n_nodes; i++) {
		struct node_sample *s = &p->s[i];

		node_poll(cfg, &cfg->nodes[i], s);
		if (!s->reachable)
			ha_log("warning", "node %s unreachable: %s", cfg->nodes[i].name, s->err);
		else if (!s->healthy)
			ha_log("warning", "node %s not serving: %s", cfg->nodes[i].name, s->err);
		else if (!s->have_counters)
			ha_log("warning", "node %s: no counters: %s", cfg->nodes[i].name, s->err);
		if (!s->healthy)
			(*bad)++;
		decide(cfg, &p->st->nodes[i], s, p->now, &p->d[i]);
	}
}

/* LOAD the changed statuses. Idle connections of a node coming back were
 * made to its previous process, which closed them: they are dropped first,
 * on every admin (cluster peers take the change by sync). After a node went
 * out, ProxySQL is made to close its idle connections at once, so that a
 * draining node sees them go. */
static int apply_changes(struct poll *p, char *err, size_t errlen)
{
	if (p->back)
		px_drop_idle_all(p->cfg);
	if (px_load_save(&p->c, "MYSQL SERVERS", false, err, errlen))
		return -1;
	return p->out ? px_drop_idle(&p->c, err, errlen) : 0;
}

/* Every node answered, serves and gave its counters (auto-route decides
 * nothing otherwise). */
static bool nodes_all_well(const struct poll *p)
{
	for (int i = 0; i < p->cfg->n_nodes; i++)
		if (!p->s[i].healthy || !p->s[i].have_counters)
			return false;
	return true;
}

/* One poll; returns an exit status. */
static int poll_once(const struct ha_config *cfg, struct watch_state *st, struct autoroute *ar)
{
	struct poll *p = calloc(1, sizeof *p);
	char err[1200];
	int bad, rc = HA_EXIT_OK;

	if (!p)
		return HA_EXIT_FAIL;
	p->cfg = cfg;
	p->st = st;
	p->now = ha_now_ms();
	poll_nodes(p, &bad);
	if (px_connect(cfg, &p->c, err, sizeof err)) {
		ha_log("error", "%s", err);
		free(p);
		return HA_EXIT_PROXYSQL;
	}
	if (px_servers(&p->c, cfg->hostgroup, &p->srv, &p->nsrv, err, sizeof err) == 0) {
		for (int i = 0; i < cfg->n_nodes; i++)
			if (!server_of(p, &cfg->nodes[i]))
				ha_log("warning", "node %s is not in hostgroup %d of mysql_servers (run "
				       "shoal-ha register)", cfg->nodes[i].name, cfg->hostgroup);
		for (int i = 0; i < cfg->n_nodes; i++)
			bring_back(p, i);
		for (int i = 0; i < cfg->n_nodes; i++)
			take_out(p, i);
		if (p->changed && apply_changes(p, err, sizeof err))
			ha_log("error", "%s", err), rc = HA_EXIT_FAIL;
		if (cfg->auto_route)
			autoroute_poll(cfg, &p->c, ar, nodes_all_well(p), p->now);
	} else {
		ha_log("error", "%s", err);
		rc = HA_EXIT_FAIL;
	}
	sqlc_close(&p->c);
	free(p->srv);
	free(p);
	return rc == HA_EXIT_OK && bad ? HA_EXIT_NODE : rc;
}

static void nap(int ms)
{
	for (int left = ms; left > 0 && !stop_flag; left -= 100) {
		struct timespec ts = { 0, (left > 100 ? 100 : left) * 1000000L };

		nanosleep(&ts, NULL);
	}
}

static int save(const struct ha_config *cfg, const struct watch_state *st)
{
	char err[1200];

	if (!cfg->state_file[0] || state_save(cfg->state_file, st, err, sizeof err) == 0)
		return 0;
	ha_log("error", "%s", err);
	return -1;
}

int cmd_watch(const struct ha_config *cfg)
{
	struct watch_state *st = malloc(sizeof *st);
	struct autoroute ar = { 0 };
	struct sigaction sa;
	char err[1200];
	int rc;

	if (!st)
		return HA_EXIT_FAIL;
	if (cfg->n_nodes == 0 || cfg->n_args || (cfg->once && !cfg->state_file[0])) {
		fprintf(stderr, "shoal-ha watch: %s\n", cfg->n_args ? "takes no arguments" :
			cfg->n_nodes ? "--once needs a state_file" : "no nodes configured (--nodes)");
		free(st);
		return HA_EXIT_USAGE;
	}
	if (state_load(cfg->state_file, cfg, st, err, sizeof err)) {
		fprintf(stderr, "shoal-ha watch: %s\n", err);
		free(st);
		return HA_EXIT_FAIL;
	}
	ar.st = st;
	if (cfg->once) {
		rc = poll_once(cfg, st, &ar);
		if (save(cfg, st) && rc == HA_EXIT_OK)
			rc = HA_EXIT_FAIL;
		autoroute_free(&ar);
		free(st);
		return rc;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL)) {
		fprintf(stderr, "shoal-ha watch: cannot set signal handlers\n");
		free(st);
		return HA_EXIT_FAIL;
	}
	ha_log("info", "watching %d node%s, hostgroup %d, every %d ms%s", cfg->n_nodes,
	       cfg->n_nodes == 1 ? "" : "s", cfg->hostgroup, cfg->interval_ms,
	       !cfg->auto_route ? "" : cfg->dry_run ? "; auto-route, dry run" : "; auto-route");
	while (!stop_flag) {
		poll_once(cfg, st, &ar);
		save(cfg, st);
		nap(cfg->interval_ms);
	}
	ha_log("info", "stopped");
	autoroute_free(&ar);
	free(st);
	return HA_EXIT_OK;
}
