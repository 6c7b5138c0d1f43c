// SPDX-License-Identifier: GPL-2.0
/*
 * VM clock-skew probe (see skew.c): records, for one task, every sched_wakeup,
 * sched_wakeup_new and sched_switch with bpf_ktime_get_ns() read first thing
 * in the program, so user space can pair each event with ftrace's record of
 * the same tracepoint hit.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#define SKEW_MAX_EVENTS 65536

enum { EV_WAKE = 1, EV_OUT_R, EV_OUT_S, EV_IN };

struct ev {
	__u64 ts;
	__u32 kind;
	__u32 pad;
};

const volatile __u32 target_pid;	/* set before load */
__u32 nev;				/* events recorded (may exceed the array) */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SKEW_MAX_EVENTS);
	__type(key, __u32);
	__type(value, struct ev);
} evs SEC(".maps");

/* 5.14 renamed task_struct::state to __state. */
struct task_struct___o {
	volatile long int state;
} __attribute__((preserve_access_index));

static __always_inline long state_word(struct task_struct *p)
{
	struct task_struct___o *o = (void *)p;

	if (bpf_core_field_exists(p->__state))
		return BPF_CORE_READ(p, __state);
	return BPF_CORE_READ(o, state);
}

static __always_inline void push(__u64 ts, __u32 kind)
{
	/* Plain increment: the probe is pinned, its events come from one CPU
	 * (and fetch-and-add needs BPF atomics that 5.10 lacks). */
	__u32 i = nev++;
	struct ev *e = bpf_map_lookup_elem(&evs, &i);

	if (e) {
		e->ts = ts;
		e->kind = kind;
	}
}

static __always_inline int on_wakeup(struct task_struct *p)
{
	__u64 now = bpf_ktime_get_ns();

	if (BPF_CORE_READ(p, pid) == target_pid)
		push(now, EV_WAKE);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(skew_wakeup, struct task_struct *p) { return on_wakeup(p); }
SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(skew_wakeup_new, struct task_struct *p) { return on_wakeup(p); }

SEC("tp_btf/sched_switch")
int BPF_PROG(skew_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();

	if (BPF_CORE_READ(prev, pid) == target_pid)
		push(now, preempt || state_word(prev) == 0 ? EV_OUT_R : EV_OUT_S);
	if (BPF_CORE_READ(next, pid) == target_pid)
		push(now, EV_IN);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
