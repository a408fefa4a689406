/*
 * fuzz_tokenizer: src/sql/tokenizer.c (sql_tokenize, sql_tokenize_opts),
 * which reads every COM_QUERY a client sends, and src/sql/classify.c
 * (sql_skip_reason) on the digest_text it produces.
 *
 * Round 1: the whole input with the production defaults, into a digest
 * buffer of SQL_TOK_MIN_TEXT_CAP bytes (the size the node uses).
 * Round 2: byte 0 chooses the options (0x01 lowercase, 0x02 replace_null,
 * bits 2-4 grouping_limit, bits 5-7 groups_grouping_limit), the rest is the
 * query, into a buffer large enough not to truncate.
 * Round 3: sql_skip_reason on the raw input too (it must be safe on any
 * bytes, not only on digest text).
 *
 * Checked: the documented output contract (text NUL-terminated at text_len
 * inside text_cap, no NUL before it, digest = spooky_hash64 of the first
 * 2048 bytes, literal spans inside the query, at most 256 of them, known
 * kinds and keyword, ok iff no unterminated string/comment) and that the
 * verdict is NULL or one of the listed reasons.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sql/classify.h"
#include "sql/spooky.h"
#include "sql/tokenizer.h"
#include "fuzz_util.h"

/* NULL, or one of the classifier's verdicts, from the reasons table */
static void check_reason(const struct reason *why)
{
	if (!why)
		return;
	FUZZ_CHECK(why->id >= WHY_NOT_SELECT && why->id <= WHY_NO_CACHE && why == reason_of(why->id),
		   "a reason that is not one of the table's verdicts: '%s'", why->text);
}

static void check_result(const struct sql_tok_result *r, size_t qlen)
{
	size_t hashed = r->text_len < SQL_DIGEST_HASH_MAX ? r->text_len : SQL_DIGEST_HASH_MAX;

	FUZZ_CHECK(r->text_len < r->text_cap, "text_len %zu, cap %zu", r->text_len, r->text_cap);
	FUZZ_CHECK(r->text[r->text_len] == '\0', "digest_text not terminated");
	FUZZ_CHECK(strlen(r->text) == r->text_len, "NUL inside digest_text");
	FUZZ_CHECK(r->digest == spooky_hash64(r->text, hashed, 0), "digest is not the text's hash");
	FUZZ_CHECK(r->nlits <= SQL_TOK_MAX_LITERALS, "nlits %u", r->nlits);
	for (unsigned i = 0; i < r->nlits; i++) {
		const struct sql_lit *l = &r->lits[i];

		FUZZ_CHECK((size_t)l->off + l->len <= qlen, "literal %u [%u+%u] outside %zu bytes",
			   i, l->off, l->len, qlen);
		FUZZ_CHECK(l->kind >= SQL_LIT_STRING && l->kind <= SQL_LIT_NULL, "literal kind %u", l->kind);
	}
	FUZZ_CHECK((unsigned)r->keyword < KW__COUNT, "keyword %d", (int)r->keyword);
	FUZZ_CHECK(r->keyword == KW_NONE || sql_kw_name(r->keyword)[0] != 0, "keyword without a name");
	FUZZ_CHECK(r->ok == !(r->flags & (SQL_TOK_UNTERMINATED_STRING | SQL_TOK_UNTERMINATED_COMMENT)),
		   "ok %d with flags 0x%x", r->ok, r->flags);
	check_reason(sql_skip_reason(r->text, r->text_len));
}

static struct sql_tok_result res; /* large (the literal array): not on the stack */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *q = fuzz_dup_exact(data, size);
	char *text;

	/* 1: defaults, the node's buffer size */
	text = malloc(SQL_TOK_MIN_TEXT_CAP);
	if (!text)
		abort();
	memset(&res, 0xa5, sizeof res);
	res.text = text;
	res.text_cap = SQL_TOK_MIN_TEXT_CAP;
	FUZZ_CHECK(sql_tokenize(q, size, &res) == 0, "sql_tokenize failed");
	check_result(&res, size);
	free(text);

	/* 2: options from byte 0, a buffer that never truncates */
	if (size > 0) {
		struct sql_tok_opts o = {
			.lowercase = data[0] & 0x01,
			.replace_null = data[0] & 0x02,
			.grouping_limit = (data[0] >> 2) & 7,
			.groups_grouping_limit = (data[0] >> 5) & 7,
		};
		size_t cap = SQL_TOK_MIN_TEXT_CAP + 4 * size;

		text = malloc(cap);
		if (!text)
			abort();
		memset(&res, 0xa5, sizeof res);
		res.text = text;
		res.text_cap = cap;
		FUZZ_CHECK(sql_tokenize_opts(q + 1, size - 1, &o, &res) == 0, "sql_tokenize_opts failed");
		check_result(&res, size - 1);
		FUZZ_CHECK(!(res.flags & SQL_TOK_TEXT_TRUNCATED), "truncated into %zu bytes", cap);
		free(text);
	}

	/* 3: the classifier on raw bytes */
	check_reason(sql_skip_reason(q, size));
	free(q);
	return 0;
}
