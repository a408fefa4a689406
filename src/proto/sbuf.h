/*
 * sbuf.h: buffered non-blocking socket I/O for one connection, plain or TLS
 * (OpenSSL on the same fd). Input accumulates in `in` from in_pos on; output
 * queued in `out` is written from out_pos on. The owner drives it from its
 * libev watchers: sbuf never registers events itself, it reports what it
 * needs (want_write) and the caller arms watchers accordingly.
 *
 * Once protocol compression is on (sbuf_compress_start), reads go to the
 * compressed frames' buffer and sbuf_decode turns them into `in`; a flush
 * frames what is in `out` first (compress.h). The rest of the node sees
 * the plain packet stream either way.
 */
#ifndef SHOAL_SBUF_H
#define SHOAL_SBUF_H

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/packet.h"

enum sbuf_io { SBUF_OK = 1, SBUF_AGAIN = 0, SBUF_EOF = -1, SBUF_ERROR = -2 };

struct compress_state;

struct sbuf {
	int fd;
	SSL *ssl;
	struct pbuf in;
	size_t in_pos;
	struct pbuf out;
	size_t out_pos;
	bool ssl_want_write; /* TLS needs the socket writable to make progress */
	struct compress_state *z; /* protocol compression; NULL: none (the default) */
	size_t z_out;        /* framed bytes not yet written (0 without compression) */
};

void sbuf_init(struct sbuf *s, int fd);
/* Put the fd in non-blocking mode, which every read and write here assumes
 * (a socket the node did not open itself, such as the connector's, may be
 * blocking). 0, or -1 with errno set. */
int sbuf_set_nonblocking(struct sbuf *s);
/* Close the fd, free TLS state and buffers. */
void sbuf_close(struct sbuf *s);
/* Read what is available, at most max bytes in this call. */
enum sbuf_io sbuf_read(struct sbuf *s, size_t max);
/* Write queued output. SBUF_OK when all is written, SBUF_AGAIN if some is left. */
enum sbuf_io sbuf_flush(struct sbuf *s);
static inline size_t sbuf_in_len(const struct sbuf *s) { return s->in.len - s->in_pos; }
static inline const uint8_t *sbuf_in_ptr(const struct sbuf *s) { return s->in.data + s->in_pos; }
static inline size_t sbuf_out_pending(const struct sbuf *s) { return s->out.len - s->out_pos + s->z_out; }
void sbuf_in_consume(struct sbuf *s, size_t n);
/* Give back memory of idle buffers. */
void sbuf_shrink(struct sbuf *s);

/* Compress from here on (what is queued in out is still sent plain):
 * frames may declare up to max_len bytes; as_client: the node is the
 * client of this link (compress.h); zstd_level: 0 for zlib frames, else
 * zstd frames at that level (compress_zstd_level). 0, or -1 out of memory. */
int sbuf_compress_start(struct sbuf *s, uint32_t max_len, bool as_client, uint8_t zstd_level);
/* Free the compression state (sbuf_close does it too). */
void sbuf_compress_free(struct sbuf *s);
/* Compressed: decode the frames read so far into in, while in holds less
 * than a packet's worth. 0; -1 on a bad frame (sbuf_compress_error says
 * which error to send). Without compression a no-op. */
int sbuf_decode(struct sbuf *s);
/* Compressed: raw bytes read and not yet decoded. */
size_t sbuf_undecoded(const struct sbuf *s);
/* A whole compressed frame was read and is not decoded yet. */
bool sbuf_frame_ready(const struct sbuf *s);
void sbuf_compress_error(const struct sbuf *s, uint16_t *code, const char **state, const char **msg);

/* If a whole packet is at the front of the input, return 1 and its payload
 * length and sequence id; 0 if more bytes are needed. */
int sbuf_packet_ready(const struct sbuf *s, uint32_t *len, uint8_t *seq);
/* Header only (length and seq) once 4 bytes are in: 1 or 0. */
int sbuf_header_ready(const struct sbuf *s, uint32_t *len, uint8_t *seq);

#endif
