// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "hist.h"

int hist_cells_reserve(struct hist_cell **cells, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 4 * HIST_BUCKETS;
	struct hist_cell *c;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	c = realloc(*cells, n * sizeof(*c));
	if (!c)
		return -ENOMEM;
	*cells = c;
	*cap = n;
	return 0;
}

__u64 hist_lower(unsigned int i)
{
	unsigned int e, m;

	if (i < HIST_SUB)
		return i;
	e = i / HIST_SUB + HIST_SUB_BITS - 1;
	m = i % HIST_SUB;
	return (__u64)(HIST_SUB + m) << (e - HIST_SUB_BITS);
}

__u64 hist_upper(unsigned int i)
{
	if (i + 1 >= HIST_BUCKETS)
		return (__u64)-1;
	return hist_lower(i + 1);
}

/* The value reported for a rank in bucket @i: its midpoint (exact below 16 ns), at most @max. */
static __u64 bucket_value(unsigned int i, __u64 max)
{
	__u64 v;

	if (i >= HIST_BUCKETS)
		i = HIST_BUCKETS - 1;
	if (i < HIST_SUB || i == HIST_BUCKETS - 1)
		v = hist_lower(i);
	else
		v = hist_lower(i) + (hist_upper(i) - hist_lower(i)) / 2;
	return max && v > max ? max : v;
}

static __u64 rank_of(__u64 total, double q)
{
	__u64 rank = (__u64)ceil(q * (double)total);

	return rank < 1 ? 1 : rank;
}

__u64 hist_quantile(const __u32 *buckets, __u64 total, double q, __u64 max)
{
	__u64 rank, seen = 0;
	unsigned int i;

	if (!total)
		return 0;
	rank = rank_of(total, q);
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += buckets[i];
		if (seen >= rank)
			break;
	}
	return bucket_value(i, max);
}

__u64 hist_cells_quantile(const struct hist_cell *cells, size_t n, __u64 total, double q,
			  __u64 max)
{
	__u64 rank, seen = 0;
	size_t i;

	if (!total || !n)
		return 0;
	rank = rank_of(total, q);
	for (i = 0; i < n; i++) {
		seen += cells[i].count;
		if (seen >= rank)
			break;
	}
	return bucket_value(i < n ? cells[i].bucket : HIST_BUCKETS - 1, max);
}
