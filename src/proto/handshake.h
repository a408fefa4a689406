/*
 * handshake.h: the connection phase on the wire, server side: building the
 * initial greeting and auth-switch requests, and parsing the client's
 * handshake response, SSL request and CMD_CHANGE_USER payloads.
 */
#ifndef SHOAL_HANDSHAKE_H
#define SHOAL_HANDSHAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/auth.h"
#include "proto/packet.h"

#define HS_USER_MAX 128
#define HS_DB_MAX 256
#define HS_PLUGIN_MAX 64
#define HS_AUTH_MAX 512

/* What the client sent in its handshake response (or CMD_CHANGE_USER). */
struct hs_response {
	uint32_t caps;
	uint32_t max_packet;
	uint16_t collation;       /* 0: not given */
	uint32_t ext_caps;        /* MariaDB extended capabilities (no CLIENT_MYSQL) */
	char user[HS_USER_MAX];
	uint8_t auth[HS_AUTH_MAX];
	size_t auth_len;
	char db[HS_DB_MAX];
	bool has_db;
	char plugin[HS_PLUGIN_MAX];
	/* CAP_ZSTD_COMPRESSION in a handshake response: the byte after the
	 * connect attributes (the zstd level, not checked here), or -1 when
	 * none came; -1 also in a CMD_CHANGE_USER, which has none */
	int zstd_level;
};

/* The capabilities Shoal offers clients (SSL is added when TLS is on). */
#define SHOAL_SERVER_CAPS (CAP_LONG_PASSWORD | CAP_FOUND_ROWS | CAP_LONG_FLAG | \
	CAP_CONNECT_WITH_DB | CAP_NO_SCHEMA | CAP_ODBC | CAP_IGNORE_SPACE | CAP_PROTOCOL_41 | \
	CAP_INTERACTIVE | CAP_IGNORE_SIGPIPE | CAP_TRANSACTIONS | CAP_RESERVED | \
	CAP_SECURE_CONNECTION | CAP_MULTI_STATEMENTS | CAP_MULTI_RESULTS | \
	CAP_PS_MULTI_RESULTS | CAP_PLUGIN_AUTH | CAP_CONNECT_ATTRS | \
	CAP_PLUGIN_AUTH_LENENC | CAP_SESSION_TRACK | CAP_DEPRECATE_EOF)

#define PLUGIN_NATIVE "mysql_native_password"
#define PLUGIN_SHA2 "caching_sha2_password"

/* ext_caps: MariaDB extended capabilities to offer (then CLIENT_MYSQL must
 * be clear in caps), or 0. */
int hs_put_greeting(struct pbuf *b, uint32_t conn_id, const char *version,
		    const uint8_t nonce[AUTH_NONCE_LEN], uint32_t caps,
		    uint8_t collation, const char *plugin, uint32_t ext_caps);
int hs_put_auth_switch(struct pbuf *b, uint8_t seq, const char *plugin,
		       const uint8_t nonce[AUTH_NONCE_LEN]);
/* An "auth more data" packet (0x01 + data). */
int hs_put_more_data(struct pbuf *b, uint8_t seq, const void *data, size_t n);

/* A 32-byte SSL request (the response cut short with CAP_SSL set). */
bool hs_is_ssl_request(const uint8_t *pl, size_t n);
/* Parse a HandshakeResponse41. 0 on success, -1 if malformed or not 4.1.
 * With CAP_ZSTD_COMPRESSION the level is the byte right after the connect
 * attributes; whatever follows it is not read (MariaDB's Connector/C sends
 * the level as 4 bytes, of which MySQL's server reads the first, as here). */
int hs_parse_response(const uint8_t *pl, size_t n, struct hs_response *out);
/* Parse a CMD_CHANGE_USER payload (command byte included) given the
 * session's capabilities. 0 or -1. */
int hs_parse_change_user(const uint8_t *pl, size_t n, uint32_t caps, struct hs_response *out);

#endif
