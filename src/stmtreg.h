/*
 * stmtreg.h: the node-wide registry of prepared statements.
 *
 * With multiplexing a client's prepared statement is not tied to one
 * upstream connection: it is prepared lazily on whichever connection runs
 * an execution. The registry knows each statement once, keyed by user,
 * schema, the client's protocol capabilities and the statement text, with
 * a serial number that the connections' own statement maps use, and the
 * COM_STMT_PREPARE answer (parameter and column definitions) as the client
 * got it: a second PREPARE of the same statement is answered from it,
 * without an upstream round trip.
 *
 * Shared by all workers under one mutex: it is taken by COM_STMT_PREPARE
 * only, never by executions. Entries are never referenced from outside
 * (sessions copy what they need), so the oldest are simply dropped past
 * STMTREG_MAX entries.
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
	const char *db;
	uint32_t caps;        /* the client capability bits that shape the answer */
	const char *text;
	size_t text_len;
};

/* Look a statement up. On a hit, its serial is returned and its answer
 * (statement id bytes to be patched at offset 5) and column definitions
 * are appended to resp and meta; 0 when unknown (or out of memory). */
uint64_t stmtreg_find(const struct stmtreg_key *k, struct pbuf *resp, struct pbuf *meta,
		      uint16_t *nparams);
/* Add (or find) a statement after a successful upstream prepare. Returns
 * its serial; a new one (not kept) when out of memory. */
uint64_t stmtreg_add(const struct stmtreg_key *k, const uint8_t *resp, size_t resp_len,
		     const struct pbuf *meta, uint16_t nparams);
/* Entries held (for /metrics). */
size_t stmtreg_count(void);
/* Free everything (at exit). */
void stmtreg_free_all(void);

#endif
