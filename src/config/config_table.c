/*
 * config_table.c: every setting of the node, one row each (see
 * config_table.h); config.c parses and applies them.
 */
#include "config/config_table.h"

_Static_assert(sizeof(enum shoal_tls_mode) == sizeof(int), "enum stored as int");
_Static_assert(sizeof(enum shoal_auth_plugin) == sizeof(int), "enum stored as int");
_Static_assert(sizeof(enum shoal_log_level) == sizeof(int), "enum stored as int");
_Static_assert(sizeof(enum shoal_down_policy) == sizeof(int), "enum stored as int");
_Static_assert(sizeof(enum shoal_invalidation) == sizeof(int), "enum stored as int");
_Static_assert(sizeof(enum shoal_cache_scope) == sizeof(int), "enum stored as int");

static const char *const auth_names[] = { "mysql_native_password", "caching_sha2_password", NULL };
static const char *const tls_names[] = { "disabled", "optional", "required", NULL };
static const char *const log_names[] = { "error", "warn", "info", "debug", NULL };
static const char *const policy_names[] = { "shun", "serve-stale", NULL };
static const char *const inval_names[] = { "auto", "binlog", "writes", "ttl", NULL };
static const char *const scope_names[] = { "user", "shared", NULL };
static const char *const granularity_names[] = { "row", "table", NULL };

#define SZ(f) sizeof(((struct shoal_config *)0)->f)
#define PATH_SETTING(k, e, fl, field, d, h) \
	{ .key = k, .env = e, .flag = fl, .type = T_STR, .off = OFF(field), \
	  .size = SZ(field), .metavar = "PATH", .def = d, .help = h }

const struct setting config_settings[] = {
	{ .key = "upstream_db_url", .env = "UPSTREAM_DB_URL", .flag = "upstream-db-url",
	  .type = T_URL, .secret = SEC_URL, .off = OFF(upstream_url), .size = SZ(upstream_url),
	  .metavar = "URL", .def = "(none: required)",
	  .help = "Upstream MySQL server, mysql://user:pass@host:port/db. User and password "
		  "may be percent-encoded (%40 for @, %3A for :); port defaults to 3306; db "
		  "is optional; an IPv6 host goes in brackets. The URL's user is also a client "
		  "login." },
	{ .key = "upstream_connect_timeout_ms", .env = "UPSTREAM_CONNECT_TIMEOUT_MS",
	  .flag = "upstream-connect-timeout-ms", .type = T_INT, .off = OFF(upstream_connect_timeout_ms),
	  .min = 1, .max = 3600000, .metavar = "MS", .def = "5000",
	  .help = "Timeout for connecting to the upstream, in milliseconds (1..3600000)." },
	{ .key = "upstream_tls", .env = "UPSTREAM_TLS", .flag = "upstream-tls", .type = T_BOOL,
	  .off = OFF(upstream_tls), .metavar = "BOOL", .def = "false",
	  .help = "Use TLS for connections to the upstream." },
	{ .key = "upstream_tls_verify", .env = "UPSTREAM_TLS_VERIFY", .flag = "upstream-tls-verify",
	  .type = T_BOOL, .off = OFF(upstream_tls_verify), .metavar = "BOOL", .def = "false",
	  .help = "Verify the upstream server's certificate against upstream_tls_ca. Needs "
		  "upstream_tls." },
	PATH_SETTING("upstream_tls_ca", "UPSTREAM_TLS_CA", "upstream-tls-ca", upstream_tls_ca,
		     "(none)", "CA certificates (PEM) for upstream_tls_verify."),
	{ .key = "listen_address", .env = "LISTEN_ADDRESS", .flag = "listen-address",
	  .type = T_ADDRLIST, .off = OFF(listen), .metavar = "HOST:PORT[,...]", .def = "0.0.0.0:3307",
	  .help = "Where clients connect: host:port, or a comma-separated list of up to 8; "
		  "IPv6 as [::]:3307." },
	{ .key = "metrics_address", .env = "METRICS_ADDRESS", .flag = "metrics-address",
	  .type = T_ADDR, .off = OFF(metrics), .metavar = "HOST:PORT", .def = "0.0.0.0:6034",
	  .help = "Address of the HTTP endpoint: /metrics, /health, the status page." },
	{ .key = "admin_address", .env = "ADMIN_ADDRESS", .flag = "admin-address",
	  .type = T_ADDR, .off = OFF(admin), .metavar = "HOST:PORT", .def = "127.0.0.1:6035",
	  .help = "Address of the admin interface." },
	{ .key = "allowed_users", .env = "ALLOWED_USERS", .flag = "allowed-users",
	  .type = T_USERS, .secret = SEC_USERS, .off = OFF(allowed_users),
	  .metavar = "USER:PASS[,...]", .def = "(none)",
	  .help = "More client logins, user:password[,user:password...], up to 64. A password "
		  "may contain ':' but not ','. Each source replaces the whole list." },
	{ .key = "monitor_user", .env = "MONITOR_USER", .flag = "monitor-user", .type = T_STR,
	  .off = OFF(monitor_user.name), .size = SZ(monitor_user.name), .min = 1,
	  .metavar = "NAME", .def = "monitor", .help = "User name of the monitor login." },
	{ .key = "monitor_password", .env = "MONITOR_PASSWORD", .flag = "monitor-password",
	  .type = T_STR, .secret = SEC_ALL, .off = OFF(monitor_user.password),
	  .size = SZ(monitor_user.password), .metavar = "PASS", .def = "monitor",
	  .help = "Password of the monitor login." },
	{ .key = "shared_upstream_user", .env = "SHARED_UPSTREAM_USER", .flag = "shared-upstream-user",
	  .type = T_BOOL, .off = OFF(shared_upstream_user), .metavar = "BOOL", .def = "false",
	  .help = "Every client login (but the monitor) acts upstream as the upstream_db_url user, "
		  "so all logins share that user's privileges (a warning is logged at start). "
		  "Off: each login acts upstream as itself, with its own password." },
	{ .key = "auth_plugin", .env = "AUTH_PLUGIN", .flag = "auth-plugin", .type = T_ENUM,
	  .off = OFF(auth_plugin), .names = auth_names, .metavar = "PLUGIN",
	  .def = "mysql_native_password",
	  .help = "Authentication plugin offered to clients: mysql_native_password or "
		  "caching_sha2_password." },
	PATH_SETTING("rsa_private_key", "RSA_PRIVATE_KEY", "rsa-private-key", rsa_private_key,
		     "(none: generated at start)",
		     "RSA private key (PEM) for caching_sha2_password full authentication "
		     "without TLS. Empty: a 2048-bit key is generated at start."),
	PATH_SETTING("rsa_public_key", "RSA_PUBLIC_KEY", "rsa-public-key", rsa_public_key,
		     "(none: derived)",
		     "RSA public key (PEM) matching rsa_private_key. Empty: derived from the "
		     "private key."),
	{ .key = "tls_mode", .env = "TLS_MODE", .flag = "tls-mode", .type = T_ENUM,
	  .off = OFF(tls_mode), .names = tls_names, .metavar = "MODE", .def = "optional",
	  .help = "Client TLS: disabled, optional or required. TLS is offered only when "
		  "tls_cert and tls_key are set; required needs both." },
	PATH_SETTING("tls_cert", "TLS_CERT", "tls-cert", tls_cert, "(none)",
		     "Certificate chain (PEM) for client TLS."),
	PATH_SETTING("tls_key", "TLS_KEY", "tls-key", tls_key, "(none)",
		     "Private key (PEM) for tls_cert."),
	{ .key = "max_allowed_packet", .env = "MAX_ALLOWED_PACKET", .flag = "max-allowed-packet",
	  .type = T_SIZE, .off = OFF(max_allowed_packet), .min = 1024, .max = 1073741824,
	  .metavar = "BYTES", .def = "67108864 (64M)",
	  .help = "Largest packet accepted, in bytes, 1024..1073741824; suffixes K, M and G "
		  "(powers of 1024) allowed." },
	{ .key = "max_client_connections", .env = "MAX_CLIENT_CONNECTIONS",
	  .flag = "max-client-connections", .type = T_INT, .off = OFF(max_client_connections),
	  .min = 1, .max = 1000000, .metavar = "N", .def = "10000",
	  .help = "Most client connections open at once (1..1000000)." },
	{ .key = "max_upstream_connections", .env = "MAX_UPSTREAM_CONNECTIONS",
	  .flag = "max-upstream-connections", .type = T_INT, .off = OFF(max_upstream_connections),
	  .min = 1, .max = 100000, .metavar = "N", .def = "64",
	  .help = "Most upstream connections open at once, split evenly across the workers "
		  "(1..100000). Sessions share them: see docs/architecture.md, Multiplexing." },
	{ .key = "upstream_wait_timeout_ms", .env = "UPSTREAM_WAIT_TIMEOUT_MS",
	  .flag = "upstream-wait-timeout-ms", .type = T_INT, .off = OFF(upstream_wait_timeout_ms),
	  .min = 1, .max = 3600000, .metavar = "MS", .def = "10000",
	  .help = "How long a session waits for a free upstream connection when the pool is "
		  "exhausted before its command fails with error 1040 (1..3600000)." },
	{ .key = "upstream_max_idle_ms", .env = "UPSTREAM_MAX_IDLE_MS",
	  .flag = "upstream-max-idle-ms", .type = T_INT, .off = OFF(upstream_max_idle_ms),
	  .min = 0, .max = 86400000, .metavar = "MS", .def = "60000",
	  .help = "Pooled upstream connections idle longer than this are closed "
		  "(0..86400000; 0: never)." },
	{ .key = "multiplexing", .env = "MULTIPLEXING", .flag = "multiplexing", .type = T_BOOL,
	  .off = OFF(multiplexing), .metavar = "BOOL", .def = "true",
	  .help = "Share upstream connections between sessions. Off: each session keeps the "
		  "connection it first borrows until it ends (still within max_upstream_connections)." },
	{ .key = "local_infile", .env = "LOCAL_INFILE", .flag = "local-infile", .type = T_BOOL,
	  .off = OFF(local_infile), .metavar = "BOOL", .def = "true",
	  .help = "Relay LOAD DATA LOCAL INFILE: offer clients CLIENT_LOCAL_FILES and pass the "
		  "server's file request to them, as MariaDB's local_infile does. Off: the "
		  "upstream refuses such statements with its own error." },
	{ .key = "compression", .env = "COMPRESSION", .flag = "compression", .type = T_BOOL,
	  .off = OFF(compression), .metavar = "BOOL", .def = "true",
	  .help = "Offer clients protocol compression: zlib (CLIENT_COMPRESS), as MariaDB "
		  "does, and zstd (CLIENT_ZSTD_COMPRESSION_ALGORITHM), as MySQL 8.0.18+ does; a "
		  "client that asks for either gets a compressed session. Off: neither is offered. "
		  "(The upstream links: upstream_compression.)" },
	{ .key = "upstream_compression", .env = "UPSTREAM_COMPRESSION", .flag = "upstream-compression",
	  .type = T_BOOL, .off = OFF(upstream_compression), .metavar = "BOOL", .def = "false",
	  .help = "Compress the connections that carry client sessions to the upstream "
		  "(CLIENT_COMPRESS), whatever the clients use: for an upstream across a slow "
		  "or metered link." },
	{ .key = "handshake_timeout_ms", .env = "HANDSHAKE_TIMEOUT_MS", .flag = "handshake-timeout-ms",
	  .type = T_INT, .off = OFF(handshake_timeout_ms), .min = 1, .max = 3600000,
	  .metavar = "MS", .def = "10000",
	  .help = "Time a client has to finish the handshake and log in, in milliseconds "
		  "(1..3600000)." },
	{ .key = "client_idle_timeout_ms", .env = "CLIENT_IDLE_TIMEOUT_MS",
	  .flag = "client-idle-timeout-ms", .type = T_INT, .off = OFF(client_idle_timeout_ms),
	  .min = 0, .max = 2147483647, .metavar = "MS", .def = "28800000 (8 h)",
	  .help = "A logged-in client that sends nothing for this long is sent error 4031 and "
		  "closed (like the server's wait_timeout); 0 turns it off." },
	{ .key = "admin_max_connections", .env = "ADMIN_MAX_CONNECTIONS",
	  .flag = "admin-max-connections", .type = T_INT, .off = OFF(admin_max_connections),
	  .min = 1, .max = 100000, .metavar = "N", .def = "64",
	  .help = "Most admin sessions open at once; more get error 1040." },
	{ .key = "auth_failure_delay_ms", .env = "AUTH_FAILURE_DELAY_MS",
	  .flag = "auth-failure-delay-ms", .type = T_INT, .off = OFF(auth_failure_delay_ms),
	  .min = 0, .max = 60000, .metavar = "MS", .def = "1000",
	  .help = "Once an address has failed auth_failure_threshold logins within "
		  "auth_failure_window_ms, each further failure is answered this much later; "
		  "0 turns the delay off." },
	{ .key = "auth_failure_threshold", .env = "AUTH_FAILURE_THRESHOLD",
	  .flag = "auth-failure-threshold", .type = T_INT, .off = OFF(auth_failure_threshold),
	  .min = 1, .max = 1000000, .metavar = "N", .def = "5",
	  .help = "Failed logins from one address, within the window, answered at once." },
	{ .key = "auth_failure_window_ms", .env = "AUTH_FAILURE_WINDOW_MS",
	  .flag = "auth-failure-window-ms", .type = T_INT, .off = OFF(auth_failure_window_ms),
	  .min = 1, .max = 86400000, .metavar = "MS", .def = "60000",
	  .help = "Failed logins of an address are counted over this window." },
	{ .key = "workers", .env = "WORKERS", .flag = "workers", .type = T_INT, .off = OFF(workers),
	  .min = 1, .max = MAX_WORKERS, .metavar = "N", .def = "(online CPUs)",
	  .help = "Number of worker threads (1..256)." },
	{ .key = "log_level", .env = "LOG_LEVEL", .flag = "log-level", .type = T_ENUM,
	  .off = OFF(log_level), .names = log_names, .metavar = "LEVEL", .def = "info",
	  .help = "Log verbosity: error, warn, info or debug." },
	{ .key = "auto_cache", .env = "AUTO_CACHE", .flag = "auto-cache", .type = T_BOOL,
	  .off = OFF(auto_cache), .metavar = "BOOL", .def = "false",
	  .help = "Cache read queries automatically, without explicit cache rules." },
	{ .key = "cache_ttl_ms", .env = "CACHE_TTL_MS", .flag = "cache-ttl-ms", .type = T_INT,
	  .off = OFF(cache_ttl_ms), .min = 1, .max = 86400000, .metavar = "MS",
	  .def = "10000; 3600000 with binlog invalidation",
	  .help = "Default time to live of a cached result, in milliseconds. With binlog "
		  "invalidation it is a safety net, not the freshness mechanism: unset, it is "
		  "an hour there." },
	{ .key = "cache_refresh_ms", .env = "CACHE_REFRESH_MS", .flag = "cache-refresh-ms",
	  .type = T_INT, .off = OFF(cache_refresh_ms), .min = 0, .max = 86400000, .metavar = "MS",
	  .def = "0 (half the TTL); none with binlog invalidation",
	  .help = "Age at which a hit triggers a background refresh (stale-while-revalidate); "
		  "0 means half the TTL, a value not below the TTL means never. Unset with binlog "
		  "invalidation: never (unchanged data causes no upstream traffic)." },
	{ .key = "cache_coalesce_ms", .env = "CACHE_COALESCE_MS", .flag = "cache-coalesce-ms",
	  .type = T_INT, .off = OFF(cache_coalesce_ms), .min = 0, .max = 3600000, .metavar = "MS",
	  .def = "5000",
	  .help = "How long concurrent misses on one key wait for the one upstream query "
		  "before going upstream themselves." },
	{ .key = "cache_max_entry_size", .env = "CACHE_MAX_ENTRY_SIZE", .flag = "cache-max-entry-size",
	  .type = T_SIZE, .off = OFF(cache_max_entry_size), .min = 1024, .max = 1073741824,
	  .metavar = "BYTES", .def = "1073741824 (1G)",
	  .help = "Largest result stored; a larger one is streamed to the client, not stored." },
	{ .key = "memory_limit", .env = "MEMORY_LIMIT", .flag = "memory-limit", .type = T_SIZE,
	  .off = OFF(memory_limit), .min = 1048576, .max = 4294967295LL, .metavar = "BYTES",
	  .def = "1073741824 (1G)",
	  .help = "Memory for cached results; above it entries are evicted (see docs/caching.md)." },
	{ .key = "cache_warnings", .env = "CACHE_WARNINGS", .flag = "cache-warnings", .type = T_BOOL,
	  .off = OFF(cache_warnings), .metavar = "BOOL", .def = "false",
	  .help = "Also store results that carry warnings." },
	{ .key = "cache_empty", .env = "CACHE_EMPTY", .flag = "cache-empty", .type = T_BOOL,
	  .off = OFF(cache_empty), .metavar = "BOOL", .def = "true",
	  .help = "Store empty results." },
	{ .key = "read_your_writes_ms", .env = "READ_YOUR_WRITES_MS", .flag = "read-your-writes-ms",
	  .type = T_INT, .off = OFF(read_your_writes_ms), .min = 0, .max = 3600000, .metavar = "MS",
	  .def = "0 (off)",
	  .help = "After a session writes, its reads bypass the caches for this long." },
	{ .key = "invalidation", .env = "INVALIDATION", .flag = "invalidation", .type = T_ENUM,
	  .off = OFF(invalidation), .names = inval_names, .metavar = "MODE", .def = "auto",
	  .help = "How cached results are kept consistent: binlog (follow the upstream's binlog: "
		  "every write, wherever it is made, invalidates; own writes before their OK), "
		  "writes (only writes through this node invalidate), ttl (nothing invalidates: "
		  "results live their TTL), or auto: binlog when the upstream has a binlog and the "
		  "binlog login may read it, else writes. See docs/caching.md." },
	{ .key = "binlog_user", .env = "BINLOG_USER", .flag = "binlog-user", .type = T_STR,
	  .off = OFF(binlog_user), .size = SZ(binlog_user), .metavar = "NAME",
	  .def = "(the upstream user)",
	  .help = "Login that reads the upstream's binlog (needs REPLICATION SLAVE)." },
	{ .key = "binlog_password", .env = "BINLOG_PASSWORD", .flag = "binlog-password",
	  .type = T_STR, .secret = SEC_ALL, .off = OFF(binlog_password),
	  .size = SZ(binlog_password), .metavar = "PASS", .def = "(the upstream password)",
	  .help = "Password of binlog_user." },
	{ .key = "binlog_server_id", .env = "BINLOG_SERVER_ID", .flag = "binlog-server-id",
	  .type = T_INT, .off = OFF(binlog_server_id), .min = 0, .max = 2147483647,
	  .metavar = "N", .def = "0 (derived from the host name and listen port)",
	  .help = "Server id the binlog follower registers with; must differ from every other "
		  "replica of the upstream." },
	{ .key = "binlog_max_lag_ms", .env = "BINLOG_MAX_LAG_MS", .flag = "binlog-max-lag-ms",
	  .type = T_INT, .off = OFF(binlog_max_lag_ms), .min = 1000, .max = 86400000,
	  .metavar = "MS", .def = "10000",
	  .help = "When the binlog follower is further behind than this, nothing is served "
		  "from the cache until it catches up." },
	{ .key = "binlog_settle_ms", .env = "BINLOG_SETTLE_MS", .flag = "binlog-settle-ms",
	  .type = T_INT, .off = OFF(binlog_settle_ms), .min = 0, .max = 10000, .metavar = "MS",
	  .def = "0",
	  .help = "Obsolete, kept for compatibility: an extra window after a binlog "
		  "invalidation in which results are not stored. Correctness does not depend on "
		  "it: a result is stored only once the commits it could miss are proven visible "
		  "on the upstream (the visibility fence)." },
	{ .key = "invalidation_granularity", .env = "INVALIDATION_GRANULARITY",
	  .flag = "invalidation-granularity", .type = T_ENUM, .off = OFF(invalidation_granularity),
	  .names = granularity_names, .metavar = "HOW", .def = "row",
	  .help = "What a row changed in the binlog invalidates: row (the cached answers whose "
		  "WHERE constraints the row's before or after image can meet) or table (every "
		  "answer that reads its table)." },
	{ .key = "cache_scope", .env = "CACHE_SCOPE", .flag = "cache-scope", .type = T_ENUM,
	  .off = OFF(cache_scope), .names = scope_names, .metavar = "SCOPE", .def = "user",
	  .help = "user: each upstream user has its own cached results; shared: users share "
		  "them, each user's hits allowed by its own grant verdict (see docs/security.md "
		  "before choosing shared)." },
	{ .key = "grant_check_ms", .env = "GRANT_CHECK_MS", .flag = "grant-check-ms", .type = T_INT,
	  .off = OFF(grant_check_ms), .min = 0, .max = 86400000, .metavar = "MS", .def = "1000",
	  .help = "How long a user's verdict that it may read a cached query shape holds; then "
		  "the upstream checks it again (as that user) before the next hit. 0: before "
		  "every hit." },
	{ .key = "grant_check_binlog_ms", .env = "GRANT_CHECK_BINLOG_MS", .flag = "grant-check-binlog-ms",
	  .type = T_INT, .off = OFF(grant_check_binlog_ms), .min = 0, .max = 86400000, .metavar = "MS",
	  .def = "3600000",
	  .help = "In binlog mode, how long a grant verdict holds at most: the binlog shows every "
		  "privilege change (which forgets the verdicts at once), so this only bounds the "
		  "changes it does not show (0 or below grant_check_ms: grant_check_ms)." },
	{ .key = "prepare_answer_ms", .env = "PREPARE_ANSWER_MS", .flag = "prepare-answer-ms",
	  .type = T_INT, .off = OFF(prepare_answer_ms), .min = 0, .max = 86400000, .metavar = "MS",
	  .def = "3600000",
	  .help = "In binlog mode, how long the node may answer a COM_STMT_PREPARE itself with the "
		  "upstream's answer to the same one (same user, session state and text): any DDL, "
		  "privilege change or lost binlog position ends that sooner, so this only bounds "
		  "the changes the binlog does not show. 0: every PREPARE goes upstream." },
	{ .key = "drain_timeout_ms", .env = "DRAIN_TIMEOUT_MS", .flag = "drain-timeout-ms",
	  .type = T_INT, .off = OFF(drain_timeout_ms), .min = 0, .max = 3600000, .metavar = "MS",
	  .def = "30000",
	  .help = "On SIGTERM or SIGINT the node stops accepting and closes each session when it "
		  "is next idle; sessions still open after this long are closed anyway." },
	{ .key = "drain_handoff_ms", .env = "DRAIN_HANDOFF_MS", .flag = "drain-handoff-ms",
	  .type = T_INT, .off = OFF(drain_handoff_ms), .min = 0, .max = 3600000, .metavar = "MS",
	  .def = "8000",
	  .help = "First part of the drain: the node keeps serving its open sessions (and fails "
		  "/health and COM_PING) so that ProxySQL stops sending it work before any "
		  "connection is closed. It ends once no query has come for drain_quiet_ms, or "
		  "after this long; 0 closes idle sessions at once." },
	{ .key = "drain_quiet_ms", .env = "DRAIN_QUIET_MS", .flag = "drain-quiet-ms",
	  .type = T_INT, .off = OFF(drain_quiet_ms), .min = 0, .max = 3600000, .metavar = "MS",
	  .def = "1000",
	  .help = "The hand-off ends when no query has reached the node for this long (counted "
		  "from when proxysql_admin has taken the node out, if it is set)." },
	{ .key = "proxysql_admin", .env = "PROXYSQL_ADMIN", .flag = "proxysql-admin", .type = T_STR,
	  .secret = SEC_ALL, .off = OFF(proxysql_admin), .size = SZ(proxysql_admin),
	  .metavar = "URL[,...]", .def = "(none)",
	  .help = "ProxySQL admin logins, mysql://user:pass@host[:port] (port 6032 if left "
		  "out), comma-separated, up to 8. When set, the node sets its own mysql_servers "
		  "rows OFFLINE_SOFT on these admins when it drains, and ONLINE again when it "
		  "starts (LOAD MYSQL SERVERS TO RUNTIME; nothing is saved to disk)." },
	{ .key = "proxysql_node_address", .env = "PROXYSQL_NODE_ADDRESS",
	  .flag = "proxysql-node-address", .type = T_STR, .off = OFF(proxysql_node_address),
	  .size = SZ(proxysql_node_address), .metavar = "HOST:PORT",
	  .def = "(none: the first listen_address; with 0.0.0.0 or ::, the host name)",
	  .help = "This node's hostname and port as they are written in ProxySQL's "
		  "mysql_servers, for proxysql_admin." },
	{ .key = "upstream_down_policy", .env = "UPSTREAM_DOWN_POLICY", .flag = "upstream-down-policy",
	  .type = T_ENUM, .off = OFF(upstream_down_policy), .names = policy_names,
	  .metavar = "POLICY", .def = "shun",
	  .help = "While the upstream is down: shun (after upstream_down_after_ms, refuse new "
		  "connections and fail COM_PING, so load balancers take the node out) or "
		  "serve-stale (keep serving cached results up to max_stale_ms past their TTL)." },
	{ .key = "upstream_down_after_ms", .env = "UPSTREAM_DOWN_AFTER_MS",
	  .flag = "upstream-down-after-ms", .type = T_INT, .off = OFF(upstream_down_after_ms),
	  .min = 0, .max = 3600000, .metavar = "MS", .def = "3000",
	  .help = "How long the upstream may be down before the node takes itself out of "
		  "rotation (/health 503, and with shun: refused connections, failing COM_PING)." },
	{ .key = "max_stale_ms", .env = "MAX_STALE_MS", .flag = "max-stale-ms", .type = T_INT,
	  .off = OFF(max_stale_ms), .min = 0, .max = 86400000, .metavar = "MS", .def = "300000",
	  .help = "serve-stale: how long past its TTL a cached result may be served while the "
		  "upstream is down." },
	{ .key = "admin_user", .env = "ADMIN_USER", .flag = "admin-user", .type = T_STR,
	  .off = OFF(admin_user.name), .size = SZ(admin_user.name), .min = 1,
	  .metavar = "NAME", .def = "admin",
	  .help = "Admin login. While admin/admin is unchanged it works from loopback only." },
	{ .key = "admin_password", .env = "ADMIN_PASSWORD", .flag = "admin-password",
	  .type = T_STR, .secret = SEC_ALL, .off = OFF(admin_user.password),
	  .size = SZ(admin_user.password), .metavar = "PASS", .def = "admin",
	  .help = "Admin password." },
	PATH_SETTING("data_dir", "DATA_DIR", "data-dir", data_dir, "/var/lib/shoal",
		     "Directory of the admin's disk database (cache definitions, settings)."),
	PATH_SETTING("cache_snapshot", "CACHE_SNAPSHOT", "cache-snapshot", cache_snapshot, "(none: off)",
		     "File the cache is written to at the end of a graceful stop (SIGTERM or SIGINT "
		     "after the drain) and read at start: in binlog mode a restart starts warm "
		     "(docs/operations.md). Mode 0600: it holds query results."),
	{ .key = "cache_snapshot_data", .env = "CACHE_SNAPSHOT_DATA", .flag = "cache-snapshot-data",
	  .type = T_BOOL, .off = OFF(cache_snapshot_data), .metavar = "BOOL", .def = "true",
	  .help = "Write the results into the cache snapshot file. false: the keys only (no query "
		  "result on disk); a restart then refills them from the upstream." },
	{ .key = "snapshot_write_timeout_ms", .env = "SNAPSHOT_WRITE_TIMEOUT_MS",
	  .flag = "snapshot-write-timeout-ms", .type = T_INT, .off = OFF(snapshot_write_timeout_ms),
	  .min = 1, .max = 3600000, .metavar = "MS", .def = "5000",
	  .help = "Longest a cache snapshot write may take; a write cut short leaves the file "
		  "that was there before." },
	{ .key = "snapshot_serve", .env = "SNAPSHOT_SERVE", .flag = "snapshot-serve", .type = T_BOOL,
	  .off = OFF(snapshot_serve), .metavar = "BOOL", .def = "false",
	  .help = "Answer GET /snapshot on the HTTP port with the cache's snapshot, to peers that "
		  "send the admin login (HTTP basic auth): a new node's --warm-from." },
	{ .key = "warm_from", .env = "WARM_FROM", .flag = "warm-from", .type = T_STR,
	  .off = OFF(warm_from), .size = SZ(warm_from), .metavar = "URL", .def = "(none: off)",
	  .help = "A running peer's snapshot URL (http://peer:6034/snapshot), fetched at start with "
		  "this node's admin login when no cache_snapshot file can be loaded (a warm join)." },
	{ .key = "warm_fetch_timeout_ms", .env = "WARM_FETCH_TIMEOUT_MS", .flag = "warm-fetch-timeout-ms",
	  .type = T_INT, .off = OFF(warm_fetch_timeout_ms), .min = 100, .max = 3600000, .metavar = "MS",
	  .def = "30000", .help = "Longest the --warm-from fetch may take." },
	{ .key = "warm_rate", .env = "WARM_RATE", .flag = "warm-rate", .type = T_INT,
	  .off = OFF(warm_rate), .min = 0, .max = 100000, .metavar = "N", .def = "100",
	  .help = "Statements per second at most of the refill: the saved keys whose data is not "
		  "loaded or not current are read again from the upstream, costliest first (0: no "
		  "refill)." },
	{ .key = "warm_timeout_ms", .env = "WARM_TIMEOUT_MS", .flag = "warm-timeout-ms", .type = T_INT,
	  .off = OFF(warm_timeout_ms), .min = 100, .max = 86400000, .metavar = "MS", .def = "300000",
	  .help = "Longest the refill runs; the keys it has not reached then are left to the "
		  "clients' misses." },
	{ .key = "metrics_max_queries", .env = "METRICS_MAX_QUERIES", .flag = "metrics-max-queries",
	  .type = T_INT, .off = OFF(metrics_max_queries), .min = 0, .max = 100000, .metavar = "N",
	  .def = "100",
	  .help = "Per-query series in /metrics (top N by traffic); the rest are summed under "
		  "query_id=\"other\"." },
	{ .key = "config", .env = "SHOAL_CONFIG", .flag = "config", .type = T_CONFIG,
	  .off = OFF(config_file), .size = SZ(config_file), .metavar = "PATH",
	  .def = DEFAULT_CONFIG_FILE,
	  .help = "Config file to read. The default file is read only if it exists; a file "
		  "named by --config or SHOAL_CONFIG must exist." },
};

const size_t config_n_settings = sizeof config_settings / sizeof config_settings[0];
