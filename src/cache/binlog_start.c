/*
 * binlog_start.c: where the follower's stream starts in the server's binlog
 * (see binlog_start.h).
 */
#include "cache/binlog_start.h"

#include <string.h>

void start_begin(struct binlog_start *s, const struct gtid *want, unsigned n,
		 const struct gtid *have, unsigned nhave)
{
	memset(s, 0, sizeof(*s));
	s->n = n < START_MAX_DOMAINS ? n : START_MAX_DOMAINS;
	if (s->n > 0)   /* an empty start may come with no list at all (want NULL) */
		memcpy(s->want, want, s->n * sizeof(*want));
	for (unsigned i = 0; i < s->n; i++) {
		bool held = false;

		for (unsigned k = 0; k < nhave; k++)
			if (have[k].domain == s->want[i].domain)
				held = true;
		s->covered[i] = !held;
		s->left += held;
	}
	if (n > START_MAX_DOMAINS)
		s->left++;   /* more than can be followed: never located, the start stays unproven */
}

/* Does g cover the start's GTID w: the same domain and server, at or after
 * it? (The server's own test for where a domain's skipping ends.) */
static bool covers(const struct gtid *g, const struct gtid *w)
{
	return g->domain == w->domain && g->server == w->server && g->seq >= w->seq;
}

unsigned start_cover_list(struct binlog_start *s, const struct gtid *list, unsigned n)
{
	unsigned newly = 0;

	for (unsigned i = 0; i < s->n; i++)
		for (unsigned k = 0; k < n && !s->covered[i]; k++)
			if (covers(&list[k], &s->want[i])) {
				s->covered[i] = true;
				s->left--;
				newly++;
			}
	return newly;
}

unsigned start_cover_group(struct binlog_start *s, const struct gtid *g)
{
	return start_cover_list(s, g, 1);
}

void start_cover_at(struct binlog_start *s, uint64_t pos)
{
	if (pos > s->pos)
		s->pos = pos;
}
