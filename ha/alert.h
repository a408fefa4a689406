/*
 * alert.h: watch's alerts: a log line, and a JSON POST to webhook_url.
 */
#ifndef SHOAL_HA_ALERT_H
#define SHOAL_HA_ALERT_H

#include <stdint.h>

#include "ha/config.h"

struct alert {
	const char *event;     /* flat_hit_counter, node_unhealthy, node_online; auto-route's:
				* digest_warming, digest_routed, digest_withdrawn, cooldown_over */
	const char *node;      /* host:data_port ("" for a digest's) */
	const char *action;    /* OFFLINE_SOFT, ONLINE, kept ONLINE (last serving node) */
	const char *detail;    /* human-readable reason */
	uint64_t hits_delta, queries_delta;
	int64_t window_ms;
	const char *digest;    /* auto-route: the digest decided on (NULL: a node's alert) */
};

/* Log it and post it; returns 0, or -1 when the webhook failed (logged). */
int alert_send(const struct ha_config *cfg, const struct alert *a);

#endif
