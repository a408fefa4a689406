/*
 * test_cstate.c: unit tests for the session state table (src/core/cstate.c):
 * the moves a session makes are allowed, and those it must never make are
 * refused (logged as an error), so that client_set_state()'s check can fail.
 */
#include <stdio.h>

#include "base/log.h"
#include "core/cstate.h"
#include "tap.h"

int main(void)
{
	static const struct { enum client_state from, to; bool allowed; const char *why; } moves[] = {
		{ CS_HANDSHAKE, CS_TLS_ACCEPT, true, "the client asks for TLS" },
		{ CS_TLS_ACCEPT, CS_HANDSHAKE, true, "TLS is up: the response is read" },
		{ CS_HANDSHAKE, CS_CONNECTING, true, "the login needs the upstream" },
		{ CS_AUTH_SWITCH, CS_AUTH_SHA2, true, "a switch to caching_sha2" },
		{ CS_CONNECTING, CS_READY, true, "the login's upstream is up" },
		{ CS_READY, CS_RELAYING, true, "a command goes upstream" },
		{ CS_RELAYING, CS_INTERNAL, true, "the node's own command before the client's" },
		{ CS_INTERNAL, CS_WAITING, true, "the cache's WAIT after the settings query" },
		{ CS_WAITING, CS_READY, true, "woken" },
		{ CS_READY, CS_HANDSHAKE, true, "COM_CHANGE_USER logs in again" },
		{ CS_RELAYING, CS_CLOSING, true, "the upstream is lost" },
		{ CS_CLOSING, CS_READY, false, "a closing session never reads again" },
		{ CS_CLOSING, CS_RELAYING, false, "... nor forwards" },
		{ CS_RELAYING, CS_HANDSHAKE, false, "no login in the middle of a command" },
		{ CS_WAITING, CS_AUTH_SHA2, false, "... nor while parked" },
		{ CS_HANDSHAKE, CS_RELAYING, false, "no command before the login is done" },
		{ CS_TLS_ACCEPT, CS_READY, false, "TLS first, then the login" },
		{ CS_READY, CS_DRAINED, true, "the drain closes an idle session" },
		{ CS_DRAINED, CS_CLOSING, true, "an error while its last answer is flushed" },
		{ CS_DRAINED, CS_READY, false, "a drained session never reads again" },
		{ CS_RELAYING, CS_DRAINED, false, "the drain waits for the answer (an idle point)" },
		{ CS_CLOSING, CS_DRAINED, false, "a session closed after an error is not drained" },
	};

	log_set_level(LOG_LEVEL_ERROR);
	printf("# the refused moves below are logged as errors on stderr\n");
	for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++)
		ok(cstate_move(7, moves[i].from, moves[i].to) == moves[i].allowed, "%s -> %s %s: %s",
		   client_state_name(moves[i].from), client_state_name(moves[i].to),
		   moves[i].allowed ? "allowed" : "refused", moves[i].why);
	ok(cstate_move(7, CS_READY, CS_READY), "staying in a state is allowed");
	is_str(client_state_name(CS_DRAINED), "DRAINED", "the last state has its name");
	is_str(client_state_name((enum client_state)99), "?", "an unknown state has a name for logs");
	return done_testing();
}
