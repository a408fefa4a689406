/*
 * test_spooky.c: unit tests for src/sql/spooky.c (SpookyHash V2).
 *
 * Vectors:
 *   - the reference implementation's published TestResults table
 *     (Hash32 = low 32 bits of Hash128 with seeds 0, over buf[i] = i + 128,
 *     message length i), at lengths that cover every short-path tail size,
 *     the short/long switch at 192 and several long-path remainders;
 *   - ProxySQL query digests (0x%016llX of Hash64(digest_text, len, 0)) from
 *     docs: short messages, a 376-byte digest_text (long path) and a
 *     2716-byte one hashed over its first 2048 bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "sql/spooky.h"

static const struct {
	unsigned len;
	uint32_t h32;
} published[] = {
	{ 0, 0x6bf50919 }, { 1, 0x70de1d26 }, { 2, 0xa2b37298 },
	{ 3, 0x35bc5fbf }, { 4, 0x8223b279 }, { 5, 0x5bcb315e },
	{ 6, 0x53fe88a1 }, { 7, 0xf9f1a233 }, { 8, 0xee193982 },
	{ 9, 0x54f86f29 }, { 10, 0xc8772d36 }, { 11, 0x9ed60886 },
	{ 12, 0x5f23d1da }, { 13, 0x1ed9f474 }, { 14, 0xf2ef0c89 },
	{ 15, 0x83ec01f9 }, { 16, 0xf274736c }, { 17, 0x7e9ac0df },
	{ 18, 0xc7aed250 }, { 19, 0xb1015811 }, { 28, 0x99ae8622 },
	{ 29, 0x170c658b }, { 30, 0x149ba493 }, { 31, 0x027bca7c },
	{ 32, 0xe5cfc8b6 }, { 33, 0xce01d9d7 }, { 34, 0x11103330 },
	{ 35, 0x5d1f5ed4 }, { 60, 0x1cd6a5a2 }, { 63, 0x09c1afb4 },
	{ 64, 0x069c8bb7 }, { 95, 0x3abae1cb }, { 96, 0x1499b81a },
	{ 127, 0x82356bf2 }, { 128, 0x94e948ec }, { 188, 0xe715b13a },
	{ 189, 0x0394c3b2 }, { 190, 0x11efbbae }, { 191, 0xe13d9e19 },
	{ 192, 0x77e012bd }, { 193, 0x2d05114c }, { 194, 0xaecf2ddd },
	{ 195, 0xb2a2b4aa }, { 196, 0xb9429546 }, { 197, 0x55dce815 },
	{ 198, 0xc89138f8 }, { 199, 0x46dcae20 }, { 200, 0x1f6f7162 },
	{ 255, 0x2f40ee0b }, { 256, 0x38cebf03 }, { 287, 0xc22c642d },
	{ 288, 0x47880140 }, { 319, 0xf3a1526c }, { 320, 0xf1545450 },
	{ 383, 0x4827f45c }, { 384, 0x44eb5634 }, { 447, 0xf04af50f },
	{ 448, 0xad7baa23 }, { 479, 0xae18d43a }, { 480, 0xbef04402 },
	{ 508, 0x918fa7c9 }, { 509, 0xaf2e2cd9 }, { 510, 0x82046f8e },
	{ 511, 0xcc1c8250 },
};

static const struct {
	const char *text;
	uint64_t digest;
} proxysql[] = {
	{ "Select ?", 0x37B5362567EE37EFULL },
	{ "select @@version_comment limit ?", 0x226CD90D52A2BA0BULL },
	{ "show tables", 0x99531AEFF718C501ULL },
	{ "SELECT * FROM t WHERE ?=?", 0x0BC1AE031E4721D4ULL },
	{ "insert into test.t(id) values(?)", 0x68D0B3544BA3210AULL },
	{ "select USER()", 0x594F2C744B698066ULL },
	{ "INSERT INTO testdb.t1 VALUES(?,?,?)", 0x447DBFBC0B483620ULL },
};

static void test_published(void)
{
	unsigned char buf[512];

	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i + 128);
	for (size_t k = 0; k < sizeof(published) / sizeof(published[0]); k++) {
		unsigned len = published[k].len;
		uint64_t h1 = 0, h2 = 0;
		char name[64];

		spooky_hash128(buf, len, &h1, &h2);
		snprintf(name, sizeof(name), "reference TestResults, length %u", len);
		is_int((uint32_t)h1, published[k].h32, name);
		is_int((uint32_t)spooky_hash64(buf, len, 0), published[k].h32,
		       "hash64 agrees with hash128");
	}
}

static void test_proxysql_short(void)
{
	for (size_t k = 0; k < sizeof(proxysql) / sizeof(proxysql[0]); k++) {
		const char *t = proxysql[k].text;

		ok(spooky_hash64(t, strlen(t), 0) == proxysql[k].digest,
		   "ProxySQL digest of '%s'", t);
	}
}

/* "SELECT col0,col1,...,col<n-1> FROM t WHERE id = ?" */
static size_t column_list(char *out, size_t cap, int n)
{
	size_t len = (size_t)snprintf(out, cap, "SELECT ");

	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(out + len, cap - len, "%scol%d",
					i ? "," : "", i);
	len += (size_t)snprintf(out + len, cap - len, " FROM t WHERE id = ?");
	return len;
}

static void test_proxysql_long(void)
{
	static char text[4096];
	size_t len;

	len = column_list(text, sizeof(text), 60);
	is_int(len, 376, "376-byte digest_text");
	ok(spooky_hash64(text, len, 0) == 0x92AE1A98814E8322ULL,
	   "ProxySQL digest of a 376-byte digest_text (long path)");

	len = column_list(text, sizeof(text), 400);
	is_int(len, 2716, "2716-byte digest_text");
	ok(spooky_hash64(text, 2048, 0) == 0x06142BBD1ED03088ULL,
	   "ProxySQL digest of a 2716-byte digest_text (first 2048 bytes)");

	len = column_list(text, sizeof(text), 25);
	is_int(len, 166, "166-byte digest_text");
	ok(spooky_hash64(text, len, 0) == 0x23A884E70C6CA382ULL,
	   "ProxySQL digest of a 166-byte digest_text (short path)");
}

/* Results must not depend on the alignment of the input. */
static void test_alignment(void)
{
	static unsigned char base[700], moved[716];
	int bad = 0;

	for (unsigned i = 0; i < sizeof(base); i++)
		base[i] = (unsigned char)(i * 31 + 7);
	for (unsigned len = 0; len <= 600; len += 7) {
		uint64_t want = spooky_hash64(base, len, 0x1234);

		for (unsigned off = 1; off < 16; off++) {
			memcpy(moved + off, base, len);
			if (spooky_hash64(moved + off, len, 0x1234) != want)
				bad++;
		}
	}
	is_int(bad, 0, "unaligned input gives the same hash");
}

static void test_seeds(void)
{
	const char *m = "seed check, long enough to be interesting";
	uint64_t h1 = 7, h2 = 7, a, b;

	spooky_hash128(m, strlen(m), &h1, &h2);
	ok(spooky_hash64(m, strlen(m), 7) == h1, "hash64(seed) is hash128(seed, seed).h1");
	a = spooky_hash64(m, strlen(m), 0);
	b = spooky_hash64(m, strlen(m), 1);
	ok(a != b, "seed changes the hash");
	h1 = 0;
	h2 = 1;
	spooky_hash128(m, strlen(m), &h1, &h2);
	ok(h1 != a, "second seed feeds the first half");
}

int main(void)
{
	test_published();
	test_proxysql_short();
	test_proxysql_long();
	test_alignment();
	test_seeds();
	return done_testing();
}
