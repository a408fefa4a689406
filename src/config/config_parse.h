/*
 * config_parse.h: the parsers of the settings that are network addresses
 * and URLs (config_parse.c): host:port (IPv6 in brackets), mysql:// URLs
 * (percent-decoded, redacted for messages), the ProxySQL admin list and
 * the node's own address as ProxySQL holds it; and the two helpers every
 * setting parser of config.c uses, an error message and a bounded copy.
 * They work on the types of config_types.h, never on g_config.
 */
#ifndef SHOAL_CONFIG_PARSE_H
#define SHOAL_CONFIG_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config_types.h"

#define DEFAULT_UPSTREAM_PORT 3306 /* a mysql:// URL without a port */

/* Format a message into err (when err is not NULL) and return -1. */
int config_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Copy len bytes of src into dst[dstsize] with a NUL; -1 if it doesn't fit. */
int config_copy(char *dst, size_t dstsize, const char *src, size_t len);

/* Parse the len bytes at s as "host:port" (IPv6 as "[::1]:3307", the port
 * optional: 0). 0, or -1 with a message in err. */
int config_parse_addr_len(const char *s, size_t len, struct shoal_addr *out, char *err, size_t errlen);
/* Parse the len bytes at url as mysql://user[:pass]@host[:port][/db] (user
 * and password percent-decoded, IPv6 host in brackets). Returns 0, or -1
 * with a message (without the password) in err. */
int config_parse_mysql_url(const char *url, size_t len, uint16_t default_port, struct shoal_mysql_url *u,
			   char *err, size_t errlen);

/* Parse a mysql:// URL into cfg's upstream fields. Returns 0 or -1 with a
 * message (without the password) in err. */
int config_parse_upstream_url(struct shoal_config *cfg, const char *url, char *err, size_t errlen);

/* Parse "host:port" (IPv6 as "[::1]:3307"). Returns 0 or -1. */
int config_parse_addr(const char *s, struct shoal_addr *out);

/* Copy url to out (always NUL-terminated, truncated to outlen) with the
 * password of its user:password@ part replaced by "***". Safe on any string,
 * well-formed or not. */
void config_redact_url(const char *url, char *out, size_t outlen);

/* proxysql_admin and proxysql_node_address (pxadmin.h acts on them) */
#define PROXYSQL_ADMIN_MAX 8
#define PROXYSQL_ADMIN_DEFAULT_PORT 6032

/* Parse a comma-separated list of mysql://user:pass@host[:port] (empty
 * items are ignored). Returns the number of URLs (0..PROXYSQL_ADMIN_MAX), or -1
 * with a message (never a password) in err. out may be NULL (check only). */
int config_parse_proxysql_admin(const char *list, struct shoal_mysql_url *out, int max, char *err,
				size_t errlen);

/* The node's host and port as written in mysql_servers: the setting
 * proxysql_node_address, or the first listen address, or (when that is a
 * wildcard) the host name with the listen port. 0, or -1 with err. */
int config_node_address(const struct shoal_config *cfg, char *host, size_t hostlen, uint16_t *port,
			char *err, size_t errlen);

/* A host name that can go into the statements unquoted-safe: letters,
 * digits, '.', '-', '_', ':' (IPv6), '%' (zone). */
bool config_sql_host_ok(const char *host);

#endif
