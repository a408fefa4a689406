/*
 * healthcheck.c: `shoal --health` (see healthcheck.h). It owns nothing but
 * one short-lived socket: a non-blocking connect to the node's metrics
 * address, one HTTP/1.0 GET /health, the answer read until the node closes,
 * all within one deadline. No libcurl: the probe must stay small and must
 * not depend on proxies or other environment a curl would read.
 */
#include "ops/healthcheck.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HC_ANSWER_MAX 4096

static long long mono_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return 0;
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *healthcheck_target(const char *host)
{
	if (!host || !*host || strcmp(host, "0.0.0.0") == 0 || strcmp(host, "*") == 0)
		return "127.0.0.1";
	if (strcmp(host, "::") == 0 || strcmp(host, "[::]") == 0 || strcmp(host, "::0") == 0)
		return "::1";
	return host;
}

/* Wait for events on fd until the deadline: 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events, long long deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	long long left;
	int n;

	for (;;) {
		left = deadline - mono_ms();
		if (left <= 0)
			return 0;
		n = poll(&p, 1, (int)left);
		if (n > 0)
			return 1;
		if (n == 0)
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

/* A connected socket to one address, or -1 with errno set. */
static int connect_one(const struct addrinfo *ai, long long deadline)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	int soerr = 0, w;
	socklen_t sl = sizeof soerr;

	if (fd < 0)
		return -1;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS)
		goto fail;
	w = wait_fd(fd, POLLOUT, deadline);
	if (w <= 0) {
		if (w == 0)
			errno = ETIMEDOUT;
		goto fail;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
		goto fail;
	if (soerr == 0)
		return fd;
	errno = soerr;
fail:
	w = errno;
	close(fd);
	errno = w;
	return -1;
}

/* Connect to host:port (any of its addresses); -1 with a reason in err. */
static int open_conn(const char *host, unsigned port, long long deadline, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL, *ai;
	char service[8];
	int fd = -1, rc;

	snprintf(service, sizeof service, "%u", port);
	rc = getaddrinfo(host, service, &hints, &res);
	if (rc != 0) {
		snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(rc));
		return -1;
	}
	snprintf(err, errlen, "no address");
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = connect_one(ai, deadline);
		if (fd < 0)
			snprintf(err, errlen, "connect: %s", strerror(errno));
	}
	freeaddrinfo(res);
	return fd;
}

static int send_all(int fd, const char *buf, size_t len, long long deadline)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (wait_fd(fd, POLLOUT, deadline) <= 0)
				return -1;
		} else {
			return -1;
		}
	}
	return 0;
}

/* Read until the peer closes, the buffer is full or the deadline passes.
 * Returns the length read, or -1 (errno ETIMEDOUT after the deadline). */
static ssize_t read_all(int fd, char *buf, size_t size, long long deadline)
{
	size_t got = 0;
	int w;

	while (got < size) {
		ssize_t n = recv(fd, buf + got, size - got, 0);

		if (n > 0) {
			got += (size_t)n;
		} else if (n == 0) {
			break;
		} else if (errno == EINTR) {
			continue;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			w = wait_fd(fd, POLLIN, deadline);
			if (w == 0)
				errno = ETIMEDOUT;
			if (w <= 0)
				return got > 0 ? (ssize_t)got : -1;
		} else {
			return -1;
		}
	}
	return (ssize_t)got;
}

/* The answer's status code and its body on one printable line (in body). */
static int parse_answer(char *ans, size_t len, char *body, size_t bodylen)
{
	char *b;
	int code = 0;
	size_t o = 0;

	ans[len] = '\0';
	if (sscanf(ans, "HTTP/%*d.%*d %3d", &code) != 1)
		code = 0;
	b = strstr(ans, "\r\n\r\n");
	b = b ? b + 4 : ans;
	for (; *b && o + 1 < bodylen; b++)
		if (*b != '\r' && *b != '\n')
			body[o++] = (*b >= 0x20 && *b < 0x7f) ? *b : '?';
	body[o] = '\0';
	return code;
}

int healthcheck_run(const struct shoal_addr *metrics, int timeout_ms)
{
	const char *host = healthcheck_target(metrics->host);
	const char *lb = strchr(host, ':') ? "[" : "", *rb = *lb ? "]" : "";
	long long deadline = mono_ms() + timeout_ms;
	char err[256], req[512], ans[HC_ANSWER_MAX + 1], body[201];
	ssize_t n;
	int fd, code;

	if (metrics->port == 0) {
		fprintf(stderr, "shoal --health: METRICS_ADDRESS %s:0: the HTTP endpoint is off, "
			"there is no /health to ask\n", metrics->host);
		return 1;
	}
	fd = open_conn(host, metrics->port, deadline, err, sizeof err);
	if (fd < 0) {
		fprintf(stderr, "shoal --health: http://%s%s%s:%u/health: %s\n", lb, host, rb,
			(unsigned)metrics->port, err);
		return 1;
	}
	snprintf(req, sizeof req, "GET /health HTTP/1.0\r\nHost: %s%s%s:%u\r\nUser-Agent: shoal-health\r\n"
		 "Connection: close\r\n\r\n", lb, host, rb, (unsigned)metrics->port);
	if (send_all(fd, req, strlen(req), deadline) < 0)
		n = -1;
	else
		n = read_all(fd, ans, HC_ANSWER_MAX, deadline);
	if (n < 0) {
		fprintf(stderr, "shoal --health: http://%s%s%s:%u/health: %s\n", lb, host, rb,
			(unsigned)metrics->port, errno == ETIMEDOUT ? "no answer within the timeout" :
			strerror(errno));
		close(fd);
		return 1;
	}
	close(fd);
	code = parse_answer(ans, (size_t)n, body, sizeof body);
	if (code == 200) {
		printf("shoal --health: healthy: http://%s%s%s:%u/health answered 200 %s\n", lb, host, rb,
		       (unsigned)metrics->port, body);
		return 0;
	}
	fprintf(stderr, "shoal --health: not healthy: http://%s%s%s:%u/health answered %s%d %s\n", lb,
		host, rb, (unsigned)metrics->port, code ? "" : "no HTTP status, ", code, body);
	return 1;
}
