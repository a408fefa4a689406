/*
 * status_internal.h: what status.c (the sampler and its ring) gives
 * status_json.c (the /status.json renderer). Not for other modules.
 */
#ifndef SHOAL_STATUS_INTERNAL_H
#define SHOAL_STATUS_INTERNAL_H

#include <stddef.h>
#include <time.h>

#include "ops/status_ring.h"

/* When sampling started (the node's start, near enough). */
time_t status_started_at(void);
/* Copy the newest min(cap, held) samples, oldest first, under the ring's
 * lock; returns how many. */
size_t status_copy_series(struct status_sample *out, size_t cap);

#endif
