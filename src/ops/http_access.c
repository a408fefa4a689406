/*
 * http_access.c: the status page's access rule (see http_access.h). The
 * admin login lives in g_config, which the admin changes on the main thread
 * (LOAD SHOAL VARIABLES TO RUNTIME) while this runs on the HTTP thread: the
 * login is copied twice and must read the same both times, so a copy torn
 * by a concurrent change is refused (fail closed), never half-trusted.
 */
#include "ops/http_access.h"

#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "config/config.h"
#include "upstream/users.h"

bool http_peer_is_loopback(const struct sockaddr *addr)
{
	if (!addr)
		return false;
	if (addr->sa_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)(const void *)addr;

		return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	if (addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)(const void *)addr;
		const uint8_t *b = a->sin6_addr.s6_addr;

		if (IN6_IS_ADDR_LOOPBACK(&a->sin6_addr))
			return true;
		return IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) && b[12] == 127;
	}
	return false;
}

/* A stable copy of the admin login, or false when it changed under us. */
static bool admin_login(struct shoal_user *out)
{
	struct shoal_user again;

	memcpy(out, &g_config.admin_user, sizeof(*out));
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(&again, &g_config.admin_user, sizeof(again));
	out->name[sizeof(out->name) - 1] = '\0';
	out->password[sizeof(out->password) - 1] = '\0';
	again.name[sizeof(again.name) - 1] = '\0';
	again.password[sizeof(again.password) - 1] = '\0';
	if (strcmp(out->name, again.name) != 0 || strcmp(out->password, again.password) != 0) {
		OPENSSL_cleanse(&again, sizeof(again));
		return false;
	}
	OPENSSL_cleanse(&again, sizeof(again));
	return true;
}

/* The default admin/admin (plain or hashed): never from a remote peer. */
static bool is_default_login(const struct shoal_user *u)
{
	char hash[USERS_HASH_TEXT_LEN + 1];

	if (strcmp(u->name, "admin") != 0)
		return false;
	if (strcmp(u->password, "admin") == 0)
		return true;
	return users_native_hash_text("admin", hash) == 0 && strcasecmp(u->password, hash) == 0;
}

/* Does pw prove the stored password (plain, or a "*HEX" hash of it)? */
static bool password_matches(const char *stored, const char *pw)
{
	uint8_t want[USERS_HASH_LEN], got[USERS_HASH_LEN];
	size_t n = strlen(stored);

	if (users_parse_hash(stored, want))
		return users_native_hash(pw, got) == 0 && CRYPTO_memcmp(want, got, sizeof(got)) == 0;
	return strlen(pw) == n && CRYPTO_memcmp(stored, pw, n) == 0;
}

/* Decode "Basic base64(user:password)" into buf; user and pw point into it. */
static bool parse_basic(const char *h, char *buf, size_t cap, char **user, char **pw)
{
	size_t len;
	int n;
	char *colon;

	if (!h || strncasecmp(h, "Basic ", 6) != 0)
		return false;
	h += 6;
	while (*h == ' ')
		h++;
	len = strlen(h);
	if (len == 0 || len % 4 != 0 || len / 4 * 3 >= cap)
		return false;
	n = EVP_DecodeBlock((unsigned char *)buf, (const unsigned char *)h, (int)len);
	if (n < 0)
		return false;
	/* EVP_DecodeBlock counts the padding's zero bytes: take them off */
	if (len >= 1 && h[len - 1] == '=')
		n--;
	if (len >= 2 && h[len - 2] == '=')
		n--;
	buf[n] = '\0';
	if (strlen(buf) != (size_t)n) /* a NUL inside */
		return false;
	colon = strchr(buf, ':');
	if (!colon)
		return false;
	*colon = '\0';
	*user = buf;
	*pw = colon + 1;
	return true;
}

bool http_basic_auth_ok(const char *authorization)
{
	struct shoal_user admin;
	char buf[512], *user, *pw;
	bool ok = false;

	if (!parse_basic(authorization, buf, sizeof(buf), &user, &pw))
		return false;
	if (admin_login(&admin) && !is_default_login(&admin))
		ok = password_matches(admin.password, pw) && strcmp(user, admin.name) == 0;
	OPENSSL_cleanse(&admin, sizeof(admin));
	OPENSSL_cleanse(buf, sizeof(buf));
	return ok;
}
