/*
 * listener.h: the listening sockets of the data port, run on the main
 * thread's loop. Accepts, refuses connections over the limit with error
 * 1040, and hands the rest to the least-loaded worker.
 */
#ifndef SHOAL_LISTENER_H
#define SHOAL_LISTENER_H

#include <ev.h>

#include "config.h"

/* Bind every address in cfg->listen. 0, or -1 after logging why. */
int listeners_open(struct ev_loop *loop, const struct shoal_config *cfg);
/* Stop accepting and close the sockets. */
void listeners_close(struct ev_loop *loop);
/* Bind one TCP listening socket (non-blocking, SO_REUSEADDR). fd or -1. */
int listen_socket(const struct shoal_addr *a, char *err, size_t errlen);

#endif
