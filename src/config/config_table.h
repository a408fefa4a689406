/*
 * config_table.h: the settings table behind config.c, private to config.c
 * and config_table.c (the table itself, one row per setting with its flag,
 * environment name, file key, type, bounds, default and help).
 */
#ifndef SHOAL_CONFIG_TABLE_H
#define SHOAL_CONFIG_TABLE_H

#include <stddef.h>

#include "config/config_types.h"

#define DEFAULT_CONFIG_FILE "/etc/shoal/shoal.conf"
#define MAX_WORKERS 256
#define OFF(f) offsetof(struct shoal_config, f)

enum stype {
	T_URL,      /* upstream_db_url: fills the upstream_* fields */
	T_STR,      /* char[size]; min == 1 means it must not be empty */
	T_ADDR,     /* struct shoal_addr */
	T_ADDRLIST, /* listen[] / n_listen */
	T_USERS,    /* allowed_users[] / n_allowed_users */
	T_ENUM,     /* an enum stored as int, names[] indexed by value */
	T_INT,      /* int in min..max */
	T_SIZE,     /* uint32_t bytes in min..max, K/M/G suffixes */
	T_BOOL,     /* bool */
	T_CONFIG,   /* --config / SHOAL_CONFIG: not a file key */
};

enum secret { SEC_NONE, SEC_URL, SEC_USERS, SEC_ALL };

struct setting {
	const char *key;  /* config-file key, lower_snake */
	const char *env;  /* environment name, UPPER_SNAKE */
	const char *flag; /* flag without the leading "--", kebab-case */
	enum stype type;
	enum secret secret;
	size_t off;       /* offsetof(struct shoal_config, field) */
	size_t size;      /* T_STR: buffer size */
	long long min, max;
	const char *const *names; /* T_ENUM */
	const char *metavar;
	const char *def;  /* the default, as shown in --help */
	const char *help;
};

extern const struct setting config_settings[];
extern const size_t config_n_settings;

#endif
