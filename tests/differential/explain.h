/*
 * explain.h: the kinds of difference between the old readers and the new
 * one that the differential (differential.c) accepts, each with why it is
 * equal or more conservative, and the rules that recognise them.
 */
#ifndef SHOAL_DIFF_EXPLAIN_H
#define SHOAL_DIFF_EXPLAIN_H

struct explain_kind {
	const char *name;
	const char *why;
};

#define EXPLAIN_KINDS 15
extern const struct explain_kind explain_kinds[EXPLAIN_KINDS];

/* The kind of the difference old -> new in field f (record.h) of line, or
 * -1 when none explains it. */
int explain(int f, const char *line, const char *old, const char *new);

#endif
