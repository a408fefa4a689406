/*
 * local.h: the statements the session core answers before the cache (KILL:
 * core/kill.c; the load balancers' monitor texts: core/monitor.c). They
 * are asked about every query, hits included, so each reader first looks
 * at a few bytes (the lexer's byte classes) and turns everything else away
 * there; what passes is read by the one lexer (lexer.h: comments skipped,
 * executable comments read as code). Nothing is allocated.
 */
#ifndef SHOAL_SQL_LOCAL_H
#define SHOAL_SQL_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sql_kill_kind {
	SQL_KILL_NONE = 0,     /* no KILL */
	SQL_KILL_ID,           /* KILL [HARD | SOFT] [CONNECTION | QUERY] <digits> [;] */
	SQL_KILL_UNSUPPORTED,  /* KILL QUERY ID <id>, KILL USER <name> */
	SQL_KILL_OTHER,        /* another KILL (an expression: KILL CONNECTION_ID()),
				* or one whose words depend on the server (an
				* executable comment some servers skip) */
};

struct sql_kill {
	enum sql_kill_kind kind;
	bool query;            /* KILL QUERY (else CONNECTION) */
	uint64_t id;           /* SQL_KILL_ID */
};

/* Read q[0, n) as a KILL. */
void sql_kill_read(const char *q, size_t n, struct sql_kill *k);

/* Might q[0, n) be a text that starts SHOW, or SELECT then @@ (white space
 * between, at most 8 bytes of it before)? A look at its first bytes, for
 * the hit path: a comment before them means no. */
bool sql_lead_show_or_sysvar(const char *q, size_t n);

/* Is q[0, n) the text pattern, token for token: words in any case, white
 * space where the pattern has a space (any run of it) and none where it has
 * none, no comment, trailing ';' and white space ignored? */
bool sql_same_text(const char *q, size_t n, const char *pattern);

#endif
