/*
 * router.c: owns the admin command router: splitting one COM_QUERY into
 * statements, recognising the statements the admin answers itself (LOAD /
 * SAVE <module> ..., SET shoal-x = v, the client's SELECT @@x / DATABASE()
 * chatter, SHOW DATABASES / TABLES / CREATE TABLE / WARNINGS, USE), and
 * handing everything else to SQLite after rebuilding the stats_* and
 * runtime_* tables that the statement names. The parser is pure (no I/O)
 * so that tests/unit/test_admin.c can drive it directly.
 *
 * Keywords are matched case-insensitively with any whitespace (and
 * comments) between them, as ProxySQL matches its admin commands.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "cache/snapshot.h"
#include "proto/packet.h"
#include "base/log.h"

#define MAX_WORDS 8

struct lex {
	const char *p;
	const char *end;
};

static bool is_ident(int c)
{
	return isalnum(c) || c == '_' || c == '$';
}

/* Skip whitespace and comments (-- to end of line, # to end of line,
 * C comments). Returns the new position. */
static const char *skip_ws(const char *p, const char *end)
{
	while (p < end) {
		if (isspace((unsigned char)*p)) {
			p++;
		} else if (*p == '#' || (*p == '-' && end - p >= 2 && p[1] == '-')) {
			while (p < end && *p != '\n')
				p++;
		} else if (*p == '/' && end - p >= 2 && p[1] == '*') {
			const char *q = p + 2;

			while (q + 1 < end && !(q[0] == '*' && q[1] == '/'))
				q++;
			p = q + 1 < end ? q + 2 : end;
		} else {
			break;
		}
	}
	return p;
}

static void lx_ws(struct lex *l)
{
	l->p = skip_ws(l->p, l->end);
}

static bool lx_end(struct lex *l)
{
	lx_ws(l);
	return l->p == l->end;
}

static bool lx_kw(struct lex *l, const char *kw)
{
	size_t n = strlen(kw);

	lx_ws(l);
	if ((size_t)(l->end - l->p) < n || strncasecmp(l->p, kw, n) != 0)
		return false;
	if (l->p + n < l->end && is_ident((unsigned char)l->p[n]))
		return false;
	l->p += n;
	return true;
}

static bool lx_char(struct lex *l, char c)
{
	lx_ws(l);
	if (l->p < l->end && *l->p == c) {
		l->p++;
		return true;
	}
	return false;
}

/* A run of identifier characters plus those in extra. Length, 0 if none or
 * too long for out. */
static size_t lx_word(struct lex *l, char *out, size_t cap, const char *extra)
{
	const char *b;
	size_t n;

	lx_ws(l);
	b = l->p;
	while (l->p < l->end && (is_ident((unsigned char)*l->p) || (*l->p && strchr(extra, *l->p))))
		l->p++;
	n = (size_t)(l->p - b);
	if (n == 0 || n >= cap) {
		l->p = b;
		return 0;
	}
	memcpy(out, b, n);
	out[n] = '\0';
	return n;
}

/* A quoted string ('...', "..." or `...`): 1 with the unquoted text in out,
 * 0 if no quote here, -1 if unterminated or too long. Backslash escapes and
 * doubled quotes are undone (not inside backticks). */
static int lx_quoted(struct lex *l, char *out, size_t cap)
{
	const char *p;
	char q;
	size_t n = 0;

	lx_ws(l);
	if (l->p >= l->end || (*l->p != '\'' && *l->p != '"' && *l->p != '`'))
		return 0;
	q = *l->p;
	for (p = l->p + 1; p < l->end; p++) {
		char c = *p;

		if (c == '\\' && q != '`' && p + 1 < l->end) {
			c = *++p;
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c == '0' ? '\0' : c;
		} else if (c == q) {
			if (p + 1 < l->end && p[1] == q) {
				p++;
			} else {
				out[n] = '\0';
				l->p = p + 1;
				return 1;
			}
		}
		if (n + 1 >= cap)
			return -1;
		out[n++] = c;
	}
	return -1;
}

/* An identifier or a quoted one. */
static bool lx_name(struct lex *l, char *out, size_t cap)
{
	int q = lx_quoted(l, out, cap);

	if (q != 0)
		return q > 0;
	return lx_word(l, out, cap, "") > 0;
}

static void upcase(char *s)
{
	for (; *s; s++)
		*s = (char)toupper((unsigned char)*s);
}

static void downcase(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* ------------------------------------------------------ LOAD / SAVE */

static enum admin_op module_op(bool load, const char *dir, const char *where)
{
	bool to = strcmp(dir, "TO") == 0;
	bool run = strcmp(where, "RUNTIME") == 0 || strcmp(where, "RUN") == 0;
	bool mem = strcmp(where, "MEMORY") == 0 || strcmp(where, "MEM") == 0;
	bool disk = strcmp(where, "DISK") == 0;

	if (strcmp(dir, "TO") != 0 && strcmp(dir, "FROM") != 0)
		return AOP_NONE;
	if (load && ((to && run) || (!to && mem)))
		return AOP_MEM_TO_RUNTIME;
	if (load && ((!to && disk) || (to && mem)))
		return AOP_DISK_TO_MEM;
	if (!load && ((!to && run) || (to && mem)))
		return AOP_RUNTIME_TO_MEM;
	if (!load && ((to && disk) || (!to && mem)))
		return AOP_MEM_TO_DISK;
	return AOP_NONE;
}

static void parse_module(struct lex *l, bool load, struct admin_stmt *out)
{
	char words[MAX_WORDS][32], module[64] = "";
	const char *canon;
	int n = 0;

	out->kind = ASTMT_BAD_COMMAND;
	snprintf(out->err, sizeof out->err,
		 "expected %s <module> TO|FROM RUNTIME|MEMORY|DISK; modules: %s (SHOAL is optional)",
		 load ? "LOAD" : "SAVE", modules_list());
	while (n < MAX_WORDS && lx_word(l, words[n], sizeof words[n], ""))
		upcase(words[n++]);
	if (!lx_end(l) || n < 3)
		return;
	for (int i = 0; i < n - 2; i++) {
		size_t used = strlen(module);

		snprintf(module + used, sizeof module - used, "%s%s", i ? " " : "", words[i]);
	}
	/* the entries, not the definitions (SAVE CACHES TO DISK) */
	if (!load && (strcmp(module, "CACHE") == 0 || strcmp(module, "SHOAL CACHE") == 0) &&
	    strcmp(words[n - 2], "TO") == 0 && strcmp(words[n - 1], "DISK") == 0) {
		out->kind = ASTMT_SAVE_SNAPSHOT;
		out->err[0] = '\0';
		return;
	}
	canon = modules_canonical(module);
	if (!canon) {
		snprintf(out->err, sizeof out->err, "unknown module '%s'; modules: %s", module,
			 modules_list());
		return;
	}
	out->op = module_op(load, words[n - 2], words[n - 1]);
	if (out->op == AOP_NONE) {
		snprintf(out->err, sizeof out->err, "'%s %s %s %s' is not a command; use LOAD ... TO "
			 "RUNTIME, SAVE ... TO DISK, LOAD ... FROM DISK or SAVE ... FROM RUNTIME",
			 load ? "LOAD" : "SAVE", module, words[n - 2], words[n - 1]);
		return;
	}
	snprintf(out->module, sizeof out->module, "%s", canon);
	out->kind = ASTMT_MODULE;
	out->err[0] = '\0';
}

/* ---------------------------------------------------------------- SET */

static void parse_set(struct lex *l, struct admin_stmt *out)
{
	const char *b, *e;
	int q;

	out->kind = ASTMT_SET_OTHER;
	if (!lx_word(l, out->name, sizeof out->name, "-.@") ||
	    strncasecmp(out->name, "shoal-", 6) != 0)
		return;
	downcase(out->name);
	out->kind = ASTMT_BAD_COMMAND;
	snprintf(out->err, sizeof out->err, "expected SET %s = value", out->name);
	if (!lx_char(l, '=') && !(lx_char(l, ':') && lx_char(l, '=')))
		return;
	q = lx_quoted(l, out->value, sizeof out->value);
	if (q < 0 || (q > 0 && !lx_end(l)))
		return;
	if (q == 0) {
		lx_ws(l);
		b = l->p;
		e = l->end;
		while (e > b && isspace((unsigned char)e[-1]))
			e--;
		if (b == e || (size_t)(e - b) >= sizeof out->value)
			return;
		memcpy(out->value, b, (size_t)(e - b));
		out->value[e - b] = '\0';
	}
	out->kind = ASTMT_SET_VAR;
	out->err[0] = '\0';
}

/* ------------------------------------------------- SELECT @@x, DATABASE() */

static bool parse_function(struct lex *l, struct admin_item *it)
{
	static const struct { const char *name; enum admin_item_kind kind; } fns[] = {
		{ "DATABASE", ITEM_DATABASE }, { "SCHEMA", ITEM_DATABASE },
		{ "USER", ITEM_USER }, { "CURRENT_USER", ITEM_USER },
		{ "SESSION_USER", ITEM_USER }, { "SYSTEM_USER", ITEM_USER },
		{ "VERSION", ITEM_VERSION }, { "CONNECTION_ID", ITEM_CONN_ID },
	};
	char w[32];

	if (!lx_word(l, w, sizeof w, ""))
		return false;
	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
		if (strcasecmp(w, fns[i].name) == 0) {
			it->kind = fns[i].kind;
			return lx_char(l, '(') && lx_char(l, ')');
		}
	}
	return false;
}

static bool parse_item(struct lex *l, struct admin_item *it)
{
	const char *b;
	char alias[96];

	lx_ws(l);
	b = l->p;
	if (l->end - l->p >= 2 && l->p[0] == '@' && l->p[1] == '@') {
		l->p += 2;
		it->kind = ITEM_SYSVAR;
		if (!lx_word(l, it->name, sizeof it->name, "."))
			return false;
		downcase(it->name);
		for (const char *pre = NULL; (pre = strchr(it->name, '.')) != NULL;)
			memmove(it->name, pre + 1, strlen(pre + 1) + 1);
	} else if (!parse_function(l, it)) {
		return false;
	}
	snprintf(it->label, sizeof it->label, "%.*s", (int)(l->p - b), b);
	if (lx_kw(l, "AS")) {
		if (!lx_name(l, alias, sizeof alias))
			return false;
		snprintf(it->label, sizeof it->label, "%s", alias);
	}
	return true;
}

static bool parse_select_funcs(struct lex *l, struct admin_stmt *out)
{
	char num[24], *end;

	out->nitems = 0;
	out->limit = -1;
	do {
		if (out->nitems == ADMIN_MAX_ITEMS || !parse_item(l, &out->items[out->nitems]))
			return false;
		out->nitems++;
	} while (lx_char(l, ','));
	if (lx_kw(l, "LIMIT")) {
		if (!lx_word(l, num, sizeof num, ""))
			return false;
		out->limit = strtol(num, &end, 10);
		if (*end || out->limit < 0)
			return false;
	}
	if (!lx_end(l))
		return false;
	out->kind = ASTMT_SELECT_FUNCS;
	return true;
}

/* --------------------------------------------------------------- SHOW */

static bool parse_like(struct lex *l, struct admin_stmt *out)
{
	if (!lx_kw(l, "LIKE"))
		return true;
	out->has_like = lx_quoted(l, out->like, sizeof out->like) > 0;
	return out->has_like;
}

static void parse_show(struct lex *l, struct admin_stmt *out)
{
	if (lx_kw(l, "DATABASES") || lx_kw(l, "SCHEMAS")) {
		if (parse_like(l, out) && lx_end(l))
			out->kind = ASTMT_SHOW_DATABASES;
		return;
	}
	if (lx_kw(l, "WARNINGS")) {
		out->kind = ASTMT_SHOW_WARNINGS;
		return;
	}
	if (lx_kw(l, "CREATE")) {
		if (!lx_kw(l, "TABLE") || !lx_name(l, out->table, sizeof out->table))
			return;
		if (lx_char(l, '.')) {
			snprintf(out->name, sizeof out->name, "%s", out->table);
			if (!lx_name(l, out->table, sizeof out->table))
				return;
		}
		if (lx_end(l))
			out->kind = ASTMT_SHOW_CREATE;
		return;
	}
	lx_kw(l, "FULL");
	if (!lx_kw(l, "TABLES"))
		return;
	if ((lx_kw(l, "FROM") || lx_kw(l, "IN")) && !lx_name(l, out->name, sizeof out->name))
		return;
	if (parse_like(l, out) && lx_end(l))
		out->kind = ASTMT_SHOW_TABLES;
}

/* ------------------------------------------------------------ public */

void admin_parse(const char *sql, size_t len, struct admin_stmt *out)
{
	struct lex l = { sql, sql + len };
	struct lex save;

	memset(out, 0, sizeof *out);
	out->kind = ASTMT_SQL;
	out->limit = -1;
	if (lx_kw(&l, "LOAD")) {
		parse_module(&l, true, out);
	} else if (lx_kw(&l, "SAVE")) {
		parse_module(&l, false, out);
	} else if (lx_kw(&l, "SET")) {
		parse_set(&l, out);
	} else if (lx_kw(&l, "SELECT")) {
		save = l;
		if (!parse_select_funcs(&l, out)) {
			l = save;
			out->kind = ASTMT_SQL;
			out->nitems = 0;
		}
	} else if (lx_kw(&l, "SHOW")) {
		parse_show(&l, out);
	} else if (lx_kw(&l, "USE")) {
		if (lx_name(&l, out->name, sizeof out->name) && lx_end(&l))
			out->kind = ASTMT_USE;
	}
}

size_t admin_skip_blank(const char *sql, size_t len)
{
	const char *p = sql, *end = sql + len;

	for (;;) {
		p = skip_ws(p, end);
		if (p < end && *p == ';')
			p++;
		else
			break;
	}
	return (size_t)(p - sql);
}

size_t admin_stmt_end(const char *sql, size_t len)
{
	const char *p = sql, *end = sql + len;

	while (p < end) {
		const char *q = skip_ws(p, end);

		if (q != p) {
			p = q;
			continue;
		}
		if (*p == ';')
			break;
		if (*p == '\'' || *p == '"' || *p == '`') {
			char c = *p++;

			while (p < end && *p != c)
				p += (*p == '\\' && c != '`' && p + 1 < end) ? 2 : 1;
			if (p < end)
				p++;
			continue;
		}
		p++;
	}
	return (size_t)(p - sql);
}

/* ----------------------------------------------------------- dispatch */

struct sysvar {
	const char *name;
	const char *value;
};

static const struct sysvar sysvars[] = {
	{ "version_comment", ADMIN_VERSION_COMMENT },
	{ "version", ADMIN_VERSION },
	{ "max_allowed_packet", "16777216" },
	{ "auto_increment_increment", "1" },
	{ "autocommit", "1" },
	{ "sql_mode", "" },
	{ "character_set_client", "utf8" },
	{ "character_set_connection", "utf8" },
	{ "character_set_results", "utf8" },
	{ "character_set_server", "utf8" },
	{ "collation_connection", "utf8_general_ci" },
	{ "collation_server", "utf8_general_ci" },
	{ "character_set_database", "utf8" },
	{ "collation_database", "utf8_general_ci" },
	{ "lower_case_table_names", "0" },
	{ "time_zone", "SYSTEM" },
	{ "system_time_zone", "UTC" },
	{ "interactive_timeout", "28800" },
	{ "wait_timeout", "28800" },
	{ "net_write_timeout", "60" },
	{ "net_buffer_length", "16384" },
	{ "transaction_isolation", "SERIALIZABLE" },
	{ "tx_isolation", "SERIALIZABLE" },
	{ "license", "" },
	{ "performance_schema", "0" },
};

static const char *sysvar_value(const char *name)
{
	for (size_t i = 0; i < sizeof sysvars / sizeof sysvars[0]; i++)
		if (strcmp(sysvars[i].name, name) == 0)
			return sysvars[i].value;
	return NULL;
}

static void run_select_funcs(struct admin_reply *r, const struct admin_stmt *s)
{
	const char *names[ADMIN_MAX_ITEMS], *cells[ADMIN_MAX_ITEMS];
	char user[256], id[16];

	snprintf(user, sizeof user, "%s@%s", r->user ? r->user : "", r->peer ? r->peer : "");
	snprintf(id, sizeof id, "%u", r->conn_id);
	for (int i = 0; i < s->nitems; i++) {
		const struct admin_item *it = &s->items[i];

		names[i] = it->label;
		switch (it->kind) {
		case ITEM_SYSVAR:
			cells[i] = sysvar_value(it->name);
			if (!cells[i]) {
				reply_err(r, ERR_UNKNOWN_SYSTEM_VARIABLE, "HY000",
					  "Unknown system variable '%s'", it->name);
				return;
			}
			break;
		case ITEM_DATABASE: cells[i] = r->db; break;
		case ITEM_USER: cells[i] = user; break;
		case ITEM_VERSION: cells[i] = ADMIN_VERSION; break;
		case ITEM_CONN_ID: cells[i] = id; break;
		}
	}
	reply_table(r, (unsigned)s->nitems, names, s->limit == 0 ? 0 : 1, cells);
}

static void run_show_tables(struct admin_reply *r, const struct admin_stmt *s)
{
	char db[ADMIN_DB_NAME_MAX];
	const char *params[1] = { s->like };
	char *sql;

	if (!schema_is_db(s->name[0] ? s->name : r->db, db)) {
		reply_err(r, ERR_BAD_DB_ERROR, "42000", "Unknown database '%s'", s->name);
		return;
	}
	sql = sqlite3_mprintf("SELECT name AS tables FROM %w.sqlite_master WHERE type = 'table'"
			      " AND name NOT LIKE 'sqlite_%%'%s ORDER BY name", db,
			      s->has_like ? " AND name LIKE ?" : "");
	if (!sql) {
		reply_err(r, ERR_UNKNOWN_ERROR, "HY000", "out of memory");
		return;
	}
	reply_query(r, sql, s->has_like ? 1 : 0, params);
	sqlite3_free(sql);
}

static void run_show_create(struct admin_reply *r, const struct admin_stmt *s)
{
	char db[ADMIN_DB_NAME_MAX];
	const char *params[1] = { s->table };
	char *count, *sql;
	long long rows;

	if (!schema_is_db(s->name[0] ? s->name : r->db, db)) {
		reply_err(r, ERR_BAD_DB_ERROR, "42000", "Unknown database '%s'", s->name);
		return;
	}
	count = sqlite3_mprintf("%w.sqlite_master WHERE type = 'table' AND name = %Q", db, s->table);
	rows = count ? adb_count(count) : -1;
	sqlite3_free(count);
	if (rows <= 0) {
		reply_err(r, ERR_NO_SUCH_TABLE, "42S02", "Table '%s.%s' doesn't exist", db, s->table);
		return;
	}
	sql = sqlite3_mprintf("SELECT name AS \"table\", sql AS \"Create Table\" FROM "
			      "%w.sqlite_master WHERE type = 'table' AND name = ?", db);
	if (!sql) {
		reply_err(r, ERR_UNKNOWN_ERROR, "HY000", "out of memory");
		return;
	}
	reply_query(r, sql, 1, params);
	sqlite3_free(sql);
}

static void run_show_warnings(struct admin_reply *r)
{
	static const char *const names[] = { "Level", "Code", "Message" };
	const char *cells[ADMIN_MAX_WARNINGS * 3];
	char codes[ADMIN_MAX_WARNINGS][8];
	int n = r->warn ? r->warn->n : 0;

	for (int i = 0; i < n; i++) {
		snprintf(codes[i], sizeof codes[i], "%u", r->warn->code[i]);
		cells[3 * i] = "Warning";
		cells[3 * i + 1] = codes[i];
		cells[3 * i + 2] = r->warn->msg[i];
	}
	reply_table(r, 3, names, (size_t)n, cells);
}

static void run_use(struct admin_reply *r, const char *name)
{
	char db[ADMIN_DB_NAME_MAX];

	if (!schema_is_db(name, db)) {
		reply_err(r, ERR_BAD_DB_ERROR, "42000", "Unknown database '%s'", name);
		return;
	}
	snprintf(r->db, ADMIN_DB_NAME_MAX, "%s", db);
	reply_ok(r, 0, NULL);
}

/* SAVE CACHE TO DISK: the snapshot a stop writes, written now (the admin
 * waits for it; the workers go on serving). OK: the entries written, as
 * the rows affected; the log says the rest. */
static void run_save_snapshot(struct admin_reply *r)
{
	struct snapshot_stats st;
	char err[512];
	int rc = snapshot_save("by SAVE CACHE TO DISK", &st, err, sizeof err);

	if (rc != 0) {
		reply_err(r, ERR_UNKNOWN_ERROR, "HY000", "SAVE CACHE TO DISK: %s", err);
		return;
	}
	reply_ok(r, st.entries, NULL);
}

static void run_special(struct admin_reply *r, const struct admin_stmt *s)
{
	const char *params[1] = { s->like };

	switch (s->kind) {
	case ASTMT_MODULE:
		modules_run(r, s->module, s->op);
		break;
	case ASTMT_BAD_COMMAND:
		reply_err(r, ERR_PARSE_ERROR, "42000", "%s", s->err);
		break;
	case ASTMT_SET_VAR:
		vars_set(r, s->name, s->value);
		break;
	case ASTMT_SET_OTHER:
		reply_ok(r, 0, NULL);
		break;
	case ASTMT_SELECT_FUNCS:
		run_select_funcs(r, s);
		break;
	case ASTMT_SHOW_DATABASES:
		reply_query(r, s->has_like
			    ? "SELECT seq, name, file FROM pragma_database_list WHERE name <> 'temp' "
			      "AND name LIKE ?"
			    : "SELECT seq, name, file FROM pragma_database_list WHERE name <> 'temp'",
			    s->has_like ? 1 : 0, params);
		break;
	case ASTMT_SHOW_TABLES:
		run_show_tables(r, s);
		break;
	case ASTMT_SHOW_CREATE:
		run_show_create(r, s);
		break;
	case ASTMT_SHOW_WARNINGS:
		run_show_warnings(r);
		break;
	case ASTMT_USE:
		run_use(r, s->name);
		break;
	case ASTMT_SAVE_SNAPSHOT:
		run_save_snapshot(r);
		break;
	case ASTMT_SQL:
		break;
	}
}

/* Is there another statement in sql[0..len)? */
static bool more_follows(const char *sql, size_t len)
{
	return admin_skip_blank(sql, len) < len;
}

/* Run the SQL statement at sql; returns the bytes it used. */
static size_t run_sql(struct admin_reply *r, const char *sql, size_t len, size_t stmt_len,
		      bool multi)
{
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	int rc;

	modules_refresh_named(sql, stmt_len);
	refresh_named(sql, stmt_len, r->admin_sessions);
	rc = sqlite3_prepare_v2(g_adb.db, sql, (int)len, &st, &tail);
	if (rc != SQLITE_OK) {
		reply_sqlite_err(r, rc, sqlite3_errmsg(g_adb.db), NULL);
		sqlite3_finalize(st);
		return len;
	}
	if (!tail || tail <= sql)
		tail = sql + len;
	if (!st) {  /* only a comment */
		if (!more_follows(tail, (size_t)(sql + len - tail)))
			reply_ok(r, 0, NULL);
		return (size_t)(tail - sql);
	}
	r->more = multi && more_follows(tail, (size_t)(sql + len - tail)) ? ST_MORE_RESULTS_EXISTS : 0;
	reply_run_stmt(r, g_adb.db, st);
	return (size_t)(tail - sql);
}

/* Run the statement at sql; returns the bytes used. */
static size_t run_one(struct admin_reply *r, const char *sql, size_t len, bool multi)
{
	size_t end = admin_stmt_end(sql, len);
	struct admin_stmt *s = malloc(sizeof *s);
	size_t used;

	if (!s) {
		reply_err(r, ERR_UNKNOWN_ERROR, "HY000", "out of memory");
		return len;
	}
	admin_parse(sql, end, s);
	if (s->kind != ASTMT_SHOW_WARNINGS)
		reply_clear_warnings(r);
	if (s->kind == ASTMT_SQL) {
		used = run_sql(r, sql, len, end, multi);
	} else {
		used = end < len ? end + 1 : end;
		r->more = multi && more_follows(sql + used, len - used) ? ST_MORE_RESULTS_EXISTS : 0;
		run_special(r, s);
	}
	free(s);
	return used;
}

void admin_query(struct admin_reply *r, const char *sql, size_t len)
{
	bool multi = (r->caps & CAP_MULTI_RESULTS) != 0;
	size_t pos = admin_skip_blank(sql, len);
	bool any = false;

	while (pos < len && !r->failed) {
		size_t mark = r->out->len;
		uint8_t seq = r->seq;

		pos += run_one(r, sql + pos, len - pos, multi);
		pos += admin_skip_blank(sql + pos, len - pos);
		any = true;
		if (!multi && !r->failed && pos < len) {
			/* a client without multi-results gets the last answer only */
			r->out->len = mark;
			r->seq = seq;
		}
	}
	if (!any)
		reply_err(r, ERR_QUERY_EMPTY, "42000", "Query was empty");
}
