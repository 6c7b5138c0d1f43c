/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * BE CPU suppression (Koordinator's cpusuppress): how much CPU BE may use,
 * and how that becomes a CFS quota on the BE root or a smaller BE cpuset.
 * Pure functions, unit-tested; enforce.c applies them through the writer.
 */
#ifndef KOORD_SUPPRESS_H
#define KOORD_SUPPRESS_H

#include <sched.h>
#include <stdbool.h>
#include "config.h"

#define CFS_PERIOD_US		100000
#define BE_MIN_QUOTA_US		2000	/* Koordinator's beMinQuota */
#define BE_MIN_CPUSET_CPUS	2	/* Koordinator's beMinCPUSetCores */

/* One period's usage, in cores (CPU seconds per second). */
struct suppress_input {
	double capacity_cores;	/* online CPUs */
	double node_used;	/* every task on the node */
	double pods_used;	/* every container (kubepods and YARN trees, BE included) */
	double non_be_used;	/* containers of class LSE, LSR, LS (and unclassified pods) */
	double reserved_cores;	/* node reservation */
};

/*
 * BE allowed = capacity x threshold% - non-BE used - max(system used, reserved),
 * system used = max(node used - pods used, 0); then at least capacity x min%
 * when cpuSuppressMinPercent is set, and never below 0.
 */
double suppress_be_allowed(const struct be_thresholds *t, const struct suppress_input *in);

/*
 * The next BE root quota (us per CFS_PERIOD_US) from the current one
 * (-1: unlimited) as Koordinator's adjustByCfsQuota: at least
 * BE_MIN_QUOTA_US; decreases at once; increases capped at 10% of capacity
 * per round once a quota is set; a change smaller than 1% of capacity is
 * skipped (returns @cur_quota_us) unless the new value is the minimum.
 */
long suppress_next_quota(long cur_quota_us, double allowed_cores, double capacity_cores);

/*
 * The next BE cpuset size from the current one: ceil(allowed), at least
 * BE_MIN_CPUSET_CPUS (and at most @ncpus); shrinks at once, grows by at
 * most ceil(10% of @ncpus) per round.
 */
int suppress_next_cpuset_size(int cur, double allowed_cores, int ncpus);

/* Mean of the last N values pushed (N = window, 1..SMOOTHER_MAX): the suppress input. */
#define SMOOTHER_MAX 64
struct smoother {
	double v[SMOOTHER_MAX];
	int n, next, window;
};
void smoother_init(struct smoother *s, int window);
double smoother_push(struct smoother *s, double x);
void smoother_reset(struct smoother *s);

/* CPU topology from sysfs (/sys/devices/system/cpu), for whole-core choices. */
struct cpu_topo {
	int ncpus;			/* highest possible CPU + 1, <= CPU_SETSIZE */
	cpu_set_t online;
	int core[CPU_SETSIZE];		/* core id (unique across packages), -1 offline */
	int pkg[CPU_SETSIZE];		/* physical package id (0 when unknown), -1 offline */
	int node[CPU_SETSIZE];		/* NUMA node, 0 without NUMA, -1 offline */
};
/*
 * Read @sysfs_cpu (normally /sys/devices/system/cpu); tests pass a fake tree.
 * Needs "online"; "possible" and per-CPU topology are optional (a CPU
 * without core_id is a core of its own). Returns 0 or a negative errno.
 */
int cpu_topo_read(struct cpu_topo *t, const char *sysfs_cpu);

/*
 * Choose @n CPUs out of @cand: buckets by (node, package) taken round-robin,
 * whole cores (all their siblings in @cand) first, then single CPUs, lowest
 * ids first within a bucket (Koordinator's calculateBESuppressCPUSetPolicy).
 * Fewer than @n when @cand is smaller. Returns the number chosen.
 */
int cpuset_choose(const struct cpu_topo *t, const cpu_set_t *cand, int n, cpu_set_t *out);
/*
 * @pool without the CPUs of @off, unless none would be left (BE keeps a
 * CPU): then @pool is left as it is. Returns whether it removed any.
 */
bool cpuset_exclude(cpu_set_t *pool, const cpu_set_t *off);
/*
 * "0-3,8,10-11" <-> set ("" is the empty set; surrounding whitespace is
 * fine). Parse returns -EINVAL, and an empty @out, on malformed text, a
 * reversed range or a CPU >= CPU_SETSIZE. Format returns the length written
 * (without the NUL), or -ENOSPC (and "" in @buf when @len > 0) when it does
 * not fit.
 */
int cpuset_parse(const char *s, cpu_set_t *out);
int cpuset_format(const cpu_set_t *set, char *buf, size_t len);
/*
 * Room for any cpuset's text, with its newline and NUL: every CPU of
 * CPU_SETSIZE as its own number or range takes under 8 bytes ("1021-1022,").
 * A fixed 1 KiB once cut a large machine's list, and the BE pool fell back
 * to every online CPU.
 */
#define CPUSET_TEXT_MAX	(8 * CPU_SETSIZE)

#endif
