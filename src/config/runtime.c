/*
 * runtime.c: the one list of settings that change without a restart, and
 * how each is applied. See runtime.h.
 */
#include "config/runtime.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

enum rt_kind { RT_INT, RT_U32, RT_BOOL, RT_STR, RT_LOG };

struct rt_field {
	const char *key;
	size_t off;
	size_t size;
	enum rt_kind kind;
};

#define RT(k, field, kind) { k, offsetof(struct shoal_config, field), \
	sizeof(((struct shoal_config *)0)->field), kind }

/* docs/admin.md and docs/operations.md list these. */
static const struct rt_field fields[] = {
	RT("log_level", log_level, RT_LOG),
	RT("cache_ttl_ms", cache_ttl_ms, RT_INT),
	RT("cache_refresh_ms", cache_refresh_ms, RT_INT),
	RT("cache_coalesce_ms", cache_coalesce_ms, RT_INT),
	RT("cache_warnings", cache_warnings, RT_BOOL),
	RT("cache_empty", cache_empty, RT_BOOL),
	RT("auto_cache", auto_cache, RT_BOOL),
	RT("read_your_writes_ms", read_your_writes_ms, RT_INT),
	RT("binlog_max_lag_ms", binlog_max_lag_ms, RT_INT),
	RT("binlog_settle_ms", binlog_settle_ms, RT_INT),
	RT("cache_scope", cache_scope, RT_INT),
	RT("grant_check_ms", grant_check_ms, RT_INT),
	RT("grant_check_binlog_ms", grant_check_binlog_ms, RT_INT),
	RT("prepare_answer_ms", prepare_answer_ms, RT_INT),
	RT("max_client_connections", max_client_connections, RT_INT),
	RT("metrics_max_queries", metrics_max_queries, RT_INT),
	RT("upstream_connect_timeout_ms", upstream_connect_timeout_ms, RT_INT),
	RT("handshake_timeout_ms", handshake_timeout_ms, RT_INT),
	RT("upstream_wait_timeout_ms", upstream_wait_timeout_ms, RT_INT),
	RT("upstream_max_idle_ms", upstream_max_idle_ms, RT_INT),
	RT("drain_timeout_ms", drain_timeout_ms, RT_INT),
	RT("drain_handoff_ms", drain_handoff_ms, RT_INT),
	RT("drain_quiet_ms", drain_quiet_ms, RT_INT),
	RT("max_allowed_packet", max_allowed_packet, RT_U32),
	RT("cache_max_entry_size", cache_max_entry_size, RT_U32),
	RT("admin_user", admin_user.name, RT_STR),
	RT("admin_password", admin_user.password, RT_STR),
};

static const struct rt_field *find(const char *key)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strcmp(fields[i].key, key) == 0)
			return &fields[i];
	return NULL;
}

bool runtime_setting(const char *key)
{
	return find(key) != NULL;
}

bool runtime_apply(const char *key, const struct shoal_config *src)
{
	const struct rt_field *f = find(key);
	const char *s;
	char *d;

	if (!f)
		return false;
	s = (const char *)src + f->off;
	d = (char *)&g_config + f->off;
	switch (f->kind) {
	case RT_INT:
	case RT_LOG:
		__atomic_store_n((int *)(void *)d, *(const int *)(const void *)s, __ATOMIC_RELAXED);
		if (f->kind == RT_LOG)
			log_set_level(src->log_level);
		break;
	case RT_U32:
		__atomic_store_n((uint32_t *)(void *)d, *(const uint32_t *)(const void *)s, __ATOMIC_RELAXED);
		break;
	case RT_BOOL:
		__atomic_store_n((bool *)(void *)d, *(const bool *)(const void *)s, __ATOMIC_RELAXED);
		break;
	case RT_STR:
		memcpy(d, s, f->size);
		break;
	}
	return true;
}
