/*
 * reasons.h: the one table of reasons a statement is not answered from the
 * cache or not stored in it.  Every layer that decides so (the shape's
 * verdict in sql/classify.c, reading the statement, the catalog, the
 * consistency rules, the binlog follower, the session's own state) names
 * its reason by id; EXPLAIN LAST STATEMENT, SHOW PROXIED QUERIES, SHOW
 * SHOAL STATUS and /metrics read the text, the label and the permanence
 * from here.  No string is compared to decide anything.
 *
 * A reason with details (which view, which table) is a record of its own,
 * made by reason_detail(): same id, permanence and label as its kind, its
 * own text.  Records are never freed, so a shape may keep one for its life.
 */
#ifndef SHOAL_SQL_REASONS_H
#define SHOAL_SQL_REASONS_H

#include <stdbool.h>
#include <stddef.h>

enum reason_id {
	WHY_OK,                   /* EXPLAIN: answered or stored; no reason */
	WHY_NO_STATEMENT,         /* EXPLAIN before the session's first statement */
	/* the shape's verdict (sql/classify.c): permanent */
	WHY_NOT_SELECT,
	WHY_MULTI_STATEMENT,
	WHY_NONDETERMINISTIC,
	WHY_SIDE_EFFECTS,
	WHY_SESSION_FUNCTION,
	WHY_USER_VARIABLE,
	WHY_SYSTEM_VARIABLE,
	WHY_SYSTEM_SCHEMA,
	WHY_UDF,
	WHY_LOCKING_READ,
	WHY_INTO,
	WHY_NO_CACHE,
	/* reading the statement (cache/session.c): permanent */
	WHY_UNREADABLE,
	WHY_TOO_LONG,
	WHY_TOO_MANY_LITERALS,
	WHY_QUERY_RULE,           /* a query rule keeps the shape out */
	/* the catalog (cache/catalog.c) */
	WHY_VIEW,                 /* a view that cannot be cached (detailed): permanent */
	WHY_TABLES_UNKNOWN,       /* the text's tables cannot be read: permanent */
	WHY_UNKNOWN_TABLE,        /* no such table or view (detailed) */
	WHY_SEQUENCE,             /* reads a sequence (detailed) */
	WHY_NO_DATABASE,
	WHY_TOO_MANY_TABLES,
	WHY_CATALOG_RELOADING,
	WHY_CATALOG_NOT_READ,
	WHY_CATALOG_TEMPS,        /* reloading, and the session may have made temporaries */
	WHY_UNREADABLE_DEFINITION,
	WHY_OUT_OF_MEMORY,
	/* consistency (cache/consist.c, cache/session.c): this time only */
	WHY_MAYBE_TEMPORARY,
	WHY_READS_TEMPORARY,
	WHY_WRITTEN_MOMENTS_AGO,
	WHY_NONDET_VCOLS,
	WHY_VCOL_TOO_LONG,
	WHY_VCOL_UNREADABLE,
	/* binlog invalidation not serving (binlog.c) */
	WHY_BINLOG_BEHIND,
	WHY_BINLOG_CATCHING_UP,
	WHY_BINLOG_CONNECTING,
	WHY_BINLOG_DOWN,
	WHY_BINLOG_NOT_STARTED,
	WHY_BINLOG_START,         /* the stream's start not yet proven visible (cache/fence.h) */
	/* the session's state (cache/session.c): this statement only */
	WHY_NO_CACHE_DEF,         /* explicit mode: no cache was created for the shape */
	WHY_PROFILING,
	WHY_GRANT_REFUSED,
	WHY_SET_ROLE,
	WHY_IN_TRANSACTION,
	WHY_READ_YOUR_WRITES,
	WHY_LOCK_TABLES,
	WHY_READ_UNCOMMITTED,
	WHY__COUNT
};

struct reason {
	enum reason_id id;
	bool permanent;     /* the shape is never cached (a verdict, not this time only) */
	const char *label;  /* the reason label in /metrics (no details) */
	const char *text;   /* what EXPLAIN LAST STATEMENT and SHOW PROXIED QUERIES say */
};

extern const struct reason reason_table[WHY__COUNT];

static inline const struct reason *reason_of(enum reason_id id)
{
	return &reason_table[id];
}

/* A record of kind id whose text is printf(fmt, ...), the same record for
 * the same text; the plain reason_of(id) when memory runs out. */
const struct reason *reason_detail(enum reason_id id, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
