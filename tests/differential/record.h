/*
 * record.h: what the differential (differential.c) compares: for one
 * statement text, every field both the old readers (old_side.c, built from
 * tests/differential/old/, the code of 5a9fd58) and the new ones
 * (new_side.c, the node's src/) produce, each written as a string. The two
 * sides are built apart (their headers name the same types), and meet
 * only here.
 */
#ifndef SHOAL_DIFF_RECORD_H
#define SHOAL_DIFF_RECORD_H

#include <stddef.h>

#define FIELD_MAX 12288

#define FIELDS(X) \
	X(DIGEST, "digest") X(DIGEST_TEXT, "digest_text") X(LITERALS, "literals") \
	X(TOK_FLAGS, "tokenizer flags") X(KEYWORD, "first keyword (digest)") \
	X(FIRST, "facts: leading word") X(SEEN, "facts: marks") \
	X(KIND, "statement kind") X(TABLES_FLAGS, "tables: flags") X(TABLES, "tables read and written") \
	X(ROUTINES, "routines called") \
	X(SV_MARIADB, "session state (MariaDB)") X(SV_MYSQL, "session state (MySQL)") \
	X(KILL, "KILL answered") X(KILL_ANY, "KILL of any form") X(MONITOR, "monitor text") \
	X(CACHE_PARSE, "cache SQL read") X(CACHE_ERROR, "cache SQL error text") \
	X(CACHE_SQL, "cache SQL answered") \
	X(PRIV_TEXT, "changes privileges (raw text)") X(GRANTS, "grants: privileges, SET ROLE") \
	X(FLUSH_ALL, "flushes every entry") X(ONESHOT_RU, "one-shot READ UNCOMMITTED") \
	X(ENDS_ONESHOT, "ends a one-shot level") X(BODY, "body may call or create") \
	X(TRIGGER_WRITES, "trigger body: writes") X(TRIGGER_CALLS, "trigger body: calls")

enum field {
#define FIELD_ENUM(e, name) F_##e,
	FIELDS(FIELD_ENUM)
#undef FIELD_ENUM
	F__COUNT
};

struct record {
	char v[F__COUNT][FIELD_MAX];
};

/* Fill r with what the old readers (old_side.c) or the new ones
 * (new_side.c) make of q[0, n). */
void old_side(const char *q, size_t n, struct record *r);
void new_side(const char *q, size_t n, struct record *r);

#endif
