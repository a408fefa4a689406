/*
 * monitor.c: matching and answering the load balancers' health-check
 * queries (see monitor.h). The one lexer compares a query with the known
 * texts token by token (sql/local.h: sql_same_text); a query that does not
 * start with SHOW or SELECT @@, or is much longer than any known text, is
 * turned away after a look at its first bytes.
 */
#include "core/monitor.h"

#include <stdbool.h>

#include "cache/commands.h"
#include "proto/packet.h"
#include "proto/resultset.h"
#include "sql/local.h"

#define NORM_MAX 80 /* longer than the longest known text */

static const struct {
	const char *text;
	enum monitor_query kind;
} known[] = {
	{ "select @@global.read_only read_only", MQ_READ_ONLY },
	{ "select @@global.innodb_read_only read_only", MQ_READ_ONLY },
	{ "select @@global.super_read_only read_only", MQ_READ_ONLY },
	{ "select @@global.read_only&@@global.innodb_read_only read_only", MQ_READ_ONLY },
	{ "select @@global.read_only|@@global.innodb_read_only read_only", MQ_READ_ONLY },
	{ "show slave status", MQ_SLAVE_STATUS },
	{ "show replica status", MQ_REPLICA_STATUS },
	{ "show readyset status", MQ_READYSET_STATUS },
	{ "show shoal status", MQ_SHOAL_STATUS },
};

enum monitor_query monitor_match(const char *q, size_t n)
{
	if (n > 4 * NORM_MAX || !sql_lead_show_or_sysvar(q, n))
		return MQ_NONE; /* every other query: a look at its first bytes only (the hit path) */
	for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
		if (sql_same_text(q, n, known[k].text))
			return known[k].kind;
	return MQ_NONE;
}

static void answer_read_only(const struct cache_reply *r)
{
	struct rs_writer w;

	rs_begin(&w, r->out, 1, r->caps, 1);
	rs_column(&w, "read_only", RS_TYPE_LONGLONG);
	rs_row_begin(&w);
	rs_cell_str(&w, "1");
	rs_row_end(&w);
	if (rs_end(&w, r->status) < 0)
		pkt_put_errf(r->out, 1, ERR_UNKNOWN_ERROR, "HY000", "Out of memory");
}

/* No rows: the node is not a replica. A few of the usual columns, so that
 * clients reading them by name find them. */
static void answer_replica_status(const struct cache_reply *r, bool replica)
{
	static const char *const slave[] = { "Slave_IO_State", "Master_Host", "Master_User",
		"Master_Port", "Slave_IO_Running", "Slave_SQL_Running", "Seconds_Behind_Master" };
	static const char *const repl[] = { "Replica_IO_State", "Source_Host", "Source_User",
		"Source_Port", "Replica_IO_Running", "Replica_SQL_Running", "Seconds_Behind_Source" };
	uint8_t seq = 1;

	if (rs_put_table(r->out, &seq, r->caps, r->status, 7, replica ? repl : slave, 0, NULL) < 0)
		pkt_put_errf(r->out, 1, ERR_UNKNOWN_ERROR, "HY000", "Out of memory");
}

bool monitor_answer(struct pbuf *out, uint32_t caps, uint16_t status, bool monitor, const uint8_t *pl,
		    uint32_t len)
{
	enum monitor_query kind = monitor_match((const char *)pl + 1, len - 1);
	struct cache_reply r;

	if (kind == MQ_NONE)
		return false; /* every other query: nothing more on the hit path */
	if (!monitor && kind != MQ_READYSET_STATUS && kind != MQ_SHOAL_STATUS)
		return false; /* another login's read_only or replica status: the upstream's */
	/* the answers carry the session's status bits, not a statement's */
	r = (struct cache_reply){ .out = out, .caps = caps, .status = status & SESSION_STATUS_BITS };
	switch (kind) {
	case MQ_READ_ONLY:
		answer_read_only(&r);
		return true;
	case MQ_SLAVE_STATUS:
	case MQ_REPLICA_STATUS:
		answer_replica_status(&r, kind == MQ_REPLICA_STATUS);
		return true;
	case MQ_READYSET_STATUS:
	case MQ_SHOAL_STATUS:
		r.status = status; /* as SHOW ... STATUS through the cache SQL */
		cache_status_answer(&r, kind == MQ_READYSET_STATUS);
		return true;
	default:
		return false;
	}
}
