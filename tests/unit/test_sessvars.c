/*
 * test_sessvars.c: unit tests for src/session/sessvars.c, the reading of statements
 * for multiplexing: which statements pin a session to its connection, what
 * SET / USE record, that quoted text and comments are not read as code while
 * executable comments are, and the SET statement that brings a connection
 * from one session state to another.
 */
#include "session/sessvars.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

static struct sv_delta d;
static struct stmt stm;

static unsigned cl_on(const char *q, bool mariadb)
{
	stmt_begin(&stm, q, strlen(q));
	stmt_read(&stm);
	return sv_classify(&stm, &d, mariadb);
}

static unsigned cl(const char *q)
{
	return cl_on(q, true);
}

static void pins(void)
{
	is_int(cl("SELECT 1"), 0, "plain SELECT: nothing");
	is_int(cl("INSERT INTO t VALUES (1)"), 0, "INSERT: nothing (the answer's insert id decides)");
	is_int(cl("SET @a = 1"), SV_PIN_FOREVER, "SET @user var pins");
	is_int(cl("SET GLOBAL max_allowed_packet = 2048") & SV_GLOBAL, SV_GLOBAL, "SET GLOBAL: SV_GLOBAL");
	is_int(cl("SET @@global.sql_mode = ''") & SV_GLOBAL, SV_GLOBAL, "SET @@global.x: SV_GLOBAL");
	is_int(cl("SET PERSIST sql_mode = ''") & SV_GLOBAL, SV_GLOBAL, "SET PERSIST x (MySQL): SV_GLOBAL");
	is_int(cl("SET @@persist.sql_mode = ''") & SV_GLOBAL, SV_GLOBAL, "SET @@persist.x: SV_GLOBAL");
	is_int(cl("SET @@PERSIST_ONLY.max_connections = 10") & SV_GLOBAL, SV_GLOBAL,
	       "SET @@PERSIST_ONLY.x: SV_GLOBAL");
	is_int(cl("SET sql_mode = '', GLOBAL wait_timeout = 10") & SV_GLOBAL, SV_GLOBAL,
	       "a global assignment among session ones: SV_GLOBAL");
	is_int(cl("SET GLOBAL wait_timeout = 1 + 1") & (SV_GLOBAL | SV_PIN_FOREVER), SV_GLOBAL | SV_PIN_FOREVER,
	       "SET GLOBAL of a computed value: SV_GLOBAL too");
	is_int(cl("SET sql_mode = ''") & SV_GLOBAL, 0, "a session assignment: no SV_GLOBAL");
	is_int(cl("SET rand_seed1 = 1, rand_seed2 = 2"), SV_PIN_FOREVER, "rand_seed1 has no DEFAULT: pins");
	is_int(cl("SET @@session.last_insert_id = 5"), SV_PIN_FOREVER, "last_insert_id has no DEFAULT: pins");
	is_int(cl("SELECT @a := 5"), SV_PIN_FOREVER, ":= pins");
	is_int(cl("SET profiling = 1"), SV_PIN_FOREVER | SV_PROFILING, "SET profiling: pins, SV_PROFILING");
	is_int(cl("SET @@session.profiling = ON"), SV_PIN_FOREVER | SV_PROFILING, "@@session.profiling too");
	is_int(cl("set @@profiling_history_size = 5"), SV_PIN_FOREVER | SV_PROFILING,
	       "profiling_history_size too");
	is_int(cl("SET profiling_x = 1") & SV_PROFILING, 0, "another name that starts so: no SV_PROFILING");
	is_int(cl("SELECT 'profiling'") & SV_PROFILING, 0, "the word in a string: no SV_PROFILING");
	is_int(cl("SELECT c INTO @x FROM t LIMIT 1"), SV_PIN_FOREVER, "INTO @var pins");
	is_int(cl("SELECT @a"), 0, "reading a user variable does not pin");
	is_int(cl("SELECT GET_LOCK('l', 1)"), SV_PIN_FOREVER, "GET_LOCK pins");
	is_int(cl("select get_lock ('l', 1)"), SV_PIN_FOREVER, "get_lock in lower case");
	is_int(cl("CREATE TEMPORARY TABLE tt (a int)"), SV_PIN_FOREVER, "temporary table pins");
	is_int(cl("LOCK TABLES t READ"), SV_PIN_LOCK, "LOCK TABLES");
	is_int(cl("UNLOCK TABLES"), SV_UNLOCK, "UNLOCK TABLES");
	is_int(cl("FLUSH TABLES WITH READ LOCK"), SV_PIN_LOCK, "FLUSH ... WITH READ LOCK");
	is_int(cl("BACKUP STAGE START"), SV_PIN_FOREVER, "BACKUP STAGE pins");
	is_int(cl("SELECT CONNECTION_ID()"), SV_TELLS_ID, "CONNECTION_ID() tells the thread id");
	is_int(cl("SELECT 'CONNECTION_ID()'"), 0, "  not in a string");
	is_int(cl("INSERT INTO t SELECT * FROM u"), SV_SELECTS, "INSERT ... SELECT sets FOUND_ROWS()");
	is_int(cl("DROP DATABASE IF EXISTS `test_env`"), SV_CHANGES, "DROP DATABASE: the current schema may go");
	is_int(cl("DROP TABLE t"), 0, "  not DROP TABLE");
	is_int(cl("INSERT INTO t VALUES ('SELECT')"), 0, "  not a SELECT in a string");
	is_int(cl("backup lock t1"), SV_PIN_FOREVER, "BACKUP LOCK pins");
	is_int(cl("FLUSH STATUS"), 0, "FLUSH STATUS: nothing");
	is_int(cl("SELECT SQL_CALC_FOUND_ROWS * FROM t LIMIT 1"), SV_STICKY_NEXT, "SQL_CALC_FOUND_ROWS: next command");
	is_int(cl("PREPARE s FROM 'SELECT 1'"), SV_PIN_FOREVER, "SQL PREPARE pins");
	is_int(cl("EXECUTE s"), SV_PIN_FOREVER, "SQL EXECUTE pins");
	is_int(cl("CALL p()"), SV_PIN_FOREVER, "CALL pins");
	is_int(cl("XA START 'x'"), SV_PIN_FOREVER, "XA pins");
	is_int(cl("HANDLER t OPEN"), SV_PIN_FOREVER, "HANDLER pins");
	is_int(cl("SELECT 1; SELECT 2"), SV_PIN_FOREVER | SV_SELECTS, "two statements pin");
	is_int(cl("SELECT 1;"), 0, "one statement with a trailing ; does not");
	is_int(cl("SELECT 1 ;  \n"), 0, "trailing ; and spaces");
	is_int(cl("(SELECT 1) UNION (SELECT 2)"), SV_SELECTS, "parenthesised SELECT");
}

static void quoting(void)
{
	is_int(cl("SELECT 'GET_LOCK(' FROM t"), 0, "GET_LOCK in a string is text");
	is_int(cl("SELECT \"a;b\""), 0, "; in a double-quoted string");
	is_int(cl("SELECT 'it''s; @a := 1'"), 0, "doubled quote inside a string");
	is_int(cl("SELECT 'a\\'; SET @x=1'"), 0, "backslash-escaped quote inside a string");
	is_int(cl("SELECT `get_lock` FROM t"), 0, "a backquoted column named get_lock");
	is_int(cl("SELECT 1 /* GET_LOCK( */"), 0, "GET_LOCK in a comment");
	is_int(cl("SELECT 1 -- ; SELECT 2\n"), 0, "-- comment");
	is_int(cl("SELECT 1 # ; SELECT 2\n"), 0, "# comment");
	is_int(cl("/*!40101 SET @x = 1 */"), SV_PIN_FOREVER, "an executable comment is code");
	is_int(cl("SELECT 1 /*!50000 , GET_LOCK('a', 0) */"), SV_PIN_FOREVER, "GET_LOCK in an executable comment");
	is_int(cl("SELECT 1--1"), 0, "--1 is not a comment (no space) and harmless");
}

static void set_statements(void)
{
	is_int(cl("SET time_zone = '+00:00'"), SV_CHANGES, "SET time_zone records");
	is_int(d.n, 1, "  one variable");
	is_str(d.vars[0].name, "time_zone", "  its name");
	is_str(d.vars[0].value, "'+00:00'", "  its value, as written");
	is_int(cl("SET SESSION sql_mode='ANSI', @@session.autocommit = 1, @@wait_timeout=60"), SV_CHANGES,
	       "SET with scopes and several variables");
	is_int(d.n, 3, "  three variables");
	is_str(d.vars[0].name, "sql_mode", "  sql_mode");
	is_str(d.vars[1].name, "autocommit", "  autocommit (from @@session.)");
	is_str(d.vars[2].value, "60", "  wait_timeout value");
	is_int(cl("SET Max_Join_Size = -1"), SV_CHANGES, "a negative number");
	is_str(d.vars[0].name, "max_join_size", "  name in lower case");
	is_str(d.vars[0].value, "-1", "  signed value");
	is_int(cl("SET sql_mode = DEFAULT"), SV_CHANGES, "SET ... = DEFAULT");
	is_str(d.vars[0].value, "", "  recorded as a drop");
	is_int(cl("SET GLOBAL max_connections = 10"), SV_GLOBAL, "SET GLOBAL: not session state (SV_GLOBAL only)");
	is_int(cl("SET @@global.x = 1, y = 2"), SV_CHANGES | SV_GLOBAL, "mixed global and session");
	is_int(d.n, 1, "  only the session one");
	is_int(cl("SET NAMES utf8mb4"), SV_CHANGES, "SET NAMES");
	ok(d.set_names && strcmp(d.names, "NAMES utf8mb4") == 0, "  names text: %s", d.names);
	is_int(cl("SET NAMES 'latin1' COLLATE 'latin1_swedish_ci', time_zone = 'UTC'"), SV_CHANGES,
	       "SET NAMES ... COLLATE, and a variable");
	ok(strcmp(d.names, "NAMES 'latin1' COLLATE 'latin1_swedish_ci'") == 0, "  names text: %s", d.names);
	is_int(d.n, 1, "  and the variable");
	is_int(cl("SET CHARACTER SET latin1"), SV_CHANGES, "SET CHARACTER SET");
	ok(strcmp(d.names, "CHARACTER SET latin1") == 0, "  text: %s", d.names);
	is_int(cl("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"), SV_CHANGES,
	       "SET SESSION TRANSACTION ISOLATION LEVEL");
	ok(d.n == 1 && strcmp(d.vars[0].name, "tx_isolation") == 0 &&
	   strcmp(d.vars[0].value, "'READ-COMMITTED'") == 0, "  recorded as tx_isolation");
	is_int(cl_on("SET SESSION TRANSACTION READ ONLY", false), SV_CHANGES, "MySQL: READ ONLY");
	ok(d.n == 1 && strcmp(d.vars[0].name, "transaction_read_only") == 0, "  as transaction_read_only");
	is_int(cl("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE"), SV_PIN_FOREVER,
	       "SET TRANSACTION without SESSION (the next transaction only) pins");
	is_int(cl("SET sql_mode = CONCAT(@@sql_mode, ',ANSI')"), SV_PIN_FOREVER, "a computed value pins");
	is_int(cl("SET time_zone = @@global.time_zone"), SV_PIN_FOREVER, "a variable's value pins");
	is_int(cl("SET PASSWORD = 'x'"), SV_PIN_FOREVER, "SET PASSWORD pins");
	is_int(cl("SET ROLE r"), SV_PIN_FOREVER, "SET ROLE pins");
	is_int(cl("SET STATEMENT max_statement_time=1 FOR SELECT 1"), SV_SELECTS, "SET STATEMENT: for one statement");
	is_int(cl("SET a=1,b=2,c=3,d=4,e=5,f=6,g=7,h=8,i=9"), SV_PIN_FOREVER, "too many variables pin");
	is_int(cl("SET `sql_mode` = ''"), SV_PIN_FOREVER, "a backquoted name: not recorded, pins");
	is_int(cl("USE `my db`"), SV_CHANGES, "USE");
	ok(d.set_db && strcmp(d.db, "my db") == 0, "  schema without backquotes: %s", d.db);
	is_int(cl("use shoaltest;"), SV_CHANGES, "use with a trailing ;");
	is_str(d.db, "shoaltest", "  schema");
}

static void sync_sql(void)
{
	struct sess_state a, b;
	struct pbuf sql = { 0 };
	bool init_db = false;

	sv_init(&a);
	sv_init(&b);
	strcpy(a.db, "db1");
	strcpy(b.db, "db1");
	ok(sv_equal(&a, &b), "equal states");
	ok(sv_sync_sql(&a, &b, &init_db, &sql) == 0 && !init_db && sql.len == 0, "no difference: nothing to send");
	cl("SET time_zone='+01:00', sql_mode='ANSI'");
	sv_apply(&b, &d);
	ok(!sv_equal(&a, &b), "after a SET: different");
	ok(sv_sync_sql(&a, &b, &init_db, &sql) == 0, "sync SQL built");
	ok(sql.len && memcmp(sql.data, "SET @@session.time_zone = '+01:00', @@session.sql_mode = 'ANSI'", sql.len) == 0,
	   "  SET @@session.time_zone = '+01:00', @@session.sql_mode = 'ANSI' (%.*s)", (int)sql.len, sql.data);
	ok(sv_sync_sql(&b, &a, &init_db, &sql) == 0 && sql.len &&
	   memcmp(sql.data, "SET @@session.time_zone = DEFAULT, @@session.sql_mode = DEFAULT", sql.len) == 0,
	   "  back: the variables to DEFAULT (%.*s)", (int)sql.len, sql.data);
	{
		struct sess_state f;

		sv_init(&f);
		strcpy(f.db, "db1");
		cl("SET foreign_key_checks = 0, unique_checks = 0, sql_safe_updates = 1");
		sv_apply(&f, &d);
		static const char want[] = "SET @@session.foreign_key_checks = @@global.foreign_key_checks, "
			"@@session.unique_checks = @@global.unique_checks, @@session.sql_safe_updates = DEFAULT";

		ok(sv_sync_sql(&f, &a, &init_db, &sql) == 0 && sql.len == sizeof(want) - 1 &&
		   memcmp(sql.data, want, sql.len) == 0,
		   "  back: foreign_key_checks and unique_checks to their global value, which MySQL's "
		   "DEFAULT does not give");
		sv_free(&f);
	}
	cl("SET NAMES latin1");
	sv_apply(&b, &d);
	ok(sv_sync_sql(&a, &b, &init_db, &sql) == 0 && sql.len > 13 && memcmp(sql.data, "SET NAMES latin1, ", 18) == 0,
	   "  NAMES first (%.*s)", (int)sql.len, sql.data);
	{
		struct sess_state x, y;

		sv_init(&x);
		sv_init(&y);
		strcpy(x.names, "NAMES utf8mb4 COLLATE utf8mb4_general_ci");
		strcpy(y.names, x.names);
		cl("SET character_set_results = latin1, time_zone = 'UTC'");
		sv_apply(&x, &d);
		ok(sv_sync_sql(&x, &y, &init_db, &sql) == 0 && sql.len &&
		   memcmp(sql.data, "SET NAMES utf8mb4 COLLATE utf8mb4_general_ci, @@session.time_zone = DEFAULT",
			  sql.len) == 0,
		   "  a character set variable goes back with SET NAMES, not DEFAULT (%.*s)", (int)sql.len, sql.data);
		cl("SET collation_connection = utf8mb4_bin");
		sv_apply(&y, &d);
		ok(sv_sync_sql(&x, &y, &init_db, &sql) == 0 && sql.len &&
		   memcmp(sql.data, "SET NAMES utf8mb4 COLLATE utf8mb4_general_ci, @@session.collation_connection = "
			  "utf8mb4_bin, @@session.time_zone = DEFAULT", sql.len) == 0,
		   "  ... and the wanted one is set after it (%.*s)", (int)sql.len, sql.data);
		sv_free(&x);
		sv_free(&y);
	}
	strcpy(b.db, "db2");
	ok(sv_sync_sql(&a, &b, &init_db, &sql) == 0 && init_db, "another schema: COM_INIT_DB first");
	b.db[0] = 0;
	ok(sv_sync_sql(&a, &b, &init_db, &sql) < 0, "a connection with a schema cannot serve a session without");
	cl("SET sql_mode = DEFAULT");
	sv_apply(&b, &d);
	is_int(b.n_vars, 1, "DEFAULT drops the variable from the state");
	ok(sv_copy(&a, &b) == 0 && sv_equal(&a, &b), "copy makes equal");
	sv_free(&a);
	sv_free(&b);
	pbuf_free(&sql);
}

/* COMMIT/ROLLBACK that end the session: written out, or by the session's
 * completion_type (sys_vars.completion_type_func). */
static void releases(void)
{
	static const char *const set_release[] = {
		"SET completion_type = 'RELEASE'", "SET @@session.completion_type = 2",
		"set completion_type=release", NULL,
	};
	static const char *const set_other[] = {
		"SET completion_type = 'CHAIN'", "SET completion_type = 0", "SET completion_type = 22", NULL,
	};
	struct sess_state st;

	is_int(cl("COMMIT"), SV_RELEASE_IF, "COMMIT: releases when completion_type says so");
	is_int(cl("rollback work"), SV_RELEASE_IF, "ROLLBACK WORK: the same");
	is_int(cl("COMMIT RELEASE"), SV_RELEASE, "COMMIT RELEASE releases");
	is_int(cl("COMMIT WORK AND NO CHAIN RELEASE"), SV_RELEASE, "COMMIT WORK AND NO CHAIN RELEASE");
	is_int(cl("ROLLBACK AND CHAIN NO RELEASE"), 0, "ROLLBACK ... NO RELEASE never does");
	is_int(cl("ROLLBACK TO SAVEPOINT sp1"), 0, "ROLLBACK TO SAVEPOINT ends nothing");
	is_int(cl("ROLLBACK WORK TO sp1"), 0, "ROLLBACK WORK TO sp1 neither");
	is_int(cl("RELEASE SAVEPOINT sp1"), 0, "RELEASE SAVEPOINT is no COMMIT");
	sv_init(&st);
	ok(!sv_completion_releases(&st), "a fresh session: completion_type is not RELEASE");
	for (int i = 0; set_release[i]; i++) {
		sv_init(&st);
		ok(cl(set_release[i]) == SV_CHANGES && sv_apply(&st, &d) == 0 && sv_completion_releases(&st),
		   "%s: releases", set_release[i]);
		sv_free(&st);
	}
	for (int i = 0; set_other[i]; i++) {
		sv_init(&st);
		ok(cl(set_other[i]) == SV_CHANGES && sv_apply(&st, &d) == 0 && !sv_completion_releases(&st),
		   "%s: does not release", set_other[i]);
		sv_free(&st);
	}
	sv_init(&st);
	cl("SET completion_type = 2");
	sv_apply(&st, &d);
	cl("SET completion_type = DEFAULT");
	sv_apply(&st, &d);
	ok(!sv_completion_releases(&st), "SET completion_type = DEFAULT again: no longer");
	sv_free(&st);
}

int main(void)
{
	pins();
	releases();
	quoting();
	set_statements();
	sync_sql();
	return done_testing();
}
