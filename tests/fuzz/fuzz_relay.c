/*
 * fuzz_relay: the response state machine of src/proto/relay.c, which reads every
 * packet the upstream sends back and decides what the client gets.
 *
 * Input layout:
 *   [0]      command byte (relay_start's cmd)
 *   [1..4]   client capabilities (little-endian)
 *   [5]      mode: 0x01 call relay_upstream(), 0x02 the execute asked for a
 *            cursor (relay_execute_flags), 0x04 progress, 0x40 after a
 *            complete response start the same command again on what is left,
 *            0x80 allow one 16 MiB packet (see below); 0x08, 0x10, 0x20 are
 *            unused (they chose the metadata buffers the relay once had)
 *   [6..7]   n: then n bytes that are skipped (little-endian, cut to what is
 *            there; they were metadata preloaded for the relay)
 *   rest     upstream packets: a 3-byte length and a sequence id from the
 *            input, then the payload. A length past the input's end is cut
 *            to what is left (the header is rewritten to match, as the node
 *            only ever passes whole packets); with mode 0x80, the first
 *            length of 0xffffff becomes a real 16 MiB - 1 payload: 2 bytes
 *            (little-endian) say how many input bytes start it, zeros fill
 *            the rest; so the continuation logic is reached (slow: hence
 *            only once, and only when asked).
 * Each packet goes to relay_feed() until it returns != 0. When the relay
 * waits for a LOAD DATA LOCAL file, the client is taken to have sent it
 * (relay_infile_sent) before the next packet.
 *
 * Checked: relay_feed returns -1, 0 or 1; after 1 the relay is RL_DONE; what
 * it appends to the client's output (when it does not fail) is a sequence of
 * whole packets.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/packet.h"
#include "proto/relay.h"
#include "fuzz_util.h"


static void check_framing(const struct pbuf *out, size_t from)
{
	size_t pos = from;

	while (pos < out->len) {
		FUZZ_CHECK(out->len - pos >= PKT_HEADER_LEN, "a partial header at %zu of %zu", pos, out->len);
		size_t plen = rd_u24(out->data + pos);

		FUZZ_CHECK(out->len - pos - PKT_HEADER_LEN >= plen,
			   "packet at %zu claims %zu bytes, %zu left", pos, plen,
			   out->len - pos - PKT_HEADER_LEN);
		pos += PKT_HEADER_LEN + plen;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pbuf out = { 0 };
	struct relay r;
	uint8_t cmd, mode;
	uint32_t caps;
	size_t pos, n, big = 0;
	uint8_t *pkt = NULL;

	if (size < 8)
		return 0;
	cmd = data[0];
	caps = rd_u32(data + 1);
	mode = data[5];
	n = rd_u16(data + 6);
	pos = 8;
	if (n > size - pos)
		n = size - pos;
	pos += n;

	relay_start(&r, cmd, caps);
	relay_execute_flags(&r, (mode & 0x02) ? 1 : 0);
	if (mode & 0x01)
		relay_upstream(&r, mode & 0x04);

	while (size - pos >= PKT_HEADER_LEN) {
		size_t want = rd_u24(data + pos), have = size - pos - PKT_HEADER_LEN, plen, take, mark;
		uint8_t seq = data[pos + 3];
		int rc;

		pos += PKT_HEADER_LEN;
		if (want == PKT_MAX_PAYLOAD && (mode & 0x80) && !big && have >= 2) {
			plen = PKT_MAX_PAYLOAD;
			take = rd_u16(data + pos);
			pos += 2;
			have -= 2;
			big++;
		} else {
			plen = want < have ? want : have;
			take = plen;
		}
		/* an exact-size copy: ASan sees any read past the packet */
		pkt = malloc(PKT_HEADER_LEN + plen);
		if (!pkt)
			abort();
		wr_u24(pkt, (uint32_t)plen);
		pkt[3] = seq;
		n = take < have ? take : have;
		memcpy(pkt + PKT_HEADER_LEN, data + pos, n);
		if (n < plen)
			memset(pkt + PKT_HEADER_LEN + n, 0, plen - n);
		pos += n;

		if (relay_awaits_infile(&r))
			relay_infile_sent(&r); /* the client sent its file */
		mark = out.len;
		rc = relay_feed(&r, pkt, PKT_HEADER_LEN + plen, &out);
		free(pkt);
		pkt = NULL;
		FUZZ_CHECK(rc >= -1 && rc <= 1, "relay_feed returned %d", rc);
		if (rc < 0) /* the node drops the upstream: nothing more is read */
			break;
		check_framing(&out, mark);
		if (rc == 1) {
			FUZZ_CHECK(r.st == RL_DONE, "complete but in state %d", (int)r.st);
			if (!(mode & 0x40))
				break;
			/* the next command on the same connection */
			relay_start(&r, cmd, caps);
			relay_execute_flags(&r, (mode & 0x02) ? 1 : 0);
			if (mode & 0x01)
				relay_upstream(&r, mode & 0x04);
			/* keep memory bounded: the client has taken its output */
			out.len = 0;
		}
	}
	pbuf_free(&out);
	return 0;
}
