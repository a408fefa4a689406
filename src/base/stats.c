/*
 * stats.c: storage for the node-wide counters declared in stats.h.
 */
#include "base/stats.h"

struct shoal_stats g_stats;
