// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Run-queue collector on real cgroups: a CPU hog (besteffort) and a sleep/
 * wake probe (burstable) pinned to CPU 0. The probe's waits are checked
 * against an ftrace reading of the same events, the hog's CPU time against
 * /proc/PID/schedstat; removed cgroups must leave the maps.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
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
#define POD_LS	test_pod_path(KC_LS, "5f6e3c1a-1111-4a4a-9b9b-0123456789ab", "probe")
#define POD_BE	test_pod_path(KC_BE, "7a8b9c0d-2222-4b4b-8c8c-0123456789ab", "hog")

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

/*
 * ftrace's longest waits ending in [from, to] (end times relative to @from)
 * and its wait nearest to the collector's max: when the maxima disagree, this
 * tells a wait measured differently from a wait missed or taken from
 * outside the window.
 */
static void print_longest(const struct ftrace_waits *fw, __u64 from, __u64 to, __u64 bpf_max)
{
	size_t top[3] = { SIZE_MAX, SIZE_MAX, SIZE_MAX }, i, k, near = SIZE_MAX;

	for (i = 0; i < fw->n; i++) {
		if (fw->end_ns[i] < from || fw->end_ns[i] > to)
			continue;
		if (near == SIZE_MAX || llabs((long long)fw->len_ns[i] - (long long)bpf_max) <
					llabs((long long)fw->len_ns[near] - (long long)bpf_max))
			near = i;
		for (k = 0; k < 3; k++) {
			if (top[k] == SIZE_MAX || fw->len_ns[i] > fw->len_ns[top[k]]) {
				memmove(&top[k + 1], &top[k], (2 - k) * sizeof(top[0]));
				top[k] = i;
				break;
			}
		}
	}
	printf("# ftrace's longest waits:");
	for (k = 0; k < 3 && top[k] != SIZE_MAX; k++)
		printf(" %.1f us (ended at +%.1f ms)", fw->len_ns[top[k]] / 1e3,
		       (fw->end_ns[top[k]] - from) / 1e6);
	if (near != SIZE_MAX)
		printf("; nearest to the collector's max: %.1f us (ended at +%.1f ms)",
		       fw->len_ns[near] / 1e3, (fw->end_ns[near] - from) / 1e6);
	printf("\n");
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

/*
 * Tolerances of the comparisons with ftrace. On real hardware the collector's
 * clock read and ftrace's record of the same tracepoint hit are ~1 us apart.
 * Under an emulated CPU (qemu TCG, the VM self-test: KOORD_TEST_EMULATED=1)
 * they are 3-20 us apart and now and then hundreds of us to milliseconds,
 * when the emulator or the host stalls the vCPU between the two reads
 * (measured in the VM by scripts/vm/skew.c; docs/vm-test.md). So there each
 * wait may be off by that much, on the max and on the mean, more than any
 * defect the host's comparison catches (the VM self-test saw a max 549 us
 * and a mean 6-29% off ftrace's on the same waits): there the mean and the
 * max are printed, not judged, and the counts, the p99 bucket and the hog's
 * time are. A scenario is measured again only when ftrace's record lacks
 * switches of the probe (see run_scenario), on any
 * kernel: any other miss is a defect (a stale per-epoch max, a
 * running stretch counted twice) until shown otherwise. The host is a VM
 * too: its hypervisor can stop the vCPU between the collector's clock read
 * and ftrace's on the same tracepoint hit (seen: one max 13.8 us short of
 * ftrace's, every other figure equal), so a max may be 20 us off; a wrong
 * max (another window's, or a wait counted twice) is milliseconds off. The
 * tolerances in use are printed.
 */
static struct tolerance {
	double mean_rel, mean_abs_ns;	/* mean wait */
	double max_rel, max_abs_ns;	/* longest wait */
	unsigned int min_waits;		/* the probe waited often: at least this many */
	bool judge_times;		/* mean and max judged (not under emulation) */
} tol = { 0.02, 2000, 0.001, 20000, WATCH_MS / 4, true };

/* One measurement: both samples, ftrace's reading and the window between. */
struct measurement {
	struct sample a, b;
	struct ftrace_waits fw;
	struct window w;
	const struct cg_window *pw, *hw;
	struct wstats inner, outer;
	__u64 hog_rt0, hog_rt1;
	bool ftrace_ok;
};

static void measurement_free(struct measurement *m)
{
	ftrace_waits_free(&m->fw);
	window_free(&m->w);
	sample_free(&m->a);
	sample_free(&m->b);
	memset(m, 0, sizeof(*m));
}

static void measure(struct collector *col, pid_t hog, pid_t probe, const char *probe_cg,
		    const char *hog_cg, struct measurement *m)
{
	m->ftrace_ok = !ftrace_start(probe);
	/* A warm-up read: right after another collector was torn down, the first can stall. */
	collector_sample(col, &m->a);
	sleep_ms(100);
	m->hog_rt0 = task_runtime_ns(hog);
	collector_sample(col, &m->a);
	sleep_ms(WATCH_MS);
	collector_sample(col, &m->b);
	m->hog_rt1 = task_runtime_ns(hog);
	m->ftrace_ok = !ftrace_stop(probe, &m->fw) && m->ftrace_ok;
	window_compute(&m->a, &m->b, &m->w);
	m->pw = window_find(&m->w, cgroup_id(&hier, probe_cg));
	m->hw = window_find(&m->w, cgroup_id(&hier, hog_cg));
	/*
	 * The maps are read during a syscall between mono_ns and mono_end_ns:
	 * ftrace's waits ending in the inner interval must all be counted, and
	 * no more than those ending in the outer one.
	 */
	m->inner = ftrace_stats(&m->fw, m->a.mono_end_ns, m->b.mono_ns);
	m->outer = ftrace_stats(&m->fw, m->a.mono_ns, m->b.mono_end_ns);
}

/*
 * The checks that depend on timing. With @report false only say whether all
 * hold (a failed attempt is then printed as a comment); with @report true
 * record them as checks.
 */
static bool timing_checks(const struct measurement *m, bool report)
{
	const struct cg_window *pw = m->pw, *hw = m->hw;
	const struct wstats *in = &m->inner, *out = &m->outer;
	double p99_lo = fmin(in->p99_lo, out->p99_lo), p99_hi = fmax(in->p99_hi, out->p99_hi);
	double mean = pw->wait_count ? pw->wait_ns / (double)pw->wait_count : 0;
	bool ok[7] = {
		pw->wait_count > tol.min_waits,
		rel_err(hw->cpu_ns, m->hog_rt1 - m->hog_rt0) < 0.10,
		hw->cpu_ns > WATCH_MS * 1e6 * 0.5,
		out->n > 0 && pw->wait_count >= in->n * 0.995 && pw->wait_count <= out->n * 1.005,
		/* ftrace prints microseconds: 2% + 2 us on the mean. */
		!tol.judge_times || within(mean, in->mean, out->mean, tol.mean_rel, tol.mean_abs_ns),
		/*
		 * p99 is a bucket midpoint: within one bucket (6.25%) plus ftrace's
		 * 2 us of ftrace's p98.5..p99.5 (the counts differ by the window edges).
		 */
		within(pw->p99_ns, p99_lo, p99_hi, 0.0625, 2000),
		!tol.judge_times || within(pw->wait_max, in->max, out->max, tol.max_rel,
					   tol.max_abs_ns),
	};
	unsigned int i;

	if (!report) {
		for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
			if (!ok[i])
				return false;
		return true;
	}
	check(ok[0], "the probe waited often (%llu waits in %d ms, more than %u)",
	      (unsigned long long)pw->wait_count, WATCH_MS, tol.min_waits);
	check(ok[1], "hog cpu_ns %.1f ms within 10%% of schedstat's %.1f ms", hw->cpu_ns / 1e6,
	      (m->hog_rt1 - m->hog_rt0) / 1e6);
	check(ok[2], "the hog held CPU 0 most of the time");
	check(ok[3], "wait count %llu within ftrace's %zu..%zu (+-0.5%%)",
	      (unsigned long long)pw->wait_count, in->n, out->n);
	if (tol.judge_times)
		check(ok[4], "mean wait %.1f us within ftrace's (%g%% + %g us)", mean / 1e3,
		      tol.mean_rel * 100, tol.mean_abs_ns / 1e3);
	check(ok[5], "p99 %.1f us within ftrace's p98.5..p99.5 (%.1f..%.1f us), to one bucket",
	      pw->p99_ns / 1e3, p99_lo / 1e3, p99_hi / 1e3);
	if (tol.judge_times)
		check(ok[6], "max %.1f us within ftrace's (%g%% + %g us)", pw->wait_max / 1e3,
		      tol.max_rel * 100, tol.max_abs_ns / 1e3);
	return true;
}

static void print_measurement(const struct measurement *m)
{
	const struct cg_window *pw = m->pw, *hw = m->hw;

	printf("# sampling took %.1f ms and %.1f ms\n", (m->a.mono_end_ns - m->a.mono_ns) / 1e6,
	       (m->b.mono_end_ns - m->b.mono_ns) / 1e6);
	printf("# probe: %llu waits, mean %.1f us, p99 %.1f us, max %.1f us; hog cpu %.1f ms\n",
	       (unsigned long long)pw->wait_count,
	       pw->wait_count ? pw->wait_ns / 1e3 / pw->wait_count : 0, pw->p99_ns / 1e3,
	       pw->wait_max / 1e3, hw->cpu_ns / 1e6);
	printf("# ftrace: %zu..%zu waits, mean %.1f..%.1f us, p99 %.1f..%.1f us, max %.1f..%.1f us; "
	       "%zu of the probe's switches missing from its record\n",
	       m->inner.n, m->outer.n, m->inner.mean / 1e3, m->outer.mean / 1e3,
	       m->inner.p99 / 1e3, m->outer.p99 / 1e3, m->inner.max / 1e3, m->outer.max / 1e3,
	       m->fw.lost);
	print_longest(&m->fw, m->a.mono_ns, m->b.mono_end_ns, pw->wait_max);
}

static void run_scenario(enum attach_mode attach, enum store_mode store)
{
	struct collector_opts o = { .hier = &hier, .attach = attach, .store = store };
	char *probe_cg = test_cgroup_make(&hier, POD_LS), *hog_cg = test_cgroup_make(&hier, POD_BE);
	struct container_table table = {};
	struct measurement m = {};
	struct collector *col = NULL;
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
	measure(col, hog, probe, probe_cg, hog_cg, &m);
	if (m.ftrace_ok && m.pw && m.hw) {
		print_measurement(&m);
		/*
		 * The reference itself can be short: this kernel emits no sched_switch
		 * for a few switches a second, and ftrace then misreads the probe's
		 * waits around them. Only then is the scenario measured again, once.
		 */
		if (!timing_checks(&m, false) && m.fw.lost) {
			printf("# ftrace's record lacks %zu of the probe's switches (the kernel "
			       "emitted no event): the reference is incomplete; measuring again\n",
			       m.fw.lost);
			measurement_free(&m);
			measure(col, hog, probe, probe_cg, hog_cg, &m);
			if (m.ftrace_ok && m.pw && m.hw)
				print_measurement(&m);
		}
	}
	check(m.ftrace_ok, "ftrace instance records the probe and is read back");
	if (!check(m.pw && m.hw, "both containers are in the window"))
		goto out;
	timing_checks(&m, true);
	check(m.w.counters[CNT_SLOTS_FULL] + m.w.counters[CNT_TASK_FULL] == 0,
	      "no event went unaccounted");

	/* Removing the containers drops their entries. */
	stop(hog);
	stop(probe);
	{
		char path[PATH_MAX + 256];
		__u64 pid_cg = cgroup_id(&hier, probe_cg), hid_cg = cgroup_id(&hier, hog_cg);
		struct sample c = {};

		const struct cg_sample *left[2];
		int err[2];

		snprintf(path, sizeof(path), "%s%s", hier.root, probe_cg);
		err[0] = rmdir(path) ? errno : 0;
		snprintf(path, sizeof(path), "%s%s", hier.root, hog_cg);
		err[1] = rmdir(path) ? errno : 0;
		sleep_ms(50);
		collector_sample(col, &c);
		left[0] = sample_find(&c, pid_cg);
		left[1] = sample_find(&c, hid_cg);
		check(!err[0] && !err[1] && !left[0] && !left[1],
		      "entries of removed cgroups are gone from the maps");
		for (int i = 0; i < 2; i++) {
			if (err[i])
				printf("# rmdir of the %s cgroup: %s\n", i ? "hog" : "probe",
				       strerror(err[i]));
			if (left[i])
				printf("# the %s cgroup's entry is still there: cpu %.3f ms, "
				       "%llu waits, wait %.3f ms\n", i ? "hog" : "probe",
				       left[i]->s.cpu_ns / 1e6,
				       (unsigned long long)left[i]->s.wait_count,
				       left[i]->s.wait_ns / 1e6);
		}
		sample_free(&c);
	}
out:
	measurement_free(&m);
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
	if (test_emulated()) {
		/* Measured under qemu TCG: docs/vm-test.md. */
		tol.min_waits = WATCH_MS / 10;
		tol.judge_times = false;
		printf("# emulated CPU (KOORD_TEST_EMULATED=1): the mean and the max are printed, "
		       "not judged; more than %u waits\n", tol.min_waits);
	}
	run_scenario(ATTACH_AUTO, STORE_AUTO);
	run_scenario(ATTACH_RAW_TP, STORE_HASH);
	test_cgroup_cleanup();
	return test_summary("test_runq");
}
