// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Hardware counters per container. These machines have no PMU: with AUTO the
 * collector must run without counters; the attribution path is proven with
 * software events in their place — cpu-clock for cycles and instructions,
 * page faults for LLC misses — against /proc's view of the same tasks.
 */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include "collector.h"
#include "log.h"
#include "testlib.h"

#define WATCH_MS 2000

static struct cpu_hierarchy hier;

/* Minor + major faults of a task, from /proc/PID/stat (fields 10 and 12). */
static __u64 task_faults(pid_t pid)
{
	unsigned long long minflt = 0, majflt = 0;
	char path[64], buf[1024], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %llu %*u %llu", &minflt, &majflt);
	fclose(f);
	return minflt + majflt;
}

/* Independent of the collector: can this task count its own cycles? */
static bool has_pmu(void)
{
	struct perf_event_attr a = { .type = PERF_TYPE_HARDWARE, .size = sizeof(a),
				     .config = PERF_COUNT_HW_CPU_CYCLES };
	int fd = syscall(__NR_perf_event_open, &a, 0, -1, -1, 0);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void auto_source(void)
{
	struct collector_opts o = { .hier = &hier, .pmu_source = PMU_SOURCE_AUTO };
	struct collector *col;

	if (!check(!collector_open(&o, &col), "collector loads with counters on AUTO"))
		return;
	if (has_pmu())
		check(collector_pmu_source(col) == PMU_SOURCE_HARDWARE, "hardware counters in use");
	else
		check(collector_pmu_source(col) == PMU_SOURCE_OFF,
		      "no PMU here: counters off rather than zeros");
	collector_close(col);
}

/* @got within @slack of @want, or above it by up to @slack + @more. */
static bool within(double got, double want, double slack, double more)
{
	return got >= want - slack && got <= want + slack + more;
}

static void software_attribution(void)
{
	struct collector_opts o = { .hier = &hier, .pmu_source = PMU_SOURCE_SOFTWARE };
	char *hog_cg = test_cgroup_make(&hier, test_pod_path(KC_BE, "aaaaaaaa-0000-4000-8000-000000000001", "hog"));
	char *flt_cg = test_cgroup_make(&hier, test_pod_path(KC_LS, "aaaaaaaa-0000-4000-8000-000000000002", "faulter"));
	const struct cg_window *hw, *fw;
	struct sample a = {}, b = {};
	__u64 rt0, rt1, f0, f1, frt0, frt1, reads, lost0, lost;
	struct collector *col = NULL;
	struct window w = {};
	pid_t hog, flt;

	if (!check(hog_cg && flt_cg && !collector_open(&o, &col), "collector with software counters"))
		goto out;
	check(collector_pmu_source(col) == PMU_SOURCE_SOFTWARE, "software source in use");
	hog = spawn(&hier, hog_cg, 0, WL_HOG, 0);
	flt = spawn(&hier, flt_cg, 0, WL_FAULTER, 0);
	sleep_ms(200);
	collector_sample(col, &a);
	sleep_ms(100);
	lost0 = cpu_unclocked_ns(0);
	rt0 = task_runtime_ns(hog);
	frt0 = task_runtime_ns(flt);
	f0 = task_faults(flt);
	collector_sample(col, &a);
	sleep_ms(WATCH_MS);
	collector_sample(col, &b);
	rt1 = task_runtime_ns(hog);
	frt1 = task_runtime_ns(flt);
	f1 = task_faults(flt);
	lost = cpu_unclocked_ns(0) - lost0;
	window_compute(&a, &b, &w);
	hw = window_find(&w, cgroup_id(&hier, hog_cg));
	fw = window_find(&w, cgroup_id(&hier, flt_cg));
	if (!check(hw && fw, "both containers in the window"))
		goto out;
	printf("# hog: cycles %.1f ms, instructions %.1f ms, cpu_ns %.1f ms, schedstat %.1f ms\n",
	       hw->pmu[PMU_CYCLES] / 1e6, hw->pmu[PMU_INSTRUCTIONS] / 1e6, hw->cpu_ns / 1e6,
	       (rt1 - rt0) / 1e6);
	printf("# faulter: llc_misses %llu, /proc faults %llu; cycles %.1f ms, schedstat %.1f ms\n",
	       (unsigned long long)fw->pmu[PMU_LLC_MISSES], (unsigned long long)(f1 - f0),
	       fw->pmu[PMU_CYCLES] / 1e6, (frt1 - frt0) / 1e6);
	/*
	 * cpu-clock counted per CPU and charged at each switch = the task's run
	 * time. schedstat is read around the samples, so a task may run up to
	 * the time the two samples took to read on either side (about 1 ms
	 * here; 20-270 ms under emulation, where the VM self-test runs).
	 * cpu-clock is a wall clock: time CPU 0 spent in interrupts or was
	 * stolen by the hypervisor while one of them held it counts there, not
	 * in schedstat (a loaded run: 1000.5 and 988.4 ms against 887.5 and
	 * 886.6 in a 2 s window), so each may read up to that much more.
	 */
	reads = (a.mono_end_ns - a.mono_ns) + (b.mono_end_ns - b.mono_ns);
	printf("# the two samples took %.1f ms to read; CPU 0 spent %.0f ms in interrupts or "
	       "stolen meanwhile\n", reads / 1e6, lost / 1e6);
	check(within((double)hw->pmu[PMU_CYCLES], rt1 - rt0, 0.05 * (rt1 - rt0) + reads, lost),
	      "hog: cpu-clock charged to its container matches schedstat within 5%% + the reads "
	      "(+ CPU 0's interrupts and steal)");
	check(within((double)fw->pmu[PMU_CYCLES], frt1 - frt0, 0.05 * (frt1 - frt0) + 2e6 + reads,
		     lost),
	      "faulter: cpu-clock matches schedstat within 5%% + 2 ms + the reads (+ CPU 0's "
	      "interrupts and steal)");
	check(hw->pmu[PMU_INSTRUCTIONS] &&
	      fabs((double)hw->pmu[PMU_CYCLES] / hw->pmu[PMU_INSTRUCTIONS] - 1) < 0.01,
	      "CPI of two identical sources is 1");
	check(f1 > f0 && fabs((double)fw->pmu[PMU_LLC_MISSES] - (f1 - f0)) <=
			 0.05 * (f1 - f0) + 50 + (double)(f1 - f0) * reads / (WATCH_MS * 1e6),
	      "faulter: page faults charged to its container match /proc within 5%% + the reads");
	check(hw->pmu[PMU_LLC_MISSES] * 20 < fw->pmu[PMU_LLC_MISSES],
	      "the hog, which does not fault, gets few of them (%llu)",
	      (unsigned long long)hw->pmu[PMU_LLC_MISSES]);
out:
	window_free(&w);
	sample_free(&a);
	sample_free(&b);
	collector_close(col);
	free(hog_cg);
	free(flt_cg);
}

int main(void)
{
	cpu_set_t cpus;

	log_prog = "test_counters";
	require_bpf_env(&hier);
	CPU_ZERO(&cpus);
	CPU_SET(1, &cpus);
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		sched_setaffinity(0, sizeof(cpus), &cpus);
	auto_source();
	software_attribution();
	test_cgroup_cleanup();
	return test_summary("test_counters");
}
