/*
 * tls.c: building the server-side SSL_CTX (TLS 1.2 and later, forward-secret
 * AEAD ciphers for TLS 1.2, OpenSSL's TLS 1.3 suites) and reporting
 * certificate and key problems clearly at start: the setting and file
 * concerned, and what is wrong with it in plain words before OpenSSL's own
 * reason.
 */
#include "proto/tls.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <string.h>

#define TLS12_CIPHERS "ECDHE+AESGCM:ECDHE+CHACHA20:DHE+AESGCM:!aNULL:!eNULL:!MD5:!DSS"

/* Plain words for the usual OpenSSL reasons. */
static const char *plain_reason(unsigned long e)
{
	int lib = ERR_GET_LIB(e), reason = ERR_GET_REASON(e);

	if (lib == ERR_LIB_PEM && reason == PEM_R_NO_START_LINE)
		return "no PEM block of the expected kind in the file";
	if (lib == ERR_LIB_X509 && reason == X509_R_KEY_VALUES_MISMATCH)
		return "the key does not match the certificate";
	if (lib == ERR_LIB_PEM && reason == PEM_R_BAD_PASSWORD_READ)
		return "the key is encrypted (a key without a passphrase is needed)";
	return "unusable";
}

static void ssl_err(char *err, size_t errlen, const char *what, const char *path)
{
	unsigned long e = ERR_peek_error();
	char reason[256];

	ERR_error_string_n(e, reason, sizeof(reason));
	snprintf(err, errlen, "%s '%s': %s (%s)", what, path, plain_reason(e),
		 e ? reason : "unknown error");
	ERR_clear_error();
}

/* The file can be opened for reading; else a message with errno's text. */
static int readable(const char *path, const char *what, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");

	if (!f) {
		snprintf(err, errlen, "%s '%s': cannot read it: %s", what, path, strerror(errno));
		return -1;
	}
	fclose(f);
	return 0;
}

SSL_CTX *tls_server_ctx(const char *cert, const char *key, char *err, size_t errlen)
{
	SSL_CTX *ctx;

	if (readable(cert, "TLS certificate (tls_cert)", err, errlen) < 0 ||
	    readable(key, "TLS key (tls_key)", err, errlen) < 0)
		return NULL;
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx) {
		ssl_err(err, errlen, "cannot create a TLS context", "");
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE |
				 SSL_OP_NO_RENEGOTIATION);
	if (SSL_CTX_set_cipher_list(ctx, TLS12_CIPHERS) != 1) {
		ssl_err(err, errlen, "bad cipher list", TLS12_CIPHERS);
		goto fail;
	}
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		ssl_err(err, errlen, "TLS certificate (tls_cert)", cert);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		ssl_err(err, errlen, "TLS key (tls_key)", key);
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		ssl_err(err, errlen, "TLS key (tls_key)", key);
		goto fail;
	}
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}
