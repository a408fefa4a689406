/*
 * rules.h: the runtime query rules (the admin's QUERY RULES module, in
 * ProxySQL's mysql_query_rules shape): which query shapes are cached, with
 * which TTL, or never cached, decided by digest or by a regular expression
 * on digest_text. See docs/caching.md ("Query rules") and docs/admin.md.
 *
 * The compiled rules live behind a rwlock: rules_decide() takes it for
 * reading when a shape is classified (once per shape and per LOAD, never
 * on a cache hit); rules_install() swaps the whole set under the write lock.
 */
#ifndef SHOAL_CACHE_RULES_H
#define SHOAL_CACHE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest cache_ttl a rule may set (the same bound as shoal-cache-ttl-ms). */
#define RULES_MAX_TTL_MS 86400000

/* One row of query_rules as read from the table. Strings may be NULL (SQL
 * NULL); an empty string counts as NULL for the match columns. */
struct rule_row {
	int64_t rule_id;
	int64_t active;              /* 0 or 1 */
	const char *username;        /* accepted, not evaluated */
	const char *schemaname;      /* accepted, not evaluated */
	const char *digest;          /* "0x" + 16 hex digits: exact match */
	const char *match_digest;    /* POSIX ERE, case-insensitive, on digest_text */
	bool has_cache_ttl;          /* false: cache_ttl is NULL */
	int64_t cache_ttl;           /* ms; 0 = never cache the shape */
	bool has_cache_empty_result; /* false: NULL */
	int64_t cache_empty_result;  /* 0 or 1; accepted, not applied */
	int64_t apply;               /* 0 or 1 */
	const char *comment;
};

/* A validated, compiled set of rules (in rule_id order). */
struct rules_set;

/* Validate and compile rows (any order; copied). NULL with a message naming
 * the rule in err when a row is invalid (bad regex, bad digest, bad value)
 * or memory runs out. */
struct rules_set *rules_compile(const struct rule_row *rows, size_t n, char *err,
				size_t errlen);
void rules_free(struct rules_set *s);

/* Make s the runtime rules (takes ownership; NULL installs no rules) and
 * free the previous set. Bumps rules_generation(). */
void rules_install(struct rules_set *s);

/* Counts rules_install() calls: a classification that straddles one is
 * redone. */
unsigned rules_generation(void);

/* Decide for a shape, evaluating the active rules in rule_id order: a rule
 * matches when its digest (if set) equals digest and its match_digest (if
 * set) matches digest_text. The first matching rule with a cache_ttl
 * decides; a matching rule with apply = 1 ends the evaluation.
 *   1  cache the shape, *ttl_ms = the rule's cache_ttl
 *  -1  never cache it (cache_ttl 0)
 *   0  no rule decided
 * *rule_id is the deciding rule's id (ttl_ms, rule_id may be NULL). */
int rules_decide(uint64_t digest, const char *digest_text, int *ttl_ms, int *rule_id);

/* Call fn for each runtime rule (active or not) in rule_id order, under the
 * read lock; fn returns non-zero to stop, which rules_each returns. */
int rules_each(int (*fn)(const struct rule_row *r, void *arg), void *arg);

/* The number of runtime rules. */
size_t rules_count(void);

#endif
