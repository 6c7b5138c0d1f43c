/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Log-linear wait histogram (buckets defined in koord.h): bounds and percentiles. */
#ifndef KOORD_HIST_H
#define KOORD_HIST_H

#include <stddef.h>
#include <linux/types.h>
#include "../bpf/koord.h"

/* A bucket with a count: a window's histogram keeps only these, by bucket. */
struct hist_cell {
	__u32 bucket;
	__u32 count;
};

/* Room for @need cells in the pool @cells of @cap (doubling); 0 or -ENOMEM. */
int hist_cells_reserve(struct hist_cell **cells, size_t *cap, size_t need);

/* Bucket @i holds values in [hist_lower(i), hist_upper(i)). */
__u64 hist_lower(unsigned int i);
__u64 hist_upper(unsigned int i);

/*
 * The @q-quantile (0 < q <= 1) of a histogram with @total values: the
 * midpoint of the bucket holding the ceil(q * total)-th smallest value
 * (exact below 16 ns), never above @max when @max is non-zero. 0 when empty.
 */
__u64 hist_quantile(const __u32 *buckets, __u64 total, double q, __u64 max);
/* The same over the buckets with a count only, @cells sorted by bucket. */
__u64 hist_cells_quantile(const struct hist_cell *cells, size_t n, __u64 total, double q,
			  __u64 max);

#endif
