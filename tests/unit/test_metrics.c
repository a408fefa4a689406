/*
 * test_metrics.c: the Prometheus text writer (metrics.c) and the health
 * state (health.c): name checks, label and HELP escaping, number and sample
 * formatting, and that metrics_render's output, with providers, is valid
 * text exposition format as checked by the strict checker below.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/health.h"
#include "proto/metrics.h"
#include "proto/packet.h"
#include "base/stats.h"
#include "tap.h"

/* ------------------------------------------------------------ checker */

#define MAX_FAMILIES 64
#define MAX_SERIES 256

struct family {
	char name[128];
	char type[16];
	bool has_help;
	bool has_samples;
};

struct checker {
	struct family fam[MAX_FAMILIES];
	int n_fam;
	int current;                 /* family whose samples are being read, or -1 */
	char *series[MAX_SERIES];
	int n_series;
	char why[256];
};

static bool name_ok(const char *s, size_t n, bool colon)
{
	size_t i;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
		if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
			return false;
	}
	return true;
}

/* [+-]?(d+(.d*)?|.d+)([eE][+-]?d+)? or NaN, +Inf, -Inf: the whole token. */
static bool value_ok(const char *s, size_t n, double *out)
{
	char tmp[64];
	size_t i = 0, digits = 0;

	if (n == 0 || n >= sizeof(tmp))
		return false;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (!strcmp(tmp, "NaN") || !strcmp(tmp, "+Inf") || !strcmp(tmp, "-Inf")) {
		*out = !strcmp(tmp, "NaN") ? NAN : tmp[0] == '+' ? INFINITY : -INFINITY;
		return true;
	}
	if (tmp[i] == '+' || tmp[i] == '-')
		i++;
	for (; tmp[i] >= '0' && tmp[i] <= '9'; i++)
		digits++;
	if (tmp[i] == '.')
		for (i++; tmp[i] >= '0' && tmp[i] <= '9'; i++)
			digits++;
	if (digits == 0)
		return false;
	if (tmp[i] == 'e' || tmp[i] == 'E') {
		i++;
		if (tmp[i] == '+' || tmp[i] == '-')
			i++;
		if (!(tmp[i] >= '0' && tmp[i] <= '9'))
			return false;
		while (tmp[i] >= '0' && tmp[i] <= '9')
			i++;
	}
	if (tmp[i] != '\0')
		return false;
	*out = strtod(tmp, NULL);
	return true;
}

static int find_family(struct checker *ck, const char *name, size_t n)
{
	int i;

	for (i = 0; i < ck->n_fam; i++)
		if (strlen(ck->fam[i].name) == n && !memcmp(ck->fam[i].name, name, n))
			return i;
	return -1;
}

static int fail(struct checker *ck, const char *line, const char *what)
{
	snprintf(ck->why, sizeof(ck->why), "%s in line '%.120s'", what, line);
	return -1;
}

/* "# HELP name text" or "# TYPE name type"; other comments are ignored. */
static int check_comment(struct checker *ck, const char *line)
{
	static const char *const types[] = { "counter", "gauge", "histogram", "summary", "untyped" };
	bool help = !strncmp(line, "# HELP ", 7), type = !strncmp(line, "# TYPE ", 7);
	const char *name = line + 7, *sp;
	struct family *f;
	size_t i, n;
	int idx;

	if (!help && !type)
		return 0;
	sp = strchr(name, ' ');
	n = sp ? (size_t)(sp - name) : strlen(name);
	if (!name_ok(name, n, true) || !sp)
		return fail(ck, line, "bad metric name or missing text");
	idx = find_family(ck, name, n);
	if (idx < 0) {
		if (ck->n_fam == MAX_FAMILIES || n >= sizeof(ck->fam[0].name))
			return fail(ck, line, "too many families");
		idx = ck->n_fam++;
		memset(&ck->fam[idx], 0, sizeof(ck->fam[idx]));
		memcpy(ck->fam[idx].name, name, n);
	}
	f = &ck->fam[idx];
	if (f->has_samples)
		return fail(ck, line, "HELP or TYPE after the family's samples");
	if (help) {
		if (f->has_help)
			return fail(ck, line, "second HELP");
		f->has_help = true;
		for (i = 0; sp[1 + i]; i++)
			if (sp[1 + i] == '\\' && sp[2 + i] != '\\' && sp[2 + i] != 'n')
				return fail(ck, line, "bad escape in HELP");
			else if (sp[1 + i] == '\\')
				i++;
		return 0;
	}
	if (f->type[0])
		return fail(ck, line, "second TYPE");
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(sp + 1, types[i]))
			snprintf(f->type, sizeof(f->type), "%s", types[i]);
	return f->type[0] ? 0 : fail(ck, line, "unknown TYPE");
}

/* {a="x",b="y"}: returns a pointer past '}', or NULL. Sets *has_le. */
static const char *check_labels(struct checker *ck, const char *p, const char *line, bool *has_le)
{
	char names[16][64];
	int n = 0, i;
	const char *q;

	for (p++; *p != '}'; ) {
		for (q = p; *q && *q != '='; q++)
			;
		if (!*q || !name_ok(p, (size_t)(q - p), false) || (size_t)(q - p) >= sizeof(names[0]) ||
		    n == 16 || !strncmp(p, "__", 2) || q[1] != '"')
			return fail(ck, line, "bad label name"), NULL;
		memcpy(names[n], p, (size_t)(q - p));
		names[n][q - p] = '\0';
		for (i = 0; i < n; i++)
			if (!strcmp(names[i], names[n]))
				return fail(ck, line, "duplicate label"), NULL;
		*has_le |= !strcmp(names[n++], "le");
		for (p = q + 2; *p != '"'; p++) {
			if (!*p)
				return fail(ck, line, "unterminated label value"), NULL;
			if (*p == '\\' && p[1] != '\\' && p[1] != '"' && p[1] != 'n')
				return fail(ck, line, "bad escape in label value"), NULL;
			if (*p == '\\')
				p++;
		}
		p++;
		if (*p == ',' && p[1] != '}')
			p++;
		else if (*p != '}')
			return fail(ck, line, "expected , or }"), NULL;
	}
	return p + 1;
}

/* The family a sample name belongs to (histogram and summary suffixes). */
static int sample_family(struct checker *ck, const char *name, size_t n, bool *bucket)
{
	static const char *const sfx[] = { "_bucket", "_sum", "_count" };
	size_t i, l;
	int idx = find_family(ck, name, n);

	*bucket = false;
	if (idx >= 0)
		return idx;
	for (i = 0; i < 3; i++) {
		l = strlen(sfx[i]);
		if (n > l && !memcmp(name + n - l, sfx[i], l)) {
			idx = find_family(ck, name, n - l);
			if (idx < 0)
				continue;
			if (!strcmp(ck->fam[idx].type, "histogram") ||
			    (i > 0 && !strcmp(ck->fam[idx].type, "summary"))) {
				*bucket = i == 0;
				return idx;
			}
		}
	}
	return -1;
}

static int check_sample(struct checker *ck, const char *line)
{
	const char *p = line, *end;
	bool has_le = false, bucket;
	double v;
	int idx, i;
	size_t n;

	while (name_ok(line, (size_t)(p - line) + 1, true))
		p++;
	n = (size_t)(p - line);
	if (n == 0)
		return fail(ck, line, "bad metric name");
	idx = sample_family(ck, line, n, &bucket);
	if (idx < 0 || !ck->fam[idx].type[0])
		return fail(ck, line, "sample without a TYPE line before it");
	if (ck->current != idx && ck->fam[idx].has_samples)
		return fail(ck, line, "family's samples are not together");
	ck->current = idx;
	ck->fam[idx].has_samples = true;
	if (*p == '{' && !(p = check_labels(ck, p, line, &has_le)))
		return -1;
	if (bucket && !has_le)
		return fail(ck, line, "histogram bucket without le");
	if (*p != ' ')
		return fail(ck, line, "expected a space before the value");
	end = strchr(p + 1, ' ');
	if (end && !value_ok(end + 1, strlen(end + 1), &v)) /* an optional timestamp */
		return fail(ck, line, "bad timestamp");
	if (!value_ok(p + 1, end ? (size_t)(end - p - 1) : strlen(p + 1), &v))
		return fail(ck, line, "bad value");
	if (!strcmp(ck->fam[idx].type, "counter") && !(v >= 0))
		return fail(ck, line, "negative or NaN counter");
	for (i = 0; i < ck->n_series; i++)
		if (!strncmp(ck->series[i], line, (size_t)(p - line)) && ck->series[i][p - line] == '\0')
			return fail(ck, line, "duplicate series");
	if (ck->n_series == MAX_SERIES || !(ck->series[ck->n_series] = strndup(line, (size_t)(p - line))))
		return fail(ck, line, "too many series");
	ck->n_series++;
	return 0;
}

/* Check a whole exposition. 0, or -1 with ck->why set. */
static int check_exposition(struct checker *ck, const char *text, size_t len)
{
	char *copy = strndup(text, len), *line, *save = NULL;
	int rc = 0;

	memset(ck, 0, sizeof(*ck));
	ck->current = -1;
	if (!copy)
		return fail(ck, "", "out of memory");
	if (len == 0 || text[len - 1] != '\n' || strlen(copy) != len) {
		free(copy);
		return fail(ck, "", "empty, not ending in a newline, or has a NUL");
	}
	for (line = copy; rc == 0 && *line; line = save) {
		save = strchr(line, '\n');
		*save++ = '\0';
		if (!*line)
			rc = fail(ck, line, "empty line");
		else if (line[0] == '#')
			rc = check_comment(ck, line);
		else
			rc = check_sample(ck, line);
	}
	free(copy);
	return rc;
}

static void checker_free(struct checker *ck)
{
	int i;

	for (i = 0; i < ck->n_series; i++)
		free(ck->series[i]);
	ck->n_series = 0;
}

static bool check_text(const char *text)
{
	struct checker ck;
	int rc = check_exposition(&ck, text, strlen(text));

	checker_free(&ck);
	return rc == 0;
}

/* ------------------------------------------------------------ helpers */

static const char *str(struct pbuf *b)
{
	if (pbuf_append(b, "", 1) < 0)
		return "(no memory)";
	b->len--;
	return (const char *)b->data;
}

static const char *esc_label(const char *in)
{
	static struct pbuf b;

	b.len = 0;
	if (metrics_escape_label_value(&b, in) < 0)
		return "(error)";
	return str(&b);
}

static const char *fmt(double v)
{
	static char buf[64];

	if (metrics_format_double(v, buf, sizeof(buf)) < 0)
		return "(error)";
	return buf;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------ tests */

static void test_names(void)
{
	ok(metrics_valid_name("shoal_up"), "metric name shoal_up is valid");
	ok(metrics_valid_name("a:b_c9"), "metric name with a colon and digits is valid");
	ok(metrics_valid_name("_x"), "metric name starting with _ is valid");
	ok(!metrics_valid_name("9a"), "metric name starting with a digit is invalid");
	ok(!metrics_valid_name(""), "empty metric name is invalid");
	ok(!metrics_valid_name("a-b"), "metric name with - is invalid");
	ok(!metrics_valid_name("a b"), "metric name with a space is invalid");
	ok(metrics_valid_label_name("query_id"), "label name query_id is valid");
	ok(!metrics_valid_label_name("a:b"), "label name with a colon is invalid");
	ok(!metrics_valid_label_name("__name__"), "label name starting with __ is reserved");
	ok(!metrics_valid_label_name("1x"), "label name starting with a digit is invalid");
}

static void test_escaping(void)
{
	struct pbuf b = { 0 };

	is_str(esc_label("plain"), "plain", "plain label value unchanged");
	is_str(esc_label("a\\b"), "a\\\\b", "backslash escaped");
	is_str(esc_label("say \"hi\""), "say \\\"hi\\\"", "double quotes escaped");
	is_str(esc_label("l1\nl2"), "l1\\nl2", "newline escaped");
	is_str(esc_label("\\\"\n"), "\\\\\\\"\\n", "all three in a row");
	is_str(esc_label("tab\there"), "tab\there", "tab left as is");
	is_str(esc_label("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x9f"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x9f",
	       "valid UTF-8 kept");
	is_str(esc_label("a\xff" "b"), "a\xef\xbf\xbd" "b", "invalid byte becomes U+FFFD");
	is_str(esc_label("\xc3"), "\xef\xbf\xbd", "truncated sequence at the end becomes U+FFFD");
	is_str(esc_label("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd", "overlong encoding replaced");
	is_str(esc_label("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "surrogate replaced");
	is_str(esc_label(""), "", "empty value");
	ok(metrics_escape_help(&b, "a \"q\" \\ x\ny") == 0, "escape_help ok");
	is_str(str(&b), "a \"q\" \\\\ x\\ny", "HELP escapes backslash and newline, not quotes");
	pbuf_free(&b);
}

static void test_numbers(void)
{
	char tiny[3];

	is_str(fmt(0), "0", "0");
	is_str(fmt(1), "1", "1");
	is_str(fmt(-2.5), "-2.5", "-2.5");
	is_str(fmt(0.1), "0.1", "0.1 shortest form");
	is_str(fmt(1e20), "1e+20", "1e20");
	is_str(fmt(123456789012.0), "123456789012", "large integer without exponent");
	is_str(fmt(0.005), "0.005", "0.005");
	is_str(fmt(NAN), "NaN", "NaN");
	is_str(fmt(INFINITY), "+Inf", "+Inf");
	is_str(fmt(-INFINITY), "-Inf", "-Inf");
	ok(strtod(fmt(1.0 / 3.0), NULL) == 1.0 / 3.0, "1/3 reads back exactly (%s)", fmt(1.0 / 3.0));
	ok(strtod(fmt(5e-324), NULL) == 5e-324, "smallest denormal reads back (%s)", fmt(5e-324));
	ok(metrics_format_double(12345.0, tiny, sizeof(tiny)) < 0, "too small a buffer is an error");
}

static void test_samples(void)
{
	struct pbuf b = { 0 };
	struct metrics_label two[] = { { "query_id", "q\"1" }, { "result", "changed" } };
	struct metrics_label bad[] = { { "bad-name", "x" } };

	ok(metrics_sample_u64(&b, "x_total", NULL, 0, 42) == 0, "unlabelled u64 sample");
	is_str(str(&b), "x_total 42\n", "  formatted as 'name value'");
	b.len = 0;
	ok(metrics_sample_u64(&b, "x_total", two, 2, UINT64_MAX) == 0, "labelled u64 sample");
	is_str(str(&b), "x_total{query_id=\"q\\\"1\",result=\"changed\"} 18446744073709551615\n",
	       "  labels in order, value escaped, full uint64");
	b.len = 0;
	ok(metrics_sample(&b, "d_seconds_bucket", (struct metrics_label[]){ { "le", "+Inf" } }, 1, 0.25) == 0,
	   "double sample");
	is_str(str(&b), "d_seconds_bucket{le=\"+Inf\"} 0.25\n", "  formatted");
	b.len = 0;
	ok(metrics_sample(&b, "g", NULL, 0, NAN) == 0 && !strcmp(str(&b), "g NaN\n"), "NaN sample");
	b.len = 0;
	ok(metrics_sample_u64(&b, "bad name", NULL, 0, 1) < 0 && b.len == 0, "bad metric name refused, nothing written");
	ok(metrics_sample_u64(&b, "x", bad, 1, 1) < 0 && b.len == 0, "bad label name refused, nothing written");
	ok(metrics_family(&b, "x_total", "counter", "Things.\nMore \\ things.") == 0, "family lines");
	is_str(str(&b), "# HELP x_total Things.\\nMore \\\\ things.\n# TYPE x_total counter\n",
	       "  HELP escaped, TYPE follows");
	b.len = 0;
	ok(metrics_family(&b, "x", "countr", "h") < 0 && b.len == 0, "unknown type refused");
	ok(metrics_family(&b, "1x", "gauge", "h") < 0 && b.len == 0, "bad family name refused");
	pbuf_free(&b);
}

static void test_checker(void)
{
	ok(check_text("# TYPE a counter\na 1\n"), "checker: minimal valid text");
	ok(check_text("# HELP h x\n# TYPE h histogram\nh_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 2\n"
		      "h_sum 3.5\nh_count 2\n"), "checker: histogram");
	ok(!check_text("a 1\n"), "checker: sample without TYPE refused");
	ok(!check_text("# TYPE a gauge\n# TYPE a gauge\na 1\n"), "checker: second TYPE refused");
	ok(!check_text("# TYPE a gauge\na 1\n# TYPE a gauge\n"), "checker: TYPE after samples refused");
	ok(!check_text("# TYPE a gauge\na one\n"), "checker: bad value refused");
	ok(!check_text("# TYPE a gauge\na{x=\"1} 1\n"), "checker: unterminated label refused");
	ok(!check_text("# TYPE a gauge\na{x=\"\\t\"} 1\n"), "checker: bad escape refused");
	ok(!check_text("# TYPE a gauge\na{x=\"1\",x=\"2\"} 1\n"), "checker: duplicate label refused");
	ok(!check_text("# TYPE a gauge\na 1\na 2\n"), "checker: duplicate series refused");
	ok(!check_text("# TYPE a gauge\n# TYPE b gauge\na 1\nb 1\na{x=\"y\"} 1\n"),
	   "checker: split family refused");
	ok(!check_text("# TYPE a counter\na -1\n"), "checker: negative counter refused");
	ok(!check_text("# TYPE a gauge\na 1"), "checker: missing final newline refused");
	ok(!check_text("# TYPE h histogram\nh_bucket 1\n"), "checker: bucket without le refused");
}

static int provider_a(struct pbuf *out)
{
	struct metrics_label l[] = { { "query_id", "we\"ird\\id\nx" } };

	if (metrics_family(out, "shoal_cache_hits_total", "counter", "Test hits.") < 0 ||
	    metrics_sample_u64(out, "shoal_cache_hits_total", l, 1, 7) < 0)
		return -1;
	if (metrics_family(out, "shoal_query_duration_seconds", "histogram", "Test.") < 0 ||
	    metrics_sample_u64(out, "shoal_query_duration_seconds_bucket",
			       (struct metrics_label[]){ { "le", "0.001" } }, 1, 1) < 0 ||
	    metrics_sample_u64(out, "shoal_query_duration_seconds_bucket",
			       (struct metrics_label[]){ { "le", "+Inf" } }, 1, 3) < 0 ||
	    metrics_sample(out, "shoal_query_duration_seconds_sum", NULL, 0, 0.0125) < 0 ||
	    metrics_sample_u64(out, "shoal_query_duration_seconds_count", NULL, 0, 3) < 0)
		return -1;
	return 0;
}

static int provider_b(struct pbuf *out)
{
	return metrics_family(out, "shoal_cache_entries", "gauge", "Test entries.") < 0 ||
	       metrics_sample_u64(out, "shoal_cache_entries", NULL, 0, 2) < 0 ? -1 : 0;
}

static int provider_fails(struct pbuf *out)
{
	return -1;
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p;

	for (p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

static void test_render(void)
{
	struct checker ck;
	struct pbuf b = { 0 };
	const char *t, *a;
	int rc;

	STAT_INC(queries);
	STAT_INC(queries);
	STAT_INC(client_connections_created);
	STAT_INC(client_connections);
	health_upstream_ok();
	ok(metrics_render(&b) == 0, "metrics_render without providers");
	t = str(&b);
	rc = check_exposition(&ck, (const char *)b.data, b.len);
	ok(rc == 0, "  output is valid exposition format%s%s", rc ? ": " : "", ck.why);
	checker_free(&ck);
	ok(has_line(t, "shoal_queries_total{destination=\"upstream\"} 2"), "  queries from g_stats");
	ok(has_line(t, "shoal_queries_total{destination=\"cache\"} 0"), "  cache queries 0");
	ok(has_line(t, "shoal_client_connections_created_total 1"), "  connections created");
	ok(has_line(t, "shoal_client_connections 1"), "  open connections gauge");
	ok(has_line(t, "# TYPE shoal_client_connections gauge"), "  its TYPE is gauge");
	ok(has_line(t, "shoal_upstream_up 1"), "  upstream up");
	ok(has_line(t, "shoal_up 1"), "  shoal_up 1");
	ok(strstr(t, "\nshoal_build_info{version=\"") != NULL, "  build info with version");
	ok(has_line(t, "shoal_auth_failures_total 0") && has_line(t, "shoal_protocol_errors_total 0") &&
	   has_line(t, "shoal_client_connections_aborted_total 0") &&
	   has_line(t, "shoal_client_connections_refused_total 0") &&
	   has_line(t, "shoal_upstream_connections 0") && has_line(t, "shoal_upstream_connect_errors_total 0"),
	   "  every other node-wide family present");
	health_upstream_failed();
	b.len = 0;
	ok(metrics_render(&b) == 0 && has_line(str(&b), "shoal_upstream_up 0"), "upstream_up 0 after a failure");
	health_upstream_ok();

	metrics_register_provider(provider_a);
	metrics_register_provider(provider_b);
	b.len = 0;
	ok(metrics_render(&b) == 0, "metrics_render with two providers");
	t = str(&b);
	rc = check_exposition(&ck, (const char *)b.data, b.len);
	ok(rc == 0, "  output is valid%s%s", rc ? ": " : "", ck.why);
	checker_free(&ck);
	ok(has_line(t, "shoal_cache_hits_total{query_id=\"we\\\"ird\\\\id\\nx\"} 7"), "  provider's escaped label");
	a = strstr(t, "# HELP shoal_cache_hits_total");
	ok(a && strstr(t, "shoal_build_info") < a && strstr(t, "# HELP shoal_cache_entries") > a,
	   "  providers after the built-ins, in registration order");
	metrics_register_provider(provider_fails);
	b.len = 0;
	ok(metrics_render(&b) < 0, "a failing provider fails the render");
	metrics_clear_providers();
	b.len = 0;
	ok(metrics_render(&b) == 0 && !strstr(str(&b), "shoal_cache"), "providers cleared");
	pbuf_free(&b);
}

static int provider_noop(struct pbuf *out)
{
	return 0;
}

static void test_provider_limit(void)
{
	struct pbuf b = { 0 };
	int i;

	for (i = 0; i < METRICS_MAX_PROVIDERS - 1; i++)
		metrics_register_provider(provider_noop);
	metrics_register_provider(provider_fails);
	ok(metrics_render(&b) < 0, "the eighth provider is called");
	metrics_clear_providers();
	for (i = 0; i < METRICS_MAX_PROVIDERS; i++)
		metrics_register_provider(provider_noop);
	metrics_register_provider(provider_fails); /* the ninth: logged and ignored */
	b.len = 0;
	ok(metrics_render(&b) == 0, "a ninth provider is ignored");
	metrics_clear_providers();
	pbuf_free(&b);
}

static void test_health(void)
{
	char why[32];
	double first;

	health_upstream_ok();
	health_set_draining(false);
	ok(health_upstream_up() && health_upstream_down_seconds() == 0, "up at first, down 0 s");
	ok(health_serving(3000, why, sizeof(why)), "serving");
	is_str(why, "serving", "  why = serving");
	health_upstream_failed();
	ok(!health_upstream_up(), "down after a failure");
	ok(health_serving(3000, why, sizeof(why)), "still serving within the threshold");
	sleep_ms(60);
	first = health_upstream_down_seconds();
	ok(first >= 0.05 && first < 5, "down seconds counts (%.3f)", first);
	health_upstream_failed();
	ok(health_upstream_down_seconds() >= first, "a second failure keeps the first failure time");
	ok(!health_serving(20, why, sizeof(why)), "not serving past the threshold");
	is_str(why, "upstream_down", "  why = upstream_down");
	ok(!health_serving(20, NULL, 0), "why may be NULL");
	health_upstream_ok();
	ok(health_upstream_up() && health_upstream_down_seconds() == 0, "ok resets");
	ok(health_serving(0, why, sizeof(why)), "serving again");
	health_set_draining(true);
	ok(health_draining(), "draining set");
	ok(!health_serving(3000, why, sizeof(why)), "not serving while draining");
	is_str(why, "draining", "  why = draining");
	health_set_draining(false);
	ok(!health_draining() && health_serving(3000, NULL, 0), "draining cleared");
}

int main(void)
{
	test_names();
	test_escaping();
	test_numbers();
	test_samples();
	test_checker();
	test_render();
	test_provider_limit();
	test_health();
	return done_testing();
}
