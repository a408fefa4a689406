/*
 * listener.h: the listening sockets of the data port, run on the main
 * thread's loop. Accepts, refuses connections over the limit with error
 * 1040 and, while the upstream has been down too long, with error 1429;
 * hands the rest to the least-loaded worker.
 */
#ifndef SHOAL_LISTENER_H
#define SHOAL_LISTENER_H

#include <ev.h>
#include <stdint.h>

#include "config/config.h"

/* Bind every address in cfg->listen. 0, or -1 after logging why. */
int listeners_open(struct ev_loop *loop, const struct shoal_config *cfg);
/* Stop accepting and close the sockets. */
void listeners_close(struct ev_loop *loop);
/* Send one ERR packet (sequence id 0, in place of the greeting) on an
 * accepted socket, without waiting, and close it. Any thread. */
void listener_refuse(int fd, uint16_t code, const char *sqlstate, const char *msg);
/* Bind one TCP listening socket (non-blocking, SO_REUSEADDR). fd or -1. */
int listen_socket(const struct shoal_addr *a, char *err, size_t errlen);

#endif
