/*
 * catalog_query.c: what the catalog reader asks the upstream (see
 * catalog_query.h), chosen so that reading the catalog leaves nothing on
 * the server that a client could notice:
 *
 *   - names and kinds (base table, view) of each schema's objects:
 *     SHOW DATABASES, then SHOW FULL TABLES FROM each schema. The server
 *     lists the schema's directory and reads each .frm file's first bytes
 *     (its Table_type tells base tables, views and sequences apart):
 *     no table is opened and no table definition is loaded into its cache
 *     (information_schema.TABLES loads the definition of every table, and
 *     information_schema.VIEWS that of every table of the schemas it reads);
 *   - each view's definition, by schema and name, from
 *     information_schema.VIEWS: only that view is opened;
 *   - foreign keys: information_schema.INNODB_SYS_FOREIGN, InnoDB's own
 *     dictionary (no table is opened); only when it cannot be read (no
 *     PROCESS privilege, not MariaDB) or holds a name this file cannot
 *     decode, information_schema.REFERENTIAL_CONSTRAINTS, which opens every
 *     table of the server (their statistics, triggers and virtual columns
 *     are then loaded by the reader's connection);
 *   - triggers (information_schema.TRIGGERS reads the .TRG files only) and
 *     routines (mysql.proc).
 */
#include "cache/catalog_query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

void catalog_rows_free(struct catalog_rows *b)
{
	for (size_t i = 0; i < b->nstr; i++)
		free(b->strs[i]);
	free(b->strs);
	free(b->rows);
	memset(b, 0, sizeof(*b));
}

static const char *keep(struct catalog_rows *b, const char *v)
{
	char *c;

	if (!v)
		return NULL;
	if (b->nstr == b->capstr) {
		size_t n = b->capstr ? b->capstr * 2 : 256;
		char **a = realloc(b->strs, n * sizeof(*a));

		if (!a)
			return NULL;
		b->strs = a;
		b->capstr = n;
	}
	c = strdup(v);
	if (c)
		b->strs[b->nstr++] = c;
	return c;
}

/* A row of kind from up to five values; -1 when out of memory. */
static int add_row(struct catalog_rows *b, char kind, const char *const *v, unsigned n)
{
	struct catalog_row *row;

	if (b->n == b->cap) {
		size_t c = b->cap ? b->cap * 2 : 256;
		struct catalog_row *a = realloc(b->rows, c * sizeof(*a));

		if (!a)
			return -1;
		b->rows = a;
		b->cap = c;
	}
	row = &b->rows[b->n];
	memset(row, 0, sizeof(*row));
	row->kind = kind;
	row->schema = keep(b, v[0]);
	row->name = keep(b, v[1]);
	row->a = n > 2 ? keep(b, v[2]) : NULL;
	row->b = n > 3 ? keep(b, v[3]) : NULL;
	row->c = n > 4 ? keep(b, v[4]) : NULL;
	if (!row->schema || !row->name)
		return -1;
	b->n++;
	return 0;
}

/* Run sql; its result, or NULL (logged unless quiet). */
static MYSQL_RES *query(MYSQL *m, const char *sql, bool quiet)
{
	MYSQL_RES *res;

	if (mysql_query(m, sql) || !(res = mysql_store_result(m))) {
		if (!quiet)
			log_warn("catalog: %s: %s", sql, mysql_error(m));
		return NULL;
	}
	return res;
}

/* Every row of sql as a row of kind (its columns in order). */
static int read_rows(MYSQL *m, const char *sql, char kind, struct catalog_rows *b)
{
	MYSQL_RES *res = query(m, sql, false);
	MYSQL_ROW r;
	int rc = 0;

	if (!res)
		return -1;
	while (rc == 0 && (r = mysql_fetch_row(res)))
		if (r[0] && r[1])
			rc = add_row(b, kind, (const char *const *)r, mysql_num_fields(res));
	mysql_free_result(res);
	return rc;
}

static bool system_schema(const char *s)
{
	return strcmp(s, "information_schema") == 0 || strcmp(s, "performance_schema") == 0 ||
	       strcmp(s, "mysql") == 0 || strcmp(s, "sys") == 0;
}

/* `name` with backticks doubled, into out; false when it does not fit. */
static bool quote_ident(const char *name, char *out, size_t cap)
{
	size_t o = 0;

	if (cap < 3)
		return false;
	out[o++] = '`';
	for (const char *p = name; *p; p++) {
		if (o + 4 > cap)
			return false;
		if (*p == '`')
			out[o++] = '`';
		out[o++] = *p;
	}
	out[o++] = '`';
	out[o] = 0;
	return true;
}

/* One view's definition, by its schema and name. */
static int read_view(MYSQL *m, const char *schema, const char *name, struct catalog_rows *b)
{
	size_t sl = strlen(schema), nl = strlen(name);
	char *es = malloc(sl * 2 + 1), *en = malloc(nl * 2 + 1), *sql = NULL;
	int rc = -1;

	if (es && en) {
		mysql_real_escape_string(m, es, schema, (unsigned long)sl);
		mysql_real_escape_string(m, en, name, (unsigned long)nl);
		if (asprintf(&sql, "SELECT TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION FROM "
			     "information_schema.VIEWS WHERE TABLE_SCHEMA = '%s' AND TABLE_NAME = '%s'",
			     es, en) < 0)
			sql = NULL;
	}
	if (sql)
		rc = read_rows(m, sql, 'V', b);
	free(sql);
	free(es);
	free(en);
	return rc;
}

/* The tables ('T'; a sequence's row has a = "SEQUENCE") and views ('V',
 * with definitions) of one schema. */
static int read_schema(MYSQL *m, const char *schema, struct catalog_rows *b)
{
	char q[2 * 256 + 32], id[2 * 256 + 3];
	MYSQL_RES *res;
	MYSQL_ROW r;
	size_t first_view = 0, nviews = 0;
	char **views = NULL;
	int rc = 0;

	if (!quote_ident(schema, id, sizeof(id)))
		return 0;    /* no name that long: nothing to read */
	snprintf(q, sizeof(q), "SHOW FULL TABLES FROM %s", id);
	if (!(res = query(m, q, true)))
		return mysql_errno(m) == 1049 ? 0 : -1;   /* dropped meanwhile */
	views = calloc(mysql_num_rows(res) + 1, sizeof(*views));
	while (views && rc == 0 && (r = mysql_fetch_row(res))) {
		const char *v[2] = { schema, r[0] };

		if (!r[0] || !r[1])
			continue;
		if (strcmp(r[1], "VIEW") == 0)
			views[nviews++] = (char *)keep(b, r[0]);
		else if (strcmp(r[1], "SEQUENCE") == 0)
			rc = add_row(b, 'T', (const char *const[]){ schema, r[0], "SEQUENCE" }, 3);
		else
			rc = add_row(b, 'T', v, 2);
	}
	mysql_free_result(res);
	if (!views)
		return -1;
	for (size_t i = first_view; i < nviews && rc == 0; i++)
		rc = views[i] ? read_view(m, schema, views[i], b) : -1;
	free(views);
	return rc;
}

static int read_objects(MYSQL *m, struct catalog_rows *b)
{
	MYSQL_RES *res = query(m, "SHOW DATABASES", false);
	MYSQL_ROW r;
	char **names;
	size_t n = 0;
	int rc = 0;

	if (!res)
		return -1;
	names = calloc(mysql_num_rows(res) + 1, sizeof(*names));
	while (names && (r = mysql_fetch_row(res)))
		if (r[0] && !system_schema(r[0]))
			names[n++] = (char *)keep(b, r[0]);
	mysql_free_result(res);
	if (!names)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = names[i] ? read_schema(m, names[i], b) : -1;
	free(names);
	return rc;
}

/* InnoDB's file-name encoding of one part of "db/table": letters, digits
 * and '_' as they are, other ASCII characters as @XXXX (hex code point).
 * false for anything else (a non-ASCII or otherwise encoded name). */
static bool decode_part(const char *p, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned cp;

		if (o + 1 >= cap)
			return false;
		if (p[i] != '@') {
			if ((unsigned char)p[i] >= 0x80 || p[i] == '#')
				return false;
			out[o++] = p[i];
			continue;
		}
		if (i + 4 >= n + 0 || sscanf(p + i + 1, "%4x", &cp) != 1 || cp == 0 || cp >= 0x80)
			return false;
		for (int k = 1; k <= 4; k++)
			if (!strchr("0123456789abcdefABCDEF", p[i + k]))
				return false;
		out[o++] = (char)cp;
		i += 4;
	}
	out[o] = 0;
	return o > 0;
}

static bool decode_name(const char *full, char *schema, char *name, size_t cap)
{
	const char *slash = strchr(full, '/');

	return slash && decode_part(full, (size_t)(slash - full), schema, cap) &&
	       decode_part(slash + 1, strlen(slash + 1), name, cap);
}

/* Foreign keys from InnoDB's dictionary. 1: it cannot be used (then
 * REFERENTIAL_CONSTRAINTS is read instead); the rows added so far are
 * dropped by the caller's count. */
static int read_innodb_fks(MYSQL *m, struct catalog_rows *b)
{
	MYSQL_RES *res = query(m, "SELECT FOR_NAME, REF_NAME, TYPE FROM "
			       "information_schema.INNODB_SYS_FOREIGN", true);
	MYSQL_ROW r;
	int rc = 0;

	if (!res)
		return 1;
	while (rc == 0 && (r = mysql_fetch_row(res))) {
		char cs[256], cn[256], ps[256], pn[256], rules[32];
		unsigned t = r[2] ? (unsigned)atoi(r[2]) : 0;
		const char *v[5] = { cs, cn, ps, pn, rules };

		if (!r[0] || !r[1] || !decode_name(r[0], cs, cn, sizeof(cs)) ||
		    !decode_name(r[1], ps, pn, sizeof(ps))) {
			rc = 1;
			break;
		}
		/* TYPE: 1 ON DELETE CASCADE, 2 ON DELETE SET NULL, 4 ON UPDATE
		 * CASCADE, 8 ON UPDATE SET NULL */
		snprintf(rules, sizeof(rules), "%s,%s",
			 (t & 4) ? "CASCADE" : (t & 8) ? "SET NULL" : "RESTRICT",
			 (t & 1) ? "CASCADE" : (t & 2) ? "SET NULL" : "RESTRICT");
		rc = add_row(b, 'F', v, 5);
	}
	mysql_free_result(res);
	return rc;
}

static int read_fks(MYSQL *m, struct catalog_rows *b)
{
	size_t before = b->n;
	int rc = read_innodb_fks(m, b);

	if (rc <= 0)
		return rc;
	b->n = before;   /* (their strings stay until catalog_rows_free) */
	return read_rows(m, "SELECT CONSTRAINT_SCHEMA, TABLE_NAME, UNIQUE_CONSTRAINT_SCHEMA, "
			 "REFERENCED_TABLE_NAME, CONCAT(UPDATE_RULE, ',', DELETE_RULE) "
			 "FROM information_schema.REFERENTIAL_CONSTRAINTS", 'F', b);
}

int catalog_query_read(MYSQL *m, struct catalog_rows *b, bool *fold)
{
	MYSQL_RES *res;
	MYSQL_ROW r;
	int rc;

	if (!(res = query(m, "SELECT @@lower_case_table_names", false)))
		return -1;
	*fold = (r = mysql_fetch_row(res)) && r[0] && atoi(r[0]) != 0;
	mysql_free_result(res);
	rc = read_objects(m, b);
	if (rc == 0)
		rc = read_fks(m, b);
	if (rc == 0)
		rc = read_rows(m, "SELECT EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, TRIGGER_SCHEMA, "
			       "ACTION_STATEMENT FROM information_schema.TRIGGERS", 'R', b);
	if (rc == 0)
		rc = read_rows(m, "SELECT ROUTINE_SCHEMA, ROUTINE_NAME, ROUTINE_TYPE, ROUTINE_DEFINITION "
			       "FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA NOT IN "
			       "('information_schema','performance_schema','mysql','sys')", 'P', b);
	return rc;
}
