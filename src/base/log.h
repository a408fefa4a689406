/*
 * log.h: the node's log lines (stderr, one line per call, with a level and
 * a UTC timestamp). Never called on the cache-hit path.
 */
#ifndef SHOAL_LOG_H
#define SHOAL_LOG_H

/* The levels, lowest number most severe (configuration: log_level). */
enum shoal_log_level { LOG_LEVEL_ERROR, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

void log_set_level(enum shoal_log_level lvl);
void log_msg(enum shoal_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif
