/*
 * keywords.h: the words the statement readers compare, each with an id:
 * the one keyword enum of the node (the digest's first keyword, the
 * lexer's words, every reader built on them). The lexer looks a word up
 * once, when it reads it (sql_tok.kw), and a reader compares ids: one
 * hash of the word instead of a string comparison per candidate keyword (a
 * list of 20 words was 20 comparisons per word).
 * A word not in the list has KW_NONE; a `quoted` name never has an id.
 */
#ifndef SHOAL_SQL_KEYWORDS_H
#define SHOAL_SQL_KEYWORDS_H

#include <stddef.h>

/* Adding a word: put it here, in order; nothing else changes. */
#define SQL_KEYWORDS(X) \
	X(AGGREGATE) X(ALGORITHM) X(ALL) X(ALTER) X(ANALYZE) X(AND) X(AS) X(AT) \
	X(BACKUP) X(BEGIN) X(BETWEEN) X(BINARY) X(BINLOG) X(CACHE) X(CALL) X(CASE) \
	X(CHAIN) X(CHANGE) X(CHECK) X(CHECKSUM) X(COLLATE) X(COLUMN) X(COMMIT) \
	X(CONNECTION_ID) X(CONSTRAINT) X(CREATE) X(CROSS) X(DATA) X(DATABASE) \
	X(DEALLOCATE) X(DEFAULT) X(DEFINER) X(DELAYED) X(DELETE) X(DESC) X(DESCRIBE) \
	X(DISTINCT) X(DO) X(DROP) X(DUAL) X(ELSEIF) X(END) X(EVENT) X(EXCEPT) \
	X(EXECUTE) X(EXISTS) X(EXPLAIN) X(EXPORT) X(FALSE) X(FETCH) X(FLUSH) X(FOR) \
	X(FORCE) X(FORMAT) X(FOUND_ROWS) X(FROM) X(FULLTEXT) X(FUNCTION) X(GET) \
	X(GET_LOCK) X(GRANT) X(GROUP) X(HANDLER) X(HAVING) X(HELP) X(HIGH_PRIORITY) \
	X(IDENTITY) X(IF) X(IGNORE) X(IN) X(INDEX) X(INNER) X(INSERT) X(INSTALL) \
	X(INSTANCE) X(INTERSECT) X(INTERVAL) X(INTO) X(IS) X(JOIN) X(KEY) X(KILL) \
	X(LAST_INSERT_ID) X(LATERAL) X(LEFT) X(LIKE) X(LIMIT) X(LOAD) X(LOCAL) \
	X(LOCK) X(LOGFILE) X(LOW_PRIORITY) X(NATURAL) X(NEXT) X(NEXTVAL) X(NO) \
	X(NOT) X(NOWAIT) X(NO_WRITE_TO_BINLOG) X(NULL) X(OFFSET) X(ON) X(ONLINE) \
	X(OPTIMIZE) X(OR) X(ORDER) X(OUTER) X(PACKAGE) X(PARTITION) X(PASSWORD) \
	X(PORTION) X(PREPARE) X(PREVIOUS) X(PRIVILEGES) X(PROCEDURE) X(PROFILING) \
	X(PROFILING_HISTORY_SIZE) X(PURGE) X(QUICK) X(READ) X(RECURSIVE) \
	X(REFERENCES) X(RELEASE) X(RENAME) X(REPAIR) X(REPLACE) X(RESET) X(RESIGNAL) \
	X(RETURN) X(RETURNING) X(REVOKE) X(RIGHT) X(ROLE) X(ROLLBACK) X(ROWCOUNT) \
	X(ROW_COUNT) X(SAVEPOINT) X(SCHEMA) X(SECURITY) X(SELECT) X(SEQUENCE) \
	X(SERVER) X(SET) X(SETVAL) X(SHARE) X(SHOW) X(SHUTDOWN) X(SIGNAL) X(SPATIAL) \
	X(SQL) X(SQL_CALC_FOUND_ROWS) X(START) X(STATEMENT) X(STOP) X(STRAIGHT_JOIN) \
	X(SYSTEM_TIME) X(TABLE) X(TABLES) X(TABLESPACE) X(TEMPORARY) X(TO) \
	X(TRANSACTION) X(TRIGGER) X(TRUE) X(TRUNCATE) X(UNCOMMITTED) X(UNINSTALL) \
	X(UNION) X(UNIQUE) X(UNLOCK) X(UNTIL) X(UPDATE) X(USE) X(USER) X(USING) \
	X(VALUE) X(VALUES) X(VIEW) X(WAIT) X(WHERE) X(WHILE) X(WINDOW) X(WITH) \
	X(WORK) X(XA) X(XML) X(XOR)

enum sql_kw {
	KW_NONE = 0,
#define KW_ENUM_ENTRY(w) KW_##w,
	SQL_KEYWORDS(KW_ENUM_ENTRY)
#undef KW_ENUM_ENTRY
	KW__COUNT
};

/* The id of the word p[0, n) (any case), or KW_NONE. */
enum sql_kw sql_kw_lookup(const char *p, size_t n);
/* The word of an id in upper case ("SELECT"); "" for KW_NONE or an id
 * out of range. */
const char *sql_kw_name(enum sql_kw kw);

#endif
