/*
 * test_sbuf.c: unit tests for sbuf_set_nonblocking (src/proto/sbuf.c), the
 * switch an upstream link's socket goes through before the relay uses it:
 * the connector hands over a blocking socket, and sbuf's reads loop until a
 * read comes back short or empty, so on a blocking socket a read that fills
 * its chunk exactly (16384 bytes here) waited for bytes that were never
 * coming. Over a socketpair: the flag is set (and setting it twice is
 * harmless), an empty socket reads as SBUF_AGAIN, an exact chunk reads
 * whole without waiting, a bad fd is an error. An alarm turns a regression
 * (a read that blocks) into a failed test rather than a hung one.
 */
#include "proto/sbuf.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHUNK 16384 /* sbuf.c's SBUF_READ_CHUNK */

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t r = write(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static void test_exact_chunk(void)
{
	int sv[2], fl;
	struct sbuf s;
	uint8_t *data = malloc(CHUNK);

	if (!data || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		ok(0, "socketpair");
		free(data);
		return;
	}
	for (size_t i = 0; i < CHUNK; i++)
		data[i] = (uint8_t)(i * 7);
	sbuf_init(&s, sv[0]);
	fl = fcntl(sv[0], F_GETFL);
	ok(fl >= 0 && !(fl & O_NONBLOCK), "a socketpair starts blocking (as the connector's socket)");
	is_int(sbuf_set_nonblocking(&s), 0, "sbuf_set_nonblocking succeeds");
	fl = fcntl(sv[0], F_GETFL);
	ok(fl >= 0 && (fl & O_NONBLOCK), "the fd is non-blocking afterwards");
	is_int(sbuf_set_nonblocking(&s), 0, "a second call is harmless");
	alarm(10);
	is_int(sbuf_read(&s, 262144), SBUF_AGAIN, "nothing to read: SBUF_AGAIN, not a wait");
	ok(write_all(sv[1], data, CHUNK) == 0, "the peer writes exactly one read chunk");
	is_int(sbuf_read(&s, 262144), SBUF_OK, "the chunk is read without waiting for more");
	alarm(0);
	ok(sbuf_in_len(&s) == CHUNK && memcmp(sbuf_in_ptr(&s), data, CHUNK) == 0,
	   "all of it, unchanged");
	sbuf_close(&s);
	close(sv[1]);
	free(data);
}

static void test_bad_fd(void)
{
	struct sbuf s;

	sbuf_init(&s, -1);
	errno = 0;
	is_int(sbuf_set_nonblocking(&s), -1, "a bad fd: -1");
	is_int(errno, EBADF, "with errno EBADF");
}

int main(void)
{
	test_exact_chunk();
	test_bad_fd();
	return done_testing();
}
