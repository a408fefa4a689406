/*
 * watch.h: `shoal-ha watch [--once]`: poll the nodes' /health and /metrics
 * and keep ProxySQL's mysql_servers status in line (OFFLINE_SOFT / ONLINE).
 */
#ifndef SHOAL_HA_WATCH_H
#define SHOAL_HA_WATCH_H

#include "ha/config.h"

/* Returns an exit status (util.h). */
int cmd_watch(const struct ha_config *cfg);

#endif
