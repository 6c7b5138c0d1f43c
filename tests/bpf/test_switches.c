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
 *
 * And the switch program stays cheap to verify in both attach modes: 6.1's
 * verifier explores more than this kernel's and refuses a program at 1M
 * instructions (docs/vm-test.md), so a change that multiplies the states
 * here is caught on the host, not first in a VM.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include "collector.h"
#include "log.h"
#include "testlib.h"

#define EXECS	300
/* Explored instructions of the switch program on this kernel: 34-37k measured (docs/design.md). */
#define SWITCH_VERIFIED_MAX	60000

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

/* The largest verified_insns among programs named @name loaded after id @after. */
static __u32 verified_insns(const char *name, __u32 after)
{
	struct bpf_prog_info info;
	__u32 id = after, len, most = 0;
	int fd;

	while (!bpf_prog_get_next_id(id, &id)) {
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, name) &&
		    info.verified_insns > most)
			most = info.verified_insns;
		close(fd);
	}
	return most;
}

static __u32 last_prog_id(void)
{
	__u32 id = 0, last = 0;

	while (!bpf_prog_get_next_id(id, &id))
		last = id;
	return last;
}

static void judge_cost(const char *prog, __u32 before)
{
	__u32 n = verified_insns(prog, before);

	/* The budget is this kernel's; elsewhere loading is the test (and the count is shown). */
	if (!n || test_emulated())
		printf("# %s: %u instructions explored by the verifier (%s)\n", prog, n,
		       n ? "not judged under emulation" : "not reported before 5.16");
	else
		check(n <= SWITCH_VERIFIED_MAX,
		      "%s: %u instructions explored by the verifier (at most %d)", prog, n,
		      SWITCH_VERIFIED_MAX);
}

/* Both programs on sched_switch: the switch program and the stale-wait one. */
static void verifier_cost(enum attach_mode attach, enum store_mode store, const char *prog,
			  const char *stale_prog)
{
	struct collector_opts o = { .hier = &hier, .attach = attach, .store = store };
	__u32 before = last_prog_id();
	struct collector *col;

	if (!check(!collector_open(&o, &col), "collector loads as %s", prog))
		return;
	judge_cost(prog, before);
	judge_cost(stale_prog, before);
	collector_close(col);
}

int main(void)
{
	log_prog = "test_switches";
	require_bpf_env(&hier);
	exec_by_a_thread();
	verifier_cost(ATTACH_TP_BTF, STORE_AUTO, "tp_switch", "tp_stale_wait");
	verifier_cost(ATTACH_RAW_TP, STORE_HASH, "raw_switch", "raw_stale_wait");
	test_cgroup_cleanup();
	return test_summary("test_switches");
}
