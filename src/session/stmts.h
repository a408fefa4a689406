/*
 * stmts.h: one session's prepared statements, by the ids the node gave the
 * client (mux.c hands them out, from 1), and the COM_STMT_PREPARE in flight.
 * The node-wide registry of statement texts and PREPARE answers is
 * stmtreg.h; each upstream connection's own ids are upstream.h's. This table
 * is what the session knows of each statement: its text, the parameter
 * types of its last execute (an execute may omit them), the session state
 * it was prepared in (a connection that must prepare it again does so in
 * that state: mux.c), whether it holds a cursor or long data on
 * a connection, and the cache shape it belongs to (set by the cache:
 * cache_stmt_prepared). Owned by the session's worker thread; no locks.
 */
#ifndef SHOAL_STMTS_H
#define SHOAL_STMTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/packet.h"
#include "session/sessvars.h"

struct cache_def;
struct stmt_kept;

struct stmt_info {
	uint32_t id;                  /* as the client knows it */
	uint16_t nparams;
	bool long_data;               /* COM_STMT_SEND_LONG_DATA since the last execute */
	bool have_types;
	bool cursor;                  /* an execute opened a cursor not yet exhausted */
	char *text;
	size_t text_len;
	struct stmt_facts facts;      /* of text, read once when it was prepared */
	struct stmt_kept *kept;       /* its reading, kept then for each execute
				       * (sql/stmt.h; NULL: not kept) */
	uint8_t *types;               /* 2 bytes per parameter, from the last execute */
	uint64_t serial;              /* in the statement registry (stmtreg.h), held by it */
	struct sess_state ctx;        /* the session's state when it was prepared */
	bool have_ctx;
	/* the cache's (cache_stmt_prepared): its shape, and the settings id it
	 * was prepared under (0: unknown), part of its cache keys */
	struct cache_def *def;
	uint8_t prep_settings[4];
};

struct stmt_table {
	struct stmt_info *v;
	size_t n, cap;
	struct stmt_info *cur;        /* the statement of the last COM_STMT_EXECUTE */
	struct pbuf prep_text;        /* text of the COM_STMT_PREPARE in flight */
	uint32_t last_id;             /* the last PREPARE's statement, 0: it failed */
};

/* Statement id, or STMT_ID_LAST: the last statement prepared, as the
 * server has it: none after a PREPARE that failed, or once that statement
 * is closed. NULL: unknown. */
struct stmt_info *stmts_find(struct stmt_table *t, uint32_t id);
/* Add statement id (replacing one with the same id) from the PREPARE in
 * flight: its text (prep_text), the registry serial it holds (released when
 * the statement is forgotten, or here on failure) and the session state it
 * was prepared in (copied). NULL if out of memory (then the session does not
 * know the id: its executes get ERR 1243). */
struct stmt_info *stmts_add(struct stmt_table *t, uint32_t id, uint16_t nparams, uint64_t serial,
			    const struct sess_state *ctx);
void stmts_forget(struct stmt_table *t, uint32_t id);
/* Forget every statement (the session is reset: client_reset_session). */
void stmts_clear(struct stmt_table *t);
void stmts_free(struct stmt_table *t);
/* A statement has an open cursor or long data: the connection must stay. */
bool stmts_hold_conn(const struct stmt_table *t);
/* Note what a statement command (a whole payload, command byte first: a
 * row of the command table with `stmt` flags) does to the table before it
 * is answered or forwarded: the PREPARE text, CLOSE, SEND_LONG_DATA,
 * RESET; an EXECUTE or a BULK_EXECUTE becomes cur and its parameter
 * types, when sent, are kept. */
void stmts_note_command(struct stmt_table *t, const uint8_t *pl, uint32_t len);

#endif
