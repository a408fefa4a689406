/*
 * test_vcols.c: the verdict on generated columns (src/cache/vcols.c): which
 * generation expressions count as not deterministic, and the verdict's
 * life: unknown, queued once for the catalog reader, forgotten at each
 * catalog read; the server's spelling of a table the check asks by. (The reader's check itself runs against a real server in
 * tests/integration/66-autocache-fidelity.t.)
 */
#include <string.h>

#include "cache/inval.h"
#include "cache/vcols.h"
#include "cache/tcols.h"
#include "tap.h"

static const char *why(const char *expr)
{
	const struct reason *r = vcols_expression_reason(expr, strlen(expr));

	return r ? r->text : NULL;
}

static void expressions(void)
{
	ok(why("`a` + 1") == NULL, "a + 1: deterministic");
	ok(why("concat(`a`,'-',`b`)") == NULL, "CONCAT of columns: deterministic");
	ok(why("json_value(`doc`,'$.x')") == NULL, "JSON_VALUE: deterministic");
	ok(why("rand()") != NULL, "RAND(): not deterministic (%s)", why("rand()"));
	ok(why("current_timestamp()") != NULL, "CURRENT_TIMESTAMP(): not deterministic");
	ok(why("last_value(@a:=@a + 1,`a`)") != NULL, "a user variable: not deterministic");
	ok(why("`db`.`f`(`a`)") != NULL, "a stored function: not deterministic");
	ok(why("uuid()") != NULL, "UUID(): not deterministic");
	ok(why("'unterminated") != NULL, "an expression that cannot be read counts as not deterministic");
}

static void lifecycle(void)
{
	struct inval_table *t = inval_table_get("db", 2, "t", 1);

	if (!ok(t != NULL, "a table"))
		return;
	is_int(vcols_verdict(t), VCOLS_UNKNOWN, "a new table: unknown");
	ok(!vcols_pending(), "nothing queued");
	ok(vcols_check_later(t), "a client read it: queued for a check");
	is_int(vcols_verdict(t), VCOLS_QUEUED, "  its verdict: queued");
	ok(!vcols_check_later(t), "  queued once only");
	ok(vcols_pending(), "  the reader has work");
	vcols_forget_all();
	is_int(vcols_verdict(t), VCOLS_QUEUED, "a catalog read meanwhile: still queued (sessions wait for it)");
	ok(vcols_pending(), "  the reader still has it");
	atomic_store(&t->vcols, 0u); /* as a failed check leaves it */
	is_int(vcols_verdict(t), VCOLS_UNKNOWN, "a table whose check failed: unknown again");

	struct inval_table *v = inval_table_get("db", 2, "v", 1);

	vcols_set_view(v);
	is_int(vcols_verdict(v), VCOLS_PLAIN, "a view: plain at once, nothing asked of the server");
	vcols_set_view(t);
	is_int(vcols_verdict(t), VCOLS_PLAIN, "  (unknown before: settled as a view)");
	vcols_forget_all();
	ok(vcols_check_later(v), "a catalog read forgets it: a view known no more is queued like a table");
	vcols_set_view(v);
	is_int(vcols_verdict(v), VCOLS_QUEUED, "  a queued one is the reader's to settle");
}

/* The key is folded to lower case; the check asks the server by the name
 * as its catalog listed it (a server with case-sensitive names knows
 * `Items`, not `items`). */
static void spelling(void)
{
	struct inval_table *t = inval_table_get("CaseDb", 6, "Items", 5);

	if (!ok(t != NULL, "a table named in mixed case"))
		return;
	is_str(inval_table_spelled_name(t), "items", "never listed: its folded key");
	inval_table_spell(t, "CaseDb", "Items", 1);
	is_str(inval_table_spelled_schema(t), "CaseDb", "listed by a catalog read: the server's schema");
	is_str(inval_table_spelled_name(t), "Items", "  ... and table");
	ok(!t->spelled_twice, "  one spelling");
	inval_table_spell(t, "CaseDb", "ITEMS", 1);
	ok(t->spelled_twice, "two spellings in one read (Items and ITEMS): marked");
	inval_table_spell(t, "casedb", "ITEMS", 2);
	ok(!t->spelled_twice && strcmp(inval_table_spelled_name(t), "ITEMS") == 0,
	   "the next read lists it renamed: its new spelling, one");
	ok(inval_table_get("CASEDB", 6, "items", 5) == t, "any spelling finds the one table");
}

int main(void)
{
	if (inval_init() < 0)
		return 1;
	expressions();
	lifecycle();
	spelling();
	inval_destroy(tcols_drop);
	return done_testing();
}
