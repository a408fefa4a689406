/*
 * status.h: `shoal-ha status [--html [FILE]]`: what the agent manages, now:
 * each node (its row in ProxySQL's runtime, /health, counters, whether
 * `watch` took it out) and each of the agent's routing rules (digest, text,
 * ProxySQL's hits for it, the nodes' hit ratio for it), as text or as one
 * self-contained HTML page. docs/ha-agent.md.
 */
#ifndef SHOAL_HA_STATUS_H
#define SHOAL_HA_STATUS_H

#include <stddef.h>

#include "ha/config.h"
#include "ha/util.h"

int cmd_status(const struct ha_config *cfg);

/* Append s to b with &, <, >, " and ' escaped for HTML text and attributes. */
void status_html_escape(struct sbuf_s *b, const char *s);

#endif
