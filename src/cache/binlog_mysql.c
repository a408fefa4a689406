/*
 * binlog_mysql.c: the follower's reading of a MySQL stream (see
 * binlog_follow.h): the dump is opened from the GTID set applied, and each
 * event is handed to the follower by its meaning.
 *
 * A MySQL transaction is a GTID event, then BEGIN, its table maps and rows
 * events, and an XID event (or a COMMIT statement for a non-transactional
 * engine); a DDL is a GTID event and its one statement. With
 * binlog_transaction_compression the events after the GTID event come in
 * one TRANSACTION_PAYLOAD event, which mysql_dump.c opens.
 */
#include <mysqld_error.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "cache/binlog_conn.h"
#include "cache/binlog_follow.h"
#include "cache/fence.h"
#include "cache/mysql_dump.h"

#define HEARTBEAT_NS 500000000ULL   /* 0.5 s, as MariaDB's stream */
#define ARTIFICIAL_F 0x0020         /* an event the dump made up (its first ROTATE) */
#define SOURCE_FATAL_READING_BINLOG 1236

int mysql_follow_open(struct mysql_dump *d, void *mysql, const struct gtid_set *from, char *err,
		      size_t cap)
{
	MYSQL *m = mysql;
	char v[32];
	unsigned checksum_len;

	/* the dump's events carry the checksum the session asks for */
	if (binlog_query_value(m, "SELECT @@global.binlog_checksum", v, sizeof(v)) < 0) {
		snprintf(err, cap, "cannot read binlog_checksum: %s", mysql_error(m));
		return -1;
	}
	checksum_len = strcasecmp(v, "NONE") != 0 ? 4 : 0;
	if (mysql_dump_open(d, m, binlog_server_id(), from, HEARTBEAT_NS, false, err, cap) < 0)
		return -1;
	d->checksum_len = checksum_len;
	return 0;
}

static bool is_rows(uint8_t type)
{
	return rows_is_rows_event(type);
}

static bool is_transaction_event(const struct mysql_event *ev)
{
	if (ev->flags & ARTIFICIAL_F)
		return false;
	return ev->type == MYEV_GTID || ev->type == MYEV_GTID_TAGGED || ev->type == MYEV_ANONYMOUS_GTID ||
	       ev->type == MYEV_QUERY ||
	       ev->type == MYEV_XID || ev->type == MYEV_TABLE_MAP || is_rows(ev->type);
}

/* A transaction without a GTID (gtid_mode is not ON, or ON_PERMISSIVE):
 * it is applied like any other, but the fence cannot prove it visible by
 * its GTID, and the follower's set cannot name it. */
static void begin_without_gtid(const struct follow_ops *ops, const struct mysql_event *ev)
{
	static bool warned;

	(void)ev;
	if (!warned)
		log_warn("binlog: a transaction with no GTID (an anonymous one): its writes invalidate as "
			 "usual, but the fills of the tables written from then on are not stored (binlog "
			 "mode on MySQL needs gtid_mode = ON)");
	warned = true;
	ops->begin_gtid(NULL, NULL, 0);
}

/* One event's meaning to the follower. false: it cannot be read. */
static bool on_event(const struct follow_ops *ops, const struct mysql_event *ev, char *err, size_t cap)
{
	const char *a, *b;
	size_t alen, blen;

	if (ev->next_pos && ev->type != MYEV_ROTATE && ev->type != MYEV_GTID && ev->type != MYEV_GTID_TAGGED)
		ops->event_end(ev->next_pos);
	switch (ev->type) {
	case MYEV_ROTATE:
		if (mysql_ev_rotate(ev, &a, &alen))
			fence_note_file(a, alen);
		return true;
	case MYEV_GTID:
	case MYEV_GTID_TAGGED: {
		uint8_t uuid[GTID_UUID_LEN];
		char tag[GTID_TAG_MAX + 1] = "";
		uint64_t gno;

		if (ev->type == MYEV_GTID ? !mysql_ev_gtid(ev, uuid, &gno)
					  : !mysql_ev_gtid_tagged(ev, uuid, tag, &gno)) {
			snprintf(err, cap, "a GTID event cannot be read");
			return false;
		}
		ops->begin_gtid(uuid, tag, gno);
		if (ev->next_pos)
			ops->event_end(ev->next_pos);
		return true;
	}
	case MYEV_ANONYMOUS_GTID:
		begin_without_gtid(ops, ev);
		return true;
	case MYEV_QUERY:
		if (!mysql_ev_query(ev, &a, &alen, &b, &blen)) {
			snprintf(err, cap, "a query event cannot be read");
			return false;
		}
		ops->query(a, alen, b, blen);
		return true;
	case MYEV_TABLE_MAP: {
		struct rows_map_event e = { .raw = ev->raw, .len = ev->raw_len,
					    .checksum_len = ev->checksum_len };

		if (!mysql_ev_table_map(ev, &e.table_id, &e.db, &e.dlen, &e.table, &e.tlen)) {
			snprintf(err, cap, "a table map event cannot be read");
			return false;
		}
		ops->table_map(&e);
		return true;
	}
	case MYEV_XID:
	case MYEV_XA_PREPARE:
		ops->trx_end();
		return true;
	default:
		if (is_rows(ev->type)) {
			struct rows_event_bytes r = { ev->type, ev->raw, ev->raw_len, ev->checksum_len };

			ops->rows(&r);
		}
		return true;   /* (format description, previous GTIDs, rows query, ...) */
	}
}

enum stream_end mysql_follow_stream(struct mysql_dump *d, const struct follow_ops *ops, atomic_bool *stopping,
				    char *err, size_t cap)
{
	struct mysql_event ev;
	unsigned code;
	int rc = 1;

	while (!atomic_load(stopping) && (rc = mysql_dump_next(d, &ev, err, cap)) > 0) {
		bool hb = ev.type == MYEV_HEARTBEAT || ev.type == MYEV_HEARTBEAT_V2;

		if (!hb && !on_event(ops, &ev, err, cap))
			return STREAM_UNREADABLE;
		ops->update_state(hb, !hb && is_transaction_event(&ev), ev.timestamp);
	}
	if (rc > 0)
		return STREAM_LOST;   /* stopping */
	if (rc == 0) {
		snprintf(err, cap, "the server ended the binlog stream");
		return STREAM_LOST;
	}
	code = d->server_error;
	if (code == SOURCE_FATAL_READING_BINLOG)
		return STREAM_GONE;   /* (err: the server's own words) */
	if (code == 0)
		return STREAM_UNREADABLE;   /* the reader's: a malformed event or payload */
	return STREAM_LOST;
}
