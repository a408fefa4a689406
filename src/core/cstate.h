/*
 * cstate.h: a session's states (enum client_state, one comment each) and
 * the one table of the moves between them. client_set_state() (client.c)
 * is the one way to change a session's state: it asks cstate_move() first.
 */
#ifndef SHOAL_CORE_CSTATE_H
#define SHOAL_CORE_CSTATE_H

#include <stdbool.h>
#include <stdint.h>

/* A session's state: what it is doing now, one at a time. Changed only by
 * client_set_state(), which checks the move against the table (cstate.c)
 * and traces it at debug level. What holds across states is a mode: the
 * flags of struct client, each documented there with its reason. */
enum client_state {
	CS_HANDSHAKE,   /* greeting sent (or COM_CHANGE_USER read: the session
			 * logs in again): the login's response is awaited */
	CS_TLS_ACCEPT,  /* the client asked for TLS: the handshake runs */
	CS_AUTH_SWITCH, /* an auth switch request sent: its answer is awaited */
	CS_AUTH_SHA2,   /* caching_sha2's fast or full authentication runs */
	CS_DENIED,      /* a failed login waits out the failed-login delay
			 * (authfail.h) before its ERR goes out; nothing of the
			 * client is read meanwhile; only CLOSING follows */
	CS_CONNECTING,  /* an upstream connection is being opened, or handed over
			 * by the pool, for the login (login_pending) or for the
			 * front command */
	CS_QUEUED,      /* the pool has no connection to spare: the session waits
			 * in its queue (FIFO, with the pool's timer) for one; the
			 * front command waits in the input */
	CS_READY,       /* between commands: the next command is read */
	CS_SENDING,     /* the front command (16 MiB or more) is still arriving:
			 * its further packets go upstream as they come; then
			 * RELAYING (or READY for a command with no answer) */
	CS_RELAYING,    /* the front command is upstream; its answer is relayed */
	CS_INTERNAL,    /* the node's own command (c->upcmd) is upstream on the
			 * session's connection; the client's command waits */
	CS_WAITING,     /* parked: another session loads the key (the cache's
			 * WAIT), or the answer's last packet is held (the binlog,
			 * a check), with the wait timer running */
	CS_CLOSING,     /* the last output (an error, or the answer a COMMIT ...
			 * RELEASE ends with) is flushed, then the session is
			 * freed and its upstream connection closed; no state
			 * follows */
	CS_DRAINED,     /* closed by the drain at an idle point: the last answer
			 * is flushed, then the session is freed and its upstream
			 * connection goes back to the pool; only CLOSING follows
			 * (an error while flushing) */
};
#define CS_COUNT (CS_DRAINED + 1)

/* Before the session is logged in: a login state, or the failed login's
 * delay. The client's packets (and the ERR that ends a failed login) carry
 * the login's sequence ids (c->seq); a session closed here counts as an
 * aborted connection. */
static inline bool cstate_in_login(enum client_state s)
{
	return s == CS_HANDSHAKE || s == CS_TLS_ACCEPT || s == CS_AUTH_SWITCH || s == CS_AUTH_SHA2 ||
	       s == CS_DENIED;
}

/* The state's name, for logs. */
const char *client_state_name(enum client_state s);

/* Session id's move from -> to: true when the table allows it (traced at
 * debug level). A move it refuses must not happen, and fails loudly: it is
 * logged as an error with the session's id and the two states, counted
 * (shoal_session_state_refused_total), and with CSTATE_STRICT_ENV set
 * (the integration tests' nodes and make check set it) the process aborts
 * there. Otherwise false: the caller, client_set_state(), ends the session
 * (ERR 1105, CLOSING; its upstream connection is closed, never lent).
 * scripts/test also fails any run whose node logs hold a refused move. */
bool cstate_move(uint32_t id, enum client_state from, enum client_state to);

/* The environment variable that makes a refused move abort: set and not
 * "0". Read at each refusal, so a test can turn it on and off. */
#define CSTATE_STRICT_ENV "SHOAL_STRICT_STATES"
bool cstate_strict(void);

#endif
