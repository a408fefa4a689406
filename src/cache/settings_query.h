/*
 * settings_query.h: the session settings a cache key depends on, read from
 * the upstream (settings_query.c): the query the core sends for
 * CSTEP_SETTINGS and its one-row answer, interned (settings.h) as the
 * session's settings id. The isolation level comes last, not part of the
 * key: a READ UNCOMMITTED session is neither served nor stores.
 */
#ifndef SHOAL_CACHE_SETTINGS_QUERY_H
#define SHOAL_CACHE_SETTINGS_QUERY_H

#include <stdbool.h>
#include <stddef.h>

#include "cache/session_types.h"

/* The field of the settings that is the schema (DATABASE()). */
#define SETTINGS_SCHEMA_FIELD 13

/* CSTEP_SETTINGS: the query to send (COM_QUERY text), for a MariaDB or a
 * MySQL upstream. */
const char *cache_settings_sql(struct cache_session *cs, bool mariadb, size_t *len);
/* Its answer (the relay's view r, the bytes in answer). */
void cache_settings_done(struct cache_session *cs, const struct relay *r, const struct pbuf *answer);


#endif
