/*
 * infile.h: LOAD DATA LOCAL INFILE relayed. The node offers
 * CLIENT_LOCAL_FILES when --local-infile allows it (and the upstream
 * connection then negotiates it too: it is part of upstream_key). When the
 * server asks for the client's file (the relay forwarded its 0xFB packet
 * and waits in RL_INFILE), the client's packets go upstream as they come,
 * until the empty packet that ends the file; the server's answer is then
 * relayed as any other. A client that refuses sends the empty packet at
 * once, and gets the server's answer to that.
 *
 * Memory stays bounded: while INFILE_HIGH bytes wait to be written to the
 * upstream, the client is not read (client_arm asks infile_blocked).
 */
#ifndef SHOAL_INFILE_H
#define SHOAL_INFILE_H

#include <stdbool.h>
#include <stdint.h>

struct client;

#define INFILE_HIGH (1024 * 1024)

/* The capability bit offered in the greeting: CAP_LOCAL_FILES or 0. */
uint32_t infile_caps(void);
/* The session is sending a file to the upstream. */
bool infile_active(const struct client *c);
/* ... and must not read the client until the upstream takes more. */
bool infile_blocked(const struct client *c);
/* Forward the client's whole file packets that are buffered, while the
 * upstream keeps up. false: the session was closed (out of memory). */
bool infile_pump(struct client *c);

#endif
