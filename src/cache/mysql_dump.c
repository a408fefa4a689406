/*
 * mysql_dump.c: MySQL's binlog stream, our own reader (see mysql_dump.h).
 */
#include "cache/mysql_dump.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "cache/binrd.h"

#define COM_BINLOG_DUMP_GTID_BYTE 0x1e
#define DUMP_NON_BLOCK 0x01        /* the server ends the stream at the end of its binlog */
#define DUMP_THROUGH_GTID 0x04     /* the request carries a GTID set */
#define DUMP_START_POS 4           /* the first event of a file */
#define PAYLOAD_MAX (1u << 30)     /* a transaction's size MySQL cannot exceed (max_allowed_packet) */
#define QUERY_POST_HEADER 13       /* thread id 4, time 4, schema length 1, error 2, status length 2 */
#define TABLE_MAP_POST_HEADER 8    /* table id 6, flags 2 */
#define GTID_FLAGS_LEN 1
#define UUID_LEN GTID_UUID_LEN

/* Payload fields (type, length, value; type 0 ends them). */
enum { PAYLOAD_END = 0, PAYLOAD_SIZE = 1, PAYLOAD_COMPRESSION = 2, PAYLOAD_UNCOMPRESSED = 3 };

static void fail(char *err, size_t cap, const char *what)
{
	snprintf(err, cap, "%s", what);
}

/* A SET the dump needs; both the old and the new variable names are set:
 * 8.0 reads one or the other depending on its minor version. */
static int run(MYSQL *m, const char *sql, char *err, size_t cap)
{
	if (mysql_query(m, sql) == 0)
		return 0;
	snprintf(err, cap, "%s: %s", sql, mysql_error(m));
	return -1;
}

static void make_uuid(uint32_t server_id, char out[37])
{
	uint8_t u[UUID_LEN];

	/* a stable uuid per node server id: the server lists the replica by it */
	for (unsigned i = 0; i < UUID_LEN; i++)
		u[i] = (uint8_t)((server_id >> ((i % 4) * 8)) ^ (0x5a + i * 29));
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);   /* version 4 */
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);   /* variant */
	gtid_uuid_format(u, out);
}

static int set_session(MYSQL *m, uint32_t server_id, uint64_t heartbeat_ns, char *err, size_t cap)
{
	char sql[160], uuid[37];
	const char *fixed[] = {
		"SET @source_binlog_checksum = @@global.binlog_checksum",
		"SET @master_binlog_checksum = @@global.binlog_checksum",
	};

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (run(m, fixed[i], err, cap) < 0)
			return -1;
	snprintf(sql, sizeof(sql), "SET @source_heartbeat_period = %llu, @master_heartbeat_period = %llu",
		 (unsigned long long)heartbeat_ns, (unsigned long long)heartbeat_ns);
	if (run(m, sql, err, cap) < 0)
		return -1;
	make_uuid(server_id, uuid);
	snprintf(sql, sizeof(sql), "SET @replica_uuid = '%s', @slave_uuid = '%s'", uuid, uuid);
	return run(m, sql, err, cap);
}

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int mysql_dump_open(struct mysql_dump *d, MYSQL *m, uint32_t server_id, const struct gtid_set *from,
		    uint64_t heartbeat_ns, bool nonblock, char *err, size_t cap)
{
	size_t set_len = gtid_set_encode(from, NULL, 0), len;
	uint8_t *req;
	int rc;

	memset(d, 0, sizeof(*d));
	d->m = m;
	if (set_session(m, server_id, heartbeat_ns, err, cap) < 0)
		return -1;
	/* flags 2, server id 4, name length 4 (no name), position 8, set length 4, set */
	len = 2 + 4 + 4 + 8 + 4 + set_len;
	if (!(req = malloc(len))) {
		fail(err, cap, "out of memory");
		return -1;
	}
	put_le(req, DUMP_THROUGH_GTID | (nonblock ? DUMP_NON_BLOCK : 0), 2);
	put_le(req + 2, server_id, 4);
	put_le(req + 6, 0, 4);
	put_le(req + 10, DUMP_START_POS, 8);
	put_le(req + 18, set_len, 4);
	gtid_set_encode(from, req + 22, set_len);
	rc = m->methods->db_command(m, (enum enum_server_command)COM_BINLOG_DUMP_GTID_BYTE,
				    (const char *)req, len, 1, NULL);
	free(req);
	if (rc) {
		snprintf(err, cap, "COM_BINLOG_DUMP_GTID: %s", mysql_error(m));
		return -1;
	}
	return 0;
}

bool mysql_event_parse(const uint8_t *p, size_t len, unsigned checksum_len, struct mysql_event *ev)
{
	uint32_t elen;

	memset(ev, 0, sizeof(*ev));
	if (len < MYEV_HEADER_LEN + checksum_len)
		return false;   /* shorter than a header */
	elen = (uint32_t)binrd_le_at(p + 9, 4);
	if (elen != len)
		return false;   /* the header's length is not the bytes there */
	ev->timestamp = (uint32_t)binrd_le_at(p, 4);
	ev->type = p[4];
	ev->server_id = (uint32_t)binrd_le_at(p + 5, 4);
	ev->next_pos = (uint32_t)binrd_le_at(p + 13, 4);
	ev->flags = (uint16_t)binrd_le_at(p + 17, 2);
	ev->raw = p;
	ev->raw_len = len;
	ev->checksum_len = checksum_len;
	ev->body = p + MYEV_HEADER_LEN;
	ev->body_len = len - MYEV_HEADER_LEN - checksum_len;
	return true;
}

/* The next of the current payload's events, or 0 when none is left. */
static int next_in_payload(struct mysql_dump *d, struct mysql_event *ev, char *err, size_t cap)
{
	size_t left = d->payload_len - d->payload_at;
	uint32_t elen;

	if (left == 0)
		return 0;   /* the payload is used up */
	elen = left >= MYEV_HEADER_LEN ? (uint32_t)binrd_le_at(d->payload + d->payload_at + 9, 4) : 0;
	if (elen < MYEV_HEADER_LEN || elen > left ||
	    !mysql_event_parse(d->payload + d->payload_at, elen, 0, ev)) {
		d->payload_len = d->payload_at = 0;
		fail(err, cap, "a transaction payload's event is cut short or malformed");
		return -1;
	}
	d->payload_at += elen;
	ev->next_pos = d->payload_end;
	ev->in_payload = true;
	return 1;
}

static int payload_room(struct mysql_dump *d, uint64_t need, char *err, size_t cap)
{
	uint8_t *p;

	if (need > PAYLOAD_MAX) {
		fail(err, cap, "a transaction payload larger than 1 GiB");
		return -1;
	}
	if (need <= d->payload_cap)
		return 0;   /* room already */
	if (!(p = realloc(d->payload, need))) {
		fail(err, cap, "out of memory for a transaction payload");
		return -1;
	}
	d->payload = p;
	d->payload_cap = need;
	return 0;
}

int mysql_dump_begin_payload(struct mysql_dump *d, const struct mysql_event *ev, char *err, size_t cap)
{
	const uint8_t *data;
	size_t len, got;
	uint64_t full;
	unsigned comp;

	if (!mysql_ev_payload(ev, &comp, &data, &len, &full)) {
		fail(err, cap, "a transaction payload event is malformed");
		return -1;
	}
	if (comp == 255)
		full = len;   /* stored as it is */
	else if (comp != 0) {
		snprintf(err, cap, "a transaction payload compressed with method %u (only zstd is known)", comp);
		return -1;
	}
	if (payload_room(d, full, err, cap) < 0)
		return -1;
	if (comp == 255) {
		if (len)   /* (an empty payload has no buffer to copy into) */
			memcpy(d->payload, data, len);
		got = len;
	} else {
		if (!d->zstd && !(d->zstd = ZSTD_createDCtx())) {
			fail(err, cap, "out of memory for zstd");
			return -1;
		}
		got = ZSTD_decompressDCtx(d->zstd, d->payload, full, data, len);
		if (ZSTD_isError(got) || got != full) {
			snprintf(err, cap, "a transaction payload does not decompress: %s",
				 ZSTD_isError(got) ? ZSTD_getErrorName(got) : "not the size it says");
			return -1;
		}
	}
	d->payload_len = got;
	d->payload_at = 0;
	d->payload_end = ev->next_pos;
	return 0;
}

/* An error packet in the stream (0xff, code, '#' and SQLSTATE, message):
 * the server's code into d->server_error and its words into err. -1. */
static int server_error(struct mysql_dump *d, const uint8_t *p, size_t n, char *err, size_t cap)
{
	size_t at = 3;

	d->server_error = (unsigned)binrd_le_at(p + 1, 2);
	if (n >= 9 && p[3] == '#')
		at = 9;   /* (the SQLSTATE marker and its 5 characters) */
	snprintf(err, cap, "%.*s (%u)", (int)(n - at), (const char *)p + at, d->server_error);
	return -1;
}

int mysql_dump_next(struct mysql_dump *d, struct mysql_event *ev, char *err, size_t cap)
{
	for (;;) {
		unsigned long n;
		int rc = next_in_payload(d, ev, err, cap);

		if (rc != 0)
			return rc;   /* one of the payload's events, or its error */
		n = mysql_net_read_packet(d->m);
		if (n == packet_error) {   /* (the connector's 32-bit -1; it has closed the link) */
			d->server_error = mysql_errno(d->m);
			snprintf(err, cap, "%s", mysql_error(d->m));
			return -1;
		}
		if (n < 9 && n >= 1 && d->m->net.read_pos[0] == 0xfe)
			return 0;   /* EOF: the server ended the stream */
		if (n >= 3 && d->m->net.read_pos[0] == 0xff)
			return server_error(d, d->m->net.read_pos, n, err, cap);
		if (n < 1 + MYEV_HEADER_LEN || d->m->net.read_pos[0] != 0x00) {
			fail(err, cap, "a binlog packet that is not an event");
			return -1;
		}
		if (!mysql_event_parse(d->m->net.read_pos + 1, n - 1, d->checksum_len, ev)) {
			fail(err, cap, "an event whose length is not its packet's");
			return -1;
		}
		if (ev->type != MYEV_TRANSACTION_PAYLOAD)
			return 1;
		if (mysql_dump_begin_payload(d, ev, err, cap) < 0)
			return -1;
		/* (its events are handed out from the top of the loop) */
	}
}

void mysql_dump_close(struct mysql_dump *d)
{
	free(d->payload);
	if (d->zstd)
		ZSTD_freeDCtx(d->zstd);
	memset(d, 0, sizeof(*d));
}

/* ---- decoders -------------------------------------------------------------------- */

bool mysql_ev_gtid(const struct mysql_event *ev, uint8_t uuid[GTID_UUID_LEN], uint64_t *gno)
{
	struct binrd r;
	const uint8_t *u;

	binrd_init(&r, ev->body, ev->body_len);
	binrd_take(&r, GTID_FLAGS_LEN);
	u = binrd_take(&r, UUID_LEN);
	*gno = binrd_le(&r, 8);
	if (r.bad || *gno == 0 || *gno > GTID_GNO_MAX)
		return false;   /* cut short, or no transaction number MySQL could give */
	memcpy(uuid, u, UUID_LEN);
	return true;
}

/* ---- MySQL's serialization framework (libs/mysql/serialization) ----
 *
 * A message: its format version (1), its size in bytes counted from the
 * version on, the id of the last field a reader must know (0: none), then
 * its fields, each an id and a value. The ids number the fields in the
 * order the event defines them, from 0; a field the writer leaves out is
 * simply absent, so a reader takes a field only when the next id is its
 * own. Integers are variable-length (below); a fixed array is its
 * elements one after the other, each an integer; a string its length and
 * its bytes. */

#define SER_FORMAT_VERSION 1

/* Gtid_event's fields (control_events.h, define_fields) that are read. */
enum { GTF_FLAGS = 0, GTF_UUID = 1, GTF_GNO = 2, GTF_TAG = 3 };

/* A variable-length unsigned integer: the 1 bits at the bottom of its first
 * byte, plus one, are its length in bytes (1 to 9). Below 9, the value is
 * the first byte's bits above that count, then the further bytes
 * little-endian above them; with 9 (a first byte 0xff) it is the 8 bytes
 * after it. Longer forms than needed are read too, as MySQL reads them. A
 * read cut short makes r bad. */
static uint64_t ser_uint(struct binrd *r)
{
	const uint8_t *p = binrd_take(r, 1), *rest;
	unsigned ones = 0, n;

	if (!p)
		return 0;   /* past the end: already bad */
	while (ones < 8 && (*p >> ones) & 1)
		ones++;
	n = ones + 1;
	rest = binrd_take(r, n - 1);
	if (!rest)
		return 0;   /* cut short: now bad */
	if (n == 9)
		return binrd_le_at(rest, 8);   /* the first byte holds no value bits */
	return (uint64_t)(*p >> n) | (binrd_le_at(rest, n - 1) << (8 - n));
}

/* Is the next field of the message m the one numbered id? If so its id is
 * read past. An id cut short makes m bad. */
static bool ser_field(struct binrd *m, uint64_t id)
{
	struct binrd peek = *m;
	uint64_t next;

	if (binrd_left(m) == 0)
		return false;   /* the message ended: the field was left out */
	next = ser_uint(&peek);
	if (peek.bad) {
		m->bad = true;
		return false;   /* an id cut short: malformed */
	}
	if (next != id)
		return false;   /* left out: the next field is a later one */
	*m = peek;
	return true;
}

/* ev's body as a message: m gets its fields, bounded by its size. false:
 * cut short, another format version, or a size that is not within the
 * body. */
static bool ser_message(const struct mysql_event *ev, struct binrd *m)
{
	struct binrd r;
	uint64_t version, size, head;

	binrd_init(&r, ev->body, ev->body_len);
	version = ser_uint(&r);
	size = ser_uint(&r);
	/* The last field a reader must know: ignored, because only the first
	 * four are read and a field added later cannot change what they say. */
	ser_uint(&r);
	if (r.bad || version != SER_FORMAT_VERSION)
		return false;   /* cut short, or a format not known */
	head = (uint64_t)(r.p - ev->body);
	if (size < head || size > ev->body_len)
		return false;   /* the message does not fit its header and body */
	binrd_init(m, r.p, (size_t)(size - head));
	return true;
}

/* An integer of at most a byte (a uuid's byte, the flags); > 255: too wide. */
static uint64_t ser_byte(struct binrd *m, bool *bad)
{
	uint64_t v = ser_uint(m);

	if (v > UINT8_MAX)
		*bad = true;
	return v;
}

/* The tag field's value: a length up to 32 and its characters. */
static bool ser_tag(struct binrd *m, char tag[GTID_TAG_MAX + 1])
{
	uint64_t len = ser_uint(m);
	const uint8_t *t;

	if (m->bad || len > GTID_TAG_MAX)
		return false;   /* cut short, or longer than a tag */
	t = binrd_take(m, (size_t)len);
	return t && gtid_tag_parse((const char *)t, (size_t)len, tag);
}

bool mysql_ev_gtid_tagged(const struct mysql_event *ev, uint8_t uuid[GTID_UUID_LEN],
			  char tag[GTID_TAG_MAX + 1], uint64_t *gno)
{
	struct binrd m;
	uint8_t u[GTID_UUID_LEN];
	char t[GTID_TAG_MAX + 1] = "";
	bool wide = false;
	uint64_t g;

	if (!ser_message(ev, &m))
		return false;   /* not a message (ser_message says why) */
	if (ser_field(&m, GTF_FLAGS))
		ser_byte(&m, &wide);
	if (!ser_field(&m, GTF_UUID))
		return false;   /* no uuid (or an id cut short) */
	for (unsigned i = 0; i < GTID_UUID_LEN; i++)
		u[i] = (uint8_t)ser_byte(&m, &wide);
	if (!ser_field(&m, GTF_GNO))
		return false;   /* no transaction number */
	/* A signed integer: the sign in the lowest bit, then the magnitude. */
	g = ser_uint(&m);
	if (m.bad || wide || (g & 1) || (g >> 1) == 0 || (g >> 1) > GTID_GNO_MAX)
		return false;   /* cut short, a byte too wide, or no transaction's number */
	if (ser_field(&m, GTF_TAG) && !ser_tag(&m, t))
		return false;   /* a tag cut short or not a tag */
	if (m.bad)
		return false;   /* the id after the gno cut short */
	memcpy(uuid, u, GTID_UUID_LEN);
	memcpy(tag, t, sizeof(t));
	*gno = g >> 1;
	return true;
}

bool mysql_ev_query(const struct mysql_event *ev, const char **db, size_t *dlen, const char **stmt,
		    size_t *slen)
{
	struct binrd r;
	unsigned status_len;
	const uint8_t *name;

	binrd_init(&r, ev->body, ev->body_len);
	binrd_take(&r, 8);                         /* thread id, execution time */
	*dlen = (size_t)binrd_le(&r, 1);
	binrd_take(&r, 2);                         /* error code */
	status_len = (unsigned)binrd_le(&r, 2);
	binrd_take(&r, status_len);                /* status variables */
	name = binrd_take(&r, *dlen + 1);          /* the schema and its NUL */
	if (r.bad)
		return false;   /* cut short */
	*db = (const char *)name;
	*stmt = (const char *)r.p;
	*slen = binrd_left(&r);
	return true;
}

bool mysql_ev_table_map(const struct mysql_event *ev, uint64_t *table_id, const char **db, size_t *dlen,
			const char **table, size_t *tlen)
{
	struct binrd r;

	binrd_init(&r, ev->body, ev->body_len);
	*table_id = binrd_le(&r, 6);
	binrd_take(&r, 2);                         /* flags */
	*dlen = (size_t)binrd_le(&r, 1);
	*db = (const char *)binrd_take(&r, *dlen + 1);
	*tlen = (size_t)binrd_le(&r, 1);
	*table = (const char *)binrd_take(&r, *tlen + 1);
	return !r.bad;
}

bool mysql_ev_rotate(const struct mysql_event *ev, const char **name, size_t *len)
{
	if (ev->body_len <= 8)
		return false;   /* a position and no name */
	*name = (const char *)ev->body + 8;
	*len = ev->body_len - 8;
	return true;
}

bool mysql_ev_payload(const struct mysql_event *ev, unsigned *compression, const uint8_t **data,
		      size_t *len, uint64_t *uncompressed)
{
	struct binrd r;
	uint64_t size = UINT64_MAX;

	*compression = 0;
	*uncompressed = 0;
	binrd_init(&r, ev->body, ev->body_len);
	for (;;) {
		uint64_t type = binrd_packed(&r), flen, value;

		if (r.bad)
			return false;   /* no end mark */
		if (type == PAYLOAD_END)
			break;
		flen = binrd_packed(&r);
		if (r.bad || flen > binrd_left(&r))
			return false;   /* a field longer than the event */
		if (type == PAYLOAD_SIZE || type == PAYLOAD_COMPRESSION || type == PAYLOAD_UNCOMPRESSED) {
			struct binrd f;

			binrd_init(&f, r.p, (size_t)flen);
			value = binrd_packed(&f);
			if (f.bad)
				return false;   /* a value that is not a packed integer */
			if (type == PAYLOAD_SIZE)
				size = value;
			else if (type == PAYLOAD_COMPRESSION)
				*compression = value > 255 ? 256 : (unsigned)value;   /* (256: none known) */
			else
				*uncompressed = value;
		}
		binrd_take(&r, (size_t)flen);   /* (a field not known is skipped) */
	}
	if (size == UINT64_MAX || size != binrd_left(&r))
		return false;   /* the payload is not the size it says */
	*data = r.p;
	*len = (size_t)size;
	return true;
}
