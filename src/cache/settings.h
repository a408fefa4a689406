/*
 * settings.h: interned session settings. Each distinct list of the setting
 * values that cache keys depend on (see cache/session.c) gets a small id,
 * assigned once and kept until the node stops, so a key carries 4 bytes
 * instead of the whole list. Two lists get the same id only if they are
 * byte-for-byte equal. Thread-safe (a mutex, taken only when a session
 * reads its settings, never on a cache hit).
 */
#ifndef SHOAL_CACHE_SETTINGS_H
#define SHOAL_CACHE_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

/* The id of this list (>= 1), or 0 when out of memory or over the limit. */
uint32_t settings_intern(const void *s, size_t n);
void settings_free_all(void);

/* Field idx (0-based, in the order of the settings query) of list id,
 * copied NUL-terminated into out. Returns its length; 0 for NULL, an empty
 * value, an unknown id or a value that does not fit. */
size_t settings_field(uint32_t id, unsigned idx, char *out, size_t cap);
/* The whole list of id, as interned, copied into out. Returns its length;
 * 0 for an unknown id, or when it does not fit in cap. */
size_t settings_get(uint32_t id, uint8_t *out, size_t cap);

#endif
