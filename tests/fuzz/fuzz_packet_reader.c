/*
 * fuzz_packet_reader: the bounded payload readers of src/proto/packet.c (pcur_*)
 * and the connection-phase decoders of src/proto/handshake.c (hs_is_ssl_request,
 * hs_parse_response, hs_parse_change_user), which read bytes sent by any
 * client before it has logged in.
 *
 * The whole input is offered to each handshake decoder as one payload. Then
 * the input is read once more as a small program for the cursor readers:
 * byte 0 gives the number of operation bytes that follow (0..31), the rest
 * is the payload they walk. Checked: the cursor never leaves its payload,
 * returned spans lie inside it, an error is sticky, and lenenc / OK / EOF
 * encodings read back to the values written.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/handshake.h"
#include "proto/packet.h"
#include "fuzz_util.h"

static void check_response(const struct hs_response *r)
{
	FUZZ_CHECK(fuzz_terminated(r->user, sizeof r->user), "user not terminated");
	FUZZ_CHECK(fuzz_terminated(r->db, sizeof r->db), "db not terminated");
	FUZZ_CHECK(fuzz_terminated(r->plugin, sizeof r->plugin), "plugin not terminated");
	FUZZ_CHECK(r->auth_len <= sizeof r->auth, "auth_len %zu", r->auth_len);
	FUZZ_CHECK(!r->has_db || r->db[0] != '\0', "has_db with an empty name");
}

static void fuzz_handshake(const uint8_t *data, size_t size)
{
	uint8_t *pl = (uint8_t *)fuzz_dup_exact(data, size);
	struct hs_response r;
	uint32_t tail_caps = 0;

	if (hs_is_ssl_request(pl, size))
		FUZZ_CHECK(size == 32, "SSL request of %zu bytes", size);

	if (hs_parse_response(pl, size, &r) == 0) {
		check_response(&r);
		FUZZ_CHECK(r.caps & CAP_PROTOCOL_41, "accepted a pre-4.1 response");
	}

	if (size >= 4)
		memcpy(&tail_caps, pl + size - 4, 4);
	const uint32_t caps[] = { SHOAL_SERVER_CAPS, 0, CAP_PROTOCOL_41 | CAP_SECURE_CONNECTION,
				  tail_caps, ~0u };
	for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
		if (hs_parse_change_user(pl, size, caps[i], &r) == 0) {
			check_response(&r);
			FUZZ_CHECK(size > 0 && pl[0] == CMD_CHANGE_USER, "not a COM_CHANGE_USER");
		}
	}
	free(pl);
}

static void check_span(const struct pcur *c, const uint8_t *lo, const uint8_t *hi,
		       const void *p, size_t n)
{
	FUZZ_CHECK(c->p >= lo && c->p <= hi, "cursor left its payload");
	if (p) {
		FUZZ_CHECK((const uint8_t *)p >= lo && (const uint8_t *)p + n <= hi,
			   "span outside the payload");
		fuzz_touch(p, n);
	}
}

/* Write v (and an OK / EOF around it) with the encoders, read it back. */
static void roundtrip(uint64_t v, uint16_t status, uint16_t warnings)
{
	struct pbuf b = { 0 };
	struct pcur c;
	bool is_null;

	FUZZ_CHECK(put_lenenc(&b, v) == 0, "put_lenenc");
	FUZZ_CHECK(b.len == lenenc_size(v), "lenenc_size %zu vs %zu written", lenenc_size(v), b.len);
	pcur_init(&c, b.data, b.len);
	FUZZ_CHECK(pcur_lenenc(&c, &is_null) == v && !c.err && !is_null && pcur_left(&c) == 0,
		   "lenenc %llu does not read back", (unsigned long long)v);
	b.len = 0;

	FUZZ_CHECK(pkt_put_ok(&b, 1, v, v >> 7, status, warnings, 0) == 0, "pkt_put_ok");
	FUZZ_CHECK(rd_u24(b.data) == b.len - PKT_HEADER_LEN && b.data[3] == 1, "OK header");
	FUZZ_CHECK(pkt_is_ok(b.data + PKT_HEADER_LEN, b.len - PKT_HEADER_LEN), "OK not an OK");
	pcur_init(&c, b.data + PKT_HEADER_LEN + 1, b.len - PKT_HEADER_LEN - 1);
	FUZZ_CHECK(pcur_lenenc(&c, NULL) == v, "OK affected rows");
	FUZZ_CHECK(pcur_lenenc(&c, NULL) == v >> 7, "OK insert id");
	FUZZ_CHECK(pcur_u16(&c) == status && pcur_u16(&c) == warnings && !c.err, "OK status");
	b.len = 0;

	FUZZ_CHECK(pkt_put_eof(&b, 2, status, warnings, 0) == 0, "pkt_put_eof");
	FUZZ_CHECK(pkt_is_eof(b.data + PKT_HEADER_LEN, b.len - PKT_HEADER_LEN), "EOF not an EOF");
	FUZZ_CHECK(rd_u16(b.data + 5) == warnings && rd_u16(b.data + 7) == status, "EOF fields");
	pbuf_free(&b);
}

static void fuzz_cursor(const uint8_t *data, size_t size)
{
	size_t nops, len;
	const uint8_t *ops;
	uint8_t *pl;
	struct pcur c;

	if (size == 0)
		return;
	nops = data[0] & 31;
	if (nops > size - 1)
		nops = size - 1;
	ops = data + 1;
	len = size - 1 - nops;
	pl = (uint8_t *)fuzz_dup_exact(data + 1 + nops, len);
	pcur_init(&c, pl, len);

	for (size_t i = 0; i < nops; i++) {
		uint8_t op = ops[i];
		const uint8_t *before = c.p;
		bool err_before = c.err;
		const void *sp = NULL;
		size_t n = 0;
		bool is_null;

		switch (op & 7) {
		case 0: FUZZ_CHECK(pcur_u8(&c) == 0 || !c.err, "value after an error"); break;
		case 1: FUZZ_CHECK(pcur_u16(&c) == 0 || !c.err, "value after an error"); break;
		case 2: FUZZ_CHECK(pcur_u32(&c) == 0 || !c.err, "value after an error"); break;
		case 3: {
			uint64_t v = pcur_lenenc(&c, &is_null);

			FUZZ_CHECK(!c.err || v == 0, "value after an error");
			FUZZ_CHECK(!is_null || v == 0, "NULL with a value");
			break;
		}
		case 4:
			n = op >> 3;
			sp = pcur_bytes(&c, n);
			FUZZ_CHECK(!sp == c.err, "pcur_bytes result vs err");
			break;
		case 5:
			sp = pcur_cstr(&c, &n);
			if (sp) {
				FUZZ_CHECK(!c.err, "string with err");
				FUZZ_CHECK(((const uint8_t *)sp)[n] == 0, "no NUL after the string");
				n++; /* the NUL is inside the payload too */
			}
			break;
		case 6:
			sp = pcur_lenenc_str(&c, &n);
			FUZZ_CHECK(sp || n == 0, "length without bytes");
			break;
		case 7: {
			uint64_t v = 0;
			const uint8_t *p = pcur_bytes(&c, 8);

			if (p) {
				memcpy(&v, p, 8);
				v >>= (op >> 3) * 2;
				roundtrip(v, rd_u16(p), rd_u16(p + 2));
			}
			sp = p;
			n = p ? 8 : 0;
			break;
		}
		}
		check_span(&c, pl, pl + len, sp, n);
		if (err_before)
			FUZZ_CHECK(c.err && c.p == before, "a read after an error moved the cursor");
	}
	free(pl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_handshake(data, size);
	fuzz_cursor(data, size);
	return 0;
}
