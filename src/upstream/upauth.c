/*
 * upauth.c: the upstream login on a session's behalf (see upauth.h): the
 * connect arguments for an identity, the "shoal_native_password" client
 * plugin registered with Connector/C, and the rewrite of the upstream's
 * auth switch requests that leads the connector to it.
 *
 * Connector/C's client_plugin.h cannot be included as Debian ships it (it
 * includes a header that is not installed), so the plugin structure is
 * declared here with the layout of its MYSQL_CLIENT_PLUGIN_HEADER, version
 * 0x0100 of the authentication plugin interface.
 */
#include "upstream/upauth.h"

#include <mysql/plugin_auth.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "proto/packet.h"

#define PLUGIN_TYPE_AUTHENTICATION 2
#define PLUGIN_AUTH_INTERFACE 0x0100
#define NATIVE_PLUGIN "mysql_native_password"

struct auth_plugin_decl {
	int type;
	unsigned int interface_version;
	const char *name, *author, *desc;
	unsigned int version[3];
	const char *license;
	void *mysql_api;
	int (*init)(char *, size_t, int, va_list);
	int (*deinit)(void);
	int (*options)(const char *option, const void *);
	int (*authenticate_user)(MYSQL_PLUGIN_VIO *vio, MYSQL *mysql);
};

struct st_mysql_client_plugin;
/* Exported by Connector/C, declared in client_plugin.h. */
extern struct st_mysql_client_plugin *mysql_client_register_plugin(MYSQL *mysql,
	struct st_mysql_client_plugin *plugin);

_Static_assert(sizeof(NATIVE_PLUGIN) == sizeof(UPAUTH_PLUGIN),
	       "the switch request is rewritten in place");

int upauth_native_token(const uint8_t sha1[20], const uint8_t scramble[20], uint8_t token[20])
{
	uint8_t h2[20], mask[20];
	unsigned int n = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) == 1 &&
		 EVP_DigestUpdate(ctx, sha1, 20) == 1 && EVP_DigestFinal_ex(ctx, h2, &n) == 1 &&
		 EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) == 1 &&
		 EVP_DigestUpdate(ctx, scramble, 20) == 1 && EVP_DigestUpdate(ctx, h2, 20) == 1 &&
		 EVP_DigestFinal_ex(ctx, mask, &n) == 1;

	EVP_MD_CTX_free(ctx);
	if (ok)
		for (int i = 0; i < 20; i++)
			token[i] = sha1[i] ^ mask[i];
	OPENSSL_cleanse(mask, sizeof mask);
	return ok ? 0 : -1;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The connector's copy of the password: SHA1(pw) as 40 lower-case hex. */
static bool sha1_from_passwd(const char *p, uint8_t out[20])
{
	if (!p || strlen(p) != 40)
		return false;
	for (int i = 0; i < 20; i++) {
		int hi = hexval((unsigned char)p[2 * i]), lo = hexval((unsigned char)p[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

/* The plugin: read the scramble (the server's auth switch data: 20 bytes
 * and a NUL), answer with the native token. */
static int authenticate_sha1(MYSQL_PLUGIN_VIO *vio, MYSQL *mysql)
{
	uint8_t sha1[20], token[20];
	unsigned char *pkt;
	int n, rc = CR_ERROR;

	n = vio->read_packet(vio, &pkt);
	if (n < 20 || !sha1_from_passwd(mysql->passwd, sha1))
		return CR_ERROR;
	if (upauth_native_token(sha1, pkt, token) == 0 && vio->write_packet(vio, token, 20) == 0)
		rc = CR_OK;
	OPENSSL_cleanse(sha1, sizeof sha1);
	OPENSSL_cleanse(token, sizeof token);
	return rc;
}

static struct auth_plugin_decl sha1_plugin = {
	.type = PLUGIN_TYPE_AUTHENTICATION,
	.interface_version = PLUGIN_AUTH_INTERFACE,
	.name = UPAUTH_PLUGIN,
	.author = "Shoal",
	.desc = "mysql_native_password from SHA1(password)",
	.version = { 1, 0, 0 },
	.license = "GPL",
	.authenticate_user = authenticate_sha1,
};

int upauth_global_init(void)
{
	MYSQL *m = mysql_init(NULL);
	int rc;

	if (!m)
		return -1;
	rc = mysql_client_register_plugin(m, (struct st_mysql_client_plugin *)&sha1_plugin) ? 0 : -1;
	mysql_close(m);
	return rc;
}

bool upauth_prepare(MYSQL *m, const struct ident *id, char *password, size_t cap)
{
	static const char hex[] = "0123456789abcdef";

	password[0] = '\0';
	if (!id || id->cred == USERS_CRED_NONE)
		return false;
	if (id->cred == USERS_CRED_CLEAR) {
		snprintf(password, cap, "%s", id->clear);
		return false;
	}
	if (cap < 41)
		return false;
	for (int i = 0; i < 20; i++) {
		password[2 * i] = hex[id->sha1[i] >> 4];
		password[2 * i + 1] = hex[id->sha1[i] & 15];
	}
	password[40] = '\0';
	mysql_optionsv(m, MYSQL_DEFAULT_AUTH, UPAUTH_PLUGIN);
	return true;
}

void upauth_on_read(bool sha1_login, uint8_t *buf, size_t len, char *asked, size_t cap)
{
	size_t off = 0;

	/* whole packets in this read: an auth switch request is 0xFE, the
	 * plugin name, NUL, its data */
	while (off + PKT_HEADER_LEN < len) {
		size_t n = rd_u24(buf + off);
		uint8_t *p = buf + off + PKT_HEADER_LEN;
		uint8_t *nul;

		if (n == 0 || off + PKT_HEADER_LEN + n > len)
			return;
		nul = n > 1 && p[0] == 0xfe ? memchr(p + 1, 0, n - 1) : NULL;
		if (nul) {
			snprintf(asked, cap, "%.*s", (int)(nul - p - 1), (const char *)p + 1);
			if (sha1_login && strcmp((const char *)p + 1, NATIVE_PLUGIN) == 0)
				memcpy(p + 1, UPAUTH_PLUGIN, sizeof(UPAUTH_PLUGIN) - 1);
		}
		off += PKT_HEADER_LEN + n;
	}
}
