/*
 * test_handshake.c: unit tests for src/proto/handshake.c: the exact byte layout of
 * the greeting, auth-switch and auth-more-data packets; HandshakeResponse41
 * parsing with every optional part, with the 1-byte and NUL-terminated auth
 * forms, length limits, attribute validation, the zstd level byte after the
 * attributes (MySQL's one byte, Connector/C's four); every truncated prefix of
 * several responses and CMD_CHANGE_USER payloads (copied to exact-size heap
 * blocks so ASan catches any over-read); the SSL request test; and a
 * deterministic fuzz pass over random and mutated inputs.
 */
#include "proto/handshake.h"
#include "tap.h"

#include <stdlib.h>

static uint8_t *dup_exact(const void *p, size_t n)
{
	uint8_t *d = malloc(n ? n : 1);
	if (n)
		memcpy(d, p, n);
	return d;
}

static int parse_exact(const uint8_t *p, size_t n, struct hs_response *out)
{
	uint8_t *d = dup_exact(p, n);
	int rc = hs_parse_response(d, n, out);
	free(d);
	return rc;
}

static int parse_cu_exact(const uint8_t *p, size_t n, uint32_t caps, struct hs_response *out)
{
	uint8_t *d = dup_exact(p, n);
	int rc = hs_parse_change_user(d, n, caps, out);
	free(d);
	return rc;
}

static void put_cstr(struct pbuf *b, const char *s)
{
	pbuf_append(b, s, strlen(s) + 1);
}

static void put_lstr(struct pbuf *b, const char *s)
{
	put_lenenc_str(b, s, strlen(s));
}

static const uint8_t nonce[AUTH_NONCE_LEN] = {
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x08,
	0x19, 0x2a, 0x3b, 0x4c, 0x5d, 0x6e, 0x7f, 0x10, 0x21, 0x32, 0x43, 0x54,
};

/* ---- server packets ----------------------------------------------------- */

static void test_greeting(void)
{
	struct pbuf b = {0};
	const char *ver = "8.0.36-shoal";
	const char *plugin = PLUGIN_SHA2;
	uint32_t caps = SHOAL_SERVER_CAPS | CAP_SSL;
	size_t vlen = strlen(ver), plen = strlen(plugin);
	size_t want = 1 + vlen + 1 + 4 + 8 + 1 + 2 + 1 + 2 + 2 + 1 + 10 + 12 + 1 + plen + 1;
	const uint8_t *p;
	size_t o;

	is_int(hs_put_greeting(&b, 0x01020304, ver, nonce, caps, 45, plugin, 0), 0, "hs_put_greeting");
	is_int(b.len, 4 + want, "  total length");
	is_int(rd_u24(b.data), want, "  header payload length");
	is_int(b.data[3], 0, "  sequence id 0");
	p = b.data + 4;
	is_int(p[0], 10, "  protocol version 10");
	is_str((const char *)p + 1, ver, "  server version, NUL-terminated");
	o = 1 + vlen + 1;
	is_int(rd_u32(p + o), 0x01020304, "  connection id (LE)");
	o += 4;
	is_mem(p + o, nonce, 8, "  nonce part 1 (8 bytes)");
	o += 8;
	is_int(p[o], 0, "  filler 0");
	o += 1;
	is_int(rd_u16(p + o), caps & 0xffff, "  capability flags, low 16 bits");
	o += 2;
	is_int(p[o], 45, "  collation");
	o += 1;
	is_int(rd_u16(p + o), ST_AUTOCOMMIT, "  status flags (autocommit)");
	o += 2;
	is_int(rd_u16(p + o), caps >> 16, "  capability flags, high 16 bits");
	o += 2;
	is_int(p[o], 21, "  auth plugin data length 21");
	o += 1;
	is_mem(p + o, "\0\0\0\0\0\0\0\0\0\0", 10, "  10 reserved zero bytes");
	o += 10;
	is_mem(p + o, nonce + 8, 12, "  nonce part 2 (12 bytes)");
	o += 12;
	is_int(p[o], 0, "  NUL after the nonce");
	o += 1;
	is_str((const char *)p + o, plugin, "  auth plugin name");
	o += plen + 1;
	is_int(o, want, "  nothing after the plugin name's NUL");
	ok(((uint32_t)rd_u16(p + 1 + vlen + 1 + 13) | ((uint32_t)rd_u16(p + 1 + vlen + 1 + 18) << 16)) == caps,
	   "  low|high caps reassemble to the offered caps");
	ok(!(caps & (CAP_COMPRESS | CAP_ZSTD_COMPRESSION)) && (caps & CAP_DEPRECATE_EOF) &&
	   (caps & CAP_PLUGIN_AUTH),
	   "  SHOAL_SERVER_CAPS: no COMPRESS nor ZSTD (the setting adds them); DEPRECATE_EOF and PLUGIN_AUTH offered");

	/* full byte image */
	{
		struct pbuf e = {0};
		uint8_t h[4];
		put_u8(&e, 10);
		put_cstr(&e, ver);
		put_u32(&e, 0x01020304);
		pbuf_append(&e, nonce, 8);
		put_u8(&e, 0);
		put_u16(&e, (uint16_t)caps);
		put_u8(&e, 45);
		put_u16(&e, 2);
		put_u16(&e, (uint16_t)(caps >> 16));
		put_u8(&e, 21);
		pbuf_append(&e, "\0\0\0\0\0\0\0\0\0\0", 10);
		pbuf_append(&e, nonce + 8, 12);
		put_u8(&e, 0);
		put_cstr(&e, plugin);
		wr_u24(h, (uint32_t)e.len);
		h[3] = 0;
		ok(b.len == e.len + 4 && memcmp(b.data, h, 4) == 0 && memcmp(b.data + 4, e.data, e.len) == 0,
		   "  whole greeting matches the independently built image");
		pbuf_free(&e);
	}
	pbuf_free(&b);

	/* appends after existing data */
	put_u8(&b, 0x99);
	is_int(hs_put_greeting(&b, 7, "5.7", nonce, SHOAL_SERVER_CAPS, 33, PLUGIN_NATIVE, 0), 0,
	       "hs_put_greeting appends");
	is_int(b.data[0], 0x99, "  existing byte kept");
	is_int(rd_u24(b.data + 1), b.len - 5, "  header at the append offset");
	is_str((const char *)b.data + b.len - strlen(PLUGIN_NATIVE) - 1, PLUGIN_NATIVE, "  native plugin name at the end");
	pbuf_free(&b);
}

static void test_auth_switch_more(void)
{
	struct pbuf b = {0}, e = {0};
	uint8_t h[4];

	is_int(hs_put_auth_switch(&b, 2, PLUGIN_NATIVE, nonce), 0, "hs_put_auth_switch");
	put_u8(&e, 0xfe);
	put_cstr(&e, PLUGIN_NATIVE);
	pbuf_append(&e, nonce, AUTH_NONCE_LEN);
	put_u8(&e, 0);
	wr_u24(h, (uint32_t)e.len);
	h[3] = 2;
	is_int(b.len, 4 + 1 + 22 + 20 + 1, "  length: 0xFE, plugin NUL, 20-byte nonce, NUL");
	ok(memcmp(b.data, h, 4) == 0 && memcmp(b.data + 4, e.data, e.len) == 0, "  exact bytes (seq 2)");
	pbuf_free(&b);
	pbuf_free(&e);

	is_int(hs_put_more_data(&b, 4, "\x03", 1), 0, "hs_put_more_data fast-auth-success");
	is_int(b.len, 6, "  6 bytes");
	is_mem(b.data, "\x02\x00\x00\x04\x01\x03", 6, "  exact bytes");
	pbuf_free(&b);
	is_int(hs_put_more_data(&b, 3, "", 0), 0, "hs_put_more_data empty");
	is_mem(b.data, "\x01\x00\x00\x03\x01", 5, "  exact bytes");
	is_int(b.len, 5, "  5 bytes");
	pbuf_free(&b);
}

/* ---- HandshakeResponse41 ----------------------------------------------- */

struct resp_layout {
	size_t after_auth, after_db, after_plugin, total;
};

/* Build a response. auth_form: 0 = lenenc, 1 = 1-byte length, 2 = NUL-terminated. */
static void build_response(struct pbuf *b, uint32_t caps, const char *user, const uint8_t *auth,
			   size_t auth_len, const char *db, const char *plugin, bool attrs,
			   struct resp_layout *lay)
{
	put_u32(b, caps);
	put_u32(b, 0x01000000);
	put_u8(b, 45);
	pbuf_append(b, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 23);
	put_cstr(b, user);
	if (caps & CAP_PLUGIN_AUTH_LENENC) {
		put_lenenc_str(b, auth, auth_len);
	} else if (caps & CAP_SECURE_CONNECTION) {
		put_u8(b, (uint8_t)auth_len);
		pbuf_append(b, auth, auth_len);
	} else {
		pbuf_append(b, auth, auth_len);
		put_u8(b, 0);
	}
	if (lay)
		lay->after_auth = b->len;
	if (db)
		put_cstr(b, db);
	if (lay)
		lay->after_db = b->len;
	if (plugin)
		put_cstr(b, plugin);
	if (lay)
		lay->after_plugin = b->len;
	if (attrs) {
		struct pbuf a = {0};
		put_lstr(&a, "_client_name");
		put_lstr(&a, "libmariadb");
		put_lstr(&a, "_os");
		put_lstr(&a, "Linux");
		put_lstr(&a, "_pid");
		put_lstr(&a, "12345");
		put_lstr(&a, "empty");
		put_lstr(&a, "");
		put_lenenc_str(b, a.data, a.len);
		pbuf_free(&a);
	}
	if (lay)
		lay->total = b->len;
}

#define FULL_CAPS (CAP_LONG_PASSWORD | CAP_PROTOCOL_41 | CAP_SECURE_CONNECTION | CAP_PLUGIN_AUTH | \
		   CAP_PLUGIN_AUTH_LENENC | CAP_CONNECT_WITH_DB | CAP_CONNECT_ATTRS | \
		   CAP_MULTI_RESULTS | CAP_DEPRECATE_EOF | CAP_SESSION_TRACK)

static uint8_t token[300];

static void test_parse_full(void)
{
	struct pbuf b = {0};
	struct hs_response r;
	struct resp_layout lay;

	for (size_t i = 0; i < sizeof(token); i++)
		token[i] = (uint8_t)(0x80 + i * 13);
	token[3] = 0; /* a NUL inside the token is fine */

	build_response(&b, FULL_CAPS, "alice", token, 32, "shop", PLUGIN_SHA2, true, &lay);
	is_int(parse_exact(b.data, b.len, &r), 0, "response with every optional part");
	is_int(r.caps, FULL_CAPS, "  caps");
	is_int(r.max_packet, 0x01000000, "  max packet");
	is_int(r.collation, 45, "  collation");
	is_str(r.user, "alice", "  user");
	is_int(r.auth_len, 32, "  auth length");
	is_mem(r.auth, token, 32, "  auth bytes (with an inner NUL)");
	ok(r.has_db, "  has_db");
	is_str(r.db, "shop", "  db");
	is_str(r.plugin, PLUGIN_SHA2, "  plugin");

	/* the truncation sweep: every strict prefix */
	{
		int all = 1, boundary_ok = 1;
		size_t first_bad = 0;
		for (size_t k = 0; k < b.len; k++) {
			int rc = parse_exact(b.data, k, &r);
			if (k == lay.after_db || k == lay.after_plugin) {
				/* the packet ends before plugin/attrs: tolerated */
				if (rc == 0 && !(strcmp(r.user, "alice") == 0 && r.auth_len == 32 &&
						 strcmp(r.db, "shop") == 0))
					boundary_ok = 0;
				continue;
			}
			if (k == lay.after_auth)
				continue; /* checked below */
			if (rc != -1 && all) {
				all = 0;
				first_bad = k;
			}
		}
		if (!ok(all, "every other truncated prefix (0..%zu bytes) returns -1", b.len - 1))
			printf("#   prefix of %zu bytes returned 0\n", first_bad);
		ok(boundary_ok, "prefixes ending at a field boundary parse consistently (no crash)");
		is_int(parse_exact(b.data, lay.after_plugin, &r), 0,
		       "ends after the plugin (attrs absent though CONNECT_ATTRS): accepted");
		is_str(r.plugin, PLUGIN_SHA2, "  plugin");
		is_int(parse_exact(b.data, lay.after_db, &r), 0,
		       "ends after the db (plugin absent though PLUGIN_AUTH): accepted, like mysqld");
		is_str(r.plugin, "", "  no plugin");
		/* mysqld (parse_client_handshake_packet) fails the handshake when
		 * CONNECT_WITH_DB is set and no NUL-terminated db follows */
		ok(parse_exact(b.data, lay.after_auth, &r) == -1, "ends right after the auth data though CONNECT_WITH_DB is set: -1");
	}
	pbuf_free(&b);

	/* trailing bytes after the attributes (MySQL 8's zstd level byte) */
	build_response(&b, FULL_CAPS, "alice", token, 20, "shop", PLUGIN_NATIVE, true, NULL);
	put_u8(&b, 3);
	is_int(parse_exact(b.data, b.len, &r), 0, "a trailing byte after the attributes is ignored");
	is_int(r.zstd_level, -1, "  and is no zstd level without CLIENT_ZSTD_COMPRESSION_ALGORITHM");
	pbuf_free(&b);

	/* empty attribute block */
	build_response(&b, FULL_CAPS, "bob", token, 20, "", PLUGIN_NATIVE, false, NULL);
	put_u8(&b, 0);
	is_int(parse_exact(b.data, b.len, &r), 0, "empty attribute block");
	ok(!r.has_db && r.db[0] == 0, "  empty db: has_db false");
	pbuf_free(&b);
}

static void test_parse_forms(void)
{
	struct pbuf b = {0};
	struct hs_response r;
	struct resp_layout lay;
	uint32_t caps;

	/* the 1-byte auth length form (no PLUGIN_AUTH_LENENC) */
	caps = CAP_PROTOCOL_41 | CAP_SECURE_CONNECTION | CAP_PLUGIN_AUTH | CAP_CONNECT_WITH_DB;
	build_response(&b, caps, "carol", token, 20, "db1", PLUGIN_NATIVE, false, &lay);
	is_int(parse_exact(b.data, b.len, &r), 0, "1-byte auth length form");
	is_str(r.user, "carol", "  user");
	is_int(r.auth_len, 20, "  auth length 20");
	is_mem(r.auth, token, 20, "  auth bytes");
	is_str(r.db, "db1", "  db");
	is_str(r.plugin, PLUGIN_NATIVE, "  plugin");
	{
		int all = 1;
		for (size_t k = 0; k < lay.after_auth; k++)
			if (parse_exact(b.data, k, &r) != -1)
				all = 0;
		for (size_t k = lay.after_auth + 1; k < lay.after_db; k++)
			if (parse_exact(b.data, k, &r) != -1)
				all = 0;
		for (size_t k = lay.after_db + 1; k < lay.after_plugin; k++)
			if (parse_exact(b.data, k, &r) != -1)
				all = 0;
		ok(all, "1-byte form: truncated prefixes inside fields return -1");
	}
	pbuf_free(&b);

	/* 1-byte form with a length byte >= 0xfb (would be a lenenc marker) */
	build_response(&b, caps, "carol", token, 252, "db1", PLUGIN_NATIVE, false, NULL);
	is_int(parse_exact(b.data, b.len, &r), 0, "1-byte form with 252 auth bytes");
	is_int(r.auth_len, 252, "  auth length 252");
	is_mem(r.auth, token, 252, "  auth bytes");
	pbuf_free(&b);

	/* lenenc form with a 3-byte length */
	build_response(&b, FULL_CAPS, "dave", token, 300, "db", PLUGIN_SHA2, true, NULL);
	is_int(parse_exact(b.data, b.len, &r), 0, "lenenc auth of 300 bytes");
	is_int(r.auth_len, 300, "  auth length 300");
	is_mem(r.auth, token, 300, "  auth bytes");
	pbuf_free(&b);

	/* empty auth, no db, no plugin, no attrs */
	caps = CAP_PROTOCOL_41 | CAP_SECURE_CONNECTION;
	build_response(&b, caps, "eve", token, 0, NULL, NULL, false, NULL);
	is_int(parse_exact(b.data, b.len, &r), 0, "minimal response, empty auth");
	ok(r.auth_len == 0 && !r.has_db && r.plugin[0] == 0, "  no auth, db or plugin");
	pbuf_free(&b);

	/* pre-4.1 auth: NUL-terminated */
	caps = CAP_PROTOCOL_41;
	build_response(&b, caps, "frank", (const uint8_t *)"abcdefgh", 8, NULL, NULL, false, NULL);
	is_int(parse_exact(b.data, b.len, &r), 0, "NUL-terminated auth (no SECURE_CONNECTION)");
	is_int(r.auth_len, 8, "  auth length 8");
	is_mem(r.auth, "abcdefgh", 8, "  auth bytes");
	pbuf_free(&b);

	/* CONNECT_WITH_DB not set: the next string is the plugin */
	caps = CAP_PROTOCOL_41 | CAP_SECURE_CONNECTION | CAP_PLUGIN_AUTH;
	build_response(&b, caps, "gina", token, 20, NULL, PLUGIN_NATIVE, false, NULL);
	is_int(parse_exact(b.data, b.len, &r), 0, "no CONNECT_WITH_DB");
	ok(!r.has_db, "  no db");
	is_str(r.plugin, PLUGIN_NATIVE, "  plugin");
	pbuf_free(&b);

	/* not 4.1 */
	build_response(&b, CAP_SECURE_CONNECTION, "old", token, 20, NULL, NULL, false, NULL);
	is_int(parse_exact(b.data, b.len, &r), -1, "no PROTOCOL_41: -1");
	pbuf_free(&b);
}

static void test_parse_limits(void)
{
	struct pbuf b = {0};
	struct hs_response r;
	char s[600];

	memset(s, 'u', sizeof(s));
	s[HS_USER_MAX - 1] = 0;
	build_response(&b, FULL_CAPS, s, token, 20, "db", PLUGIN_NATIVE, true, NULL);
	is_int(parse_exact(b.data, b.len, &r), 0, "user of HS_USER_MAX-1 bytes");
	is_int(strlen(r.user), HS_USER_MAX - 1, "  kept whole");
	pbuf_free(&b);
	memset(s, 'u', sizeof(s));
	s[HS_USER_MAX] = 0;
	build_response(&b, FULL_CAPS, s, token, 20, "db", PLUGIN_NATIVE, true, NULL);
	is_int(parse_exact(b.data, b.len, &r), -1, "user of HS_USER_MAX bytes: -1");
	pbuf_free(&b);

	memset(s, 'd', sizeof(s));
	s[HS_DB_MAX - 1] = 0;
	build_response(&b, FULL_CAPS, "u", token, 20, s, PLUGIN_NATIVE, true, NULL);
	is_int(parse_exact(b.data, b.len, &r), 0, "db of HS_DB_MAX-1 bytes");
	is_int(strlen(r.db), HS_DB_MAX - 1, "  kept whole");
	pbuf_free(&b);
	s[HS_DB_MAX - 1] = 'd';
	s[HS_DB_MAX] = 0;
	build_response(&b, FULL_CAPS, "u", token, 20, s, PLUGIN_NATIVE, true, NULL);
	is_int(parse_exact(b.data, b.len, &r), -1, "db of HS_DB_MAX bytes: -1");
	pbuf_free(&b);

	memset(s, 'p', sizeof(s));
	s[HS_PLUGIN_MAX - 1] = 0;
	build_response(&b, FULL_CAPS, "u", token, 20, "db", s, true, NULL);
	is_int(parse_exact(b.data, b.len, &r), 0, "plugin of HS_PLUGIN_MAX-1 bytes");
	pbuf_free(&b);
	s[HS_PLUGIN_MAX - 1] = 'p';
	s[HS_PLUGIN_MAX] = 0;
	build_response(&b, FULL_CAPS, "u", token, 20, "db", s, true, NULL);
	is_int(parse_exact(b.data, b.len, &r), -1, "plugin of HS_PLUGIN_MAX bytes: -1");
	pbuf_free(&b);

	{
		static uint8_t big[HS_AUTH_MAX + 1];
		build_response(&b, FULL_CAPS, "u", big, HS_AUTH_MAX, "db", PLUGIN_SHA2, true, NULL);
		is_int(parse_exact(b.data, b.len, &r), 0, "auth of HS_AUTH_MAX bytes");
		is_int(r.auth_len, HS_AUTH_MAX, "  auth length");
		pbuf_free(&b);
		build_response(&b, FULL_CAPS, "u", big, HS_AUTH_MAX + 1, "db", PLUGIN_SHA2, true, NULL);
		is_int(parse_exact(b.data, b.len, &r), -1, "auth of HS_AUTH_MAX+1 bytes: -1");
		pbuf_free(&b);
	}

	/* auth lenenc claiming more than the packet holds */
	build_response(&b, FULL_CAPS, "u", token, 0, NULL, NULL, false, NULL);
	b.len--; /* drop the 0x00 length */
	pbuf_append(&b, "\xfe\xff\xff\xff\xff\xff\xff\xff\xff" "abc", 12);
	is_int(parse_exact(b.data, b.len, &r), -1, "auth lenenc of UINT64_MAX: -1");
	pbuf_free(&b);
	build_response(&b, FULL_CAPS, "u", token, 0, NULL, NULL, false, NULL);
	b.data[b.len - 1] = 0xfb; /* NULL marker as an auth length */
	pbuf_append(&b, "", 1);   /* the (empty) schema CONNECT_WITH_DB requires */
	is_int(parse_exact(b.data, b.len, &r), 0, "auth lenenc 0xFB (NULL) reads as empty");
	is_int(r.auth_len, 0, "  auth length 0");
	pbuf_free(&b);
	/* 1-byte form claiming 200 bytes, 20 present */
	build_response(&b, CAP_PROTOCOL_41 | CAP_SECURE_CONNECTION, "u", token, 20, NULL, NULL, false, NULL);
	b.data[b.len - 21] = 200;
	is_int(parse_exact(b.data, b.len, &r), -1, "1-byte auth length beyond the packet: -1");
	pbuf_free(&b);
}

static void test_parse_attrs(void)
{
	struct pbuf b = {0}, a = {0};
	struct hs_response r;
	uint32_t caps = CAP_PROTOCOL_41 | CAP_SECURE_CONNECTION | CAP_PLUGIN_AUTH | CAP_CONNECT_ATTRS;

	/* a key without a value */
	build_response(&b, caps, "u", token, 20, NULL, PLUGIN_NATIVE, false, NULL);
	put_lstr(&a, "k1");
	put_lstr(&a, "v1");
	put_lstr(&a, "k2");
	put_lenenc_str(&b, a.data, a.len);
	is_int(parse_exact(b.data, b.len, &r), -1, "attrs: key without value: -1");
	pbuf_free(&b);
	pbuf_free(&a);

	/* a value that runs past the block (but not past the packet) */
	build_response(&b, caps, "u", token, 20, NULL, PLUGIN_NATIVE, false, NULL);
	put_lenenc(&b, 4);
	pbuf_append(&b, "\x01k\x05v", 4);
	pbuf_append(&b, "alue!", 5);
	is_int(parse_exact(b.data, b.len, &r), -1, "attrs: value longer than the block: -1");
	pbuf_free(&b);

	/* block length past the packet */
	build_response(&b, caps, "u", token, 20, NULL, PLUGIN_NATIVE, false, NULL);
	put_lenenc(&b, 100);
	put_lstr(&b, "k");
	put_lstr(&b, "v");
	is_int(parse_exact(b.data, b.len, &r), -1, "attrs: block length past the packet: -1");
	pbuf_free(&b);

	/* 0xFF inside the block */
	build_response(&b, caps, "u", token, 20, NULL, PLUGIN_NATIVE, false, NULL);
	put_lenenc(&b, 2);
	pbuf_append(&b, "\xff\x00", 2);
	is_int(parse_exact(b.data, b.len, &r), -1, "attrs: invalid lenenc 0xFF: -1");
	pbuf_free(&b);

	/* a 300-byte value (3-byte lenenc inside the block) */
	build_response(&b, caps, "u", token, 20, NULL, PLUGIN_NATIVE, false, NULL);
	put_lstr(&a, "program_name");
	put_lenenc_str(&a, token, 300);
	put_lenenc_str(&b, a.data, a.len);
	is_int(parse_exact(b.data, b.len, &r), 0, "attrs: 300-byte value");
	pbuf_free(&b);
	pbuf_free(&a);
}

static void test_ssl_request(void)
{
	uint8_t p[33] = {0};
	uint8_t *x;

	wr_u32(p, CAP_PROTOCOL_41 | CAP_SSL | CAP_SECURE_CONNECTION);
	wr_u32(p + 4, 0x01000000);
	p[8] = 45;
	x = dup_exact(p, 32);
	ok(hs_is_ssl_request(x, 32), "32-byte SSL request");
	free(x);
	ok(!hs_is_ssl_request(p, 31), "31 bytes: not an SSL request");
	ok(!hs_is_ssl_request(p, 33), "33 bytes: not an SSL request");
	x = dup_exact(p, 0);
	ok(!hs_is_ssl_request(x, 0), "0 bytes: not an SSL request (no read)");
	free(x);
	wr_u32(p, CAP_PROTOCOL_41 | CAP_SECURE_CONNECTION);
	ok(!hs_is_ssl_request(p, 32), "32 bytes without CAP_SSL: no");
	wr_u32(p, CAP_SSL);
	ok(!hs_is_ssl_request(p, 32), "32 bytes with CAP_SSL but not 4.1: no");
	{
		struct pbuf b = {0};
		struct hs_response r;
		build_response(&b, FULL_CAPS | CAP_SSL, "alice", token, 20, "db", PLUGIN_NATIVE, true, NULL);
		ok(!hs_is_ssl_request(b.data, b.len), "a full response with CAP_SSL is not an SSL request");
		is_int(parse_exact(p, 32, &r), -1, "hs_parse_response on an SSL request: -1");
		pbuf_free(&b);
	}
}

/* ---- CMD_CHANGE_USER ----------------------------------------------------- */

struct cu_layout {
	size_t after_db, after_coll, after_plugin, total;
};

static void build_change_user(struct pbuf *b, bool secure, const char *user, const uint8_t *auth,
			      size_t auth_len, const char *db, int collation, const char *plugin,
			      bool attrs, struct cu_layout *lay)
{
	put_u8(b, CMD_CHANGE_USER);
	put_cstr(b, user);
	if (secure) {
		put_u8(b, (uint8_t)auth_len);
		pbuf_append(b, auth, auth_len);
	} else {
		pbuf_append(b, auth, auth_len);
		put_u8(b, 0);
	}
	put_cstr(b, db);
	if (lay)
		lay->after_db = b->len;
	if (collation >= 0)
		put_u16(b, (uint16_t)collation);
	if (lay)
		lay->after_coll = b->len;
	if (plugin)
		put_cstr(b, plugin);
	if (lay)
		lay->after_plugin = b->len;
	if (attrs) {
		struct pbuf a = {0};
		put_lstr(&a, "_client_name");
		put_lstr(&a, "libmysql");
		put_lenenc_str(b, a.data, a.len);
		pbuf_free(&a);
	}
	if (lay)
		lay->total = b->len;
}

static void test_change_user(void)
{
	struct pbuf b = {0};
	struct hs_response r;
	struct cu_layout lay;
	uint32_t caps = FULL_CAPS;

	/* with plugin and attrs */
	build_change_user(&b, true, "bob", token, 20, "inventory", 45, PLUGIN_NATIVE, true, &lay);
	is_int(parse_cu_exact(b.data, b.len, caps, &r), 0, "change user with plugin and attrs");
	is_int(r.caps, caps, "  caps are the session's");
	is_str(r.user, "bob", "  user");
	is_int(r.auth_len, 20, "  auth length");
	is_mem(r.auth, token, 20, "  auth bytes");
	ok(r.has_db, "  has_db");
	is_str(r.db, "inventory", "  db");
	is_int(r.collation, 45, "  collation");
	is_str(r.plugin, PLUGIN_NATIVE, "  plugin");
	{
		int all = 1;
		size_t bad = 0;
		for (size_t k = 0; k < b.len; k++) {
			int rc = parse_cu_exact(b.data, k, caps, &r);
			int want = (k == lay.after_db || k == lay.after_coll || k == lay.after_plugin) ? 0 : -1;
			if (rc != want && all) {
				all = 0;
				bad = k;
			}
		}
		if (!ok(all, "change user: every prefix returns -1 except at optional-part boundaries"))
			printf("#   prefix of %zu bytes\n", bad);
		parse_cu_exact(b.data, lay.after_db, caps, &r);
		ok(r.collation == 0 && r.plugin[0] == 0 && strcmp(r.db, "inventory") == 0,
		   "  ends after db: no collation, no plugin");
		parse_cu_exact(b.data, lay.after_coll, caps, &r);
		ok(r.collation == 45 && r.plugin[0] == 0, "  ends after collation: collation, no plugin");
	}
	pbuf_free(&b);

	/* without plugin or attrs; the session has neither capability */
	caps = CAP_PROTOCOL_41 | CAP_SECURE_CONNECTION | CAP_CONNECT_WITH_DB;
	build_change_user(&b, true, "carl", token, 20, "", 33, NULL, false, NULL);
	is_int(parse_cu_exact(b.data, b.len, caps, &r), 0, "change user without plugin or attrs");
	is_str(r.user, "carl", "  user");
	ok(!r.has_db && r.db[0] == 0, "  empty db: has_db false");
	is_int(r.collation, 33, "  collation");
	is_str(r.plugin, "", "  no plugin");
	pbuf_free(&b);

	/* a plugin name present although the session lacks PLUGIN_AUTH: ignored */
	build_change_user(&b, true, "carl", token, 20, "x", 33, PLUGIN_NATIVE, false, NULL);
	is_int(parse_cu_exact(b.data, b.len, caps, &r), 0, "trailing plugin without PLUGIN_AUTH: ignored");
	is_str(r.plugin, "", "  no plugin");
	pbuf_free(&b);

	/* the 1-byte auth form even when the session has PLUGIN_AUTH_LENENC:
	 * a 252-byte token starts with 0xFC, which lenenc would misread */
	build_change_user(&b, true, "dora", token, 252, "db", 45, PLUGIN_SHA2, false, NULL);
	is_int(parse_cu_exact(b.data, b.len, FULL_CAPS, &r), 0, "change user: 1-byte auth length of 252");
	is_int(r.auth_len, 252, "  auth length 252");
	is_mem(r.auth, token, 252, "  auth bytes");
	is_str(r.plugin, PLUGIN_SHA2, "  plugin");
	pbuf_free(&b);

	/* NUL-terminated auth when the session lacks SECURE_CONNECTION */
	build_change_user(&b, false, "ed", (const uint8_t *)"scramble", 8, "db", 8, NULL, false, NULL);
	is_int(parse_cu_exact(b.data, b.len, CAP_PROTOCOL_41, &r), 0, "change user: NUL-terminated auth");
	is_int(r.auth_len, 8, "  auth length 8");
	is_mem(r.auth, "scramble", 8, "  auth bytes");
	is_int(r.collation, 8, "  collation");
	pbuf_free(&b);

	/* malformed */
	build_change_user(&b, true, "bob", token, 20, "db", 45, NULL, false, NULL);
	b.data[0] = CMD_QUERY;
	is_int(parse_cu_exact(b.data, b.len, FULL_CAPS, &r), -1, "not CMD_CHANGE_USER: -1");
	pbuf_free(&b);
	build_change_user(&b, true, "bob", token, 20, "db", 45, NULL, false, NULL);
	b.data[1 + 4] = 100; /* auth length beyond the packet */
	is_int(parse_cu_exact(b.data, b.len, FULL_CAPS, &r), -1, "change user: auth length beyond the packet: -1");
	pbuf_free(&b);
	build_change_user(&b, true, "bob", token, 20, "db", 45, PLUGIN_NATIVE, false, NULL);
	put_lenenc(&b, 50); /* attrs block past the end */
	put_lstr(&b, "k");
	is_int(parse_cu_exact(b.data, b.len, FULL_CAPS, &r), -1, "change user: attrs past the end: -1");
	pbuf_free(&b);
	{
		char s[HS_USER_MAX + 1];
		memset(s, 'u', HS_USER_MAX);
		s[HS_USER_MAX] = 0;
		build_change_user(&b, true, s, token, 20, "db", 45, NULL, false, NULL);
		is_int(parse_cu_exact(b.data, b.len, FULL_CAPS, &r), -1, "change user: user too long: -1");
		pbuf_free(&b);
	}
	is_int(parse_cu_exact((const uint8_t *)"", 0, FULL_CAPS, &r), -1, "change user: empty payload: -1");
	is_int(parse_cu_exact((const uint8_t *)"\x11", 1, FULL_CAPS, &r), -1, "change user: command byte only: -1");
}

/* ---- fuzz ----------------------------------------------------------------- */

/* CLIENT_ZSTD_COMPRESSION_ALGORITHM: the level is the byte right after
 * the connect attributes (MySQL's client, 8.0.18+), whatever its value
 * (login.c checks the range); Connector/C sends it as int<4>. */
static void test_parse_zstd(void)
{
	struct pbuf b = {0};
	struct hs_response r;
	uint32_t caps = FULL_CAPS | CAP_ZSTD_COMPRESSION;
	static const int levels[] = { 1, 3, 22, 0, 23, 255 };

	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		build_response(&b, caps, "alice", token, 32, "shop", PLUGIN_SHA2, true, NULL);
		put_u8(&b, (uint8_t)levels[i]);
		ok(parse_exact(b.data, b.len, &r) == 0, "zstd: level byte %d after the attributes: parsed",
		   levels[i]);
		ok(r.zstd_level == levels[i] && strcmp(r.plugin, PLUGIN_SHA2) == 0 && strcmp(r.db, "shop") == 0,
		   "  level %d, and the fields before it as without it", levels[i]);
		pbuf_free(&b);
	}
	/* Connector/C (MariaDB's, with its zstd plugin): int<4>, of which
	 * MySQL's server reads the first byte */
	build_response(&b, caps, "alice", token, 32, "shop", PLUGIN_SHA2, true, NULL);
	put_u32(&b, 3);
	is_int(parse_exact(b.data, b.len, &r), 0, "zstd: Connector/C's 4-byte level: parsed");
	is_int(r.zstd_level, 3, "  level 3 (its first byte; the rest unread)");
	pbuf_free(&b);
	/* no attributes flag: the byte follows the plugin name */
	build_response(&b, caps & ~CAP_CONNECT_ATTRS, "alice", token, 32, "shop", PLUGIN_NATIVE, false, NULL);
	put_u8(&b, 19);
	is_int(parse_exact(b.data, b.len, &r), 0, "zstd: without connect attributes: parsed");
	ok(r.zstd_level == 19 && strcmp(r.plugin, PLUGIN_NATIVE) == 0, "  level 19 after the plugin name");
	pbuf_free(&b);
	/* the flag without its byte: parsed, the login refuses it (1043) */
	build_response(&b, caps, "alice", token, 32, "shop", PLUGIN_SHA2, true, NULL);
	is_int(parse_exact(b.data, b.len, &r), 0, "zstd: the flag with no level byte: parsed");
	is_int(r.zstd_level, -1, "  level -1 (none came)");
	pbuf_free(&b);
	/* COM_CHANGE_USER has none, whatever the session negotiated */
	build_change_user(&b, true, "bob", token, 20, "inventory", 45, PLUGIN_NATIVE, true, NULL);
	put_u8(&b, 3);
	is_int(parse_cu_exact(b.data, b.len, caps, &r), 0, "zstd: a change user in a zstd session: parsed");
	is_int(r.zstd_level, -1, "  no level read from it");
	pbuf_free(&b);
}

static uint32_t rng = 0x12345678;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

static void test_fuzz(void)
{
	struct pbuf base = {0}, cub = {0};
	struct hs_response r;
	uint8_t buf[700];
	int n_ok = 0, n_runs = 0, n_over = 0;

	build_response(&base, FULL_CAPS, "alice", token, 32, "shop", PLUGIN_SHA2, true, NULL);
	build_change_user(&cub, true, "bob", token, 20, "inventory", 45, PLUGIN_NATIVE, true, NULL);
	for (int i = 0; i < 20000; i++, n_runs++) {
		size_t n;
		int rc;

		if (i % 2 == 0) {
			/* mutate a valid response: flip bytes, cut it */
			n = rnd() % (base.len + 1);
			memcpy(buf, base.data, n);
			for (int m = rnd() % 4; m >= 0; m--)
				if (n)
					buf[rnd() % n] = (uint8_t)rnd();
		} else {
			n = rnd() % 120;
			for (size_t k = 0; k < n; k++)
				buf[k] = (uint8_t)rnd();
			if (n >= 4 && (rnd() & 1))
				wr_u32(buf, rnd() | CAP_PROTOCOL_41);
		}
		rc = parse_exact(buf, n, &r);
		if (rc == 0) {
			n_ok++;
			if (strlen(r.user) >= HS_USER_MAX || r.auth_len > HS_AUTH_MAX ||
			    strlen(r.db) >= HS_DB_MAX || strlen(r.plugin) >= HS_PLUGIN_MAX)
				n_over++;
		}
		hs_is_ssl_request(buf, n);
		/* the change-user parser, on mutated change-user payloads */
		n = rnd() % (cub.len + 1);
		memcpy(buf, cub.data, n);
		if (n)
			buf[rnd() % n] = (uint8_t)rnd();
		parse_cu_exact(buf, n, rnd(), &r);
	}
	ok(n_runs == 20000 && n_over == 0,
	   "20000 fuzzed inputs parsed, every accepted one within its bounds (%d accepted, %d over)",
	   n_ok, n_over);
	pbuf_free(&base);
	pbuf_free(&cub);
}

int main(void)
{
	test_greeting();
	test_auth_switch_more();
	test_parse_full();
	test_parse_forms();
	test_parse_limits();
	test_parse_attrs();
	test_parse_zstd();
	test_ssl_request();
	test_change_user();
	test_fuzz();
	return done_testing();
}
