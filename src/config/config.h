/*
 * config.h: the node's settings. One struct, filled from defaults, then the
 * config file, then the environment, then command-line flags (each later
 * source overrides the earlier). Every setting has a flag (--upstream-db-url),
 * an env name (UPSTREAM_DB_URL) and a config-file key (upstream_db_url).
 * After config_load() returns 0 the struct is read-only and shared by all
 * threads.
 */
#ifndef SHOAL_CONFIG_H
#define SHOAL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config/config_types.h"

/* The one configuration, filled by config_load(). */
extern struct shoal_config g_config;

/* Fill cfg from defaults < file < env < argv. On a bad value prints a message
 * naming the setting and value (never a password) to stderr and returns 2;
 * for --help prints help to stdout and returns 1; --version likewise 1.
 * With --health among the flags returns CONFIG_HEALTH once the settings are
 * read (without the checks a node needs to start: no UPSTREAM_DB_URL
 * required): the caller probes the running node (healthcheck.h).
 * Returns 0 on success. envp may be NULL (then environ is used). */
#define CONFIG_HEALTH 3
int config_load(struct shoal_config *cfg, int argc, char **argv, char **envp);

/* Set defaults only. */
void config_defaults(struct shoal_config *cfg);

/* Did a file, the environment or a flag set this setting (by key)? */
bool config_is_set(const struct shoal_config *cfg, const char *key);

/* Print --help to the stream. */
void config_print_help(FILE *out);

/* Look up a login user (upstream user, allowed users, monitor). NULL if none. */
const struct shoal_user *config_find_user(const struct shoal_config *cfg, const char *name, bool *is_monitor);

/* Print the effective settings, one "key = value" line each, passwords shown
 * as "***". */
void config_log_summary(const struct shoal_config *cfg, FILE *out);

/* Introspection, for the admin interface. Keys are the config-file keys
 * (lower_snake); --config is not a setting here. */

/* Call fn(key, arg) for every setting in table order; stops at, and returns,
 * the first nonzero value fn returns. 0 when all were visited. */
int config_each(int (*fn)(const char *key, void *arg), void *arg);

/* Is key a setting? */
bool config_has_key(const char *key);

/* Is the setting a password, or text that contains one? */
bool config_is_secret(const char *key);

/* The value of setting key in cfg as text, as the start-up summary shows it
 * (passwords as "***", the upstream URL redacted). Always NUL-terminates out
 * (truncating). 0, or -1 for an unknown key or no memory. */
int config_get_text(const struct shoal_config *cfg, const char *key, char *out, size_t outlen);

/* Parse value into setting key of cfg with the parsers config_load() uses.
 * 0, or -1 with the same message config_load() prints, without the "shoal: "
 * prefix and the newline:
 *   invalid value for <key> (--<flag> / <ENV>): '<value>': <reason>
 * (passwords redacted), or "unknown setting '<key>'". On failure cfg is
 * unchanged. Cross-checks between settings are not made. */
int config_set_text(struct shoal_config *cfg, const char *key, const char *value,
		    char *err, size_t errlen);

#endif
