/*
 * test_consist.c: unit tests for the catalog (cache/catalog.c: views
 * resolved to base tables, a view that cannot be cached, cascading foreign
 * keys and trigger writes closed transitively, routines that may create
 * temporary tables) and a session's consistency state (cache/consist.c:
 * write sets invalidated when the answer is complete, again when a
 * transaction ends; temporary tables created, dropped, renamed; reads of
 * them never resolved to cacheable dependencies).
 */
#include <string.h>

#include "cache/catalog.h"
#include "cache/consist.h"
#include "cache/inval.h"
#include "cache/tcols.h"
#include "config/config.h"
#include "sql/stmt.h"
#include "tap.h"

static const struct catalog_row rows[] = {
	{ 'T', "db", "t1", NULL, NULL, NULL },
	{ 'T', "db", "t2", NULL, NULL, NULL },
	{ 'T', "db", "parent", NULL, NULL, NULL },
	{ 'T', "db", "child", NULL, NULL, NULL },
	{ 'T', "db", "grandchild", NULL, NULL, NULL },
	{ 'T', "db", "restricted", NULL, NULL, NULL },
	{ 'T', "db", "src", NULL, NULL, NULL },
	{ 'T', "db", "log", NULL, NULL, NULL },
	{ 'T', "db", "opaque_src", NULL, NULL, NULL },
	{ 'T', "other", "t1", NULL, NULL, NULL },
	{ 'T', "db", "trg_temp", NULL, NULL, NULL },
	{ 'T', "db", "trg_plain", NULL, NULL, NULL },
	{ 'T', "db", "trg_child", NULL, NULL, NULL },
	{ 'T', "db", "trg_call", NULL, NULL, NULL },
	{ 'F', "db", "trg_child", "db", "trg_plain", "CASCADE,CASCADE" },
	{ 'R', "db", "trg_temp", "db", "SET NEW.a = db.mk_temp(NEW.a)", NULL },
	{ 'R', "db", "trg_plain", "db", "BEGIN IF (NEW.a > 0) THEN SET NEW.a = pure(NEW.a); END IF; "
	  "INSERT INTO log (x) VALUES (1); END", NULL },
	{ 'R', "db", "trg_child", "db", "SET NEW.a = ABS(NEW.a)", NULL },
	{ 'R', "db", "trg_call", "db", "CALL not_there()", NULL },
	{ 'P', "db", "mk_temp", "FUNCTION", "BEGIN CREATE TEMPORARY TABLE x (a INT); RETURN 1; END", NULL },
	{ 'P', "db", "pure", "FUNCTION", "RETURN x + 1", NULL },
	{ 'V', "db", "v1", "select `t1`.`a` AS `a` from `db`.`t1` join `other`.`t1`", NULL, NULL },
	{ 'V', "db", "v2", "select a from v1 where a > 1", NULL, NULL },
	{ 'V', "db", "vnow", "select now(6) AS `n`", NULL, NULL },
	{ 'V', "db", "vv", "select n from vnow", NULL, NULL },
	{ 'V', "db", "vbad", "select a from gone", NULL, NULL },
	{ 'V', "db", "vempty", "", NULL, NULL },
	{ 'T', "db", "seq1", "SEQUENCE", NULL, NULL },
	{ 'V', "db", "vseq", "select next_not_cached_value from seq1", NULL, NULL },
	{ 'F', "db", "child", "db", "parent", "RESTRICT,CASCADE" },
	{ 'F', "db", "grandchild", "db", "child", "CASCADE,SET NULL" },
	{ 'F', "db", "restricted", "db", "parent", "RESTRICT,RESTRICT" },
	{ 'R', "db", "src", "db", "BEGIN INSERT INTO log (x) VALUES (NEW.id); END", NULL },
	{ 'R', "db", "opaque_src", "db", "BEGIN SET @x = db_fn(NEW.id); END", NULL },
	{ 'P', "db", "plain", "PROCEDURE", "BEGIN UPDATE t1 SET a = a + 1; END", NULL },
	{ 'P', "db", "maketemp", "PROCEDURE", "BEGIN CREATE TEMPORARY TABLE x (a INT); END", NULL },
	{ 'P', "db", "nested", "PROCEDURE", "BEGIN CALL plain(); END", NULL },
};

static bool has(struct inval_table **v, unsigned n, const char *schema, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(inval_table_schema(v[i]), schema) == 0 && strcmp(inval_table_name(v[i]), name) == 0)
			return true;
	return false;
}

/* the last reads() reason's record (its id and permanence) */
static const struct reason *last_why;

static bool reads(const char *sql, const char *schema, struct inval_table **out, unsigned *n,
		  const char **reason)
{
	struct sql_tables t;
	bool resolved;

	last_why = NULL;
	sql_tables(sql, strlen(sql), &t);
	resolved = catalog_resolve_reads(&t, schema, out, INVAL_MAX_DEPS, n, &last_why, NULL);
	*reason = last_why ? last_why->text : NULL;
	return resolved;
}

/* A write to a sequence resolves to the sequence itself like any table's. */
static void writes_of_sequence(struct inval_table **out, unsigned *n)
{
	struct sql_tables t;
	bool opaque = false;

	sql_tables("DO SETVAL(seq1, 5)", 18, &t);
	catalog_resolve_writes(&t, "db", out, CONSIST_MAX_WRITES, n, &opaque);
	ok(*n == 1 && has(out, *n, "db", "seq1") && !opaque, "DO SETVAL(seq1, 5) writes the sequence");
}

static void test_reads(void)
{
	struct inval_table *out[INVAL_MAX_DEPS];
	unsigned n;
	const char *why;

	ok(reads("SELECT * FROM t1 JOIN other.t1", "db", out, &n, &why) && n == 2 &&
	   has(out, n, "db", "t1") && has(out, n, "other", "t1"), "reads: two tables, schema-qualified");
	ok(reads("SELECT * FROM v2", "db", out, &n, &why) && n == 4 && has(out, n, "db", "v2") &&
	   has(out, n, "db", "v1") && has(out, n, "db", "t1") && has(out, n, "other", "t1"),
	   "a view of a view: the views themselves and the base tables");
	ok(!reads("SELECT n FROM vnow", "db", out, &n, &why) && why &&
	   strcmp(why, "view db.vnow: non-deterministic function") == 0, "a view over NOW(6): %s", why);
	ok(last_why && last_why->id == WHY_VIEW && last_why->permanent,
	   "  its reason is of kind view, which is permanent for the shape");
	ok(!reads("SELECT n FROM vv", "db", out, &n, &why) && why && strstr(why, "view db.vnow"),
	   "a view over that view: the reason names the inner view");
	ok(!reads("SELECT a FROM vbad", "db", out, &n, &why) && why && strstr(why, "gone"),
	   "a view over a missing table: %s", why);
	ok(!reads("SELECT a FROM vempty", "db", out, &n, &why) && why && strstr(why, "not readable"),
	   "a view whose definition cannot be read: %s", why);
	ok(!reads("SELECT * FROM seq1", "db", out, &n, &why) && why &&
	   strcmp(why, "db.seq1 is a sequence: every NEXT VALUE changes it, a column's DEFAULT too") == 0,
	   "a sequence: not cached, the reason names it");
	ok(last_why && last_why->id == WHY_SEQUENCE && !last_why->permanent,
	   "  of kind sequence, for this time only (it may become a table)");
	ok(!reads("SELECT * FROM vseq", "db", out, &n, &why) && why && strstr(why, "view db.vseq: db.seq1 is a sequence"),
	   "a view over a sequence: not cached, the reason names both");
	writes_of_sequence(out, &n);
	ok(!reads("SELECT * FROM nothere", "db", out, &n, &why) && why && strstr(why, "no known table"),
	   "a name that is no table: %s", why);
	ok(reads("SELECT * FROM seq_1_to_10 JOIN t1 JOIN seq_0_to_99_step_3", "db", out, &n, &why) && n == 1,
	   "the SEQUENCE engine's seq_M_to_N tables: no dependency");
	ok(!reads("SELECT * FROM seq_1_to", "db", out, &n, &why), "  ... only that pattern");
	ok(!reads("SELECT * FROM t1", "", out, &n, &why) && why && strcmp(why, "no database selected") == 0,
	   "no schema selected");
	ok(!reads("SELECT * FROM ?", "db", out, &n, &why) && why && strcmp(why, "cannot determine the tables") == 0,
	   "cannot determine: not resolved");
	catalog_changed();
	ok(!reads("SELECT * FROM t1", "db", out, &n, &why) && why && strstr(why, "after DDL"),
	   "after a DDL, until the catalog is read again: not resolved");
	catalog_load_rows(rows, sizeof(rows) / sizeof(rows[0]), false);
}

static void writes(const char *sql, struct inval_table **out, unsigned *n, bool *opaque)
{
	struct sql_tables t;

	*opaque = false;
	sql_tables(sql, strlen(sql), &t);
	catalog_resolve_writes(&t, "db", out, CONSIST_MAX_WRITES, n, opaque);
}

static void test_writes(void)
{
	struct inval_table *out[CONSIST_MAX_WRITES];
	unsigned n;
	bool opaque;

	writes("DELETE FROM parent WHERE id = 1", out, &n, &opaque);
	ok(n == 3 && has(out, n, "db", "parent") && has(out, n, "db", "child") &&
	   has(out, n, "db", "grandchild") && !opaque,
	   "a write to a parent: the cascading children, transitively (not a RESTRICT one)");
	writes("INSERT INTO src VALUES (1)", out, &n, &opaque);
	ok(n == 2 && has(out, n, "db", "log") && !opaque, "a write to a table with a trigger: its target too");
	writes("INSERT INTO opaque_src VALUES (1)", out, &n, &opaque);
	ok(opaque, "a trigger calling a stored function: the writes are not all known");
	writes("UPDATE v1 SET a = 1", out, &n, &opaque);
	ok(has(out, n, "db", "v1") && has(out, n, "db", "t1") && has(out, n, "other", "t1"),
	   "a write through a view: its base tables");
	writes("INSERT INTO brand_new VALUES (1)", out, &n, &opaque);
	ok(n == 1 && has(out, n, "db", "brand_new"), "a table the catalog does not know yet: itself");
	ok(!catalog_routine_may_create_temps("db", 2, "plain", 5), "a routine that creates no temporary table");
	ok(catalog_routine_may_create_temps("db", 2, "maketemp", 8), "one that does");
	ok(catalog_routine_may_create_temps("db", 2, "nested", 6), "one that calls another");
	ok(catalog_routine_may_create_temps("db", 2, "unknown", 7), "an unknown one: may");
	{
		struct sql_tables t;

		sql_tables("INSERT INTO trg_temp VALUES (1)", 31, &t);
		ok(catalog_writes_may_create_temps(&t, "db"),
		   "a write firing a trigger whose routine creates a temporary table: may create one");
		sql_tables("UPDATE trg_plain SET a = 2", 26, &t);
		ok(!catalog_writes_may_create_temps(&t, "db"),
		   "  ... one whose routine creates none (IF ( is no call): may not");
		sql_tables("DELETE FROM trg_call", 20, &t);
		ok(catalog_writes_may_create_temps(&t, "db"), "  ... CALL of a routine the catalog does not have: may");
		sql_tables("SELECT * FROM trg_temp", 22, &t);
		ok(!catalog_writes_may_create_temps(&t, "db"), "  ... a read: may not");
	}
}

/* The reading of sql (sql/stmt.h), as the cache hands it over. */
static const struct stmt *rd(const char *sql)
{
	static struct stmt st;

	stmt_begin(&st, sql, strlen(sql));
	stmt_read(&st);
	return &st;
}

static void statement(struct consist *s, const char *sql, bool in_txn)
{
	consist_statement(s, rd(sql), false, "db");
	consist_done(s, in_txn, true);
}

/* Statements that invalidate everything in writes mode, and look-alikes
 * that do not. */
static const struct {
	const char *sql;
	bool all;
	const char *name;
} flush_cases[] = {
	{ "FLUSH TABLES", true, "FLUSH TABLES: everything (a table opened again may warn)" },
	{ "/* x */ flush local table t1", true, "  ... FLUSH LOCAL TABLE t1 too" },
	{ "FLUSH PRIVILEGES", false, "  ... not FLUSH PRIVILEGES" },
	{ "REPAIR TABLE t1 USE_FRM", true, "REPAIR TABLE: everything (its data may come back otherwise)" },
	{ "SET GLOBAL ft_boolean_syntax = ' +-><()~*:\"\"&|'", true,
	  "SET GLOBAL ft_boolean_syntax: everything (MATCH ... IN BOOLEAN MODE reads it)" },
	{ "set @@global.FT_BOOLEAN_SYNTAX=DEFAULT", true, "  ... @@global.FT_BOOLEAN_SYNTAX too" },
	{ "SET GLOBAL max_connections = 100", false, "  ... not another global" },
	{ "SELECT 'ft_boolean_syntax'", false, "  ... nor a read that names it in a string" },
};

static void test_session(void)
{
	struct consist s;
	struct fill_deps d;
	struct inval_table *t1 = inval_table_get("db", 2, "t1", 2);
	uint64_t g;

	inval_set_mode(INVAL_WRITES);
	consist_init(&s);
	consist_set_schema(&s, "db");
	g = atomic_load(&t1->gen);
	statement(&s, "UPDATE t1 SET a = 1", false);
	ok(atomic_load(&t1->gen) > g, "a write invalidates its table when its answer is complete");
	g = atomic_load(&t1->gen);
	statement(&s, "UPDATE t1 SET a = 2", true);
	ok(atomic_load(&t1->gen) == g + 1, "inside a transaction: at the write");
	statement(&s, "SELECT 1", true);
	ok(atomic_load(&t1->gen) == g + 1, "  ... not again while it is open");
	statement(&s, "COMMIT", false);
	ok(atomic_load(&t1->gen) == g + 2, "  ... and again when it ends");

	ok(consist_read_deps(&s, rd("SELECT * FROM t1"), "db", &d, NULL) == NULL && d.n == 1,
	   "a read resolves to its table");
	statement(&s, "CREATE TEMPORARY TABLE t1 (a INT)", false);
	ok(consist_has_temps(&s), "CREATE TEMPORARY TABLE: the session has temporary tables");
	ok(consist_read_deps(&s, rd("SELECT * FROM t1"), "db", &d, NULL) != NULL,
	   "a read of the temporary table's name is not resolved");
	ok(consist_read_deps(&s, rd("SELECT * FROM db.t1"), "db", &d, NULL) != NULL, "  ... qualified too");
	ok(consist_read_deps(&s, rd("SELECT * FROM t2"), "db", &d, NULL) == NULL, "another table still is");
	statement(&s, "RENAME TABLE t1 TO t9", false);
	catalog_load_rows(rows, sizeof(rows) / sizeof(rows[0]), false); /* the reload DDL asks for */
	ok(consist_read_deps(&s, rd("SELECT * FROM t1"), "db", &d, NULL) == NULL &&
	   consist_read_deps(&s, rd("SELECT * FROM t9"), "db", &d, NULL) != NULL,
	   "RENAME of the temporary table: the new name is the temporary one");
	statement(&s, "DROP TABLE t9", false);
	ok(!consist_has_temps(&s), "DROP TABLE of it: none left");
	ok(!catalog_ready(), "after DDL the catalog is stale until read again");
	g_config.auto_cache = false;
	ok(!consist_wants_catalog(rd("CALL plain()")) && !consist_wants_catalog(rd("UPDATE t1 SET a = 1")),
	   "nothing can be cached: no statement waits for the catalog");
	g_config.auto_cache = true;
	ok(consist_wants_catalog(rd("CALL plain()")) && consist_wants_catalog(rd("UPDATE t1 SET a = 1")) &&
	   !consist_wants_catalog(rd("SELECT * FROM t1")),
	   "auto-cache: a CALL or a write waits for it, a plain read does not");
	g = atomic_load(&t1->gen);
	{
		uint64_t e = inval_epoch();

		statement(&s, "UPDATE t1 SET a = 4", false);
		ok(atomic_load(&t1->gen) > g && inval_epoch() > e,
		   "a write with the catalog stale: its table, and everything (triggers unknown)");
	}
	ok(consist_has_temps(&s) && !s.temps_unknown,
	   "  ... and whether its triggers made temporary tables is left to the next read");
	catalog_load_rows(rows, sizeof(rows) / sizeof(rows[0]), false); /* the read it waited for */
	ok(!consist_wants_catalog(rd("CALL plain()")), "once read: no wait");
	ok(consist_read_deps(&s, rd("SELECT * FROM t2"), "db", &d, NULL) != NULL && s.temps_unknown,
	   "  ... a catalog with a routine that creates temporary tables: the session may have some");
	consist_reset(&s);
	g_config.auto_cache = false;
	statement(&s, "CALL plain()", false);
	ok(!consist_has_temps(&s), "CALL of a routine that creates none: still none");
	statement(&s, "CALL maketemp()", false);
	ok(consist_has_temps(&s) && consist_read_deps(&s, rd("SELECT * FROM t2"), "db", &d, NULL) != NULL,
	   "CALL of one that does: every read goes upstream");
	consist_reset(&s);
	ok(!consist_has_temps(&s), "COM_RESET_CONNECTION: none");
	g = inval_epoch();
	statement(&s, "EXECUTE IMMEDIATE 'UPDATE t2 SET a = 1'", false);
	ok(inval_epoch() > g, "writes mode: a statement whose writes are unknown invalidates everything");
	{
		static const struct catalog_row plain_rows[] = {
			{ 'T', "db", "t1", NULL, NULL, NULL }, { 'T', "db", "t2", NULL, NULL, NULL },
		};

		consist_reset(&s);
		catalog_changed();
		statement(&s, "UPDATE t1 SET a = 5", false);
		ok(s.temps_pending && !s.temps_unknown, "a write with the catalog stale: temporary tables undecided");
		ok(consist_read_deps(&s, rd("SELECT * FROM t2"), "db", &d, NULL) != NULL && s.temps_pending,
		   "  ... a read waits for the catalog");
		catalog_load_rows(plain_rows, 2, false);
		ok(consist_read_deps(&s, rd("SELECT * FROM t2"), "db", &d, NULL) == NULL && !consist_has_temps(&s),
		   "  ... a catalog where nothing creates temporary tables: none, the read is served");
		catalog_load_rows(rows, sizeof(rows) / sizeof(rows[0]), false);
	}
	catalog_load_rows(rows, sizeof(rows) / sizeof(rows[0]), false);
	statement(&s, "CALL plain()", false);
	ok(!catalog_ready(), "writes mode: a CALL (DDL it may run) makes the catalog stale");
	catalog_load_rows(rows, sizeof(rows) / sizeof(rows[0]), false);
	inval_set_mode(INVAL_BINLOG);
	g_config.auto_cache = true;
	consist_statement(&s, rd("CALL plain()"), false, "db");
	ok(consist_done(&s, false, true) && catalog_ready(),
	   "binlog mode: its OK is held for the binlog, which brings its DDL: the catalog stays current");
	consist_hold_failed();
	ok(!catalog_ready(), "  ... unless the hold fails");
	catalog_load_rows(rows, sizeof(rows) / sizeof(rows[0]), false);
	g_config.auto_cache = false;
	inval_set_mode(INVAL_WRITES);
	for (size_t i = 0; i < sizeof(flush_cases) / sizeof(flush_cases[0]); i++) {
		g = inval_epoch();
		statement(&s, flush_cases[i].sql, false);
		ok((inval_epoch() > g) == flush_cases[i].all, "%s", flush_cases[i].name);
	}
	inval_set_mode(INVAL_TTL);
	g = atomic_load(&t1->gen);
	statement(&s, "UPDATE t1 SET a = 3", false);
	ok(atomic_load(&t1->gen) == g, "ttl mode: writes invalidate nothing");
	consist_free(&s);
}

int main(void)
{
	config_defaults(&g_config);
	if (inval_init() < 0)
		return 1;
	ok(catalog_load_rows(rows, sizeof(rows) / sizeof(rows[0]), false) == 0, "a catalog from rows");
	test_reads();
	test_writes();
	test_session();
	catalog_free();
	inval_destroy(tcols_drop);
	return done_testing();
}
