/*
 * refresh.c: owns the stats_* tables' contents: before a statement that
 * names one runs, the table is emptied and filled again by its provider
 * (the *_reset variant asks the provider to zero its counters too). The
 * tables are schema.c's IN_STATS rows (admin_tables); the built-in
 * providers read g_stats (relaxed atomic loads, no locks):
 * stats_shoal_global and stats_shoal_connection_pool. Other parts of the
 * node register providers with admin_register_stats_provider().
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "config/config.h"
#include "cache/consistency.h"
#include "internal.h"
#include "base/log.h"
#include "base/stats.h"

#ifndef SHOAL_VERSION
#define SHOAL_VERSION "0.1.0"
#endif

/* What the built-in providers read besides g_stats, handed in by the
 * admin session that asks. */
struct refresh_facts {
	int admin_sessions;
};

typedef int (*builtin_fn)(sqlite3 *db, const char *table, const struct refresh_facts *f);

static int fill_global(sqlite3 *db, const char *table, const struct refresh_facts *f);
static int fill_pool(sqlite3 *db, const char *table, const struct refresh_facts *f);

/* The tables with a built-in fill (a registered provider replaces it). */
static const struct { const char *table; builtin_fn fill; } builtins[] = {
	{ "stats_shoal_global", fill_global },
	{ "stats_shoal_connection_pool", fill_pool },
};

/* Registered providers, by index in admin_tables. */
static admin_stats_fn providers[ADMIN_MAX_TABLES];

/* g_stats as rows of stats_shoal_global (ProxySQL's names where it has one). */
static const struct {
	const char *name;
	size_t off;
} counters[] = {
	{ "Client_Connections_connected", offsetof(struct shoal_stats, client_connections) },
	{ "Client_Connections_created", offsetof(struct shoal_stats, client_connections_created) },
	{ "Client_Connections_aborted", offsetof(struct shoal_stats, client_connections_aborted) },
	{ "Client_Connections_refused", offsetof(struct shoal_stats, client_connections_refused) },
	{ "Access_Denied_Wrong_Password", offsetof(struct shoal_stats, auth_failures) },
	{ "Access_Denied_Delayed", offsetof(struct shoal_stats, auth_failures_delayed) },
	{ "Access_Denied_Max_User_Connections", offsetof(struct shoal_stats, user_connections_refused) },
	{ "Client_Connections_revoked", offsetof(struct shoal_stats, user_sessions_revoked) },
	{ "Client_Connections_idle_timeout", offsetof(struct shoal_stats, client_idle_timeouts) },
	{ "Admin_Connections_refused", offsetof(struct shoal_stats, admin_connections_refused) },
	{ "Admin_Access_Denied", offsetof(struct shoal_stats, admin_auth_failures) },
	{ "Server_Connections_connected", offsetof(struct shoal_stats, upstream_connections) },
	{ "Server_Connect_Errors", offsetof(struct shoal_stats, upstream_connect_errors) },
	{ "Server_Connections_idle", offsetof(struct shoal_stats, upstream_idle) },
	{ "Server_Connections_peak", offsetof(struct shoal_stats, upstream_connections_peak) },
	{ "ConnPool_get_conn_success", offsetof(struct shoal_stats, upstream_borrows) },
	{ "ConnPool_get_conn_wait", offsetof(struct shoal_stats, upstream_waits) },
	{ "ConnPool_get_conn_timeout", offsetof(struct shoal_stats, upstream_wait_timeouts) },
	{ "ConnPool_waiting", offsetof(struct shoal_stats, upstream_waiting) },
	{ "Server_Connections_retried", offsetof(struct shoal_stats, upstream_retries) },
	{ "Sessions_pinned", offsetof(struct shoal_stats, upstream_pinned) },
	{ "Server_Connections_state_syncs", offsetof(struct shoal_stats, upstream_syncs) },
	{ "Stmt_Prepare_local", offsetof(struct shoal_stats, prepares_local) },
	{ "Stmt_Prepare_upstream", offsetof(struct shoal_stats, prepares_upstream) },
	{ "Stmt_Prepare_answers_kept", offsetof(struct shoal_stats, prepare_answers) },
	{ "Questions", offsetof(struct shoal_stats, queries) },
	{ "Client_Protocol_Errors", offsetof(struct shoal_stats, protocol_errors) },
	{ "Client_State_Refused", offsetof(struct shoal_stats, session_state_refused) },
	{ "Client_Compressed_Sessions", offsetof(struct shoal_stats, compressed_sessions) },
	{ "Client_Compressed_Frames_in", offsetof(struct shoal_stats, compressed_frames_in) },
	{ "Client_Compressed_Frames_out", offsetof(struct shoal_stats, compressed_frames_out) },
	{ "Client_Compressed_Plain_Bytes_out", offsetof(struct shoal_stats, compressed_plain_out) },
	{ "Client_Compressed_Wire_Bytes_out", offsetof(struct shoal_stats, compressed_wire_out) },
	{ "Query_Cache_count_GET_OK", offsetof(struct shoal_stats, cache_hits) },
	{ "Query_Cache_count_MISS", offsetof(struct shoal_stats, cache_misses) },
	{ "Query_Cache_count_COALESCED", offsetof(struct shoal_stats, cache_coalesced) },
	{ "Query_Cache_count_GET_STALE", offsetof(struct shoal_stats, cache_stale_hits) },
	{ "Query_Cache_grant_checks", offsetof(struct shoal_stats, grant_checks) },
	{ "Query_Cache_grant_denied", offsetof(struct shoal_stats, grant_denied) },
};

static struct timespec started;

size_t refresh_n_counters(void)
{
	return sizeof counters / sizeof counters[0];
}

void refresh_mark_start(void)
{
	clock_gettime(CLOCK_MONOTONIC, &started);
}

uint64_t refresh_uptime(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > started.tv_sec ? (uint64_t)(now.tv_sec - started.tv_sec) : 0;
}

static uint64_t counter(size_t off)
{
	return atomic_load_explicit((atomic_uint_fast64_t *)(void *)((char *)&g_stats + off),
				    memory_order_relaxed);
}

static int put_pair(sqlite3 *db, const char *table, const char *name, uint64_t v)
{
	char num[24];
	const char *row[2] = { name, num };

	snprintf(num, sizeof num, "%llu", (unsigned long long)v);
	return admin_insert_row(db, table, 2, row);
}

static int fill_global(sqlite3 *db, const char *table, const struct refresh_facts *f)
{
	const char *ver[2] = { "Shoal_Version", SHOAL_VERSION };
	int rc = 0;

	rc |= put_pair(db, table, "Shoal_Uptime", refresh_uptime());
	rc |= admin_insert_row(db, table, 2, ver);
	for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
		rc |= put_pair(db, table, counters[i].name, counter(counters[i].off));
	rc |= put_pair(db, table, "Admin_Connections_connected", (uint64_t)f->admin_sessions);
	{
		struct consist_figure cf[CONSIST_FIGURES];
		size_t nf = consistency_figures(cf);

		for (size_t i = 0; i < nf; i++) {
			const char *row[2] = { cf[i].name, cf[i].value };

			rc |= admin_insert_row(db, table, 2, row);
		}
	}
	return rc ? -1 : 0;
}

static int fill_pool(sqlite3 *db, const char *table, const struct refresh_facts *f)
{
	char port[8], used[24], free_[24], errors[24], queries[24];
	const char *row[8] = { g_config.upstream_host, port, "ONLINE", used, free_, errors,
			       queries, "0" };
	uint64_t open = STAT_GET(upstream_connections), idle = STAT_GET(upstream_idle);

	snprintf(port, sizeof port, "%u", (unsigned)g_config.upstream_port);
	snprintf(used, sizeof used, "%llu", (unsigned long long)(open > idle ? open - idle : 0));
	snprintf(free_, sizeof free_, "%llu", (unsigned long long)idle);
	snprintf(errors, sizeof errors, "%llu", (unsigned long long)STAT_GET(upstream_connect_errors));
	snprintf(queries, sizeof queries, "%llu", (unsigned long long)STAT_GET(queries));
	return admin_insert_row(db, table, 8, row);
}

static builtin_fn builtin_of(const char *table)
{
	for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
		if (strcmp(builtins[i].table, table) == 0)
			return builtins[i].fill;
	return NULL;
}

/* A stats table of its own (not the *_reset twin of another). */
static bool is_stats_base(const struct admin_table *t)
{
	size_t n = strlen(t->name);

	return (t->where & IN_STATS) && !(n > 6 && strcmp(t->name + n - 6, "_reset") == 0);
}

static void rebuild(size_t ti, const char *table, bool reset, const struct refresh_facts *f)
{
	char qualified[96], err[512];
	builtin_fn builtin = builtin_of(admin_tables[ti].name);
	int rc = 0;

	snprintf(qualified, sizeof qualified, "stats.%s", table);
	if (adb_exec("SAVEPOINT shoal_stats", err, sizeof err) < 0) {
		log_warn("admin: rebuilding %s: %s", table, err);
		return;
	}
	err[0] = '\0';
	if (adb_execf(err, sizeof err, "DELETE FROM %s", qualified) < 0)
		rc = -1;
	else if (providers[ti])
		rc = providers[ti](g_adb.db, qualified, reset);
	else if (builtin)
		rc = builtin(g_adb.db, qualified, f);
	if (rc < 0)
		log_warn("admin: rebuilding %s failed%s%s", table, err[0] ? ": " : "", err);
	adb_exec("RELEASE shoal_stats", NULL, 0);
}

void refresh_named(const char *sql, size_t len, int admin_sessions)
{
	struct refresh_facts f = { .admin_sessions = admin_sessions };
	char reset[96];

	for (size_t i = 0; i < admin_n_tables; i++) {
		const char *name = admin_tables[i].name;

		if (!is_stats_base(&admin_tables[i]))
			continue;
		snprintf(reset, sizeof reset, "%s_reset", name);
		if (admin_names_table(sql, len, name))
			rebuild(i, name, false, &f);
		if (schema_find(reset) && admin_names_table(sql, len, reset))
			rebuild(i, reset, true, &f);
	}
}

int admin_register_stats_provider(const char *name, admin_stats_fn fill)
{
	for (size_t i = 0; i < admin_n_tables; i++) {
		if (is_stats_base(&admin_tables[i]) && strcasecmp(admin_tables[i].name, name) == 0) {
			providers[i] = fill;
			return 0;
		}
	}
	return -1;
}

void refresh_reset(void)
{
	for (size_t i = 0; i < ADMIN_MAX_TABLES; i++)
		providers[i] = NULL;
}
