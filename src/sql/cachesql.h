/*
 * cachesql.h: the grammar of the cache SQL a client may send on the data
 * port (Readyset's syntax; cache/commands.h answers it), read from the
 * tokens of the one lexer (stmt.h's cursor: comments of every kind
 * skipped, strings and `quoted` names read as the server reads them):
 *
 *   CREATE [SHALLOW] CACHE [POLICY TTL n unit [REFRESH [EVERY] n unit]]
 *       [COALESCE n unit] [ALWAYS | UNTIL WRITE] [name] FROM {select | q_id}
 *   DROP CACHE name | DROP ALL CACHES | FLUSH CACHE name
 *   FLUSH ALL [SHALLOW] CACHES
 *   SHOW CACHES [WHERE query_id = id]
 *   SHOW PROXIED QUERIES [WHERE query_id = id] [LIMIT n]
 *   SHOW READYSET STATUS | SHOW SHOAL STATUS | EXPLAIN LAST STATEMENT
 *
 * with unit one of SECONDS, SECOND, S, MILLISECONDS, MILLISECOND, MS (also
 * written after the number: 10s). A name is a word of letters, digits, _
 * and $, or a quoted one without its quote inside it. Nothing is allocated:
 * the SELECT points into the text.
 */
#ifndef SHOAL_SQL_CACHESQL_H
#define SHOAL_SQL_CACHESQL_H

#include <stdbool.h>
#include <stddef.h>

#include "sql/stmt.h"

enum sql_cc_kind {
	SQL_CC_NONE = 0, SQL_CC_CREATE, SQL_CC_DROP, SQL_CC_DROP_ALL, SQL_CC_FLUSH, SQL_CC_FLUSH_ALL,
	SQL_CC_SHOW_CACHES, SQL_CC_SHOW_PROXIED, SQL_CC_EXPLAIN_LAST, SQL_CC_SHOW_STATUS,
	SQL_CC_SHOW_RS_STATUS,
};

enum sql_cc_txn { SQL_CC_TXN_DEFAULT = 0, SQL_CC_TXN_ALWAYS, SQL_CC_TXN_UNTIL_WRITE };

/* The longest number of milliseconds (and LIMIT) accepted. */
#define SQL_CC_MAX_MS 86400000

struct sql_cache_cmd {
	/* CREATE CACHE */
	bool from_id;                 /* FROM q_... */
	char name[64];
	int ttl_ms, refresh_ms, coalesce_ms; /* -1: not given */
	int txn;                      /* enum sql_cc_txn */
	const char *select;           /* FROM <select>: points into the text */
	size_t select_len;
	char query_id[20];
	/* the others */
	char target[128];             /* DROP / FLUSH name or id; SHOW ... WHERE query_id */
	long limit;                   /* SHOW PROXIED QUERIES LIMIT n, -1 = none */
};

/* Read a cache command from a read statement's tokens (st: stmt_read), or
 * from a text. Returns its kind (> 0), SQL_CC_NONE when the text is no
 * cache command, or -1 on a syntax error (err: a message naming where). */
int sql_cache_cmd_stmt(const struct stmt *st, struct sql_cache_cmd *a, char *err, size_t errlen);
int sql_cache_cmd_text(const char *q, size_t n, struct sql_cache_cmd *a, char *err, size_t errlen);

#endif
