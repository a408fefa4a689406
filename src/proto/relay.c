/*
 * relay.c: walks the packets of one upstream response (OK, ERR, result sets
 * with MORE_RESULTS chains, prepare responses, cursor fetches) to find its
 * end, forwarding each packet to the client, and rewriting EOF packets for
 * DEPRECATE_EOF clients. See relay.h.
 */
#include "proto/relay.h"

/* COM_STMT_EXECUTE flags: CURSOR_TYPE_READ_ONLY, _FOR_UPDATE, _SCROLLABLE */
#define CURSOR_TYPE_MASK 0x07

void relay_start(struct relay *r, uint8_t cmd, uint32_t client_caps)
{
	static const enum relay_state first[] = {
		[RK_NONE] = RL_DONE, [RK_SINGLE] = RL_SINGLE, [RK_RESULT] = RL_FIRST,
		[RK_ROWS] = RL_ROWS, [RK_PREPARE] = RL_PREP_FIRST, [RK_FIELDLIST] = RL_FIELDLIST,
	};

	*r = (struct relay){0};
	r->cmd = cmd;
	r->deprecate_eof = (client_caps & CAP_DEPRECATE_EOF) != 0;
	r->strip_tracking = !(client_caps & CAP_SESSION_TRACK);
	r->local_files = (client_caps & CAP_LOCAL_FILES) != 0;
	r->st = first[command_of(cmd)->relay];
}

void relay_upstream(struct relay *r, bool progress)
{
	r->drop_progress = progress;
}

void relay_execute_flags(struct relay *r, uint8_t flags)
{
	r->cursor_asked = r->cmd == CMD_STMT_EXECUTE && (flags & CURSOR_TYPE_MASK) != 0;
}

void relay_infile_sent(struct relay *r)
{
	if (r->st == RL_INFILE)
		r->st = RL_FIRST;
}

/* Copy a packet to out with its sequence id renumbered. */
static int forward(struct relay *r, const uint8_t *pkt, size_t len, struct pbuf *out)
{
	size_t at = out->len;

	if (pbuf_append(out, pkt, len) < 0)
		return -1;
	out->data[at + 3] = (uint8_t)(pkt[3] - r->seq_shift);
	r->packets++;
	return 0;
}

/* An EOF that ends a result (or a field list, a fetch, a set-option). */
static int forward_eof(struct relay *r, const uint8_t *pkt, size_t len, struct pbuf *out)
{
	const uint8_t *pl = pkt + PKT_HEADER_LEN;

	if (len - PKT_HEADER_LEN >= 5) {
		r->warnings = rd_u16(pl + 1);
		r->status = rd_u16(pl + 3);
		r->status_valid = true;
	}
	/* EOF packets carry SESSION_STATE_CHANGED whatever the client's
	 * tracking capability, as the server sends them: left as they are */
	if (!r->deprecate_eof)
		return forward(r, pkt, len, out);
	r->packets++;
	return pkt_put_eof(out, (uint8_t)(pkt[3] - r->seq_shift), r->status, r->warnings, CAP_DEPRECATE_EOF);
}

/* The EOF between metadata and rows: dropped for DEPRECATE_EOF clients. */
static int metadata_eof(struct relay *r, const uint8_t *pkt, size_t len, struct pbuf *out)
{
	if (!r->deprecate_eof)
		return forward(r, pkt, len, out);
	r->seq_shift++;
	return 0;
}

/* An OK packet. For a client without session tracking, drop the tracker
 * data and the flag that announces it, keeping the info text. */
static int forward_ok(struct relay *r, const uint8_t *pkt, size_t len, struct pbuf *out)
{
	const uint8_t *pl = pkt + PKT_HEADER_LEN;
	struct pcur c;
	const uint8_t *info;
	size_t start, info_len, head;
	int rc;

	if (!r->strip_tracking || !(r->status & ST_SESSION_STATE_CHANGED))
		return forward(r, pkt, len, out);
	pcur_init(&c, pl + 1, len - PKT_HEADER_LEN - 1);
	pcur_lenenc(&c, NULL);
	pcur_lenenc(&c, NULL);
	pcur_bytes(&c, 4);
	head = (size_t)(c.p - pl);
	info = pcur_lenenc_str(&c, &info_len);
	if (c.err)
		return forward(r, pkt, len, out);
	r->status &= (uint16_t)~ST_SESSION_STATE_CHANGED;
	rc = pkt_begin(out, &start);
	rc |= pbuf_append(out, pl, head);
	if (rc == 0)
		wr_u16(out->data + start + PKT_HEADER_LEN + head - 4, r->status);
	if (info_len)
		rc |= put_lenenc_str(out, info, info_len);
	if (rc)
		return -1;
	pkt_end(out, start, (uint8_t)(pkt[3] - r->seq_shift));
	r->packets++;
	return 0;
}

static void read_ok_status(struct relay *r, const uint8_t *pl, size_t n)
{
	struct pcur c;

	pcur_init(&c, pl + 1, n - 1);
	r->affected = pcur_lenenc(&c, NULL);
	r->insert_id = pcur_lenenc(&c, NULL);
	r->status = pcur_u16(&c);
	r->warnings = pcur_u16(&c);
	r->status_valid = !c.err;
}

/* After an OK or EOF that ends one result: another result may follow. */
static int end_of_result(struct relay *r)
{
	if (r->status & ST_MORE_RESULTS_EXISTS) {
		r->st = RL_FIRST;
		return 0;
	}
	r->st = RL_DONE;
	return 1;
}

/* An ERR packet: it ends the answer, and goes to the client as it is. */
static int ended_by_err(struct relay *r, const uint8_t *pkt, size_t len, struct pbuf *out)
{
	r->saw_err = true;
	r->st = RL_DONE;
	return forward(r, pkt, len, out) < 0 ? -1 : 1;
}

static int feed_first(struct relay *r, const uint8_t *pkt, size_t len, struct pbuf *out)
{
	const uint8_t *pl = pkt + PKT_HEADER_LEN;
	size_t n = len - PKT_HEADER_LEN;
	struct pcur c;

	if (n == 0)
		return -1;
	if (pkt_is_err(pl, n))
		return ended_by_err(r, pkt, len, out);
	if (pl[0] == 0x00) {
		read_ok_status(r, pl, n);
		if (forward_ok(r, pkt, len, out) < 0)
			return -1;
		return end_of_result(r);
	}
	if (pl[0] == 0xfb) {
		/* LOCAL INFILE request: negotiated upstream only for a client
		 * that has CLIENT_LOCAL_FILES. Its file comes next. */
		if (!r->local_files || forward(r, pkt, len, out) < 0)
			return -1;
		r->st = RL_INFILE;
		return 0;
	}
	pcur_init(&c, pl, n);
	r->cols_left = pcur_lenenc(&c, NULL);
	if (c.err || r->cols_left == 0)
		return -1;
	r->results++;
	r->st = RL_COLDEFS;
	return forward(r, pkt, len, out) < 0 ? -1 : 0;
}

static int feed_rows(struct relay *r, const uint8_t *pkt, size_t len, struct pbuf *out)
{
	const uint8_t *pl = pkt + PKT_HEADER_LEN;
	size_t n = len - PKT_HEADER_LEN;

	if (pkt_is_err(pl, n))
		return ended_by_err(r, pkt, len, out);
	if (pkt_is_eof(pl, n)) {
		if (forward_eof(r, pkt, len, out) < 0)
			return -1;
		if (r->cmd == CMD_STMT_FETCH) {
			r->st = RL_DONE;
			return 1;
		}
		return end_of_result(r);
	}
	r->rows++;
	return forward(r, pkt, len, out) < 0 ? -1 : 0;
}

static int feed_coldefs_eof(struct relay *r, const uint8_t *pkt, size_t len, struct pbuf *out)
{
	const uint8_t *pl = pkt + PKT_HEADER_LEN;
	size_t n = len - PKT_HEADER_LEN;

	/* an execute with a cursor materializes its rows before the EOF: an
	 * error doing so (a stored function's SIGNAL, a lock wait timeout)
	 * comes in its place, and ends the answer */
	if (pkt_is_err(pl, n))
		return ended_by_err(r, pkt, len, out);
	if (!pkt_is_eof(pl, n))
		return -1;
	if (n >= 5)
		r->status = rd_u16(pl + 3);
	if (r->cursor_asked && (r->status & ST_CURSOR_EXISTS)) {
		/* CMD_STMT_EXECUTE opened a cursor: rows come with CMD_STMT_FETCH */
		r->cursor_opened = true;
		if (forward_eof(r, pkt, len, out) < 0)
			return -1;
		r->st = RL_DONE;
		return 1;
	}
	r->st = RL_ROWS;
	return metadata_eof(r, pkt, len, out) < 0 ? -1 : 0;
}

static int feed_prepare_first(struct relay *r, const uint8_t *pkt, size_t len, struct pbuf *out)
{
	const uint8_t *pl = pkt + PKT_HEADER_LEN;
	size_t n = len - PKT_HEADER_LEN;

	if (pkt_is_err(pl, n))
		return ended_by_err(r, pkt, len, out);
	if (n < 12 || pl[0] != 0x00)
		return -1;
	r->stmt_id = rd_u32(pl + 1);
	r->prep_cols = rd_u16(pl + 5);
	r->params_left = rd_u16(pl + 7);
	r->prep_params = r->params_left;
	r->prep_ok = true;
	if (forward(r, pkt, len, out) < 0)
		return -1;
	r->st = r->params_left ? RL_PREP_PARAMS : r->prep_cols ? RL_PREP_COLS : RL_DONE;
	r->cols_left = r->prep_cols;
	return r->st == RL_DONE;
}

static int feed_prepare_eof(struct relay *r, const uint8_t *pkt, size_t len, struct pbuf *out)
{
	const uint8_t *pl = pkt + PKT_HEADER_LEN;

	if (!pkt_is_eof(pl, len - PKT_HEADER_LEN))
		return -1;
	if (metadata_eof(r, pkt, len, out) < 0)
		return -1;
	if (r->st == RL_PREP_PARAMS_EOF && r->prep_cols) {
		r->st = RL_PREP_COLS;
		return 0;
	}
	r->st = RL_DONE;
	return 1;
}

static int feed_single(struct relay *r, const uint8_t *pkt, size_t len, struct pbuf *out)
{
	const uint8_t *pl = pkt + PKT_HEADER_LEN;
	size_t n = len - PKT_HEADER_LEN;

	r->st = RL_DONE;
	r->saw_err = r->cmd != CMD_STATISTICS && pkt_is_err(pl, n);
	if (r->cmd != CMD_STATISTICS && pkt_is_eof(pl, n))
		return forward_eof(r, pkt, len, out) < 0 ? -1 : 1;
	if (r->cmd != CMD_STATISTICS && n >= 7 && pl[0] == 0x00) {
		read_ok_status(r, pl, n);
		return forward_ok(r, pkt, len, out) < 0 ? -1 : 1;
	}
	return forward(r, pkt, len, out) < 0 ? -1 : 1;
}

static int feed_defs(struct relay *r, const uint8_t *pkt, size_t len, struct pbuf *out)
{
	if (forward(r, pkt, len, out) < 0)
		return -1;
	if (--r->cols_left == 0)
		r->st = r->st == RL_COLDEFS ? RL_COLDEFS_EOF : RL_PREP_COLS_EOF;
	return 0;
}

static int feed_fieldlist(struct relay *r, const uint8_t *pkt, size_t len, struct pbuf *out)
{
	const uint8_t *pl = pkt + PKT_HEADER_LEN;
	size_t n = len - PKT_HEADER_LEN;

	if (pkt_is_err(pl, n) || pkt_is_eof(pl, n)) {
		r->st = RL_DONE;
		if (pkt_is_eof(pl, n))
			return forward_eof(r, pkt, len, out) < 0 ? -1 : 1;
		return forward(r, pkt, len, out) < 0 ? -1 : 1;
	}
	return forward(r, pkt, len, out) < 0 ? -1 : 0;
}

static int feed_params(struct relay *r, const uint8_t *pkt, size_t len, struct pbuf *out)
{
	if (forward(r, pkt, len, out) < 0)
		return -1;
	if (--r->params_left == 0)
		r->st = RL_PREP_PARAMS_EOF;
	return 0;
}

int relay_feed(struct relay *r, const uint8_t *pkt, size_t len, struct pbuf *out)
{
	bool cont = r->in_continuation;

	if (len < PKT_HEADER_LEN)
		return -1;
	r->in_continuation = rd_u24(pkt) == PKT_MAX_PAYLOAD;
	if (cont) /* the tail of a large packet: no header byte to read */
		return forward(r, pkt, len, out) < 0 ? -1 : 0;
	if (r->drop_progress && len >= PKT_HEADER_LEN + 3 && pkt[4] == 0xff && rd_u16(pkt + 5) == 0xffff) {
		r->seq_shift++; /* a progress report the client did not ask for */
		return 0;
	}
	switch (r->st) {
	case RL_FIRST: return feed_first(r, pkt, len, out);
	case RL_COLDEFS: return feed_defs(r, pkt, len, out);
	case RL_COLDEFS_EOF: return feed_coldefs_eof(r, pkt, len, out);
	case RL_ROWS: return feed_rows(r, pkt, len, out);
	case RL_PREP_FIRST: return feed_prepare_first(r, pkt, len, out);
	case RL_PREP_PARAMS: return feed_params(r, pkt, len, out);
	case RL_PREP_COLS: return feed_defs(r, pkt, len, out);
	case RL_PREP_PARAMS_EOF:
	case RL_PREP_COLS_EOF: return feed_prepare_eof(r, pkt, len, out);
	case RL_FIELDLIST: return feed_fieldlist(r, pkt, len, out);
	case RL_SINGLE: return feed_single(r, pkt, len, out);
	default: return -1;
	}
}
