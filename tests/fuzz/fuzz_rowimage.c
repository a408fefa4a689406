/*
 * fuzz_rowimage: the binlog row-image decoders of src/cache/tablemap.c
 * (tmap_parse) and src/cache/rowimage.c (rowimg_open, rowimg_next, the
 * cursor, rowimg_format), which read the events of the upstream's binlog:
 * a server of another version, a corrupt relay or a bug must give an
 * error, never a read past the event.
 *
 * Input: byte 0 picks the rows event type (of the 13 rows types, and how
 * the old temporal columns are told: not told, plain, or 3 digits), bytes
 * 1-2 the table map body's length (little-endian), then the table map's
 * body, then the rows event's body (each an exact-size heap copy). The
 * seeds are real pairs from tests/unit/rowimage_vectors.h.
 * Checked: a refused table map leaves no columns; every value's bytes lie
 * inside the rows body (or the inflated rows of a compressed event); a
 * string's bytes inside its value's; a decoded value's kind and reason
 * agree (RV_UNKNOWN has a reason, a known value none); an image's values
 * are its present columns, in order; every text is terminated within
 * its buffer; the scratch buffer stays within ROWIMG_MAX_INFLATED.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/rowimage.h"
#include "cache/tablemap.h"
#include "fuzz_util.h"

static const uint8_t types[] = { 23, 24, 25, 30, 31, 32, 39, 166, 167, 168, 169, 170, 171 };

static bool within(const uint8_t *p, size_t n, const uint8_t *lo, const uint8_t *hi)
{
	return p >= lo && p <= hi && n <= (size_t)(hi - p);
}

static void check_image(const struct rowimg_image *img, const uint8_t *lo, const uint8_t *hi)
{
	struct rowimg_cursor c;
	struct rowimg_value v;
	char text[512];
	unsigned last = 0, n = 0;

	for (rowimg_cursor_init(&c, img); rowimg_cursor_next(&c, &v) > 0; n++) {
		FUZZ_CHECK(rowimg_has(img, v.col), "column %u is not present", v.col);
		FUZZ_CHECK(n == 0 || v.col > last, "columns out of order: %u after %u", v.col, last);
		last = v.col;
		FUZZ_CHECK((v.kind == RV_UNKNOWN) == (v.why != RV_WHY_NONE), "kind %d with reason %d",
			   v.kind, v.why);
		if (v.raw)
			FUZZ_CHECK(within(v.raw, v.raw_len, lo, hi), "value of column %u outside", v.col);
		if (v.kind == RV_STRING || v.kind == RV_JSON || v.kind == RV_GEOMETRY)
			FUZZ_CHECK(v.raw && within(v.v.s.p, v.v.s.len, v.raw, v.raw + v.raw_len),
				   "string of column %u outside its value", v.col);
		if (v.kind == RV_DECIMAL)
			FUZZ_CHECK(fuzz_terminated(v.dec, sizeof(v.dec)), "decimal unterminated");
		rowimg_format(&v, text, sizeof(text));
		FUZZ_CHECK(fuzz_terminated(text, sizeof(text)), "text unterminated");
	}
	FUZZ_CHECK(n <= img->ncols, "%u values of %u columns", n, img->ncols);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tmap map;
	static struct rowimg_scratch z;
	struct rowimg_rows r;
	struct rowimg_image img;
	char err[256] = "";
	size_t mlen;
	uint8_t *mb, *rb;
	unsigned type, told;

	if (size < 3)
		return 0;
	type = types[data[0] % sizeof(types)];
	told = (data[0] / sizeof(types)) % 3;
	mlen = (size_t)(data[1] | data[2] << 8);
	if (mlen > size - 3)
		mlen = size - 3;
	mb = (uint8_t *)fuzz_dup_exact(data + 3, mlen);
	rb = (uint8_t *)fuzz_dup_exact(data + 3 + mlen, size - 3 - mlen);
	if (tmap_parse(&map, mb, mlen, 0, err, sizeof(err)) < 0) {
		FUZZ_CHECK(map.ncols == 0, "a refused map kept %u columns", map.ncols);
		FUZZ_CHECK(fuzz_terminated(err, sizeof(err)) && err[0], "no reason");
	} else {
		FUZZ_CHECK(map.ncols >= 1 && map.ncols <= TMAP_MAX_COLUMNS, "%u columns", map.ncols);
		for (unsigned i = 0; told == 1 && i < map.ncols; i++)
			tmap_set_temporal_dec(&map, i, 3);
		if (told == 2)
			tmap_old_temporal_plain(&map);
		if (rowimg_open(&r, &map, type, rb, size - 3 - mlen, 0, &z, err, sizeof(err)) == 0) {
			const uint8_t *lo = r.t.compressed ? z.p : rb;
			const uint8_t *hi = r.t.compressed ? z.p + z.cap : rb + (size - 3 - mlen);

			FUZZ_CHECK(z.cap <= ROWIMG_MAX_INFLATED, "scratch of %zu bytes", z.cap);
			while (rowimg_next(&r, &img, err, sizeof(err)) > 0)
				check_image(&img, lo, hi);
		}
		FUZZ_CHECK(fuzz_terminated(err, sizeof(err)), "reason unterminated");
	}
	free(mb);
	free(rb);
	return 0;
}
