/*
 * resultset.h: encoder for the text-protocol result sets that the node
 * composes itself (the admin interface, SHOW CACHES and the like on the data
 * port). It writes whole packets into a pbuf:
 *
 *   column count                      lenenc integer
 *   ncols column definitions          ColumnDefinition41
 *   EOF                               only without CAP_DEPRECATE_EOF
 *   rows                              lenenc strings, NULL as 0xfb
 *   terminator                        EOF (0xfe warnings status), or with
 *                                     CAP_DEPRECATE_EOF the OK packet with
 *                                     the 0xfe header (0xfe 0 0 status warnings)
 *
 * Sequence ids start at the seq given to rs_begin() and go up by one per
 * packet; rs_next_seq() gives the id for whatever follows (the next result
 * of a multi-result answer). A row over 16 MiB - 1 is split into
 * continuation packets as the protocol requires.
 *
 * Errors are sticky: after an allocation failure or a call out of order,
 * every later call returns -1, and rs_end() (or rs_abort()) cuts the output
 * back to where rs_begin() found it, so the caller can send an ERR instead.
 *
 *   struct rs_writer w;
 *   rs_begin(&w, out, 1, caps, 2);
 *   rs_column(&w, "name", RS_TYPE_VAR_STRING);
 *   rs_column(&w, "hits", RS_TYPE_LONGLONG);
 *   rs_row_begin(&w); rs_cell_str(&w, "a"); rs_cell_u64(&w, 3); rs_row_end(&w);
 *   if (rs_end(&w, ST_AUTOCOMMIT) < 0) ... send an error ...
 */
#ifndef SHOAL_RESULTSET_H
#define SHOAL_RESULTSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/packet.h"

/* Column types (MYSQL_TYPE_*) the node sends. */
#define RS_TYPE_LONGLONG   0x08
#define RS_TYPE_VAR_STRING 0xfd

/* Character sets (collation ids) for column definitions. */
#define RS_CHARSET_UTF8    33   /* utf8_general_ci */
#define RS_CHARSET_BINARY  63

/* Column flags. */
#define RS_FLAG_NOT_NULL   0x0001
#define RS_FLAG_PRI_KEY    0x0002
#define RS_FLAG_UNSIGNED   0x0020
#define RS_FLAG_BINARY     0x0080

/* A full column definition, for callers that need more than a name and a
 * type. NULL strings are sent as empty. */
struct rs_coldef {
	const char *schema;
	const char *table;
	const char *org_table;
	const char *name;
	const char *org_name;
	uint16_t charset;
	uint32_t length;
	uint8_t type;
	uint16_t flags;
	uint8_t decimals;
};

struct rs_writer {
	struct pbuf *out;
	size_t start;       /* out->len at rs_begin(): rs_abort() cuts back to it */
	size_t row_start;   /* packet start of the row being built */
	uint8_t seq;        /* id of the next packet */
	uint32_t caps;
	unsigned ncols;
	unsigned cols_done;
	unsigned cells;     /* cells of the current row so far */
	uint64_t rows;
	bool in_row;
	bool failed;
};

/* Start a result set of ncols (>= 1) columns: writes the column count. */
int rs_begin(struct rs_writer *w, struct pbuf *out, uint8_t seq, uint32_t caps,
	     unsigned ncols);
/* One column definition with defaults for the type: VAR_STRING is utf8
 * (charset 33, length 765), LONGLONG is binary (charset 63, length 20,
 * BINARY flag). After the last one the metadata EOF is written unless the
 * client has CAP_DEPRECATE_EOF. */
int rs_column(struct rs_writer *w, const char *name, uint8_t type);
int rs_column_def(struct rs_writer *w, const struct rs_coldef *def);

int rs_row_begin(struct rs_writer *w);
int rs_cell(struct rs_writer *w, const void *p, size_t len);
int rs_cell_str(struct rs_writer *w, const char *s);   /* NULL s: SQL NULL */
int rs_cell_u64(struct rs_writer *w, uint64_t v);
int rs_cell_null(struct rs_writer *w);
/* Close the row: every column must have had a cell. */
int rs_row_end(struct rs_writer *w);

/* Write the terminator (EOF or the 0xfe OK). 0, or -1 after any earlier
 * failure, in which case the output is cut back to where rs_begin() began. */
int rs_end(struct rs_writer *w, uint16_t status);
int rs_end_warnings(struct rs_writer *w, uint16_t status, uint16_t warnings);
/* Drop everything written since rs_begin(). */
void rs_abort(struct rs_writer *w);

/* The sequence id for the packet after the result set. */
static inline uint8_t rs_next_seq(const struct rs_writer *w) { return w->seq; }

/* Convenience: a whole result set of string columns from arrays. cells holds
 * nrows * ncols pointers, row by row; NULL is SQL NULL. 0 or -1 (output cut
 * back). */
int rs_put_table(struct pbuf *out, uint8_t *seq, uint32_t caps, uint16_t status,
		 unsigned ncols, const char *const *names, size_t nrows,
		 const char *const *cells);

#endif
