/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers for the BPF tests on real cgroups: result reporting, cgroups made
 * and removed under the cpu hierarchy, pinned workloads, and an independent
 * reading of the same scheduler events through a tracefs instance.
 */
#ifndef KOORD_TESTLIB_H
#define KOORD_TESTLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include "cgroup.h"
#include "../bpf/koord.h"

/* Record one assertion; prints "ok"/"not ok" with the message. */
bool check(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print "N passed, M failed" and return the exit code. */
int test_summary(const char *name);
/* Exit loudly (code 77) when root, BTF or the cpu hierarchy are truly missing. */
void require_bpf_env(struct cpu_hierarchy *h);
/*
 * A part of a test this machine lacks the means for (a backend, a
 * hierarchy): "SKIP: ..." on the output, and under CI=true, which runs on a
 * machine that has them all, a failed check instead.
 */
void skip_part(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The test's own cgroup tree: <root>/koord-test-<pid>/..., removed at exit. */
const char *test_cgroup_base(const struct cpu_hierarchy *h);
/* mkdir -p of @rel below the test base; returns the path relative to the hierarchy root. */
char *test_cgroup_make(const struct cpu_hierarchy *h, const char *rel);
/* Write a value to a cgroup file (@rel below the hierarchy root). */
int cgroup_write(const struct cpu_hierarchy *h, const char *rel, const char *file, const char *val);
int cgroup_read(const struct cpu_hierarchy *h, const char *rel, const char *file, char *buf, size_t len);
/* Inode (= BPF cgroup id) of @rel. */
__u64 cgroup_id(const struct cpu_hierarchy *h, const char *rel);
/*
 * Container @name of a pod (@uid, a UUID) of class @qos (KC_LS: burstable,
 * KC_BE: besteffort, else guaranteed), relative to the test base, in the
 * kubelet layout KOORD_TEST_LAYOUT names: "cgroupfs" (default) or "systemd"
 * (the VM self-test). A static buffer, one of 8 in turn.
 */
const char *test_pod_path(enum koord_class qos, const char *uid, const char *name);
/* Under an emulated CPU (KOORD_TEST_EMULATED=1: qemu TCG in the VM self-test)? */
bool test_emulated(void);
/* Remove the test tree (kills what still runs there first). */
void test_cgroup_cleanup(void);

enum workload { WL_HOG, WL_PROBE, WL_SERVER, WL_FAULTER };
/*
 * Fork a process pinned to @cpu (-1: not pinned) inside cgroup @rel: a CPU hog, or a probe
 * that sleeps @period_us and wakes in a loop, a "server" that also works
 * 300 us after each wake-up (so it queues behind a hog), or one that maps, touches and
 * unmaps 1 MiB in a loop (page faults). Killed at exit.
 */
pid_t spawn(const struct cpu_hierarchy *h, const char *rel, int cpu, enum workload wl,
	    unsigned int period_us);
void stop(pid_t pid);
/* On-CPU time of a task from /proc/PID/schedstat. */
__u64 task_runtime_ns(pid_t pid);
/*
 * Time CPU @cpu spent in interrupts and stolen by the hypervisor since boot
 * (/proc/stat, 10 ms ticks): a task's own clock (schedstat) leaves it out,
 * a wall clock on the CPU (the cpu-clock software event) does not.
 */
__u64 cpu_unclocked_ns(int cpu);
__u64 now_mono_ns(void);
void sleep_ms(unsigned int ms);
/* rm -r of @path (a file or a dir tree; symlinks not followed). */
void remove_tree(const char *path);

struct collector;
struct window;
/* The collector's window over @ms (in @w, freed first), reading its records meanwhile. */
void watch_window(struct collector *col, unsigned int ms, struct window *w);

/* Waits of one task read with ftrace (CLOCK_MONOTONIC timestamps, in ns). */
struct ftrace_waits {
	__u64 *end_ns;		/* when the wait ended (switch-in) */
	__u64 *len_ns;
	__u64 *other_ns;	/* how long the other task ran during it (ftrace_start_pair) */
	__u64 *other_unsure_ns;	/* and may have run: one of its switches had no event */
	/*
	 * With ftrace_watch_cpu(): the task that held that CPU longest during
	 * the wait ("comm/pid"), and for how long in all (idle is no holder).
	 */
	char (*holder)[32];
	__u64 *holder_ns;
	size_t n;
	size_t lost;		/* switches of the task missing from the record (seen in twice, out twice) */
	__u64 lost_other_ns;	/* the other task's time in waits whose end was missing */
	size_t overrun;		/* events the full trace buffer overwrote */
};
int ftrace_start(pid_t pid);
/* The same, also recording when @other runs, to tell how much of each wait was its doing. */
int ftrace_start_pair(pid_t pid, pid_t other);
/*
 * Before a start: record every switch on @cpu as well (-1: none), to name
 * who held it during each wait of a task pinned there.
 */
void ftrace_watch_cpu(int cpu);
/* Stop and collect the waits of @pid (in the order they ended). */
int ftrace_stop(pid_t pid, struct ftrace_waits *w);
/* How many of @w's waits ended in [from_ns, to_ns]. */
size_t ftrace_count(const struct ftrace_waits *w, __u64 from_ns, __u64 to_ns);
void ftrace_waits_free(struct ftrace_waits *w);

/* Sort and take the q-quantile of @n values (nearest rank). */
__u64 quantile(__u64 *v, size_t n, double q);

#endif
