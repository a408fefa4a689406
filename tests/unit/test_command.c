/*
 * test_command.c: unit tests for the command table (src/proto/command.c):
 * each command's row says what the node does with it, in every column,
 * and a byte that names no command is not known.
 */
#include <stdio.h>

#include "proto/command.h"
#include "tap.h"

/* One expected row: the columns that decide what the node does. */
struct want {
	uint8_t cmd;
	const char *name;
	bool known;
	enum relay_kind relay;
	enum cmd_local local;
	uint8_t checks;
	enum cmd_cache cache;
	enum cmd_session session;
	uint8_t stmt;
};

static const struct want rows[] = {
	{ CMD_QUERY, "COM_QUERY", true, RK_RESULT, CL_NONE, CMDK_MONITOR | CMDK_KILL, CMDC_QUERY, CSE_TEXT, 0 },
	{ CMD_STMT_EXECUTE, "COM_STMT_EXECUTE", true, RK_RESULT, CL_NONE, CMDK_KILL, CMDC_EXECUTE,
	  CSE_STMT_TEXT, CMDS_ID | CMDS_RUNS },
	{ CMD_STMT_BULK_EXECUTE, "COM_STMT_BULK_EXECUTE", true, RK_RESULT, CL_NONE, 0, CMDC_BULK,
	  CSE_STMT_TEXT, CMDS_ID | CMDS_RUNS },
	{ CMD_STMT_PREPARE, "COM_STMT_PREPARE", true, RK_PREPARE, CL_NONE, 0, CMDC_PREPARE, CSE_NONE,
	  CMDS_PREPARE },
	{ CMD_STMT_SEND_LONG_DATA, "COM_STMT_SEND_LONG_DATA", true, RK_NONE, CL_NONE, 0, CMDC_NONE,
	  CSE_NONE, CMDS_ID | CMDS_RUNS },
	{ CMD_STMT_FETCH, "COM_STMT_FETCH", true, RK_ROWS, CL_NONE, 0, CMDC_NONE, CSE_NONE, CMDS_ID },
	{ CMD_STMT_RESET, "COM_STMT_RESET", true, RK_SINGLE, CL_NONE, 0, CMDC_NONE, CSE_NONE, CMDS_ID },
	{ CMD_STMT_CLOSE, "COM_STMT_CLOSE", true, RK_NONE, CL_NONE, 0, CMDC_NONE, CSE_NONE, CMDS_ID },
	{ CMD_INIT_DB, "COM_INIT_DB", true, RK_SINGLE, CL_NONE, 0, CMDC_SETTINGS, CSE_SCHEMA, 0 },
	{ CMD_SET_OPTION, "COM_SET_OPTION", true, RK_SINGLE, CL_NONE, 0, CMDC_SETTINGS, CSE_PIN, 0 },
	{ CMD_QUIT, "COM_QUIT", true, RK_NONE, CL_QUIT, 0, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_PING, "COM_PING", true, RK_SINGLE, CL_PING, 0, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_CHANGE_USER, "COM_CHANGE_USER", true, RK_SINGLE, CL_CHANGE_USER, 0, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_RESET_CONNECTION, "COM_RESET_CONNECTION", true, RK_SINGLE, CL_RESET, 0, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_PROCESS_KILL, "COM_PROCESS_KILL", true, RK_SINGLE, CL_NONE, CMDK_KILL, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_FIELD_LIST, "COM_FIELD_LIST", true, RK_FIELDLIST, CL_NONE, 0, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_PROCESS_INFO, "COM_PROCESS_INFO", true, RK_RESULT, CL_NONE, 0, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_STATISTICS, "COM_STATISTICS", true, RK_SINGLE, CL_NONE, 0, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_CREATE_DB, "COM_CREATE_DB", true, RK_SINGLE, CL_NONE, 0, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_DROP_DB, "COM_DROP_DB", true, RK_SINGLE, CL_NONE, 0, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_REFRESH, "COM_REFRESH", true, RK_SINGLE, CL_NONE, 0, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_DEBUG, "COM_DEBUG", true, RK_SINGLE, CL_NONE, 0, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_SLEEP, "COM_SLEEP", false, RK_SINGLE, CL_NONE, 0, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_SHUTDOWN, "COM_SHUTDOWN", false, RK_SINGLE, CL_NONE, 0, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_BINLOG_DUMP, "COM_BINLOG_DUMP", false, RK_SINGLE, CL_NONE, 0, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_BINLOG_DUMP_GTID, "COM_BINLOG_DUMP_GTID", false, RK_SINGLE, CL_NONE, 0, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_REGISTER_SLAVE, "COM_REGISTER_SLAVE", false, RK_SINGLE, CL_NONE, 0, CMDC_NONE, CSE_NONE, 0 },
	{ CMD_DAEMON, "COM_DAEMON", false, RK_SINGLE, CL_NONE, 0, CMDC_NONE, CSE_NONE, 0 },
};

static void check_row(const struct want *w)
{
	const struct command *k = command_of(w->cmd);

	is_str(k->name, w->name, w->name);
	ok(k->known == w->known && k->relay == w->relay && k->local == w->local && k->checks == w->checks &&
	   k->cache == w->cache && k->session == w->session && k->stmt == w->stmt,
	   "  %s: known %d, relay %d, local %d, checks %d, cache %d, session %d, stmt %d", w->name, k->known,
	   k->relay, k->local, k->checks, k->cache, k->session, k->stmt);
}

int main(void)
{
	int unnamed_known = 0, stmt_without_name = 0, hits = 0;

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		check_row(&rows[i]);
	for (int b = 0; b < 256; b++) {
		const struct command *k = command_of((uint8_t)b);

		unnamed_known += k->known && !k->name;
		stmt_without_name += (k->stmt & CMDS_ID) && !k->stmt_name;
		hits += command_may_hit(k);
	}
	is_int(unnamed_known, 0, "every command the node takes has a name");
	is_int(stmt_without_name, 0, "every command that names a statement has the server's name for it");
	is_int(hits, 2, "a cache hit answers two commands: COM_QUERY and COM_STMT_EXECUTE");
	ok(!command_of(0x99)->known && command_of(0x99)->relay == RK_SINGLE, "0x99 is no command");
	is_str(command_name(0x99), "unknown", "  and its name in logs says so");
	ok(!command_of(0xff)->known, "0xff (an empty packet's byte) is no command");
	is_str(command_of(CMD_STMT_BULK_EXECUTE)->stmt_name, "mysqld_stmt_execute",
	       "a bulk execute's unknown id is named as MariaDB names it");
	return done_testing();
}
