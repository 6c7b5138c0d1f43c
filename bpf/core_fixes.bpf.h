/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* CO-RE shims for fields that moved or were renamed between kernels. */
#ifndef KOORD_CORE_FIXES_BPF_H
#define KOORD_CORE_FIXES_BPF_H

#include <vmlinux.h>
#include <bpf/bpf_core_read.h>

/* 5.14 renamed task_struct::state to __state. */
struct task_struct___o {
	volatile long int state;
} __attribute__((preserve_access_index));

static __always_inline long task_state_word(struct task_struct *p)
{
	struct task_struct___o *o = (void *)p;

	if (bpf_core_field_exists(p->__state))
		return BPF_CORE_READ(p, __state);
	return BPF_CORE_READ(o, state);
}

/*
 * The task's CPU: thread_info::cpu where THREAD_INFO_IN_TASK keeps it
 * (x86 since 5.16), task_struct::cpu before.
 */
struct task_struct___cpu {
	unsigned int cpu;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_cpu(struct task_struct *p)
{
	struct task_struct___cpu *o = (void *)p;

	if (bpf_core_field_exists(p->thread_info.cpu))
		return BPF_CORE_READ(p, thread_info.cpu);
	return BPF_CORE_READ(o, cpu);
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

#endif
