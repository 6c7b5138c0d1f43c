// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Accuracy next to cost (issue 7, item 6): the percentiles of the log-linear
 * histogram against exact percentiles of the same waits. Every wait of an
 * online probe (a 1 µs threshold and no rate limit, so each one also
 * arrives as a long-wait record with its exact length) is kept while the
 * histogram counts them; both are read over the same window. The probe
 * shares CPU 0 with a BE hog, so its waits spread from microseconds to
 * milliseconds. Two workloads: a sleeper (wakes every 1 ms) and a server
 * (works 300 µs per wake-up).
 *
 *   koord-bench-accuracy [SECONDS]     prints one table per workload
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collector.h"
#include "hist.h"
#include "testlib.h"

#define BUDGET	0.10	/* relative error of a percentile */

static struct cpu_hierarchy hier;

struct raw {
	__u64 cgid;
	__u64 *v;
	size_t n, cap;
};

static int on_record(void *ctx, const struct long_wait_event *ev)
{
	struct raw *r = ctx;
	__u64 *v;

	if (ev->cgid != r->cgid)
		return 0;
	if (r->n == r->cap) {
		v = realloc(r->v, (r->cap = r->cap ? 2 * r->cap : 4096) * sizeof(*v));
		if (!v)
			return -1;
		r->v = v;
	}
	r->v[r->n++] = ev->wait_ns;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* One workload: returns the number of percentiles over budget, -1 when it could not measure. */
static int measure(const char *name, enum workload wl, unsigned int seconds)
{
	static const double qs[] = { 0.5, 0.9, 0.99, 0.999 };
	struct collector_opts o = { .hier = &hier, .long_wait_ns = 1, .events_per_sec = 1u << 30 };
	const char *probe_cg = test_pod_path(KC_LS, "aaaaaaaa-6666-4000-8000-000000000001", name);
	const char *hog_cg = test_pod_path(KC_BE, "aaaaaaaa-7777-4000-8000-000000000002", name);
	struct container_table t = {};
	struct sample a = {}, b = {};
	struct window w = {};
	struct collector *col;
	struct raw r = {};
	const struct cg_window *pw;
	char *probe_rel, *hog_rel;
	__u64 total = 0, end, lost;
	pid_t probe, hog;
	int over = 0;
	size_t i;

	probe_rel = test_cgroup_make(&hier, probe_cg);
	hog_rel = test_cgroup_make(&hier, hog_cg);
	if (!probe_rel || !hog_rel || collector_open(&o, &col))
		return -1;
	container_table_scan(&t, hier.root, NULL, NULL);
	collector_set_classes(col, &t);
	collector_watch_events(col, on_record, &r);
	/*
	 * The same population on both sides: every wait of the probe from its
	 * first to its last (the histogram counts from zero, the probe is
	 * stopped and all records drained before the one sample).
	 */
	r.cgid = cgroup_id(&hier, probe_rel);
	hog = spawn(&hier, hog_rel, 0, WL_HOG, 0);
	probe = spawn(&hier, probe_rel, 0, wl, 1000);
	end = now_mono_ns() + seconds * 1000000000ull;
	while (now_mono_ns() < end)
		collector_poll(col, 50);
	stop(probe);
	stop(hog);
	sleep_ms(100);
	while (collector_poll(col, 10) > 0)
		;
	collector_sample(col, &b);
	window_compute(&a, &b, &w);
	pw = window_find(&w, r.cgid);
	if (!pw || !r.n) {
		printf("%s: no waits measured\n", name);
		return -1;
	}
	total = window_hist_total(pw);
	lost = w.counters[CNT_EVENTS_DROPPED] + w.counters[CNT_EVENTS_RB_FULL];
	qsort(r.v, r.n, sizeof(*r.v), cmp_u64);
	printf("\n%s: %zu waits recorded, %llu in the histogram, %llu records lost, %u s\n", name,
	       r.n, (unsigned long long)total, (unsigned long long)lost, seconds);
	printf("  percentile    exact_us    hist_us   error   budget\n");
	for (i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		__u64 exact = quantile(r.v, r.n, qs[i]);
		__u64 est = hist_cells_quantile(pw->hist, pw->nhist, total, qs[i], pw->wait_max);
		double err = exact ? fabs((double)est - exact) / exact : 0;

		over += err > BUDGET;
		printf("  p%-9g %11.2f %10.2f %6.1f%%   %s\n", qs[i] * 100, exact / 1e3, est / 1e3,
		       100 * err, err > BUDGET ? "OVER" : "PASS");
	}
	printf("  max       %11.2f %10.2f (exact in both)\n", r.v[r.n - 1] / 1e3, pw->wait_max / 1e3);
	test_cgroup_cleanup();
	window_free(&w);
	sample_free(&a);
	sample_free(&b);
	container_table_free(&t);
	collector_close(col);
	free(r.v);
	return over;
}

int main(int argc, char **argv)
{
	unsigned int seconds = argc > 1 ? strtoul(argv[1], NULL, 10) : 5;
	int a, b;

	require_bpf_env(&hier);
	if (!seconds)
		seconds = 5;
	a = measure("sleeper", WL_PROBE, seconds);
	b = measure("server", WL_SERVER, seconds);
	if (a < 0 || b < 0)
		return 1;
	printf("\naccuracy: %s (budget: every percentile within %.0f%% of the exact one)\n",
	       a + b ? "OVER" : "PASS", BUDGET * 100);
	return 0;
}
