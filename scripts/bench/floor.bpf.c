// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The floor of `make bench`: the least a tp_btf sched_switch program can do,
 * one per-CPU array lookup and an increment. Its run_time_ns / run_cnt is
 * what any handler on this hook pays before doing any work (trampoline entry,
 * bpf_stats' own clock reads, one map lookup), measured in the same run as
 * the collector and its peers.
 */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} floor_cnt SEC(".maps");

SEC("tp_btf/sched_switch")
int BPF_PROG(floor_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 zero = 0;
	__u64 *c = bpf_map_lookup_elem(&floor_cnt, &zero);

	if (c)
		(*c)++;
	return 0;
}
