/*
 * kill.h: KILL under multiplexing. A client's `KILL [HARD|SOFT]
 * [CONNECTION|QUERY] <id>` and COM_PROCESS_KILL name the node's session
 * ids (the connection id of the node's greeting), as ProxySQL's do: the
 * upstream thread a session uses changes from command to command, so
 * forwarded as written a KILL would hit whatever session holds that
 * upstream connection now.
 *
 * The session core answers them (client.c): ERR 1094 for an unknown id,
 * 1095 when the session belongs to another login user, OK otherwise, after
 * which the owning worker (sessions live on different workers: the request
 * goes through its mailbox, worker_post) ends the session (KILL CONNECTION)
 * or, when it has a command upstream, has that query killed by the upstream
 * on a connection of its own (kill_upstream); the connection is then not
 * lent to another session. A session that kills itself gets what the
 * server gives: 1927 and the end of the session, or 1317. `KILL QUERY ID
 * <query id>` and `KILL USER <name>` are refused (1235): they name
 * upstream-wide things no session owns. Forms whose id is not a number
 * (KILL CONNECTION_ID()) go upstream as written. CONNECTION_ID() is the
 * upstream's thread id, not the node's session id: an id that is no node
 * session's is looked up among the upstream threads the sessions' last
 * commands ran on (what their CONNECTION_ID() said, or SHOW PROCESSLIST
 * shows), and taken when exactly one session matches.
 *
 * This module is a leaf: the session table (id -> worker, login user, last
 * upstream thread), shared by all threads under one mutex, taken when a
 * session starts, logs in and ends, and by KILL; the statement as
 * sql/local.h reads it; and the upstream KILL.
 */
#ifndef SHOAL_KILL_H
#define SHOAL_KILL_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stmt_table;

struct worker;
struct ident;

enum kill_kind { KK_CONNECTION = 1, KK_QUERY };

/* The errors a KILL gets, as MariaDB gives them. */
#define ERR_NO_SUCH_THREAD 1094     /* HY000 Unknown thread id: N */
#define ERR_KILL_DENIED 1095        /* HY000 You are not owner of thread N */
#define ERR_NOT_SUPPORTED_YET 1235  /* 42000 */
#define ERR_QUERY_INTERRUPTED 1317  /* 70100 */
#define ERR_CONNECTION_KILLED 1927  /* 70100 */

struct kill_req {
	enum kill_kind kind;
	bool unsupported;         /* KILL QUERY ID n, KILL USER name */
	uint64_t id;
};

/* The session table: a session starts (its worker; the entry returned is
 * for kill_note_upstream), logs in (its user), ends. */
void *kill_register(uint32_t id, struct worker *w);
void kill_set_user(uint32_t id, const char *user);
void kill_unregister(uint32_t id);
/* The session (kill_register's entry) runs its next command on upstream
 * thread thread_id (its worker, lock-free). */
void kill_note_upstream(void *entry, unsigned long thread_id);
/* CONNECTION_ID() answered the session thread_id (its worker, lock-free):
 * a KILL of that id means it, wherever its later commands run. */
void kill_note_told(void *entry, unsigned long thread_id);

/* A COM_QUERY, COM_PROCESS_KILL or COM_STMT_EXECUTE (of a prepared KILL
 * with its id written in: st has its text) payload, command byte first,
 * that is a KILL the node answers: true, and *r says what. */
bool kill_parse(const uint8_t *pl, uint32_t len, struct stmt_table *st, struct kill_req *r);
/* The command runs a KILL upstream as written (KILL <expression>, a
 * prepared KILL with parameters): one the node does not answer. */
bool kill_forwarded(const uint8_t *pl, uint32_t len, struct stmt_table *st);
/* The session id names: by node session id, else the session
 * CONNECTION_ID() told that upstream thread id, else the one whose last
 * command ran on it (not the killer's own: its login may have). Its id
 * (and worker, login user), or 0 when none (or two) match. */
uint32_t kill_find(uint64_t id, uint32_t killer, struct worker **w, char *user, size_t cap);
/* Have the upstream KILL [QUERY] thread_id, on a connection of its own
 * opened on loop as identity id (a user may always kill its own threads). */
void kill_upstream(struct ev_loop *loop, const struct ident *id, unsigned long thread_id,
		   bool query_only);

/* A KILL went upstream (forwarded as written, or the node's own): any
 * upstream connection may have been killed while it ran a command, so a
 * command whose connection broke since must not be sent again (client.c's
 * retry is for connections found stale, never for killed ones). */
void kill_went_upstream(void);
unsigned kill_generation(void);
/* The statement text is a KILL (of any form). */
bool kill_statement(const char *q, size_t n);

#endif
