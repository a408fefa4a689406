/*
 * nodes.c: the agent's view of a node (see nodes.h): HTTP /health (JSON,
 * read with jansson), /metrics (Prometheus text, only the shoal_queries_total
 * family is read), and the admin port's stats_shoal_query_digest.
 */
#include "ha/nodes.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ha/http.h"
#include "ha/sqlconn.h"
#include "ha/util.h"

static void node_url(const struct ha_node *n, const char *path, char *out, size_t cap)
{
	bool v6 = strchr(n->host, ':') != NULL;

	snprintf(out, cap, "http://%s%s%s:%d%s", v6 ? "[" : "", n->host, v6 ? "]" : "", n->http_port,
		 path);
}

/* One sample line: the value of "name{labels} value" or "name value". */
static bool sample_value(const char *line, size_t len, const char *name, const char **labels,
			 size_t *llen, double *v)
{
	size_t nl = strlen(name);
	const char *p = line + nl, *end = line + len;
	char num[64];

	if (len <= nl || strncmp(line, name, nl) != 0 || (*p != '{' && *p != ' '))
		return false;
	*labels = p;
	*llen = 0;
	if (*p == '{') {
		const char *close = memchr(p, '}', (size_t)(end - p));

		if (!close)
			return false;
		*llen = (size_t)(close - p + 1);
		p = close + 1;
	}
	while (p < end && *p == ' ')
		p++;
	len = strcspn(p, " \n");
	if (len == 0 || len >= sizeof num || p + len > end)
		return false;
	memcpy(num, p, len);
	num[len] = '\0';
	*v = strtod(num, NULL);
	return true;
}

int metrics_counters(const char *text, uint64_t *hits, uint64_t *queries)
{
	bool found = false;
	double h = 0, q = 0;

	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n'), *labels;
		size_t len = nl ? (size_t)(nl - l) : strlen(l), ll;
		double v;

		if (*l != '#' && sample_value(l, len, "shoal_queries_total", &labels, &ll, &v)) {
			found = true;
			q += v;
			if (ll && memmem(labels, ll, "destination=\"cache\"", 19))
				h += v;
		}
		l = nl ? nl + 1 : NULL;
	}
	*hits = (uint64_t)h;
	*queries = (uint64_t)q;
	return found ? 0 : -1;
}

static void read_health(struct node_sample *s, const struct http_reply *r)
{
	json_t *j = r->body ? json_loads(r->body, 0, NULL) : NULL;
	const char *st = j ? json_string_value(json_object_get(j, "status")) : NULL;

	s->reachable = true;
	s->http_status = r->status;
	s->healthy = r->status == 200;
	snprintf(s->status, sizeof s->status, "%s", st ? st : (s->healthy ? "serving" : "unknown"));
	s->warming = j && json_is_true(json_object_get(j, "warming"));
	if (!s->healthy)
		snprintf(s->err, sizeof s->err, "/health answered HTTP %ld, status %s", r->status,
			 s->status);
	json_decref(j);
}

void node_poll(const struct ha_config *cfg, const struct ha_node *n, struct node_sample *s)
{
	struct http_reply r;
	char url[400];

	memset(s, 0, sizeof *s);
	node_url(n, "/health", url, sizeof url);
	if (http_request(url, NULL, cfg->http_timeout_ms, &r, s->err, sizeof s->err)) {
		snprintf(s->status, sizeof s->status, "unreachable");
		return;
	}
	read_health(s, &r);
	http_reply_free(&r);
	node_url(n, "/metrics", url, sizeof url);
	if (http_request(url, NULL, cfg->http_timeout_ms, &r, s->err, sizeof s->err))
		return;
	if (r.status == 200 && r.body && metrics_counters(r.body, &s->hits, &s->queries) == 0)
		s->have_counters = true;
	else if (!s->err[0])
		snprintf(s->err, sizeof s->err, "/metrics answered HTTP %ld without shoal_queries_total",
			 r.status);
	http_reply_free(&r);
}

static void fill_digest(struct node_digest *d, MYSQL_ROW row)
{
	snprintf(d->status, sizeof d->status, "%s", row[1] ? row[1] : "");
	d->hits = row[2] ? strtoull(row[2], NULL, 10) : 0;
	d->misses = row[3] ? strtoull(row[3], NULL, 10) : 0;
	d->count = row[4] ? strtoull(row[4], NULL, 10) : 0;
	d->errors = row[5] ? strtoull(row[5], NULL, 10) : 0;
	d->node_errors = row[6] ? strtoull(row[6], NULL, 10) : 0;
}

/* The digest rows; a node older than the errors columns answers without
 * them (its errors read as 0). */
static MYSQL_RES *query_digests(struct sqlconn *c, char *err, size_t errlen)
{
	MYSQL_RES *r = sqlc_query(c, "SELECT digest, cache_status, cache_hits, cache_misses, "
				  "count_star, errors, node_errors FROM stats.stats_shoal_query_digest",
				  err, errlen);

	if (r || !strstr(err, "no such column"))
		return r;
	return sqlc_query(c, "SELECT digest, cache_status, cache_hits, cache_misses, count_star, "
			  "NULL, NULL FROM stats.stats_shoal_query_digest", err, errlen);
}

static int open_admin(const struct ha_config *cfg, const struct ha_node *n, struct sqlconn *c,
		      char *err, size_t errlen)
{
	struct ha_dsn d = { 0 };

	snprintf(d.user, sizeof d.user, "%s", cfg->node_admin_user);
	snprintf(d.password, sizeof d.password, "%s", cfg->node_admin_password);
	snprintf(d.host, sizeof d.host, "%s", n->host);
	d.port = n->admin_port;
	c->verbose = cfg->verbose;
	snprintf(d.shown, sizeof d.shown, "admin port %.200s:%d (user %.60s)", n->host, d.port,
		 d.user);
	return sqlc_open(c, &d, cfg->connect_timeout_ms, err, errlen);
}

int node_verdicts(const struct ha_config *cfg, const struct ha_node *n, const char *const *texts,
		  size_t count, char (*verdict)[160], char *err, size_t errlen)
{
	struct sqlconn c = { 0 };

	if (open_admin(cfg, n, &c, err, errlen))
		return -1;
	for (size_t i = 0; i < count; i++) {
		size_t len = strlen(texts[i]);
		char *q = malloc(2 * len + 40);
		MYSQL_RES *r;
		MYSQL_ROW row;

		if (!q) {
			sqlc_close(&c);
			return ha_fail(err, errlen, "out of memory");
		}
		strcpy(q, "SELECT shoal_cacheable('");
		mysql_real_escape_string(c.my, q + strlen(q), texts[i], (unsigned long)len);
		strcat(q, "')");
		r = sqlc_query(&c, q, err, errlen);
		free(q);
		if (!r) {
			sqlc_close(&c);
			return -1;
		}
		row = mysql_fetch_row(r);
		snprintf(verdict[i], 160, "%s", row && row[0] ? row[0] : "");
		mysql_free_result(r);
	}
	sqlc_close(&c);
	return 0;
}

int node_digests(const struct ha_config *cfg, const struct ha_node *n, struct node_digest **out,
		 size_t *count, char *err, size_t errlen)
{
	struct ha_dsn d = { 0 };
	struct sqlconn c = { 0 };
	MYSQL_RES *r;
	MYSQL_ROW row;
	size_t i = 0;

	snprintf(d.user, sizeof d.user, "%s", cfg->node_admin_user);
	snprintf(d.password, sizeof d.password, "%s", cfg->node_admin_password);
	snprintf(d.host, sizeof d.host, "%s", n->host);
	d.port = n->admin_port;
	c.verbose = cfg->verbose;
	snprintf(d.shown, sizeof d.shown, "admin port %.200s:%d (user %.60s)", n->host, d.port,
		 d.user);
	if (sqlc_open(&c, &d, cfg->connect_timeout_ms, err, errlen))
		return -1;
	r = query_digests(&c, err, errlen);
	if (!r) {
		sqlc_close(&c);
		return -1;
	}
	*count = (size_t)mysql_num_rows(r);
	*out = calloc(*count ? *count : 1, sizeof **out);
	while (*out && (row = mysql_fetch_row(r)))
		if (row[0] && ha_parse_digest(row[0], (*out)[i].digest))
			fill_digest(&(*out)[i++], row);
	*count = i;
	mysql_free_result(r);
	sqlc_close(&c);
	return *out ? 0 : ha_fail(err, errlen, "out of memory");
}
