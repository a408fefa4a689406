/*
 * test_cstate.c: unit tests for the session state table (src/core/cstate.c):
 * the moves a session makes are allowed, and those it must never make are
 * refused (logged as an error and counted), so that client_set_state()'s
 * check can fail; under SHOAL_STRICT_STATES a refused move aborts.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/stats.h"
#include "core/cstate.h"
#include "tap.h"

/* The move from -> to in a child process with SHOAL_STRICT_STATES set:
 * the signal that ended it, 0 when it exited normally. */
static int strict_child(enum client_state from, enum client_state to)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core); /* an abort here is the point */
		setenv(CSTATE_STRICT_ENV, "1", 1);
		cstate_move(7, from, to);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

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
		{ CS_AUTH_SWITCH, CS_DENIED, true, "a wrong password waits out the failed-login delay" },
		{ CS_DENIED, CS_CLOSING, true, "then its ERR goes out and the session ends" },
		{ CS_DENIED, CS_READY, false, "a denied login never becomes a session" },
		{ CS_READY, CS_DENIED, false, "COM_CHANGE_USER is denied from the login states only" },
		{ CS_READY, CS_AUTH_SWITCH, false, "COM_CHANGE_USER enters the login at HANDSHAKE" },
		{ CS_READY, CS_QUEUED, true, "every pooled connection is busy: the pool's queue" },
		{ CS_QUEUED, CS_CONNECTING, true, "a connection is free: the pool hands it over" },
		{ CS_QUEUED, CS_READY, true, "the wait timed out: the command gets ERR 1040" },
		{ CS_QUEUED, CS_RELAYING, false, "nothing is forwarded from the queue" },
		{ CS_CONNECTING, CS_QUEUED, false, "a session joins the queue from READY only" },
		{ CS_READY, CS_SENDING, true, "a command of 16 MiB or more goes upstream" },
		{ CS_SENDING, CS_RELAYING, true, "its last packet is sent: the answer is relayed" },
		{ CS_SENDING, CS_READY, true, "... or none comes (COM_STMT_SEND_LONG_DATA)" },
		{ CS_SENDING, CS_INTERNAL, false, "no command of the node's own in the middle of one" },
		{ CS_RELAYING, CS_SENDING, false, "a command is sent before its answer is relayed" },
	};

	size_t refused = 0;

	/* (make check sets it for every unit test: here the refusals are the
	 * point, and the strict mode is tried in child processes below) */
	unsetenv(CSTATE_STRICT_ENV);
	log_set_level(LOG_LEVEL_ERROR);
	printf("# the refused moves below are logged as errors on stderr\n");
	for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++) {
		ok(cstate_move(7, moves[i].from, moves[i].to) == moves[i].allowed, "%s -> %s %s: %s",
		   client_state_name(moves[i].from), client_state_name(moves[i].to),
		   moves[i].allowed ? "allowed" : "refused", moves[i].why);
		refused += !moves[i].allowed;
	}
	is_int(STAT_GET(session_state_refused), refused, "each refused move is counted");
	ok(!cstate_strict(), "without SHOAL_STRICT_STATES a refused move returns (the session is closed)");
	is_int(strict_child(CS_CLOSING, CS_READY), SIGABRT, "with SHOAL_STRICT_STATES a refused move aborts");
	is_int(strict_child(CS_READY, CS_RELAYING), 0, "  and an allowed one does not");
	setenv(CSTATE_STRICT_ENV, "0", 1);
	ok(!cstate_strict(), "SHOAL_STRICT_STATES=0 is off");
	ok(cstate_move(7, CS_READY, CS_READY), "staying in a state is allowed");
	is_str(client_state_name(CS_DRAINED), "DRAINED", "the last state has its name");
	is_str(client_state_name((enum client_state)99), "?", "an unknown state has a name for logs");
	return done_testing();
}
