/*
 * rowimage.h: the row images of binlog row events, decoded into typed
 * column values (rowimage.c), against the event's table map (tablemap.h).
 *
 * Events read: WRITE_ROWS, UPDATE_ROWS and DELETE_ROWS in version 1
 * (MariaDB's, types 23..25) and version 2 (MySQL's, 30..32, whose
 * post-header carries extra data, skipped), MariaDB's compressed row
 * events (166..171: the rows are zlib-inflated into a scratch buffer the
 * caller keeps), and MySQL's PARTIAL_UPDATE_ROWS (39), whose after images
 * may hold JSON diffs (reported as unknown values).
 *
 * Use:
 *   struct rowimg_rows r;  struct rowimg_image img;  struct rowimg_cursor c;
 *   struct rowimg_value v;
 *   if (rowimg_open(&r, &map, type, body, len, 0, &scratch, err, sizeof(err)) < 0) ...
 *   while ((rc = rowimg_next(&r, &img, err, sizeof(err))) > 0) {
 *       // img.which: ROWIMG_BEFORE or ROWIMG_AFTER; img.row: the row's index
 *       for (rowimg_cursor_init(&c, &img); rowimg_cursor_next(&c, &v) > 0; )
 *           ... v.col, v.kind, v.v ...
 *   }
 *   if (rc < 0) ... // malformed: err says where; nothing after it can be read
 *
 * A WRITE row has one image (the after image), a DELETE row one (the
 * before image), an UPDATE row two: before, then after. An image holds the
 * columns of its present-columns bitmap only (rowimg_has): with
 * binlog_row_image=MINIMAL or NOBLOB the others are absent, and absent
 * is not NULL.
 *
 * Values are never guessed. A value that cannot be decoded exactly is
 * RV_UNKNOWN with a reason, and the columns after it are still read; a
 * column whose size cannot be known (a type this decoder does not size)
 * makes it and every later column of the image RV_UNKNOWN
 * (RV_WHY_UNSIZED), and rowimg_next() fails on the next image, since
 * nothing after can be found. Every length is checked against the event:
 * a malformed or truncated event is an error, never a read past its end.
 *
 * No allocation per row: the values point into the event (or the scratch
 * buffer of a compressed event), which must outlive them.
 */
#ifndef SHOAL_CACHE_ROWIMAGE_H
#define SHOAL_CACHE_ROWIMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/tablemap.h"

enum rowimg_op { ROWIMG_WRITE = 0, ROWIMG_UPDATE, ROWIMG_DELETE };

/* What a rows event type is. */
struct rowimg_type {
	uint8_t op;           /* enum rowimg_op */
	uint8_t version;      /* 1 or 2 (a post-header with extra data) */
	bool compressed;      /* MariaDB's *_COMPRESSED_EVENT */
	bool partial;         /* MySQL's PARTIAL_UPDATE_ROWS_EVENT */
};

/* Is this event type a rows event? (out filled when it is) */
bool rowimg_event_type(unsigned type, struct rowimg_type *out);

/* The body of a whole event (19-byte common header, body, checksum_len
 * bytes of checksum): false when the event is shorter than its header
 * says or than a header. */
bool rowimg_event_body(const uint8_t *ev, size_t len, unsigned checksum_len,
		       const uint8_t **body, size_t *body_len);

/* Where a compressed event's rows are inflated; grows to the largest
 * event seen, freed by rowimg_scratch_free. */
struct rowimg_scratch {
	uint8_t *p;
	size_t cap;
};
void rowimg_scratch_free(struct rowimg_scratch *z);

/* The most a compressed event's rows may inflate to. */
#define ROWIMG_MAX_INFLATED (1u << 30)

struct rowimg_rows {
	const struct tmap *map;
	struct rowimg_type t;
	uint64_t table_id;
	uint16_t flags;           /* STMT_END_F (1), ... */
	unsigned ncols;
	const uint8_t *bitmap[2]; /* present columns: [0] the event's first bitmap (the
				   * before image of UPDATE and DELETE, the after image
				   * of WRITE), [1] UPDATE's after image */
	unsigned npresent[2];
	const uint8_t *pos, *end; /* the rows not yet read */
	unsigned row;             /* rows started */
	bool in_update;           /* the after image of an UPDATE row is next */
	bool stuck;               /* an image could not be read to its end */
	unsigned stuck_col, stuck_row;
};

enum rowimg_which { ROWIMG_BEFORE = 0, ROWIMG_AFTER = 1 };

struct rowimg_image {
	const struct tmap *map;
	uint8_t which;            /* enum rowimg_which */
	bool partial_json;        /* MySQL: JSON columns flagged in partial may be diffs */
	unsigned row;             /* the row's index in the event, from 0 */
	unsigned ncols;
	const uint8_t *present;   /* one bit per column of the table */
	const uint8_t *nulls;     /* one bit per present column */
	const uint8_t *partial;   /* one bit per present JSON column (partial_json) */
	const uint8_t *data, *end;
	unsigned readable;        /* the columns from this one on are RV_UNKNOWN
				   * (RV_WHY_UNSIZED); ncols when all are readable */
};

/* Open a rows event's body (after the common header, before the
 * checksum) against the table map of its table id. post_header_len: the
 * format description's for this event type (0: 8 for version 1, 10 for
 * version 2). Refused (-1, err) when malformed, when the table ids or
 * the column counts of the event and map differ, or when compressed rows
 * cannot be inflated. z may be NULL when no compressed event is expected
 * (one is then refused). */
int rowimg_open(struct rowimg_rows *r, const struct tmap *map, unsigned type, const uint8_t *body,
		size_t len, unsigned post_header_len, struct rowimg_scratch *z, char *err, size_t cap);

/* The next image: 1, 0 after the last, -1 (err) when the event is
 * malformed there or an earlier image could not be read to its end. */
int rowimg_next(struct rowimg_rows *r, struct rowimg_image *img, char *err, size_t cap);

static inline bool rowimg_has(const struct rowimg_image *img, unsigned col)
{
	return col < img->ncols && ((img->present[col / 8] >> (col % 8)) & 1);
}

enum rowimg_kind {
	RV_UNKNOWN = 0, /* could not be decoded exactly: why says why */
	RV_NULL,
	RV_INT,         /* integers that fit int64_t: v.i */
	RV_UINT,        /* unsigned integers above INT64_MAX: v.u */
	RV_DOUBLE,      /* FLOAT (widened) and DOUBLE: v.d */
	RV_DECIMAL,     /* DECIMAL: dec, canonical (no leading or trailing zeros, no "-0") */
	RV_STRING,      /* CHAR, VARCHAR, BINARY, VARBINARY, TEXT, BLOB (MariaDB's JSON
			 * too): v.s, bytes as stored (CHAR without its trailing
			 * spaces), and the collation id (0: not sent) */
	RV_ENUM,        /* v.u: the member's index from 1; 0 is the '' of a bad value */
	RV_SET,         /* v.u: members as bits, member k (from 0) is bit k */
	RV_BIT,         /* v.u */
	RV_YEAR,        /* v.i: 0 or 1901..2155 */
	RV_DATE,        /* v.t (date part) */
	RV_TIME,        /* v.t (hour up to 838, neg) */
	RV_DATETIME,    /* v.t */
	RV_TIMESTAMP,   /* v.ts: seconds since the epoch, UTC */
	RV_JSON,        /* MySQL's binary JSON: v.s (collation 0) */
	RV_GEOMETRY,    /* v.s: SRID (4 bytes) and WKB */
};

enum rowimg_why {
	RV_WHY_NONE = 0,
	RV_WHY_SIGN,        /* an integer with its top bit set, signedness not sent */
	RV_WHY_COMPRESSED,  /* a MariaDB compressed column's value */
	RV_WHY_PARTIAL,     /* a JSON diff of a MySQL partial update */
	RV_WHY_INVALID,     /* bytes that are no value of the type */
	RV_WHY_UNSIZED,     /* at or after a column whose size cannot be known */
	RV_WHY_TYPE,        /* a type read for its size only (VECTOR, old DECIMAL, ...) */
};

struct rowimg_time {
	uint16_t year;
	uint8_t month, day;
	uint16_t hour;          /* TIME: up to 838 */
	uint8_t minute, second;
	uint32_t usec;
	bool neg;               /* TIME only */
};

#define ROWIMG_DEC_MAX 72   /* 65 digits, sign, point, NUL */

struct rowimg_value {
	unsigned col;
	enum rowimg_kind kind;
	enum rowimg_why why;
	uint8_t fsp;            /* temporal: fractional digits; DECIMAL: scale */
	union {
		int64_t i;
		uint64_t u;
		double d;
		struct { const uint8_t *p; size_t len; uint32_t collation; } s;
		struct rowimg_time t;
		struct { int64_t sec; uint32_t usec; } ts;
	} v;
	char dec[ROWIMG_DEC_MAX];
	const uint8_t *raw;     /* the value's bytes in the image (NULL: NULL, unsized) */
	size_t raw_len;
};

/* Walks the present columns of one image, in column order. */
struct rowimg_cursor {
	const struct rowimg_image *img;
	unsigned col;           /* the next column to look at */
	unsigned nth;           /* present columns passed */
	unsigned njson;         /* present JSON columns passed (partial bits) */
	const uint8_t *p;
};

void rowimg_cursor_init(struct rowimg_cursor *c, const struct rowimg_image *img);
/* The next present column's value: 1, or 0 after the last. */
int rowimg_cursor_next(struct rowimg_cursor *c, struct rowimg_value *v);

/* The value as text, for logs, EXPLAIN and the tests: 42, -1.5, 'abc'@45
 * (bytes outside printable ASCII, ' and \ as \xNN; the collation after @),
 * enum:2, set:0x5, b:5, 2024, 2024-02-29, -838:59:59.000,
 * 2024-02-29 23:59:59.9, ts:946684800.99, json:13, geometry:25, NULL,
 * ?sign (unknown, and why). The length written (as snprintf), truncated to
 * cap. */
int rowimg_format(const struct rowimg_value *v, char *out, size_t cap);
const char *rowimg_why_name(enum rowimg_why why);

#endif
