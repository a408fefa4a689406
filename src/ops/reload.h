/*
 * reload.h: SIGHUP. The settings are read again as at start (config file,
 * environment, flags) into a scratch copy; those that are safe to change
 * while the node runs are stored into g_config (relaxed atomic stores: the
 * workers read them without locks), and every other setting that differs
 * is logged as needing a restart.
 */
#ifndef SHOAL_RELOAD_H
#define SHOAL_RELOAD_H

/* Reload with the command line the node started with. Main thread.
 * Returns how many settings were applied, or -1 if the configuration could
 * not be read (then nothing changes). */
int config_reload(int argc, char **argv);

#endif
