/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reclaimable batch capacity (Koordinator's slo-controller batchresource,
 * "usage" policy): what the node can lend to batch work, from what it really
 * uses. Pure, unit-tested; batch_node.c measures the node and publishes it.
 */
#ifndef KOORD_BATCH_H
#define KOORD_BATCH_H

#include <stdbool.h>
#include <stddef.h>

/* One resource (CPU in cores or memory in bytes). */
struct batch_resource {
	/* in */
	double capacity;
	int reclaim_percent;	/* cpu/memoryReclaimThresholdPercent */
	double node_used;	/* everything on the node */
	double pods_used;	/* every pod and YARN container, batch included */
	double hp_used;		/* high-priority pods: priority class not batch or free */
	double reserved;	/* node reservation */
	/* out */
	double safety_margin;	/* capacity x (100 - reclaim%) / 100 */
	double system_used;	/* max(node used - pods used, 0, reserved) */
	double allocatable;	/* the batch capacity, >= 0 */
};

/*
 * Koordinator's usage policy: batch = max(0, capacity - safety margin -
 * max(system used, reserved) - high-priority used), system used = node used -
 * pods used (never negative: pods may be read after the node).
 */
void batch_usage(struct batch_resource *r);

/* The inputs that are averaged, as Koordinator's NodeMetric averages them. */
enum batch_value {
	BV_CPU_NODE, BV_CPU_PODS, BV_CPU_HP,
	BV_MEM_NODE, BV_MEM_PODS, BV_MEM_HP,
	BV_NR
};

/* Mean over the samples of the last @window_s seconds (a growing ring). */
struct batch_avg {
	struct batch_point {
		double t;
		double v[BV_NR];
	} *p;
	size_t head, n, cap;
	double window_s;
};

/* Adds a sample at @t (seconds, non-decreasing); drops those older than the window. -ENOMEM */
int batch_avg_push(struct batch_avg *a, double t, const double v[BV_NR]);
/* The mean of the samples kept into @out; returns how many there are (0: @out zeroed). */
size_t batch_avg_mean(const struct batch_avg *a, double out[BV_NR]);
/* The time the kept samples span (0 with fewer than two). */
double batch_avg_span(const struct batch_avg *a);
void batch_avg_free(struct batch_avg *a);

/*
 * A memory cgroup's usage without page cache, as Koordinator counts it:
 * inactive_anon + active_anon + unevictable from memory.stat (the v1
 * "total_" keys, which include descendants, when @v1). -EINVAL when a key is
 * missing or malformed.
 */
int memory_stat_usage(const char *text, bool v1, unsigned long long *bytes);

#endif
