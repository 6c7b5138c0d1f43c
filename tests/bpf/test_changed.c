// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A sample reads only what changed: a container whose counters BPF did not
 * touch since the last sample, and that does not run, is taken from that
 * sample instead of read from every CPU's entry. Containers whose hogs ran
 * and were stopped keep their numbers in the next samples without being
 * read (from the second sample after their last change on: a change is read
 * once more in the sample after the one that saw it, in case its BPF
 * program was still writing); a hog let run again is read again, its
 * container's CPU time grown by what it ran (schedstat). A window between
 * two such samples lists only what changed; a sample that says it holds the
 * last one's containers does, and one after a new container does not.
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

/* How many of @ids the window from @a to @b lists. */
static size_t listed(const struct sample *a, const struct sample *b, const __u64 *ids, size_t n)
{
	struct window w;
	size_t i, in = 0;

	if (window_compute(a, b, &w))
		return n + 1;
	for (i = 0; i < n; i++)
		in += window_find(&w, ids[i]) != NULL;
	window_free(&w);
	return in;
}

/* Does @b hold exactly @a's containers? */
static bool same_containers(const struct sample *a, const struct sample *b)
{
	size_t i;

	for (i = 0; a->n == b->n && i < a->n; i++)
		if (a->v[i].cgid != b->v[i].cgid)
			return false;
	return a->n == b->n;
}

int main(void)
{
	struct collector_opts o = { .hier = &hier };
	struct sample s[6] = {};
	const struct cg_sample *before, *after;
	char name[16], uid[40], *rel;
	struct collector *col;
	__u64 ids[N], run0, run1, grew;
	pid_t pid[N], extra = -1;
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
		if (k < 2)
			continue;
		check(s[k].read + N <= s[k].n,
		      "sample %zu: at least the %d stopped containers are not read (%u of %zu read)",
		      k, N, s[k].read, s[k].n);
		check(listed(&s[k - 1], &s[k], ids, N) == 0,
		      "sample %zu: the window lists none of them (%zu)", k,
		      listed(&s[k - 1], &s[k], ids, N));
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
	check(listed(&s[3], &s[4], ids, 1) == 1 && listed(&s[3], &s[4], ids + 1, N - 1) == 0,
	      "the window lists it and none of the others");

	/* A new container: the next sample does not hold the last one's containers. */
	rel = test_cgroup_make(&hier, test_pod_path(KC_BE, "eeeeeeee-0000-4000-8000-999999999999",
						    "new"));
	extra = rel ? spawn(&hier, rel, 0, WL_HOG, 0) : -1;
	free(rel);
	sleep_ms(50);
	collector_sample(col, &s[5]);
	check(extra > 0 && !s[5].same_set && !same_containers(&s[4], &s[5]),
	      "after a new container: not the same set");
	/* whenever a sample says it holds the last one's containers, it does */
	for (k = 1; k < 6; k++) {
		printf("# sample %zu: same set %d\n", k, s[k].same_set);
		if (s[k].same_set)
			check(same_containers(&s[k - 1], &s[k]), "sample %zu: the same set, as it says",
			      k);
	}

	for (i = 0; i < N; i++)
		stop(pid[i]);
	stop(extra);
	for (k = 0; k < 6; k++)
		sample_free(&s[k]);
	collector_close(col);
	test_cgroup_cleanup();
	return test_summary("test_changed");
}
