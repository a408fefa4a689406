/*
 * fuzz_admin_router: the admin statement parser of admin/router.c, which
 * reads every COM_QUERY sent to the admin port (admin/internal.h declares
 * it pure: no I/O, no globals). The input is one COM_QUERY payload (after
 * the command byte, not NUL-terminated: an exact-size heap copy). It is
 * split into statements the way admin_query() does (admin_skip_blank,
 * admin_stmt_end) and each statement goes to admin_parse(); the whole text
 * also goes to admin_names_table() for a few table names, as the runtime_*
 * and stats_* refreshers call it on every statement.
 *
 * Checked: offsets stay inside the text and the split always moves on (a
 * statement the admin answers itself that used no bytes would loop
 * forever); admin_parse yields a known kind with terminated strings, at
 * most ADMIN_MAX_ITEMS items, a module name for LOAD/SAVE and a reason for
 * a bad command.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "admin/internal.h"
#include "fuzz_util.h"

#define MAX_STATEMENTS 4096

static const char *const tables[] = {
	"global_variables", "runtime_global_variables", "mysql_users", "stats_shoal_global",
	"stats_mysql_query_digest", "stats_mysql_query_digest_reset", "x",
};

static void check_stmt(const struct admin_stmt *s)
{
	FUZZ_CHECK(s->kind >= ASTMT_SQL && s->kind <= ASTMT_USE, "kind %d", (int)s->kind);
	FUZZ_CHECK(fuzz_terminated(s->module, sizeof s->module), "module");
	FUZZ_CHECK(fuzz_terminated(s->name, sizeof s->name), "name");
	FUZZ_CHECK(fuzz_terminated(s->table, sizeof s->table), "table");
	FUZZ_CHECK(fuzz_terminated(s->value, sizeof s->value), "value");
	FUZZ_CHECK(fuzz_terminated(s->like, sizeof s->like), "like");
	FUZZ_CHECK(fuzz_terminated(s->err, sizeof s->err), "err");
	FUZZ_CHECK(s->nitems >= 0 && s->nitems <= ADMIN_MAX_ITEMS, "nitems %d", s->nitems);
	for (int i = 0; i < s->nitems; i++) {
		FUZZ_CHECK(fuzz_terminated(s->items[i].name, sizeof s->items[i].name), "item name");
		FUZZ_CHECK(fuzz_terminated(s->items[i].label, sizeof s->items[i].label), "item label");
	}
	if (s->kind == ASTMT_MODULE)
		FUZZ_CHECK(s->module[0] && s->op != AOP_NONE, "module statement without module/op");
	if (s->kind == ASTMT_BAD_COMMAND)
		FUZZ_CHECK(s->err[0], "bad command without a reason");
	if (s->kind == ASTMT_SET_VAR)
		FUZZ_CHECK(s->name[0], "SET without a name");
}

static struct admin_stmt stmt;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *sql = fuzz_dup_exact(data, size);
	size_t pos, n = 0;

	pos = admin_skip_blank(sql, size);
	FUZZ_CHECK(pos <= size, "skip_blank %zu of %zu", pos, size);
	while (pos < size && n++ < MAX_STATEMENTS) {
		size_t left = size - pos, end, used, blank;

		end = admin_stmt_end(sql + pos, left);
		FUZZ_CHECK(end <= left, "stmt_end %zu of %zu", end, left);
		admin_parse(sql + pos, end, &stmt);
		check_stmt(&stmt);
		/* admin_query: answered here -> end + 1 past the ';'; SQLite's
		 * statements advance by SQLite's tail, which is not emulated */
		used = end < left ? end + 1 : end;
		if (stmt.kind != ASTMT_SQL)
			FUZZ_CHECK(used > 0, "statement of kind %d used no bytes", (int)stmt.kind);
		if (used == 0)
			used = 1;
		pos += used;
		blank = admin_skip_blank(sql + pos, size - pos);
		FUZZ_CHECK(blank <= size - pos, "skip_blank past the end");
		pos += blank;
	}
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		(void)admin_names_table(sql, size, tables[i]);
	free(sql);
	return 0;
}
