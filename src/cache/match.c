/*
 * match.c: canonical forms of literals and row values, and the test of a
 * changed row against an entry's constraints (see match.h).
 */
#include "cache/match.h"

#include <stdio.h>
#include <string.h>

#include "sql/where_types.h"

#define DIGITS_EXACT 15   /* a string literal of up to 15 digits is exact as a double */

static bool is_pad(uint8_t coll)
{
	return coll == TCOLL_BIN_PAD || coll == TCOLL_CI_PAD || coll == TCOLL_UCA_PAD;
}

static uint8_t upper(uint8_t c)
{
	return c >= 'a' && c <= 'z' ? (uint8_t)(c - 32) : c;
}

static bool alnum(uint8_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* One byte of a string under a collation: false when it is not compared
 * exactly (an image's byte above 0x7F under a _bin collation is kept: no
 * literal this node compares has one). */
static bool canon_byte(uint8_t coll, uint8_t c, bool image, uint8_t *out)
{
	switch (coll) {
	case TCOLL_BIN_PAD: case TCOLL_BIN_NOPAD:
		*out = c;
		return image || c < 0x80;
	case TCOLL_CI_PAD: case TCOLL_CI_NOPAD:
		*out = upper(c);
		return c < 0x80;    /* above: accents fold onto ASCII letters */
	default:                    /* Unicode collations: letters and digits only */
		*out = upper(c);
		return alnum(c);
	}
}

/* A string's canonical form under class k. */
static enum mc_canon canon_string(const struct mc_class *k, const uint8_t *p, size_t n, bool image,
				  uint8_t *out, size_t *len)
{
	size_t m = n;

	if (k->coll == TCOLL_BYTES) {
		size_t want = image && k->fixlen > n ? k->fixlen : n;

		if (want > MATCH_VAL_MAX)
			return MC_UNSURE;   /* too long to keep */
		for (size_t i = 0; i < n; i++)
			if (!image && p[i] >= 0x80)
				return MC_UNSURE;   /* a literal's bytes may be converted */
		memcpy(out, p, n);
		memset(out + n, 0, want - n);   /* BINARY(n): the 0x00 the binlog left out */
		*len = want;
		return MC_OK;
	}
	if (k->coll < TCOLL_BIN_PAD || k->coll > TCOLL_UCA_NOPAD)
		return MC_UNSURE;   /* a collation this node does not compare */
	if (is_pad(k->coll))
		while (m > 0 && p[m - 1] == ' ')
			m--;
	if (m > MATCH_VAL_MAX)
		return MC_UNSURE;   /* too long to keep */
	for (size_t i = 0; i < m; i++)
		if (!canon_byte(k->coll, p[i], image, &out[i]))
			return MC_UNSURE;   /* a byte this collation is not compared by */
	*len = m;
	return MC_OK;
}

static void put_int(uint8_t *out, size_t *len, char tag, uint64_t v)
{
	out[0] = (uint8_t)tag;
	for (int i = 0; i < 8; i++)
		out[1 + i] = (uint8_t)(v >> (8 * i));
	*len = 9;
}

/* An integer whose signedness the binlog did not send, from its bytes and
 * the column's word. */
static enum mc_canon canon_raw_int(const struct mc_class *k, const struct rowimg_value *v,
				   uint8_t *out, size_t *len)
{
	uint64_t u = 0;

	if (!v->raw || v->raw_len == 0 || v->raw_len > 8)
		return MC_UNSURE;   /* no bytes to decode */
	for (size_t i = 0; i < v->raw_len; i++)
		u |= (uint64_t)v->raw[i] << (8 * i);
	if (k->flags & MCF_UNSIGNED) {
		put_int(out, len, u > INT64_MAX ? 'u' : 'i', u);
	} else {
		unsigned shift = 64 - 8 * (unsigned)v->raw_len;

		put_int(out, len, 'i', (uint64_t)((int64_t)(u << shift) >> shift));
	}
	return MC_OK;
}

enum mc_canon match_canon_value(const struct mc_class *k, const struct rowimg_value *v, uint8_t *out,
				size_t *len)
{
	if (v->kind == RV_NULL)
		return MC_NULL;   /* whatever the column */
	switch (k->kind) {
	case TK_INT:
		if (v->kind == RV_INT || v->kind == RV_UINT) {
			put_int(out, len, v->kind == RV_UINT ? 'u' : 'i', v->v.u);
			return MC_OK;
		}
		return v->kind == RV_UNKNOWN && v->why == RV_WHY_SIGN ? canon_raw_int(k, v, out, len)
		       : MC_UNSURE;
	case TK_DECIMAL:
		if (v->kind != RV_DECIMAL || strlen(v->dec) > MATCH_VAL_MAX)
			return MC_UNSURE;   /* not a decimal decoded exactly */
		*len = strlen(v->dec);
		memcpy(out, v->dec, *len);
		return MC_OK;
	case TK_CHAR: case TK_BYTES:
		if (v->kind != RV_STRING)
			return MC_UNSURE;   /* (a compressed column's value, ...) */
		return canon_string(k, v->v.s.p, v->v.s.len, true, out, len);
	default:
		return MC_UNSURE;
	}
}

/* Digits p[0, n) as a uint64: false on overflow or a non-digit. */
static bool digits_u64(const char *p, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0)
		return false;   /* no digit */
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(p[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;   /* not a digit, or past 64 bits */
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* An integer's text (a sign, digits) as a canonical integer. */
static enum mc_canon canon_int_text(const char *p, size_t n, size_t max_digits, uint8_t *out, size_t *len)
{
	bool neg = n > 0 && p[0] == '-';
	size_t at = n > 0 && (p[0] == '-' || p[0] == '+') ? 1 : 0;
	uint64_t u;

	if (n - at > max_digits || !digits_u64(p + at, n - at, &u))
		return MC_UNSURE;   /* not an integer this node reads exactly */
	if (neg && u > (uint64_t)INT64_MAX + 1)
		return MC_UNSURE;   /* below any integer column */
	if (neg)
		put_int(out, len, 'i', u == 0 ? 0 : (uint64_t)(-(int64_t)(u - 1) - 1));
	else
		put_int(out, len, u > INT64_MAX ? 'u' : 'i', u);
	return MC_OK;
}

/* A decimal literal's text in rowimage.h's canonical form. */
static enum mc_canon canon_decimal_text(const char *p, size_t n, uint8_t *out, size_t *len)
{
	size_t at = 0, point, ib, ie, fe, o = 0;
	bool neg = false;

	if (at < n && (p[at] == '-' || p[at] == '+'))
		neg = p[at++] == '-';
	for (point = at; point < n && p[point] != '.'; point++)
		if (p[point] < '0' || p[point] > '9')
			return MC_UNSURE;   /* an exponent, or no number */
	for (size_t i = point + 1; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return MC_UNSURE;   /* a fraction that is no digits */
	for (ib = at; ib < point && p[ib] == '0'; ib++)
		;
	ie = point;
	for (fe = n; fe > point + 1 && p[fe - 1] == '0'; fe--)
		;
	if (fe <= point + 1)
		fe = point;   /* no fraction left */
	if (ie - ib + (fe > point ? fe - point : 0) + 3 > MATCH_VAL_MAX)
		return MC_UNSURE;   /* too long to keep */
	if (neg && (ib < ie || fe > point))
		out[o++] = '-';
	if (ib == ie)
		out[o++] = '0';
	memcpy(out + o, p + ib, ie - ib);
	o += ie - ib;
	if (fe > point) {
		memcpy(out + o, p + point, fe - point);
		o += fe - point;
	}
	*len = o;
	return MC_OK;
}

/* A DECIMAL literal against an integer column: its value when its
 * fraction is zero. */
static enum mc_canon canon_decimal_as_int(const char *p, size_t n, uint8_t *out, size_t *len)
{
	size_t point = 0;

	while (point < n && p[point] != '.')
		point++;
	for (size_t i = point + 1; i < n; i++)
		if (p[i] != '0')
			return MC_UNSURE;   /* a fraction: dropped rather than reasoned about */
	return canon_int_text(p, point, 20, out, len);
}

enum mc_canon match_canon_literal(const struct mc_class *k, unsigned lit_kind, const char *text,
				  size_t len, uint8_t *out, size_t *olen)
{
	if (lit_kind == SQL_WL_NULL)
		return MC_NEVER;
	switch (k->kind) {
	case TK_INT:
		if (lit_kind == SQL_WL_INT)
			return canon_int_text(text, len, 20, out, olen);
		if (lit_kind == SQL_WL_DECIMAL)
			return canon_decimal_as_int(text, len, out, olen);
		/* a string is compared as a double: exact for 15 digits */
		if (lit_kind == SQL_WL_STRING && len > 0 && text[0] != '+')
			return canon_int_text(text, len, DIGITS_EXACT + (text[0] == '-'), out, olen);
		return MC_UNSURE;
	case TK_DECIMAL:
		if (lit_kind == SQL_WL_INT || lit_kind == SQL_WL_DECIMAL)
			return canon_decimal_text(text, len, out, olen);
		return MC_UNSURE;
	case TK_CHAR: case TK_BYTES:
		if (lit_kind != SQL_WL_STRING)
			return MC_UNSURE;   /* a number is compared as a double, hex as bytes */
		return canon_string(k, (const uint8_t *)text, len, false, out, olen);
	default:
		return MC_UNSURE;
	}
}

/* ---- the blob --------------------------------------------------------------- */

size_t match_cond_off(const uint8_t *rec, unsigned k)
{
	size_t off = sizeof(struct mc_tab);

	for (unsigned i = 0; i < k; i++)
		off += match_cond_at(rec + off).len;
	return off;
}

const uint8_t *match_value_at(const uint8_t *cond, unsigned j, size_t *len)
{
	const uint8_t *p = cond + sizeof(struct mc_cond);

	for (unsigned i = 0; i < j; i++)
		p += 1 + p[0];
	*len = p[0];
	return p + 1;
}

/* One condition (at p, room bytes left in its record) checked: its
 * postings if it is the indexed one into *posts; false when unsound. */
static bool cond_valid(const uint8_t *p, size_t room, bool indexed, unsigned *posts)
{
	struct mc_cond c;
	size_t at = sizeof(c);

	if (room < sizeof(c))
		return false;   /* no room for its header */
	c = match_cond_at(p);
	if (c.len < sizeof(c) || c.len > room || (c.op != MOP_IN && c.op != MOP_NULL) ||
	    (c.op == MOP_NULL && c.nvals))
		return false;   /* a length or an op that is no condition's */
	for (unsigned j = 0; j < c.nvals; j++) {
		if (at >= c.len || at + 1 + p[at] > c.len)
			return false;   /* a value past the condition */
		at += 1 + (size_t)p[at];
	}
	if (indexed) {
		unsigned n = c.op == MOP_NULL ? 1 : c.nvals;

		if (n == 0 || n > MATCH_IN_MAX)
			return false;   /* nothing to find it by, or too many */
		*posts += n;
	}
	return at == c.len;
}

bool match_blob_valid(const uint8_t *blob, size_t len, unsigned ntab, unsigned npost, unsigned ndeps)
{
	size_t off = 0;
	unsigned posts = 0;
	uint32_t seen = 0;

	for (unsigned i = 0; i < ntab; i++) {
		struct mc_tab t;
		size_t co = sizeof(t);

		if (off + sizeof(t) > len)
			return false;   /* a record past the blob */
		t = match_tab_at(blob + off);
		if (t.len < sizeof(t) || off + t.len > len || t.dep >= ndeps || t.dep >= 32 ||
		    ((seen >> t.dep) & 1u) || t.nconds == 0 || (t.icond != MATCH_NO_COND && t.icond >= t.nconds))
			return false;   /* a record that is no table's */
		seen |= 1u << t.dep;
		for (unsigned k = 0; k < t.nconds; k++) {
			if (!cond_valid(blob + off + co, t.len - co, k == t.icond, &posts))
				return false;   /* a condition that is unsound */
			co += match_cond_at(blob + off + co).len;
		}
		if (co != t.len)
			return false;   /* bytes after its conditions */
		off += t.len;
	}
	return off == len && posts == npost;
}

uint32_t match_blob_mask(const uint8_t *blob, size_t len, unsigned ntab)
{
	uint32_t mask = 0;
	size_t off = 0;

	for (unsigned i = 0; i < ntab && off + sizeof(struct mc_tab) <= len; i++) {
		struct mc_tab t = match_tab_at(blob + off);

		mask |= 1u << (t.dep & 31);
		off += t.len;
	}
	return mask;
}

static bool present(const struct match_img *img, unsigned col)
{
	return col < img->map->ncols && img->seen[col] == img->stamp;
}

const struct rowimg_value *match_img_value(const struct match_img *img, const struct mc_tab *t,
					   const struct mc_cond *c)
{
	if (img->name_hash != t->name_hash || img->map->ncols != t->ncols || c->col >= t->ncols ||
	    img->map->cols[c->col].real != c->type)
		return NULL;   /* not the definition the constraint was resolved with */
	if (present(img, c->col))
		return &img->v[c->col];
	if (img->before && !(c->flags & MCF_GENERATED) && present(img->before, c->col))
		return &img->before->v[c->col];   /* not in the after image: unchanged */
	return NULL;
}

/* One condition against img. */
static enum match_verdict match_cond(const struct mc_tab *t, const uint8_t *cp, const struct match_img *img)
{
	struct mc_cond c = match_cond_at(cp);
	struct mc_class k = mc_class_of(&c);
	const struct rowimg_value *v;
	uint8_t canon[MATCH_VAL_MAX + 1];
	size_t n = 0;
	enum mc_canon r;

	if (c.op == MOP_IN && c.nvals == 0)
		return MV_NO;         /* `= NULL`: never true, whatever the row */
	v = match_img_value(img, t, &c);
	if (!v)
		return MV_UNSURE;     /* absent, or another definition */
	r = match_canon_value(&k, v, canon, &n);
	if (r == MC_UNSURE)
		return MV_UNSURE;
	if (c.op == MOP_NULL)
		return r == MC_NULL ? MV_YES : MV_NO;
	if (r == MC_NULL)
		return MV_NO;         /* NULL equals nothing */
	for (unsigned j = 0; j < c.nvals; j++) {
		size_t vl;
		const uint8_t *vp = match_value_at(cp, j, &vl);

		if (vl == n && memcmp(vp, canon, n) == 0)
			return MV_YES;
	}
	return MV_NO;
}

enum match_verdict match_table(const struct mc_tab *t, const uint8_t *rec, const struct match_img *img)
{
	size_t off = sizeof(struct mc_tab);
	bool unsure = false;

	for (unsigned k = 0; k < t->nconds; k++) {
		enum match_verdict v = match_cond(t, rec + off, img);

		if (v == MV_NO)
			return MV_NO;     /* one condition false: the row is not one of the answer's */
		unsure |= v == MV_UNSURE;
		off += match_cond_at(rec + off).len;
	}
	return unsure ? MV_UNSURE : MV_YES;
}

/* ---- as text ------------------------------------------------------------------ */

struct fmt {
	char *out;
	size_t cap, len;
};

static void put(struct fmt *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++, f->len++)
		if (f->len + 1 < f->cap)
			f->out[f->len] = s[i];
}

static void puts_(struct fmt *f, const char *s)
{
	put(f, s, strlen(s));
}

static void value_text(struct fmt *f, uint8_t kind, const uint8_t *p, size_t n)
{
	char num[32];

	if (kind == TK_INT && n == 9) {
		uint64_t u = 0;

		for (int i = 0; i < 8; i++)
			u |= (uint64_t)p[1 + i] << (8 * i);
		if (p[0] == 'u')
			snprintf(num, sizeof(num), "%llu", (unsigned long long)u);
		else
			snprintf(num, sizeof(num), "%lld", (long long)(int64_t)u);
		puts_(f, num);
		return;
	}
	if (kind == TK_DECIMAL) {
		put(f, (const char *)p, n);
		return;
	}
	put(f, "'", 1);
	for (size_t i = 0; i < n; i++) {
		if (p[i] >= 0x20 && p[i] < 0x7F && p[i] != '\'' && p[i] != '\\') {
			put(f, (const char *)p + i, 1);
		} else {
			snprintf(num, sizeof(num), "\\x%02X", p[i]);
			puts_(f, num);
		}
	}
	put(f, "'", 1);
}

static void name_text(struct fmt *f, match_name_fn name, void *arg, unsigned dep, int col)
{
	const char *s = name ? name(arg, dep, col) : NULL;
	char num[16];

	if (s) {
		puts_(f, s);
		return;
	}
	snprintf(num, sizeof(num), "#%d", col < 0 ? (int)dep : col);
	puts_(f, num);
}

static void cond_text(struct fmt *f, const uint8_t *cp, unsigned dep, match_name_fn name, void *arg)
{
	struct mc_cond c = match_cond_at(cp);

	name_text(f, name, arg, dep, c.col);
	if (c.op == MOP_NULL) {
		puts_(f, " IS NULL");
		return;
	}
	puts_(f, " IN (");
	for (unsigned j = 0; j < c.nvals; j++) {
		size_t vl;
		const uint8_t *vp = match_value_at(cp, j, &vl);

		if (j)
			put(f, ",", 1);
		value_text(f, c.kind, vp, vl);
	}
	puts_(f, ")");
	if (c.kind == TK_CHAR || c.kind == TK_BYTES) {
		puts_(f, " [");
		puts_(f, tcoll_name((enum tcoll)c.coll));
		puts_(f, "]");
	}
}

size_t match_format(const uint8_t *blob, size_t len, unsigned ntab, match_name_fn name, void *arg,
		    char *out, size_t cap)
{
	struct fmt f = { out, cap, 0 };
	size_t off = 0;

	for (unsigned i = 0; i < ntab && off + sizeof(struct mc_tab) <= len; i++) {
		struct mc_tab t = match_tab_at(blob + off);
		size_t co = sizeof(struct mc_tab);

		if (i)
			puts_(&f, "; ");
		name_text(&f, name, arg, t.dep, -1);
		puts_(&f, ": ");
		for (unsigned k = 0; k < t.nconds; k++) {
			if (k)
				puts_(&f, " AND ");
			cond_text(&f, blob + off + co, t.dep, name, arg);
			co += match_cond_at(blob + off + co).len;
		}
		if (t.icond == MATCH_NO_COND)
			puts_(&f, " (never true)");
		off += t.len;
	}
	if (cap)
		out[f.len < cap ? f.len : cap - 1] = '\0';
	return f.len;
}
