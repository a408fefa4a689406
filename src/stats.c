/*
 * stats.c: storage for the node-wide counters declared in stats.h.
 */
#include "stats.h"

struct shoal_stats g_stats;
