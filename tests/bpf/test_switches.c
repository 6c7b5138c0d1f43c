// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The collector knows which task a CPU runs by the task, not its pid: a
 * thread that is not its process's leader and calls execve takes the
 * leader's pid while it runs, so a pid comparison at its next switch-out
 * took it for a switch the collector had missed (one per exec). Here a few
 * hundred processes exec from a second thread, and the switches reported
 * missed are compared with those of a quiet window as long: this kernel
 * does not emit sched_switch for a few switches a second (ftrace's
 * sched_switch events show the same gaps; docs/testing.md).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "collector.h"
#include "log.h"
#include "testlib.h"

#define EXECS	300

static struct cpu_hierarchy hier;

static void *exec_true(void *arg)
{
	execl("/bin/true", "true", (char *)NULL);
	_exit(127);
}

/* A process whose second thread execs /bin/true; 0 when it ran to the end. */
static int exec_from_thread(void)
{
	pthread_t th;
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (!pid) {
		if (pthread_create(&th, NULL, exec_true, NULL))
			_exit(126);
		pthread_join(th, NULL);	/* the exec ends this thread too */
		_exit(125);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Switches reported missed while @fn runs; how long it took in @ns. */
static __u64 missed_during(struct collector *col, void (*fn)(void *), void *arg, __u64 *ns)
{
	struct sample a = {}, b = {};
	struct window w = {};
	__u64 n;

	collector_sample(col, &a);
	fn(arg);
	collector_sample(col, &b);
	window_compute(&a, &b, &w);
	n = w.counters[CNT_SWITCH_MISSED];
	*ns = w.dur_ns;
	window_free(&w);
	sample_free(&a);
	sample_free(&b);
	return n;
}

static void execs(void *failed)
{
	int i;

	for (i = 0; i < EXECS; i++)
		*(int *)failed += exec_from_thread() != 0;
}

static void quiet(void *ns)
{
	sleep_ms(*(__u64 *)ns / 1000000);
}

static void exec_by_a_thread(void)
{
	struct collector_opts o = { .hier = &hier };
	__u64 missed, quiet_missed, ns, quiet_ns;
	struct collector *col;
	int failed = 0;

	if (!check(!collector_open(&o, &col), "collector loads and attaches"))
		return;
	missed = missed_during(col, execs, &failed, &ns);
	quiet_missed = missed_during(col, quiet, &ns, &quiet_ns);
	check(!failed, "%d processes exec'ed /bin/true from a second thread (%d failed)",
	      EXECS, failed);
	printf("# switches reported missed: %llu in %.2f s of execs, %llu in %.2f s quiet\n",
	       (unsigned long long)missed, ns / 1e9, (unsigned long long)quiet_missed,
	       quiet_ns / 1e9);
	check(missed <= quiet_missed + EXECS / 10,
	      "an exec by a non-leader thread is not taken for a missed switch "
	      "(%llu with %d execs, %llu quiet)", (unsigned long long)missed, EXECS,
	      (unsigned long long)quiet_missed);
	collector_close(col);
}

int main(void)
{
	log_prog = "test_switches";
	require_bpf_env(&hier);
	exec_by_a_thread();
	test_cgroup_cleanup();
	return test_summary("test_switches");
}
