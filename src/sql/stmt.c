/*
 * stmt.c: one statement text read once (see stmt.h): the digest on first
 * use, and one pass of the lexer, driven by the tables reader, whose token
 * hook notes the facts, the statement boundaries and their first words, the
 * kept tokens and the marks; the cursor over the kept tokens; a prepared
 * statement's kept reading.
 */
#include "sql/stmt.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(KW__COUNT <= 256, "a kept token holds its keyword id in a byte");

void stmt_begin(struct stmt *st, const char *q, size_t n)
{
	st->q = q;
	st->n = n;
	st->have = 0;
	st->digest_failed = false;
	st->flags = 0;
	st->nparts = 0;
	st->ntoks = 0;
	st->where = NULL;
}

const struct sql_tok_result *stmt_digest(struct stmt *st)
{
	if (!(st->have & STMT_HAVE_DIGEST)) {
		st->have |= STMT_HAVE_DIGEST;
		st->tok.text = st->text;
		st->tok.text_cap = sizeof(st->text);
		st->digest_failed = sql_tokenize(st->q, st->n, &st->tok) < 0;
	}
	return st->digest_failed ? NULL : &st->tok;
}

/* ---- statements that change privileges ------------------------------------ */

/* The first words of the statements that change privileges or accounts. */
static const enum sql_kw privilege_heads[][STMT_HEAD] = {
	{ KW_GRANT }, { KW_REVOKE }, { KW_ALTER, KW_USER }, { KW_DROP, KW_USER },
	{ KW_RENAME, KW_USER }, { KW_SET, KW_PASSWORD }, { KW_SET, KW_DEFAULT, KW_ROLE },
	{ KW_DROP, KW_ROLE }, { KW_FLUSH, KW_PRIVILEGES }, { KW_CREATE, KW_OR, KW_REPLACE, KW_USER },
	{ KW_CREATE, KW_OR, KW_REPLACE, KW_ROLE }, { KW_CREATE, KW_USER }, { KW_CREATE, KW_ROLE },
};

static bool head_is(const struct stmt_part *p, const enum sql_kw *words)
{
	for (unsigned i = 0; i < STMT_HEAD && words[i]; i++)
		if (i >= p->nhead || p->head[i] != words[i])
			return false;
	return true;
}

/* The marks a statement's first words give (most statements' first word
 * can give none: one switch). */
static unsigned part_marks(const struct stmt_part *p)
{
	static const enum sql_kw set_role[] = { KW_SET, KW_ROLE, KW_NONE };
	static const enum sql_kw set_txn[] = { KW_SET, KW_TRANSACTION, KW_NONE };
	unsigned f = 0;
	unsigned i = 1;

	switch (p->nhead ? p->head[0] : KW_NONE) {
	case KW_GRANT: case KW_REVOKE: case KW_ALTER: case KW_DROP: case KW_RENAME: case KW_SET:
	case KW_FLUSH: case KW_CREATE: case KW_REPAIR:
		break;
	default:
		return 0;   /* a SELECT, an INSERT, ...: no mark */
	}
	for (size_t k = 0; k < sizeof(privilege_heads) / sizeof(privilege_heads[0]); k++)
		if (head_is(p, privilege_heads[k]))
			f |= STMT_PRIVILEGES;
	if (head_is(p, set_role))
		f |= STMT_SET_ROLE;
	if (head_is(p, set_txn))
		f |= STMT_ONESHOT_RU;   /* kept only with READ UNCOMMITTED (stmt_read) */
	if (p->head[0] == KW_REPAIR)
		f |= STMT_FLUSH_TABLES;
	if (p->nhead > 1 && p->head[0] == KW_FLUSH) {
		if (p->head[1] == KW_NO_WRITE_TO_BINLOG || p->head[1] == KW_LOCAL)
			i = 2;
		if (i < p->nhead && (p->head[i] == KW_TABLE || p->head[i] == KW_TABLES))
			f |= STMT_FLUSH_TABLES;
	}
	return f;
}

bool sql_changes_privileges(const char *q, size_t n)
{
	struct sql_lex lx = { .s = q, .n = n, .raw = true };
	struct stmt_part p = { .nhead = 0 };
	struct sql_tok t;

	do
		sql_lex_next(&lx, &t);
	while (sql_is_punct(&t, '('));
	for (; p.nhead < STMT_HEAD && t.kind != T_END && !sql_is_punct(&t, ';'); sql_lex_next(&lx, &t))
		p.head[p.nhead++] = t.kind == T_WORD ? t.kw : KW_NONE;
	return (part_marks(&p) & STMT_PRIVILEGES) != 0;
}

/* ---- the one pass --------------------------------------------------------- */

/* What the token hook keeps between tokens. */
struct reading {
	struct stmt *st;
	const char *next;      /* where the next token not noted yet starts, at the earliest */
	bool keep;             /* tokens are kept (a statement whose readers walk them) */
	bool open;             /* a statement has begun since the last ';' */
	bool led;              /* ... and is past its leading '(' */
	struct stmt_part cur;
};

/* The statement read up to end (its ';', or the end of the text). */
static __attribute__((noinline)) void end_part(struct reading *r, const char *end)
{
	struct stmt *st = r->st;

	if (!r->open)
		return;
	r->open = false;
	r->cur.len = (uint32_t)(end - st->q) - r->cur.off;
	st->flags |= part_marks(&r->cur);
	if (st->nparts < STMT_PARTS_MAX)
		st->parts[st->nparts++] = r->cur;
	else
		st->flags |= STMT_PARTS_MORE;
}

/* The words whose statements have readers that walk their tokens (the
 * session state's, the cache SQL's): their first tokens are kept. */
static bool keeps_tokens(enum sql_kw first)
{
	switch (first) {
	case KW_SET: case KW_USE: case KW_DROP: case KW_COMMIT: case KW_ROLLBACK: case KW_FLUSH:
	case KW_CREATE: case KW_SHOW: case KW_EXPLAIN:
		return true;
	default:
		return false;
	}
}

/* The first words whose statements part_marks reads further. */
static bool marks_further(enum sql_kw first)
{
	switch (first) {
	case KW_GRANT: case KW_REVOKE: case KW_ALTER: case KW_DROP: case KW_RENAME: case KW_SET:
	case KW_FLUSH: case KW_CREATE: case KW_REPAIR:
		return true;
	default:
		return false;
	}
}

static __attribute__((noinline)) void keep_token(struct reading *r, const struct sql_lex *lx,
						 const struct sql_tok *t)
{
	struct stmt *st = r->st;
	struct stmt_tok *k;

	if (st->ntoks == STMT_TOKS_MAX) {
		r->keep = false;   /* no more: a cursor lexes from the last kept one */
		return;
	}
	k = &st->toks[st->ntoks++];
	k->off = (uint32_t)(t->p - st->q);
	k->len = (uint32_t)t->len;
	k->end = (uint32_t)lx->i;
	k->kind = (uint8_t)t->kind;
	k->kw = (uint8_t)t->kw;
}

/* A statement's first words (past a leading '('), as far as part_marks
 * reads them. */
static __attribute__((noinline)) void part_token(struct reading *r, const struct sql_tok *t)
{
	if (!r->open) {
		r->open = true;
		r->led = false;
		r->cur = (struct stmt_part){ .off = (uint32_t)(t->p - r->st->q) };
	}
	if (!r->led && sql_is_punct(t, '('))
		return;
	r->cur.head[r->cur.nhead++] = t->kind == T_WORD ? t->kw : KW_NONE;
	if (!r->led && !marks_further(t->kw))
		r->cur.nhead = STMT_HEAD;   /* no mark to read past this first word */
	r->led = true;
}

/* The lexer's hook: every token the tables reader reads, in order, some
 * read again (a reader going back): the facts take each read (facts.h),
 * the rest only the first reading of each token. */
static void note(void *arg, const struct sql_lex *lx, const struct sql_tok *t)
{
	struct reading *r = arg;

	stmt_facts_token(&r->st->facts, lx, t);
	if (t->p < r->next)
		return;   /* read again: noted the first time */
	if (!r->next)
		r->keep = keeps_tokens(t->kw);   /* the first token: are the rest kept? */
	r->next = lx->s + lx->i;
	if (r->keep)
		keep_token(r, lx, t);
	if (t->kind == T_PUNCT && t->c == ';' && t->len == 1)
		end_part(r, t->p);
	else if (!r->open || r->cur.nhead < STMT_HEAD)
		part_token(r, t);
}

/* READ UNCOMMITTED among the kept tokens of a SET TRANSACTION (which
 * keeps them), or, past them, in the rest of the text. */
static bool read_uncommitted(const struct stmt *st)
{
	struct sql_cursor c;
	struct sql_tok t;
	enum sql_kw prev = KW_NONE;

	for (stmt_cursor(&c, st), sql_cursor_next(&c, &t); t.kind != T_END; sql_cursor_next(&c, &t)) {
		if (t.kw == KW_UNCOMMITTED && prev == KW_READ)
			return true;
		prev = t.kw;
	}
	return false;
}

void stmt_read(struct stmt *st)
{
	struct reading r = { .st = st };

	if (st->have & STMT_HAVE_READ)
		return;
	st->have |= STMT_HAVE_READ;
	stmt_facts_begin(&st->facts);
	sql_tables_read(st->q, st->n, &st->tables, note, &r);
	end_part(&r, st->q + st->n);
	if (!r.keep || st->ntoks == 0)
		st->flags |= STMT_TOKS_MORE;   /* not all kept: a cursor lexes past them */
	if (st->tables.flags & SQL_TABLES_DOUBT)
		st->flags |= STMT_DOUBT;
	/* a SET TRANSACTION's level is the next transaction's only when it is
	 * READ UNCOMMITTED (anywhere) */
	if (st->flags & STMT_ONESHOT_RU) {
		if (read_uncommitted(st))
			st->flags |= STMT_READ_UNCOMMITTED;
		else
			st->flags &= ~(unsigned)STMT_ONESHOT_RU;
	}
}

bool stmt_set_names(const struct stmt *st, const char *const *names)
{
	struct sql_cursor c;
	struct sql_tok t;

	if (st->facts.first != KW_SET)
		return false;   /* a SET only */
	stmt_cursor(&c, st);
	for (sql_cursor_next(&c, &t); t.kind != T_END; sql_cursor_next(&c, &t)) {
		if (!sql_is_name(&t))
			continue;
		for (int i = 0; names[i]; i++)
			if (sql_name_is(&t, names[i]))
				return true;
	}
	return false;
}

/* ---- a prepared statement's kept reading ---------------------------------- */

struct stmt_kept *stmt_keep(const struct stmt *st)
{
	const struct sql_tables *t = &st->tables;
	struct stmt_kept *k = malloc(sizeof(*k) + (t->n + t->nroutines) * sizeof(k->refs[0]));

	if (!k)
		return NULL;
	k->flags = st->flags & ~(unsigned)(STMT_TOKS_MORE | STMT_PARTS_MORE);
	k->facts = st->facts;
	k->kind = t->kind;
	k->tflags = t->flags;
	k->n = t->n;
	k->nroutines = t->nroutines;
	memcpy(k->refs, t->refs, t->n * sizeof(k->refs[0]));
	memcpy(k->refs + t->n, t->routines, t->nroutines * sizeof(k->refs[0]));
	return k;
}

void stmt_unkeep(struct stmt *st, const struct stmt_kept *k, const char *q, size_t n)
{
	stmt_begin(st, q, n);
	st->have = STMT_HAVE_READ;
	st->flags = k->flags | STMT_TOKS_MORE;   /* no token kept: a cursor lexes the text */
	st->facts = k->facts;
	memset(&st->tables, 0, sizeof(st->tables));
	st->tables.kind = k->kind;
	st->tables.flags = k->tflags;
	st->tables.n = k->n;
	st->tables.nroutines = k->nroutines;
	memcpy(st->tables.refs, k->refs, k->n * sizeof(k->refs[0]));
	memcpy(st->tables.routines, k->refs + k->n, k->nroutines * sizeof(k->refs[0]));
}

/* ---- the cursor ----------------------------------------------------------- */

void stmt_cursor(struct sql_cursor *c, const struct stmt *st)
{
	c->st = st;
	c->i = 0;
	c->pos = 0;
	c->lx = (struct sql_lex){ .s = st->q, .n = st->n, .raw = true };
	if (!(st->flags & STMT_TOKS_MORE))
		c->lx.i = st->n;                        /* every token is kept */
	else if (st->ntoks > 0)
		c->lx.i = st->toks[st->ntoks - 1].end;  /* the lexer goes on from there */
}

void sql_cursor_text(struct sql_cursor *c, const char *q, size_t n)
{
	c->st = NULL;
	c->i = 0;
	c->pos = 0;
	c->lx = (struct sql_lex){ .s = q, .n = n, .raw = true };
}

void sql_cursor_next(struct sql_cursor *c, struct sql_tok *t)
{
	const struct stmt_tok *k;

	if (!c->st || c->i >= c->st->ntoks) {
		sql_lex_next(&c->lx, t);
		if (t->kind != T_END)
			c->pos = c->lx.i;
		return;
	}
	k = &c->st->toks[c->i++];
	c->pos = k->end;
	t->kind = (enum sql_tkind)k->kind;
	t->kw = (enum sql_kw)k->kw;
	t->p = c->st->q + k->off;
	t->len = k->len;
	t->c = t->kind == T_PUNCT ? *t->p : 0;
}

void sql_cursor_peek(const struct sql_cursor *c, struct sql_tok *t)
{
	struct sql_cursor copy = *c;

	sql_cursor_next(&copy, t);
}

size_t sql_cursor_pos(const struct sql_cursor *c)
{
	return c->pos;
}

bool sql_cursor_doubt(const struct sql_cursor *c)
{
	return (c->st && (c->st->flags & STMT_DOUBT)) || c->lx.doubt;
}
