/*
 * test_packet.c: unit tests for src/proto/packet.c: pbuf growth/consume/shrink,
 * the little-endian helpers, bounded pcur readers (every read past the end
 * sets err and returns 0/NULL without touching memory beyond the payload;
 * run under ASan with payloads copied to exact-size heap blocks), lenenc
 * integers and strings at every encoding boundary, and the exact bytes of
 * the OK / EOF / ERR builders.
 */
#include "proto/packet.h"
#include "tap.h"

#include <stdlib.h>

/* A heap copy of exactly n bytes, so ASan catches any read beyond it. */
static uint8_t *dup_exact(const void *p, size_t n)
{
	uint8_t *d = malloc(n ? n : 1);
	if (n)
		memcpy(d, p, n);
	return d;
}

static void test_pbuf(void)
{
	struct pbuf b = {0};
	uint8_t big[1000];

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)i;
	is_int(pbuf_append(&b, "", 0), 0, "pbuf_append of 0 bytes");
	is_int(b.len, 0, "  leaves len 0");
	is_int(pbuf_append(&b, "abc", 3), 0, "pbuf_append abc");
	is_int(b.len, 3, "  len 3");
	ok(b.cap >= 3, "  cap >= len");
	is_int(pbuf_append(&b, big, sizeof(big)), 0, "pbuf_append 1000 bytes grows");
	is_int(b.len, 1003, "  len 1003");
	ok(b.cap >= 1003, "  cap >= 1003");
	is_mem(b.data, "abc", 3, "  head preserved across growth");
	is_mem(b.data + 3, big, sizeof(big), "  tail bytes");
	pbuf_consume(&b, 3);
	is_int(b.len, 1000, "pbuf_consume 3: len 1000");
	is_mem(b.data, big, sizeof(big), "  remaining bytes moved to front");
	pbuf_consume(&b, 999);
	is_int(b.len, 1, "pbuf_consume 999: len 1");
	is_int(b.data[0], big[999], "  last byte at front");
	pbuf_consume(&b, 5);
	is_int(b.len, 0, "pbuf_consume more than len empties");
	pbuf_shrink(&b, 256);
	is_int(b.cap, 256, "pbuf_shrink to 256 when empty");
	is_int(b.len, 0, "  len still 0");
	is_int(pbuf_append(&b, "x", 1), 0, "append after shrink");
	pbuf_shrink(&b, 16);
	is_int(b.cap, 256, "pbuf_shrink is a no-op when not empty");
	b.len = 0;
	pbuf_shrink(&b, 0);
	ok(b.data == NULL && b.cap == 0, "pbuf_shrink(0) frees");
	is_int(pbuf_reserve(&b, 10), 0, "pbuf_reserve from empty");
	ok(b.cap >= 10 && b.data != NULL, "  allocated");
	b.len = 5;
	is_int(pbuf_reserve(&b, SIZE_MAX), -1, "pbuf_reserve overflow fails");
	is_int(pbuf_reserve(&b, SIZE_MAX / 2 + 10), -1, "pbuf_reserve too large fails");
	is_int(b.len, 5, "  len untouched after failure");
	pbuf_free(&b);
	ok(b.data == NULL && b.len == 0 && b.cap == 0, "pbuf_free resets");
	pbuf_free(&b);
	ok(b.data == NULL && b.len == 0 && b.cap == 0, "pbuf_free twice is safe (still empty)");
}

static void test_le(void)
{
	uint8_t x[4];

	wr_u16(x, 0xbeef);
	is_mem(x, "\xef\xbe", 2, "wr_u16 little endian");
	is_int(rd_u16(x), 0xbeef, "rd_u16");
	wr_u24(x, 0xabcdef);
	is_mem(x, "\xef\xcd\xab", 3, "wr_u24 little endian");
	is_int(rd_u24(x), 0xabcdef, "rd_u24");
	wr_u32(x, 0xdeadbeef);
	is_mem(x, "\xef\xbe\xad\xde", 4, "wr_u32 little endian");
	is_int(rd_u32(x), 0xdeadbeefu, "rd_u32 (high bit set)");
}

static void test_put_ints(void)
{
	struct pbuf b = {0};

	put_u8(&b, 0x12);
	put_u16(&b, 0x3456);
	put_u32(&b, 0x789abcde);
	is_int(b.len, 7, "put_u8/u16/u32 length");
	is_mem(b.data, "\x12\x56\x34\xde\xbc\x9a\x78", 7, "put_u8/u16/u32 bytes");
	pbuf_free(&b);
}

struct lenenc_case {
	uint64_t v;
	size_t size;
	const char *bytes;
};

static const struct lenenc_case lenenc_cases[] = {
	{ 0, 1, "\x00" },
	{ 1, 1, "\x01" },
	{ 250, 1, "\xfa" },
	{ 251, 3, "\xfc\xfb\x00" },
	{ 252, 3, "\xfc\xfc\x00" },
	{ 0xffff, 3, "\xfc\xff\xff" },
	{ 0x10000, 4, "\xfd\x00\x00\x01" },
	{ 0xffffff, 4, "\xfd\xff\xff\xff" },
	{ 0x1000000, 9, "\xfe\x00\x00\x00\x01\x00\x00\x00\x00" },
	{ 0x123456789abcdefull, 9, "\xfe\xef\xcd\xab\x89\x67\x45\x23\x01" },
	{ UINT64_MAX, 9, "\xfe\xff\xff\xff\xff\xff\xff\xff\xff" },
};

static void test_lenenc(void)
{
	for (size_t i = 0; i < sizeof(lenenc_cases) / sizeof(lenenc_cases[0]); i++) {
		const struct lenenc_case *t = &lenenc_cases[i];
		struct pbuf b = {0};
		struct pcur c;
		bool is_null = true;
		uint64_t v;
		uint8_t *exact;
		char name[128];

		snprintf(name, sizeof(name), "lenenc_size(%llu) = %zu",
			 (unsigned long long)t->v, t->size);
		is_int(lenenc_size(t->v), t->size, name);
		is_int(put_lenenc(&b, t->v), 0, "  put_lenenc returns 0");
		is_int(b.len, t->size, "  encoded length");
		is_mem(b.data, t->bytes, t->size, "  encoded bytes");
		exact = dup_exact(b.data, b.len);
		pcur_init(&c, exact, b.len);
		v = pcur_lenenc(&c, &is_null);
		ok(v == t->v, "  round trip value");
		ok(!c.err, "  no err");
		ok(!is_null, "  not NULL");
		is_int(pcur_left(&c), 0, "  consumed exactly");
		/* every strict prefix must fail without reading past it */
		for (size_t k = 0; k < t->size; k++) {
			uint8_t *pre = dup_exact(b.data, k);
			bool bad = true;

			pcur_init(&c, pre, k);
			v = pcur_lenenc(&c, NULL);
			if (!c.err || v != 0)
				bad = false;
			free(pre);
			if (!bad) {
				ok(0, "  prefix %zu of %zu sets err", k, t->size);
				break;
			}
			if (k == t->size - 1)
				ok(1, "  every prefix (0..%zu bytes) sets err", k);
		}
		free(exact);
		pbuf_free(&b);
	}

	/* NULL marker and the invalid 0xff */
	{
		struct pcur c;
		bool is_null = false;
		uint8_t *p = dup_exact("\xfb\x07", 2);

		pcur_init(&c, p, 2);
		is_int(pcur_lenenc(&c, &is_null), 0, "lenenc 0xfb returns 0");
		ok(is_null, "  is NULL");
		ok(!c.err, "  not an error");
		is_int(pcur_left(&c), 1, "  consumed 1 byte");
		is_int(pcur_lenenc(&c, &is_null), 7, "next lenenc after NULL");
		ok(!is_null, "  is_null reset to false");
		pcur_init(&c, p, 1);
		is_int(pcur_lenenc(&c, NULL), 0, "lenenc 0xfb with NULL is_null pointer");
		ok(!c.err, "  fine");
		free(p);

		p = dup_exact("\xff\x01\x02", 3);
		pcur_init(&c, p, 3);
		is_int(pcur_lenenc(&c, &is_null), 0, "lenenc 0xff is invalid");
		ok(c.err, "  sets err");
		free(p);
	}
}

static void test_lenenc_str(void)
{
	struct pbuf b = {0};
	struct pcur c;
	const uint8_t *s;
	size_t n = 99;
	uint8_t *p;
	static uint8_t blob[300];

	for (size_t i = 0; i < sizeof(blob); i++)
		blob[i] = (uint8_t)(i * 7);
	is_int(put_lenenc_str(&b, "hello", 5), 0, "put_lenenc_str hello");
	is_int(put_lenenc_str(&b, "", 0), 0, "put_lenenc_str empty");
	is_int(put_lenenc_str(&b, blob, 251), 0, "put_lenenc_str 251 bytes");
	is_int(b.len, 6 + 1 + 3 + 251, "  total length");
	is_mem(b.data, "\x05hello\x00\xfc\xfb\x00", 10, "  prefix bytes");
	p = dup_exact(b.data, b.len);
	pcur_init(&c, p, b.len);
	s = pcur_lenenc_str(&c, &n);
	ok(s && n == 5 && memcmp(s, "hello", 5) == 0, "pcur_lenenc_str hello");
	s = pcur_lenenc_str(&c, &n);
	ok(s && n == 0, "pcur_lenenc_str empty");
	s = pcur_lenenc_str(&c, &n);
	ok(s && n == 251 && memcmp(s, blob, 251) == 0, "pcur_lenenc_str 251 bytes");
	ok(!c.err && pcur_left(&c) == 0, "  consumed exactly, no err");
	free(p);

	/* truncated: length says 5, 4 bytes follow */
	p = dup_exact("\x05hell", 5);
	pcur_init(&c, p, 5);
	n = 99;
	s = pcur_lenenc_str(&c, &n);
	ok(s == NULL && n == 0 && c.err, "pcur_lenenc_str truncated body: NULL, len 0, err");
	free(p);
	/* huge 8-byte length must not overflow the bounds check */
	p = dup_exact("\xfe\xff\xff\xff\xff\xff\xff\xff\xff" "abc", 12);
	pcur_init(&c, p, 12);
	s = pcur_lenenc_str(&c, &n);
	ok(s == NULL && n == 0 && c.err, "pcur_lenenc_str with UINT64_MAX length: err");
	free(p);
	p = dup_exact("\xfe\x00\x00\x00\x00\x00\x00\x00\x80" "abc", 12);
	pcur_init(&c, p, 12);
	s = pcur_lenenc_str(&c, &n);
	ok(s == NULL && c.err, "pcur_lenenc_str with 2^63 length: err");
	free(p);
	/* every prefix of the encoded stream: reading three strings errs */
	{
		int all = 1;
		for (size_t k = 0; k < b.len; k++) {
			uint8_t *pre = dup_exact(b.data, k);
			pcur_init(&c, pre, k);
			pcur_lenenc_str(&c, &n);
			pcur_lenenc_str(&c, &n);
			s = pcur_lenenc_str(&c, &n);
			if (!c.err || s != NULL)
				all = 0;
			free(pre);
		}
		ok(all, "every truncated prefix of 3 lenenc strings sets err");
	}
	pbuf_free(&b);
}

static void test_pcur_bounds(void)
{
	struct pcur c;
	uint8_t *p = dup_exact("\x01\x02\x03\x04\x05\x06\x07", 7);
	const uint8_t *q;
	const char *s;
	size_t n;

	pcur_init(&c, p, 7);
	is_int(pcur_left(&c), 7, "pcur_left 7");
	is_int(pcur_u8(&c), 0x01, "pcur_u8");
	is_int(pcur_u16(&c), 0x0302, "pcur_u16");
	is_int(pcur_u32(&c), 0x07060504, "pcur_u32");
	ok(!c.err && pcur_left(&c) == 0, "at end, no err");
	is_int(pcur_u8(&c), 0, "pcur_u8 past end returns 0");
	ok(c.err, "  sets err");
	ok(c.p == p + 7, "  cursor did not move");

	/* err is sticky: later reads fail even when bytes would be available */
	pcur_init(&c, p, 7);
	pcur_u32(&c);
	pcur_u32(&c);
	ok(c.err, "pcur_u32 with 3 left: err");
	ok(c.p == p + 4, "  cursor not advanced by failed read");
	is_int(pcur_u8(&c), 0, "sticky err: pcur_u8 returns 0");
	is_int(pcur_u16(&c), 0, "sticky err: pcur_u16 returns 0");
	ok(pcur_bytes(&c, 1) == NULL, "sticky err: pcur_bytes returns NULL");
	n = 99;
	ok(pcur_cstr(&c, &n) == NULL && n == 0, "sticky err: pcur_cstr NULL, len 0");
	ok(pcur_lenenc_str(&c, &n) == NULL && n == 0, "sticky err: pcur_lenenc_str NULL, len 0");

	for (size_t len = 0; len < 4; len++) {
		pcur_init(&c, p, len);
		if (len < 2) {
			ok(pcur_u16(&c) == 0 && c.err, "pcur_u16 on %zu bytes: err", len);
			pcur_init(&c, p, len);
		}
		ok(pcur_u32(&c) == 0 && c.err, "pcur_u32 on %zu bytes: err", len);
	}
	{
		/* exact-size buffers for u16/u32 */
		uint8_t *two = dup_exact("\xaa\xbb", 2), *one = dup_exact("\xcc", 1);
		pcur_init(&c, two, 2);
		is_int(pcur_u16(&c), 0xbbaa, "pcur_u16 on exactly 2 bytes");
		ok(!c.err, "  no err");
		pcur_init(&c, one, 1);
		is_int(pcur_u16(&c), 0, "pcur_u16 on 1 byte returns 0");
		ok(c.err, "  err");
		free(two);
		free(one);
	}

	pcur_init(&c, p, 7);
	q = pcur_bytes(&c, 0);
	ok(q == p && !c.err, "pcur_bytes(0) ok");
	q = pcur_bytes(&c, 7);
	ok(q == p && !c.err && pcur_left(&c) == 0, "pcur_bytes(7) of 7");
	q = pcur_bytes(&c, 0);
	ok(q == p + 7 && !c.err, "pcur_bytes(0) at end ok");
	q = pcur_bytes(&c, 1);
	ok(q == NULL && c.err, "pcur_bytes(1) at end: NULL, err");
	pcur_init(&c, p, 7);
	q = pcur_bytes(&c, SIZE_MAX);
	ok(q == NULL && c.err && c.p == p, "pcur_bytes(SIZE_MAX): NULL, err, no move");
	free(p);

	/* C strings */
	p = dup_exact("ab\0\0xyz", 7);
	pcur_init(&c, p, 7);
	s = pcur_cstr(&c, &n);
	ok(s && n == 2 && strcmp(s, "ab") == 0, "pcur_cstr ab");
	s = pcur_cstr(&c, &n);
	ok(s && n == 0 && s[0] == 0, "pcur_cstr empty string");
	is_int(pcur_left(&c), 3, "  3 left");
	s = pcur_cstr(&c, &n);
	ok(s == NULL && n == 0 && c.err, "pcur_cstr without NUL: NULL, err (no over-read)");
	free(p);
	p = dup_exact("x", 1);
	pcur_init(&c, p, 1);
	pcur_u8(&c);
	s = pcur_cstr(&c, &n);
	ok(s == NULL && c.err, "pcur_cstr at end: err");
	free(p);
}

static void test_builders(void)
{
	struct pbuf b = {0};

	is_int(pkt_put_ok(&b, 1, 0, 0, ST_AUTOCOMMIT, 0, 0), 0, "pkt_put_ok simple");
	is_int(b.len, 11, "  11 bytes");
	is_mem(b.data, "\x07\x00\x00\x01" "\x00\x00\x00\x02\x00\x00\x00", 11, "  exact bytes");
	pbuf_free(&b);

	is_int(pkt_put_ok(&b, 2, 251, 0x10000, ST_IN_TRANS | ST_AUTOCOMMIT, 3, CAP_PROTOCOL_41), 0,
	       "pkt_put_ok with lenenc affected/insert id");
	is_int(b.len, 4 + 1 + 3 + 4 + 4, "  16 bytes");
	is_mem(b.data, "\x0c\x00\x00\x02" "\x00" "\xfc\xfb\x00" "\xfd\x00\x00\x01" "\x03\x00" "\x03\x00",
	       16, "  exact bytes");
	pbuf_free(&b);

	is_int(pkt_put_ok(&b, 0, UINT64_MAX, 0x1000000, 0xffff, 0xfffe, 0), 0, "pkt_put_ok 8-byte lenencs");
	is_int(b.len, 4 + 1 + 9 + 9 + 4, "  27 bytes");
	is_mem(b.data, "\x17\x00\x00\x00" "\x00" "\xfe\xff\xff\xff\xff\xff\xff\xff\xff"
	       "\xfe\x00\x00\x00\x01\x00\x00\x00\x00" "\xff\xff" "\xfe\xff", 27, "  exact bytes");
	ok(pkt_is_ok(b.data + 4, b.len - 4), "  pkt_is_ok");
	pbuf_free(&b);

	/* appends after existing content, header at the right offset */
	put_u8(&b, 0xaa);
	pkt_put_ok(&b, 9, 1, 2, 0, 0, 0);
	is_int(b.len, 12, "pkt_put_ok appends after existing bytes");
	is_mem(b.data, "\xaa\x07\x00\x00\x09\x00\x01\x02\x00\x00\x00\x00", 12, "  exact bytes");
	pbuf_free(&b);

	is_int(pkt_put_eof(&b, 5, ST_AUTOCOMMIT | ST_MORE_RESULTS_EXISTS, 2, CAP_PROTOCOL_41), 0,
	       "pkt_put_eof classic");
	is_int(b.len, 9, "  9 bytes");
	is_mem(b.data, "\x05\x00\x00\x05" "\xfe\x02\x00\x0a\x00", 9, "  0xFE warnings status");
	ok(pkt_is_eof(b.data + 4, 5), "  pkt_is_eof");
	pbuf_free(&b);

	is_int(pkt_put_eof(&b, 6, ST_AUTOCOMMIT, 1, CAP_DEPRECATE_EOF | CAP_PROTOCOL_41), 0,
	       "pkt_put_eof for DEPRECATE_EOF");
	is_int(b.len, 11, "  11 bytes");
	is_mem(b.data, "\x07\x00\x00\x06" "\xfe\x00\x00\x02\x00\x01\x00", 11,
	       "  0xFE 0 0 status warnings");
	ok(pkt_is_eof(b.data + 4, 7), "  still classified as EOF (< 9 bytes)");
	pbuf_free(&b);

	is_int(pkt_put_err(&b, 2, ERR_ACCESS_DENIED_ERROR, "28000", "Access denied"), 0, "pkt_put_err");
	is_int(b.len, 4 + 9 + 13, "  26 bytes");
	is_mem(b.data, "\x16\x00\x00\x02" "\xff\x15\x04" "#28000" "Access denied", 26, "  exact bytes");
	ok(pkt_is_err(b.data + 4, b.len - 4), "  pkt_is_err");
	pbuf_free(&b);

	is_int(pkt_put_err(&b, 0, ERR_UNKNOWN_COM_ERROR, "08S01", ""), 0, "pkt_put_err empty message");
	is_mem(b.data, "\x09\x00\x00\x00" "\xff\x17\x04" "#08S01", 13, "  exact bytes");
	is_int(b.len, 13, "  13 bytes");
	pbuf_free(&b);

	{
		char msg[700];
		memset(msg, 'm', sizeof(msg) - 1);
		msg[sizeof(msg) - 1] = 0;
		is_int(pkt_put_err(&b, 1, 1105, "HY000", msg), 0, "pkt_put_err long message");
		is_int(b.len, 4 + 9 + 512, "  message truncated to 512 bytes");
		is_int(rd_u24(b.data), 9 + 512, "  header length");
		is_int(b.data[4 + 9 + 511], 'm', "  last byte");
		pbuf_free(&b);
	}

	/* pkt_begin / pkt_end */
	{
		size_t start;
		put_u16(&b, 0x0102);
		is_int(pkt_begin(&b, &start), 0, "pkt_begin");
		is_int(start, 2, "  start offset");
		pbuf_append(&b, "hello", 5);
		pkt_end(&b, start, 0x42);
		is_mem(b.data, "\x02\x01\x05\x00\x00\x42hello", 11, "pkt_end fills length and seq");
		pbuf_free(&b);
	}
}

static void test_classify(void)
{
	ok(pkt_is_ok((const uint8_t *)"\x00\x00\x00\x02\x00\x00\x00", 7), "pkt_is_ok 7 bytes");
	ok(!pkt_is_ok((const uint8_t *)"\x00\x00\x00\x02\x00\x00", 6), "pkt_is_ok needs 7 bytes");
	ok(!pkt_is_err((const uint8_t *)"", 0), "pkt_is_err empty: no");
	ok(pkt_is_err((const uint8_t *)"\xff", 1), "pkt_is_err 0xff");
	ok(!pkt_is_eof((const uint8_t *)"", 0), "pkt_is_eof empty: no");
	ok(pkt_is_eof((const uint8_t *)"\xfe", 1), "pkt_is_eof 1 byte");
	ok(pkt_is_eof((const uint8_t *)"\xfe\0\0\0\0\0\0\0", 8), "pkt_is_eof 8 bytes");
	ok(!pkt_is_eof((const uint8_t *)"\xfe\0\0\0\0\0\0\0\0", 9),
	   "pkt_is_eof 9 bytes: no (a row starting with an 8-byte lenenc)");
}

int main(void)
{
	test_pbuf();
	test_le();
	test_put_ints();
	test_lenenc();
	test_lenenc_str();
	test_pcur_bounds();
	test_builders();
	test_classify();
	return done_testing();
}
