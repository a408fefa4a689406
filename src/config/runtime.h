/*
 * runtime.h: the settings that may change while the node runs (the admin's
 * LOAD SHOAL VARIABLES TO RUNTIME, and SIGHUP), and applying one of them from
 * a freshly parsed configuration to g_config. Values are stored with relaxed
 * atomic stores: every such setting is read where it is used, never copied
 * at start. Strings (the admin login) are only read on the main thread,
 * where they are applied.
 */
#ifndef SHOAL_RUNTIME_H
#define SHOAL_RUNTIME_H

#include <stdbool.h>

#include "config/config.h"

/* Can the setting (config-file key) change without a restart? */
bool runtime_setting(const char *key);
/* Copy it from src into g_config. false if it needs a restart. */
bool runtime_apply(const char *key, const struct shoal_config *src);

#endif
