/*
 * http_access.h: who may read the status page and /status.json
 * (docs/status-page.md, "Access"): a loopback peer always; any other peer
 * only with HTTP basic auth carrying the admin login (admin_user,
 * admin_password; the password may be stored as a mysql_native_password
 * "*HEX" hash), and never while that login is the default admin/admin: the
 * admin port's rule. /metrics, /health and /ready are not guarded.
 */
#ifndef SHOAL_HTTP_ACCESS_H
#define SHOAL_HTTP_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* Is addr a loopback address (127.0.0.0/8, ::1, ::ffff:127.x.y.z)? */
bool http_peer_is_loopback(const struct sockaddr *addr);

/* May a peer that is not on loopback, sending this Authorization header
 * (NULL when none), read the page? Constant-time in the password. */
bool http_basic_auth_ok(const char *authorization);

#endif
