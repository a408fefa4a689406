/*
 * spooky.c: SpookyHash V2 for Shoal's query digests (see spooky.h).
 *
 * Written for Shoal from the published description of the algorithm
 * (12 x 64-bit state, 96-byte blocks, separate short path under 192 bytes).
 * Input words are read as little-endian so results match the reference
 * implementation on x86 whatever the host byte order.  No allocation, no
 * global mutable state.
 */
#include "sql/spooky.h"

#include <string.h>

#define SP_VARS 12                  /* 64-bit words of long-path state */
#define SP_BLOCK (SP_VARS * 8)      /* bytes consumed per long-path round */
#define SP_CONST 0xdeadbeefdeadbeefULL

static inline uint64_t rotl(uint64_t x, unsigned k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t le64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/* ---- short path: four words of state ---------------------------------- */

/* One mixing round over the 4-word state; step i rotates word (i+2)%4. */
static void short_mix(uint64_t h[4])
{
	static const unsigned char rot[12] = {
		50, 52, 30, 41, 54, 48, 38, 37, 62, 34, 5, 36
	};
	for (unsigned i = 0; i < 12; i++) {
		unsigned a = i & 3, c = (i + 2) & 3, d = (i + 3) & 3;

		h[c] = rotl(h[c], rot[i]);
		h[c] += h[d];
		h[a] ^= h[c];
	}
}

/* Final avalanche of the 4-word state. */
static void short_end(uint64_t h[4])
{
	static const unsigned char rot[11] = {
		15, 52, 26, 51, 28, 9, 47, 54, 32, 25, 63
	};
	for (unsigned i = 0; i < 11; i++) {
		unsigned c = (i + 2) & 3, d = (i + 3) & 3;

		h[d] ^= h[c];
		h[c] = rotl(h[c], rot[i]);
		h[d] += h[c];
	}
}

/* Adds the last 0..15 bytes into words 2 and 3 (little-endian lanes). */
static void short_tail(uint64_t h[4], const unsigned char *p, size_t rem)
{
	if (rem == 0) {
		h[2] += SP_CONST;
		h[3] += SP_CONST;
		return;
	}
	if (rem >= 8) {
		h[2] += le64(p);
		for (size_t i = 8; i < rem; i++)
			h[3] += (uint64_t)p[i] << (8 * (i - 8));
		return;
	}
	for (size_t i = 0; i < rem; i++)
		h[2] += (uint64_t)p[i] << (8 * i);
}

static void hash_short(const unsigned char *p, size_t len,
		       uint64_t *h1, uint64_t *h2)
{
	uint64_t h[4] = { *h1, *h2, SP_CONST, SP_CONST };
	size_t rem = len % 32;

	if (len > 15) {
		const unsigned char *end = p + (len / 32) * 32;

		for (; p < end; p += 32) {
			h[2] += le64(p);
			h[3] += le64(p + 8);
			short_mix(h);
			h[0] += le64(p + 16);
			h[1] += le64(p + 24);
		}
		if (rem >= 16) {
			h[2] += le64(p);
			h[3] += le64(p + 8);
			short_mix(h);
			p += 16;
			rem -= 16;
		}
	}
	h[3] += (uint64_t)len << 56;
	short_tail(h, p, rem);
	short_end(h);
	*h1 = h[0];
	*h2 = h[1];
}

/* ---- long path: twelve words of state --------------------------------- */

/* Absorbs one 96-byte block; step i updates word i and its neighbours. */
static void block_mix(uint64_t s[SP_VARS], const unsigned char *blk)
{
	static const unsigned char rot[SP_VARS] = {
		11, 32, 43, 31, 17, 28, 39, 57, 55, 54, 22, 46
	};
	for (unsigned i = 0; i < SP_VARS; i++) {
		unsigned prev = (i + 11) % SP_VARS;

		s[i] += le64(blk + 8 * i);
		s[(i + 2) % SP_VARS] ^= s[(i + 10) % SP_VARS];
		s[prev] ^= s[i];
		s[i] = rotl(s[i], rot[i]);
		s[prev] += s[(i + 1) % SP_VARS];
	}
}

/* One partial finalisation round; run three times by block_end(). */
static void block_end_round(uint64_t s[SP_VARS])
{
	static const unsigned char rot[SP_VARS] = {
		44, 15, 34, 21, 38, 33, 10, 13, 38, 53, 42, 54
	};
	for (unsigned i = 0; i < SP_VARS; i++) {
		unsigned prev = (i + 11) % SP_VARS, next = (i + 1) % SP_VARS;

		s[prev] += s[next];
		s[(i + 2) % SP_VARS] ^= s[prev];
		s[next] = rotl(s[next], rot[i]);
	}
}

static void hash_long(const unsigned char *p, size_t len,
		      uint64_t *h1, uint64_t *h2)
{
	uint64_t s[SP_VARS];
	unsigned char last[SP_BLOCK];
	size_t whole = len / SP_BLOCK, rem = len % SP_BLOCK;

	for (unsigned i = 0; i < SP_VARS; i += 3) {
		s[i] = *h1;
		s[i + 1] = *h2;
		s[i + 2] = SP_CONST;
	}
	for (size_t b = 0; b < whole; b++)
		block_mix(s, p + b * SP_BLOCK);

	/* The partial block is zero padded and its last byte holds its size. */
	memset(last, 0, sizeof(last));
	memcpy(last, p + whole * SP_BLOCK, rem);
	last[SP_BLOCK - 1] = (unsigned char)rem;
	for (unsigned i = 0; i < SP_VARS; i++)
		s[i] += le64(last + 8 * i);
	for (int r = 0; r < 3; r++)
		block_end_round(s);
	*h1 = s[0];
	*h2 = s[1];
}

void spooky_hash128(const void *data, size_t len, uint64_t *h1, uint64_t *h2)
{
	const unsigned char *p = data;

	if (len < SPOOKY_SHORT_LIMIT)
		hash_short(p, len, h1, h2);
	else
		hash_long(p, len, h1, h2);
}

uint64_t spooky_hash64(const void *data, size_t len, uint64_t seed)
{
	uint64_t h1 = seed, h2 = seed;

	spooky_hash128(data, len, &h1, &h2);
	return h1;
}
