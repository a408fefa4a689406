/*
 * test_relay.c: unit tests for src/proto/relay.c, the response state machine.
 * Each case builds the upstream's packets by hand (the upstream never
 * negotiates DEPRECATE_EOF, so it always sends EOF packets), feeds them one by
 * one as exact-size heap copies (so ASan catches over-reads), checks the
 * return value of every feed (0 until the last packet, then 1, or -1 for a
 * violation) and compares the client output byte for byte with an expected
 * stream built independently: for a classic client it is the input itself;
 * for a DEPRECATE_EOF client the metadata EOFs are gone, sequence ids after
 * them are shifted down, and every other EOF is an OK packet with a 0xFE
 * header (0xFE 0x00 0x00 status warnings). For a client without
 * CLIENT_SESSION_TRACK, OK packets lose their session-state data and
 * SESSION_STATE_CHANGED is cleared in OKs and EOFs.
 */
#include "proto/relay.h"
#include "tap.h"

#include <stdlib.h>

/* ---- packet construction ------------------------------------------------ */

static void pk(struct pbuf *b, uint8_t seq, const void *pl, size_t n)
{
	uint8_t h[4];

	wr_u24(h, (uint32_t)n);
	h[3] = seq;
	pbuf_append(b, h, 4);
	pbuf_append(b, pl, n);
}

static void add_lenenc_str(struct pbuf *p, const char *s)
{
	put_lenenc_str(p, s, strlen(s));
}

/* Protocol::ColumnDefinition41 for a VARCHAR column named name. */
static void pk_coldef(struct pbuf *b, uint8_t seq, const char *name)
{
	struct pbuf p = {0};

	add_lenenc_str(&p, "def");
	add_lenenc_str(&p, "db");
	add_lenenc_str(&p, "t");
	add_lenenc_str(&p, "t");
	add_lenenc_str(&p, name);
	add_lenenc_str(&p, name);
	put_u8(&p, 0x0c);
	put_u16(&p, 33);       /* utf8 */
	put_u32(&p, 255);
	put_u8(&p, 0xfd);      /* VAR_STRING */
	put_u16(&p, 0);
	put_u8(&p, 0);
	put_u16(&p, 0);
	pk(b, seq, p.data, p.len);
	pbuf_free(&p);
}

static void pk_count(struct pbuf *b, uint8_t seq, uint64_t n)
{
	struct pbuf p = {0};

	put_lenenc(&p, n);
	pk(b, seq, p.data, p.len);
	pbuf_free(&p);
}

/* A text row: NULL values are sent as 0xFB. */
static void pk_row(struct pbuf *b, uint8_t seq, const char *v1, const char *v2)
{
	struct pbuf p = {0};

	if (v1)
		add_lenenc_str(&p, v1);
	else
		put_u8(&p, 0xfb);
	if (v2)
		add_lenenc_str(&p, v2);
	else
		put_u8(&p, 0xfb);
	pk(b, seq, p.data, p.len);
	pbuf_free(&p);
}

static void pk_row1(struct pbuf *b, uint8_t seq, const char *v)
{
	struct pbuf p = {0};

	add_lenenc_str(&p, v);
	pk(b, seq, p.data, p.len);
	pbuf_free(&p);
}

static void pk_eof(struct pbuf *b, uint8_t seq, uint16_t warnings, uint16_t status)
{
	uint8_t p[5] = { 0xfe };

	wr_u16(p + 1, warnings);
	wr_u16(p + 3, status);
	pk(b, seq, p, 5);
}

/* The OK packet with a 0xFE header that replaces EOF for DEPRECATE_EOF. */
static void pk_okfe(struct pbuf *b, uint8_t seq, uint16_t status, uint16_t warnings)
{
	uint8_t p[7] = { 0xfe, 0x00, 0x00 };

	wr_u16(p + 3, status);
	wr_u16(p + 5, warnings);
	pk(b, seq, p, 7);
}

static void pk_ok(struct pbuf *b, uint8_t seq, uint8_t affected, uint8_t insert_id,
		  uint16_t status, uint16_t warnings)
{
	uint8_t p[7] = { 0x00, affected, insert_id };

	wr_u16(p + 3, status);
	wr_u16(p + 5, warnings);
	pk(b, seq, p, 7);
}

static void pk_err(struct pbuf *b, uint8_t seq, uint16_t code, const char *state, const char *msg)
{
	struct pbuf p = {0};

	put_u8(&p, 0xff);
	put_u16(&p, code);
	put_u8(&p, '#');
	pbuf_append(&p, state, 5);
	pbuf_append(&p, msg, strlen(msg));
	pk(b, seq, p.data, p.len);
	pbuf_free(&p);
}

/* COM_STMT_PREPARE_OK */
static void pk_prep_ok(struct pbuf *b, uint8_t seq, uint32_t id, uint16_t cols, uint16_t params,
		       uint16_t warnings)
{
	uint8_t p[12] = { 0x00 };

	wr_u32(p + 1, id);
	wr_u16(p + 5, cols);
	wr_u16(p + 7, params);
	p[9] = 0;
	wr_u16(p + 10, warnings);
	pk(b, seq, p, 12);
}

/* A binary protocol row with one INT column: 0x00, NULL bitmap, int4. */
static void pk_binrow(struct pbuf *b, uint8_t seq, uint32_t v)
{
	uint8_t p[6] = { 0x00, 0x00 };

	wr_u32(p + 2, v);
	pk(b, seq, p, 6);
}

/* Client capabilities: the upstream always has SESSION_TRACK; a client with
 * it too gets OK packets untouched. */
#define C_CLASSIC (CAP_PROTOCOL_41 | CAP_SESSION_TRACK)
#define C_DEP     (C_CLASSIC | CAP_DEPRECATE_EOF)
#define C_NOTRACK (CAP_PROTOCOL_41)
#define C_NOTRACK_DEP (CAP_PROTOCOL_41 | CAP_DEPRECATE_EOF)

static const char *cname(uint32_t caps)
{
	static char buf[64];
	snprintf(buf, sizeof(buf), "%s%s", caps & CAP_DEPRECATE_EOF ? "deprecate_eof" : "classic",
		 caps & CAP_SESSION_TRACK ? "" : ", no session track");
	return buf;
}

/* ---- feeding ------------------------------------------------------------ */

static size_t count_packets(const struct pbuf *in)
{
	size_t n = 0;

	for (size_t off = 0; off + 4 <= in->len; off += 4 + rd_u24(in->data + off))
		n++;
	return n;
}

/* Feed every framed packet of in until relay_feed returns non-zero. Returns
 * the last return value; *fed gets the number of packets fed. */
static int feed_all(struct relay *r, const struct pbuf *in, struct pbuf *out, size_t *fed)
{
	size_t off = 0;
	int rc = 0;

	*fed = 0;
	while (off + 4 <= in->len) {
		size_t len = 4 + rd_u24(in->data + off);
		uint8_t *copy = malloc(len);

		memcpy(copy, in->data + off, len);
		rc = relay_feed(r, copy, len, out);
		free(copy);
		(*fed)++;
		off += len;
		if (rc != 0)
			break;
	}
	return rc;
}

static void expect_out(const struct pbuf *out, const struct pbuf *exp, const char *name)
{
	int same = out->len == exp->len && (exp->len == 0 || memcmp(out->data, exp->data, exp->len) == 0);

	ok(same, "%s: client output bytes", name);
	if (!same) {
		size_t i = 0;
		while (i < out->len && i < exp->len && out->data[i] == exp->data[i])
			i++;
		printf("#   got %zu bytes, want %zu; first difference at offset %zu\n", out->len, exp->len, i);
	}
}

/* Run a whole response: every packet but the last returns 0, the last
 * returns 1, and the output equals exp. */
/* The flags byte of the COM_STMT_EXECUTE that run() relays the answer of. */
static uint8_t exec_flags;

static void run(uint8_t cmd, uint32_t caps, const struct pbuf *in, const struct pbuf *exp,
		const char *name, struct relay *rout)
{
	struct relay r;
	struct pbuf out = {0};
	size_t fed, n = count_packets(in);
	int rc;

	relay_start(&r, cmd, caps);
	relay_execute_flags(&r, exec_flags);
	rc = feed_all(&r, in, &out, &fed);
	if (!ok(rc == 1 && fed == n, "%s (%s): ends at the last packet", name,
		cname(caps)))
		printf("#   rc %d after %zu of %zu packets\n", rc, fed, n);
	expect_out(&out, exp, name);
	is_int(r.st, RL_DONE, "  state RL_DONE");
	if (rout)
		*rout = r;
	pbuf_free(&out);
}

/* Feed the packets; expect -1 exactly at packet bad_at (1-based). */
static void run_bad(uint8_t cmd, uint32_t caps, const struct pbuf *in, size_t bad_at, const char *name)
{
	struct relay r;
	struct pbuf out = {0};
	size_t fed;
	int rc;

	relay_start(&r, cmd, caps);
	rc = feed_all(&r, in, &out, &fed);
	if (!ok(rc == -1 && fed == bad_at, "%s (%s): -1 at packet %zu", name,
		cname(caps), bad_at))
		printf("#   rc %d after %zu packets\n", rc, fed);
	pbuf_free(&out);
}

#define AC ST_AUTOCOMMIT
#define MORE ST_MORE_RESULTS_EXISTS

/* ---- cases -------------------------------------------------------------- */

static void test_kinds(void)
{
	struct relay r;

	relay_start(&r, CMD_QUERY, C_DEP);
	ok(r.st == RL_FIRST && r.cmd == CMD_QUERY && r.deprecate_eof && r.seq_shift == 0 &&
	   r.packets == 0 && r.rows == 0 && !r.in_continuation, "relay_start CMD_QUERY");
	ok(!r.strip_tracking, "  client with SESSION_TRACK: no stripping");
	relay_start(&r, CMD_STMT_PREPARE, C_CLASSIC);
	ok(r.st == RL_PREP_FIRST && !r.deprecate_eof, "relay_start CMD_STMT_PREPARE");
	relay_start(&r, CMD_QUERY, C_NOTRACK);
	ok(r.strip_tracking && !r.deprecate_eof, "relay_start without SESSION_TRACK: strip_tracking");
	relay_start(&r, CMD_QUERY, C_NOTRACK_DEP);
	ok(r.strip_tracking && r.deprecate_eof, "relay_start DEPRECATE_EOF without SESSION_TRACK");
	relay_start(&r, CMD_STMT_FETCH, C_CLASSIC);
	is_int(r.st, RL_ROWS, "relay_start CMD_STMT_FETCH -> RL_ROWS");
	relay_start(&r, CMD_FIELD_LIST, C_CLASSIC);
	is_int(r.st, RL_FIELDLIST, "relay_start CMD_FIELD_LIST -> RL_FIELDLIST");
	relay_start(&r, CMD_PING, C_CLASSIC);
	is_int(r.st, RL_SINGLE, "relay_start CMD_PING -> RL_SINGLE");
	relay_start(&r, CMD_STMT_CLOSE, C_CLASSIC);
	is_int(r.st, RL_DONE, "relay_start CMD_STMT_CLOSE -> RL_DONE (no response)");
	relay_start(&r, 0x99, C_CLASSIC);
	is_int(r.st, RL_SINGLE, "relay_start of a byte that is no command -> RL_SINGLE (the server's ERR)");
}

static void test_ok_err(void)
{
	struct pbuf in = {0};
	struct relay r;

	pk_ok(&in, 1, 3, 7, AC | ST_IN_TRANS, 2);
	for (int dep = 0; dep < 2; dep++) {
		run(CMD_QUERY, dep ? C_DEP : C_CLASSIC, &in, &in, "OK-only response", &r);
		is_int(r.status, AC | ST_IN_TRANS, "  status read from OK");
		is_int(r.warnings, 2, "  warnings read from OK");
		is_int(r.packets, 1, "  1 packet forwarded");
	}
	pbuf_free(&in);

	/* an OK with a 3-byte lenenc affected-rows count */
	{
		uint8_t p[] = { 0x00, 0xfc, 0x10, 0x27, 0x05, 0x22, 0x00, 0x01, 0x00, 'i', 'n', 'f', 'o' };
		pk(&in, 1, p, sizeof(p));
		run(CMD_QUERY, C_DEP, &in, &in, "OK with lenenc affected rows and info", &r);
		is_int(r.status, 0x0022, "  status after lenenc fields");
		is_int(r.warnings, 1, "  warnings after lenenc fields");
		pbuf_free(&in);
	}

	pk_err(&in, 1, 1064, "42000", "You have an error in your SQL syntax");
	for (int dep = 0; dep < 2; dep++) {
		run(CMD_QUERY, dep ? C_DEP : C_CLASSIC, &in, &in, "ERR response", &r);
		is_int(r.packets, 1, "  1 packet forwarded");
	}
	pbuf_free(&in);

	/* single-packet commands */
	pk_ok(&in, 1, 0, 0, AC, 0);
	run(CMD_PING, C_CLASSIC, &in, &in, "CMD_PING OK", NULL);
	run(CMD_PING, C_DEP, &in, &in, "CMD_PING OK", NULL);
	run(CMD_INIT_DB, C_DEP, &in, &in, "CMD_INIT_DB OK", &r);
	is_int(r.status, AC, "  status read");
	pbuf_free(&in);
	pk_err(&in, 1, 1049, "42000", "Unknown database 'x'");
	run(CMD_INIT_DB, C_DEP, &in, &in, "CMD_INIT_DB ERR", NULL);
	pbuf_free(&in);
}

/* SELECT a, b -> 3 rows */
static void test_text_result(void)
{
	struct pbuf in = {0}, exp = {0};
	struct relay r;

	pk_count(&in, 1, 2);
	pk_coldef(&in, 2, "a");
	pk_coldef(&in, 3, "b");
	pk_eof(&in, 4, 0, AC);
	pk_row(&in, 5, "1", "one");
	pk_row(&in, 6, "2", NULL);
	pk_row(&in, 7, "", "three");
	pk_eof(&in, 8, 1, AC | ST_IN_TRANS);

	run(CMD_QUERY, C_CLASSIC, &in, &in, "2 columns, 3 rows", &r);
	is_int(r.rows, 3, "  3 rows counted");
	is_int(r.packets, 8, "  8 packets forwarded");
	is_int(r.status, AC | ST_IN_TRANS, "  status from the final EOF");
	is_int(r.warnings, 1, "  warnings from the final EOF");

	pk_count(&exp, 1, 2);
	pk_coldef(&exp, 2, "a");
	pk_coldef(&exp, 3, "b");
	pk_row(&exp, 4, "1", "one");
	pk_row(&exp, 5, "2", NULL);
	pk_row(&exp, 6, "", "three");
	pk_okfe(&exp, 7, AC | ST_IN_TRANS, 1);
	run(CMD_QUERY, C_DEP, &in, &exp, "2 columns, 3 rows", &r);
	is_int(r.rows, 3, "  3 rows counted");
	is_int(r.status, AC | ST_IN_TRANS, "  status from the final EOF");
	is_int(r.seq_shift, 1, "  one packet dropped");
	/* explicit check of the rewritten tail */
	is_mem(exp.data + exp.len - 11, "\x07\x00\x00\x07\xfe\x00\x00\x03\x00\x01\x00", 11,
	       "  expected tail is 0xFE 00 00 status warnings with seq 7");

	/* the same response through CMD_STMT_EXECUTE (binary rows start with 0x00) */
	pbuf_free(&in);
	pbuf_free(&exp);
	pk_count(&in, 1, 1);
	pk_coldef(&in, 2, "id");
	pk_eof(&in, 3, 0, AC);
	pk_binrow(&in, 4, 1);
	pk_binrow(&in, 5, 2);
	{
		/* a binary row that is 7+ bytes and starts with 0x00, like an OK */
		uint8_t p[9] = { 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00 };
		pk(&in, 6, p, sizeof(p));
		pk_eof(&in, 7, 0, AC);
		run(CMD_STMT_EXECUTE, C_CLASSIC, &in, &in, "execute, binary rows", &r);
		is_int(r.rows, 3, "  binary rows (even OK-like) counted as rows");
		pk_count(&exp, 1, 1);
		pk_coldef(&exp, 2, "id");
		pk_binrow(&exp, 3, 1);
		pk_binrow(&exp, 4, 2);
		pk(&exp, 5, p, sizeof(p));
		pk_okfe(&exp, 6, AC, 0);
		run(CMD_STMT_EXECUTE, C_DEP, &in, &exp, "execute, binary rows", NULL);
	}
	pbuf_free(&in);
	pbuf_free(&exp);
}

static void test_empty_result(void)
{
	struct pbuf in = {0}, exp = {0};
	struct relay r;

	pk_count(&in, 1, 1);
	pk_coldef(&in, 2, "x");
	pk_eof(&in, 3, 0, AC);
	pk_eof(&in, 4, 0, AC);
	run(CMD_QUERY, C_CLASSIC, &in, &in, "empty result set", &r);
	is_int(r.rows, 0, "  0 rows");
	pk_count(&exp, 1, 1);
	pk_coldef(&exp, 2, "x");
	pk_okfe(&exp, 3, AC, 0);
	run(CMD_QUERY, C_DEP, &in, &exp, "empty result set", &r);
	is_int(r.rows, 0, "  0 rows");
	pbuf_free(&in);
	pbuf_free(&exp);
}

static void test_multi_result(void)
{
	struct pbuf in = {0}, exp = {0};
	struct relay r, rs;
	size_t fed;
	int rc;

	/* CALL p(): two result sets, then the final OK */
	pk_count(&in, 1, 1);
	pk_coldef(&in, 2, "a");
	pk_eof(&in, 3, 0, AC);
	pk_row1(&in, 4, "x");
	pk_eof(&in, 5, 0, AC | MORE);
	pk_count(&in, 6, 2);
	pk_coldef(&in, 7, "b");
	pk_coldef(&in, 8, "c");
	pk_eof(&in, 9, 0, AC | MORE);
	pk_row(&in, 10, "1", "2");
	pk_row(&in, 11, "3", "4");
	pk_eof(&in, 12, 2, AC | MORE);
	pk_ok(&in, 13, 0, 0, AC, 0);
	run(CMD_QUERY, C_CLASSIC, &in, &in, "multi-result (2 sets + OK)", &r);
	is_int(r.rows, 3, "  3 rows over both sets");
	is_int(r.status, AC, "  final status without MORE_RESULTS");

	pk_count(&exp, 1, 1);
	pk_coldef(&exp, 2, "a");
	pk_row1(&exp, 3, "x");
	pk_okfe(&exp, 4, AC | MORE, 0);
	pk_count(&exp, 5, 2);
	pk_coldef(&exp, 6, "b");
	pk_coldef(&exp, 7, "c");
	pk_row(&exp, 8, "1", "2");
	pk_row(&exp, 9, "3", "4");
	pk_okfe(&exp, 10, AC | MORE, 2);
	pk_ok(&exp, 11, 0, 0, AC, 0);
	run(CMD_QUERY, C_DEP, &in, &exp, "multi-result (2 sets + OK)", &r);
	is_int(r.seq_shift, 2, "  two metadata EOFs dropped");

	/* the relay must not stop at the EOF carrying MORE_RESULTS */
	relay_start(&rs, CMD_QUERY, C_CLASSIC);
	{
		struct pbuf out = {0}, part = {0};
		pk_count(&part, 1, 1);
		pk_coldef(&part, 2, "a");
		pk_eof(&part, 3, 0, AC);
		pk_row1(&part, 4, "x");
		pk_eof(&part, 5, 0, AC | MORE);
		rc = feed_all(&rs, &part, &out, &fed);
		ok(rc == 0 && fed == 5, "EOF with MORE_RESULTS returns 0 (more to come)");
		is_int(rs.st, RL_FIRST, "  back to RL_FIRST");
		pbuf_free(&out);
		pbuf_free(&part);
	}
	pbuf_free(&in);
	pbuf_free(&exp);

	/* multi-statement: OK (MORE) + OK (MORE) + result set */
	pk_ok(&in, 1, 1, 0, AC | MORE, 0);
	pk_ok(&in, 2, 1, 0, AC | MORE, 0);
	pk_count(&in, 3, 1);
	pk_coldef(&in, 4, "v");
	pk_eof(&in, 5, 0, AC);
	pk_row1(&in, 6, "42");
	pk_eof(&in, 7, 0, AC);
	run(CMD_QUERY, C_CLASSIC, &in, &in, "multi-statement OK, OK, result", NULL);
	pk_ok(&exp, 1, 1, 0, AC | MORE, 0);
	pk_ok(&exp, 2, 1, 0, AC | MORE, 0);
	pk_count(&exp, 3, 1);
	pk_coldef(&exp, 4, "v");
	pk_row1(&exp, 5, "42");
	pk_okfe(&exp, 6, AC, 0);
	run(CMD_QUERY, C_DEP, &in, &exp, "multi-statement OK, OK, result", NULL);
	pbuf_free(&in);
	pbuf_free(&exp);

	/* multi-statement where the second statement fails */
	pk_count(&in, 1, 1);
	pk_coldef(&in, 2, "v");
	pk_eof(&in, 3, 0, AC);
	pk_row1(&in, 4, "1");
	pk_eof(&in, 5, 0, AC | MORE);
	pk_err(&in, 6, 1146, "42S02", "Table 'x.y' doesn't exist");
	run(CMD_QUERY, C_CLASSIC, &in, &in, "multi-statement result then ERR", NULL);
	pk_count(&exp, 1, 1);
	pk_coldef(&exp, 2, "v");
	pk_row1(&exp, 3, "1");
	pk_okfe(&exp, 4, AC | MORE, 0);
	pk_err(&exp, 5, 1146, "42S02", "Table 'x.y' doesn't exist");
	run(CMD_QUERY, C_DEP, &in, &exp, "multi-statement result then ERR", NULL);
	pbuf_free(&in);
	pbuf_free(&exp);
}

static void test_err_in_rows(void)
{
	struct pbuf in = {0}, exp = {0};
	struct relay r;

	pk_count(&in, 1, 2);
	pk_coldef(&in, 2, "a");
	pk_coldef(&in, 3, "b");
	pk_eof(&in, 4, 0, AC);
	pk_row(&in, 5, "1", "2");
	pk_err(&in, 6, 1317, "70100", "Query execution was interrupted");
	run(CMD_QUERY, C_CLASSIC, &in, &in, "ERR after a row", &r);
	is_int(r.rows, 1, "  1 row before the ERR");
	pk_count(&exp, 1, 2);
	pk_coldef(&exp, 2, "a");
	pk_coldef(&exp, 3, "b");
	pk_row(&exp, 4, "1", "2");
	pk_err(&exp, 5, 1317, "70100", "Query execution was interrupted");
	run(CMD_QUERY, C_DEP, &in, &exp, "ERR after a row", NULL);
	pbuf_free(&in);
	pbuf_free(&exp);
}

static void test_prepare(void)
{
	struct pbuf in = {0}, exp = {0};
	struct relay r;
	size_t fed;
	int rc;

	/* 3 params, 2 columns */
	pk_prep_ok(&in, 1, 7, 2, 3, 0);
	pk_coldef(&in, 2, "?");
	pk_coldef(&in, 3, "?");
	pk_coldef(&in, 4, "?");
	pk_eof(&in, 5, 0, AC);
	pk_coldef(&in, 6, "a");
	pk_coldef(&in, 7, "b");
	pk_eof(&in, 8, 0, AC);
	run(CMD_STMT_PREPARE, C_CLASSIC, &in, &in, "prepare 3 params, 2 columns", &r);
	is_int(r.packets, 8, "  8 packets");
	pk_prep_ok(&exp, 1, 7, 2, 3, 0);
	pk_coldef(&exp, 2, "?");
	pk_coldef(&exp, 3, "?");
	pk_coldef(&exp, 4, "?");
	pk_coldef(&exp, 5, "a");
	pk_coldef(&exp, 6, "b");
	run(CMD_STMT_PREPARE, C_DEP, &in, &exp, "prepare 3 params, 2 columns", &r);
	is_int(r.seq_shift, 2, "  both EOFs dropped");
	pbuf_free(&in);
	pbuf_free(&exp);

	/* 0 params, 2 columns */
	pk_prep_ok(&in, 1, 8, 2, 0, 1);
	pk_coldef(&in, 2, "a");
	pk_coldef(&in, 3, "b");
	pk_eof(&in, 4, 0, AC);
	run(CMD_STMT_PREPARE, C_CLASSIC, &in, &in, "prepare 0 params, 2 columns", NULL);
	pk_prep_ok(&exp, 1, 8, 2, 0, 1);
	pk_coldef(&exp, 2, "a");
	pk_coldef(&exp, 3, "b");
	run(CMD_STMT_PREPARE, C_DEP, &in, &exp, "prepare 0 params, 2 columns", NULL);
	pbuf_free(&in);
	pbuf_free(&exp);

	/* 2 params, 0 columns (INSERT) */
	pk_prep_ok(&in, 1, 9, 0, 2, 0);
	pk_coldef(&in, 2, "?");
	pk_coldef(&in, 3, "?");
	pk_eof(&in, 4, 0, AC);
	run(CMD_STMT_PREPARE, C_CLASSIC, &in, &in, "prepare 2 params, 0 columns", NULL);
	pk_prep_ok(&exp, 1, 9, 0, 2, 0);
	pk_coldef(&exp, 2, "?");
	pk_coldef(&exp, 3, "?");
	run(CMD_STMT_PREPARE, C_DEP, &in, &exp, "prepare 2 params, 0 columns", NULL);
	pbuf_free(&in);
	pbuf_free(&exp);

	/* 0 params, 0 columns: the OK alone */
	pk_prep_ok(&in, 1, 10, 0, 0, 0);
	run(CMD_STMT_PREPARE, C_CLASSIC, &in, &in, "prepare 0 params, 0 columns", NULL);
	run(CMD_STMT_PREPARE, C_DEP, &in, &in, "prepare 0 params, 0 columns", NULL);
	pbuf_free(&in);

	pk_err(&in, 1, 1064, "42000", "syntax");
	run(CMD_STMT_PREPARE, C_CLASSIC, &in, &in, "prepare ERR", NULL);
	run(CMD_STMT_PREPARE, C_DEP, &in, &in, "prepare ERR", NULL);
	pbuf_free(&in);

	/* violations */
	{
		uint8_t p[11] = { 0 };
		pk(&in, 1, p, sizeof(p));
		run_bad(CMD_STMT_PREPARE, C_CLASSIC, &in, 1, "prepare OK of 11 bytes");
		pbuf_free(&in);
	}
	{
		uint8_t p[12] = { 0x01 };
		pk(&in, 1, p, sizeof(p));
		run_bad(CMD_STMT_PREPARE, C_CLASSIC, &in, 1, "prepare OK with a non-0x00 header");
		pbuf_free(&in);
	}
	pk(&in, 1, "", 0);
	run_bad(CMD_STMT_PREPARE, C_CLASSIC, &in, 1, "prepare: empty payload");
	pbuf_free(&in);
	pk_prep_ok(&in, 1, 7, 1, 1, 0);
	pk_coldef(&in, 2, "?");
	pk_coldef(&in, 3, "a"); /* EOF expected here */
	run_bad(CMD_STMT_PREPARE, C_CLASSIC, &in, 3, "prepare: no EOF after params");
	run_bad(CMD_STMT_PREPARE, C_DEP, &in, 3, "prepare: no EOF after params");
	pbuf_free(&in);
	pk_prep_ok(&in, 1, 7, 1, 0, 0);
	pk_coldef(&in, 2, "a");
	pk_row1(&in, 3, "zz"); /* EOF expected here */
	run_bad(CMD_STMT_PREPARE, C_CLASSIC, &in, 3, "prepare: no EOF after columns");
	pbuf_free(&in);

	/* the relay is done after the last EOF: one more packet is a violation */
	pk_prep_ok(&in, 1, 7, 1, 0, 0);
	pk_coldef(&in, 2, "a");
	pk_eof(&in, 3, 0, AC);
	relay_start(&r, CMD_STMT_PREPARE, C_DEP);
	{
		struct pbuf out = {0};
		rc = feed_all(&r, &in, &out, &fed);
		ok(rc == 1 && fed == 3, "prepare 1 column ends at its EOF");
		rc = relay_feed(&r, in.data, 4 + rd_u24(in.data), &out);
		is_int(rc, -1, "feeding after the end: -1");
		pbuf_free(&out);
	}
	pbuf_free(&in);
}

static void test_cursor_fetch(void)
{
	struct pbuf in = {0}, exp = {0};
	struct relay r;

	/* COM_STMT_EXECUTE with a read-only cursor: ends at the metadata EOF */
	pk_count(&in, 1, 2);
	pk_coldef(&in, 2, "a");
	pk_coldef(&in, 3, "b");
	pk_eof(&in, 4, 0, AC | ST_CURSOR_EXISTS);
	exec_flags = 1; /* CURSOR_TYPE_READ_ONLY */
	run(CMD_STMT_EXECUTE, C_CLASSIC, &in, &in, "execute with cursor", &r);
	ok(r.cursor_opened, "  a cursor was opened");
	is_int(r.status, AC | ST_CURSOR_EXISTS, "  status has CURSOR_EXISTS");
	pk_count(&exp, 1, 2);
	pk_coldef(&exp, 2, "a");
	pk_coldef(&exp, 3, "b");
	pk_okfe(&exp, 4, AC | ST_CURSOR_EXISTS, 0);
	run(CMD_STMT_EXECUTE, C_DEP, &in, &exp, "execute with cursor", &r);
	is_int(r.seq_shift, 0, "  nothing dropped");
	exec_flags = 0;
	pbuf_free(&in);
	pbuf_free(&exp);

	/* the server fails making the cursor's rows (a stored function's
	 * SIGNAL): its ERR comes in place of the metadata EOF, and ends the
	 * answer, as it is, for both kinds of client */
	pk_count(&in, 1, 1);
	pk_coldef(&in, 2, "f()");
	pk_err(&in, 3, 1644, "45000", "boom");
	exec_flags = 1;
	run(CMD_STMT_EXECUTE, C_CLASSIC, &in, &in, "execute with cursor, ERR after the columns", &r);
	ok(r.saw_err && !r.cursor_opened, "  an error, no cursor");
	run(CMD_STMT_EXECUTE, C_DEP, &in, &in, "execute with cursor, ERR after the columns", &r);
	ok(r.saw_err && !r.cursor_opened && r.seq_shift == 0, "  an error, no cursor, nothing dropped");
	exec_flags = 0;
	pbuf_free(&in);

	/* CURSOR_EXISTS without a cursor asked for: a stored program's cursor
	 * left the flag set (BEGIN NOT ATOMIC ... OPEN c; FETCH c ...; SELECT),
	 * in a COM_QUERY or an execute. The rows follow as usual. */
	pk_count(&in, 1, 1);
	pk_coldef(&in, 2, "x");
	pk_eof(&in, 3, 0, AC | MORE | ST_CURSOR_EXISTS);
	pk_row1(&in, 4, "1");
	pk_eof(&in, 5, 0, AC | MORE | ST_CURSOR_EXISTS);
	pk_ok(&in, 6, 0, 0, AC, 0);
	run(CMD_QUERY, C_CLASSIC, &in, &in, "query: stored-program cursor flag", &r);
	ok(!r.cursor_opened && r.rows == 1, "  rows relayed, no cursor");
	run(CMD_STMT_EXECUTE, C_CLASSIC, &in, &in, "execute without cursor: stored-program cursor flag", &r);
	ok(!r.cursor_opened && r.rows == 1, "  rows relayed, no cursor");
	pbuf_free(&in);

	/* a cursor asked for but none opened (the server sends the rows) */
	pk_count(&in, 1, 1);
	pk_coldef(&in, 2, "x");
	pk_eof(&in, 3, 0, AC);
	pk_binrow(&in, 4, 7);
	pk_eof(&in, 5, 0, AC);
	exec_flags = 1;
	run(CMD_STMT_EXECUTE, C_CLASSIC, &in, &in, "execute asking a cursor, rows sent", &r);
	ok(!r.cursor_opened && r.rows == 1, "  rows relayed, no cursor");
	exec_flags = 0;
	pbuf_free(&in);

	/* COM_STMT_FETCH: rows then EOF */
	pk_binrow(&in, 1, 10);
	pk_binrow(&in, 2, 20);
	pk_eof(&in, 3, 0, AC | ST_CURSOR_EXISTS);
	run(CMD_STMT_FETCH, C_CLASSIC, &in, &in, "fetch 2 rows", &r);
	is_int(r.rows, 2, "  2 rows");
	pk_binrow(&exp, 1, 10);
	pk_binrow(&exp, 2, 20);
	pk_okfe(&exp, 3, AC | ST_CURSOR_EXISTS, 0);
	run(CMD_STMT_FETCH, C_DEP, &in, &exp, "fetch 2 rows", NULL);
	pbuf_free(&in);
	pbuf_free(&exp);

	/* the last fetch: LAST_ROW_SENT */
	pk_binrow(&in, 1, 30);
	pk_eof(&in, 2, 0, AC | ST_CURSOR_EXISTS | ST_LAST_ROW_SENT);
	run(CMD_STMT_FETCH, C_CLASSIC, &in, &in, "fetch last row", NULL);
	pk_binrow(&exp, 1, 30);
	pk_okfe(&exp, 2, AC | ST_CURSOR_EXISTS | ST_LAST_ROW_SENT, 0);
	run(CMD_STMT_FETCH, C_DEP, &in, &exp, "fetch last row", NULL);
	pbuf_free(&in);
	pbuf_free(&exp);

	/* fetch: an EOF only, and an ERR */
	pk_eof(&in, 1, 0, AC | ST_LAST_ROW_SENT);
	run(CMD_STMT_FETCH, C_CLASSIC, &in, &in, "fetch nothing (EOF only)", NULL);
	pbuf_free(&in);
	pk_err(&in, 1, 1243, "HY000", "Unknown prepared statement handler");
	run(CMD_STMT_FETCH, C_DEP, &in, &in, "fetch ERR", NULL);
	pbuf_free(&in);
}

static void test_fieldlist_single(void)
{
	struct pbuf in = {0}, exp = {0};

	pk_coldef(&in, 1, "a");
	pk_coldef(&in, 2, "b");
	pk_eof(&in, 3, 0, AC);
	run(CMD_FIELD_LIST, C_CLASSIC, &in, &in, "field list", NULL);
	pk_coldef(&exp, 1, "a");
	pk_coldef(&exp, 2, "b");
	pk_okfe(&exp, 3, AC, 0);
	run(CMD_FIELD_LIST, C_DEP, &in, &exp, "field list", NULL);
	pbuf_free(&in);
	pbuf_free(&exp);
	pk_err(&in, 1, 1146, "42S02", "Table 'x.nope' doesn't exist");
	run(CMD_FIELD_LIST, C_DEP, &in, &in, "field list ERR", NULL);
	pbuf_free(&in);

	/* COM_STATISTICS: a bare string, forwarded as is */
	{
		const char *s = "Uptime: 5  Threads: 1  Questions: 2  Slow queries: 0  Opens: 17";
		pk(&in, 1, s, strlen(s));
		run(CMD_STATISTICS, C_CLASSIC, &in, &in, "COM_STATISTICS string", NULL);
		run(CMD_STATISTICS, C_DEP, &in, &in, "COM_STATISTICS string", NULL);
		pbuf_free(&in);
		/* a short statistics string that starts like an OK is still a string */
		pk(&in, 1, "\x00\x01\x02\x03\x04\x05\x06", 7);
		run(CMD_STATISTICS, C_DEP, &in, &in, "COM_STATISTICS string starting with 0x00", NULL);
		pbuf_free(&in);
	}

	/* COM_SET_OPTION answers with an EOF */
	pk_eof(&in, 1, 0, AC);
	run(CMD_SET_OPTION, C_CLASSIC, &in, &in, "COM_SET_OPTION EOF", NULL);
	pk_okfe(&exp, 1, AC, 0);
	run(CMD_SET_OPTION, C_DEP, &in, &exp, "COM_SET_OPTION EOF", NULL);
	is_mem(exp.data, "\x07\x00\x00\x01\xfe\x00\x00\x02\x00\x00\x00", 11, "  expected bytes");
	pbuf_free(&in);
	pbuf_free(&exp);
	pk_err(&in, 1, 1047, "08S01", "Unknown command");
	run(CMD_SET_OPTION, C_DEP, &in, &in, "COM_SET_OPTION ERR", NULL);
	pbuf_free(&in);
}

/* Rows whose payloads span several packets. */
static void test_continuation(void)
{
	const size_t M = PKT_MAX_PAYLOAD;
	struct pbuf in = {0}, exp = {0};
	struct relay r;
	uint8_t *big = malloc(M);
	uint8_t tail5[5] = { 0xfe, 0x00, 0x00, 0x02, 0x00 };  /* looks like an EOF */
	uint8_t tail1[1] = { 0xff };                          /* looks like an ERR */
	uint64_t vlen;

	/* row 1: one column of 0xffffff - 9 + 5 bytes: an 8-byte lenenc header,
	 * first packet of exactly 0xffffff bytes, then a 5-byte tail */
	vlen = M - 9 + 5;
	memset(big, 'x', M);
	big[0] = 0xfe;
	for (int i = 0; i < 8; i++)
		big[1 + i] = (uint8_t)(vlen >> (8 * i));
	for (int dep = 0; dep < 2; dep++) {
		struct pbuf *b = dep ? &exp : &in;
		uint8_t s = dep ? 1 : 0; /* the metadata EOF is dropped */

		pk_count(b, 1, 1);
		pk_coldef(b, 2, "blob");
		if (!dep)
			pk_eof(b, 3, 0, AC);
		pk(b, 4 - s, big, M);           /* row 1, part 1 */
		pk(b, 5 - s, tail5, 5);         /* row 1, tail that looks like EOF */
		pk(b, 6 - s, big, M);           /* row 2, exactly 0xffffff bytes... */
		pk(b, 7 - s, "", 0);            /* ...so an empty packet ends it */
		pk(b, 8 - s, big, M);           /* row 3: three packets */
		pk(b, 9 - s, big, M);
		pk(b, 10 - s, tail1, 1);        /* tail that looks like ERR */
		pk_row1(b, 11 - s, "small");    /* row 4 */
		if (!dep)
			pk_eof(b, 12, 0, AC);
		else
			pk_okfe(b, 11, AC, 0);
	}
	run(CMD_QUERY, C_CLASSIC, &in, &in, "16 MiB rows with continuation packets", &r);
	is_int(r.rows, 4, "  4 rows (continuations are not rows)");
	ok(!r.in_continuation, "  not in a continuation at the end");
	run(CMD_QUERY, C_DEP, &in, &exp, "16 MiB rows with continuation packets", &r);
	is_int(r.rows, 4, "  4 rows");

	/* feed step by step and check the state after the first big packet */
	{
		struct pbuf out = {0};
		size_t off = 0;
		int rcs[12], n = 0;

		relay_start(&r, CMD_QUERY, C_CLASSIC);
		while (off < in.len && n < 12) {
			size_t len = 4 + rd_u24(in.data + off);
			rcs[n++] = relay_feed(&r, in.data + off, len, &out);
			if (n == 4)
				ok(r.in_continuation, "in_continuation after a 0xffffff packet");
			if (n == 5)
				ok(!r.in_continuation, "  cleared after the short tail");
			off += len;
		}
		ok(n == 12 && rcs[4] == 0 && rcs[6] == 0 && rcs[9] == 0 && rcs[11] == 1,
		   "tails that look like EOF/empty/ERR return 0; the real EOF returns 1");
		pbuf_free(&out);
	}
	pbuf_free(&in);
	pbuf_free(&exp);
	free(big);
}

/* Sequence ids wrap at 256; the shift must wrap with them. */
static void test_seq_wrap(void)
{
	struct pbuf in = {0}, exp = {0};
	uint8_t seq = 1;
	char v[16];

	pk_count(&in, seq++, 1);
	pk_coldef(&in, seq++, "n");
	pk_eof(&in, seq++, 0, AC);
	for (int i = 0; i < 300; i++) {
		snprintf(v, sizeof(v), "%d", i);
		pk_row1(&in, seq++, v);
	}
	pk_eof(&in, seq, 0, AC);

	seq = 1;
	pk_count(&exp, seq++, 1);
	pk_coldef(&exp, seq++, "n");
	for (int i = 0; i < 300; i++) {
		snprintf(v, sizeof(v), "%d", i);
		pk_row1(&exp, seq++, v);
	}
	pk_okfe(&exp, seq, AC, 0);
	run(CMD_QUERY, C_CLASSIC, &in, &in, "300 rows, seq ids wrap", NULL);
	run(CMD_QUERY, C_DEP, &in, &exp, "300 rows, seq ids wrap", NULL);
	pbuf_free(&in);
	pbuf_free(&exp);
}

static void test_malformed(void)
{
	struct pbuf in = {0}, out = {0};
	struct relay r;

	pk(&in, 1, "", 0);
	run_bad(CMD_QUERY, C_CLASSIC, &in, 1, "empty first payload");
	run_bad(CMD_QUERY, C_DEP, &in, 1, "empty first payload");
	pbuf_free(&in);

	pk(&in, 1, "\xfc\x00\x00", 3);
	run_bad(CMD_QUERY, C_CLASSIC, &in, 1, "column count 0 (as a 3-byte lenenc)");
	pbuf_free(&in);
	pk(&in, 1, "\xfb" "file.csv", 9);
	run_bad(CMD_QUERY, C_CLASSIC, &in, 1, "LOCAL INFILE request (0xFB)");
	pbuf_free(&in);
	pk(&in, 1, "\xfc\x01", 2);
	run_bad(CMD_QUERY, C_CLASSIC, &in, 1, "column count 0xFC with 1 byte");
	pbuf_free(&in);
	pk(&in, 1, "\xfd\x01\x02", 3);
	run_bad(CMD_QUERY, C_CLASSIC, &in, 1, "column count 0xFD with 2 bytes");
	pbuf_free(&in);
	pk(&in, 1, "\xfe\x01\x02\x03", 4);
	run_bad(CMD_QUERY, C_CLASSIC, &in, 1, "column count 0xFE with 3 bytes");
	pbuf_free(&in);
	pk(&in, 1, "\xfe\x00\x00\x02\x00", 5);
	run_bad(CMD_QUERY, C_DEP, &in, 1, "EOF as the first packet of a query response");
	pbuf_free(&in);

	pk_count(&in, 1, 1);
	pk_coldef(&in, 2, "a");
	pk_row1(&in, 3, "no EOF");
	run_bad(CMD_QUERY, C_CLASSIC, &in, 3, "row where the metadata EOF belongs");
	run_bad(CMD_QUERY, C_DEP, &in, 3, "row where the metadata EOF belongs");
	pbuf_free(&in);
	pk_count(&in, 1, 1);
	pk_coldef(&in, 2, "a");
	pk(&in, 3, "", 0);
	run_bad(CMD_QUERY, C_CLASSIC, &in, 3, "empty packet where the metadata EOF belongs");
	pbuf_free(&in);

	/* shorter than a header */
	relay_start(&r, CMD_QUERY, C_CLASSIC);
	is_int(relay_feed(&r, (const uint8_t *)"\x01\x00\x00", 3, &out), -1, "3-byte packet: -1");
	is_int(relay_feed(&r, (const uint8_t *)"", 0, &out), -1, "0-byte packet: -1");
	is_int(out.len, 0, "  nothing written");

	/* no response expected */
	pk_ok(&in, 1, 0, 0, AC, 0);
	run_bad(CMD_STMT_CLOSE, C_CLASSIC, &in, 1, "packet after CMD_STMT_CLOSE");
	/* after the end of a response */
	relay_start(&r, CMD_QUERY, C_CLASSIC);
	is_int(relay_feed(&r, in.data, in.len, &out), 1, "OK ends the response");
	is_int(relay_feed(&r, in.data, in.len, &out), -1, "another packet after the end: -1");
	pbuf_free(&in);
	pbuf_free(&out);
}

#define SSC ST_SESSION_STATE_CHANGED

/* An upstream OK (the upstream has CLIENT_SESSION_TRACK): header, status,
 * warnings, then optionally lenenc info and lenenc session-state data. */
static void pk_ok_track(struct pbuf *b, uint8_t seq, uint8_t affected, uint16_t status,
			const char *info, const void *state, size_t state_len)
{
	struct pbuf p = {0};

	put_u8(&p, 0x00);
	put_u8(&p, affected);
	put_u8(&p, 0);
	put_u16(&p, status);
	put_u16(&p, 0);
	if (info)
		add_lenenc_str(&p, info);
	if (state)
		put_lenenc_str(&p, state, state_len);
	pk(b, seq, p.data, p.len);
	pbuf_free(&p);
}

/* OK as a server sends it to a client without CLIENT_SESSION_TRACK: no
 * session-state data. The info is still lenenc-prefixed: the protocol docs
 * say string<EOF>, but MySQL's and MariaDB's net_send_ok() both store it with
 * net_store_data() (lenenc), and both client libraries read it that way. */
static void pk_ok_plain(struct pbuf *b, uint8_t seq, uint8_t affected, uint16_t status,
			const char *info)
{
	struct pbuf p = {0};

	put_u8(&p, 0x00);
	put_u8(&p, affected);
	put_u8(&p, 0);
	put_u16(&p, status);
	put_u16(&p, 0);
	if (info)
		add_lenenc_str(&p, info);
	pk(b, seq, p.data, p.len);
	pbuf_free(&p);
}

static void test_session_track(void)
{
	/* SESSION_TRACK_SCHEMA "db1" */
	static const uint8_t schema[] = { 0x01, 0x04, 0x03, 'd', 'b', '1' };
	/* SESSION_TRACK_SYSTEM_VARIABLES autocommit=OFF */
	static const uint8_t sysvar[] = { 0x00, 0x0f, 0x0a, 'a', 'u', 't', 'o', 'c', 'o', 'm', 'm', 'i', 't',
					  0x03, 'O', 'F', 'F' };
	const char *info = "Rows matched: 1  Changed: 1  Warnings: 0";
	struct pbuf in = {0}, exp = {0}, out = {0};
	struct relay r;

	/* USE db1: OK with SESSION_STATE_CHANGED, empty info, schema change */
	pk_ok_track(&in, 1, 0, AC | SSC, "", schema, sizeof(schema));
	run(CMD_QUERY, C_CLASSIC, &in, &in, "OK with session state, tracking client", &r);
	is_int(r.status, AC | SSC, "  status keeps SESSION_STATE_CHANGED");
	run(CMD_QUERY, C_DEP, &in, &in, "OK with session state, tracking client", NULL);
	pk_ok_plain(&exp, 1, 0, AC, NULL);
	is_mem(exp.data, "\x07\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00", 11, "  (expected: a bare 7-byte OK)");
	run(CMD_QUERY, C_NOTRACK, &in, &exp, "OK with session state stripped", &r);
	is_int(r.status, AC, "  status without SESSION_STATE_CHANGED");
	run(CMD_QUERY, C_NOTRACK_DEP, &in, &exp, "OK with session state stripped", NULL);
	run(CMD_INIT_DB, C_NOTRACK, &in, &exp, "CMD_INIT_DB OK with session state stripped", NULL);
	run(CMD_PING, C_CLASSIC, &in, &in, "CMD_PING OK with session state, tracking client", NULL);
	pbuf_free(&in);
	pbuf_free(&exp);

	/* OK with an info text and session state */
	pk_ok_track(&in, 1, 1, AC | ST_IN_TRANS | SSC, info, sysvar, sizeof(sysvar));
	run(CMD_QUERY, C_CLASSIC, &in, &in, "OK with info and session state, tracking client", NULL);
	pk_ok_plain(&exp, 1, 1, AC | ST_IN_TRANS, info);
	relay_start(&r, CMD_QUERY, C_NOTRACK);
	is_int(relay_feed(&r, in.data, in.len, &out), 1, "OK with info and session state, no tracking: ends");
	is_mem(out.data + 4, "\x00\x01\x00\x03\x00\x00\x00", 7, "  flag cleared in status");
	ok(out.len <= in.len - 1 - sizeof(sysvar), "  session-state data dropped");
	expect_out(&out, &exp, "  info kept (lenenc), session state dropped");
	pbuf_free(&out);
	pbuf_free(&in);
	pbuf_free(&exp);

	/* OK with info but no state change, to a client without tracking */
	pk_ok_track(&in, 1, 1, AC, info, NULL, 0);
	pk_ok_plain(&exp, 1, 1, AC, info);
	relay_start(&r, CMD_QUERY, C_NOTRACK);
	is_int(relay_feed(&r, in.data, in.len, &out), 1, "OK with info, no state change, no tracking: ends");
	expect_out(&out, &exp, "  forwarded as is");
	pbuf_free(&out);
	pbuf_free(&in);
	pbuf_free(&exp);

	/* an EOF carrying the flag */
	pk_count(&in, 1, 1);
	pk_coldef(&in, 2, "a");
	pk_eof(&in, 3, 0, AC);
	pk_row1(&in, 4, "x");
	pk_eof(&in, 5, 1, AC | SSC);
	run(CMD_QUERY, C_CLASSIC, &in, &in, "final EOF with SESSION_STATE_CHANGED, tracking client", NULL);
	/* MariaDB sends the flag in EOF packets to clients without tracking
	 * too: it is kept for them */
	run(CMD_QUERY, C_NOTRACK, &in, &in, "final EOF: flag kept without tracking", &r);
	is_int(r.status, AC | SSC, "  status with the flag");
	pk_count(&exp, 1, 1);
	pk_coldef(&exp, 2, "a");
	pk_row1(&exp, 3, "x");
	pk_okfe(&exp, 4, AC | SSC, 1);
	run(CMD_QUERY, C_NOTRACK_DEP, &in, &exp, "final EOF as OK: flag kept without tracking", NULL);
	pbuf_free(&exp);
	pk_count(&exp, 1, 1);
	pk_coldef(&exp, 2, "a");
	pk_row1(&exp, 3, "x");
	pk_okfe(&exp, 4, AC | SSC, 1);
	run(CMD_QUERY, C_DEP, &in, &exp, "final EOF, tracking client: flag kept", NULL);
	pbuf_free(&in);
	pbuf_free(&exp);

	/* result set, then an OK with state: stripped and renumbered */
	pk_count(&in, 1, 1);
	pk_coldef(&in, 2, "a");
	pk_eof(&in, 3, 0, AC);
	pk_row1(&in, 4, "x");
	pk_eof(&in, 5, 0, AC | MORE);
	pk_ok_track(&in, 6, 0, AC | SSC, "", schema, sizeof(schema));
	pk_count(&exp, 1, 1);
	pk_coldef(&exp, 2, "a");
	pk_row1(&exp, 3, "x");
	pk_okfe(&exp, 4, AC | MORE, 0);
	pk_ok_plain(&exp, 5, 0, AC, NULL);
	run(CMD_QUERY, C_NOTRACK_DEP, &in, &exp, "CALL: result set then OK with state", NULL);
	pbuf_free(&in);
	pbuf_free(&exp);

	/* COM_SET_OPTION EOF with the flag */
	pk_eof(&in, 1, 0, AC | SSC);
	pk_eof(&exp, 1, 0, AC | SSC);
	run(CMD_SET_OPTION, C_NOTRACK, &in, &exp, "COM_SET_OPTION EOF: flag kept", NULL);
	pbuf_free(&in);
	pbuf_free(&exp);

	/* malformed OKs with the flag: must not over-read (ASan), may pass through */
	{
		static const uint8_t *bad[] = {
			(const uint8_t *)"\x00\x00\x00\x02\x40\x00\x00",          /* no info */
			(const uint8_t *)"\x00\x00\x00\x02\x40\x00\x00\x05" "ab",   /* info cut */
			(const uint8_t *)"\x00\xfc\x01\x00\x00\x02\x40\x00\x00\xfd",
		};
		static const size_t bad_len[] = { 7, 10, 10 };
		for (size_t i = 0; i < 3; i++) {
			for (size_t k = 1; k <= bad_len[i]; k++) {
				struct pbuf b = {0};
				uint8_t *copy;
				int rc;

				pk(&b, 1, bad[i], k);
				copy = malloc(b.len);
				memcpy(copy, b.data, b.len);
				relay_start(&r, CMD_QUERY, C_NOTRACK);
				rc = relay_feed(&r, copy, b.len, &out);
				if (k == bad_len[i])
					ok(rc == 1, "malformed OK %zu with the flag (%zu bytes): no crash, rc 1", i, k);
				free(copy);
				pbuf_free(&b);
				pbuf_free(&out);
			}
		}
	}
}

/* Random packet streams in every state: no crash, no over-read (ASan), the
 * output grows only by forwarded packets, and once a feed returns non-zero
 * the relay accepts nothing more. */
static void test_fuzz(void)
{
	static const uint8_t cmds[] = { CMD_QUERY, CMD_STMT_EXECUTE, CMD_STMT_FETCH, CMD_STMT_PREPARE,
					CMD_FIELD_LIST, CMD_STATISTICS, CMD_SET_OPTION, CMD_PING, CMD_STMT_CLOSE };
	static const uint8_t firsts[] = { 0x00, 0x01, 0x02, 0xfb, 0xfc, 0xfd, 0xfe, 0xff };
	uint32_t rng = 0x9e3779b9;
	int sane = 1, ends = 0;

	for (int it = 0; it < 20000 && sane; it++) {
		struct relay r;
		struct pbuf out = {0};
		int rc = 0;

		rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;
		relay_start(&r, cmds[rng % sizeof(cmds)], (rng >> 8) & 1 ? C_DEP : (rng >> 9) & 1 ? C_CLASSIC : C_NOTRACK);
		for (int k = 0; k < 12 && rc == 0; k++) {
			uint8_t pkt[4 + 40];
			size_t n;

			rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;
			n = rng % 20;
			for (size_t i = 0; i < n; i++) {
				rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;
				pkt[4 + i] = (uint8_t)(i == 0 ? firsts[rng % sizeof(firsts)] :
						      (rng & 3) ? (uint8_t)(rng >> 8) % 4 : (uint8_t)(rng >> 8));
			}
			wr_u24(pkt, (uint32_t)n);
			pkt[3] = (uint8_t)(k + 1);
			{
				uint8_t *copy = malloc(4 + n);
				size_t before = out.len;
				memcpy(copy, pkt, 4 + n);
				rc = relay_feed(&r, copy, 4 + n, &out);
				free(copy);
				if (out.len - before > 4 + 20 + 11)
					sane = 0;
			}
		}
		if (rc == 1) {
			ends++;
			if (relay_feed(&r, (const uint8_t *)"\x07\x00\x00\x09\x00\x00\x00\x02\x00\x00\x00", 11, &out) != -1)
				sane = 0;
		}
		pbuf_free(&out);
	}
	ok(sane, "20000 random packet streams: no crash, bounded output, nothing accepted after the end (%d ended)", ends);
}

int main(void)
{
	test_kinds();
	test_ok_err();
	test_text_result();
	test_empty_result();
	test_multi_result();
	test_err_in_rows();
	test_prepare();
	test_cursor_fetch();
	test_fieldlist_single();
	test_continuation();
	test_seq_wrap();
	test_malformed();
	test_session_track();
	test_fuzz();
	return done_testing();
}
