/*
 * vcols.c: the verdict on each table's generated columns (see vcols.h): the
 * queue of tables a client has read, the catalog reader's check of each
 * (information_schema.COLUMNS, that table only), and the classification of
 * a generation expression as a SELECT list would be classified.
 *
 * A verdict is stored in its table as (generation << 2) | verdict; a
 * verdict of another generation than the current one counts as unknown, so
 * forgetting every verdict is one increment.
 */
#include "cache/vcols.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cache/tcols.h"
#include "sql/classify.h"
#include "sql/tokenizer.h"

#define QUEUE_MAX 256
#define EXPR_MAX 4096

static _Atomic uint32_t generation = 1;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static struct inval_table *queue[QUEUE_MAX];
static unsigned queued;

static uint32_t word(enum vcols_verdict v)
{
	return (atomic_load(&generation) << 2) | (uint32_t)v;
}

uint32_t vcols_generation(void)
{
	return atomic_load(&generation) & 0x3fffffffu;
}

enum vcols_verdict vcols_verdict(struct inval_table *t)
{
	uint32_t w = atomic_load_explicit(&t->vcols, memory_order_acquire);

	if ((w >> 2) != (atomic_load(&generation) & 0x3fffffffu))
		return VCOLS_UNKNOWN;
	return (enum vcols_verdict)(w & 3u);
}

bool vcols_check_later(struct inval_table *t)
{
	uint32_t expect = atomic_load(&t->vcols);
	bool added = false;

	if (vcols_verdict(t) != VCOLS_UNKNOWN)
		return false;
	pthread_mutex_lock(&queue_lock);
	if (queued < QUEUE_MAX && atomic_compare_exchange_strong(&t->vcols, &expect, word(VCOLS_QUEUED))) {
		queue[queued++] = t;
		added = true;
	}
	pthread_mutex_unlock(&queue_lock);
	return added;
}

void vcols_set_view(struct inval_table *t)
{
	uint32_t expect = atomic_load(&t->vcols);

	if (vcols_verdict(t) == VCOLS_UNKNOWN)   /* a queued one is the reader's to settle */
		atomic_compare_exchange_strong(&t->vcols, &expect, word(VCOLS_PLAIN));
}

void vcols_forget_all(void)
{
	pthread_mutex_lock(&queue_lock);
	atomic_fetch_add(&generation, 1);
	/* the tables still queued stay queued (sessions wait for them), to be
	 * checked under the new generation */
	for (unsigned i = 0; i < queued; i++)
		atomic_store(&queue[i]->vcols, word(VCOLS_QUEUED));
	pthread_mutex_unlock(&queue_lock);
}

bool vcols_pending(void)
{
	bool any;

	pthread_mutex_lock(&queue_lock);
	any = queued > 0;
	pthread_mutex_unlock(&queue_lock);
	return any;
}

const struct reason *vcols_expression_reason(const char *expr, size_t len)
{
	static const char head[] = "SELECT ";
	struct sql_tok_result *r;
	char *q, *text;
	const struct reason *reason;

	if (len > EXPR_MAX)
		return reason_of(WHY_VCOL_TOO_LONG);
	q = malloc(sizeof(head) + len);
	r = calloc(1, sizeof(*r));
	text = malloc(SQL_TOK_MIN_TEXT_CAP + 2 * len + sizeof(head));
	if (!q || !r || !text) {
		reason = reason_of(WHY_OUT_OF_MEMORY);
	} else {
		memcpy(q, head, sizeof(head) - 1);
		memcpy(q + sizeof(head) - 1, expr, len);
		r->text = text;
		r->text_cap = SQL_TOK_MIN_TEXT_CAP + 2 * len + sizeof(head);
		if (sql_tokenize(q, sizeof(head) - 1 + len, r) < 0 || !r->ok)
			reason = reason_of(WHY_VCOL_UNREADABLE);
		else
			reason = sql_skip_reason(r->text, r->text_len);
	}
	free(q);
	free(r);
	free(text);
	return reason;
}

/* The columns of res (check_table's query) as t's definition (tcols.h):
 * installed for catalog generation gen; nothing when out of memory. */
static void read_columns(MYSQL_RES *res, struct inval_table *t, uint32_t gen)
{
	unsigned n = (unsigned)mysql_num_rows(res), i = 0;
	size_t names = 0;
	struct tcols *c;
	MYSQL_ROW row;

	mysql_data_seek(res, 0);
	while ((row = mysql_fetch_row(res)))
		names += (row[1] ? strlen(row[1]) : 0) + 1;
	if (n == 0 || !(row = (mysql_data_seek(res, 0), mysql_fetch_row(res))) || !row[6] || !row[7])
		return;   /* no columns: nothing to resolve constraints with */
	c = tcols_new(row[6], row[7], n, names);
	if (!c)
		return;   /* out of memory: the table's reads keep no constraints */
	mysql_data_seek(res, 0);
	while (i < n && (row = mysql_fetch_row(res))) {
		unsigned long *lens = mysql_fetch_lengths(res);

		tcols_set(c, i++, row[1], row[2], row[3], row[4], row[5], row[0] && lens[0]);
	}
	tcols_install(t, c, gen);
}

/* The verdict on one table from the upstream: VCOLS_UNKNOWN when it could
 * not be read (*conn_lost when the connection failed). Its columns are
 * installed as its definition (tcols.h) on the way. */
static enum vcols_verdict check_table(MYSQL *m, struct inval_table *t, uint32_t gen, bool *conn_lost)
{
	/* asked by the server's own spelling: on a server with case-sensitive
	 * names the folded key would find no column of `Items` */
	const char *schema = inval_table_spelled_schema(t), *name = inval_table_spelled_name(t);
	char es[2 * INVAL_MAX_NAME + 1], en[2 * INVAL_MAX_NAME + 1], sql[2 * sizeof(es) + 320];
	enum vcols_verdict v = VCOLS_PLAIN;
	unsigned columns = 0;
	MYSQL_RES *res;
	MYSQL_ROW row;

	if (t->spelled_twice) {
		log_info("catalog: %s.%s: two tables of that name differ only in case: never cached",
			 schema, name);
		return VCOLS_NONDET;   /* which one a statement reads, its key does not tell */
	}
	mysql_real_escape_string(m, es, schema, strlen(schema));
	mysql_real_escape_string(m, en, name, strlen(name));
	/* every column (none seen: the login may not see them); the expression
	 * is NULL (MariaDB) or empty (MySQL) for a column that is not generated */
	snprintf(sql, sizeof(sql), "SELECT GENERATION_EXPRESSION, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, "
		 "COLLATION_NAME, CHARACTER_OCTET_LENGTH, TABLE_SCHEMA, TABLE_NAME "
		 "FROM information_schema.COLUMNS "
		 "WHERE TABLE_SCHEMA = '%s' AND TABLE_NAME = '%s' ORDER BY ORDINAL_POSITION", es, en);
	if (mysql_query(m, sql) || !(res = mysql_store_result(m))) {
		*conn_lost = mysql_errno(m) >= 2000 && mysql_errno(m) < 3000;
		log_warn("catalog: cannot read the generated columns of %s.%s: %s", schema, name, mysql_error(m));
		return VCOLS_UNKNOWN;
	}
	while (v == VCOLS_PLAIN && (row = mysql_fetch_row(res))) {
		unsigned long *lens = mysql_fetch_lengths(res);
		const struct reason *why = row[0] && lens[0] ? vcols_expression_reason(row[0], lens[0]) : NULL;

		columns++;
		if (why) {
			log_info("catalog: %s.%s has a generated column that is not deterministic (%s): "
				 "never cached", schema, name, why->text);
			v = VCOLS_NONDET;
		}
	}
	if (v == VCOLS_PLAIN && columns)
		read_columns(res, t, gen);
	mysql_free_result(res);
	if (columns == 0) {
		log_info("catalog: %s.%s: its columns are not visible to the node's login: never cached",
			 schema, name);
		v = VCOLS_NONDET;
	}
	return v;
}

int vcols_run_queue(MYSQL *m)
{
	for (;;) {
		struct inval_table *t;
		uint32_t gen, expect;
		enum vcols_verdict v;
		bool lost = false;

		pthread_mutex_lock(&queue_lock);
		t = queued ? queue[--queued] : NULL;
		gen = atomic_load(&generation);
		pthread_mutex_unlock(&queue_lock);
		if (!t)
			return 0;
		v = check_table(m, t, gen & 0x3fffffffu, &lost);
		expect = (gen << 2) | VCOLS_QUEUED;
		/* a verdict of a generation forgotten meanwhile is dropped */
		atomic_compare_exchange_strong(&t->vcols, &expect, v == VCOLS_UNKNOWN ? 0u : (gen << 2) | v);
		if (lost)
			return -1;
	}
}
