/*
 * sbuf.c: non-blocking reads and writes on one socket, plain or through an
 * OpenSSL session, with growable input and output buffers.
 */
#include "proto/sbuf.h"

#include <errno.h>
#include <openssl/err.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#define SBUF_READ_CHUNK 16384
#define SBUF_KEEP 4096

void sbuf_init(struct sbuf *s, int fd)
{
	s->fd = fd;
	s->ssl = NULL;
	s->in = (struct pbuf){0};
	s->in_pos = 0;
	s->out = (struct pbuf){0};
	s->out_pos = 0;
	s->ssl_want_write = false;
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

enum sbuf_io sbuf_read(struct sbuf *s, size_t max)
{
	size_t total = 0;
	enum sbuf_io st = SBUF_AGAIN;

	if (s->in_pos > 0 && s->in_pos == s->in.len) {
		s->in.len = 0;
		s->in_pos = 0;
	} else if (s->in_pos > 65536 && s->in_pos * 2 > s->in.len) {
		pbuf_consume(&s->in, s->in_pos);
		s->in_pos = 0;
	}
	while (total < max) {
		size_t want = max - total < SBUF_READ_CHUNK ? max - total : SBUF_READ_CHUNK;
		ssize_t r;

		if (pbuf_reserve(&s->in, want) < 0)
			return SBUF_ERROR;
		r = raw_read(s, s->in.data + s->in.len, want, &st);
		if (r <= 0)
			break;
		s->in.len += (size_t)r;
		total += (size_t)r;
		if ((size_t)r < want && !s->ssl)
			break;
	}
	if (total > 0)
		return SBUF_OK;
	return st;
}

enum sbuf_io sbuf_flush(struct sbuf *s)
{
	while (s->out_pos < s->out.len) {
		size_t n = s->out.len - s->out_pos;
		ssize_t r;

		if (s->ssl) {
			s->ssl_want_write = false;
			r = SSL_write(s->ssl, s->out.data + s->out_pos, (int)(n > 1048576 ? 1048576 : n));
			if (r <= 0) {
				enum sbuf_io st = ssl_result(s, (int)r);

				if (st == SBUF_AGAIN)
					s->ssl_want_write = true;
				return st == SBUF_EOF ? SBUF_ERROR : st;
			}
		} else {
			do {
				r = send(s->fd, s->out.data + s->out_pos, n, MSG_NOSIGNAL);
			} while (r < 0 && errno == EINTR);
			if (r < 0)
				return (errno == EAGAIN || errno == EWOULDBLOCK) ? SBUF_AGAIN : SBUF_ERROR;
		}
		s->out_pos += (size_t)r;
	}
	s->out.len = 0;
	s->out_pos = 0;
	return SBUF_OK;
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
