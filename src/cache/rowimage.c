/*
 * rowimage.c: the rows events' decoder (see rowimage.h).
 *
 * Layout of a rows event's body: the table id (6 bytes; 4 with a 6-byte
 * post-header), 2 bytes of flags; version 2 adds a 2-byte length (itself
 * included) and that much extra data (MySQL: NDB info, partition ids),
 * skipped. Then the column count (packed), the present-columns bitmap,
 * for an UPDATE the after image's bitmap; then the rows, to the end (a
 * compressed event: a header byte, the inflated length, a zlib stream).
 * An image: a NULL bitmap with one bit per present column, then the
 * values of the present columns that are not NULL, each in its type's
 * binlog format. MySQL's PARTIAL_UPDATE_ROWS after image starts with a
 * packed "value options"; with its bit 0 set, a bitmap follows with one
 * bit per present JSON column, set where the value is a diff.
 */
#include "cache/rowimage.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cache/binrd.h"

#define EVENT_HEADER 19
#define PARTIAL_JSON_UPDATES 1u

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

bool rowimg_event_type(unsigned type, struct rowimg_type *out)
{
	struct rowimg_type t = { 0 };

	switch (type) {
	case 23: case 24: case 25:     /* version 1 (MariaDB; MySQL 5.1..5.5) */
		t.op = (uint8_t)(type - 23), t.version = 1;
		break;
	case 30: case 31: case 32:     /* version 2 (MySQL 5.6+) */
		t.op = (uint8_t)(type - 30), t.version = 2;
		break;
	case 39:                       /* MySQL's PARTIAL_UPDATE_ROWS */
		t.op = ROWIMG_UPDATE, t.version = 2, t.partial = true;
		break;
	case 166: case 167: case 168:  /* MariaDB, compressed, version 1 */
		t.op = (uint8_t)(type - 166), t.version = 1, t.compressed = true;
		break;
	case 169: case 170: case 171:  /* MariaDB, compressed, version 2 */
		t.op = (uint8_t)(type - 169), t.version = 2, t.compressed = true;
		break;
	default:
		return false;   /* not a rows event */
	}
	*out = t;
	return true;
}

bool rowimg_event_body(const uint8_t *ev, size_t len, unsigned checksum_len,
		       const uint8_t **body, size_t *body_len)
{
	uint32_t elen;

	if (len < EVENT_HEADER + checksum_len)
		return false;   /* not even a header */
	elen = (uint32_t)binrd_le_at(ev + 9, 4);
	if (elen > len || elen < EVENT_HEADER + checksum_len)
		return false;   /* the header's length does not fit what was read */
	*body = ev + EVENT_HEADER;
	*body_len = elen - EVENT_HEADER - checksum_len;
	return true;
}

void rowimg_scratch_free(struct rowimg_scratch *z)
{
	free(z->p);
	z->p = NULL;
	z->cap = 0;
}

/* ---- opening an event ------------------------------------------------------- */

/* A compressed event's rows: header byte (bits 0..2: the length's bytes,
 * bits 4..6: the algorithm, 0 = zlib), the inflated length (big-endian),
 * the zlib stream. Inflated into z, exactly to the length said. */
static int inflate_rows(struct rowimg_rows *r, struct binrd *rd, struct rowimg_scratch *z,
			char *err, size_t cap)
{
	unsigned hdr = (unsigned)binrd_le(rd, 1), lenlen = hdr & 7;
	const uint8_t *lp;
	uint64_t want;
	uLongf got;
	size_t in_len;

	if (rd->bad || ((hdr >> 4) & 7) != 0 || lenlen < 1 || lenlen > 4 || !(lp = binrd_take(rd, lenlen)))
		return fail(err, cap, "rows event: compressed header 0x%02x malformed or cut short", hdr);
	want = binrd_be_at(lp, lenlen);
	if (!z || want > ROWIMG_MAX_INFLATED)
		return fail(err, cap, "rows event: compressed rows of %" PRIu64 " bytes %s", want,
			    z ? "over the limit" : "and no scratch buffer");
	if (want > z->cap) {
		uint8_t *np = realloc(z->p, want ? (size_t)want : 1);

		if (!np)
			return fail(err, cap, "rows event: no memory to inflate %" PRIu64 " bytes", want);
		z->p = np;
		z->cap = (size_t)want;
	}
	got = (uLongf)want;
	in_len = binrd_left(rd);
	if (uncompress(z->p, &got, rd->p, (uLong)in_len) != Z_OK || got != want)
		return fail(err, cap, "rows event: compressed rows do not inflate to the %" PRIu64
			    " bytes said", want);
	r->pos = z->p;
	r->end = z->p + want;
	return 0;
}

int rowimg_open(struct rowimg_rows *r, const struct tmap *map, unsigned type, const uint8_t *body,
		size_t len, unsigned post_header_len, struct rowimg_scratch *z, char *err, size_t cap)
{
	struct binrd rd;
	uint64_t width;
	unsigned idlen, mapbytes;

	memset(r, 0, sizeof(*r));
	r->stuck = true;   /* until opened: rowimg_next() reads nothing */
	if (!rowimg_event_type(type, &r->t))
		return fail(err, cap, "event type %u is no rows event", type);
	if (post_header_len == 0)
		post_header_len = r->t.version == 2 ? 10 : 8;
	if (post_header_len != (r->t.version == 2 ? 10u : 8u) && !(r->t.version == 1 && post_header_len == 6))
		return fail(err, cap, "rows event: post-header of %u bytes", post_header_len);
	idlen = post_header_len == 6 ? 4 : 6;
	binrd_init(&rd, body, len);
	r->table_id = binrd_le(&rd, idlen);
	r->flags = (uint16_t)binrd_le(&rd, 2);
	if (r->t.version == 2) {
		unsigned extra = (unsigned)binrd_le(&rd, 2);

		if (extra < 2 || !binrd_take(&rd, extra - 2))
			return fail(err, cap, "rows event: extra data of %u bytes malformed or cut short", extra);
	}
	width = binrd_packed(&rd);
	if (rd.bad)
		return fail(err, cap, "rows event: %zu bytes cut short before its column count", len);
	if (!map || map->ncols == 0 || r->table_id != map->table_id)
		return fail(err, cap, "rows event: table id %" PRIu64 " has no table map", r->table_id);
	if (width != map->ncols)
		return fail(err, cap, "rows event: %" PRIu64 " columns where the table map has %u",
			    width, map->ncols);
	r->map = map;
	r->ncols = map->ncols;
	mapbytes = (r->ncols + 7) / 8;
	r->bitmap[0] = binrd_take(&rd, mapbytes);
	r->bitmap[1] = r->t.op == ROWIMG_UPDATE ? binrd_take(&rd, mapbytes) : r->bitmap[0];
	if (rd.bad)
		return fail(err, cap, "rows event: column bitmaps of %u columns cut short", r->ncols);
	r->npresent[0] = binrd_bits_set(r->bitmap[0], r->ncols);
	r->npresent[1] = binrd_bits_set(r->bitmap[1], r->ncols);
	if (r->t.compressed) {
		if (inflate_rows(r, &rd, z, err, cap) < 0)
			return -1;   /* err says why */
	} else {
		r->pos = rd.p;
		r->end = rd.end;
	}
	r->stuck = false;
	return 0;
}

/* ---- value sizes -------------------------------------------------------------- */

static const uint8_t dig2bytes[10] = { 0, 1, 1, 2, 2, 3, 3, 4, 4, 4 };

static unsigned decimal_size(unsigned precision, unsigned scale)
{
	unsigned intg = precision - scale;

	return intg / 9 * 4 + dig2bytes[intg % 9] + scale / 9 * 4 + dig2bytes[scale % 9];
}

static unsigned frac_bytes(unsigned fsp)
{
	return (fsp + 1) / 2;
}

/* The old temporal formats' sizes: plain (0 digits) TIME 3, DATETIME 8,
 * TIMESTAMP 4; MariaDB's hires forms with 1..6 digits TIME 3..6 and
 * DATETIME 5..8 bytes (a packed count of microseconds), TIMESTAMP 4 plus
 * 1..3 bytes of fraction. */
static unsigned hires_size(unsigned type, unsigned dec)
{
	static const uint8_t time_b[7] = { 3, 4, 4, 5, 5, 5, 6 };
	static const uint8_t datetime_b[7] = { 8, 6, 6, 7, 7, 7, 8 };

	if (type == TT_TIMESTAMP)
		return 4 + frac_bytes(dec);
	return type == TT_TIME ? time_b[dec] : datetime_b[dec];
}

/* The bytes of a length-prefixed value: its prefix plus the length it
 * says, or 0 with *bad when it runs past avail. */
static size_t prefixed_size(const uint8_t *p, size_t avail, unsigned lenbytes, bool *bad)
{
	uint64_t n;

	if (avail < lenbytes) {
		*bad = true;   /* the prefix itself is cut short */
		return 0;
	}
	n = binrd_le_at(p, lenbytes);
	if (n > avail - lenbytes) {
		*bad = true;   /* the value runs past the image */
		return 0;
	}
	return lenbytes + (size_t)n;
}

/* A value's size in the image: 1 (*n set), 0 when it cannot be known
 * (the type's size is not read here), -1 when it runs past avail. */
static int value_size(const struct tmap_col *c, const uint8_t *p, size_t avail, bool diff,
		      size_t *n)
{
	bool bad = false;

	switch (c->real) {
	case TT_TINY: case TT_YEAR: *n = 1; break;
	case TT_SHORT: *n = 2; break;
	case TT_INT24: case TT_DATE: case TT_NEWDATE: *n = 3; break;
	case TT_LONG: case TT_FLOAT: *n = 4; break;
	case TT_LONGLONG: case TT_DOUBLE: *n = 8; break;
	case TT_TIME: case TT_DATETIME: case TT_TIMESTAMP:
		if (c->tdec < 0)
			return 0;   /* plain or MariaDB's hires form: not known */
		*n = hires_size(c->real, (unsigned)c->tdec);
		break;
	case TT_NULL: *n = 0; break;
	case TT_TIMESTAMP2: *n = 4 + frac_bytes(c->fsp); break;
	case TT_DATETIME2: *n = 5 + frac_bytes(c->fsp); break;
	case TT_TIME2: *n = 3 + frac_bytes(c->fsp); break;
	case TT_NEWDECIMAL: *n = decimal_size(c->precision, c->scale); break;
	case TT_BIT: *n = (c->bits + 7u) / 8; break;
	case TT_ENUM: case TT_SET: *n = c->lenbytes; break;
	case TT_STRING: case TT_VARCHAR: case TT_VAR_STRING: case TT_VARCHAR_COMPRESSED:
	case TT_TINY_BLOB: case TT_MEDIUM_BLOB: case TT_LONG_BLOB: case TT_BLOB:
	case TT_BLOB_COMPRESSED: case TT_GEOMETRY:
		*n = prefixed_size(p, avail, c->lenbytes, &bad);
		break;
	case TT_JSON:
		/* a partial update's diff: a 4-byte length, then the diff */
		*n = prefixed_size(p, avail, diff ? 4 : c->lenbytes, &bad);
		break;
	default:
		return 0;   /* DECIMAL (old), VECTOR, TYPED_ARRAY, unknown: no size known */
	}
	return bad || *n > avail ? -1 : 1;
}

/* ---- images ------------------------------------------------------------------- */

static bool is_partial_bit(const struct rowimg_image *img, unsigned njson)
{
	return img->partial_json && img->partial && binrd_bit(img->partial, njson);
}

/* Walk an image's values to its end (img->data set): the end, or NULL
 * with img->readable set where a size is unknown, or -1 past the end. */
static int walk_image(struct rowimg_image *img, const uint8_t *end, const uint8_t **at)
{
	const uint8_t *p = img->data;
	unsigned nth = 0, njson = 0;

	for (unsigned col = 0; col < img->ncols; col++) {
		const struct tmap_col *c = &img->map->cols[col];
		bool diff = false;
		size_t n;
		int rc;

		if (!rowimg_has(img, col))
			continue;
		if (c->real == TT_JSON)
			diff = is_partial_bit(img, njson++);
		if (binrd_bit(img->nulls, nth++))
			continue;
		rc = value_size(c, p, (size_t)(end - p), diff, &n);
		if (rc < 0)
			return -1;   /* the value runs past the event */
		if (rc == 0) {
			img->readable = col;
			*at = NULL;
			return 0;    /* the rest cannot be found */
		}
		p += n;
	}
	*at = p;
	return 0;
}

static unsigned present_json(const struct rowimg_rows *r, const uint8_t *bitmap)
{
	unsigned n = 0;

	for (unsigned i = 0; i < r->ncols; i++)
		n += binrd_bit(bitmap, i) && r->map->cols[i].real == TT_JSON;
	return n;
}

/* MySQL's partial after image: value options, and the partial bits. */
static int partial_header(struct rowimg_rows *r, struct rowimg_image *img, struct binrd *rd)
{
	uint64_t opts = binrd_packed(rd);

	if (opts & PARTIAL_JSON_UPDATES) {
		img->partial_json = true;
		img->partial = binrd_take(rd, (present_json(r, img->present) + 7) / 8);
	}
	return rd->bad ? -1 : 0;
}

int rowimg_next(struct rowimg_rows *r, struct rowimg_image *img, char *err, size_t cap)
{
	struct binrd rd;
	const uint8_t *end;
	unsigned b;

	if (r->stuck)
		return fail(err, cap, "rows event: nothing can be read after column %u of row %u "
			    "(%s: its values' size is not known)", r->stuck_col, r->stuck_row,
			    tmap_type_name(r->map->cols[r->stuck_col].real));
	if (!r->in_update && r->pos == r->end)
		return 0;   /* every row read */
	memset(img, 0, sizeof(*img));
	img->map = r->map;
	img->ncols = r->ncols;
	img->which = r->t.op == ROWIMG_DELETE || (r->t.op == ROWIMG_UPDATE && !r->in_update)
		     ? ROWIMG_BEFORE : ROWIMG_AFTER;
	b = r->in_update ? 1 : 0;
	img->present = r->bitmap[b];
	img->row = r->in_update ? r->row - 1 : r->row;
	img->readable = r->ncols;
	binrd_init(&rd, r->pos, (size_t)(r->end - r->pos));
	if (r->t.partial && r->in_update && partial_header(r, img, &rd) < 0)
		return fail(err, cap, "rows event: row %u: partial update header cut short", img->row);
	img->nulls = binrd_take(&rd, (r->npresent[b] + 7) / 8);
	if (!img->nulls)
		return fail(err, cap, "rows event: row %u: NULL bitmap cut short", img->row);
	img->data = rd.p;
	if (walk_image(img, r->end, &end) < 0)
		return fail(err, cap, "rows event: row %u (%s image): a value runs past the event",
			    img->row, img->which == ROWIMG_BEFORE ? "before" : "after");
	if (end == r->pos && r->pos < r->end)
		return fail(err, cap, "rows event: row %u: an image of no columns, and %zu bytes left",
			    img->row, (size_t)(r->end - r->pos));   /* else: images without end */
	if (!end) {
		r->stuck = true;   /* this image is handed out; nothing after it */
		r->stuck_col = img->readable;
		r->stuck_row = img->row;
		img->end = r->end;
	} else {
		img->end = end;
		r->pos = end;
	}
	if (!r->in_update)
		r->row++;
	r->in_update = r->t.op == ROWIMG_UPDATE && !r->in_update;
	return 1;
}

/* ---- values ------------------------------------------------------------------- */

static int64_t sign_extend(uint64_t v, unsigned bytes)
{
	unsigned shift = 64 - 8 * bytes;

	return (int64_t)(v << shift) >> shift;
}

static void decode_int(const struct tmap_col *c, const uint8_t *p, size_t n, struct rowimg_value *v)
{
	uint64_t u = binrd_le_at(p, (unsigned)n);
	bool top = (u >> (8 * n - 1)) & 1;

	if (c->sign == TMAP_SIGNED || (c->sign == TMAP_SIGN_UNKNOWN && !top)) {
		v->kind = RV_INT;
		v->v.i = sign_extend(u, (unsigned)n);
	} else if (c->sign == TMAP_UNSIGNED) {
		v->kind = u > INT64_MAX ? RV_UINT : RV_INT;
		v->v.u = u;   /* (v.i is the same bits when it fits) */
	} else {
		v->why = RV_WHY_SIGN;   /* top bit set: signed or not changes the value */
	}
}

static void decode_float(const uint8_t *p, size_t n, struct rowimg_value *v)
{
	if (n == 4) {
		uint32_t bits = (uint32_t)binrd_le_at(p, 4);
		float f;

		memcpy(&f, &bits, sizeof(f));
		v->v.d = f;
	} else {
		uint64_t bits = binrd_le_at(p, 8);

		memcpy(&v->v.d, &bits, sizeof(v->v.d));
	}
	if (v->v.d != v->v.d)
		return;   /* NaN: no server stores one; RV_UNKNOWN */
	v->kind = RV_DOUBLE;
}

/* Append a group of digits (value < 10^digits) to out. false: a group
 * that is no group of that many digits. */
static bool put_group(char *out, size_t *o, uint32_t g, unsigned digits)
{
	static const uint32_t pow10[10] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
					    100000000, 1000000000 };

	if (g >= pow10[digits])
		return false;
	for (unsigned i = digits; i > 0; i--) {
		out[*o + i - 1] = (char)('0' + g % 10);
		g /= 10;
	}
	*o += digits;
	return true;
}

/* DECIMAL's binary format: groups of 9 digits in 4 bytes (big-endian),
 * the leading integer digits and the trailing fraction digits in the
 * fewest bytes; the first bit flipped, every byte inverted when negative. */
static void decode_decimal(const struct tmap_col *c, const uint8_t *p, size_t n, struct rowimg_value *v)
{
	uint8_t b[40];
	char digits[80];
	unsigned intg = c->precision - c->scale, at = 0, lead;
	size_t o = 0, s, e;
	bool neg = !(p[0] & 0x80), ok = true;

	memcpy(b, p, n);   /* n <= 30: decimal_size of 65 digits */
	b[0] ^= 0x80;
	for (size_t i = 0; neg && i < n; i++)
		b[i] ^= 0xFF;
	lead = intg % 9;
	ok &= put_group(digits, &o, (uint32_t)binrd_be_at(b, dig2bytes[lead]), lead);
	at = dig2bytes[lead];
	for (unsigned g = 0; g < intg / 9; g++, at += 4)
		ok &= put_group(digits, &o, (uint32_t)binrd_be_at(b + at, 4), 9);
	s = o;   /* the fraction starts here */
	for (unsigned g = 0; g < c->scale / 9u; g++, at += 4)
		ok &= put_group(digits, &o, (uint32_t)binrd_be_at(b + at, 4), 9);
	ok &= put_group(digits, &o, (uint32_t)binrd_be_at(b + at, dig2bytes[c->scale % 9]), c->scale % 9);
	if (!ok) {
		v->why = RV_WHY_INVALID;   /* a group over its digits: no decimal */
		return;
	}
	e = o;
	while (e > s && digits[e - 1] == '0')
		e--;   /* trailing zeros of the fraction */
	for (at = 0; at < s && digits[at] == '0'; at++)
		;      /* leading zeros of the integer part */
	o = 0;
	if (neg && (at < s || e > s))
		v->dec[o++] = '-';   /* (never "-0") */
	if (at == s)
		v->dec[o++] = '0';
	memcpy(v->dec + o, digits + at, s - at);
	o += s - at;
	if (e > s) {
		v->dec[o++] = '.';
		memcpy(v->dec + o, digits + s, e - s);
		o += e - s;
	}
	v->dec[o] = 0;
	v->kind = RV_DECIMAL;
}

/* The fraction of TIME2, DATETIME2, TIMESTAMP2: 1, 2 or 3 bytes big-endian
 * for 1-2, 3-4, 5-6 digits, in units of 1/100, 1/10000, 1/1000000 s. */
static int64_t frac_usec(const uint8_t *p, unsigned fsp, bool is_signed)
{
	unsigned n = frac_bytes(fsp);
	uint64_t u = binrd_be_at(p, n);
	int64_t f = is_signed && n ? sign_extend(u, n) : (int64_t)u;

	return n == 1 ? f * 10000 : n == 2 ? f * 100 : f;
}

static bool time_ok(const struct rowimg_time *t, unsigned max_hour)
{
	return t->month <= 12 && t->day <= 31 && t->hour <= max_hour && t->minute <= 59 &&
	       t->second <= 59 && t->usec <= 999999;
}

static void decode_datetime2(const struct tmap_col *c, const uint8_t *p, struct rowimg_value *v)
{
	int64_t ip = (int64_t)binrd_be_at(p, 5) - 0x8000000000LL;
	int64_t f = frac_usec(p + 5, c->fsp, false);
	struct rowimg_time *t = &v->v.t;
	uint64_t ymd, ym, hms;

	if (ip < 0)
		return;   /* no DATETIME is negative: RV_UNKNOWN (invalid) */
	ymd = (uint64_t)ip >> 17;
	ym = ymd >> 5;
	hms = (uint64_t)ip & 0x1FFFF;
	t->year = (uint16_t)(ym / 13);
	t->month = (uint8_t)(ym % 13);
	t->day = (uint8_t)(ymd & 31);
	t->hour = (uint16_t)(hms >> 12);
	t->minute = (uint8_t)((hms >> 6) & 63);
	t->second = (uint8_t)(hms & 63);
	t->usec = (uint32_t)f;
	if (ym / 13 <= 9999 && time_ok(t, 23))
		v->kind = RV_DATETIME;
}

/* TIME2: the packed value (hours<<12 | minutes<<6 | seconds) << 24 plus
 * microseconds, as a signed number offset by 0x800000 << 24; the
 * fraction's bytes carry its sign with the integer part. */
static void decode_time2(const struct tmap_col *c, const uint8_t *p, struct rowimg_value *v)
{
	int64_t ip = (int64_t)binrd_be_at(p, 3) - 0x800000, packed;
	unsigned fb = frac_bytes(c->fsp);
	uint64_t mag, hms;
	struct rowimg_time *t = &v->v.t;

	if (fb == 3) {
		packed = (int64_t)binrd_be_at(p, 6) - 0x800000000000LL;
	} else {
		int64_t f = fb ? (int64_t)binrd_be_at(p + 3, fb) : 0;

		if (ip < 0 && f) {   /* the fraction borrowed from the integer part */
			ip++;
			f -= fb == 1 ? 0x100 : 0x10000;
		}
		packed = ip * (1LL << 24) + (fb == 1 ? f * 10000 : f * 100);
	}
	t->neg = packed < 0;
	mag = t->neg ? (uint64_t)-packed : (uint64_t)packed;
	hms = mag >> 24;
	t->hour = (uint16_t)((hms >> 12) & 0x3FF);
	t->minute = (uint8_t)((hms >> 6) & 63);
	t->second = (uint8_t)(hms & 63);
	t->usec = (uint32_t)(mag & 0xFFFFFF);
	if (time_ok(t, 838))
		v->kind = RV_TIME;
}

/* The old formats: TIME as HHMMSS (3 bytes, signed), DATETIME as
 * YYYYMMDDhhmmss (8 bytes), DATE as day | month << 5 | year << 9. */
static void decode_old_temporal(const struct tmap_col *c, const uint8_t *p, struct rowimg_value *v)
{
	struct rowimg_time *t = &v->v.t;

	if (c->real == TT_TIME) {
		int64_t s = sign_extend(binrd_le_at(p, 3), 3);
		uint64_t m = (uint64_t)(s < 0 ? -s : s);

		t->neg = s < 0;
		t->second = (uint8_t)(m % 100);
		t->minute = (uint8_t)(m / 100 % 100);
		t->hour = (uint16_t)(m / 10000 <= 838 ? m / 10000 : 999);
		if (time_ok(t, 838))
			v->kind = RV_TIME;
	} else if (c->real == TT_DATETIME) {
		uint64_t d = binrd_le_at(p, 8), ymd = d / 1000000, hms = d % 1000000;

		t->year = (uint16_t)(ymd / 10000 <= 9999 ? ymd / 10000 : 0);
		t->month = (uint8_t)(ymd / 100 % 100);
		t->day = (uint8_t)(ymd % 100);
		t->hour = (uint16_t)(hms / 10000);
		t->minute = (uint8_t)(hms / 100 % 100);
		t->second = (uint8_t)(hms % 100);
		if (ymd / 10000 <= 9999 && time_ok(t, 23))
			v->kind = RV_DATETIME;
	} else {   /* DATE, NEWDATE */
		uint32_t d = (uint32_t)binrd_le_at(p, 3);

		t->day = (uint8_t)(d & 31);
		t->month = (uint8_t)((d >> 5) & 15);
		t->year = (uint16_t)(d >> 9);
		if (t->year <= 9999 && time_ok(t, 0))
			v->kind = RV_DATE;
	}
}

static void decode_timestamp(const struct tmap_col *c, const uint8_t *p, struct rowimg_value *v)
{
	if (c->real == TT_TIMESTAMP) {
		v->v.ts.sec = (int64_t)binrd_le_at(p, 4);
		v->v.ts.usec = 0;
	} else {
		v->v.ts.sec = (int64_t)binrd_be_at(p, 4);
		v->v.ts.usec = (uint32_t)frac_usec(p + 4, c->fsp, false);
		if (v->v.ts.usec > 999999)
			return;   /* no fraction: RV_UNKNOWN (invalid) */
	}
	v->kind = RV_TIMESTAMP;
}

static void decode_bytes(const struct tmap_col *c, const uint8_t *p, size_t n, bool diff,
			 struct rowimg_value *v)
{
	unsigned lb = diff ? 4 : c->lenbytes;

	v->v.s.p = p + lb;
	v->v.s.len = n - lb;
	v->v.s.collation = c->collation;
	switch (c->real) {
	case TT_VARCHAR_COMPRESSED: case TT_BLOB_COMPRESSED:
		v->why = RV_WHY_COMPRESSED;   /* the bytes are the column's compressed form */
		break;
	case TT_JSON:
		if (diff)
			v->why = RV_WHY_PARTIAL;   /* a diff against the before image's document */
		else
			v->kind = RV_JSON;
		v->v.s.collation = 0;
		break;
	case TT_GEOMETRY:
		v->kind = RV_GEOMETRY;
		break;
	default:
		v->kind = RV_STRING;
	}
}

/* Decode one value of n bytes at p into v (kind RV_UNKNOWN, why set, when
 * it cannot be decoded exactly). */
static void decode_value(const struct tmap_col *c, const uint8_t *p, size_t n, bool diff,
			 struct rowimg_value *v)
{
	switch (c->real) {
	case TT_TINY: case TT_SHORT: case TT_INT24: case TT_LONG: case TT_LONGLONG:
		decode_int(c, p, n, v);
		break;
	case TT_FLOAT: case TT_DOUBLE:
		decode_float(p, n, v);
		break;
	case TT_NEWDECIMAL:
		decode_decimal(c, p, n, v);
		v->fsp = c->scale;
		break;
	case TT_YEAR:
		v->v.i = p[0] ? 1900 + p[0] : 0;
		v->kind = RV_YEAR;
		break;
	case TT_BIT:
		v->v.u = binrd_be_at(p, (unsigned)n);
		v->kind = RV_BIT;
		break;
	case TT_ENUM: case TT_SET:
		v->v.u = binrd_le_at(p, (unsigned)n);
		v->kind = c->real == TT_ENUM ? RV_ENUM : RV_SET;
		break;
	case TT_TIME: case TT_DATETIME: case TT_TIMESTAMP:
		if (c->tdec > 0)
			v->why = RV_WHY_TYPE;   /* MariaDB's hires form: sized, not decoded */
		else if (c->real == TT_TIMESTAMP)
			decode_timestamp(c, p, v);
		else
			decode_old_temporal(c, p, v);
		break;
	case TT_DATE: case TT_NEWDATE:
		decode_old_temporal(c, p, v);
		break;
	case TT_DATETIME2:
		decode_datetime2(c, p, v);
		v->fsp = c->fsp;
		break;
	case TT_TIME2:
		decode_time2(c, p, v);
		v->fsp = c->fsp;
		break;
	case TT_TIMESTAMP2:
		decode_timestamp(c, p, v);
		v->fsp = c->fsp;
		break;
	case TT_NULL:
		v->kind = RV_NULL;
		break;
	default:
		decode_bytes(c, p, n, diff, v);
		break;
	}
	if (v->kind == RV_UNKNOWN && v->why == RV_WHY_NONE)
		v->why = RV_WHY_INVALID;
}

void rowimg_cursor_init(struct rowimg_cursor *c, const struct rowimg_image *img)
{
	c->img = img;
	c->col = 0;
	c->nth = 0;
	c->njson = 0;
	c->p = img->data;
}

int rowimg_cursor_next(struct rowimg_cursor *c, struct rowimg_value *v)
{
	const struct rowimg_image *img = c->img;
	const struct tmap_col *col;
	bool diff = false;
	size_t n = 0;

	while (c->col < img->ncols && !rowimg_has(img, c->col))
		c->col++;
	if (c->col >= img->ncols)
		return 0;   /* past the last present column */
	memset(v, 0, offsetof(struct rowimg_value, dec));   /* (not the decimal's text) */
	v->dec[0] = 0;
	v->raw = NULL;
	v->raw_len = 0;
	v->col = c->col;
	col = &img->map->cols[c->col++];
	if (col->real == TT_JSON)
		diff = is_partial_bit(img, c->njson++);
	if (binrd_bit(img->nulls, c->nth++)) {
		v->kind = RV_NULL;   /* (the NULL bitmap is whole even where sizes are not) */
		return 1;
	}
	if (v->col >= img->readable) {
		v->why = RV_WHY_UNSIZED;   /* at or after a value whose size is not known */
		return 1;
	}
	/* walk_image() sized every value before readable: this one fits */
	if (value_size(col, c->p, (size_t)(img->end - c->p), diff, &n) != 1) {
		v->why = RV_WHY_INVALID;   /* not reached: the image was walked */
		return 1;
	}
	v->raw = c->p;
	v->raw_len = n;
	decode_value(col, c->p, n, diff, v);
	c->p += n;
	return 1;
}

/* ---- text --------------------------------------------------------------------- */

const char *rowimg_why_name(enum rowimg_why why)
{
	switch (why) {
	case RV_WHY_SIGN: return "sign";
	case RV_WHY_COMPRESSED: return "compressed";
	case RV_WHY_PARTIAL: return "partial";
	case RV_WHY_INVALID: return "invalid";
	case RV_WHY_UNSIZED: return "unsized";
	case RV_WHY_TYPE: return "type";
	default: return "none";
	}
}

static int format_bytes(const struct rowimg_value *v, char *out, size_t cap)
{
	size_t o = 0;
	int w;

	if (cap)
		out[0] = 0;
	w = snprintf(out, cap, "'");
	o += (size_t)w;
	for (size_t i = 0; i < v->v.s.len; i++) {
		uint8_t ch = v->v.s.p[i];

		if (ch >= 0x20 && ch < 0x7F && ch != '\'' && ch != '\\')
			w = snprintf(out + (o < cap ? o : cap), o < cap ? cap - o : 0, "%c", ch);
		else
			w = snprintf(out + (o < cap ? o : cap), o < cap ? cap - o : 0, "\\x%02x", ch);
		o += (size_t)w;
	}
	w = snprintf(out + (o < cap ? o : cap), o < cap ? cap - o : 0, "'@%" PRIu32, v->v.s.collation);
	return (int)(o + (size_t)w);
}

static int format_time(const struct rowimg_value *v, char *out, size_t cap)
{
	const struct rowimg_time *t = &v->v.t;
	char frac[8] = "";

	if (v->fsp)
		snprintf(frac, sizeof(frac), ".%06" PRIu32, t->usec);
	frac[v->fsp ? v->fsp + 1 : 0] = 0;
	if (v->kind == RV_DATE)
		return snprintf(out, cap, "%04u-%02u-%02u", t->year, t->month, t->day);
	if (v->kind == RV_TIME)
		return snprintf(out, cap, "%s%02u:%02u:%02u%s", t->neg ? "-" : "", t->hour, t->minute,
				t->second, frac);
	return snprintf(out, cap, "%04u-%02u-%02u %02u:%02u:%02u%s", t->year, t->month, t->day,
			t->hour, t->minute, t->second, frac);
}

int rowimg_format(const struct rowimg_value *v, char *out, size_t cap)
{
	switch (v->kind) {
	case RV_NULL: return snprintf(out, cap, "NULL");
	case RV_INT: return snprintf(out, cap, "%" PRId64, v->v.i);
	case RV_UINT: return snprintf(out, cap, "%" PRIu64, v->v.u);
	case RV_DOUBLE: return snprintf(out, cap, "%.17g", v->v.d);
	case RV_DECIMAL: return snprintf(out, cap, "%s", v->dec);
	case RV_STRING: return format_bytes(v, out, cap);
	case RV_ENUM: return snprintf(out, cap, "enum:%" PRIu64, v->v.u);
	case RV_SET: return snprintf(out, cap, "set:0x%" PRIx64, v->v.u);
	case RV_BIT: return snprintf(out, cap, "b:%" PRIu64, v->v.u);
	case RV_YEAR: return snprintf(out, cap, "%04" PRId64, v->v.i);
	case RV_DATE: case RV_TIME: case RV_DATETIME: return format_time(v, out, cap);
	case RV_TIMESTAMP:
		if (!v->fsp)
			return snprintf(out, cap, "ts:%" PRId64, v->v.ts.sec);
		return snprintf(out, cap, "ts:%" PRId64 ".%0*" PRIu32, v->v.ts.sec, (int)v->fsp,
				v->v.ts.usec / (uint32_t)(v->fsp == 6 ? 1 : v->fsp == 5 ? 10 : v->fsp == 4 ? 100 :
				v->fsp == 3 ? 1000 : v->fsp == 2 ? 10000 : 100000));
	case RV_JSON: return snprintf(out, cap, "json:%zu", v->v.s.len);
	case RV_GEOMETRY: return snprintf(out, cap, "geometry:%zu", v->v.s.len);
	default: return snprintf(out, cap, "?%s", rowimg_why_name(v->why));
	}
}
