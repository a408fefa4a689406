/*
 * fuzz_util.h: helpers shared by the libFuzzer targets in tests/fuzz/.
 *
 * FUZZ_CHECK(cond, ...) states a documented property of the code under test
 * (a bound, a terminator, a return value range). A violation prints the
 * message and aborts, so libFuzzer keeps the input as a crash like any
 * sanitizer report.
 */
#ifndef SHOAL_FUZZ_UTIL_H
#define SHOAL_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond, ...)                                                   \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s: ",     \
				__FILE__, __LINE__, #cond);                     \
			fprintf(stderr, __VA_ARGS__);                           \
			fputc('\n', stderr);                                    \
			abort();                                                \
		}                                                               \
	} while (0)

/* A heap copy of data[0..n) with exactly n bytes (no terminator), so that
 * AddressSanitizer sees any read past the end. Never NULL for n == 0. */
static inline char *fuzz_dup_exact(const uint8_t *data, size_t n)
{
	char *p = malloc(n ? n : 1);

	if (!p)
		abort();
	if (n)
		memcpy(p, data, n);
	return p;
}

/* A heap copy with a NUL after n bytes (n + 1 bytes in all). */
static inline char *fuzz_dup_cstr(const uint8_t *data, size_t n)
{
	char *p = malloc(n + 1);

	if (!p)
		abort();
	if (n)
		memcpy(p, data, n);
	p[n] = '\0';
	return p;
}

/* Is s a NUL-terminated string within cap bytes? */
static inline int fuzz_terminated(const char *s, size_t cap)
{
	return memchr(s, 0, cap) != NULL;
}

/* Read every byte of p[0..n): makes ASan check the whole range. */
static inline unsigned fuzz_touch(const void *p, size_t n)
{
	const volatile uint8_t *b = p;
	unsigned sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += b[i];
	return sum;
}

#endif
