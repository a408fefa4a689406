/*
 * commands.h: the cache SQL accepted on the data port (Readyset's syntax):
 * CREATE CACHE, DROP CACHE, DROP ALL CACHES, FLUSH CACHE, FLUSH ALL SHALLOW
 * CACHES, SHOW CACHES, SHOW PROXIED QUERIES, EXPLAIN LAST STATEMENT,
 * SHOW SHOAL STATUS and SHOW READYSET STATUS. They are answered by the node
 * and never reach the upstream; a syntax error in one is ERROR 1064.
 *
 * Explicit cache definitions are kept in <data_dir>/caches.json and
 * recreated at start.
 */
#ifndef SHOAL_CACHE_COMMANDS_H
#define SHOAL_CACHE_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/packet.h"
#include "sql/cachesql.h"
#include "sql/reasons.h"
#include "sql/stmt.h"

/* Where the answer to a cache command goes, and what of the session shapes
 * it. */
struct cache_reply {
	struct pbuf *out;            /* the client's output */
	uint32_t caps;               /* the client's capabilities */
	uint16_t status;             /* status flags for the answer's OK/EOF */
	const char *last_dest;       /* for EXPLAIN LAST STATEMENT */
	const struct reason *last_reason;
};

/* If the statement (st: its reading, sql/stmt.h, digest read) is a cache
 * command, answer it into r->out and return true. */
bool cache_sql(const struct cache_reply *r, struct stmt *st);

/* Answer SHOW READYSET STATUS (readyset: its three rows) or SHOW SHOAL
 * STATUS into r->out. `Status` is `Online`, or `Maintenance Mode` while
 * the node drains; `Database Connection` is `Connected` unless the last
 * upstream connection attempt failed (`Unreachable`). */
void cache_status_answer(const struct cache_reply *r, bool readyset);

/* The parsed form of CREATE CACHE, for replay and tests. */
struct create_cache {
	bool from_id;                /* FROM q_... */
	char name[64];
	int ttl_ms, refresh_ms, coalesce_ms; /* -1: default */
	int txn;                     /* enum txn_policy */
	const char *select;          /* FROM <select>: points into the input */
	size_t select_len;
	char query_id[20];
};

/* Parse a cache command (sql/cachesql.h reads it). Returns the command
 * kind (> 0), 0 if q is not one, or -1 on a syntax error (with a message
 * naming where). */
enum cache_cmd {
	CC_NONE = SQL_CC_NONE, CC_CREATE = SQL_CC_CREATE, CC_DROP = SQL_CC_DROP,
	CC_DROP_ALL = SQL_CC_DROP_ALL, CC_FLUSH = SQL_CC_FLUSH, CC_FLUSH_ALL = SQL_CC_FLUSH_ALL,
	CC_SHOW_CACHES = SQL_CC_SHOW_CACHES, CC_SHOW_PROXIED = SQL_CC_SHOW_PROXIED,
	CC_EXPLAIN_LAST = SQL_CC_EXPLAIN_LAST, CC_SHOW_STATUS = SQL_CC_SHOW_STATUS,
	CC_SHOW_RS_STATUS = SQL_CC_SHOW_RS_STATUS,
};
struct cache_cmd_args {
	struct create_cache create;
	char target[128];            /* DROP/FLUSH name or id; SHOW ... WHERE query_id */
	long limit;                  /* SHOW PROXIED QUERIES LIMIT n, -1 = none */
};
int cache_cmd_parse(const char *q, size_t n, struct cache_cmd_args *a, char *err, size_t errlen);

/* Apply a CREATE CACHE. 0, or -1 with a MySQL error code and message. */
int cache_create(const struct create_cache *cc, char *query_id_out, uint16_t *code,
		 char *err, size_t errlen);

/* Would cache_create() accept cc? 0, or -1 with a message. No change. */
int cache_check(const struct create_cache *cc, char *err, size_t errlen);

/* Load <data_dir>/caches.json at start (missing file: nothing to do). */
void cache_persist_load(void);
/* Write the explicit caches to <data_dir>/caches.json. */
void cache_persist_save(void);

#endif
