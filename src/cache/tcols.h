/*
 * tcols.h: a base table's columns as the catalog reader read them
 * (information_schema.COLUMNS, in the same query as the generated columns'
 * check, vcols.h): each column's name, what its values are (integers,
 * decimals, character strings with their collation, byte strings, ...),
 * whether it is unsigned or generated, and the binlog type its values come
 * with. Row-precise invalidation (match.h) resolves a fill's WHERE
 * constraints with them: a column name to its position, a literal to the
 * column's canonical form.
 *
 * A table's columns are current only in the catalog generation they were
 * read in (vcols.h): every catalog read, and every DDL the node or the
 * binlog follower sees, makes them stale until the reader reads them again
 * (after a client's read of the table). A stale definition gives no
 * constraint. A definition read again that differs from the one before
 * invalidates the whole table (IW_T_DEFINITION).
 *
 * Thread-safety: the pointer in struct inval_table is swapped and
 * referenced under one of TCOLS_LOCKS mutexes (by the table's address);
 * a definition is immutable (its generation an atomic) and reference
 * counted. Taken by misses and the catalog reader, never by a hit.
 */
#ifndef SHOAL_CACHE_TCOLS_H
#define SHOAL_CACHE_TCOLS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/inval.h"

/* What a column's values are, for comparing them with literals. */
enum tcol_kind {
	TK_OTHER = 0,  /* compared with nothing (FLOAT, DOUBLE, temporal types, ENUM,
			* SET, BIT, YEAR, JSON, GEOMETRY, INET6, UUID, ...) */
	TK_INT,        /* TINYINT .. BIGINT */
	TK_DECIMAL,    /* DECIMAL */
	TK_CHAR,       /* CHAR, VARCHAR, TEXT: a character string with a collation */
	TK_BYTES,      /* BINARY, VARBINARY, BLOB: bytes */
};

/* How a collation compares, as far as this node compares exactly. */
enum tcoll {
	TCOLL_NONE = 0,   /* not a string */
	TCOLL_BYTES,      /* binary: every byte counts */
	TCOLL_BIN_PAD,    /* a _bin collation, PAD SPACE: trailing spaces do not count */
	TCOLL_BIN_NOPAD,  /* a _bin collation, NO PAD */
	TCOLL_CI_PAD,     /* general_ci / swedish_ci: ASCII case folded, PAD SPACE; a
			   * byte above 0x7F is not compared (accents fold) */
	TCOLL_CI_NOPAD,
	TCOLL_UCA_PAD,    /* a Unicode collation (unicode_ci, uca1400_ai_ci, ...):
			   * letters and digits only, case folded */
	TCOLL_UCA_NOPAD,  /* (MySQL's 0900_ai_ci, nopad variants) */
	TCOLL_UNKNOWN,    /* not compared */
};

struct tcol {
	const char *name;
	uint16_t name_len;
	uint8_t kind;        /* enum tcol_kind */
	uint8_t coll;        /* enum tcoll */
	uint8_t type;        /* the binlog's type of its values (tablemap.h's `real`); 0: none known */
	bool is_unsigned;
	bool generated;
	uint32_t fixlen;     /* BINARY(n): n (values are padded with 0x00 to it); else 0 */
};

struct tcols {
	atomic_int refs;
	_Atomic uint32_t gen;  /* the catalog generation it is current in (vcols.h) */
	unsigned ncols;
	uint32_t name_hash;    /* tcols_name_hash() of its schema and name */
	const char *schema, *table;
	struct tcol cols[];    /* then the names */
};

/* The definition of t current in catalog generation gen (vcols.h's),
 * referenced (tcols_put it), or NULL (none, or stale). */
struct tcols *tcols_get(struct inval_table *t, uint32_t gen);
void tcols_put(struct tcols *c);
/* Release t's columns (at the index's end: inval_destroy(tcols_drop)). */
void tcols_drop(struct inval_table *t);

/* A new definition of ncols columns with names of names_bytes bytes in
 * all (the builder's calls fill it), or NULL when out of memory. */
struct tcols *tcols_new(const char *schema, const char *table, unsigned ncols, size_t names_bytes);
/* Column i (in ordinal order) from information_schema.COLUMNS' values:
 * DATA_TYPE, COLUMN_TYPE, COLLATION_NAME (NULL: none), CHARACTER_OCTET_LENGTH
 * (NULL: none), and whether it is generated. */
void tcols_set(struct tcols *c, unsigned i, const char *name, const char *data_type,
	       const char *column_type, const char *collation, const char *octets, bool generated);
/* Make c t's definition in catalog generation gen (c's reference passes
 * to t). A definition that differs from the one t had invalidates t
 * whole. */
void tcols_install(struct inval_table *t, struct tcols *c, uint32_t gen);

/* The position of column name (compared without ASCII case), or -1. */
int tcols_find(const struct tcols *c, const char *name, size_t len);
/* A table's name as the server spells it, hashed: what a table map's names
 * are checked against (match.h). */
uint32_t tcols_name_hash(const char *schema, size_t slen, const char *table, size_t tlen);
/* How a collation named name compares (tests, EXPLAIN). */
enum tcoll tcoll_of(const char *name);
const char *tcoll_name(enum tcoll c);

#endif
