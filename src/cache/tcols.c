/*
 * tcols.c: base tables' column definitions (see tcols.h): built from the
 * catalog reader's rows, kept in each table's inval_table under a sharded
 * lock, compared when read again.
 */
#include "cache/tcols.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/log.h"
#include "cache/tablemap.h"
#include "sql/spooky.h"

#define TCOLS_LOCKS 16

static pthread_mutex_t locks[TCOLS_LOCKS] = {
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER,
};

static pthread_mutex_t *lock_of(const struct inval_table *t)
{
	return &locks[((uintptr_t)t >> 6) % TCOLS_LOCKS];
}

struct tcols *tcols_get(struct inval_table *t, uint32_t gen)
{
	pthread_mutex_t *l = lock_of(t);
	struct tcols *c;

	pthread_mutex_lock(l);
	c = t->cols;
	if (c && atomic_load_explicit(&c->gen, memory_order_relaxed) == gen)
		atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
	else
		c = NULL;   /* none read, or read in another catalog generation */
	pthread_mutex_unlock(l);
	return c;
}

void tcols_put(struct tcols *c)
{
	if (c && atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1)
		free(c);
}

void tcols_drop(struct inval_table *t)
{
	pthread_mutex_t *l = lock_of(t);
	struct tcols *c;

	pthread_mutex_lock(l);
	c = t->cols;
	t->cols = NULL;
	pthread_mutex_unlock(l);
	tcols_put(c);
}

uint32_t tcols_name_hash(const char *schema, size_t slen, const char *table, size_t tlen)
{
	uint64_t h = spooky_hash64(schema, slen, 0x7c01u);

	return (uint32_t)spooky_hash64(table, tlen, h);
}

struct tcols *tcols_new(const char *schema, const char *table, unsigned ncols, size_t names_bytes)
{
	size_t slen = strlen(schema), tlen = strlen(table);
	size_t size = sizeof(struct tcols) + ncols * sizeof(struct tcol) + names_bytes + slen + tlen + 2;
	struct tcols *c = calloc(1, size);
	char *at;

	if (!c)
		return NULL;   /* out of memory */
	atomic_init(&c->refs, 1);
	c->ncols = ncols;
	at = (char *)&c->cols[ncols];
	memcpy(at, schema, slen + 1);
	c->schema = at;
	memcpy(at + slen + 1, table, tlen + 1);
	c->table = at + slen + 1;
	c->name_hash = tcols_name_hash(schema, slen, table, tlen);
	/* the column names follow, written by tcols_set in order */
	c->cols[0].name = ncols ? at + slen + tlen + 2 : NULL;
	return c;
}

static bool word(const char *s, const char *w)
{
	return s && strcasecmp(s, w) == 0;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);

	return n >= k && strcmp(s + n - k, tail) == 0;
}

enum tcoll tcoll_of(const char *name)
{
	static const char *const charsets[] = { "latin1_", "ascii_", "utf8_", "utf8mb3_", "utf8mb4_" };
	bool known = false, nopad;

	if (!name || !*name)
		return TCOLL_NONE;   /* not a string column */
	if (strcmp(name, "binary") == 0)
		return TCOLL_BYTES;   /* bytes: every one counts */
	for (size_t i = 0; i < sizeof(charsets) / sizeof(charsets[0]); i++)
		known |= strncmp(name, charsets[i], strlen(charsets[i])) == 0;
	if (!known)
		return TCOLL_UNKNOWN;   /* a multi-byte charset whose bytes this node does not compare */
	nopad = strstr(name, "nopad") || strstr(name, "_0900_");
	if (ends_with(name, "_bin"))
		return nopad ? TCOLL_BIN_NOPAD : TCOLL_BIN_PAD;
	if (ends_with(name, "_general_ci") || ends_with(name, "_general_nopad_ci") ||
	    strcmp(name, "latin1_swedish_ci") == 0 || strcmp(name, "latin1_swedish_nopad_ci") == 0)
		return nopad ? TCOLL_CI_NOPAD : TCOLL_CI_PAD;
	if (ends_with(name, "_unicode_ci") || ends_with(name, "_unicode_520_ci") ||
	    ends_with(name, "_unicode_nopad_ci") || ends_with(name, "_unicode_520_nopad_ci") ||
	    ends_with(name, "_uca1400_ai_ci") || ends_with(name, "_uca1400_nopad_ai_ci") ||
	    ends_with(name, "_0900_ai_ci"))
		return nopad ? TCOLL_UCA_NOPAD : TCOLL_UCA_PAD;
	return TCOLL_UNKNOWN;
}

const char *tcoll_name(enum tcoll c)
{
	switch (c) {
	case TCOLL_NONE: return "none";
	case TCOLL_BYTES: return "bytes";
	case TCOLL_BIN_PAD: return "bin";
	case TCOLL_BIN_NOPAD: return "bin-nopad";
	case TCOLL_CI_PAD: return "ci";
	case TCOLL_CI_NOPAD: return "ci-nopad";
	case TCOLL_UCA_PAD: return "uca";
	case TCOLL_UCA_NOPAD: return "uca-nopad";
	default: return "unknown";
	}
}

/* The kind and binlog type of a DATA_TYPE. */
static void kind_of(const char *dt, struct tcol *c)
{
	static const struct { const char *name; uint8_t kind, type; } types[] = {
		{ "tinyint", TK_INT, TT_TINY }, { "smallint", TK_INT, TT_SHORT },
		{ "mediumint", TK_INT, TT_INT24 }, { "int", TK_INT, TT_LONG },
		{ "integer", TK_INT, TT_LONG }, { "bigint", TK_INT, TT_LONGLONG },
		{ "decimal", TK_DECIMAL, TT_NEWDECIMAL }, { "numeric", TK_DECIMAL, TT_NEWDECIMAL },
		{ "char", TK_CHAR, TT_STRING }, { "varchar", TK_CHAR, TT_VARCHAR },
		{ "tinytext", TK_CHAR, TT_BLOB }, { "text", TK_CHAR, TT_BLOB },
		{ "mediumtext", TK_CHAR, TT_BLOB }, { "longtext", TK_CHAR, TT_BLOB },
		{ "binary", TK_BYTES, TT_STRING }, { "varbinary", TK_BYTES, TT_VARCHAR },
		{ "tinyblob", TK_BYTES, TT_BLOB }, { "blob", TK_BYTES, TT_BLOB },
		{ "mediumblob", TK_BYTES, TT_BLOB }, { "longblob", TK_BYTES, TT_BLOB },
	};

	c->kind = TK_OTHER;
	c->type = 0;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (word(dt, types[i].name)) {
			c->kind = types[i].kind;
			c->type = types[i].type;
			return;
		}
}

void tcols_set(struct tcols *c, unsigned i, const char *name, const char *data_type,
	       const char *column_type, const char *collation, const char *octets, bool generated)
{
	struct tcol *col = &c->cols[i];
	size_t n = name ? strlen(name) : 0;
	char *at = (char *)(i == 0 ? c->cols[0].name : c->cols[i - 1].name + c->cols[i - 1].name_len + 1);

	memcpy(at, name ? name : "", n + 1);
	col->name = at;
	col->name_len = (uint16_t)(n > UINT16_MAX ? UINT16_MAX : n);
	kind_of(data_type, col);
	col->is_unsigned = column_type && strstr(column_type, "unsigned");
	col->generated = generated;
	col->coll = col->kind == TK_BYTES ? TCOLL_BYTES
		    : col->kind == TK_CHAR ? tcoll_of(collation) : TCOLL_NONE;
	if (col->kind == TK_CHAR && col->coll == TCOLL_BYTES)
		col->kind = TK_BYTES;   /* CHAR ... CHARACTER SET binary */
	col->fixlen = col->kind == TK_BYTES && col->type == TT_STRING && octets ?
		      (uint32_t)strtoul(octets, NULL, 10) : 0;
}

int tcols_find(const struct tcols *c, const char *name, size_t len)
{
	for (unsigned i = 0; i < c->ncols; i++)
		if (c->cols[i].name_len == len && strncasecmp(c->cols[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

static bool same_definition(const struct tcols *a, const struct tcols *b)
{
	if (a->ncols != b->ncols || strcmp(a->schema, b->schema) != 0 || strcmp(a->table, b->table) != 0)
		return false;
	for (unsigned i = 0; i < a->ncols; i++) {
		const struct tcol *x = &a->cols[i], *y = &b->cols[i];

		if (x->name_len != y->name_len || memcmp(x->name, y->name, x->name_len) != 0 ||
		    x->kind != y->kind || x->coll != y->coll || x->type != y->type ||
		    x->is_unsigned != y->is_unsigned || x->generated != y->generated || x->fixlen != y->fixlen)
			return false;
	}
	return true;
}

void tcols_install(struct inval_table *t, struct tcols *c, uint32_t gen)
{
	pthread_mutex_t *l = lock_of(t);
	struct tcols *old;
	bool differs;

	pthread_mutex_lock(l);
	old = t->cols;
	differs = old && !same_definition(old, c);
	if (old && !differs) {
		atomic_store(&old->gen, gen);   /* the same: only current again */
		pthread_mutex_unlock(l);
		tcols_put(c);
		return;
	}
	atomic_store(&c->gen, gen);
	t->cols = c;
	pthread_mutex_unlock(l);
	tcols_put(old);
	if (differs) {
		/* entries whose constraints were resolved with the old definition go */
		log_info("catalog: %s.%s has a new definition: its cached results are invalidated",
			 c->schema, c->table);
		inval_bump_why(t, 0, 0, IW_T_DEFINITION);
	}
}
