/*
 * cstate.h: a session's states (enum client_state, one comment each) and
 * the one table of the moves between them. client_set_state() (client.c)
 * is the one way to change a session's state: it asks cstate_move() first.
 */
#ifndef SHOAL_CORE_CSTATE_H
#define SHOAL_CORE_CSTATE_H

#include <stdbool.h>
#include <stdint.h>

/* A session's state. Changed only by client_set_state(), which checks the
 * move against the table (cstate.c) and traces it at debug level; a move
 * the table does not allow is logged as an error. */
enum client_state {
	CS_HANDSHAKE,   /* greeting sent (or COM_CHANGE_USER read): the login's
			 * response is awaited */
	CS_TLS_ACCEPT,  /* the client asked for TLS: the handshake runs */
	CS_AUTH_SWITCH, /* an auth switch request sent: its answer is awaited */
	CS_AUTH_SHA2,   /* caching_sha2's fast or full authentication runs */
	CS_CONNECTING,  /* an upstream connection is being borrowed or opened: for
			 * the login (login_pending) or for the front command */
	CS_READY,       /* between commands: the next command is read */
	CS_RELAYING,    /* the front command is upstream; its answer is relayed */
	CS_INTERNAL,    /* the node's own command (c->upcmd) is upstream on the
			 * session's connection; the client's command waits */
	CS_WAITING,     /* parked: another session loads the key (the cache's
			 * WAIT), with the wait timer running */
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

/* A login state: the client's next packet belongs to the login (its
 * sequence id is the login's, c->seq), and the session is not yet one. */
static inline bool cstate_in_login(enum client_state s)
{
	return s == CS_HANDSHAKE || s == CS_TLS_ACCEPT || s == CS_AUTH_SWITCH || s == CS_AUTH_SHA2;
}

/* The session's flags are modes that hold across states, not states:
 *   login_pending   the login's upstream is being borrowed and synced: it
 *                   spans CONNECTING, INTERNAL and READY until its OK goes out
 *   releasing       a COMMIT/ROLLBACK ... RELEASE succeeded: its answer is
 *                   still relayed (RELAYING), then CLOSING follows
 *   up_lost         serve-stale: the session answers from the cache only,
 *                   in READY and WAITING alike
 *   cont_packets, infile_cont, retried, pass_pending
 *                   where the front command stands (RELAYING, CONNECTING)
 *   pq_queued, pq_granted
 *                   the pool's queue (pool.c): membership of its list */


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
