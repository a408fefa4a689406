/*
 * fuzz_cache_cmd: the cache SQL parser of src/cache/commands.c
 * (cache_cmd_parse), which reads every CREATE/DROP/FLUSH/SHOW/EXPLAIN
 * statement a client sends on the data port, and cache_check() on what a
 * CREATE CACHE yields.
 *
 * The input is the statement, as the node passes it: the COM_QUERY payload
 * after the command byte, not NUL-terminated (here an exact-size heap copy,
 * so a read past its end is an ASan report). cache_check() gets the SELECT
 * as a C string, as the admin's CACHES module passes it.
 *
 * Checked: the return value is -1, CC_NONE or a known command; a syntax
 * error comes with a terminated, non-empty message; names and ids are
 * terminated; the SELECT of CREATE CACHE lies inside the statement; times
 * and LIMIT are in the documented ranges.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cache/commands.h"
#include "cache/registry.h"
#include "fuzz_util.h"

#define MAX_MS 86400000

static void check_ms(int v, const char *what)
{
	FUZZ_CHECK(v == -1 || (v >= 0 && v <= MAX_MS), "%s = %d", what, v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *q = fuzz_dup_exact(data, size);
	struct cache_cmd_args a;
	char err[256];
	int kind;

	memset(err, 0x5a, sizeof err);
	kind = cache_cmd_parse(q, size, &a, err, sizeof err);
	FUZZ_CHECK(kind >= -1 && kind <= CC_SHOW_RS_STATUS, "kind %d", kind);
	if (kind == -1)
		FUZZ_CHECK(fuzz_terminated(err, sizeof err) && err[0], "error message");
	FUZZ_CHECK(fuzz_terminated(a.target, sizeof a.target), "target not terminated");
	FUZZ_CHECK(a.limit == -1 || (a.limit >= 0 && a.limit <= MAX_MS), "limit %ld", a.limit);
	if (kind == CC_CREATE) {
		const struct create_cache *cc = &a.create;

		FUZZ_CHECK(fuzz_terminated(cc->name, sizeof cc->name), "name not terminated");
		FUZZ_CHECK(fuzz_terminated(cc->query_id, sizeof cc->query_id), "query_id not terminated");
		check_ms(cc->ttl_ms, "ttl_ms");
		check_ms(cc->refresh_ms, "refresh_ms");
		check_ms(cc->coalesce_ms, "coalesce_ms");
		FUZZ_CHECK(cc->txn >= TXN_DEFAULT && cc->txn <= TXN_UNTIL_WRITE, "txn %d", cc->txn);
		if (cc->from_id) {
			FUZZ_CHECK(cc->query_id[0], "FROM q_ without an id");
		} else {
			FUZZ_CHECK(cc->select && cc->select >= q && cc->select_len > 0 &&
				   cc->select + cc->select_len <= q + size, "SELECT outside the statement");
			struct create_cache copy = *cc;
			char *sel = fuzz_dup_cstr((const uint8_t *)cc->select, cc->select_len);

			copy.select = sel;
			memset(err, 0x5a, sizeof err);
			if (cache_check(&copy, err, sizeof err) < 0)
				FUZZ_CHECK(fuzz_terminated(err, sizeof err) && err[0], "check message");
			free(sel);
		}
	}
	free(q);
	return 0;
}
