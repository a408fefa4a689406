/*
 * infile.c: the client's side of LOAD DATA LOCAL INFILE (see infile.h):
 * its file packets forwarded to the upstream connection, renumbered to the
 * upstream's sequence, up to the empty packet that ends the file.
 */
#include "core/infile.h"

#include "config/config.h"
#include "proto/packet.h"

uint32_t infile_caps(void)
{
	return g_config.local_infile ? CAP_LOCAL_FILES : 0;
}

bool infile_blocked(const struct relay *r, const struct sbuf *up)
{
	return relay_awaits_infile(r) && sbuf_out_pending(up) >= INFILE_HIGH;
}

int infile_pump(struct relay *r, struct sbuf *in, struct sbuf *up)
{
	uint32_t len;
	uint8_t seq;

	while (relay_awaits_infile(r) && sbuf_out_pending(up) < INFILE_HIGH &&
	       sbuf_packet_ready(in, &len, &seq)) {
		struct pbuf *o = &up->out;
		size_t at = o->len;
		/* an empty packet after a full one ends that packet, not the file */
		bool last = len == 0 && !r->infile_cont;

		if (pbuf_append(o, sbuf_in_ptr(in), PKT_HEADER_LEN + len) < 0)
			return -1;
		o->data[at + 3] = (uint8_t)(seq + r->seq_shift);
		sbuf_in_consume(in, PKT_HEADER_LEN + len);
		r->infile_cont = len == PKT_MAX_PAYLOAD;
		if (last) {
			r->infile_cont = false;
			relay_infile_sent(r);
		}
	}
	return 0;
}
