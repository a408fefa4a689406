/*
 * http.h: HTTP requests of the agent through libcurl: GET a node's /health
 * and /metrics, POST an alert to the webhook.
 */
#ifndef SHOAL_HA_HTTP_H
#define SHOAL_HA_HTTP_H

#include <stddef.h>

struct http_reply {
	long status;   /* HTTP status; 0 when no answer */
	char *body;    /* NUL-terminated (free), may be NULL */
	size_t len;
};

/* GET (json == NULL) or POST of a JSON body. Returns 0 when an HTTP answer
 * came (any status), -1 with err when none did. */
int http_request(const char *url, const char *json, int timeout_ms, struct http_reply *r,
		 char *err, size_t errlen);
void http_reply_free(struct http_reply *r);

#endif
