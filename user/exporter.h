/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Prometheus text exposition (format 0.0.4) of the collector's counters:
 * koord_bpf_ prefix, base units, counters since the collector started.
 * docs/metrics.md ("Prometheus metrics") lists every family.
 */
#ifndef KOORD_EXPORTER_H
#define KOORD_EXPORTER_H

#include <stddef.h>
#include <linux/types.h>
#include "cgroup.h"
#include "window.h"

/*
 * The wait histogram's Prometheus buckets: le = 2^k - 1 ns for k in
 * [EXP_LE_FIRST, EXP_LE_LAST], then +Inf. Waits are whole nanoseconds and
 * 2^k (k >= 4) is a bound of the log-linear buckets, so "<= 2^k - 1 ns" is
 * exactly the sum of the buckets below 2^k: no bucket is split.
 */
#define EXP_LE_FIRST	10	/* ~1 us */
#define EXP_LE_LAST	34	/* ~17.2 s */
#define EXP_LE_N	(EXP_LE_LAST - EXP_LE_FIRST + 1)

/* One container's wait histogram in Prometheus buckets, kept in 64 bits. */
struct exp_hist {
	__u64 cgid;
	__u64 le[EXP_LE_N + 1];		/* per bucket (not cumulative); last: above the last le */
	__u64 wait_count, cpu_ns;	/* the sample's, to notice a reset */
};

/*
 * The exporter's state: BPF keeps histogram buckets as u32 that wrap, so
 * the cumulative Prometheus histogram is kept here by adding each window's
 * increase (counters are exposed from the sample directly).
 */
struct exporter {
	struct exp_hist *v;	/* sorted by cgid */
	size_t n;
	__u64 gen;		/* the collector's sample it holds (struct sample), 0: none */
};

/* What the exposition says about the process (all optional but version). */
struct exporter_info {
	const char *version;
	const char *mode;		/* collector mode, e.g. "tp_btf+task_storage" */
	const char *cgroup_root;
	int cgroup_version;
	double period_s;		/* configured period, 0: not exposed */
	double last_period_s;		/* time spent on the last period's work, < 0: not exposed */
	__u64 scans;			/* container table walks so far */
	unsigned int journal_set_aside;	/* values of a past run's journal not restored at start */
	/*
	 * Wait buckets for online containers only (LSE, LSR, LS): the others'
	 * histograms hold +Inf alone, with _sum and _count (3 series, not 28).
	 */
	bool buckets_online_only;
};

/*
 * Fold window @w (from the previous sample to @b) into the cumulative
 * histograms: containers of @b carry over and grow by @w's buckets; those
 * gone from @b are dropped; a container whose counters went backwards in
 * @b (its entries were re-created) starts over. Returns 0 or -ENOMEM.
 */
int exporter_update(struct exporter *e, const struct window *w, const struct sample *b);
void exporter_free(struct exporter *e);

/* Wait histogram bucket bounds: the k-th le in nanoseconds (k < EXP_LE_N). */
__u64 exporter_le_ns(unsigned int k);

/*
 * Render the exposition of sample @s (counters since start), the cumulative
 * histograms of @e, and the last window @w (gauges; NULL: left out), with
 * the containers' labels from @t. Containers @t does not know are left out
 * (their labels are unknown; the daemon walks again when they appear) and
 * counted in koord_bpf_unknown_containers. *@out is malloc'ed and
 * NUL-terminated. Returns 0 or -ENOMEM.
 */
int exporter_render(const struct exporter *e, const struct sample *s, const struct window *w,
		    const struct container_table *t, const struct exporter_info *info,
		    char **out, size_t *len);

/*
 * Where a render can go instead of one buffer: @fn is given the text in
 * order, a piece of about 64 KiB at a time (so a render holds no more);
 * a non-zero return stops the render, which returns it (-EIO when > 0).
 */
struct exporter_sink {
	int (*fn)(void *ctx, const char *p, size_t n);
	void *ctx;
};
int exporter_render_to(const struct exporter *e, const struct sample *s, const struct window *w,
		       const struct container_table *t, const struct exporter_info *info,
		       const struct exporter_sink *sink);

/*
 * Append @v to @buf as a label value: backslash, double quote and newline
 * escaped as the format requires; bytes that are not UTF-8 become U+FFFD.
 * Returns the length written (at most 3 * strlen(v)), NUL-terminated.
 */
size_t exporter_escape_label(char *buf, const char *v);

#endif
