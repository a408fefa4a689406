/*
 * tablemap.h: a binlog TABLE_MAP event, decoded (tablemap.c): the table's
 * id and names, each column's type, metadata and nullability, and what
 * the optional metadata of binlog_row_metadata=MINIMAL/FULL adds (MariaDB
 * 10.5+ and MySQL 8.0+ write the same format): signedness, collation ids,
 * column names, ENUM and SET members, the primary key, geometry types.
 * The row events of the table are read against it (rowimage.h).
 *
 * Hand-written from the public descriptions of the format; it depends on
 * no connector header (the type codes are the protocol's, below). A
 * malformed or truncated event is refused with a reason, never read past
 * its end. Optional metadata that does not fit the columns (a count that
 * differs, an unknown field) is dropped field by field: what is not known
 * stays "not sent" (TMAP_HAVE_* clear, collation 0, sign unknown).
 *
 * A struct tmap is reused from event to event: its arrays grow to the
 * largest table seen and are freed by tmap_free(); parsing allocates only
 * when a table is larger (or has longer names) than any before.
 */
#ifndef SHOAL_CACHE_TABLEMAP_H
#define SHOAL_CACHE_TABLEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most columns a table map may have (both servers' limit). */
#define TMAP_MAX_COLUMNS 4096

/* Column type codes as the binlog writes them (the protocol's field types;
 * 140, 141 are MariaDB's compressed columns, 242 MySQL 9's VECTOR). */
enum tmap_type {
	TT_DECIMAL = 0, TT_TINY = 1, TT_SHORT = 2, TT_LONG = 3, TT_FLOAT = 4, TT_DOUBLE = 5,
	TT_NULL = 6, TT_TIMESTAMP = 7, TT_LONGLONG = 8, TT_INT24 = 9, TT_DATE = 10, TT_TIME = 11,
	TT_DATETIME = 12, TT_YEAR = 13, TT_NEWDATE = 14, TT_VARCHAR = 15, TT_BIT = 16,
	TT_TIMESTAMP2 = 17, TT_DATETIME2 = 18, TT_TIME2 = 19, TT_TYPED_ARRAY = 20,
	TT_VARCHAR_COMPRESSED = 140, TT_BLOB_COMPRESSED = 141,
	TT_VECTOR = 242, TT_JSON = 245, TT_NEWDECIMAL = 246, TT_ENUM = 247, TT_SET = 248,
	TT_TINY_BLOB = 249, TT_MEDIUM_BLOB = 250, TT_LONG_BLOB = 251, TT_BLOB = 252,
	TT_VAR_STRING = 253, TT_STRING = 254, TT_GEOMETRY = 255,
};

enum tmap_sign {
	TMAP_SIGN_UNKNOWN = 0,  /* the event did not say (no SIGNEDNESS field) */
	TMAP_SIGNED,
	TMAP_UNSIGNED,
};

/* What the optional metadata told (struct tmap's have). */
#define TMAP_HAVE_SIGNEDNESS  0x01u
#define TMAP_HAVE_CHARSET     0x02u   /* collations of the character columns */
#define TMAP_HAVE_ENUMSET_CS  0x04u   /* collations of the ENUM and SET columns */
#define TMAP_HAVE_NAMES       0x08u
#define TMAP_HAVE_ENUM_STRS   0x10u
#define TMAP_HAVE_SET_STRS    0x20u
#define TMAP_HAVE_PK          0x40u   /* the primary key's columns (none: no primary key) */
#define TMAP_HAVE_GEOMETRY    0x80u
#define TMAP_HAVE_VISIBILITY  0x100u  /* MySQL 8.0.23+: invisible columns marked */
/* (dropped only) the optional metadata ended in a field cut short */
#define TMAP_CUT_SHORT        0x8000u

struct tmap_col {
	uint8_t type;        /* the column-types byte (enum tmap_type) */
	uint8_t real;        /* the type of its values: type, except a STRING that is
			      * an ENUM or a SET (its metadata says so) */
	uint8_t sign;        /* enum tmap_sign: integers, FLOAT, DOUBLE, DECIMAL */
	uint8_t fsp;         /* TIME2, DATETIME2, TIMESTAMP2: fractional digits, 0..6 */
	uint8_t lenbytes;    /* bytes of a value's length prefix (VARCHAR, CHAR: 1 or
			      * 2; BLOB, TEXT, JSON, GEOMETRY: 1..4), or a value's
			      * size (ENUM: 1, 2; SET: 1..8; FLOAT: 4; DOUBLE: 8) */
	int8_t tdec;         /* TIME, DATETIME, TIMESTAMP (the old formats): fractional
			      * digits, from tmap_set_temporal_dec; -1: not known */
	uint8_t precision;   /* NEWDECIMAL */
	uint8_t scale;       /* NEWDECIMAL */
	bool nullable;
	bool character;      /* a character column in the optional metadata's sense */
	bool pk;             /* part of the primary key (TMAP_HAVE_PK) */
	bool invisible;      /* TMAP_HAVE_VISIBILITY */
	uint16_t bits;       /* BIT: its width, 1..64 */
	uint16_t meta;       /* the metadata bytes as read (little-endian), for the record */
	uint32_t max_len;    /* CHAR, VARCHAR: the most bytes a value has */
	uint32_t collation;  /* character, ENUM, SET columns: the collation id; 0: not sent */
	uint32_t pk_prefix;  /* a prefix key's length in characters; 0: the whole column */
	uint32_t geometry;   /* GEOMETRY: the geometry type (TMAP_HAVE_GEOMETRY) */
	uint32_t name_off;   /* into tmap.buf (TMAP_HAVE_NAMES), name_len bytes */
	uint16_t name_len;
	uint16_t nstrs;      /* ENUM, SET: members sent (TMAP_HAVE_*_STRS) */
	uint32_t strs_off;   /* into tmap.buf: nstrs times (2-byte length, bytes) */
};

struct tmap {
	uint64_t table_id;
	uint16_t flags;
	unsigned ncols;
	struct tmap_col *cols;
	unsigned have;        /* TMAP_HAVE_* */
	unsigned dropped;     /* TMAP_HAVE_* sent but not usable (did not fit the columns) */
	uint8_t schema_len, table_len;
	uint32_t schema_off, table_off;   /* into buf */
	char *buf;            /* names and member strings */
	size_t buf_len, buf_cap;
	unsigned col_cap;
};

/* Decode a TABLE_MAP event's body (after the 19-byte common header, before
 * the checksum) into m. post_header_len: the format description's for
 * TABLE_MAP (8; 6 on servers before 5.1.4, with 4-byte table ids); 0 means
 * 8. Returns 0, or -1 with the reason in err (m is then empty: ncols 0). */
int tmap_parse(struct tmap *m, const uint8_t *body, size_t len, unsigned post_header_len,
	       char *err, size_t cap);
void tmap_free(struct tmap *m);

static inline const char *tmap_schema(const struct tmap *m) { return m->buf + m->schema_off; }
static inline const char *tmap_table(const struct tmap *m) { return m->buf + m->table_off; }
/* Column i's name, or NULL when the event did not send names. */
const char *tmap_col_name(const struct tmap *m, unsigned i, size_t *len);
/* ENUM or SET member k (0-based) of column i, or NULL when not sent. */
const char *tmap_col_member(const struct tmap *m, unsigned i, unsigned k, size_t *len);
/* Set a column's signedness from elsewhere (the catalog) when the event
 * did not send it; the event's own word is kept. */
void tmap_set_sign(struct tmap *m, unsigned i, enum tmap_sign s);
/* The old temporal formats (TIME, DATETIME, TIMESTAMP: types 7, 11, 12)
 * have no metadata, but MariaDB's "hires" forms of 5.3 to 10.0 (what
 * mysql56_temporal_format=OFF still makes) are larger with fractional
 * digits, under the same type code: an event alone cannot be sized. Until
 * told the column's fractional digits (the catalog's DATETIME_PRECISION),
 * such a column's value and every one after it in the image are unknown.
 * dec 0: the plain format, decoded; 1..6: sized, the value unknown.
 * tmap_old_temporal_plain: every such column is plain (MySQL, which has no
 * hires forms). */
void tmap_set_temporal_dec(struct tmap *m, unsigned i, unsigned dec);
void tmap_old_temporal_plain(struct tmap *m);
/* A type's name for messages ("TIMESTAMP2", ...). */
const char *tmap_type_name(unsigned type);

#endif
