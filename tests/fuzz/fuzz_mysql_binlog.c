/*
 * fuzz_mysql_binlog: Shoal's own reader of MySQL's binlog stream,
 * src/cache/mysql_dump.c (mysql_event_parse, the event decoders,
 * mysql_dump_begin_payload and the events mysql_dump_next hands out of a
 * TRANSACTION_PAYLOAD), and the GTID sets of src/cache/gtid_set.c. The
 * events come from the upstream server, or a corrupt relay: every decoder
 * must refuse malformed bytes, never read outside them.
 *
 * Input: byte 0 picks the mode (bits 0-1) and its options (bits 2-3); the
 * rest (an exact-size heap copy) is
 *   mode 0: one stream event (header, body, checksum). Bit 2: the stream
 *           has 4-byte checksums. Bit 3: the header's event_length is
 *           taken as given (else the harness writes the bytes' count there,
 *           so that most inputs reach the decoders). The event is decoded
 *           by its type (GTID, GTID_TAGGED, QUERY, TABLE_MAP, ROTATE,
 *           TRANSACTION_PAYLOAD).
 *   mode 1: a transaction's events; the harness builds the
 *           TRANSACTION_PAYLOAD event around them, as MySQL writes it (size,
 *           compression, uncompressed size, end mark, the bytes), stored
 *           (compression 255) or, with bit 3, compressed with zstd. Bit 2:
 *           a checksum after it.
 *   mode 2: a TRANSACTION_PAYLOAD event, its fields and (zstd) bytes as
 *           given. Bits 2 and 3 as in mode 0; without bit 3 the harness
 *           writes the type (40) too.
 *   mode 3: a GTID set's text.
 * A payload event (modes 1, 2) is taken in by mysql_dump_begin_payload on a
 * zeroed struct mysql_dump and its events read by mysql_dump_next only
 * while the payload has bytes left (past them it would read the network).
 * Payloads that declare more than FUZZ_PAYLOAD_MAX bytes uncompressed are
 * skipped (the code allows 1 GiB: too much for libFuzzer's rss limit), but
 * for those over 1 GiB, which the code refuses before allocating.
 * The seeds are the shapes of tests/unit/test_mysql_dump.c and
 * tests/unit/test_gtid_set.c (the tagged GTID events captured from MySQL
 * 9.7), and a zstd payload made by the zstd CLI.
 * Checked: mysql_event_parse accepts exactly the bytes whose event_length
 * is their count and that hold a header and the checksum, and its fields
 * are the header's; every pointer a decoder returns lies inside the
 * event's body with its length (names with their NUL, the statement and
 * the payload reaching the body's end); a GTID's gno is the one in the
 * body, in 1..GTID_GNO_MAX (a tagged one with a valid lower-case tag:
 * gtid_tag_parse gives back the same text) and can be
 * added to a GTID set, which then contains it; a payload taken in is its
 * stored bytes, or as many bytes as it declares, and mode 1's round trip
 * gives back its events; each event handed out lies inside the payload,
 * right after the one before, with no checksum and the payload event's
 * end position; a refused payload or inner event leaves nothing to hand
 * out; close frees everything. A GTID set parsed is canonical (sids
 * sorted, none empty, valid tags, intervals in 1..GTID_GNO_MAX sorted,
 * neither overlapping nor touching); its text parses back to an equal set
 * (a subset both ways) that formats the same, a cut format is a
 * terminated prefix; gtid_set_encode needs exactly the bytes it writes
 * (decoded here field by field), and writes nothing when they do not fit;
 * every interval's first and last gno are contained, the gnos next to it
 * not; a copy is equal, and with one gno more a strict superset. A
 * refused text leaves the set empty and says at which offset (within the
 * text).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "cache/gtid_set.h"
#include "cache/mysql_dump.h"
#include "fuzz_util.h"

#define FUZZ_PAYLOAD_MAX (1u << 20)   /* the largest payload decompressed here */
#define PAYLOAD_REFUSED (1u << 30)    /* mysql_dump.c refuses larger ones before allocating */
#define BUILT_POS 0x12345u            /* the built payload event's next_pos */

static struct gtid_set scratch, set1, set2, set3;   /* reused, as the follower reuses its sets */

static bool within(const void *p, size_t n, const void *lo, size_t lo_len)
{
	const uint8_t *b = p, *l = lo;

	return b >= l && b <= l + lo_len && n <= (size_t)(l + lo_len - b);
}

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = n; i > 0; i--)
		v = v << 8 | p[i - 1];
	return v;
}

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- events ---------------------------------------------------------------------- */

/* The tag is valid and already lower-case: gtid_tag_parse gives it back. */
static void check_tag(const char *tag)
{
	char again[GTID_TAG_MAX + 1];
	size_t n;

	FUZZ_CHECK(fuzz_terminated(tag, GTID_TAG_MAX + 1), "tag unterminated");
	n = strlen(tag);
	FUZZ_CHECK(gtid_tag_parse(tag, n, again), "tag '%s' is not a tag", tag);
	FUZZ_CHECK(strcmp(again, tag) == 0, "tag '%s' is not lower-case ('%s')", tag, again);
}

/* A GTID a decoder accepted goes into a set, which then holds it. */
static void check_gtid_addable(const uint8_t uuid[GTID_UUID_LEN], const char *tag, uint64_t gno)
{
	gtid_set_clear(&scratch);
	FUZZ_CHECK(gtid_set_add(&scratch, uuid, tag, gno) == 0, "gtid_set_add refused gno %llu tag '%s'",
		   (unsigned long long)gno, tag);
	FUZZ_CHECK(gtid_set_contains(&scratch, uuid, tag, gno), "the set lost gno %llu",
		   (unsigned long long)gno);
}

/* ev's body decoded by its type; every result checked against the body. */
static void check_event(const struct mysql_event *ev)
{
	const uint8_t *body = ev->body;
	size_t blen = ev->body_len;

	fuzz_touch(ev->raw, ev->raw_len);
	switch (ev->type) {
	case MYEV_GTID: {
		uint8_t uuid[GTID_UUID_LEN];
		uint64_t gno = 0;
		bool want = blen >= 1 + GTID_UUID_LEN + 8 && le(body + 1 + GTID_UUID_LEN, 8) != 0 &&
			    le(body + 1 + GTID_UUID_LEN, 8) <= GTID_GNO_MAX;

		FUZZ_CHECK(mysql_ev_gtid(ev, uuid, &gno) == want, "GTID of %zu bytes: %s", blen,
			   want ? "refused" : "accepted");
		if (!want)
			break;
		FUZZ_CHECK(memcmp(uuid, body + 1, GTID_UUID_LEN) == 0, "GTID uuid not the body's");
		FUZZ_CHECK(gno == le(body + 1 + GTID_UUID_LEN, 8), "GTID gno not the body's");
		FUZZ_CHECK(gno >= 1 && gno <= GTID_GNO_MAX, "GTID gno %llu", (unsigned long long)gno);
		check_gtid_addable(uuid, "", gno);
		break;
	}
	case MYEV_GTID_TAGGED: {
		uint8_t uuid[GTID_UUID_LEN];
		char tag[GTID_TAG_MAX + 1];
		uint64_t gno = 0;

		memset(tag, 'x', sizeof(tag));
		if (!mysql_ev_gtid_tagged(ev, uuid, tag, &gno))
			break;
		FUZZ_CHECK(gno >= 1 && gno <= GTID_GNO_MAX, "tagged gno %llu", (unsigned long long)gno);
		check_tag(tag);
		check_gtid_addable(uuid, tag, gno);
		break;
	}
	case MYEV_QUERY: {
		const char *db, *stmt;
		size_t dlen, slen;

		if (!mysql_ev_query(ev, &db, &dlen, &stmt, &slen))
			break;
		FUZZ_CHECK(within(db, dlen + 1, body, blen), "QUERY schema (%zu and its NUL) outside", dlen);
		FUZZ_CHECK(stmt == db + dlen + 1, "QUERY statement not after the schema's NUL");
		FUZZ_CHECK(within(stmt, slen, body, blen) && (const uint8_t *)stmt + slen == body + blen,
			   "QUERY statement (%zu) not the body's end", slen);
		fuzz_touch(db, dlen + 1);
		fuzz_touch(stmt, slen);
		break;
	}
	case MYEV_TABLE_MAP: {
		const char *db, *table;
		size_t dlen, tlen;
		uint64_t id;

		if (!mysql_ev_table_map(ev, &id, &db, &dlen, &table, &tlen))
			break;
		FUZZ_CHECK(id == le(body, 6), "TABLE_MAP table id not the body's");
		FUZZ_CHECK(within(db, dlen + 1, body, blen), "TABLE_MAP schema (%zu and its NUL) outside", dlen);
		FUZZ_CHECK(table == db + dlen + 2, "TABLE_MAP table not after the schema's NUL and length");
		FUZZ_CHECK(within(table, tlen + 1, body, blen), "TABLE_MAP table (%zu and its NUL) outside", tlen);
		fuzz_touch(db, dlen + 1);
		fuzz_touch(table, tlen + 1);
		break;
	}
	case MYEV_ROTATE: {
		const char *name;
		size_t len;
		bool got = mysql_ev_rotate(ev, &name, &len);

		FUZZ_CHECK(got == (blen > 8), "ROTATE of %zu bytes: %s", blen, got ? "accepted" : "refused");
		if (!got)
			break;
		FUZZ_CHECK((const uint8_t *)name == body + 8 && len == blen - 8, "ROTATE name not the body's rest");
		fuzz_touch(name, len);
		break;
	}
	case MYEV_TRANSACTION_PAYLOAD: {
		unsigned comp;
		const uint8_t *data;
		size_t len;
		uint64_t unc;

		if (!mysql_ev_payload(ev, &comp, &data, &len, &unc))
			break;
		FUZZ_CHECK(comp <= 256, "compression %u", comp);
		FUZZ_CHECK(within(data, len, body, blen) && data + len == body + blen,
			   "payload bytes (%zu) not the body's end", len);
		fuzz_touch(data, len);
		break;
	}
	default:
		break;
	}
}

/* Mode 0: one event of the stream. */
static void one_event(const uint8_t *in, size_t n, bool crc, bool as_given)
{
	uint8_t *p = (uint8_t *)fuzz_dup_exact(in, n);
	unsigned clen = crc ? 4 : 0;
	struct mysql_event ev;
	bool want, got;

	if (!as_given && n >= 13)
		put_le(p + 9, n, 4);
	want = n >= MYEV_HEADER_LEN + clen && le(p + 9, 4) == n;
	got = mysql_event_parse(p, n, clen, &ev);
	FUZZ_CHECK(got == want, "%zu bytes (checksum %u): %s", n, clen, got ? "accepted" : "refused");
	if (got) {
		FUZZ_CHECK(ev.raw == p && ev.raw_len == n, "raw not the event");
		FUZZ_CHECK(ev.body == p + MYEV_HEADER_LEN && ev.body_len == n - MYEV_HEADER_LEN - clen,
			   "body not between the header and the checksum");
		FUZZ_CHECK(ev.checksum_len == clen && !ev.in_payload, "checksum %u, in payload %d",
			   ev.checksum_len, ev.in_payload);
		FUZZ_CHECK(ev.timestamp == le(p, 4) && ev.type == p[4] && ev.server_id == le(p + 5, 4) &&
			   ev.next_pos == le(p + 13, 4) && ev.flags == le(p + 17, 2),
			   "header fields not the header's");
		check_event(&ev);
	}
	free(p);
}

/* The payload event ev (from raw) taken in and its events handed out.
 * orig: the events it must give back (mode 1), or NULL. */
static void payload(const struct mysql_event *ev, const uint8_t *orig, size_t orig_len)
{
	struct mysql_dump d;
	struct mysql_event in;
	char err[256];
	unsigned comp;
	const uint8_t *data;
	size_t len, events = 0;
	uint64_t unc;
	bool fields;
	int rc;

	check_event(ev);
	fields = mysql_ev_payload(ev, &comp, &data, &len, &unc);
	if (fields && comp == 0 && unc > FUZZ_PAYLOAD_MAX && unc <= PAYLOAD_REFUSED)
		return;   /* too large for the fuzzer's memory (larger still: refused unread) */
	memset(&d, 0, sizeof(d));
	d.checksum_len = ev->checksum_len;
	err[0] = '\0';
	rc = mysql_dump_begin_payload(&d, ev, err, sizeof(err));
	FUZZ_CHECK(rc == 0 || rc == -1, "begin_payload returned %d", rc);
	FUZZ_CHECK(fuzz_terminated(err, sizeof(err)), "reason unterminated");
	if (rc < 0) {
		FUZZ_CHECK(err[0], "refused with no reason");
		FUZZ_CHECK(d.payload_at == d.payload_len, "a refused payload left %zu bytes",
			   d.payload_len - d.payload_at);
		FUZZ_CHECK(!orig, "a built payload refused: %s", err);
		mysql_dump_close(&d);
		return;
	}
	FUZZ_CHECK(fields && (comp == 0 || comp == 255), "a payload taken in with fields %d, compression %u",
		   fields, comp);
	FUZZ_CHECK(d.payload_len == (comp == 255 ? len : unc), "payload of %zu bytes, declared %llu",
		   d.payload_len, (unsigned long long)(comp == 255 ? len : unc));
	FUZZ_CHECK(d.payload_len <= d.payload_cap && d.payload_at == 0 && d.payload_end == ev->next_pos,
		   "payload state: len %zu cap %zu at %zu end %u", d.payload_len, d.payload_cap, d.payload_at,
		   d.payload_end);
	fuzz_touch(d.payload, d.payload_len);
	if (comp == 255)
		FUZZ_CHECK(len == 0 || memcmp(d.payload, data, len) == 0, "stored payload not its bytes");
	if (orig)
		FUZZ_CHECK(d.payload_len == orig_len && (orig_len == 0 || memcmp(d.payload, orig, orig_len) == 0),
			   "the payload's round trip lost its events");

	/* never past the payload: mysql_dump_next would read the network */
	while (d.payload_at < d.payload_len) {
		size_t at = d.payload_at, plen = d.payload_len;

		memset(&in, 0xa5, sizeof(in));
		rc = mysql_dump_next(&d, &in, err, sizeof(err));
		FUZZ_CHECK(rc == 1 || rc == -1, "next returned %d with %zu bytes left", rc, plen - at);
		if (rc < 0) {
			FUZZ_CHECK(fuzz_terminated(err, sizeof(err)) && err[0], "refused with no reason");
			FUZZ_CHECK(d.payload_len == 0 && d.payload_at == 0, "a refused event left the payload");
			break;
		}
		events++;
		FUZZ_CHECK(in.raw == d.payload + at && in.raw_len == d.payload_at - at,
			   "event %zu is not the next %zu bytes", events, d.payload_at - at);
		FUZZ_CHECK(in.raw_len >= MYEV_HEADER_LEN && within(in.raw, in.raw_len, d.payload, d.payload_len),
			   "event %zu outside the payload", events);
		FUZZ_CHECK(in.body == in.raw + MYEV_HEADER_LEN && in.body_len == in.raw_len - MYEV_HEADER_LEN,
			   "event %zu's body not the rest of it", events);
		FUZZ_CHECK(in.in_payload && in.checksum_len == 0 && in.next_pos == ev->next_pos,
			   "event %zu: in payload %d, checksum %u, next_pos %u", events, in.in_payload,
			   in.checksum_len, in.next_pos);
		FUZZ_CHECK(in.type == in.raw[4] && le(in.raw + 9, 4) == in.raw_len, "event %zu's header", events);
		check_event(&in);
	}
	mysql_dump_close(&d);
	FUZZ_CHECK(!d.payload && !d.zstd && !d.payload_len && !d.payload_cap, "close left buffers");
}

static size_t put_packed(uint8_t *p, uint64_t v)
{
	if (v < 251) {
		p[0] = (uint8_t)v;
		return 1;
	}
	if (v < (1u << 16)) {
		p[0] = 252;
		put_le(p + 1, v, 2);
		return 3;
	}
	if (v < (1u << 24)) {
		p[0] = 253;
		put_le(p + 1, v, 3);
		return 4;
	}
	p[0] = 254;
	put_le(p + 1, v, 8);
	return 9;
}

static size_t put_field(uint8_t *p, uint64_t type, uint64_t v)
{
	uint8_t tmp[9];
	size_t vn = put_packed(tmp, v), n = put_packed(p, type);

	n += put_packed(p + n, vn);
	memcpy(p + n, tmp, vn);
	return n + vn;
}

/* Mode 1: the payload event built around the events in[0, n). */
static void built_payload(const uint8_t *in, size_t n, bool crc, bool zstd)
{
	static ZSTD_CCtx *cctx;
	uint8_t *z = NULL, *raw;
	const uint8_t *bytes = in;
	size_t blen = n, at = MYEV_HEADER_LEN, len;
	struct mysql_event ev;

	if (n > FUZZ_PAYLOAD_MAX)
		return;
	if (zstd) {
		size_t bound = ZSTD_compressBound(n);

		if (!cctx && !(cctx = ZSTD_createCCtx()))
			abort();
		if (!(z = malloc(bound)))
			abort();
		blen = ZSTD_compressCCtx(cctx, z, bound, in, n, 1);
		FUZZ_CHECK(!ZSTD_isError(blen), "ZSTD_compress: %s", ZSTD_getErrorName(blen));
		bytes = z;
	}
	len = MYEV_HEADER_LEN + 3 * 11 + 1 + blen + (crc ? 4 : 0);
	if (!(raw = malloc(len)))
		abort();
	at += put_field(raw + at, 1, blen);
	at += put_field(raw + at, 2, zstd ? 0 : 255);
	at += put_field(raw + at, 3, n);
	raw[at++] = 0;
	memcpy(raw + at, bytes, blen);
	at += blen;
	if (crc) {
		put_le(raw + at, 0xdeadbeef, 4);
		at += 4;
	}
	put_le(raw, 0x5f3e2d1c, 4);
	raw[4] = MYEV_TRANSACTION_PAYLOAD;
	put_le(raw + 5, 1, 4);
	put_le(raw + 9, at, 4);
	put_le(raw + 13, BUILT_POS, 4);
	put_le(raw + 17, 0, 2);
	free(z);
	/* exactly its size, so that a read past it is caught */
	z = (uint8_t *)fuzz_dup_exact(raw, at);
	free(raw);
	FUZZ_CHECK(mysql_event_parse(z, at, crc ? 4 : 0, &ev), "the built payload event does not parse");
	payload(&ev, in, n);
	free(z);
}

/* Mode 2: the payload event as given (its length and type written unless as_given). */
static void given_payload(const uint8_t *in, size_t n, bool crc, bool as_given)
{
	uint8_t *p = (uint8_t *)fuzz_dup_exact(in, n);
	struct mysql_event ev;

	if (!as_given && n >= MYEV_HEADER_LEN) {
		p[4] = MYEV_TRANSACTION_PAYLOAD;
		put_le(p + 9, n, 4);
	}
	if (mysql_event_parse(p, n, crc ? 4 : 0, &ev) && ev.type == MYEV_TRANSACTION_PAYLOAD)
		payload(&ev, NULL, 0);
	free(p);
}

/* ---- GTID sets --------------------------------------------------------------------- */

static int sid_order(const struct gtid_sid *a, const struct gtid_sid *b)
{
	int c = memcmp(a->uuid, b->uuid, GTID_UUID_LEN);

	return c ? c : strcmp(a->tag, b->tag);
}

/* s is canonical: sids sorted and distinct, none empty, tags valid,
 * intervals in range, sorted, apart. */
static void check_set(const struct gtid_set *s)
{
	FUZZ_CHECK(s->n <= s->cap, "%u sids, capacity %u", s->n, s->cap);
	for (unsigned i = 0; i < s->n; i++) {
		const struct gtid_sid *d = &s->sid[i];

		check_tag(d->tag);
		FUZZ_CHECK(i == 0 || sid_order(&s->sid[i - 1], d) < 0, "sid %u out of order", i);
		FUZZ_CHECK(d->n >= 1 && d->n <= d->cap, "sid %u: %u intervals, capacity %u", i, d->n, d->cap);
		for (unsigned k = 0; k < d->n; k++) {
			const struct gtid_interval *v = &d->iv[k];

			FUZZ_CHECK(v->first >= 1 && v->first <= v->last && v->last <= GTID_GNO_MAX,
				   "sid %u interval %llu-%llu", i, (unsigned long long)v->first,
				   (unsigned long long)v->last);
			FUZZ_CHECK(k == 0 || d->iv[k - 1].last + 1 < v->first,
				   "sid %u: intervals %u and %u not apart", i, k - 1, k);
		}
	}
}

static void check_equal(const struct gtid_set *a, const struct gtid_set *b, const char *what)
{
	FUZZ_CHECK(gtid_set_subset(a, b) && gtid_set_subset(b, a), "%s: not the same set", what);
}

/* The binary form, read back field by field: exactly need bytes. */
static void check_encode(const struct gtid_set *s)
{
	size_t need = gtid_set_encode(s, NULL, 0), at = 8;
	bool tagged = gtid_set_has_tags(s), any = false;
	uint8_t *b;

	for (unsigned i = 0; i < s->n; i++)
		any |= s->sid[i].tag[0] != '\0';
	FUZZ_CHECK(tagged == any, "has_tags %d", tagged);
	FUZZ_CHECK(need >= 8, "encode needs %zu bytes", need);
	b = malloc(need);
	if (!b)
		abort();
	memset(b, 0xa5, need);
	FUZZ_CHECK(gtid_set_encode(s, b, need - 1) == need, "encode's size changed with its room");
	for (size_t i = 0; i < need; i++)
		FUZZ_CHECK(b[i] == 0xa5, "encode wrote into %zu bytes (needs %zu)", need - 1, need);
	FUZZ_CHECK(gtid_set_encode(s, b, need) == need, "encode's size changed");
	FUZZ_CHECK(le(b, 8) == (tagged ? (1ull << 56 | (uint64_t)s->n << 8 | 1) : s->n), "encoded head");
	for (unsigned i = 0; i < s->n; i++) {
		const struct gtid_sid *d = &s->sid[i];

		FUZZ_CHECK(at + GTID_UUID_LEN <= need && memcmp(b + at, d->uuid, GTID_UUID_LEN) == 0,
			   "encoded sid %u's uuid", i);
		at += GTID_UUID_LEN;
		if (tagged) {
			size_t tl = strlen(d->tag);

			FUZZ_CHECK(at + 1 + tl <= need && b[at] == tl << 1 && memcmp(b + at + 1, d->tag, tl) == 0,
				   "encoded sid %u's tag", i);
			at += 1 + tl;
		}
		FUZZ_CHECK(at + 8 <= need && le(b + at, 8) == d->n, "encoded sid %u's count", i);
		at += 8;
		for (unsigned k = 0; k < d->n; k++) {
			FUZZ_CHECK(at + 16 <= need && le(b + at, 8) == d->iv[k].first &&
				   le(b + at + 8, 8) == d->iv[k].last + 1, "encoded sid %u interval %u", i, k);
			at += 16;
		}
	}
	FUZZ_CHECK(at == need, "encode wrote %zu bytes, said %zu", at, need);
	free(b);
}

static void check_contains(const struct gtid_set *s)
{
	for (unsigned i = 0; i < s->n; i++) {
		const struct gtid_sid *d = &s->sid[i];
		const char *tag = d->tag[0] ? d->tag : NULL;
		char upper[GTID_TAG_MAX + 1];

		for (size_t j = 0; j <= strlen(d->tag); j++)
			upper[j] = d->tag[j] >= 'a' && d->tag[j] <= 'z' ? (char)(d->tag[j] - 32) : d->tag[j];
		for (unsigned k = 0; k < d->n; k++) {
			uint64_t f = d->iv[k].first, l = d->iv[k].last;

			FUZZ_CHECK(gtid_set_contains(s, d->uuid, tag, f) && gtid_set_contains(s, d->uuid, tag, l),
				   "sid %u: %llu-%llu not contained", i, (unsigned long long)f,
				   (unsigned long long)l);
			FUZZ_CHECK(gtid_set_contains(s, d->uuid, upper, l), "sid %u: upper-case tag", i);
			FUZZ_CHECK(f == 1 || !gtid_set_contains(s, d->uuid, tag, f - 1), "sid %u: %llu contained",
				   i, (unsigned long long)(f - 1));
			FUZZ_CHECK(l == GTID_GNO_MAX || !gtid_set_contains(s, d->uuid, tag, l + 1),
				   "sid %u: %llu contained", i, (unsigned long long)(l + 1));
		}
	}
}

/* Mode 3: a GTID set's text. */
static void gtid_text(const uint8_t *in, size_t n)
{
	char *t = fuzz_dup_exact(in, n), *f, *cut, err[128];
	size_t flen, clen;
	int rc;

	err[0] = '\0';
	rc = gtid_set_parse(&set1, t, n, err, sizeof(err));
	FUZZ_CHECK(rc == 0 || rc == -1, "parse returned %d", rc);
	if (rc < 0) {
		unsigned long long off;

		FUZZ_CHECK(gtid_set_empty(&set1), "a refused text left %u sids", set1.n);
		FUZZ_CHECK(fuzz_terminated(err, sizeof(err)), "reason unterminated");
		FUZZ_CHECK(strcmp(err, "out of memory") == 0 ||
			   (sscanf(err, "malformed at offset %llu:", &off) == 1 && off <= n),
			   "reason '%s' for %zu bytes", err, n);
		free(t);
		return;
	}
	check_set(&set1);

	flen = gtid_set_format(&set1, NULL, 0);
	f = malloc(flen + 1);
	if (!f)
		abort();
	FUZZ_CHECK(gtid_set_format(&set1, f, flen + 1) == flen && f[flen] == '\0' && strlen(f) == flen,
		   "format of %zu characters", flen);
	clen = flen / 2 + 1;
	cut = malloc(clen);
	if (!cut)
		abort();
	FUZZ_CHECK(gtid_set_format(&set1, cut, clen) == flen && cut[clen - 1] == '\0' &&
		   memcmp(cut, f, clen - 1) == 0, "format cut to %zu bytes is not a prefix", clen);
	free(cut);

	/* the text parses back to the same set (from an exact-size copy) */
	cut = fuzz_dup_exact((const uint8_t *)f, flen);
	rc = gtid_set_parse(&set2, cut, flen, err, sizeof(err));
	FUZZ_CHECK(rc == 0, "the formatted text '%s' does not parse: %s", f, err);
	free(cut);
	check_set(&set2);
	check_equal(&set1, &set2, "parse(format(s))");
	cut = malloc(flen + 1);
	if (!cut)
		abort();
	FUZZ_CHECK(gtid_set_format(&set2, cut, flen + 1) == flen && strcmp(cut, f) == 0,
		   "the text again formats otherwise: '%s' then '%s'", f, cut);
	free(cut);

	check_encode(&set1);
	check_contains(&set1);
	FUZZ_CHECK(gtid_set_copy(&set3, &set1) == 0, "copy failed");
	check_set(&set3);
	check_equal(&set1, &set3, "copy");
	if (set1.n) {   /* one more gno: a strict superset */
		const struct gtid_sid *d = &set1.sid[set1.n - 1];
		uint64_t g = d->iv[d->n - 1].last + 1;

		gtid_set_clear(&scratch);
		FUZZ_CHECK(!gtid_set_subset(&set1, &scratch) && gtid_set_subset(&scratch, &set1),
			   "the empty set");
		if (g <= GTID_GNO_MAX) {
			FUZZ_CHECK(gtid_set_add(&set3, d->uuid, d->tag, g) == 0, "add of %llu refused",
				   (unsigned long long)g);
			check_set(&set3);
			FUZZ_CHECK(gtid_set_contains(&set3, d->uuid, d->tag, g) &&
				   gtid_set_subset(&set1, &set3) && !gtid_set_subset(&set3, &set1),
				   "a set with %llu added", (unsigned long long)g);
		}
	}
	free(f);
	free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool crc, bit3;

	if (size < 1)
		return 0;
	crc = data[0] & 4;
	bit3 = data[0] & 8;
	switch (data[0] & 3) {
	case 0:
		one_event(data + 1, size - 1, crc, bit3);
		break;
	case 1:
		built_payload(data + 1, size - 1, crc, bit3);
		break;
	case 2:
		given_payload(data + 1, size - 1, crc, bit3);
		break;
	default:
		gtid_text(data + 1, size - 1);
		break;
	}
	return 0;
}
