// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Primitives of a sched_switch handler, one tp_btf program each, attached
 * together and measured in the same runs as the collector: each program is
 * the floor (a per-CPU counter) plus one kind of operation the collector's
 * hot path uses, so its cost minus prim_floor's is that operation's price on
 * this machine (approximately: they run one after the other, warm, which the
 * collector's one program per hook does not). `make bench` reports them under
 * "primitives".
 */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cnt SEC(".maps");

/* Shaped like the collector's cg_cpu: 16-byte key, 200-byte value. */
struct key16 { __u64 cgid; __u32 cpu; __u32 pad; };
struct val200 { __u64 v[25]; };
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct key16);
	__type(value, struct val200);
} h16 SEC(".maps");

/* Shaped like the collector's per-task state (136 bytes). */
struct val136 { __u64 v[17]; };
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct val136);
} tstore SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct val200);
} shared SEC(".maps");

static __always_inline __u64 *counter(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cnt, &zero);
}

/*
 * Programs on one hook run in attach (here: source) order, and the first pays
 * for what the others find warm; prim_warm takes that, and the floor is
 * measured twice, second and last, to price the others against.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(prim_warm, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 *c = counter();

	if (c)
		(*c)++;
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(prim_floor, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 *c = counter();

	if (c)
		(*c)++;
	return 0;
}

/* + one bpf_ktime_get_ns() */
SEC("tp_btf/sched_switch")
int BPF_PROG(prim_ktime, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 *c = counter();

	if (c)
		*c += bpf_ktime_get_ns() & 1;
	return 0;
}

/* + four one-level BPF_CORE_READs (bpf_probe_read_kernel each) */
SEC("tp_btf/sched_switch")
int BPF_PROG(prim_probe4, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 *c = counter();

	if (c)
		*c += BPF_CORE_READ(prev, pid) + BPF_CORE_READ(next, pid) +
		      BPF_CORE_READ(prev, tgid) + BPF_CORE_READ(next, tgid);
	return 0;
}

/* + the same four fields read directly through the BTF pointers */
SEC("tp_btf/sched_switch")
int BPF_PROG(prim_direct4, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 *c = counter();

	if (c)
		*c += prev->pid + next->pid + prev->tgid + next->tgid;
	return 0;
}

/* + one hash lookup with a 16-byte key that hits */
SEC("tp_btf/sched_switch")
int BPF_PROG(prim_hash16, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	static const struct val200 zero;
	struct key16 k = { .cgid = 4026531835ull, .cpu = bpf_get_smp_processor_id() };
	struct val200 *v = bpf_map_lookup_elem(&h16, &k);
	__u64 *c = counter();

	if (!v) {
		bpf_map_update_elem(&h16, &k, &zero, BPF_NOEXIST);
		return 0;
	}
	v->v[0]++;
	if (c)
		(*c)++;
	return 0;
}

/* + bpf_task_storage_get(F_CREATE) for prev and for next */
SEC("tp_btf/sched_switch")
int BPF_PROG(prim_tstore2, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct val136 *a = bpf_task_storage_get(&tstore, prev, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	struct val136 *b = bpf_task_storage_get(&tstore, next, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	__u64 *c = counter();

	if (a)
		a->v[0]++;
	if (b)
		b->v[0]++;
	if (c)
		(*c)++;
	return 0;
}

/* + four atomic adds to a value shared by the CPUs (array map) */
SEC("tp_btf/sched_switch")
int BPF_PROG(prim_atomic4, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 k = bpf_get_smp_processor_id() & 1;
	struct val200 *v = bpf_map_lookup_elem(&shared, &k);
	__u64 *c = counter();

	if (v) {
		__sync_fetch_and_add(&v->v[0], 1);
		__sync_fetch_and_add(&v->v[1], -1);
		__sync_fetch_and_add(&v->v[8], 1);
		__sync_fetch_and_add(&v->v[9], -1);
	}
	if (c)
		(*c)++;
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(prim_floor_end, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 *c = counter();

	if (c)
		(*c)++;
	return 0;
}
