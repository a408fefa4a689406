/*
 * duration.c: owns the syntax of durations with units ("30s", "500ms") used
 * by the millisecond settings; see duration.h.
 */
#include "base/duration.h"

#include <ctype.h>
#include <stddef.h>
#include <strings.h>

#define DURATION_CAP (1LL << 62)

struct unit {
	const char *name;
	long long ms;
};

static const struct unit units[] = {
	{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { "d", 86400000 },
};

/* The unit named by text u: its factor in ms; -1 for no unit (""), 0 if
 * unknown. */
static long long unit_ms(const char *u)
{
	if (!*u)
		return -1;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strcasecmp(u, units[i].name) == 0)
			return units[i].ms;
	return 0;
}

int duration_parse_ms(const char *v, bool unit_required, long long *ms)
{
	long long n = 0, f;
	const char *p = v;

	if (!v || !isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) /* saturates at DURATION_CAP */
		n = n > (DURATION_CAP - 9) / 10 ? DURATION_CAP : n * 10 + (*p - '0');
	f = unit_ms(p);
	if (f == 0 || (f < 0 && unit_required))
		return -1;
	if (f < 0)
		f = 1;
	*ms = n >= DURATION_CAP / f ? DURATION_CAP : n * f;
	return 0;
}

bool duration_has_unit(const char *v)
{
	const char *p = v;

	if (!v || !isdigit((unsigned char)*p))
		return false;
	while (isdigit((unsigned char)*p))
		p++;
	return unit_ms(p) > 0;
}
