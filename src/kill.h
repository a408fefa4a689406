/*
 * kill.h: KILL under multiplexing. A client's `KILL [HARD|SOFT]
 * [CONNECTION|QUERY] <id>` and COM_PROCESS_KILL name the node's session
 * ids (the connection id of the node's greeting), as ProxySQL's do: the
 * upstream thread a session uses changes from command to command, so
 * forwarded as written a KILL would hit whatever session holds that
 * upstream connection now.
 *
 * The node answers them itself: ERR 1094 for an unknown id, 1095 when the
 * session belongs to another user, OK otherwise, after which the owning
 * worker (sessions live on different workers: the request goes through its
 * mailbox, worker_post) ends the session (KILL CONNECTION) or, when it has
 * a command upstream, has that query killed by the upstream on a
 * connection of its own (KILL QUERY <upstream thread id>); the connection
 * is then not lent to another session. A session that kills itself gets
 * what the server gives: 1927 and the end of the session, or 1317.
 * `KILL QUERY ID <query id>` and `KILL USER <name>` are refused (1235):
 * they name upstream-wide things no session owns. Forms whose id is not a
 * number (KILL CONNECTION_ID()) go upstream as written. CONNECTION_ID()
 * is the upstream's thread id, not the node's session id: an id that is no
 * node session's is looked up among the upstream threads the sessions' last
 * commands ran on (what their CONNECTION_ID() said, or SHOW PROCESSLIST
 * shows), and taken when exactly one session matches.
 *
 * The session table (id -> worker, user) is shared by all threads under one
 * mutex, taken when a session starts, logs in and ends, and by KILL.
 */
#ifndef SHOAL_KILL_H
#define SHOAL_KILL_H

#include <stdbool.h>
#include <stdint.h>

struct client;
struct worker;

enum kill_kind { KK_CONNECTION = 1, KK_QUERY };

/* The session table: a session starts (its worker), logs in (its user),
 * ends. */
void *kill_register(uint32_t id, struct worker *w);
/* The session (kill_register's entry) runs its next command on upstream
 * thread thread_id (its worker, lock-free). */
void kill_note_upstream(void *entry, unsigned long thread_id);
void kill_set_user(uint32_t id, const char *user);
void kill_unregister(uint32_t id);

/* A COM_QUERY or COM_PROCESS_KILL payload (command byte first): true when
 * it is a KILL the node answers (the answer is queued; the session may be
 * CS_CLOSING after killing itself). */
bool kill_command(struct client *c, const uint8_t *pl, uint32_t len);

/* On worker w's thread: a KILL for its session id. */
void kill_deliver(struct worker *w, uint32_t id, enum kill_kind kind);

/* Free the table (at exit). */
void kill_free_all(void);

#endif
