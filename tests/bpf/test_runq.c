// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Run-queue collector on real cgroups: a CPU hog (besteffort) and a sleep/
 * wake probe (burstable) pinned to CPU 0. The probe's waits are checked
 * against an ftrace reading of the same events, the hog's CPU time against
 * /proc/PID/schedstat; removed cgroups must leave the maps.
 */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collector.h"
#include "log.h"
#include "report.h"
#include "testlib.h"

#define WATCH_MS	3000
#define POD_LS	"kubepods/burstable/pod5f6e3c1a-1111-4a4a-9b9b-0123456789ab/probe"
#define POD_BE	"kubepods/besteffort/pod7a8b9c0d-2222-4b4b-8c8c-0123456789ab/hog"

static struct cpu_hierarchy hier;

struct wstats {
	size_t n;
	double mean, p99, p99_lo, p99_hi, max;
};

/*
 * ftrace's waits that ended in [from, to]. The maps are read by a syscall
 * somewhere between a sample's mono_ns and mono_end_ns, so the collector's
 * window lies between the inner and the outer interval.
 */
static struct wstats ftrace_stats(const struct ftrace_waits *fw, __u64 from, __u64 to)
{
	struct wstats st = {};
	__u64 *v = calloc(fw->n + 1, sizeof(*v)), sum = 0;
	size_t i;

	for (i = 0; v && i < fw->n; i++) {
		if (fw->end_ns[i] < from || fw->end_ns[i] > to)
			continue;
		v[st.n++] = fw->len_ns[i];
		sum += fw->len_ns[i];
	}
	if (st.n) {
		st.mean = (double)sum / st.n;
		st.p99 = quantile(v, st.n, 0.99);
		/* A sparse tail makes p99 jump with one wait more or less: keep a band. */
		st.p99_lo = quantile(v, st.n, 0.985);
		st.p99_hi = quantile(v, st.n, 0.995);
		st.max = quantile(v, st.n, 1.0);
	}
	free(v);
	return st;
}

/* @got lies between @x and @y, give or take @rel of the larger plus @abs_ns. */
static bool within(double got, double x, double y, double rel, double abs_ns)
{
	double lo = x < y ? x : y, hi = x < y ? y : x;

	return got >= lo * (1 - rel) - abs_ns && got <= hi * (1 + rel) + abs_ns;
}

static double rel_err(double got, double want)
{
	return want ? fabs(got - want) / want : (got ? INFINITY : 0);
}

static void run_scenario(enum attach_mode attach, enum store_mode store)
{
	struct collector_opts o = { .hier = &hier, .attach = attach, .store = store };
	char *probe_cg = test_cgroup_make(&hier, POD_LS), *hog_cg = test_cgroup_make(&hier, POD_BE);
	struct container_table table = {};
	struct sample a = {}, b = {};
	struct ftrace_waits fw = {};
	struct collector *col = NULL;
	const struct cg_window *pw, *hw;
	struct window w = {};
	struct wstats inner, outer;
	__u64 hog_rt0, hog_rt1;
	pid_t hog, probe;

	if (!check(probe_cg && hog_cg, "kubepods-shaped test cgroups created"))
		return;
	if (!check(!collector_open(&o, &col), "collector loads and attaches"))
		goto out;
	printf("# mode %s\n", collector_mode(col));
	container_table_scan(&table, hier.root, NULL, NULL);
	check(!collector_set_classes(col, &table), "classes published");

	hog = spawn(&hier, hog_cg, 0, WL_HOG, 0);
	probe = spawn(&hier, probe_cg, 0, WL_PROBE, 1000);
	if (!check(hog > 0 && probe > 0, "hog and probe started on CPU 0"))
		goto out;
	sleep_ms(200);
	check(!ftrace_start(probe), "ftrace instance records the probe");
	/* A warm-up read: right after another collector was torn down, the first can stall. */
	collector_sample(col, &a);
	sleep_ms(100);
	hog_rt0 = task_runtime_ns(hog);
	collector_sample(col, &a);
	sleep_ms(WATCH_MS);
	collector_sample(col, &b);
	hog_rt1 = task_runtime_ns(hog);
	check(!ftrace_stop(probe, &fw), "ftrace read back");
	window_compute(&a, &b, &w);

	pw = window_find(&w, cgroup_id(&hier, probe_cg));
	hw = window_find(&w, cgroup_id(&hier, hog_cg));
	if (!check(pw && hw, "both containers are in the window"))
		goto out;
	printf("# sampling took %.1f ms and %.1f ms\n", (a.mono_end_ns - a.mono_ns) / 1e6,
	       (b.mono_end_ns - b.mono_ns) / 1e6);
	printf("# probe: %llu waits, mean %.1f us, p99 %.1f us, max %.1f us; hog cpu %.1f ms\n",
	       (unsigned long long)pw->wait_count, pw->wait_count ? pw->wait_ns / 1e3 / pw->wait_count : 0,
	       pw->p99_ns / 1e3, pw->wait_max / 1e3, hw->cpu_ns / 1e6);
	check(pw->wait_count > WATCH_MS / 4, "the probe waited often (%llu waits in %d ms)",
	      (unsigned long long)pw->wait_count, WATCH_MS);
	check(rel_err(hw->cpu_ns, hog_rt1 - hog_rt0) < 0.10,
	      "hog cpu_ns %.1f ms within 10%% of schedstat's %.1f ms",
	      hw->cpu_ns / 1e6, (hog_rt1 - hog_rt0) / 1e6);
	check(hw->cpu_ns > WATCH_MS * 1e6 * 0.5, "the hog held CPU 0 most of the time");

	/*
	 * The maps are read during a syscall between mono_ns and mono_end_ns:
	 * ftrace's waits ending in the inner interval must all be counted, and
	 * no more than those ending in the outer one.
	 */
	inner = ftrace_stats(&fw, a.mono_end_ns, b.mono_ns);
	outer = ftrace_stats(&fw, a.mono_ns, b.mono_end_ns);
	printf("# ftrace: %zu..%zu waits, mean %.1f..%.1f us, p99 %.1f..%.1f us, max %.1f..%.1f us\n",
	       inner.n, outer.n, inner.mean / 1e3, outer.mean / 1e3, inner.p99 / 1e3,
	       outer.p99 / 1e3, inner.max / 1e3, outer.max / 1e3);
	check(outer.n > 0 && pw->wait_count >= inner.n * 0.995 && pw->wait_count <= outer.n * 1.005,
	      "wait count %llu within ftrace's %zu..%zu (+-0.5%%)", (unsigned long long)pw->wait_count,
	      inner.n, outer.n);
	/* ftrace prints microseconds: 2% + 2 us on the mean. */
	check(within(pw->wait_ns / (double)pw->wait_count, inner.mean, outer.mean, 0.02, 2000),
	      "mean wait %.1f us within ftrace's (2%% + 2 us)", pw->wait_ns / 1e3 / pw->wait_count);
	/*
	 * p99 is a bucket midpoint: within one bucket (6.25%) plus ftrace's 2 us
	 * of ftrace's p98.5..p99.5 (the counts differ by the window edges).
	 */
	check(within(pw->p99_ns, fmin(inner.p99_lo, outer.p99_lo), fmax(inner.p99_hi, outer.p99_hi),
		     0.0625, 2000),
	      "p99 %.1f us within ftrace's p98.5..p99.5 (%.1f..%.1f us), to one bucket",
	      pw->p99_ns / 1e3, fmin(inner.p99_lo, outer.p99_lo) / 1e3,
	      fmax(inner.p99_hi, outer.p99_hi) / 1e3);
	check(within(pw->wait_max, inner.max, outer.max, 0.001, 2000),
	      "max %.1f us within ftrace's (0.1%% + 2 us)", pw->wait_max / 1e3);
	check(w.counters[CNT_STATS_FULL] + w.counters[CNT_HIST_FULL] + w.counters[CNT_TASK_FULL] == 0,
	      "no event went unaccounted");

	/* Removing the containers drops their entries. */
	stop(hog);
	stop(probe);
	{
		char path[PATH_MAX + 256];
		__u64 pid_cg = cgroup_id(&hier, probe_cg), hid_cg = cgroup_id(&hier, hog_cg);
		struct sample c = {};

		snprintf(path, sizeof(path), "%s%s", hier.root, probe_cg);
		rmdir(path);
		snprintf(path, sizeof(path), "%s%s", hier.root, hog_cg);
		rmdir(path);
		sleep_ms(50);
		collector_sample(col, &c);
		check(!sample_find(&c, pid_cg) && !sample_find(&c, hid_cg),
		      "entries of removed cgroups are gone from the maps");
		sample_free(&c);
	}
out:
	ftrace_waits_free(&fw);
	window_free(&w);
	sample_free(&a);
	sample_free(&b);
	container_table_free(&table);
	collector_close(col);
	free(probe_cg);
	free(hog_cg);
}

int main(void)
{
	cpu_set_t cpus;

	log_prog = "test_runq";
	require_bpf_env(&hier);
	/* Keep the sampler off CPU 0, where the workloads run. */
	CPU_ZERO(&cpus);
	CPU_SET(1, &cpus);
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		sched_setaffinity(0, sizeof(cpus), &cpus);
	printf("# cpu hierarchy %s (v%d)\n", hier.root, hier.version);
	run_scenario(ATTACH_AUTO, STORE_AUTO);
	run_scenario(ATTACH_RAW_TP, STORE_HASH);
	test_cgroup_cleanup();
	return test_summary("test_runq");
}
