/*
 * reply.c: owns how one admin answer is written: OK packets (with an info
 * text and the warning count), ERR packets, the session's warning list for
 * SHOW WARNINGS, and result sets, in particular an SQLite statement stepped
 * into a text result set (every value as text, NULL as NULL).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "proto/resultset.h"

uint16_t reply_status(const struct admin_reply *r)
{
	uint16_t st = ST_AUTOCOMMIT | r->more;

	if (g_adb.db && !sqlite3_get_autocommit(g_adb.db))
		st |= ST_IN_TRANS;
	return st;
}

static uint16_t warn_count(const struct admin_reply *r)
{
	int n = r->warn ? r->warn->total : 0;

	return (uint16_t)(n > 65535 ? 65535 : n);
}

void reply_ok(struct admin_reply *r, uint64_t affected, const char *info)
{
	struct pbuf *b = r->out;
	size_t start, len = info ? strlen(info) : 0;
	int rc = pkt_begin(b, &start);

	rc |= put_u8(b, 0x00);
	rc |= put_lenenc(b, affected);
	rc |= put_lenenc(b, 0);
	rc |= put_u16(b, reply_status(r));
	rc |= put_u16(b, warn_count(r));
	if (len)
		rc |= pbuf_append(b, info, len);
	if (rc) {
		b->len = start;
		r->failed = true;
		return;
	}
	pkt_end(b, start, r->seq++);
}

void reply_err(struct admin_reply *r, uint16_t code, const char *state, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	pkt_put_err(r->out, r->seq++, code, state, msg);
	r->failed = true;
}

void reply_clear_warnings(struct admin_reply *r)
{
	if (r->warn) {
		r->warn->n = 0;
		r->warn->total = 0;
	}
}

void reply_warn(struct admin_reply *r, uint16_t code, const char *fmt, ...)
{
	struct admin_warnings *w = r->warn;
	va_list ap;

	if (!w)
		return;
	w->total++;
	if (w->n >= ADMIN_MAX_WARNINGS)
		return;
	w->code[w->n] = code;
	va_start(ap, fmt);
	vsnprintf(w->msg[w->n], ADMIN_WARN_LEN, fmt, ap);
	va_end(ap);
	w->n++;
}

void reply_table(struct admin_reply *r, unsigned ncols, const char *const *names,
		 size_t nrows, const char *const *cells)
{
	if (rs_put_table(r->out, &r->seq, r->caps, reply_status(r), ncols, names, nrows,
			 cells) < 0)
		reply_err(r, ERR_UNKNOWN_ERROR, "HY000", "out of memory");
}

void reply_sqlite_err(struct admin_reply *r, int rc, const char *msg, const char *prefix)
{
	bool syntax = rc == SQLITE_ERROR && msg &&
		      (strstr(msg, "syntax error") || strstr(msg, "incomplete input") ||
		       strstr(msg, "unrecognized token"));

	if (!msg)
		msg = sqlite3_errstr(rc);
	if (syntax)
		reply_err(r, ERR_PARSE_ERROR, "42000", "%s%s", prefix ? prefix : "", msg);
	else
		reply_err(r, ERR_UNKNOWN_ERROR, "HY000", "%s%s", prefix ? prefix : "", msg);
}

/* One row of st into the writer. */
static int put_row(struct rs_writer *w, sqlite3_stmt *st, int ncols)
{
	rs_row_begin(w);
	for (int i = 0; i < ncols; i++) {
		const unsigned char *t;

		if (sqlite3_column_type(st, i) == SQLITE_NULL) {
			rs_cell_null(w);
			continue;
		}
		t = sqlite3_column_text(st, i);
		if (!t)
			return -1;     /* out of memory converting the value */
		rs_cell(w, t, (size_t)sqlite3_column_bytes(st, i));
	}
	return rs_row_end(w);
}

static void reply_rows(struct admin_reply *r, sqlite3 *db, sqlite3_stmt *st, int ncols)
{
	struct rs_writer w;
	int rc = SQLITE_ROW;

	rs_begin(&w, r->out, r->seq, r->caps, (unsigned)ncols);
	for (int i = 0; i < ncols; i++) {
		const char *name = sqlite3_column_name(st, i);

		rs_column(&w, name ? name : "", RS_TYPE_VAR_STRING);
	}
	while (!w.failed && (rc = sqlite3_step(st)) == SQLITE_ROW)
		if (put_row(&w, st, ncols) < 0)
			rs_abort(&w);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		rs_abort(&w);
		reply_sqlite_err(r, rc, sqlite3_errmsg(db), NULL);
		return;
	}
	if (rs_end_warnings(&w, reply_status(r), warn_count(r)) < 0) {
		reply_err(r, ERR_UNKNOWN_ERROR, "HY000", "out of memory building the result");
		return;
	}
	r->seq = rs_next_seq(&w);
}

void reply_run_stmt(struct admin_reply *r, sqlite3 *db, sqlite3_stmt *st)
{
	int ncols = sqlite3_column_count(st);
	sqlite3_int64 before = sqlite3_total_changes64(db);
	int rc;

	if (ncols > 0) {
		reply_rows(r, db, st, ncols);
		sqlite3_finalize(st);
		return;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	if (rc != SQLITE_DONE) {
		reply_sqlite_err(r, rc, sqlite3_errmsg(db), NULL);
		sqlite3_finalize(st);
		return;
	}
	sqlite3_finalize(st);
	reply_ok(r, (uint64_t)(sqlite3_total_changes64(db) - before), NULL);
}

void reply_query(struct admin_reply *r, const char *sql, int nparams, const char *const *params)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(g_adb.db, sql, -1, &st, NULL);
	for (int i = 0; rc == SQLITE_OK && i < nparams; i++)
		rc = sqlite3_bind_text(st, i + 1, params[i], -1, SQLITE_TRANSIENT);
	if (rc != SQLITE_OK) {
		reply_sqlite_err(r, rc, sqlite3_errmsg(g_adb.db), NULL);
		sqlite3_finalize(st);
		return;
	}
	reply_run_stmt(r, g_adb.db, st);
}
