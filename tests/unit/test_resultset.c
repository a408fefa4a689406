/*
 * test_resultset.c: unit tests for src/proto/resultset.c: the exact bytes of a
 * two-column result set (LONGLONG and VAR_STRING columns, a NULL cell, an
 * empty string) with and without CAP_DEPRECATE_EOF, sequence ids from a
 * given start, rs_put_table, rows split at 16 MiB - 1, and the roll-back of
 * a result set after a misuse (too few cells, a row before the columns).
 */
#include "proto/resultset.h"
#include "tap.h"

#include <stdlib.h>

static void dump(const uint8_t *p, size_t n)
{
	printf("#  ");
	for (size_t i = 0; i < n; i++)
		printf(" %02x", p[i]);
	printf("\n");
}

static void is_bytes(const struct pbuf *b, const uint8_t *want, size_t n, const char *name)
{
	if (!ok(b->len == n && memcmp(b->data, want, n) == 0, "%s", name)) {
		printf("# got %zu bytes:\n", b->len);
		dump(b->data, b->len);
		printf("# want %zu bytes:\n", n);
		dump(want, n);
	}
}

/* Column count, "id" LONGLONG, "name" VAR_STRING: seq 1..3. */
#define HEAD \
	0x01, 0x00, 0x00, 0x01, 0x02, \
	0x18, 0x00, 0x00, 0x02, 0x03, 'd', 'e', 'f', 0x00, 0x00, 0x00, 0x02, 'i', 'd', 0x00, \
	0x0c, 0x3f, 0x00, 0x14, 0x00, 0x00, 0x00, 0x08, 0x80, 0x00, 0x00, 0x00, 0x00, \
	0x1a, 0x00, 0x00, 0x03, 0x03, 'd', 'e', 'f', 0x00, 0x00, 0x00, 0x04, 'n', 'a', 'm', 'e', \
	0x00, 0x0c, 0x21, 0x00, 0xfd, 0x02, 0x00, 0x00, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00

static int build(struct pbuf *b, uint32_t caps, struct rs_writer *w)
{
	int rc = 0;

	rc |= rs_begin(w, b, 1, caps, 2);
	rc |= rs_column(w, "id", RS_TYPE_LONGLONG);
	rc |= rs_column(w, "name", RS_TYPE_VAR_STRING);
	rc |= rs_row_begin(w);
	rc |= rs_cell_u64(w, 1);
	rc |= rs_cell(w, "ab", 2);
	rc |= rs_row_end(w);
	rc |= rs_row_begin(w);
	rc |= rs_cell_null(w);
	rc |= rs_cell_str(w, "");
	rc |= rs_row_end(w);
	rc |= rs_end(w, ST_AUTOCOMMIT);
	return rc;
}

static void test_eof_mode(void)
{
	static const uint8_t want[] = {
		HEAD,
		0x05, 0x00, 0x00, 0x04, 0xfe, 0x00, 0x00, 0x02, 0x00,       /* EOF: warnings, status */
		0x05, 0x00, 0x00, 0x05, 0x01, '1', 0x02, 'a', 'b',
		0x02, 0x00, 0x00, 0x06, 0xfb, 0x00,
		0x05, 0x00, 0x00, 0x07, 0xfe, 0x00, 0x00, 0x02, 0x00,
	};
	struct pbuf b = {0};
	struct rs_writer w;

	is_int(build(&b, CAP_PROTOCOL_41, &w), 0, "EOF mode: every call succeeds");
	is_bytes(&b, want, sizeof want, "EOF mode: exact bytes (count, 2 columns, EOF, 2 rows, EOF)");
	is_int(rs_next_seq(&w), 8, "EOF mode: next sequence id is 8");
	is_int(w.rows, 2, "EOF mode: two rows counted");
	pbuf_free(&b);
}

static void test_deprecate_eof_mode(void)
{
	static const uint8_t want[] = {
		HEAD,
		0x05, 0x00, 0x00, 0x04, 0x01, '1', 0x02, 'a', 'b',
		0x02, 0x00, 0x00, 0x05, 0xfb, 0x00,
		/* OK with the 0xfe header: 0xfe, affected 0, insert id 0, status, warnings */
		0x07, 0x00, 0x00, 0x06, 0xfe, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
	};
	struct pbuf b = {0};
	struct rs_writer w;

	is_int(build(&b, CAP_PROTOCOL_41 | CAP_DEPRECATE_EOF, &w), 0,
	       "DEPRECATE_EOF mode: every call succeeds");
	is_bytes(&b, want, sizeof want,
		 "DEPRECATE_EOF mode: exact bytes (no EOF after the columns, 0xfe OK at the end)");
	is_int(rs_next_seq(&w), 7, "DEPRECATE_EOF mode: next sequence id is 7");
	pbuf_free(&b);
}

static void test_warnings_and_seq(void)
{
	static const uint8_t want_tail[] = { 0x05, 0x00, 0x00, 0x0a, 0xfe, 0x03, 0x00, 0x0a, 0x00 };
	struct pbuf b = {0};
	struct rs_writer w;

	rs_begin(&w, &b, 7, 0, 1);
	rs_column(&w, "x", RS_TYPE_VAR_STRING);
	is_int(rs_end_warnings(&w, ST_AUTOCOMMIT | ST_MORE_RESULTS_EXISTS, 3), 0,
	       "empty result set with warnings");
	is_int(b.data[3], 7, "  first packet has the given sequence id 7");
	ok(b.len >= sizeof want_tail &&
	   memcmp(b.data + b.len - sizeof want_tail, want_tail, sizeof want_tail) == 0,
	   "  final EOF: seq 10, 3 warnings, status AUTOCOMMIT|MORE_RESULTS");
	pbuf_free(&b);
}

static void test_put_table(void)
{
	static const char *const names[] = { "a" };
	static const char *const cells[] = { "x", NULL };
	static const uint8_t rows[] = {
		0x02, 0x00, 0x00, 0x03, 0x01, 'x',
		0x01, 0x00, 0x00, 0x04, 0xfb,
		0x07, 0x00, 0x00, 0x05, 0xfe, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
	};
	struct pbuf b = {0};
	uint8_t seq = 1;

	is_int(rs_put_table(&b, &seq, CAP_DEPRECATE_EOF, ST_AUTOCOMMIT, 1, names, 2, cells), 0,
	       "rs_put_table");
	is_int(seq, 6, "  advances the sequence id past the result");
	ok(b.len > sizeof rows && memcmp(b.data + b.len - sizeof rows, rows, sizeof rows) == 0,
	   "  rows 'x' and NULL, then the 0xfe OK");
	pbuf_free(&b);
}

static void test_misuse_rolls_back(void)
{
	struct pbuf b = {0};
	struct rs_writer w;

	pbuf_append(&b, "keep", 4);
	rs_begin(&w, &b, 1, 0, 2);
	rs_column(&w, "a", RS_TYPE_VAR_STRING);
	rs_column(&w, "b", RS_TYPE_VAR_STRING);
	rs_row_begin(&w);
	rs_cell_str(&w, "only one");
	is_int(rs_row_end(&w), -1, "a row with too few cells fails");
	is_int(rs_cell_str(&w, "x"), -1, "  later calls fail too (sticky)");
	is_int(rs_end(&w, ST_AUTOCOMMIT), -1, "  rs_end reports the failure");
	is_int(b.len, 4, "  the output is cut back to where rs_begin found it");
	is_mem(b.data, "keep", 4, "  earlier output is kept");

	rs_begin(&w, &b, 1, 0, 1);
	is_int(rs_row_begin(&w), -1, "a row before the columns fails");
	rs_abort(&w);
	is_int(b.len, 4, "  rs_abort cuts back");
	is_int(rs_begin(&w, &b, 1, 0, 0), -1, "zero columns is refused");
	pbuf_free(&b);
}

/* One row whose payload is exactly `payload` bytes: one cell of a length
 * that makes it so (with its 4- or 9-byte lenenc prefix). */
static void check_split(size_t payload, const char *name)
{
	size_t cell = lenenc_size(payload - 9) == 9 ? payload - 9 : payload - 4;
	size_t chunks = payload / PKT_MAX_PAYLOAD + 1;
	char *big = malloc(cell);
	struct pbuf b = {0};
	struct rs_writer w;
	size_t pos, ok_all = 1, total = 0;

	if (!big) {
		ok(0, "%s: no memory", name);
		return;
	}
	memset(big, 'z', cell);
	rs_begin(&w, &b, 1, CAP_DEPRECATE_EOF, 1);
	rs_column(&w, "big", RS_TYPE_VAR_STRING);
	rs_row_begin(&w);
	rs_cell(&w, big, cell);
	is_int(rs_row_end(&w), 0, name);
	is_int(rs_end(&w, ST_AUTOCOMMIT), 0, "  rs_end");
	/* skip count + column: seq 1, 2; the row starts at seq 3 */
	pos = 0;
	for (int i = 0; i < 2; i++)
		pos += PKT_HEADER_LEN + rd_u24(b.data + pos);
	for (size_t i = 0; i < chunks; i++) {
		size_t len = rd_u24(b.data + pos);
		size_t want = i + 1 < chunks ? PKT_MAX_PAYLOAD : payload % PKT_MAX_PAYLOAD;

		ok_all &= len == want && b.data[pos + 3] == (uint8_t)(3 + i);
		for (size_t k = 0; k < len; k++)   /* the cell's bytes, past its prefix */
			ok_all &= total + k < payload - cell || b.data[pos + PKT_HEADER_LEN + k] == 'z';
		total += len;
		pos += PKT_HEADER_LEN + len;
	}
	ok(ok_all && total == payload, "  %zu packets with full chunks and consecutive ids", chunks);
	ok(b.data[pos + 4] == 0xfe && b.data[pos + 3] == (uint8_t)(3 + chunks),
	   "  the terminator follows with the next id");
	free(big);
	pbuf_free(&b);
}

int main(void)
{
	test_eof_mode();
	test_deprecate_eof_mode();
	test_warnings_and_seq();
	test_put_table();
	test_misuse_rolls_back();
	check_split(PKT_MAX_PAYLOAD + 20, "a row of 16 MiB - 1 + 20 bytes is split in two packets");
	check_split(2 * (size_t)PKT_MAX_PAYLOAD + 3, "a row of 32 MiB + 1 bytes is split in three packets");
	check_split(PKT_MAX_PAYLOAD, "a row of exactly 16 MiB - 1 bytes ends with an empty packet");
	return done_testing();
}
