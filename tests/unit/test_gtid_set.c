/*
 * test_gtid_set.c: unit tests for MySQL GTID sets (src/cache/gtid_set.c):
 * the text form read and printed back in MySQL's canonical form (the
 * multi-line @@gtid_executed form, intervals merged, sorted, upper-case
 * uuids lower-cased), malformed texts refused with where and why, adding a
 * gno (merging with the intervals it touches, a new uuid in its place),
 * membership at the edges of intervals, inclusion of one set in another,
 * MySQL 8.3 tags, the binary form of COM_BINLOG_DUMP_GTID byte for byte
 * (the untagged format, and the tagged one of a set with a tag), and
 * formatting into a buffer too small.
 *
 * Also the decoder of MySQL 8.3's tagged GTID event (mysql_ev_gtid_tagged,
 * src/cache/mysql_dump.c), the reader's other half of tagged GTIDs: events
 * captured from a MySQL 9.7.4 binlog, every cut of one, and hand-built
 * bodies for each way the serialization framework's message can be
 * malformed. Every body is decoded from a buffer of its exact size, so that
 * a read past it is caught under AddressSanitizer.
 */
#include <stdlib.h>
#include <string.h>

#include "cache/gtid_set.h"
#include "cache/mysql_dump.h"
#include "tap.h"

#define U0 "00000000-0000-0000-0000-0000000000ff"
#define U1 "3e11fa47-71ca-11e1-9e33-c80aa9429562"
#define U2 "8a94f357-aab4-11df-86ab-c80aa9429562"

static const uint8_t u0[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff };
static const uint8_t u1[16] = { 0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,
				0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62 };
static const uint8_t u2[16] = { 0x8a, 0x94, 0xf3, 0x57, 0xaa, 0xb4, 0x11, 0xdf,
				0x86, 0xab, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62 };

static char fmt_buf[4096];

/* The set's canonical text (in a static buffer). */
static const char *fmt(const struct gtid_set *s)
{
	gtid_set_format(s, fmt_buf, sizeof(fmt_buf));
	return fmt_buf;
}

static int parse(struct gtid_set *s, const char *text)
{
	char err[128];

	return gtid_set_parse(s, text, strlen(text), err, sizeof(err));
}

/* text parses and prints as want. */
static void roundtrip(const char *text, const char *want, const char *name)
{
	struct gtid_set s;
	char err[128] = "";
	int rc;

	gtid_set_init(&s);
	rc = gtid_set_parse(&s, text, strlen(text), err, sizeof(err));
	if (!ok(rc == 0, "%s: parses", name))
		printf("#   %s\n", err);
	is_str(fmt(&s), want, name);
	gtid_set_free(&s);
}

/* text is refused with exactly want_err, and leaves the (non-empty) set empty. */
static void rejects(const char *text, const char *want_err, const char *name)
{
	struct gtid_set s;
	char err[128] = "";

	gtid_set_init(&s);
	parse(&s, U2 ":1-9");
	is_int(gtid_set_parse(&s, text, strlen(text), err, sizeof(err)), -1, name);
	is_str(err, want_err, name);
	ok(gtid_set_empty(&s) && s.n == 0, "%s: the set is left empty", name);
	gtid_set_free(&s);
}

static void test_roundtrips(void)
{
	roundtrip("", "", "the empty string is the empty set");
	roundtrip(" \n\t ", "", "whitespace only is the empty set");
	roundtrip(U1 ":1-5:7-9,\n" U2 ":1-3", U1 ":1-5:7-9," U2 ":1-3",
		  "the multi-line form of @@gtid_executed");
	roundtrip(U1 ":1-3:4-6", U1 ":1-6", "adjacent intervals merge");
	roundtrip(U1 ":1-5:3-8:2", U1 ":1-8", "overlapping intervals merge");
	roundtrip(U1 ":5", U1 ":5", "a single value");
	roundtrip(U1 ":7-7", U1 ":7", "a one-value interval prints as a single value");
	roundtrip(U1 ":7-9:1-3:5", U1 ":1-3:5:7-9", "unsorted intervals sorted");
	roundtrip(U2 ":1," U1 ":2", U1 ":2," U2 ":1", "uuids sorted");
	roundtrip(U1 ":1-2," U1 ":3-4", U1 ":1-4", "one uuid twice: one entry");
	roundtrip("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-2", U1 ":1-2",
		  "an upper-case uuid printed lower-case");
	roundtrip("  " U1 " : 1 - 3 : 5 ,\r\n " U2 " : 4  ", U1 ":1-3:5," U2 ":4",
		  "whitespace around every token");
	roundtrip(U1 ":9223372036854775806", U1 ":9223372036854775806",
		  "the largest gno MySQL allows (2^63-2)");
	roundtrip("," U1 ":1,,", U1 ":1", "empty entries between commas (as MySQL)");
	roundtrip(U1 "," U2 ":3", U2 ":3", "a uuid with no interval adds nothing");
}

static void test_malformed(void)
{
	struct gtid_set s;
	char err[10];

	rejects("3e11fa47-71ca-11e1-9e33-c80aa942956:1", "malformed at offset 0: expected a uuid",
		"a uuid one digit short");
	rejects("3e11fa47-71ca-11e1-9e33-c80aa942956g:1",
		"malformed at offset 0: expected a uuid", "a uuid with a non-hex digit");
	rejects("3e11fa4771ca-11e1-9e33-c80aa9429562a:1",
		"malformed at offset 0: expected a uuid", "a uuid with a dash misplaced");
	rejects(U1 ":0", "malformed at offset 37: transaction number 0", "gno 0");
	rejects(U1 ":1-0", "malformed at offset 39: transaction number 0", "an interval ending at 0");
	rejects(U1 ":5-3", "malformed at offset 37: interval ends before it starts",
		"an interval 5-3");
	rejects(U1 "1-5", "malformed at offset 36: expected ',' or ':'", "the colon missing");
	rejects(U1 " 1-5", "malformed at offset 37: expected ',' or ':'",
		"a space for the colon");
	rejects(U1 ":1-5;", "malformed at offset 40: expected ',' or ':'", "trailing garbage");
	rejects(U1 ":1-5 x", "malformed at offset 41: expected ',' or ':'",
		"trailing garbage after a space");
	rejects(U1 ":", "malformed at offset 37: expected a number", "a colon and nothing");
	rejects(U1 ":1-", "malformed at offset 39: expected a number", "an open interval");
	rejects(U1 ":-3", "malformed at offset 37: expected a number", "an interval with no start");
	rejects(U1 ":1,garbage", "malformed at offset 39: expected a uuid",
		"garbage after a comma");
	rejects(U1 ":abcdefghijabcdefghijabcdefghijabc:1",
		"malformed at offset 37: tag longer than 32 characters", "a 33-character tag");
	rejects(U1 ":9223372036854775807", "malformed at offset 37: number out of range",
		"2^63-1 (no exclusive end fits MySQL's int64)");
	rejects(U1 ":1-18446744073709551616", "malformed at offset 39: number out of range",
		"2^64");
	rejects(U1 ":99999999999999999999999999", "malformed at offset 37: number out of range",
		"a 26-digit number");

	gtid_set_init(&s);
	memset(err, 'x', sizeof(err));
	is_int(gtid_set_parse(&s, U1 ":0", 39, err, sizeof(err)), -1, "err of 10 bytes: refused");
	is_str(err, "malformed", "the message cut to 9 characters and a NUL");
	is_int(gtid_set_parse(&s, U1 ":0", 39, NULL, 0), -1, "no err buffer: refused all the same");
	is_int(gtid_set_parse(&s, U1 ":1", 37, NULL, 0), -1,
	       "len cuts the text: \"u:\" is refused");
	is_int(gtid_set_parse(&s, U1 ":12", 38, NULL, 0), 0, "len cuts the text: \"u:1\" parses");
	is_str(fmt(&s), U1 ":1", "only len bytes are read");
	gtid_set_free(&s);
}

static void test_tag_length(void)
{
	struct gtid_set s;

	gtid_set_init(&s);
	is_int(parse(&s, U1 ":abcdefghijabcdefghijabcdefghijab:1"), 0, "a 32-character tag parses");
	is_str(s.sid[0].tag, "abcdefghijabcdefghijabcdefghijab", "and is kept whole");
	is_int(parse(&s, U1 ":_:1"), 0, "a tag of one underscore parses");
	is_str(fmt(&s), U1 ":_:1", "and prints");
	gtid_set_free(&s);
}

static void test_add(void)
{
	struct gtid_set s;

	gtid_set_init(&s);
	is_int(gtid_set_add(&s, u1, NULL, 5), 0, "add to the empty set");
	is_str(fmt(&s), U1 ":5", "one gno");
	gtid_set_add(&s, u1, NULL, 6);
	is_str(fmt(&s), U1 ":5-6", "adjacent after: merged");
	gtid_set_add(&s, u1, "", 4);
	is_str(fmt(&s), U1 ":4-6", "adjacent before: merged (\"\" is untagged)");
	gtid_set_add(&s, u1, NULL, 8);
	is_str(fmt(&s), U1 ":4-6:8", "a gap: a new interval");
	is_int(s.sid[0].n, 2, "two intervals");
	gtid_set_add(&s, u1, NULL, 7);
	is_str(fmt(&s), U1 ":4-8", "filling the hole joins both");
	is_int(s.sid[0].n, 1, "one interval left");
	gtid_set_add(&s, u1, NULL, 1);
	gtid_set_add(&s, u1, NULL, 10);
	is_str(fmt(&s), U1 ":1:4-8:10", "new intervals before and after");
	is_int(gtid_set_add(&s, u1, NULL, 5), 0, "a gno already held: 0");
	is_str(fmt(&s), U1 ":1:4-8:10", "and nothing changes");
	is_int(gtid_set_add(&s, u1, NULL, 0), -1, "gno 0 refused");
	is_int(gtid_set_add(&s, u1, NULL, GTID_GNO_MAX + 1), -1, "gno 2^63-1 refused");
	is_int(gtid_set_add(&s, u1, "9x", 3), -1, "a tag starting with a digit refused");
	is_int(gtid_set_add(&s, u1, "a-b", 3), -1, "a tag with a dash refused");
	is_str(fmt(&s), U1 ":1:4-8:10", "refusals change nothing");
	gtid_set_add(&s, u2, NULL, 3);
	gtid_set_add(&s, u0, NULL, 9);
	is_str(fmt(&s), U0 ":9," U1 ":1:4-8:10," U2 ":3", "new uuids go in order");
	ok(s.n == 3 && memcmp(s.sid[0].uuid, u0, 16) == 0 && memcmp(s.sid[2].uuid, u2, 16) == 0,
	   "the sids array is sorted");
	is_int(gtid_set_add(&s, u1, "TaG", GTID_GNO_MAX), 0, "a tag in mixed case, the largest gno");
	is_str(s.sid[2].tag, "tag", "kept lower-case, after the uuid's untagged sid");
	gtid_set_free(&s);
}

static void test_many(void)
{
	struct gtid_set s;
	unsigned bad = 0;

	gtid_set_init(&s);
	for (int g = 399; g >= 1; g -= 2)   /* odd gnos, descending: all inserts at 0 */
		if (gtid_set_add(&s, u1, NULL, (uint64_t)g) < 0)
			bad++;
	is_int(bad, 0, "200 adds succeed");
	is_int(s.sid[0].n, 200, "200 intervals");
	for (uint64_t g = 1; g <= 401; g++)
		if (gtid_set_contains(&s, u1, NULL, g) != (g % 2 == 1 && g < 400))
			bad++;
	is_int(bad, 0, "contains: every odd gno to 399, no even one");
	for (uint64_t g = 2; g <= 400; g += 2)
		if (gtid_set_add(&s, u1, NULL, g) < 0)
			bad++;
	is_int(bad, 0, "the 200 holes filled");
	is_str(fmt(&s), U1 ":1-400", "into one interval");
	gtid_set_free(&s);
}

static void test_contains(void)
{
	struct gtid_set s;

	gtid_set_init(&s);
	parse(&s, U1 ":3-5:9:20-30," U2 ":1");
	ok(!gtid_set_contains(&s, u1, NULL, 2), "2: just before 3-5");
	ok(gtid_set_contains(&s, u1, NULL, 3), "3: the first of 3-5");
	ok(gtid_set_contains(&s, u1, NULL, 4), "4: inside 3-5");
	ok(gtid_set_contains(&s, u1, NULL, 5), "5: the last of 3-5");
	ok(!gtid_set_contains(&s, u1, NULL, 6), "6: just after 3-5");
	ok(!gtid_set_contains(&s, u1, NULL, 8), "8: just before 9");
	ok(gtid_set_contains(&s, u1, NULL, 9), "9: a single value");
	ok(!gtid_set_contains(&s, u1, NULL, 10), "10: just after 9");
	ok(gtid_set_contains(&s, u1, NULL, 20) && gtid_set_contains(&s, u1, NULL, 30),
	   "20 and 30: both ends of the last interval");
	ok(!gtid_set_contains(&s, u1, NULL, 31), "31: past the last interval");
	ok(!gtid_set_contains(&s, u1, NULL, 0), "0: never");
	ok(!gtid_set_contains(&s, u1, NULL, UINT64_MAX), "2^64-1: never");
	ok(gtid_set_contains(&s, u2, "", 1), "the other uuid's 1");
	ok(!gtid_set_contains(&s, u2, NULL, 3), "the other uuid does not hold 3");
	ok(!gtid_set_contains(&s, u0, NULL, 1), "a uuid not in the set");
	ok(!gtid_set_contains(&s, u1, "t", 4), "u1:t:4 is not u1:4");
	gtid_set_free(&s);
}

static bool subset(const char *a, const char *b)
{
	struct gtid_set x, y;
	bool r;

	gtid_set_init(&x);
	gtid_set_init(&y);
	if (parse(&x, a) < 0 || parse(&y, b) < 0) {
		printf("# a test set did not parse\n");
		r = false;   /* a checked as true would now fail */
		ok(0, "test set parses");
	} else {
		r = gtid_set_subset(&x, &y);
	}
	gtid_set_free(&x);
	gtid_set_free(&y);
	return r;
}

static void test_subset(void)
{
	ok(subset(U1 ":2-3", U1 ":1-5"), "2-3 within 1-5");
	ok(!subset(U1 ":1-5", U1 ":2-3"), "1-5 not within 2-3");
	ok(subset(U1 ":1-5", U1 ":1-5"), "a set is a subset of itself");
	ok(subset("", U1 ":1"), "the empty set is a subset of any");
	ok(subset("", ""), "of the empty set too");
	ok(!subset(U1 ":1", ""), "nothing non-empty is a subset of the empty set");
	ok(!subset(U1 ":1-3:5", U1 ":1-4"), "5 missing");
	ok(!subset(U1 ":3-7", U1 ":1-4:6-9"), "an interval across a hole of b");
	ok(subset(U1 ":2-3:7:9", U1 ":1-4:6-9"), "intervals each within one of b");
	ok(!subset(U1 ":9-10", U1 ":1-4:6-9"), "past b's last interval");
	ok(!subset(U2 ":1", U1 ":1-9"), "another uuid");
	ok(subset(U1 ":1," U2 ":4", U0 ":1," U1 ":1-2," U2 ":1-5"), "two uuids, b with a third");
	ok(!subset(U1 ":1," U2 ":6", U1 ":1-2," U2 ":1-5"), "the second uuid not covered");
	ok(!subset(U1 ":t:1", U1 ":1"), "u:t:1 not within u:1");
	ok(subset(U1 ":t:1", U1 ":1:t:1-2"), "u:t:1 within u:1:t:1-2");
}

static void test_tags(void)
{
	struct gtid_set s;
	uint8_t buf[128];

	gtid_set_init(&s);
	is_int(parse(&s, U1 ":1-2:t1:5"), 0, "u:1-2:t1:5 parses");
	is_int(s.n, 2, "two sids: u and u:t1");
	ok(s.sid[0].tag[0] == '\0' && strcmp(s.sid[1].tag, "t1") == 0, "untagged first, then t1");
	ok(gtid_set_contains(&s, u1, "t1", 5), "holds u:t1:5");
	ok(gtid_set_contains(&s, u1, "T1", 5), "a tag in upper case is the same tag");
	ok(!gtid_set_contains(&s, u1, NULL, 5), "not u:5");
	ok(!gtid_set_contains(&s, u1, "t1", 1), "not u:t1:1");
	ok(gtid_set_contains(&s, u1, NULL, 2), "holds u:2");
	ok(!gtid_set_contains(&s, u1, "t2", 5), "not u:t2:5");
	ok(gtid_set_has_tags(&s), "has tags");
	is_str(fmt(&s), U1 ":1-2:t1:5", "prints as read");
	memset(buf, 0xaa, sizeof(buf));
	is_int(gtid_set_encode(&s, buf, sizeof(buf)), 8 + 41 + 43, "a binary form: the tagged one");
	is_int(buf[0], 1, "which says so in its first byte");

	roundtrip(U1 ":TAG_b:3-4:1", U1 ":tag_b:1:3-4", "a tag only: lower-cased, sorted");
	roundtrip(U1 ":b:1," U1 ":a:2," U1 ":3", U1 ":3:a:2:b:1",
		  "a uuid's untagged intervals, then its tags in order");
	roundtrip(U2 ":x:1," U1 ":1", U1 ":1," U2 ":x:1", "tagged and untagged uuids sorted");
	roundtrip(U1 ":t:1-2:3-4:u:9", U1 ":t:1-4:u:9", "each tag's intervals merged");
	roundtrip(U1 ":t", "", "a tag with no interval adds nothing");

	is_int(parse(&s, U1 ":1-2," U2 ":5"), 0, "an untagged set parses");
	ok(!gtid_set_has_tags(&s), "has no tags");
	gtid_set_free(&s);
}

static void test_encode(void)
{
	static const uint8_t want[104] = {
		2, 0, 0, 0, 0, 0, 0, 0,                             /* n_sids */
		0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,     /* U1 */
		0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62,
		2, 0, 0, 0, 0, 0, 0, 0,                             /* 2 intervals */
		1, 0, 0, 0, 0, 0, 0, 0,  6, 0, 0, 0, 0, 0, 0, 0,    /* 1-5 */
		7, 0, 0, 0, 0, 0, 0, 0,  8, 0, 0, 0, 0, 0, 0, 0,    /* 7 */
		0x8a, 0x94, 0xf3, 0x57, 0xaa, 0xb4, 0x11, 0xdf,     /* U2 */
		0x86, 0xab, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62,
		1, 0, 0, 0, 0, 0, 0, 0,                             /* 1 interval */
		0x2c, 0x01, 0, 0, 0, 0, 0, 0,                       /* 300 */
		0x71, 0x11, 0x01, 0, 0, 0, 0, 0,                    /* 70000 + 1 */
	};
	struct gtid_set s;
	uint8_t buf[128];
	unsigned untouched = 0;

	gtid_set_init(&s);
	parse(&s, U2 ":300-70000," U1 ":7:1-5");
	memset(buf, 0xaa, sizeof(buf));
	is_int(gtid_set_encode(&s, buf, sizeof(buf)), 104, "two sids: 104 bytes");
	is_mem(buf, want, sizeof(want), "the bytes, exactly");
	is_int(buf[104], 0xaa, "nothing past them");
	memset(buf, 0xaa, sizeof(buf));
	is_int(gtid_set_encode(&s, buf, 103), 104, "a byte short: still 104");
	for (unsigned i = 0; i < sizeof(buf); i++)
		untouched += buf[i] == 0xaa;
	is_int(untouched, sizeof(buf), "and nothing written");
	is_int(gtid_set_encode(&s, NULL, 0), 104, "the size alone with no buffer");
	gtid_set_clear(&s);
	memset(buf, 0xaa, sizeof(buf));
	is_int(gtid_set_encode(&s, buf, sizeof(buf)), 8, "the empty set: 8 bytes");
	is_mem(buf, "\0\0\0\0\0\0\0\0", 8, "n_sids 0");
	gtid_set_free(&s);
}

/* The tagged format: the first 8 bytes say "tagged" at both ends with the
 * count between, and every sid, the untagged one too, carries its tag. */
static void test_encode_tagged(void)
{
	static const uint8_t want[153] = {
		1, 3, 0, 0, 0, 0, 0, 1,                             /* tagged, 3 sids */
		0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,     /* U1 */
		0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62,
		0x00,                                               /* tag "" */
		2, 0, 0, 0, 0, 0, 0, 0,                             /* 2 intervals */
		1, 0, 0, 0, 0, 0, 0, 0,  6, 0, 0, 0, 0, 0, 0, 0,    /* 1-5 */
		7, 0, 0, 0, 0, 0, 0, 0,  8, 0, 0, 0, 0, 0, 0, 0,    /* 7 */
		0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,     /* U1 */
		0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62,
		0x0a, 'm', 'y', 't', 'a', 'g',                      /* 5 << 1, "mytag" */
		1, 0, 0, 0, 0, 0, 0, 0,                             /* 1 interval */
		3, 0, 0, 0, 0, 0, 0, 0,  4, 0, 0, 0, 0, 0, 0, 0,    /* 3 */
		0x8a, 0x94, 0xf3, 0x57, 0xaa, 0xb4, 0x11, 0xdf,     /* U2 */
		0x86, 0xab, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62,
		0x02, 'x',                                          /* 1 << 1, "x" */
		1, 0, 0, 0, 0, 0, 0, 0,                             /* 1 interval */
		0x2c, 0x01, 0, 0, 0, 0, 0, 0,                       /* 300 */
		0x71, 0x11, 0x01, 0, 0, 0, 0, 0,                    /* 70000 + 1 */
	};
	struct gtid_set s;
	uint8_t buf[160];
	unsigned untouched = 0;

	gtid_set_init(&s);
	parse(&s, U2 ":X:300-70000," U1 ":7:1-5:mytag:3");
	memset(buf, 0xaa, sizeof(buf));
	is_int(gtid_set_encode(&s, buf, sizeof(buf)), 153, "three sids, two tagged: 153 bytes");
	is_mem(buf, want, sizeof(want), "the bytes, exactly");
	is_int(buf[153], 0xaa, "nothing past them");
	memset(buf, 0xaa, sizeof(buf));
	is_int(gtid_set_encode(&s, buf, 152), 153, "a byte short: still 153");
	for (unsigned i = 0; i < sizeof(buf); i++)
		untouched += buf[i] == 0xaa;
	is_int(untouched, sizeof(buf), "and nothing written");
	is_int(gtid_set_encode(&s, NULL, 0), 153, "the size alone with no buffer");
	gtid_set_free(&s);
}

/* A tag of 32 characters (its length one byte, 0x40), and a count of sids
 * over 255 (the bytes 1 to 6 hold it, low byte first). */
static void test_encode_tagged_edges(void)
{
	static const char tag32[] = "abcdefghijabcdefghijabcdefghijab";
	static const uint8_t head300[8] = { 1, 0x2c, 0x01, 0, 0, 0, 0, 1 };
	static const uint8_t tail[24] = {
		1, 0, 0, 0, 0, 0, 0, 0,  9, 0, 0, 0, 0, 0, 0, 0,  10, 0, 0, 0, 0, 0, 0, 0,
	};
	struct gtid_set s;
	uint8_t buf[128], *big;
	uint8_t u[GTID_UUID_LEN];
	unsigned bad = 0;
	size_t n;

	gtid_set_init(&s);
	parse(&s, U1 ":abcdefghijabcdefghijabcdefghijab:9");
	is_int(gtid_set_encode(&s, buf, sizeof(buf)), 8 + 16 + 1 + 32 + 8 + 16, "a 32-character tag: 81 bytes");
	is_mem(buf, "\x01\x01\0\0\0\0\0\x01", 8, "tagged, 1 sid");
	is_mem(buf + 8, u1, 16, "the uuid");
	is_int(buf[24], 0x40, "the length 32 in one byte");
	is_mem(buf + 25, tag32, 32, "the tag");
	is_mem(buf + 57, tail, sizeof(tail), "1 interval, 9-10 (exclusive end)");

	gtid_set_clear(&s);
	memcpy(u, u0, sizeof(u));
	for (unsigned i = 0; i < 300; i++) {
		u[14] = (uint8_t)(i >> 8);
		u[15] = (uint8_t)i;
		bad += gtid_set_add(&s, u, "t", 1) < 0;
	}
	is_int(bad, 0, "300 tagged sids added");
	n = gtid_set_encode(&s, NULL, 0);
	is_int(n, 8 + 300 * (16 + 2 + 8 + 16), "300 sids of tag \"t\": their size");
	big = malloc(n);
	is_int(gtid_set_encode(&s, big, n), n, "encoded into exactly that");
	is_mem(big, head300, 8, "the count 300 (0x012c) between the format bytes");
	free(big);
	gtid_set_free(&s);
}

static void test_tag_parse(void)
{
	char t[GTID_TAG_MAX + 1];

	ok(gtid_tag_parse("My_Tag9", 7, t), "My_Tag9 is a tag");
	is_str(t, "my_tag9", "lower-cased");
	ok(gtid_tag_parse("", 0, t) && t[0] == '\0', "length 0: \"\", untagged");
	ok(gtid_tag_parse("abcdefghijabcdefghijabcdefghijab", 32, t), "32 characters");
	ok(!gtid_tag_parse("abcdefghijabcdefghijabcdefghijabc", 33, t), "33 refused");
	ok(!gtid_tag_parse("9a", 2, t), "a digit first refused");
	ok(!gtid_tag_parse("a-b", 3, t), "a dash refused");
	ok(!gtid_tag_parse("a\0b", 3, t), "a NUL inside refused");
	ok(gtid_tag_parse("abc", 2, t) && strcmp(t, "ab") == 0, "only len characters read");
}

/* ---- the tagged GTID event (mysql_ev_gtid_tagged) ---- */

/* Three whole events (header, body, CRC32) of a MySQL 9.7.4 binlog (server
 * uuid 1328145c-f267-11f1-bfdd-02fc00000001), after SET GTID_NEXT =
 * 'AUTOMATIC:mytag', 'AUTOMATIC:Other_Tag', 'AUTOMATIC:mytag' and an
 * INSERT each. */
static const uint8_t ev_mytag1[79] = {
	0xac, 0xf2, 0x16, 0x6b, 0x2a, 0x01, 0x00, 0x00, 0x00, 0x4f, 0x00, 0x00,
	0x00, 0x82, 0x03, 0x00, 0x00, 0x00, 0x00, 0x02, 0x70, 0x00, 0x00, 0x00,
	0x02, 0x26, 0x50, 0x28, 0xb8, 0xc9, 0x03, 0xce, 0x22, 0xc5, 0x03, 0xfd,
	0x02, 0x75, 0x03, 0x04, 0xf1, 0x03, 0x00, 0x00, 0x00, 0x02, 0x04, 0x04,
	0x06, 0x0a, 0x6d, 0x79, 0x74, 0x61, 0x67, 0x08, 0x08, 0x0a, 0x10, 0x0c,
	0x7f, 0xa5, 0xf1, 0x6b, 0xe8, 0x0e, 0x62, 0x06, 0x10, 0x61, 0x04, 0x12,
	0x83, 0x12, 0x0b, 0xfc, 0x18, 0xa5, 0x71,
};
static const uint8_t ev_other1[83] = {
	0xac, 0xf2, 0x16, 0x6b, 0x2a, 0x01, 0x00, 0x00, 0x00, 0x53, 0x00, 0x00,
	0x00, 0xb5, 0x05, 0x00, 0x00, 0x00, 0x00, 0x02, 0x78, 0x00, 0x00, 0x00,
	0x02, 0x26, 0x50, 0x28, 0xb8, 0xc9, 0x03, 0xce, 0x22, 0xc5, 0x03, 0xfd,
	0x02, 0x75, 0x03, 0x04, 0xf1, 0x03, 0x00, 0x00, 0x00, 0x02, 0x04, 0x04,
	0x06, 0x12, 0x6f, 0x74, 0x68, 0x65, 0x72, 0x5f, 0x74, 0x61, 0x67, 0x08,
	0x08, 0x0a, 0x18, 0x0c, 0x7f, 0xac, 0x25, 0x6c, 0xe8, 0x0e, 0x62, 0x06,
	0x10, 0x61, 0x04, 0x12, 0x83, 0x12, 0x0b, 0x81, 0x88, 0xbd, 0x57,
};
static const uint8_t ev_mytag2[79] = {
	0xac, 0xf2, 0x16, 0x6b, 0x2a, 0x01, 0x00, 0x00, 0x00, 0x4f, 0x00, 0x00,
	0x00, 0xc9, 0x06, 0x00, 0x00, 0x00, 0x00, 0x02, 0x70, 0x00, 0x00, 0x00,
	0x02, 0x26, 0x50, 0x28, 0xb8, 0xc9, 0x03, 0xce, 0x22, 0xc5, 0x03, 0xfd,
	0x02, 0x75, 0x03, 0x04, 0xf1, 0x03, 0x00, 0x00, 0x00, 0x02, 0x04, 0x08,
	0x06, 0x0a, 0x6d, 0x79, 0x74, 0x61, 0x67, 0x08, 0x08, 0x0a, 0x1c, 0x0c,
	0x7f, 0x42, 0x3d, 0x6c, 0xe8, 0x0e, 0x62, 0x06, 0x10, 0x51, 0x04, 0x12,
	0x83, 0x12, 0x0b, 0xb4, 0x9d, 0x52, 0x16,
};

#define SRV "1328145c-f267-11f1-bfdd-02fc00000001"

/* body[0, len) decoded from a copy of exactly len bytes. */
static bool tagged_body(const uint8_t *body, size_t len, uint8_t uuid[GTID_UUID_LEN],
			char tag[GTID_TAG_MAX + 1], uint64_t *gno)
{
	struct mysql_event ev;
	uint8_t *copy = malloc(len ? len : 1);
	bool r;

	memcpy(copy, body, len);
	memset(&ev, 0, sizeof(ev));
	ev.type = MYEV_GTID_TAGGED;
	ev.body = copy;
	ev.body_len = len;
	r = mysql_ev_gtid_tagged(&ev, uuid, tag, gno);
	free(copy);
	return r;
}

static void real_event(const uint8_t *raw, size_t len, const char *want_tag, uint64_t want_gno)
{
	struct mysql_event ev;
	uint8_t uuid[GTID_UUID_LEN];
	char tag[GTID_TAG_MAX + 1] = "?", text[37];
	uint64_t gno = 0;

	ok(mysql_event_parse(raw, len, 4, &ev) && ev.type == MYEV_GTID_TAGGED,
	   "%s:%llu: a type-42 event", want_tag, (unsigned long long)want_gno);
	ok(mysql_ev_gtid_tagged(&ev, uuid, tag, &gno), "%s:%llu: decodes", want_tag,
	   (unsigned long long)want_gno);
	gtid_uuid_format(uuid, text);
	is_str(text, SRV, "the server's uuid");
	is_str(tag, want_tag, "the tag, lower-case");
	is_int(gno, want_gno, "the gno");
}

static void test_tagged_real(void)
{
	real_event(ev_mytag1, sizeof(ev_mytag1), "mytag", 1);
	real_event(ev_other1, sizeof(ev_other1), "other_tag", 1);
	real_event(ev_mytag2, sizeof(ev_mytag2), "mytag", 2);
}

/* The first real event's 56-byte body cut at every length k: as it is (its
 * size, 56, then says more than is there) and with its size byte made k
 * (a message that ends there). Its fields start at: 3 flags, 5 uuid, 27
 * gno, 29 tag (id 06, length 0a, "mytag" at 31), 36 last_committed. */
static void test_tagged_cuts(void)
{
	const uint8_t *body = ev_mytag1 + MYEV_HEADER_LEN;
	size_t blen = sizeof(ev_mytag1) - MYEV_HEADER_LEN - 4;
	uint8_t cut[64], uuid[GTID_UUID_LEN];
	char tag[GTID_TAG_MAX + 1];
	uint64_t gno;
	unsigned bad_plain = 0, bad_sized = 0;

	is_int(blen, 56, "the body is 56 bytes, its size byte 0x70 (56 << 1)");
	for (size_t k = 0; k <= blen; k++) {
		bool want = k == 29 || k >= 36, got;

		if (tagged_body(body, k, uuid, tag, &gno) != (k == blen)) {
			printf("# cut at %zu as it is: wrong\n", k);
			bad_plain++;
		}
		if (k < 2)
			continue;   /* no size byte to rewrite */
		memcpy(cut, body, k);
		cut[1] = (uint8_t)(k << 1);
		got = tagged_body(cut, k, uuid, tag, &gno);
		if (got != want || (got && strcmp(tag, k == 29 ? "" : "mytag") != 0)) {
			printf("# cut at %zu with its size: %s\n", k, got ? tag : "refused");
			bad_sized++;
		}
	}
	is_int(bad_plain, 0, "cut short of its size: refused at every length, whole: read");
	is_int(bad_sized, 0, "a message ending at k: read only after the gno (tag \"\") or the tag");
}

/* The real server's uuid as the uuid field's 16 integers: 0x13 is 0x26
 * (one byte, value << 1), 0xf2 is c9 03 (two bytes: 01 at the bottom, the
 * value above). */
#define UE_REST "\x50\x28\xb8\xc9\x03\xce\x22\xc5\x03\xfd\x02\x75\x03\x04\xf1\x03\x00\x00\x00\x02"
#define UE "\x26" UE_REST
#define FLAGS0 "\x00\x00"                  /* id 0, flags 0 */
#define UUIDF "\x02" UE                    /* id 1, the uuid */
#define GNO1 "\x04\x04"                    /* id 2, gno 1: signed 1 << 1 | 0, one byte 2 << 1 */
#define TAGF "\x06\x0a" "mytag"            /* id 3, length 5, "mytag" */

struct tcase {
	const char *name, *fields;
	size_t n;
	bool ok;
	const char *tag;
	uint64_t gno;
};

#define TC(name, fields, ok, tag, gno) { name, fields, sizeof(fields) - 1, ok, tag, gno }

static const struct tcase tcases[] = {
	TC("all four fields", FLAGS0 UUIDF GNO1 TAGF, true, "mytag", 1),
	TC("no flags", UUIDF GNO1 TAGF, true, "mytag", 1),
	TC("no tag: untagged", FLAGS0 UUIDF GNO1, true, "", 1),
	TC("an empty tag", FLAGS0 UUIDF GNO1 "\x06\x00", true, "", 1),
	TC("later fields and unknown ones skipped",
	   FLAGS0 UUIDF GNO1 TAGF "\x08\x08\x0a\x10\x10\x61\x04\x28\x04", true, "mytag", 1),
	TC("gno 65535 in 3 bytes", FLAGS0 UUIDF "\x04\xf3\xff\x0f" TAGF, true, "mytag", 65535),
	TC("gno 2^63-2 in 9 bytes",
	   FLAGS0 UUIDF "\x04\xff\xfc\xff\xff\xff\xff\xff\xff\xff" TAGF, true, "mytag", GTID_GNO_MAX),
	TC("gno 1 in 2 bytes (longer than needed)", FLAGS0 UUIDF "\x04\x09\x00" TAGF, true, "mytag", 1),
	TC("a 32-character tag", FLAGS0 UUIDF GNO1 "\x06\x40" "abcdefghijabcdefghijabcdefghijab", true,
	   "abcdefghijabcdefghijabcdefghijab", 1),
	TC("an upper-case tag", FLAGS0 UUIDF GNO1 "\x06\x0c" "My_Tag", true, "my_tag", 1),
	TC("no uuid", FLAGS0 GNO1 TAGF, false, "", 0),
	TC("no gno", FLAGS0 UUIDF TAGF, false, "", 0),
	TC("the tag before the gno", FLAGS0 UUIDF TAGF GNO1, false, "", 0),
	TC("gno 0", FLAGS0 UUIDF "\x04\x00" TAGF, false, "", 0),
	TC("gno -1", FLAGS0 UUIDF "\x04\x02" TAGF, false, "", 0),
	TC("gno 2^63-1", FLAGS0 UUIDF "\x04\xff\xfe\xff\xff\xff\xff\xff\xff\xff" TAGF, false, "", 0),
	TC("gno cut in its 3 bytes", FLAGS0 UUIDF "\x04\xf3\xff", false, "", 0),
	TC("a uuid byte of 256", FLAGS0 "\x02\x01\x04" UE_REST GNO1 TAGF, false, "", 0),
	TC("flags of 256", "\x00\x01\x04" UUIDF GNO1 TAGF, false, "", 0),
	TC("a 33-character tag", FLAGS0 UUIDF GNO1 "\x06\x42" "abcdefghijabcdefghijabcdefghijabc", false,
	   "", 0),
	TC("a dash in the tag", FLAGS0 UUIDF GNO1 "\x06\x0a" "my-tg", false, "", 0),
	TC("a digit first in the tag", FLAGS0 UUIDF GNO1 "\x06\x06" "9ab", false, "", 0),
	TC("a NUL in the tag", FLAGS0 UUIDF GNO1 "\x06\x06" "a\0b", false, "", 0),
	TC("a tag longer than the message", FLAGS0 UUIDF GNO1 "\x06\x0a" "my", false, "", 0),
	TC("the next id cut short", FLAGS0 UUIDF GNO1 "\x01", false, "", 0),
	TC("nothing", "", false, "", 0),
};

static void test_tagged_cases(void)
{
	for (size_t i = 0; i < sizeof(tcases) / sizeof(tcases[0]); i++) {
		const struct tcase *c = &tcases[i];
		uint8_t body[128], uuid[GTID_UUID_LEN];
		char tag[GTID_TAG_MAX + 1] = "?", text[37] = "";
		uint64_t gno = 0;
		bool got;

		body[0] = 0x02;                           /* format version 1 */
		body[1] = (uint8_t)((3 + c->n) << 1);     /* its size, under 128 */
		body[2] = 0x00;                           /* no field a reader must know */
		memcpy(body + 3, c->fields, c->n);
		got = tagged_body(body, 3 + c->n, uuid, tag, &gno);
		if (!c->ok) {
			ok(!got, "%s: refused", c->name);
			continue;
		}
		gtid_uuid_format(uuid, text);
		ok(got && strcmp(text, SRV) == 0 && strcmp(tag, c->tag) == 0 && gno == c->gno,
		   "%s: %s:%s:%llu", c->name, text, tag, (unsigned long long)gno);
	}
}

/* The message's own header: its version, its size against the body. */
static void test_tagged_header(void)
{
	static const char fields[] = FLAGS0 UUIDF GNO1 TAGF;
	size_t n = sizeof(fields) - 1;
	uint8_t body[128], uuid[GTID_UUID_LEN];
	char tag[GTID_TAG_MAX + 1];
	uint64_t gno;

	body[0] = 0x02;
	body[1] = (uint8_t)((3 + n) << 1);
	body[2] = 0x00;
	memcpy(body + 3, fields, n);
	ok(tagged_body(body, 3 + n, uuid, tag, &gno), "the message as built: read");
	body[0] = 0x04;
	ok(!tagged_body(body, 3 + n, uuid, tag, &gno), "format version 2: refused");
	body[0] = 0x00;
	ok(!tagged_body(body, 3 + n, uuid, tag, &gno), "format version 0: refused");
	body[0] = 0x02;
	body[1] = (uint8_t)((4 + n) << 1);
	ok(!tagged_body(body, 3 + n, uuid, tag, &gno), "a size one past the body: refused");
	body[1] = 0x04;
	ok(!tagged_body(body, 3 + n, uuid, tag, &gno), "a size 2, less than its header: refused");
	body[1] = (uint8_t)((3 + n) << 1);
	body[3 + n] = 0x55;
	ok(tagged_body(body, 4 + n, uuid, tag, &gno) && strcmp(tag, "mytag") == 0,
	   "a byte after the message (not in its size): read, as MySQL does");
	body[2] = 0x7e;
	ok(tagged_body(body, 3 + n, uuid, tag, &gno) && gno == 1,
	   "a last field to know of 63: read all the same (only the GTID is taken)");
	ok(!tagged_body((const uint8_t *)"\x02\x06\x01", 3, uuid, tag, &gno),
	   "the header's third integer cut short: refused");
}

static void test_format_truncation(void)
{
	struct gtid_set s;
	char buf[64];

	gtid_set_init(&s);
	parse(&s, U1 ":1-5");                               /* 40 characters */
	is_int(gtid_set_format(&s, NULL, 0), 40, "cap 0: the length needed, nothing written");
	memset(buf, 'x', sizeof(buf));
	is_int(gtid_set_format(&s, buf, 10), 40, "cap 10: the length needed");
	is_str(buf, "3e11fa47-", "9 characters and the NUL");
	is_int(buf[10], 'x', "nothing past cap");
	memset(buf, 'x', sizeof(buf));
	is_int(gtid_set_format(&s, buf, 40), 40, "cap 40: one short");
	is_str(buf, U1 ":1-", "39 characters and the NUL");
	is_int(buf[40], 'x', "nothing past cap");
	memset(buf, 'x', sizeof(buf));
	is_int(gtid_set_format(&s, buf, 41), 40, "cap 41: exact");
	is_str(buf, U1 ":1-5", "the whole text");
	memset(buf, 'x', sizeof(buf));
	is_int(gtid_set_format(&s, buf, 1), 40, "cap 1");
	is_int(buf[0], '\0', "just the NUL");
	is_int(buf[1], 'x', "nothing past it");
	gtid_set_clear(&s);
	memset(buf, 'x', sizeof(buf));
	is_int(gtid_set_format(&s, buf, sizeof(buf)), 0, "the empty set: length 0");
	is_str(buf, "", "an empty string");
	gtid_set_free(&s);
}

static void test_uuid(void)
{
	uint8_t u[16];
	char text[37];

	memset(u, 0, sizeof(u));
	ok(gtid_uuid_parse(U1, 36, u) && memcmp(u, u1, 16) == 0, "a lower-case uuid");
	memset(u, 0, sizeof(u));
	ok(gtid_uuid_parse("8A94F357-AAB4-11DF-86AB-C80AA9429562", 36, u) &&
	   memcmp(u, u2, 16) == 0, "an upper-case uuid");
	ok(!gtid_uuid_parse(U1, 35, u), "35 characters");
	ok(!gtid_uuid_parse(U1 "0", 37, u), "37 characters");
	ok(!gtid_uuid_parse("3e11fa47071ca-11e1-9e33-c80aa9429562", 36, u), "a dash missing");
	ok(!gtid_uuid_parse("3e11fa47-71ca-11e1-9e33-c80aa942956z", 36, u), "a non-hex digit");
	ok(!gtid_uuid_parse("3e11fa4771ca11e19e33c80aa9429562", 32, u), "no dashes");
	gtid_uuid_format(u2, text);
	is_str(text, U2, "formatted lower-case with dashes");
	gtid_uuid_format(u0, text);
	is_str(text, U0, "leading zeros kept");
}

static void test_copy_clear(void)
{
	struct gtid_set a, b;

	gtid_set_init(&a);
	gtid_set_init(&b);
	parse(&a, U1 ":1-3:t:4," U2 ":7");
	parse(&b, U0 ":1-100");
	is_int(gtid_set_copy(&b, &a), 0, "copy into a set with contents");
	is_str(fmt(&b), U1 ":1-3:t:4," U2 ":7", "the copy prints as the original");
	gtid_set_add(&b, u1, NULL, 4);
	is_str(fmt(&a), U1 ":1-3:t:4," U2 ":7", "changing the copy leaves the original");
	is_str(fmt(&b), U1 ":1-4:t:4," U2 ":7", "the copy changed");
	gtid_set_clear(&b);
	ok(gtid_set_empty(&b) && b.cap >= 3, "clear empties and keeps the sids array");
	is_str(fmt(&b), "", "a cleared set prints empty");
	ok(!gtid_set_contains(&b, u1, NULL, 1), "and holds nothing");
	gtid_set_add(&b, u2, NULL, 9);
	gtid_set_add(&b, u0, NULL, 8);
	is_str(fmt(&b), U0 ":8," U2 ":9", "a cleared set is reused");
	gtid_set_clear(&a);
	is_int(gtid_set_copy(&b, &a), 0, "copy of the empty set");
	ok(gtid_set_empty(&b), "is empty");
	gtid_set_free(&a);
	gtid_set_free(&b);
	ok(b.n == 0 && b.cap == 0 && b.sid == NULL, "free leaves an initialised set");
}

int main(void)
{
	test_roundtrips();
	test_malformed();
	test_tag_length();
	test_add();
	test_many();
	test_contains();
	test_subset();
	test_tags();
	test_encode();
	test_encode_tagged();
	test_encode_tagged_edges();
	test_tag_parse();
	test_tagged_real();
	test_tagged_cuts();
	test_tagged_cases();
	test_tagged_header();
	test_format_truncation();
	test_uuid();
	test_copy_clear();
	return done_testing();
}
