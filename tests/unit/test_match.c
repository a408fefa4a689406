/*
 * test_match.c: unit tests for row-precise invalidation's matcher
 * (cache/match.c: canonical forms of literals and row values, a changed
 * row against an entry's constraints), the constraints a fill keeps
 * (cache/match_build.c: the WHERE reader's result resolved with the
 * catalog and the tables' columns) and the index (cache/match_index.c:
 * which entries a changed row retires).
 *
 * Rows are made by hand as the follower decodes them (struct match_img:
 * a table map's column types, values by column); the decoders themselves
 * are tested on real events by test_rowimage.c.
 */
#include <stdlib.h>
#include <string.h>

#include "cache/catalog.h"
#include "cache/inval.h"
#include "cache/match.h"
#include "cache/match_build.h"
#include "cache/match_index.h"
#include "cache/tablemap.h"
#include "cache/tcols.h"
#include "cache/vcols.h"
#include "sql/tables.h"
#include "sql/where_types.h"
#include "tap.h"

/* ---- canonical forms ------------------------------------------------------- */

static struct mc_class cls(uint8_t kind, uint8_t coll, uint8_t flags, uint32_t fixlen)
{
	return (struct mc_class){ kind, coll, 0, flags, fixlen };
}

/* The canonical form of a literal as text ("i:5", "u:...", "d:1.5", "s:ABC",
 * "unsure", "never"). */
static const char *lit(struct mc_class k, unsigned kind, const char *text, size_t len)
{
	static char out[300];
	uint8_t c[MATCH_VAL_MAX + 1];
	size_t n = 0;
	enum mc_canon r = match_canon_literal(&k, kind, text, len, c, &n);

	if (r == MC_UNSURE)
		return "unsure";
	if (r == MC_NEVER)
		return "never";
	if (k.kind == TK_INT) {
		uint64_t u = 0;

		for (int i = 0; i < 8; i++)
			u |= (uint64_t)c[1 + i] << (8 * i);
		if (c[0] == 'u')
			snprintf(out, sizeof(out), "u:%llu", (unsigned long long)u);
		else
			snprintf(out, sizeof(out), "i:%lld", (long long)(int64_t)u);
	} else {
		snprintf(out, sizeof(out), "%c:%.*s", k.kind == TK_DECIMAL ? 'd' : 's', (int)n, (const char *)c);
		for (size_t i = 2; i < 2 + n; i++)
			if (out[i] == 0)
				out[i] = '0';   /* BINARY's padding, visible */
	}
	return out;
}

#define LIT(k, kind, s) lit(k, kind, s, strlen(s))

static bool same_canon(struct mc_class k, const struct rowimg_value *v, unsigned kind, const char *text)
{
	uint8_t a[MATCH_VAL_MAX + 1], b[MATCH_VAL_MAX + 1];
	size_t na = 0, nb = 0;

	return match_canon_value(&k, v, a, &na) == MC_OK &&
	       match_canon_literal(&k, kind, text, strlen(text), b, &nb) == MC_OK && na == nb &&
	       memcmp(a, b, na) == 0;
}

static struct rowimg_value sval(const char *s)
{
	struct rowimg_value v = { .kind = RV_STRING };

	v.v.s.p = (const uint8_t *)s;
	v.v.s.len = strlen(s);
	return v;
}

static void test_canon(void)
{
	struct mc_class i = cls(TK_INT, TCOLL_NONE, 0, 0), u = cls(TK_INT, TCOLL_NONE, MCF_UNSIGNED, 0);
	struct mc_class d = cls(TK_DECIMAL, TCOLL_NONE, 0, 0), ci = cls(TK_CHAR, TCOLL_CI_PAD, 0, 0);
	struct mc_class bin = cls(TK_CHAR, TCOLL_BIN_PAD, 0, 0), nopad = cls(TK_CHAR, TCOLL_BIN_NOPAD, 0, 0);
	struct mc_class uca = cls(TK_CHAR, TCOLL_UCA_PAD, 0, 0), b4 = cls(TK_BYTES, TCOLL_BYTES, 0, 4);
	struct rowimg_value v = { .kind = RV_INT, .v.i = 5 };
	uint8_t raw = 0xFF, c[MATCH_VAL_MAX + 1];
	size_t n;

	ok(strcmp(LIT(i, SQL_WL_INT, "5"), "i:5") == 0 && strcmp(LIT(i, SQL_WL_INT, "-7"), "i:-7") == 0,
	   "an integer literal against an integer column: its value");
	ok(strcmp(LIT(i, SQL_WL_INT, "18446744073709551615"), "u:18446744073709551615") == 0 &&
	   strcmp(LIT(i, SQL_WL_INT, "-9223372036854775808"), "i:-9223372036854775808") == 0 &&
	   strcmp(LIT(i, SQL_WL_INT, "18446744073709551616"), "unsure") == 0,
	   "  ... the whole range; past it: not compared");
	ok(strcmp(LIT(i, SQL_WL_DECIMAL, "5.000"), "i:5") == 0 && strcmp(LIT(i, SQL_WL_DECIMAL, "5.5"), "unsure") == 0,
	   "a decimal literal: its value when its fraction is zero, else not compared");
	ok(strcmp(LIT(i, SQL_WL_STRING, "0123"), "i:123") == 0 && strcmp(LIT(i, SQL_WL_STRING, "5abc"), "unsure") == 0 &&
	   strcmp(LIT(i, SQL_WL_STRING, " 5"), "unsure") == 0 &&
	   strcmp(LIT(i, SQL_WL_STRING, "1234567890123456"), "unsure") == 0,
	   "a string literal: digits only, 15 at most (compared as doubles)");
	ok(strcmp(LIT(i, SQL_WL_FLOAT, "5e0"), "unsure") == 0 && strcmp(LIT(i, SQL_WL_HEX, "0x05"), "unsure") == 0,
	   "float and hex literals: not compared");
	ok(strcmp(LIT(i, SQL_WL_NULL, "NULL"), "never") == 0, "NULL in `=`: never true");
	ok(same_canon(i, &v, SQL_WL_INT, "5") && !same_canon(i, &v, SQL_WL_INT, "6"), "an INT image value and its literal");
	v = (struct rowimg_value){ .kind = RV_UNKNOWN, .why = RV_WHY_SIGN, .raw = &raw, .raw_len = 1 };
	ok(same_canon(u, &v, SQL_WL_INT, "255") && same_canon(i, &v, SQL_WL_INT, "-1"),
	   "signedness not sent: the column's word decodes it");
	v = (struct rowimg_value){ .kind = RV_NULL };
	ok(match_canon_value(&i, &v, c, &n) == MC_NULL && match_canon_value(&ci, &v, c, &n) == MC_NULL,
	   "a NULL value is NULL whatever the column");
	ok(strcmp(LIT(d, SQL_WL_DECIMAL, "001.500"), "d:1.5") == 0 && strcmp(LIT(d, SQL_WL_DECIMAL, "-0.00"), "d:0") == 0 &&
	   strcmp(LIT(d, SQL_WL_DECIMAL, ".5"), "d:0.5") == 0 && strcmp(LIT(d, SQL_WL_INT, "7"), "d:7") == 0 &&
	   strcmp(LIT(d, SQL_WL_DECIMAL, "-3.10"), "d:-3.1") == 0,
	   "decimals in rowimage.h's canonical form");
	v = (struct rowimg_value){ .kind = RV_DECIMAL };
	strcpy(v.dec, "1.5");
	ok(same_canon(d, &v, SQL_WL_DECIMAL, "1.50"), "  ... a DECIMAL image value matches its literal");
	ok(strcmp(LIT(ci, SQL_WL_STRING, "Abc  "), "s:ABC") == 0, "general_ci: case folded, trailing spaces dropped");
	v = sval("aBc");
	ok(same_canon(ci, &v, SQL_WL_STRING, "ABC "), "  ... 'aBc' = 'ABC ', as the server says");
	v = sval("caf\xc3\xa9");
	ok(match_canon_value(&ci, &v, c, &n) == MC_UNSURE && strcmp(LIT(ci, SQL_WL_STRING, "caf\xc3\xa9"), "unsure") == 0,
	   "  ... a byte above 0x7F (accents fold onto letters): not compared");
	v = sval("abc");
	ok(!same_canon(bin, &v, SQL_WL_STRING, "ABC") && same_canon(bin, &v, SQL_WL_STRING, "abc  "),
	   "_bin with PAD SPACE: case counts, trailing spaces do not");
	ok(!same_canon(nopad, &v, SQL_WL_STRING, "abc "), "  ... NO PAD: trailing spaces count");
	v = sval("caf\xc3\xa9");
	ok(match_canon_value(&bin, &v, c, &n) == MC_OK, "  ... an image's bytes above 0x7F are compared under _bin");
	ok(strcmp(LIT(uca, SQL_WL_STRING, "Ab9"), "s:AB9") == 0 && strcmp(LIT(uca, SQL_WL_STRING, "a-b"), "unsure") == 0,
	   "Unicode collations: letters and digits only");
	v = sval("ab");
	ok(!same_canon(b4, &v, SQL_WL_STRING, "ab") && same_canon(b4, &v, SQL_WL_STRING, "ab\0\0") == false,
	   "BINARY(4): the image is padded with 0x00 (a literal 'ab' matches no row)");
	ok(match_canon_value(&b4, &v, c, &n) == MC_OK && n == 4 && c[2] == 0 && c[3] == 0, "  ... padded to 4 bytes");
	ok(match_canon_literal(&b4, SQL_WL_STRING, "ab\0\0", 4, c, &n) == MC_OK && n == 4, "  ... 'ab\\0\\0' is 4 bytes");
	ok(strcmp(LIT(ci, SQL_WL_INT, "5"), "unsure") == 0, "a number against a string column: not compared");
	v = (struct rowimg_value){ .kind = RV_DOUBLE, .v.d = 1.0 };
	ok(match_canon_value(&i, &v, c, &n) == MC_UNSURE, "a value of another kind: not compared");
	ok(tcoll_of("utf8mb4_general_ci") == TCOLL_CI_PAD && tcoll_of("latin1_swedish_ci") == TCOLL_CI_PAD &&
	   tcoll_of("utf8mb4_bin") == TCOLL_BIN_PAD && tcoll_of("utf8mb4_nopad_bin") == TCOLL_BIN_NOPAD &&
	   tcoll_of("utf8mb4_0900_ai_ci") == TCOLL_UCA_NOPAD && tcoll_of("utf8mb4_uca1400_ai_ci") == TCOLL_UCA_PAD &&
	   tcoll_of("utf8mb4_general_nopad_ci") == TCOLL_CI_NOPAD && tcoll_of("binary") == TCOLL_BYTES &&
	   tcoll_of("sjis_japanese_ci") == TCOLL_UNKNOWN && tcoll_of("utf8mb4_german2_ci") == TCOLL_UNKNOWN,
	   "collation names: what each compares");
}

/* ---- constraints and rows ------------------------------------------------------ */

static const struct catalog_row rows[] = {
	{ 'T', "db", "t", NULL, NULL, NULL },
	{ 'T', "db", "u", NULL, NULL, NULL },
	{ 'V', "db", "v", "SELECT * FROM t", NULL, NULL },
};

enum { C_ID, C_K, C_NAME, C_B, C_D, C_F, C_G, NCOLS };
static struct inval_table *T, *U;
static struct tmap map;
static struct tmap_col map_cols[NCOLS];

static void setup(void)
{
	struct tcols *c;

	inval_init();
	catalog_start();
	catalog_load_rows(rows, sizeof(rows) / sizeof(rows[0]), false);
	T = inval_table_get("db", 2, "t", 1);
	U = inval_table_get("db", 2, "u", 1);
	c = tcols_new("db", "t", NCOLS, 64);
	tcols_set(c, C_ID, "id", "int", "int(11)", NULL, NULL, false);
	tcols_set(c, C_K, "k", "int", "int(10) unsigned", NULL, NULL, false);
	tcols_set(c, C_NAME, "name", "varchar", "varchar(20)", "utf8mb4_general_ci", "80", false);
	tcols_set(c, C_B, "b", "binary", "binary(4)", "binary", "4", false);
	tcols_set(c, C_D, "d", "decimal", "decimal(10,2)", NULL, NULL, false);
	tcols_set(c, C_F, "f", "float", "float", NULL, NULL, false);
	tcols_set(c, C_G, "g", "int", "int(11)", NULL, NULL, true);
	tcols_install(T, c, vcols_generation());
	c = tcols_new("db", "u", 2, 16);
	tcols_set(c, 0, "id", "int", "int(11)", NULL, NULL, false);
	tcols_set(c, 1, "tid", "int", "int(11)", NULL, NULL, false);
	tcols_install(U, c, vcols_generation());
	map_cols[C_ID].real = TT_LONG;
	map_cols[C_K].real = TT_LONG;
	map_cols[C_NAME].real = TT_VARCHAR;
	map_cols[C_B].real = TT_STRING;
	map_cols[C_D].real = TT_NEWDECIMAL;
	map_cols[C_F].real = TT_FLOAT;
	map_cols[C_G].real = TT_LONG;
	map.ncols = NCOLS;
	map.cols = map_cols;
}

/* The constraints of sql on (t, u), as the admin shows them (with
 * build_params: an execute's parameters). */
static struct fill_deps deps;
static const struct match_params *build_params;

static const char *names(void *arg, unsigned dep, int col)
{
	static const char *const tcols[] = { "id", "k", "name", "b", "d", "f", "g" };

	(void)arg;
	if (col < 0)
		return dep == 0 ? "t" : "u";
	return dep == 0 && col < NCOLS ? tcols[col] : dep == 1 && col < 2 ? (col ? "tid" : "id") : NULL;
}

static const char *build(const char *sql)
{
	static char out[600];
	struct sql_tables t;

	memset(&deps, 0, sizeof(deps));
	deps.n = 2;
	deps.d[0].t = T;
	deps.d[1].t = U;
	sql_tables(sql, strlen(sql), &t);
	match_build(sql, strlen(sql), &t, "db", build_params, &deps);
	if (!deps.cons.len)
		return "none";
	match_format(deps.cons.buf, deps.cons.len, deps.cons.ntab, names, NULL, out, sizeof(out));
	return out;
}

struct tcase {
	const char *sql, *want;
};

static const struct tcase cases[] = {
	{ "SELECT * FROM t WHERE id = 5", "t: id IN (5)" },
	{ "SELECT * FROM t WHERE ID = '5' AND k IN (1, 2, 2)", "t: id IN (5) AND k IN (1,2)" },
	{ "SELECT * FROM t WHERE name = 'Abc ' AND d = 1.50", "t: name IN ('ABC') [ci] AND d IN (1.5)" },
	{ "SELECT * FROM t WHERE name = 'x' COLLATE utf8mb4_bin", "t: name IN ('x') [bin]" },
	{ "SELECT * FROM t WHERE b = 'ab'", "t: b IN ('ab') [bytes]" },
	{ "SELECT * FROM t WHERE name IS NULL", "t: name IS NULL" },
	{ "SELECT * FROM t WHERE id = NULL", "t: id IN () (never true)" },
	{ "SELECT * FROM t WHERE id IN (1, NULL)", "t: id IN (1)" },
	{ "SELECT * FROM t WHERE f = 1 AND id = 2", "t: id IN (2)" },
	{ "SELECT * FROM t WHERE f = 1", "none" },
	{ "SELECT * FROM t WHERE id = 'x5'", "none" },
	{ "SELECT * FROM t WHERE id = ?", "none" },
	{ "SELECT * FROM t WHERE t.nope = 1 AND id = 2", "none" },
	{ "SELECT * FROM t WHERE id IN (SELECT tid FROM u WHERE nope = 3) AND id = 4", "t: id IN (4)" },
	{ "SELECT * FROM t JOIN u ON u.tid = t.id WHERE t.id = 7", "t: id IN (7); u: tid IN (7)" },
	{ "SELECT * FROM t JOIN u ON u.tid = t.k WHERE t.k = 7", "t: k IN (7)" },
	{ "SELECT * FROM v WHERE id = 1", "none" },
	{ "SELECT * FROM v JOIN t ON 1 WHERE t.id = 1", "none" },
	{ "SELECT * FROM t WHERE name = \"x\"", "none" },
	{ "SELECT * FROM t WHERE name = _latin1'x'", "none" },
	{ "SELECT * FROM t WHERE id = 1 OR k = 2", "none" },
	{ "SELECT * FROM t WHERE id = 1 UNION SELECT * FROM t WHERE id = 2", "t: id IN (1,2)" },
	{ "SELECT * FROM t WHERE id > 1", "none" },
};

/* A row image: values by column, present or not. */
struct img {
	struct rowimg_value v[NCOLS];
	uint32_t seen[NCOLS];
	struct match_img mi;
};

static void img_init(struct img *x)
{
	memset(x, 0, sizeof(*x));
	x->mi = (struct match_img){ .map = &map, .v = x->v, .seen = x->seen, .stamp = 1,
				    .name_hash = tcols_name_hash("db", 2, "t", 1) };
}

static void img_int(struct img *x, unsigned col, int64_t v)
{
	x->v[col] = (struct rowimg_value){ .col = col, .kind = RV_INT, .v.i = v };
	x->seen[col] = 1;
}

static void img_str(struct img *x, unsigned col, const char *s)
{
	x->v[col] = sval(s);
	x->v[col].col = col;
	x->seen[col] = 1;
}

static void img_null(struct img *x, unsigned col)
{
	x->v[col] = (struct rowimg_value){ .col = col, .kind = RV_NULL };
	x->seen[col] = 1;
}

static enum match_verdict verdict(const char *sql, const struct img *x)
{
	struct mc_tab t;

	build(sql);
	if (!deps.cons.len)
		return MV_UNSURE;
	t = match_tab_at(deps.cons.buf);
	return match_table(&t, deps.cons.buf, &x->mi);
}

static void test_rows(void)
{
	struct img x, before;

	img_init(&x);
	img_int(&x, C_ID, 5);
	img_int(&x, C_K, 2);
	img_str(&x, C_NAME, "aBc");
	ok(verdict("SELECT * FROM t WHERE id = 5", &x) == MV_YES, "a row with id 5 satisfies id = 5");
	ok(verdict("SELECT * FROM t WHERE id = 6", &x) == MV_NO, "  ... not id = 6");
	ok(verdict("SELECT * FROM t WHERE k IN (1, 2) AND name = 'ABC '", &x) == MV_YES,
	   "IN and a case-insensitive name: satisfied");
	ok(verdict("SELECT * FROM t WHERE k IN (1, 3) AND name = 'ABC'", &x) == MV_NO, "  ... one condition false: not");
	ok(verdict("SELECT * FROM t WHERE id = 5 AND d = 1", &x) == MV_UNSURE,
	   "a column absent from the image (MINIMAL): unsure, a match");
	ok(verdict("SELECT * FROM t WHERE id = 6 AND d = 1", &x) == MV_NO, "  ... unless another condition is false");
	ok(verdict("SELECT * FROM t WHERE name IS NULL", &x) == MV_NO, "IS NULL: a value is not NULL");
	img_null(&x, C_NAME);
	ok(verdict("SELECT * FROM t WHERE name IS NULL", &x) == MV_YES, "  ... NULL is");
	ok(verdict("SELECT * FROM t WHERE name = 'x'", &x) == MV_NO, "NULL equals nothing");
	ok(verdict("SELECT * FROM t WHERE id = NULL", &x) == MV_NO, "`= NULL` is never true");
	img_str(&x, C_NAME, "\xc3\x89T\xc3\x89");
	ok(verdict("SELECT * FROM t WHERE name = 'ETE'", &x) == MV_UNSURE, "an accented value under general_ci: unsure");
	map_cols[C_ID].real = TT_LONGLONG;
	ok(verdict("SELECT * FROM t WHERE id = 6", &x) == MV_UNSURE,
	   "a table map whose column type differs from the resolved one: unsure");
	map_cols[C_ID].real = TT_LONG;
	map.ncols = NCOLS - 1;
	ok(verdict("SELECT * FROM t WHERE id = 6", &x) == MV_UNSURE, "  ... a column count that differs: unsure");
	map.ncols = NCOLS;
	x.mi.name_hash = tcols_name_hash("db", 2, "T", 1);
	ok(verdict("SELECT * FROM t WHERE id = 6", &x) == MV_UNSURE, "  ... a table spelt otherwise: unsure");
	/* an UPDATE's after image under MINIMAL: the columns it did not set */
	img_init(&before);
	img_int(&before, C_ID, 5);
	img_int(&before, C_G, 1);
	img_init(&x);
	img_int(&x, C_K, 9);
	x.mi.before = &before.mi;
	ok(verdict("SELECT * FROM t WHERE id = 5 AND k = 9", &x) == MV_YES,
	   "an after image lacking a column: the before image's value (unchanged)");
	ok(verdict("SELECT * FROM t WHERE id = 6 AND k = 9", &x) == MV_NO, "  ... which can rule it out");
	ok(verdict("SELECT * FROM t WHERE g = 2 AND k = 9", &x) == MV_UNSURE,
	   "  ... but a generated column's is not taken: unsure");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = build(cases[i].sql);

		ok(strcmp(got, cases[i].want) == 0, "%s -> %s%s%s", cases[i].sql, got,
		   strcmp(got, cases[i].want) ? " WANT " : "", strcmp(got, cases[i].want) ? cases[i].want : "");
	}
}

/* ---- an execute's parameters ------------------------------------------------ */

static void test_params(void)
{
	/* id = ? AND name = ?: LONG 5, VAR_STRING 'abc' */
	static const uint8_t nulls0[1] = { 0 }, types0[4] = { 3, 0, 253, 0 };
	static const uint8_t vals0[] = { 5, 0, 0, 0, 3, 'a', 'b', 'c' };
	/* id = ? with NULL; k = ? TINY -1 (signed) and UNSIGNED 255 */
	static const uint8_t nulls1[1] = { 1 }, types1[4] = { 3, 0, 1, 0 }, vals1[] = { 0xff };
	static const uint8_t types2[2] = { 1, 0x80 }, vals2[] = { 0xff };
	static const uint8_t types3[2] = { 5, 0 }, vals3[8] = { 0 };
	static const uint8_t types4[2] = { 246, 0 }, vals4[] = { 4, '1', '.', '5', '0' };
	struct match_params p0 = { 2, nulls0, types0, vals0, vals0 + sizeof(vals0) };
	struct match_params p1 = { 2, nulls1, types1, vals1, vals1 + sizeof(vals1) };
	struct match_params p2 = { 1, nulls0, types2, vals2, vals2 + sizeof(vals2) };
	struct match_params p3 = { 1, nulls0, types3, vals3, vals3 + sizeof(vals3) };
	struct match_params p4 = { 1, nulls0, types4, vals4, vals4 + sizeof(vals4) };
	struct match_params cut = { 2, nulls0, types0, vals0, vals0 + 6 };

	build_params = &p0;
	ok(strcmp(build("SELECT * FROM t WHERE id = ? AND name = ?"), "t: id IN (5) AND name IN ('ABC') [ci]") == 0,
	   "an execute: its placeholders take their bound values (%s)", build("SELECT * FROM t WHERE id = ? AND name = ?"));
	build_params = &p1;
	ok(strcmp(build("SELECT * FROM t WHERE id = ? AND k = ?"), "t: id IN () AND k IN (-1) (never true)") == 0,
	   "  ... NULL in `=`: never true; a signed TINY -1 (%s)", build("SELECT * FROM t WHERE id = ? AND k = ?"));
	ok(strcmp(build("SELECT * FROM t WHERE id <=> ? AND k = ?"), "t: id IS NULL AND k IN (-1)") == 0,
	   "  ... NULL in `<=>`: IS NULL (%s)", build("SELECT * FROM t WHERE id <=> ? AND k = ?"));
	build_params = &p2;
	ok(strcmp(build("SELECT * FROM t WHERE id = ?"), "t: id IN (255)") == 0, "  ... an unsigned TINY 255");
	build_params = &p3;
	ok(strcmp(build("SELECT * FROM t WHERE id = ?"), "none") == 0, "  ... a DOUBLE: not compared, no constraint");
	build_params = &p4;
	ok(strcmp(build("SELECT * FROM t WHERE d = ?"), "t: d IN (1.5)") == 0, "  ... a DECIMAL '1.50'");
	build_params = &cut;
	ok(strcmp(build("SELECT * FROM t WHERE id = ? AND name = ?"), "t: id IN (5)") == 0,
	   "  ... a value cut short: its condition dropped");
	build_params = NULL;
	ok(strcmp(build("SELECT * FROM t WHERE id = ?"), "none") == 0, "a text statement's `?`: no constraint");
}

/* ---- the index ---------------------------------------------------------------- */

struct fake {
	_Atomic uint64_t epoch;
	struct match_cons cons;
	struct inval_dep deps[2];
	struct mpost posts[32];
	uint32_t mask;
};

static void fake_entry(struct fake *f, const char *sql)
{
	build(sql);
	atomic_init(&f->epoch, 7);
	f->cons = deps.cons;
	f->deps[0].t = T;
	f->deps[1].t = U;
	f->mask = match_index_add(f->cons.buf, f->cons.len, f->cons.ntab, f->deps, 2, f->posts, f->cons.npost,
				  &f->epoch);
}

static void test_index(void)
{
	static struct fake e1, e2, e3, e4, e5;
	struct img x;
	uint64_t matched = 0, unsure = 0, before = match_index_postings();

	fake_entry(&e1, "SELECT * FROM t WHERE id = 1");
	fake_entry(&e2, "SELECT * FROM t WHERE id = 2");
	fake_entry(&e3, "SELECT * FROM t WHERE id IN (2, 3) AND name = 'x'");
	fake_entry(&e4, "SELECT * FROM t WHERE name IS NULL");
	fake_entry(&e5, "SELECT * FROM t WHERE id = NULL");
	ok(e1.mask == 1 && e3.mask == 1 && e5.mask == 1, "entries indexed by their constraint on t");
	ok(match_index_postings() == before + 4,
	   "  ... one posting per value of the condition of fewest values; none for `= NULL` (%llu)",
	   (unsigned long long)(match_index_postings() - before));
	img_init(&x);
	img_int(&x, C_ID, 2);
	img_str(&x, C_NAME, "y");
	match_index_row(T, &x.mi, &matched, &unsure);
	ok(atomic_load(&e2.epoch) == 0 && atomic_load(&e1.epoch) == 7 && atomic_load(&e3.epoch) == 7 &&
	   atomic_load(&e4.epoch) == 7 && atomic_load(&e5.epoch) == 7 && matched == 1,
	   "a row with id 2, name 'y': only the entry of id = 2 is retired");
	img_str(&x, C_NAME, "X");
	match_index_row(T, &x.mi, &matched, &unsure);
	ok(atomic_load(&e3.epoch) == 0 && atomic_load(&e1.epoch) == 7 && matched == 2,
	   "  ... name 'X': the entry of id IN (2,3) AND name = 'x' too");
	img_init(&x);
	img_int(&x, C_ID, 99);
	img_null(&x, C_NAME);
	match_index_row(T, &x.mi, &matched, &unsure);
	ok(atomic_load(&e4.epoch) == 0 && atomic_load(&e1.epoch) == 7 && unsure == 0 && matched == 3,
	   "a row with a NULL name: the IS NULL entry");
	img_init(&x);
	img_int(&x, C_K, 1);
	match_index_row(T, &x.mi, &matched, &unsure);
	ok(atomic_load(&e1.epoch) == 0 && atomic_load(&e5.epoch) == 7 && unsure == 1,
	   "a row without id: every entry indexed by id may match (unsure); `= NULL` never");
	match_index_forget(e1.posts, e1.cons.npost);
	match_index_forget(e2.posts, e2.cons.npost);
	match_index_forget(e3.posts, e3.cons.npost);
	match_index_forget(e4.posts, e4.cons.npost);
	match_index_forget(e5.posts, e5.cons.npost);
	ok(match_index_postings() == before, "forgotten entries leave no posting");
	atomic_store(&e1.epoch, 7);
	img_init(&x);
	img_int(&x, C_ID, 1);
	match_index_row(T, &x.mi, &matched, &unsure);
	ok(atomic_load(&e1.epoch) == 7, "  ... and are not found by a row any more");
}

int main(void)
{
	test_canon();
	setup();
	test_rows();
	test_params();
	test_index();
	return done_testing();
}
