/*
 * uplink.h: a session's side of its upstream connection (uplink.c): what
 * comes back on it (the relay fed, the answer complete, routed to the
 * client or, for a command of the node's own, by its kind), the one way
 * to send a command of the node's own, the pool's reports about the
 * connection, and what a session does when it breaks.
 */
#ifndef SHOAL_CORE_UPLINK_H
#define SHOAL_CORE_UPLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/client.h"

/* The one way to send a command of the node's own upstream, on c->up (which
 * must be free): a packet cmd + payload. The session enters CS_INTERNAL with
 * c->upcmd = kind; the answer is collected in c->scratch and, when
 * complete, handed on by kind (see enum upcmd_kind), and the session goes
 * back to CS_READY. false: out of memory, nothing sent. */
bool upcmd_send(struct client *c, uint8_t cmd, const void *payload, size_t len, enum upcmd_kind kind);
/* Tell the relay about the upstream session's MariaDB extensions (after
 * relay_start). */
void uplink_relay_setup(struct client *c);

/* Relay what the upstream has sent while the client takes it. */
void uplink_pump(struct client *c);
/* An upstream packet can be relayed now (or a whole frame decoded). */
bool uplink_input_ready(const struct client *c);
/* The session's upstream connection broke (why, for the log): the command
 * is sent again, fails, or the session ends (see uplink.c). */
void uplink_lost(struct client *c, const char *why);
/* serve-stale: the front command answered from its entry past the TTL,
 * the upstream being gone as it went there. true: answered. */
bool uplink_serve_stale(struct client *c);

/* For pool.c: the connection in c->up is ready for the session's use, or
 * could not be opened (c->up holds the error until pool_discard), or the
 * wait timed out (c->up is NULL). */
void client_pool_ready(struct client *c);
void client_pool_failed(struct client *c);
void client_pool_timeout(struct client *c);
/* For pool.c: socket events of a connection in use by c. */
void client_upstream_io(struct client *c);

#endif
