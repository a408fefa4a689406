/*
 * register.h: `shoal-ha register`: put the nodes and the fallback server
 * into the cache hostgroup of ProxySQL's mysql_servers (idempotent).
 */
#ifndef SHOAL_HA_REGISTER_H
#define SHOAL_HA_REGISTER_H

#include "ha/config.h"

/* Returns an exit status (util.h). */
int cmd_register(const struct ha_config *cfg);

#endif
