/*
 * names.c: owns admin_names_table(), whether a statement names a table: a
 * pure string helper (no I/O, no globals) that the router, the modules and
 * the stats tables use to see which tables a statement reads, so that none
 * of them depends on another for it.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

static bool is_ident(int c)
{
	return isalnum(c) || c == '_' || c == '$';
}

bool admin_names_table(const char *sql, size_t len, const char *name)
{
	size_t n = strlen(name);

	if (n == 0)
		return false;
	for (size_t i = 0; i + n <= len; i++) {
		if (strncasecmp(sql + i, name, n) != 0)
			continue;
		if (i > 0 && is_ident((unsigned char)sql[i - 1]))
			continue;
		if (i + n < len && is_ident((unsigned char)sql[i + n]))
			continue;
		return true;
	}
	return false;
}
