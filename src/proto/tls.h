/*
 * tls.h: the OpenSSL server context for client connections (TLS 1.2 and
 * later, modern ciphers), built once at start from --tls-cert/--tls-key.
 */
#ifndef SHOAL_TLS_H
#define SHOAL_TLS_H

#include <openssl/ssl.h>
#include <stddef.h>

/* NULL with a message in err on failure (file unreadable, key mismatch). */
SSL_CTX *tls_server_ctx(const char *cert, const char *key, char *err, size_t errlen);

#endif
