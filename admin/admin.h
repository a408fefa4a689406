/*
 * admin.h: the node's admin interface: a MySQL-protocol port (default
 * 127.0.0.1:6035) in ProxySQL's conventions, backed by an embedded SQLite
 * database with three schemas: main (the configuration that admin SQL
 * edits, in memory), disk (<data_dir>/shoal.db) and stats (in memory,
 * rebuilt from live counters). Everything runs on the main thread's loop.
 * See docs/admin.md.
 *
 * This header is the admin interface's face to the rest of the node, not
 * one file's: admin_start/admin_stop are server.c's, the module registry
 * modules.c's, the stats providers refresh.c's, the SQL function setups and
 * admin_insert_row db.c's. Declarations shared only inside admin/ are in
 * internal.h.
 *
 * Modules (modules.c's table: SHOAL VARIABLES, USERS, CACHES, QUERY RULES)
 * move configuration between the layers with LOAD/SAVE commands; the
 * tables are schema.c's one list (admin_tables); other parts of the node plug
 * their runtime side in through the registries below. All registration and
 * every callback happen on the main thread.
 */
#ifndef SHOAL_ADMIN_H
#define SHOAL_ADMIN_H

#include <ev.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

/* Start the admin interface on loop (the main thread's). Seeds the runtime
 * user store from the configuration; then, unless the admin port is 0
 * (disabled), opens the SQLite database, loads what the disk database holds
 * into main and the runtime, and listens on g_config.admin. 0, or -1 with a
 * message in err (the admin address cannot be bound, SQLite fails). */
int admin_start(struct ev_loop *loop, char *err, size_t errlen);

/* allowed_users changed (SIGHUP, LOAD SHOAL VARIABLES): old is the
 * configuration before. The users that left it are removed, new and changed
 * ones written to the users table, and the users loaded to the runtime (or,
 * with the admin disabled, the runtime store is seeded again). Main thread. */
struct shoal_config;
void admin_users_config_changed(const struct shoal_config *old);

/* Close the admin sessions, the listener and the database. */
void admin_stop(void);

/*
 * A module's runtime side, for LOAD <module> TO RUNTIME and SAVE <module>
 * FROM RUNTIME (and for reading runtime_<table>).
 *   load_to_runtime(db, table): read the rows of `table` (e.g.
 *     "main.caches"), validate them all, then apply them. 0, or -1 with a
 *     message in err; on -1 the runtime must be unchanged.
 *   save_from_runtime(db, table): insert the runtime's rows into `table`
 *     (e.g. "main.runtime_caches"), which the admin has just emptied.
 *     0, or -1 with a message in err.
 * name is the module's short name ("CACHES"); "SHOAL CACHES" works too.
 * Registering a name again replaces the callbacks. 0, or -1 (unknown
 * module). Built in: VARIABLES, USERS; CACHES and QUERY RULES have tables
 * but no runtime until registered (cache/).
 */
typedef int (*admin_load_fn)(sqlite3 *db, const char *table, char *err, size_t errlen);
typedef int (*admin_save_fn)(sqlite3 *db, const char *table, char *err, size_t errlen);
int admin_register_module(const char *name, admin_load_fn load_to_runtime,
			  admin_save_fn save_from_runtime);

/*
 * A provider of a stats table: fill(db, table, reset) inserts the current
 * rows into `table` (e.g. "stats.stats_shoal_query_digest"), which the admin
 * has just emptied. reset is true for the *_reset variant of the table: the
 * provider returns the values and zeroes its counters. Providers run on the
 * main thread and must not take a lock that the workers wait on (read
 * atomics, or per-worker snapshots). 0 or -1.
 * name is the base table name ("stats_shoal_query_digest" also covers
 * "stats_shoal_query_digest_reset"). Tables: the IN_STATS rows of
 * schema.c's admin_tables that are not *_reset twins.
 * A registered provider replaces the built-in one (stats_shoal_global and
 * stats_shoal_connection_pool have built-ins, the others are empty until a
 * provider exists). 0, or -1 (unknown table).
 */
typedef int (*admin_stats_fn)(sqlite3 *db, const char *table, bool reset);
int admin_register_stats_provider(const char *name, admin_stats_fn fill);
/* A function that defines SQL functions on the admin database (sqlite3_
 * create_function), run when it is opened. Before admin_start. */
typedef int (*admin_sqlfn_setup)(sqlite3 *db);
int admin_register_sql_functions(admin_sqlfn_setup setup);
/* admin/db.c: run the registered setups on db. */
int admin_run_sql_function_setups(sqlite3 *db, char *err, size_t errlen);

/* Helper for providers and modules: INSERT one row of n text values (NULL
 * pointers are SQL NULL) into table. 0 or -1. */
int admin_insert_row(sqlite3 *db, const char *table, int n, const char *const *values);

#endif
