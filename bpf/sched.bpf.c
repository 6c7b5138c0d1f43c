/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-container scheduler accounting: on-CPU time, run-queue waits (count,
 * sum, max, histogram), the split of every wait by who held the queue CPU
 * (steal by class, self), and the online waiting each container inflicts.
 *
 * Every handler is O(1): per-CPU clocks per class are snapshotted when a wait
 * opens and differenced when it closes; waiting tasks per CPU are kept as a
 * count n and a sum s = -sum(enqueue times), so the waiting integral up to t
 * is s + n * t and every update is a commutative atomic add.
 *
 * A container's counters live in arrays at a dense slot it gets the first
 * time one of its tasks is seen (cg_slot, from the free_slots queue the
 * loader fills) and gives back when its cgroup is removed; tasks cache the
 * slot with their css_set, so the hot path does array lookups, which the
 * verifier inlines, and no hashing.
 */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "koord.h"
#include "core_fixes.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the loader before load. */
const volatile bool cgroup_v2 = false;
const volatile bool use_task_storage = true;
const volatile int cpu_hierarchy_id = 0;	/* 0 on v2 */
const volatile __u32 nr_cpus = 1;
const volatile __u32 nr_slots = 1;		/* slot 0 means none */
const volatile __u64 long_wait_ns = 5000000;	/* 0: no long-wait events */
/* Shorter waits behind a container not classified yet make records too (0: none). */
const volatile __u64 react_wait_ns = 0;
const volatile __u32 events_per_sec = 100;	/* per container and CPU */
const volatile bool pmu_on = false;		/* counters opened by the loader */
/* Tests only: a container's switches to skip (enum koord_hide_side); 0 verifies the check away. */
const volatile __u64 hide_cgid = 0;
const volatile __u32 hide_side = HIDE_NONE;

/* Bumped by the loader after it changes cg_class, to refresh cached classes. */
__u32 class_gen;
/* Bumped by user space at each sample: waits' maxima are kept per epoch. */
__u64 epoch;
/* Bumped at every change of cg_slot: user space dumps it only after one. */
__u64 slot_gen;

/* What the collector keeps per task (not shared with user space). */
struct task_state {
	__u64 wait_start;	/* 0: no open wait */
	__u64 cgid;		/* cached container id ... */
	__u64 cset;		/* ... read from this css_set */
	__u32 class_gen;	/* class cached at this generation */
	__u32 slot;		/* the container's slot, 0 for none */
	__u32 qcpu;		/* CPU the open wait is queued on */
	__u8 class;
	__u8 qclass;		/* class counted at enqueue */
	__u8 uncounted;		/* throttled off the queue: not a waiter for others */
	__u64 snap_self;	/* own run time on qcpu at enqueue */
	__u64 snap[KC_NR];	/* qcpu's class clocks at enqueue */
	__u64 cfs;		/* the group's cfs_rq on qcpu ... */
	__u64 snap_thr;		/* ... and its throttled time at enqueue */
	__u64 be_ns;		/* BE's part of the open wait so far */
	__u64 uncl_ns;		/* the part containers not classified yet held */
	__u64 seg_start;	/* when it was queued on qcpu */
};

/*
 * Task state: task-local storage (5.11+), or a hash by tid where it is missing
 * or with raw tracepoints (which give no BTF pointer); the loader switches
 * the map type and use_task_storage together.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} tasks SEC(".maps");

/* Per-CPU state, read in place by user space (mmap) under its seq count. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);		/* the loader sets the number of CPUs */
	__type(key, __u32);
	__type(value, struct cpu_state);
} cpus SEC(".maps");

/* Container slots; user space reads both arrays in place (mmap). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);		/* the loader sets nr_cpus * nr_slots */
	__type(key, __u32);
	__type(value, struct cg_cpu_stats);
} cg_cpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);		/* the loader sets nr_slots */
	__type(key, __u32);
	__type(value, struct cg_hist);
} cg_hist SEC(".maps");

/* Container id -> slot, for every container seen. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* the loader sets nr_slots */
	__type(key, __u64);
	__type(value, __u32);
} cg_slot SEC(".maps");

/* Slots not in use; the loader puts 1 .. nr_slots - 1 in before attaching. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 1);		/* the loader sets nr_slots */
	__type(value, __u32);
} free_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u32);
} cg_class SEC(".maps");

/* Perf events, one per counter and CPU: slot counter * nr_cpus + cpu. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(max_entries, 1);		/* the loader sets PMU_NR * nr_cpus */
	__type(key, __u32);
	__type(value, __u32);
} pmu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CNT_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		(*c)++;
}

static __always_inline struct task_state *task_state(struct task_struct *p, bool create)
{
	static const struct task_state zero;
	struct task_state *ts;
	__u32 tid;

	if (use_task_storage) {
		ts = bpf_task_storage_get(&tasks, p, NULL,
					  create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
		if (!ts && create)
			count(CNT_TASK_FULL);
		return ts;
	}
	tid = BPF_CORE_READ(p, pid);
	ts = bpf_map_lookup_elem(&tasks, &tid);
	if (ts || !create)
		return ts;
	bpf_map_update_elem(&tasks, &tid, &zero, BPF_NOEXIST);
	ts = bpf_map_lookup_elem(&tasks, &tid);
	if (!ts)
		count(CNT_TASK_FULL);
	return ts;
}

/*
 * Per slot (modulo TOUCH_SLOTS), the low byte of the sampling epoch in which
 * its counters were last taken for a change: user space reads only the
 * containers touched since its last sample, and those running, not every
 * container on every CPU. Written once an epoch, so the lines stay shared.
 * A global array, not a map: a map lookup's NULL test doubled the states
 * the verifier explored in the switch program.
 */
__u8 touched[TOUCH_SLOTS];

static __always_inline void touch(__u32 slot)
{
	__u8 e = epoch;
	__u32 k = slot & (TOUCH_SLOTS - 1);

	if (touched[k] != e)
		touched[k] = e;
}

/* The counters of the container in @slot on @cpu, taken for a change; NULL for no slot. */
static __always_inline struct cg_cpu_stats *cg_cpu_stats(__u32 slot, __u32 cpu)
{
	__u32 i = cpu * nr_slots + slot;

	if (!slot)
		return NULL;
	touch(slot);
	return bpf_map_lookup_elem(&cg_cpu, &i);
}

/* The slot of @cgid, taken from the free ones the first time it is seen. */
static __always_inline __u32 slot_of(__u64 cgid)
{
	__u32 *s = bpf_map_lookup_elem(&cg_slot, &cgid), slot;

	if (s)
		return *s;
	if (!cgid)
		return 0;
	if (bpf_map_pop_elem(&free_slots, &slot)) {
		count(CNT_SLOTS_FULL);
		return 0;
	}
	if (!bpf_map_update_elem(&cg_slot, &cgid, &slot, BPF_NOEXIST)) {
		__sync_fetch_and_add(&slot_gen, 1);
		return slot;
	}
	/* Another CPU gave it one meanwhile. */
	bpf_map_push_elem(&free_slots, &slot, 0);
	s = bpf_map_lookup_elem(&cg_slot, &cgid);
	return s ? *s : 0;
}

static __always_inline struct cpu_state *cpu_state(__u32 cpu)
{
	return bpf_map_lookup_elem(&cpus, &cpu);
}

/* The class user space published for container @cgid; unclassified when none. */
static __always_inline __u32 class_of(__u64 cgid)
{
	__u32 *cls = bpf_map_lookup_elem(&cg_class, &cgid);

	return cls && *cls < KC_IDLE ? *cls : KC_UNCLASSIFIED;
}

/* Container, slot and class of @p, re-read only when its css_set or the classes changed. */
static __always_inline void refresh_identity(struct task_struct *p, struct task_state *ts,
					     bool btf)
{
	__u64 cset = (__u64)KREAD(btf, p, cgroups);
	bool moved = cset != ts->cset;

	if (moved) {
		ts->cset = cset;
		ts->cgid = task_cgroup_id(p, cgroup_v2);
	}
	if (moved || !ts->slot)		/* none free last time: try again */
		ts->slot = slot_of(ts->cgid);
	if (moved || ts->class_gen != class_gen) {
		ts->class = class_of(ts->cgid);
		ts->class_gen = class_gen;
	}
}

/* The CPU's clock of @k's run time, including the task running now. */
static __always_inline __u64 clock_now(const struct cpu_state *cs, __u32 k, __u64 now)
{
	return cs->clk[k] + (k == cs->cur_class ? now - cs->last_switch : 0);
}

static __always_inline __u64 self_now(const struct cpu_state *cs,
				      const struct cg_cpu_stats *st, __u32 slot, __u64 now)
{
	return st->cpu_ns + (cs->cur_slot == slot ? now - cs->last_switch : 0);
}

/* @v read as signed, clamped to [0, @max]. */
static __always_inline __u64 bounded(__u64 v, __u64 max)
{
	if ((__s64)v < 0)
		return 0;
	return v > max ? max : v;
}

/* The task starts waiting on @cpu's queue: snapshot clocks, count it. */
static __always_inline bool queue_add(struct task_state *ts, struct cpu_state *cs,
				      __u32 cpu, __u64 now, struct cfs_rq___thr *cfs, bool btf)
{
	struct cg_cpu_stats *st = cg_cpu_stats(ts->slot, cpu);
	__u32 k;

	if (!st)
		return false;
	for (k = 0; k < KC_NR; k++)
		ts->snap[k] = clock_now(cs, k, now);
	ts->snap_self = self_now(cs, st, ts->slot, now);
	ts->qcpu = cpu;
	ts->qclass = ts->class;
	ts->cfs = (__u64)cfs;
	ts->snap_thr = cfs_throttled_ns(cfs, btf);
	ts->seg_start = now;
	if (ts->uncounted)
		return true;
	/* enq before n: a run that sees the waiter counted also sees it queued */
	__sync_fetch_and_add(&cs->enq, 1);
	__sync_fetch_and_add(&cs->n_all, 1);
	__sync_fetch_and_add(&cs->s_all, -(__s64)now);
	__sync_fetch_and_add(&st->own_n, 1);
	__sync_fetch_and_add(&st->own_s, -(__s64)now);
	/* Own waiters are not inflicted: count them under the test n_online uses. */
	if (KC_IS_ONLINE(ts->qclass)) {
		__sync_fetch_and_add(&cs->n_online, 1);
		__sync_fetch_and_add(&cs->s_online, -(__s64)now);
		__sync_fetch_and_add(&st->own_on_n, 1);
		__sync_fetch_and_add(&st->own_on_s, -(__s64)now);
	}
	return true;
}

/*
 * The task leaves the queue of ts->qcpu: uncount it, and when it runs or
 * migrates (@charge), charge who held that CPU meanwhile to the container's
 * steal split. A wait found stale is dropped without charge. @cfs is the
 * task's cfs_rq as a BTF pointer when it is still ts->cfs (read directly),
 * else NULL (ts->cfs is read through helpers).
 */
static __always_inline void queue_remove(struct task_state *ts, __u64 now, bool charge,
					 struct cfs_rq___thr *cfs, bool btf)
{
	struct cpu_state *cs = cpu_state(ts->qcpu);
	__u64 d[KC_NR], self, others = 0, thr, elapsed;
	struct cg_cpu_stats *st;
	bool online;
	__u32 k;

	if (!cs)
		return;
	st = cg_cpu_stats(ts->slot, ts->qcpu);
	/* The container was removed while the task waited: its slot is someone else's now. */
	if (st && st->born_ns > ts->seg_start)
		st = NULL;
	/* One test of the class, branched on twice: the verifier knows the second outcome. */
	online = KC_IS_ONLINE(ts->qclass);
	if (!ts->uncounted) {
		__sync_fetch_and_add(&cs->n_all, -1);
		__sync_fetch_and_add(&cs->s_all, now);
		if (st) {
			__sync_fetch_and_add(&st->own_n, -1);
			__sync_fetch_and_add(&st->own_s, now);
		}
		if (online) {
			__sync_fetch_and_add(&cs->n_online, -1);
			__sync_fetch_and_add(&cs->s_online, now);
			if (st) {
				__sync_fetch_and_add(&st->own_on_n, -1);
				__sync_fetch_and_add(&st->own_on_s, now);
			}
		}
	}
	if (!st)
		return;
	if (!charge)
		return;

	/*
	 * A migration snapshots the destination's clocks without its lock, so a
	 * part can come out negative or too long: keep each in [0, elapsed].
	 */
	elapsed = now - ts->seg_start;
	self = bounded(self_now(cs, st, ts->slot, now) - ts->snap_self, elapsed);
	for (k = 0; k < KC_NR; k++) {
		d[k] = bounded(clock_now(cs, k, now) - ts->snap[k], elapsed);
		if (k == ts->qclass)
			d[k] = d[k] > self ? d[k] - self : 0;
		others += d[k];
	}
	/*
	 * Time the container's own quota held it back is not steal. Which
	 * neighbour ran during those moments is not recorded, so the throttled
	 * time comes out of every class's part in proportion (d[k] * thr passes
	 * 2^64 once both pass 4.3 s: koord_part).
	 */
	thr = (cfs ? cfs_throttled_ns(cfs, btf) :
		     cfs_throttled_ns((struct cfs_rq___thr *)ts->cfs, false)) - ts->snap_thr;
	if (thr > others)
		thr = others;
	for (k = 0; k < KC_NR; k++) {
		if (thr && others)
			d[k] -= koord_part(d[k], thr, others);
		st->steal_ns[k] += d[k];
	}
	st->steal_ns[ST_SELF] += self;
	st->steal_ns[ST_THROTTLED] += thr;
	ts->be_ns += d[KC_BE];
	ts->uncl_ns += d[KC_UNCLASSIFIED];
}

/*
 * @p starts waiting on @cpu; @throttled: 6.18 took it off the queue for its
 * group's quota, so it keeps no neighbour waiting.
 */
static __always_inline void wait_open(struct task_struct *p, struct task_state *ts,
				      __u32 cpu, __u64 now, bool throttled, bool btf)
{
	struct cpu_state *cs = cpu_state(cpu);

	/* Before the CPU's first switch its clocks mean nothing. */
	if (!cs || !cs->last_switch) {
		count(CNT_WAIT_UNSEEN_CPU);
		return;
	}
	ts->uncounted = throttled;
	ts->be_ns = 0;
	ts->uncl_ns = 0;
	if (queue_add(ts, cs, cpu, now, task_cfs_rq(p, btf), btf))
		ts->wait_start = now;
}

/*
 * One record per long wait of an online task, a bounded number per container
 * and CPU per second; and, for the daemon's reaction, one per wait of
 * react_wait_ns or more behind a container the loader has not classified yet
 * (a new pod: the sooner it is known, the sooner it is acted on).
 */
static __always_inline void long_wait_event(struct task_struct *victim, struct task_state *ts,
					    struct cg_cpu_stats *st, __u32 cpu, __u64 now,
					    __u64 wait, struct task_struct *culprit,
					    __u32 culprit_pid, __u64 culprit_cgid, __u32 culprit_class)
{
	bool lng = long_wait_ns && wait >= long_wait_ns, react = false;
	struct long_wait_event *ev;
	struct cpu_state *cs;
	__u64 id;

	if (!(lng || (react_wait_ns && wait >= react_wait_ns)) || !KC_IS_ONLINE(ts->qclass))
		return;
	/*
	 * The culprit's container now, not as it was when it got the CPU: a
	 * process that joins its new pod while running is charged to its old
	 * container until it is switched out, and the wait behind it is the new
	 * pod's first harm.
	 */
	if (culprit_pid) {
		id = task_cgroup_id(culprit, cgroup_v2);
		if (id && id != culprit_cgid) {
			culprit_cgid = id;
			culprit_class = class_of(id);
		}
	}
	if (react_wait_ns && wait >= react_wait_ns) {
		react = culprit_cgid && culprit_class == KC_UNCLASSIFIED;
		/*
		 * Or a new container held the CPU for half the wait or more, and
		 * at a tick gave it to tasks that ran briefly before the victim:
		 * the record names the last such container, not a task.
		 */
		cs = react ? NULL : cpu_state(cpu);
		if (cs && cs->uncl_cgid && ts->uncl_ns * 2 >= wait) {
			react = true;
			culprit_cgid = cs->uncl_cgid;
			culprit_pid = 0;
		}
	}
	if (!(lng || react))
		return;
	if (lng)
		count(CNT_LONG_WAITS);
	else
		count(CNT_REACT_WAITS);
	if (now - st->ev_window >= 1000000000ull) {
		st->ev_window = now;
		st->ev_count = 0;
	}
	if (st->ev_count >= events_per_sec) {
		count(CNT_EVENTS_DROPPED);
		return;
	}
	st->ev_count++;
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count(CNT_EVENTS_RB_FULL);
		return;
	}
	ev->ts_ns = now;
	ev->wait_ns = wait;
	ev->be_ns = ts->be_ns;
	ev->cgid = ts->cgid;
	ev->culprit_cgid = culprit_cgid;
	ev->pid = BPF_CORE_READ(victim, pid);
	ev->culprit_pid = culprit_pid;
	ev->cpu = cpu;
	ev->flags = lng ? 0 : LW_REACT_ONLY;
	BPF_CORE_READ_STR_INTO(&ev->comm, victim, comm);
	if (culprit_pid)
		BPF_CORE_READ_STR_INTO(&ev->culprit_comm, culprit, comm);
	else
		ev->culprit_comm[0] = '\0';
	bpf_ringbuf_submit(ev, 0);
}

/* @p gets @cpu after its wait; @prev (@prev_pid) ran there before it. */
static __always_inline void wait_close(struct task_struct *p, struct task_state *ts, __u32 cpu,
				       __u64 now, struct task_struct *prev, __u32 prev_pid,
				       __u64 prev_cgid, __u32 prev_class, bool btf)
{
	struct cfs_rq___thr *cfs = task_cfs_rq(p, btf);
	struct cg_cpu_stats *st;
	struct cg_hist *h;
	__u64 wait = now - ts->wait_start;
	__u32 b;

	queue_remove(ts, now, true, (__u64)cfs == ts->cfs ? cfs : NULL, btf);
	st = cg_cpu_stats(ts->slot, cpu);
	if (!st || st->born_ns > ts->wait_start) {
		ts->wait_start = 0;
		return;
	}
	ts->wait_start = 0;
	st->wait_count++;
	st->wait_ns += wait;
	if (wait > st->wait_max)
		st->wait_max = wait;
	epoch_max_note(st, epoch, wait);
	long_wait_event(p, ts, st, cpu, now, wait, prev, prev_pid, prev_cgid, prev_class);
	h = bpf_map_lookup_elem(&cg_hist, &ts->slot);
	if (!h)
		return;
	b = hist_bucket(wait);
	/* Keep clang from folding the bound check into hist_bucket()'s branches. */
	asm volatile("" : "+r"(b));
	if (b < HIST_BUCKETS)
		__sync_fetch_and_add(&h->buckets[b], 1);
}

static __always_inline int on_wakeup(struct task_struct *p, bool btf)
{
	struct task_state *ts;

	/* ttwu also reports tasks still running or already queued. */
	if (KREAD(btf, p, on_cpu))
		return 0;
	ts = task_state(p, true);
	if (!ts || ts->wait_start)
		return 0;
	refresh_identity(p, ts, btf);
	wait_open(p, ts, task_cpu(p, btf), bpf_ktime_get_ns(), false, btf);
	return 0;
}

/*
 * Counter growth on this CPU since its last switch, scaled by enabled/running
 * time when the PMU multiplexes; @out is 0 for a counter that cannot be read.
 */
static __always_inline void pmu_delta(struct cpu_state *cs, __u32 cpu, __u64 out[PMU_NR])
{
	struct bpf_perf_event_value v;
	__u64 dc, de, dr;
	__u32 k;

	for (k = 0; k < PMU_NR; k++) {
		out[k] = 0;
		if (bpf_perf_event_read_value(&pmu, k * nr_cpus + cpu, &v, sizeof(v)))
			continue;
		dc = v.counter - cs->pmu_last[k][0];
		de = v.enabled - cs->pmu_last[k][1];
		dr = v.running - cs->pmu_last[k][2];
		/* The first reading only sets the base. */
		if (cs->pmu_last[k][1])
			out[k] = dr && dr < de ? koord_muldiv(dc, de, dr) : dc;
		cs->pmu_last[k][0] = v.counter;
		cs->pmu_last[k][1] = v.enabled;
		cs->pmu_last[k][2] = v.running;
	}
}

/* A run whose task's own clock is short by more than this had another task hidden in it. */
#define HIDDEN_MIN_NS	100000ull

/* Keep the compiler from moving loads and stores across it. */
#define barrier() asm volatile("" ::: "memory")

/*
 * The interval since the CPU's last switch, up to @now, is charged to what
 * the CPU state says ran, not to prev: a switch event can be missed, and
 * charging by state keeps the clocks, cpu_ns and every snapshot consistent
 * with each other. Its class clock gets @clk ns of it and its container's
 * cpu_ns @ran (both the whole interval unless a missed switch split it);
 * the waiting it caused is integrated over all of it, and what went to its
 * container is left in @got (charge_missed moves prev's part). The CPU's
 * counters go with the run time: where prev ran @missed of it, by the two
 * tasks' own clocks (a hardware counter stops with a vCPU, as their clocks
 * do), prev's share left in @rest.
 */
static __always_inline void charge_run(struct cpu_state *cs, __u32 cpu, __u64 now, __u64 clk,
				       __u64 ran, __u64 missed, __u64 got[2], __u64 rest[PMU_NR])
{
	__u64 delta = now - cs->last_switch, counters[PMU_NR], n_max;
	__u64 i_all, i_online, i_own, i_own_on;
	struct cg_cpu_stats *st;
	__u32 k;

	/* Classes were republished while this task ran: charge the new one. */
	if (cs->cur_cgid && cs->class_gen != class_gen) {
		cs->cur_class = class_of(cs->cur_cgid);
		cs->class_gen = class_gen;
	}
	if (cs->cur_class < KC_NR)
		cs->clk[cs->cur_class] += clk;
	if (pmu_on) {
		pmu_delta(cs, cpu, counters);
		if (missed)
			for (k = 0; k < PMU_NR; k++) {
				rest[k] = koord_part(counters[k], missed, ran + missed);
				counters[k] -= rest[k];
			}
	}
	st = cg_cpu_stats(cs->cur_slot, cpu);
	/* Its container was removed while it ran (it moved out): not its slot any more. */
	if (!st || st->born_ns > cs->last_switch)
		return;
	st->cpu_ns += ran;
	if (pmu_on)
		for (k = 0; k < PMU_NR; k++)
			st->pmu[k] += counters[k];
	/*
	 * Waiting integrals over the run: every waiter counted at the start or
	 * queued since (one more for a count and enq read in between); the
	 * container's own waiters are a part of all and of the online ones.
	 */
	n_max = (cs->n_in > 0 ? cs->n_in : 0) + (cs->enq - cs->enq_in) + 1;
	i_all = run_integral(cs->s_all + cs->n_all * (__s64)now - cs->i_all_in, delta, n_max);
	i_online = run_integral(cs->s_online + cs->n_online * (__s64)now - cs->i_online_in,
				delta, n_max);
	i_own = run_integral(st->own_s + st->own_n * (__s64)now - cs->i_own_in, delta, n_max);
	i_own_on = run_integral(st->own_on_s + st->own_on_n * (__s64)now - cs->i_own_on_in,
				delta, n_max);
	if (i_online > i_all)
		i_online = i_all;
	if (i_own > i_all)
		i_own = i_all;
	if (i_own_on > i_online)
		i_own_on = i_online;
	st->inflicted_all_ns += i_all - i_own;
	st->inflicted_online_ns += i_online - i_own_on;
	got[0] = i_all - i_own;
	got[1] = i_online - i_own_on;
}

/*
 * A switch event was missed (the task leaving or running is not the one the
 * CPU state says ran): its own clock says how long it has run since it was
 * picked, at most @max here (a BTF pointer on tp_btf, else an address read
 * through helpers).
 */
static __always_inline __u64 own_run(struct task_struct *p, __u64 max, bool btf)
{
	return bounded(KREAD(btf, p, se.sum_exec_runtime) -
		       KREAD(btf, p, se.prev_sum_exec_runtime), max);
}

/*
 * The recorded task's run on this CPU since it was seen switched in: its own
 * clock less its value then (the CPU state's), at most @max. Not its run
 * since picked: when the switch that brought it back is the one seen, it was
 * picked again just before, and that clock has nothing of its run before the
 * task in between (a pinned hog's frames read 13 ms short). Read through
 * helpers where it is an address: it may have exited meanwhile. Its run on
 * another CPU, had it moved and run there meanwhile, would be counted here too.
 */
static __always_inline __u64 recorded_run(const struct cpu_state *cs, struct task_struct *p,
					  __u64 max, bool btf)
{
	return bounded(KREAD(btf, p, se.sum_exec_runtime) - cs->cur_sum, max);
}

/* max(@a - @b, 0) of two signed counts, times @ns. */
static __always_inline __u64 count_ns(__s64 a, __s64 b, __u64 ns)
{
	return a > b ? (__u64)(a - b) * ns : 0;
}

/*
 * Charge @ns that @pts's task ran on @cpu up to @now (its clocks and on-CPU
 * time), and the waiting it kept meanwhile: charge_run integrated the whole
 * interval to the recorded task's container (@got of it, all and online),
 * while the class clocks, and so the waiters' steal, give this part to
 * prev. It moves, at the waiters counted now (prev's own aside; one that
 * queued meanwhile counts whole, hence the bound by @got).
 */
static __always_inline void charge_missed(struct cpu_state *cs, struct task_state *pts,
					  __u32 cpu, __u64 ns, __u64 now, const __u64 got[2],
					  const __u64 pmu[PMU_NR])
{
	struct cg_cpu_stats *st = cg_cpu_stats(pts->slot, cpu), *rec;
	__u64 all, online;
	__u32 k;

	if (pts->class < KC_NR)
		cs->clk[pts->class] += ns;
	if (!st || st->born_ns > now - ns)
		return;
	st->cpu_ns += ns;
	if (pmu_on)
		for (k = 0; k < PMU_NR; k++)
			st->pmu[k] += pmu[k];
	rec = cg_cpu_stats(cs->cur_slot, cpu);
	if (rec == st)
		return;
	all = count_ns(cs->n_all, st->own_n, ns);
	online = count_ns(cs->n_online, st->own_on_n, ns);
	/* nothing was given to a recorded idle task or one without a container */
	if (rec && cs->cur_cgid) {
		all = all < got[0] ? all : got[0];
		online = online < got[1] ? online : got[1];
		rec->inflicted_all_ns -= all;
		rec->inflicted_online_ns -= online;
	}
	st->inflicted_all_ns += all;
	st->inflicted_online_ns += online;
}

/* Is this switch one a test has the switch programs skip? */
static __always_inline bool switch_hidden(struct task_struct *prev, struct task_struct *next)
{
	struct task_struct *p = hide_side == HIDE_OUT ? prev : next;

	return hide_cgid && BPF_CORE_READ(p, pid) && task_cgroup_id(p, cgroup_v2) == hide_cgid;
}

static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, bool btf)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_state *cs = cpu_state(cpu);
	__u32 prev_pid = KREAD(btf, prev, pid), next_pid = KREAD(btf, next, pid);
	struct task_state *pts = NULL, *nts = NULL;
	struct cg_cpu_stats *st;
	__u64 prev_cgid, now, delta, ran, missed = 0, got[2] = {}, pmu_rest[PMU_NR] = {};
	__u32 prev_class;

	if (!cs)
		return 0;
	/* Odd from before the clock is read: a reader's moment is before it or after the end. */
	cs->seq++;
	barrier();
	now = bpf_ktime_get_ns();
	prev_cgid = cs->cur_cgid;
	if (cs->last_switch) {
		delta = now - cs->last_switch;
		ran = delta;
		/* Task pointers, not pids: exec by a non-leader thread changes its pid. */
		if ((__u64)prev != cs->cur_task) {
			/*
			 * The interval is the recorded task's run, then tasks not seen,
			 * then prev's: the ends by their own clocks. The middle stays
			 * with the recorded class; a recorded idle task (no clock) or
			 * one without a container keeps it all.
			 */
			count(CNT_SWITCH_MISSED);
			missed = prev_pid ? own_run(prev, delta, btf) : 0;
			ran = delta - missed;
			if (cs->cur_cgid)
				ran = recorded_run(cs, (struct task_struct *)cs->cur_task, ran,
						   false);
		} else if (prev_pid && cs->cur_cgid) {
			/*
			 * Seen out as it was seen in, but its own clock may say it ran
			 * less: another task ran in between with both switches unseen.
			 * Past HIDDEN_MIN_NS (less is the switch's own path) that time
			 * is not its container's.
			 */
			ran = recorded_run(cs, prev, delta, btf);
			if (ran + HIDDEN_MIN_NS >= delta)
				ran = delta;
		}
		charge_run(cs, cpu, now, delta - missed, ran, missed, got, pmu_rest);
	}
	cs->last_switch = now;
	prev_class = cs->cur_class;	/* as charged: republished classes were read above */

	if (prev_pid) {
		pts = task_state(prev, true);
		/* Its identity as cached: refreshing it here would double the verifier's work. */
		if (pts && missed)
			charge_missed(cs, pts, cpu, missed, now, got, pmu_rest);
		/* Left open: the stale-wait program did not run first. Dropped. */
		if (pts && pts->wait_start) {
			queue_remove(pts, now, false, NULL, btf);
			pts->wait_start = 0;
			count(CNT_WAIT_STALE_DROPPED);
		}
	}

	/* next takes the CPU; its wait, if any, ends. */
	cs->cur_task = (__u64)next;
	cs->cur_sum = next_pid ? KREAD(btf, next, se.sum_exec_runtime) : 0;
	cs->cur_class = KC_IDLE;
	cs->cur_cgid = 0;
	cs->cur_slot = 0;
	if (next_pid) {
		nts = task_state(next, true);
		cs->cur_class = KC_UNCLASSIFIED;
		if (nts) {
			if (nts->wait_start)
				wait_close(next, nts, cpu, now, prev, prev_pid, prev_cgid,
					   prev_class, btf);
			refresh_identity(next, nts, btf);
			cs->cur_class = nts->class;
			cs->cur_cgid = nts->cgid;
			if (nts->class == KC_UNCLASSIFIED && nts->cgid)
				cs->uncl_cgid = nts->cgid;
			cs->cur_slot = nts->slot;
			cs->class_gen = nts->class_gen;
		}
	}

	/* prev is still runnable (preempted or yielded): it waits from now on. */
	if (pts && (preempt || task_state_word(prev, btf) == 0)) {
		refresh_identity(prev, pts, btf);
		wait_open(prev, pts, cpu, now, task_throttled(prev, btf), btf);
	}

	/* Waiting integrals as next starts, to difference when it stops. */
	cs->enq_in = cs->enq;
	cs->n_in = cs->n_all;
	cs->i_all_in = cs->s_all + cs->n_all * (__s64)now;
	cs->i_online_in = cs->s_online + cs->n_online * (__s64)now;
	cs->i_own_in = 0;
	cs->i_own_on_in = 0;
	st = cg_cpu_stats(cs->cur_slot, cpu);
	if (st) {
		cs->i_own_in = st->own_s + st->own_n * (__s64)now;
		cs->i_own_on_in = st->own_on_s + st->own_on_n * (__s64)now;
	}
	barrier();
	cs->seq++;
	return 0;
}

/*
 * Runs on sched_switch before on_switch (attached first; a separate program
 * so that each stays within older verifiers' budget). @prev leaving with its
 * wait open ran without a switch-in event. Its own clock says when it was
 * picked, after the CPU's last seen switch: the wait ends there, its culprit
 * the recorded task, before on_switch charges the interval, so that clocks
 * and waiting integrals stop at the same moment.
 */
static __always_inline int on_switch_stale(struct task_struct *prev, bool btf)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_state *cs = cpu_state(cpu);
	struct task_struct *culprit;
	struct task_state *ts;
	__u64 now, max, end;

	if (!cs || !KREAD(btf, prev, pid))
		return 0;
	ts = task_state(prev, false);
	if (!ts || !ts->wait_start)
		return 0;
	cs->seq++;
	barrier();
	now = bpf_ktime_get_ns();
	count(CNT_WAIT_STALE);
	max = now - (cs->last_switch > ts->wait_start ? cs->last_switch : ts->wait_start);
	end = now - own_run(prev, max, btf);
	culprit = (struct task_struct *)cs->cur_task;
	wait_close(prev, ts, cpu, end, culprit, BPF_CORE_READ(culprit, pid), cs->cur_cgid,
		   cs->cur_class, btf);
	barrier();
	cs->seq++;
	return 0;
}

/*
 * What runs on this CPU now, for the reader of the running stretch. User
 * space runs this on one CPU at a time (BPF_PROG_TEST_RUN on that CPU: an
 * IPI, so @cur is the task it interrupted and no switch is in progress). A
 * switch-in that emitted no sched_switch leaves the state naming a task that
 * no longer runs; the next seen switch splits the interval by the tasks' own
 * clocks (on_switch), and the reader splits the stretch the same way with
 * what is noted here. Reads the state, changes none of it. Fields are read
 * with probe reads: @cur is a BTF pointer only for the task storage lookup.
 */
static __always_inline int observe(struct task_struct *cur)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_state *cs = cpu_state(cpu);
	struct task_state *ts = NULL;
	__u64 now, span, run = 0;
	__u32 pid;

	if (!cs || !cs->last_switch)
		return 0;
	now = bpf_ktime_get_ns();
	span = now - cs->last_switch;
	cs->obs_task = (__u64)cur;
	cs->obs_at = now;
	cs->obs_run = span;
	cs->obs_rec_run = 0;
	cs->obs_cgid = 0;
	cs->obs_slot = 0;
	if ((__u64)cur != cs->cur_task) {
		pid = BPF_CORE_READ(cur, pid);
		if (pid) {
			run = own_run(cur, span, false);
			ts = task_state(cur, false);
		}
		if (ts) {
			cs->obs_cgid = ts->cgid;
			cs->obs_slot = ts->slot;
		}
		cs->obs_run = run;
		if (cs->cur_cgid)
			cs->obs_rec_run = recorded_run(cs, (struct task_struct *)cs->cur_task,
						       span - run, false);
	}
	barrier();
	cs->obs_seq = cs->seq;
	return 0;
}

static __always_inline int on_migrate(struct task_struct *p, __u32 dest)
{
	struct task_state *ts = task_state(p, false);
	struct cpu_state *cs;
	__u64 now;

	/* Only a waiting task moves its wait; a waking one is handled at wakeup. */
	if (!ts || !ts->wait_start || ts->qcpu == dest)
		return 0;
	now = bpf_ktime_get_ns();
	queue_remove(ts, now, true, NULL, false);
	cs = cpu_state(dest);
	if (!cs || !cs->last_switch ||
	    !queue_add(ts, cs, dest, now, (void *)task_cfs_rq_on(p, dest), false)) {
		ts->wait_start = 0;
		count(CNT_WAIT_UNSEEN_CPU);
	}
	return 0;
}

/* Hash-mode task state must go with the task. */
static __always_inline int on_exit(struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	struct task_state *ts = bpf_map_lookup_elem(&tasks, &tid);

	if (use_task_storage || !ts)
		return 0;
	if (ts->wait_start)
		queue_remove(ts, bpf_ktime_get_ns(), false, NULL, false);
	bpf_map_delete_elem(&tasks, &tid);
	return 0;
}

/*
 * A removed container gives its slot back, cleared and stamped, so that a
 * late event of one of its former tasks (moved out while waiting or running)
 * is recognised as older than the slot's new owner. The cpu hierarchy's only:
 * ids repeat across v1 hierarchies.
 */
static __always_inline int on_cgroup_rmdir(struct cgroup *cgrp)
{
	static const struct cg_hist zero_hist;
	struct cg_cpu_stats *st;
	__u64 cgid, now;
	__u32 *s, slot, cpu, i;

	if (BPF_CORE_READ(cgrp, root, hierarchy_id) != cpu_hierarchy_id)
		return 0;
	cgid = BPF_CORE_READ(cgrp, kn, id);
	bpf_map_delete_elem(&cg_class, &cgid);
	s = bpf_map_lookup_elem(&cg_slot, &cgid);
	if (!s)
		return 0;
	slot = *s;
	if (bpf_map_delete_elem(&cg_slot, &cgid))
		return 0;	/* another CPU is removing it */
	__sync_fetch_and_add(&slot_gen, 1);
	touch(slot);
	now = bpf_ktime_get_ns();
	for (cpu = 0; cpu < nr_cpus && cpu < KOORD_MAX_CPUS; cpu++) {
		i = cpu * nr_slots + slot;
		st = bpf_map_lookup_elem(&cg_cpu, &i);
		if (st)
			cg_cpu_stats_reuse(st, now);
	}
	bpf_map_update_elem(&cg_hist, &slot, &zero_hist, BPF_ANY);
	bpf_map_push_elem(&free_slots, &slot, 0);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(tp_wakeup, struct task_struct *p) { return on_wakeup(p, true); }
SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(tp_wakeup_new, struct task_struct *p) { return on_wakeup(p, true); }
SEC("tp_btf/sched_switch")
int BPF_PROG(tp_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{ return switch_hidden(prev, next) ? 0 : on_switch(preempt, prev, next, true); }
SEC("tp_btf/sched_switch")
int BPF_PROG(tp_stale_wait, bool preempt, struct task_struct *prev, struct task_struct *next)
{ return switch_hidden(prev, next) ? 0 : on_switch_stale(prev, true); }
SEC("tp_btf/sched_migrate_task")
int BPF_PROG(tp_migrate, struct task_struct *p, int dest) { return on_migrate(p, dest); }
SEC("tp_btf/sched_process_free")
int BPF_PROG(tp_free, struct task_struct *p) { return on_exit(p); }
SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(tp_rmdir, struct cgroup *cgrp) { return on_cgroup_rmdir(cgrp); }

/* Run on a CPU by user space, not attached: the task storage's, and the hash's. */
SEC("raw_tp")
int observe_btf(void *ctx) { return observe(bpf_get_current_task_btf()); }
SEC("raw_tp")
int observe_raw(void *ctx) { return observe((struct task_struct *)bpf_get_current_task()); }

SEC("raw_tp/sched_wakeup")
int BPF_PROG(raw_wakeup, struct task_struct *p) { return on_wakeup(p, false); }
SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(raw_wakeup_new, struct task_struct *p) { return on_wakeup(p, false); }
SEC("raw_tp/sched_switch")
int BPF_PROG(raw_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{ return switch_hidden(prev, next) ? 0 : on_switch(preempt, prev, next, false); }
SEC("raw_tp/sched_switch")
int BPF_PROG(raw_stale_wait, bool preempt, struct task_struct *prev, struct task_struct *next)
{ return switch_hidden(prev, next) ? 0 : on_switch_stale(prev, false); }
SEC("raw_tp/sched_migrate_task")
int BPF_PROG(raw_migrate, struct task_struct *p, int dest) { return on_migrate(p, dest); }
SEC("raw_tp/sched_process_free")
int BPF_PROG(raw_free, struct task_struct *p) { return on_exit(p); }
SEC("raw_tp/cgroup_rmdir")
int BPF_PROG(raw_rmdir, struct cgroup *cgrp) { return on_cgroup_rmdir(cgrp); }
