/*
 * keywords.c: the keyword ids (see keywords.h): an open-addressing table
 * from a word's hash to its id, built once before main() runs (so before
 * any worker thread) and only read afterwards.
 */
#include "sql/keywords.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define TABLE_SIZE 1024          /* a power of two, over 4 times the words */
#define LONGEST_WORD 24          /* no keyword is longer: no lookup for those */

static const char *const texts[KW__COUNT] = {
	[KW_NONE] = "",
#define SQL_KW_TEXT(w) [KW_##w] = #w,
	SQL_KEYWORDS(SQL_KW_TEXT)
#undef SQL_KW_TEXT
};

static uint8_t lengths[KW__COUNT];
static uint16_t table[TABLE_SIZE]; /* 0: empty, else an id */
_Static_assert(TABLE_SIZE == 1u << (32 - 22), "hash_word keeps the top 10 bits");

/* A word's first and last letters and its length: enough to spread the
 * keywords (a slot holds a chain of the few that share them), and the same
 * few instructions for a short name as for a long word. Letters compare
 * without case; no keyword holds anything but letters and '_', which
 * (c | 0x20) keeps apart from the letters. */
static uint32_t hash_word(const char *p, size_t n)
{
	uint32_t a = (unsigned char)p[0] | 0x20, b = (unsigned char)p[n - 1] | 0x20;
	uint32_t m = n > 1 ? (unsigned char)p[1] | 0x20 : 0;
	uint32_t h = (a * 31u + m) * 31u + b + (uint32_t)n * 1009u;

	return (h * 2654435761u) >> 22; /* the top 10 bits: TABLE_SIZE 1024 */
}

/* maybe[n] bit c: some keyword of n letters starts with letter c ('a' is
 * bit 0, '_' never starts one). Most words of a query are names, which
 * this turns away before any hash. */
static uint32_t maybe[LONGEST_WORD + 1];

static unsigned char upper(unsigned char c)
{
	return c >= 'a' && c <= 'z' ? (unsigned char)(c - 'a' + 'A') : c;
}

static bool same_word(const char *kw, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)kw[i] != upper((unsigned char)p[i]))
			return false;
	return true;
}

__attribute__((constructor)) static void build_table(void)
{
	for (int id = 1; id < KW__COUNT; id++) {
		size_t n = strlen(texts[id]);
		uint32_t slot = hash_word(texts[id], n);

		lengths[id] = (uint8_t)n;
		maybe[n] |= 1u << ((texts[id][0] | 0x20) - 'a');
		while (table[slot])
			slot = (slot + 1) & (TABLE_SIZE - 1);
		table[slot] = (uint16_t)id;
	}
}

enum sql_kw sql_kw_lookup(const char *p, size_t n)
{
	uint32_t slot;

	unsigned c;

	if (n == 0 || n > LONGEST_WORD)
		return KW_NONE;
	c = ((unsigned char)p[0] | 0x20) - 'a';
	if (c >= 26 || !(maybe[n] & (1u << c)))
		return KW_NONE;
	for (slot = hash_word(p, n); table[slot]; slot = (slot + 1) & (TABLE_SIZE - 1)) {
		uint16_t id = table[slot];

		if (lengths[id] == n && same_word(texts[id], p, n))
			return (enum sql_kw)id;
	}
	return KW_NONE;
}
