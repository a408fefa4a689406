/*
 * vcols.h: whether a base table has a generated column whose value is not
 * deterministic (RAND(), NOW(), a user variable, a stored function ...).
 * A read of such a table is never served from the cache: its answer changes
 * from one read to the next, and reading it may move the session's
 * variables.
 *
 * A table's generated columns are in its definition, and loading a
 * definition on the catalog reader's connection could take from a client
 * the warnings the server gives the first session that opens the table. So
 * a table is checked only after a client's own read of it has run (its
 * definition is then in the server's table cache), by the catalog reader
 * (information_schema.COLUMNS for that one table), and nothing is stored
 * for a table until it has been checked. Verdicts are forgotten at each
 * catalog read (a DDL may have changed the table).
 *
 * Thread-safety: a table's verdict is an atomic in its inval_table, read by
 * misses (never by a hit); the queue of tables to check has its own mutex.
 */
#ifndef SHOAL_CACHE_VCOLS_H
#define SHOAL_CACHE_VCOLS_H

#include <mysql.h>

#include "cache/inval.h"

enum vcols_verdict {
	VCOLS_UNKNOWN = 0,  /* not checked since the last catalog read */
	VCOLS_QUEUED,       /* to be checked by the catalog reader */
	VCOLS_PLAIN,        /* no generated column that is not deterministic */
	VCOLS_NONDET,       /* one is not deterministic: never cached */
};

enum vcols_verdict vcols_verdict(struct inval_table *t);
/* The catalog generation: moves at each catalog read (and so after each
 * DDL the node or the binlog sees); a table's column definition is current
 * in the generation it was read in (tcols.h). */
uint32_t vcols_generation(void);
/* A client's read of t has run: have the catalog reader check t (once).
 * True when a check was queued now. */
bool vcols_check_later(struct inval_table *t);
/* t is a view: no generated column of its own (its base tables are
 * checked as tables of their own), so no check is asked of the server,
 * whose reading of a view's columns opens the view and its tables on the
 * reader's connection (which changed the plan of a client's next
 * execution: main.derived_view). */
void vcols_set_view(struct inval_table *t);
/* The catalog was read again: every verdict is forgotten. */
void vcols_forget_all(void);
/* Tables waiting for a check (the reader's loop asks). */
bool vcols_pending(void);
/* The catalog reader: check the queued tables on m. -1 when the connection
 * failed (the rest stays queued). */
int vcols_run_queue(MYSQL *m);
/* The verdict for one generation expression (for the reader and tests):
 * NULL when deterministic, else the classifier's reason. */
const struct reason *vcols_expression_reason(const char *expr, size_t len);

#endif
