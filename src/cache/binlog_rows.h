/*
 * binlog_rows.h: the binlog follower's table maps and row events (binlog.c
 * reads the stream and hands them here): row-precise invalidation (issue
 * 40, docs/caching.md "What a write invalidates").
 *
 * A TABLE_MAP event is decoded (tablemap.h) and its table looked up in the
 * catalog. A base table the catalog knows gets its row events read one by
 * one (rowimage.h): for each, the table's fence is stored with the event's
 * position and its gen moved (inval_row_fenced: in-flight fills of the table
 * are refused, its entries without constraints on it retired), then every
 * image, before and after, is matched against the index (match_index.h),
 * which retires the entries whose constraints on the table it satisfies or
 * may. An UPDATE or DELETE also changes, unlogged, the children of the
 * table's cascading foreign keys: those are invalidated whole when the
 * transaction ends, with the transaction's fence.
 *
 * Table-wide, when the transaction ends, as before row precision: a table
 * the catalog does not know as a base table (a view's name cannot be in a
 * table map; a table made since the catalog was read), a table map or rows
 * event that cannot be decoded or whose column count differs from its map,
 * a rows event whose table map is not known. Everything, when the catalog
 * is not ready (a DDL since its last read may have added a cascading key).
 *
 * Thread-safety: the follower thread only (the maps, the decoded values);
 * what it changes is shared through inval.h and match_index.h.
 */
#ifndef SHOAL_CACHE_BINLOG_ROWS_H
#define SHOAL_CACHE_BINLOG_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/inval.h"

#define TRX_TABLES 256

/* The tables a transaction invalidates whole when it ends, and why. */
struct trx_set {
	unsigned seq;                   /* moves with each transaction (its table maps) */
	struct inval_table *t[TRX_TABLES];
	uint8_t why[TRX_TABLES];        /* enum inval_why */
	unsigned n;
	bool all;                       /* everything (more tables, or not known) */
	uint8_t all_why;
};

/* t, invalidated whole when the transaction ends (counted under why). */
void trx_set_add(struct trx_set *s, struct inval_table *t, enum inval_why why);
/* Everything, when the transaction ends. */
void trx_set_all(struct trx_set *s, enum inval_why why);

/* A TABLE_MAP event: its table and the whole event's bytes (header,
 * body, checksum_len bytes of checksum; raw NULL when the bytes were not
 * kept: its table goes whole). */
struct rows_map_event {
	uint64_t table_id;
	const char *db, *table;
	size_t dlen, tlen;
	const uint8_t *raw;
	size_t len;
	unsigned checksum_len;
};
void rows_table_map(struct trx_set *s, const struct rows_map_event *e);
/* Is this event type a rows event? */
bool rows_is_rows_event(unsigned type);
/* A rows event: its type and the whole event's bytes, as above. */
struct rows_event_bytes {
	unsigned type;
	const uint8_t *raw;
	size_t len;
	unsigned checksum_len;
};
/* A rows event ending at offset end of the current binlog file: its
 * table's entries are matched, or the table goes into s. settle_ms:
 * binlog_settle_ms. */
void rows_event(struct trx_set *s, const struct rows_event_bytes *ev, uint32_t end, int settle_ms);

/* Row events seen and decoded, for SHOW SHOAL STATUS and /metrics. */
struct rows_stats {
	uint64_t events;       /* rows events matched by row */
	uint64_t images;       /* row images matched */
	uint64_t table_wide;   /* rows events whose table went whole */
};
void rows_get_stats(struct rows_stats *out);

#endif
