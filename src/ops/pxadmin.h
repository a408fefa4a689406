/*
 * pxadmin.h: the node's optional link to ProxySQL's admin interface
 * (setting proxysql_admin). With it the node takes its own mysql_servers
 * rows out of rotation (OFFLINE_SOFT) when it starts to drain, and puts them
 * back (ONLINE) when it starts, so that ProxySQL stops sending it work before
 * it closes a connection (docs/operations.md, "Drain").
 *
 * The statements run on threads of their own, one per admin, so that a slow
 * or unreachable ProxySQL never blocks an event loop. Their progress is an
 * atomic counter read by the drain (drain.c).
 */
#ifndef SHOAL_PXADMIN_H
#define SHOAL_PXADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

/* Start setting this node's rows to status ("OFFLINE_SOFT" or "ONLINE") on
 * every admin. Going ONLINE, an admin that cannot be reached is tried again
 * every 2 s until it answers or the node drains. Returns the number of
 * admins being updated (0 when not enabled), or -1 if a thread could not be
 * started (logged). */
int pxadmin_set_status(const char *status);

/* Admins still being updated by the last pxadmin_set_status(). */
int pxadmin_pending(void);

/* Wait up to timeout_ms for pending updates (at exit). */
void pxadmin_wait(int timeout_ms);

#endif
