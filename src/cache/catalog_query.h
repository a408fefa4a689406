/*
 * catalog_query.h: the statements the catalog reader sends upstream, and
 * the rows it makes of their answers (the facts catalog_load_rows() builds
 * a snapshot from). Run on the reader's own blocking connection.
 */
#ifndef SHOAL_CACHE_CATALOG_QUERY_H
#define SHOAL_CACHE_CATALOG_QUERY_H

#include <mysql.h>
#include <stdbool.h>
#include <stddef.h>

#include "cache/catalog_row.h"

/* Rows and the strings they point to. */
struct catalog_rows {
	struct catalog_row *rows;
	size_t n, cap;
	char **strs;
	size_t nstr, capstr;
};

void catalog_rows_free(struct catalog_rows *b);

/* Read every fact of the catalog into b (appended), and whether the server
 * folds the case of table names (*fold). 0, or -1 (logged). */
int catalog_query_read(MYSQL *m, struct catalog_rows *b, bool *fold);

#endif
