/*
 * old/monitor.c: the monitor texts' matcher before issue 39, copied from git at 5a9fd58 for the
 * differential (tests/differential/differential.c); only that test builds
 * it. Each piece names the file and line it comes from and is as it was
 * there, but for those marked "adapted" (effects or catalog lookups
 * recorded instead of made, through the same loop).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "readers.h"
#include "sql/functions.h"
#include "sql/lexer.h"
#include "sql/tables.h"

/* ==== src/core/monitor.c, from line 19 at 5a9fd58 ==== */

#define NORM_MAX 80 /* longer than the longest known text */

static const struct {
	const char *text;
	enum monitor_query kind;
} known[] = {
	{ "select @@global.read_only read_only", MQ_READ_ONLY },
	{ "select @@global.innodb_read_only read_only", MQ_READ_ONLY },
	{ "select @@global.super_read_only read_only", MQ_READ_ONLY },
	{ "select @@global.read_only&@@global.innodb_read_only read_only", MQ_READ_ONLY },
	{ "select @@global.read_only|@@global.innodb_read_only read_only", MQ_READ_ONLY },
	{ "show slave status", MQ_SLAVE_STATUS },
	{ "show replica status", MQ_REPLICA_STATUS },
	{ "show readyset status", MQ_READYSET_STATUS },
	{ "show shoal status", MQ_SHOAL_STATUS },
};

/* Cheap first look: "show ..." or "select" + spaces + "@@". */
static bool might_be_monitor(const char *q, size_t n)
{
	size_t i = 6;

	if (n >= 4 && strncasecmp(q, "show", 4) == 0)
		return true;
	if (n < 8 || strncasecmp(q, "select", 6) != 0)
		return false;
	while (i < n && isspace((unsigned char)q[i]))
		i++;
	return i > 6 && i + 1 < n && q[i] == '@' && q[i + 1] == '@';
}

/* Normalise q into out[NORM_MAX]; its length, or -1 if too long. */
static int normalise(const char *q, size_t n, char *out)
{
	const char *end = q + n;
	int len = 0;

	while (q < end && isspace((unsigned char)*q))
		q++;
	while (end > q && (isspace((unsigned char)end[-1]) || end[-1] == ';'))
		end--;
	while (q < end) {
		if (isspace((unsigned char)*q)) {
			while (q < end && isspace((unsigned char)*q))
				q++;
			if (len >= NORM_MAX)
				return -1;
			out[len++] = ' ';
			continue;
		}
		if (len >= NORM_MAX)
			return -1;
		out[len++] = (char)tolower((unsigned char)*q++);
	}
	return len;
}

enum monitor_query monitor_match(const char *q, size_t n)
{
	char norm[NORM_MAX];
	size_t i = 0;
	int len;

	while (i < n && i < 8 && isspace((unsigned char)q[i]))
		i++;
	if (i >= n || (q[i] != 's' && q[i] != 'S') || n > 4 * NORM_MAX)
		return MQ_NONE;
	if (!might_be_monitor(q + i, n - i))
		return MQ_NONE; /* every other SELECT: no normalising on the hit path */
	len = normalise(q, n, norm);
	if (len < 0)
		return MQ_NONE;
	for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
		if (strlen(known[k].text) == (size_t)len && memcmp(known[k].text, norm, (size_t)len) == 0)
			return known[k].kind;
	return MQ_NONE;
}
