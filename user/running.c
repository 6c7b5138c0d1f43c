// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include "running.h"

/*
 * A switch takes a few microseconds: a CPU caught in one is read again until
 * it is out of it, for this long and this many tries at least (a tight count
 * of tries ran out within a single switch under load; a reader preempted
 * between two tries sees milliseconds pass in one). Either way the stretch
 * is left out.
 */
#define RUNNING_MAX_NS		2000000ull
#define RUNNING_MIN_TRIES	1000u

/* Has the CPU been caught switching for too long, counting from the first time (@start)? */
static bool too_long(__u64 *start, unsigned int *tries, __u64 now)
{
	if (!*start)
		*start = now;
	return ++*tries >= RUNNING_MIN_TRIES && now - *start > RUNNING_MAX_NS;
}

/* What the observe program saw, as read with the state. */
struct observed {
	__u32 seq, slot;
	__u64 task, cgid, at, run, rec_run;
};

/* cpu_ns of @slot on @cpu, 0 for no slot. */
static __u64 counter(const struct cg_cpu_stats *stats, __u32 cpu, __u32 nr_slots, __u32 slot)
{
	if (!slot || slot >= nr_slots)
		return 0;
	return __atomic_load_n(&stats[(size_t)cpu * nr_slots + slot].cpu_ns, __ATOMIC_RELAXED);
}

/*
 * A running task's own clock (se.sum_exec_runtime) is brought up to date at
 * ticks and switches: it lags by up to a tick (10 ms at HZ=100).
 */
#define OWN_CLOCK_LAG_NS	10000000ull

/*
 * Since the last seen switch at @last, another task running than the one it
 * switched in: the running task's run since picked (to the observation, and
 * on since: no switch since) to its container, the recorded one's run since
 * switched in to its (@out holds its slot and container), the rest to
 * neither, as on_switch charges it when the running task leaves. The
 * running task's clock lags; with one switch unseen, its run is the interval
 * less the recorded task's (exact: that one is switched out), which is taken
 * where it is within a tick of the clock.
 */
static int split(struct cpu_running *out, const struct observed *o, __u64 last, __u64 now,
		 __u64 rec_ns, __u64 obs_ns, __u32 nr_slots)
{
	__u64 span = now - last, seen = o->at - last, run = o->run, rec;

	if (out->cgid && seen > o->rec_run && seen - o->rec_run > run &&
	    seen - o->rec_run - run <= OWN_CLOCK_LAG_NS)
		run = seen - o->rec_run;
	run += now - o->at;
	if (run > span)
		run = span;
	rec = o->rec_run < span - run ? o->rec_run : span - run;
	if (out->cgid && out->slot && out->slot < nr_slots) {
		out->rec_cgid = out->cgid;
		out->rec_slot = out->slot;
		out->rec_cpu_ns = rec_ns + rec;
	}
	out->cgid = 0;
	out->slot = 0;
	out->cpu_ns = 0;
	if (o->cgid && o->slot && o->slot < nr_slots) {
		out->cgid = o->cgid;
		out->slot = o->slot;
		out->cpu_ns = obs_ns + run;
	}
	return 0;
}

int cpu_running_read(const struct cpu_state *cs, const struct cg_cpu_stats *stats,
		     __u32 cpu, __u32 nr_slots, clock_fn clock, void *ctx,
		     struct cpu_running *out)
{
	__u64 last, now, start = 0, task, rec_ns, obs_ns;
	struct observed obs;
	unsigned int tries = 0;
	__u32 seq;

	for (;;) {
		seq = __atomic_load_n(&cs->seq, __ATOMIC_ACQUIRE);
		if (seq & 1) {
			if (too_long(&start, &tries, clock(ctx)))
				break;
			continue;
		}
		*out = (struct cpu_running){};
		last = __atomic_load_n(&cs->last_switch, __ATOMIC_RELAXED);
		out->slot = __atomic_load_n(&cs->cur_slot, __ATOMIC_RELAXED);
		out->cgid = __atomic_load_n(&cs->cur_cgid, __ATOMIC_RELAXED);
		task = __atomic_load_n(&cs->cur_task, __ATOMIC_RELAXED);
		obs = (struct observed){
			__atomic_load_n(&cs->obs_seq, __ATOMIC_RELAXED),
			__atomic_load_n(&cs->obs_slot, __ATOMIC_RELAXED),
			__atomic_load_n(&cs->obs_task, __ATOMIC_RELAXED),
			__atomic_load_n(&cs->obs_cgid, __ATOMIC_RELAXED),
			__atomic_load_n(&cs->obs_at, __ATOMIC_RELAXED),
			__atomic_load_n(&cs->obs_run, __ATOMIC_RELAXED),
			__atomic_load_n(&cs->obs_rec_run, __ATOMIC_RELAXED),
		};
		rec_ns = counter(stats, cpu, nr_slots, out->slot);
		obs_ns = counter(stats, cpu, nr_slots, obs.slot);
		now = clock(ctx);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&cs->seq, __ATOMIC_RELAXED) != seq) {
			if (too_long(&start, &tries, now))
				break;
			continue;
		}
		if (!last || now < last) {
			*out = (struct cpu_running){};
			return 0;
		}
		if (obs.seq == seq && obs.task != task && now >= obs.at && obs.at >= last)
			return split(out, &obs, last, now, rec_ns, obs_ns, nr_slots);
		if (!out->cgid || !out->slot || out->slot >= nr_slots) {
			*out = (struct cpu_running){};
			return 0;
		}
		out->cpu_ns = rec_ns + now - last;
		return 0;
	}
	*out = (struct cpu_running){};
	return -EAGAIN;
}
