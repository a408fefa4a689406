/*
 * sbuf.c: non-blocking reads and writes on one socket, plain or through an
 * OpenSSL session, with growable input and output buffers, and the hook
 * of protocol compression between the socket and those buffers.
 */
#include "proto/sbuf.h"

#include "proto/compress.h"
#include "base/stats.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#define SBUF_READ_CHUNK 16384
#define SBUF_KEEP 4096
/* Compressed: frames are decoded while in holds less than one packet */
#define SBUF_DECODE_LIMIT (PKT_MAX_PAYLOAD + PKT_HEADER_LEN)

void sbuf_init(struct sbuf *s, int fd)
{
	s->fd = fd;
	s->ssl = NULL;
	s->in = (struct pbuf){0};
	s->in_pos = 0;
	s->out = (struct pbuf){0};
	s->out_pos = 0;
	s->ssl_want_write = false;
	s->z = NULL;
	s->z_out = 0;
}

int sbuf_set_nonblocking(struct sbuf *s)
{
	int fl = fcntl(s->fd, F_GETFL);

	if (fl < 0)
		return -1;
	if (fl & O_NONBLOCK)
		return 0;
	return fcntl(s->fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -1 : 0;
}

void sbuf_close(struct sbuf *s)
{
	if (s->ssl) {
		SSL_set_quiet_shutdown(s->ssl, 1);
		SSL_free(s->ssl);
		s->ssl = NULL;
	}
	if (s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
	}
	pbuf_free(&s->in);
	pbuf_free(&s->out);
	s->in_pos = s->out_pos = 0;
	sbuf_compress_free(s);
}

void sbuf_compress_free(struct sbuf *s)
{
	if (s->z) {
		compress_free(s->z);
		free(s->z);
		s->z = NULL;
		s->z_out = 0;
	}
}

static enum sbuf_io ssl_result(struct sbuf *s, int rc)
{
	int e = SSL_get_error(s->ssl, rc);

	ERR_clear_error();
	if (e == SSL_ERROR_WANT_READ)
		return SBUF_AGAIN;
	if (e == SSL_ERROR_WANT_WRITE) {
		s->ssl_want_write = true;
		return SBUF_AGAIN;
	}
	if (e == SSL_ERROR_ZERO_RETURN)
		return SBUF_EOF;
	return SBUF_ERROR;
}

static ssize_t raw_read(struct sbuf *s, uint8_t *dst, size_t n, enum sbuf_io *st)
{
	ssize_t r;

	if (s->ssl) {
		s->ssl_want_write = false;
		r = SSL_read(s->ssl, dst, (int)n);
		if (r <= 0)
			*st = ssl_result(s, (int)r);
		return r;
	}
	do {
		r = recv(s->fd, dst, n, 0);
	} while (r < 0 && errno == EINTR);
	if (r == 0)
		*st = SBUF_EOF;
	else if (r < 0)
		*st = (errno == EAGAIN || errno == EWOULDBLOCK) ? SBUF_AGAIN : SBUF_ERROR;
	return r;
}

/* Read at most max bytes onto the end of b. (Inlined, as the loop was
 * before compression: the plain path keeps its instruction count.) */
static inline __attribute__((always_inline))
enum sbuf_io read_into(struct sbuf *s, struct pbuf *b, size_t max)
{
	size_t total = 0;
	enum sbuf_io st = SBUF_AGAIN;

	while (total < max) {
		size_t want = max - total < SBUF_READ_CHUNK ? max - total : SBUF_READ_CHUNK;
		ssize_t r;

		if (pbuf_reserve(b, want) < 0)
			return SBUF_ERROR;
		r = raw_read(s, b->data + b->len, want, &st);
		if (r <= 0)
			break;
		b->len += (size_t)r;
		total += (size_t)r;
		if ((size_t)r < want && !s->ssl)
			break;
	}
	if (total > 0)
		return SBUF_OK;
	return st;
}

enum sbuf_io sbuf_read(struct sbuf *s, size_t max)
{
	enum sbuf_io r;

	if (s->in_pos > 0 && s->in_pos == s->in.len) {
		s->in.len = 0;
		s->in_pos = 0;
	} else if (s->in_pos > 65536 && s->in_pos * 2 > s->in.len) {
		pbuf_consume(&s->in, s->in_pos);
		s->in_pos = 0;
	}
	if (!s->z)
		return read_into(s, &s->in, max);
	r = read_into(s, &s->z->raw, max);
	/* the node as the client: frames are decoded as they come (the
	 * session's side decodes in process_input, see sbuf_decode) */
	if (r == SBUF_OK && s->z->client_role && sbuf_decode(s) < 0)
		return SBUF_ERROR;
	return r;
}

int sbuf_decode(struct sbuf *s)
{
	int n;

	/* from a header on: a length over the limit is refused at once */
	if (!s->z || s->z->raw.len - s->z->raw_pos < COMPRESS_HEADER_LEN)
		return 0;
	n = compress_decode(s->z, &s->in, s->in_pos, SBUF_DECODE_LIMIT);
	if (n < 0)
		return -1;
	if (!s->z->client_role) /* the counters are the clients' */
		atomic_fetch_add_explicit(&g_stats.compressed_frames_in, (uint64_t)n, memory_order_relaxed);
	return 0;
}

bool sbuf_frame_ready(const struct sbuf *s)
{
	return s->z && compress_frame_ready(s->z);
}

size_t sbuf_undecoded(const struct sbuf *s)
{
	return s->z ? s->z->raw.len - s->z->raw_pos : 0;
}

void sbuf_compress_error(const struct sbuf *s, uint16_t *code, const char **state, const char **msg)
{
	*code = s->z && s->z->err_code ? s->z->err_code : ERR_NET_READ_ERROR;
	*state = s->z && s->z->err_state ? s->z->err_state : "08S01";
	*msg = s->z && s->z->err_msg ? s->z->err_msg : "Got an error reading communication packets";
}

int sbuf_compress_start(struct sbuf *s, uint32_t max_len, bool as_client, uint8_t zstd_level)
{
	struct compress_state *z = malloc(sizeof(*z));

	if (!z)
		return -1;
	compress_init(z, max_len);
	z->client_role = as_client;
	z->zstd_level = zstd_level;
	/* what is queued (the login's OK) goes out as it is */
	if (s->out.len > s->out_pos &&
	    pbuf_append(&z->wire, s->out.data + s->out_pos, s->out.len - s->out_pos) < 0) {
		free(z);
		return -1;
	}
	s->out.len = s->out_pos = 0;
	s->z = z;
	s->z_out = z->wire.len;
	if (!as_client)
		STAT_INC(compressed_sessions);
	return 0;
}

/* Write b from *pos on. SBUF_OK when all is written (b is emptied).
 * (Inlined, for the same reason as read_into.) */
static inline __attribute__((always_inline))
enum sbuf_io write_from(struct sbuf *s, struct pbuf *b, size_t *pos)
{
	while (*pos < b->len) {
		size_t n = b->len - *pos;
		ssize_t r;

		if (s->ssl) {
			s->ssl_want_write = false;
			r = SSL_write(s->ssl, b->data + *pos, (int)(n > 1048576 ? 1048576 : n));
			if (r <= 0) {
				enum sbuf_io st = ssl_result(s, (int)r);

				if (st == SBUF_AGAIN)
					s->ssl_want_write = true;
				return st == SBUF_EOF ? SBUF_ERROR : st;
			}
		} else {
			do {
				r = send(s->fd, b->data + *pos, n, MSG_NOSIGNAL);
			} while (r < 0 && errno == EINTR);
			if (r < 0)
				return (errno == EAGAIN || errno == EWOULDBLOCK) ? SBUF_AGAIN : SBUF_ERROR;
		}
		*pos += (size_t)r;
	}
	b->len = 0;
	*pos = 0;
	return SBUF_OK;
}

/* Compressed: what is queued is framed once the frames made before are
 * written, so that a slow client gets few large frames, not many small. */
static enum sbuf_io flush_compressed(struct sbuf *s)
{
	struct compress_state *z = s->z;
	enum sbuf_io st;
	size_t before;
	int n;

	for (;;) {
		if (z->wire_pos < z->wire.len) {
			st = write_from(s, &z->wire, &z->wire_pos);
			s->z_out = z->wire.len - z->wire_pos;
			if (st != SBUF_OK)
				return st;
		}
		if (s->out_pos == s->out.len) {
			s->out.len = s->out_pos = 0;
			return SBUF_OK;
		}
		before = z->wire.len - z->wire_pos;
		n = compress_encode(z, s->out.data + s->out_pos, s->out.len - s->out_pos);
		if (n < 0)
			return SBUF_ERROR;
		if (!z->client_role) {
			atomic_fetch_add_explicit(&g_stats.compressed_frames_out, (uint64_t)n, memory_order_relaxed);
			atomic_fetch_add_explicit(&g_stats.compressed_plain_out, s->out.len - s->out_pos,
						  memory_order_relaxed);
			atomic_fetch_add_explicit(&g_stats.compressed_wire_out,
						  z->wire.len - z->wire_pos - before, memory_order_relaxed);
		}
		s->out.len = s->out_pos = 0;
		s->z_out = z->wire.len - z->wire_pos;
	}
}

enum sbuf_io sbuf_flush(struct sbuf *s)
{
	if (s->z)
		return flush_compressed(s);
	return write_from(s, &s->out, &s->out_pos);
}

void sbuf_in_consume(struct sbuf *s, size_t n)
{
	s->in_pos += n;
	if (s->in_pos >= s->in.len) {
		s->in.len = 0;
		s->in_pos = 0;
	}
}

void sbuf_shrink(struct sbuf *s)
{
	if (s->in_pos == s->in.len) {
		s->in.len = s->in_pos = 0;
		pbuf_shrink(&s->in, SBUF_KEEP);
	}
	if (s->out_pos == s->out.len) {
		s->out.len = s->out_pos = 0;
		pbuf_shrink(&s->out, SBUF_KEEP);
	}
	if (s->z)
		compress_shrink(s->z, SBUF_KEEP);
}

int sbuf_header_ready(const struct sbuf *s, uint32_t *len, uint8_t *seq)
{
	const uint8_t *p = sbuf_in_ptr(s);

	if (sbuf_in_len(s) < PKT_HEADER_LEN)
		return 0;
	*len = rd_u24(p);
	*seq = p[3];
	return 1;
}

int sbuf_packet_ready(const struct sbuf *s, uint32_t *len, uint8_t *seq)
{
	if (!sbuf_header_ready(s, len, seq))
		return 0;
	return sbuf_in_len(s) >= PKT_HEADER_LEN + (size_t)*len;
}
