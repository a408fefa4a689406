/*
 * stmts.c: owns one session's table of prepared statements (see stmts.h):
 * adding a statement from the PREPARE in flight, finding and forgetting
 * one, and the bookkeeping each statement command does to the table.
 */
#include "session/stmts.h"

#include <stdlib.h>
#include <string.h>

#include "session/stmtreg.h"

struct stmt_info *stmts_find(struct stmt_table *t, uint32_t id)
{
	if (id == STMT_ID_LAST)
		id = t->last_id;
	if (id == 0)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].id == id)
			return &t->v[i];
	return NULL;
}

static void info_free(struct stmt_info *s)
{
	free(s->text);
	free(s->types);
	free(s->kept);
	sv_free(&s->ctx);
	stmtreg_release(s->serial);
}

void stmts_forget(struct stmt_table *t, uint32_t id)
{
	struct stmt_info *s = stmts_find(t, id);

	if (!s)
		return;
	if (s->id == t->last_id)
		t->last_id = 0;
	info_free(s);
	*s = t->v[--t->n];
	t->cur = NULL;
}

struct stmt_info *stmts_add(struct stmt_table *t, uint32_t id, uint16_t nparams, uint64_t serial,
			    const struct sess_state *ctx)
{
	struct stmt_info *s;

	stmts_forget(t, id);
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		struct stmt_info *n = realloc(t->v, cap * sizeof(*n));

		if (!n) {
			stmtreg_release(serial);
			return NULL;
		}
		t->v = n;
		t->cap = cap;
		t->cur = NULL; /* it pointed into the old array */
	}
	s = &t->v[t->n];
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->serial = serial;
	s->nparams = nparams;
	s->text = malloc(t->prep_text.len + 1);
	s->types = nparams ? calloc(nparams, 2) : NULL;
	if (!s->text || (nparams && !s->types)) {
		free(s->text);
		free(s->types);
		stmtreg_release(serial);
		return NULL;
	}
	memcpy(s->text, t->prep_text.data, t->prep_text.len);
	s->text[t->prep_text.len] = 0;
	s->text_len = t->prep_text.len;
	/* its reading is the cache's, once it is prepared (cache_stmt_prepared):
	 * until then, facts that pin the session (SF_MULTI) */
	s->facts = (struct stmt_facts){ .first = KW_NONE, .seen = SF_MULTI };
	sv_init(&s->ctx);
	s->have_ctx = ctx && sv_copy(&s->ctx, ctx) == 0;
	t->n++;
	t->last_id = id;
	return s;
}

void stmts_clear(struct stmt_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		info_free(&t->v[i]);
	t->n = 0;
	t->cur = NULL;
	t->last_id = 0;
}

void stmts_free(struct stmt_table *t)
{
	stmts_clear(t);
	free(t->v);
	t->v = NULL;
	t->cap = 0;
	pbuf_free(&t->prep_text);
}

bool stmts_hold_conn(const struct stmt_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].cursor || t->v[i].long_data)
			return true;
	return false;
}

/* COM_STMT_EXECUTE: [1] id, [5] flags, [6] iterations, [10] null bitmap,
 * new_params_bound, then the types when it is 1. */
static void note_execute(struct stmt_table *t, const uint8_t *pl, uint32_t len)
{
	struct stmt_info *s = len >= 10 ? stmts_find(t, rd_u32(pl + 1)) : NULL;
	size_t bound;

	t->cur = s;
	if (!s || !s->nparams || !s->types)
		return;
	bound = 10 + ((size_t)s->nparams + 7) / 8;
	if (len > bound && pl[bound] && len >= bound + 1 + 2u * s->nparams) {
		memcpy(s->types, pl + bound + 1, 2u * s->nparams);
		s->have_types = true;
	}
}

/* COM_STMT_BULK_EXECUTE: [1] id, [5] flags, then the types when flags has
 * STMT_BULK_FLAG_SEND_TYPES (2 bytes each, as an execute's), then the rows
 * of parameters. */
#define BULK_SEND_TYPES 0x80
static void note_bulk(struct stmt_table *t, const uint8_t *pl, uint32_t len)
{
	struct stmt_info *s = len >= 7 ? stmts_find(t, rd_u32(pl + 1)) : NULL;

	t->cur = s;
	if (s && s->nparams && s->types && (rd_u16(pl + 5) & BULK_SEND_TYPES) &&
	    len >= 7 + 2u * s->nparams) {
		memcpy(s->types, pl + 7, 2u * s->nparams);
		s->have_types = true;
	}
}

void stmts_note_command(struct stmt_table *t, const uint8_t *pl, uint32_t len)
{
	struct stmt_info *s;

	switch (pl[0]) {
	case CMD_STMT_PREPARE:
		/* the server forgets its last statement as a PREPARE starts,
		 * and has a new one if it succeeds (stmts_add) */
		t->last_id = 0;
		t->prep_text.len = 0;
		if (pbuf_append(&t->prep_text, pl + 1, len - 1) < 0)
			t->prep_text.len = 0;
		break;
	case CMD_STMT_EXECUTE:
		note_execute(t, pl, len);
		break;
	case CMD_STMT_BULK_EXECUTE:
		note_bulk(t, pl, len);
		break;
	case CMD_STMT_CLOSE:
		if (len >= 5)
			stmts_forget(t, rd_u32(pl + 1));
		break;
	case CMD_STMT_SEND_LONG_DATA:
	case CMD_STMT_RESET:
		s = len >= 5 ? stmts_find(t, rd_u32(pl + 1)) : NULL;
		if (s) {
			s->long_data = pl[0] == CMD_STMT_SEND_LONG_DATA;
			if (pl[0] == CMD_STMT_RESET)
				s->cursor = false;
		}
		break;
	default:
		break;
	}
}
