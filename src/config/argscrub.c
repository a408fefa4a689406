/*
 * argscrub.c: owns the scrubbing of secrets from the process's own argv
 * (argscrub.h). Which flags are secret comes from config.c (the settings
 * whose keys config_is_secret() names; a flag is its key with '-' for '_').
 * Values are found as config.c reads them: --flag=value or --flag value.
 */
#include "config/argscrub.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

struct secret_flag {
	char flag[64];
	char key[64];
};

/* Blank bytes [b, e). */
static void blank(char *b, const char *e)
{
	while (b < e)
		*b++ = 'x';
}

/* mysql://user:PASS@host: only the password. */
static void scrub_url(char *v)
{
	char *start = strstr(v, "://"), *at, *colon;

	start = start ? start + 3 : v;
	at = strrchr(start, '@');
	if (!at)
		return;
	colon = memchr(start, ':', (size_t)(at - start));
	if (colon)
		blank(colon + 1, at);
}

/* user:PASS,user2:PASS2: each password. */
static void scrub_users(char *v)
{
	while (*v) {
		char *comma = strchr(v, ','), *end = comma ? comma : v + strlen(v);
		char *colon = memchr(v, ':', (size_t)(end - v));

		if (colon)
			blank(colon + 1, end);
		if (!comma)
			break;
		v = comma + 1;
	}
}

static void scrub_value(const char *key, char *v)
{
	if (strcmp(key, "upstream_db_url") == 0)
		scrub_url(v);
	else if (strcmp(key, "allowed_users") == 0)
		scrub_users(v);
	else
		blank(v, v + strlen(v));
}

struct collect {
	struct secret_flag *f;
	int n, cap;
};

static int collect_secret(const char *key, void *arg)
{
	struct collect *c = arg;
	struct secret_flag *s;

	if (!config_is_secret(key) || c->n == c->cap || strlen(key) >= sizeof s->key)
		return 0;
	s = &c->f[c->n++];
	strcpy(s->key, key);
	strcpy(s->flag, key);
	for (char *p = s->flag; *p; p++)
		if (*p == '_')
			*p = '-';
	return 0;
}

/* argv[i] names a secret flag: scrub its value; returns how many extra
 * argv entries it used (1 for "--flag value"). */
static int scrub_arg(const struct collect *c, int argc, char **argv, int i)
{
	const char *name = argv[i] + 2;
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);

	for (int k = 0; k < c->n; k++) {
		if (strlen(c->f[k].flag) != len || memcmp(c->f[k].flag, name, len) != 0)
			continue;
		if (eq) {
			scrub_value(c->f[k].key, argv[i] + 2 + len + 1);
			return 0;
		}
		if (i + 1 < argc && argv[i + 1]) {
			scrub_value(c->f[k].key, argv[i + 1]);
			return 1;
		}
	}
	return 0;
}

char **argscrub_apply(int argc, char **argv)
{
	struct secret_flag flags[16];
	struct collect c = { flags, 0, 16 };
	char **copy = calloc((size_t)argc + 1, sizeof *copy);

	if (!copy)
		return NULL;
	for (int i = 0; i < argc; i++) {
		copy[i] = strdup(argv[i] ? argv[i] : "");
		if (!copy[i]) {
			argscrub_free(copy);
			return NULL;
		}
	}
	config_each(collect_secret, &c);
	for (int i = 1; i < argc && argv[i]; i++)
		if (argv[i][0] == '-' && argv[i][1] == '-')
			i += scrub_arg(&c, argc, argv, i);
	return copy;
}

void argscrub_free(char **copy)
{
	if (!copy)
		return;
	for (char **p = copy; *p; p++)
		free(*p);
	free(copy);
}
