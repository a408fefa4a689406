/*
 * test_digest.c: unit tests for src/sql/tokenizer.c (query digests, literal
 * spans, flags).
 *
 * Covers: the verified digests in docs (ProxySQL's digest_text and hex), every
 * row of digest_vectors.h (ProxySQL's own stage vectors plus production-
 * default expectations), documented ProxySQL quirks, literal spans, flags,
 * long queries (192..2048 and > 2048 bytes of digest_text, huge value lists),
 * a randomised value-grouping check against an independent model, and
 * garbage input (random bytes, unterminated strings and comments, NUL bytes)
 * that must never crash; build this file with -fsanitize=address,undefined to
 * check the last part under the sanitizers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "digest_vectors.h"
#include "sql/spooky.h"
#include "sql/tokenizer.h"

#define TEXT_CAP (256 * 1024)

static char text_buf[TEXT_CAP];
static struct sql_tok_result res;

static const struct sql_tok_opts prod = SQL_TOK_OPTS_DEFAULT;

static struct sql_tok_result *tok_opts(const char *q, size_t len,
				       const struct sql_tok_opts *o)
{
	res.text = text_buf;
	res.text_cap = sizeof(text_buf);
	if (sql_tokenize_opts(q, len, o, &res) != 0)
		printf("# sql_tokenize_opts failed\n");
	return &res;
}

static struct sql_tok_result *tok(const char *q)
{
	return tok_opts(q, strlen(q), &prod);
}

static const char *hex(uint64_t d)
{
	static char buf[19];

	sql_digest_hex(d, buf);
	return buf;
}

/* q with control characters escaped, for test names (first 100 bytes). */
static const char *shown(const char *q)
{
	static char buf[256];
	size_t n = 0;

	for (; *q && n < 100; q++) {
		unsigned char c = (unsigned char)*q;

		if (c >= 0x20 && c < 0x7f)
			buf[n++] = (char)c;
		else
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\\x%02x", c);
	}
	buf[n] = '\0';
	return buf;
}

/* digest_text and digest of q under production defaults. */
static void check(const char *q, const char *want_text, uint64_t want)
{
	struct sql_tok_result *r = tok(q);
	char name[200];

	snprintf(name, sizeof(name), "text of [%s]", shown(q));
	is_str(r->text, want_text, name);
	if (want) {
		snprintf(name, sizeof(name), "digest of [%s]", shown(q));
		is_str(hex(r->digest), hex(want), name);
	}
}

/* ---- verified vectors from docs -------------------------------------- */

static void test_reference_table(void)
{
	static const struct {
		const char *q, *text;
		uint64_t digest;
	} v[] = {
		{ "Select 1", "Select ?", 0x37B5362567EE37EFULL },
		{ "select @@version_comment limit 1",
		  "select @@version_comment limit ?", 0x226CD90D52A2BA0BULL },
		{ "show tables", "show tables", 0x99531AEFF718C501ULL },
		{ "SELECT * FROM t WHERE 1=1", "SELECT * FROM t WHERE ?=?",
		  0x0BC1AE031E4721D4ULL },
		{ "insert into test.t(id) values(1)",
		  "insert into test.t(id) values(?)", 0x68D0B3544BA3210AULL },
		{ "select USER()", "select USER()", 0x594F2C744B698066ULL },
		{ "INSERT INTO testdb.t1 VALUES(1,2,3)",
		  "INSERT INTO testdb.t1 VALUES(?,?,?)", 0x447DBFBC0B483620ULL },
		/* the same digests from noisier spellings */
		{ "  Select\t'x' ;", "Select ?", 0x37B5362567EE37EFULL },
		{ "/* app */ Select -42.5e3;", "Select ?", 0x37B5362567EE37EFULL },
		{ "select @@version_comment limit 1 -- mysql client\n",
		  "select @@version_comment limit ?", 0x226CD90D52A2BA0BULL },
		{ "show\n\ttables;;", "show tables", 0x99531AEFF718C501ULL },
		{ "SELECT * FROM t WHERE 'a'=0x1F", "SELECT * FROM t WHERE ?=?",
		  0x0BC1AE031E4721D4ULL },
		{ "insert into test.t(id) values( \"it\"\"s\" )",
		  "insert into test.t(id) values(?)", 0x68D0B3544BA3210AULL },
		{ "INSERT INTO testdb.t1 VALUES(1, 'two' , -3)",
		  "INSERT INTO testdb.t1 VALUES(?,?,?)", 0x447DBFBC0B483620ULL },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		check(v[i].q, v[i].text, v[i].digest);
	for (size_t i = 0; i < 7; i++)
		ok(spooky_hash64(v[i].text, strlen(v[i].text), 0) == v[i].digest,
		   "hash of '%s' alone", v[i].text);
}

/* ---- ProxySQL's stage vectors (digest_vectors.h) ---------------------- */

static void test_vector_table(void)
{
	size_t n = sizeof(digest_vectors) / sizeof(digest_vectors[0]);
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		const struct digest_vector *v = &digest_vectors[i];
		const char *q = dv_queries[v->query];
		struct sql_tok_opts o = { false, v->replace_null != 0,
					  v->grouping_limit,
					  v->groups_grouping_limit };
		struct sql_tok_result *r = tok_opts(q, strlen(q), &o);

		if (strcmp(r->text, v->text) != 0 || r->digest != v->digest) {
			bad++;
			printf("# row %zu [%.100s] (%d,%d,%d)\n#   got  '%.200s' %s\n"
			       "#   want '%.200s'\n", i, q, v->replace_null,
			       v->grouping_limit, v->groups_grouping_limit,
			       r->text, hex(r->digest), v->text);
			printf("#   want digest %s\n", hex(v->digest));
		}
	}
	ok(n > 400, "vector table has %zu rows", n);
	is_int(bad, 0, "every ProxySQL stage vector matches (text and digest)");
}

/* ---- rules and quirks, each against ProxySQL 2.7's output ------------- */

static void test_rules(void)
{
	static const struct {
		const char *q, *text;
	} v[] = {
		/* whitespace, case, trailing ';' */
		{ "\n\t SELECT\r\n a ,\tb  FROM   t ;  ", "SELECT a,b FROM t" },
		{ "SeLeCt A FrOm T", "SeLeCt A FrOm T" },
		{ ";", ";" },
		{ "", "" },
		/* comments */
		{ "SELECT /*!40101 SQL_NO_CACHE */ a FROM t",
		  "SELECT SQL_NO_CACHE a FROM t" },
		{ "/*!40101 SET @x=1 */", "SET @x=1" },
		{ "SELECT a/* c */FROM t", "SELECT a FROM t" },
		{ "SELECT 1 # tail", "SELECT ?" },
		{ "SELECT a--x\nFROM t", "SELECT a--x FROM t" },
		{ "SELECT 1 -- tail\n, 2", "SELECT ?,?" },
		/* strings, identifiers, numbers */
		/* backticks get no special treatment: "`t 1`" -> "`t ?`" */
		{ "SELECT `my col`, `c1` FROM `t 1`", "SELECT `my col`,`c1` FROM `t ?`" },
		{ "SELECT N'x', _utf8mb4'y', X'0A', b'01'", "SELECT N?,_utf8mb4?,X?,b?" },
		{ "SELECT t1.c2 FROM t1 WHERE c3=3", "SELECT t1.c2 FROM t1 WHERE c3=?" },
		{ "SELECT 1e9, 1.5E-3, 0xFF, .5", "SELECT ?,?,?,.?" },
		{ "SELECT 12ab, 0xZZ, 1_000", "SELECT 12ab,0xZZ,1_000" },
		/* NULL kept by default */
		{ "SELECT * FROM t WHERE a IS NULL", "SELECT * FROM t WHERE a IS NULL" },
		/* operators and signs */
		{ "SELECT a + 1, b - 2, 3 * c, d / 4, 5 % e", "SELECT a ?,b ?,?* c,d /?,?% e" },
		{ "SELECT -1, +2, (-3), 4 - -5", "SELECT ?,?,(?),?- ?" },
		{ "SELECT NOW() - 1", "SELECT NOW() -?" },
		/* lists */
		{ "SELECT * FROM t WHERE id IN (1,2,3,4)", "SELECT * FROM t WHERE id IN (?,?,?,?)" },
		{ "SELECT * FROM t WHERE id IN ( 1 , 2 , 3 , 4 , 5 )",
		  "SELECT * FROM t WHERE id IN (?,?,?,...)" },
		{ "INSERT INTO t VALUES (1,2,3,4,5),(6,7,8,9,0)",
		  "INSERT INTO t VALUES (?,?,?,...),(?,?,?,...)" },
		/* multi-statement */
		{ "SELECT 1; SELECT 2;", "SELECT ?; SELECT ?" },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		check(v[i].q, v[i].text, 0);
}

/* ProxySQL oddities reproduced on purpose (stats compatibility). */
static void test_quirks(void)
{
	static const struct {
		const char *q, *text;
	} v[] = {
		/* a binary minus after an identifier and a space is dropped */
		{ "SELECT a - b FROM t", "SELECT a  b FROM t" },
		/* "#" / "-- " comments glued to a token insert no space */
		{ "SELECT a#c\nFROM t", "SELECT aFROM t" },
		/* a number glued to a normal character at the very end */
		{ "SELECT 1a", "SELECT ?" },
		/* leftovers of a number re-appear after a glued "#" comment */
		{ "SELECT 12#c\n x", "SELECT ?2x" },
		/* a char squeezed between a value run and ')' is dropped */
		{ "SELECT f(1,2,3,4,a)", "SELECT f(?,?,?,...)" },
		/* a "#" with exactly two bytes left ends early */
		{ "SELECT 1 #ab", "SELECT ? ab" },
		/* "--<space>" inside a "-- " comment hides a newline */
		{ "SELECT 1 -- x --\nFROM t\n", "SELECT ?" },
		/* "-- " with exactly four bytes after it ends there */
		{ "SELECT 1 -- cli\n", "SELECT ? cli" },
		/* the first byte is never trimmed */
		{ ";;", ";" },
		/* '/ *' right at the end is a comment, '/ *x' leaves x */
		{ "SELECT 1 /*", "SELECT ?" },
		{ "SELECT 1 /*x", "SELECT ? x" },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		check(v[i].q, v[i].text, 0);
}

/* replace_null / lowercase / grouping options. */
static void test_options(void)
{
	struct sql_tok_opts o = prod;
	const char *q = "SELECT NULL, Null8 FROM T WHERE id IN (1,2,3,4,5)";
	struct sql_tok_result *r;

	o.replace_null = true;
	r = tok_opts(q, strlen(q), &o);
	is_str(r->text, "SELECT ?,Null8 FROM T WHERE id IN (?,?,?,...)", "replace_null");
	o.lowercase = true;
	r = tok_opts(q, strlen(q), &o);
	is_str(r->text, "select ?,null8 from t where id in (?,?,?,...)", "lowercase");
	o = prod;
	o.grouping_limit = 0;
	r = tok_opts(q, strlen(q), &o);
	is_str(r->text, "SELECT NULL,Null8 FROM T WHERE id IN (?,?,?,?,?)",
	       "grouping_limit 0 keeps lists");
	o.grouping_limit = 1;
	r = tok_opts(q, strlen(q), &o);
	is_str(r->text, "SELECT NULL,Null8 FROM T WHERE id IN (?,...)", "grouping_limit 1");
	o.grouping_limit = 99999;   /* clamped */
	r = tok_opts(q, strlen(q), &o);
	is_str(r->text, "SELECT NULL,Null8 FROM T WHERE id IN (?,?,?,?,?)", "huge limit");
	r = tok_opts(q, strlen(q), NULL);
	is_str(r->text, "SELECT NULL,Null8 FROM T WHERE id IN (?,?,?,...)", "NULL opts = defaults");
}

/* ---- literal spans ---------------------------------------------------- */

static void expect_lit(const struct sql_tok_result *r, const char *q, unsigned i,
		       const char *bytes, int kind, int flags)
{
	char name[120];

	snprintf(name, sizeof(name), "literal %u is [%s]", i, bytes);
	if (i >= r->nlits) {
		ok(0, "%s (only %u literals)", name, r->nlits);
		return;
	}
	ok(r->lits[i].len == strlen(bytes) &&
	   memcmp(q + r->lits[i].off, bytes, strlen(bytes)) == 0, "%s", name);
	ok(r->lits[i].kind == kind && r->lits[i].flags == flags,
	   "literal %u kind %d flags %d", i, r->lits[i].kind, r->lits[i].flags);
}

static void test_literals(void)
{
	const char *q = "SELECT 'it''s', \"d\\\"q\", N'n', _utf8mb4'u', X'0A', b'01',"
			" 0x1F, -1, - 2.5e3, col1, 3 FROM t WHERE a = NOW() - 4 AND b IN (+5)";
	struct sql_tok_result *r = tok(q);

	is_str(r->text, "SELECT ?,?,N?,_utf8mb4?,X?,b?,?,?,?,col1,? FROM t WHERE "
	       "a = NOW() -? AND b IN (?)", "literal query text");
	is_int(r->nlits, 12, "twelve literals");
	expect_lit(r, q, 0, "'it''s'", SQL_LIT_STRING, 0);
	expect_lit(r, q, 1, "\"d\\\"q\"", SQL_LIT_STRING, 0);
	expect_lit(r, q, 2, "N'n'", SQL_LIT_STRING, SQL_LIT_INTRODUCER);
	expect_lit(r, q, 3, "_utf8mb4'u'", SQL_LIT_STRING, SQL_LIT_INTRODUCER);
	expect_lit(r, q, 4, "X'0A'", SQL_LIT_HEX, SQL_LIT_INTRODUCER);
	expect_lit(r, q, 5, "b'01'", SQL_LIT_BIT, SQL_LIT_INTRODUCER);
	expect_lit(r, q, 6, "0x1F", SQL_LIT_HEX, 0);
	expect_lit(r, q, 7, "-1", SQL_LIT_NUMBER, SQL_LIT_SIGNED);
	expect_lit(r, q, 8, "- 2.5e3", SQL_LIT_NUMBER, SQL_LIT_SIGNED);
	expect_lit(r, q, 9, "3", SQL_LIT_NUMBER, 0);
	expect_lit(r, q, 10, "4", SQL_LIT_NUMBER, 0);
	expect_lit(r, q, 11, "+5", SQL_LIT_NUMBER, SQL_LIT_SIGNED);
	ok(!r->lits_overflow, "no overflow");
}

static void test_literal_limits(void)
{
	static char q[8192];
	struct sql_tok_opts o = prod;
	struct sql_tok_result *r;
	size_t len = (size_t)snprintf(q, sizeof(q), "SELECT NULL, 1 IN (");

	for (int i = 0; i < 300; i++)
		len += (size_t)snprintf(q + len, sizeof(q) - len, "%s%d", i ? "," : "", i);
	len += (size_t)snprintf(q + len, sizeof(q) - len, ")");
	r = tok_opts(q, len, &o);
	is_int(r->nlits, SQL_TOK_MAX_LITERALS, "literal array filled");
	ok(r->lits_overflow, "overflow flagged");
	is_str(r->text, "SELECT NULL,? IN (?,?,?,...)", "text unaffected by overflow");
	o.replace_null = true;
	r = tok_opts(q, len, &o);
	ok(r->lits[0].kind == SQL_LIT_NULL && r->lits[0].len == 4, "NULL literal span");
	r = tok("SELECT 7");
	ok(r->nlits == 1 && r->lits[0].off == 7 && r->lits[0].len == 1, "number at end");
	r = tok("SELECT 7a");
	ok(r->nlits == 1 && r->lits[0].len == 2, "span keeps the byte ProxySQL drops");
}

/* ---- flags, keyword, ids --------------------------------------------- */

static void test_flags(void)
{
	static const struct {
		const char *q;
		enum sql_kw kw;
		bool ok;
		unsigned flags;
	} v[] = {
		{ "SELECT 1", KW_SELECT, true, 0 },
		{ "  (select 1) union (select 2)", KW_SELECT, true, 0 },
		{ "/* hi */ insert into t values (1)", KW_INSERT, true, SQL_TOK_HAS_COMMENT },
		{ "/*!40101 SET NAMES utf8 */", KW_SET, true, SQL_TOK_HAS_COMMENT },
		{ "update t set a=1", KW_UPDATE, true, 0 },
		{ "delete from t", KW_DELETE, true, 0 },
		{ "desc t", KW_DESC, true, 0 },
		{ "describe t", KW_DESCRIBE, true, 0 },
		{ "start transaction", KW_START, true, 0 },
		{ "select1", KW_NONE, true, 0 },
		{ "frobnicate", KW_NONE, true, 0 },
		{ "", KW_NONE, true, 0 },
		{ "-- only a comment", KW_NONE, true, SQL_TOK_HAS_COMMENT },
		{ "SELECT 'abc", KW_SELECT, false, SQL_TOK_UNTERMINATED_STRING },
		{ "SELECT \"abc\\\"", KW_SELECT, false,
		  SQL_TOK_UNTERMINATED_STRING | SQL_TOK_BACKSLASH_ESCAPE },
		{ "SELECT 'a\\'' ; SELECT 2", KW_SELECT, true,
		  SQL_TOK_BACKSLASH_ESCAPE | SQL_TOK_MULTI_STATEMENT },
		{ "SELECT 'a;b', `c;d`", KW_SELECT, true, SQL_TOK_MULTI_STATEMENT },
		{ "SELECT 'a;b' /* ; x */ -- ;y", KW_SELECT, true, SQL_TOK_HAS_COMMENT },
		{ "SELECT 1; /*!50000 DROP TABLE t */", KW_SELECT, true,
		  SQL_TOK_HAS_COMMENT | SQL_TOK_MULTI_STATEMENT },
		{ "SELECT 1 --\n; DELETE FROM t", KW_SELECT, true,
		  SQL_TOK_HAS_COMMENT | SQL_TOK_HIDDEN_SQL },
		{ "SELECT 1 -- a --\r; DELETE FROM t", KW_SELECT, true,
		  SQL_TOK_HAS_COMMENT | SQL_TOK_HIDDEN_SQL },
		{ "SELECT 1 --\r\nFROM t", KW_SELECT, true, SQL_TOK_HAS_COMMENT },
		{ "SELECT 1 /* never closed", KW_SELECT, false,
		  SQL_TOK_HAS_COMMENT | SQL_TOK_UNTERMINATED_COMMENT },
		{ "SELECT 1; SELECT 2", KW_SELECT, true, SQL_TOK_MULTI_STATEMENT },
		{ "SELECT 1;;  ", KW_SELECT, true, 0 },
		{ "SELECT a FROM t /*M!100100 JOIN u */", KW_SELECT, true,
		  SQL_TOK_HAS_COMMENT | SQL_TOK_HIDDEN_SQL },
		{ "SELECT a FROM t /*M JOIN u */", KW_SELECT, true, SQL_TOK_HAS_COMMENT },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct sql_tok_result *r = tok(v[i].q);

		ok(r->keyword == v[i].kw && r->ok == v[i].ok && r->flags == v[i].flags,
		   "flags of [%s]: kw %s ok %d flags %#x", shown(v[i].q),
		   sql_kw_name(r->keyword), r->ok, r->flags);
	}
	{
		static char big[1200];
		struct sql_tok_result *r;

		memcpy(big, "SELECT a FROM t /*!50000 ", 25);
		memset(big + 25, ' ', sizeof(big) - 25 - 20);
		memcpy(big + sizeof(big) - 20, "JOIN u */", 9);
		r = tok(big);
		ok(r->flags & SQL_TOK_HIDDEN_SQL, "a / *! body over 1023 bytes: hidden SQL");
	}
	is_str(sql_kw_name(KW_SELECT), "SELECT", "keyword name");
	is_str(sql_kw_name(KW_NONE), "", "no keyword: no name");
}

static void test_ids(void)
{
	char id[19], hx[19];

	sql_query_id(0x0BC1AE031E4721D4ULL, id);
	is_str(id, "q_0bc1ae031e4721d4", "query id format");
	sql_digest_hex(0x0BC1AE031E4721D4ULL, hx);
	is_str(hx, "0x0BC1AE031E4721D4", "digest hex format");
	sql_query_id(0, id);
	is_str(id, "q_0000000000000000", "query id of 0");
	sql_digest_hex(UINT64_MAX, hx);
	is_str(hx, "0xFFFFFFFFFFFFFFFF", "digest hex of max");
}

static void test_bad_args(void)
{
	struct sql_tok_result r;
	char small[64];

	memset(&r, 0, sizeof(r));
	is_int(sql_tokenize("x", 1, NULL), -1, "NULL result");
	is_int(sql_tokenize("x", 1, &r), -1, "NULL text buffer");
	r.text = small;
	r.text_cap = sizeof(small);
	is_int(sql_tokenize("x", 1, &r), -1, "text buffer too small");
	r.text = text_buf;
	r.text_cap = SQL_TOK_MIN_TEXT_CAP;
	is_int(sql_tokenize(NULL, 3, &r), -1, "NULL query with a length");
	is_int(sql_tokenize(NULL, 0, &r), 0, "NULL empty query");
	ok(r.text_len == 0 && r.text[0] == '\0' && r.ok, "empty result");
	ok(r.digest == spooky_hash64("", 0, 0), "digest of empty text");
}

/* ---- long queries ----------------------------------------------------- */

/* "SELECT col0, col1, ... FROM t WHERE id = 42" */
static size_t long_select(char *q, size_t cap, int n)
{
	size_t len = (size_t)snprintf(q, cap, "SELECT ");

	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(q + len, cap - len, "%scol%d", i ? ", " : "", i);
	return len + (size_t)snprintf(q + len, cap - len, " FROM t WHERE id = 42");
}

static void test_long_text(void)
{
	static char q[16384];
	struct sql_tok_result r;
	static char small[SQL_TOK_MIN_TEXT_CAP];
	size_t len;

	len = long_select(q, sizeof(q), 60);
	tok_opts(q, len, &prod);
	ok(res.text_len == 376 && res.digest == 0x92AE1A98814E8322ULL,
	   "376-byte digest_text matches ProxySQL (%s)", hex(res.digest));
	len = long_select(q, sizeof(q), 25);
	tok_opts(q, len, &prod);
	ok(res.text_len == 166 && res.digest == 0x23A884E70C6CA382ULL,
	   "166-byte digest_text matches ProxySQL");

	len = long_select(q, sizeof(q), 400);
	tok_opts(q, len, &prod);
	ok(res.text_len == 2716 && res.digest == 0x06142BBD1ED03088ULL,
	   "2716-byte digest_text hashed over 2048 bytes like ProxySQL");
	ok(res.digest == spooky_hash64(res.text, 2048, 0), "hash covers 2048 bytes");
	ok(!(res.flags & SQL_TOK_TEXT_TRUNCATED), "fits the big buffer");

	memset(&r, 0, sizeof(r));
	r.text = small;
	r.text_cap = sizeof(small);
	sql_tokenize(q, len, &r);
	ok(r.text_len == 2048 && (r.flags & SQL_TOK_TEXT_TRUNCATED) &&
	   r.digest == 0x06142BBD1ED03088ULL && memcmp(r.text, res.text, 2048) == 0,
	   "minimum buffer: text cut at 2048, same digest");
}

static void test_long_lists(void)
{
	static char q[200000];
	size_t len = (size_t)snprintf(q, sizeof(q), "INSERT INTO t VALUES ");

	for (int i = 0; i < 3000; i++)
		len += (size_t)snprintf(q + len, sizeof(q) - len, "%s(%d,%d,%d,'v%d',%d.25)",
					i ? "," : "", i, i + 1, i + 2, i, i);
	len += (size_t)snprintf(q + len, sizeof(q) - len,
				" ON DUPLICATE KEY UPDATE a=VALUES(a)");
	tok_opts(q, len, &prod);
	is_str(res.text, "INSERT INTO t VALUES (?,?,?,...),(?,?,?,...),(?,?,?,...),"
	       "(?,?,?,...),(?,?,?,...),(?,?,?,...),(?,?,?,...),(?,?,?,...),(?,?,?,...),"
	       "(?,?,?,...),... ON DUPLICATE KEY UPDATE a=VALUES(a)", "3000-row insert");
	is_str(hex(res.digest), "0xC1423DCDE72B9C15", "3000-row insert digest");
	is_int(res.nlits, SQL_TOK_MAX_LITERALS, "literals capped");

	len = (size_t)snprintf(q, sizeof(q), "INSERT INTO t (a,b,c) VALUES ");
	for (int i = 0; i < 2000; i++)
		len += (size_t)snprintf(q + len, sizeof(q) - len, "%s(%d,'s%d',%d.5)",
					i ? "," : "", i, i, i);
	tok_opts(q, len, &prod);
	ok(res.text_len == 16028 && res.digest == 0x95A6842945844297ULL,
	   "2000 three-value rows (no collapse): 16028-byte text, ProxySQL digest");

	len = (size_t)snprintf(q, sizeof(q), "SELECT * FROM t WHERE id IN (");
	for (int i = 0; i < 20000; i++)
		len += (size_t)snprintf(q + len, sizeof(q) - len, "%s%d", i ? ", " : "", i);
	len += (size_t)snprintf(q + len, sizeof(q) - len, ") AND x = 'y'");
	tok_opts(q, len, &prod);
	ok(strcmp(res.text, "SELECT * FROM t WHERE id IN (?,?,?,...) AND x = ?") == 0 &&
	   res.digest == 0xF55E28E7DBD97E92ULL, "20000-value IN list");
}

/* ---- value grouping against an independent model ---------------------- */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return r->s;
}

static unsigned rndn(struct rng *r, unsigned n)
{
	return (unsigned)(rnd(r) % n);
}

static size_t put_spaces(char *q, size_t len, struct rng *r)
{
	for (unsigned n = rndn(r, 4); n > 0; n--)
		q[len++] = ' ';
	return len;
}

/* One literal ProxySQL turns into '?': number, float, string, NULL, hex. */
static size_t put_value(char *q, size_t cap, size_t len, struct rng *r, bool nulls)
{
	unsigned kind = rndn(r, nulls ? 5 : 4);
	int v = (int)rndn(r, 200000) - 100000;

	switch (kind) {
	case 0:
		return len + (size_t)snprintf(q + len, cap - len, "%d", v);
	case 1:
		return len + (size_t)snprintf(q + len, cap - len, "%d.%03u", v, rndn(r, 1000));
	case 2:
		return len + (size_t)snprintf(q + len, cap - len, rndn(r, 2) ? "'s%ux'" : "\"s%ux\"",
					      rndn(r, 99999));
	case 3:
		return len + (size_t)snprintf(q + len, cap - len, "0x%x", (unsigned)rnd(r));
	default:
		return len + (size_t)snprintf(q + len, cap - len, "%s",
					      rndn(r, 2) ? "NULL" : "nuLl");
	}
}

static size_t gen_insert(char *q, size_t cap, struct rng *r, unsigned nv, unsigned ng,
			 bool nulls)
{
	size_t len = (size_t)snprintf(q, cap, "INSERT INTO db.t (c1,c2,c3) VALUES");

	len = put_spaces(q, len, r);
	q[len++] = ' ';
	for (unsigned g = 0; g < ng; g++) {
		if (g) {
			len = put_spaces(q, len, r);
			q[len++] = ',';
			len = put_spaces(q, len, r);
		}
		q[len++] = '(';
		for (unsigned i = 0; i < nv; i++) {
			len = put_spaces(q, len, r);
			len = put_value(q, cap, len, r, nulls);
			len = put_spaces(q, len, r);
			if (i + 1 < nv)
				q[len++] = ',';
		}
		q[len++] = ')';
	}
	len = put_spaces(q, len, r);
	return len + (size_t)snprintf(q + len, cap - len,
				      " ON DUPLICATE KEY UPDATE c1 = VALUES(c2)");
}

/* What the grouping rules promise for nv values x ng groups. */
static void model_insert(char *out, size_t cap, unsigned nv, unsigned ng,
			 unsigned gl, unsigned ggl)
{
	char group[256];
	size_t g = 0, len;
	bool fold = gl > 0 && nv >= gl + 2;     /* (?,?,?,...) */
	bool cut = fold && ggl > 0 && ng > ggl; /* (..),(..),... */
	unsigned shown = cut ? ggl : ng;

	group[g++] = '(';
	for (unsigned i = 0; i < (fold ? gl : nv); i++)
		g += (size_t)snprintf(group + g, sizeof(group) - g, "%s?",
				      i ? "," : "");
	snprintf(group + g, sizeof(group) - g, "%s", fold ? ",...)" : ")");
	len = (size_t)snprintf(out, cap, "INSERT INTO db.t (c1,c2,c3) VALUES ");
	for (unsigned i = 0; i < shown; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? "," : "", group);
	snprintf(out + len, cap - len, "%s ON DUPLICATE KEY UPDATE c1 = VALUES(c2)",
		 cut ? ",..." : "");
}

static void test_grouping_model(void)
{
	static char q[65536], want[8192];
	struct rng r = { 0x9e3779b97f4a7c15ULL };
	int bad = 0, runs = 0;

	for (int k = 0; k < 4000; k++) {
		unsigned nv = 1 + rndn(&r, 9), ng = 1 + rndn(&r, 14);
		unsigned gl = rndn(&r, 6), ggl = rndn(&r, 6);
		bool nulls = rndn(&r, 2);
		struct sql_tok_opts o = { false, nulls, (int)gl, (int)ggl };
		size_t len = gen_insert(q, sizeof(q), &r, nv, ng, nulls);

		model_insert(want, sizeof(want), nv, ng, gl, ggl);
		tok_opts(q, len, &o);
		runs++;
		if (strcmp(res.text, want) != 0 && bad++ < 5)
			printf("# %u values x %u groups, limits %u/%u\n#   query %.300s\n"
			       "#   got  %s\n#   want %s\n", nv, ng, gl, ggl, q, res.text, want);
	}
	is_int(bad, 0, "random multi-row inserts follow the grouping rules");
	ok(runs == 4000, "%d grouping cases", runs);
}

/* ---- garbage must not crash ------------------------------------------- */

static int check_invariants(const char *q, size_t len, const struct sql_tok_opts *o)
{
	static char again[TEXT_CAP];
	static char small[SQL_TOK_MIN_TEXT_CAP];
	struct sql_tok_result r2;
	struct sql_tok_result *r = tok_opts(q, len, o);
	size_t hl = r->text_len < SQL_DIGEST_HASH_MAX ? r->text_len : SQL_DIGEST_HASH_MAX;
	int bad = 0;

	bad += r->text_len >= r->text_cap || r->text[r->text_len] != '\0' ||
	       strlen(r->text) != r->text_len || r->text_len > len;
	bad += r->digest != spooky_hash64(r->text, hl, 0);
	bad += r->nlits > SQL_TOK_MAX_LITERALS;
	for (unsigned i = 0; i < r->nlits && i < SQL_TOK_MAX_LITERALS; i++)
		bad += r->lits[i].len == 0 || (size_t)r->lits[i].off + r->lits[i].len > len;
	bad += r->ok != !(r->flags & (SQL_TOK_UNTERMINATED_STRING |
				      SQL_TOK_UNTERMINATED_COMMENT));
	memcpy(again, r->text, r->text_len + 1);
	memset(&r2, 0, sizeof(r2));
	r2.text = small;
	r2.text_cap = sizeof(small);
	bad += sql_tokenize_opts(q, len, o, &r2) != 0;
	bad += r2.digest != r->digest || memcmp(r2.text, again, r2.text_len) != 0 ||
	       r2.text_len != (r->text_len < sizeof(small) ? r->text_len : sizeof(small) - 1);
	return bad;
}

static void test_garbage_fixed(void)
{
	static const char *const v[] = {
		"'", "\"", "`", "\\", "'\\", "'\\'", "\"\\\"", "''''", "'''", "/*", "/*!",
		"/*!1", "/*!123", "/**", "/**/", "/*/", "*/", "#", "#\n", "--", "-- ",
		"--\n", "---", "- -", "0x", "0X", "1e", "1e+", "1.", ".", "..", "...",
		"),...", ",...", "N'", "_utf8'", "X'", "((((((((", "))))))))", ",,,,,,",
		"?,?,?,?,?,?", "(?,?,?,?,?,?", "(?,?,?,?,?,?,", "(?,?,?,?,?)(?,?,?,?,?)",
		"(1,2,3,4,5),(1,2,3,4,5),(1,2,3,4,5", "SELECT 1#", "SELECT 1 -- x",
		"SELECT 1 -- ", "SELECT /*! 12345 */", "/*!40101 SET x=1", "NULL",
		"null", "nul", "select 'unterminated\n\n\n", "select 12#c\n   x",
		"select 123456789,1#c\n  x", "SELECT 1e9e9e9e9", "\xff\xfe\x80",
		";;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;", "  \t\r\n  ",
	};
	struct sql_tok_opts opts[] = {
		SQL_TOK_OPTS_DEFAULT, { true, true, 1, 1 }, { false, true, 3, 0 },
		{ false, false, 0, 0 }, { true, false, 7, 2 },
	};
	int bad = 0;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
			bad += check_invariants(v[i], strlen(v[i]), &opts[k]);
	is_int(bad, 0, "nasty fixed inputs keep the invariants");
}

static void test_nul_bytes(void)
{
	static const char q1[] = "SELECT 1\0 FROM t";
	static const char q2[] = "SELECT 'a\0b', 2";
	static const char q3[] = "\0\0\0";
	struct sql_tok_result *r;

	r = tok_opts(q1, sizeof(q1) - 1, &prod);
	ok(strcmp(r->text, "SELECT ?") == 0 && r->digest == 0x1C46AE529DD5A40EULL,
	   "NUL outside a string ends digest_text (as in ProxySQL)");
	r = tok_opts(q2, sizeof(q2) - 1, &prod);
	ok(strcmp(r->text, "SELECT ?,?") == 0 && r->digest == 0xB4E6863D3FF3467CULL,
	   "NUL inside a string is part of the literal");
	ok(r->nlits == 2 && r->lits[0].len == 5, "literal span keeps the NUL");
	r = tok_opts(q3, sizeof(q3) - 1, &prod);
	ok(r->text_len == 0 && r->digest == spooky_hash64("", 0, 0), "only NULs");
}

static void test_garbage_random(void)
{
	static char q[1024];
	static const char sqlish[] = " \t\n\r'\"\\/*#-+,;()?.!`%=0123456789abcexnNULL_";
	struct rng r = { 0x0123456789abcdefULL };
	int bad = 0, n = 30000;

	for (int k = 0; k < n; k++) {
		size_t len = rndn(&r, 2) ? rndn(&r, 64) : rndn(&r, sizeof(q));
		struct sql_tok_opts o = { rndn(&r, 2), rndn(&r, 2), (int)rndn(&r, 5),
					  (int)rndn(&r, 4) };
		bool raw = rndn(&r, 3) == 0;

		for (size_t i = 0; i < len; i++)
			q[i] = raw ? (char)rnd(&r) : sqlish[rndn(&r, sizeof(sqlish) - 1)];
		bad += check_invariants(q, len, &o);
	}
	is_int(bad, 0, "random garbage keeps the invariants");
}

int main(void)
{
	test_reference_table();
	test_vector_table();
	test_rules();
	test_quirks();
	test_options();
	test_literals();
	test_literal_limits();
	test_flags();
	test_ids();
	test_bad_args();
	test_long_text();
	test_long_lists();
	test_grouping_model();
	test_garbage_fixed();
	test_nul_bytes();
	test_garbage_random();
	return done_testing();
}
