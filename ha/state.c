/*
 * state.c: the watch state file (see state.h), JSON through jansson:
 *   {"version":1,"nodes":{"host:port":{"out":"none|health|flat",
 *    "out_since_ms":N,"kept":false,"samples":[[t_ms,hits,queries],...]}},
 *    "decisions":[[t_ms,event,digest,action,detail],...],
 *    "judged":[[digest,count,errors,node_errors,win_hits,win_misses,
 *               low_windows,error_polls],...]}
 */
#include "ha/state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "ha/util.h"

static const char *out_names[] = { "none", "health", "flat" };

const char *state_out_name(int out)
{
	return out >= 0 && out <= OUT_FLAT ? out_names[out] : "none";
}

static void load_node(struct node_state *ns, json_t *j)
{
	const char *out = json_string_value(json_object_get(j, "out"));
	json_t *samples = json_object_get(j, "samples"), *v;
	size_t i;

	for (int k = 0; out && k <= OUT_FLAT; k++)
		if (strcmp(out, out_names[k]) == 0)
			ns->out = k;
	ns->out_since_ms = json_integer_value(json_object_get(j, "out_since_ms"));
	ns->kept = json_is_true(json_object_get(j, "kept"));
	json_array_foreach(samples, i, v) {
		if (ns->n == HA_MAX_SAMPLES || json_array_size(v) != 3)
			break;
		ns->s[ns->n].t_ms = json_integer_value(json_array_get(v, 0));
		ns->s[ns->n].hits = (uint64_t)json_integer_value(json_array_get(v, 1));
		ns->s[ns->n].queries = (uint64_t)json_integer_value(json_array_get(v, 2));
		ns->n++;
	}
}

void state_note_decision(struct watch_state *st, int64_t t_ms, const char *event,
			 const char *digest, const char *action, const char *detail)
{
	struct decision_rec *d;

	if (st->n_decisions == HA_MAX_DECISIONS) {
		memmove(st->decisions, st->decisions + 1, sizeof st->decisions[0] * (HA_MAX_DECISIONS - 1));
		st->n_decisions--;
	}
	d = &st->decisions[st->n_decisions++];
	d->t_ms = t_ms;
	snprintf(d->event, sizeof d->event, "%s", event ? event : "");
	snprintf(d->digest, sizeof d->digest, "%s", digest ? digest : "");
	snprintf(d->action, sizeof d->action, "%s", action ? action : "");
	snprintf(d->detail, sizeof d->detail, "%s", detail ? detail : "");
}

static void load_decisions(struct watch_state *st, json_t *a)
{
	json_t *v;
	size_t i;

	json_array_foreach(a, i, v) {
		if (json_array_size(v) != 5)
			continue;
		state_note_decision(st, json_integer_value(json_array_get(v, 0)),
				    json_string_value(json_array_get(v, 1)),
				    json_string_value(json_array_get(v, 2)),
				    json_string_value(json_array_get(v, 3)),
				    json_string_value(json_array_get(v, 4)));
	}
}

static json_t *decisions_json(const struct watch_state *st)
{
	json_t *a = json_array();

	for (int i = 0; a && i < st->n_decisions; i++) {
		const struct decision_rec *d = &st->decisions[i];

		if (json_array_append_new(a, json_pack("[I,s,s,s,s]", (json_int_t)d->t_ms, d->event,
						       d->digest, d->action, d->detail))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static void load_judged(struct watch_state *st, json_t *a)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v) {
		struct judged_digest *j = &st->judged[st->n_judged];
		const char *d = json_string_value(json_array_get(v, 0));

		if (st->n_judged == HA_MAX_JUDGED || json_array_size(v) != 8 || !d || strlen(d) != 18)
			continue;
		memcpy(j->digest, d, 19);
		j->count = (uint64_t)json_integer_value(json_array_get(v, 1));
		j->errors = (uint64_t)json_integer_value(json_array_get(v, 2));
		j->node_errors = (uint64_t)json_integer_value(json_array_get(v, 3));
		j->win_hits = (uint64_t)json_integer_value(json_array_get(v, 4));
		j->win_misses = (uint64_t)json_integer_value(json_array_get(v, 5));
		j->low_windows = (int)json_integer_value(json_array_get(v, 6));
		j->error_polls = (int)json_integer_value(json_array_get(v, 7));
		st->n_judged++;
	}
}

static json_t *judged_json(const struct watch_state *st)
{
	json_t *a = json_array();

	for (int i = 0; a && i < st->n_judged; i++) {
		const struct judged_digest *j = &st->judged[i];

		if (json_array_append_new(a, json_pack("[s,I,I,I,I,I,i,i]", j->digest, (json_int_t)j->count,
						       (json_int_t)j->errors, (json_int_t)j->node_errors,
						       (json_int_t)j->win_hits, (json_int_t)j->win_misses,
						       j->low_windows, j->error_polls))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

int state_load(const char *path, const struct ha_config *cfg, struct watch_state *st, char *err,
	       size_t errlen)
{
	json_error_t je;
	json_t *root, *nodes;

	memset(st, 0, sizeof *st);
	st->n = cfg->n_nodes;
	for (int i = 0; i < cfg->n_nodes; i++)
		snprintf(st->nodes[i].name, sizeof st->nodes[i].name, "%s", cfg->nodes[i].name);
	if (!path || !*path || access(path, F_OK) != 0)
		return 0;
	root = json_load_file(path, 0, &je);
	if (!root)
		return ha_fail(err, errlen, "state file %s is unreadable: %s (line %d); delete it to "
			       "start afresh", path, je.text, je.line);
	nodes = json_object_get(root, "nodes");
	for (int i = 0; i < st->n; i++) {
		json_t *j = json_object_get(nodes, st->nodes[i].name);

		if (json_is_object(j))
			load_node(&st->nodes[i], j);
	}
	load_decisions(st, json_object_get(root, "decisions"));
	load_judged(st, json_object_get(root, "judged"));
	json_decref(root);
	return 0;
}

static json_t *node_json(const struct node_state *ns)
{
	json_t *samples = json_array(), *j;

	for (int k = 0; samples && k < ns->n; k++)
		if (json_array_append_new(samples, json_pack("[I,I,I]", (json_int_t)ns->s[k].t_ms,
							     (json_int_t)ns->s[k].hits,
							     (json_int_t)ns->s[k].queries))) {
			json_decref(samples);
			return NULL;
		}
	if (!samples)
		return NULL;
	j = json_pack("{s:s,s:I,s:b,s:o}", "out", state_out_name(ns->out), "out_since_ms",
		      (json_int_t)ns->out_since_ms, "kept", ns->kept, "samples", samples);
	return j;
}

int state_save(const char *path, const struct watch_state *st, char *err, size_t errlen)
{
	json_t *root = json_pack("{s:i,s:{}}", "version", 1, "nodes"), *nodes;
	char tmp[1100];
	int rc = 0;

	if (!root)
		return ha_fail(err, errlen, "out of memory");
	nodes = json_object_get(root, "nodes");
	for (int i = 0; i < st->n; i++)
		if (json_object_set_new(nodes, st->nodes[i].name, node_json(&st->nodes[i])))
			rc = ha_fail(err, errlen, "out of memory");
	if (json_object_set_new(root, "decisions", decisions_json(st)) ||
	    json_object_set_new(root, "judged", judged_json(st)))
		rc = ha_fail(err, errlen, "out of memory");
	snprintf(tmp, sizeof tmp, "%s", path);
	if (strrchr(tmp, '/') && strrchr(tmp, '/') != tmp) { /* create the directory if need be */
		*strrchr(tmp, '/') = '\0';
		if (mkdir(tmp, 0750) != 0 && errno != EEXIST)
			rc = ha_fail(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
	}
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	if (rc == 0 && json_dump_file(root, tmp, JSON_COMPACT) != 0)
		rc = ha_fail(err, errlen, "cannot write state file %s: %s", tmp, strerror(errno));
	if (rc == 0 && rename(tmp, path) != 0) {
		rc = ha_fail(err, errlen, "cannot replace state file %s: %s", path, strerror(errno));
		unlink(tmp);
	}
	json_decref(root);
	return rc;
}
