/*
 * monitor.h: the health-check queries of load balancers, answered by the
 * node itself with no upstream round trip, so that they work for the
 * monitor user (who has no upstream connection) and while the upstream is
 * down:
 *
 *   ProxySQL's read_only checks, the exact texts
 *     SELECT @@global.read_only read_only
 *     SELECT @@global.innodb_read_only read_only
 *     SELECT @@global.super_read_only read_only
 *     SELECT @@global.read_only&@@global.innodb_read_only read_only
 *     SELECT @@global.read_only|@@global.innodb_read_only read_only
 *   -> one column `read_only`, one row, 1 (a cache node is a reader);
 *   its replication-lag check, SHOW SLAVE STATUS (or SHOW REPLICA STATUS)
 *   -> no rows, as from a server that is not a replica;
 *   Readyset's SHOW READYSET STATUS and SHOW SHOAL STATUS (see
 *   cache/commands.h), which ProxySQL's Readyset monitor polls.
 *
 * The read_only and replica-status answers are the monitor login's only:
 * any other login's same text goes upstream, and gets the server's answer
 * (a DBA's SHOW SLAVE STATUS on a replica behind the node; conformance:
 * sys_vars.slave_parallel_mode_basic). The status commands answer everyone.
 *
 * Texts match case-insensitively, with runs of whitespace taken as one
 * space, leading and trailing whitespace and trailing ';' ignored. Anything
 * else (comments, other spacing around operators) is not matched and goes on
 * to the cache and the upstream as usual.
 */
#ifndef SHOAL_MONITOR_H
#define SHOAL_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/packet.h"

enum monitor_query {
	MQ_NONE,
	MQ_READ_ONLY,
	MQ_SLAVE_STATUS,
	MQ_REPLICA_STATUS,
	MQ_READYSET_STATUS,
	MQ_SHOAL_STATUS,
};

/* Which monitor query the COM_QUERY text q[0..n) is (MQ_NONE: none). */
enum monitor_query monitor_match(const char *q, size_t n);

/* pl[0..len) is a COM_QUERY payload (command byte first). If it is a
 * monitor query the node answers for this login (monitor: the monitor
 * login), append its answer to out (for a client with capabilities caps
 * whose session status is status) and return true. */
bool monitor_answer(struct pbuf *out, uint32_t caps, uint16_t status, bool monitor, const uint8_t *pl,
		    uint32_t len);

#endif
