/*
 * mysql_dump.h: MySQL's binlog stream, read by our own reader: the dump is
 * asked for with COM_BINLOG_DUMP_GTID (the GTID set the follower has
 * applied: the server sends every transaction not in it), and each event
 * is cut from the stream and decoded here. MariaDB's stream is read with
 * Connector/C's replication API (binlog.c); that API sends only
 * COM_BINLOG_DUMP and does not know MySQL's later events (transaction
 * payloads, tagged GTIDs, heartbeat v2).
 *
 * The connection is Connector/C's (its login: caching_sha2_password, TLS);
 * the command goes out through its db_command method and the packets come
 * back through mysql_net_read_packet(), both public.
 *
 * A TRANSACTION_PAYLOAD event (binlog_transaction_compression = ON) holds a
 * whole transaction's events after its GTID event, compressed with zstd:
 * mysql_dump_next() hands them out one by one, each with the payload
 * event's own end position (no other transaction ends inside it) and no
 * checksum (events in a payload carry none).
 *
 * Every decoder checks the bytes it reads against the event's length: a
 * malformed event is refused (false), never read past.
 *
 * Thread-safety: a dump belongs to the thread that opened it.
 */
#ifndef SHOAL_CACHE_MYSQL_DUMP_H
#define SHOAL_CACHE_MYSQL_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mysql.h>

#include "cache/gtid_set.h"

/* The event types the follower reads (MySQL's numbering). */
enum mysql_event_type {
	MYEV_QUERY = 2,
	MYEV_ROTATE = 4,
	MYEV_FORMAT_DESCRIPTION = 15,
	MYEV_XID = 16,
	MYEV_TABLE_MAP = 19,
	MYEV_HEARTBEAT = 27,
	MYEV_ROWS_QUERY = 29,
	MYEV_GTID = 33,
	MYEV_ANONYMOUS_GTID = 34,
	MYEV_PREVIOUS_GTIDS = 35,
	MYEV_XA_PREPARE = 38,
	MYEV_PARTIAL_UPDATE_ROWS = 39,
	MYEV_TRANSACTION_PAYLOAD = 40,
	MYEV_HEARTBEAT_V2 = 41,
	MYEV_GTID_TAGGED = 42,
};

#define MYEV_HEADER_LEN 19

struct mysql_event {
	uint8_t type;
	uint16_t flags;
	uint32_t timestamp, server_id;
	uint32_t next_pos;            /* where it ends in its binlog file (0: none, artificial) */
	const uint8_t *raw;           /* the whole event: header, body, checksum */
	size_t raw_len;
	const uint8_t *body;          /* after the header, without the checksum */
	size_t body_len;
	unsigned checksum_len;        /* bytes of checksum at raw's end (0 or 4) */
	bool in_payload;              /* one of a TRANSACTION_PAYLOAD's events */
};

struct mysql_dump {
	MYSQL *m;
	unsigned checksum_len;        /* of the stream's events (@@binlog_checksum) */
	/* the events of the TRANSACTION_PAYLOAD being handed out */
	uint8_t *payload;
	size_t payload_len, payload_cap, payload_at;
	uint32_t payload_end;         /* the payload event's next_pos */
	void *zstd;                   /* ZSTD_DCtx, made at the first payload */
	unsigned server_error;        /* the error code that ended the stream (0: none, or the reader's) */
};

/* Set up the session as a replica does (checksums, heartbeat period,
 * replica uuid) and send COM_BINLOG_DUMP_GTID from the set `from` (the
 * server sends every transaction not in it). heartbeat_ns: the server's
 * heartbeat period. 0, or -1 with err set. */
int mysql_dump_open(struct mysql_dump *d, MYSQL *m, uint32_t server_id, const struct gtid_set *from,
		    uint64_t heartbeat_ns, bool nonblock, char *err, size_t cap);
/* The next event: 1, 0 when the server ended the stream (an EOF packet:
 * a non-blocking dump reached the end), -1 on an error (err; the server's
 * or the connection's error code in d->server_error, 0 when the reader
 * refused what came).
 * ev points into the dump's buffers until the next call. */
int mysql_dump_next(struct mysql_dump *d, struct mysql_event *ev, char *err, size_t cap);
void mysql_dump_close(struct mysql_dump *d);
/* Take a TRANSACTION_PAYLOAD event's events in (decompressed): the next
 * calls of mysql_dump_next() hand them out before reading the stream
 * again. 0, or -1 with err set (malformed, a compression other than zstd
 * or none, larger than 1 GiB, or not the size it says). */
int mysql_dump_begin_payload(struct mysql_dump *d, const struct mysql_event *ev, char *err, size_t cap);

/* Decode the event at p (len bytes, checksum_len of them a checksum at the
 * end) into ev (no copy). false: not an event's layout. */
bool mysql_event_parse(const uint8_t *p, size_t len, unsigned checksum_len, struct mysql_event *ev);

/* Decoders of one event's body; false when it is malformed. */
bool mysql_ev_gtid(const struct mysql_event *ev, uint8_t uuid[GTID_UUID_LEN], uint64_t *gno);
/* A GTID_TAGGED event (MySQL 8.3+, uuid:tag:gno): its body is a message of
 * MySQL's serialization framework (libs/mysql/serialization: a version, a
 * size, then numbered fields of variable-length integers). Only the GTID
 * is read (fields 0 to 3: flags, uuid, gno, tag); the later fields (commit
 * order, timestamps, lengths) are skipped, as any field a newer server
 * adds. The tag comes lower-cased; "" if the event left it out (then the
 * GTID is an untagged one). false: malformed, cut short, a message format
 * other than 1, no uuid or gno, a gno out of 1..GTID_GNO_MAX, a tag that is
 * not one. */
bool mysql_ev_gtid_tagged(const struct mysql_event *ev, uint8_t uuid[GTID_UUID_LEN],
			  char tag[GTID_TAG_MAX + 1], uint64_t *gno);
bool mysql_ev_query(const struct mysql_event *ev, const char **db, size_t *dlen, const char **stmt,
		    size_t *slen);
bool mysql_ev_table_map(const struct mysql_event *ev, uint64_t *table_id, const char **db, size_t *dlen,
			const char **table, size_t *tlen);
bool mysql_ev_rotate(const struct mysql_event *ev, const char **name, size_t *len);

/* A TRANSACTION_PAYLOAD's body: the compression (0 zstd, 255 none), the
 * payload's bytes, the size it has uncompressed. false: malformed. */
bool mysql_ev_payload(const struct mysql_event *ev, unsigned *compression, const uint8_t **data,
		      size_t *len, uint64_t *uncompressed);

#endif
