/*
 * setuse.h: what a statement does to the session's state, read from the
 * tokens of its reading (stmt.h): the assignments of a SET (variables,
 * NAMES, CHARACTER SET, TRANSACTION), the schema of a USE or a DROP
 * DATABASE, how a COMMIT or ROLLBACK ends, whether a FLUSH takes a lock.
 * The session layer (session/sessvars.c) decides what to carry over and
 * what pins; this reader only says what the text says, and stops where it
 * cannot follow (understood false: the caller must not trust the rest).
 *
 * Values are kept as written (spans of the text): a string with its quotes,
 * a number with its sign, a bare word. A statement with an executable
 * comment some servers skip is never understood: what it sets depends on
 * the server. Nothing is allocated.
 */
#ifndef SHOAL_SQL_SETUSE_H
#define SHOAL_SQL_SETUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sql/stmt.h"

/* Assignments recorded; a SET with more is not understood. */
#define SQL_SET_ITEMS 16

enum sql_set_what {
	SQL_SET_VAR = 1,     /* [scope] name = value */
	SQL_SET_NAMES,       /* NAMES cs [COLLATE c] (value: "cs [COLLATE c]" as written) */
	SQL_SET_CHARSET,     /* CHARACTER SET cs, CHARSET cs (value: cs) */
	SQL_SET_TXN,         /* [scope] TRANSACTION characteristic [, ...] */
};

enum sql_set_scope {
	SQL_SCOPE_NONE = 0,
	SQL_SCOPE_SESSION,   /* SESSION, LOCAL, @@session., @@local. */
	SQL_SCOPE_GLOBAL,    /* GLOBAL, PERSIST, PERSIST_ONLY, @@global. */
};

enum sql_iso {
	SQL_ISO_NONE = 0, SQL_ISO_SERIALIZABLE, SQL_ISO_REPEATABLE_READ, SQL_ISO_READ_COMMITTED,
	SQL_ISO_READ_UNCOMMITTED,
};

struct sql_set_item {
	uint8_t what;        /* enum sql_set_what */
	uint8_t scope;       /* enum sql_set_scope */
	bool is_default;     /* VAR: = DEFAULT */
	const char *name;    /* VAR: the variable, without @@ or its scope; letters,
			      * digits and '_' only (anything else is not understood) */
	size_t name_len;
	const char *value;   /* VAR, NAMES, CHARSET: as written */
	size_t value_len;
	uint8_t level;       /* TXN: enum sql_iso */
	uint8_t access;      /* TXN: 0 not set, 1 READ ONLY, 2 READ WRITE */
};

enum sql_setuse_kind {
	SQL_SU_OTHER = 0,
	SQL_SU_SET,          /* SET assignments (items) */
	SQL_SU_SET_STATEMENT, /* SET STATEMENT ... FOR: the settings of one statement */
	SQL_SU_USE,          /* USE db */
	SQL_SU_DROP_DB,      /* DROP {DATABASE | SCHEMA} [IF EXISTS] db */
	SQL_SU_TXN_END,      /* COMMIT, ROLLBACK */
	SQL_SU_FLUSH,        /* FLUSH ... */
};

/* How a COMMIT or ROLLBACK ends the session. */
enum sql_txn_end {
	SQL_END_PLAIN = 0,   /* by completion_type: the session's to decide */
	SQL_END_RELEASE,     /* ... RELEASE: the server ends the session */
	SQL_END_KEEP,        /* ... NO RELEASE, or ROLLBACK ... TO a savepoint */
};

struct sql_setuse {
	enum sql_setuse_kind kind;
	bool understood;     /* the whole statement was read (SET, USE, DROP: false
			      * also for a form this reader does not take) */
	bool any_global;     /* SET: a global scope was read, in the items or where
			      * the reading stopped */
	unsigned n;
	struct sql_set_item items[SQL_SET_ITEMS];
	const char *db;      /* USE, DROP_DB: the name (the inside of a `quoted` one) */
	size_t db_len;
	bool db_quoted;
	uint8_t txn_end;     /* TXN_END: enum sql_txn_end */
	bool flush_lock;     /* FLUSH: LOCK or EXPORT anywhere (a lock the connection holds) */
};

/* Read st (read: stmt_read) as a statement that may change the session's
 * state. Statements of other kinds give SQL_SU_OTHER. */
void sql_setuse_read(const struct stmt *st, struct sql_setuse *out);

/* Is the value v[0, n) (as written: maybe 'quoted') the word w (upper
 * case, compared in any case)? */
bool sql_value_is(const char *v, size_t n, const char *w);

#endif
