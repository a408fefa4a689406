/*
 * resultset.c: owns the encoding of text-protocol result sets that the node
 * sends itself (column count, ColumnDefinition41 packets, lenenc rows, the
 * EOF or 0xfe-OK terminator), with sticky errors and roll-back of a result
 * set that could not be completed. See resultset.h for the layout.
 */
#include "proto/resultset.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define RS_NULL_CELL 0xfb

static int rs_fail(struct rs_writer *w)
{
	w->failed = true;
	return -1;
}

int rs_begin(struct rs_writer *w, struct pbuf *out, uint8_t seq, uint32_t caps,
	     unsigned ncols)
{
	size_t start;

	memset(w, 0, sizeof *w);
	w->out = out;
	w->start = out->len;
	w->seq = seq;
	w->caps = caps;
	w->ncols = ncols;
	if (ncols == 0)
		return rs_fail(w);
	if (pkt_begin(out, &start) < 0 || put_lenenc(out, ncols) < 0)
		return rs_fail(w);
	pkt_end(out, start, w->seq++);
	return 0;
}

/* Only for clients without CAP_DEPRECATE_EOF: the EOF after the columns
 * and at the end. */
static int put_eof(struct rs_writer *w, uint16_t status, uint16_t warnings)
{
	if (pkt_put_eof(w->out, w->seq, status, warnings, w->caps) < 0)
		return rs_fail(w);
	w->seq++;
	return 0;
}

static int put_str(struct pbuf *b, const char *s)
{
	return put_lenenc_str(b, s ? s : "", s ? strlen(s) : 0);
}

int rs_column_def(struct rs_writer *w, const struct rs_coldef *d)
{
	struct pbuf *b = w->out;
	size_t start;
	int rc;

	if (w->failed || w->cols_done >= w->ncols)
		return rs_fail(w);
	rc = pkt_begin(b, &start);
	rc |= put_str(b, "def");
	rc |= put_str(b, d->schema);
	rc |= put_str(b, d->table);
	rc |= put_str(b, d->org_table);
	rc |= put_str(b, d->name);
	rc |= put_str(b, d->org_name);
	if (w->caps & CAP_X_EXT_METADATA)
		rc |= put_u8(b, 0);     /* MariaDB extended metadata: none */
	rc |= put_u8(b, 0x0c);          /* length of the fixed fields */
	rc |= put_u16(b, d->charset);
	rc |= put_u32(b, d->length);
	rc |= put_u8(b, d->type);
	rc |= put_u16(b, d->flags);
	rc |= put_u8(b, d->decimals);
	rc |= put_u16(b, 0);            /* filler */
	if (rc)
		return rs_fail(w);
	pkt_end(b, start, w->seq++);
	if (++w->cols_done == w->ncols && !(w->caps & CAP_DEPRECATE_EOF))
		return put_eof(w, ST_AUTOCOMMIT, 0);
	return 0;
}

int rs_column(struct rs_writer *w, const char *name, uint8_t type)
{
	struct rs_coldef d = { .name = name, .type = type };

	if (type == RS_TYPE_LONGLONG) {
		d.charset = RS_CHARSET_BINARY;
		d.length = 20;
		d.flags = RS_FLAG_BINARY;
	} else {
		d.charset = RS_CHARSET_UTF8;
		d.length = 765;
	}
	return rs_column_def(w, &d);
}

int rs_row_begin(struct rs_writer *w)
{
	if (w->failed || w->in_row || w->cols_done != w->ncols)
		return rs_fail(w);
	if (pkt_begin(w->out, &w->row_start) < 0)
		return rs_fail(w);
	w->in_row = true;
	w->cells = 0;
	return 0;
}

int rs_cell(struct rs_writer *w, const void *p, size_t len)
{
	if (w->failed || !w->in_row || w->cells >= w->ncols)
		return rs_fail(w);
	if (!p)
		return rs_cell_null(w);
	if (put_lenenc_str(w->out, p, len) < 0)
		return rs_fail(w);
	w->cells++;
	return 0;
}

int rs_cell_str(struct rs_writer *w, const char *s)
{
	return s ? rs_cell(w, s, strlen(s)) : rs_cell_null(w);
}

int rs_cell_u64(struct rs_writer *w, uint64_t v)
{
	char buf[24];
	int n = snprintf(buf, sizeof buf, "%" PRIu64, v);

	return rs_cell(w, buf, (size_t)n);
}

int rs_cell_null(struct rs_writer *w)
{
	if (w->failed || !w->in_row || w->cells >= w->ncols)
		return rs_fail(w);
	if (put_u8(w->out, RS_NULL_CELL) < 0)
		return rs_fail(w);
	w->cells++;
	return 0;
}

/* A row payload of n >= 16 MiB - 1 bytes sits after one header at
 * row_start: insert the headers of the continuation packets. Chunks of
 * PKT_MAX_PAYLOAD bytes; the last one may be empty. */
static int split_row(struct rs_writer *w, size_t n)
{
	struct pbuf *b = w->out;
	size_t k = n / PKT_MAX_PAYLOAD, last = n % PKT_MAX_PAYLOAD;
	size_t payload = w->row_start + PKT_HEADER_LEN;

	if (pbuf_reserve(b, k * PKT_HEADER_LEN) < 0)
		return -1;
	for (size_t i = k; i >= 1; i--) {
		size_t len = i == k ? last : PKT_MAX_PAYLOAD;
		size_t src = payload + i * PKT_MAX_PAYLOAD;
		size_t dst = w->row_start + i * (PKT_MAX_PAYLOAD + PKT_HEADER_LEN) + PKT_HEADER_LEN;

		memmove(b->data + dst, b->data + src, len);
	}
	b->len += k * PKT_HEADER_LEN;
	for (size_t i = 0; i <= k; i++) {
		uint8_t *h = b->data + w->row_start + i * (PKT_MAX_PAYLOAD + PKT_HEADER_LEN);

		wr_u24(h, (uint32_t)(i == k ? last : PKT_MAX_PAYLOAD));
		h[3] = w->seq++;
	}
	return 0;
}

int rs_row_end(struct rs_writer *w)
{
	size_t n;

	if (w->failed || !w->in_row || w->cells != w->ncols)
		return rs_fail(w);
	w->in_row = false;
	n = w->out->len - w->row_start - PKT_HEADER_LEN;
	if (n < PKT_MAX_PAYLOAD)
		pkt_end(w->out, w->row_start, w->seq++);
	else if (split_row(w, n) < 0)
		return rs_fail(w);
	w->rows++;
	return 0;
}

void rs_abort(struct rs_writer *w)
{
	if (w->out && w->out->len > w->start)
		w->out->len = w->start;
	w->failed = true;
	w->in_row = false;
}

int rs_end_warnings(struct rs_writer *w, uint16_t status, uint16_t warnings)
{
	if (w->failed || w->in_row || w->cols_done != w->ncols ||
	    put_eof(w, status, warnings) < 0) {
		rs_abort(w);
		return -1;
	}
	return 0;
}

int rs_end(struct rs_writer *w, uint16_t status)
{
	return rs_end_warnings(w, status, 0);
}

int rs_put_table(struct pbuf *out, uint8_t *seq, uint32_t caps, uint16_t status,
		 unsigned ncols, const char *const *names, size_t nrows,
		 const char *const *cells)
{
	struct rs_writer w;

	rs_begin(&w, out, *seq, caps, ncols);
	for (unsigned c = 0; c < ncols; c++)
		rs_column(&w, names[c], RS_TYPE_VAR_STRING);
	for (size_t r = 0; r < nrows; r++) {
		rs_row_begin(&w);
		for (unsigned c = 0; c < ncols; c++)
			rs_cell_str(&w, cells[r * ncols + c]);
		rs_row_end(&w);
	}
	if (rs_end(&w, status) < 0)
		return -1;
	*seq = rs_next_seq(&w);
	return 0;
}
