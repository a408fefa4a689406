/*
 * handshake.c: encoders for the server's connection-phase packets and
 * bounds-checked decoders for what clients send during it.
 */
#include "proto/handshake.h"

#include <string.h>

int hs_put_greeting(struct pbuf *b, uint32_t conn_id, const char *version,
		    const uint8_t nonce[AUTH_NONCE_LEN], uint32_t caps,
		    uint8_t collation, const char *plugin, uint32_t ext_caps)
{
	static const uint8_t zeros[6];
	size_t start;
	int rc = pkt_begin(b, &start);

	rc |= put_u8(b, 10);
	rc |= pbuf_append(b, version, strlen(version) + 1);
	rc |= put_u32(b, conn_id);
	rc |= pbuf_append(b, nonce, 8);
	rc |= put_u8(b, 0);
	rc |= put_u16(b, (uint16_t)(caps & 0xffff));
	rc |= put_u8(b, collation);
	rc |= put_u16(b, ST_AUTOCOMMIT);
	rc |= put_u16(b, (uint16_t)(caps >> 16));
	rc |= put_u8(b, AUTH_NONCE_LEN + 1);
	rc |= pbuf_append(b, zeros, 6);
	rc |= put_u32(b, ext_caps);
	rc |= pbuf_append(b, nonce + 8, AUTH_NONCE_LEN - 8);
	rc |= put_u8(b, 0);
	rc |= pbuf_append(b, plugin, strlen(plugin) + 1);
	if (rc)
		return -1;
	pkt_end(b, start, 0);
	return 0;
}

int hs_put_auth_switch(struct pbuf *b, uint8_t seq, const char *plugin,
		       const uint8_t nonce[AUTH_NONCE_LEN])
{
	size_t start;
	int rc = pkt_begin(b, &start);

	rc |= put_u8(b, 0xfe);
	rc |= pbuf_append(b, plugin, strlen(plugin) + 1);
	rc |= pbuf_append(b, nonce, AUTH_NONCE_LEN);
	rc |= put_u8(b, 0);
	if (rc)
		return -1;
	pkt_end(b, start, seq);
	return 0;
}

int hs_put_more_data(struct pbuf *b, uint8_t seq, const void *data, size_t n)
{
	size_t start;
	int rc = pkt_begin(b, &start);

	rc |= put_u8(b, 0x01);
	rc |= pbuf_append(b, data, n);
	if (rc)
		return -1;
	pkt_end(b, start, seq);
	return 0;
}

bool hs_is_ssl_request(const uint8_t *pl, size_t n)
{
	return n == 32 && (rd_u32(pl) & CAP_SSL) && (rd_u32(pl) & CAP_PROTOCOL_41);
}

static int copy_str(char *dst, size_t cap, const char *src, size_t n)
{
	if (!src || n >= cap || memchr(src, 0, n))
		return -1;
	memcpy(dst, src, n);
	dst[n] = 0;
	return 0;
}

static int read_auth(struct pcur *c, uint32_t caps, struct hs_response *out)
{
	const uint8_t *p;
	size_t n;

	if (caps & CAP_PLUGIN_AUTH_LENENC) {
		p = pcur_lenenc_str(c, &n);
	} else if (caps & CAP_SECURE_CONNECTION) {
		n = pcur_u8(c);
		p = pcur_bytes(c, n);
	} else {
		p = (const uint8_t *)pcur_cstr(c, &n);
	}
	if (c->err || n > sizeof(out->auth))
		return -1;
	if (n)
		memcpy(out->auth, p, n);
	out->auth_len = n;
	return 0;
}

/* Connect attributes: a length-prefixed block of key/value pairs. Only
 * validated, not kept. */
static int skip_attrs(struct pcur *c)
{
	uint64_t total = pcur_lenenc(c, NULL);
	struct pcur a;

	if (c->err || total > pcur_left(c))
		return -1;
	pcur_init(&a, c->p, (size_t)total);
	c->p += total;
	while (pcur_left(&a) > 0 && !a.err) {
		size_t n;

		pcur_lenenc_str(&a, &n);
		pcur_lenenc_str(&a, &n);
	}
	return a.err ? -1 : 0;
}

static int read_tail(struct pcur *c, uint32_t caps, struct hs_response *out)
{
	const char *s;
	size_t n;

	if (caps & CAP_CONNECT_WITH_DB) {
		s = pcur_cstr(c, &n);
		if (c->err || copy_str(out->db, sizeof(out->db), s, n) < 0)
			return -1;
		out->has_db = n > 0;
	}
	if ((caps & CAP_PLUGIN_AUTH) && pcur_left(c) > 0) {
		s = pcur_cstr(c, &n);
		if (c->err || copy_str(out->plugin, sizeof(out->plugin), s, n) < 0)
			return -1;
	}
	if ((caps & CAP_CONNECT_ATTRS) && pcur_left(c) > 0 && skip_attrs(c) < 0)
		return -1;
	return 0;
}

int hs_parse_response(const uint8_t *pl, size_t n, struct hs_response *out)
{
	struct pcur c;
	const char *user;
	size_t ulen;

	memset(out, 0, sizeof(*out));
	pcur_init(&c, pl, n);
	out->caps = pcur_u32(&c);
	out->max_packet = pcur_u32(&c);
	out->collation = pcur_u8(&c);
	pcur_bytes(&c, 19);
	out->ext_caps = pcur_u32(&c);
	if (out->caps & CAP_LONG_PASSWORD)
		out->ext_caps = 0; /* CLIENT_MYSQL: the filler is only filler */
	if (c.err || !(out->caps & CAP_PROTOCOL_41))
		return -1;
	user = pcur_cstr(&c, &ulen);
	if (c.err || copy_str(out->user, sizeof(out->user), user, ulen) < 0)
		return -1;
	if (read_auth(&c, out->caps, out) < 0)
		return -1;
	if (read_tail(&c, out->caps, out) < 0)
		return -1;
	/* whether a level was needed, and is one zstd has, is for the caller:
	 * only the capabilities both sides share decide (login.c) */
	out->zstd_level = (out->caps & CAP_ZSTD_COMPRESSION) && pcur_left(&c) > 0 ? pcur_u8(&c) : -1;
	return 0;
}

int hs_parse_change_user(const uint8_t *pl, size_t n, uint32_t caps, struct hs_response *out)
{
	struct pcur c;
	const char *s;
	size_t len;

	memset(out, 0, sizeof(*out));
	out->zstd_level = -1;
	pcur_init(&c, pl, n);
	if (pcur_u8(&c) != CMD_CHANGE_USER)
		return -1;
	out->caps = caps;
	s = pcur_cstr(&c, &len);
	if (c.err || copy_str(out->user, sizeof(out->user), s, len) < 0)
		return -1;
	/* CMD_CHANGE_USER always uses the 1-byte length form with 4.1 auth */
	if (read_auth(&c, caps & ~CAP_PLUGIN_AUTH_LENENC, out) < 0)
		return -1;
	s = pcur_cstr(&c, &len);
	if (c.err || copy_str(out->db, sizeof(out->db), s, len) < 0)
		return -1;
	out->has_db = len > 0;
	if (pcur_left(&c) >= 2)
		out->collation = pcur_u16(&c);
	if ((caps & CAP_PLUGIN_AUTH) && pcur_left(&c) > 0) {
		s = pcur_cstr(&c, &len);
		if (c.err || copy_str(out->plugin, sizeof(out->plugin), s, len) < 0)
			return -1;
	}
	if ((caps & CAP_CONNECT_ATTRS) && pcur_left(&c) > 0 && skip_attrs(&c) < 0)
		return -1;
	return 0;
}
