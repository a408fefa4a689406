/*
 * explain.c: the kinds of difference the differential accepts (see
 * explain.h). Each rule looks at the field's two values (as record.h's
 * sides write them) and at the line, narrowly: a difference that fits no
 * rule fails the test.
 */
#include "explain.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "record.h"

enum {
	K_NEW_KEYWORD, K_TXN_ORDER, K_NAMES_COMMENT, K_UNCLOSED_PIN, K_ROLE_ASSIGN, K_LATER_FLUSH,
	K_KILL_COMMENT, K_KILL_ANY_COMMENT, K_CACHE_COMMENT, K_CACHE_ERROR_AT, K_DOUBT_PIN, K_HIDDEN_PRIV,
	K_PAREN_PRIV, K_KILL_SEMICOLONS, K_CACHE_COMMENT_QUERY,
};

const struct explain_kind explain_kinds[EXPLAIN_KINDS] = {
	[K_NEW_KEYWORD] = { "new keyword id",
		"equal: the keyword list has more words (LEFT, RIGHT, INNER, CROSS, NATURAL: they end a "
		"table's alias; and those the WHERE reader compares), so a text led by one gets that id "
		"where it had none; every reader compares the ids it knows, none of these as a leading word" },
	[K_TXN_ORDER] = { "same assignments, another order",
		"equal: a SET TRANSACTION's access mode and level are two variables, recorded level first; "
		"the state after them is the same" },
	[K_NAMES_COMMENT] = { "NAMES text without a comment",
		"equal or safer: the old reader kept what followed the collation up to the next token, a "
		"comment or an executable comment's closing */ (SET NAMES utf8 */ when brought to another "
		"connection: a syntax error); the character set and collation are the same" },
	[K_UNCLOSED_PIN] = { "unclosed quote: nothing taken",
		"more conservative: a string or `name` never closed (the server refuses the statement) was "
		"taken, cut short, as a value or a schema; now nothing of it is taken: a SET or USE pins the "
		"session to its connection, a DROP DATABASE changes nothing (its change applied only once "
		"the statement succeeded, which it never does)" },
	[K_ROLE_ASSIGN] = { "SET ROLE by its words",
		"more conservative: SET ROLE is read by its first two words, where the old check wanted a "
		"space after ROLE in the digest text (SET ROLE`r`, and SET role = 'x' too): the session stops "
		"using the cache, as after SET ROLE" },
	[K_LATER_FLUSH] = { "FLUSH TABLES after another statement",
		"more conservative (and right): the old check read only a text's first statement; a FLUSH "
		"TABLES after a ';' now also makes every entry go once it succeeds" },
	[K_KILL_COMMENT] = { "KILL beside a comment: the node's",
		"more conservative: a KILL with a comment before, inside or after it, or in an executable "
		"comment every server runs, was sent upstream as written, where its id (a node session's) "
		"names whatever upstream thread has it; the node answers it now, as a KILL without one" },
	[K_KILL_ANY_COMMENT] = { "KILL after a comment: a KILL",
		"more conservative: a KILL the node forwards counts as one even after a comment (a command "
		"whose connection broke is then not sent again)" },
	[K_CACHE_COMMENT] = { "cache SQL beside a comment: the node's",
		"the fix: cache SQL next to a -- or # comment, or in an executable comment, is the node's "
		"(the old reader skipped / * * / only: a syntax error, or sent upstream, which knows no such "
		"statement); nothing is served from the cache that was not" },
	[K_CACHE_ERROR_AT] = { "cache SQL syntax error, named at its token",
		"equal: both are ERROR 1064; the message quotes the text from the token the error is at, "
		"whole, where the old one started at the byte it stopped on" },
	[K_DOUBT_PIN] = { "doubtful executable comment: pinned",
		"more conservative: a SET or USE in an executable comment some servers skip (/ *!99999) was "
		"taken as run; what it does depends on the server, so the session keeps its connection" },
	[K_HIDDEN_PRIV] = { "privilege change the digest hid",
		"more conservative: a GRANT in a MariaDB executable comment (/ *M!), which the digest drops, "
		"forgets the grant verdicts like any other" },
	[K_PAREN_PRIV] = { "privilege change in parentheses",
		"more conservative: a privilege statement's first words are read past a leading '(', as every "
		"other first word" },
	[K_KILL_SEMICOLONS] = { "KILL n;;: the node's",
		"more conservative: a KILL followed by more than one ';' was sent upstream as written (its id "
		"naming whatever upstream thread has it); the node answers it, as with one ';'" },
	[K_CACHE_COMMENT_QUERY] = { "CREATE CACHE of a comment: a syntax error",
		"equal: CREATE CACHE ... FROM followed by a comment alone is an error either way: now a syntax "
		"error (1064), before an error of CREATE CACHE once it took the comment for the query" },
};

/* Does the line end inside a string or `name` (quotes doubled or, in
 * strings, escaped by a backslash)? A rough reading, for this test only. */
static bool unclosed(const char *s)
{
	char q = 0;

	for (; *s; s++) {
		if (!q) {
			if (*s == '\'' || *s == '"' || *s == '`')
				q = *s;
		} else if (*s == '\\' && q != '`' && s[1]) {
			s++;
		} else if (*s == q) {
			if (s[1] == q)
				s++;
			else
				q = 0;
		}
	}
	return q != 0;
}

/* The words of a value, sorted: the same multiset in another order? */
static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool same_words(const char *a, const char *b)
{
	char x[FIELD_MAX], y[FIELD_MAX], *wa[256], *wb[256], *save = NULL;
	int na = 0, nb = 0;

	snprintf(x, sizeof(x), "%s", a);
	snprintf(y, sizeof(y), "%s", b);
	for (char *w = strtok_r(x, " ", &save); w && na < 256; w = strtok_r(NULL, " ", &save))
		wa[na++] = w;
	for (char *w = strtok_r(y, " ", &save); w && nb < 256; w = strtok_r(NULL, " ", &save))
		wb[nb++] = w;
	if (na != nb)
		return false;
	qsort(wa, (size_t)na, sizeof(wa[0]), by_str);
	qsort(wb, (size_t)nb, sizeof(wb[0]), by_str);
	for (int i = 0; i < na; i++)
		if (strcmp(wa[i], wb[i]) != 0)
			return false;
	return true;
}

/* old is new's "names[X]" with a comment, or an executable comment's closing
 * mark, after X. */
static bool names_comment(const char *old, const char *new)
{
	const char *o = strstr(old, "names["), *n = strstr(new, "names[");
	size_t k;

	if (!o || !n || (size_t)(o - old) != (size_t)(n - new) || strncmp(old, new, (size_t)(o - old)) != 0)
		return false;
	k = strcspn(n, "]");
	return strncmp(o, n, k) == 0 && (strncmp(o + k, " /*", 3) == 0 || strncmp(o + k, " */", 3) == 0 ||
					 strncmp(o + k, " --", 3) == 0 || strncmp(o + k, " #", 2) == 0);
}

static bool session_kind(const char *line, const char *old, const char *new, int *kind)
{
	unsigned long of = strtoul(old, NULL, 16), nf = strtoul(new, NULL, 16);

	if (same_words(old, new))
		*kind = K_TXN_ORDER;
	else if (names_comment(old, new))
		*kind = K_NAMES_COMMENT;
	else if (unclosed(line) && !(nf & 0x10) && (of & ~0x11ul) == (nf & ~0x11ul))
		*kind = K_UNCLOSED_PIN;       /* no SV_CHANGES, maybe SV_PIN_FOREVER: the rest as before */
	else if (strstr(line, "/*!") && nf == (of & ~0x10ul) + 0x1 - (of & 0x1))
		*kind = K_DOUBT_PIN;          /* SV_PIN_FOREVER instead of SV_CHANGES */
	else
		return false;
	return true;
}

static bool has_comment(const char *line)
{
	return strstr(line, "/*") || strstr(line, "--") || strchr(line, '#');
}

static int kill_kind(int f, const char *line, const char *old, const char *new)
{
	const char *semi = strchr(line, ';');

	if (f == F_KILL && strcmp(old, "no") == 0 && strncmp(new, "answered ", 9) == 0 && semi &&
	    semi[strspn(semi, "; \t")] == 0 && strstr(semi, ";;"))
		return K_KILL_SEMICOLONS;
	if (!has_comment(line))
		return -1;
	if (f == F_KILL && strcmp(old, "no") == 0 && strncmp(new, "answered ", 9) == 0)
		return K_KILL_COMMENT;
	if (f == F_KILL_ANY && strcmp(old, "0") == 0 && strcmp(new, "1") == 0)
		return K_KILL_ANY_COMMENT;
	return -1;
}

/* FROM then a -- or # comment to the end of the line. */
static bool comment_query(const char *line)
{
	const char *from = strcasestr(line, "FROM");

	if (!from)
		return false;
	from += 4 + strspn(from + 4, " \t");
	return strncmp(from, "--", 2) == 0 || from[0] == '#';
}

/* The cache SQL: a command the old reader refused or did not see, beside
 * a comment; or the same syntax error, named at another byte. */
static int cache_kind(int f, const char *line, const char *old, const char *new)
{
	bool was_none_or_error = strcmp(old, "0") == 0 || strncmp(old, "-1", 2) == 0;

	const char *query = strrchr(old, '[');

	if (f == F_CACHE_ERROR && old[0] && new[0])
		return K_CACHE_ERROR_AT;
	if (!has_comment(line))
		return -1;
	/* a CREATE CACHE whose query is a comment */
	if (comment_query(line) && ((f == F_CACHE_ERROR && !old[0] && new[0]) ||
				    (f == F_CACHE_SQL && strcmp(old, "1") == 0 && strcmp(new, "-1") == 0)))
		return K_CACHE_COMMENT_QUERY;
	if (query && strncmp(old, "1 ", 2) == 0 && strncmp(new, "-1", 2) == 0) {
		const char *sel = strstr(old, "] ttl") ? strchr(strstr(old, "] ttl") + 5, '[') : NULL;

		if (sel && (strncmp(sel + 1, "--", 2) == 0 || sel[1] == '#' || strncmp(sel + 1, "/*", 2) == 0))
			return K_CACHE_COMMENT_QUERY;
	}
	if (f == F_CACHE_ERROR && old[0] && !new[0])
		return K_CACHE_COMMENT;
	if ((f == F_CACHE_PARSE || f == F_CACHE_SQL) && was_none_or_error && atoi(new) > 0)
		return K_CACHE_COMMENT;
	return -1;
}

static int grants_kind(int f, const char *line, const char *old, const char *new)
{
	if (f == F_PRIV_TEXT)
		return strcmp(old, "0") == 0 && strcmp(new, "1") == 0 && line[strspn(line, " ")] == '(' ?
		       K_PAREN_PRIV : -1;
	/* "privileges role": the same on one side, set on the other */
	if (old[0] == new[0] && old[2] == '0' && new[2] == '1' && strcasestr(line, "role"))
		return K_ROLE_ASSIGN;
	if (old[2] == new[2] && old[0] == '0' && new[0] == '1' && strstr(line, "/*M!"))
		return K_HIDDEN_PRIV;
	return -1;
}

int explain(int f, const char *line, const char *old, const char *new)
{
	int kind = -1;

	switch (f) {
	case F_FIRST:
		/* a word the old list had not (the old side names every id it had) */
		return !old[0] && new[0] ? K_NEW_KEYWORD : -1;
	case F_SV_MARIADB:
	case F_SV_MYSQL:
		return session_kind(line, old, new, &kind) ? kind : -1;
	case F_GRANTS:
	case F_PRIV_TEXT:
		return grants_kind(f, line, old, new);
	case F_KILL:
	case F_KILL_ANY:
		return kill_kind(f, line, old, new);
	case F_CACHE_PARSE:
	case F_CACHE_ERROR:
	case F_CACHE_SQL:
		return cache_kind(f, line, old, new);
	case F_FLUSH_ALL:
		if (strcmp(old, "0") == 0 && strcmp(new, "1") == 0 && strchr(line, ';') &&
		    (strcasestr(strchr(line, ';'), "flush") || strcasestr(strchr(line, ';'), "repair")))
			return K_LATER_FLUSH;
		return -1;
	default:
		return -1;
	}
}
