/*
 * login.h: a session's connection phase (login.c): the greeting, TLS, the
 * authentication and COM_CHANGE_USER's, then the login's upstream
 * connection, borrowed and brought to the schema before its OK goes out.
 */
#ifndef SHOAL_CORE_LOGIN_H
#define SHOAL_CORE_LOGIN_H

#include <stdbool.h>
#include <stdint.h>

#include "core/client.h"

/* Send the greeting: the session enters HANDSHAKE. */
void login_start(struct client *c);
/* A session of the node's own starts logged in (in is freed). */
void login_internal(struct client *c, struct internal_login *in);
/* Handle one packet in a login state. */
void login_packet(struct client *c, const uint8_t *pl, uint32_t len, uint8_t seq);
/* CS_TLS_ACCEPT: drive the TLS handshake on. */
void login_tls_step(struct client *c);
/* COM_CHANGE_USER from the command phase: the session is reset
 * (client_reset_session), then logs in again from HANDSHAKE. */
void login_change_user(struct client *c, const uint8_t *pl, uint32_t len);
/* The login's upstream connection (login_pending) is in the session's
 * hands: bring it to the schema, then send the login's OK. false while a
 * step is upstream, or when it failed (the session then ends). */
bool login_finish(struct client *c);

#endif
