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
 * sql_mode and every other variable set: sv_serialize) and the text.
 *
 * A serial may also keep the upstream's answer to its PREPARE (the OK, the
 * parameter and column definitions), which the node then gives the next
 * PREPARE of the same key itself (mux.c, local_prepare): only while that
 * answer is exactly what the upstream would give now. The caller decides
 * what "now" is: it stamps an answer with the generations that would move
 * if the answer could change (cache/consist.h, consist_prepare_stamp: DDL
 * seen, the invalidation epoch, privileges, SET GLOBAL) and the time it was
 * asked, and an answer is given only to a lookup with the same generations,
 * younger than the age bound. A stale one is freed as it is found.
 * g_stats.prepare_answers counts the answers kept.
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
/* A PREPARE answer bigger than this is not kept (a statement of hundreds
 * of columns, prepared rarely). */
#define STMTREG_ANSWER_MAX 65536
/* ... and all the answers kept together stay under this (new ones are not
 * kept past it, until entries are forgotten). */
#define STMTREG_ANSWERS_BYTES (16u << 20)
#define STMTREG_STAMP_GENS 4

/* What a kept answer was true of: generations, and when it was asked. */
struct stmtreg_stamp {
	uint64_t gens[STMTREG_STAMP_GENS];
	int64_t at_ms;
};

/* The kept answer given: its parameter count, and the serial (held once
 * more, as stmtreg_serial does). */
struct stmtreg_given {
	uint64_t serial;
	uint16_t nparams;
};

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

/* Keep answer[0, len) (whole packets, sequence ids from 1: the upstream's
 * answer to the PREPARE of serial, as relayed) with its stamp. Not kept:
 * an answer over STMTREG_ANSWER_MAX, or past STMTREG_ANSWERS_BYTES in all, one with warnings, a serial no longer
 * registered, out of memory. */
void stmtreg_keep_answer(uint64_t serial, const uint8_t *answer, size_t len,
			 const struct stmtreg_stamp *st);
/* The answer kept for k, if its stamp's generations are now's and it was
 * asked at most max_age_ms before now->at_ms: appended to out with the
 * statement id stmt_id and the status bits of its EOF packets set from
 * status (those in SESSION_STATUS_BITS). true: given (and *g filled);
 * false: nothing written. */
bool stmtreg_give_answer(const struct stmtreg_key *k, const struct stmtreg_stamp *now,
			 int64_t max_age_ms, uint32_t stmt_id, uint16_t status, struct pbuf *out,
			 struct stmtreg_given *g);

#endif
