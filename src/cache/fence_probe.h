/*
 * fence_probe.h: the thread that proves binlog transactions visible on the
 * upstream (fence.h). While the follower has received a transaction not
 * yet proven visible, it reads the server's last commit position on a
 * connection of its own (SHOW STATUS LIKE 'Binlog_snapshot_%': no
 * privilege needed, no transaction opened) and hands it to fence_observe().
 * One reading covers every transaction received before it (a burst costs
 * one round trip). Readings are paced: 3 at once, then one every 5 ms at
 * most (200 a second however fast the commits come: a reading costs the
 * server about 250 us of CPU on the test machine, as SHOW STATUS computes
 * the engines' status), and after 4 in a row that prove nothing, a pause
 * doubling up to 20 ms.
 *
 * When it cannot prove anything (the connection lost, the upstream slow or
 * gone, a server whose group commit does not publish its position with its
 * commits: binlog_optimize_thread_scheduling = OFF), the fences stay
 * closed: fills of the tables written since are not stored (answers stay
 * correct, from the upstream), counted in shoal_fence_fills_refused_total.
 * Nothing opens a fence but a proof.
 */
#ifndef SHOAL_CACHE_FENCE_PROBE_H
#define SHOAL_CACHE_FENCE_PROBE_H

#include <mysql.h>
#include <stddef.h>

/* How the probe logs in: the follower's own login (binlog.c), handed over
 * so that this module does not call back into the follower. NULL on
 * failure, why in err. */
typedef MYSQL *(*fence_connect_fn)(char *err, size_t cap);

/* Start / stop the probe thread. 0, or -1 (errno: the thread). */
int fence_probe_start(fence_connect_fn connect);
void fence_probe_stop(void);

#endif
