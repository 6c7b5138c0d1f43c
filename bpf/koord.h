/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one header shared by the BPF programs and user space: every map key and
 * value layout, the QoS classes and the wait histogram's bucket function.
 */
#ifndef KOORD_H
#define KOORD_H

/*
 * QoS classes. KC_UNCLASSIFIED is 0 so that a container the loader has not
 * classified yet never counts as online. KC_IDLE is the CPU's idle task.
 */
enum koord_class {
	KC_UNCLASSIFIED = 0,
	KC_LSE,
	KC_LSR,
	KC_LS,
	KC_BE,
	KC_SYSTEM,
	KC_IDLE,
	KC_NR,
};

#define KOORD_MAX_CPUS	1024

#define KC_IS_ONLINE(c) ((c) == KC_LSE || (c) == KC_LSR || (c) == KC_LS)

/*
 * Slots of a container's steal split: one per class of the task that held the
 * queue CPU, then the container's own tasks and its own CFS throttling.
 */
enum koord_steal_slot {
	ST_SELF = KC_NR,
	ST_THROTTLED,
	ST_NR,
};

/*
 * Wait histogram: log-linear over nanoseconds. Values below 2^HIST_SUB_BITS
 * get a bucket each; above, every power of two is cut into 2^HIST_SUB_BITS
 * equal buckets, so a bucket is at most 1/16 = 6.25% wide relative to its
 * lower bound. Waits of 2^HIST_MAX_EXP ns (~69 s) and more share the last one.
 */
#define HIST_SUB_BITS	4
#define HIST_SUB	(1u << HIST_SUB_BITS)
#define HIST_MAX_EXP	36
#define HIST_BUCKETS	((HIST_MAX_EXP - HIST_SUB_BITS + 2) * HIST_SUB)

/* floor(log2(v)) for v > 0, branch-light and verifier-friendly. */
static inline unsigned int koord_log2(unsigned long long v)
{
	unsigned int r = 0, s;

	s = (v > 0xFFFFFFFFULL) << 5; v >>= s; r |= s;
	s = (v > 0xFFFF) << 4; v >>= s; r |= s;
	s = (v > 0xFF) << 3; v >>= s; r |= s;
	s = (v > 0xF) << 2; v >>= s; r |= s;
	s = (v > 0x3) << 1; v >>= s; r |= s;
	r |= (unsigned int)(v >> 1);
	return r;
}

static inline unsigned int hist_bucket(unsigned long long ns)
{
	unsigned int e;

	if (ns < HIST_SUB)
		return (unsigned int)ns;
	e = koord_log2(ns);
	if (e > HIST_MAX_EXP)
		return HIST_BUCKETS - 1;
	return (e - HIST_SUB_BITS + 1) * HIST_SUB +
	       (unsigned int)((ns >> (e - HIST_SUB_BITS)) & (HIST_SUB - 1));
}

/*
 * Hardware counters, read per CPU at each switch and charged to the container
 * that ran (where the PMU is missing, a software event stands in for tests).
 */
enum koord_pmu {
	PMU_CYCLES,
	PMU_INSTRUCTIONS,
	PMU_LLC_MISSES,
	PMU_NR,
};

/*
 * Slots of the touch array (sched.bpf.c's touched[]): past it slots share
 * entries, which makes user space read a container that did not change,
 * never skip one that did.
 */
#define TOUCH_SLOTS	(1u << 16)

/*
 * Per container and CPU, in the cg_cpu array at cpu * nr_slots + slot (the
 * container's slot is in cg_slot; one CPU's entries are contiguous, so CPUs
 * do not share lines). Written only by that CPU under its run-queue lock (so
 * plain adds are exact), except own_* which wakeups and migrations targeting
 * the CPU update with atomic adds. User space sums over CPUs.
 */
struct cg_cpu_stats {
	unsigned long long cpu_ns;	/* on-CPU time of the container's tasks */
	unsigned long long wait_count;	/* waits that ended on this CPU */
	unsigned long long wait_ns;	/* their total length */
	unsigned long long wait_max;	/* the longest single wait */
	/* the longest wait of each sampling epoch, in slot epoch & 1, and the epoch it is of */
	unsigned long long epoch_max[2];
	unsigned long long epoch_tag[2];
	unsigned long long steal_ns[ST_NR]; /* wait split by who held the CPU */
	unsigned long long inflicted_online_ns;
	unsigned long long inflicted_all_ns;
	/* tasks of this container waiting on this CPU, and their integral ... */
	long long own_n;
	long long own_s;
	/* ... and those of them counted as online waiters (in the CPU's n_online) */
	long long own_on_n;
	long long own_on_s;
	/* long-wait events emitted in the current second (rate limit) */
	unsigned long long ev_window;
	unsigned long long ev_count;
	unsigned long long pmu[PMU_NR];	/* scaled for multiplexing */
	/* when the slot was last cleared for reuse: anything older is another container's */
	unsigned long long born_ns;	/* last: cg_cpu_stats_reuse() clears what precedes it */
};

/*
 * Per CPU. Written by the CPU itself under its run-queue lock, except n_*,
 * s_* (tasks waiting on this CPU and minus the sum of their enqueue times)
 * and enq, which wakeups and migrations targeting it update with atomic adds.
 * seq is odd while the CPU's switch updates this state and its cg_cpu
 * entries: a reader that sees it even and unchanged around its reads read
 * them at one moment. Aligned so CPUs do not share cache lines.
 */
struct cpu_state {
	unsigned int seq;
	unsigned int cur_class;
	unsigned long long last_switch;	/* 0 until the CPU's first switch is seen */
	unsigned long long cur_cgid;	/* container running now, 0 for idle */
	unsigned long long cur_task;	/* task running now (its address) */
	unsigned long long cur_sum;	/* its se.sum_exec_runtime when it was switched in */
	unsigned int class_gen;		/* cur_class is of this generation */
	unsigned int cur_slot;		/* its slot, 0 for none */
	unsigned long long uncl_cgid;	/* the last container not classified yet that ran here */
	unsigned long long clk[KC_NR];	/* run time per class of the running task */
	long long n_all, s_all;		/* waiting tasks, all classes */
	long long n_online, s_online;	/* waiting online tasks */
	unsigned long long enq;		/* waiters ever queued here */
	/* at cur's switch-in: the waiting integrals, the waiters and enq */
	long long i_all_in, i_online_in, i_own_in, i_own_on_in;
	long long n_in;
	unsigned long long enq_in;
	/* the CPU's counters at its last switch: value, time enabled, time running */
	unsigned long long pmu_last[PMU_NR][3];
	/*
	 * What the observe program saw running here (run by user space on this
	 * CPU before it reads the running stretch); valid while seq is obs_seq.
	 * When a switch-in emitted no sched_switch, the task running is not
	 * cur_task: each one's part of the stretch by its own clock.
	 */
	unsigned int obs_seq;
	unsigned int obs_slot;		/* the running task's slot, 0 for none */
	unsigned long long obs_task;	/* the task running (its address) */
	unsigned long long obs_cgid;	/* its container, 0 for none */
	unsigned long long obs_at;	/* when seen */
	unsigned long long obs_run;	/* its run since picked, to obs_at */
	unsigned long long obs_rec_run;	/* cur_task's own last run, when it is not the one running */
} __attribute__((aligned(64)));

/*
 * Arithmetic shared by the BPF programs and user space (and unit-tested
 * there on plain structs).
 */

/*
 * Fractions in fixed point with KOORD_FRAC_BITS bits, for shares of times:
 * a product of two times passes 2^64 once both pass 4.3 s. No branch and no
 * shift by a variable amount: either, in the loop over classes, multiplied
 * the verifier's explored instructions by 3.5 (raw_tp on 6.1 then hit its
 * limit).
 */
#define KOORD_FRAC_BITS	20
#define KOORD_FRAC_MAX	((1ULL << (64 - KOORD_FRAC_BITS)) - 1)	/* ~4.9 h in ns */

/* min(@x, KOORD_FRAC_MAX) for @x below 2^63, without a branch. */
static inline unsigned long long koord_frac_cap(unsigned long long x)
{
	unsigned long long below = (x - KOORD_FRAC_MAX) >> 63;	/* 1 when x < max */

	return KOORD_FRAC_MAX ^ ((x ^ KOORD_FRAC_MAX) & (0 - below));
}

/* @v times the fixed-point @f, without overflow while the result fits. */
static inline unsigned long long koord_frac_mul(unsigned long long v, unsigned long long f)
{
	return (v >> KOORD_FRAC_BITS) * f +
	       (((v & ((1ULL << KOORD_FRAC_BITS) - 1)) * f) >> KOORD_FRAC_BITS);
}

/*
 * @v * @part / @whole for @part <= @whole, @whole > 0: never overflows and
 * never exceeds @v; relative error below 2^-20 (@part is capped at ~4.9 h).
 */
static inline unsigned long long koord_part(unsigned long long v, unsigned long long part,
					    unsigned long long whole)
{
	return koord_frac_mul(v, (koord_frac_cap(part) << KOORD_FRAC_BITS) / whole);
}

/*
 * @a * @b / @c for 0 < @c <= @b (a count scaled up by a ratio of times, @b
 * capped at ~4.9 h): relative error below 2^-20 / (@b / @c), no overflow
 * while the result fits.
 */
static inline unsigned long long koord_muldiv(unsigned long long a, unsigned long long b,
					      unsigned long long c)
{
	return koord_frac_mul(a, (koord_frac_cap(b) << KOORD_FRAC_BITS) / c);
}

/*
 * A waiting integral over one run of @delta ns, read as s + n * t at both
 * ends, kept to what is possible: not below 0, not above @delta times the
 * most tasks that can have waited meanwhile (@n_max). A migration queues a
 * waiter on its destination without that CPU's lock, so a reader can see
 * the count and the sum torn apart: off by a whole timestamp.
 */
static inline unsigned long long run_integral(long long v, unsigned long long delta,
					      unsigned long long n_max)
{
	unsigned long long lim = delta * n_max;

	if (v <= 0)
		return 0;
	return (unsigned long long)v > lim ? lim : (unsigned long long)v;
}

/* Note a wait of @ns that ended in sampling epoch @e. */
static inline void epoch_max_note(struct cg_cpu_stats *st, unsigned long long e,
				  unsigned long long ns)
{
	unsigned int i = e & 1;

	if (st->epoch_tag[i] != e) {
		st->epoch_tag[i] = e;
		st->epoch_max[i] = 0;
	}
	if (ns > st->epoch_max[i])
		st->epoch_max[i] = ns;
}

/* The longest wait that ended in epoch @e, 0 when none did. */
static inline unsigned long long epoch_max_of(const struct cg_cpu_stats *st, unsigned long long e)
{
	unsigned int i = e & 1;

	return st->epoch_tag[i] == e ? st->epoch_max[i] : 0;
}

/*
 * Clear a removed container's entry for the slot's next owner. The stamp
 * goes first: an event of the old owner that reads it from then on knows it
 * is older and drops its update, and the entry is never seen unstamped.
 * x86 keeps stores in order; the barrier keeps the compiler from moving them.
 */
static inline void cg_cpu_stats_reuse(struct cg_cpu_stats *st, unsigned long long now)
{
	st->born_ns = now;
	asm volatile("" ::: "memory");
	__builtin_memset(st, 0, __builtin_offsetof(struct cg_cpu_stats, born_ns));
}

/* Per container, in the cg_hist array at its slot: the wait histogram (atomic adds from any CPU). */
struct cg_hist {
	unsigned int buckets[HIST_BUCKETS];	/* wrap: user space differences mod 2^32 */
};

/* Collector-wide counters, one slot per CPU, summed by user space. */
enum koord_counter {
	CNT_SLOTS_FULL,		/* no free slot: a container's events were not accounted */
	CNT_TASK_FULL,		/* task state could not be created */
	CNT_WAIT_UNSEEN_CPU,	/* wait began before the CPU's first switch */
	CNT_WAIT_STALE,		/* wait closed at its task's pick: no switch-in event */
	CNT_WAIT_STALE_DROPPED,	/* such a wait dropped: the stale-wait program did not run */
	CNT_SWITCH_MISSED,	/* a switch's prev was not the task last seen switched in */
	CNT_LONG_WAITS,		/* online waits above the long-wait threshold */
	CNT_EVENTS_DROPPED,	/* long-wait records not emitted (rate limit) */
	CNT_EVENTS_RB_FULL,	/* long-wait records lost: ring buffer full */
	CNT_REACT_WAITS,	/* shorter online waits behind a container not classified yet */
	CNT_NR,
};

/*
 * Tests only: which switches of one container the switch programs skip, as
 * if the kernel had not reported them (it leaves a few a second unreported).
 */
enum koord_hide_side {
	HIDE_NONE,
	HIDE_OUT,		/* switches out of its tasks */
	HIDE_IN,		/* switches into its tasks */
};

/* A record of a wait shorter than the long-wait threshold (react_wait_ns). */
#define LW_REACT_ONLY	1u

/* One long wait of an online task (ring buffer record). */
struct long_wait_event {
	unsigned long long ts_ns;
	unsigned long long wait_ns;
	unsigned long long be_ns;	/* the part of the wait BE tasks held the CPU */
	unsigned long long cgid;	/* victim's container */
	unsigned long long culprit_cgid; /* container of the task that ran last */
	unsigned int pid;
	unsigned int culprit_pid;
	unsigned int cpu;
	unsigned int flags;		/* LW_REACT_ONLY */
	char comm[16];
	char culprit_comm[16];
};

#endif /* KOORD_H */
