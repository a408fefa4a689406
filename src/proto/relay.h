/*
 * relay.h: the response state machine. Fed the upstream's packets for one
 * command, it decides where the response ends and copies each packet to the
 * client's output, byte for byte, with one exception: for a client that
 * negotiated CLIENT_DEPRECATE_EOF (which the upstream connection never does)
 * it drops the EOF that ends column metadata and turns every other EOF into
 * the OK packet with a 0xFE header, renumbering sequence ids to match; and
 * for a client without CLIENT_SESSION_TRACK (which the upstream connection
 * always has, as Connector/C always asks for it) it removes session-state
 * data and the SESSION_STATE_CHANGED flag from OK packets, as the server
 * would have (EOF packets carry the flag for every client).
 */
#ifndef SHOAL_RELAY_H
#define SHOAL_RELAY_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/packet.h"

enum relay_state {
	RL_IDLE,
	RL_FIRST,        /* first packet of a result: OK, ERR or column count */
	RL_COLDEFS,      /* column definitions */
	RL_COLDEFS_EOF,  /* the EOF after them */
	RL_ROWS,         /* rows until EOF or ERR */
	RL_PREP_FIRST,   /* CMD_STMT_PREPARE: OK with counts, or ERR */
	RL_PREP_PARAMS,
	RL_PREP_PARAMS_EOF,
	RL_PREP_COLS,
	RL_PREP_COLS_EOF,
	RL_FIELDLIST,    /* CMD_FIELD_LIST: definitions until EOF */
	RL_SINGLE,       /* exactly one packet */
	RL_INFILE,       /* LOAD DATA LOCAL: the client sends its file (infile.c) */
	RL_DONE,
};

struct relay {
	enum relay_state st;
	uint8_t cmd;
	bool deprecate_eof;   /* rewrite EOFs for the client */
	bool strip_tracking;  /* the client has no CLIENT_SESSION_TRACK */
	bool local_files;     /* the client has CLIENT_LOCAL_FILES */
	bool in_continuation; /* the previous packet had a 16 MiB - 1 payload */
	bool infile_cont;     /* LOAD DATA LOCAL: the client's last file packet was a
			       * full one (16 MiB - 1): an empty one next continues it */
	uint8_t seq_shift;    /* packets dropped so far in this response */
	uint64_t cols_left;
	uint16_t params_left;
	uint16_t prep_cols;
	uint16_t status;      /* status flags of the last OK/EOF */
	uint16_t warnings;
	uint64_t packets;     /* forwarded so far */
	uint64_t rows;
	uint64_t affected;    /* affected rows of the last OK */
	uint64_t insert_id;   /* last insert id of the last OK */
	bool status_valid;    /* status/warnings come from an OK or EOF */
	bool saw_err;         /* the answer is or ends with an ERR */
	uint32_t results;     /* result sets seen (column counts) */
	uint32_t stmt_id;     /* COM_STMT_PREPARE: the upstream's statement id */
	uint16_t prep_params; /* COM_STMT_PREPARE: parameter count */
	bool prep_ok;
	bool cursor_asked;    /* COM_STMT_EXECUTE with a cursor type flag */
	bool cursor_opened;   /* ... and the server opened one: rows come by fetch */
	/* progress reports may come (a MariaDB extended capability of the
	 * upstream session that the client never has): see relay_upstream() */
	bool drop_progress;
};

/* Describe the upstream session after relay_start(): whether progress
 * reports may come (dropped: the client never negotiates them). The
 * upstream session never caches metadata (upstream.c does not negotiate
 * it), so every answer carries its column definitions, as the server has
 * them now: after DDL an execute's answer has the new ones. */
void relay_upstream(struct relay *r, bool progress);

/* Start tracking the response to cmd (shaped as the command table says,
 * command.h), for a client with capabilities caps. */
void relay_start(struct relay *r, uint8_t cmd, uint32_t client_caps);
/* A COM_STMT_EXECUTE's flags byte, after relay_start(): a cursor is open
 * only when the execute asked for one and the server says it opened one
 * (SERVER_STATUS_CURSOR_EXISTS after the column definitions). The flag
 * alone means nothing: a stored program's cursor leaves it set in the
 * result sets of a COM_QUERY or of an execute without a cursor. */
void relay_execute_flags(struct relay *r, uint8_t flags);
/* LOAD DATA LOCAL INFILE: the server's file request (0xFB) went to the
 * client, whose packets must now go upstream (renumbered by seq_shift)
 * until the empty one; then relay_infile_sent(), and the server's answer
 * (OK or ERR, maybe more results) is fed as usual. */
static inline bool relay_awaits_infile(const struct relay *r)
{
	return r->st == RL_INFILE;
}
void relay_infile_sent(struct relay *r);
/* Feed one whole packet (header included). Appends what the client must get
 * to out. Returns 1 when the response is complete, 0 if more packets are
 * expected, -1 on a protocol violation or out of memory. */
int relay_feed(struct relay *r, const uint8_t *pkt, size_t len, struct pbuf *out);

#endif
