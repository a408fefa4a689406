/*
 * match.h: an entry's row constraints (issue 40, docs/caching.md "What a
 * write invalidates"), in the compact form the entry keeps, and the test
 * of a changed row against them.
 *
 * For each table an entry reads with constraints (match_build.h makes them
 * from the statement's WHERE constraints and the table's columns, tcols.h),
 * the entry keeps a conjunction of conditions `column IN (values)` or
 * `column IS NULL`, each value in the column's canonical form (below), with
 * what the column was when the constraint was resolved: its position, the
 * table's column count and name, the binlog type of its values, its kind and
 * collation. A row image satisfies the table's constraint unless one of its
 * conditions is certainly false for it. A value this file cannot compare
 * exactly as the server does (a byte above 0x7F under a case-insensitive
 * collation, an integer whose signedness the binlog did not send and the
 * column does not say, a column absent from a MINIMAL image, a table map
 * whose columns differ from the resolved ones) makes its condition unsure:
 * an unsure condition is never false, so the row counts as a match.
 *
 * Canonical values (equal exactly when the server's comparison says equal):
 *   - integers: 'i' and the int64, or 'u' and a uint64 above INT64_MAX
 *     (little-endian);
 *   - DECIMAL: its text with no leading or trailing zeros, never "-0"
 *     (rowimage.h's form);
 *   - strings: the bytes, with trailing spaces removed under a PAD SPACE
 *     collation, ASCII letters upper-cased under a case-insensitive one, a
 *     BINARY(n) image padded back to n bytes with 0x00.
 *
 * The blob (what struct match_cons holds and an entry copies) is bytes:
 * per table a record (struct mc_tab), then its conditions (struct mc_cond),
 * each followed by its values (a length byte, then the bytes). Records are
 * read with memcpy: the blob has no alignment.
 *
 * No locks, no allocation: pure functions over the blob and the values.
 */
#ifndef SHOAL_CACHE_MATCH_H
#define SHOAL_CACHE_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/rowimage.h"
#include "cache/tcols.h"

#define MATCH_CONS_MAX 1024   /* bytes of constraints one entry keeps (more: fewer conditions) */
#define MATCH_VAL_MAX 255     /* a canonical value's bytes (longer: the condition is dropped) */
#define MATCH_IN_MAX 16       /* values of the condition an entry is indexed by (more: another) */
#define MATCH_NO_COND 0xFF

/* One table's record. */
struct mc_tab {
	uint8_t dep;          /* the entry's dependency (its index in the deps) */
	uint8_t nconds;
	uint8_t icond;        /* the condition the index finds it by; MATCH_NO_COND: none
			       * (a condition that is never true: no row can change it) */
	uint8_t pad;
	uint16_t ncols;       /* the table's column count when resolved */
	uint16_t len;         /* the record's bytes, its conditions included */
	uint32_t name_hash;   /* tcols_name_hash of the table as the server spells it */
};

enum mc_op {
	MOP_IN = 1,           /* the column equals one of the values (none: never true) */
	MOP_NULL,             /* the column IS NULL */
};

#define MCF_UNSIGNED  0x01
#define MCF_GENERATED 0x02  /* a generated column: absent from an after image is not "unchanged" */

/* One condition; its values follow it. */
struct mc_cond {
	uint16_t col;         /* the column's position */
	uint8_t op;           /* enum mc_op */
	uint8_t kind;         /* enum tcol_kind */
	uint8_t coll;         /* enum tcoll */
	uint8_t type;         /* the binlog type of its values (tablemap.h's real type) */
	uint8_t flags;        /* MCF_* */
	uint8_t nvals;
	uint32_t fixlen;      /* BINARY(n): n */
	uint16_t len;         /* the condition's bytes, its values included */
	uint16_t pad;
};

/* What a fill computed: the constraints, and which deps they are of. */
struct match_cons {
	uint16_t len;         /* bytes of buf used; 0: no constraint */
	uint8_t ntab;
	uint8_t npost;        /* postings the index needs (the values of each table's icond) */
	uint32_t mask;        /* bit i: dep i has constraints (checked against its tgen) */
	uint8_t buf[MATCH_CONS_MAX];
};

/* The class a canonical form is made in: a condition's, or an index
 * group's (match_index.h). */
struct mc_class {
	uint8_t kind, coll, type, flags;
	uint32_t fixlen;
};

static inline struct mc_class mc_class_of(const struct mc_cond *c)
{
	return (struct mc_class){ c->kind, c->coll, c->type, c->flags, c->fixlen };
}

/* Canonical forms. */
enum mc_canon {
	MC_OK = 0,            /* out[0, *len) */
	MC_NULL,              /* the value is NULL */
	MC_UNSURE,            /* not compared exactly: counts as a match */
	MC_NEVER,             /* (a literal) equals nothing: NULL in `=` */
};
enum mc_canon match_canon_value(const struct mc_class *k, const struct rowimg_value *v, uint8_t *out,
				size_t *len);
/* A literal's text as the WHERE reader gives it (kind: where_types.h's
 * SQL_WL_*, its value unescaped): MC_UNSURE when it cannot be compared
 * exactly with the column (the condition is then dropped). */
enum mc_canon match_canon_literal(const struct mc_class *k, unsigned lit_kind, const char *text,
				  size_t len, uint8_t *out, size_t *olen);

/* A changed row as the follower decoded it: values by column position. */
struct match_img {
	const struct tmap *map;
	const struct rowimg_value *v;   /* v[c]: column c's value when present */
	const uint32_t *seen;           /* seen[c] == stamp: column c is present */
	uint32_t stamp;
	uint32_t name_hash;             /* the map's schema and table, hashed as tcols_name_hash */
	const struct match_img *before; /* an UPDATE's after image: its before image (a column
					 * absent here and not generated is unchanged) */
};

/* Column c's value in img (NULL: absent, or the map does not fit the
 * condition's resolution: unsure). */
const struct rowimg_value *match_img_value(const struct match_img *img, const struct mc_tab *t,
					   const struct mc_cond *c);

enum match_verdict { MV_NO = 0, MV_YES, MV_UNSURE };
/* Does img satisfy the table record's conditions? */
enum match_verdict match_table(const struct mc_tab *t, const uint8_t *rec, const struct match_img *img);

/* Walking a blob. */
static inline struct mc_tab match_tab_at(const uint8_t *p)
{
	struct mc_tab t;

	__builtin_memcpy(&t, p, sizeof(t));
	return t;
}
static inline struct mc_cond match_cond_at(const uint8_t *p)
{
	struct mc_cond c;

	__builtin_memcpy(&c, p, sizeof(c));
	return c;
}
/* Condition k of the table record at rec (its header included): its offset
 * in the record. */
size_t match_cond_off(const uint8_t *rec, unsigned k);
/* Value j of the condition at cond (its header included). */
const uint8_t *match_value_at(const uint8_t *cond, unsigned j, size_t *len);

/* Is blob[0, len) a sound blob of ntab records and npost postings on
 * deps below ndeps (read from a file: every length checked)? */
bool match_blob_valid(const uint8_t *blob, size_t len, unsigned ntab, unsigned npost, unsigned ndeps);
/* The deps a blob's records are on (bit per dep). */
uint32_t match_blob_mask(const uint8_t *blob, size_t len, unsigned ntab);

/* The blob as text, for the admin: "t: id IN (5) AND k IS NULL; u: ...",
 * each table's and column's name from name(arg, dep, col) (col -1: the
 * table's; NULL: "#dep" / "#col"). Returns the length it needed (as
 * snprintf); out is NUL-terminated when cap > 0. */
typedef const char *(*match_name_fn)(void *arg, unsigned dep, int col);
size_t match_format(const uint8_t *blob, size_t len, unsigned ntab, match_name_fn name, void *arg,
		    char *out, size_t cap);

#endif
