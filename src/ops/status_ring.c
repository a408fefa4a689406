/*
 * status_ring.c: the ring of per-second samples and the histogram quantile
 * estimate (see status_ring.h).
 */
#include "ops/status_ring.h"

#include <math.h>

void status_ring_push(struct status_ring *r, const struct status_sample *s)
{
	r->s[r->next] = *s;
	r->next = (r->next + 1) % STATUS_RING_LEN;
	if (r->n < STATUS_RING_LEN)
		r->n++;
}

const struct status_sample *status_ring_at(const struct status_ring *r, unsigned i)
{
	unsigned oldest = (r->next + STATUS_RING_LEN - r->n) % STATUS_RING_LEN;

	return &r->s[(oldest + i) % STATUS_RING_LEN];
}

double status_quantile(const double *le, size_t n_le, const uint64_t *delta, double q)
{
	uint64_t total = 0, below = 0;
	double rank;
	size_t i;

	for (i = 0; i <= n_le; i++)
		total += delta[i];
	if (total == 0 || n_le == 0)
		return NAN;
	rank = q * (double)total;
	for (i = 0; i < n_le; i++) {
		if (delta[i] > 0 && (double)(below + delta[i]) >= rank) {
			double lo = i == 0 ? 0.0 : le[i - 1];

			return lo + (le[i] - lo) * (rank - (double)below) / (double)delta[i];
		}
		below += delta[i];
	}
	return le[n_le - 1]; /* in the +Inf bucket: no upper bound to interpolate to */
}
