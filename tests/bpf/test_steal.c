// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Who took my CPU, on real cgroups: an online probe and a BE hog share CPU 0,
 * a decoy BE hog runs on CPU 1. The hog must rank first, the probe's steal
 * must be BE, the splits must add up, the waiting counts must not drift, a
 * container throttled by its own quota must not blame its neighbour, a
 * container whose class changes while its tasks wait must not be charged for
 * its own waiting, and long-wait records must be rate limited with an exact
 * dropped count.
 */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "collector.h"
#include "log.h"
#include "suspects.h"
#include "testlib.h"

#define WATCH_MS	3000
#define LS_POD(n)	test_pod_path(KC_LS, "5f6e3c1a-1111-4a4a-9b9b-0123456789ab", n)
#define BE_POD(n)	test_pod_path(KC_BE, "7a8b9c0d-2222-4b4b-8c8c-0123456789ab", n)
#define DECOY_POD(n)	test_pod_path(KC_BE, "7a8b9c0d-3333-4b4b-8c8c-0123456789ab", n)

static struct cpu_hierarchy hier;

struct run {
	struct collector *col;
	struct container_table table;
	struct sample a, b;
	struct window w;
	struct suspects sus;
	__u64 long_waits_seen;
	const char *throttled_cg;	/* read its cpu.stat with each sample */
	__u64 throttled0, throttled1;
};

static __u64 throttled_ns(const char *cg);
static void between_stretches(const char *cg);

static int count_event(void *ctx, const struct long_wait_event *ev)
{
	((struct run *)ctx)->long_waits_seen++;
	return 0;
}

static int start(struct run *r, __u64 long_wait_ns, unsigned int events_per_sec)
{
	struct collector_opts o = { .hier = &hier, .long_wait_ns = long_wait_ns,
				    .events_per_sec = events_per_sec };

	memset(r, 0, sizeof(*r));
	if (collector_open(&o, &r->col))
		return -1;
	container_table_scan(&r->table, hier.root, NULL, NULL);
	collector_set_classes(r->col, &r->table);
	collector_watch_events(r->col, count_event, r);
	return 0;
}

/* Watch for @ms, polling the long-wait records, and compute the window. */
static void watch(struct run *r, unsigned int ms)
{
	__u64 end;

	collector_sample(r->col, &r->a);	/* warm-up */
	sleep_ms(100);
	collector_poll(r->col, 0);
	r->long_waits_seen = 0;
	if (r->throttled_cg) {
		between_stretches(r->throttled_cg);
		r->throttled0 = throttled_ns(r->throttled_cg);
	}
	collector_sample(r->col, &r->a);
	end = now_mono_ns() + ms * 1000000ull;
	while (now_mono_ns() < end)
		collector_poll(r->col, 50);
	if (r->throttled_cg) {
		between_stretches(r->throttled_cg);
		r->throttled1 = throttled_ns(r->throttled_cg);
	}
	collector_sample(r->col, &r->b);
	collector_poll(r->col, 0);
	container_table_scan(&r->table, hier.root, NULL, NULL);
	window_compute(&r->a, &r->b, &r->w);
	suspects_rank(&r->w, &r->table, &r->sus);
}

static void finish(struct run *r)
{
	suspects_free(&r->sus);
	window_free(&r->w);
	sample_free(&r->a);
	sample_free(&r->b);
	container_table_free(&r->table);
	collector_close(r->col);
}

static const struct cg_window *of(const struct run *r, const char *cg)
{
	static const struct cg_window none;
	const struct cg_window *w = window_find(&r->w, cgroup_id(&hier, cg));

	return w ? w : &none;
}

static __u64 slot_sum(const struct cg_window *w)
{
	__u64 n = 0;
	unsigned int k;

	for (k = 0; k < ST_NR; k++)
		n += w->steal_ns[k];
	return n;
}

/* Other containers' part of a wait: every slot but idle, self and throttled. */
static __u64 steal_by_others(const struct cg_window *w)
{
	__u64 n = 0;
	unsigned int k;

	for (k = 0; k < KC_NR; k++)
		if (k != KC_IDLE)
			n += w->steal_ns[k];
	return n;
}

/*
 * The hog's time (ftrace) in the probe's waits: the sum, what it may have run
 * besides (a switch of its had no event), and how many waits it ran in.
 */
struct hog_share {
	__u64 ns, unsure_ns;
	size_t waits;
};

/* Of the waits wholly in [from, to] (@inside), or of those that overlap it at all. */
static struct hog_share hog_share(const struct ftrace_waits *fw, __u64 from, __u64 to,
				  bool inside)
{
	struct hog_share h = {};
	size_t i;

	for (i = 0; i < fw->n; i++) {
		__u64 end = fw->end_ns[i], begin = end - fw->len_ns[i];

		if ((fw->other_ns[i] || fw->other_unsure_ns[i]) &&
		    (inside ? begin >= from && end <= to : end >= from && begin <= to)) {
			h.ns += fw->other_ns[i];
			h.unsure_ns += fw->other_unsure_ns[i];
			h.waits++;
		}
	}
	return h;
}

static void attribution(void)
{
	char *probe = test_cgroup_make(&hier, LS_POD("probe")), *hog = test_cgroup_make(&hier, BE_POD("hog"));
	char *decoy = test_cgroup_make(&hier, DECOY_POD("decoy"));
	const struct cg_window *pw, *hw, *dw;
	__u64 infl_all = 0, online_steal = 0, by_others;
	struct hog_share in, over;
	double slack, rel;
	struct ftrace_waits fw = {};
	pid_t hog_pid, probe_pid;
	bool traced;
	struct run r;
	size_t i;

	if (!check(probe && hog && decoy && !start(&r, 0, 0), "collector and cgroups ready"))
		return;
	hog_pid = spawn(&hier, hog, 0, WL_HOG, 0);
	spawn(&hier, decoy, 1, WL_HOG, 0);
	probe_pid = spawn(&hier, probe, 0, WL_SERVER, 1000);
	sleep_ms(200);
	traced = !ftrace_start_pair(probe_pid, hog_pid);
	watch(&r, WATCH_MS);
	traced = !ftrace_stop(probe_pid, &fw) && traced && fw.n;
	pw = of(&r, probe);
	hw = of(&r, hog);
	dw = of(&r, decoy);
	by_others = steal_by_others(pw);
	printf("# probe: wait %.1f ms, BE %.1f, SYSTEM %.1f, LS %.1f, idle %.1f, self %.1f ms\n",
	       pw->wait_ns / 1e6, pw->steal_ns[KC_BE] / 1e6, pw->steal_ns[KC_SYSTEM] / 1e6,
	       pw->steal_ns[KC_LS] / 1e6, pw->steal_ns[KC_IDLE] / 1e6, pw->steal_ns[ST_SELF] / 1e6);
	printf("# inflicted online: hog %.1f ms, decoy %.1f ms\n", hw->inflicted_online_ns / 1e6,
	       dw->inflicted_online_ns / 1e6);
	printf("# switches without an event: %llu; waits found open while their task ran: %llu\n",
	       (unsigned long long)r.w.counters[CNT_SWITCH_MISSED],
	       (unsigned long long)r.w.counters[CNT_WAIT_STALE]);

	check(r.sus.n > 0 && r.sus.v[0].cgid == cgroup_id(&hier, hog), "the hog ranks first");
	check(r.sus.n > 0 && r.sus.v[0].nvictims > 0 &&
	      r.sus.v[0].victims[0].cgid == cgroup_id(&hier, probe), "its main victim is the probe");
	check(suspects_found(&r.sus, r.w.dur_ns), "interference is found");
	check(hw->inflicted_online_ns > 0 && dw->inflicted_online_ns * 20 <= hw->inflicted_online_ns,
	      "the decoy's online wait caused (%.2f ms) is under 5%% of the hog's (%.2f ms)",
	      dw->inflicted_online_ns / 1e6, hw->inflicted_online_ns / 1e6);
	/*
	 * The probe's BE steal is the hog's time on CPU 0 during its waits, as
	 * ftrace saw it: at least that of the waits inside the window, at most
	 * that of every wait that overlaps it, with the stretches where a switch
	 * of the hog had no event and the waits whose end had none (ftrace
	 * cannot tell who ran there or when they ended; the collector splits
	 * such stretches by the tasks' own clocks and closes such waits at the
	 * probe's pick). Not "mostly BE": a background load in the root cgroup
	 * takes CPU 0 too, and is rightly SYSTEM.
	 *
	 * Each wait begins and ends at a tracepoint hit where the collector
	 * reads its clock after ftrace stamped it: 70-100 ns later here (the
	 * steal reads that much short per wait), 3-20 us and either way under
	 * an emulated CPU (see test_runq; 1.2% over, seen in the 6.1 VM): a
	 * slack per wait both ways, 0.5 us on the host, 20 us emulated. Past
	 * that, the steal read up to 1.3 ms (3.7%) above ftrace's bound in 2 of
	 * 30 runs, with no unreported switch of the probe or the hog and the
	 * same unreported switches on CPU 0 in a BPF reader as in ftrace; not
	 * explained yet, hence 3% (docs/testing.md).
	 */
	in = hog_share(&fw, r.a.mono_end_ns, r.b.mono_ns, true);
	over = hog_share(&fw, r.a.mono_ns, r.b.mono_end_ns, false);
	slack = (test_emulated() ? 20000.0 : 500.0) * over.waits + 1e5;
	rel = test_emulated() ? 0.05 : 0.03;
	over.unsure_ns += fw.lost_other_ns;
	printf("# ftrace: %zu waits of the probe, %zu with the hog on CPU 0 for %.3f..%.3f ms; "
	       "unsure %.3f ms (%zu of the probe's switches missing); steal by others %.1f ms\n",
	       fw.n, over.waits, in.ns / 1e6, over.ns / 1e6, over.unsure_ns / 1e6, fw.lost,
	       by_others / 1e6);
	check(traced && in.ns > 0 && pw->steal_ns[KC_BE] >= (1 - rel) * in.ns - slack &&
		      pw->steal_ns[KC_BE] <= (1 + rel) * (over.ns + over.unsure_ns) + slack,
	      "the probe's BE steal (%.3f ms) is the hog's time in its waits by ftrace "
	      "(%.3f..%.3f ms, %g%% + %.2f ms)", pw->steal_ns[KC_BE] / 1e6, in.ns / 1e6,
	      (over.ns + over.unsure_ns) / 1e6, rel * 100, slack / 1e6);
	ftrace_waits_free(&fw);

	/* Conservation: the slots of pinned containers' waits add up exactly. */
	check(slot_sum(pw) == pw->wait_ns, "probe: steal + self + idle = wait (%llu vs %llu ns)",
	      (unsigned long long)slot_sum(pw), (unsigned long long)pw->wait_ns);
	check(slot_sum(hw) == hw->wait_ns, "hog: steal + self + idle = wait (%llu vs %llu ns)",
	      (unsigned long long)slot_sum(hw), (unsigned long long)hw->wait_ns);
	/*
	 * The hog is the only BE task on CPU 0, the probe the only online one; and
	 * across all containers: online waiting caused = online waiting suffered.
	 */
	for (i = 0; i < r.w.n; i++) {
		const struct container *c = container_table_get(&r.table, r.w.v[i].cgid);

		infl_all += r.w.v[i].inflicted_online_ns;
		if (c && KC_IS_ONLINE(c->ident.qos))
			online_steal += steal_by_others(&r.w.v[i]);
		/* any other container that made online work wait: named, to find it when it bites */
		if (&r.w.v[i] != hw && &r.w.v[i] != dw && r.w.v[i].inflicted_online_ns > 100000)
			printf("# also inflicted online %.3f ms: %s (%s)\n",
			       r.w.v[i].inflicted_online_ns / 1e6, c ? c->path : "an unknown cgroup",
			       c ? qos_name(c->ident.qos) : "-");
	}
	printf("# all containers: inflicted online %.2f ms, online steal %.2f ms\n",
	       infl_all / 1e6, online_steal / 1e6);
	/*
	 * A wait whose switch-in had no event is closed at its task's pick by
	 * the stale-wait program, which runs before the switch program.
	 */
	check(!r.w.counters[CNT_WAIT_STALE_DROPPED],
	      "no wait left open for the switch program to drop (%llu)",
	      (unsigned long long)r.w.counters[CNT_WAIT_STALE_DROPPED]);
	/* Both sides integrate the same waits over the same clocks: equal but for rounding. */
	check(fabs((double)hw->inflicted_online_ns - pw->steal_ns[KC_BE]) <=
		      0.005 * pw->steal_ns[KC_BE] + 1e5,
	      "hog's inflicted online wait matches the probe's BE steal (%.3f vs %.3f ms, "
	      "0.5%% + 0.1 ms)", hw->inflicted_online_ns / 1e6, pw->steal_ns[KC_BE] / 1e6);
	check(fabs((double)infl_all - online_steal) <= 0.005 * online_steal + 2e5,
	      "inflicted online totals match online victims' steal (%.3f vs %.3f ms, 0.5%% + 0.2 ms)",
	      infl_all / 1e6, online_steal / 1e6);
	finish(&r);
	free(probe);
	free(hog);
	free(decoy);
}

/* After churn (wakeups, preemption, migration, exit), no online task waits anywhere. */
static void no_drift(void)
{
	char *ls = test_cgroup_make(&hier, LS_POD("churn")), *be = test_cgroup_make(&hier, BE_POD("churn"));
	struct cpu_state cs;
	pid_t pids[12];
	bool zero = true, sane = true;
	unsigned int cpu, i;
	struct run r;

	if (!check(ls && be && !start(&r, 0, 0), "collector ready for churn"))
		return;
	/* Unpinned, so the scheduler migrates them; probes with 100 us periods. */
	for (i = 0; i < 12; i++)
		pids[i] = spawn(&hier, i % 3 ? ls : be, -1, i % 4 ? WL_PROBE : WL_HOG, 100);
	sleep_ms(2000);
	for (i = 0; i < 12; i++)
		stop(pids[i]);
	sleep_ms(300);
	for (cpu = 0; cpu < collector_nr_cpus(r.col); cpu++) {
		if (collector_cpu_state(r.col, cpu, &cs))
			continue;
		printf("# cpu %u: waiting online %lld, all %lld\n", cpu, cs.n_online, cs.n_all);
		zero &= cs.n_online == 0;
		sane &= cs.n_all >= 0 && cs.n_all < 64;
	}
	check(zero, "no online task is counted waiting once they are all gone");
	check(sane, "waiting counts stay small and never negative");
	finish(&r);
	free(ls);
	free(be);
}

static __u64 throttled_ns(const char *cg)
{
	char buf[1024], *p;

	if (cgroup_read(&hier, cg, "cpu.stat", buf, sizeof(buf)))
		return 0;
	if ((p = strstr(buf, "throttled_time ")))	/* v1: ns */
		return strtoull(p + 15, NULL, 10);
	if ((p = strstr(buf, "throttled_usec ")))	/* v2: us */
		return strtoull(p + 15, NULL, 10) * 1000;
	return 0;
}

static __u64 nr_throttled(const char *cg)
{
	char buf[1024], *p;

	if (cgroup_read(&hier, cg, "cpu.stat", buf, sizeof(buf)) || !(p = strstr(buf, "nr_throttled ")))
		return 0;
	return strtoull(p + 13, NULL, 10);
}

/*
 * Wait for a moment between two of @cg's throttled stretches. cpu.stat counts
 * a stretch when the period timer unthrottles it (and bumps nr_throttled
 * then), the collector when the task runs again a few ms later: read across
 * that gap, one had counted a whole stretch (~60 ms) the other had not yet
 * (seen: 1803.8 vs 1863.9 ms). So: wait for the bump (up to 300 ms), then
 * 25 ms, while the task, sharing its CPU with the hog, spends the 20 ms of
 * its quota (~40 ms) before the next stretch begins.
 */
static void between_stretches(const char *cg)
{
	__u64 n = nr_throttled(cg);

	for (int i = 0; i < 300 && nr_throttled(cg) == n; i++)
		sleep_ms(1);
	sleep_ms(25);
}

/* cfs_rq::throttled_clock_self_time (6.6+): its name among the kernel BTF's strings. */
static bool kernel_has_throttle_clock(void)
{
	static const char name[] = "throttled_clock_self_time";
	FILE *f = fopen("/sys/kernel/btf/vmlinux", "r");
	char *btf = NULL;
	size_t len = 0, cap = 0, n;
	bool found;

	while (f) {
		if (len == cap) {
			char *p = realloc(btf, cap = cap ? 2 * cap : 1 << 22);

			if (!p)
				break;
			btf = p;
		}
		n = fread(btf + len, 1, cap - len, f);
		if (!n)
			break;
		len += n;
	}
	if (f)
		fclose(f);
	found = btf && memmem(btf, len, name, sizeof(name)) != NULL;	/* with its NUL */
	free(btf);
	return found;
}

/* Before 6.18 (task-based throttling) a throttled cfs_rq keeps its tasks on the queue. */
static bool throttled_tasks_stay_queued(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major < 6 || (major == 6 && minor < 18);
}

static void self_throttling(void)
{
	char *ls = test_cgroup_make(&hier, LS_POD("limited")), *hog = test_cgroup_make(&hier, BE_POD("hog2"));
	const struct cg_window *lw, *hw;
	__u64 t0, t1, reads;
	struct run r;
	int err;

	if (!check(ls && hog && !start(&r, 0, 0), "collector ready for throttling"))
		return;
	err = hier.version == 2 ? cgroup_write(&hier, ls, "cpu.max", "20000 100000") :
		cgroup_write(&hier, ls, "cpu.cfs_quota_us", "20000");
	if (!check(!err, "quota of 20%% on the online container"))
		goto out;
	spawn(&hier, ls, 0, WL_HOG, 0);
	spawn(&hier, hog, 0, WL_HOG, 0);
	sleep_ms(300);
	r.throttled_cg = ls;
	watch(&r, WATCH_MS);
	t0 = r.throttled0;
	t1 = r.throttled1;
	lw = of(&r, ls);
	hw = of(&r, hog);
	printf("# limited: wait %.1f ms, throttled %.1f ms (cpu.stat %.1f ms), BE %.1f ms; "
	       "hog inflicted online %.1f ms\n", lw->wait_ns / 1e6,
	       lw->steal_ns[ST_THROTTLED] / 1e6, (t1 - t0) / 1e6, lw->steal_ns[KC_BE] / 1e6,
	       hw->inflicted_online_ns / 1e6);
	if (!kernel_has_throttle_clock()) {
		printf("# this kernel has no cfs_rq throttled_clock_self_time: throttled is not split out\n");
		check(lw->steal_ns[ST_THROTTLED] == 0, "no throttled time claimed without the clock");
		goto out;
	}
	/*
	 * Both count a throttled stretch when it ends; read between two
	 * (between_stretches) they agreed to 0.1 ms here.
	 */
	reads = (r.a.mono_end_ns - r.a.mono_ns) + (r.b.mono_end_ns - r.b.mono_ns);
	check(fabs((double)lw->steal_ns[ST_THROTTLED] - (t1 - t0)) <= 0.02 * (t1 - t0) + 20e6 + reads,
	      "throttled part matches cpu.stat's throttled time (2%% + 20 ms + the %.0f ms the "
	      "samples took to read)", reads / 1e6);
	check(lw->steal_ns[ST_THROTTLED] >= 50e6, "the quota did throttle it (%.1f ms)",
	      lw->steal_ns[ST_THROTTLED] / 1e6);
	/*
	 * The hog is blamed for what the online container lost to BE, not for
	 * its throttling (6.18 takes a throttled task off the queue; the first
	 * slice after the quota ran out is still counted, hence the 5%).
	 * Before 6.18 a throttled group keeps its tasks queued, so they count
	 * as waiting behind whoever runs: there the blame is bounded by BE's
	 * part plus the throttled part (docs/metrics.md, "Inflicted").
	 */
	if (throttled_tasks_stay_queued()) {
		printf("# kernel < 6.18: throttled tasks stay queued; the hog's blame includes them\n");
		check(hw->inflicted_online_ns <=
		      1.05 * (lw->steal_ns[KC_BE] + lw->steal_ns[ST_THROTTLED]) + 5e6,
		      "the BE hog's inflicted wait (%.1f ms) is at most what the container lost to BE "
		      "and to its throttling (%.1f ms)", hw->inflicted_online_ns / 1e6,
		      (lw->steal_ns[KC_BE] + lw->steal_ns[ST_THROTTLED]) / 1e6);
		goto out;
	}
	check(hw->inflicted_online_ns <= 1.05 * lw->steal_ns[KC_BE] + 5e6,
	      "the BE hog's inflicted wait (%.1f ms) is what the container lost to BE (%.1f ms), "
	      "not its throttled time", hw->inflicted_online_ns / 1e6, lw->steal_ns[KC_BE] / 1e6);
out:
	finish(&r);
	free(ls);
	free(hog);
}

/* Publish @r's table again with @cg's class set to @qos. */
static void publish_as(struct run *r, const char *cg, enum koord_class qos)
{
	__u64 id = cgroup_id(&hier, cg);
	size_t i;

	container_table_scan(&r->table, hier.root, NULL, NULL);
	for (i = 0; i < r->table.n; i++)
		if (r->table.v[i].id == id)
			r->table.v[i].ident.qos = qos;
	collector_set_classes(r->col, &r->table);
}

/*
 * Two hogs of one container share CPU 0, so one always waits for the other.
 * The container is made after the classes were published (unclassified, as
 * every new pod is until the next walk), then published as LS, then as BE.
 * Its own waiters are never online waiting it inflicts: a waiter queued
 * under the old class once made the online integral less the container's
 * own go negative and wrap, and LS waiters under a BE runner were charged
 * to it.
 */
static void class_change(void)
{
	static const enum koord_class steps[] = { KC_LS, KC_BE, KC_LS };
	const struct cg_window *w;
	struct run r;
	char *cg = NULL;
	pid_t h1, h2;
	size_t i;

	if (!check(!start(&r, 0, 0), "collector ready for class changes"))
		return;
	cg = test_cgroup_make(&hier, LS_POD("late"));
	h1 = spawn(&hier, cg, 0, WL_HOG, 0);
	h2 = spawn(&hier, cg, 0, WL_HOG, 0);
	if (!check(h1 > 0 && h2 > 0, "two hogs of one container on CPU 0, not yet classified"))
		goto out;
	sleep_ms(300);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		collector_sample(r.col, &r.a);
		publish_as(&r, cg, steps[i]);
		sleep_ms(600);
		collector_sample(r.col, &r.b);
		window_free(&r.w);
		window_compute(&r.a, &r.b, &r.w);
		w = of(&r, cg);
		check(w->cpu_ns > r.w.dur_ns / 2 && w->wait_ns > r.w.dur_ns / 4,
		      "as %s: the hogs ran (%.0f ms) and waited for each other (%.0f ms)",
		      qos_name(steps[i]), w->cpu_ns / 1e6, w->wait_ns / 1e6);
		check(w->inflicted_online_ns <= 1000000,
		      "as %s: its own waiters are not online waiting it caused (%.3f ms)",
		      qos_name(steps[i]), w->inflicted_online_ns / 1e6);
		check(w->inflicted_all_ns <= 2 * r.w.dur_ns,
		      "as %s: what it caused is at most the window times the other waiters "
		      "(%.1f ms in %.0f ms)", qos_name(steps[i]), w->inflicted_all_ns / 1e6,
		      r.w.dur_ns / 1e6);
		sample_free(&r.a);
		sample_free(&r.b);
	}
out:
	finish(&r);
	free(cg);
}

static void rate_limit(void)
{
	char *probe = test_cgroup_make(&hier, LS_POD("probe3")), *hog = test_cgroup_make(&hier, BE_POD("hog3"));
	__u64 dropped, long_waits, limit;
	unsigned int per_sec = 10;
	struct run r;

	/* Every wait above 1 us is "long": thousands per second. */
	if (!check(probe && hog && !start(&r, 1000, per_sec), "collector with a 1 us threshold"))
		return;
	spawn(&hier, hog, 0, WL_HOG, 0);
	spawn(&hier, probe, 0, WL_PROBE, 100);
	sleep_ms(200);
	watch(&r, WATCH_MS);
	long_waits = r.w.counters[CNT_LONG_WAITS];
	dropped = r.w.counters[CNT_EVENTS_DROPPED] + r.w.counters[CNT_EVENTS_RB_FULL];
	/* One window per container and CPU per second; the edges may add one more. */
	limit = (__u64)per_sec * (WATCH_MS / 1000 + 2) * collector_nr_cpus(r.col);
	printf("# long waits %llu, records %llu, dropped %llu\n", (unsigned long long)long_waits,
	       (unsigned long long)r.long_waits_seen, (unsigned long long)dropped);
	check(long_waits > 10 * limit, "the workload makes many long waits (%llu)",
	      (unsigned long long)long_waits);
	check(r.long_waits_seen > 0 && r.long_waits_seen <= limit,
	      "records stay bounded (%llu <= %llu)", (unsigned long long)r.long_waits_seen,
	      (unsigned long long)limit);
	if (test_emulated()) {
		/*
		 * Under emulation a sample's per-CPU reads spread over 20-270 ms;
		 * waits ending meanwhile may fall on either side of it.
		 */
		double edge = (double)long_waits / (WATCH_MS / 1e3) *
			      ((r.a.mono_end_ns - r.a.mono_ns) + (r.b.mono_end_ns - r.b.mono_ns)) / 1e9;

		check(fabs((double)(r.long_waits_seen + dropped) - long_waits) <= edge + 2,
		      "records + dropped = long waits, within the waits that ended while a sample "
		      "was read (%.0f)", edge);
	} else {
		check(r.long_waits_seen + dropped == long_waits, "records + dropped = long waits");
	}
	finish(&r);
	free(probe);
	free(hog);
}

int main(void)
{
	cpu_set_t cpus;

	log_prog = "test_steal";
	require_bpf_env(&hier);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		/* not a missing privilege: the scenario cannot be built, which is a failure */
		printf("FAIL: needs 2 CPUs (the sampler and a decoy on CPU 1)\n");
		return 1;
	}
	CPU_ZERO(&cpus);
	CPU_SET(1, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	attribution();
	test_cgroup_cleanup();
	no_drift();
	test_cgroup_cleanup();
	self_throttling();
	test_cgroup_cleanup();
	class_change();
	test_cgroup_cleanup();
	rate_limit();
	test_cgroup_cleanup();
	return test_summary("test_steal");
}
