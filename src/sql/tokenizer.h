/*
 * tokenizer.h: Shoal's single-pass SQL tokenizer.  Owns the ProxySQL-
 * compatible query digest (digest_text + 64-bit SpookyHash digest), the list
 * of literal values with their exact source bytes, and a few cheap flags
 * (first keyword, by the one keyword enum of keywords.h; whether the query
 * could be read).
 *
 * One pass over the query, no allocation: the caller supplies the
 * digest_text buffer inside struct sql_tok_result.  The normalisation follows
 * ProxySQL 2.7's query_digests rules byte for byte (see tokenizer.c),
 * including its quirks, so digests can be copied between ProxySQL's
 * stats_mysql_query_digest and Shoal's rules.
 */
#ifndef SHOAL_SQL_TOKENIZER_H
#define SHOAL_SQL_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sql/keywords.h"

/* Bytes of digest_text covered by the hash (ProxySQL's
 * mysql-query_digests_max_digest_length default). */
#define SQL_DIGEST_HASH_MAX 2048
/* Smallest text_cap accepted: the hashed bytes plus a NUL. */
#define SQL_TOK_MIN_TEXT_CAP (SQL_DIGEST_HASH_MAX + 1)
/* Literal spans recorded per query; later ones only set lits_overflow. */
#define SQL_TOK_MAX_LITERALS 256
/* Upper bound for both grouping options (same as ProxySQL's). */
#define SQL_TOK_MAX_GROUPING 2089

/* Normalisation settings (ProxySQL's mysql-query_digests_* variables). */
struct sql_tok_opts {
	bool lowercase;            /* query_digests_lowercase */
	bool replace_null;         /* query_digests_replace_null: NULL -> ? */
	int grouping_limit;        /* (?,?,?,?,?) -> (?,?,?,...); 0 = off */
	int groups_grouping_limit; /* (..),(..),... after N groups; 0 = off */
};

/* ProxySQL's production defaults. */
#define SQL_TOK_OPTS_DEFAULT { false, false, 3, 10 }

enum sql_lit_kind {
	SQL_LIT_STRING = 1, /* '..' or "..", maybe with N / _charset prefix */
	SQL_LIT_NUMBER,     /* 12, -1.5, 1e-9 */
	SQL_LIT_HEX,        /* 0x1F or X'1F' */
	SQL_LIT_BIT,        /* B'0101' */
	SQL_LIT_NULL,       /* NULL, only when replace_null is on */
};

#define SQL_LIT_SIGNED     0x01 /* span starts with a unary +/- folded away */
#define SQL_LIT_INTRODUCER 0x02 /* span starts with N, X, B or _charset */

/* One literal replaced by '?': q[off, off + len) are its exact bytes. */
struct sql_lit {
	uint32_t off;
	uint32_t len;
	uint8_t kind;  /* enum sql_lit_kind */
	uint8_t flags; /* SQL_LIT_* */
};

/* Result flags. */
#define SQL_TOK_UNTERMINATED_STRING  0x01
#define SQL_TOK_UNTERMINATED_COMMENT 0x02
#define SQL_TOK_TEXT_TRUNCATED       0x04 /* digest_text longer than text_cap-1 */
#define SQL_TOK_HAS_COMMENT          0x08
/* A ';' followed by more SQL outside strings and comments (a ';' inside a
 * backtick identifier also counts: errs on the side of "yes"). */
#define SQL_TOK_MULTI_STATEMENT      0x10
/* A string used a backslash escape (\\ or \' or \").  Strings are read
 * the ProxySQL way, with backslash escapes; under sql_mode
 * NO_BACKSLASH_ESCAPES the server may split such a query differently. */
#define SQL_TOK_BACKSLASH_ESCAPE     0x20
/* The digest hides SQL that the server will run: ProxySQL's "-- " handling
 * swallowed a line break ("--\n"), a MariaDB executable comment (/ *M! ... * /)
 * was dropped, or a / *! ... * / body was cut at 1023 bytes.  Treat the query
 * as opaque. */
#define SQL_TOK_HIDDEN_SQL           0x40

struct sql_tok_result {
	/* in: caller's buffer; out: NUL-terminated digest_text and its length
	 * (a NUL byte in the query ends digest_text, as in ProxySQL) */
	char *text;
	size_t text_cap;
	size_t text_len;

	uint64_t digest; /* spooky_hash64(text, min(text_len, 2048), 0) */

	struct sql_lit lits[SQL_TOK_MAX_LITERALS];
	unsigned nlits;
	bool lits_overflow;

	enum sql_kw keyword; /* the first word of digest_text past '(' (keywords.h;
			      * KW_NONE: no word, or none the node knows) */
	unsigned flags; /* SQL_TOK_* */
	bool ok;        /* false: unterminated string or comment */
};

/*
 * Normalise q[0, len) with production defaults.  Sets every output field.
 * Returns 0, or -1 when out is NULL, out->text is NULL, out->text_cap is
 * below SQL_TOK_MIN_TEXT_CAP, q is NULL with len > 0, or len >= 4 GiB.
 * Unreadable SQL still returns 0 (ok = false, digest computed best-effort).
 */
int sql_tokenize(const char *q, size_t len, struct sql_tok_result *out);

/* Same with explicit options (NULL means defaults). */
int sql_tokenize_opts(const char *q, size_t len, const struct sql_tok_opts *opts,
		      struct sql_tok_result *out);

/* "q_" + 16 lowercase hex digits + NUL. */
void sql_query_id(uint64_t digest, char out[19]);

/* "0x" + 16 uppercase hex digits + NUL (ProxySQL's display format). */
void sql_digest_hex(uint64_t digest, char out[19]);

#endif
