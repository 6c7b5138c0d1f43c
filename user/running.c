// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include "running.h"

/*
 * A switch takes a few microseconds: a CPU caught in one is read again until
 * it is out of it, for this long at most (a tight count of tries ran out
 * within a single switch under load, and the stretch was left out).
 */
#define RUNNING_MAX_NS	2000000ull

/* Has the CPU been caught switching for too long, counting from the first time (@start)? */
static bool too_long(__u64 *start, __u64 now)
{
	if (!*start)
		*start = now;
	return now - *start > RUNNING_MAX_NS;
}

int cpu_running_read(const struct cpu_state *cs, const struct cg_cpu_stats *stats,
		     __u32 cpu, __u32 nr_slots, clock_fn clock, void *ctx,
		     struct cpu_running *out)
{
	const struct cg_cpu_stats *st;
	__u64 last, now, start = 0;
	__u32 seq;

	for (;;) {
		seq = __atomic_load_n(&cs->seq, __ATOMIC_ACQUIRE);
		if (seq & 1) {
			if (too_long(&start, clock(ctx)))
				break;
			continue;
		}
		*out = (struct cpu_running){};
		last = __atomic_load_n(&cs->last_switch, __ATOMIC_RELAXED);
		out->slot = __atomic_load_n(&cs->cur_slot, __ATOMIC_RELAXED);
		out->cgid = __atomic_load_n(&cs->cur_cgid, __ATOMIC_RELAXED);
		if (out->slot && out->slot < nr_slots) {
			st = &stats[(size_t)cpu * nr_slots + out->slot];
			out->cpu_ns = __atomic_load_n(&st->cpu_ns, __ATOMIC_RELAXED);
		}
		now = clock(ctx);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&cs->seq, __ATOMIC_RELAXED) != seq) {
			if (too_long(&start, now))
				break;
			continue;
		}
		if (!out->cgid || !out->slot || out->slot >= nr_slots || !last || now < last) {
			*out = (struct cpu_running){};
			return 0;
		}
		out->cpu_ns += now - last;
		return 0;
	}
	*out = (struct cpu_running){};
	return -EAGAIN;
}
