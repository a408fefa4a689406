/*
 * catalog.h: what the node knows about the upstream's schema objects, read
 * from its information_schema by a thread of its own (one blocking
 * connection with the upstream login): which names are base tables and
 * which are views (with the base tables behind each view, and whether its
 * definition can be cached), the foreign keys whose ON DELETE / ON UPDATE
 * actions change other tables, and the tables that triggers write.
 *
 * It is read at start, again after each DDL statement the node sees (its
 * own traffic or the binlog), and every minute. Until a reload requested
 * by a DDL is done, reads cannot be resolved (their shapes are not cached
 * meanwhile): a new view must not be mistaken for a table.
 *
 * Thread-safety: the loaded snapshot is swapped under a rwlock; lookups
 * take it for reading (misses and writes, never a cache hit).
 */
#ifndef SHOAL_CACHE_CATALOG_H
#define SHOAL_CACHE_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include "cache/catalog_row.h"
#include "cache/inval.h"
#include "cache/store.h"
#include "sql/tables.h"

/* Start the reader thread (reads at once) / stop it. */
int catalog_start(void);
void catalog_stop(void);

/* A DDL statement ran: read the catalog again; until then reads are not
 * resolved. */
void catalog_changed(void);
/* Moves with each catalog_changed(): with each DDL statement the node
 * sees (what depends on table definitions, such as a kept PREPARE answer,
 * is stamped with it). */
unsigned catalog_ddl_seen(void);

/* Read the catalog now if it is not ready, and wait (this thread blocks,
 * polling) until it is, at most timeout_ms: true when ready. For the
 * binlog follower's replay, which serves nothing meanwhile. */
bool catalog_await_ready(int timeout_ms);

/* Loaded, and no reload requested by a DDL pending. */
bool catalog_ready(void);

/* The base tables (and views) a read statement depends on. Unqualified
 * names are in schema (NULL or "": none selected). Returns true with
 * out[0, *n); false with a reason (sql/reasons.h, never freed):
 * a view whose definition is not cacheable, a name that is no known table,
 * the catalog not ready, too many tables. *retry (may be NULL) is set when
 * reading the catalog again may change the answer (see catalog_wait). */
bool catalog_resolve_reads(const struct sql_tables *t, const char *schema,
			   struct inval_table **out, unsigned cap, unsigned *n,
			   const struct reason **reason, bool *retry);

/* A session waits for the next read of the catalog (which starts now):
 * when it is done, the wake function is called for w (any thread, as the
 * store's; see store.h). */
void catalog_set_wake(store_wake_fn wake);
void catalog_wait(struct store_waiter *w);
/* Stop waiting (timeout, the session ends). */
void catalog_cancel_wait(struct store_waiter *w);

/* The tables a write statement changes: its written tables, the base
 * tables of a written view, and what writes to them also change (foreign
 * keys with cascading actions, transitively; tables written by triggers).
 * *opaque is set when that set is not fully known (a trigger calls a
 * routine, the catalog was never read, too many tables). */
void catalog_resolve_writes(const struct sql_tables *t, const char *schema,
			    struct inval_table **out, unsigned cap, unsigned *n, bool *opaque);

/* The same for one written table (the binlog's row events). */
void catalog_write_closure(const char *schema, size_t slen, const char *name, size_t nlen,
			   struct inval_table **out, unsigned cap, unsigned *n, bool *opaque);

/* The base table schema.name as the catalog knows it (not a view, nor a
 * sequence), or NULL (unknown, or the catalog is not ready). */
struct inval_table *catalog_base_table(const char *schema, size_t slen, const char *name, size_t nlen);
/* The tables a change to t's rows also changes through cascading foreign
 * keys, transitively (not t; a trigger's writes are not among them: a
 * row-format binlog logs them as rows of their own, while a cascade's are
 * not logged). False when it is not known: t is no table of the catalog,
 * the catalog is not ready, or there are more than cap. */
bool catalog_cascade_closure(struct inval_table *t, struct inval_table **out, unsigned cap, unsigned *n);

/* May a write to the tables t writes create temporary tables in the
 * writing session: a trigger of theirs (or of what a write to them also
 * changes) creates one, or calls a routine that may? */
bool catalog_writes_may_create_temps(const struct sql_tables *t, const char *schema);

/* May the stored routine schema.name create temporary tables (or call
 * something that may)? True when it is not known. */
bool catalog_routine_may_create_temps(const char *schema, size_t slen, const char *name, size_t nlen);

/* A client's read of t has run upstream: the reader checks t's generated
 * columns now (cache/vcols.h), once per catalog read. A session waits for
 * the checks queued so far (woken as catalog_wait's are). */
void catalog_check_vcols(struct inval_table *t);
void catalog_wait_vcols(struct store_waiter *w);
void catalog_cancel_vcols_wait(struct store_waiter *w);

/* May any routine of the catalog create temporary tables (or call one
 * that may)? CATALOG_TEMPS_UNKNOWN while the catalog is not current: the
 * readiness and the answer are read together, under one lock (a caller
 * that asked "ready?" first could be answered for a catalog that went
 * stale in between). */
enum catalog_temps { CATALOG_TEMPS_NONE, CATALOG_TEMPS_SOME, CATALOG_TEMPS_UNKNOWN };
enum catalog_temps catalog_any_temps(void);
/* Counters for SHOW SHOAL STATUS and /metrics. */
unsigned catalog_loads(void);
size_t catalog_objects(void);

/* Build a snapshot from rows and make it current (the reader thread does
 * this after each read). 0, or -1 when out of memory. */
int catalog_load_rows(const struct catalog_row *rows, size_t n, bool lower_case_names);
/* Free the current snapshot (at exit). */
void catalog_free(void);

#endif
