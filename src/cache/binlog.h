/*
 * binlog.h: the binlog follower. A thread of its own reads the binlog of
 * the node's upstream with MariaDB Connector/C's replication API
 * (mariadb_rpl_*), as a replica would, and turns each committed transaction
 * into invalidations: of the entries each of its changed rows can change
 * (row events, matched by binlog_rows.h against the entries' constraints),
 * and of whole tables: those written by its statements (DDL,
 * statement-format writes, read with sql/tables.c), what writes to those
 * also change, and the children of cascading foreign keys of the tables
 * whose rows it updated or deleted (row-format binlogs do not log a
 * cascade; see cache/catalog.h).
 *
 * It remembers the last GTID it processed in each replication domain and
 * resumes from there after a disconnect (@slave_connect_state). While the
 * stream is down, catching up, or further behind than binlog_max_lag_ms,
 * or its start is not yet proven visible (binlog_start.h: what the server
 * skipped before the start position fences nothing otherwise), the cache
 * serves nothing (inval_set_serving, fence_start): entries filled before the
 * outage are served again only once the events of the outage have been
 * applied. When the server no longer has those events, the whole cache is
 * flushed and the follower starts from the server's current position.
 *
 * Needs a MariaDB upstream with log_bin on (and log_slave_updates on a
 * replica), and a login with the REPLICATION SLAVE privilege.
 */
#ifndef SHOAL_BINLOG_H
#define SHOAL_BINLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum binlog_state {
	BINLOG_OFF = 0,     /* not following (another invalidation mode) */
	BINLOG_CONNECTING,
	BINLOG_CATCHING_UP, /* replaying events up to the server's position */
	BINLOG_STREAMING,   /* caught up */
	BINLOG_BEHIND,      /* further behind than binlog_max_lag_ms */
	BINLOG_DOWN,        /* disconnected; retrying */
};

struct binlog_status {
	enum binlog_state state;
	double lag_seconds;
	char position[256];         /* MariaDB: last GTID per domain, "d-s-n,..."; MySQL: the GTID set applied */
	uint64_t transactions;      /* transactions applied */
	uint64_t events;
	uint64_t reconnects;
	uint64_t resume_failures;   /* the position was gone, or an event unreadable: cache flushed */
	char error[256];            /* the last error, "" if none */
};

/* Start / stop the follower thread (binlog mode). */
int binlog_start(void);
void binlog_stop(void);
/* Binlog mode while nothing may be cached: the follower is not started
 * (nothing is served meanwhile) until binlog_demand(), which a read of a
 * cached shape calls, starts it. No-op when not deferred. */
void binlog_defer(void);
void binlog_demand(void);

void binlog_get_status(struct binlog_status *out);
/* The server followed (@@server_id) and the GTID position applied so far
 * ("d-s-n,..." into pos), read together. false when the follower has not
 * read a position yet, or pos does not fit in cap. */
bool binlog_identity(uint32_t *server_id, char *pos, size_t cap);
const char *binlog_state_name(enum binlog_state s);

/* A restart's resume (a cache snapshot, cache/warm.h). binlog_resume_from(),
 * before the follower starts, makes it start at pos (the snapshot's GTID
 * position) instead of the server's current one, once
 * binlog_resume_release() says the snapshot's entries are in the store (at
 * most a minute later) and the catalog has been read: the replay of what
 * the server wrote meanwhile invalidates their tables, and nothing is
 * served until it is done. A server other than server_id, or a position
 * gone from its binlogs, flushes the whole cache instead. */
enum binlog_resume {
	BINLOG_RESUME_NONE = 0,   /* no resume position: started at the server's */
	BINLOG_RESUME_WAITING,    /* for the entries, or for the catalog */
	BINLOG_RESUME_REPLAYING,  /* from the snapshot's position to the server's */
	BINLOG_RESUME_DONE,       /* caught up: what is left may be served */
	BINLOG_RESUME_GONE,       /* the position is gone from the binlogs: flushed */
	BINLOG_RESUME_FOREIGN,    /* another server (its server_id): flushed */
};
/* 0, or -1 when pos is no GTID list (nothing is set then). */
int binlog_resume_from(const char *pos, uint32_t server_id);
void binlog_resume_release(void);
enum binlog_resume binlog_resume_result(void);


/* Read-your-writes barrier. binlog_barrier() asks to be woken (through the
 * wake function, as the store's waiters are) once the follower has applied
 * everything the upstream had committed when the request was taken up: a
 * thread of its own reads @@gtid_binlog_pos and waits for the follower to
 * reach it (requests are served in batches). -1 when the follower is not
 * streaming (the caller invalidates everything instead). No wake-up comes
 * when the position cannot be read or is not reached within the session's
 * own timeout; binlog_barrier_cancel() withdraws a request not taken up. */
struct store_waiter;
struct worker;
void binlog_set_wake(void (*wake)(struct worker *w, uint32_t client_id, uint32_t gen));
int binlog_barrier(struct store_waiter *w);
void binlog_barrier_cancel(struct store_waiter *w);

#endif
