/*
 * argscrub.h: hiding secrets given on the command line from ps and
 * /proc/PID/cmdline. At start the node keeps a private copy of its argv
 * (SIGHUP re-reads the command line from it) and overwrites, in place, the
 * passwords in the original: the password of --upstream-db-url, those of
 * --allowed-users, and the whole value of --monitor-password and
 * --admin-password (each byte becomes 'x').
 */
#ifndef SHOAL_ARGSCRUB_H
#define SHOAL_ARGSCRUB_H

/* Copy argv (argc strings and a NULL) and scrub the original. Returns the
 * copy, or NULL when out of memory (then nothing was scrubbed). */
char **argscrub_apply(int argc, char **argv);

/* Free a copy made by argscrub_apply(). */
void argscrub_free(char **copy);

#endif
