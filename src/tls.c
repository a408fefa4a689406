/*
 * tls.c: building the server-side SSL_CTX and reporting certificate and key
 * problems clearly at start.
 */
#include "tls.h"

#include <openssl/err.h>
#include <stdio.h>

static void ssl_err(char *err, size_t errlen, const char *what, const char *path)
{
	unsigned long e = ERR_get_error();
	char reason[256];

	ERR_error_string_n(e, reason, sizeof(reason));
	snprintf(err, errlen, "%s %s: %s", what, path, e ? reason : "unknown error");
	ERR_clear_error();
}

SSL_CTX *tls_server_ctx(const char *cert, const char *key, char *err, size_t errlen)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (!ctx) {
		ssl_err(err, errlen, "cannot create TLS context", "");
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE |
				 SSL_OP_NO_RENEGOTIATION);
	if (SSL_CTX_set_cipher_list(ctx, "ECDHE+AESGCM:ECDHE+CHACHA20:DHE+AESGCM:!aNULL:!eNULL:!MD5:!DSS") != 1) {
		ssl_err(err, errlen, "bad cipher list", "");
		goto fail;
	}
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		ssl_err(err, errlen, "cannot load TLS certificate", cert);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		ssl_err(err, errlen, "cannot load TLS key", key);
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		ssl_err(err, errlen, "TLS key does not match certificate", cert);
		goto fail;
	}
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}
