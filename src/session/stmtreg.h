/*
 * stmtreg.h: the node-wide registry of prepared-statement serials.
 *
 * With multiplexing a client's prepared statement is not tied to one
 * upstream connection: it is prepared on whichever connection runs it. Each
 * connection maps serials to its own statement ids (upstream.h), and a
 * serial stands for one statement text prepared in one context, so that a
 * connection's statement serves every session whose PREPARE would have
 * made the same statement there.
 *
 * The key is everything that decides what the server makes of the text:
 * the user, the client capability bits that shape answers, the session
 * state as the node records it (schema, character set and collation,
 * sql_mode and every other variable set: sv_serialize) and the text. A
 * COM_STMT_PREPARE itself always runs upstream (its answer is the server's,
 * as of now: table definitions may have changed since any earlier one, by
 * any client of the server); the registry only gives it its serial.
 *
 * Each serial counts the sessions' statements that hold it. When the last
 * one is closed (COM_STMT_CLOSE, a reset, the session's end), the upstream
 * statements of that serial are closed too, by each connection that has one
 * before it runs its next command (mux.c: a connection notices that
 * stmtreg_dropped_gen() moved and asks stmtreg_held() about its serials):
 * so the upstream keeps no more prepared statements than the clients do
 * (max_prepared_stmt_count, session memory), give or take the connections
 * idle since.
 *
 * Shared by all workers under one mutex, taken once per COM_STMT_PREPARE,
 * when a session forgets a statement, and by a connection's purge; never by
 * executions. An entry no session holds stays (its serial is reused by the
 * next PREPARE of the same key) until past STMTREG_MAX such entries the
 * least recently used is forgotten.
 */
#ifndef SHOAL_STMTREG_H
#define SHOAL_STMTREG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/packet.h"

#define STMTREG_MAX 8192

struct stmtreg_key {
	const char *user;
	uint32_t caps;        /* the client capability bits that shape the answer */
	const uint8_t *ctx;   /* the session state, sv_serialize() */
	size_t ctx_len;
	const char *text;
	size_t text_len;
};

/* The serial of a statement, held once more by the caller (a session's
 * statement): equal keys get equal serials. A fresh serial (not kept) when
 * out of memory. */
uint64_t stmtreg_serial(const struct stmtreg_key *k);
/* A serial no key has (a statement that is never shared). */
uint64_t stmtreg_unique(void);
/* A session's statement of serial is gone. */
void stmtreg_release(uint64_t serial);
/* Moves each time a serial loses its last holder. */
unsigned stmtreg_dropped_gen(void);
/* held[i]: some session still holds serials[i]. */
void stmtreg_held(const uint64_t *serials, bool *held, size_t n);

#endif
