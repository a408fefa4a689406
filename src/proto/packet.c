/*
 * packet.c: byte buffers, bounded payload cursors and the encoders for the
 * packets the node builds itself (OK, ERR, EOF). Nothing here does I/O.
 */
#include "proto/packet.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pbuf_reserve(struct pbuf *b, size_t extra)
{
	size_t need = b->len + extra;
	size_t cap;
	uint8_t *p;

	if (need < b->len)
		return -1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need) {
		if (cap > SIZE_MAX / 2)
			return -1;
		cap *= 2;
	}
	p = realloc(b->data, cap);
	if (!p)
		return -1;
	b->data = p;
	b->cap = cap;
	return 0;
}

int pbuf_append(struct pbuf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (pbuf_reserve(b, n) < 0)
		return -1;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

void pbuf_consume(struct pbuf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

void pbuf_free(struct pbuf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void pbuf_shrink(struct pbuf *b, size_t keep)
{
	uint8_t *p;

	if (b->len != 0 || b->cap <= keep)
		return;
	if (keep == 0) {
		pbuf_free(b);
		return;
	}
	p = realloc(b->data, keep);
	if (p) {
		b->data = p;
		b->cap = keep;
	}
}

uint8_t pcur_u8(struct pcur *c)
{
	if (c->err || pcur_left(c) < 1) {
		c->err = true;
		return 0;
	}
	return *c->p++;
}

uint16_t pcur_u16(struct pcur *c)
{
	uint16_t v;

	if (c->err || pcur_left(c) < 2) {
		c->err = true;
		return 0;
	}
	v = rd_u16(c->p);
	c->p += 2;
	return v;
}

uint32_t pcur_u32(struct pcur *c)
{
	uint32_t v;

	if (c->err || pcur_left(c) < 4) {
		c->err = true;
		return 0;
	}
	v = rd_u32(c->p);
	c->p += 4;
	return v;
}

uint64_t pcur_lenenc(struct pcur *c, bool *is_null)
{
	uint8_t first = pcur_u8(c);
	uint64_t v = 0;
	size_t n;

	if (is_null)
		*is_null = false;
	if (c->err)
		return 0;
	if (first < 0xfb)
		return first;
	if (first == 0xfb) {
		if (is_null)
			*is_null = true;
		return 0;
	}
	if (first == 0xff) {
		c->err = true;
		return 0;
	}
	n = first == 0xfc ? 2 : first == 0xfd ? 3 : 8;
	if (pcur_left(c) < n) {
		c->err = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

const uint8_t *pcur_bytes(struct pcur *c, size_t n)
{
	const uint8_t *p = c->p;

	if (c->err || pcur_left(c) < n) {
		c->err = true;
		return NULL;
	}
	c->p += n;
	return p;
}

const char *pcur_cstr(struct pcur *c, size_t *len)
{
	const uint8_t *nul;
	const char *s;

	if (c->err) {
		*len = 0;
		return NULL;
	}
	nul = memchr(c->p, 0, pcur_left(c));
	if (!nul) {
		c->err = true;
		*len = 0;
		return NULL;
	}
	s = (const char *)c->p;
	*len = (size_t)(nul - c->p);
	c->p = nul + 1;
	return s;
}

const uint8_t *pcur_lenenc_str(struct pcur *c, size_t *len)
{
	uint64_t n = pcur_lenenc(c, NULL);

	if (c->err || n > pcur_left(c)) {
		c->err = true;
		*len = 0;
		return NULL;
	}
	*len = (size_t)n;
	return pcur_bytes(c, (size_t)n);
}

int put_u8(struct pbuf *b, uint8_t v)
{
	return pbuf_append(b, &v, 1);
}

int put_u16(struct pbuf *b, uint16_t v)
{
	uint8_t x[2];

	wr_u16(x, v);
	return pbuf_append(b, x, 2);
}

int put_u32(struct pbuf *b, uint32_t v)
{
	uint8_t x[4];

	wr_u32(x, v);
	return pbuf_append(b, x, 4);
}

size_t lenenc_size(uint64_t v)
{
	if (v < 0xfb)
		return 1;
	if (v <= 0xffff)
		return 3;
	if (v <= 0xffffff)
		return 4;
	return 9;
}

int put_lenenc(struct pbuf *b, uint64_t v)
{
	uint8_t x[9];
	size_t n = lenenc_size(v);

	if (n == 1) {
		x[0] = (uint8_t)v;
	} else {
		x[0] = n == 3 ? 0xfc : n == 4 ? 0xfd : 0xfe;
		for (size_t i = 1; i < n; i++)
			x[i] = (uint8_t)(v >> (8 * (i - 1)));
	}
	return pbuf_append(b, x, n);
}

int put_lenenc_str(struct pbuf *b, const void *s, size_t n)
{
	if (put_lenenc(b, n) < 0)
		return -1;
	return pbuf_append(b, s, n);
}

int pkt_begin(struct pbuf *b, size_t *start)
{
	static const uint8_t hdr[PKT_HEADER_LEN];

	*start = b->len;
	return pbuf_append(b, hdr, PKT_HEADER_LEN);
}

void pkt_end(struct pbuf *b, size_t start, uint8_t seq)
{
	size_t n = b->len - start - PKT_HEADER_LEN;

	wr_u24(b->data + start, (uint32_t)n);
	b->data[start + 3] = seq;
}

int pkt_put_ok(struct pbuf *b, uint8_t seq, uint64_t affected, uint64_t insert_id,
	       uint16_t status, uint16_t warnings, uint32_t caps)
{
	size_t start;
	int rc = pkt_begin(b, &start);

	(void)caps;
	rc |= put_u8(b, 0x00);
	rc |= put_lenenc(b, affected);
	rc |= put_lenenc(b, insert_id);
	rc |= put_u16(b, status);
	rc |= put_u16(b, warnings);
	if (rc)
		return -1;
	pkt_end(b, start, seq);
	return 0;
}

int pkt_put_eof(struct pbuf *b, uint8_t seq, uint16_t status, uint16_t warnings, uint32_t caps)
{
	size_t start;
	int rc = pkt_begin(b, &start);

	rc |= put_u8(b, 0xfe);
	if (caps & CAP_DEPRECATE_EOF) {
		/* DEPRECATE_EOF clients get an OK packet with the 0xFE header */
		rc |= put_u8(b, 0);
		rc |= put_u8(b, 0);
		rc |= put_u16(b, status);
		rc |= put_u16(b, warnings);
	} else {
		rc |= put_u16(b, warnings);
		rc |= put_u16(b, status);
	}
	if (rc)
		return -1;
	pkt_end(b, start, seq);
	return 0;
}

int pkt_put_err(struct pbuf *b, uint8_t seq, uint16_t code, const char *sqlstate, const char *msg)
{
	size_t start;
	size_t mlen = strlen(msg);
	int rc;

	if (mlen > 512)
		mlen = 512;
	rc = pkt_begin(b, &start);
	rc |= put_u8(b, 0xff);
	rc |= put_u16(b, code);
	rc |= put_u8(b, '#');
	rc |= pbuf_append(b, sqlstate, 5);
	rc |= pbuf_append(b, msg, mlen);
	if (rc)
		return -1;
	pkt_end(b, start, seq);
	return 0;
}

int pkt_put_errf(struct pbuf *b, uint8_t seq, uint16_t code, const char *sqlstate, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return pkt_put_err(b, seq, code, sqlstate, msg);
}
