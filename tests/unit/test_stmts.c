/*
 * test_stmts.c: unit tests for src/stmts.c, a session's table of prepared
 * statements: STMT_ID_LAST (0xffffffff, what mariadb_stmt_execute_direct
 * sends behind its PREPARE) finds the last statement prepared, and none
 * after a PREPARE that failed, after that statement's COM_STMT_CLOSE (by
 * its id or by STMT_ID_LAST) or a reset; closing another statement keeps
 * it (MariaDB's rules, checked against the server by 68-bulk.t); and
 * COM_STMT_BULK_EXECUTE becomes the current statement and keeps the
 * parameter types it sends.
 */
#include "session/stmts.h"
#include "session/stmtreg.h"
#include "tap.h"

#include <stdlib.h>

static uint8_t cmd[64];

static uint32_t cmd_id(uint8_t c, uint32_t id)
{
	cmd[0] = c;
	wr_u32(cmd + 1, id);
	return 5;
}

/* A PREPARE of text, answered OK as statement id (0: it failed). */
static void prepare(struct stmt_table *t, const char *text, uint32_t id, uint16_t nparams)
{
	size_t n = strlen(text);

	cmd[0] = CMD_STMT_PREPARE;
	memcpy(cmd + 1, text, n);
	stmts_note_command(t, cmd, (uint32_t)(n + 1));
	if (id)
		stmts_add(t, id, nparams, stmtreg_unique(), NULL);
}

static void test_last(void)
{
	struct stmt_table t = {0};
	struct stmt_info *s;

	ok(stmts_find(&t, STMT_ID_LAST) == NULL, "empty table: no last statement");
	prepare(&t, "SELECT 1", 1, 0);
	s = stmts_find(&t, STMT_ID_LAST);
	ok(s && s->id == 1, "after PREPARE: STMT_ID_LAST is it");
	prepare(&t, "SELECT 2", 2, 0);
	s = stmts_find(&t, STMT_ID_LAST);
	ok(s && s->id == 2, "a second PREPARE: STMT_ID_LAST is the new one");
	prepare(&t, "SELECT nosuch", 0, 0);
	ok(stmts_find(&t, STMT_ID_LAST) == NULL, "a PREPARE that failed: no last statement");
	ok(stmts_find(&t, 1) && stmts_find(&t, 2), "  the others are still known");
	prepare(&t, "SELECT 4", 4, 0);
	stmts_note_command(&t, cmd, cmd_id(CMD_STMT_CLOSE, 1));
	s = stmts_find(&t, STMT_ID_LAST);
	ok(s && s->id == 4, "closing another statement keeps the last");
	stmts_note_command(&t, cmd, cmd_id(CMD_STMT_CLOSE, 4));
	ok(stmts_find(&t, STMT_ID_LAST) == NULL, "closing the last one by its id: none");
	prepare(&t, "SELECT 5", 5, 0);
	stmts_note_command(&t, cmd, cmd_id(CMD_STMT_CLOSE, STMT_ID_LAST));
	ok(stmts_find(&t, 5) == NULL && stmts_find(&t, STMT_ID_LAST) == NULL,
	   "COM_STMT_CLOSE of STMT_ID_LAST closes the last statement");
	ok(stmts_find(&t, 2) != NULL, "  and only it");
	prepare(&t, "SELECT 6", 6, 0);
	stmts_clear(&t);
	ok(stmts_find(&t, STMT_ID_LAST) == NULL, "a reset: no last statement");
	ok(stmts_find(&t, 0) == NULL, "id 0 is never a statement");
	stmts_free(&t);
}

static void test_bulk_note(void)
{
	struct stmt_table t = {0};
	struct stmt_info *s;

	prepare(&t, "INSERT INTO t VALUES (?, ?)", 7, 2);
	/* id, flags SEND_TYPES, types LONG and VAR_STRING (unsigned: 0x8000) */
	cmd[0] = CMD_STMT_BULK_EXECUTE;
	wr_u32(cmd + 1, STMT_ID_LAST);
	wr_u16(cmd + 5, 0x80);
	wr_u16(cmd + 7, 0x8003);
	wr_u16(cmd + 9, 0x00fd);
	cmd[11] = 1; /* a row: NULL, NULL */
	cmd[12] = 1;
	stmts_note_command(&t, cmd, 13);
	s = stmts_find(&t, 7);
	ok(s && t.cur == s, "a bulk execute of STMT_ID_LAST: the statement is current");
	ok(s && s->have_types && rd_u16(s->types) == 0x8003 && rd_u16(s->types + 2) == 0x00fd,
	   "  its parameter types are kept");
	wr_u16(cmd + 5, 0);
	wr_u16(cmd + 7, 0x0008);
	stmts_note_command(&t, cmd, 13);
	ok(s && rd_u16(s->types) == 0x8003, "a bulk execute without types keeps the last ones");
	stmts_note_command(&t, cmd, 6);
	ok(t.cur == NULL, "a bulk execute too short for its flags: no current statement");
	stmts_free(&t);
}

/* A PREPARE answer as relayed to a classic client: OK (id 77, 1 column,
 * 1 parameter), the parameter, EOF, the column, EOF. */
static size_t answer(uint8_t *b, uint16_t warnings, uint16_t eof_status)
{
	static const uint8_t def[] = { 3, 'd', 'e', 'f', 0, 0, 0, 1, '?', 0 };
	size_t n = 0;

	wr_u24(b, 12); b[3] = 1;
	b[4] = 0; wr_u32(b + 5, 77); wr_u16(b + 9, 1); wr_u16(b + 11, 1); b[13] = 0;
	wr_u16(b + 14, warnings);
	n = 16;
	for (int part = 0; part < 2; part++) {
		wr_u24(b + n, sizeof(def)); b[n + 3] = (uint8_t)(2 + 2 * part);
		memcpy(b + n + 4, def, sizeof(def));
		n += 4 + sizeof(def);
		wr_u24(b + n, 5); b[n + 3] = (uint8_t)(3 + 2 * part);
		b[n + 4] = 0xfe; wr_u16(b + n + 5, 0); wr_u16(b + n + 7, eof_status);
		n += 9;
	}
	return n;
}

static void test_kept_answers(void)
{
	struct stmtreg_key k = { .user = "u", .caps = 0, .ctx = (const uint8_t *)"c", .ctx_len = 1,
				 .text = "SELECT a FROM t WHERE id = ?", .text_len = 28 };
	struct stmtreg_stamp then = { .gens = { 1, 2, 3, 4 }, .at_ms = 1000 }, now = then;
	struct stmtreg_given g = {0};
	struct pbuf out = {0};
	uint8_t a[128];
	size_t n = answer(a, 0, ST_AUTOCOMMIT);
	uint64_t serial = stmtreg_serial(&k);

	ok(!stmtreg_give_answer(&k, &now, 5000, 9, ST_AUTOCOMMIT, &out, &g) && out.len == 0,
	   "nothing kept: no answer given");
	stmtreg_keep_answer(serial, a, n, &then);
	ok(stmtreg_give_answer(&k, &now, 5000, 9, ST_AUTOCOMMIT | ST_IN_TRANS, &out, &g),
	   "the kept answer is given for the same key and stamp");
	ok(out.len == n && g.serial == serial && g.nparams == 1, "  whole, with its serial and parameter count");
	ok(out.len == n && rd_u32(out.data + 5) == 9, "  with the statement id asked for");
	ok(out.len == n && rd_u16(out.data + 16 + 14 + 7) == (ST_AUTOCOMMIT | ST_IN_TRANS) &&
	   rd_u16(out.data + n - 2) == (ST_AUTOCOMMIT | ST_IN_TRANS), "  its EOFs carry the session's status");
	out.len = 0;
	now.at_ms = 7000;
	ok(!stmtreg_give_answer(&k, &now, 5000, 9, 0, &out, &g), "older than the bound: not given");
	stmtreg_keep_answer(serial, a, n, &then);
	now.at_ms = 1000;
	now.gens[0]++;
	ok(!stmtreg_give_answer(&k, &now, 5000, 9, 0, &out, &g), "a generation moved (a DDL): not given");
	now.gens[0]--;
	ok(!stmtreg_give_answer(&k, &now, 5000, 9, 0, &out, &g) && out.len == 0,
	   "  and forgotten: not given after either");
	n = answer(a, 1, ST_AUTOCOMMIT);
	stmtreg_keep_answer(serial, a, n, &then);
	ok(!stmtreg_give_answer(&k, &now, 5000, 9, 0, &out, &g), "an answer with a warning is not kept");
	n = answer(a, 0, ST_AUTOCOMMIT);
	stmtreg_keep_answer(serial, a, n - 1, &then);
	ok(!stmtreg_give_answer(&k, &now, 5000, 9, 0, &out, &g), "a cut answer is not kept");
	stmtreg_keep_answer(serial, a, n, &then);
	k.caps = CAP_DEPRECATE_EOF;
	ok(!stmtreg_give_answer(&k, &now, 5000, 9, 0, &out, &g), "another key (capabilities): not given");
	k.caps = 0;
	ok(stmtreg_give_answer(&k, &now, 5000, 9, 0, &out, &g), "the same key again: given");
	stmtreg_release(serial);
	stmtreg_release(g.serial);
	stmtreg_release(serial);
	pbuf_free(&out);
}

/* Past STMTREG_ANSWERS_BYTES in all, answers are not kept. */
static void test_answers_budget(void)
{
	size_t big = 60000, n = PKT_HEADER_LEN + 12 + PKT_HEADER_LEN + big, given = 0;
	uint8_t *a = calloc(1, n);
	struct stmtreg_stamp st = { .gens = { 9 }, .at_ms = 1 };
	uint64_t serials[300];
	struct pbuf out = {0};
	char text[32];

	if (!a) {
		ok(0, "out of memory");
		return;
	}
	wr_u24(a, 12); a[3] = 1; wr_u16(a + 9, 1);           /* OK, 1 column, no warning */
	wr_u24(a + 16, (uint32_t)big); a[19] = 2;            /* its definition */
	for (int i = 0; i < 300; i++) {
		struct stmtreg_key k = { .user = "b", .ctx = (const uint8_t *)"", .text = text };
		struct stmtreg_given g;

		k.text_len = (size_t)snprintf(text, sizeof text, "SELECT %d", i);
		serials[i] = stmtreg_serial(&k);
		stmtreg_keep_answer(serials[i], a, n, &st);
		out.len = 0;
		if (stmtreg_give_answer(&k, &st, 1000, 1, 0, &out, &g)) {
			given++;
			stmtreg_release(g.serial);
		}
	}
	ok(given > 200 && given * n <= STMTREG_ANSWERS_BYTES,
	   "answers of 60 kB: %zu of 300 kept, %zu bytes in all (at most %u)", given, given * n,
	   STMTREG_ANSWERS_BYTES);
	for (int i = 0; i < 300; i++)
		stmtreg_release(serials[i]);
	pbuf_free(&out);
	free(a);
}

int main(void)
{
	test_last();
	test_answers_budget();
	test_bulk_note();
	test_kept_answers();
	return done_testing();
}
