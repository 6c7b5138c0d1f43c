/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Parsers of cgroup control files' text. Pure functions (no I/O), so that
 * they can be fuzzed (tests/fuzz/) apart from the files.
 */
#ifndef KOORD_CGFILE_H
#define KOORD_CGFILE_H

#include <stdbool.h>

/* The kernel's bounds (kernel/sched/core.c): period 1 ms..1 s, quota below 2^44 us. */
#define QUOTA_PERIOD_MIN_US	1000L
#define QUOTA_PERIOD_MAX_US	1000000L
#define QUOTA_MAX_US		((1L << 44) - 1)

/*
 * A CFS quota file's text into @quota (-1: no limit) and @period, in µs.
 * v2 cpu.max: "max PERIOD" or "QUOTA PERIOD"; v1 cpu.cfs_quota_us: "QUOTA"
 * or "-1" (the period is in another file: @period is set to 0). Trailing
 * whitespace is allowed. Returns 0, or -EINVAL for anything else or a value
 * outside the kernel's bounds (so that scaling it cannot overflow).
 */
int quota_parse(const char *text, bool v2, long *quota, long *period);
/* cpu.cfs_period_us's text: the period in µs, or -EINVAL. */
long quota_period_parse(const char *text);

#endif
