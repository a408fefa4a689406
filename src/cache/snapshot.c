/*
 * snapshot.c: writing the cache's snapshot file and reading one back
 * (the format is in snapshot.h). The writer walks the store once, shard by
 * shard, and writes each entry's shape, settings and user records the
 * first time an entry names them. The reader checks a whole file before it
 * hands any of it over.
 */
#include "cache/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "cache/binlog.h"
#include "cache/inval.h"
#include "cache/match.h"
#include "cache/registry.h"
#include "cache/settings.h"
#include "cache/store.h"
#include "config/config.h"
#include "base/log.h"
#include "proto/packet.h"
#include "upstream/users.h"

#define MAGIC "SHOALSNP"
#define MAGIC_LEN 8
#define KEY_HEAD 10                  /* kind, capabilities, settings id, user id */
#define SETTINGS_MAX 8192            /* one settings list, bytes */
#define GTID_MAX 2048

/* ------------------------------------------------------------ id sets */

/* Open addressing, u64 key (never 0) to u32 value. */
struct idset {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;
};

static size_t idset_slot(const struct idset *s, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 20) & (s->cap - 1);

	while (s->keys[i] && s->keys[i] != key)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static bool idset_get(const struct idset *s, uint64_t key, uint32_t *val)
{
	size_t i;

	if (!s->cap)
		return false;
	i = idset_slot(s, key);
	if (!s->keys[i])
		return false;
	if (val)
		*val = s->vals[i];
	return true;
}

static int idset_put(struct idset *s, uint64_t key, uint32_t val)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap) {
		struct idset g = { .cap = s->cap ? 2 * s->cap : 64 };

		g.keys = calloc(g.cap, sizeof *g.keys);
		g.vals = calloc(g.cap, sizeof *g.vals);
		if (!g.keys || !g.vals) {
			free(g.keys);
			free(g.vals);
			return -1;
		}
		for (size_t j = 0; j < s->cap; j++)
			if (s->keys[j]) {
				i = idset_slot(&g, s->keys[j]);
				g.keys[i] = s->keys[j];
				g.vals[i] = s->vals[j];
			}
		g.n = s->n;
		free(s->keys);
		free(s->vals);
		*s = g;
	}
	i = idset_slot(s, key);
	if (!s->keys[i])
		s->n++;
	s->keys[i] = key;
	s->vals[i] = val;
	return 0;
}

static void idset_free(struct idset *s)
{
	free(s->keys);
	free(s->vals);
	*s = (struct idset){ 0 };
}

/* ------------------------------------------------------------ encoding */

static int put_u64(struct pbuf *b, uint64_t v)
{
	uint8_t x[8];

	for (int i = 0; i < 8; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	return pbuf_append(b, x, 8);
}

/* A string of up to 65535 bytes (longer: cut there). */
static int put_str(struct pbuf *b, const char *s, size_t n)
{
	if (n > UINT16_MAX)
		n = UINT16_MAX;
	return put_u16(b, (uint16_t)n) | pbuf_append(b, s, n);
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint32_t crc_of(const uint8_t *p, size_t n)
{
	uLong c = crc32(0L, Z_NULL, 0);

	while (n > 0) {
		uInt part = n > (1u << 30) ? (1u << 30) : (uInt)n;

		c = crc32(c, p, part);
		p += part;
		n -= part;
	}
	return (uint32_t)c;
}

/* ------------------------------------------------------------ writing */

struct writer {
	FILE *f;
	struct pbuf rec;              /* the record being built */
	struct idset shapes, settings, users;
	uint32_t next_shape;
	int64_t now_ms;
	struct timespec deadline;
	uint64_t walked;
	struct snapshot_stats *st;
	char *err;
	size_t cap;
	bool durable;                 /* a file: fsync it (a peer's copy is not) */
	bool keys_only;               /* leave the results out (SNAPSHOT_KEYS_ONLY) */
};

static bool past(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static int fail(struct writer *w, const char *what)
{
	snprintf(w->err, w->cap, "%s", what);
	return -1;
}

/* Frame w->rec as a record of kind and write it. */
static int emit(struct writer *w, uint8_t kind)
{
	uint8_t head[5];
	uint8_t crc[4];
	uLong c = crc32(0L, Z_NULL, 0);

	if (w->rec.len > UINT32_MAX)
		return fail(w, "a record over 4 GiB");
	head[0] = kind;
	wr_u32(head + 1, (uint32_t)w->rec.len);
	c = crc32(c, head, 5);
	if (w->rec.len)
		c = crc32(c, w->rec.data, (uInt)w->rec.len);
	wr_u32(crc, (uint32_t)c);
	if (fwrite(head, 1, 5, w->f) != 5 || (w->rec.len && fwrite(w->rec.data, 1, w->rec.len, w->f) != w->rec.len) ||
	    fwrite(crc, 1, 4, w->f) != 4)
		return fail(w, strerror(errno));
	w->st->file_bytes += 9 + w->rec.len;
	w->rec.len = 0;
	return 0;
}

/* The settings list id names, written once: 1, 0 when it is not known
 * (the entry is left out), -1 on an error. */
static int note_settings(struct writer *w, uint32_t id)
{
	static __thread uint8_t list[SETTINGS_MAX];
	size_t n;

	if (idset_get(&w->settings, id, NULL))
		return 1;
	n = settings_get(id, list, sizeof list);
	if (n == 0)
		return 0;
	if (put_u32(&w->rec, id) || pbuf_append(&w->rec, list, n) || emit(w, 'S') ||
	    idset_put(&w->settings, id, 1))
		return -1;
	return 1;
}

static int note_user(struct writer *w, uint32_t id)
{
	char name[USERS_NAME_MAX];

	if (id == 0 || idset_get(&w->users, id, NULL))
		return 1;
	if (!users_account_name(id, name, sizeof name))
		return 0;
	if (put_u32(&w->rec, id) || put_str(&w->rec, name, strlen(name)) || emit(w, 'U') ||
	    idset_put(&w->users, id, 1))
		return -1;
	return 1;
}

/* The shape's index, its 'D' written the first time. -1 on an error. */
static int64_t note_shape(struct writer *w, const struct cache_def *d)
{
	uint32_t idx;
	const char *text = d->query_text ? d->query_text : "";

	if (idset_get(&w->shapes, (uint64_t)(uintptr_t)d, &idx))
		return idx;
	idx = w->next_shape++;
	if (put_u32(&w->rec, idx) || put_u64(&w->rec, d->digest) ||
	    put_u8(&w->rec, atomic_load(&d->explicit_cache) ? 1 : 0) ||
	    put_u32(&w->rec, (uint32_t)atomic_load(&d->ttl_ms)) ||
	    put_u32(&w->rec, (uint32_t)atomic_load(&d->refresh_ms)) || put_str(&w->rec, d->name, strlen(d->name)) ||
	    put_str(&w->rec, text, strlen(text)) || emit(w, 'D') ||
	    idset_put(&w->shapes, (uint64_t)(uintptr_t)d, idx))
		return -1;
	w->st->shapes++;
	return idx;
}

/* The ids e's key names have their records: 1; 0 when one is not known
 * (e is left out); -1 on an error. */
static int note_key_ids(struct writer *w, const struct cache_entry *e)
{
	const uint8_t *key = entry_key(e), *nul;
	int rc;

	if (e->key_len < KEY_HEAD || (key[0] != 'Q' && key[0] != 'B'))
		return 0;
	rc = note_settings(w, rd_u32(key + 2));
	if (rc <= 0)
		return rc;
	rc = note_user(w, rd_u32(key + 6));
	if (rc <= 0 || key[0] == 'Q')
		return rc;
	nul = memchr(key + KEY_HEAD, 0, e->key_len - KEY_HEAD);
	if (!nul || (size_t)(nul - key) + 5 > e->key_len)
		return 0;
	return note_settings(w, rd_u32(nul + 1));
}

static int put_entry(struct writer *w, const struct cache_entry *e, uint32_t shape)
{
	const struct inval_dep *deps = entry_deps(e);
	int rc = put_u32(&w->rec, shape) | put_u64(&w->rec, (uint64_t)(e->expires_ms - w->now_ms)) |
		 put_u32(&w->rec, e->upstream_us) | put_u32(&w->rec, e->rows) |
		 put_u64(&w->rec, (uint64_t)atomic_load(&e->hits)) |
		 put_u16(&w->rec, w->keys_only ? 0 : e->status_off[0]) |
		 put_u16(&w->rec, w->keys_only ? 0 : e->status_off[1]) | put_u16(&w->rec, e->ndeps);

	for (unsigned i = 0; i < e->ndeps; i++) {
		const char *schema = inval_table_schema(deps[i].t), *table = inval_table_name(deps[i].t);

		rc |= put_str(&w->rec, schema, strlen(schema)) | put_str(&w->rec, table, strlen(table));
	}
	rc |= put_u32(&w->rec, e->key_len) | pbuf_append(&w->rec, entry_key(e), e->key_len);
	if (w->keys_only)
		rc |= put_u32(&w->rec, 0);
	else
		rc |= put_u32(&w->rec, e->resp_len) | pbuf_append(&w->rec, entry_resp(e), e->resp_len);
	rc |= put_u16(&w->rec, e->cons_len) | pbuf_append(&w->rec, &e->ntab, 1) |
	      pbuf_append(&w->rec, &e->npost, 1) | pbuf_append(&w->rec, entry_cons(e), e->cons_len);
	if (rc)
		return fail(w, "out of memory");
	return emit(w, 'E');
}

/* store_each's callback: one entry (the shard's lock is held). */
static int write_entry(const struct cache_entry *e, void *arg)
{
	struct writer *w = arg;
	int64_t shape;
	int rc;

	if ((++w->walked & 255) == 0 && past(&w->deadline))
		return fail(w, "it took longer than snapshot_write_timeout_ms");
	rc = note_key_ids(w, e);
	if (rc < 0)
		return w->err[0] ? -1 : fail(w, "out of memory");
	if (rc == 0) {
		w->st->skipped++; /* its settings or user are gone */
		return 0;
	}
	shape = note_shape(w, e->def);
	if (shape < 0)
		return w->err[0] ? -1 : fail(w, "out of memory");
	if (put_entry(w, e, (uint32_t)shape) < 0)
		return -1;
	w->st->entries++;
	w->st->bytes += e->key_len + (w->keys_only ? 0 : e->resp_len);
	return 0;
}

static int write_header(struct writer *w)
{
	char upstream[320], gtid[GTID_MAX] = "";
	uint32_t server_id = 0;
	struct timespec now;
	enum inval_mode mode = inval_mode();
	const char *mode_name = inval_mode_name(mode);
	uint8_t crc[4];
	int rc;

	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(upstream, sizeof upstream, "%s:%u", g_config.upstream_host, g_config.upstream_port);
	if (mode == INVAL_BINLOG && !binlog_identity(&server_id, gtid, sizeof gtid)) {
		gtid[0] = 0;
		server_id = 0;
	}
	rc = pbuf_append(&w->rec, MAGIC, MAGIC_LEN) | put_u32(&w->rec, SNAPSHOT_VERSION) |
	     put_u32(&w->rec, w->keys_only ? SNAPSHOT_KEYS_ONLY : 0) |
	     put_u64(&w->rec, (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000) |
	     put_str(&w->rec, SHOAL_VERSION, strlen(SHOAL_VERSION)) | put_str(&w->rec, upstream, strlen(upstream)) |
	     put_u32(&w->rec, server_id) | put_str(&w->rec, mode_name, strlen(mode_name)) |
	     put_str(&w->rec, gtid, strlen(gtid));
	if (rc)
		return fail(w, "out of memory");
	wr_u32(crc, crc_of(w->rec.data, w->rec.len));
	if (fwrite(w->rec.data, 1, w->rec.len, w->f) != w->rec.len || fwrite(crc, 1, 4, w->f) != 4)
		return fail(w, strerror(errno));
	w->st->file_bytes += w->rec.len + 4;
	w->rec.len = 0;
	return 0;
}

/* Header, entries, end record; then flushed and synced. */
static int write_all(struct writer *w)
{
	if (write_header(w) < 0)
		return -1;
	if (store_each(w->now_ms, write_entry, w) != 0)
		return -1;
	if (put_u64(&w->rec, w->st->entries) || put_u64(&w->rec, w->st->bytes))
		return fail(w, "out of memory");
	if (emit(w, 'Z') < 0)
		return -1;
	if (fflush(w->f) != 0 || (w->durable && fsync(fileno(w->f)) != 0))
		return fail(w, strerror(errno));
	if (past(&w->deadline))
		return fail(w, "it took longer than snapshot_write_timeout_ms");
	return 0;
}

/* The folder of path, synced so that the rename lasts. */
static int sync_folder(const char *path)
{
	char copy[1024];
	int fd, rc;

	snprintf(copy, sizeof copy, "%s", path);
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

static FILE *open_temp(const char *tmp, struct writer *w)
{
	int fd;
	FILE *f;

	if (unlink(tmp) != 0 && errno != ENOENT) {
		snprintf(w->err, w->cap, "cannot remove %s: %s", tmp, strerror(errno));
		return NULL;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fchmod(fd, 0600) != 0) {
		snprintf(w->err, w->cap, "cannot create %s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	f = fdopen(fd, "wb");
	if (!f) {
		snprintf(w->err, w->cap, "cannot write %s: %s", tmp, strerror(errno));
		close(fd);
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

/* A writer for st and err, its deadline timeout_ms from *t0 (now). */
static void writer_init(struct writer *w, int64_t now_ms, int timeout_ms, struct snapshot_stats *st,
			char *err, size_t cap, struct timespec *t0)
{
	*w = (struct writer){ .now_ms = now_ms, .st = st, .err = err, .cap = cap };
	*st = (struct snapshot_stats){ 0 };
	err[0] = 0;
	clock_gettime(CLOCK_MONOTONIC, t0);
	w->deadline = *t0;
	w->deadline.tv_sec += timeout_ms / 1000;
	w->deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (w->deadline.tv_nsec >= 1000000000L) {
		w->deadline.tv_sec++;
		w->deadline.tv_nsec -= 1000000000L;
	}
}

static void writer_free(struct writer *w, const struct timespec *t0)
{
	pbuf_free(&w->rec);
	idset_free(&w->shapes);
	idset_free(&w->settings);
	idset_free(&w->users);
	w->st->seconds = seconds_since(t0);
}

int snapshot_write(const char *path, bool keys_only, int64_t now_ms, int timeout_ms,
		   struct snapshot_stats *st, char *err, size_t cap)
{
	struct writer w;
	char tmp[1100];
	struct timespec t0;
	int rc;

	writer_init(&w, now_ms, timeout_ms, st, err, cap, &t0);
	w.durable = true;
	w.keys_only = keys_only;
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
		snprintf(err, cap, "the path is too long");
		return -1;
	}
	w.f = open_temp(tmp, &w);
	if (!w.f)
		return -1;
	rc = write_all(&w);
	if (fclose(w.f) != 0 && rc == 0)
		rc = fail(&w, strerror(errno));
	if (rc == 0 && rename(tmp, path) != 0)
		rc = fail(&w, strerror(errno));
	if (rc != 0)
		unlink(tmp);
	else if (sync_folder(path) != 0)
		rc = fail(&w, "written, but its folder could not be synced");
	writer_free(&w, &t0);
	return rc;
}

int snapshot_write_stream(FILE *f, int64_t now_ms, int timeout_ms, struct snapshot_stats *st, char *err,
			  size_t cap)
{
	struct writer w;
	struct timespec t0;
	int rc;

	writer_init(&w, now_ms, timeout_ms, st, err, cap, &t0);
	w.f = f;
	rc = write_all(&w);
	writer_free(&w, &t0);
	return rc;
}

/* ------------------------------------------------------------ reading */

struct reader {
	const uint8_t *base, *p, *end;
	char *err;
	size_t cap;
};

/* What a check found: the ids and shapes records so far have named. */
struct refs {
	struct idset settings, users;
	uint32_t shapes;
	bool keys_only;               /* the header's SNAPSHOT_KEYS_ONLY */
	uint32_t version;             /* the header's format version */
};

static int bad(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, r->cap, "at byte %zu: ", (size_t)(r->p - r->base));

	if (n < 0 || (size_t)n >= r->cap)
		return -1;
	va_start(ap, fmt);
	vsnprintf(r->err + n, r->cap - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static bool take(struct reader *r, size_t n, const uint8_t **out)
{
	if ((size_t)(r->end - r->p) < n)
		return false;
	*out = r->p;
	r->p += n;
	return true;
}

static bool take_u16(struct reader *r, uint16_t *v)
{
	const uint8_t *p;

	if (!take(r, 2, &p))
		return false;
	*v = rd_u16(p);
	return true;
}

static bool take_u32(struct reader *r, uint32_t *v)
{
	const uint8_t *p;

	if (!take(r, 4, &p))
		return false;
	*v = rd_u32(p);
	return true;
}

static bool take_u64(struct reader *r, uint64_t *v)
{
	const uint8_t *p;

	if (!take(r, 8, &p))
		return false;
	*v = get_u64(p);
	return true;
}

static bool take_str(struct reader *r, const char **s, size_t *n)
{
	uint16_t len;
	const uint8_t *p;

	if (!take_u16(r, &len) || !take(r, len, &p))
		return false;
	*s = (const char *)p;
	*n = len;
	return true;
}

/* A string into out, NUL-terminated: false when it does not fit or holds
 * a NUL. */
static bool take_cstr(struct reader *r, char *out, size_t cap)
{
	const char *s;
	size_t n;

	if (!take_str(r, &s, &n) || n >= cap || memchr(s, 0, n))
		return false;
	memcpy(out, s, n);
	out[n] = 0;
	return true;
}

static int read_header(struct reader *r, struct snapshot_header *h)
{
	const uint8_t *start = r->p, *magic;
	uint32_t flags, crc;
	uint64_t written;

	if (!take(r, MAGIC_LEN, &magic) || memcmp(magic, MAGIC, MAGIC_LEN) != 0)
		return bad(r, "not a Shoal cache snapshot (no SHOALSNP magic)");
	if (!take_u32(r, &h->version) || !take_u32(r, &flags))
		return bad(r, "the header is cut short");
	if (h->version < SNAPSHOT_VERSION_MIN || h->version > SNAPSHOT_VERSION)
		return bad(r, "format version %" PRIu32 " (this node reads versions %d to %d)", h->version,
			   SNAPSHOT_VERSION_MIN, SNAPSHOT_VERSION);
	if (flags & ~SNAPSHOT_KEYS_ONLY)
		return bad(r, "unknown header flags 0x%" PRIx32, flags);
	h->keys_only = (flags & SNAPSHOT_KEYS_ONLY) != 0;
	if (!take_u64(r, &written) || !take_cstr(r, h->node_version, sizeof h->node_version) ||
	    !take_cstr(r, h->upstream, sizeof h->upstream) || !take_u32(r, &h->server_id) ||
	    !take_cstr(r, h->mode, sizeof h->mode) || !take_cstr(r, h->gtid, sizeof h->gtid))
		return bad(r, "the header is cut short or a field of it is too long");
	h->written_ms = (int64_t)written;
	crc = crc_of(start, (size_t)(r->p - start));
	if (!take_u32(r, &flags))
		return bad(r, "the header is cut short");
	if (flags != crc)
		return bad(r, "the header's checksum does not match");
	return 0;
}

static int read_settings(struct reader *r, const struct snapshot_visitor *v, struct refs *refs)
{
	uint32_t id;

	if (!take_u32(r, &id) || id == 0)
		return bad(r, "a settings record without an id");
	if (r->end - r->p > SETTINGS_MAX)
		return bad(r, "a settings list over %d bytes", SETTINGS_MAX);
	if (idset_get(&refs->settings, id, NULL))
		return bad(r, "settings id %" PRIu32 " twice", id);
	if (idset_put(&refs->settings, id, 1))
		return bad(r, "out of memory");
	if (v && v->settings)
		return v->settings(id, r->p, (size_t)(r->end - r->p), v->arg);
	r->p = r->end;
	return 0;
}

static int read_user(struct reader *r, const struct snapshot_visitor *v, struct refs *refs)
{
	uint32_t id;
	const char *name;
	size_t n;

	if (!take_u32(r, &id) || id == 0 || !take_str(r, &name, &n) || n == 0 || n >= USERS_NAME_MAX ||
	    memchr(name, 0, n) || r->p != r->end)
		return bad(r, "a malformed user record");
	if (idset_get(&refs->users, id, NULL))
		return bad(r, "user id %" PRIu32 " twice", id);
	if (idset_put(&refs->users, id, 1))
		return bad(r, "out of memory");
	return v && v->user ? v->user(id, name, n, v->arg) : 0;
}

static int read_shape(struct reader *r, const struct snapshot_visitor *v, struct refs *refs)
{
	struct snapshot_shape d = { 0 };
	uint32_t ttl, refresh;
	const uint8_t *flag;

	if (!take_u32(r, &d.index) || !take_u64(r, &d.digest) || !take(r, 1, &flag) || !take_u32(r, &ttl) ||
	    !take_u32(r, &refresh) || !take_str(r, &d.name, &d.name_len) || !take_str(r, &d.text, &d.text_len) ||
	    r->p != r->end || *flag > 1 || d.name_len >= DEF_NAME_MAX)
		return bad(r, "a malformed shape record");
	if (d.index != refs->shapes)
		return bad(r, "shape %" PRIu32 " out of order (%" PRIu32 " expected)", d.index, refs->shapes);
	refs->shapes++;
	d.explicit_cache = *flag;
	d.ttl_ms = (int32_t)ttl;
	d.refresh_ms = (int32_t)refresh;
	return v && v->shape ? v->shape(&d, v->arg) : 0;
}

/* An entry's dependencies: ndeps pairs of names that fit a table's key. */
static bool take_deps(struct reader *r, struct snapshot_entry *e)
{
	e->deps = r->p;
	for (unsigned i = 0; i < e->ndeps; i++) {
		const char *s, *t;
		size_t sn, tn;

		if (!take_str(r, &s, &sn) || !take_str(r, &t, &tn) || tn == 0 || sn + tn + 2 > INVAL_MAX_NAME ||
		    memchr(s, 0, sn) || memchr(t, 0, tn))
			return false;
	}
	e->deps_len = (size_t)(r->p - e->deps);
	return true;
}

/* The ids e's key names are known. */
static bool key_ids_known(const struct snapshot_entry *e, const struct refs *refs)
{
	uint32_t user = rd_u32(e->key + 6);
	const uint8_t *nul;

	if (!idset_get(&refs->settings, rd_u32(e->key + 2), NULL) || (user && !idset_get(&refs->users, user, NULL)))
		return false;
	if (e->key[0] == 'Q')
		return true;
	nul = memchr(e->key + KEY_HEAD, 0, e->key_len - KEY_HEAD);
	return nul && (size_t)(nul - e->key) + 5 <= e->key_len && idset_get(&refs->settings, rd_u32(nul + 1), NULL);
}

/* An entry's row constraints (version 2): sound, or none at all. */
static bool take_cons(struct reader *r, struct snapshot_entry *e, uint32_t version)
{
	const uint8_t *n;

	if (version < 2)
		return true;   /* version 1: none */
	if (!take_u16(r, &e->cons_len) || e->cons_len > MATCH_CONS_MAX || !take(r, 2, &n) ||
	    !take(r, e->cons_len, &e->cons))
		return false;   /* cut short, or more than an entry keeps */
	e->ntab = n[0];
	e->npost = n[1];
	if (!e->cons_len)
		e->cons = NULL;
	return !e->cons_len || match_blob_valid(e->cons, e->cons_len, e->ntab, e->npost, e->ndeps);
}

static int read_entry(struct reader *r, const struct snapshot_visitor *v, struct refs *refs,
		      struct snapshot_stats *st)
{
	struct snapshot_entry e = { 0 };
	uint64_t ttl;

	if (!take_u32(r, &e.shape) || !take_u64(r, &ttl) || !take_u32(r, &e.upstream_us) || !take_u32(r, &e.rows) ||
	    !take_u64(r, &e.hits) || !take_u16(r, &e.status_off[0]) || !take_u16(r, &e.status_off[1]) ||
	    !take_u16(r, &e.ndeps) || e.ndeps > INVAL_MAX_DEPS || !take_deps(r, &e) || !take_u32(r, &e.key_len) ||
	    !take(r, e.key_len, &e.key) || !take_u32(r, &e.resp_len) || !take(r, e.resp_len, &e.resp) ||
	    !take_cons(r, &e, refs->version) || r->p != r->end)
		return bad(r, "a malformed entry record");
	e.ttl_left_ms = (int64_t)ttl;
	if (e.shape >= refs->shapes)
		return bad(r, "an entry of shape %" PRIu32 ", which no record before it defines", e.shape);
	if (e.key_len < KEY_HEAD || (e.key[0] != 'Q' && e.key[0] != 'B') || !key_ids_known(&e, refs))
		return bad(r, "an entry whose key names settings or a user no record before it defines");
	if (refs->keys_only ? e.resp_len != 0 || e.status_off[0] || e.status_off[1]
			 : e.resp_len == 0 || e.status_off[0] >= e.resp_len || e.status_off[1] >= e.resp_len)
		return bad(r, refs->keys_only ? "an entry with a result in a file of keys only"
					   : "an entry whose result is empty or whose status offsets lie outside it");
	st->entries++;
	st->bytes += (uint64_t)e.key_len + e.resp_len;
	return v && v->entry ? v->entry(&e, v->arg) : 0;
}

static int read_end(struct reader *r, const struct snapshot_stats *st)
{
	uint64_t entries, bytes;

	if (!take_u64(r, &entries) || !take_u64(r, &bytes) || r->p != r->end)
		return bad(r, "a malformed end record");
	if (entries != st->entries || bytes != st->bytes)
		return bad(r, "the end record counts %" PRIu64 " entries of %" PRIu64 " bytes, the file holds %" PRIu64
			   " of %" PRIu64, entries, bytes, st->entries, st->bytes);
	return 0;
}

/* One record: framed, checksummed, then read by its kind. 1 after the end
 * record, 0 after another, -1 (or a callback's value) on an error. */
static int read_record(struct reader *r, const struct snapshot_visitor *v, struct refs *refs,
		       struct snapshot_stats *st)
{
	const uint8_t *head, *payload;
	uint32_t len, crc;
	struct reader sub;
	int rc;

	if (r->p == r->end)
		return bad(r, "the file is cut short: no end record");
	if (!take(r, 5, &head) || !take(r, rd_u32(head + 1), &payload) || !take_u32(r, &crc))
		return bad(r, "the file is cut short inside a record");
	len = rd_u32(head + 1);
	if (crc != crc_of(head, 5 + (size_t)len))
		return bad(r, "a record's checksum does not match");
	sub = (struct reader){ .base = r->base, .p = payload, .end = payload + len, .err = r->err, .cap = r->cap };
	switch (head[0]) {
	case 'S': rc = read_settings(&sub, v, refs); break;
	case 'U': rc = read_user(&sub, v, refs); break;
	case 'D': rc = read_shape(&sub, v, refs); break;
	case 'E': rc = read_entry(&sub, v, refs, st); break;
	case 'Z':
		rc = read_end(&sub, st);
		if (rc == 0 && r->p != r->end)
			return bad(r, "bytes after the end record");
		return rc == 0 ? 1 : rc;
	default: return bad(&sub, "unknown record kind 0x%02x", head[0]);
	}
	return rc;
}

static int parse_pass(const uint8_t *buf, size_t len, const struct snapshot_visitor *v,
		      struct snapshot_stats *st, char *err, size_t cap)
{
	struct reader r = { .base = buf, .p = buf, .end = buf + len, .err = err, .cap = cap };
	struct snapshot_header h;
	struct refs refs = { 0 };
	int rc = read_header(&r, &h);

	refs.keys_only = rc == 0 && h.keys_only;
	refs.version = rc == 0 ? h.version : 0;
	*st = (struct snapshot_stats){ .file_bytes = len };
	if (rc == 0 && v && v->header)
		rc = v->header(&h, v->arg);
	while (rc == 0)
		rc = read_record(&r, v, &refs, st);
	st->shapes = refs.shapes;
	idset_free(&refs.settings);
	idset_free(&refs.users);
	return rc == 1 ? 0 : rc;
}

int snapshot_parse(const uint8_t *buf, size_t len, const struct snapshot_visitor *v,
		   struct snapshot_stats *st, char *err, size_t cap)
{
	int rc;

	err[0] = 0;
	rc = parse_pass(buf, len, NULL, st, err, cap);
	if (rc != 0 || !v)
		return rc;
	return parse_pass(buf, len, v, st, err, cap);
}

bool snapshot_entry_dep(const struct snapshot_entry *e, unsigned i, const char **schema,
			size_t *slen, const char **table, size_t *tlen)
{
	struct reader r = { .base = e->deps, .p = e->deps, .end = e->deps + e->deps_len };

	if (i >= e->ndeps)
		return false;
	for (unsigned k = 0; k <= i; k++)
		if (!take_str(&r, schema, slen) || !take_str(&r, table, tlen))
			return false;
	return true;
}

/* ------------------------------------------------------------ checking */

/* What --check-snapshot counts as it reads. */
struct check_counts {
	FILE *out;
	uint64_t settings, users;
};

static int count_settings(uint32_t id, const uint8_t *list, size_t len, void *arg)
{
	(void)id, (void)list, (void)len;
	((struct check_counts *)arg)->settings++;
	return 0;
}

static int count_user(uint32_t id, const char *name, size_t len, void *arg)
{
	(void)id, (void)name, (void)len;
	((struct check_counts *)arg)->users++;
	return 0;
}

static int print_header(const struct snapshot_header *h, void *arg)
{
	FILE *out = ((struct check_counts *)arg)->out;
	time_t t = (time_t)(h->written_ms / 1000);
	struct tm tm;
	char when[32] = "?";

	if (gmtime_r(&t, &tm))
		strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(out, "version:        %" PRIu32 "\nwritten:        %s by shoal %s\nupstream:       %s",
		h->version, when, h->node_version, h->upstream);
	if (h->server_id)
		fprintf(out, " (server_id %" PRIu32 ")", h->server_id);
	fprintf(out, "\ninvalidation:   %s\nposition:       %s\n", h->mode, h->gtid[0] ? h->gtid : "(none)");
	if (h->keys_only)
		fprintf(out, "results:        none (keys only: cache_snapshot_data was off)\n");
	return 0;
}

int snapshot_save(const char *why, struct snapshot_stats *st, char *err, size_t cap)
{
	struct timespec now;

	if (!g_config.cache_snapshot[0]) {
		snprintf(err, cap, "cache_snapshot is not set (--cache-snapshot PATH)");
		return 1;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	if (snapshot_write(g_config.cache_snapshot, !g_config.cache_snapshot_data,
			   (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000,
			   g_config.snapshot_write_timeout_ms, st, err, cap) != 0) {
		log_error("cache snapshot %s not written %s (the file before it stays): %s",
			  g_config.cache_snapshot, why, err);
		return -1;
	}
	log_info("cache snapshot %s written %s: %" PRIu64 " entries of %" PRIu64 " shapes, %" PRIu64
		 " bytes of keys%s, %" PRIu64 " bytes on disk, %" PRIu64 " left out, in %.3f s",
		 g_config.cache_snapshot, why, st->entries, st->shapes, st->bytes,
		 g_config.cache_snapshot_data ? " and results" : " (keys only: cache_snapshot_data is off)",
		 st->file_bytes, st->skipped, st->seconds);
	return 0;
}

uint8_t *snapshot_read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	uint8_t *buf = NULL;
	size_t got = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) != 0) {
		close(fd);
		return NULL;
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		errno = EINVAL; /* a folder, a device, a pipe */
		return NULL;
	}
	buf = malloc((size_t)sb.st_size + 1);
	while (buf && got < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)sb.st_size - got);

		if (n <= 0) {
			free(buf);
			buf = NULL;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	*len = got;
	return buf;
}

int snapshot_check_file(const char *path, FILE *out)
{
	struct check_counts counts = { .out = out };
	struct snapshot_visitor v = { .arg = &counts, .header = print_header, .settings = count_settings,
				      .user = count_user };
	struct snapshot_stats st;
	char err[512];
	size_t len = 0;
	uint8_t *buf = snapshot_read_file(path, &len);
	int rc;

	if (!buf) {
		fprintf(out, "%s: cannot be read: %s\n", path, strerror(errno ? errno : EIO));
		return 2;
	}
	fprintf(out, "snapshot %s (%zu bytes)\n", path, len);
	rc = snapshot_parse(buf, len, &v, &st, err, sizeof err);
	free(buf);
	if (rc != 0) {
		fprintf(out, "%s: not a sound snapshot, %s\n", path, err);
		return 1;
	}
	fprintf(out, "shapes:         %" PRIu64 "\nentries:        %" PRIu64 " (%" PRIu64 " bytes of keys and results)\n"
		"settings lists: %" PRIu64 "\nusers:          %" PRIu64 "\n", st.shapes, st.entries, st.bytes,
		counts.settings, counts.users);
	return 0;
}
