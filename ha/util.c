/*
 * util.c: the agent's log lines, string buffer, SQL quoting, clock and
 * number/digest parsing (see util.h).
 */
#include "ha/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void ha_log(const char *level, const char *fmt, ...)
{
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;
	va_list ap;

	if (!gmtime_r(&t, &tm) || !strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm))
		strcpy(ts, "-");
	fprintf(stderr, "%s shoal-ha: %s: ", ts, level);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

static bool sb_grow(struct sbuf_s *b, size_t need)
{
	size_t cap;
	char *p;

	if (b->oom)
		return false;
	if (b->len + need + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + need + 1)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void sb_printf(struct sbuf_s *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !sb_grow(b, (size_t)n)) {
		b->oom = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void sb_quote(struct sbuf_s *b, const char *s)
{
	sb_printf(b, "'");
	for (; *s; s++)
		sb_printf(b, *s == '\'' ? "''" : "%c", *s);
	sb_printf(b, "'");
}

void sb_free(struct sbuf_s *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->oom = false;
}

int ha_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int64_t ha_now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool ha_parse_int(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool ha_parse_digest(const char *s, char out[19])
{
	unsigned long long v = 0;
	size_t n = 0;

	if ((s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))
		s += 2;
	else if (s[0] == 'q' && s[1] == '_' && strlen(s) == 18)
		s += 2;
	else
		return false;
	for (; *s; s++, n++) {
		int c = tolower((unsigned char)*s);

		if (n >= 16 || !isxdigit(c))
			return false;
		v = v * 16 + (unsigned)(isdigit(c) ? c - '0' : c - 'a' + 10);
	}
	if (n == 0)
		return false;
	snprintf(out, 19, "0x%016llX", v);
	return true;
}
