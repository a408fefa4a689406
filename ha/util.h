/*
 * util.h: small helpers shared by the shoal-ha agent: exit statuses, log
 * lines, a growable string buffer, SQL literal quoting and the clock.
 */
#ifndef SHOAL_HA_UTIL_H
#define SHOAL_HA_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit statuses (docs/ha-agent.md). */
enum {
	HA_EXIT_OK = 0,
	HA_EXIT_FAIL = 1,      /* a statement failed, a file could not be written */
	HA_EXIT_USAGE = 2,     /* bad flag, config file, DSN, node list or digest */
	HA_EXIT_PROXYSQL = 3,  /* no ProxySQL admin reachable */
	HA_EXIT_NODE = 4,      /* a node unreachable or (watch --once) not serving */
};

/* "2026-01-01T10:00:00Z shoal-ha: LEVEL: message" on stderr. */
void ha_log(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct sbuf_s {
	char *p;
	size_t len, cap;
	bool oom;
};
void sb_printf(struct sbuf_s *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_free(struct sbuf_s *b);

/* Quote s as an SQL string literal ('...', quotes doubled) into b. */
void sb_quote(struct sbuf_s *b, const char *s);

/* snprintf into err; returns -1 (for "return fail(...)"). */
int ha_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Milliseconds of the realtime clock (state files hold absolute times). */
int64_t ha_now_ms(void);

/* Parse a whole decimal integer in [min, max]. */
bool ha_parse_int(const char *s, long long min, long long max, long long *out);

/* A digest as ProxySQL shows it: "0x" + 16 upper-case hex digits. Accepts
 * 0x/0X + 1..16 hex digits or the node's "q_" + 16 hex digits. */
bool ha_parse_digest(const char *s, char out[19]);

#endif
