/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Log-linear wait histogram (buckets defined in koord.h): bounds and percentiles. */
#ifndef KOORD_HIST_H
#define KOORD_HIST_H

#include <linux/types.h>
#include "../bpf/koord.h"

/* Bucket @i holds values in [hist_lower(i), hist_upper(i)). */
__u64 hist_lower(unsigned int i);
__u64 hist_upper(unsigned int i);

/*
 * The @q-quantile (0 < q <= 1) of a histogram with @total values: the
 * midpoint of the bucket holding the ceil(q * total)-th smallest value
 * (exact below 16 ns), never above @max when @max is non-zero. 0 when empty.
 */
__u64 hist_quantile(const __u32 *buckets, __u64 total, double q, __u64 max);

#endif
