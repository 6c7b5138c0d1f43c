/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* CO-RE shims for fields that moved or were renamed between kernels. */
#ifndef KOORD_CORE_FIXES_BPF_H
#define KOORD_CORE_FIXES_BPF_H

#include <vmlinux.h>
#include <bpf/bpf_core_read.h>

/*
 * A field behind a BTF pointer. tp_btf programs load it directly (the
 * verifier checks the access; it costs a load), raw_tp programs, which get
 * untyped pointers, through bpf_probe_read_kernel (a helper call each).
 * @btf is a constant at every call site, so only one side is compiled.
 */
#define KREAD(btf, p, field) ((btf) ? (p)->field : BPF_CORE_READ(p, field))

/* 5.14 renamed task_struct::state to __state. */
struct task_struct___o {
	volatile long int state;
} __attribute__((preserve_access_index));

static __always_inline long task_state_word(struct task_struct *p, bool btf)
{
	struct task_struct___o *o = (void *)p;

	if (bpf_core_field_exists(p->__state))
		return KREAD(btf, p, __state);
	return KREAD(btf, o, state);
}

/*
 * The task's CPU: thread_info::cpu where THREAD_INFO_IN_TASK keeps it
 * (x86 since 5.16), task_struct::cpu before.
 */
struct task_struct___cpu {
	unsigned int cpu;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_cpu(struct task_struct *p, bool btf)
{
	struct task_struct___cpu *o = (void *)p;

	if (bpf_core_field_exists(p->thread_info.cpu))
		return KREAD(btf, p, thread_info.cpu);
	return KREAD(btf, o, cpu);
}

/*
 * The container of a task: on cgroup v2 its default-hierarchy cgroup, on v1
 * the cgroup of its cpu subsystem state. Both ids are the kernfs node id,
 * which is the cgroup directory's inode number.
 */
static __always_inline __u64 task_cgroup_id(struct task_struct *p, bool v2)
{
	struct cgroup_subsys_state *css;
	struct css_set *cset = BPF_CORE_READ(p, cgroups);
	int id;

	if (v2)
		return BPF_CORE_READ(cset, dfl_cgrp, kn, id);
	id = bpf_core_enum_value(enum cgroup_subsys_id, cpu_cgrp_id);
	/* The slot index is known only at load time: read it as a value. */
	if (bpf_core_read(&css, sizeof(css), &cset->subsys[id & 15]))
		return 0;
	return BPF_CORE_READ(css, cgroup, kn, id);
}

/*
 * CFS throttling. 6.6+ keeps, per cfs_rq, the time it (or an ancestor) was
 * throttled: throttled_clock_self_time, plus the running part since
 * throttled_clock_self (rq->clock based). Local flavors: clang 14 cannot
 * relocate against vmlinux.h's cache-line aligned struct cfs_rq.
 */
struct rq___thr {
	__u64 clock;
} __attribute__((preserve_access_index));

struct cfs_rq___thr {
	__u64 throttled_clock_self;
	__u64 throttled_clock_self_time;
	struct rq___thr *rq;
	struct task_group *tg;
} __attribute__((preserve_access_index));

struct task_group___thr {
	struct cfs_rq___thr **cfs_rq;
} __attribute__((preserve_access_index));

struct sched_entity___thr {
	struct cfs_rq___thr *cfs_rq;
} __attribute__((preserve_access_index));

/* 6.18 throttles per task: a throttled task leaves the queue while runnable. */
struct task_struct___thr {
	bool throttled;
	struct sched_entity___thr se;
} __attribute__((preserve_access_index));

static __always_inline bool have_throttle_clock(void)
{
	return bpf_core_field_exists(struct cfs_rq___thr, throttled_clock_self_time);
}

/*
 * The cfs_rq of @p's group on the CPU @p is on (set_task_rq() keeps it with
 * the task's CPU), 0 where throttled time cannot be read.
 */
static __always_inline struct cfs_rq___thr *task_cfs_rq(struct task_struct *p, bool btf)
{
	struct task_struct___thr *t = (void *)p;

	if (!have_throttle_clock())
		return NULL;
	return KREAD(btf, t, se.cfs_rq);
}

/* The cfs_rq of @p's group on another CPU @cpu (a migration's destination). */
static __always_inline __u64 task_cfs_rq_on(struct task_struct *p, __u32 cpu)
{
	struct cfs_rq___thr *cfs = task_cfs_rq(p, false), *out = NULL, **slots;
	struct task_group___thr *tg;

	if (!cfs)
		return 0;
	tg = (void *)BPF_CORE_READ(cfs, tg);
	if (!tg)
		return 0;
	slots = BPF_CORE_READ(tg, cfs_rq);
	if (!slots || bpf_probe_read_kernel(&out, sizeof(out), slots + (cpu & 1023)))
		return 0;
	return (__u64)out;
}

/* Throttled time of @cfs so far, in rq->clock nanoseconds. */
static __always_inline __u64 cfs_throttled_ns(struct cfs_rq___thr *cfs, bool btf)
{
	struct rq___thr *rq;
	__u64 t, since;

	if (!cfs || !have_throttle_clock())
		return 0;
	t = KREAD(btf, cfs, throttled_clock_self_time);
	since = KREAD(btf, cfs, throttled_clock_self);
	if (since) {
		rq = KREAD(btf, cfs, rq);
		t += KREAD(btf, rq, clock) - since;
	}
	return t;
}

static __always_inline bool task_throttled(struct task_struct *p, bool btf)
{
	struct task_struct___thr *t = (void *)p;

	if (!bpf_core_field_exists(t->throttled))
		return false;
	return KREAD(btf, t, throttled);
}

#endif
