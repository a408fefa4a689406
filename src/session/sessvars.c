/*
 * sessvars.c: session state for multiplexing (see sessvars.h): what a
 * statement does to the session (from its reading: the facts, and
 * sql/setuse.c's reading of SET, USE, DROP DATABASE, COMMIT and FLUSH), the
 * state records themselves, and the SET statement that brings a pooled
 * connection to a session's state.
 */
#include "session/sessvars.h"

#include <stdatomic.h>

#include <ctype.h>
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sql/setuse.h"

/* ---- what a statement does to the session ------------------------------ */

static bool add_var(struct sv_delta *d, const char *name, size_t nlen, const char *val, size_t vlen)
{
	if (d->n >= sizeof(d->vars) / sizeof(d->vars[0]) || nlen >= SV_NAME_MAX || vlen >= SV_VALUE_MAX)
		return false;
	for (size_t i = 0; i < nlen; i++)
		d->vars[d->n].name[i] = (char)tolower((unsigned char)name[i]);
	d->vars[d->n].name[nlen] = 0;
	memcpy(d->vars[d->n].value, val, vlen);
	d->vars[d->n].value[vlen] = 0;
	d->n++;
	return true;
}

static const char *const refused_names[] = {
	"password", "role", "default", "names", "character", "charset", "statement",
	/* no DEFAULT to go back to: a connection that had them set could not
	 * be brought to another session's state */
	"rand_seed1", "rand_seed2", "last_insert_id", "identity", NULL,
};

static bool refused(const struct sql_set_item *it)
{
	char name[SV_NAME_MAX];

	if (it->name_len >= sizeof(name))
		return true;   /* no variable has such a name */
	memcpy(name, it->name, it->name_len);
	name[it->name_len] = 0;
	for (int i = 0; refused_names[i]; i++)
		if (strcasecmp(name, refused_names[i]) == 0)
			return true;
	return false;
}

/* SET [SESSION] TRANSACTION ...: the variables it sets for the session. */
static bool add_txn(const struct sql_set_item *it, struct sv_delta *d, bool mariadb)
{
	static const char *const levels[] = { "", "'SERIALIZABLE'", "'REPEATABLE-READ'",
					      "'READ-COMMITTED'", "'READ-UNCOMMITTED'" };
	const char *iso = mariadb ? "tx_isolation" : "transaction_isolation";
	const char *ro = mariadb ? "tx_read_only" : "transaction_read_only";

	if (it->scope == SQL_SCOPE_GLOBAL)
		return true;   /* the global default: not this session's state */
	if (it->level && !add_var(d, iso, strlen(iso), levels[it->level], strlen(levels[it->level])))
		return false;
	return !it->access || add_var(d, ro, strlen(ro), it->access == 1 ? "1" : "0", 1);
}

/* NAMES cs [COLLATE c] | CHARACTER SET cs: the text kept. */
static bool add_names(const struct sql_set_item *it, struct sv_delta *d)
{
	int n = snprintf(d->names, sizeof(d->names), "%s %.*s",
			 it->what == SQL_SET_NAMES ? "NAMES" : "CHARACTER SET", (int)it->value_len, it->value);

	if (n < 0 || (size_t)n >= sizeof(d->names))
		return false;
	d->set_names = true;
	return true;
}

static bool add_item(const struct sql_set_item *it, struct sv_delta *d, bool mariadb)
{
	switch (it->what) {
	case SQL_SET_TXN:
		return add_txn(it, d, mariadb);
	case SQL_SET_NAMES:
	case SQL_SET_CHARSET:
		return add_names(it, d);
	default:
		if (refused(it))
			return false;
		if (it->scope == SQL_SCOPE_GLOBAL)
			return true;   /* not session state (SV_GLOBAL) */
		return add_var(d, it->name, it->name_len, it->value, it->is_default ? 0 : it->value_len);
	}
}

/* SET: the delta of the assignments, or a pin when one cannot be carried
 * over (a computed value, a user variable, a name without DEFAULT, ...). */
static unsigned classify_set(const struct sql_setuse *su, struct sv_delta *d, bool mariadb)
{
	unsigned global = su->any_global ? SV_GLOBAL : 0;

	if (su->kind == SQL_SU_SET_STATEMENT)
		return 0; /* SET STATEMENT ... FOR: for that statement only */
	for (unsigned i = 0; i < su->n; i++)
		if (!add_item(&su->items[i], d, mariadb))
			return SV_PIN_FOREVER | global;
	if (!su->understood)
		return SV_PIN_FOREVER | global;
	return (d->n || d->set_names ? SV_CHANGES : 0) | global;
}

/* USE db, or DROP DATABASE db (mariadb-slap drops its schema on a pooled
 * connection that the node then lent, as still in it, to a session that
 * named it: "No database selected", main.mysqlslap): the connection it
 * runs on, and the session, have no current schema after it when it was
 * theirs. */
static unsigned classify_db(const struct sql_setuse *su, struct sv_delta *d)
{
	bool use = su->kind == SQL_SU_USE;

	if (!su->understood || !sql_name_copy(su->db, su->db_len, su->db_quoted, false, d->db, sizeof(d->db)))
		return use ? SV_PIN_FOREVER : 0;
	if (use)
		d->set_db = true;
	else
		d->drop_db = true;
	return SV_CHANGES;
}

/* The flags a statement's marks give, wherever they stand (anything may
 * hide anywhere: a subquery, a function argument, a second statement). */
static unsigned flags_of_marks(unsigned seen)
{
	unsigned f = 0;

	if (seen & (SF_MULTI | SF_ASSIGN | SF_INTO_VAR | SF_GET_LOCK | SF_TEMPORARY))
		f |= SV_PIN_FOREVER;  /* several statements, @v := ..., INTO @v, a lock, a temporary table */
	if (seen & SF_PROFILING)      /* the connection's statement history */
		f |= SV_PIN_FOREVER | SV_PROFILING;
	if (seen & SF_CALC_FOUND)
		f |= SV_STICKY_NEXT;
	if (seen & SF_CONNECTION_ID)
		f |= SV_TELLS_ID;
	if (seen & SF_SELECT)
		f |= SV_SELECTS;
	return f;
}

bool sv_completion_releases(const struct sess_state *s)
{
	for (uint16_t i = 0; i < s->n_vars; i++) {
		const char *v = s->vars[i].value;

		if (strcmp(s->vars[i].name, "completion_type") == 0)
			return sql_value_is(v, strlen(v), "RELEASE") || sql_value_is(v, strlen(v), "2");
	}
	return false;
}

/* What the setuse reader says of the statement, in SV_* flags. */
static unsigned classify_read(const struct stmt *st, struct sv_delta *d, bool mariadb)
{
	struct sql_setuse su;

	sql_setuse_read(st, &su);
	switch (su.kind) {
	case SQL_SU_SET:
	case SQL_SU_SET_STATEMENT:
		return classify_set(&su, d, mariadb);
	case SQL_SU_USE:
	case SQL_SU_DROP_DB:
		return classify_db(&su, d);
	case SQL_SU_TXN_END:
		/* COMMIT ... RELEASE: the server closes the connection after it
		 * (sys_vars.completion_type_func); a plain one when the
		 * session's completion_type is RELEASE */
		return su.txn_end == SQL_END_RELEASE ? SV_RELEASE : su.txn_end == SQL_END_KEEP ? 0 : SV_RELEASE_IF;
	case SQL_SU_FLUSH:
		return su.flush_lock ? SV_PIN_LOCK : 0;
	default:
		return 0;
	}
}

unsigned sv_classify(const struct stmt *st, struct sv_delta *d, bool mariadb)
{
	unsigned f;

	/* the flags and counts only: the texts are written before they are read
	 * (a delta is 5 KB, and this runs for every statement) */
	d->set_db = d->drop_db = d->set_names = false;
	d->db[0] = d->names[0] = 0;
	d->n = 0;
	if (!st)
		return SV_PIN_FOREVER;   /* not read: keep the connection */
	f = flags_of_marks(st->facts.seen);
	switch (st->facts.first) {
	case KW_SET:
	case KW_DROP:
		return f | (f & SV_PIN_FOREVER ? 0 : classify_read(st, d, mariadb));
	case KW_USE:
	case KW_COMMIT:
	case KW_ROLLBACK:
	case KW_FLUSH:
		return f | classify_read(st, d, mariadb);
	case KW_LOCK:
		return f | SV_PIN_LOCK;
	case KW_UNLOCK:
		return f | SV_UNLOCK;
	/* BACKUP STAGE / BACKUP LOCK: a backup lock the connection holds until
	 * BACKUP STAGE END, BACKUP UNLOCK or its end (conformance:
	 * main.backup_log). The session keeps its connection, and the pool
	 * never lends it again. */
	case KW_PREPARE: case KW_EXECUTE: case KW_DEALLOCATE: case KW_CALL:
	case KW_XA: case KW_HANDLER: case KW_BACKUP:
		return f | SV_PIN_FOREVER;
	default:
		return f;
	}
}

/* ---- state records ----------------------------------------------------- */

/* The variables SET NAMES / SET CHARACTER SET set. */
static const char *const names_vars[] = { "character_set_client", "character_set_results",
	"character_set_connection", "collation_connection", NULL };

void sv_init(struct sess_state *s)
{
	memset(s, 0, sizeof(*s));
}

void sv_free(struct sess_state *s)
{
	free(s->vars);
	sv_init(s);
}

int sv_copy(struct sess_state *dst, const struct sess_state *src)
{
	struct sv_var *v = NULL;

	if (src->n_vars) {
		v = malloc(src->n_vars * sizeof(*v));
		if (!v)
			return -1;
		memcpy(v, src->vars, src->n_vars * sizeof(*v));
	}
	free(dst->vars);
	memcpy(dst->db, src->db, sizeof(dst->db));
	memcpy(dst->names, src->names, sizeof(dst->names));
	dst->n_vars = src->n_vars;
	dst->vars = v;
	return 0;
}

void sv_names_from_collation(struct sess_state *s, uint16_t collation)
{
	const MARIADB_CHARSET_INFO *cs = collation ? mariadb_get_charset_by_nr(collation) : NULL;

	s->names[0] = 0;
	if (cs)
		snprintf(s->names, sizeof(s->names), "NAMES %s COLLATE %s", cs->csname, cs->name);
}

static struct sv_var *find_var(const struct sess_state *s, const char *name)
{
	for (uint16_t i = 0; i < s->n_vars; i++)
		if (strcmp(s->vars[i].name, name) == 0)
			return &s->vars[i];
	return NULL;
}

static void drop_var(struct sess_state *s, const char *name)
{
	struct sv_var *v = find_var(s, name);

	if (v)
		*v = s->vars[--s->n_vars];
}

static int set_var(struct sess_state *s, const char *name, const char *value)
{
	struct sv_var *v = find_var(s, name);

	if (!value[0]) {
		drop_var(s, name);
		return 0;
	}
	if (!v) {
		struct sv_var *n;

		if (s->n_vars >= SV_VARS_MAX)
			return -1;
		n = realloc(s->vars, (s->n_vars + 1u) * sizeof(*n));
		if (!n)
			return -1;
		s->vars = n;
		v = &s->vars[s->n_vars++];
		snprintf(v->name, sizeof(v->name), "%s", name);
	}
	snprintf(v->value, sizeof(v->value), "%s", value);
	return 0;
}

int sv_apply(struct sess_state *s, const struct sv_delta *d)
{

	if (d->set_db)
		snprintf(s->db, sizeof(s->db), "%s", d->db);
	if (d->drop_db && strcmp(s->db, d->db) == 0)
		s->db[0] = 0;
	if (d->set_names) {
		snprintf(s->names, sizeof(s->names), "%s", d->names);
		for (int i = 0; names_vars[i]; i++)
			drop_var(s, names_vars[i]);
	}
	for (uint16_t i = 0; i < d->n; i++)
		if (set_var(s, d->vars[i].name, d->vars[i].value) < 0)
			return -1;
	return 0;
}

bool sv_equal(const struct sess_state *a, const struct sess_state *b)
{
	if (strcmp(a->db, b->db) || strcmp(a->names, b->names) || a->n_vars != b->n_vars)
		return false;
	for (uint16_t i = 0; i < a->n_vars; i++) {
		const struct sv_var *v = find_var(b, a->vars[i].name);

		if (!v || strcmp(v->value, a->vars[i].value))
			return false;
	}
	return true;
}

/* Bumped each time a statement that set a global variable succeeded
 * through the node: a relaxed atomic, read at every login and every
 * connection's opening. */
static atomic_uint globals_gen;

unsigned sv_globals_gen(void)
{
	return atomic_load_explicit(&globals_gen, memory_order_relaxed);
}

void sv_globals_changed(void)
{
	atomic_fetch_add_explicit(&globals_gen, 1, memory_order_relaxed);
}

int sv_serialize(const struct sess_state *s, struct pbuf *out)
{
	const char *last = "";
	int rc = pbuf_append(out, s->db, strlen(s->db) + 1);

	rc |= pbuf_append(out, s->names, strlen(s->names) + 1);
	/* selection in name order: few variables, no allocation */
	for (uint16_t k = 0; k < s->n_vars && rc == 0; k++) {
		const struct sv_var *next = NULL;

		for (uint16_t i = 0; i < s->n_vars; i++)
			if (strcmp(s->vars[i].name, last) > 0 && (!next || strcmp(s->vars[i].name, next->name) < 0))
				next = &s->vars[i];
		if (!next)
			break;
		rc |= pbuf_append(out, next->name, strlen(next->name) + 1);
		rc |= pbuf_append(out, next->value, strlen(next->value) + 1);
		last = next->name;
	}
	return rc ? -1 : 0;
}

static int put_assignment(struct pbuf *sql, bool *first, const char *what, const char *value)
{
	const char *sep = *first ? "SET " : ", ";
	int rc = pbuf_append(sql, sep, strlen(sep));

	*first = false;
	if (value) {
		rc |= pbuf_append(sql, "@@session.", 10);
		rc |= pbuf_append(sql, what, strlen(what));
		rc |= pbuf_append(sql, " = ", 3);
		rc |= pbuf_append(sql, value, strlen(value));
	} else {
		rc |= pbuf_append(sql, what, strlen(what));
	}
	return rc;
}

static bool is_names_var(const char *name)
{
	for (int i = 0; names_vars[i]; i++)
		if (strcmp(name, names_vars[i]) == 0)
			return true;
	return false;
}

/* SET NAMES is needed: the character set differs, or a variable it sets
 * must go back to what NAMES gave (DEFAULT would be the server's global
 * value, not the session's handshake character set). */
static bool names_needed(const struct sess_state *have, const struct sess_state *want)
{
	if (!want->names[0])
		return false;
	if (strcmp(have->names, want->names))
		return true;
	for (uint16_t i = 0; i < have->n_vars; i++)
		if (is_names_var(have->vars[i].name) && !find_var(want, have->vars[i].name))
			return true;
	return false;
}

/* What a variable the wanted state does not set goes back to: the value a
 * new session has. DEFAULT is that for most, but MySQL (8.0 and 9.7) leaves
 * a session's foreign_key_checks and unique_checks as they are on DEFAULT,
 * so a pooled connection kept another session's 0 (conformance, MySQL
 * mode: main.foreign_key_fkc); their global value is a new session's on
 * both servers. */
static const char *reset_value(const char *name)
{
	if (strcmp(name, "foreign_key_checks") == 0)
		return "@@global.foreign_key_checks";
	if (strcmp(name, "unique_checks") == 0)
		return "@@global.unique_checks";
	return "DEFAULT";
}

int sv_sync_sql(const struct sess_state *have, const struct sess_state *want,
		bool *init_db, struct pbuf *sql)
{
	bool first = true, names = names_needed(have, want);
	int rc = 0;

	sql->len = 0;
	if (want->db[0] == 0 && have->db[0])
		return -1;
	*init_db = strcmp(have->db, want->db) != 0;
	if (names)
		rc |= put_assignment(sql, &first, want->names, NULL);
	for (uint16_t i = 0; i < want->n_vars; i++) {
		const struct sv_var *h = find_var(have, want->vars[i].name);

		if (!h || strcmp(h->value, want->vars[i].value) || (names && is_names_var(h->name)))
			rc |= put_assignment(sql, &first, want->vars[i].name, want->vars[i].value);
	}
	for (uint16_t i = 0; i < have->n_vars; i++)
		if (!find_var(want, have->vars[i].name) && !(names && is_names_var(have->vars[i].name)))
			rc |= put_assignment(sql, &first, have->vars[i].name, reset_value(have->vars[i].name));
	return rc ? -1 : 0;
}
