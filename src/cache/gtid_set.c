/*
 * gtid_set.c: MySQL GTID sets (see gtid_set.h).
 */
#include "cache/gtid_set.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"

void gtid_set_init(struct gtid_set *s)
{
	memset(s, 0, sizeof(*s));
}

void gtid_set_free(struct gtid_set *s)
{
	for (unsigned i = 0; i < s->cap; i++)   /* spare slots keep arrays too */
		free(s->sid[i].iv);
	free(s->sid);
	gtid_set_init(s);
}

void gtid_set_clear(struct gtid_set *s)
{
	for (unsigned i = 0; i < s->n; i++)
		s->sid[i].n = 0;
	s->n = 0;
}

/* Makes room for need elements of size bytes in *arr (capacity *cap),
 * zeroing the new ones. 0, or -1 (out of memory, or a count too large)
 * with *arr unchanged. */
static int grow(void **arr, unsigned *cap, unsigned need, size_t size)
{
	unsigned ncap = *cap ? *cap : 4;
	void *p;

	if (need <= *cap)
		return 0;   /* room enough already */
	while (ncap < need) {
		if (ncap > UINT_MAX / 2)
			return -1;   /* no capacity can be counted that high */
		ncap *= 2;
	}
	if ((size_t)ncap > SIZE_MAX / size)
		return -1;   /* the bytes would not fit a size_t */
	p = realloc(*arr, (size_t)ncap * size);
	if (!p)
		return -1;   /* out of memory: the old array stays */
	memset((char *)p + (size_t)*cap * size, 0, (size_t)(ncap - *cap) * size);
	*arr = p;
	*cap = ncap;
	return 0;
}

static bool tag_char(char c, bool first)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
		return true;
	return !first && c >= '0' && c <= '9';
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* tag (NULL or "" untagged) checked and lower-cased into out; false if it
 * is not a tag. */
static bool tag_norm(const char *tag, char out[GTID_TAG_MAX + 1])
{
	size_t i = 0;

	if (tag)
		for (; tag[i]; i++) {
			if (i == GTID_TAG_MAX || !tag_char(tag[i], i == 0))
				return false;   /* too long, or a character no tag has */
			out[i] = lower(tag[i]);
		}
	out[i] = '\0';
	return true;
}

static int sid_cmp(const struct gtid_sid *d, const uint8_t *uuid, const char *tag)
{
	int c = memcmp(d->uuid, uuid, GTID_UUID_LEN);

	return c ? c : strcmp(d->tag, tag);
}

/* The index of uuid+tag (normalised) in s, or where it would go; *found
 * says which. */
static unsigned sid_find(const struct gtid_set *s, const uint8_t *uuid, const char *tag,
			 bool *found)
{
	unsigned lo = 0, hi = s->n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		int c = sid_cmp(&s->sid[mid], uuid, tag);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

/* The first interval of d whose last is at or after gno (d->n if none). */
static unsigned iv_lower(const struct gtid_sid *d, uint64_t gno)
{
	unsigned lo = 0, hi = d->n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (d->iv[mid].last < gno)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Adds [first, last] to d, merging what it overlaps or touches. 0, or -1
 * (out of memory) with d unchanged. Needs last <= GTID_GNO_MAX. */
static int sid_add_range(struct gtid_sid *d, uint64_t first, uint64_t last)
{
	unsigned lo = iv_lower(d, first - 1), hi = lo;   /* first >= 1 */

	while (hi < d->n && d->iv[hi].first <= last + 1)
		hi++;
	if (lo == hi) {   /* touches nothing: a new interval at lo */
		if (grow((void **)&d->iv, &d->cap, d->n + 1, sizeof(*d->iv)) < 0)
			return -1;   /* out of memory: d unchanged */
		memmove(&d->iv[lo + 1], &d->iv[lo], (d->n - lo) * sizeof(*d->iv));
		d->iv[lo].first = first;
		d->iv[lo].last = last;
		d->n++;
		return 0;
	}
	if (d->iv[lo].first < first)
		first = d->iv[lo].first;
	if (d->iv[hi - 1].last > last)
		last = d->iv[hi - 1].last;
	d->iv[lo].first = first;
	d->iv[lo].last = last;
	memmove(&d->iv[lo + 1], &d->iv[hi], (d->n - hi) * sizeof(*d->iv));
	d->n -= hi - lo - 1;
	return 0;
}

/* The sid uuid+tag (tag normalised) of s, inserted empty if s has none,
 * with room for one interval at least, so that a first add cannot fail
 * and leave an empty sid behind. NULL: out of memory, s unchanged. */
static struct gtid_sid *set_sid(struct gtid_set *s, const uint8_t *uuid, const char *tag)
{
	bool found;
	unsigned i = sid_find(s, uuid, tag, &found);
	struct gtid_sid spare;

	if (found)
		return &s->sid[i];
	if (grow((void **)&s->sid, &s->cap, s->n + 1, sizeof(*s->sid)) < 0)
		return NULL;   /* out of memory: s unchanged */
	if (grow((void **)&s->sid[s->n].iv, &s->sid[s->n].cap, 1, sizeof(*s->sid->iv)) < 0)
		return NULL;   /* the spare slot may keep its array: s unchanged */
	/* Slot n's array moves to i with the slot itself: nothing leaks. */
	spare = s->sid[s->n];
	memmove(&s->sid[i + 1], &s->sid[i], (s->n - i) * sizeof(*s->sid));
	memcpy(spare.uuid, uuid, GTID_UUID_LEN);
	strcpy(spare.tag, tag);
	spare.n = 0;
	s->sid[i] = spare;
	s->n++;
	return &s->sid[i];
}

/* Adds uuid+tag (normalised):[first, last]. 0, or -1 out of memory. */
static int set_add_range(struct gtid_set *s, const uint8_t *uuid, const char *tag,
			 uint64_t first, uint64_t last)
{
	struct gtid_sid *d = set_sid(s, uuid, tag);

	if (!d)
		return -1;   /* out of memory */
	return sid_add_range(d, first, last);
}

int gtid_set_add(struct gtid_set *s, const uint8_t uuid[GTID_UUID_LEN], const char *tag,
		 uint64_t gno)
{
	char t[GTID_TAG_MAX + 1];

	if (gno == 0 || gno > GTID_GNO_MAX)
		return -1;   /* no transaction has this number */
	if (!tag_norm(tag, t))
		return -1;   /* not a tag */
	return set_add_range(s, uuid, t, gno, gno);
}

int gtid_set_copy(struct gtid_set *dst, const struct gtid_set *src)
{
	gtid_set_clear(dst);
	if (grow((void **)&dst->sid, &dst->cap, src->n, sizeof(*dst->sid)) < 0)
		return -1;   /* out of memory: dst empty */
	for (unsigned i = 0; i < src->n; i++) {
		struct gtid_sid *d = &dst->sid[i];
		const struct gtid_sid *f = &src->sid[i];

		if (grow((void **)&d->iv, &d->cap, f->n, sizeof(*d->iv)) < 0) {
			gtid_set_clear(dst);
			return -1;   /* out of memory: dst left empty */
		}
		memcpy(d->uuid, f->uuid, GTID_UUID_LEN);
		memcpy(d->tag, f->tag, sizeof(d->tag));
		memcpy(d->iv, f->iv, f->n * sizeof(*d->iv));
		d->n = f->n;
		dst->n = i + 1;
	}
	return 0;
}

bool gtid_set_contains(const struct gtid_set *s, const uint8_t uuid[GTID_UUID_LEN],
		       const char *tag, uint64_t gno)
{
	char t[GTID_TAG_MAX + 1];
	bool found;
	unsigned i, k;
	const struct gtid_sid *d;

	if (!tag_norm(tag, t))
		return false;   /* not a tag: no set holds it */
	i = sid_find(s, uuid, t, &found);
	if (!found)
		return false;   /* nothing of this uuid+tag */
	d = &s->sid[i];
	k = iv_lower(d, gno);
	return k < d->n && d->iv[k].first <= gno;
}

bool gtid_set_subset(const struct gtid_set *a, const struct gtid_set *b)
{
	for (unsigned i = 0; i < a->n; i++) {
		const struct gtid_sid *x = &a->sid[i], *y;
		bool found;
		unsigned j = 0, k = sid_find(b, x->uuid, x->tag, &found);

		if (!found)
			return false;   /* b has nothing of this uuid+tag (x is never empty) */
		y = &b->sid[k];
		/* b's intervals are merged: each of x's lies within one, or not in b. */
		for (unsigned m = 0; m < x->n; m++) {
			while (j < y->n && y->iv[j].last < x->iv[m].first)
				j++;
			if (j == y->n || y->iv[j].first > x->iv[m].first ||
			    y->iv[j].last < x->iv[m].last)
				return false;   /* some gno of x->iv[m] is not in b */
		}
	}
	return true;
}

bool gtid_set_has_tags(const struct gtid_set *s)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->sid[i].tag[0])
			return true;
	return false;
}

bool gtid_tag_parse(const char *text, size_t len, char out[GTID_TAG_MAX + 1])
{
	char t[GTID_TAG_MAX + 1];

	if (len > GTID_TAG_MAX)
		return false;   /* longer than any tag */
	for (size_t i = 0; i < len; i++) {
		if (!tag_char(text[i], i == 0))
			return false;   /* a character no tag has */
		t[i] = lower(text[i]);
	}
	t[len] = '\0';
	memcpy(out, t, len + 1);
	return true;
}

/* ---- uuids ---- */

static bool dash_at(size_t i)
{
	return i == 8 || i == 13 || i == 18 || i == 23;
}

bool gtid_uuid_parse(const char *text, size_t len, uint8_t out[GTID_UUID_LEN])
{
	uint8_t u[GTID_UUID_LEN];
	unsigned nib = 0;

	if (len != 36)
		return false;   /* only the dashed form is a uuid here */
	for (size_t i = 0; i < len; i++) {
		int v;

		if (dash_at(i)) {
			if (text[i] != '-')
				return false;   /* a dash missing */
			continue;
		}
		v = hex_value(text[i]);
		if (v < 0)
			return false;   /* not a hex digit */
		if (nib % 2 == 0)
			u[nib / 2] = (uint8_t)(v << 4);
		else
			u[nib / 2] |= (uint8_t)v;
		nib++;
	}
	memcpy(out, u, GTID_UUID_LEN);
	return true;
}

void gtid_uuid_format(const uint8_t uuid[GTID_UUID_LEN], char out[37])
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (unsigned b = 0; b < GTID_UUID_LEN; b++) {
		if (dash_at(o))
			out[o++] = '-';
		out[o++] = hex[uuid[b] >> 4];
		out[o++] = hex[uuid[b] & 15];
	}
	out[o] = '\0';
}

/* ---- text ---- */

struct gparse {
	const char *p, *start, *end;
	char *err;
	size_t cap;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static void skip_ws(struct gparse *g)
{
	while (g->p < g->end && is_space(*g->p))
		g->p++;
}

static bool at(const struct gparse *g, char c)
{
	return g->p < g->end && *g->p == c;
}

static bool at_digit(const struct gparse *g)
{
	return g->p < g->end && *g->p >= '0' && *g->p <= '9';
}

static int fail(struct gparse *g, const char *where, const char *why)
{
	if (g->err && g->cap > 0)
		snprintf(g->err, g->cap, "malformed at offset %zu: %s",
			 (size_t)(where - g->start), why);
	return -1;
}

/* A gno: decimal digits, 1 to GTID_GNO_MAX. */
static int parse_gno(struct gparse *g, uint64_t *out)
{
	const char *from = g->p;
	uint64_t v = 0;

	if (!at_digit(g))
		return fail(g, from, "expected a number");
	for (; at_digit(g); g->p++) {
		uint64_t d = (uint64_t)(*g->p - '0');

		if (v > (GTID_GNO_MAX - d) / 10)
			return fail(g, from, "number out of range");
		v = v * 10 + d;
	}
	if (v == 0)
		return fail(g, from, "transaction number 0");
	*out = v;
	return 0;
}

/* "a" or "a-b" with a <= b, whitespace allowed around the dash. */
static int parse_interval(struct gparse *g, uint64_t *first, uint64_t *last)
{
	const char *from = g->p;

	if (parse_gno(g, first) < 0)
		return -1;   /* err says why */
	*last = *first;
	skip_ws(g);
	if (!at(g, '-'))
		return 0;   /* a single gno */
	g->p++;
	skip_ws(g);
	if (parse_gno(g, last) < 0)
		return -1;   /* err says why */
	if (*last < *first)
		return fail(g, from, "interval ends before it starts");
	return 0;
}

static int parse_tag(struct gparse *g, char tag[GTID_TAG_MAX + 1])
{
	const char *from = g->p;
	size_t n = 0;

	while (g->p < g->end && tag_char(*g->p, n == 0)) {
		if (n == GTID_TAG_MAX)
			return fail(g, from, "tag longer than 32 characters");
		tag[n++] = lower(*g->p++);
	}
	tag[n] = '\0';
	return 0;
}

/* One entry: uuid, then ":interval" or ":tag" any number of times. */
static int parse_entry(struct gparse *g, struct gtid_set *s)
{
	uint8_t uuid[GTID_UUID_LEN];
	char tag[GTID_TAG_MAX + 1] = "";
	size_t left = (size_t)(g->end - g->p);

	if (!gtid_uuid_parse(g->p, left < 36 ? left : 36, uuid))
		return fail(g, g->p, "expected a uuid");
	g->p += 36;
	for (skip_ws(g); at(g, ':'); skip_ws(g)) {
		uint64_t first, last;

		g->p++;
		skip_ws(g);
		if (g->p < g->end && tag_char(*g->p, true)) {
			if (parse_tag(g, tag) < 0)
				return -1;   /* err says why */
			continue;
		}
		if (parse_interval(g, &first, &last) < 0)
			return -1;   /* err says why */
		if (set_add_range(s, uuid, tag, first, last) < 0) {
			if (g->err && g->cap > 0)
				snprintf(g->err, g->cap, "out of memory");
			return -1;   /* out of memory */
		}
	}
	return 0;
}

int gtid_set_parse(struct gtid_set *s, const char *text, size_t len, char *err, size_t cap)
{
	struct gparse g = { text, text, text ? text + len : text, err, cap };

	gtid_set_clear(s);
	if (len == 0)
		return 0;   /* the empty set (text may be NULL) */
	for (;;) {
		/* Empty entries (",," or a leading or trailing comma) are
		 * MySQL's too. */
		for (skip_ws(&g); at(&g, ','); skip_ws(&g))
			g.p++;
		if (g.p == g.end)
			return 0;   /* the whole text read */
		if (parse_entry(&g, s) < 0)
			break;   /* err says why */
		if (g.p == g.end)
			return 0;   /* the whole text read */
		if (!at(&g, ',')) {
			fail(&g, g.p, "expected ',' or ':'");
			break;
		}
	}
	gtid_set_clear(s);
	return -1;
}

struct gout {
	char *p;
	size_t cap, len;
};

/* Appends s[0, n), as much as fits before the NUL's byte. */
static void put(struct gout *o, const char *s, size_t n)
{
	if (o->len + 1 < o->cap) {
		size_t room = o->cap - 1 - o->len;

		memcpy(o->p + o->len, s, n < room ? n : room);
	}
	o->len += n;
}

static void put_u64(struct gout *o, uint64_t v)
{
	char buf[20];
	size_t i = sizeof(buf);

	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(o, buf + i, sizeof(buf) - i);
}

static void put_intervals(struct gout *o, const struct gtid_sid *d)
{
	for (unsigned k = 0; k < d->n; k++) {
		put(o, ":", 1);
		put_u64(o, d->iv[k].first);
		if (d->iv[k].last != d->iv[k].first) {
			put(o, "-", 1);
			put_u64(o, d->iv[k].last);
		}
	}
}

size_t gtid_set_format(const struct gtid_set *s, char *out, size_t cap)
{
	struct gout o = { out, cap, 0 };
	char u[37];

	for (unsigned i = 0; i < s->n; i++) {
		const struct gtid_sid *d = &s->sid[i];

		/* A uuid's sids are together (sorted), untagged first: MySQL
		 * writes the uuid once, then each tag before its intervals. */
		if (i == 0 || memcmp(d->uuid, s->sid[i - 1].uuid, GTID_UUID_LEN) != 0) {
			if (i > 0)
				put(&o, ",", 1);
			gtid_uuid_format(d->uuid, u);
			put(&o, u, 36);
		}
		if (d->tag[0]) {
			put(&o, ":", 1);
			put(&o, d->tag, strlen(d->tag));
		}
		put_intervals(&o, d);
	}
	if (cap > 0)
		out[o.len < cap ? o.len : cap - 1] = '\0';
	return o.len;
}

/* ---- binary ---- */

#define GTID_FORMAT_TAGGED 1   /* MySQL's Gtid_format::tagged */

static uint8_t *le64(uint8_t *p, uint64_t v)
{
	for (unsigned i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return p + 8;
}

/* The bytes one sid takes in the binary form (see gtid_set.h). */
static size_t sid_encoded_len(const struct gtid_sid *d, bool tagged)
{
	size_t n = GTID_UUID_LEN + 8 + (size_t)d->n * 16;

	return tagged ? n + 1 + strlen(d->tag) : n;
}

/* The first 8 bytes: the number of sids, and in the tagged format the
 * format's number around it (gtid_set.h). */
static uint8_t *put_n_sids(uint8_t *p, unsigned n, bool tagged)
{
	if (!tagged)
		return le64(p, n);   /* the top byte 0 is the untagged format */
	return le64(p, (uint64_t)GTID_FORMAT_TAGGED << 56 | (uint64_t)n << 8 | GTID_FORMAT_TAGGED);
}

/* A tag's length as MySQL's variable-length integer: one byte holds a
 * value under 128, shifted left by one (the 0 at the bottom says "one
 * byte"); a tag's 32 characters at most always fit. Then its characters. */
static uint8_t *put_tag(uint8_t *p, const char *tag)
{
	size_t len = strlen(tag);

	*p++ = (uint8_t)(len << 1);
	memcpy(p, tag, len);
	return p + len;
}

size_t gtid_set_encode(const struct gtid_set *s, uint8_t *out, size_t cap)
{
	bool tagged = gtid_set_has_tags(s);
	size_t need = 8;
	uint8_t *p = out;

	for (unsigned i = 0; i < s->n; i++)
		need += sid_encoded_len(&s->sid[i], tagged);
	if (need > cap)
		return need;   /* too small: nothing written */
	p = put_n_sids(p, s->n, tagged);
	for (unsigned i = 0; i < s->n; i++) {
		const struct gtid_sid *d = &s->sid[i];

		memcpy(p, d->uuid, GTID_UUID_LEN);
		p += GTID_UUID_LEN;
		if (tagged)
			p = put_tag(p, d->tag);
		p = le64(p, d->n);
		for (unsigned k = 0; k < d->n; k++) {
			p = le64(p, d->iv[k].first);
			p = le64(p, d->iv[k].last + 1);   /* exclusive end */
		}
	}
	return need;
}
