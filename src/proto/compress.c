/*
 * compress.c: the compressed protocol's frames (compress.h): decoding the
 * frames a client sends into the plain packet stream, and framing what the
 * node sends. Declared lengths are checked against the limit before any
 * memory is reserved for them, and a payload must inflate to exactly its
 * declared length. The zlib streams and zstd contexts are per thread (a
 * worker serves its sessions one at a time) and start afresh for every
 * frame.
 */
#define ZLIB_CONST
#include "proto/compress.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

/* Level 1: most of the gain on result sets for a fraction of the CPU of
 * zlib's default (docs/benchmarks.md, "Protocol compression"). A hash
 * table of 2048 entries, not zlib's default 32768: it is cleared for every
 * frame, and most frames are small answers. */
#define DEFLATE_LEVEL Z_BEST_SPEED
#define DEFLATE_MEM_LEVEL 4
#define RAW_COMPACT 65536

static __thread z_stream *t_inflate, *t_deflate;
static __thread ZSTD_CCtx *t_zcompress;
static __thread ZSTD_DCtx *t_zdecompress;

void compress_init(struct compress_state *z, uint32_t max_len)
{
	memset(z, 0, sizeof(*z));
	z->max_len = max_len > COMPRESS_MAX_LEN ? COMPRESS_MAX_LEN : max_len;
}

void compress_free(struct compress_state *z)
{
	pbuf_free(&z->raw);
	pbuf_free(&z->wire);
	z->raw_pos = z->wire_pos = 0;
}

uint8_t compress_zstd_level(int client_level)
{
	if (client_level < COMPRESS_ZSTD_LEVEL_MIN)
		return COMPRESS_ZSTD_LEVEL_MIN; /* (the caller checked it: never) */
	return (uint8_t)(client_level < COMPRESS_ZSTD_LEVEL_SENT_MAX ? client_level
								      : COMPRESS_ZSTD_LEVEL_SENT_MAX);
}

uint32_t compress_limit(uint32_t max_allowed_packet)
{
	/* a frame carries a packet and its header, or a client's buffer of
	 * small packets (64 KiB at most here) */
	uint64_t lim = (max_allowed_packet < 65536 ? 65536 : (uint64_t)max_allowed_packet) +
		       2 * PKT_HEADER_LEN;

	return lim > COMPRESS_MAX_LEN ? COMPRESS_MAX_LEN : (uint32_t)lim;
}

void compress_shrink(struct compress_state *z, size_t keep)
{
	if (z->raw_pos == z->raw.len) {
		z->raw.len = z->raw_pos = 0;
		pbuf_shrink(&z->raw, keep);
	}
	if (z->wire_pos == z->wire.len) {
		z->wire.len = z->wire_pos = 0;
		pbuf_shrink(&z->wire, keep);
	}
}

void compress_thread_end(void)
{
	if (t_inflate) {
		inflateEnd(t_inflate);
		free(t_inflate);
		t_inflate = NULL;
	}
	if (t_deflate) {
		deflateEnd(t_deflate);
		free(t_deflate);
		t_deflate = NULL;
	}
	ZSTD_freeCCtx(t_zcompress);
	t_zcompress = NULL;
	ZSTD_freeDCtx(t_zdecompress);
	t_zdecompress = NULL;
}

static z_stream *inflater(void)
{
	if (t_inflate)
		return inflateReset(t_inflate) == Z_OK ? t_inflate : NULL;
	t_inflate = calloc(1, sizeof(*t_inflate));
	if (t_inflate && inflateInit(t_inflate) != Z_OK) {
		free(t_inflate);
		t_inflate = NULL;
	}
	return t_inflate;
}

static z_stream *deflater(void)
{
	if (t_deflate)
		return deflateReset(t_deflate) == Z_OK ? t_deflate : NULL;
	t_deflate = calloc(1, sizeof(*t_deflate));
	if (t_deflate && deflateInit2(t_deflate, DEFLATE_LEVEL, Z_DEFLATED, 15, DEFLATE_MEM_LEVEL,
				      Z_DEFAULT_STRATEGY) != Z_OK) {
		free(t_deflate);
		t_deflate = NULL;
	}
	return t_deflate;
}

static int fail(struct compress_state *z, uint16_t code, const char *msg)
{
	z->err_code = code;
	z->err_state = code == ERR_OUT_OF_RESOURCES ? "HY000" : "08S01";
	z->err_msg = msg;
	return -1;
}

/* Inflate one payload of clen bytes to exactly ulen bytes onto plain. */
static int inflate_payload(struct compress_state *z, const uint8_t *p, uint32_t clen, uint32_t ulen,
			   struct pbuf *plain)
{
	z_stream *s;
	int rc;

	if (pbuf_reserve(plain, ulen) < 0)
		return fail(z, ERR_OUT_OF_RESOURCES, "Out of memory");
	s = inflater();
	if (!s)
		return fail(z, ERR_OUT_OF_RESOURCES, "Out of memory");
	s->next_in = p;
	s->avail_in = clen;
	s->next_out = plain->data + plain->len;
	s->avail_out = ulen;
	rc = inflate(s, Z_FINISH);
	if (rc != Z_STREAM_END || s->avail_out != 0 || s->avail_in != 0)
		return fail(z, ERR_NET_UNCOMPRESS_ERROR, "Couldn't uncompress communication packet");
	plain->len += ulen;
	return 0;
}

/* The same for zstd: the payload must be whole zstd frames (one, as MySQL
 * sends it; zstd's decoder takes several in a row) making exactly ulen
 * bytes. The output is bounded by ulen, already checked against the limit:
 * a frame that would make more fails instead of growing anything. */
static int unzstd_payload(struct compress_state *z, const uint8_t *p, uint32_t clen, uint32_t ulen,
			  struct pbuf *plain)
{
	size_t got;

	if (pbuf_reserve(plain, ulen) < 0)
		return fail(z, ERR_OUT_OF_RESOURCES, "Out of memory");
	if (!t_zdecompress && !(t_zdecompress = ZSTD_createDCtx()))
		return fail(z, ERR_OUT_OF_RESOURCES, "Out of memory");
	got = ZSTD_decompressDCtx(t_zdecompress, plain->data + plain->len, ulen, p, clen);
	if (ZSTD_isError(got) || got != ulen)
		return fail(z, ERR_NET_UNCOMPRESS_ERROR, "Couldn't uncompress communication packet");
	plain->len += ulen;
	return 0;
}

/* A compressed payload, by the algorithm the session negotiated. */
static int expand_payload(struct compress_state *z, const uint8_t *p, uint32_t clen, uint32_t ulen,
			  struct pbuf *plain)
{
	if (z->zstd_level)
		return unzstd_payload(z, p, clen, ulen, plain);
	return inflate_payload(z, p, clen, ulen, plain);
}

/* Client role: renumber the packets in p[0..n), the bytes just decoded
 * (compress.h, rx_seq). A header may be cut across frames. */
static void client_renumber(struct compress_state *z, uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		if (z->rx_left > 0) {
			size_t k = n - i < z->rx_left ? n - i : z->rx_left;

			i += k;
			z->rx_left -= (uint32_t)k;
			continue;
		}
		while (z->rx_have < PKT_HEADER_LEN && i < n) {
			if (z->rx_have == 3)
				p[i] = z->rx_seq;
			z->rx_hdr[z->rx_have++] = p[i++];
		}
		if (z->rx_have == PKT_HEADER_LEN) {
			z->rx_left = rd_u24(z->rx_hdr);
			z->rx_seq++;
			z->rx_have = 0;
		}
	}
}

int compress_frame_ready(const struct compress_state *z)
{
	size_t avail = z->raw.len - z->raw_pos;

	return avail >= COMPRESS_HEADER_LEN &&
	       avail >= COMPRESS_HEADER_LEN + (size_t)rd_u24(z->raw.data + z->raw_pos);
}

static void raw_compact(struct compress_state *z)
{
	if (z->raw_pos == z->raw.len) {
		z->raw.len = z->raw_pos = 0;
	} else if (z->raw_pos > RAW_COMPACT && z->raw_pos * 2 > z->raw.len) {
		pbuf_consume(&z->raw, z->raw_pos);
		z->raw_pos = 0;
	}
}

int compress_decode(struct compress_state *z, struct pbuf *plain, size_t plain_from,
		    size_t plain_limit)
{
	int frames = 0;

	while (plain->len - plain_from < plain_limit) {
		size_t avail = z->raw.len - z->raw_pos;
		const uint8_t *h;
		uint32_t clen, ulen;
		size_t start;

		if (avail < COMPRESS_HEADER_LEN)
			break;
		h = z->raw.data + z->raw_pos;
		clen = rd_u24(h);
		ulen = rd_u24(h + 4);
		if (clen > z->max_len || ulen > z->max_len)
			return fail(z, ERR_NET_PACKET_TOO_LARGE,
				    "Got a packet bigger than 'max_allowed_packet' bytes");
		/* a command's frames start at 0; within one, ids run on from
		 * the last frame either side sent (as MariaDB checks them) */
		if (!z->client_role && h[3] != 0 && h[3] != z->seq)
			return fail(z, ERR_NET_PACKETS_OUT_OF_ORDER, "Got packets out of order");
		if (avail < COMPRESS_HEADER_LEN + (size_t)clen)
			break;
		start = plain->len;
		if (ulen == 0) {
			if (pbuf_append(plain, h + COMPRESS_HEADER_LEN, clen) < 0)
				return fail(z, ERR_OUT_OF_RESOURCES, "Out of memory");
		} else if (expand_payload(z, h + COMPRESS_HEADER_LEN, clen, ulen, plain) < 0) {
			return -1;
		}
		if (z->client_role)
			client_renumber(z, plain->data + start, plain->len - start);
		z->seq = (uint8_t)(h[3] + 1);
		z->heard = true;
		z->raw_pos += COMPRESS_HEADER_LEN + clen;
		frames++;
	}
	raw_compact(z);
	return frames;
}

/* Compress n plain bytes into dst, which has room for n - 1: a payload
 * is sent compressed only if that makes it smaller. Returns the compressed
 * length, 0 when it would not be smaller, -1 on failure. */
static long deflate_into(const uint8_t *p, size_t n, uint8_t *dst)
{
	z_stream *s = deflater();
	int rc;

	if (!s)
		return -1; /* out of memory */
	s->next_in = p;
	s->avail_in = (uInt)n;
	s->next_out = dst;
	s->avail_out = (uInt)n - 1;
	rc = deflate(s, Z_FINISH);
	if (rc == Z_STREAM_END)
		return (long)s->total_out;
	return rc == Z_OK || rc == Z_BUF_ERROR ? 0 : -1;
}

/* The same with zstd, one zstd frame (what MySQL sends and reads). */
static long zstd_into(uint8_t level, const uint8_t *p, size_t n, uint8_t *dst)
{
	size_t r;

	if (!t_zcompress && !(t_zcompress = ZSTD_createCCtx()))
		return -1; /* out of memory */
	r = ZSTD_compressCCtx(t_zcompress, dst, n - 1, p, n, level);
	if (!ZSTD_isError(r))
		return (long)r;
	return ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall ? 0 : -1;
}

/* One frame of n (<= COMPRESS_CHUNK) plain bytes: compressed when that
 * makes it smaller, else as it is (uncompressed length 0). */
static int put_frame(struct compress_state *z, const uint8_t *p, size_t n)
{
	uint8_t *h, *payload;
	long clen = 0;

	if (pbuf_reserve(&z->wire, COMPRESS_HEADER_LEN + n) < 0)
		return -1;
	h = z->wire.data + z->wire.len;
	payload = h + COMPRESS_HEADER_LEN;
	if (n >= COMPRESS_MIN_LEN)
		clen = z->zstd_level ? zstd_into(z->zstd_level, p, n, payload) : deflate_into(p, n, payload);
	if (clen < 0)
		return -1;
	if (clen > 0) {
		wr_u24(h, (uint32_t)clen);
		wr_u24(h + 4, (uint32_t)n);
	} else {
		memcpy(payload, p, n);
		wr_u24(h, (uint32_t)n);
		wr_u24(h + 4, 0);
	}
	h[3] = z->seq++;
	z->wire.len += COMPRESS_HEADER_LEN + (clen > 0 ? (size_t)clen : n);
	return 0;
}

/* Client role: does p start a new command? And follow its packets. The
 * node queues whole packets, so a flush starts at a packet's header unless
 * a packet of a previous flush is not all framed yet. */
static void client_track(struct compress_state *z, const uint8_t *p, size_t n)
{
	size_t off = z->pkt_left;

	if (z->pkt_left == 0 && n >= PKT_HEADER_LEN && p[3] == 0 && (z->heard || z->last_seq != 255))
		z->seq = 0;
	z->heard = false;
	while (off + PKT_HEADER_LEN <= n) {
		z->last_seq = p[off + 3];
		off += PKT_HEADER_LEN + rd_u24(p + off);
	}
	z->pkt_left = off > n ? (uint32_t)(off - n) : 0;
	z->rx_seq = (uint8_t)(z->last_seq + 1); /* the server's answer goes on from there */
}

int compress_encode(struct compress_state *z, const uint8_t *p, size_t n)
{
	int frames = 0;

	if (z->wire_pos == z->wire.len)
		z->wire.len = z->wire_pos = 0;
	if (z->client_role && n > 0)
		client_track(z, p, n);
	while (n > 0) {
		size_t k = n < COMPRESS_CHUNK ? n : COMPRESS_CHUNK;

		if (put_frame(z, p, k) < 0)
			return -1;
		p += k;
		n -= k;
		frames++;
	}
	return frames;
}
