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
	__u64 steal_ns[ST_NR];	/* the waits split by who held the CPU */
	__u64 span_ns;		/* container-time they were measured over */
};
/* Add @cw, one container's window of @dur_ns. */
void waits_add(struct waits *acc, const struct cg_window *cw, __u64 dur_ns);
void waits_merge(struct waits *acc, const struct waits *x);
__u64 waits_quantile(const struct waits *x, double q);

enum effect_verdict {
	EFFECT_PENDING,		/* still measuring */
	EFFECT_BETTER,
	EFFECT_SAME,
	EFFECT_WORSE,		/* roll it back */
	EFFECT_INCONCLUSIVE,	/* too few waits, or too thin a tail, to tell */
	EFFECT_VERDICT_NR
};
const char *effect_verdict_name(enum effect_verdict v);

#define EFFECT_MIN_WAITS	20		/* per side, to judge at all */
#define EFFECT_FLOOR_NS		50000ull	/* waits below this are no one's tail */
#define EFFECT_LONG_NS		1000000ull	/* a long wait: a tail every service feels */
#define EFFECT_MIN_TAIL		8		/* tail waits (both sides) a threshold needs */
#define EFFECT_ALPHA		0.01		/* two-sided, shared by the thresholds */
#define EFFECT_EXTEND		4		/* inconclusive: measure up to this many times longer */

#define EFFECT_SERIES		16		/* windows a side keeps one by one, for their spread */

/* The first EFFECT_SERIES windows of a side one by one: how bursty its tail is. */
struct waits_series {
	struct waits w[EFFECT_SERIES];
	int n;
};
/* Keep @w as the next window of @s (past EFFECT_SERIES, not kept). */
void waits_series_add(struct waits_series *s, const struct waits *w);

/* What a verdict rests on: the threshold that decided it (or the deepest tested). */
struct effect_evidence {
	__u64 threshold_ns;	/* 0: no threshold had a tail to test */
	__u64 n_before, n_after;	/* waits */
	__u64 k_before, k_after;	/* of them at or over the threshold */
	double spread;		/* how much more tail counts varied between windows than chance */
	double p;		/* two-sided, of "the tail's share did not change" */
	bool tested;		/* false: too few tail waits (as independent ones) to test */
	__u64 long_ns_before, long_ns_after;	/* time in waits >= EFFECT_LONG_NS (estimate) */
};

/*
 * The verdict on the tail. For thresholds at EFFECT_LONG_NS, the pooled
 * p99.9 and p99, and each side's own p99.9 (a set the same read either way;
 * none below EFFECT_FLOOR_NS), the share of waits at or over the
 * threshold is compared before and after: under "no change" each of the k
 * tail waits falls after with probability n_after / (n_before + n_after), so
 * k_after is binomial. A share that moved by more than @worse_percent with a
 * two-sided p under EFFECT_ALPHA (split across the thresholds) is a change:
 * worse if any threshold got worse, better if one got better and none worse.
 * No change at a threshold with at least EFFECT_MIN_TAIL tail waits is
 * "same"; a tail too thin at every threshold is "inconclusive" (no tail at
 * all over the floor is "same").
 *
 * Waits are not independent: a burst of background work puts many long
 * waits in one window. With the windows of each side in @bser and @aser
 * (either may be NULL), the tail counts' spread between windows beyond
 * binomial chance (Pearson's chi-square per degree of freedom, each side
 * against its own share; at least 1) divides both counts before the test
 * (a quasi-binomial test): one bursty window weighs as what it is, and a
 * tail that only bursts is too thin to judge. @ev may be NULL.
 */
enum effect_verdict effect_judge(const struct waits *before, const struct waits *after,
				 const struct waits_series *bser, const struct waits_series *aser,
				 double worse_percent, struct effect_evidence *ev);

#define EFFECT_STALL_NS		10000000ull	/* a wait no online service may see from a write */
#define SIDE_MIN_NS_PER_S	1000000ull	/* a side effect: steal up by 1 ms per second ... */
#define SIDE_FACTOR		2		/* ... and at least doubled */

/*
 * A side effect: the victims now wait more behind a class other than BE (a
 * SCHED_IDLE BE group makes its CPUs look idle to wake-up placement, so
 * system tasks land next to the online ones). Rates are per second of a
 * victim's time.
 */
struct side_effect {
	int cls;			/* the KC_* class that rose most, -1: none */
	double before_ms_s, after_ms_s;	/* its steal, ms per second */
	double be_before_ms_s, be_after_ms_s;	/* BE's, for the log */
};
/*
 * Did steal behind SYSTEM, the online classes (LSE, LSR, LS together,
 * reported as KC_LS) or unclassified tasks rise by at least
 * SIDE_MIN_NS_PER_S and SIDE_FACTOR times from @before to @after? (Not
 * behind IDLE: a wait for an idle CPU to wake up is no work drawn there.)
 */
bool effect_side_effect(const struct waits *before, const struct waits *after,
			struct side_effect *out);

/* What the loop does with an action once judged. */
enum effect_outcome {
	OUTCOME_KEEP,
	OUTCOME_ESCALATE,	/* kept, and BE is to be kept off the victims' CPUs */
	OUTCOME_ROLLBACK,
};
/*
 * @v: the verdict; @side: a side effect was found; @over: the victims' tail
 * after it is still over a victim threshold; @can_escalate: BE may still be
 * kept off their CPUs (allowed, not this action, not held off). Worse is
 * rolled back. With a side effect and the tail still over, the harm moved:
 * an action that made the tail better is kept and escalated; one that did
 * not is escalated where it can be and else rolled back (it bought nothing
 * and drew other work next to the victims).
 */
enum effect_outcome effect_outcome(enum effect_verdict v, bool side, bool over,
				   bool can_escalate);

#define EFFECT_VICTIMS 16
struct effect {
	bool pending;
	char what[160];		/* "BE quota 0.60 cores on /kubepods/besteffort" */
	int kind;		/* the caller's action kind */
	__u64 target;		/* the caller's target (a culprit's cgid, or 0) */
	__u64 victims[EFFECT_VICTIMS];	/* measured on these; none: all online */
	size_t nvictims;
	struct waits before, after;
	struct waits_series before_win, after_win;	/* their windows, for the spread */
	int windows, need;
	struct effect_evidence ev;	/* of the last judgement */
	/* the transition: the victims' waits in the first window after the write */
	__u64 first_max_ns, first_stalls;	/* its longest wait; waits >= EFFECT_STALL_NS */
	struct side_effect side;	/* of the last judgement */
};
/* Start measuring an action; @before is copied. */
void effect_begin(struct effect *e, const char *what, int kind, __u64 target,
		  const __u64 *victims, size_t nvictims, const struct waits *before, int need);
/*
 * The waits in @w of the action's victims (all online when it has none),
 * over the time of those that ran or waited in it: an idle container is
 * neither looked up nor counted in the span.
 */
void effect_waits_of(const struct effect *e, const struct window *w,
		     const struct container_table *t, struct waits *out);
/*
 * Add one window; the verdict once @need windows were seen (then no longer
 * pending). An inconclusive verdict measures on, up to EFFECT_EXTEND * @need.
 */
enum effect_verdict effect_feed(struct effect *e, const struct window *w,
				const struct container_table *t, double worse_percent);
/* Waits >= EFFECT_STALL_NS in @x (by its histogram). */
__u64 waits_stalls(const struct waits *x);
/*
 * "victims' p99.9 wait 52 us -> 934 us (max 148 -> 1255 us, p99 28 -> 30 us;
 * waits >= 1 ms 0 -> 3 ms; tail >= 60 us 20/20000 -> 200/20000, p 1e-40)"
 */
int effect_describe(const struct effect *e, char *buf, size_t len);

#endif
