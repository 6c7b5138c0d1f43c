/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The closed loop: what an action did to the victims' run-queue waits.
 * The waits before the action (the victims' windows, or the last windows of
 * all online containers) are compared with the waits over the windows after
 * it; an action that made them worse is rolled back by the caller.
 */
#ifndef KOORD_EFFECT_H
#define KOORD_EFFECT_H

#include <stdbool.h>
#include <stddef.h>
#include "cgroup.h"
#include "window.h"

/* Waits of a set of containers over some windows. */
struct waits {
	__u32 hist[HIST_BUCKETS];
	__u64 count, sum_ns, max_ns;
};
void waits_add(struct waits *acc, const struct cg_window *cw);
void waits_merge(struct waits *acc, const struct waits *x);
__u64 waits_quantile(const struct waits *x, double q);

enum effect_verdict {
	EFFECT_PENDING,		/* still measuring */
	EFFECT_BETTER,
	EFFECT_SAME,
	EFFECT_WORSE,		/* roll it back */
	EFFECT_INCONCLUSIVE,	/* too few waits on a side to tell */
};
const char *effect_verdict_name(enum effect_verdict v);

#define EFFECT_MIN_WAITS	20	/* per side, to judge at all */
#define EFFECT_SLACK_NS		10000	/* p99 changes below this are noise */
/*
 * Worse when the p99 after exceeds the p99 before by more than
 * @worse_percent and EFFECT_SLACK_NS; better when it (or the p99.9) fell by
 * as much.
 */
enum effect_verdict effect_judge(const struct waits *before, const struct waits *after,
				 double worse_percent);

#define EFFECT_VICTIMS 16
struct effect {
	bool pending;
	char what[160];		/* "BE quota 0.60 cores on /kubepods/besteffort" */
	int kind;		/* the caller's action kind */
	__u64 target;		/* the caller's target (a culprit's cgid, or 0) */
	__u64 victims[EFFECT_VICTIMS];	/* measured on these; none: all online */
	size_t nvictims;
	struct waits before, after;
	int windows, need;
};
/* Start measuring an action; @before is copied. */
void effect_begin(struct effect *e, const char *what, int kind, __u64 target,
		  const __u64 *victims, size_t nvictims, const struct waits *before, int need);
/* The waits in @w of the action's victims (all online when it has none). */
void effect_waits_of(const struct effect *e, const struct window *w,
		     const struct container_table *t, struct waits *out);
/* Add one window; the verdict once @need windows were seen (then no longer pending). */
enum effect_verdict effect_feed(struct effect *e, const struct window *w,
				const struct container_table *t, double worse_percent);
/* "victims' p99 wait 640 us -> 700 us (p99.9 ..., max ..., N -> M waits)" */
int effect_describe(const struct effect *e, char *buf, size_t len);

#endif
