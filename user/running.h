/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What runs on a CPU at one moment, and its container's on-CPU time there up
 * to that moment, read from the mapped BPF state under the CPU's switch
 * sequence count.
 */
#ifndef KOORD_RUNNING_H
#define KOORD_RUNNING_H

#include <linux/types.h>
#include "../bpf/koord.h"

struct cpu_running {
	__u64 cgid;	/* container running, 0 for none (idle, or not seen yet) */
	__u32 slot;	/* its slot, 0 for none */
	__u64 cpu_ns;	/* its cpu_ns on this CPU, the running stretch included */
	/*
	 * The container of the task last seen switched in, when the observe
	 * program found another running (its switch-in emitted no
	 * sched_switch): its part of the stretch by its task's own clock.
	 */
	__u64 rec_cgid;
	__u32 rec_slot;
	__u64 rec_cpu_ns;
};

typedef __u64 (*clock_fn)(void *ctx);

/*
 * Read CPU @cpu's state @cs and, in @stats (the cg_cpu array, @nr_slots per
 * CPU), its running container's cpu_ns, then @clock: all at one moment, as
 * no switch began or ended around the reads. The stretch from the CPU's last
 * switch to that moment is added, which the switch that ends it charges
 * from the same base: nothing counted twice. Where the observe program saw
 * another task running than the one last switched in (with the same switch
 * count), the stretch is split as the next switch will split it: the running
 * task's run since picked to its container, the recorded task's own last run
 * to its. Returns 0, or -EAGAIN when the
 * CPU kept switching through every read for 2 ms (by @clock) and 1000 tries.
 */
int cpu_running_read(const struct cpu_state *cs, const struct cg_cpu_stats *stats,
		     __u32 cpu, __u32 nr_slots, clock_fn clock, void *ctx,
		     struct cpu_running *out);

#endif
