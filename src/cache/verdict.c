/*
 * verdict.c: a query shape's verdict, decided once per shape (and again
 * after LOAD QUERY RULES TO RUNTIME): whether the classifier accepts it,
 * and whether a cache is made for it (see verdict.h).
 */
#include "cache/verdict.h"

#include <stdlib.h>

#include "cache/inval.h"
#include "cache/rules.h"
#include "config/config.h"
#include "sql/classify.h"
#include "sql/reasons.h"

/* A shape the classifier accepts: a cache made with CREATE CACHE stays as
 * it is; else the query rules decide (cache with the rule's TTL, or never),
 * and without a rule auto-cache does. */
static void decide_cacheable(struct cache_def *d)
{
	int state = atomic_load(&d->state), ttl = 0, v;

	if (state == CACHE_CACHED && atomic_load(&d->explicit_cache))
		return;
	v = rules_decide(d->digest, d->digest_text, &ttl, NULL);
	if (v < 0)
		registry_set_skipped(d, reason_of(WHY_QUERY_RULE));
	else if (v > 0) /* refresh 0: half the TTL */
		registry_set_cached(d, NULL, ttl, 0, g_config.cache_coalesce_ms, TXN_DEFAULT, false);
	else if (g_config.auto_cache)
		registry_set_cached(d, NULL, inval_default_ttl_ms(), inval_default_refresh_ms(),
				    g_config.cache_coalesce_ms, TXN_DEFAULT, false);
	else if (state != CACHE_PROXIED)
		registry_set_proxied(d); /* a rule's verdict that no longer holds */
}

/* Decide once per shape (and again after LOAD QUERY RULES TO RUNTIME)
 * whether it can be cached and whether a cache is created for it. */
void verdict_classify(struct cache_def *d, const struct sql_tok_result *tok)
{
	const struct reason *reason;
	unsigned gen;

	if (atomic_load(&d->classified))
		return;
	gen = rules_generation();
	atomic_store(&d->keyword, (int)tok->keyword);
	if (!tok->ok)
		reason = reason_of(WHY_UNREADABLE);
	else if (tok->flags & SQL_TOK_TEXT_TRUNCATED)
		reason = reason_of(WHY_TOO_LONG);
	else if (tok->lits_overflow)
		reason = reason_of(WHY_TOO_MANY_LITERALS);
	else
		reason = sql_skip_reason(tok->text, tok->text_len);
	if (reason)
		registry_set_skipped(d, reason);
	else
		decide_cacheable(d);
	atomic_store(&d->classified, true);
	/* rules loaded while this ran: decide again at the next sight */
	if (rules_generation() != gen)
		atomic_store(&d->classified, false);
}

struct cache_def *verdict_def_for_text(uint64_t digest, const char *q, size_t n)
{
	struct text_scratch {
		struct sql_tok_result r;
		char text[SQL_TOK_MIN_TEXT_CAP];
	} *t = calloc(1, sizeof(*t));
	struct cache_def *d = NULL;

	if (!t)
		return NULL;
	t->r.text = t->text;
	t->r.text_cap = sizeof(t->text);
	if (sql_tokenize(q, n, &t->r) == 0 && t->r.digest == digest) {
		d = registry_get(t->r.digest, t->r.text, t->r.text_len, q, n);
		if (d)
			verdict_classify(d, &t->r);
	}
	free(t);
	return d;
}
