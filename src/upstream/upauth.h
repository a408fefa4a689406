/*
 * upauth.h: logging in upstream on a session's behalf (ident.h), with
 * MariaDB Connector/C.
 *
 * With the clear password the connector does everything (any plugin the
 * upstream asks for). With only SHA1(password) - what a node that stores
 * the mysql_native_password hash learns from the client's own login - the
 * connector cannot compute the native scramble itself, as it hashes the
 * password it is given. So the node registers one more client
 * authentication plugin with the connector, "shoal_native_password", which
 * answers a native-password challenge from SHA1(password) (passed to the
 * connector as 40 hex digits in place of the password):
 *   token = SHA1(pw) XOR SHA1(scramble . SHA1(SHA1(pw)))
 * The connection is told to start with that plugin (MYSQL_DEFAULT_AUTH), so
 * the server, which knows no such plugin, sends an auth switch request
 * naming mysql_native_password; the read hook (upstream.c) rewrites that
 * name, in the connector's read buffer, to the plugin's name (both are 21
 * bytes), and the connector hands the new scramble to the plugin. One
 * extra round trip per upstream connection. If the upstream asks for any
 * other plugin (caching_sha2_password, ed25519, ...) the name is left
 * alone, the login fails, and the error says that user needs its clear
 * password (docs/security.md).
 */
#ifndef SHOAL_UPAUTH_H
#define SHOAL_UPAUTH_H

#include <mysql.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "upstream/ident.h"

#define UPAUTH_PLUGIN "shoal_native_password"

/* The connect arguments for an identity. password must hold
 * USERS_CLEAR_MAX bytes. Returns true when the login uses SHA1(pw) (the
 * plugin is then set as the connection's default). */
bool upauth_prepare(MYSQL *m, const struct ident *id, char *password, size_t cap);

/* Process-wide: register the plugin with the connector. 0 or -1. */
int upauth_global_init(void);

/* The read hook's part during authentication: in a SHA1 login, rewrite an
 * auth switch request to mysql_native_password in place. Records the
 * plugin any switch request asks for in asked (cap bytes). */
void upauth_on_read(bool sha1_login, uint8_t *buf, size_t len, char *asked, size_t cap);

/* Pure: the native token from SHA1(pw) and a 20-byte scramble. 0 or -1. */
int upauth_native_token(const uint8_t sha1[20], const uint8_t scramble[20], uint8_t token[20]);

#endif
