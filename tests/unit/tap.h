/*
 * tap.h: a minimal TAP producer for the unit tests (automake's tap-driver).
 * ok(cond, fmt, ...) prints "ok N - ..." or "not ok N - ..."; done_testing()
 * prints the plan and returns the exit status.
 */
#ifndef SHOAL_TAP_H
#define SHOAL_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;
	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%s %d - ", cond ? "ok" : "not ok", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __VA_ARGS__)
#define is_int(got, want, name) do { long long g_ = (long long)(got), w_ = (long long)(want); \
	if (!ok(g_ == w_, "%s", name)) printf("#   got %lld, want %lld\n", g_, w_); } while (0)
#define is_str(got, want, name) do { const char *g_ = (got), *w_ = (want); \
	if (!ok(g_ && w_ && strcmp(g_, w_) == 0, "%s", name)) \
		printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); } while (0)
#define is_mem(got, want, len, name) ok(memcmp((got), (want), (len)) == 0, "%s", name)

static inline int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
