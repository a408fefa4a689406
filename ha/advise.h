/*
 * advise.h: `shoal-ha advise [--apply]`: rank ProxySQL's digests by total
 * time, ask the nodes which are cacheable, print the routing that saves
 * the most upstream time, and apply it with --apply.
 */
#ifndef SHOAL_HA_ADVISE_H
#define SHOAL_HA_ADVISE_H

#include "ha/config.h"

/* Returns an exit status (util.h). */
int cmd_advise(const struct ha_config *cfg);

#endif
