/*
 * binlog_follow.h: what the follower's two stream readers share. binlog.c
 * reads MariaDB's stream (Connector/C's replication API) and owns the
 * follower: its thread, the transaction being read, the position, the
 * serving state. binlog_mysql.c reads MySQL's stream (mysql_dump.h) and
 * hands each event's meaning to binlog.c through struct follow_ops, so a
 * transaction is invalidated, fenced and counted the same way whichever
 * server wrote it.
 *
 * Thread-safety: the follower thread only.
 */
#ifndef SHOAL_CACHE_BINLOG_FOLLOW_H
#define SHOAL_CACHE_BINLOG_FOLLOW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/binlog_rows.h"
#include "cache/gtid_set.h"

/* How a stream ended. */
enum stream_end {
	STREAM_LOST,        /* the connection: resume from the position */
	STREAM_GONE,        /* the server's binlogs no longer have the position */
	STREAM_UNREADABLE,  /* an event that cannot be read (MariaDB: the connector
			     * fails on a statement-format LOAD DATA's
			     * Begin_load_query, for one): resuming would fail on
			     * it again */
};

/* What the follower does with the meaning of a MySQL stream's events
 * (binlog.c gives them; binlog_mysql.c calls them, so that it depends on
 * the follower only through this table). */
struct follow_ops {
	/* a transaction begins (its GTID event; uuid NULL: it has none that can
	 * be read); one still open ends first */
	void (*begin_gtid)(const uint8_t *uuid, const char *tag, uint64_t gno);
	/* the current transaction ends (XID, XA_PREPARE, COMMIT, or its one
	 * statement) */
	void (*trx_end)(void);
	/* where the last event read ends in its binlog file */
	void (*event_end)(uint32_t next_pos);
	/* a statement of the binlog (a QUERY event) */
	void (*query)(const char *db, size_t dlen, const char *stmt, size_t slen);
	/* a TABLE_MAP event, and a rows event (binlog_rows.h) */
	void (*table_map)(const struct rows_map_event *e);
	void (*rows)(const struct rows_event_bytes *ev);
	/* the event was a heartbeat, a transaction's event (with its time), or
	 * another: the state (catching up, streaming, behind) and the lag */
	void (*update_state)(bool heartbeat, bool transaction_event, uint32_t timestamp);
};

/* MySQL's stream (binlog_mysql.c): open the dump from the set `from` with
 * the follower's server id; then read it until it ends. */
struct mysql_dump;
int mysql_follow_open(struct mysql_dump *d, void *mysql, const struct gtid_set *from, char *err,
		      size_t cap);
enum stream_end mysql_follow_stream(struct mysql_dump *d, const struct follow_ops *ops, atomic_bool *stopping,
				    char *err, size_t cap);

#endif
