/*
 * spooky.h: SpookyHash V2 (Bob Jenkins' public-domain 128-bit hash),
 * written from the published algorithm for Shoal.  Owns the hash used for
 * query digests: ProxySQL computes its digest as the first 64-bit half of
 * Hash128(digest_text, len, seed, seed) on a little-endian machine, and
 * spooky_hash64() reproduces that value on any byte order.
 */
#ifndef SHOAL_SQL_SPOOKY_H
#define SHOAL_SQL_SPOOKY_H

#include <stddef.h>
#include <stdint.h>

/* Messages shorter than this take the "short" path; longer ones the block path. */
#define SPOOKY_SHORT_LIMIT 192

/* 128-bit hash: *h1 and *h2 carry the two seeds in and the two halves out. */
void spooky_hash128(const void *data, size_t len, uint64_t *h1, uint64_t *h2);

/* First half of spooky_hash128() with both seeds set to `seed`. */
uint64_t spooky_hash64(const void *data, size_t len, uint64_t seed);

#endif
