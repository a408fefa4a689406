/*
 * reasons.c: the reasons table and the detailed reasons (see reasons.h).
 * Detailed records are interned in one list under a mutex, taken only when
 * a verdict with details is made (a catalog read, a miss), never on a hit.
 */
#include "sql/reasons.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PERM(id, label, text) [id] = { id, true, label, text }
#define ONCE(id, label, text) [id] = { id, false, label, text }
/* a verdict of the shape's text: its label is its text */
#define SHAPE(id, text) PERM(id, text, text)

const struct reason reason_table[WHY__COUNT] = {
	ONCE(WHY_OK, "ok", "ok"),
	ONCE(WHY_NO_STATEMENT, "no statement", "no statement yet"),
	SHAPE(WHY_NOT_SELECT, "not a SELECT"),
	SHAPE(WHY_MULTI_STATEMENT, "multiple statements"),
	SHAPE(WHY_NONDETERMINISTIC, "non-deterministic function"),
	SHAPE(WHY_SIDE_EFFECTS, "side effects"),
	SHAPE(WHY_SESSION_FUNCTION, "session-specific function"),
	SHAPE(WHY_USER_VARIABLE, "user variable"),
	SHAPE(WHY_SYSTEM_VARIABLE, "system variable"),
	SHAPE(WHY_SYSTEM_SCHEMA, "system schema"),
	SHAPE(WHY_UDF, "user-defined or stored function"),
	SHAPE(WHY_LOCKING_READ, "locking read"),
	SHAPE(WHY_INTO, "INTO"),
	SHAPE(WHY_NO_CACHE, "SQL_NO_CACHE"),
	SHAPE(WHY_UNREADABLE, "unreadable query"),
	SHAPE(WHY_TOO_LONG, "query too long"),
	SHAPE(WHY_TOO_MANY_LITERALS, "too many literals"),
	SHAPE(WHY_QUERY_RULE, "query rule"),
	PERM(WHY_VIEW, "view", "view definition not cacheable"),
	SHAPE(WHY_TABLES_UNKNOWN, "cannot determine the tables"),
	ONCE(WHY_UNKNOWN_TABLE, "unknown table", "no known table or view"),
	ONCE(WHY_SEQUENCE, "sequence", "reads a sequence"),
	ONCE(WHY_NO_DATABASE, "no database", "no database selected"),
	ONCE(WHY_TOO_MANY_TABLES, "too many tables", "too many tables"),
	ONCE(WHY_CATALOG_RELOADING, "catalog", "catalog being read again after DDL"),
	ONCE(WHY_CATALOG_NOT_READ, "catalog", "catalog not read yet"),
	ONCE(WHY_CATALOG_TEMPS, "catalog",
	     "catalog being read again after DDL (a routine the session ran may create temporary tables)"),
	ONCE(WHY_UNREADABLE_DEFINITION, "unreadable definition", "unreadable definition"),
	ONCE(WHY_OUT_OF_MEMORY, "out of memory", "out of memory"),
	ONCE(WHY_MAYBE_TEMPORARY, "temporary table",
	     "the session may have temporary tables (a routine it called may create them)"),
	ONCE(WHY_READS_TEMPORARY, "temporary table", "reads a temporary table"),
	ONCE(WHY_WRITTEN_MOMENTS_AGO, "written moments ago", "a table it reads was written moments ago"),
	ONCE(WHY_NONDET_VCOLS, "generated column",
	     "a table it reads has a generated column that is not deterministic"),
	ONCE(WHY_VCOL_TOO_LONG, "generated column", "generation expression too long to read"),
	ONCE(WHY_VCOL_UNREADABLE, "generated column", "generation expression not readable"),
	ONCE(WHY_BINLOG_BEHIND, "binlog", "the binlog stream is too far behind"),
	ONCE(WHY_BINLOG_CATCHING_UP, "binlog", "the binlog stream is catching up"),
	ONCE(WHY_BINLOG_CONNECTING, "binlog", "the binlog stream is not connected yet"),
	ONCE(WHY_BINLOG_DOWN, "binlog", "the binlog stream is down"),
	ONCE(WHY_BINLOG_NOT_STARTED, "binlog", "the binlog stream is not started (nothing was cached yet)"),
	ONCE(WHY_BINLOG_START, "binlog",
	     "the binlog stream's start is not yet proven visible on the upstream"),
	ONCE(WHY_NO_CACHE_DEF, "no cache", "no cache for this query"),
	ONCE(WHY_PROFILING, "profiling", "profiling: SHOW PROFILES lists each statement the session runs"),
	ONCE(WHY_GRANT_REFUSED, "grant check", "the upstream refused this user's grant check"),
	ONCE(WHY_SET_ROLE, "role", "SET ROLE: the session has its own privileges"),
	ONCE(WHY_IN_TRANSACTION, "transaction", "inside a transaction"),
	ONCE(WHY_READ_YOUR_WRITES, "read-your-writes", "read-your-writes window"),
	ONCE(WHY_LOCK_TABLES, "lock tables", "LOCK TABLES: the session reads its own version of its tables"),
	ONCE(WHY_READ_UNCOMMITTED, "read uncommitted",
	     "READ UNCOMMITTED: the session reads rows not yet committed"),
};

struct detailed {
	struct detailed *next;
	struct reason r;
	char text[];
};

static pthread_mutex_t detail_lock = PTHREAD_MUTEX_INITIALIZER;
static struct detailed *details;

const struct reason *reason_detail(enum reason_id id, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	struct detailed *d;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&detail_lock);
	for (d = details; d; d = d->next)
		if (d->r.id == id && strcmp(d->text, buf) == 0)
			break;
	if (!d && (d = malloc(sizeof(*d) + strlen(buf) + 1))) {
		strcpy(d->text, buf);
		d->r = reason_table[id];
		d->r.text = d->text;
		d->next = details;
		details = d;
	}
	pthread_mutex_unlock(&detail_lock);
	return d ? &d->r : reason_of(id);
}
