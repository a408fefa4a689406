/*
 * listener.c: binding the data port(s), accepting, refusing (over the
 * connection limit, or while the upstream has been down too long), and
 * handing sockets to workers.
 */
#include "core/listener.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/health.h"
#include "base/log.h"
#include "proto/packet.h"
#include "base/stats.h"
#include "upstream/upstream.h"
#include "core/worker.h"

struct listener {
	ev_io io;
	int fd;
};

static struct listener listeners[SHOAL_MAX_LISTEN];
static int n_listeners;

int listen_socket(const struct shoal_addr *a, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
	struct addrinfo *res;
	char port[8];
	int fd, one = 1, rc;

	snprintf(port, sizeof(port), "%u", a->port);
	rc = getaddrinfo(a->host[0] ? a->host : NULL, port, &hints, &res);
	if (rc != 0) {
		snprintf(err, errlen, "cannot resolve %s: %s", a->host, gai_strerror(rc));
		return -1;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 4096) < 0) {
		snprintf(err, errlen, "cannot listen on %s:%u: %s", a->host, a->port, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		return -1;
	}
	freeaddrinfo(res);
	return fd;
}

void listener_refuse(int fd, uint16_t code, const char *sqlstate, const char *msg)
{
	struct pbuf b = {0};
	ssize_t r;

	STAT_INC(client_connections_refused);
	if (pkt_put_err(&b, 0, code, sqlstate, msg) == 0) {
		r = send(fd, b.data, b.len, MSG_NOSIGNAL | MSG_DONTWAIT);
		(void)r;
	}
	pbuf_free(&b);
	close(fd);
}

/* Whether a new connection is refused, and with what error. */
static bool refused(int fd)
{
	char msg[512];

	if (STAT_GET(client_connections) >= (uint64_t)g_config.max_client_connections) {
		listener_refuse(fd, ERR_CON_COUNT_ERROR, "08004", "Too many connections");
		return true;
	}
	if (health_upstream_down_too_long()) {
		upstream_down_text(msg, sizeof(msg), "not accepting connections");
		listener_refuse(fd, ERR_UPSTREAM_UNREACHABLE, "HY000", msg);
		return true;
	}
	return false;
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
	struct listener *l = (struct listener *)w;

	(void)loop;
	(void)revents;
	for (int i = 0; i < 256; i++) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		int one = 1;
		int fd = accept4(l->fd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				log_warn("accept: %s", strerror(errno));
			return;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (refused(fd))
			continue;
		STAT_INC(client_connections);
		if (worker_hand_off(workers_pick(), fd, &peer) < 0) {
			STAT_DEC(client_connections);
			close(fd);
		}
	}
}

int listeners_open(struct ev_loop *loop, const struct shoal_config *cfg)
{
	char err[512];

	for (int i = 0; i < cfg->n_listen; i++) {
		int fd = listen_socket(&cfg->listen[i], err, sizeof(err));

		if (fd < 0) {
			log_error("%s", err);
			return -1;
		}
		listeners[n_listeners].fd = fd;
		ev_io_init(&listeners[n_listeners].io, on_accept, fd, EV_READ);
		ev_io_start(loop, &listeners[n_listeners].io);
		n_listeners++;
		log_info("listening on %s:%u", cfg->listen[i].host, cfg->listen[i].port);
	}
	return 0;
}

void listeners_close(struct ev_loop *loop)
{
	for (int i = 0; i < n_listeners; i++) {
		ev_io_stop(loop, &listeners[i].io);
		close(listeners[i].fd);
	}
	n_listeners = 0;
}
