/*
 * settings.c: the intern table for session settings lists. See settings.h.
 */
#include "cache/settings.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sql/spooky.h"

#define SETTINGS_MAX_IDS 65536

struct interned {
	uint64_t hash;
	size_t len;
	uint8_t *bytes;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct interned *items;   /* index id - 1 */
static size_t n_items, cap_items;
static uint32_t *slots;          /* open addressing: 0 empty, else id */
static size_t n_slots;

static int grow_slots(void)
{
	size_t n = n_slots ? n_slots * 2 : 256;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -1;
	for (size_t i = 0; i < n_items; i++) {
		size_t j = items[i].hash & (n - 1);

		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)(i + 1);
	}
	free(slots);
	slots = s;
	n_slots = n;
	return 0;
}

static uint32_t add(const void *s, size_t n, uint64_t h)
{
	struct interned *it;
	size_t j;

	if (n_items >= SETTINGS_MAX_IDS || ((n_items + 1) * 2 > n_slots && grow_slots() < 0))
		return 0;
	if (n_items == cap_items) {
		size_t cap = cap_items ? cap_items * 2 : 64;
		struct interned *p = realloc(items, cap * sizeof(*p));

		if (!p)
			return 0;
		items = p;
		cap_items = cap;
	}
	it = &items[n_items];
	it->bytes = malloc(n ? n : 1);
	if (!it->bytes)
		return 0;
	memcpy(it->bytes, s, n);
	it->len = n;
	it->hash = h;
	n_items++;
	j = h & (n_slots - 1);
	while (slots[j])
		j = (j + 1) & (n_slots - 1);
	slots[j] = (uint32_t)n_items;
	return (uint32_t)n_items;
}

uint32_t settings_intern(const void *s, size_t n)
{
	uint64_t h = spooky_hash64(s, n, 7);
	uint32_t id = 0;

	pthread_mutex_lock(&lock);
	for (size_t j = n_slots ? h & (n_slots - 1) : 0; n_slots && slots[j]; j = (j + 1) & (n_slots - 1)) {
		struct interned *it = &items[slots[j] - 1];

		if (it->hash == h && it->len == n && memcmp(it->bytes, s, n) == 0) {
			id = slots[j];
			break;
		}
	}
	if (!id)
		id = add(s, n, h);
	pthread_mutex_unlock(&lock);
	return id;
}

void settings_free_all(void)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n_items; i++)
		free(items[i].bytes);
	free(items);
	free(slots);
	items = NULL;
	slots = NULL;
	n_items = cap_items = n_slots = 0;
	pthread_mutex_unlock(&lock);
}

size_t settings_field(uint32_t id, unsigned idx, char *out, size_t cap)
{
	size_t n = 0;

	if (cap)
		out[0] = 0;
	pthread_mutex_lock(&lock);
	if (id >= 1 && id <= n_items && cap) {
		const struct interned *it = &items[id - 1];
		size_t start = 0, field = 0;

		for (size_t i = 0; i < it->len; i++) {
			if (it->bytes[i] != 0x1f && it->bytes[i] != 0x02)
				continue;
			if (field++ == idx && it->bytes[i] == 0x1f && i - start < cap) {
				n = i - start;
				memcpy(out, it->bytes + start, n);
				out[n] = 0;
			}
			start = i + 1;
		}
	}
	pthread_mutex_unlock(&lock);
	return n;
}

size_t settings_get(uint32_t id, uint8_t *out, size_t cap)
{
	size_t n = 0;

	pthread_mutex_lock(&lock);
	if (id >= 1 && id <= n_items && items[id - 1].len <= cap) {
		n = items[id - 1].len;
		memcpy(out, items[id - 1].bytes, n);
	}
	pthread_mutex_unlock(&lock);
	return n;
}
