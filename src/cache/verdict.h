/*
 * verdict.h: a query shape's verdict. The first sight of a shape (and the
 * first after LOAD QUERY RULES TO RUNTIME) decides whether the classifier
 * accepts it (sql/classify.h: else it is skipped, with its reason) and,
 * if so, whether a cache is made for it: a cache made with CREATE CACHE
 * stays; else the query rules decide (cache with the rule's TTL, or
 * never), and without a rule auto-cache does.
 *
 * Thread-safety: as the registry's records (atomics): any worker.
 */
#ifndef SHOAL_CACHE_VERDICT_H
#define SHOAL_CACHE_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "cache/registry.h"
#include "sql/tokenizer.h"

/* Decide d's verdict from its tokens, unless it was decided already. */
void verdict_classify(struct cache_def *d, const struct sql_tok_result *tok);

/* The shape whose text is q, its verdict decided as its first sight would
 * (a cache snapshot's shapes, cache/warm.c): NULL when q's digest is not
 * digest (read by another tokenizer), or out of memory. */
struct cache_def *verdict_def_for_text(uint64_t digest, const char *q, size_t n);

#endif
