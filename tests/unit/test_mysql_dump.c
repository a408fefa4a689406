/*
 * test_mysql_dump.c: unit tests for the MySQL binlog event reader
 * (src/cache/mysql_dump.c), without a server: the 19-byte event header and
 * the checksum left out of the body; the decoders of the events the
 * follower reads (GTID, QUERY, TABLE_MAP, ROTATE, TRANSACTION_PAYLOAD's
 * fields), each fed every event cut short at the places where one of its
 * fields starts or ends; and a transaction payload's events handed out one
 * by one by mysql_dump_next(), zstd-compressed and stored, with the
 * payload's end position and no checksum, and the payloads refused
 * (unknown compression, the wrong sizes, corrupt zstd bytes, an inner
 * event cut short).
 *
 * Why: the follower trusts these decoders with bytes off the network; one
 * that reads past an event, or hands out a payload's events with the wrong
 * position, would corrupt the cache's invalidation or crash it. Every
 * event is built in a buffer of its exact size, so that a read one byte
 * past it is caught when the test runs under AddressSanitizer.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "cache/mysql_dump.h"
#include "tap.h"

#define TS 0x5f3e2d1cu          /* every event's timestamp */
#define SERVER 0x0a0b0c0du      /* and server id */
#define FLAGS 0x0428u           /* and flags */
#define CRC 0xefbeaddeu         /* the checksum's bytes (not checked by the reader) */
#define PAYLOAD_POS 4096u       /* the payload event's next_pos */
#define NO_FIELD UINT64_MAX     /* a payload field left out */

static const uint8_t u1[16] = { 0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,
				0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62 };

/* ---- building events ---------------------------------------------------------------- */

struct bytes {
	uint8_t b[16384];
	size_t n;
};

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void room(const struct bytes *b, size_t n)
{
	if (b->n + n > sizeof(b->b)) {
		printf("Bail out! the test's byte buffer is too small\n");
		exit(1);
	}
}

static void add(struct bytes *b, const void *p, size_t n)
{
	room(b, n);
	if (n)
		memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void add_le(struct bytes *b, uint64_t v, unsigned n)
{
	room(b, n);
	put_le(b->b + b->n, v, n);
	b->n += n;
}

static void add_str(struct bytes *b, const char *s)
{
	add(b, s, strlen(s));
}

/* The protocol's length-encoded integer. */
static void add_packed(struct bytes *b, uint64_t v)
{
	if (v < 251) {
		add_le(b, v, 1);
	} else if (v < (1u << 16)) {
		add_le(b, 252, 1);
		add_le(b, v, 2);
	} else if (v < (1u << 24)) {
		add_le(b, 253, 1);
		add_le(b, v, 3);
	} else {
		add_le(b, 254, 1);
		add_le(b, v, 8);
	}
}

static size_t packed_len(uint64_t v)
{
	return v < 251 ? 1 : v < (1u << 16) ? 3 : v < (1u << 24) ? 4 : 9;
}

/* One event: the header, body, and crc (0 or 4) bytes of checksum. */
static void add_event(struct bytes *b, uint8_t type, uint32_t next_pos, const uint8_t *body, size_t blen,
		      unsigned crc)
{
	add_le(b, TS, 4);
	add_le(b, type, 1);
	add_le(b, SERVER, 4);
	add_le(b, MYEV_HEADER_LEN + blen + crc, 4);
	add_le(b, next_pos, 4);
	add_le(b, FLAGS, 2);
	add(b, body, blen);
	add_le(b, CRC, crc);
}

/* An event in a buffer of its exact size, parsed. */
struct evbuf {
	uint8_t *raw;
	size_t len;
	struct mysql_event ev;
};

static uint8_t *dup_exact(const uint8_t *p, size_t n)
{
	uint8_t *q = malloc(n ? n : 1);

	if (!q) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	if (n)
		memcpy(q, p, n);
	return q;
}

static bool mkev(struct evbuf *e, uint8_t type, uint32_t next_pos, const uint8_t *body, size_t blen,
		 unsigned crc)
{
	static struct bytes b;

	b.n = 0;
	add_event(&b, type, next_pos, body, blen, crc);
	e->raw = dup_exact(b.b, b.n);
	e->len = b.n;
	return mysql_event_parse(e->raw, e->len, crc, &e->ev);
}

static void freeev(struct evbuf *e)
{
	free(e->raw);
	e->raw = NULL;
}

/* err starts with prefix and says more after it. */
static void is_prefix(const char *err, const char *prefix, const char *name)
{
	size_t n = strlen(prefix);

	if (!ok(strncmp(err, prefix, n) == 0 && strlen(err) > n, "%s", name))
		printf("#   got '%s', want '%s...'\n", err, prefix);
}

/* ---- the header ----------------------------------------------------------------------- */

static void test_parse(void)
{
	struct bytes b;
	struct evbuf e;
	struct mysql_event ev;
	uint8_t *p;

	ok(mkev(&e, MYEV_QUERY, 0x11223344u, (const uint8_t *)"abcdef", 6, 0), "an event parses");
	is_int(e.ev.type, MYEV_QUERY, "its type");
	is_int(e.ev.timestamp, TS, "its timestamp (4 bytes LE)");
	is_int(e.ev.server_id, SERVER, "its server id (4 bytes LE)");
	is_int(e.ev.next_pos, 0x11223344u, "its next_pos (4 bytes LE)");
	is_int(e.ev.flags, FLAGS, "its flags (2 bytes LE)");
	ok(e.ev.raw == e.raw, "raw is the event's first byte");
	is_int(e.ev.raw_len, 25, "raw_len is the whole event");
	ok(e.ev.body == e.raw + 19, "the body starts after the 19-byte header");
	is_int(e.ev.body_len, 6, "body_len with no checksum");
	is_int(e.ev.checksum_len, 0, "checksum_len 0");
	ok(!e.ev.in_payload, "not in a payload");
	freeev(&e);

	ok(mkev(&e, MYEV_XID, 77, (const uint8_t *)"abcdef", 6, 4), "an event with a checksum parses");
	is_int(e.ev.raw_len, 29, "raw_len counts the checksum");
	ok(e.ev.body == e.raw + 19, "the body starts after the header");
	is_int(e.ev.body_len, 6, "body_len leaves the checksum out");
	is_int(e.ev.checksum_len, 4, "checksum_len 4");
	is_int(e.ev.type, MYEV_XID, "its type");
	freeev(&e);

	ok(mkev(&e, MYEV_HEARTBEAT, 0, NULL, 0, 0), "a header alone (19 bytes) parses");
	is_int(e.ev.body_len, 0, "with an empty body");
	freeev(&e);
	ok(mkev(&e, MYEV_HEARTBEAT, 0, NULL, 0, 4), "a header and a checksum (23 bytes) parse");
	is_int(e.ev.body_len, 0, "with an empty body");
	freeev(&e);

	/* shorter than a header: 18 bytes that say 18 */
	b.n = 0;
	add_event(&b, MYEV_QUERY, 0, NULL, 0, 0);
	put_le(b.b + 9, 18, 4);
	p = dup_exact(b.b, 18);
	ok(!mysql_event_parse(p, 18, 0, &ev), "18 bytes: shorter than a header");
	ok(!mysql_event_parse(p, 0, 0, &ev), "no bytes");
	free(p);

	/* a header and 3 bytes of a 4-byte checksum, saying 22 */
	b.n = 0;
	add_event(&b, MYEV_QUERY, 0, NULL, 0, 4);
	put_le(b.b + 9, 22, 4);
	p = dup_exact(b.b, 22);
	ok(!mysql_event_parse(p, 22, 4, &ev), "22 bytes with a 4-byte checksum: refused");
	ok(mysql_event_parse(p, 22, 0, &ev) && ev.body_len == 3,
	   "the same 22 bytes with no checksum: a 3-byte body");
	free(p);

	/* the header's length is not the bytes there */
	b.n = 0;
	add_event(&b, MYEV_QUERY, 0, (const uint8_t *)"abcdef", 6, 0);
	p = dup_exact(b.b, b.n);
	put_le(p + 9, 26, 4);
	ok(!mysql_event_parse(p, 25, 0, &ev), "event_length one more than the bytes: refused");
	put_le(p + 9, 24, 4);
	ok(!mysql_event_parse(p, 25, 0, &ev), "event_length one less than the bytes: refused");
	put_le(p + 9, 0, 4);
	ok(!mysql_event_parse(p, 25, 0, &ev), "event_length 0: refused");
	put_le(p + 9, 25 + (1u << 24), 4);
	ok(!mysql_event_parse(p, 25, 0, &ev), "event_length off in its fourth byte: refused");
	put_le(p + 9, 25, 4);
	ok(mysql_event_parse(p, 25, 0, &ev) && ev.body_len == 6, "event_length put back: parses");
	free(p);
}

/* ---- GTID ------------------------------------------------------------------------------ */

static void gtid_body(struct bytes *b, uint64_t gno, bool extra)
{
	b->n = 0;
	add_le(b, 0x01, 1);             /* flags: may have commit */
	add(b, u1, 16);
	add_le(b, gno, 8);
	if (extra) {
		add_le(b, 2, 1);        /* logical timestamp type */
		add_le(b, 41, 8);       /* last_committed */
		add_le(b, 42, 8);       /* sequence_number */
		add_le(b, 0x0005f1e2d3c4b5a6ull, 7);   /* immediate commit timestamp */
	}
}

/* The GTID event with body b cut to n bytes: decoded, uuid and gno out. */
static bool gtid_cut(const struct bytes *b, size_t n, unsigned crc, uint8_t uuid[16], uint64_t *gno)
{
	struct evbuf e;
	bool r;

	if (!mkev(&e, MYEV_GTID, 500, b->b, n, crc))
		return false;
	r = mysql_ev_gtid(&e.ev, uuid, gno);
	freeev(&e);
	return r;
}

static void test_gtid(void)
{
	static const size_t cuts[] = { 0, 1, 2, 16, 17, 18, 24 };
	struct bytes b;
	uint8_t uuid[16];
	uint64_t gno;

	gtid_body(&b, 0x0102030405060708ull, true);
	memset(uuid, 0, 16);
	gno = 0;
	ok(gtid_cut(&b, b.n, 0, uuid, &gno), "a GTID event (as MySQL 8 writes it) decodes");
	is_mem(uuid, u1, 16, "its uuid");
	is_int(gno, 0x0102030405060708ull, "its gno (8 bytes LE)");

	memset(uuid, 0, 16);
	gno = 0;
	ok(gtid_cut(&b, b.n, 4, uuid, &gno), "with a checksum: decodes");
	ok(memcmp(uuid, u1, 16) == 0 && gno == 0x0102030405060708ull, "the same uuid and gno");

	gtid_body(&b, 1, false);
	gno = 0;
	ok(gtid_cut(&b, b.n, 0, uuid, &gno), "flags, uuid and gno alone (25 bytes) decode");
	is_int(gno, 1, "gno 1");

	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
		ok(!gtid_cut(&b, cuts[i], 0, uuid, &gno), "a GTID body cut to %zu bytes: refused", cuts[i]);
	ok(!gtid_cut(&b, 24, 4, uuid, &gno), "cut to 24 bytes, the checksum after it: refused");

	gtid_body(&b, 0, true);
	ok(!gtid_cut(&b, b.n, 0, uuid, &gno), "gno 0: refused");
	gtid_body(&b, GTID_GNO_MAX, true);
	ok(gtid_cut(&b, b.n, 0, uuid, &gno) && gno == GTID_GNO_MAX, "gno 2^63 - 2 (MySQL's largest): taken");
	gtid_body(&b, GTID_GNO_MAX + 1, true);
	ok(!gtid_cut(&b, b.n, 0, uuid, &gno), "gno 2^63 - 1: refused (no GTID set could hold it)");
	gtid_body(&b, 1ull << 63, true);
	ok(!gtid_cut(&b, b.n, 0, uuid, &gno), "gno 2^63: refused");
}

/* ---- QUERY ------------------------------------------------------------------------------ */

#define STATUS_LEN 14

static void query_body(struct bytes *b, const char *schema, uint16_t error, uint16_t status_len,
		       const char *stmt)
{
	b->n = 0;
	add_le(b, 0x01020304, 4);       /* thread id */
	add_le(b, 5, 4);                /* execution time */
	add_le(b, strlen(schema), 1);
	add_le(b, error, 2);
	add_le(b, status_len, 2);
	for (unsigned i = 0; i < STATUS_LEN; i++)   /* Q_FLAGS2 0 + 4 bytes, Q_SQL_MODE 1 + 8 bytes */
		add_le(b, i == 0 ? 0 : i == 5 ? 1 : 0x30 + i, 1);
	add_str(b, schema);
	add_le(b, 0, 1);
	add_str(b, stmt);
}

struct query {
	const char *db, *stmt;
	size_t dlen, slen;
};

static bool query_cut(const struct bytes *b, size_t n, unsigned crc, struct query *q)
{
	struct evbuf e;
	bool r;

	memset(q, 0, sizeof(*q));
	if (!mkev(&e, MYEV_QUERY, 600, b->b, n, crc))
		return false;
	r = mysql_ev_query(&e.ev, &q->db, &q->dlen, &q->stmt, &q->slen);
	/* the pointers are checked against the body before it is freed (a
	 * check of its own, made only when the decoder says yes) */
	if (r) {
		static char db[256], stmt[4096];

		if (q->db != (const char *)e.ev.body + 13 + STATUS_LEN || q->stmt != q->db + q->dlen + 1 ||
		    q->stmt + q->slen != (const char *)e.ev.body + e.ev.body_len || q->dlen > 255 ||
		    q->slen > 4095) {
			ok(0, "the schema and statement decoded are where they are in the body");
			q->dlen = q->slen = 0;
		}
		memcpy(db, q->db, q->dlen);
		db[q->dlen] = 0;
		memcpy(stmt, q->stmt, q->slen);
		stmt[q->slen] = 0;
		q->db = db;
		q->stmt = stmt;
	}
	freeev(&e);
	return r;
}

static void test_query(void)
{
	static const size_t cuts[] = { 0, 8, 9, 12, 13, 13 + STATUS_LEN - 1, 13 + STATUS_LEN,
				       13 + STATUS_LEN + 3 };
	const char *stmt = "INSERT INTO orders VALUES (1, 'a')";
	struct bytes b;
	struct query q;

	query_body(&b, "shop", 0, STATUS_LEN, stmt);
	ok(query_cut(&b, b.n, 0, &q), "a QUERY event decodes");
	is_int(q.dlen, 4, "its schema's length");
	is_str(q.db, "shop", "its schema");
	is_int(q.slen, strlen(stmt), "its statement's length: to the end of the body");
	is_str(q.stmt, stmt, "its statement");

	ok(query_cut(&b, b.n, 4, &q), "with a checksum: decodes");
	is_int(q.slen, strlen(stmt), "the statement leaves the checksum out");
	is_str(q.stmt, stmt, "the same statement");

	query_body(&b, "", 0, STATUS_LEN, "BEGIN");
	ok(query_cut(&b, b.n, 4, &q), "no schema: decodes");
	is_int(q.dlen, 0, "a schema of length 0");
	is_str(q.stmt, "BEGIN", "the statement BEGIN");

	query_body(&b, "shop", 1062, STATUS_LEN, "COMMIT");
	ok(query_cut(&b, b.n, 0, &q) && strcmp(q.stmt, "COMMIT") == 0,
	   "an error code (1062) does not change the decoding");

	/* no status variables: the schema right after the post-header */
	b.n = 0;
	add_le(&b, 7, 4);
	add_le(&b, 0, 4);
	add_le(&b, 2, 1);
	add_le(&b, 0, 2);
	add_le(&b, 0, 2);
	add_str(&b, "db");
	add_le(&b, 0, 1);
	add_str(&b, "X");
	{
		struct evbuf e;
		const char *db = NULL, *st = NULL;
		size_t dl = 0, sl = 0;

		ok(mkev(&e, MYEV_QUERY, 1, b.b, b.n, 0) && mysql_ev_query(&e.ev, &db, &dl, &st, &sl),
		   "no status variables: decodes");
		ok(db == (const char *)e.ev.body + 13 && dl == 2 && memcmp(db, "db", 2) == 0,
		   "the schema right after the 13-byte post-header");
		ok(st == (const char *)e.ev.body + 16 && sl == 1 && st[0] == 'X', "the statement after its NUL");
		freeev(&e);
	}

	query_body(&b, "shop", 0, STATUS_LEN, stmt);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
		ok(!query_cut(&b, cuts[i], 0, &q), "a QUERY body cut to %zu bytes: refused", cuts[i]);
	ok(!query_cut(&b, 13 + STATUS_LEN + 4, 0, &q), "cut before the schema's NUL: refused");
	ok(!query_cut(&b, 13 + STATUS_LEN + 4, 4, &q), "the same with the checksum after it: refused");
	ok(query_cut(&b, 13 + STATUS_LEN + 5, 0, &q), "cut after the schema's NUL: decodes");
	is_int(q.slen, 0, "with an empty statement");
	is_str(q.db, "shop", "and the schema");

	query_body(&b, "shop", 0, 0xffff, stmt);
	ok(!query_cut(&b, b.n, 0, &q), "status variables longer than the body: refused");
	query_body(&b, "shop", 0, STATUS_LEN, stmt);
	b.b[8] = 200;
	ok(!query_cut(&b, b.n, 0, &q), "a schema longer than the body: refused");
	b.b[8] = (uint8_t)(b.n - 13 - STATUS_LEN - 1);
	ok(query_cut(&b, b.n, 0, &q) && q.slen == 0, "a schema reaching the body's last byte: decodes");
	b.b[8] = (uint8_t)(b.n - 13 - STATUS_LEN);
	ok(!query_cut(&b, b.n, 0, &q), "a schema whose NUL would be past the body: refused");
}

/* ---- TABLE_MAP ----------------------------------------------------------------------- */

#define TABLE_ID 0x8899aabbccddull

static void table_map_body(struct bytes *b, const char *schema, const char *table)
{
	b->n = 0;
	add_le(b, TABLE_ID, 6);
	add_le(b, 1, 2);                /* flags */
	add_le(b, strlen(schema), 1);
	add_str(b, schema);
	add_le(b, 0, 1);
	add_le(b, strlen(table), 1);
	add_str(b, table);
	add_le(b, 0, 1);
	add_packed(b, 3);               /* columns */
	add_le(b, 3, 1);                /* LONG */
	add_le(b, 15, 1);               /* VARCHAR */
	add_le(b, 246, 1);              /* NEWDECIMAL */
	add_packed(b, 4);               /* metadata */
	add_le(b, 200, 2);
	add_le(b, 10, 1);
	add_le(b, 2, 1);
	add_le(b, 0x06, 1);             /* nullable columns */
}

struct tmap {
	uint64_t id;
	char db[256], table[256];
	size_t dlen, tlen;
};

static bool table_map_cut(const struct bytes *b, size_t n, struct tmap *t)
{
	struct evbuf e;
	const char *db = NULL, *table = NULL;
	bool r;

	memset(t, 0, sizeof(*t));
	if (!mkev(&e, MYEV_TABLE_MAP, 700, b->b, n, 0))
		return false;
	r = mysql_ev_table_map(&e.ev, &t->id, &db, &t->dlen, &table, &t->tlen);
	if (r) {
		if (db != (const char *)e.ev.body + 9 || table != db + t->dlen + 2 ||
		    table + t->tlen + 1 > (const char *)e.ev.body + e.ev.body_len) {
			ok(0, "the schema and table decoded are where they are in the body");
		} else {
			memcpy(t->db, db, t->dlen);
			memcpy(t->table, table, t->tlen);
		}
	}
	freeev(&e);
	return r;
}

static void test_table_map(void)
{
	/* table id 0-6, flags 6-8, schema length 8, "shop" 9-13, NUL 13, table length 14,
	 * "orders" 15-21, NUL 21 */
	static const size_t cuts[] = { 0, 1, 5, 6, 7, 8, 9, 12, 13, 14, 15, 20, 21 };
	struct bytes b;
	struct tmap t;

	table_map_body(&b, "shop", "orders");
	ok(table_map_cut(&b, b.n, &t), "a TABLE_MAP event decodes");
	is_int(t.id, TABLE_ID, "its table id (6 bytes LE)");
	is_int(t.dlen, 4, "its schema's length");
	is_str(t.db, "shop", "its schema");
	is_int(t.tlen, 6, "its table's length");
	is_str(t.table, "orders", "its table");

	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
		ok(!table_map_cut(&b, cuts[i], &t), "a TABLE_MAP body cut to %zu bytes: refused", cuts[i]);
	ok(table_map_cut(&b, 22, &t), "cut after the table's NUL (no columns): decodes");
	ok(t.id == TABLE_ID && strcmp(t.db, "shop") == 0 && strcmp(t.table, "orders") == 0,
	   "the same id, schema and table");

	table_map_body(&b, "", "t");
	ok(table_map_cut(&b, b.n, &t) && t.dlen == 0 && t.tlen == 1 && strcmp(t.table, "t") == 0,
	   "an empty schema name: decodes");

	table_map_body(&b, "shop", "orders");
	b.b[8] = 255;
	ok(!table_map_cut(&b, b.n, &t), "a schema length of 255, past the body: refused");
	table_map_body(&b, "shop", "orders");
	b.b[14] = 200;
	ok(!table_map_cut(&b, b.n, &t), "a table length of 200, past the body: refused");
	b.b[14] = (uint8_t)(b.n - 16);
	ok(table_map_cut(&b, b.n, &t) && t.tlen == b.n - 16, "a table name reaching the body's last byte");
	b.b[14] = (uint8_t)(b.n - 15);
	ok(!table_map_cut(&b, b.n, &t), "a table name whose NUL would be past the body: refused");
}

/* ---- ROTATE ------------------------------------------------------------------------------ */

static bool rotate_cut(const struct bytes *b, size_t n, unsigned crc, char *name, size_t *len)
{
	struct evbuf e;
	const char *p = NULL;
	bool r;

	*len = 0;
	if (!mkev(&e, MYEV_ROTATE, 0, b->b, n, crc))
		return false;
	r = mysql_ev_rotate(&e.ev, &p, len);
	if (r) {
		if (p != (const char *)e.ev.body + 8 || p + *len != (const char *)e.ev.body + e.ev.body_len) {
			ok(0, "the name decoded is the body after the position");
		} else {
			memcpy(name, p, *len);
			name[*len] = 0;
		}
	}
	freeev(&e);
	return r;
}

static void test_rotate(void)
{
	struct bytes b;
	char name[256];
	size_t len;

	b.n = 0;
	add_le(&b, 4, 8);
	add_str(&b, "binlog.000042");
	ok(rotate_cut(&b, b.n, 0, name, &len), "a ROTATE event decodes");
	is_int(len, 13, "its file name's length");
	is_str(name, "binlog.000042", "its file name");
	ok(rotate_cut(&b, b.n, 4, name, &len), "with a checksum: decodes");
	is_int(len, 13, "the name leaves the checksum out");
	is_str(name, "binlog.000042", "the same name");
	ok(rotate_cut(&b, 9, 0, name, &len) && len == 1 && strcmp(name, "b") == 0,
	   "a one-character name: decodes");
	ok(!rotate_cut(&b, 8, 0, name, &len), "a position and no name: refused");
	ok(!rotate_cut(&b, 8, 4, name, &len), "a position, no name, a checksum: refused");
	ok(!rotate_cut(&b, 7, 0, name, &len), "a position cut short: refused");
	ok(!rotate_cut(&b, 0, 0, name, &len), "an empty body: refused");
}

/* ---- TRANSACTION_PAYLOAD's fields --------------------------------------------------- */

static void add_field(struct bytes *b, uint64_t type, uint64_t value)
{
	add_packed(b, type);
	add_packed(b, packed_len(value));
	add_packed(b, value);
}

struct payload {
	unsigned comp;
	const uint8_t *data;
	size_t len;
	uint64_t unc;
	size_t at;       /* data's offset in the body */
};

static bool payload_cut(const struct bytes *b, size_t n, unsigned crc, struct payload *pl)
{
	struct evbuf e;
	bool r;

	memset(pl, 0, sizeof(*pl));
	pl->comp = 999;
	pl->unc = 999;
	if (!mkev(&e, MYEV_TRANSACTION_PAYLOAD, PAYLOAD_POS, b->b, n, crc))
		return false;
	r = mysql_ev_payload(&e.ev, &pl->comp, &pl->data, &pl->len, &pl->unc);
	if (r) {
		if (pl->data < e.ev.body || pl->data > e.ev.body + e.ev.body_len ||
		    pl->len != (size_t)(e.ev.body + e.ev.body_len - pl->data))
			ok(0, "the payload's bytes decoded are the body's last");
		pl->at = (size_t)(pl->data - e.ev.body);
		pl->data = NULL;
	}
	freeev(&e);
	return r;
}

static void test_payload_fields(void)
{
	struct bytes b;
	struct payload pl;
	size_t hdr;

	b.n = 0;
	add_field(&b, 1, 5);
	add_field(&b, 2, 0);
	add_field(&b, 3, 9);
	add_packed(&b, 0);
	hdr = b.n;
	add_str(&b, "abcde");
	ok(payload_cut(&b, b.n, 4, &pl), "a payload event decodes");
	is_int(pl.comp, 0, "compression zstd (0)");
	is_int(pl.len, 5, "the payload's size");
	is_int(pl.at, hdr, "its bytes right after the end mark");
	is_int(pl.unc, 9, "the uncompressed size");
	ok(payload_cut(&b, b.n, 0, &pl) && pl.len == 5, "with no checksum: the same size");

	for (size_t n = 0; n < hdr; n++)
		ok(!payload_cut(&b, n, 0, &pl), "fields cut to %zu bytes: refused", n);
	ok(!payload_cut(&b, b.n - 1, 0, &pl), "the payload one byte short of its size: refused");
	ok(!payload_cut(&b, b.n - 1, 4, &pl), "the same with a checksum after it: refused");
	add_str(&b, "f");
	ok(!payload_cut(&b, b.n, 0, &pl), "the payload one byte more than its size: refused");

	/* the other forms of packed integers, the fields in another order */
	b.n = 0;
	add_field(&b, 3, 70000);
	add_field(&b, 2, 255);
	add_field(&b, 1, 300);
	add_packed(&b, 0);
	hdr = b.n;
	for (int i = 0; i < 300; i++)
		add_le(&b, (uint64_t)i, 1);
	ok(payload_cut(&b, b.n, 4, &pl), "fields in another order, in 2- and 3-byte forms: decodes");
	is_int(pl.comp, 255, "compression none (255, in the 2-byte form)");
	is_int(pl.len, 300, "a size of 300");
	is_int(pl.unc, 70000, "an uncompressed size of 70000");
	is_int(pl.at, hdr, "the bytes after the end mark");

	b.n = 0;
	add_field(&b, 3, 0x100000001ull);
	add_field(&b, 1, 1);
	add_packed(&b, 0);
	add_str(&b, "z");
	ok(payload_cut(&b, b.n, 0, &pl), "an 8-byte packed integer: decodes");
	is_int(pl.unc, 0x100000001ull, "an uncompressed size of 2^32 + 1");
	is_int(pl.comp, 0, "no compression field: 0");

	b.n = 0;
	add_field(&b, 1, 2);
	add_packed(&b, 0);
	add_str(&b, "zz");
	ok(payload_cut(&b, b.n, 0, &pl) && pl.comp == 0 && pl.unc == 0 && pl.len == 2,
	   "the size alone: compression 0, uncompressed size 0");

	/* fields not known are skipped by their length */
	b.n = 0;
	add_field(&b, 1, 3);
	add_packed(&b, 7);
	add_packed(&b, 3);
	add_str(&b, "\x01\x02\x03");
	add_packed(&b, 300);            /* a type in the 2-byte form */
	add_packed(&b, 2);
	add_str(&b, "\xfb\xff");        /* bytes no packed integer has */
	add_packed(&b, 8);
	add_packed(&b, 0);              /* an empty field */
	add_field(&b, 2, 255);
	add_field(&b, 3, 3);
	add_packed(&b, 0);
	hdr = b.n;
	add_str(&b, "xyz");
	ok(payload_cut(&b, b.n, 4, &pl), "fields not known, between the others: skipped");
	ok(pl.comp == 255 && pl.len == 3 && pl.unc == 3 && pl.at == hdr,
	   "the known fields read all the same");

	/* malformed */
	ok(!payload_cut(&b, 0, 4, &pl), "an empty body: refused");
	b.n = 0;
	add_field(&b, 2, 0);
	add_field(&b, 3, 5);
	add_packed(&b, 0);
	add_str(&b, "abcde");
	ok(!payload_cut(&b, b.n, 0, &pl), "no size field: refused");
	b.n = 0;
	add_field(&b, 1, 0);
	add_field(&b, 2, 0);
	ok(!payload_cut(&b, b.n, 0, &pl), "no end mark: refused");
	b.n = 0;
	add_packed(&b, 1);
	add_packed(&b, 9);
	add_packed(&b, 5);
	ok(!payload_cut(&b, b.n, 0, &pl), "a field longer than the body: refused");
	b.n = 0;
	add_packed(&b, 1);
	add_packed(&b, 0);
	add_packed(&b, 0);
	add_packed(&b, 0);
	ok(!payload_cut(&b, b.n, 0, &pl), "a size field of length 0 (no value): refused");
	b.n = 0;
	add_packed(&b, 1);
	add_packed(&b, 2);
	add_le(&b, 252, 1);             /* a 2-byte form with one byte in the field */
	add_le(&b, 1, 1);
	add_packed(&b, 0);
	add_str(&b, "a");
	ok(!payload_cut(&b, b.n, 0, &pl), "a value cut short inside its field: refused");
	for (unsigned bad = 251; bad <= 255; bad += 4) {
		b.n = 0;
		add_packed(&b, 2);
		add_packed(&b, 1);
		add_le(&b, bad, 1);
		add_field(&b, 1, 0);
		add_packed(&b, 0);
		ok(!payload_cut(&b, b.n, 0, &pl), "a compression value of byte %u (not a length): refused",
		   bad);
	}
	b.n = 0;
	add_le(&b, 251, 1);             /* a type that is no packed integer */
	add_packed(&b, 0);
	ok(!payload_cut(&b, b.n, 0, &pl), "a field type of byte 251: refused");
	b.n = 0;
	add_le(&b, 252, 1);             /* a 2-byte type cut short */
	ok(!payload_cut(&b, b.n, 0, &pl), "a field type cut short: refused");
	b.n = 0;
	add_packed(&b, 1);
	add_le(&b, 253, 1);             /* a 3-byte length cut short */
	add_le(&b, 1, 2);
	ok(!payload_cut(&b, b.n, 0, &pl), "a field length cut short: refused");
}

/* ---- TRANSACTION_PAYLOAD's events ------------------------------------------------- */

#define XID 0x1122334455667788ull

/* The three events of a transaction after its GTID: BEGIN, a table map, the XID.
 * stmt_pad: extra bytes of the BEGIN's statement (a comment), to make it large. */
static void inner_events(struct bytes *b, size_t stmt_pad)
{
	struct bytes body;

	b->n = 0;
	query_body(&body, "shop", 0, STATUS_LEN, "BEGIN");
	if (stmt_pad) {
		add_str(&body, " /*");
		for (size_t i = 0; i < stmt_pad; i++)
			add_le(&body, 'a' + i % 26, 1);
		add_str(&body, "*/");
	}
	add_event(b, MYEV_QUERY, 1000, body.b, body.n, 0);
	table_map_body(&body, "shop", "orders");
	add_event(b, MYEV_TABLE_MAP, 2000, body.b, body.n, 0);
	body.n = 0;
	add_le(&body, XID, 8);
	add_event(b, MYEV_XID, 3000, body.b, body.n, 0);
}

static void zstd(const struct bytes *in, struct bytes *out)
{
	size_t r = ZSTD_compress(out->b, sizeof(out->b), in->b, in->n, 3);

	if (ZSTD_isError(r)) {
		printf("Bail out! ZSTD_compress: %s\n", ZSTD_getErrorName(r));
		exit(1);
	}
	out->n = r;
}

/* A TRANSACTION_PAYLOAD event (with a checksum) holding data: size field `size`,
 * compression `comp`, uncompressed size `unc` (fields NO_FIELD left out). */
static void payload_event(struct evbuf *e, uint64_t size, uint64_t comp, uint64_t unc, const struct bytes *data)
{
	struct bytes body;

	body.n = 0;
	if (size != NO_FIELD)
		add_field(&body, 1, size);
	if (comp != NO_FIELD)
		add_field(&body, 2, comp);
	if (unc != NO_FIELD)
		add_field(&body, 3, unc);
	add_packed(&body, 0);
	add(&body, data->b, data->n);
	if (!mkev(e, MYEV_TRANSACTION_PAYLOAD, PAYLOAD_POS, body.b, body.n, 4)) {
		printf("Bail out! a payload event that does not parse\n");
		exit(1);
	}
}

/* What mysql_dump_next() hands out from a payload of inner_events(stmt_pad). */
static void check_inner(struct mysql_dump *d, size_t stmt_pad, const char *name)
{
	struct mysql_event ev;
	char err[256] = "";
	const char *db, *stmt, *table;
	size_t dlen, slen, tlen;
	uint64_t id;

	memset(&ev, 0xa5, sizeof(ev));
	ok(mysql_dump_next(d, &ev, err, sizeof(err)) == 1, "%s: the first event", name);
	is_int(ev.type, MYEV_QUERY, "the first is the QUERY");
	ok(ev.in_payload, "%s: it is in the payload", name);
	is_int(ev.checksum_len, 0, "with no checksum");
	is_int(ev.next_pos, PAYLOAD_POS, "its next_pos is the payload event's");
	ok(ev.timestamp == TS && ev.server_id == SERVER && ev.flags == FLAGS,
	   "%s: its header's other fields", name);
	is_int(ev.raw_len, MYEV_HEADER_LEN + 13 + STATUS_LEN + 5 + 5 + (stmt_pad ? stmt_pad + 5 : 0),
	       "its length");
	ok(ev.body == ev.raw + MYEV_HEADER_LEN && ev.body_len == ev.raw_len - MYEV_HEADER_LEN,
	   "%s: its body is the rest of it", name);
	ok(mysql_ev_query(&ev, &db, &dlen, &stmt, &slen), "%s: the QUERY decodes", name);
	ok(dlen == 4 && memcmp(db, "shop", 4) == 0, "%s: schema shop", name);
	if (!stmt_pad) {
		ok(slen == 5 && memcmp(stmt, "BEGIN", 5) == 0, "%s: statement BEGIN", name);
	} else {
		static char want[16384];
		size_t n = 0;

		memcpy(want, "BEGIN /*", 8);
		n = 8;
		for (size_t i = 0; i < stmt_pad; i++)
			want[n++] = (char)('a' + i % 26);
		memcpy(want + n, "*/", 2);
		n += 2;
		ok(slen == n && memcmp(stmt, want, n) == 0, "%s: statement BEGIN and a %zu-byte comment",
		   name, stmt_pad + 5);
	}

	memset(&ev, 0xa5, sizeof(ev));
	ok(mysql_dump_next(d, &ev, err, sizeof(err)) == 1, "%s: the second event", name);
	is_int(ev.type, MYEV_TABLE_MAP, "the second is the TABLE_MAP");
	ok(ev.in_payload && ev.checksum_len == 0 && ev.next_pos == PAYLOAD_POS,
	   "%s: in the payload, no checksum, the payload's next_pos", name);
	ok(mysql_ev_table_map(&ev, &id, &db, &dlen, &table, &tlen), "%s: the TABLE_MAP decodes", name);
	ok(id == TABLE_ID && dlen == 4 && memcmp(db, "shop", 4) == 0 && tlen == 6 &&
	   memcmp(table, "orders", 6) == 0, "%s: table id, shop.orders", name);

	memset(&ev, 0xa5, sizeof(ev));
	ok(mysql_dump_next(d, &ev, err, sizeof(err)) == 1, "%s: the third event", name);
	is_int(ev.type, MYEV_XID, "the third is the XID");
	ok(ev.in_payload && ev.checksum_len == 0 && ev.next_pos == PAYLOAD_POS,
	   "%s: in the payload, no checksum, the payload's next_pos", name);
	is_int(ev.raw_len, MYEV_HEADER_LEN + 8, "the XID's length");
	ok(ev.body_len == 8 && ev.body[0] == 0x88 && ev.body[7] == 0x11, "%s: the XID's body", name);
	ok(d->payload_at == d->payload_len && d->payload_len > 0, "%s: the payload is used up", name);
}

/* A payload refused by mysql_dump_begin_payload() with exactly want_err (or, with
 * prefix, a message starting so). */
static void begin_refused(uint64_t size, uint64_t comp, uint64_t unc, const struct bytes *data,
			  const char *want_err, bool prefix, const char *name)
{
	struct mysql_dump d;
	struct evbuf e;
	char err[256] = "";

	memset(&d, 0, sizeof(d));
	d.checksum_len = 4;
	payload_event(&e, size, comp, unc, data);
	is_int(mysql_dump_begin_payload(&d, &e.ev, err, sizeof(err)), -1, name);
	if (prefix)
		is_prefix(err, want_err, name);
	else
		is_str(err, want_err, name);
	ok(d.payload_len == d.payload_at, "%s: no events to hand out", name);
	mysql_dump_close(&d);
	freeev(&e);
}

/* A payload taken in whose events are then refused after `good` of them. */
static void inner_refused(const struct bytes *inner, bool compress, int good, const char *name)
{
	struct mysql_dump d;
	struct mysql_event ev;
	struct evbuf e;
	struct bytes z;
	char err[256] = "";
	int i, rc = 1;

	memset(&d, 0, sizeof(d));
	d.checksum_len = 4;
	if (compress) {
		zstd(inner, &z);
		payload_event(&e, z.n, 0, inner->n, &z);
	} else {
		payload_event(&e, inner->n, 255, NO_FIELD, inner);
	}
	is_int(mysql_dump_begin_payload(&d, &e.ev, err, sizeof(err)), 0, name);
	for (i = 0; i < good && rc == 1; i++)
		rc = mysql_dump_next(&d, &ev, err, sizeof(err));
	ok(rc == 1 && i == good, "%s: %d good events first", name, good);
	is_int(mysql_dump_next(&d, &ev, err, sizeof(err)), -1, name);
	is_str(err, "a transaction payload's event is cut short or malformed", name);
	ok(d.payload_len == 0 && d.payload_at == 0, "%s: the payload is dropped", name);
	mysql_dump_close(&d);
	freeev(&e);
}

static void test_payload_events(void)
{
	struct mysql_dump d;
	struct evbuf e;
	struct bytes inner, z, big, cut;
	char err[256] = "";

	inner_events(&inner, 0);
	zstd(&inner, &z);

	/* one dump, three payloads: zstd, stored, a larger zstd one */
	memset(&d, 0, sizeof(d));
	d.checksum_len = 4;   /* the stream's; a payload's events have none */
	payload_event(&e, z.n, 0, inner.n, &z);
	is_int(mysql_dump_begin_payload(&d, &e.ev, err, sizeof(err)), 0, "a zstd payload is taken in");
	check_inner(&d, 0, "zstd");
	freeev(&e);

	payload_event(&e, inner.n, 255, NO_FIELD, &inner);
	is_int(mysql_dump_begin_payload(&d, &e.ev, err, sizeof(err)), 0, "a stored payload is taken in");
	check_inner(&d, 0, "stored");
	freeev(&e);

	inner_events(&big, 9000);
	zstd(&big, &z);
	ok(z.n < big.n / 4, "the large payload compresses (%zu to %zu bytes)", big.n, z.n);
	payload_event(&e, z.n, 0, big.n, &z);
	is_int(mysql_dump_begin_payload(&d, &e.ev, err, sizeof(err)), 0,
	       "a larger zstd payload in the same dump is taken in");
	is_int(d.payload_len, big.n, "its size uncompressed");
	check_inner(&d, 9000, "large zstd");
	freeev(&e);

	payload_event(&e, inner.n, 255, inner.n, &inner);
	is_int(mysql_dump_begin_payload(&d, &e.ev, err, sizeof(err)), 0,
	       "a smaller stored payload after it (with its uncompressed size)");
	is_int(d.payload_len, inner.n, "its size");
	check_inner(&d, 0, "stored after large");
	freeev(&e);

	mysql_dump_close(&d);
	ok(d.payload == NULL && d.zstd == NULL && d.payload_len == 0 && d.payload_cap == 0 && d.m == NULL,
	   "close frees the buffers and zeroes the dump");
	memset(&d, 0, sizeof(d));
	mysql_dump_close(&d);
	ok(d.payload == NULL && d.zstd == NULL, "close of a dump never used");

	/* payloads refused */
	zstd(&inner, &z);
	begin_refused(inner.n, 1, inner.n, &inner,
		      "a transaction payload compressed with method 1 (only zstd is known)", false,
		      "compression 1: refused");
	begin_refused(z.n, 254, inner.n, &z,
		      "a transaction payload compressed with method 254 (only zstd is known)", false,
		      "compression 254: refused");
	begin_refused(z.n, 0, inner.n + 1, &z, "a transaction payload does not decompress: not the size it says",
		      false, "zstd with an uncompressed size one too many: refused");
	begin_refused(z.n, 0, inner.n - 1, &z, "a transaction payload does not decompress: ", true,
		      "zstd with an uncompressed size one too few: refused");
	begin_refused(z.n, 0, NO_FIELD, &z, "a transaction payload does not decompress: ", true,
		      "zstd with no uncompressed size: refused");
	begin_refused(z.n, 0, (1u << 30) + 1, &z, "a transaction payload larger than 1 GiB", false,
		      "an uncompressed size over 1 GiB: refused");
	cut = z;
	cut.b[0] ^= 0xff;   /* zstd's magic number broken */
	begin_refused(cut.n, 0, inner.n, &cut, "a transaction payload does not decompress: ", true,
		      "zstd bytes with a broken magic number: refused");
	cut = z;
	cut.n--;
	begin_refused(cut.n, 0, inner.n, &cut, "a transaction payload does not decompress: ", true,
		      "a zstd frame missing its last byte: refused");
	memset(cut.b, 0x41, z.n);
	cut.n = z.n;
	begin_refused(cut.n, 0, inner.n, &cut, "a transaction payload does not decompress: ", true,
		      "bytes that are no zstd frame: refused");
	begin_refused(z.n + 1, 0, inner.n, &z, "a transaction payload event is malformed", false,
		      "a size field one more than the bytes: refused");
	begin_refused(z.n - 1, 0, inner.n, &z, "a transaction payload event is malformed", false,
		      "a size field one less than the bytes: refused");
	begin_refused(inner.n + 1, 255, NO_FIELD, &inner, "a transaction payload event is malformed", false,
		      "stored, a size field one more than the bytes: refused");
	begin_refused(NO_FIELD, 255, NO_FIELD, &inner, "a transaction payload event is malformed", false,
		      "no size field: refused");

	/* a refused payload after a good one leaves nothing to hand out */
	memset(&d, 0, sizeof(d));
	payload_event(&e, inner.n, 255, NO_FIELD, &inner);
	is_int(mysql_dump_begin_payload(&d, &e.ev, err, sizeof(err)), 0, "a stored payload");
	check_inner(&d, 0, "before a refused one");
	freeev(&e);
	payload_event(&e, z.n, 0, inner.n + 7, &z);
	is_int(mysql_dump_begin_payload(&d, &e.ev, err, sizeof(err)), -1, "then a wrong size: refused");
	ok(d.payload_at == d.payload_len, "the first payload's events are not handed out again");
	freeev(&e);
	mysql_dump_close(&d);

	/* inner events cut short or malformed */
	cut = inner;
	cut.n--;
	inner_refused(&cut, false, 2, "stored, the XID one byte short");
	inner_refused(&cut, true, 2, "zstd, the XID one byte short");
	cut = inner;
	add_le(&cut, 0, 5);
	inner_refused(&cut, false, 3, "5 bytes after the last event (less than a header)");
	cut = inner;
	add_event(&cut, MYEV_XID, 0, NULL, 0, 0);
	cut.n--;
	inner_refused(&cut, false, 3, "a header one byte short after the last event");
	cut = inner;
	put_le(cut.b + 9, 18, 4);
	inner_refused(&cut, false, 0, "the first event's length 18 (less than a header)");
	cut = inner;
	put_le(cut.b + 9, 0, 4);
	inner_refused(&cut, true, 0, "the first event's length 0");
	cut = inner;
	put_le(cut.b + 9, (uint32_t)inner.n + 1, 4);
	inner_refused(&cut, false, 0, "the first event's length one past the payload");
}

int main(void)
{
	test_parse();
	test_gtid();
	test_query();
	test_table_map();
	test_rotate();
	test_payload_fields();
	test_payload_events();
	return done_testing();
}
