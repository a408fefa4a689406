/*
 * binlog_rows.c: the follower's table maps and row events (see
 * binlog_rows.h): the maps remembered by table id, each rows event's images
 * decoded into values by column and matched against the index.
 */
#include "cache/binlog_rows.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cache/catalog.h"
#include "cache/fence.h"
#include "cache/match_index.h"
#include "cache/rowimage.h"
#include "cache/tablemap.h"
#include "cache/tcols.h"
#include "config/config.h"

#define MAP_SLOTS 256         /* remembered table maps (by table id) */
#define MAP_PROBES 8          /* slots a table id may take */
#define MAP_NAME_MAX 256
#define CLOSURE_MAX 64        /* tables a written table's closure may name */

/* A table map, remembered by the server's table id until the next map of
 * that id (each transaction maps its tables again). */
struct map_slot {
	uint64_t table_id;
	unsigned seq;                 /* the transaction (trx_set.seq) that mapped it last */
	bool used;
	unsigned loads;               /* catalog_loads() its closures were worked out under */
	uint16_t slen, nlen;
	char names[MAP_NAME_MAX];     /* schema then name, as in the event */
	struct inval_table *base;     /* the base table the catalog knows by its names */
	struct inval_table *t;        /* base, when this map was read: its rows are matched */
	uint32_t name_hash;
	struct tmap map;
	struct inval_table *cascade[CLOSURE_MAX];
	unsigned ncascade;
	bool cascade_known;           /* false: not known, an UPDATE or DELETE invalidates everything */
};

/* The values of the images being matched, by column (the follower's). */
struct decoded {
	struct rowimg_value *v;
	uint32_t *seen;
	uint32_t stamp;
	unsigned cap;
};

static struct map_slot slots[MAP_SLOTS];
static struct decoded img_vals[2];
static struct rowimg_scratch scratch;
static atomic_uint_fast64_t n_events, n_images, n_table_wide;

void trx_set_add(struct trx_set *s, struct inval_table *t, enum inval_why why)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->t[i] == t)
			return;   /* in it already */
	if (s->n == TRX_TABLES) {
		trx_set_all(s, why);   /* more than it holds: everything */
		return;
	}
	s->why[s->n] = (uint8_t)why;
	s->t[s->n++] = t;
}

void trx_set_all(struct trx_set *s, enum inval_why why)
{
	if (!s->all)
		s->all_why = (uint8_t)why;
	s->all = true;
}

/* The whole closure of a table the rows of which are not matched (what a
 * write to it also changes, triggers included), as before row precision. */
static void add_whole(struct trx_set *s, const struct rows_map_event *e, enum inval_why why)
{
	struct inval_table *also[CLOSURE_MAX];
	unsigned n = 0;
	bool opaque = false;

	catalog_write_closure(e->db, e->dlen, e->table, e->tlen, also, CLOSURE_MAX, &n, &opaque);
	for (unsigned i = 0; i < n; i++)
		trx_set_add(s, also[i], why);
	if (n == 0)
		trx_set_all(s, why);   /* not even the table itself could be named */
}

static bool same_names(const struct map_slot *m, const struct rows_map_event *e)
{
	return m->slen == e->dlen && m->nlen == e->tlen && memcmp(m->names, e->db, e->dlen) == 0 &&
	       memcmp(m->names + e->dlen, e->table, e->tlen) == 0;
}

/* The slot's base table and cascading closure, worked out once per table
 * id and catalog read. */
static void resolve(struct map_slot *m, const struct rows_map_event *e)
{
	unsigned loads = catalog_loads();   /* before the lookups: a newer read retires them */

	if (m->used && m->table_id == e->table_id && m->loads == loads && same_names(m, e))
		return;   /* worked out under this catalog read already */
	m->used = false;
	m->base = NULL;
	if (e->dlen + e->tlen > MAP_NAME_MAX)
		return;   /* not remembered: its rows go table-wide */
	m->base = catalog_base_table(e->db, e->dlen, e->table, e->tlen);
	m->cascade_known = m->base &&
			   catalog_cascade_closure(m->base, m->cascade, CLOSURE_MAX, &m->ncascade);
	m->name_hash = tcols_name_hash(e->db, e->dlen, e->table, e->tlen);
	m->table_id = e->table_id;
	m->loads = loads;
	m->slen = (uint16_t)e->dlen;
	m->nlen = (uint16_t)e->tlen;
	memcpy(m->names, e->db, e->dlen);
	memcpy(m->names + e->dlen, e->table, e->tlen);
	m->used = true;
}

/* The slot of table id in this transaction (seq), or with take a slot
 * for it (one of its probes not mapped in this transaction). NULL: none. */
static struct map_slot *slot_of(uint64_t id, unsigned seq, bool take)
{
	struct map_slot *free_slot = NULL;

	for (unsigned i = 0; i < MAP_PROBES; i++) {
		struct map_slot *m = &slots[(id + i) % MAP_SLOTS];

		if (m->used && m->table_id == id && (take || m->seq == seq))
			return m;
		if (take && !free_slot && (!m->used || m->seq != seq))
			free_slot = m;
	}
	return free_slot;
}

void rows_table_map(struct trx_set *s, const struct rows_map_event *e)
{
	struct map_slot *m = slot_of(e->table_id, s->seq, true);
	const uint8_t *body;
	size_t blen;
	char err[160] = "malformed";

	if (!catalog_ready() || !m) {
		/* a DDL since the catalog's last read may have added a cascading
		 * key, whose changes a row binlog does not log; or too many tables
		 * to tell their rows apart */
		trx_set_all(s, IW_A_UNKNOWN);
		return;
	}
	resolve(m, e);
	m->seq = s->seq;
	m->t = NULL;
	if (m->used && m->base && e->raw &&
	    rowimg_event_body(e->raw, e->len, e->checksum_len, &body, &blen) &&
	    tmap_parse(&m->map, body, blen, 0, err, sizeof(err)) == 0) {
		m->t = m->base;
		return;   /* its rows are matched */
	}
	if (m->used && m->base)
		log_warn("binlog: the table map of %.*s.%.*s cannot be read (%s): its writes invalidate it "
			 "whole", (int)e->dlen, e->db, (int)e->tlen, e->table, e->raw ? err : "no bytes");
	add_whole(s, e, m->used && m->base ? IW_T_UNREADABLE : IW_T_UNKNOWN);
}

bool rows_is_rows_event(unsigned type)
{
	struct rowimg_type t;

	return rowimg_event_type(type, &t);
}

/* Room for ncols values in d. */
static bool decoded_fit(struct decoded *d, unsigned ncols)
{
	struct rowimg_value *v;
	uint32_t *seen;

	if (ncols <= d->cap)
		return true;   /* room already */
	v = realloc(d->v, ncols * sizeof(*v));
	if (v)
		d->v = v;
	seen = v ? realloc(d->seen, ncols * sizeof(*seen)) : NULL;
	if (!seen)
		return false;   /* out of memory: the event goes table-wide */
	memset(seen + d->cap, 0, (ncols - d->cap) * sizeof(*seen));
	d->seen = seen;
	d->cap = ncols;
	return true;
}

/* One image's values into d, by column. */
static void decode_image(struct decoded *d, const struct rowimg_image *img)
{
	struct rowimg_cursor c;
	struct rowimg_value v;

	if (++d->stamp == 0) {   /* wrapped: forget every old stamp */
		memset(d->seen, 0, d->cap * sizeof(*d->seen));
		d->stamp = 1;
	}
	for (rowimg_cursor_init(&c, img); rowimg_cursor_next(&c, &v) > 0;)
		if (v.col < d->cap) {
			d->v[v.col] = v;
			d->seen[v.col] = d->stamp;
		}
}

/* Every image of an opened rows event, matched. -1 when one cannot be
 * read (err). */
static int match_images(struct map_slot *m, struct rowimg_rows *r, uint64_t *matched, uint64_t *unsure,
			char *err, size_t cap)
{
	struct rowimg_image img;
	struct match_img mi[2];
	int rc;

	while ((rc = rowimg_next(r, &img, err, cap)) > 0) {
		unsigned k = img.which == ROWIMG_AFTER && r->t.op == ROWIMG_UPDATE;

		decode_image(&img_vals[k], &img);
		mi[k] = (struct match_img){ .map = &m->map, .v = img_vals[k].v, .seen = img_vals[k].seen,
					    .stamp = img_vals[k].stamp, .name_hash = m->name_hash,
					    .before = k ? &mi[0] : NULL };
		match_index_row(m->t, &mi[k], matched, unsure);
		atomic_fetch_add_explicit(&n_images, 1, memory_order_relaxed);
	}
	return rc;
}

/* An UPDATE or DELETE of m's table changes its cascading children, which
 * the binlog does not show: they go whole. */
static void add_cascade(struct trx_set *s, const struct map_slot *m)
{
	if (!m->cascade_known) {
		trx_set_all(s, IW_T_CASCADE);
		return;
	}
	for (unsigned i = 0; i < m->ncascade; i++)
		trx_set_add(s, m->cascade[i], IW_T_CASCADE);
}

void rows_event(struct trx_set *s, const struct rows_event_bytes *ev, uint32_t end, int settle_ms)
{
	const uint8_t *body;
	size_t blen;
	struct rowimg_type rt;
	struct rowimg_rows r;
	struct map_slot *m;
	uint64_t id, matched = 0, unsure = 0;
	char err[160] = "no bytes";

	if (!rowimg_event_type(ev->type, &rt) || !ev->raw ||
	    !rowimg_event_body(ev->raw, ev->len, ev->checksum_len, &body, &blen) || blen < 6) {
		trx_set_all(s, IW_T_UNREADABLE);   /* whose rows, is not even known */
		return;
	}
	id = (uint64_t)body[0] | (uint64_t)body[1] << 8 | (uint64_t)body[2] << 16 |
	     (uint64_t)body[3] << 24 | (uint64_t)body[4] << 32 | (uint64_t)body[5] << 40;
	m = slot_of(id, s->seq, false);
	if (!m) {
		trx_set_all(s, IW_T_UNREADABLE);   /* no map of its table: not known whose rows */
		return;
	}
	if (!m->t)
		return;   /* its table goes whole already (its table map) */
	if (rt.op != ROWIMG_WRITE)
		add_cascade(s, m);
	/* the fence first, then gen: a snapshot that sees the new gen sees it */
	inval_row_fenced(m->t, fence_pos_here(end), settle_ms);
	if (g_config.invalidation_granularity == GRANULARITY_TABLE) {
		trx_set_add(s, m->t, IW_T_GRANULARITY);   /* row precision turned off: the table goes whole */
		atomic_fetch_add_explicit(&n_events, 1, memory_order_relaxed);
		return;
	}
	if (!decoded_fit(&img_vals[0], m->map.ncols) || !decoded_fit(&img_vals[1], m->map.ncols) ||
	    rowimg_open(&r, &m->map, ev->type, body, blen, 0, &scratch, err, sizeof(err)) < 0 ||
	    match_images(m, &r, &matched, &unsure, err, sizeof(err)) < 0) {
		log_warn("binlog: a rows event of %.*s.%.*s cannot be read (%s): the table is invalidated whole",
			 (int)m->slen, m->names, (int)m->nlen, m->names + m->slen, err);
		trx_set_add(s, m->t, IW_T_UNREADABLE);
		atomic_fetch_add_explicit(&n_table_wide, 1, memory_order_relaxed);
	}
	inval_count_why(IW_ROW_MATCH, matched);
	inval_count_why(IW_ROW_UNSURE, unsure);
	atomic_fetch_add_explicit(&n_events, 1, memory_order_relaxed);
}

void rows_get_stats(struct rows_stats *out)
{
	out->events = atomic_load_explicit(&n_events, memory_order_relaxed);
	out->images = atomic_load_explicit(&n_images, memory_order_relaxed);
	out->table_wide = atomic_load_explicit(&n_table_wide, memory_order_relaxed);
}
