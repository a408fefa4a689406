/*
 * auth.c: password verification for the MySQL authentication plugins that
 * clients use against Shoal (mysql_native_password, caching_sha2_password fast
 * auth, cleartext and RSA-OAEP full auth), plus the matching client-side
 * computations used by the tests. Owns the greeting nonce generator and the
 * process-wide RSA key pair (loaded or generated once by auth_rsa_init, then
 * read-only, so the checks are safe to call from any thread).
 *
 * All comparisons of secret-dependent bytes use CRYPTO_memcmp. Token checks
 * compute the expected token first and always compare a full-size buffer, so a
 * wrong-length token costs the same as a wrong token. A NULL password never
 * matches anything (fail closed); the client-side helpers treat it as "".
 * Every failure path clears OpenSSL's per-thread error queue so that stale
 * errors cannot confuse later SSL_get_error() calls on the same thread.
 */
#include "proto/auth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#define AUTH_RSA_MAX_BYTES 512      /* 4096-bit keys at most */
#define AUTH_RSA_MIN_BITS 1024
#define AUTH_KEY_FILE_MAX (64 * 1024)

static EVP_PKEY *g_rsa_key;         /* private key (with public part) */
static char *g_rsa_pub_pem;         /* SubjectPublicKeyInfo PEM, NUL-terminated */
static size_t g_rsa_pub_pem_len;

/* ---- nonce ------------------------------------------------------------- */

int auth_make_nonce(uint8_t nonce[AUTH_NONCE_LEN])
{
	if (RAND_bytes(nonce, AUTH_NONCE_LEN) != 1) {
		ERR_clear_error();
		return -1;
	}
	for (size_t i = 0; i < AUTH_NONCE_LEN; i++) {
		uint8_t b = nonce[i] & 0x7f;
		if (b == 0)
			b = 1;
		else if (b == '$')
			b = '%';
		nonce[i] = b;
	}
	return 0;
}

/* ---- hashing helpers ----------------------------------------------------- */

/* out = H(a . b); b may be NULL with blen 0. Returns 0 or -1. */
static int digest2(const EVP_MD *md, const void *a, size_t alen,
		   const void *b, size_t blen, uint8_t *out)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok = ctx != NULL &&
		 EVP_DigestInit_ex(ctx, md, NULL) == 1 &&
		 EVP_DigestUpdate(ctx, a, alen) == 1 &&
		 (blen == 0 || EVP_DigestUpdate(ctx, b, blen) == 1) &&
		 EVP_DigestFinal_ex(ctx, out, NULL) == 1;
	EVP_MD_CTX_free(ctx);
	if (!ok) {
		ERR_clear_error();
		return -1;
	}
	return 0;
}

/*
 * The scramble shared by both plugins (hlen is the digest size):
 *   h1 = H(pw); h2 = H(h1); h3 = nonce_first ? H(nonce . h2) : H(h2 . nonce)
 *   out = h1 XOR h3
 * Always computes the full token, even for "", so timing does not depend on
 * whether the password is empty. Returns 0 or -1.
 */
static int scramble(const EVP_MD *md, size_t hlen, bool nonce_first,
		    const char *pw, const uint8_t nonce[AUTH_NONCE_LEN], uint8_t *out)
{
	uint8_t h1[EVP_MAX_MD_SIZE], h2[EVP_MAX_MD_SIZE], h3[EVP_MAX_MD_SIZE];
	int rc = -1;

	if (digest2(md, pw, strlen(pw), NULL, 0, h1) != 0 ||
	    digest2(md, h1, hlen, NULL, 0, h2) != 0)
		goto out;
	if (nonce_first)
		rc = digest2(md, nonce, AUTH_NONCE_LEN, h2, hlen, h3);
	else
		rc = digest2(md, h2, hlen, nonce, AUTH_NONCE_LEN, h3);
	if (rc == 0) {
		for (size_t i = 0; i < hlen; i++)
			out[i] = h1[i] ^ h3[i];
	}
out:
	OPENSSL_cleanse(h1, sizeof(h1));
	OPENSSL_cleanse(h2, sizeof(h2));
	OPENSSL_cleanse(h3, sizeof(h3));
	return rc;
}

/*
 * Constant-time token check: expected holds a full hlen-byte token; the
 * expected length is 0 for an empty password, else hlen. Always compares hlen
 * bytes (against a dummy buffer when the lengths differ).
 */
static bool token_matches(const uint8_t *expected, size_t hlen, bool pw_empty,
			  const uint8_t *token, size_t token_len)
{
	static const uint8_t dummy[EVP_MAX_MD_SIZE];
	size_t want_len = pw_empty ? 0 : hlen;
	const uint8_t *src = dummy;

	if (token_len == hlen && token != NULL)
		src = token;
	int diff = CRYPTO_memcmp(expected, src, hlen);
	if (token_len != want_len)
		return false;
	return pw_empty || diff == 0;
}

static bool token_check(const EVP_MD *md, size_t hlen, bool nonce_first,
			const char *pw, const uint8_t nonce[AUTH_NONCE_LEN],
			const uint8_t *token, size_t token_len)
{
	uint8_t expected[EVP_MAX_MD_SIZE];
	bool ok;

	if (pw == NULL || nonce == NULL)
		return false;
	if (scramble(md, hlen, nonce_first, pw, nonce, expected) != 0)
		return false;
	ok = token_matches(expected, hlen, pw[0] == '\0', token, token_len);
	OPENSSL_cleanse(expected, sizeof(expected));
	return ok;
}

/* ---- mysql_native_password / caching_sha2_password fast auth ------------ */

void auth_native_token(const char *pw, const uint8_t nonce[AUTH_NONCE_LEN],
		       uint8_t out[AUTH_NATIVE_TOKEN_LEN], size_t *out_len)
{
	*out_len = 0;
	if (pw == NULL || pw[0] == '\0')
		return;
	if (scramble(EVP_sha1(), AUTH_NATIVE_TOKEN_LEN, true, pw, nonce, out) == 0)
		*out_len = AUTH_NATIVE_TOKEN_LEN;
}

void auth_sha2_token(const char *pw, const uint8_t nonce[AUTH_NONCE_LEN],
		     uint8_t out[AUTH_SHA2_TOKEN_LEN], size_t *out_len)
{
	*out_len = 0;
	if (pw == NULL || pw[0] == '\0')
		return;
	if (scramble(EVP_sha256(), AUTH_SHA2_TOKEN_LEN, false, pw, nonce, out) == 0)
		*out_len = AUTH_SHA2_TOKEN_LEN;
}

bool auth_native_check(const char *pw, const uint8_t nonce[AUTH_NONCE_LEN],
		       const uint8_t *token, size_t token_len)
{
	return token_check(EVP_sha1(), AUTH_NATIVE_TOKEN_LEN, true, pw, nonce,
			   token, token_len);
}

bool auth_sha2_check(const char *pw, const uint8_t nonce[AUTH_NONCE_LEN],
		     const uint8_t *token, size_t token_len)
{
	return token_check(EVP_sha256(), AUTH_SHA2_TOKEN_LEN, false, pw, nonce,
			   token, token_len);
}

/* ---- cleartext ----------------------------------------------------------- */

/*
 * Compare the candidate bytes cand[0..len) with pw in constant time with
 * respect to their contents and lengths: both are hashed with SHA-256 and the
 * digests compared with CRYPTO_memcmp (equal digests imply equal lengths).
 */
static bool bytes_equal_pw(const char *pw, const uint8_t *cand, size_t len)
{
	uint8_t hp[EVP_MAX_MD_SIZE], hc[EVP_MAX_MD_SIZE];
	bool ok = false;

	if (digest2(EVP_sha256(), pw, strlen(pw), NULL, 0, hp) == 0 &&
	    digest2(EVP_sha256(), cand, len, NULL, 0, hc) == 0)
		ok = CRYPTO_memcmp(hp, hc, AUTH_SHA2_TOKEN_LEN) == 0;
	OPENSSL_cleanse(hp, sizeof(hp));
	OPENSSL_cleanse(hc, sizeof(hc));
	return ok;
}

bool auth_cleartext_check(const char *pw, const uint8_t *data, size_t len)
{
	static const uint8_t empty[1];

	if (pw == NULL)
		return false;
	if (data == NULL) {
		if (len != 0)
			return false;
		data = empty;
	}
	if (len > 0 && data[len - 1] == '\0')
		len--;                  /* "pw\0": the NUL is the terminator */
	return bytes_equal_pw(pw, data, len);
}

/* ---- RSA key pair ------------------------------------------------------ */

static void set_err(char *err, size_t errlen, const char *fmt, const char *path,
		    const char *why)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, fmt, path, why);
}

/* The most recent queued OpenSSL error as text (or a fallback); clears the queue. */
static const char *ossl_reason(char *buf, size_t len)
{
	unsigned long e = ERR_peek_last_error();

	if (e != 0)
		ERR_error_string_n(e, buf, len);
	else
		snprintf(buf, len, "not a PEM-encoded RSA key");
	ERR_clear_error();
	return buf;
}

/* Read a whole (small) file into a NUL-terminated heap buffer. */
static uint8_t *read_small_file(const char *path, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	size_t n;

	if (f == NULL) {
		set_err(err, errlen, "cannot open key file %s: %s", path, strerror(errno));
		return NULL;
	}
	buf = malloc(AUTH_KEY_FILE_MAX + 1);
	if (buf == NULL) {
		fclose(f);
		set_err(err, errlen, "cannot read key file %s: %s", path, "out of memory");
		return NULL;
	}
	n = fread(buf, 1, AUTH_KEY_FILE_MAX + 1, f);
	if (ferror(f) || n > AUTH_KEY_FILE_MAX || n == 0) {
		set_err(err, errlen, "cannot read key file %s: %s", path,
			ferror(f) ? strerror(errno) : n == 0 ? "file is empty" : "file too large");
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/*
 * Decode a PEM RSA key from a file. selection is EVP_PKEY_KEYPAIR for a
 * private key (PKCS#1 or PKCS#8) or EVP_PKEY_PUBLIC_KEY for a public key
 * (SubjectPublicKeyInfo or PKCS#1). Never prompts for a passphrase: an
 * encrypted key fails to decode.
 */
static EVP_PKEY *load_key_file(const char *path, int selection, char *err, size_t errlen)
{
	const char *what = selection == EVP_PKEY_KEYPAIR ? "private" : "public";
	char reason[256], msg[320];
	EVP_PKEY *pkey = NULL;
	OSSL_DECODER_CTX *dctx;
	size_t total = 0, len;
	uint8_t *data = read_small_file(path, &total, err, errlen);
	const unsigned char *p = data;

	if (data == NULL)
		return NULL;
	len = total;
	dctx = OSSL_DECODER_CTX_new_for_pkey(&pkey, "PEM", NULL, "RSA", selection,
					     NULL, NULL);
	if (dctx == NULL || OSSL_DECODER_from_data(dctx, &p, &len) != 1 || pkey == NULL) {
		snprintf(msg, sizeof(msg), "not a valid PEM RSA %s key (%s)", what,
			 ossl_reason(reason, sizeof(reason)));
		set_err(err, errlen, "bad key file %s: %s", path, msg);
		EVP_PKEY_free(pkey);
		pkey = NULL;
	}
	OSSL_DECODER_CTX_free(dctx);
	OPENSSL_cleanse(data, total);
	free(data);
	return pkey;
}

/* Serialise the public half of key as SubjectPublicKeyInfo PEM into g_*. */
static int export_public_pem(EVP_PKEY *key)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *mem = NULL;
	long n;
	int rc = -1;

	if (bio == NULL || PEM_write_bio_PUBKEY(bio, key) != 1)
		goto out;
	n = BIO_get_mem_data(bio, &mem);
	if (n <= 0 || mem == NULL)
		goto out;
	g_rsa_pub_pem = malloc((size_t)n + 1);
	if (g_rsa_pub_pem == NULL)
		goto out;
	memcpy(g_rsa_pub_pem, mem, (size_t)n);
	g_rsa_pub_pem[n] = '\0';
	g_rsa_pub_pem_len = (size_t)n;
	rc = 0;
out:
	BIO_free(bio);
	if (rc != 0)
		ERR_clear_error();
	return rc;
}

static EVP_PKEY *load_key_pair(const char *priv_path, const char *pub_path,
			       char *err, size_t errlen)
{
	EVP_PKEY *key = load_key_file(priv_path, EVP_PKEY_KEYPAIR, err, errlen);
	EVP_PKEY *pub;
	int bits;

	if (key == NULL)
		return NULL;
	bits = EVP_PKEY_get_bits(key);
	if (bits < AUTH_RSA_MIN_BITS || bits > AUTH_RSA_MAX_BYTES * 8) {
		set_err(err, errlen, "bad key file %s: %s", priv_path,
			"RSA key size must be between 1024 and 4096 bits");
		EVP_PKEY_free(key);
		return NULL;
	}
	if (pub_path == NULL || pub_path[0] == '\0')
		return key;
	pub = load_key_file(pub_path, EVP_PKEY_PUBLIC_KEY, err, errlen);
	if (pub == NULL) {
		EVP_PKEY_free(key);
		return NULL;
	}
	if (EVP_PKEY_eq(key, pub) != 1) {
		set_err(err, errlen, "bad key file %s: %s", pub_path,
			"public key does not match the private key");
		ERR_clear_error();
		EVP_PKEY_free(key);
		key = NULL;
	}
	EVP_PKEY_free(pub);
	return key;
}

int auth_rsa_init(const char *priv_path, const char *pub_path, char *err, size_t errlen)
{
	EVP_PKEY *key;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	auth_rsa_free();
	if (priv_path == NULL || priv_path[0] == '\0') {
		key = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
		if (key == NULL) {
			char reason[256];
			set_err(err, errlen, "%s: %s", "cannot generate RSA key",
				ossl_reason(reason, sizeof(reason)));
			return -1;
		}
	} else {
		key = load_key_pair(priv_path, pub_path, err, errlen);
		if (key == NULL)
			return -1;
	}
	if (export_public_pem(key) != 0) {
		set_err(err, errlen, "%s: %s", "cannot encode the RSA public key",
			"PEM_write_bio_PUBKEY failed");
		EVP_PKEY_free(key);
		return -1;
	}
	g_rsa_key = key;
	return 0;
}

const char *auth_rsa_public_pem(size_t *len)
{
	if (len != NULL)
		*len = g_rsa_pub_pem ? g_rsa_pub_pem_len : 0;
	return g_rsa_pub_pem;
}

void auth_rsa_free(void)
{
	EVP_PKEY_free(g_rsa_key);
	g_rsa_key = NULL;
	free(g_rsa_pub_pem);
	g_rsa_pub_pem = NULL;
	g_rsa_pub_pem_len = 0;
}

/* ---- RSA-OAEP full auth ------------------------------------------------ */

/* A PKEY context for OAEP with SHA-1 (digest and MGF1), for enc or dec. */
static EVP_PKEY_CTX *oaep_ctx(EVP_PKEY *key, bool encrypt)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);

	if (ctx == NULL)
		return NULL;
	if ((encrypt ? EVP_PKEY_encrypt_init(ctx) : EVP_PKEY_decrypt_init(ctx)) != 1 ||
	    EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) != 1 ||
	    EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha1()) != 1 ||
	    EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha1()) != 1) {
		EVP_PKEY_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

static void xor_nonce(uint8_t *buf, size_t len, const uint8_t nonce[AUTH_NONCE_LEN])
{
	for (size_t i = 0; i < len; i++)
		buf[i] ^= nonce[i % AUTH_NONCE_LEN];
}

bool auth_rsa_check(const char *pw, const uint8_t nonce[AUTH_NONCE_LEN],
		    const uint8_t *blob, size_t blob_len)
{
	uint8_t plain[AUTH_RSA_MAX_BYTES];
	size_t plain_len = sizeof(plain);
	EVP_PKEY_CTX *ctx;
	bool ok = false;

	if (pw == NULL || nonce == NULL || blob == NULL || g_rsa_key == NULL ||
	    blob_len == 0 || blob_len != (size_t)EVP_PKEY_get_size(g_rsa_key))
		return false;
	ctx = oaep_ctx(g_rsa_key, false);
	if (ctx != NULL && EVP_PKEY_decrypt(ctx, plain, &plain_len, blob, blob_len) == 1 &&
	    plain_len > 0 && plain_len <= sizeof(plain)) {
		xor_nonce(plain, plain_len, nonce);
		/* must be exactly pw followed by one NUL */
		if (plain[plain_len - 1] == '\0')
			ok = bytes_equal_pw(pw, plain, plain_len - 1);
	}
	EVP_PKEY_CTX_free(ctx);
	OPENSSL_cleanse(plain, sizeof(plain));
	if (!ok)
		ERR_clear_error();
	return ok;
}

static EVP_PKEY *public_from_pem(const char *pem)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *key = NULL;

	if (bio != NULL)
		key = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
	BIO_free(bio);
	return key;
}

int auth_rsa_encrypt_for_test(const char *pub_pem, const char *pw,
			      const uint8_t nonce[AUTH_NONCE_LEN], uint8_t *out)
{
	uint8_t plain[AUTH_RSA_MAX_BYTES];
	size_t plain_len, out_len = AUTH_RSA_MAX_BYTES;
	EVP_PKEY *key = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	int rc = -1;

	if (pub_pem == NULL || nonce == NULL || out == NULL)
		return -1;
	if (pw == NULL)
		pw = "";
	plain_len = strlen(pw) + 1;
	key = public_from_pem(pub_pem);
	/* OAEP-SHA1 overhead is 2 * 20 + 2 bytes */
	if (key == NULL || EVP_PKEY_get_size(key) > AUTH_RSA_MAX_BYTES ||
	    plain_len + 42 > (size_t)EVP_PKEY_get_size(key))
		goto out;
	memcpy(plain, pw, plain_len);
	xor_nonce(plain, plain_len, nonce);
	ctx = oaep_ctx(key, true);
	if (ctx != NULL && EVP_PKEY_encrypt(ctx, out, &out_len, plain, plain_len) == 1)
		rc = (int)out_len;
out:
	OPENSSL_cleanse(plain, sizeof(plain));
	EVP_PKEY_CTX_free(ctx);
	EVP_PKEY_free(key);
	if (rc < 0)
		ERR_clear_error();
	return rc;
}
