/*
 * metrics.h: the Prometheus text exposition format (version 0.0.4), written
 * into a struct pbuf: HELP/TYPE lines, samples with escaped label values,
 * and the node-wide families rendered from g_stats and health. Other modules
 * (the cache) add their families through metrics_register_provider.
 */
#ifndef SHOAL_METRICS_H
#define SHOAL_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/packet.h"

/* One label of a sample; value is any string (escaped on output). */
struct metrics_label {
	const char *name;
	const char *value;
};

/* [a-zA-Z_:][a-zA-Z0-9_:]* */
bool metrics_valid_name(const char *name);
/* [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved) */
bool metrics_valid_label_name(const char *name);

/* Append v escaped for a label value: backslash, double quote and newline
 * become \\, \" and \n; bytes that are not UTF-8 become U+FFFD.
 * 0 or -1 (out of memory). */
int metrics_escape_label_value(struct pbuf *out, const char *v);
/* Append s escaped for a HELP line: backslash and newline. 0 or -1. */
int metrics_escape_help(struct pbuf *out, const char *s);

/* Format v with 15 significant digits, or 16 or 17 when needed for the
 * text to read back as exactly v; "NaN", "+Inf", "-Inf" for the special
 * values. Returns 0, or -1 if n is too small. */
int metrics_format_double(double v, char *buf, size_t n);

/* "# HELP name help\n# TYPE name type\n". type is counter, gauge,
 * histogram, summary or untyped. -1 on a bad name or type, or no memory. */
int metrics_family(struct pbuf *out, const char *name, const char *type, const char *help);

/* "name{l1="v1",...} value\n" (no braces without labels). name is the full
 * sample name (e.g. x_bucket for a histogram). -1 on a bad metric or label
 * name, or no memory; nothing is appended on error. */
int metrics_sample(struct pbuf *out, const char *name, const struct metrics_label *labels,
		   size_t n_labels, double value);
int metrics_sample_u64(struct pbuf *out, const char *name, const struct metrics_label *labels,
		       size_t n_labels, uint64_t value);

/* A module's families. Appends whole families (metrics_family, then its
 * samples) to out; returns 0 or -1. Called on the HTTP thread, so it may
 * only read thread-safe state (atomics, or data under its own lock). */
typedef int (*metrics_provider)(struct pbuf *out);

#define METRICS_MAX_PROVIDERS 8

/* Register a provider; called at start, before any thread runs. Providers
 * are called in registration order after the built-in families. More than
 * METRICS_MAX_PROVIDERS is a programming error: logged, and ignored. */
void metrics_register_provider(metrics_provider p);
/* Forget all providers (for tests). */
void metrics_clear_providers(void);

/* Append the whole exposition: the node-wide families, then every
 * provider's. Returns 0, or -1 (no memory, or a provider failed). */
int metrics_render(struct pbuf *out);

#endif
