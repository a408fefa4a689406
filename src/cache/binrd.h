/*
 * binrd.h: a bounded reader over the bytes of one binlog event, for the
 * table-map and row-image decoders (tablemap.c, rowimage.c).
 *
 * Every read checks the bytes left first. A read past the end reads
 * nothing, returns 0 (or NULL) and makes the reader "bad" for good, so a
 * decoder may read a whole structure and check once at its end; nothing
 * is ever read outside [p, end).
 */
#ifndef SHOAL_CACHE_BINRD_H
#define SHOAL_CACHE_BINRD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct binrd {
	const uint8_t *p, *end;
	bool bad;
};

static inline void binrd_init(struct binrd *r, const uint8_t *p, size_t len)
{
	r->p = p;
	r->end = p + len;
	r->bad = false;
}

static inline size_t binrd_left(const struct binrd *r)
{
	return r->bad ? 0 : (size_t)(r->end - r->p);
}

/* n bytes, or NULL (and bad) when fewer are left. */
static inline const uint8_t *binrd_take(struct binrd *r, size_t n)
{
	const uint8_t *at = r->p;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;   /* a read past the end: nothing more is read */
		return NULL;
	}
	r->p += n;
	return at;
}

/* Little-endian and big-endian unsigned integers of n bytes (n <= 8). */
static inline uint64_t binrd_le_at(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = n; i > 0; i--)
		v = v << 8 | p[i - 1];
	return v;
}

static inline uint64_t binrd_be_at(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static inline uint64_t binrd_le(struct binrd *r, unsigned n)
{
	const uint8_t *p = binrd_take(r, n);

	return p ? binrd_le_at(p, n) : 0;
}

/* A packed integer (the protocol's length-encoded integer): < 251 in one
 * byte, 252 + 2 bytes, 253 + 3 bytes, 254 + 8 bytes. 251 (NULL) and 255
 * are no length here: the reader turns bad. */
static inline uint64_t binrd_packed(struct binrd *r)
{
	const uint8_t *p = binrd_take(r, 1);

	if (!p)
		return 0;   /* past the end: already bad */
	switch (*p) {
	case 252: return binrd_le(r, 2);
	case 253: return binrd_le(r, 3);
	case 254: return binrd_le(r, 8);
	case 251: case 255:
		r->bad = true;   /* no length has this form */
		return 0;
	default: return *p;
	}
}

/* Bit i of a bitmap (bit 0 is the lowest of byte 0). */
static inline bool binrd_bit(const uint8_t *map, unsigned i)
{
	return (map[i / 8] >> (i % 8)) & 1;
}

static inline unsigned binrd_bits_set(const uint8_t *map, unsigned nbits)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nbits; i++)
		n += binrd_bit(map, i);
	return n;
}

#endif
