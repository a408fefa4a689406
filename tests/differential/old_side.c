/*
 * old_side.c: the differential's old side (see record.h): what the readers
 * of 5a9fd58 (tests/differential/old/) make of a statement text, as the
 * node called them then.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "readers.h"
#include "record.h"
#include "sql/facts.h"
#include "sql/keywords.h"
#include "sql/lexer.h"
#include "sql/tables.h"
#include "sql/tokenizer.h"

static void put(char *dst, const char *fmt, ...)
{
	size_t n = strlen(dst);
	va_list ap;

	if (n + 1 >= FIELD_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(dst + n, FIELD_MAX - n, fmt, ap);
	va_end(ap);
}

static void put_ref(char *dst, const struct sql_table_ref *r)
{
	put(dst, "[%.*s%s%.*s q%u f%u]", r->schema ? (int)r->schema_len : 0, r->schema ? r->schema : "",
	    r->schema ? "." : "", (int)r->name_len, r->name, r->quoted, r->flags);
}

static void digest(const char *q, size_t n, struct record *r, struct sql_tok_result *t)
{
	sql_tokenize(q, n, t);
	put(r->v[F_DIGEST], "%016" PRIx64, t->digest);
	put(r->v[F_DIGEST_TEXT], "%s", t->text);
	put(r->v[F_LITERALS], "%u%s", t->nlits, t->lits_overflow ? "+" : "");
	for (unsigned i = 0; i < t->nlits; i++)
		put(r->v[F_LITERALS], " %u:%u:%u:%u", t->lits[i].off, t->lits[i].len, t->lits[i].kind,
		    t->lits[i].flags);
	put(r->v[F_TOK_FLAGS], "%#x ok %d", t->flags, t->ok);
	put(r->v[F_KEYWORD], "%s", sql_keyword_name(t->keyword));
}

static void tables(const char *q, size_t n, struct record *r)
{
	struct sql_tables t;
	struct stmt_facts f;
	static const char *const kw_names[KW__COUNT] = {
		[KW_NONE] = "",
#define KW_NAME(w) [KW_##w] = #w,
		SQL_KEYWORDS(KW_NAME)
#undef KW_NAME
	};

	stmt_facts_read(q, n, &f);
	put(r->v[F_FIRST], "%s", kw_names[f.first]);
	put(r->v[F_SEEN], "%#x", f.seen);
	sql_tables(q, n, &t);
	put(r->v[F_KIND], "%s", sql_stmt_kind_name(t.kind));
	put(r->v[F_TABLES_FLAGS], "%#x", t.flags);
	put(r->v[F_TABLES], "%u", t.n);
	for (unsigned i = 0; i < t.n; i++)
		put_ref(r->v[F_TABLES], &t.refs[i]);
	put(r->v[F_ROUTINES], "%u", t.nroutines);
	for (unsigned i = 0; i < t.nroutines; i++)
		put_ref(r->v[F_ROUTINES], &t.routines[i]);
}

static void session(const char *q, size_t n, int field, bool mariadb, struct record *r)
{
	struct sv_delta d;
	unsigned f = sv_classify(q, n, NULL, &d, mariadb);

	put(r->v[field], "%#x", f);
	if (!(f & SV_CHANGES))
		return;   /* the delta counts only with SV_CHANGES */
	if (d.set_db || d.drop_db)
		put(r->v[field], " %s[%s]", d.set_db ? "use" : "drop", d.db);
	if (d.set_names)
		put(r->v[field], " names[%s]", d.names);
	for (unsigned i = 0; i < d.n; i++)
		put(r->v[field], " %s=[%s]", d.vars[i].name, d.vars[i].value);
}

static void cache_cmd(const char *q, size_t n, const struct sql_tok_result *tok, struct record *r)
{
	struct cache_cmd_args a;
	char err[256] = "";
	int kind = cache_cmd_parse(q, n, &a, err, sizeof(err));
	const struct create_cache *c = &a.create;

	put(r->v[F_CACHE_PARSE], "%d", kind);
	if (kind == CC_CREATE)
		put(r->v[F_CACHE_PARSE], " id %d [%s] ttl %d refresh %d coalesce %d txn %d [%.*s] [%s]",
		    c->from_id, c->name, c->ttl_ms, c->refresh_ms, c->coalesce_ms, c->txn,
		    c->from_id ? 0 : (int)c->select_len, c->from_id ? "" : c->select, c->query_id);
	else if (kind > 0)
		put(r->v[F_CACHE_PARSE], " [%s] %ld", a.target, a.limit);
	put(r->v[F_CACHE_ERROR], "%s", kind < 0 ? err : "");
	/* session.c's answer_cache_sql: the first keyword, then the parser */
	switch (tok->keyword) {
	case SQL_KW_CREATE: case SQL_KW_DROP: case SQL_KW_SHOW: case SQL_KW_FLUSH: case SQL_KW_EXPLAIN:
		put(r->v[F_CACHE_SQL], "%d", kind);
		break;
	default:
		put(r->v[F_CACHE_SQL], "0");
	}
}

static void dml(void *arg, const char *p, size_t n)
{
	put(arg, " [%.*s]", (int)n, p);
}

static bool call(void *arg, const struct sql_tok *schema, const struct sql_tok *name, bool by_call)
{
	if (!name)
		put(arg, " creates");
	else
		put(arg, " %s[%.*s%s%.*s]", by_call ? "call" : "fn", schema ? (int)schema->len : 0,
		    schema ? schema->p : "", schema ? "." : "", (int)name->len, name->p);
	return false;   /* every call asked, as if none may create one */
}

static void bodies(const char *q, size_t n, struct record *r)
{
	put(r->v[F_BODY], "%d", old_body_may_call_or_create(q));
	put(r->v[F_TRIGGER_WRITES], "%d", old_trigger_writes(q, dml, r->v[F_TRIGGER_WRITES]));
	old_trigger_calls(q, call, r->v[F_TRIGGER_CALLS]);
	(void)n;
}

void old_side(const char *q, size_t n, struct record *r)
{
	static struct {
		struct sql_tok_result r;
		char text[SQL_TOK_MIN_TEXT_CAP];
	} t;
	struct kill_req k;
	bool priv, role;

	for (int i = 0; i < F__COUNT; i++)
		r->v[i][0] = 0;
	t.r.text = t.text;
	t.r.text_cap = sizeof(t.text);
	digest(q, n, r, &t.r);
	tables(q, n, r);
	session(q, n, F_SV_MARIADB, true, r);
	session(q, n, F_SV_MYSQL, false, r);
	if (old_parse_kill(q, n, &k))
		put(r->v[F_KILL], "%s %d %" PRIu64, k.unsupported ? "unsupported" : "answered", k.kind, k.id);
	else
		put(r->v[F_KILL], "no");
	put(r->v[F_KILL_ANY], "%d", kill_statement(q, n));
	put(r->v[F_MONITOR], "%d", monitor_match(q, n));
	cache_cmd(q, n, &t.r, r);
	put(r->v[F_PRIV_TEXT], "%d", grants_text_changes_privileges(q, n));
	old_grants_note(&t.r, &priv, &role);
	put(r->v[F_GRANTS], "%d %d", priv, role);
	put(r->v[F_FLUSH_ALL], "%d", old_flushes_all(q, n));
	put(r->v[F_ONESHOT_RU], "%d", t.r.keyword == SQL_KW_SET && old_sets_oneshot_ru(q, n));
	put(r->v[F_ENDS_ONESHOT], "%d", old_ends_oneshot(t.r.keyword, q, n));
	bodies(q, n, r);
}
