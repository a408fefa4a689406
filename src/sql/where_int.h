/*
 * where_int.h: the WHERE constraint reader's own types, shared by its
 * three files, each calling only the ones below it: where.c (the entry,
 * the structure pass: blocks, sources, joins; the result read back and as
 * text), where_out.c (the references of a table OR-ed into the result) and
 * where_expr.c (the conditions of a block, per source; the helpers).
 * Bounded arrays only; past a bound the statement gives nothing (a block
 * too big) or a constraint is dropped (a pool full), never the other way.
 */
#ifndef SHOAL_SQL_WHERE_INT_H
#define SHOAL_SQL_WHERE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sql/lexer.h"
#include "sql/tables.h"
#include "sql/where_types.h"

#define WHERE_SOURCES_MAX 16   /* per block (a uint32_t of bits) */
#define WHERE_JOINS_MAX 16
#define WHERE_SEGS_MAX 18      /* the WHERE and each ON or USING */
#define WHERE_PARAMS_MAX 64
#define WHERE_CTES_MAX 8
#define WHERE_PAREN_MAX 16
#define WHERE_CONJ_MAX SQL_WHERE_TABLE_CONDS
#define WHERE_SCRATCH_LITS 128 /* one source's reading; reset for the next */
#define WHERE_WORK_LITS 192    /* the references' */
#define WHERE_WORK_CONDS 128
#define WHERE_TOPS_MAX 16
#define WHERE_NO_SRC 0xff

/* A name in the text. */
struct span {
	uint32_t pos;
	uint16_t len;
	uint8_t quoted;
};

enum src_kind { SRC_TABLE, SRC_DERIVED, SRC_OPAQUE };

struct source {
	uint8_t kind;          /* enum src_kind: only a table gets constraints */
	bool has_schema, has_alias;
	struct span schema, name, alias;
};

enum join_type { J_INNER, J_LEFT, J_RIGHT };

struct join {
	uint32_t left, right;  /* the sources of each side (bits) */
	uint8_t type;          /* enum join_type */
	int8_t seg;            /* its ON or USING, -1: none */
};

/* A condition's text: [start, end) of the statement. */
struct seg {
	uint32_t start, end;
	bool using_list;       /* USING (a, b) of the sources l and r */
	uint8_t l, r;
};

struct block {
	unsigned nsrc, njoins, nsegs;
	int where;             /* its segment, -1: none */
	bool nested;           /* a subquery: an unqualified column may be the outer one */
	struct source src[WHERE_SOURCES_MAX];
	struct join joins[WHERE_JOINS_MAX];
	struct seg segs[WHERE_SEGS_MAX];
};

/* A constraint being read: a column of a source. */
struct wcond {
	struct span col;
	uint8_t op, flags, cls;  /* sql_where_cond's */
	uint16_t nlits;
	struct span collate;     /* len 0: none */
	const struct sql_where_lit *lits;
};

/* A conjunction; n == 0 is "no constraint". */
struct conj {
	unsigned n;
	struct wcond c[WHERE_CONJ_MAX];
};

/* A column of a source, in a join equality. */
struct node {
	uint8_t src;
	struct span col;
};

/* What the top of the conditions says, for carrying: the equalities of two
 * tables' columns and the literal constraints on any source. */
struct tops {
	unsigned nedges, natoms;
	struct node edges[WHERE_TOPS_MAX][2];
	struct node atom_at[WHERE_TOPS_MAX];
	struct wcond atoms[WHERE_TOPS_MAX];
};

/* A table reference and its constraints (conds[cond, cond + ncond)). */
struct ref {
	struct span schema, name;
	bool has_schema;
	uint16_t cond, ncond;
};

struct wscan {
	struct sql_lex lx;
	const char *s;
	size_t n;
	bool failed, params_over;
	const char *why;
	int nest, groups;
	unsigned flags;        /* SQL_WHERE_* */
	unsigned nparams, nctes, nrefs, nconds, nlits, nscratch, nclasses;
	/* from here on, filled as used */
	struct ref refs[SQL_TABLES_MAX];
	uint32_t params[WHERE_PARAMS_MAX];
	struct span ctes[WHERE_CTES_MAX];
	struct wcond conds[WHERE_WORK_CONDS];
	struct sql_where_lit lits[WHERE_WORK_LITS];
	struct sql_where_lit scratch[WHERE_SCRATCH_LITS];
	struct sql_where_class classes[SQL_WHERE_CLASSES_MAX];
};

/* where_expr.c (the files call down: where.c, where_out.c, where_expr.c) */
bool where_fail(struct wscan *w, const char *why);          /* false */
uint32_t where_tok_pos(const char *s, const struct sql_tok *t); /* its first byte */
struct span where_span(const char *s, const struct sql_tok *t);
/* Names compared without (ASCII) case. */
bool where_same_text(const char *a, size_t an, const char *b, size_t bn);
bool where_same(const struct wscan *w, struct span a, struct span b);
/* A block just read: each of its tables' constraints, as a reference. */
void where_block_done(struct wscan *w, const struct block *b);
/* a OR b into a (union lits in the scratch pool). */
void where_conj_or(struct wscan *w, struct conj *a, const struct conj *b);

/* where_out.c: the references of each table OR-ed into *out. */
void where_finish(struct wscan *w, const struct sql_tables *tables, struct sql_where *out);

#endif
