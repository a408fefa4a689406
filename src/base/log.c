/*
 * log.c: formatting and writing log lines. The level is configuration,
 * set once at start.
 */
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static enum shoal_log_level log_level = LOG_LEVEL_INFO;

void log_set_level(enum shoal_log_level lvl)
{
	log_level = lvl;
}

void log_msg(enum shoal_log_level lvl, const char *fmt, ...)
{
	static const char *const names[] = { "ERROR", "WARN", "INFO", "DEBUG" };
	char line[2048];
	char ts[32];
	struct timespec now;
	struct tm tm;
	va_list ap;
	int n;

	if (lvl > log_level)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	n = snprintf(line, sizeof(line), "%s.%03ldZ %s ", ts, now.tv_nsec / 1000000, names[lvl]);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", line);
}
