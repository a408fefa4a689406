/*
 * dispatch.h: a command's way (dispatch.c): the command table's handlers
 * for what the node answers itself (proto/command.h: `local`, `checks`),
 * the cache's step, then the upstream: borrow a connection, bring it to
 * the session's state, forward the command (and the rest of a long one).
 */
#ifndef SHOAL_CORE_DISPATCH_H
#define SHOAL_CORE_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "core/client.h"

/* What handling the front command came to. */
enum hc_result {
	HC_NEXT,       /* dealt with: go on with the next command */
	HC_STOP,       /* it stays at the front: nothing more until an event */
	HC_CLOSED,     /* the session was closed (and freed) */
	HC_FORWARD,    /* it goes upstream: borrow a connection, sync, forward */
	HC_SETTINGS,   /* the cache needs the settings: borrow, sync, read them */
	HC_GRANT_CHECK, /* the cache needs the user's grant verdict: borrow, sync, check */
	HC_NOT_LOCAL,  /* (node_command) not the node's to answer: ask the cache */
};

/* One whole command packet (payload len) is at the front of the input. */
enum hc_result dispatch_command(struct client *c, uint32_t len);
/* CS_SENDING: forward the further packets of a long command. false if the
 * session was closed. */
bool dispatch_continuation(struct client *c);
/* The front command will not run: drop it (and the cache fill it was to
 * make). The caller queued its error, one of the node's own: counted. */
void dispatch_drop_front(struct client *c);
/* The session back to a fresh login's state (COM_RESET_CONNECTION,
 * COM_CHANGE_USER): its connection is given back, or closed when it holds
 * state of its own (mux_reset); its variables, schema aside, are the
 * globals of now; its prepared statements, temporary tables, locks and
 * transaction are gone, and the cache reads its settings again. */
void client_reset_session(struct client *c);
/* A KILL for session id of worker w (its thread): KILL QUERY has the
 * upstream kill its running command, KILL CONNECTION also ends it. */
void client_kill(struct worker *w, uint32_t id, bool query_only);

#endif
