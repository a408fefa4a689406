/*
 * gtid_set.h: MySQL GTID sets, the transactions a MySQL server has executed
 * (@@global.gtid_executed) and the position a GTID-based binlog dump starts
 * from (COM_BINLOG_DUMP_GTID).
 *
 * A transaction is uuid:gno, and since MySQL 8.3 may be uuid:tag:gno. A set
 * holds, per uuid (+ tag), a sorted list of disjoint inclusive intervals of
 * gnos; intervals that touch or overlap are always merged, so two equal sets
 * have one representation and format to the same text.
 *
 * Text form (as MySQL prints and reads it):
 *   3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7-9,
 *   8a94f357-aab4-11df-86ab-c80aa9429562:1-3:mytag:4-6
 * whitespace may surround any token (MySQL prints ",\n" between uuids), the
 * empty string is the empty set, and the intervals that follow a tag belong
 * to uuid+tag. A tag is [a-z_][a-z0-9_]{0,31}, read case-insensitively and
 * kept lower-case. As in MySQL, empty entries between commas and a uuid (or
 * tag) with no interval are accepted and add nothing; a gno is 1 to
 * GTID_GNO_MAX (MySQL's limit: the exclusive end of an interval must fit in
 * a signed 64-bit integer).
 *
 * No locking: a set belongs to one thread; the const functions may run
 * concurrently on a set no one modifies.
 */
#ifndef SHOAL_CACHE_GTID_SET_H
#define SHOAL_CACHE_GTID_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GTID_UUID_LEN 16
#define GTID_TAG_MAX 32
#define GTID_GNO_MAX ((uint64_t)INT64_MAX - 1)

struct gtid_interval {
	uint64_t first, last;              /* inclusive, 1 <= first <= last */
};

struct gtid_sid {                          /* one uuid (+ tag) */
	uint8_t uuid[GTID_UUID_LEN];
	char tag[GTID_TAG_MAX + 1];        /* lower-case; "" untagged */
	unsigned n, cap;
	struct gtid_interval *iv;          /* sorted, disjoint, not adjacent (merged) */
};

/* sid[0, n) sorted by uuid then tag, none of them empty. The slots
 * [n, cap) keep their interval arrays for reuse after gtid_set_clear. */
struct gtid_set {
	unsigned n, cap;
	struct gtid_sid *sid;
};

/* An empty set; no allocation. */
void gtid_set_init(struct gtid_set *s);

/* Frees everything; s is then as after gtid_set_init. */
void gtid_set_free(struct gtid_set *s);

/* Empties s, keeping its allocations for reuse. */
void gtid_set_clear(struct gtid_set *s);

/* dst (initialised) becomes a copy of src. 0, or -1 out of memory with dst
 * left empty. */
int gtid_set_copy(struct gtid_set *dst, const struct gtid_set *src);

/* Replaces s with the set text[0, len) spells (text need not end in NUL).
 * 0, or -1 with s empty and err (cap bytes, may be NULL) holding
 * "malformed at offset N: why" (or "out of memory"). */
int gtid_set_parse(struct gtid_set *s, const char *text, size_t len, char *err, size_t cap);

/* MySQL's canonical text of s: lower-case uuids, "a-b" or "a", a uuid's
 * tags after its untagged intervals as ":tag:a-b", uuids joined by ",".
 * Returns the length needed (without the NUL); writes at most cap bytes,
 * always NUL-terminated when cap > 0. */
size_t gtid_set_format(const struct gtid_set *s, char *out, size_t cap);

/* Adds uuid[:tag]:gno (tag NULL or "" untagged, either case). 0, or -1 with
 * s unchanged: out of memory, gno 0 or over GTID_GNO_MAX, a tag not valid. */
int gtid_set_add(struct gtid_set *s, const uint8_t uuid[GTID_UUID_LEN], const char *tag,
		 uint64_t gno);

/* Does s hold uuid[:tag]:gno? O(log sids + log intervals). */
bool gtid_set_contains(const struct gtid_set *s, const uint8_t uuid[GTID_UUID_LEN],
		       const char *tag, uint64_t gno);

/* Is every GTID of a also in b (a ⊆ b)? */
bool gtid_set_subset(const struct gtid_set *a, const struct gtid_set *b);

static inline bool gtid_set_empty(const struct gtid_set *s)
{
	return s->n == 0;
}

/* Does s hold a tagged GTID (then its binary form is the tagged one)? */
bool gtid_set_has_tags(const struct gtid_set *s);

/* The binary form COM_BINLOG_DUMP_GTID carries (MySQL's Gtid_set::encode),
 * in one of two formats, told apart by the first 8 bytes (u64 LE):
 *   untagged (a set without tags; every MySQL reads it): n_sids;
 *   tagged (a set with a tag; MySQL 8.3+): the format, 1, in the lowest
 *     and the highest byte, n_sids in the 6 bytes between:
 *     1 << 56 | n_sids << 8 | 1.
 * Then per sid: uuid 16 bytes; in the tagged format only, the tag (every
 * sid's, "" too) as its length in one byte, length << 1 (MySQL's
 * variable-length integer of a value under 128), and its characters;
 * n_intervals u64 LE; per interval start u64 LE and end u64 LE where end is
 * EXCLUSIVE (last + 1). Returns the bytes needed (8 at least); writes only
 * when cap suffices. */
size_t gtid_set_encode(const struct gtid_set *s, uint8_t *out, size_t cap);

/* text[0, len) as a tag ([a-z_][a-z0-9_]{0,31}, either case) lower-cased
 * into out with a NUL; len 0 is "" (untagged). false if it is not a tag
 * (a NUL in it among the reasons). */
bool gtid_tag_parse(const char *text, size_t len, char out[GTID_TAG_MAX + 1]);

/* A uuid's text, exactly 36 characters (8-4-4-4-12 hex digits, either case,
 * dashes between), to its 16 bytes; false if it is not one. */
bool gtid_uuid_parse(const char *text, size_t len, uint8_t out[GTID_UUID_LEN]);

/* The 16 bytes as 36 lower-case characters with dashes, and a NUL. */
void gtid_uuid_format(const uint8_t uuid[GTID_UUID_LEN], char out[37]);

#endif
