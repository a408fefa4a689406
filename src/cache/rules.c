/*
 * rules.c: owns the runtime query rules (see rules.h): validating and
 * compiling rows of query_rules (digest values, POSIX extended regular
 * expressions, value ranges), the installed set in rule_id order behind a
 * rwlock, and the per-shape decision.
 */
#include "cache/rules.h"

#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"

struct rule {
	struct rule_row row;     /* the strings are owned */
	bool has_digest;
	uint64_t digest;
	bool has_regex;
	regex_t re;
};

struct rules_set {
	struct rule *r;
	size_t n;
};

static pthread_rwlock_t rules_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct rules_set *installed;
static atomic_uint generation;

/* ------------------------------------------------------------ validation */

static bool is_set(const char *s)
{
	return s && *s;
}

/* "0x" + exactly 16 hex digits (ProxySQL shows 0x%016X); either case. */
static int parse_digest(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || strlen(s) != 18)
		return -1;
	for (int i = 2; i < 18; i++) {
		int h = hex_value(s[i]);

		if (h < 0)
			return -1;
		v = v << 4 | (uint64_t)h;
	}
	*out = v;
	return 0;
}

static int check_flag(int64_t id, const char *col, int64_t v, char *err, size_t errlen)
{
	if (v == 0 || v == 1)
		return 0;
	snprintf(err, errlen, "rule %lld: %s must be 0 or 1, not %lld", (long long)id, col,
		 (long long)v);
	return -1;
}

/* The values of one row (not the regex, compiled later). */
static int check_row(const struct rule_row *r, char *err, size_t errlen)
{
	long long id = (long long)r->rule_id;
	uint64_t dg;

	if (r->rule_id < 0 || r->rule_id > INT_MAX) {
		snprintf(err, errlen, "rule %lld: rule_id must be between 0 and %d", id, INT_MAX);
		return -1;
	}
	if (check_flag(r->rule_id, "active", r->active, err, errlen) < 0 ||
	    check_flag(r->rule_id, "apply", r->apply, err, errlen) < 0 ||
	    (r->has_cache_empty_result &&
	     check_flag(r->rule_id, "cache_empty_result", r->cache_empty_result, err, errlen) < 0))
		return -1;
	if (r->has_cache_ttl && (r->cache_ttl < 0 || r->cache_ttl > RULES_MAX_TTL_MS)) {
		snprintf(err, errlen, "rule %lld: cache_ttl must be NULL or between 0 and %d ms, "
			 "not %lld", id, RULES_MAX_TTL_MS, (long long)r->cache_ttl);
		return -1;
	}
	if (is_set(r->digest) && parse_digest(r->digest, &dg) < 0) {
		snprintf(err, errlen, "rule %lld: digest '%.64s' is not 0x followed by 16 hex "
			 "digits (as in stats_shoal_query_digest)", id, r->digest);
		return -1;
	}
	return 0;
}

/* ----------------------------------------------------------- compilation */

static char *dup_or_null(const char *s, bool *oom)
{
	char *c;

	if (!s)
		return NULL;
	c = strdup(s);
	if (!c)
		*oom = true;
	return c;
}

static void free_rule(struct rule *r)
{
	free((char *)r->row.username);
	free((char *)r->row.schemaname);
	free((char *)r->row.digest);
	free((char *)r->row.match_digest);
	free((char *)r->row.comment);
	if (r->has_regex)
		regfree(&r->re);
}

static int copy_row(struct rule *dst, const struct rule_row *src)
{
	bool oom = false;

	memset(dst, 0, sizeof(*dst));
	dst->row = *src;
	dst->row.username = dup_or_null(src->username, &oom);
	dst->row.schemaname = dup_or_null(src->schemaname, &oom);
	dst->row.digest = dup_or_null(src->digest, &oom);
	dst->row.match_digest = dup_or_null(src->match_digest, &oom);
	dst->row.comment = dup_or_null(src->comment, &oom);
	return oom ? -1 : 0;
}

static int compile_rule(struct rule *r, char *err, size_t errlen)
{
	int rc;

	if (is_set(r->row.digest)) {
		r->has_digest = true;
		parse_digest(r->row.digest, &r->digest); /* checked by check_row */
	}
	if (!is_set(r->row.match_digest))
		return 0;
	rc = regcomp(&r->re, r->row.match_digest, REG_EXTENDED | REG_ICASE | REG_NOSUB);
	if (rc != 0) {
		char why[160];

		regerror(rc, &r->re, why, sizeof(why));
		snprintf(err, errlen, "rule %lld: match_digest '%.200s' is not a valid POSIX "
			 "extended regular expression: %s", (long long)r->row.rule_id,
			 r->row.match_digest, why);
		return -1;
	}
	r->has_regex = true;
	return 0;
}

static int by_rule_id(const void *a, const void *b)
{
	int64_t x = ((const struct rule *)a)->row.rule_id, y = ((const struct rule *)b)->row.rule_id;

	return x < y ? -1 : x > y;
}

/* Sorted by rule_id; a repeated rule_id is an error. */
static int sort_rules(struct rules_set *s, char *err, size_t errlen)
{
	if (s->n > 1)
		qsort(s->r, s->n, sizeof(*s->r), by_rule_id);
	for (size_t i = 1; i < s->n; i++) {
		if (s->r[i].row.rule_id == s->r[i - 1].row.rule_id) {
			snprintf(err, errlen, "rule %lld appears twice", (long long)s->r[i].row.rule_id);
			return -1;
		}
	}
	return 0;
}

struct rules_set *rules_compile(const struct rule_row *rows, size_t n, char *err,
				size_t errlen)
{
	struct rules_set *s = calloc(1, sizeof(*s));

	if (!s || (n && !(s->r = calloc(n, sizeof(*s->r))))) {
		free(s);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (check_row(&rows[i], err, errlen) < 0)
			goto fail;
		s->n++;
		if (copy_row(&s->r[i], &rows[i]) < 0) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		if (compile_rule(&s->r[i], err, errlen) < 0)
			goto fail;
	}
	if (sort_rules(s, err, errlen) < 0)
		goto fail;
	return s;
fail:
	rules_free(s);
	return NULL;
}

void rules_free(struct rules_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free_rule(&s->r[i]);
	free(s->r);
	free(s);
}

/* --------------------------------------------------------------- runtime */

void rules_install(struct rules_set *s)
{
	struct rules_set *old;

	pthread_rwlock_wrlock(&rules_lock);
	old = installed;
	installed = s;
	pthread_rwlock_unlock(&rules_lock);
	atomic_fetch_add(&generation, 1);
	rules_free(old);
}

unsigned rules_generation(void)
{
	return atomic_load(&generation);
}

static bool rule_matches(const struct rule *r, uint64_t digest, const char *text)
{
	if (r->has_digest && r->digest != digest)
		return false;
	return !r->has_regex || regexec(&r->re, text, 0, NULL, 0) == 0;
}

int rules_decide(uint64_t digest, const char *digest_text, int *ttl_ms, int *rule_id)
{
	const char *text = digest_text ? digest_text : "";
	int verdict = 0;

	pthread_rwlock_rdlock(&rules_lock);
	for (size_t i = 0; installed && i < installed->n; i++) {
		const struct rule *r = &installed->r[i];

		if (!r->row.active || !rule_matches(r, digest, text))
			continue;
		if (r->row.has_cache_ttl) {
			verdict = r->row.cache_ttl > 0 ? 1 : -1;
			if (ttl_ms)
				*ttl_ms = (int)r->row.cache_ttl;
			if (rule_id)
				*rule_id = (int)r->row.rule_id;
			break;
		}
		if (r->row.apply)
			break;
	}
	pthread_rwlock_unlock(&rules_lock);
	return verdict;
}

int rules_each(int (*fn)(const struct rule_row *r, void *arg), void *arg)
{
	int rc = 0;

	pthread_rwlock_rdlock(&rules_lock);
	for (size_t i = 0; installed && i < installed->n && rc == 0; i++)
		rc = fn(&installed->r[i].row, arg);
	pthread_rwlock_unlock(&rules_lock);
	return rc;
}

size_t rules_count(void)
{
	size_t n;

	pthread_rwlock_rdlock(&rules_lock);
	n = installed ? installed->n : 0;
	pthread_rwlock_unlock(&rules_lock);
	return n;
}
