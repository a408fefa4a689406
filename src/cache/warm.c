/*
 * warm.c: a cache snapshot loaded at start (see warm.h): the file read and
 * checked, whether its data may be kept, the follower's resume position,
 * the entries put back in the store under this run's settings and user
 * ids, and the status of it all.
 */
#include "cache/warm.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "base/log.h"
#include "cache/binlog.h"
#include "cache/registry.h"
#include "cache/settings.h"
#include "cache/snapshot.h"
#include "cache/store.h"
#include "cache/verdict.h"
#include "config/config.h"
#include "upstream/users.h"

#define KEY_HEAD WARM_KEY_HEAD
#define ID_GONE UINT32_MAX   /* a saved id that stands for nothing now */

struct id_map {
	uint32_t saved, now;
};

struct id_maps {
	struct id_map *v;
	size_t n, cap;
};

/* What start read: the file, and what its records stand for now. Main
 * thread only (read, prepare, restore). */
static struct {
	uint8_t *buf;
	size_t len;
	struct snapshot_header h;
	int64_t age_ms;                  /* how long ago it was written */
	bool resume;                     /* the follower waits for warm_restore() */
	bool keys_only;                  /* the data is not kept, the keys are refilled */
	struct id_maps settings, users;
	char (*user_names)[USERS_NAME_MAX]; /* by W.users' index */
	size_t cap_names;
	struct cache_def **shapes;       /* by the file's shape index; NULL: not cached now */
	size_t nshapes;
	struct snapshot_entry *entries;
	size_t nentries, cap_entries;
	uint8_t *key;                    /* a key with this run's ids */
	size_t key_cap;
} W;

/* The status, read by the admin and /metrics (any thread). */
static pthread_mutex_t status_lock = PTHREAD_MUTEX_INITIALIZER;
static struct warm_status S;

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void set_state(enum warm_state st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_state(enum warm_state st, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&status_lock);
	S.state = st;
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(S.reason, sizeof S.reason, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&status_lock);
}

const char *warm_state_name(enum warm_state s)
{
	switch (s) {
	case WARM_REFUSED: return "refused";
	case WARM_DISCARDED: return "discarded";
	case WARM_LOADING: return "loading";
	case WARM_REPLAYING: return "replaying";
	case WARM_WARM: return "warm";
	case WARM_DROPPED: return "dropped";
	default: return "off";
	}
}

static void free_maps(void)
{
	free(W.settings.v);
	free(W.users.v);
	free(W.user_names);
	free(W.shapes);
	free(W.entries);
	free(W.key);
	free(W.buf);
	memset(&W, 0, sizeof W);
}

void warm_free(void)
{
	free_maps();
}

/* ---- reading ---------------------------------------------------------------- */

static int copy_header(const struct snapshot_header *h, void *arg)
{
	(void)arg;
	W.h = *h;
	return 0;
}

/* W.buf (read from source, or NULL with why in err): checked whole, kept
 * when sound. 0, or 1 when it is not (logged; the state says why). */
static int accept_snapshot(const char *source, double t0, char *err, size_t cap)
{
	struct snapshot_visitor v = { .header = copy_header };
	struct snapshot_stats st;

	if (W.buf && snapshot_parse(W.buf, W.len, &v, &st, err, cap) == 0) {
		W.age_ms = wall_ms() - W.h.written_ms;
		if (W.age_ms < 0)
			W.age_ms = 0;  /* the clock went back: no TTL is stretched by it */
		pthread_mutex_lock(&status_lock);
		S.file_entries = st.entries;
		S.reason[0] = 0;
		pthread_mutex_unlock(&status_lock);
		log_info("cache snapshot %s: %" PRIu64 " entries of %" PRIu64 " shapes, written %.1f s ago by "
			 "shoal %s against %s in %s mode at GTID position '%s' (%zu bytes, read and checked "
			 "in %.3f s)", source, st.entries, st.shapes, (double)W.age_ms / 1000.0,
			 W.h.node_version, W.h.upstream, W.h.mode, W.h.gtid, W.len, mono_s() - t0);
		return 0;
	}
	log_warn("cache snapshot %s ignored (nothing of it is used): %s", source, err);
	set_state(WARM_REFUSED, "%s", err);
	free_maps();
	return 1;
}

int warm_read(const char *path)
{
	char err[512];
	double t0 = mono_s();

	if (!path || !path[0])
		return 1;
	W.buf = snapshot_read_file(path, &W.len);
	if (!W.buf && errno == ENOENT) {
		log_info("cache snapshot %s: none yet%s", path,
			 g_config.warm_from[0] ? "" : "; the node starts cold");
		return 1;
	}
	if (!W.buf)
		snprintf(err, sizeof err, "cannot be read: %s", strerror(errno ? errno : EIO));
	return accept_snapshot(path, t0, err, sizeof err);
}

/* ---- a peer's (warm join) ----------------------------------------------------- */

struct fetch {
	uint8_t *buf;
	size_t len, cap, limit;
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct fetch *f = arg;
	size_t got = size * n;

	if (got > f->limit - f->len)
		return 0;  /* larger than any snapshot this node could load: curl stops */
	if (f->len + got > f->cap) {
		size_t cap = f->cap ? f->cap : 1 << 20;
		uint8_t *b;

		while (cap < f->len + got)
			cap *= 2;
		b = realloc(f->buf, cap);
		if (!b)
			return 0;
		f->buf = b;
		f->cap = cap;
	}
	memcpy(f->buf + f->len, p, got);
	f->len += got;
	return got;
}

/* GET url with the admin login into f; 0, or -1 with why in err. */
static int fetch_url(const char *url, struct fetch *f, char *err, size_t cap)
{
	CURL *h = curl_easy_init();
	char curl_err[CURL_ERROR_SIZE] = "";
	long status = 0;
	CURLcode rc;

	if (!h) {
		snprintf(err, cap, "cannot start a transfer (libcurl)");
		return -1;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_USERNAME, g_config.admin_user.name);
	curl_easy_setopt(h, CURLOPT_PASSWORD, g_config.admin_user.password);
	curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)g_config.warm_fetch_timeout_ms);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, f);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(h);
	if (rc != CURLE_OK) {
		snprintf(err, cap, "%s", curl_err[0] ? curl_err : curl_easy_strerror(rc));
		return -1;
	}
	if (status != 200) {
		size_t n = f->len < 160 ? f->len : 160;

		while (n && (f->buf[n - 1] == '\n' || f->buf[n - 1] == '\r'))
			n--;
		snprintf(err, cap, "HTTP %ld: %.*s", status, (int)n, f->buf ? (const char *)f->buf : "");
		return -1;
	}
	return 0;
}

int warm_fetch(const char *url)
{
	struct fetch f = { .limit = (size_t)g_config.memory_limit * 4 + ((size_t)64 << 20) };
	char err[512], source[1100];
	double t0 = mono_s();

	if (!url || !url[0])
		return 1;
	snprintf(source, sizeof source, "from the peer %s", url);
	if (fetch_url(url, &f, err, sizeof err) != 0) {
		free(f.buf);
		log_warn("cache snapshot %s not fetched: %s; the node starts cold", source, err);
		set_state(WARM_REFUSED, "the peer's snapshot was not fetched: %s", err);
		return 1;
	}
	log_info("cache snapshot %s fetched: %zu bytes in %.3f s", source, f.len, mono_s() - t0);
	W.buf = f.buf;
	W.len = f.len;
	return accept_snapshot(source, t0, err, sizeof err);
}

/* ---- what may be kept --------------------------------------------------------- */

/* The data is not loaded; the keys are refilled when keep_keys (and the
 * refill is on). */
static void discard(const char *why, bool keep_keys)
{
	int rate = g_config.warm_rate;

	keep_keys = keep_keys && rate > 0;
	if (keep_keys)
		log_warn("cache snapshot: its %" PRIu64 " entries are not loaded: %s; their keys are "
			 "refilled from the upstream (warm_rate %d statements/s)", S.file_entries, why, rate);
	else
		log_warn("cache snapshot: its %" PRIu64 " entries are not loaded: %s; the node starts cold",
			 S.file_entries, why);
	set_state(WARM_DISCARDED, "%s", why);
	if (keep_keys)
		W.keys_only = true;
	else
		free_maps();
}

void warm_prepare(enum inval_mode m)
{
	char upstream[sizeof W.h.upstream];

	if (!W.buf)
		return;
	snprintf(upstream, sizeof upstream, "%s:%u", g_config.upstream_host, g_config.upstream_port);
	if (W.h.keys_only) {
		discard("it holds the keys only (it was written with cache_snapshot_data off)", true);
	} else if (m != INVAL_BINLOG) {
		discard("only binlog mode can tell what changed on the upstream while the node was down "
			"(invalidation is not binlog)", true);
	} else if (!W.h.gtid[0] || !W.h.server_id) {
		discard("it was written without a binlog position (its node was not in binlog mode)", true);
	} else if (!registry_may_cache()) {
		discard("nothing may be cached (auto_cache is off and no cache is defined)", false);
	} else if (binlog_resume_from(W.h.gtid, W.h.server_id) != 0) {
		log_warn("cache snapshot: its binlog position '%s' is no GTID list: ignored", W.h.gtid);
		set_state(WARM_REFUSED, "its binlog position is no GTID list");
		free_maps();
	} else {
		if (strcmp(upstream, W.h.upstream) != 0)
			log_info("cache snapshot: written against %s, the upstream is %s: the binlog follower "
				 "checks that it is the same server (server id %" PRIu32 ")", W.h.upstream,
				 upstream, W.h.server_id);
		W.resume = true;
		set_state(WARM_LOADING, NULL);
	}
}

/* ---- the records, mapped to this run ------------------------------------------ */

/* Room for one more element in v (n used of *cap, size bytes each; the
 * first allocation holds first): v itself, or moved; NULL (v unchanged)
 * when out of memory. */
static void *grow(void *v, size_t n, size_t *cap, size_t size, size_t first)
{
	size_t c = *cap ? *cap * 2 : first;
	void *nv;

	if (n < *cap)
		return v;
	nv = realloc(v, c * size);
	if (nv)
		*cap = c;
	return nv;
}

static int map_add(struct id_maps *m, uint32_t saved, uint32_t now)
{
	struct id_map *v = grow(m->v, m->n, &m->cap, sizeof *v, 16);

	if (!v)
		return -1;
	m->v = v;
	m->v[m->n++] = (struct id_map){ saved, now };
	return 0;
}

static uint32_t rd_key_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* This run's id for a saved one: ID_GONE when it stands for nothing now.
 * The lists are short (a few settings lists and users): a linear look. */
static uint32_t map_get(const struct id_maps *m, uint32_t saved)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].saved == saved)
			return m->v[i].now;
	return ID_GONE;
}

static int on_settings(uint32_t saved, const uint8_t *list, size_t len, void *arg)
{
	uint32_t now = settings_intern(list, len);

	(void)arg;
	return map_add(&W.settings, saved, now ? now : ID_GONE);
}

static int on_user(uint32_t saved, const char *name, size_t len, void *arg)
{
	char user[USERS_NAME_MAX];
	char (*names)[USERS_NAME_MAX];
	uint32_t now = 0;

	(void)arg;
	user[0] = 0;
	if (len < sizeof user) {
		memcpy(user, name, len);
		user[len] = 0;
		now = users_account_id(user);
	}
	names = grow(W.user_names, W.users.n, &W.cap_names, sizeof *names, 16);
	if (!names)
		return -1;
	W.user_names = names;
	memcpy(W.user_names[W.users.n], user, sizeof user);
	return map_add(&W.users, saved, now ? now : ID_GONE);
}

/* A shape is kept when this run caches it (a cache defined now, or
 * auto-cache with the classifier's consent) and its text gives the same
 * digest (the same tokenizer). */
static int on_shape(const struct snapshot_shape *d, void *arg)
{
	struct cache_def *def;

	(void)arg;
	if (d->index >= W.nshapes) {
		size_t n = (size_t)d->index + 1;
		struct cache_def **v = realloc(W.shapes, n * sizeof *v);

		if (!v)
			return -1;
		memset(v + W.nshapes, 0, (n - W.nshapes) * sizeof *v);
		W.shapes = v;
		W.nshapes = n;
	}
	def = verdict_def_for_text(d->digest, d->text, d->text_len);
	if (def && atomic_load(&def->state) != CACHE_CACHED)
		def = NULL;
	W.shapes[d->index] = def;
	return 0;
}

static int on_entry(const struct snapshot_entry *e, void *arg)
{
	struct snapshot_entry *v = grow(W.entries, W.nentries, &W.cap_entries, sizeof *v, 1024);

	(void)arg;
	if (!v)
		return -1;
	W.entries = v;
	W.entries[W.nentries++] = *e;
	return 0;
}

/* ---- the entries -------------------------------------------------------------- */

static size_t entry_bytes(const struct snapshot_entry *e)
{
	return sizeof(struct cache_entry) + e->ndeps * sizeof(struct inval_dep) + e->key_len + e->resp_len;
}

/* The store's own measure of an entry's worth: upstream time saved per
 * byte (its eviction keeps the same ones). */
static double worth(const struct snapshot_entry *e)
{
	return (double)(e->hits + 1) * (e->upstream_us + 1) / (double)entry_bytes(e);
}

static int by_worth(const void *a, const void *b)
{
	double x = worth(a), y = worth(b);

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Write this run's ids into the key copy: the settings (2..5), the user
 * (6..9, 0: the shared upstream user) and, for a prepared statement ('B'),
 * the settings it was prepared under (the 4 bytes after its text's NUL).
 * False when one stands for nothing now. */
static bool remap_key(uint8_t *k, size_t len)
{
	uint32_t saved_user = (uint32_t)k[6] | (uint32_t)k[7] << 8 | (uint32_t)k[8] << 16 | (uint32_t)k[9] << 24;
	uint32_t ids[3] = { map_get(&W.settings, (uint32_t)k[2] | (uint32_t)k[3] << 8 |
					(uint32_t)k[4] << 16 | (uint32_t)k[5] << 24),
			    saved_user ? map_get(&W.users, saved_user) : 0, 0 };
	size_t at[3] = { 2, 6, 0 };
	unsigned n = 2;

	if (k[0] == 'B') {
		const uint8_t *nul = memchr(k + KEY_HEAD, 0, len - KEY_HEAD);
		uint32_t prep;

		if (!nul || (size_t)(nul - k) + 5 > len)
			return false;
		at[2] = (size_t)(nul - k) + 1;
		prep = (uint32_t)k[at[2]] | (uint32_t)k[at[2] + 1] << 8 | (uint32_t)k[at[2] + 2] << 16 |
		       (uint32_t)k[at[2] + 3] << 24;
		ids[2] = prep ? map_get(&W.settings, prep) : 0;
		n = 3;
	}
	for (unsigned i = 0; i < n; i++) {
		if (ids[i] == ID_GONE)
			return false;
		for (unsigned b = 0; b < 4; b++)
			k[at[i] + b] = (uint8_t)(ids[i] >> (8 * b));
	}
	return true;
}

/* The tables e read, with their generations as they are now. */
static bool entry_deps_now(const struct snapshot_entry *e, struct fill_deps *deps)
{
	struct inval_table *t[INVAL_MAX_DEPS];

	if (e->ndeps > INVAL_MAX_DEPS)
		return false;
	for (unsigned i = 0; i < e->ndeps; i++) {
		const char *schema, *table;
		size_t slen, tlen;

		if (!snapshot_entry_dep(e, i, &schema, &slen, &table, &tlen) ||
		    !(t[i] = inval_table_get(schema, slen, table, tlen)))
			return false;
	}
	deps->epoch = inval_epoch();
	deps->n = e->ndeps;
	deps->cons.len = e->cons_len;   /* (checked whole by snapshot_parse) */
	deps->cons.ntab = e->ntab;
	deps->cons.npost = e->npost;
	deps->cons.mask = e->cons_len ? match_blob_mask(e->cons, e->cons_len, e->ntab) : 0;
	if (e->cons_len)
		memcpy(deps->cons.buf, e->cons, e->cons_len);
	inval_snapshot_t(t, deps->n, deps->d, deps->tgen);
	return true;
}

/* TTL left now, capped by the shape's TTL today; <= 0: expired. */
static int64_t ttl_left(const struct snapshot_entry *e, const struct cache_def *d)
{
	int64_t ttl = e->ttl_left_ms - W.age_ms, cap = atomic_load(&d->ttl_ms);

	return ttl < cap ? ttl : cap;
}

/* 1: put; 0: left out (counted in skipped); -1: out of memory. */
static int put_entry(const struct snapshot_entry *e, int64_t now)
{
	struct cache_def *d = e->shape < W.nshapes ? W.shapes[e->shape] : NULL;
	struct store_restore r = { .key_len = e->key_len, .resp = e->resp, .resp_len = e->resp_len,
				   .upstream_us = e->upstream_us, .rows = e->rows, .hits = e->hits };
	struct fill_deps deps;
	int64_t ttl;
	int refresh;

	if (!d || e->key_len < KEY_HEAD || (ttl = ttl_left(e, d)) <= 0 || ttl > INT32_MAX ||
	    !entry_deps_now(e, &deps))
		return 0;
	if (e->key_len > W.key_cap) {
		uint8_t *k = realloc(W.key, e->key_len);

		if (!k)
			return -1;
		W.key = k;
		W.key_cap = e->key_len;
	}
	memcpy(W.key, e->key, e->key_len);
	if (!remap_key(W.key, e->key_len))
		return 0;
	refresh = def_refresh_ms(d);
	r.key = W.key;
	memcpy(r.status_off, e->status_off, sizeof r.status_off);
	r.def = d;
	r.ttl_ms = (int)ttl;
	/* no refresh (its age not below the TTL) stays none for what is left */
	r.refresh_ms = refresh >= atomic_load(&d->ttl_ms) || refresh >= ttl ? (int)ttl : refresh;
	return store_restore(&r, now, &deps);
}

static void put_entries(void)
{
	uint64_t limit = g_config.memory_limit, loaded = 0, skipped = 0, over = 0, bytes = 0;
	int64_t now = wall_ms();

	qsort(W.entries, W.nentries, sizeof *W.entries, by_worth);
	for (size_t i = 0; i < W.nentries; i++) {
		const struct snapshot_entry *e = &W.entries[i];
		int rc;

		if (limit && store_bytes() + entry_bytes(e) > limit) {
			over++;
			continue;
		}
		rc = put_entry(e, now);
		if (rc < 0) {
			over += W.nentries - i;
			log_warn("cache snapshot: out of memory after %" PRIu64 " entries", loaded);
			break;
		}
		loaded += rc > 0;
		skipped += rc == 0;
		bytes += rc > 0 ? e->key_len + e->resp_len : 0;
	}
	pthread_mutex_lock(&status_lock);
	S.loaded = loaded;
	S.skipped = skipped;
	S.over_limit = over;
	pthread_mutex_unlock(&status_lock);
	log_info("cache snapshot: %" PRIu64 " entries loaded (%" PRIu64 " bytes of keys and results), %" PRIu64
		 " left out (expired, their shape or user not there now, or filled meanwhile), %" PRIu64
		 " beyond memory_limit", loaded, bytes, skipped, over);
}

/* ---- the keys to refill ------------------------------------------------------- */

static struct warm_keys K;   /* main thread until warm_keys_take() */

void warm_keys_free(struct warm_keys *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i].key);
	free(k->v);
	free(k->users);
	memset(k, 0, sizeof *k);
}

/* The user index of a saved key's user id: the file's users, then one more
 * slot for 0 (the upstream_db_url user's login). */
static uint32_t key_user(uint32_t saved)
{
	if (saved == 0)
		return (uint32_t)W.users.n;
	for (size_t i = 0; i < W.users.n; i++)
		if (W.users.v[i].saved == saved)
			return W.users.v[i].now == ID_GONE ? UINT32_MAX : (uint32_t)i;
	return UINT32_MAX;
}

static int add_key(const struct snapshot_entry *e)
{
	struct cache_def *d = e->shape < W.nshapes ? W.shapes[e->shape] : NULL;
	uint32_t user;
	struct warm_key *k;

	if (e->key_len <= KEY_HEAD || !d)
		return 0;
	if (e->key[0] != 'Q') {
		K.prepared++;   /* a prepared statement: refilled by its next execute */
		return 0;
	}
	user = key_user(rd_key_u32(e->key + 6));
	if (user == UINT32_MAX)
		return 0;
	k = grow(K.v, K.n, &K.cap, sizeof *k, 1024);
	if (!k)
		return -1;
	K.v = k;
	k = &K.v[K.n];
	k->key = malloc(e->key_len);
	if (!k->key)
		return -1;
	memcpy(k->key, e->key, e->key_len);
	if (!remap_key(k->key, e->key_len)) {
		free(k->key);
		return 0;
	}
	k->key_len = e->key_len;
	k->user = user;
	k->saved_us = (double)(e->hits + 1) * (double)e->upstream_us;
	K.n++;
	return 0;
}

/* Every text statement of a shape cached now, under this run's ids: what
 * the refill reads again when it is not served (core/refill.c). */
static void collect_keys(void)
{
	size_t i;

	warm_keys_free(&K);
	K.users = calloc(W.users.n + 1, sizeof *K.users);
	if (!K.users)
		goto oom;
	for (i = 0; i < W.users.n; i++)
		memcpy(K.users[i], W.user_names[i], USERS_NAME_MAX);
	snprintf(K.users[W.users.n], USERS_NAME_MAX, "%s", g_config.upstream_user.name);
	K.nusers = W.users.n + 1;
	for (i = 0; i < W.nentries; i++)
		if (add_key(&W.entries[i]) < 0)
			goto oom;
	return;
oom:
	log_warn("cache snapshot: out of memory for the keys to refill: none is refilled");
	warm_keys_free(&K);
}

bool warm_keys_take(struct warm_keys *out)
{
	*out = K;
	memset(&K, 0, sizeof K);
	return out->n > 0;
}

void warm_restore(void)
{
	struct snapshot_visitor v = { .settings = on_settings, .user = on_user, .shape = on_shape,
				      .entry = on_entry };
	struct snapshot_stats st;
	char err[512];
	double t0 = mono_s();

	if (!W.resume && !W.keys_only) {
		binlog_resume_release();
		return;
	}
	if (snapshot_parse(W.buf, W.len, &v, &st, err, sizeof err) != 0) {
		log_warn("cache snapshot: not loaded: out of memory");
		if (W.resume)
			set_state(WARM_DROPPED, "out of memory while loading");
	} else if (W.keys_only) {
		collect_keys();
	} else {
		collect_keys();
		put_entries();
		pthread_mutex_lock(&status_lock);
		S.load_seconds = mono_s() - t0;
		pthread_mutex_unlock(&status_lock);
		log_info("cache snapshot: loaded in %.3f s; nothing of it is served until the binlog is "
			 "replayed from '%s'", S.load_seconds, W.h.gtid);
		set_state(WARM_REPLAYING, NULL);
	}
	free_maps();
	/* the follower starts its replay now: the entries' tables have the
	 * generations they were put there with */
	binlog_resume_release();
}

/* ---- status ------------------------------------------------------------------- */

void warm_refill_begin(uint64_t total)
{
	pthread_mutex_lock(&status_lock);
	S.refill = WARM_REFILL_RUNNING;
	S.refill_total = total;
	pthread_mutex_unlock(&status_lock);
}

void warm_refill_count(enum warm_refill_outcome o)
{
	pthread_mutex_lock(&status_lock);
	switch (o) {
	case WARM_REFILLED: S.refill_done++; break;
	case WARM_REFILL_PRESENT: S.refill_present++; break;
	default: S.refill_failed++; break;
	}
	pthread_mutex_unlock(&status_lock);
}

void warm_refill_end(enum warm_refill st, uint64_t left, double seconds)
{
	pthread_mutex_lock(&status_lock);
	S.refill = st;
	S.refill_left = left;
	S.refill_seconds = seconds;
	pthread_mutex_unlock(&status_lock);
}

const char *warm_refill_name(enum warm_refill r)
{
	switch (r) {
	case WARM_REFILL_WAITING: return "waiting";
	case WARM_REFILL_RUNNING: return "running";
	case WARM_REFILL_DONE: return "done";
	case WARM_REFILL_STOPPED: return "stopped";
	default: return "none";
	}
}

bool warm_warming(const struct warm_status *w)
{
	return w->state == WARM_LOADING || w->state == WARM_REPLAYING || w->refill == WARM_REFILL_WAITING ||
	       w->refill == WARM_REFILL_RUNNING;
}

static int count_kept(const struct cache_entry *e, void *arg)
{
	*(uint64_t *)arg += e->restored;
	return 0;
}

void warm_status(struct warm_status *out)
{
	enum binlog_resume r = binlog_resume_result();
	uint64_t kept = 0, loaded;
	bool count = false, dropped = false;

	pthread_mutex_lock(&status_lock);
	if (S.state == WARM_REPLAYING && r == BINLOG_RESUME_DONE) {
		S.state = WARM_WARM;
		count = true;
	} else if (S.state == WARM_REPLAYING && (r == BINLOG_RESUME_GONE || r == BINLOG_RESUME_FOREIGN)) {
		S.state = WARM_DROPPED;
		snprintf(S.reason, sizeof S.reason, "%s", r == BINLOG_RESUME_GONE ?
			 "its binlog position is gone from the server's binlogs" :
			 "the upstream is another server than the one it was written against");
		dropped = true;
	}
	pthread_mutex_unlock(&status_lock);
	/* once, by whichever thread sees the replay end first, before it reads
	 * the new state: what it left (no lock held), in the log too, so that
	 * the log says it by the time any reader sees the state */
	if (count) {
		store_each(wall_ms(), count_kept, &kept);
		pthread_mutex_lock(&status_lock);
		S.kept = kept;
		loaded = S.loaded;
		pthread_mutex_unlock(&status_lock);
		log_info("cache snapshot: the binlog replay is done: %" PRIu64 " of the %" PRIu64
			 " entries loaded are served (the others were invalidated by writes made while "
			 "the node was down, or expired)", kept, loaded);
	}
	if (dropped)
		log_warn("cache snapshot: its entries were dropped: %s", r == BINLOG_RESUME_GONE ?
			 "its binlog position is gone from the server's binlogs" :
			 "the upstream is another server than the one it was written against");
	pthread_mutex_lock(&status_lock);
	*out = S;
	pthread_mutex_unlock(&status_lock);
}
