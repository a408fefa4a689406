/*
 * consist.h: a session's part in keeping cached answers consistent with
 * the upstream: what the statement in flight writes (invalidated before its
 * OK reaches the client; inside a transaction again when it ends), the
 * session's temporary tables (a name that is one is never answered from the
 * cache, and a read of it never fills an entry), and the dependencies of a
 * fill (the base tables it reads, with their generations taken before the
 * query goes upstream). See docs/caching.md, "Consistency".
 *
 * One per client session, owned by its worker: no locks of its own.
 */
#ifndef SHOAL_CACHE_CONSIST_H
#define SHOAL_CACHE_CONSIST_H

#include <stdbool.h>
#include <stddef.h>

#include "cache/inval.h"
#include "cache/match_build.h"
#include "cache/store.h"
#include "session/stmts.h"
#include "sql/stmt.h"

#define CONSIST_MAX_WRITES 32
#define CONSIST_SCHEMA_MAX 256
#define CONSIST_NAMES_MAX 512

enum consist_temp_op { TEMP_NONE, TEMP_CREATE, TEMP_DROP, TEMP_RENAME };

struct consist {
	char schema[CONSIST_SCHEMA_MAX];      /* the schema of the session's settings ("" none) */

	/* temporary tables: "schema\0name\0" lower-cased, one after another */
	char *temps;
	size_t temps_len, temps_cap;
	unsigned ntemps;
	bool temps_unknown;       /* a CALL or the like may have made some */
	bool temps_pending;       /* a routine or trigger ran while the catalog was
				   * stale: whether it may have made some is decided
				   * by the next read of a cached shape (catalog read) */

	/* the statement in flight */
	bool cur_set;             /* consist_statement() ran for it */
	struct inval_table *cur[CONSIST_MAX_WRITES];
	unsigned ncur;
	bool cur_opaque;          /* writes not in the text (CALL, triggers calling routines, ...) */
	bool cur_catalog;         /* DDL: read the catalog again */
	bool cur_routine_ddl;     /* it may run DDL the text does not show: read the
				   * catalog again, unless its OK is held for the
				   * binlog (which brings that DDL first) */
	bool cur_delayed;         /* INSERT / REPLACE DELAYED: its rows land after the OK */
	bool cur_flush;           /* FLUSH TABLE(S): the server reopens tables, which
				   * can change an answer's warnings: every entry goes */
	enum consist_temp_op cur_temp;
	char cur_names[CONSIST_NAMES_MAX];    /* its temp names, "schema\0name\0" pairs */
	size_t cur_names_len;

	/* what the open transaction wrote: invalidated again when it ends */
	struct inval_table *txn[CONSIST_MAX_WRITES];
	unsigned ntxn;
	bool txn_all;
	bool txn_opaque;          /* it ran a statement whose writes are unknown (binlog mode) */

	/* the parameters of the COM_STMT_EXECUTE being looked up (for its row
	 * constraints: match_build.h), while has_params */
	bool has_params;
	struct match_params params;
};

void consist_init(struct consist *s);
void consist_free(struct consist *s);
/* COM_CHANGE_USER, COM_RESET_CONNECTION: the temporary tables are gone. */
void consist_reset(struct consist *s);
/* The session's table locks end without a statement the node relays (it
 * disconnects, or is reset, under LOCK TABLES): what it wrote under them is
 * others' to see now. No hold is possible: writes whose tables are unknown
 * invalidate every entry. (The server releases the locks as it ends the
 * upstream connection, which the node has closed first; a fill that reads
 * in between is the window docs/caching.md names.) */
void consist_release(struct consist *s);
/* The session's current schema (from its settings). */
void consist_set_schema(struct consist *s, const char *schema);

/* A statement that may write is about to go upstream: work out what it
 * writes (unqualified names in schema, the session's current one) from its
 * reading (st, read: stmt.h; NULL when it could not be read, which counts
 * as hidden). hidden: the text cannot be trusted to show all it runs. */
void consist_statement(struct consist *s, const struct stmt *st, bool hidden, const char *schema);
/* Should this statement (st, read), which may write, wait for the catalog
 * to be read first? While anything may be cached and a DDL made the
 * catalog stale, a write's triggers and cascading keys, and the routines a
 * statement calls, must be known before it goes upstream. */
bool consist_wants_catalog(const struct stmt *st);
/* consist_done() asked for a hold and the binlog cannot give it (the
 * follower is not streaming, or did not get there in time): every entry
 * goes, and the catalog is read again (the statement may have run DDL). */
void consist_hold_failed(void);

/* Its answer is complete (in_txn: the session is in a transaction now;
 * ok: the answer was no error), and not yet written to the client.
 * Invalidates (not in ttl mode), records temporary tables, asks for the
 * catalog after DDL. Called after every answer: it also sees the end of a
 * transaction. True (binlog mode) when writes the text does not show were
 * committed: the caller must hold the answer until the binlog follower has
 * applied them, or else invalidate everything. */
bool consist_done(struct consist *s, bool in_txn, bool ok);

/* Does the open transaction's write set hold a table e read (or is it
 * unknown)? Then only the upstream has the rows this session must see. */
bool consist_txn_wrote_into_slow(const struct consist *s, const struct cache_entry *e);
static inline bool consist_txn_wrote_into(const struct consist *s, const struct cache_entry *e)
{
	return (s->ntxn || s->txn_all) && consist_txn_wrote_into_slow(s, e);
}

/* The session has temporary tables (or may have): queries must be read
 * before a cache lookup. */
static inline bool consist_has_temps(const struct consist *s)
{
	return s->ntemps > 0 || s->temps_unknown || s->temps_pending;
}

/* A cacheable read (st, read) about to be looked up and maybe filled, with
 * unqualified names in schema: NULL with out filled (its dependencies,
 * snapshot now), or why it must go upstream uncached. *retry (may be NULL):
 * the next read of the catalog may change the answer. */
const struct reason *consist_read_deps(struct consist *s, const struct stmt *st, const char *schema,
				       struct fill_deps *out, bool *retry);

/* The COM_STMT_EXECUTE pl[0, len) of st is about to be looked up: its
 * parameters give its placeholders' values to the fill's row constraints
 * (consist_read_deps), until called again with st NULL (after the
 * lookup: they point into pl). */
void consist_exec_params(struct consist *s, const struct stmt_info *st, const uint8_t *pl, uint32_t len);

/* Is what a PREPARE of the statement (st, read) answers decided by tables
 * the catalog knows: a read whose every name resolves to base tables or
 * cacheable views of the catalog, naming no routine, in a session with no
 * temporary table (cache/session.c keeps the upstream's answer only then)? */
bool consist_prepare_resolves(struct consist *s, const struct stmt *st, const char *schema);

#endif
