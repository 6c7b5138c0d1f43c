// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Container slots run out and come back. With --max-containers three above
 * the containers already busy on the machine, four new containers each run
 * a hog: one finds no slot, is counted as container_slots_full and left out,
 * while the others are measured. Once they are removed, a new container gets
 * a slot one of them gave back, and its counters are its own: its CPU time is
 * its hog's, not the second of the container that had the slot before.
 * More cgroups than the class map holds are published as far as they fit,
 * with a warning, not an error.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "collector.h"
#include "testlib.h"

#define NEW	4
#define RUN_MS	1000
#define E_MS	300

static struct cpu_hierarchy hier;

/* Containers with a slot right now, read by a collector of its own. */
static size_t busy_containers(void)
{
	struct collector_opts o = { .hier = &hier };
	struct collector *col;
	struct sample s = {};
	size_t n;

	if (collector_open(&o, &col))
		return 0;
	sleep_ms(500);
	collector_sample(col, &s);
	n = s.n;
	sample_free(&s);
	collector_close(col);
	return n;
}

static const struct cg_sample *find(const struct sample *s, const char *rel)
{
	return sample_find(s, cgroup_id(&hier, rel));
}

int main(void)
{
	struct collector_opts o = { .hier = &hier };
	const struct cg_sample *cs;
	char *rel[NEW], *e, name[16], uid[40];
	struct collector *col;
	struct sample s = {};
	size_t busy, in = 0, i;
	pid_t pid[NEW], ep;
	__u64 ns, ref, full, e_run;

	require_bpf_env(&hier);
	busy = busy_containers();
	if (!check(busy > 0, "containers busy before the test: %zu", busy))
		return test_summary("test_slots");
	o.max_containers = busy + NEW - 1;
	if (!check(!collector_open(&o, &col), "collector with %u container slots",
		   o.max_containers))
		return test_summary("test_slots");
	for (i = 0; i < NEW; i++) {
		snprintf(name, sizeof(name), "c%zu", i);
		snprintf(uid, sizeof(uid), "cccccccc-0000-4000-8000-%012zu", i);
		rel[i] = test_cgroup_make(&hier, test_pod_path(KC_BE, uid, name));
		pid[i] = rel[i] ? spawn(&hier, rel[i], i % 2, WL_HOG, 0) : -1;
		sleep_ms(100);	/* one at a time: the last one finds the slots taken */
	}
	sleep_ms(RUN_MS);
	/*
	 * Stopped, their run times are final for both readings: on a loaded
	 * machine the test itself once waited ~100 ms between the sample and
	 * a running hog's schedstat.
	 */
	for (i = 0; i < NEW; i++)
		if (pid[i] > 0 && !kill(pid[i], SIGSTOP))
			waitpid(pid[i], NULL, WUNTRACED);
	collector_sample(col, &s);
	full = s.counters[CNT_SLOTS_FULL];
	/* Measured: its on-CPU time is its hog's, however busy the machine kept the CPUs. */
	for (i = 0; i < NEW; i++) {
		cs = rel[i] ? find(&s, rel[i]) : NULL;
		ns = cs ? cs->s.cpu_ns : 0;
		ref = pid[i] > 0 ? task_runtime_ns(pid[i]) : 0;
		printf("# %s: %s, cpu %.1f ms, its hog %.1f ms (schedstat)\n", rel[i] ? rel[i] : "?",
		       cs ? "measured" : "no slot", ns / 1e6, ref / 1e6);
		if (cs && ns >= 10000000 && ns <= ref * 1.05 + 2e6 && ns >= ref * 0.95 - 2e6)
			in++;
	}
	check(full > 0, "a container without a slot is counted (container_slots_full %llu)",
	      (unsigned long long)full);
	check(in == NEW - 1, "the others are measured: %zu of %d containers have a slot and their "
	      "hog's CPU time (5%% + 2 ms)", in, NEW);

	/* More cgroups than the class map holds: published as far as they fit, not an error. */
	{
		struct container_table t = {};

		for (i = 0; i < 2 * o.max_containers + 64; i++) {
			snprintf(uid, sizeof(uid), "dddddddd-0000-4000-8000-%012zu", i);
			free(test_cgroup_make(&hier, test_pod_path(KC_BE, uid, "x")));
		}
		container_table_scan(&t, hier.root, NULL, NULL);
		check(t.n > 2 * o.max_containers + 64 && collector_set_classes(col, &t) == 0,
		      "%zu cgroups, more than the class map's %u: classes published as far as they fit",
		      t.n, 2 * o.max_containers + 64);
		container_table_free(&t);
	}

	/* Remove them all; the slots go back, and the next container reuses one. */
	for (i = 0; i < NEW; i++)
		stop(pid[i]);
	sleep_ms(100);
	test_cgroup_cleanup();
	e = test_cgroup_make(&hier, test_pod_path(KC_BE, "cccccccc-0000-4000-8000-0000000000ee", "e"));
	ep = e ? spawn(&hier, e, 0, WL_HOG, 0) : -1;
	sleep_ms(E_MS);
	/* Stopped, its run time is final for both readings. */
	if (ep > 0 && !kill(ep, SIGSTOP))
		waitpid(ep, NULL, WUNTRACED);
	e_run = ep > 0 ? task_runtime_ns(ep) : 0;
	collector_sample(col, &s);
	stop(ep);
	cs = e ? find(&s, e) : NULL;
	ns = cs ? cs->s.cpu_ns : 0;
	printf("# %s: cpu %.1f ms, its hog %.1f ms\n", e ? e : "?", ns / 1e6, e_run / 1e6);
	check(cs != NULL, "a new container gets a slot given back");
	/* The former owner ran 600-800 ms: its counters would be far outside 15% + 10 ms. */
	check(cs && ns <= e_run + e_run * 15 / 100 + 10000000 &&
	      ns + ns * 15 / 100 + 10000000 >= e_run,
	      "its CPU time is its own hog's (%.1f vs %.1f ms), nothing of the slot's former owner",
	      ns / 1e6, e_run / 1e6);
	sample_free(&s);
	collector_close(col);
	for (i = 0; i < NEW; i++)
		free(rel[i]);
	free(e);
	return test_summary("test_slots");
}
