/*
 * answer.h: what the session core hands back to the cache for a command
 * (answer.c): the bytes of a forwarded command's answer (a fill's), the
 * answer complete (its accounting, the fill stored or parked, the
 * session's write and transaction state, the holds for the binlog and for
 * generated-column checks), a refresh's answer, an error the node made,
 * and the end of a wait. The asking is session.c's (cache_command).
 */
#ifndef SHOAL_CACHE_ANSWER_H
#define SHOAL_CACHE_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/session_types.h"

/* Bytes of the answer being relayed for a CSTEP_PASS command: kept for the
 * entry being filled, if any. */
void cache_tee(struct cache_session *cs, const uint8_t *p, size_t n);
/* The command in flight was answered with an error the node made itself
 * (its upstream lost or down, no pooled connection, its state not
 * restored) after `us` upstream (0: never sent): counted on its shape
 * (count_star, errors, node_errors), once. */
void cache_note_own_error(struct cache_session *cs, uint64_t us);

/* The answer to the command forwarded after CSTEP_PASS is complete (r), in
 * `us` microseconds; x->status is the session's status after it. True when
 * its last packet is held (binlog mode, a statement whose writes its text
 * does not show): the core waits as for CSTEP_WAIT (cs->wait_ms, a wake-up,
 * then cache_wait_over puts the packet back into x->out) before it reads
 * the next command. */
bool cache_answer_done(struct cache_session *cs, const struct cache_ctx *x, const struct relay *r,
		       uint64_t us);

/* CSTEP_REFRESH: its answer, `us` microseconds after it was sent. */
void cache_refresh_done(struct cache_session *cs, const struct cache_ctx *x, const struct relay *r,
			const struct pbuf *answer, uint64_t us);

/* CSTEP_WAIT: is gen the wait in progress (a wake-up may be stale)? */
bool cache_wait_current(const struct cache_session *cs, uint32_t gen);
/* The wait ended: woken, or timed out (then the command goes upstream). */
void cache_wait_over(struct cache_session *cs, bool timed_out);

#endif
