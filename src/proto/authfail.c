/*
 * authfail.c: owns the table of failed client logins per address that
 * decides which failures are answered late (authfail.h). The table has a
 * fixed size: 16 shards chosen by a hash of the address, 256 entries each,
 * found by a linear scan under the shard's mutex (a failed login is rare
 * next to the work of checking it). Each entry counts the failures since
 * its window started; a failure after the window starts a new one.
 */
#include "proto/authfail.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "config/config.h"

#define AF_SHARDS 16
#define AF_SLOTS (AUTHFAIL_CAPACITY / AF_SHARDS)
#define AF_ADDR_MAX 48

struct af_entry {
	char addr[AF_ADDR_MAX];   /* "" when free */
	int64_t first_ms;         /* start of its window */
	uint32_t count;           /* failures in the window */
};

struct af_shard {
	pthread_mutex_t lock;
	int used;
	struct af_entry e[AF_SLOTS];
};

static struct af_shard shards[AF_SHARDS] = {
	[0 ... AF_SHARDS - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER },
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct af_shard *shard_of(const char *addr)
{
	uint32_t h = 2166136261u;   /* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)addr; *p; p++)
		h = (h ^ *p) * 16777619u;
	return &shards[h % AF_SHARDS];
}

static struct af_entry *find(struct af_shard *s, const char *addr)
{
	for (int i = 0; i < s->used; i++)
		if (strcmp(s->e[i].addr, addr) == 0)
			return &s->e[i];
	return NULL;
}

/* A slot for a new address: a free one, else the oldest window's. */
static struct af_entry *claim(struct af_shard *s, const char *addr)
{
	struct af_entry *e;

	if (s->used < AF_SLOTS) {
		e = &s->e[s->used++];
	} else {
		e = &s->e[0];
		for (int i = 1; i < AF_SLOTS; i++)
			if (s->e[i].first_ms < e->first_ms)
				e = &s->e[i];
	}
	snprintf(e->addr, sizeof e->addr, "%s", addr);
	e->count = 0;
	e->first_ms = 0;
	return e;
}

bool authfail_record(const char *addr)
{
	struct af_shard *s = shard_of(addr);
	int64_t t = now_ms();
	struct af_entry *e;
	bool delay;

	pthread_mutex_lock(&s->lock);
	e = find(s, addr);
	if (!e)
		e = claim(s, addr);
	if (e->count == 0 || t - e->first_ms > g_config.auth_failure_window_ms) {
		e->first_ms = t;
		e->count = 0;
	}
	if (e->count < UINT32_MAX)
		e->count++;
	delay = g_config.auth_failure_delay_ms > 0 &&
		e->count > (uint32_t)g_config.auth_failure_threshold;
	pthread_mutex_unlock(&s->lock);
	return delay;
}

void authfail_clear(const char *addr)
{
	struct af_shard *s = shard_of(addr);
	struct af_entry *e;

	pthread_mutex_lock(&s->lock);
	if (s->used > 0 && (e = find(s, addr)) != NULL) {
		*e = s->e[s->used - 1];
		s->used--;
	}
	pthread_mutex_unlock(&s->lock);
}
