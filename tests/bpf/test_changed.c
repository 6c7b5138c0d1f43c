// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A sample reads only what changed: a container whose counters BPF did not
 * touch since the last sample, and that does not run, is taken from that
 * sample instead of read from every CPU's entry. Containers whose hogs ran
 * and were stopped keep their numbers in the next samples without being
 * read (from the second sample after their last change on: a change is read
 * once more in the sample after the one that saw it, in case its BPF
 * program was still writing); a hog let run again is read again, its
 * container's CPU time grown by what it ran (schedstat).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "collector.h"
#include "testlib.h"

#define N	40

static struct cpu_hierarchy hier;

static void stop_hog(pid_t pid)
{
	if (pid > 0 && !kill(pid, SIGSTOP))
		waitpid(pid, NULL, WUNTRACED);
}

/* How many of @ids are in @b with the counters they had in @a. */
static size_t kept(const struct sample *a, const struct sample *b, const __u64 *ids, size_t n)
{
	const struct cg_sample *x, *y;
	size_t i, same = 0;

	for (i = 0; i < n; i++) {
		x = sample_find(a, ids[i]);
		y = sample_find(b, ids[i]);
		same += x && y && x->s.cpu_ns == y->s.cpu_ns &&
			x->s.wait_count == y->s.wait_count && x->s.wait_ns == y->s.wait_ns &&
			!memcmp(x->s.steal_ns, y->s.steal_ns, sizeof(x->s.steal_ns));
	}
	return same;
}

int main(void)
{
	struct collector_opts o = { .hier = &hier };
	struct sample s[5] = {};
	const struct cg_sample *before, *after;
	char name[16], uid[40], *rel;
	struct collector *col;
	__u64 ids[N], run0, run1, grew;
	pid_t pid[N];
	size_t i, k;

	require_bpf_env(&hier);
	if (!check(!collector_open(&o, &col), "collector open"))
		return test_summary("test_changed");
	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "c%zu", i);
		snprintf(uid, sizeof(uid), "eeeeeeee-0000-4000-8000-%012zu", i);
		rel = test_cgroup_make(&hier, test_pod_path(KC_BE, uid, name));
		ids[i] = rel ? cgroup_id(&hier, rel) : 0;
		pid[i] = rel ? spawn(&hier, rel, i % 2, WL_HOG, 0) : -1;
		free(rel);
	}
	sleep_ms(300);
	for (i = 0; i < N; i++)
		stop_hog(pid[i]);
	sleep_ms(50);
	for (k = 0; k < 4; k++) {
		collector_sample(col, &s[k]);
		sleep_ms(200);
	}
	for (k = 1; k < 4; k++) {
		printf("# sample %zu: %zu containers, %u read\n", k, s[k].n, s[k].read);
		check(kept(&s[k - 1], &s[k], ids, N) == N,
		      "sample %zu: the %d stopped containers keep their counters (%zu do)", k, N,
		      kept(&s[k - 1], &s[k], ids, N));
		if (k >= 2)
			check(s[k].read + N <= s[k].n,
			      "sample %zu: at least the %d stopped containers are not read (%u of %zu read)",
			      k, N, s[k].read, s[k].n);
	}

	/* One hog runs again: its container is read, and grew by what it ran. */
	run0 = task_runtime_ns(pid[0]);
	kill(pid[0], SIGCONT);
	sleep_ms(200);
	stop_hog(pid[0]);
	run1 = task_runtime_ns(pid[0]);
	collector_sample(col, &s[4]);
	before = sample_find(&s[3], ids[0]);
	after = sample_find(&s[4], ids[0]);
	grew = before && after ? after->s.cpu_ns - before->s.cpu_ns : 0;
	printf("# the hog ran %.1f ms (schedstat); its container's cpu_ns grew %.1f ms\n",
	       (run1 - run0) / 1e6, grew / 1e6);
	check(run1 - run0 >= 20000000, "the hog ran again (%.1f ms)", (run1 - run0) / 1e6);
	check(grew >= (run1 - run0) * 0.95 - 2e6 && grew <= (run1 - run0) * 1.05 + 2e6,
	      "its container was read again: cpu_ns grew by the hog's run (5%% + 2 ms)");
	check(kept(&s[3], &s[4], ids + 1, N - 1) == N - 1,
	      "the other %d keep their counters (%zu do)", N - 1, kept(&s[3], &s[4], ids + 1, N - 1));

	for (i = 0; i < N; i++)
		stop(pid[i]);
	for (k = 0; k < 5; k++)
		sample_free(&s[k]);
	collector_close(col);
	test_cgroup_cleanup();
	return test_summary("test_changed");
}
