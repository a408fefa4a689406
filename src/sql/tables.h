/*
 * tables.h: the tables a statement reads and writes, read from its text as
 * sent (not the digest_text, which alters `quoted names`). Owns the statement kinds that matter for
 * invalidation (read, write, DDL, opaque) and the table references with
 * their roles.
 *
 * Reads: FROM and JOIN lists, comma joins, parenthesised joins, subqueries
 * anywhere, derived tables, CTE bodies (a CTE's own name is not a table
 * where it is in scope), and the alias of each table of a FROM or JOIN
 * list. Writes: INSERT / REPLACE / UPDATE / DELETE (the
 * multi-table forms too), LOAD DATA / LOAD XML, TRUNCATE, CREATE / ALTER /
 * DROP / RENAME of tables, views and sequences, CREATE / DROP INDEX.
 *
 * Whatever is not understood sets SQL_TABLES_UNKNOWN: the caller must
 * assume any table (a read is not cached; a write invalidates everything).
 * Never a guess. No allocation: references point into the text.
 */
#ifndef SHOAL_SQL_TABLES_H
#define SHOAL_SQL_TABLES_H

#include <stdbool.h>
#include <stddef.h>

#include <stdint.h>

#include "sql/lexer.h"

/* References recorded per statement; more set SQL_TABLES_UNKNOWN. */
#define SQL_TABLES_MAX 32

enum sql_stmt_kind {
	SQL_STMT_OTHER = 0, /* changes no table data: SET, SHOW, USE, BEGIN, ... */
	SQL_STMT_READ,      /* SELECT, WITH ... SELECT */
	SQL_STMT_WRITE,     /* DML: the refs with SQL_TREF_WRITE change */
	SQL_STMT_DDL,       /* DDL on the refs with SQL_TREF_WRITE */
	SQL_STMT_OPAQUE,    /* CALL, EXECUTE, BINLOG ...: the write set is not in the text */
};

/* Statement flags. */
#define SQL_TABLES_UNKNOWN   0x01 /* some table could not be determined */
#define SQL_TABLES_TEMPORARY 0x02 /* CREATE / DROP TEMPORARY TABLE: the refs */
#define SQL_TABLES_ROUTINE   0x04 /* calls a stored or user-defined function */
#define SQL_TABLES_CATALOG   0x08 /* changes views, triggers, keys or tables */
#define SQL_TABLES_DROP      0x10 /* DROP TABLE or SEQUENCE (temporary or not), the refs */
#define SQL_TABLES_CREATE    0x20 /* CREATE TABLE or SEQUENCE, the first ref */
#define SQL_TABLES_CALL      0x40 /* CALL: routines[0] is the procedure */
#define SQL_TABLES_ROUTINES_MANY 0x80 /* more routines than recorded, or one not named */
#define SQL_TABLES_VERSIONED 0x100 /* with UNKNOWN: unknown only because of an executable
				     * comment some servers skip (/ *!50700 .. / *!99999 run on
				     * MySQL only, a MariaDB version): the refs and routines are
				     * the reading with every comment run */
#define SQL_TABLES_DELAYED   0x200 /* INSERT / REPLACE DELAYED: the server writes the
				     * rows after its OK, when its queue gets to them */
#define SQL_TABLES_DOUBT     0x400 /* the text has an executable comment some servers
				     * skip (with UNKNOWN: what it names depends on the
				     * server) */

/* Reference flags. */
#define SQL_TREF_WRITE 0x01

struct sql_table_ref {
	const char *schema; /* NULL: unqualified (the session's schema) */
	const char *name;
	const char *alias;  /* [AS] alias after a table of a FROM or JOIN list (NULL: none) */
	uint16_t schema_len, name_len, alias_len;
	uint8_t flags;      /* SQL_TREF_* */
	uint8_t quoted;     /* bit 0: schema `quoted`, bit 1: name, bit 2: alias */
};

/* Stored routines called (CALL's procedure, stored functions) recorded. */
#define SQL_ROUTINES_MAX 4

struct sql_tables {
	enum sql_stmt_kind kind;
	unsigned flags;      /* SQL_TABLES_* */
	unsigned n;
	struct sql_table_ref refs[SQL_TABLES_MAX];
	unsigned nroutines;
	struct sql_table_ref routines[SQL_ROUTINES_MAX]; /* unqualified: the session's schema */
};

/* Read the statement text[0, len) (comments allowed; strings are read
 * with backslash escapes: under NO_BACKSLASH_ESCAPES the caller must not
 * trust a text that uses them). Always fills *out. */
void sql_tables(const char *text, size_t len, struct sql_tables *out);
/* The same, with hook called for every token read (lexer.h; tokens may be
 * read more than once, in order): what else the one reading of a
 * statement notes (stmt.c). Every token of the text is read. */
void sql_tables_read(const char *text, size_t len, struct sql_tables *out, sql_token_hook *hook,
		     void *arg);

/* Copy a name into dst (NUL-terminated, ASCII lower-cased, a doubled
 * backtick of a quoted name undone). Returns its length, or 0 when it
 * does not fit in cap - 1 bytes or is empty. */
size_t sql_table_name_copy(const char *p, size_t len, bool quoted, char *dst, size_t cap);

const char *sql_stmt_kind_name(enum sql_stmt_kind k);

#endif
