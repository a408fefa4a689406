/*
 * fuzz_compress: the compressed-protocol frame reader of src/compress.c
 * (compress_decode), which reads bytes any client that negotiated
 * CLIENT_COMPRESS sends after its login.
 *
 * Input: byte 0 picks the frame length limit (1 KiB << (b % 15), capped at
 * the 3-byte maximum), byte 1 the decode limit (256 << (b % 16)), byte 2
 * the size of the pieces the rest is fed in (1..256, as reads of a socket
 * would cut it); the rest is the stream of frames. After each piece,
 * frames are decoded while the output holds less than the decode limit,
 * and the output is consumed at random points as the node would.
 * Checked: an error is one of 1153, 1156, 1157 or 1041 with its SQLSTATE
 * and ends the run; the output grows only by whole frames' declared
 * lengths (never more than a frame's limit per frame, so memory stays
 * within limit + one frame); the raw position stays inside the buffer; and
 * everything decoded, framed again by compress_encode, decodes back to the
 * same bytes.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/compress.h"
#include "fuzz_util.h"

static void check_round_trip(const uint8_t *p, size_t n)
{
	struct compress_state tx, rx;
	struct pbuf out = { 0 };
	int frames;

	compress_init(&tx, COMPRESS_MAX_LEN);
	compress_init(&rx, COMPRESS_MAX_LEN);
	frames = compress_encode(&tx, p, n);
	FUZZ_CHECK(frames >= 0, "encode failed");
	FUZZ_CHECK((size_t)frames == (n + COMPRESS_CHUNK - 1) / COMPRESS_CHUNK, "%d frames for %zu bytes", frames, n);
	if (tx.wire.len)
		pbuf_append(&rx.raw, tx.wire.data, tx.wire.len);
	FUZZ_CHECK(compress_decode(&rx, &out, 0, COMPRESS_MAX_LEN) == frames, "re-decode: %d frames", frames);
	FUZZ_CHECK(out.len == n && (n == 0 || memcmp(out.data, p, n) == 0), "round trip differs");
	compress_free(&tx);
	compress_free(&rx);
	pbuf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct compress_state z;
	struct pbuf plain = { 0 }, all = { 0 };
	uint32_t max_len;
	size_t limit, piece, pos = 3, from = 0;
	bool failed = false;

	if (size < 3)
		return 0;
	max_len = (uint32_t)(1024u << (data[0] % 15));
	limit = (size_t)256 << (data[1] % 16);
	piece = (size_t)data[2] + 1;
	compress_init(&z, max_len);
	while (pos < size && !failed) {
		size_t n = size - pos < piece ? size - pos : piece;

		pbuf_append(&z.raw, data + pos, n);
		pos += n;
		for (;;) {
			size_t before = plain.len;
			int r = compress_decode(&z, &plain, from, limit);

			FUZZ_CHECK(z.raw_pos <= z.raw.len, "raw_pos %zu past %zu", z.raw_pos, z.raw.len);
			if (r < 0) {
				FUZZ_CHECK(z.err_code == ERR_NET_PACKET_TOO_LARGE || z.err_code == ERR_NET_UNCOMPRESS_ERROR ||
					   z.err_code == ERR_NET_PACKETS_OUT_OF_ORDER || z.err_code == ERR_OUT_OF_RESOURCES,
					   "error code %u", z.err_code);
				FUZZ_CHECK(z.err_msg && z.err_state && strlen(z.err_state) == 5, "error text");
				failed = true;
				break;
			}
			FUZZ_CHECK(plain.len - before <= (size_t)r * max_len, "%zu bytes from %d frames",
				   plain.len - before, r);
			FUZZ_CHECK(before - from >= limit || plain.len - from <= limit + max_len,
				   "output past the limit by more than a frame");
			/* the node consumes what it decoded (all of it, or part) */
			if (plain.len > from) {
				size_t take = (plain.len - from) / ((data[pos - 1] & 3) + 1);

				if (take == 0)
					take = plain.len - from;
				pbuf_append(&all, plain.data + from, take);
				from += take;
			}
			if (from == plain.len) {
				plain.len = 0;
				from = 0;
			}
			if (r == 0 && plain.len - from < limit)
				break;
			if (r == 0 && plain.len - from >= limit) {
				/* over the limit: consume everything */
				pbuf_append(&all, plain.data + from, plain.len - from);
				plain.len = from = 0;
			}
		}
	}
	if (!failed && plain.len > from)
		pbuf_append(&all, plain.data + from, plain.len - from);
	if (!failed && all.len <= 4 * COMPRESS_CHUNK)
		check_round_trip(all.data, all.len);
	compress_free(&z);
	pbuf_free(&plain);
	pbuf_free(&all);
	return 0;
}
