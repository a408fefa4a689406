/*
 * readers.h: the old readers' own types and entry points (readers.c), as
 * their headers had them at 5a9fd58; only the differential includes it.
 */
#ifndef SHOAL_DIFF_OLD_READERS_H
#define SHOAL_DIFF_OLD_READERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sql/facts.h"
#include "sql/tokenizer.h"

/* src/core/kill.h */
enum kill_kind { KK_CONNECTION = 1, KK_QUERY };
struct kill_req {
	enum kill_kind kind;
	bool unsupported;         /* KILL QUERY ID n, KILL USER name */
	uint64_t id;
};

/* src/core/monitor.h */
enum monitor_query {
	MQ_NONE,
	MQ_READ_ONLY,
	MQ_SLAVE_STATUS,
	MQ_REPLICA_STATUS,
	MQ_READYSET_STATUS,
	MQ_SHOAL_STATUS,
};

/* src/cache/registry.h */
enum txn_policy { TXN_DEFAULT = 0, TXN_ALWAYS, TXN_UNTIL_WRITE };

/* src/cache/commands.h */
/* The parsed form of CREATE CACHE, for replay and tests. */
struct create_cache {
	bool from_id;                /* FROM q_... */
	char name[64];
	int ttl_ms, refresh_ms, coalesce_ms; /* -1: default */
	int txn;                     /* enum txn_policy */
	const char *select;          /* FROM <select>: points into the input */
	size_t select_len;
	char query_id[20];
};

/* Parse a cache command. Returns the command kind (> 0), 0 if q is not one,
 * or -1 on a syntax error (with a message naming where). */
enum cache_cmd {
	CC_NONE = 0, CC_CREATE, CC_DROP, CC_DROP_ALL, CC_FLUSH, CC_FLUSH_ALL,
	CC_SHOW_CACHES, CC_SHOW_PROXIED, CC_EXPLAIN_LAST, CC_SHOW_STATUS, CC_SHOW_RS_STATUS,
};
struct cache_cmd_args {
	struct create_cache create;
	char target[128];            /* DROP/FLUSH name or id; SHOW ... WHERE query_id */
	long limit;                  /* SHOW PROXIED QUERIES LIMIT n, -1 = none */
};

/* src/session/sessvars.h */
#define SV_NAME_MAX 64
#define SV_VALUE_MAX 512
#define SV_VARS_MAX 64
#define SV_DB_MAX 256
#define SV_NAMES_MAX 128

struct sv_var {
	char name[SV_NAME_MAX];       /* lower case */
	char value[SV_VALUE_MAX];     /* a literal, as the client wrote it */
};

struct sess_state {
	char db[SV_DB_MAX];           /* "" for none */
	char names[SV_NAMES_MAX];     /* "NAMES x COLLATE y" / "CHARACTER SET x" */
	uint16_t n_vars;
	struct sv_var *vars;          /* n_vars entries, heap (NULL when none) */
};

/* What a statement does to the session, from sv_classify. */
#define SV_PIN_FOREVER  0x01   /* the session keeps its connection for good */
#define SV_PIN_LOCK     0x02   /* LOCK TABLES / FLUSH ... WITH READ LOCK */
#define SV_UNLOCK       0x04   /* UNLOCK TABLES */
#define SV_STICKY_NEXT  0x08   /* keep the connection for the next command */
#define SV_CHANGES      0x10   /* the delta applies once the statement succeeds */
#define SV_GLOBAL       0x20   /* it sets a global variable (sv_globals_changed) */
#define SV_PROFILING    0x40   /* it names profiling: SHOW PROFILES lists every
				* statement of the connection (pins for good) */
#define SV_TELLS_ID     0x80   /* it reads CONNECTION_ID(): the upstream thread
				* id is the session's to KILL (kill_note_told) */
#define SV_SELECTS      0x100  /* it has a SELECT (INSERT ... SELECT sets
				* FOUND_ROWS() with no result set) */
#define SV_RELEASE      0x200  /* COMMIT/ROLLBACK ... RELEASE: the server ends
				* the session after its OK */
#define SV_RELEASE_IF   0x400  /* a plain COMMIT/ROLLBACK: so does it when the
				* session's completion_type is RELEASE
				* (sv_completion_releases) */

/* The state change a statement makes when it succeeds. */
struct sv_delta {
	bool set_db;
	bool drop_db;                 /* DROP DATABASE db: a state whose schema it
				       * is has none after it (as the server) */
	char db[SV_DB_MAX];
	bool set_names;
	char names[SV_NAMES_MAX];
	uint16_t n;
	struct {
		char name[SV_NAME_MAX];
		char value[SV_VALUE_MAX];  /* "" for DEFAULT: the variable is dropped */
	} vars[8];
};

/* The entry points (rename.h gives the old names an old_ prefix). */
bool old_parse_kill(const char *q, size_t n, struct kill_req *r);
bool kill_statement(const char *q, size_t n);
enum monitor_query monitor_match(const char *q, size_t n);
int cache_cmd_parse(const char *q, size_t n, struct cache_cmd_args *a, char *err, size_t errlen);
unsigned sv_classify(const char *q, size_t n, const struct stmt_facts *facts, struct sv_delta *d,
		     bool mariadb);
bool sv_completion_releases(const struct sess_state *s);
bool grants_text_changes_privileges(const char *text, size_t n);
/* grants_note_statement, its effects recorded instead of made */
void old_grants_note(const struct sql_tok_result *tok, bool *privileges, bool *set_role);
bool old_flushes_all(const char *q, size_t n);
bool old_sets_oneshot_ru(const char *q, size_t n);
bool old_ends_oneshot(int kw, const char *q, size_t n);
bool old_body_may_call_or_create(const char *body);
/* the catalog's trigger loops, what they asked of the catalog recorded */
bool old_trigger_writes(const char *body, void (*fn)(void *arg, const char *p, size_t n), void *arg);
void old_trigger_calls(const char *body, bool (*fn)(void *arg, const struct sql_tok *schema,
						   const struct sql_tok *name, bool call), void *arg);

#endif
