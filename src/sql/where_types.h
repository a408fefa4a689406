/*
 * where_types.h: the types of the WHERE constraints (where.h has the
 * functions and what the types mean). Types only: the reader's own files
 * (where_int.h) take them from here, so that none of them depends on
 * where.c, which calls them.
 */
#ifndef SHOAL_SQL_WHERE_TYPES_H
#define SHOAL_SQL_WHERE_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "sql/tables.h"

#define SQL_WHERE_TABLES_MAX SQL_TABLES_MAX
#define SQL_WHERE_CONDS_MAX 64     /* in all */
#define SQL_WHERE_TABLE_CONDS 8    /* per table */
#define SQL_WHERE_LITS_MAX 128     /* in all */
#define SQL_WHERE_CLASSES_MAX 8
#define SQL_WHERE_CLASS_COLS 8

enum sql_where_lit_kind {
	SQL_WL_INT = 1,  /* 42, -7; TRUE and FALSE are "1" and "0" (static text) */
	SQL_WL_DECIMAL,  /* 1.50, -.5, 3. */
	SQL_WL_FLOAT,    /* 1e3, -2.5E-2 */
	SQL_WL_STRING,   /* 'x' or "x", with its introducer (_latin1'x', N'x') */
	SQL_WL_HEX,      /* 0x41, X'41' */
	SQL_WL_BIT,      /* 0b101, B'101' */
	SQL_WL_NULL,     /* NULL: `=` never matches it; IS NULL is an op */
	SQL_WL_PARAM,    /* ?: its value is bound at execute */
};

struct sql_where_lit {
	uint8_t kind;          /* enum sql_where_lit_kind */
	char quote;            /* SQL_WL_STRING: ' or " */
	uint16_t param;        /* SQL_WL_PARAM: the placeholder's index, from 0,
				* in text order (COM_STMT_EXECUTE's order) */
	uint32_t len;
	const char *p;         /* the exact text: a number with its sign, the
				* whole of X'41' or 0x41; a string's inside as
				* written (escapes not undone: sql_where_lit_text) */
	const char *charset;   /* SQL_WL_STRING: _latin1'x' gives "latin1", N'x'
				* "utf8mb3"; NULL: the connection's */
	uint16_t charset_len;
};

enum sql_where_op {
	SQL_WO_EQ = 1,   /* column = lits[0] */
	SQL_WO_IN,       /* column = one of the lits */
	SQL_WO_IS_NULL,  /* column IS NULL (no lits) */
};

/* sql_where_cond.flags */
#define SQL_WC_BINARY      0x01 /* BINARY on a side: compare bytes, no padding */
#define SQL_WC_NULL_SAFE   0x02 /* from <=> with a placeholder: a NULL bound
				 * means IS NULL (with a value it is `=`) */
#define SQL_WC_CARRIED     0x04 /* carried through join equalities: classes[cls] */
#define SQL_WC_UNQUALIFIED 0x08 /* named without its table in a subquery: the
				 * outer query's column when this table has none */

struct sql_where_cond {
	const char *col;       /* the column as written (`quoted`: its inside) */
	uint16_t col_len;
	uint8_t col_quoted;
	uint8_t op;            /* enum sql_where_op */
	uint8_t flags;         /* SQL_WC_* */
	uint8_t cls;           /* SQL_WC_CARRIED: index in classes[] */
	uint16_t lit, nlits;   /* lits[lit, lit + nlits) */
	const char *collate;   /* COLLATE x of the comparison; NULL: none */
	uint16_t collate_len;
};

struct sql_where_table {
	const char *schema;    /* NULL: unqualified (the session's schema) */
	const char *name;
	uint16_t schema_len, name_len;
	uint8_t quoted;        /* bit 0: schema `quoted`, bit 1: name */
	bool constrained;      /* false: any change to the table matters */
	uint8_t refs;          /* references read (each gives its own, OR-ed) */
	uint16_t cond, nconds; /* conds[cond, cond + nconds), AND-ed */
};

/* A column of a class: a table's column named in a join equality. */
struct sql_where_col {
	const char *schema, *table, *col;
	uint16_t schema_len, table_len, col_len;
	uint8_t quoted;        /* bit 0: schema, bit 1: table, bit 2: column */
};

/* Columns that join equalities make equal (a.x = b.y AND b.y = c.z). */
struct sql_where_class {
	unsigned n;
	struct sql_where_col m[SQL_WHERE_CLASS_COLS];
};

/* sql_where.flags */
#define SQL_WHERE_DQUOTE 0x01  /* where.h: nothing under ANSI_QUOTES */

struct sql_where {
	bool ok;               /* false: nothing proven, for any table */
	const char *why;       /* !ok: why (for tests and EXPLAIN) */
	unsigned flags;        /* SQL_WHERE_* */
	unsigned ntables, nconds, nlits, nclasses;
	struct sql_where_table tables[SQL_WHERE_TABLES_MAX];
	struct sql_where_cond conds[SQL_WHERE_CONDS_MAX];
	struct sql_where_lit lits[SQL_WHERE_LITS_MAX];
	struct sql_where_class classes[SQL_WHERE_CLASSES_MAX];
};

#endif
