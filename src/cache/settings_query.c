/*
 * settings_query.c: owns the session settings a cache key depends on (see
 * settings_query.h): the query that reads them, for a MariaDB or a MySQL
 * upstream, and its answer parsed into the session's settings.
 */
#include "cache/settings_query.h"

#include <string.h>

#include "base/log.h"
#include "cache/consist.h"
#include "cache/settings.h"

/* What, besides the query, decides the bytes of a SELECT's answer. */
#define SETTINGS_SQL "SELECT @@character_set_client,@@character_set_connection," \
	"@@character_set_results,@@collation_connection,@@time_zone,@@sql_mode," \
	"@@lc_time_names,@@div_precision_increment,@@sql_select_limit," \
	"@@group_concat_max_len,@@max_sort_length,@@default_week_format," \
	"@@sql_auto_is_null,DATABASE()," SETTINGS_JOIN_LIMIT
#define SETTINGS_COLUMNS 15
/* Limits that make the server refuse a query (an error where the cache
 * would answer): max_join_size while sql_big_selects is off
 * (ER_TOO_BIG_SELECT), and MariaDB's tmp_disk_table_size with the sizes that
 * decide when a temporary table goes to disk (ER_RECORD_FILE_FULL;
 * conformance: sys_vars.max_join_size_func, tmp_disk_table_size_func).
 * Each is an empty string while it is off, so keys stay as they were. */
#define SETTINGS_JOIN_LIMIT "IF(@@sql_big_selects,'',@@max_join_size)"
#define SETTINGS_DISK_LIMIT "IF(@@tmp_disk_table_size=18446744073709551615,''," \
	"CONCAT_WS('/',@@tmp_disk_table_size,@@tmp_memory_table_size,@@max_heap_table_size))"
/* MariaDB has more that change results: appended when the upstream is one. */
#define SETTINGS_SQL_MARIADB_KEY SETTINGS_SQL ",@@default_regex_flags,@@system_versioning_asof,@@old_mode," \
	"@@max_recursive_iterations," SETTINGS_DISK_LIMIT
#define SETTINGS_COLUMNS_MARIADB 20
/* Last, and not part of the key: the isolation level. A READ UNCOMMITTED
 * session reads rows other transactions have not committed (and may roll
 * back): it is neither served from the cache nor stores in it. */
/* MySQL's own (8.0 and later): the recursion and regular expression limits
 * (errors 3636, 3699, 3698 where a cached answer would be given), the
 * window functions' precision, which changes their results, and the
 * optimizer's switches, by their digest: on MySQL they decide whether a
 * statement runs at all (the hypergraph optimizer refuses some subquery
 * transforms, error 3973; conformance, main.subquery_allany_hypergraph). */
#define SETTINGS_SQL_MYSQL_KEY SETTINGS_SQL ",@@cte_max_recursion_depth,@@regexp_time_limit," \
	"@@regexp_stack_limit,@@windowing_use_high_precision,SHA2(@@optimizer_switch,256)"
#define SETTINGS_COLUMNS_MYSQL (SETTINGS_COLUMNS + 5)
#define SETTINGS_SQL_MARIADB SETTINGS_SQL_MARIADB_KEY ",@@tx_isolation"
#define SETTINGS_SQL_MYSQL SETTINGS_SQL_MYSQL_KEY ",@@transaction_isolation"
#define ISOLATION_RU "READ-UNCOMMITTED"

const char *cache_settings_sql(struct cache_session *cs, bool mariadb, size_t *len)
{
	if (mariadb) {
		cs->settings_cols = SETTINGS_COLUMNS_MARIADB + 1;
		*len = sizeof(SETTINGS_SQL_MARIADB) - 1;
		return SETTINGS_SQL_MARIADB;
	}
	cs->settings_cols = SETTINGS_COLUMNS_MYSQL + 1;
	*len = sizeof(SETTINGS_SQL_MYSQL) - 1;
	return SETTINGS_SQL_MYSQL;
}

/* Parse the one-row answer to SETTINGS_SQL into cs->settings. */
static bool parse_settings(struct cache_session *cs, const struct pbuf *b)
{
	size_t pos = 0, idx = 0, out = 0;

	while (pos + PKT_HEADER_LEN <= b->len) {
		uint32_t len = rd_u24(b->data + pos);
		struct pcur cur;

		if (pos + PKT_HEADER_LEN + len > b->len)
			return false;
		/* the column count, one definition per column, an EOF, then the row */
		if (idx++ == (size_t)cs->settings_cols + 2) {
			pcur_init(&cur, b->data + pos + PKT_HEADER_LEN, len);
			for (int i = 0; i < cs->settings_cols; i++) {
				bool null;
				size_t n = 0;
				const uint8_t *v;

				if (cur.p < cur.end && *cur.p == 0xfb) {
					pcur_u8(&cur);
					null = true;
					v = (const uint8_t *)"\x01";
					n = 1;
				} else {
					null = false;
					v = pcur_lenenc_str(&cur, &n);
				}
				if (cur.err)
					return false;
				if (i == cs->settings_cols - 1) {   /* the isolation level */
					cs->read_uncommitted = !null && n == sizeof(ISOLATION_RU) - 1 &&
							       memcmp(v, ISOLATION_RU, n) == 0;
					break;
				}
				if (out + n + 1 > sizeof(cs->settings))
					return false;
				memcpy(cs->settings + out, v, n);
				out += n;
				cs->settings[out++] = null ? 0x02 : 0x1f;
			}
			cs->settings_len = (uint16_t)out;
			cs->settings_id = settings_intern(cs->settings, out);
			if (cs->settings_id) {
				char schema[CONSIST_SCHEMA_MAX];

				settings_field(cs->settings_id, SETTINGS_SCHEMA_FIELD, schema, sizeof(schema));
				consist_set_schema(&cs->cons, schema);
			}
			return cs->settings_id != 0;
		}
		pos += PKT_HEADER_LEN + len;
	}
	return false;
}

void cache_settings_done(struct cache_session *cs, const struct relay *r, const struct pbuf *answer)
{
	if (r->saw_err || !parse_settings(cs, answer)) {
		log_warn("client %u: cannot read session settings; caching off for this session", cs->id);
		cs->settings_broken = true;
	}
	cs->settings_dirty = false;
}
