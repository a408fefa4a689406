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
 * Shared by all workers under one mutex, taken once per COM_STMT_PREPARE,
 * never by executions. Past STMTREG_MAX entries the least recently used is
 * forgotten (a later PREPARE of it gets a new serial; connections that kept
 * the old one drop it in their own LRU order).
 */
#ifndef SHOAL_STMTREG_H
#define SHOAL_STMTREG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "packet.h"

#define STMTREG_MAX 8192

struct stmtreg_key {
	const char *user;
	uint32_t caps;        /* the client capability bits that shape the answer */
	const uint8_t *ctx;   /* the session state, sv_serialize() */
	size_t ctx_len;
	const char *text;
	size_t text_len;
};

/* The serial of a statement: equal keys get equal serials. A fresh serial
 * (not kept) when out of memory. */
uint64_t stmtreg_serial(const struct stmtreg_key *k);
/* A serial no key has (a statement that is never shared). */
uint64_t stmtreg_unique(void);
/* Entries held (for /metrics). */
size_t stmtreg_count(void);
/* Free everything (at exit). */
void stmtreg_free_all(void);

#endif
