/*
 * mux.h: the session side of multiplexing. Which commands pin a session to
 * its upstream connection and for how long, bringing a borrowed connection
 * to the session's state before its command runs (schema, SET, the
 * statement prepared), mapping the client's statement ids to each
 * connection's, and answering what needs no connection (a PREPARE the
 * registry knows, COM_STMT_CLOSE, an unknown statement id). The connections
 * themselves are pool.c's; the command loop is client.c's.
 */
#ifndef SHOAL_MUX_H
#define SHOAL_MUX_H

#include <stdbool.h>
#include <stdint.h>

#include "core/client.h"
#include "proto/packet.h"

/* Set up the session state after login (schema, handshake collation). */
void mux_login(struct client *c);
/* Free what mux keeps for a session. */
void mux_free(struct client *c);
/* Does the session hold state on its connection that a new connection
 * would not have (transaction, locks, temporary tables, cursors, ...)? */
bool mux_holds_state(const struct client *c);
/* Must the session keep its connection between commands? */
bool mux_pinned(const struct client *c);
/* The session is reset (client_reset_session): give the connection back
 * (or close it when it holds state) and forget the session state. */
void mux_reset(struct client *c);

/* A statement command (the command table's `stmt`) answered here without
 * a connection? Then its answer is queued and the caller consumes it. */
bool mux_local(struct client *c, const uint8_t *pl, uint32_t len);
/* Before forwarding pl: note what it does to the session (the command
 * table's `session` column). */
void mux_note_command(struct client *c, const uint8_t *pl, uint32_t len);
/* The command was appended to the connection's output at offset at:
 * statement ids (and parameter types) rewritten for this connection.
 * false: out of memory. */
bool mux_fix_forwarded(struct client *c, size_t at);
/* Bytes of a COM_STMT_PREPARE answer were appended to out from `from`. */
void mux_relayed(struct client *c, struct pbuf *out, size_t from);
/* COM_STMT_PREPARE succeeded upstream (client.c's answer handling). */
void mux_prepared(struct client *c);
/* Close statement up_id on connection u (COM_STMT_CLOSE, no answer comes);
 * out of memory: u is marked dirty (never lent again). */
void mux_close_upstream_stmt(struct upstream *u, uint32_t up_id);
/* The answer to the forwarded command is complete. */
void mux_answer_done(struct client *c);
/* The front command was answered by the node (a cache hit of rows rows;
 * UINT64_MAX: a result the server's FOUND_ROWS() cannot know). */
void mux_answered_here(struct client *c, uint64_t rows);
/* A statement of the node's own with a result set ran on c->up. */
void mux_found_rows_lost(struct client *c);

/* Start the next step bringing c->up to the session's state (an internal
 * command, UPCMD_SYNC_*): 1 sent, 0 none left (ready), -1 the connection
 * cannot get there (out of memory, or it has a schema and the session
 * none): discard it. */
int mux_sync_step(struct client *c);
/* A sync step's answer is complete (in c->scratch). false: the step failed
 * and its error was queued to the client. */
bool mux_sync_done(struct client *c, enum upcmd_kind kind);

#endif
