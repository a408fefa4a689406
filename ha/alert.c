/*
 * alert.c: watch's alerts (see alert.h). The webhook gets one JSON object:
 *   {"source":"shoal-ha","event":..,"node":..,"hostgroup":..,"action":..,
 *    "detail":..,"hits_delta":..,"queries_delta":..,"window_ms":..,
 *    "time":"2026-01-01T10:00:00Z"}
 * and, for auto-route's decisions, "digest" (with "node" empty).
 * A 2xx answer is success; anything else is logged as a failed delivery.
 */
#include "ha/alert.h"

#include <stdlib.h>
#include <time.h>

#include <jansson.h>

#include "ha/http.h"
#include "ha/util.h"

int alert_send(const struct ha_config *cfg, const struct alert *a)
{
	struct http_reply r;
	char ts[32], err[600];
	time_t t = time(NULL);
	struct tm tm;
	json_t *j;
	char *body;
	int rc = 0;

	if (a->digest)
		ha_log("ALERT", "%s: digest %s: %s: %s", a->event, a->digest, a->action, a->detail);
	else
		ha_log("ALERT", "%s: node %s: %s: %s", a->event, a->node, a->action, a->detail);
	if (!cfg->webhook_url[0])
		return 0;
	if (!gmtime_r(&t, &tm) || !strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm))
		ts[0] = '\0';
	j = json_pack("{s:s,s:s,s:s,s:i,s:s,s:s,s:I,s:I,s:I,s:s}", "source", "shoal-ha", "event",
		      a->event, "node", a->node, "hostgroup", cfg->hostgroup, "action", a->action,
		      "detail", a->detail, "hits_delta", (json_int_t)a->hits_delta, "queries_delta",
		      (json_int_t)a->queries_delta, "window_ms", (json_int_t)a->window_ms, "time", ts);
	if (j && a->digest && json_object_set_new(j, "digest", json_string(a->digest)) != 0) {
		json_decref(j);
		j = NULL;
	}
	body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!body) {
		ha_log("warning", "webhook: out of memory");
		return -1;
	}
	if (http_request(cfg->webhook_url, body, cfg->http_timeout_ms, &r, err, sizeof err)) {
		ha_log("warning", "webhook not delivered: %s", err);
		rc = -1;
	} else {
		if (r.status < 200 || r.status > 299) {
			ha_log("warning", "webhook %s answered HTTP %ld", cfg->webhook_url, r.status);
			rc = -1;
		}
		http_reply_free(&r);
	}
	free(body);
	return rc;
}
