/*
 * test_compress.c: unit tests for src/compress.c (the compressed protocol's
 * frames) and its hook in src/sbuf.c: round trips of small, repetitive and
 * incompressible streams, frames split across reads byte by byte, frames
 * sent with uncompressed length 0, the sequence id following the client's,
 * lengths over the limit refused before their bytes arrive, corrupt and
 * mis-declared zlib payloads, the decode limit, and over a socketpair the
 * login's OK sent plain before the first frame; the client role (an
 * upstream link): frame ids from 0 at each command, not at a LOAD DATA
 * file's id 0, and the server's packets renumbered as the plain protocol
 * counts them, a header cut across frames included. zstd sessions
 * (CLIENT_ZSTD_COMPRESSION_ALGORITHM): the same round trips with zstd
 * payloads, a frame zstd made at another level, stored frames, corrupt,
 * mis-declared and wrong-algorithm payloads refused, the level the node
 * compresses at, and the sbuf hook.
 */
#define ZLIB_CONST
#include "proto/compress.h"
#include "proto/sbuf.h"
#include "tap.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

/* The first bytes of a zstd frame (its magic number, little-endian). */
static const uint8_t zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };

static uint8_t *pattern(size_t n, int incompressible)
{
	uint8_t *p = malloc(n ? n : 1);
	uint32_t x = 12345;

	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = incompressible ? (uint8_t)(x >> 16) : (uint8_t)("row,value;"[i % 10]);
	}
	return p;
}

/* Walk the frames of wire: their count, whether each id follows, and
 * whether each compressed payload is of the algorithm (zstd's magic, or a
 * zlib header). */
static int count_frames(const struct pbuf *w, uint8_t first_seq, int *seq_ok, int *n_plain, bool zstd,
			int *algo_ok)
{
	size_t off = 0;
	int n = 0;

	*seq_ok = 1;
	*n_plain = 0;
	*algo_ok = 1;
	while (off + COMPRESS_HEADER_LEN <= w->len) {
		uint32_t clen = rd_u24(w->data + off);
		const uint8_t *pl = w->data + off + COMPRESS_HEADER_LEN;

		if (w->data[off + 3] != (uint8_t)(first_seq + n))
			*seq_ok = 0;
		if (rd_u24(w->data + off + 4) == 0)
			(*n_plain)++;
		else if (clen < 4 || (zstd ? memcmp(pl, zstd_magic, 4) != 0 : (pl[0] & 0x0f) != 8))
			*algo_ok = 0;
		off += COMPRESS_HEADER_LEN + clen;
		n++;
	}
	return off == w->len ? n : -1;
}

/* n bytes framed by a session at zstd_level (0: zlib) and decoded by
 * another: the frames, the stored ones, the bytes, the next id. */
static void round_trip(size_t n, int incompressible, int want_frames, int want_plain, uint8_t zstd_level,
		       const char *name)
{
	struct compress_state tx, rx;
	struct pbuf plain = {0};
	uint8_t *p = pattern(n, incompressible);
	int seq_ok, n_plain, frames, algo_ok;
	char label[128];

	compress_init(&tx, COMPRESS_MAX_LEN);
	compress_init(&rx, COMPRESS_MAX_LEN);
	tx.zstd_level = rx.zstd_level = zstd_level;
	frames = compress_encode(&tx, p, n);
	snprintf(label, sizeof(label), "%s: %d frames made", name, want_frames);
	is_int(frames, want_frames, label);
	snprintf(label, sizeof(label), "%s: frames walk to the end, ids 0.. in order, %s payloads", name,
		 zstd_level ? "zstd" : "zlib");
	ok(count_frames(&tx.wire, 0, &seq_ok, &n_plain, zstd_level != 0, &algo_ok) == want_frames && seq_ok &&
	   algo_ok, "%s", label);
	snprintf(label, sizeof(label), "%s: %d sent with uncompressed length 0", name, want_plain);
	is_int(n_plain, want_plain, label);
	if (!incompressible && n >= 1000) {
		snprintf(label, sizeof(label), "%s: the wire is smaller than the stream", name);
		ok(tx.wire.len < n / 4, "%s", label);
	}
	pbuf_append(&rx.raw, tx.wire.data, tx.wire.len);
	snprintf(label, sizeof(label), "%s: decodes to the same bytes", name);
	ok(compress_decode(&rx, &plain, 0, COMPRESS_MAX_LEN) == want_frames && plain.len == n &&
	   (n == 0 || memcmp(plain.data, p, n) == 0), "%s", label);
	snprintf(label, sizeof(label), "%s: the reply's id follows the last frame's", name);
	is_int(rx.seq, want_frames, label);
	compress_free(&tx);
	compress_free(&rx);
	pbuf_free(&plain);
	free(p);
}

static void test_split_reads(void)
{
	struct compress_state tx, rx;
	struct pbuf plain = {0};
	size_t n = 150000;
	uint8_t *p = pattern(n, 0);
	int frames = 0, bad = 0;

	compress_init(&tx, COMPRESS_MAX_LEN);
	compress_init(&rx, COMPRESS_MAX_LEN);
	compress_encode(&tx, p, 40);      /* a short one, sent plain */
	compress_encode(&tx, p + 40, n - 40);
	for (size_t i = 0; i < tx.wire.len; i++) {
		int r;

		pbuf_append(&rx.raw, tx.wire.data + i, 1);
		r = compress_decode(&rx, &plain, 0, COMPRESS_MAX_LEN);
		if (r < 0)
			bad++;
		else
			frames += r;
	}
	ok(bad == 0 && frames == 4, "byte by byte: 4 frames, no error (got %d, %d errors)", frames, bad);
	ok(plain.len == n && memcmp(plain.data, p, n) == 0, "byte by byte: the same stream");
	ok(rx.raw.len == 0 && rx.raw_pos == 0, "byte by byte: nothing left undecoded");
	compress_free(&tx);
	compress_free(&rx);
	pbuf_free(&plain);
	free(p);
}

/* A frame built by hand: payload p of n bytes, declared lengths as given. */
static void put_raw_frame(struct pbuf *b, uint32_t clen, uint8_t seq, uint32_t ulen, const void *p, size_t n)
{
	uint8_t h[COMPRESS_HEADER_LEN];

	wr_u24(h, clen);
	h[3] = seq;
	wr_u24(h + 4, ulen);
	pbuf_append(b, h, sizeof(h));
	pbuf_append(b, p, n);
}

static void test_plain_frames(void)
{
	struct compress_state rx;
	struct pbuf plain = {0};
	static const uint8_t pkt[] = { 1, 0, 0, 0, 0x0e };   /* COM_PING */
	static const uint8_t big[] = "a payload of more than fifty bytes, sent as it is by a client";

	compress_init(&rx, COMPRESS_MAX_LEN);
	put_raw_frame(&rx.raw, sizeof(pkt), 0, 0, pkt, sizeof(pkt));
	put_raw_frame(&rx.raw, sizeof(big), 1, 0, big, sizeof(big));
	put_raw_frame(&rx.raw, 0, 2, 0, "", 0);
	is_int(compress_decode(&rx, &plain, 0, COMPRESS_MAX_LEN), 3, "uncompressed-length-0 frames decode");
	ok(plain.len == sizeof(pkt) + sizeof(big) && memcmp(plain.data, pkt, sizeof(pkt)) == 0 &&
	   memcmp(plain.data + sizeof(pkt), big, sizeof(big)) == 0, "... as their payloads, in order");
	is_int(rx.seq, 3, "the id to send next is the last frame's + 1");
	/* the node's reply continues from there, in both directions */
	compress_encode(&rx, pkt, sizeof(pkt));
	is_int(rx.wire.data[3], 3, "the reply's frame carries that id");
	is_int(rd_u24(rx.wire.data + 4), 0, "a reply under 50 bytes is sent uncompressed");
	/* a new command resets it: the client's 0, the reply's 1 */
	put_raw_frame(&rx.raw, sizeof(pkt), 0, 0, pkt, sizeof(pkt));
	compress_decode(&rx, &plain, 0, COMPRESS_MAX_LEN);
	rx.wire.len = rx.wire_pos = 0;
	compress_encode(&rx, pkt, sizeof(pkt));
	is_int(rx.wire.data[3], 1, "after a new command (id 0) the reply's id is 1");
	/* an id neither 0 nor the expected one */
	rx.wire.len = rx.wire_pos = 0;
	put_raw_frame(&rx.raw, sizeof(pkt), 5, 0, pkt, sizeof(pkt));
	ok(compress_decode(&rx, &plain, 0, COMPRESS_MAX_LEN) < 0 && rx.err_code == ERR_NET_PACKETS_OUT_OF_ORDER,
	   "an id out of order (5 where 2 or 0 is due): 1156");
	compress_free(&rx);
	pbuf_free(&plain);
}

static int decode_err(struct compress_state *rx, struct pbuf *plain)
{
	int r = compress_decode(rx, plain, 0, COMPRESS_MAX_LEN);

	return r < 0 ? rx->err_code : 0;
}

static void test_bad_lengths(void)
{
	struct compress_state rx;
	struct pbuf plain = {0};
	uint8_t h[COMPRESS_HEADER_LEN] = {0};

	compress_init(&rx, 100000);
	/* only the header has come: refused before the body is waited for */
	wr_u24(h, 100001);
	pbuf_append(&rx.raw, h, sizeof(h));
	is_int(decode_err(&rx, &plain), ERR_NET_PACKET_TOO_LARGE, "a payload length over the limit: 1153");
	ok(plain.cap == 0, "... and nothing was reserved for it");
	compress_free(&rx);

	compress_init(&rx, 100000);
	wr_u24(h, 10);
	wr_u24(h + 4, 100001);
	pbuf_append(&rx.raw, h, sizeof(h));
	is_int(decode_err(&rx, &plain), ERR_NET_PACKET_TOO_LARGE, "an uncompressed length over the limit: 1153");
	ok(plain.cap == 0, "... and nothing was reserved for it");
	is_str(rx.err_state, "08S01", "... SQLSTATE 08S01");
	compress_free(&rx);

	is_int(compress_limit(67108864), COMPRESS_MAX_LEN, "limit: 64M max_allowed_packet gives the 3-byte maximum");
	is_int(compress_limit(1048576), 1048576 + 8, "limit: 1M gives 1M and two headers");
	is_int(compress_limit(1024), 65536 + 8, "limit: never under a 64 KiB client buffer");
	pbuf_free(&plain);
}

static void test_corrupt(void)
{
	struct compress_state rx;
	struct pbuf plain = {0};
	uint8_t junk[64], z[256], src[200];
	uLongf zlen = sizeof(z);

	memset(src, 'q', sizeof(src));
	compress2(z, &zlen, src, sizeof(src), 6);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);

	struct { uint32_t ulen; const uint8_t *p; size_t n; const char *name; } cases[] = {
		{ 200, junk, sizeof(junk), "not zlib data" },
		{ 201, z, zlen, "declared one byte longer than it inflates to" },
		{ 199, z, zlen, "declared one byte shorter" },
		{ 200, z, zlen - 3, "cut short" },
		{ 200, z, 0, "an empty payload with a length" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		compress_init(&rx, COMPRESS_MAX_LEN);
		plain.len = 0;
		put_raw_frame(&rx.raw, (uint32_t)cases[i].n, 0, cases[i].ulen, cases[i].p, cases[i].n);
		if (!ok(decode_err(&rx, &plain) == ERR_NET_UNCOMPRESS_ERROR, "corrupt: %s: 1157", cases[i].name))
			printf("#   got %d\n", rx.err_code);
		compress_free(&rx);
	}
	/* trailing bytes after the zlib stream */
	compress_init(&rx, COMPRESS_MAX_LEN);
	memcpy(z + zlen, "xx", 2);
	put_raw_frame(&rx.raw, (uint32_t)zlen + 2, 0, 200, z, zlen + 2);
	is_int(decode_err(&rx, &plain), ERR_NET_UNCOMPRESS_ERROR, "corrupt: bytes after the stream: 1157");
	compress_free(&rx);
	/* the good one decodes */
	compress_init(&rx, COMPRESS_MAX_LEN);
	plain.len = 0;
	put_raw_frame(&rx.raw, (uint32_t)zlen, 0, 200, z, zlen);
	ok(decode_err(&rx, &plain) == 0 && plain.len == 200 && memcmp(plain.data, src, 200) == 0,
	   "the same payload, declared right, decodes");
	compress_free(&rx);
	pbuf_free(&plain);
}

static void test_decode_limit(void)
{
	struct compress_state tx, rx;
	struct pbuf plain = {0};
	uint8_t *p = pattern(300000, 0);

	compress_init(&tx, COMPRESS_MAX_LEN);
	compress_init(&rx, COMPRESS_MAX_LEN);
	compress_encode(&tx, p, 300000);     /* 5 frames */
	pbuf_append(&rx.raw, tx.wire.data, tx.wire.len);
	is_int(compress_decode(&rx, &plain, 0, 100000), 2, "decoding stops once the limit is reached");
	ok(compress_frame_ready(&rx), "... the rest waits, whole");
	is_int(compress_decode(&rx, &plain, 131072, 100000), 2, "consumed up to 131072: two more");
	is_int(compress_decode(&rx, &plain, 262144, 100000), 1, "consumed up to 262144: the last");
	ok(plain.len == 300000 && memcmp(plain.data, p, 300000) == 0, "all of it, in order");
	ok(!compress_frame_ready(&rx), "nothing left");
	compress_free(&tx);
	compress_free(&rx);
	pbuf_free(&plain);
	free(p);
}

static size_t read_all(int fd, uint8_t *buf, size_t cap)
{
	size_t got = 0;
	ssize_t r;

	while (got < cap && (r = recv(fd, buf + got, cap - got, MSG_DONTWAIT)) > 0)
		got += (size_t)r;
	return got;
}

static void test_sbuf(void)
{
	int sv[2];
	struct sbuf s;
	uint8_t buf[4096];
	static const uint8_t okpkt[] = { 7, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0 };
	struct compress_state peer;
	struct pbuf plain = {0};
	uint8_t *rows = pattern(2000, 0);
	size_t n;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		ok(0, "socketpair");
		return;
	}
	sbuf_init(&s, sv[0]);
	pbuf_append(&s.out, okpkt, sizeof(okpkt));
	is_int(sbuf_compress_start(&s, COMPRESS_MAX_LEN, false, 0), 0, "sbuf: compression starts");
	is_int(sbuf_out_pending(&s), sizeof(okpkt), "sbuf: the queued OK is still pending");
	pbuf_append(&s.out, rows, 2000);
	is_int(sbuf_flush(&s), SBUF_OK, "sbuf: flushed");
	is_int(sbuf_out_pending(&s), 0, "sbuf: nothing pending");
	n = read_all(sv[1], buf, sizeof(buf));
	ok(n > sizeof(okpkt) && memcmp(buf, okpkt, sizeof(okpkt)) == 0, "sbuf: the OK went out plain, first");
	compress_init(&peer, COMPRESS_MAX_LEN);
	pbuf_append(&peer.raw, buf + sizeof(okpkt), n - sizeof(okpkt));
	ok(compress_decode(&peer, &plain, 0, COMPRESS_MAX_LEN) == 1 && plain.len == 2000 &&
	   memcmp(plain.data, rows, 2000) == 0, "sbuf: then one compressed frame of the rows");
	ok(buf[sizeof(okpkt) + 3] == 0 && rd_u24(buf + sizeof(okpkt) + 4) == 2000, "sbuf: id 0, length 2000");
	/* the client's next command: a frame in, the packet out of sbuf_decode */
	peer.wire.len = 0;
	peer.seq = 0;
	compress_encode(&peer, rows, 1500);
	if (write(sv[1], peer.wire.data, peer.wire.len) != (ssize_t)peer.wire.len)
		ok(0, "write");
	is_int(sbuf_read(&s, 65536), SBUF_OK, "sbuf: a frame read");
	is_int(sbuf_in_len(&s), 0, "sbuf: not decoded before sbuf_decode");
	ok(sbuf_undecoded(&s) == peer.wire.len, "sbuf: it waits in the frames' buffer");
	is_int(sbuf_decode(&s), 0, "sbuf: decoded");
	ok(sbuf_in_len(&s) == 1500 && memcmp(sbuf_in_ptr(&s), rows, 1500) == 0, "sbuf: the plain bytes are in `in`");
	/* a bad frame: the error to send */
	put_raw_frame(&peer.raw, 3, 1, 50, "abc", 3);
	if (write(sv[1], peer.raw.data, peer.raw.len) != (ssize_t)peer.raw.len)
		ok(0, "write");
	sbuf_read(&s, 65536);
	{
		uint16_t code;
		const char *state, *msg;

		is_int(sbuf_decode(&s), -1, "sbuf: a corrupt frame fails");
		sbuf_compress_error(&s, &code, &state, &msg);
		ok(code == ERR_NET_UNCOMPRESS_ERROR && strcmp(state, "08S01") == 0, "sbuf: 1157 (08S01): %s", msg);
	}
	sbuf_close(&s);
	close(sv[1]);
	compress_free(&peer);
	pbuf_free(&plain);
	free(rows);
}

static void test_client_role(void)
{
	struct compress_state z;
	struct pbuf plain = {0};
	static const uint8_t cmd[] = { 1, 0, 0, 0, 0x0e };
	uint8_t file[2 * 9], srv[3 * 6];

	compress_init(&z, COMPRESS_MAX_LEN);
	z.client_role = true;
	compress_encode(&z, cmd, sizeof(cmd));
	is_int(z.wire.data[3], 0, "client: a command's frame has id 0");
	/* the server answers in two frames: packets its ids 7, 9, 2 (as a
	 * server sets them from its frame counter), the second header cut */
	for (int i = 0; i < 3; i++) {
		wr_u24(srv + i * 6, 2);
		srv[i * 6 + 3] = (uint8_t)(i == 0 ? 7 : i == 1 ? 9 : 2);
		srv[i * 6 + 4] = srv[i * 6 + 5] = (uint8_t)('a' + i);
	}
	put_raw_frame(&z.raw, 8, 1, 0, srv, 8);
	put_raw_frame(&z.raw, 10, 7, 0, srv + 8, 10);   /* any id: not checked */
	is_int(compress_decode(&z, &plain, 0, COMPRESS_MAX_LEN), 2, "client: the server's frames decode, ids unchecked");
	ok(plain.len == 18 && plain.data[3] == 1 && plain.data[9] == 2 && plain.data[15] == 3,
	   "client: the server's packets renumbered 1, 2, 3 (a header cut across frames)");
	ok(plain.data[4] == 'a' && plain.data[11] == 'b' && plain.data[17] == 'c', "client: payloads untouched");
	/* the next command: id 0 again */
	z.wire.len = z.wire_pos = 0;
	compress_encode(&z, cmd, sizeof(cmd));
	is_int(z.wire.data[3], 0, "client: after an answer, the next command's frame has id 0");
	/* a LOAD DATA file: packets 254, 255 then 0, 1: no answer between */
	for (int i = 0; i < 2; i++) {
		wr_u24(file + i * 9, 5);
		file[i * 9 + 3] = (uint8_t)(254 + i);
		memcpy(file + i * 9 + 4, "12345", 5);
	}
	z.wire.len = z.wire_pos = 0;
	z.seq = 2;
	compress_encode(&z, file, sizeof(file));
	file[3] = 0;
	file[12] = 1;
	compress_encode(&z, file, sizeof(file));
	ok(z.wire.data[3] == 2 && z.wire.data[3 + COMPRESS_HEADER_LEN + 18] == 3,
	   "client: a file's packet id 0 after 255 does not restart the frame ids (2, then 3)");
	compress_free(&z);
	pbuf_free(&plain);
}

/* Frames a zstd session reads: one zstd made at a level the node never
 * uses (a client's own), stored frames both ways; and the node's level. */
static void test_zstd_frames(void)
{
	struct compress_state rx;
	struct pbuf plain = {0};
	uint8_t src[3000], z[4000];
	size_t zlen;
	static const uint8_t pkt[] = { 1, 0, 0, 0, 0x0e };   /* COM_PING */
	static const uint8_t big[] = "a payload of more than fifty bytes, sent as it is by a client";

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)("SELECT id, v FROM t51 WHERE id = 3;"[i % 35]);
	zlen = ZSTD_compress(z, sizeof(z), src, sizeof(src), 19);
	compress_init(&rx, COMPRESS_MAX_LEN);
	rx.zstd_level = 3;
	put_raw_frame(&rx.raw, (uint32_t)zlen, 0, sizeof(src), z, zlen);
	ok(!ZSTD_isError(zlen) && compress_decode(&rx, &plain, 0, COMPRESS_MAX_LEN) == 1 &&
	   plain.len == sizeof(src) && memcmp(plain.data, src, sizeof(src)) == 0,
	   "zstd: a frame zstd made at level 19 (a client's level) decodes");
	/* stored frames (uncompressed length 0), as with zlib */
	plain.len = 0;
	put_raw_frame(&rx.raw, sizeof(pkt), 1, 0, pkt, sizeof(pkt));
	put_raw_frame(&rx.raw, sizeof(big), 2, 0, big, sizeof(big));
	is_int(compress_decode(&rx, &plain, 0, COMPRESS_MAX_LEN), 2, "zstd: uncompressed-length-0 frames decode");
	ok(plain.len == sizeof(pkt) + sizeof(big) && memcmp(plain.data, pkt, sizeof(pkt)) == 0 &&
	   memcmp(plain.data + sizeof(pkt), big, sizeof(big)) == 0, "  as their payloads, in order");
	compress_encode(&rx, pkt, sizeof(pkt));
	ok(rx.wire.data[3] == 3 && rd_u24(rx.wire.data + 4) == 0 &&
	   memcmp(rx.wire.data + COMPRESS_HEADER_LEN, pkt, sizeof(pkt)) == 0,
	   "zstd: a reply under 50 bytes is stored, with the id that follows (3)");
	compress_free(&rx);
	pbuf_free(&plain);
	is_int(compress_zstd_level(1), 1, "zstd: a client's level 1 is the node's");
	is_int(compress_zstd_level(3), 3, "zstd: level 3 (MySQL's default) too");
	is_int(compress_zstd_level(4), COMPRESS_ZSTD_LEVEL_SENT_MAX, "zstd: level 4: the node compresses at 3");
	is_int(compress_zstd_level(22), COMPRESS_ZSTD_LEVEL_SENT_MAX, "zstd: level 22: at 3");
}

/* A zstd session refuses what is not a zstd payload of its declared
 * length with 1157, as the zlib path does; and a zlib one refuses zstd. */
static void test_zstd_corrupt(void)
{
	struct compress_state rx;
	struct pbuf plain = {0};
	uint8_t junk[64], zs[256], zl[256], src[200];
	size_t zslen;
	uLongf zllen = sizeof(zl);

	memset(src, 'q', sizeof(src));
	zslen = ZSTD_compress(zs, sizeof(zs), src, sizeof(src), 3);
	compress2(zl, &zllen, src, sizeof(src), 6);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	memcpy(zs + zslen, "xx", 2);

	struct { uint8_t level; uint32_t ulen; const uint8_t *p; size_t n; const char *name; } cases[] = {
		{ 3, 200, junk, sizeof(junk), "not zstd data" },
		{ 3, 201, zs, zslen, "declared one byte longer than it makes" },
		{ 3, 199, zs, zslen, "declared one byte shorter" },
		{ 3, 200, zs, zslen - 3, "cut short" },
		{ 3, 200, zs, 0, "an empty payload with a length" },
		{ 3, 200, zs, zslen + 2, "bytes after the frame" },
		{ 3, 200, zl, zllen, "a zlib payload in a zstd session" },
		{ 0, 200, zs, zslen, "a zstd payload in a zlib session" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		compress_init(&rx, COMPRESS_MAX_LEN);
		rx.zstd_level = cases[i].level;
		plain.len = 0;
		put_raw_frame(&rx.raw, (uint32_t)cases[i].n, 0, cases[i].ulen, cases[i].p, cases[i].n);
		if (!ok(decode_err(&rx, &plain) == ERR_NET_UNCOMPRESS_ERROR, "zstd corrupt: %s: 1157", cases[i].name))
			printf("#   got %d\n", rx.err_code);
		compress_free(&rx);
	}
	compress_init(&rx, COMPRESS_MAX_LEN);
	rx.zstd_level = 3;
	plain.len = 0;
	put_raw_frame(&rx.raw, (uint32_t)zslen, 0, 200, zs, zslen);
	ok(decode_err(&rx, &plain) == 0 && plain.len == 200 && memcmp(plain.data, src, 200) == 0,
	   "zstd: the same payload, declared right, decodes (after failures on this thread's context)");
	compress_free(&rx);
	pbuf_free(&plain);
}

/* sbuf with a zstd session: the OK plain, then zstd frames; a client's
 * zstd frame read back into `in`. */
static void test_zstd_sbuf(void)
{
	int sv[2];
	struct sbuf s;
	uint8_t buf[4096];
	static const uint8_t okpkt[] = { 7, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0 };
	struct compress_state peer;
	struct pbuf plain = {0};
	uint8_t *rows = pattern(2000, 0);
	size_t n;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		ok(0, "socketpair");
		return;
	}
	sbuf_init(&s, sv[0]);
	pbuf_append(&s.out, okpkt, sizeof(okpkt));
	is_int(sbuf_compress_start(&s, COMPRESS_MAX_LEN, false, 3), 0, "sbuf zstd: compression starts");
	pbuf_append(&s.out, rows, 2000);
	is_int(sbuf_flush(&s), SBUF_OK, "sbuf zstd: flushed");
	n = read_all(sv[1], buf, sizeof(buf));
	ok(n > sizeof(okpkt) + COMPRESS_HEADER_LEN + 4 && memcmp(buf, okpkt, sizeof(okpkt)) == 0 &&
	   memcmp(buf + sizeof(okpkt) + COMPRESS_HEADER_LEN, zstd_magic, 4) == 0,
	   "sbuf zstd: the OK went out plain, then a zstd frame");
	compress_init(&peer, COMPRESS_MAX_LEN);
	peer.zstd_level = 1;
	pbuf_append(&peer.raw, buf + sizeof(okpkt), n - sizeof(okpkt));
	ok(compress_decode(&peer, &plain, 0, COMPRESS_MAX_LEN) == 1 && plain.len == 2000 &&
	   memcmp(plain.data, rows, 2000) == 0, "sbuf zstd: the rows, whole");
	peer.wire.len = 0;
	peer.seq = 0;
	compress_encode(&peer, rows, 1500);
	if (write(sv[1], peer.wire.data, peer.wire.len) != (ssize_t)peer.wire.len)
		ok(0, "write");
	sbuf_read(&s, 65536);
	ok(sbuf_decode(&s) == 0 && sbuf_in_len(&s) == 1500 && memcmp(sbuf_in_ptr(&s), rows, 1500) == 0,
	   "sbuf zstd: a client's zstd frame decoded into `in`");
	sbuf_close(&s);
	close(sv[1]);
	compress_free(&peer);
	pbuf_free(&plain);
	free(rows);
}

int main(void)
{
	round_trip(0, 0, 0, 0, 0, "empty");
	round_trip(11, 0, 1, 1, 0, "11 bytes");
	round_trip(49, 0, 1, 1, 0, "49 bytes");
	round_trip(1000, 0, 1, 0, 0, "1000 repetitive bytes");
	round_trip(65536, 0, 1, 0, 0, "one whole chunk");
	round_trip(200000, 0, 4, 0, 0, "200000 repetitive bytes");
	round_trip(100000, 1, 2, 2, 0, "100000 random bytes");
	round_trip(49, 0, 1, 1, 3, "zstd: 49 bytes");
	round_trip(1000, 0, 1, 0, 3, "zstd: 1000 repetitive bytes");
	round_trip(65536, 0, 1, 0, 1, "zstd level 1: one whole chunk");
	round_trip(200000, 0, 4, 0, 3, "zstd: 200000 repetitive bytes");
	round_trip(100000, 1, 2, 2, 3, "zstd: 100000 random bytes");
	test_split_reads();
	test_plain_frames();
	test_bad_lengths();
	test_corrupt();
	test_decode_limit();
	test_sbuf();
	test_client_role();
	test_zstd_frames();
	test_zstd_corrupt();
	test_zstd_sbuf();
	compress_thread_end();
	return done_testing();
}
