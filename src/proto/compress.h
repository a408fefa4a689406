/*
 * compress.h: the MySQL compressed protocol's framing, zlib
 * (CLIENT_COMPRESS) or zstd (CLIENT_ZSTD_COMPRESSION_ALGORITHM, MySQL
 * 8.0.18+). Each frame has a 7-byte header: the payload's length (3 bytes),
 * the compressed sequence id (1 byte) and the uncompressed length (3
 * bytes; 0: the payload is sent as is). Inside the frames runs the plain
 * packet stream, cut anywhere. The two algorithms share all of this; only
 * a compressed payload differs: a zlib stream, or zstd frames, of its own
 * in every frame. This module turns frames into that stream and back; it
 * knows nothing of sockets (sbuf.c calls it) and keeps, per thread, one
 * deflate and one inflate stream and one zstd context each way, reused
 * for every frame.
 */
#ifndef SHOAL_COMPRESS_H
#define SHOAL_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/packet.h"

#define COMPRESS_HEADER_LEN 7
#define COMPRESS_MAX_LEN 0xffffffu  /* a 3-byte length's largest value */
#define COMPRESS_MIN_LEN 50         /* shorter payloads are sent as they are */
#define COMPRESS_CHUNK 65536        /* plain bytes per frame the node sends */
/* The zstd levels a client may ask for in its handshake response (MySQL
 * refuses others with 3923), and the most the node compresses at: a
 * worker thread frames for all its sessions, and above 3 (MySQL's default)
 * zstd costs several times the CPU for little more gain on result sets. */
#define COMPRESS_ZSTD_LEVEL_MIN 1
#define COMPRESS_ZSTD_LEVEL_MAX 22
#define COMPRESS_ZSTD_LEVEL_SENT_MAX 3

/* The state of one compressed connection. */
struct compress_state {
	struct pbuf raw;     /* frames read, from raw_pos on not yet decoded */
	size_t raw_pos;
	struct pbuf wire;    /* frames made, from wire_pos on not yet written */
	size_t wire_pos;
	uint32_t max_len;    /* largest length a frame may declare */
	/* 0: zlib payloads; else zstd payloads, compressed at this level
	 * (both directions use the one algorithm the handshake chose) */
	uint8_t zstd_level;
	uint8_t seq;         /* the next compressed sequence id to send */
	/* the node as the client (an upstream link): each command's frames
	 * start at 0, the server's ids are not checked */
	bool client_role;
	bool heard;          /* client role: a frame came since the last one sent */
	uint8_t last_seq;    /* client role: the last packet's own id sent */
	uint32_t pkt_left;   /* client role: bytes of that packet not yet framed */
	/* client role, what the server sends: a server sets its packets' own
	 * ids from the compressed counter after each flush, so they are
	 * renumbered as the plain protocol counts them (one counter for both
	 * directions within a command) */
	uint32_t rx_left;    /* bytes of the current packet not yet decoded */
	uint8_t rx_hdr[PKT_HEADER_LEN];
	uint8_t rx_have;     /* bytes of the next header decoded so far */
	uint8_t rx_seq;      /* the id the next packet gets */
	uint16_t err_code;   /* why decoding failed (a MySQL error code) */
	const char *err_state; /* ... its SQLSTATE */
	const char *err_msg;
};

/* zlib frames; for zstd set zstd_level after (compress_zstd_level). */
void compress_init(struct compress_state *z, uint32_t max_len);
/* The level the node compresses at for a client's zstd level (already
 * within COMPRESS_ZSTD_LEVEL_MIN..MAX). */
uint8_t compress_zstd_level(int client_level);
void compress_free(struct compress_state *z);
/* The frame length limit for a max_allowed_packet of that many bytes. */
uint32_t compress_limit(uint32_t max_allowed_packet);

/* Decode whole frames from raw onto the end of plain while plain holds
 * less than plain_limit bytes from plain_from on. Returns the number of
 * frames decoded, or -1 with err_code and err_msg set (a declared length
 * over max_len, a payload that does not inflate to its declared length,
 * or is not of the session's algorithm).
 * The sequence id to send next follows the client's: its frame's id + 1.
 * A frame's id must be 0 (a new command) or the one expected (1156). */
int compress_decode(struct compress_state *z, struct pbuf *plain, size_t plain_from,
		    size_t plain_limit);
/* Whether raw holds a whole frame not yet decoded. */
int compress_frame_ready(const struct compress_state *z);
/* Frame n plain bytes onto the end of wire (COMPRESS_CHUNK per frame).
 * Returns the number of frames made, or -1 (out of memory, zlib or zstd
 * failure).
 * In the client role, bytes that start a new command (a packet with id 0
 * after an answer, or after a packet that was not id 255 of a LOAD DATA
 * file) start again at compressed id 0. */
int compress_encode(struct compress_state *z, const uint8_t *p, size_t n);
/* Give back the memory of empty buffers above keep bytes. */
void compress_shrink(struct compress_state *z, size_t keep);
/* Free this thread's zlib streams and zstd contexts (a worker's end; tests). */
void compress_thread_end(void);

#endif
