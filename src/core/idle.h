/*
 * idle.h: the idle client timeout (--client-idle-timeout-ms, like the
 * server's wait_timeout). A logged-in session that sends nothing for that
 * long is sent error 4031 (ER_CLIENT_INTERACTION_TIMEOUT, as MySQL 8.0.24+
 * does) and closed. It reuses the session's handshake timer, which is idle
 * once the login is over.
 */
#ifndef SHOAL_IDLE_H
#define SHOAL_IDLE_H

struct client;

#define ERR_CLIENT_INTERACTION_TIMEOUT 4031

/* Called by client.c at the end of every event handler of a session (its
 * client_settle()): while the session waits for a command, (re)start its idle
 * timer. Does nothing during the login or when the timeout is 0. */
void idle_arm(struct client *c);

#endif
