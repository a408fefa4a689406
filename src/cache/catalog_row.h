/*
 * catalog_row.h: one fact of the catalog, as read from the upstream (see
 * catalog_query.h) or given by a test, from which catalog_load_rows()
 * builds a snapshot (catalog.h).
 */
#ifndef SHOAL_CACHE_CATALOG_ROW_H
#define SHOAL_CACHE_CATALOG_ROW_H

/* One fact, as read from information_schema (or given by a test):
 *   'T' base table schema.name
 *   'V' view schema.name, a = its definition
 *   'F' foreign key of table schema.name referencing a.b, c = the actions
 *       "<update rule>,<delete rule>" (CASCADE, SET NULL, RESTRICT, ...)
 *   'R' trigger on table schema.name, a = the trigger's schema, b = its body
 *   'P' stored routine schema.name, a = its type, b = its body */
struct catalog_row {
	char kind;
	const char *schema, *name, *a, *b, *c;
};

#endif
