/*
 * snapshot.h: the cache's snapshot file (cache_snapshot): every entry the
 * node could serve, written at the end of a graceful stop, with what it
 * takes to judge it later: its key, result, the tables it read, the user
 * and settings it was filled under, the TTL it had left, and the upstream's
 * identity and binlog position when it was written.
 *
 * The format (version 2, integers little-endian, str = u16 length + bytes;
 * version 1, still read, is the same without the entries' constraints):
 *   header  "SHOALSNP" u32 version u32 flags i64 written_unix_ms
 *           str node_version str upstream(host:port) u32 server_id(0: none)
 *           str invalidation_mode str gtid_position("" : none) u32 crc32
 *   record  u8 kind u32 length payload u32 crc32(kind, length, payload)
 *     'S'   u32 saved_id, the settings list (settings.h) the keys name by id
 *     'U'   u32 saved_id, str user: the configured user a key's id stood for
 *     'D'   u32 index u64 digest u8 explicit i32 ttl_ms i32 refresh_ms
 *           str name str query_text: a query shape
 *     'E'   u32 shape i64 ttl_left_ms u32 upstream_us u32 rows u64 hits
 *           u16 status_off[2] u16 ndeps (str schema str table)*ndeps
 *           u32 key_len key u32 resp_len resp
 *           u16 cons_len u8 ntab u8 npost cons: an entry, with its row
 *           constraints (cache/match.h's blob; cons_len 0: none)
 *     'Z'   u64 entries u64 bytes: the end; nothing may follow
 * Flags: SNAPSHOT_KEYS_ONLY (cache_snapshot_data off): every entry's
 * resp_len is 0 and its status offsets 0; the file holds no result.
 * Settings and user ids are the writing node's own (interned per run): a
 * key names them at bytes 2..5 (settings), 6..9 (user, 0 = shared) and,
 * for a prepared statement's key ('B'), at the 4 bytes after its text's
 * NUL (the settings it was prepared under). Every id a key names has its
 * record before the entry, and every entry's shape its 'D'.
 *
 * A file is trusted whole or not at all: snapshot_parse() checks every
 * length, checksum and reference before it hands anything over.
 */
#ifndef SHOAL_CACHE_SNAPSHOT_H
#define SHOAL_CACHE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SNAPSHOT_VERSION 2
#define SNAPSHOT_VERSION_MIN 1        /* the oldest read (its entries have no constraints) */
#define SNAPSHOT_KEYS_ONLY 0x1u       /* header flag: the results are left out */

struct snapshot_header {
	uint32_t version;
	int64_t written_ms;           /* Unix time, ms */
	char node_version[64];
	char upstream[320];           /* host:port */
	uint32_t server_id;           /* the upstream's @@server_id; 0: not known */
	char mode[16];                /* the invalidation mode it was written in */
	char gtid[2048];              /* the binlog position it is consistent at; "" : none */
	bool keys_only;               /* SNAPSHOT_KEYS_ONLY: no result, the keys are refilled */
};

struct snapshot_shape {
	uint32_t index;
	uint64_t digest;
	bool explicit_cache;
	int32_t ttl_ms, refresh_ms;
	const char *name, *text;      /* not NUL-terminated */
	size_t name_len, text_len;
};

struct snapshot_entry {
	uint32_t shape;
	int64_t ttl_left_ms;
	uint32_t upstream_us, rows;
	uint64_t hits;
	uint16_t status_off[2];
	uint16_t ndeps;
	const uint8_t *deps;          /* ndeps × (str schema, str table) */
	size_t deps_len;
	const uint8_t *key, *resp;
	uint32_t key_len, resp_len;
	const uint8_t *cons;          /* row constraints (match.h), checked whole; NULL: none */
	uint16_t cons_len;
	uint8_t ntab, npost;
};

/* What snapshot_parse() hands over, in file order; a non-zero return stops
 * it. Any callback may be NULL. */
struct snapshot_visitor {
	void *arg;
	int (*header)(const struct snapshot_header *h, void *arg);
	int (*settings)(uint32_t saved_id, const uint8_t *list, size_t len, void *arg);
	int (*user)(uint32_t saved_id, const char *name, size_t len, void *arg);
	int (*shape)(const struct snapshot_shape *d, void *arg);
	int (*entry)(const struct snapshot_entry *e, void *arg);
};

struct snapshot_stats {
	uint64_t entries, bytes;      /* entries, and their keys' and results' bytes */
	uint64_t shapes, skipped;     /* skipped: entries left out (their user gone, ...) */
	uint64_t file_bytes;
	double seconds;
};

/* Write every entry a lookup at now_ms would serve to path (a temporary
 * file beside it, fsync, rename, fsync of the folder; mode 0600), taking at
 * most timeout_ms; with keys_only, without their results. 0, or -1 with
 * err set: path is then as it was. */
int snapshot_write(const char *path, bool keys_only, int64_t now_ms, int timeout_ms,
		   struct snapshot_stats *st, char *err, size_t cap);

/* The same to an open stream (a peer's copy, GET /snapshot): not synced,
 * nothing renamed; f is flushed, not closed. */
int snapshot_write_stream(FILE *f, int64_t now_ms, int timeout_ms, struct snapshot_stats *st, char *err,
			  size_t cap);

/* Check buf whole (magic, version, lengths, checksums, references, the
 * end record), then hand it to v (NULL: check only). 0, or -1 with err
 * saying what is wrong and where; nothing is handed over then. A callback's
 * non-zero return is returned as is. */
int snapshot_parse(const uint8_t *buf, size_t len, const struct snapshot_visitor *v,
		   struct snapshot_stats *st, char *err, size_t cap);

/* The i-th dependency of e: schema and table (not NUL-terminated). */
bool snapshot_entry_dep(const struct snapshot_entry *e, unsigned i, const char **schema,
			size_t *slen, const char **table, size_t *tlen);

/* Write the node's snapshot to cache_snapshot now (the end of a stop, or
 * the admin's SAVE CACHE TO DISK: why says which, "at the stop") and log what was written
 * and how long it took, or why not. 0 (st filled), 1 when cache_snapshot
 * is not set, -1 (err says why; the file before it stays). */
int snapshot_save(const char *why, struct snapshot_stats *st, char *err, size_t cap);

/* The whole file at path, malloc'd (free() it): NULL, errno set, when it
 * cannot be read (EINVAL: not a regular file). */
uint8_t *snapshot_read_file(const char *path, size_t *len);

/* shoal --check-snapshot PATH: read and check the file, print what it holds
 * to out. 0 when it is sound, 1 when not (the reason printed), 2 when it
 * cannot be read. */
int snapshot_check_file(const char *path, FILE *out);

#endif
