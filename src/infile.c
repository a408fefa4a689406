/*
 * infile.c: the client's side of LOAD DATA LOCAL INFILE (see infile.h):
 * its file packets forwarded to the upstream connection, renumbered to the
 * upstream's sequence, up to the empty packet that ends the file.
 */
#include "infile.h"

#include "client.h"
#include "config.h"
#include "packet.h"

uint32_t infile_caps(void)
{
	return g_config.local_infile ? CAP_LOCAL_FILES : 0;
}

bool infile_active(const struct client *c)
{
	return c->st == CS_RELAYING && c->up && relay_awaits_infile(&c->relay);
}

bool infile_blocked(const struct client *c)
{
	return infile_active(c) && sbuf_out_pending(&c->up->io) >= INFILE_HIGH;
}

bool infile_pump(struct client *c)
{
	struct relay *r = &c->relay;
	uint32_t len;
	uint8_t seq;

	while (infile_active(c) && sbuf_out_pending(&c->up->io) < INFILE_HIGH &&
	       sbuf_packet_ready(&c->io, &len, &seq)) {
		struct pbuf *o = &c->up->io.out;
		size_t at = o->len;
		/* an empty packet after a full one ends that packet, not the file */
		bool last = len == 0 && !c->infile_cont;

		if (pbuf_append(o, sbuf_in_ptr(&c->io), PKT_HEADER_LEN + len) < 0) {
			client_close(c, "out of memory");
			return false;
		}
		o->data[at + 3] = (uint8_t)(seq + r->seq_shift);
		sbuf_in_consume(&c->io, PKT_HEADER_LEN + len);
		c->infile_cont = len == PKT_MAX_PAYLOAD;
		if (last) {
			c->infile_cont = false;
			relay_infile_sent(r);
		}
	}
	return true;
}
