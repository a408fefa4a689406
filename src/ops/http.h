/*
 * http.h: the node's HTTP endpoint (libmicrohttpd, on its own thread):
 * GET/HEAD /metrics (Prometheus text), /health (JSON) and /ready. It reads
 * only g_stats, health and the metrics providers; it never sees the
 * configuration's secrets.
 */
#ifndef SHOAL_HTTP_H
#define SHOAL_HTTP_H

#include <stddef.h>

#include "config/config.h"

#define HTTP_DEFAULT_DOWN_AFTER_MS 3000

/* How long the upstream may be down before /health and /ready answer 503
 * (default HTTP_DEFAULT_DOWN_AFTER_MS). Any thread, any time. */
void http_set_down_after_ms(int ms);

/* Listen on addr (IPv4 or IPv6 host, or a name) and serve on a new thread.
 * Port 0 means disabled: returns 0 and starts nothing. Returns -1 with a
 * message in err when the address cannot be used. Call once, from main. */
int http_start(const struct shoal_addr *addr, char *err, size_t errlen);

/* Stop serving and join the thread (no-op if not started). */
void http_stop(void);

#endif
