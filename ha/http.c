/*
 * http.c: libcurl requests (see http.h). Bodies are capped at 16 MiB.
 */
#include "ha/http.h"

#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "ha/util.h"

#define HTTP_MAX_BODY (16u << 20)

static size_t on_data(char *p, size_t size, size_t nmemb, void *arg)
{
	struct http_reply *r = arg;
	size_t n = size * nmemb;
	char *b;

	if (r->len + n > HTTP_MAX_BODY)
		return 0;
	b = realloc(r->body, r->len + n + 1);
	if (!b)
		return 0;
	memcpy(b + r->len, p, n);
	r->len += n;
	b[r->len] = '\0';
	r->body = b;
	return n;
}

int http_request(const char *url, const char *json, int timeout_ms, struct http_reply *r,
		 char *err, size_t errlen)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = NULL;
	char ebuf[CURL_ERROR_SIZE] = "";
	CURLcode rc;

	memset(r, 0, sizeof *r);
	if (!h)
		return ha_fail(err, errlen, "%s: cannot set up libcurl", url);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "shoal-ha");
	if (json) {
		hdr = curl_slist_append(NULL, "Content-Type: application/json");
		if (!hdr) {
			curl_easy_cleanup(h);
			return ha_fail(err, errlen, "out of memory");
		}
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, json);
	}
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	if (rc != CURLE_OK) {
		http_reply_free(r);
		return ha_fail(err, errlen, "%s: %s", url, ebuf[0] ? ebuf : curl_easy_strerror(rc));
	}
	return 0;
}

void http_reply_free(struct http_reply *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
}
