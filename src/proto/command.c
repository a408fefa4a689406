/*
 * command.c: the command table (see command.h), one row per command. A
 * field a row leaves out is the column's first value: not known, one
 * packet of answer, nothing answered by the node, nothing for the cache,
 * nothing done to the session or its statements.
 */
#include "proto/command.h"

const struct command command_table[256] = {
	/* relayed, nothing else */
	[CMD_FIELD_LIST] = { .name = "COM_FIELD_LIST", .known = true, .relay = RK_FIELDLIST },
	[CMD_CREATE_DB] = { .name = "COM_CREATE_DB", .known = true },
	[CMD_DROP_DB] = { .name = "COM_DROP_DB", .known = true },
	[CMD_REFRESH] = { .name = "COM_REFRESH", .known = true },
	[CMD_STATISTICS] = { .name = "COM_STATISTICS", .known = true },
	[CMD_PROCESS_INFO] = { .name = "COM_PROCESS_INFO", .known = true, .relay = RK_RESULT },
	[CMD_DEBUG] = { .name = "COM_DEBUG", .known = true },

	/* what the session's state is made of */
	[CMD_QUERY] = { .name = "COM_QUERY", .known = true, .relay = RK_RESULT,
			.checks = CMDK_MONITOR | CMDK_KILL, .cache = CMDC_QUERY, .session = CSE_TEXT },
	[CMD_INIT_DB] = { .name = "COM_INIT_DB", .known = true, .cache = CMDC_SETTINGS,
			  .session = CSE_SCHEMA },
	[CMD_SET_OPTION] = { .name = "COM_SET_OPTION", .known = true, .cache = CMDC_SETTINGS,
			     .session = CSE_PIN },

	/* answered by the node */
	[CMD_QUIT] = { .name = "COM_QUIT", .known = true, .relay = RK_NONE, .local = CL_QUIT },
	[CMD_PING] = { .name = "COM_PING", .known = true, .local = CL_PING },
	[CMD_CHANGE_USER] = { .name = "COM_CHANGE_USER", .known = true, .local = CL_CHANGE_USER },
	[CMD_RESET_CONNECTION] = { .name = "COM_RESET_CONNECTION", .known = true, .local = CL_RESET },
	[CMD_PROCESS_KILL] = { .name = "COM_PROCESS_KILL", .known = true, .checks = CMDK_KILL },

	/* prepared statements */
	[CMD_STMT_PREPARE] = { .name = "COM_STMT_PREPARE", .known = true, .relay = RK_PREPARE,
			       .cache = CMDC_PREPARE, .stmt = CMDS_PREPARE },
	[CMD_STMT_EXECUTE] = { .name = "COM_STMT_EXECUTE", .known = true, .relay = RK_RESULT,
			       .checks = CMDK_KILL, .cache = CMDC_EXECUTE, .session = CSE_STMT_TEXT,
			       .stmt = CMDS_ID | CMDS_RUNS, .stmt_name = "mysqld_stmt_execute" },
	/* (MariaDB names a bulk execute as it names an execute) */
	[CMD_STMT_BULK_EXECUTE] = { .name = "COM_STMT_BULK_EXECUTE", .known = true, .relay = RK_RESULT,
				    .cache = CMDC_BULK, .session = CSE_STMT_TEXT,
				    .stmt = CMDS_ID | CMDS_RUNS, .stmt_name = "mysqld_stmt_execute" },
	[CMD_STMT_SEND_LONG_DATA] = { .name = "COM_STMT_SEND_LONG_DATA", .known = true, .relay = RK_NONE,
				      .stmt = CMDS_ID | CMDS_RUNS,
				      .stmt_name = "mysqld_stmt_send_long_data" },
	[CMD_STMT_FETCH] = { .name = "COM_STMT_FETCH", .known = true, .relay = RK_ROWS,
			     .stmt = CMDS_ID, .stmt_name = "mysqld_stmt_fetch" },
	[CMD_STMT_RESET] = { .name = "COM_STMT_RESET", .known = true, .stmt = CMDS_ID,
			     .stmt_name = "mysqld_stmt_reset" },
	[CMD_STMT_CLOSE] = { .name = "COM_STMT_CLOSE", .known = true, .relay = RK_NONE,
			     .stmt = CMDS_ID, .stmt_name = "mysqld_stmt_close" },

	/* not taken: the server's own, obsolete, or replication's */
	[CMD_SLEEP] = { .name = "COM_SLEEP" },
	[CMD_SHUTDOWN] = { .name = "COM_SHUTDOWN" },
	[CMD_CONNECT] = { .name = "COM_CONNECT" },
	[CMD_TIME] = { .name = "COM_TIME" },
	[CMD_DELAYED_INSERT] = { .name = "COM_DELAYED_INSERT" },
	[CMD_BINLOG_DUMP] = { .name = "COM_BINLOG_DUMP" },
	[CMD_TABLE_DUMP] = { .name = "COM_TABLE_DUMP" },
	[CMD_CONNECT_OUT] = { .name = "COM_CONNECT_OUT" },
	[CMD_REGISTER_SLAVE] = { .name = "COM_REGISTER_SLAVE" },
	[CMD_DAEMON] = { .name = "COM_DAEMON" },
	[CMD_BINLOG_DUMP_GTID] = { .name = "COM_BINLOG_DUMP_GTID" },
};

const char *command_name(uint8_t cmd)
{
	return command_table[cmd].name ? command_table[cmd].name : "unknown";
}
