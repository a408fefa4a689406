/*
 * stats.h: node-wide counters. Each is a relaxed atomic, written by the
 * worker that owns the event and read by whoever takes a snapshot (admin,
 * metrics, tests). No locks.
 */
#ifndef SHOAL_STATS_H
#define SHOAL_STATS_H

#include <stdatomic.h>
#include <stdint.h>

struct shoal_stats {
	atomic_uint_fast64_t client_connections;       /* open now */
	atomic_uint_fast64_t client_connections_created;
	atomic_uint_fast64_t client_connections_aborted; /* closed before login finished, or on error */
	atomic_uint_fast64_t client_connections_refused; /* over max_client_connections, or shunned */
	atomic_uint_fast64_t auth_failures;
	atomic_uint_fast64_t auth_failures_delayed;     /* failed logins answered late (per-address) */
	atomic_uint_fast64_t user_connections_refused;  /* logins over their user's max_connections */
	atomic_uint_fast64_t user_sessions_revoked;     /* sessions ended: their user was removed */
	atomic_uint_fast64_t client_idle_timeouts;      /* closed by client_idle_timeout_ms */
	atomic_uint_fast64_t admin_connections_refused; /* over admin_max_connections */
	atomic_uint_fast64_t admin_auth_failures;       /* admin logins refused */
	atomic_uint_fast64_t upstream_connections;      /* open now */
	atomic_uint_fast64_t upstream_connect_errors;
	/* the upstream pool (pool.c) */
	atomic_uint_fast64_t upstream_idle;             /* pooled connections idle now */
	atomic_uint_fast64_t upstream_connections_peak; /* most open at once since start */
	atomic_uint_fast64_t upstream_borrows;          /* connections lent to sessions */
	atomic_uint_fast64_t upstream_waits;            /* sessions that queued for one */
	atomic_uint_fast64_t upstream_wait_timeouts;    /* ... and gave up (error 1040) */
	atomic_uint_fast64_t upstream_waiting;          /* sessions waiting for one now */
	atomic_uint_fast64_t upstream_retries;          /* commands resent after a broken idle one */
	atomic_uint_fast64_t upstream_pinned;           /* sessions pinned to a connection now */
	atomic_uint_fast64_t upstream_syncs;            /* state applied to a borrowed connection */
	atomic_uint_fast64_t prepares_local;            /* COM_STMT_PREPAREs the node answered itself */
	atomic_uint_fast64_t prepares_upstream;         /* PREPAREs sent upstream (a client's, or one an
							 * execute needed on its connection) */
	atomic_uint_fast64_t prepare_answers;           /* PREPARE answers kept now (stmtreg.h) */
	atomic_uint_fast64_t queries;                   /* commands relayed */
	atomic_uint_fast64_t protocol_errors;           /* malformed client input */
	atomic_uint_fast64_t session_state_refused;     /* session state moves the table refused
							 * (core/cstate.h: each closed the session) */
	atomic_uint_fast64_t compressed_sessions;       /* sessions that turned compression on */
	atomic_uint_fast64_t compressed_frames_in;      /* compressed-protocol frames read */
	atomic_uint_fast64_t compressed_frames_out;     /* ... and sent */
	atomic_uint_fast64_t compressed_plain_out;      /* bytes framed for compressed sessions */
	atomic_uint_fast64_t compressed_wire_out;       /* ... and the frames' bytes */
	atomic_uint_fast64_t cache_hits;                /* commands answered from the cache */
	atomic_uint_fast64_t cache_misses;              /* cacheable commands sent upstream */
	atomic_uint_fast64_t cache_coalesced;           /* misses that waited for another session's load */
	atomic_uint_fast64_t cache_stale_hits;          /* hits served past their TTL (serve-stale) */
	atomic_uint_fast64_t grant_checks;              /* grant verdicts checked upstream (grants.h) */
	atomic_uint_fast64_t grant_denied;              /* ... that the upstream refused */
};

extern struct shoal_stats g_stats;

#define STAT_INC(f) atomic_fetch_add_explicit(&g_stats.f, 1, memory_order_relaxed)
#define STAT_DEC(f) atomic_fetch_sub_explicit(&g_stats.f, 1, memory_order_relaxed)
#define STAT_GET(f) atomic_load_explicit(&g_stats.f, memory_order_relaxed)

#endif
