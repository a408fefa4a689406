/*
 * new_side.c: the differential's new side (see record.h): what the node's
 * one reading (src/sql/stmt.h) and the consumers on it make of a statement
 * text, through the functions the node calls, written as old_side.c writes
 * the old readers' (the first keyword in the old list's terms).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cache/commands.h"
#include "cache/grants.h"
#include "core/kill.h"
#include "core/monitor.h"
#include "proto/packet.h"
#include "record.h"
#include "session/sessvars.h"
#include "session/stmts.h"
#include "sql/bodies.h"
#include "sql/stmt.h"
#include "upstream/ident.h"

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
	/* the alias is the new reading's own: not compared */
	put(dst, "[%.*s%s%.*s q%u f%u]", r->schema ? (int)r->schema_len : 0, r->schema ? r->schema : "",
	    r->schema ? "." : "", (int)r->name_len, r->name, r->quoted & 3, r->flags);
}

/* The digest's first keyword as the old list named it: the words it had
 * (DESC was DESCRIBE), OTHER for any other first word, "" for none. */
static const char *old_keyword(const struct sql_tok_result *t)
{
	static const enum sql_kw listed[] = {
		KW_SELECT, KW_INSERT, KW_UPDATE, KW_DELETE, KW_REPLACE, KW_SET, KW_SHOW, KW_BEGIN, KW_START,
		KW_COMMIT, KW_ROLLBACK, KW_USE, KW_CALL, KW_WITH, KW_EXPLAIN, KW_DESCRIBE, KW_CREATE, KW_ALTER,
		KW_DROP, KW_TRUNCATE, KW_LOCK, KW_UNLOCK, KW_PREPARE, KW_EXECUTE, KW_DEALLOCATE, KW_LOAD,
		KW_GRANT, KW_REVOKE, KW_KILL, KW_FLUSH, KW_DO, KW_HANDLER, KW_SAVEPOINT, KW_RELEASE, KW_XA,
		KW_ANALYZE, KW_OPTIMIZE,
	};
	size_t i = 0;

	if (t->keyword == KW_DESC)
		return "DESCRIBE";
	for (size_t k = 0; k < sizeof(listed) / sizeof(listed[0]); k++)
		if (t->keyword == listed[k])
			return sql_kw_name(t->keyword);
	while (i < t->text_len && (t->text[i] == '(' || t->text[i] == ' '))
		i++;
	return i < t->text_len ? "OTHER" : "";
}

static void digest(struct stmt *st, struct record *r)
{
	const struct sql_tok_result *t = stmt_digest(st);

	put(r->v[F_DIGEST], "%016" PRIx64, t->digest);
	put(r->v[F_DIGEST_TEXT], "%s", t->text);
	put(r->v[F_LITERALS], "%u%s", t->nlits, t->lits_overflow ? "+" : "");
	for (unsigned i = 0; i < t->nlits; i++)
		put(r->v[F_LITERALS], " %u:%u:%u:%u", t->lits[i].off, t->lits[i].len, t->lits[i].kind,
		    t->lits[i].flags);
	put(r->v[F_TOK_FLAGS], "%#x ok %d", t->flags, t->ok);
	put(r->v[F_KEYWORD], "%s", old_keyword(t));
}

static void tables(const struct stmt *st, struct record *r)
{
	const struct sql_tables *t = &st->tables;

	put(r->v[F_FIRST], "%s", sql_kw_name(st->facts.first));
	put(r->v[F_SEEN], "%#x", st->facts.seen);
	put(r->v[F_KIND], "%s", sql_stmt_kind_name(t->kind));
	put(r->v[F_TABLES_FLAGS], "%#x", t->flags & ~(unsigned)SQL_TABLES_DOUBT);   /* the new reading's own */
	put(r->v[F_TABLES], "%u", t->n);
	for (unsigned i = 0; i < t->n; i++)
		put_ref(r->v[F_TABLES], &t->refs[i]);
	put(r->v[F_ROUTINES], "%u", t->nroutines);
	for (unsigned i = 0; i < t->nroutines; i++)
		put_ref(r->v[F_ROUTINES], &t->routines[i]);
}

static void session(const struct stmt *st, int field, bool mariadb, struct record *r)
{
	struct sv_delta d;
	unsigned f = sv_classify(st, &d, mariadb);

	put(r->v[field], "%#x", f);
	if (!(f & SV_CHANGES))
		return;
	if (d.set_db || d.drop_db)
		put(r->v[field], " %s[%s]", d.set_db ? "use" : "drop", d.db);
	if (d.set_names)
		put(r->v[field], " names[%s]", d.names);
	for (unsigned i = 0; i < d.n; i++)
		put(r->v[field], " %s=[%s]", d.vars[i].name, d.vars[i].value);
}

/* The cache SQL: read from the text (the parser), and as the node answers
 * it (cache_sql's gate, then the reading's tokens). */
static void cache_cmd(struct stmt *st, struct record *r)
{
	const struct sql_tok_result *tok = &st->tok;
	struct cache_cmd_args a;
	char err[256] = "";
	int kind = cache_cmd_parse(st->q, st->n, &a, err, sizeof(err));
	const struct create_cache *c = &a.create;
	struct sql_cache_cmd sc;

	put(r->v[F_CACHE_PARSE], "%d", kind);
	if (kind == CC_CREATE)
		put(r->v[F_CACHE_PARSE], " id %d [%s] ttl %d refresh %d coalesce %d txn %d [%.*s] [%s]",
		    c->from_id, c->name, c->ttl_ms, c->refresh_ms, c->coalesce_ms, c->txn,
		    c->from_id ? 0 : (int)c->select_len, c->from_id ? "" : c->select, c->query_id);
	else if (kind > 0)
		put(r->v[F_CACHE_PARSE], " [%s] %ld", a.target, a.limit);
	put(r->v[F_CACHE_ERROR], "%s", kind < 0 ? err : "");
	switch (tok->keyword) {
	case KW_CREATE: case KW_DROP: case KW_SHOW: case KW_FLUSH: case KW_EXPLAIN:
		break;
	default:
		if (!(tok->flags & SQL_TOK_HIDDEN_SQL)) {
			put(r->v[F_CACHE_SQL], "0");
			return;
		}
	}
	put(r->v[F_CACHE_SQL], "%d", sql_cache_cmd_stmt(st, &sc, err, sizeof(err)));
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
	return false;
}

static void bodies(const char *q, struct record *r)
{
	put(r->v[F_BODY], "%d", sql_body_may_call_or_create(q));
	put(r->v[F_TRIGGER_WRITES], "%d", sql_trigger_writes(q, dml, r->v[F_TRIGGER_WRITES]));
	sql_trigger_calls(q, call, r->v[F_TRIGGER_CALLS]);
}

/* KILL as the session core asks: a COM_QUERY payload, command byte first. */
static void kill_of(const char *q, size_t n, struct record *r)
{
	static uint8_t pl[1 << 17];
	struct stmt_table none = { 0 };
	struct kill_req k;

	if (n + 1 > sizeof(pl)) {
		put(r->v[F_KILL], "too long");
		return;
	}
	pl[0] = CMD_QUERY;
	memcpy(pl + 1, q, n);
	if (kill_parse(pl, (uint32_t)n + 1, &none, &k))
		put(r->v[F_KILL], "%s %d %" PRIu64, k.unsupported ? "unsupported" : "answered", k.kind, k.id);
	else
		put(r->v[F_KILL], "no");
	put(r->v[F_KILL_ANY], "%d", kill_statement(q, n));
}

void new_side(const char *q, size_t n, struct record *r)
{
	static struct stmt st;
	struct ident id = { .id = 1 };
	uint32_t epoch = grants_epoch();
	bool ends;

	for (int i = 0; i < F__COUNT; i++)
		r->v[i][0] = 0;
	stmt_begin(&st, q, n);
	digest(&st, r);
	stmt_read(&st);
	tables(&st, r);
	session(&st, F_SV_MARIADB, true, r);
	session(&st, F_SV_MYSQL, false, r);
	kill_of(q, n, r);
	put(r->v[F_MONITOR], "%d", monitor_match(q, n));
	cache_cmd(&st, r);
	put(r->v[F_PRIV_TEXT], "%d", grants_text_changes_privileges(q, n));
	grants_note_statement(&id, &st);
	put(r->v[F_GRANTS], "%d %d", grants_epoch() != epoch, id.role_set);
	put(r->v[F_FLUSH_ALL], "%d", (st.flags & STMT_FLUSH_TABLES) ||
	    stmt_set_names(&st, (const char *const[]){ "FT_BOOLEAN_SYNTAX", NULL }));
	put(r->v[F_ONESHOT_RU], "%d", st.tok.keyword == KW_SET && (st.flags & STMT_ONESHOT_RU));
	ends = st.tok.keyword == KW_COMMIT || st.tok.keyword == KW_ROLLBACK ||
	       (st.tok.keyword != KW_SET && (st.tables.n > 0 || stmt_kind(&st) == SQL_STMT_WRITE ||
					     stmt_kind(&st) == SQL_STMT_DDL));
	put(r->v[F_ENDS_ONESHOT], "%d", ends);
	bodies(q, r);
}
