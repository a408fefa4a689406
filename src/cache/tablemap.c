/*
 * tablemap.c: the TABLE_MAP event decoder (see tablemap.h).
 *
 * Layout (after the common header): the table id (6 bytes; 4 when the
 * post-header is 6), 2 bytes of flags; the schema name (1-byte length,
 * bytes, NUL), the table name (likewise); the column count (packed), one
 * type byte per column, the metadata block (packed length, then each
 * column's metadata: 0, 1 or 2 bytes by type), the nullability bitmap;
 * then, to the end, the optional metadata: fields of (type byte, packed
 * length, value).
 */
#include "cache/tablemap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/binrd.h"

/* Optional metadata field types (the same numbers on MariaDB and MySQL). */
enum {
	OPT_SIGNEDNESS = 1, OPT_DEFAULT_CHARSET, OPT_COLUMN_CHARSET, OPT_COLUMN_NAME,
	OPT_SET_STR_VALUE, OPT_ENUM_STR_VALUE, OPT_GEOMETRY_TYPE, OPT_SIMPLE_PRIMARY_KEY,
	OPT_PRIMARY_KEY_WITH_PREFIX, OPT_ENUM_AND_SET_DEFAULT_CHARSET,
	OPT_ENUM_AND_SET_COLUMN_CHARSET, OPT_COLUMN_VISIBILITY,
};

const char *tmap_type_name(unsigned type)
{
	switch (type) {
	case TT_DECIMAL: return "DECIMAL(old)";
	case TT_TINY: return "TINY";
	case TT_SHORT: return "SHORT";
	case TT_LONG: return "LONG";
	case TT_FLOAT: return "FLOAT";
	case TT_DOUBLE: return "DOUBLE";
	case TT_NULL: return "NULL";
	case TT_TIMESTAMP: return "TIMESTAMP";
	case TT_LONGLONG: return "LONGLONG";
	case TT_INT24: return "INT24";
	case TT_DATE: return "DATE";
	case TT_TIME: return "TIME";
	case TT_DATETIME: return "DATETIME";
	case TT_YEAR: return "YEAR";
	case TT_NEWDATE: return "NEWDATE";
	case TT_VARCHAR: return "VARCHAR";
	case TT_BIT: return "BIT";
	case TT_TIMESTAMP2: return "TIMESTAMP2";
	case TT_DATETIME2: return "DATETIME2";
	case TT_TIME2: return "TIME2";
	case TT_TYPED_ARRAY: return "TYPED_ARRAY";
	case TT_VARCHAR_COMPRESSED: return "VARCHAR_COMPRESSED";
	case TT_BLOB_COMPRESSED: return "BLOB_COMPRESSED";
	case TT_VECTOR: return "VECTOR";
	case TT_JSON: return "JSON";
	case TT_NEWDECIMAL: return "NEWDECIMAL";
	case TT_ENUM: return "ENUM";
	case TT_SET: return "SET";
	case TT_TINY_BLOB: return "TINY_BLOB";
	case TT_MEDIUM_BLOB: return "MEDIUM_BLOB";
	case TT_LONG_BLOB: return "LONG_BLOB";
	case TT_BLOB: return "BLOB";
	case TT_VAR_STRING: return "VAR_STRING";
	case TT_STRING: return "STRING";
	case TT_GEOMETRY: return "GEOMETRY";
	default: return "unknown";
	}
}

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t cap, const char *fmt, ...)
{
	va_list ap;

	if (cap) {
		va_start(ap, fmt);
		vsnprintf(err, cap, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* A STRING column's two metadata bytes: its real type (STRING, ENUM, SET)
 * and length; lengths over 255 keep their bits 8 and 9, inverted, in bits
 * 4 and 5 of the type byte. */
static int string_meta(struct tmap_col *c, uint8_t b0, uint8_t b1)
{
	if ((b0 & 0x30) != 0x30) {
		c->real = (uint8_t)(b0 | 0x30);
		c->max_len = b1 | (((unsigned)(b0 & 0x30) ^ 0x30) << 4);
	} else {
		c->real = b0;
		c->max_len = b1;
	}
	if (c->real == TT_ENUM) {
		c->lenbytes = (uint8_t)c->max_len;
		return c->max_len == 1 || c->max_len == 2 ? 0 : -1;   /* else: not an ENUM's size */
	}
	if (c->real == TT_SET) {
		c->lenbytes = (uint8_t)c->max_len;
		return c->max_len >= 1 && c->max_len <= 8 ? 0 : -1;   /* else: not a SET's size */
	}
	c->lenbytes = c->max_len > 255 ? 2 : 1;
	return c->real == TT_STRING ? 0 : -1;   /* no other type hides in a STRING */
}

/* One column's metadata from the block: 0 or -1 (malformed for its type). */
static int col_meta(struct tmap_col *c, struct binrd *r)
{
	const uint8_t *p;

	c->real = c->type;
	switch (c->type) {
	case TT_FLOAT: case TT_DOUBLE:
		c->meta = (uint16_t)binrd_le(r, 1);
		c->lenbytes = (uint8_t)c->meta;
		return c->meta == (c->type == TT_FLOAT ? 4u : 8u) ? 0 : -1;   /* else: another size */
	case TT_TINY_BLOB: case TT_MEDIUM_BLOB: case TT_LONG_BLOB: case TT_BLOB:
	case TT_BLOB_COMPRESSED: case TT_GEOMETRY: case TT_JSON: case TT_VECTOR:
		c->meta = (uint16_t)binrd_le(r, 1);
		c->lenbytes = (uint8_t)c->meta;
		return c->meta >= 1 && c->meta <= 4 ? 0 : -1;   /* else: no such length prefix */
	case TT_VARCHAR: case TT_VAR_STRING: case TT_VARCHAR_COMPRESSED:
		c->meta = (uint16_t)binrd_le(r, 2);
		c->max_len = c->meta;
		c->lenbytes = c->max_len > 255 ? 2 : 1;
		return 0;   /* any length will do */
	case TT_BIT:
		if (!(p = binrd_take(r, 2)))
			return -1;   /* truncated */
		c->meta = (uint16_t)(p[0] | p[1] << 8);
		c->bits = (uint16_t)(p[1] * 8u + p[0]);
		return c->bits >= 1 && c->bits <= 64 && p[0] < 8 ? 0 : -1;   /* else: no BIT width */
	case TT_NEWDECIMAL:
		if (!(p = binrd_take(r, 2)))
			return -1;   /* truncated */
		c->meta = (uint16_t)(p[0] << 8 | p[1]);
		c->precision = p[0];
		c->scale = p[1];
		return c->precision >= 1 && c->precision <= 65 && c->scale <= 38 &&
		       c->scale <= c->precision ? 0 : -1;   /* else: no DECIMAL has it */
	case TT_STRING: case TT_ENUM: case TT_SET:
		if (!(p = binrd_take(r, 2)))
			return -1;   /* truncated */
		c->meta = (uint16_t)(p[0] << 8 | p[1]);
		return string_meta(c, p[0], p[1]);
	case TT_TIMESTAMP2: case TT_DATETIME2: case TT_TIME2:
		c->meta = (uint16_t)binrd_le(r, 1);
		c->fsp = (uint8_t)c->meta;
		return c->fsp <= 6 ? 0 : -1;   /* else: no such precision */
	case TT_DECIMAL:
		c->meta = (uint16_t)binrd_le(r, 2);   /* 2 bytes, unused: its values cannot be sized */
		return 0;
	case TT_TINY: case TT_SHORT: case TT_INT24: case TT_LONG: case TT_LONGLONG:
	case TT_NULL: case TT_TIMESTAMP: case TT_DATE: case TT_TIME: case TT_DATETIME:
	case TT_YEAR: case TT_NEWDATE:
		return 0;   /* no metadata */
	default:
		return -1;   /* an unknown type: its metadata's size is not known either */
	}
}

static bool is_numeric(const struct tmap_col *c)
{
	switch (c->real) {
	case TT_TINY: case TT_SHORT: case TT_INT24: case TT_LONG: case TT_LONGLONG:
	case TT_FLOAT: case TT_DOUBLE: case TT_NEWDECIMAL: case TT_DECIMAL:
	case TT_YEAR:   /* counted by both servers (found on MariaDB 10.11 and MySQL 8.0) */
		return true;
	default:
		return false;
	}
}

static bool is_character(const struct tmap_col *c)
{
	switch (c->real) {
	case TT_STRING: case TT_VAR_STRING: case TT_VARCHAR: case TT_VARCHAR_COMPRESSED:
	case TT_TINY_BLOB: case TT_MEDIUM_BLOB: case TT_LONG_BLOB: case TT_BLOB:
	case TT_BLOB_COMPRESSED:
		return true;
	default:
		return false;
	}
}

static bool is_enumset(const struct tmap_col *c)
{
	return c->real == TT_ENUM || c->real == TT_SET;
}

/* ---- optional metadata ------------------------------------------------------ */

/* Room for n more bytes in m->buf (reserved up front: never moves mid-parse). */
static int buf_reserve(struct tmap *m, size_t n)
{
	char *nb;

	if (m->buf_len + n <= m->buf_cap)
		return 0;   /* room enough already */
	nb = realloc(m->buf, m->buf_len + n);
	if (!nb)
		return -1;   /* out of memory: the caller refuses the event */
	m->buf = nb;
	m->buf_cap = m->buf_len + n;
	return 0;
}

static uint32_t buf_put(struct tmap *m, const void *p, size_t n)
{
	uint32_t at = (uint32_t)m->buf_len;

	memcpy(m->buf + m->buf_len, p, n);
	m->buf_len += n;
	return at;
}

static bool opt_signedness(struct tmap *m, struct binrd *r)
{
	unsigned k = 0, nnum = 0;

	for (unsigned i = 0; i < m->ncols; i++)
		nnum += is_numeric(&m->cols[i]);
	if (binrd_left(r) != (nnum + 7) / 8)
		return false;   /* not one bit per numeric column */
	for (unsigned i = 0; i < m->ncols; i++) {
		if (!is_numeric(&m->cols[i]))
			continue;
		m->cols[i].sign = (r->p[k / 8] >> (7 - k % 8)) & 1 ? TMAP_UNSIGNED : TMAP_SIGNED;
		k++;
	}
	return true;
}

/* DEFAULT_CHARSET / COLUMN_CHARSET, for the character columns or (enumset)
 * the ENUM and SET ones. The collations go to the columns only when the
 * whole field fits them. */
static bool opt_charsets(struct tmap *m, struct binrd *r, bool is_default, bool enumset)
{
	uint32_t coll[TMAP_MAX_COLUMNS];
	unsigned n = 0, k = 0;

	for (unsigned i = 0; i < m->ncols; i++)
		n += enumset ? is_enumset(&m->cols[i]) : is_character(&m->cols[i]);
	if (is_default) {
		uint32_t def = (uint32_t)binrd_packed(r);

		for (unsigned i = 0; i < n; i++)
			coll[i] = def;
		while (!r->bad && binrd_left(r)) {
			uint64_t at = binrd_packed(r), c = binrd_packed(r);

			if (at >= n)
				return false;   /* names a column that is none of these */
			coll[at] = (uint32_t)c;
		}
	} else {
		for (unsigned i = 0; i < n; i++)
			coll[i] = (uint32_t)binrd_packed(r);
		if (binrd_left(r))
			return false;   /* more collations than columns */
	}
	if (r->bad)
		return false;   /* truncated */
	for (unsigned i = 0; i < m->ncols; i++)
		if (enumset ? is_enumset(&m->cols[i]) : is_character(&m->cols[i]))
			m->cols[i].collation = coll[k++];
	return true;
}

static bool opt_names(struct tmap *m, struct binrd *r)
{
	for (unsigned i = 0; i < m->ncols; i++) {
		uint64_t n = binrd_packed(r);
		const uint8_t *s = binrd_take(r, n > 0xFFFF ? SIZE_MAX : (size_t)n);

		if (!s)
			return false;   /* truncated, or a name longer than any */
		m->cols[i].name_len = (uint16_t)n;
		m->cols[i].name_off = buf_put(m, s, (size_t)n);
	}
	return binrd_left(r) == 0;   /* else: more names than columns */
}

/* ENUM_STR_VALUE / SET_STR_VALUE: for each such column, its members. */
static bool opt_members(struct tmap *m, struct binrd *r, uint8_t real)
{
	for (unsigned i = 0; i < m->ncols; i++) {
		struct tmap_col *c = &m->cols[i];
		uint64_t count;

		if (c->real != real)
			continue;
		count = binrd_packed(r);
		if (r->bad || count > 0xFFFF || count > binrd_left(r))
			return false;   /* truncated, or more members than bytes */
		c->nstrs = (uint16_t)count;
		c->strs_off = (uint32_t)m->buf_len;
		for (uint64_t k = 0; k < count; k++) {
			uint64_t n = binrd_packed(r);
			const uint8_t *s = binrd_take(r, n > 0xFFFF ? SIZE_MAX : (size_t)n);
			uint8_t len2[2] = { (uint8_t)(n & 0xFF), (uint8_t)(n >> 8) };

			if (!s)
				return false;   /* truncated */
			buf_put(m, len2, 2);
			buf_put(m, s, (size_t)n);
		}
	}
	return binrd_left(r) == 0;   /* else: more lists than columns */
}

static bool opt_pk(struct tmap *m, struct binrd *r, bool with_prefix)
{
	while (binrd_left(r)) {
		uint64_t i = binrd_packed(r), prefix = with_prefix ? binrd_packed(r) : 0;

		if (r->bad || i >= m->ncols)
			return false;   /* truncated, or not a column */
		m->cols[i].pk = true;
		m->cols[i].pk_prefix = (uint32_t)prefix;
	}
	return true;
}

static bool opt_geometry(struct tmap *m, struct binrd *r)
{
	for (unsigned i = 0; i < m->ncols; i++)
		if (m->cols[i].real == TT_GEOMETRY)
			m->cols[i].geometry = (uint32_t)binrd_packed(r);
	return !r->bad && binrd_left(r) == 0;   /* else: not one per geometry column */
}

static bool opt_visibility(struct tmap *m, struct binrd *r)
{
	if (binrd_left(r) != (m->ncols + 7) / 8)
		return false;   /* not one bit per column */
	for (unsigned i = 0; i < m->ncols; i++)
		m->cols[i].invisible = !((r->p[i / 8] >> (7 - i % 8)) & 1);
	return true;
}

/* One optional field: its TMAP_HAVE_ bit when it was used, 0 when it is
 * of a type not read here. *ok false: it did not fit the columns. */
static unsigned opt_field(struct tmap *m, unsigned type, struct binrd *r, bool *ok)
{
	switch (type) {
	case OPT_SIGNEDNESS: *ok = opt_signedness(m, r); return TMAP_HAVE_SIGNEDNESS;
	case OPT_DEFAULT_CHARSET: *ok = opt_charsets(m, r, true, false); return TMAP_HAVE_CHARSET;
	case OPT_COLUMN_CHARSET: *ok = opt_charsets(m, r, false, false); return TMAP_HAVE_CHARSET;
	case OPT_ENUM_AND_SET_DEFAULT_CHARSET:
		*ok = opt_charsets(m, r, true, true);
		return TMAP_HAVE_ENUMSET_CS;
	case OPT_ENUM_AND_SET_COLUMN_CHARSET:
		*ok = opt_charsets(m, r, false, true);
		return TMAP_HAVE_ENUMSET_CS;
	case OPT_COLUMN_NAME: *ok = opt_names(m, r); return TMAP_HAVE_NAMES;
	case OPT_ENUM_STR_VALUE: *ok = opt_members(m, r, TT_ENUM); return TMAP_HAVE_ENUM_STRS;
	case OPT_SET_STR_VALUE: *ok = opt_members(m, r, TT_SET); return TMAP_HAVE_SET_STRS;
	case OPT_SIMPLE_PRIMARY_KEY: *ok = opt_pk(m, r, false); return TMAP_HAVE_PK;
	case OPT_PRIMARY_KEY_WITH_PREFIX: *ok = opt_pk(m, r, true); return TMAP_HAVE_PK;
	case OPT_GEOMETRY_TYPE: *ok = opt_geometry(m, r); return TMAP_HAVE_GEOMETRY;
	case OPT_COLUMN_VISIBILITY: *ok = opt_visibility(m, r); return TMAP_HAVE_VISIBILITY;
	default: *ok = true; return 0;   /* a field of a later server: skipped */
	}
}

/* Undo what a field that did not fit wrote into the columns. */
static void opt_forget(struct tmap *m, unsigned have)
{
	for (unsigned i = 0; i < m->ncols; i++) {
		struct tmap_col *c = &m->cols[i];

		if (have & TMAP_HAVE_SIGNEDNESS)
			c->sign = TMAP_SIGN_UNKNOWN;
		if ((have & TMAP_HAVE_CHARSET) && is_character(c))
			c->collation = 0;
		if ((have & TMAP_HAVE_ENUMSET_CS) && is_enumset(c))
			c->collation = 0;
		if (have & TMAP_HAVE_NAMES)
			c->name_len = 0;
		if (have & (TMAP_HAVE_ENUM_STRS | TMAP_HAVE_SET_STRS))
			c->nstrs = 0;
		if (have & TMAP_HAVE_PK)
			c->pk = false, c->pk_prefix = 0;
		if (have & TMAP_HAVE_GEOMETRY)
			c->geometry = 0;
		if (have & TMAP_HAVE_VISIBILITY)
			c->invisible = false;
	}
}

/* The optional metadata, to the end of the event. A field that is cut
 * short ends the reading: the fields before it stay. */
static void opt_read(struct tmap *m, struct binrd *r)
{
	while (binrd_left(r) > 0) {
		unsigned type = (unsigned)binrd_le(r, 1), have;
		uint64_t len = binrd_packed(r);
		struct binrd f;
		bool ok = false;

		if (r->bad || len > binrd_left(r)) {
			m->dropped |= TMAP_CUT_SHORT;   /* the rest is not read */
			return;
		}
		binrd_init(&f, binrd_take(r, (size_t)len), (size_t)len);
		have = opt_field(m, type, &f, &ok);
		if (ok && !(m->have & have)) {
			m->have |= have;
		} else if (have) {
			opt_forget(m, have);   /* did not fit (or came twice): not known */
			m->have &= ~have;
			m->dropped |= have;
		}
	}
}

/* ---- the event -------------------------------------------------------------- */

static int ensure_cols(struct tmap *m, unsigned n)
{
	struct tmap_col *nc;

	if (n <= m->col_cap)
		return 0;   /* large enough already */
	nc = realloc(m->cols, n * sizeof(*nc));
	if (!nc)
		return -1;   /* out of memory: the caller refuses the event */
	m->cols = nc;
	m->col_cap = n;
	return 0;
}

/* The names: 1-byte length, bytes, NUL, stored NUL-terminated in buf. */
static int read_name(struct tmap *m, struct binrd *r, uint8_t *len, uint32_t *off)
{
	const uint8_t *s;

	*len = (uint8_t)binrd_le(r, 1);
	s = binrd_take(r, (size_t)*len + 1);
	if (!s || s[*len] != 0)
		return -1;   /* truncated, or no NUL where the length says */
	*off = buf_put(m, s, (size_t)*len + 1);
	return 0;
}

static int read_columns(struct tmap *m, struct binrd *r, char *err, size_t cap)
{
	const uint8_t *types, *nulls;
	uint64_t n = binrd_packed(r), mlen;
	struct binrd mb;

	if (r->bad || n == 0 || n > TMAP_MAX_COLUMNS)
		return fail(err, cap, "table map: column count %u not in 1..%u", (unsigned)n,
			    TMAP_MAX_COLUMNS);
	if (!(types = binrd_take(r, (size_t)n)) || ensure_cols(m, (unsigned)n) < 0)
		return fail(err, cap, "table map: %u column types cut short (or no memory)",
			    (unsigned)n);
	mlen = binrd_packed(r);
	if (r->bad || mlen > binrd_left(r))
		return fail(err, cap, "table map: metadata block of %u bytes cut short",
			    (unsigned)mlen);
	binrd_init(&mb, binrd_take(r, (size_t)mlen), (size_t)mlen);
	m->ncols = (unsigned)n;
	memset(m->cols, 0, m->ncols * sizeof(*m->cols));
	for (unsigned i = 0; i < m->ncols; i++) {
		m->cols[i].type = types[i];
		if (col_meta(&m->cols[i], &mb) < 0 || mb.bad)
			return fail(err, cap, "table map: column %u (type %u): metadata malformed or "
				    "of an unknown type", i, types[i]);
		m->cols[i].character = is_character(&m->cols[i]);
		m->cols[i].tdec = -1;
	}
	if (binrd_left(&mb))
		return fail(err, cap, "table map: %u metadata bytes left over after %u columns",
			    (unsigned)binrd_left(&mb), m->ncols);
	if (!(nulls = binrd_take(r, (m->ncols + 7) / 8)))
		return fail(err, cap, "table map: nullability bitmap of %u columns cut short",
			    m->ncols);
	for (unsigned i = 0; i < m->ncols; i++)
		m->cols[i].nullable = binrd_bit(nulls, i);
	return 0;
}

int tmap_parse(struct tmap *m, const uint8_t *body, size_t len, unsigned post_header_len,
	       char *err, size_t cap)
{
	struct binrd r;
	unsigned idlen;

	m->ncols = 0;
	m->have = m->dropped = 0;
	m->buf_len = 0;
	if (post_header_len == 0)
		post_header_len = 8;
	if (post_header_len != 8 && post_header_len != 6)
		return fail(err, cap, "table map: post-header of %u bytes, not 6 or 8",
			    post_header_len);
	idlen = post_header_len - 2;
	binrd_init(&r, body, len);
	m->table_id = binrd_le(&r, idlen);
	m->flags = (uint16_t)binrd_le(&r, 2);
	/* names and members are no longer than the event: room for them all
	 * (members take 2 bytes of length where the event may take 1) */
	if (r.bad || buf_reserve(m, 2 * len + 8) < 0)
		return fail(err, cap, "table map: event of %u bytes cut short (or no memory)",
			    (unsigned)len);
	if (read_name(m, &r, &m->schema_len, &m->schema_off) < 0 ||
	    read_name(m, &r, &m->table_len, &m->table_off) < 0)
		return fail(err, cap, "table map: schema or table name malformed");
	if (read_columns(m, &r, err, cap) < 0) {
		m->ncols = 0;
		return -1;   /* err says why */
	}
	opt_read(m, &r);
	return 0;
}

void tmap_free(struct tmap *m)
{
	free(m->cols);
	free(m->buf);
	memset(m, 0, sizeof(*m));
}

const char *tmap_col_name(const struct tmap *m, unsigned i, size_t *len)
{
	if (i >= m->ncols || !(m->have & TMAP_HAVE_NAMES))
		return NULL;   /* no such column, or no names sent */
	*len = m->cols[i].name_len;
	return m->buf + m->cols[i].name_off;
}

const char *tmap_col_member(const struct tmap *m, unsigned i, unsigned k, size_t *len)
{
	const struct tmap_col *c;
	const uint8_t *p;

	if (i >= m->ncols || k >= m->cols[i].nstrs)
		return NULL;   /* no such column or member, or none sent */
	c = &m->cols[i];
	p = (const uint8_t *)m->buf + c->strs_off;
	for (unsigned j = 0; j < k; j++)
		p += 2 + (p[0] | p[1] << 8);
	*len = (size_t)(p[0] | p[1] << 8);
	return (const char *)p + 2;
}

static bool is_old_temporal(const struct tmap_col *c)
{
	return c->real == TT_TIME || c->real == TT_DATETIME || c->real == TT_TIMESTAMP;
}

void tmap_set_temporal_dec(struct tmap *m, unsigned i, unsigned dec)
{
	if (i < m->ncols && is_old_temporal(&m->cols[i]) && dec <= 6)
		m->cols[i].tdec = (int8_t)dec;
}

void tmap_old_temporal_plain(struct tmap *m)
{
	for (unsigned i = 0; i < m->ncols; i++)
		tmap_set_temporal_dec(m, i, 0);
}

void tmap_set_sign(struct tmap *m, unsigned i, enum tmap_sign s)
{
	if (i < m->ncols && m->cols[i].sign == TMAP_SIGN_UNKNOWN && is_numeric(&m->cols[i]))
		m->cols[i].sign = (uint8_t)s;
}
