/*
 * duration.h: reading durations written with a unit ("500ms", "30s", "5m",
 * "2h", "1d") for the settings kept in milliseconds (the *_ms settings and
 * their unsuffixed aliases, docs/configuration.md).
 */
#ifndef SHOAL_DURATION_H
#define SHOAL_DURATION_H

#include <stdbool.h>

/* Parse v as digits followed by an optional unit (ms, s, m, h, d; no space,
 * case-insensitive). A bare number is milliseconds when unit_required is
 * false, an error otherwise. On success stores milliseconds (saturated at
 * 2^62) in *ms and returns 0; -1 on bad syntax. */
int duration_parse_ms(const char *v, bool unit_required, long long *ms);

/* Does v end in one of the units above (after at least one digit)? */
bool duration_has_unit(const char *v);

#endif
