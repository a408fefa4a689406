/*
 * decide.c: watch's per-node verdict (see decide.h).
 *
 * Samples: each poll with counters appends (t, hits, queries). The oldest
 * kept sample is the newest one at least flat_window_ms old, so the first
 * sample spans at least the window once the node has been watched that
 * long. Counters that went back (a restarted node) clear the history.
 * Flat: over that span, hits did not move and queries grew by at least
 * flat_min_queries. flat_window_ms = 0 turns the check off. A node that
 * says it is warming (/health "warming": its snapshot's binlog replay or
 * refill) is never flat: its samples start once it has warmed.
 */
#include "ha/decide.h"

#include <string.h>

static void add_sample(const struct ha_config *cfg, struct node_state *ns,
		       const struct node_sample *s, int64_t now)
{
	int keep = 0;

	if (ns->n && (s->hits < ns->s[ns->n - 1].hits || s->queries < ns->s[ns->n - 1].queries ||
		      now < ns->s[ns->n - 1].t_ms))
		ns->n = 0;
	if (ns->n == HA_MAX_SAMPLES) {
		memmove(ns->s, ns->s + 1, sizeof(ns->s[0]) * (HA_MAX_SAMPLES - 1));
		ns->n--;
	}
	ns->s[ns->n++] = (struct sample){ now, s->hits, s->queries };
	/* drop what is older than the newest sample at least a window old */
	for (int i = 0; i < ns->n; i++)
		if (now - ns->s[i].t_ms >= cfg->flat_window_ms)
			keep = i;
	if (keep) {
		memmove(ns->s, ns->s + keep, sizeof(ns->s[0]) * (size_t)(ns->n - keep));
		ns->n -= keep;
	}
}

static void flat_check(const struct ha_config *cfg, const struct node_state *ns,
		       struct decision *d)
{
	const struct sample *a = &ns->s[0], *b = &ns->s[ns->n - 1];

	if (ns->n < 2)
		return;
	d->span_ms = b->t_ms - a->t_ms;
	d->hits_delta = b->hits - a->hits;
	d->queries_delta = b->queries - a->queries;
	d->flat = cfg->flat_window_ms > 0 && d->span_ms >= cfg->flat_window_ms &&
		  d->hits_delta == 0 && d->queries_delta >= (uint64_t)cfg->flat_min_queries;
}

void decide(const struct ha_config *cfg, struct node_state *ns, const struct node_sample *s,
	    int64_t now_ms, struct decision *d)
{
	memset(d, 0, sizeof *d);
	/* a warming node's hits are still to come: its history starts after */
	if (s->warming) {
		ns->n = 0;
		d->warming = true;
	} else if (s->have_counters) {
		add_sample(cfg, ns, s, now_ms);
		flat_check(cfg, ns, d);
	}
	if (!s->healthy) {
		d->want = OUT_HEALTH;
		return;
	}
	if (ns->out == OUT_FLAT) {
		if (now_ms - ns->out_since_ms >= cfg->flat_retry_ms) {
			d->retry = true;
			d->want = OUT_NONE;
		} else
			d->want = OUT_FLAT;
		return;
	}
	d->want = d->flat ? OUT_FLAT : OUT_NONE;
}
