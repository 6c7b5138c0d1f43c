// SPDX-License-Identifier: GPL-2.0
/* VM smoke test (see probe.c): a tp_btf program doing CO-RE reads. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

const volatile __u32 target_tgid;	/* set by userspace before load */
__u64 switches;				/* every sched_switch seen */
__u64 target_switches;			/* switches out of target_tgid */
__u64 target_cgid;			/* that task's cgroup v2 id (kernfs id) */

SEC("tp_btf/sched_switch")
int BPF_PROG(probe_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__sync_fetch_and_add(&switches, 1);
	if (BPF_CORE_READ(prev, tgid) != target_tgid)
		return 0;
	target_cgid = BPF_CORE_READ(prev, cgroups, dfl_cgrp, kn, id);
	__sync_fetch_and_add(&target_switches, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
