/*
 * client.h: one client session, owned by one worker for its whole life.
 *
 * States (explicit, see docs/architecture.md):
 *   CS_HANDSHAKE     greeting sent, waiting for the handshake response
 *                    (or an SSL request)
 *   CS_TLS_ACCEPT    TLS handshake in progress
 *   CS_AUTH_SWITCH   auth-switch request sent, waiting for the new token
 *   CS_AUTH_SHA2     caching_sha2 full auth: waiting for the cleartext
 *                    password (TLS) or a public-key request / RSA blob
 *   CS_CONNECTING    authenticated; the upstream connection is being opened
 *   CS_READY         waiting for the next command
 *   CS_RELAYING      a command is upstream; its response is being relayed
 *   CS_CLOSING       flushing a last error, then closing
 * login.c drives the first five; client.c the rest.
 */
#ifndef SHOAL_CLIENT_H
#define SHOAL_CLIENT_H

#include <ev.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "auth.h"
#include "handshake.h"
#include "relay.h"
#include "sbuf.h"
#include "upstream.h"

struct worker;

enum client_state {
	CS_HANDSHAKE,
	CS_TLS_ACCEPT,
	CS_AUTH_SWITCH,
	CS_AUTH_SHA2,
	CS_CONNECTING,
	CS_READY,
	CS_RELAYING,
	CS_CLOSING,
};

struct client {
	struct worker *w;
	struct client *prev, *next;   /* the worker's list */
	uint32_t id;                  /* connection id shown to the client */
	struct sbuf io;
	ev_io watcher;
	ev_timer timer;               /* handshake timeout */
	enum client_state st;
	char peer[64];                /* client IP as text */

	/* login */
	uint8_t nonce[AUTH_NONCE_LEN];
	uint8_t seq;                  /* next sequence id during login */
	uint32_t caps;                /* negotiated */
	uint16_t collation;
	char user[HS_USER_MAX];
	char db[HS_DB_MAX];
	bool is_monitor;
	bool changing_user;           /* login states entered from CMD_CHANGE_USER */
	bool login_pending;           /* CS_CONNECTING for a login: OK follows */
	bool tls_done;
	bool sha2_full_requested;

	/* command phase */
	struct upstream *up;
	struct relay relay;
	bool upstream_eof_seen;
	bool cont_packets;            /* the client's command continues (16 MiB+) */
	uint64_t cont_total;
};

/* Take ownership of an accepted socket on worker w. */
void client_accept(struct worker *w, int fd, const struct sockaddr_storage *peer);
/* Close and free. */
void client_close(struct client *c, const char *why);

/* Queue an ERR packet to the client. */
void client_send_err(struct client *c, uint8_t seq, uint16_t code, const char *state, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Update the socket watcher (read always, write when output is pending). */
void client_arm(struct client *c);
/* Flush output now; false if the connection broke (then it is closed). */
bool client_flush(struct client *c);

/* login.c */
void login_start(struct client *c);
/* Handle one packet in a login state. */
void login_packet(struct client *c, const uint8_t *pl, uint32_t len, uint8_t seq);
void login_tls_step(struct client *c);
/* CMD_CHANGE_USER from the command phase. */
void login_change_user(struct client *c, const uint8_t *pl, uint32_t len);

/* client.c: called by login.c once the user is authenticated. */
void client_authenticated(struct client *c);

#endif
