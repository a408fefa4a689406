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
 * A leaf module: the session core passes it the buffers it works on.
 */
#ifndef SHOAL_INFILE_H
#define SHOAL_INFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/relay.h"
#include "proto/sbuf.h"

#define INFILE_HIGH (1024 * 1024)

/* The capability bit offered in the greeting: CAP_LOCAL_FILES or 0. */
uint32_t infile_caps(void);
/* The answer being relayed waits for the client's file, and up (the
 * upstream connection's buffer) has INFILE_HIGH bytes or more to write:
 * do not read the client. */
bool infile_blocked(const struct relay *r, const struct sbuf *up);
/* Move the client's whole file packets buffered in in to up, renumbered
 * to the upstream's sequence, while the relay waits for the file and up
 * keeps up; r->infile_cont carries "the last packet was a full one"
 * between calls. -1 out of memory (the session must end), else 0. */
int infile_pump(struct relay *r, struct sbuf *in, struct sbuf *up);

#endif
