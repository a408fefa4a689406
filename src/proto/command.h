/*
 * command.h: the client commands (COM_*) and the one table that says what
 * each is to the node: its name, whether the node takes it, the shape of
 * its answer, what the node answers itself, what the cache does with it,
 * what it does to the session's upstream state and connection, and to its
 * prepared statements. Every module that treats commands differently looks
 * its command up here (command_of) and switches on the column of its own
 * concern: the relay on `relay`, the session core on `local` and `checks`,
 * the cache on `cache`, multiplexing on `session` and `stmt`.
 *
 * Adding a command is one row in command.c plus its handler: a command
 * that is only relayed needs the row alone; one the node answers itself
 * gets a `local` value and its case in the core (core/dispatch.c).
 * The rows are listed in docs/architecture.md, "The command table".
 */
#ifndef SHOAL_PROTO_COMMAND_H
#define SHOAL_PROTO_COMMAND_H

#include <stdbool.h>
#include <stdint.h>

/* The command byte, the first of a command packet's payload. */
enum {
	CMD_SLEEP = 0x00, CMD_QUIT = 0x01, CMD_INIT_DB = 0x02, CMD_QUERY = 0x03,
	CMD_FIELD_LIST = 0x04, CMD_CREATE_DB = 0x05, CMD_DROP_DB = 0x06,
	CMD_REFRESH = 0x07, CMD_SHUTDOWN = 0x08, CMD_STATISTICS = 0x09,
	CMD_PROCESS_INFO = 0x0a, CMD_CONNECT = 0x0b, CMD_PROCESS_KILL = 0x0c,
	CMD_DEBUG = 0x0d, CMD_PING = 0x0e, CMD_TIME = 0x0f,
	CMD_DELAYED_INSERT = 0x10, CMD_CHANGE_USER = 0x11, CMD_BINLOG_DUMP = 0x12,
	CMD_TABLE_DUMP = 0x13, CMD_CONNECT_OUT = 0x14, CMD_REGISTER_SLAVE = 0x15,
	CMD_STMT_PREPARE = 0x16, CMD_STMT_EXECUTE = 0x17,
	CMD_STMT_SEND_LONG_DATA = 0x18, CMD_STMT_CLOSE = 0x19,
	CMD_STMT_RESET = 0x1a, CMD_SET_OPTION = 0x1b, CMD_STMT_FETCH = 0x1c,
	CMD_DAEMON = 0x1d, CMD_BINLOG_DUMP_GTID = 0x1e, CMD_RESET_CONNECTION = 0x1f,
	/* MariaDB: a prepared statement run once per row of parameters */
	CMD_STMT_BULK_EXECUTE = 0xfa,
};

/* How the upstream's answer to a command is shaped (relay.c). The first is
 * the default: an unknown command's answer is the server's one ERR. */
enum relay_kind {
	RK_SINGLE,       /* one packet (OK, ERR, EOF or a string) */
	RK_NONE,         /* no answer comes */
	RK_RESULT,       /* OK/ERR or result sets, MORE_RESULTS chains included */
	RK_ROWS,         /* rows then EOF (a cursor's fetch) */
	RK_PREPARE,      /* OK with the counts, then the parameter and column blocks */
	RK_FIELDLIST,    /* column definitions until EOF */
};

/* What the node answers itself, whatever the cache says: the core's
 * handlers (core/dispatch.c), one each. */
enum cmd_local {
	CL_NONE,         /* nothing of its own: the cache, then the upstream */
	CL_QUIT,         /* the session ends; its connection goes back to the pool */
	CL_CHANGE_USER,  /* the session is reset, then a login runs on it (login.c) */
	CL_PING,         /* answered without a connection; refused while draining or
			  * out of rotation; forwarded when the session holds one */
	CL_RESET,        /* the session back to its login's state, answered OK with
			  * no connection: the one it holds is given back, or closed
			  * when it holds state of its own */
};

/* The node's checks of the command's SQL, before the cache (flags). */
#define CMDK_MONITOR 0x01 /* may be a load balancer's monitor query (monitor.c) */
#define CMDK_KILL    0x02 /* may be a KILL the node answers (kill.c): its text, its
			   * statement's text, or COM_PROCESS_KILL's id */

/* What the cache does with a command (cache/session.c, cache_command). */
enum cmd_cache {
	CMDC_NONE,       /* nothing: it passes (and waits while a refresh is upstream) */
	CMDC_QUERY,      /* a text statement: a hit, a miss that fills, or a write
			  * whose tables are invalidated */
	CMDC_EXECUTE,    /* the same for a prepared statement, keyed by its text,
			  * settings and parameters */
	CMDC_BULK,       /* never served, never stored; invalidates what it writes */
	CMDC_PREPARE,    /* the settings it is prepared under join its keys */
	CMDC_SETTINGS,   /* changes settings the keys depend on: read them again */
};

/* What a forwarded command does to the session's upstream state and so to
 * its connection (mux.c, mux_note_command). */
enum cmd_session {
	CSE_NONE,        /* nothing: the connection is given back after its answer */
	CSE_TEXT,        /* its SQL may (SET, USE, a transaction, LOCK TABLES, ...:
			  * sessvars.c reads it; what cannot be recorded pins) */
	CSE_STMT_TEXT,   /* the same, with the text of the statement it runs */
	CSE_SCHEMA,      /* changes the schema (recorded; the connection stays shared) */
	CSE_PIN,         /* changes what the node does not record: the connection
			  * is the session's for good, never lent again */
};

/* What a command does with the session's prepared statements (flags). */
#define CMDS_PREPARE 0x01 /* makes one (the registry; maybe answered by the node) */
#define CMDS_ID      0x02 /* names one by its id at [1]: the node gives unknown ids
			   * their error and puts the connection's id in */
#define CMDS_RUNS    0x04 /* runs it on the connection: prepared there first */

struct command {
	const char *name;        /* MariaDB's name, COM_QUERY; NULL: no command */
	bool known;              /* taken by the node; else ERR 1047 Unknown command
				  * (08S01), and the session goes on */
	enum relay_kind relay;
	enum cmd_local local;
	uint8_t checks;          /* CMDK_* */
	enum cmd_cache cache;
	enum cmd_session session;
	uint8_t stmt;            /* CMDS_* */
	const char *stmt_name;   /* the server's name for it in statement errors
				  * (ER_UNKNOWN_STMT_HANDLER: mysqld_stmt_execute) */
};

/* The rows, by command byte (command.c). */
extern const struct command command_table[256];

/* The row of command byte cmd: every byte has one (a byte that names no
 * command has a row of zeros: not known). */
static inline const struct command *command_of(uint8_t cmd)
{
	return &command_table[cmd];
}

/* The command's name for logs: its name, or "unknown". */
const char *command_name(uint8_t cmd);

/* Can a cache hit answer it (a text query or an execute)? */
static inline bool command_may_hit(const struct command *k)
{
	return k->cache == CMDC_QUERY || k->cache == CMDC_EXECUTE;
}

#endif
