/*
 * authfail.h: failed client logins per address, for the failed-login delay
 * (--auth-failure-delay-ms, --auth-failure-threshold,
 * --auth-failure-window-ms). A bounded table, sharded by address, each
 * shard under its own mutex; any worker thread.
 */
#ifndef SHOAL_AUTHFAIL_H
#define SHOAL_AUTHFAIL_H

#include <stdbool.h>

/* Addresses tracked at most (16 shards of 256); past that the entry whose
 * window started longest ago is reused. */
#define AUTHFAIL_CAPACITY 4096

/* Record a failed login from addr (the peer's IP as text). Returns true
 * when the answer to it is to be delayed: more than auth_failure_threshold
 * failures from addr within auth_failure_window_ms, and a delay is set. */
bool authfail_record(const char *addr);

/* A login from addr succeeded: forget its failures. */
void authfail_clear(const char *addr);

#endif
