/*
 * healthcheck.h: `shoal --health`, the node's own health probe for Docker's
 * HEALTHCHECK, systemd and scripts: it reads the same settings as the node
 * (file, environment, flags) and asks the node's /health where
 * METRICS_ADDRESS says it listens.
 */
#ifndef SHOAL_HEALTHCHECK_H
#define SHOAL_HEALTHCHECK_H

#include "config/config.h"

/* The whole probe (connect, request, answer) must fit in this. */
#define HEALTHCHECK_TIMEOUT_MS 2000

/* Where to probe a node listening on host: a wildcard address (0.0.0.0,
 * ::, empty) becomes the loopback of its family; anything else stays.
 * Returns a pointer to host or to a constant string. */
const char *healthcheck_target(const char *host);

/* Probe http://METRICS_ADDRESS/health with a raw HTTP/1.0 GET; 0 when the
 * node answers 200, 1 otherwise, with one line on stderr that says why (and
 * one line on stdout when healthy). */
int healthcheck_run(const struct shoal_addr *metrics, int timeout_ms);

#endif
