/*
 * auth.h: password checks for the MySQL authentication plugins that clients
 * use against Shoal, and the matching client-side computations that Shoal's
 * tests use. Pure functions over bytes: no I/O, no global state except the
 * RSA key pair, which is loaded or generated once at start.
 *
 *   mysql_native_password:  token = SHA1(pw) XOR SHA1(nonce(20) . SHA1(SHA1(pw)))
 *   caching_sha2_password:  token = SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) . nonce(20))
 *     full auth: cleartext password + NUL over TLS, or RSA-OAEP encrypted
 *     (password + NUL) XOR nonce (repeating) with the server's public key.
 */
#ifndef SHOAL_AUTH_H
#define SHOAL_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTH_NONCE_LEN 20
#define AUTH_NATIVE_TOKEN_LEN 20
#define AUTH_SHA2_TOKEN_LEN 32

/* Fill nonce with AUTH_NONCE_LEN random bytes that are printable-safe for the
 * greeting (no NUL, no '$'), from OpenSSL's RAND_bytes. Returns 0 or -1. */
int auth_make_nonce(uint8_t nonce[AUTH_NONCE_LEN]);

/* Client side: compute the token for password pw. An empty password yields an
 * empty token (*out_len = 0). */
void auth_native_token(const char *pw, const uint8_t nonce[AUTH_NONCE_LEN],
		       uint8_t out[AUTH_NATIVE_TOKEN_LEN], size_t *out_len);
void auth_sha2_token(const char *pw, const uint8_t nonce[AUTH_NONCE_LEN],
		     uint8_t out[AUTH_SHA2_TOKEN_LEN], size_t *out_len);

/* Server side: does token (as sent by the client) prove knowledge of pw?
 * Constant-time comparison. An empty password matches only an empty token. */
bool auth_native_check(const char *pw, const uint8_t nonce[AUTH_NONCE_LEN],
		       const uint8_t *token, size_t token_len);
bool auth_sha2_check(const char *pw, const uint8_t nonce[AUTH_NONCE_LEN],
		     const uint8_t *token, size_t token_len);

/* Constant-time check of a cleartext password (caching_sha2 full auth over
 * TLS: the client sends pw followed by NUL; len may include the NUL). */
bool auth_cleartext_check(const char *pw, const uint8_t *data, size_t len);

/* RSA for caching_sha2_password full auth without TLS. Load the key pair from
 * PEM files, or generate a 2048-bit pair when priv_path is NULL or empty.
 * Returns 0, or -1 with a message in err. Call once at start. */
int auth_rsa_init(const char *priv_path, const char *pub_path, char *err, size_t errlen);
/* The public key as PEM text (NUL-terminated), for the client's request 0x02. */
const char *auth_rsa_public_pem(size_t *len);
/* Decrypt an RSA-OAEP (SHA1, PKCS#1 v2) blob with the private key, XOR with
 * the nonce (repeating), and check against pw in constant time. */
bool auth_rsa_check(const char *pw, const uint8_t nonce[AUTH_NONCE_LEN],
		    const uint8_t *blob, size_t blob_len);
/* Client side of the same (for tests): encrypt with a given public PEM. Returns
 * the blob length, or -1. out must hold at least 512 bytes. */
int auth_rsa_encrypt_for_test(const char *pub_pem, const char *pw,
			      const uint8_t nonce[AUTH_NONCE_LEN], uint8_t *out);

/* Free the key pair (for leak checkers at exit). */
void auth_rsa_free(void);

#endif
