/*
 * cstate.c: the moves a session's state may make (see cstate.h), their
 * check and their trace, and what a refused move does: an error logged and
 * counted, and under SHOAL_STRICT_STATES (the tests' setting) an abort.
 */
#include "core/cstate.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/stats.h"
#include "config/config.h"

#define TO(s) (1u << (s))
#define MID_COMMAND (TO(CS_CONNECTING) | TO(CS_READY) | TO(CS_RELAYING) | TO(CS_INTERNAL) | \
		     TO(CS_WAITING) | TO(CS_CLOSING))
#define LOGIN (TO(CS_HANDSHAKE) | TO(CS_AUTH_SWITCH) | TO(CS_AUTH_SHA2))
#define LOGIN_ENDS (TO(CS_DENIED) | TO(CS_CONNECTING) | TO(CS_READY) | TO(CS_CLOSING))

/* The moves each state may make (bit i: to state i). Login states go on
 * to each other, to the failed login's delay, to the upstream or to READY;
 * a command's states go among themselves; READY starts either (COM_CHANGE_USER
 * logs in again), and is the only way into the pool's queue and into a
 * long command's SENDING; CLOSING is the end, and DRAINED (READY's at the
 * drain) and DENIED go only there. */
static const uint16_t client_moves[CS_COUNT] = {
	[CS_HANDSHAKE] = LOGIN | LOGIN_ENDS | TO(CS_TLS_ACCEPT),
	[CS_TLS_ACCEPT] = TO(CS_TLS_ACCEPT) | TO(CS_HANDSHAKE) | TO(CS_CLOSING),
	[CS_AUTH_SWITCH] = LOGIN | LOGIN_ENDS,
	[CS_AUTH_SHA2] = LOGIN | LOGIN_ENDS,
	[CS_DENIED] = TO(CS_CLOSING),
	[CS_CONNECTING] = MID_COMMAND,
	[CS_QUEUED] = TO(CS_CONNECTING) | TO(CS_READY) | TO(CS_CLOSING),
	[CS_READY] = MID_COMMAND | TO(CS_HANDSHAKE) | TO(CS_QUEUED) | TO(CS_SENDING) | TO(CS_DRAINED),
	[CS_SENDING] = TO(CS_RELAYING) | TO(CS_READY) | TO(CS_CLOSING),
	[CS_RELAYING] = MID_COMMAND,
	[CS_INTERNAL] = MID_COMMAND,
	[CS_WAITING] = MID_COMMAND,
	[CS_CLOSING] = TO(CS_CLOSING),
	[CS_DRAINED] = TO(CS_CLOSING),
};

static const char *const client_state_names[CS_COUNT] = {
	"HANDSHAKE", "TLS_ACCEPT", "AUTH_SWITCH", "AUTH_SHA2", "DENIED", "CONNECTING", "QUEUED",
	"READY", "SENDING", "RELAYING", "INTERNAL", "WAITING", "CLOSING", "DRAINED",
};

const char *client_state_name(enum client_state s)
{
	return (unsigned)s < CS_COUNT ? client_state_names[s] : "?";
}

bool cstate_strict(void)
{
	const char *v = getenv(CSTATE_STRICT_ENV);

	return v && *v && strcmp(v, "0") != 0;
}

bool cstate_move(uint32_t id, enum client_state from, enum client_state to)
{
	if (!(client_moves[from] & TO(to))) {
		bool strict = cstate_strict();

		log_error("client %u: %s -> %s is not an allowed session state transition: %s", id,
			  client_state_name(from), client_state_name(to),
			  strict ? "aborting (" CSTATE_STRICT_ENV ")" : "the session is closed");
		STAT_INC(session_state_refused);
		if (strict)
			abort();
		return false;
	}
	if (g_config.log_level >= LOG_LEVEL_DEBUG)
		log_debug("client %u: %s -> %s", id, client_state_name(from), client_state_name(to));
	return true;
}
