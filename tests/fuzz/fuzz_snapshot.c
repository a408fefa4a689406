/*
 * fuzz_snapshot: the cache snapshot reader of src/cache/snapshot.c
 * (snapshot_parse), which reads a file the node did not necessarily write:
 * truncated, corrupt, of another version or made up.
 *
 * The input is the whole file (an exact-size heap copy, so a read past its
 * end is an ASan report). Checked: a refusal comes with a terminated,
 * non-empty reason and hands nothing over; an accepted file hands over one
 * header first, then records whose every byte lies inside the input (an
 * entry's result too: none in a file of keys only, else one its status
 * offsets lie in); every entry's shape was handed over before it; every
 * dependency of an entry can be read back; an entry's row constraints
 * (version 2) lie in the input, are sound, and can be walked; the counts
 * handed over are the ones returned.
 *
 * Each input is read twice: as it is (checksum failures), and with its
 * checksums made right first (fix_checksums: the framing walked as the
 * writer lays it out), so that mutations reach the record readers.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "cache/match.h"
#include "cache/snapshot.h"
#include "fuzz_util.h"

struct seen {
	const uint8_t *lo, *hi;
	unsigned headers;
	bool keys_only;               /* the header's SNAPSHOT_KEYS_ONLY */
	uint64_t shapes, entries, bytes;
	unsigned sum;
};

static bool inside(const struct seen *s, const void *p, size_t n)
{
	const uint8_t *b = p;

	return n == 0 || (b >= s->lo && b + n <= s->hi);
}

static int on_header(const struct snapshot_header *h, void *arg)
{
	struct seen *s = arg;

	FUZZ_CHECK(s->headers++ == 0 && s->shapes == 0 && s->entries == 0, "header not first");
	FUZZ_CHECK(h->version >= SNAPSHOT_VERSION_MIN && h->version <= SNAPSHOT_VERSION, "version %u", h->version);
	s->keys_only = h->keys_only;
	FUZZ_CHECK(fuzz_terminated(h->gtid, sizeof h->gtid) && fuzz_terminated(h->mode, sizeof h->mode) &&
		   fuzz_terminated(h->upstream, sizeof h->upstream), "header strings not terminated");
	return 0;
}

static int on_settings(uint32_t id, const uint8_t *list, size_t len, void *arg)
{
	struct seen *s = arg;

	FUZZ_CHECK(id != 0 && inside(s, list, len), "settings %u outside the input", id);
	s->sum += fuzz_touch(list, len);
	return 0;
}

static int on_user(uint32_t id, const char *name, size_t len, void *arg)
{
	struct seen *s = arg;

	FUZZ_CHECK(id != 0 && len > 0 && inside(s, name, len), "user %u outside the input", id);
	return 0;
}

static int on_shape(const struct snapshot_shape *d, void *arg)
{
	struct seen *s = arg;

	FUZZ_CHECK(d->index == s->shapes++, "shape %u out of order", d->index);
	FUZZ_CHECK(inside(s, d->name, d->name_len) && inside(s, d->text, d->text_len), "shape outside the input");
	return 0;
}

static int on_entry(const struct snapshot_entry *e, void *arg)
{
	struct seen *s = arg;
	const char *schema, *table;
	size_t sl, tl;

	FUZZ_CHECK(e->shape < s->shapes, "entry of shape %u before its shape", e->shape);
	FUZZ_CHECK(inside(s, e->key, e->key_len) && inside(s, e->resp, e->resp_len) &&
		   inside(s, e->deps, e->deps_len), "entry outside the input");
	FUZZ_CHECK(e->key_len >= 10 && (s->keys_only ? e->resp_len == 0 && !e->status_off[0] && !e->status_off[1]
						     : e->resp_len > 0 && e->status_off[0] < e->resp_len &&
						       e->status_off[1] < e->resp_len),
		   "key %u, result %u, keys only %d", e->key_len, e->resp_len, s->keys_only);
	for (unsigned i = 0; i < e->ndeps; i++)
		FUZZ_CHECK(snapshot_entry_dep(e, i, &schema, &sl, &table, &tl) && inside(s, schema, sl) &&
			   inside(s, table, tl) && tl > 0, "dependency %u unreadable", i);
	FUZZ_CHECK(!snapshot_entry_dep(e, e->ndeps, &schema, &sl, &table, &tl), "a dependency past ndeps");
	FUZZ_CHECK(!e->cons_len || (inside(s, e->cons, e->cons_len) && e->cons_len <= MATCH_CONS_MAX &&
				    match_blob_valid(e->cons, e->cons_len, e->ntab, e->npost, e->ndeps)),
		   "constraints outside the input or unsound");
	if (e->cons_len) {
		char text[2048];

		/* a blob handed over is walked whole: by the admin's listing */
		match_format(e->cons, e->cons_len, e->ntab, NULL, NULL, text, sizeof(text));
		FUZZ_CHECK(fuzz_terminated(text, sizeof(text)), "constraints' text not terminated");
	}
	s->entries++;
	s->bytes += (uint64_t)e->key_len + e->resp_len;
	return 0;
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Write the right checksums into b where the framing puts them: after the
 * header (magic, version, flags, time, then 5 strings with the server id,
 * a u32, after the second), and after each record. */
static void fix_checksums(uint8_t *b, size_t n)
{
	size_t o = 8 + 4 + 4 + 8;

	for (int i = 0; i < 5; i++) {
		if (i == 2)
			o += 4;
		if (o + 2 > n)
			return;
		o += 2 + ((size_t)b[o] | (size_t)b[o + 1] << 8);
	}
	if (o + 4 > n)
		return;
	wr32(b + o, (uint32_t)crc32(0L, b, (uInt)o));
	o += 4;
	while (o + 5 <= n) {
		size_t len = rd32(b + o + 1);

		if (len > n - o - 5 || n - o - 5 - len < 4)
			return;
		wr32(b + o + 5 + len, (uint32_t)crc32(0L, b + o, (uInt)(5 + len)));
		o += 5 + len + 4;
	}
}

static void parse_one(uint8_t *buf, size_t size)
{
	struct seen s = { 0 };
	struct snapshot_visitor v = { .arg = &s, .header = on_header, .settings = on_settings,
				      .user = on_user, .shape = on_shape, .entry = on_entry };
	struct snapshot_stats st;
	char err[256];
	int rc;

	s.lo = buf;
	s.hi = buf + size;
	memset(err, 0x5a, sizeof err);
	rc = snapshot_parse(buf, size, &v, &st, err, sizeof err);
	if (rc != 0) {
		FUZZ_CHECK(rc == -1, "rc %d", rc);
		FUZZ_CHECK(fuzz_terminated(err, sizeof err) && err[0], "refusal without a reason");
		FUZZ_CHECK(s.headers == 0 && s.entries == 0 && s.shapes == 0, "a refused file handed something over");
	} else {
		FUZZ_CHECK(s.headers == 1, "%u headers", s.headers);
		FUZZ_CHECK(s.entries == st.entries && s.bytes == st.bytes && s.shapes == st.shapes,
			   "counts %llu/%llu differ from the file's", (unsigned long long)s.entries,
			   (unsigned long long)st.entries);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	parse_one(buf, size);
	fix_checksums(buf, size);
	parse_one(buf, size);
	free(buf);
	return 0;
}
