/*
 * config_types.h: the types of the node's settings (struct shoal_config and
 * what it holds), with no code of their own: config.h (config.c) fills and
 * reads them, config_table.c describes each field, log.h takes its level
 * from here. A type header, so that the settings table and the logger need
 * not depend on the parser that uses them.
 */
#ifndef SHOAL_CONFIG_TYPES_H
#define SHOAL_CONFIG_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/log.h" /* enum shoal_log_level */

#define SHOAL_MAX_LISTEN 8
#define SHOAL_MAX_USERS 64

struct shoal_addr {
	char host[256];   /* as written: "0.0.0.0", "127.0.0.1", "::1", a name */
	uint16_t port;
};

struct shoal_user {
	char name[128];
	char password[256];
};

enum shoal_tls_mode { TLS_MODE_DISABLED, TLS_MODE_OPTIONAL, TLS_MODE_REQUIRED };
enum shoal_auth_plugin { AUTH_NATIVE_PASSWORD, AUTH_CACHING_SHA2 };
/* How cached results are invalidated (docs/caching.md, "Consistency"). */
enum shoal_invalidation { INVALIDATION_AUTO, INVALIDATION_BINLOG, INVALIDATION_WRITES,
			  INVALIDATION_TTL };
/* What the node does while its upstream is down (docs/operations.md). */
enum shoal_down_policy { DOWN_POLICY_SHUN, DOWN_POLICY_SERVE_STALE };
/* What a changed row of the binlog invalidates (docs/caching.md). */
enum shoal_inval_granularity { GRANULARITY_ROW, GRANULARITY_TABLE };
/* Who shares cached results (docs/security.md). */
enum shoal_cache_scope { CACHE_SCOPE_USER, CACHE_SCOPE_SHARED };

struct shoal_config {
	/* upstream: parsed from upstream_db_url mysql://user:pass@host:port/db */
	char upstream_url[1024];         /* as given (contains the password; never print) */
	struct shoal_user upstream_user; /* also a login user for clients */
	char upstream_host[256];
	uint16_t upstream_port;          /* default 3306 */
	char upstream_db[256];           /* may be empty */
	int upstream_connect_timeout_ms; /* default 5000 */
	/* upstream TLS */
	bool upstream_tls;               /* default false */
	bool upstream_tls_verify;        /* default false: verify server cert against CA */
	char upstream_tls_ca[1024];

	/* listeners: comma-separated list allowed for listen_address */
	struct shoal_addr listen[SHOAL_MAX_LISTEN];
	int n_listen;                    /* default one: 0.0.0.0:3307 */
	struct shoal_addr metrics;       /* default 0.0.0.0:6034 */
	struct shoal_addr admin;         /* default 127.0.0.1:6035 */

	/* clients */
	struct shoal_user allowed_users[SHOAL_MAX_USERS]; /* ALLOWED_USERS=u:p,u2:p2 */
	int n_allowed_users;
	struct shoal_user monitor_user;  /* default monitor/monitor */
	bool shared_upstream_user;       /* every login acts upstream as the URL's user; default false */
	enum shoal_auth_plugin auth_plugin; /* default mysql_native_password */
	char rsa_private_key[1024];      /* PEM path; empty: generate at start */
	char rsa_public_key[1024];       /* PEM path; empty: derive */

	/* client TLS */
	enum shoal_tls_mode tls_mode;    /* default optional (effective only with cert+key) */
	char tls_cert[1024];
	char tls_key[1024];

	/* limits */
	uint32_t max_allowed_packet;     /* default 64 MiB (67108864) */
	int max_client_connections;      /* default 10000 */
	int max_upstream_connections;    /* the pools' total (pool.h); default 64 */
	int upstream_wait_timeout_ms;    /* longest wait for a pooled connection; default 10000 */
	int upstream_max_idle_ms;        /* idle pooled connections closed after; default 60000 */
	bool multiplexing;               /* share upstream connections; default true */
	bool local_infile;               /* relay LOAD DATA LOCAL INFILE; default true */
	bool compression;                /* offer clients zlib and zstd compression; default true */
	bool upstream_compression;       /* compress the relay's upstream links; default false */
	int handshake_timeout_ms;        /* default 10000 */
	int client_idle_timeout_ms;      /* idle sessions closed after this; default 8 h, 0 = off */
	int admin_max_connections;       /* admin sessions open at once; default 64 */
	int auth_failure_delay_ms;       /* answer delay for repeated failed logins; default 1000 */
	int auth_failure_threshold;      /* failures per address before the delay; default 5 */
	int auth_failure_window_ms;      /* window the failures are counted in; default 60000 */

	/* threads and process */
	int workers;                     /* default: number of online cores */
	enum shoal_log_level log_level;  /* default info */
	char config_file[1024];          /* --config / SHOAL_CONFIG; default /etc/shoal/shoal.conf */

	/* admin and metrics */
	struct shoal_user admin_user;    /* default admin/admin, loopback only while default */
	char data_dir[1024];             /* default /var/lib/shoal: the admin's disk database */
	char cache_snapshot[1024];       /* "" (off): the file the cache is written to on a graceful stop */
	bool cache_snapshot_data;        /* the file holds results; false: keys only; default true */
	int snapshot_write_timeout_ms;   /* longest a snapshot write may take; default 5000 */
	bool snapshot_serve;             /* GET /snapshot answers peers with the admin login */
	char warm_from[1024];            /* "" (off): a peer's /snapshot URL, fetched at start */
	int warm_fetch_timeout_ms;       /* longest that fetch may take; default 30000 */
	int warm_rate;                   /* refill statements per second at most; default 100, 0 off */
	int warm_timeout_ms;             /* longest the refill runs; default 300000 */
	int metrics_max_queries;         /* per-query series kept in /metrics, default 100 */

	/* cache */
	bool auto_cache;                 /* AUTO_CACHE=true */
	int cache_ttl_ms;                /* default 10000 */
	int cache_refresh_ms;            /* default 0: half the TTL */
	int cache_coalesce_ms;           /* default 5000 */
	uint32_t cache_max_entry_size;   /* default 1 GiB: larger results are not stored */
	uint32_t memory_limit;           /* bytes of cached results; default 1 GiB */
	bool cache_warnings;             /* store results that carry warnings; default false */
	bool cache_empty;                /* store empty results; default true */
	int read_your_writes_ms;         /* after a write the session bypasses caches; default 0 (off) */
	enum shoal_cache_scope cache_scope; /* default user: results per upstream user */
	int grant_check_ms;              /* a user's verdict on a shape holds this long; default 1000 */
	int grant_check_binlog_ms;       /* ... in binlog mode, until a privilege change; default 3600000 */
	int prepare_answer_ms;           /* binlog mode: PREPARE answers kept at most; 0 off; default 3600000 */

	/* consistency (docs/caching.md, "Consistency") */
	enum shoal_invalidation invalidation; /* default auto: binlog when possible, else writes */
	char binlog_user[128];           /* default (empty): the upstream user */
	char binlog_password[256];       /* with binlog_user */
	int binlog_server_id;            /* 0: derived from the host name and listen port */
	int binlog_max_lag_ms;           /* further behind: nothing served; default 10000 */
	int binlog_settle_ms;            /* obsolete extra window after a binlog invalidation (0) */
	enum shoal_inval_granularity invalidation_granularity; /* default row: the answers a row can change */

	/* high availability (docs/operations.md) */
	int drain_timeout_ms;            /* SIGTERM/SIGINT: longest wait for sessions; default 30000 */
	int drain_handoff_ms;            /* drain: longest wait for ProxySQL to stop sending work; default 8000 */
	int drain_quiet_ms;              /* ... which it has when no query came for this long; default 1000 */
	char proxysql_admin[2048];       /* optional: ProxySQL admin URLs, comma-separated (pxadmin.h) */
	char proxysql_node_address[300]; /* this node's host:port in mysql_servers; empty: derived */
	enum shoal_down_policy upstream_down_policy; /* default shun */
	int upstream_down_after_ms;      /* outage that takes the node out of rotation; default 3000 */
	int max_stale_ms;                /* serve-stale: entries served this long past their TTL; default 300000 */

	/* which settings a file, the environment or a flag set (config_is_set) */
	uint64_t set_mask[2];
};

/* A parsed mysql://user:pass@host:port/db URL. */
struct shoal_mysql_url {
	struct shoal_user user;
	char host[256];
	uint16_t port;
	char db[256];
};

#endif
