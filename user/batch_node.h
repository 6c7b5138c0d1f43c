/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The node's batch capacity each period: CPU from the window the collector
 * measured, memory from /proc/meminfo and the pods' memory cgroups, averaged
 * and put through batch_usage(); published in /metrics and /api/batch.
 */
#ifndef KOORD_BATCH_NODE_H
#define KOORD_BATCH_NODE_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>
#include "batch.h"
#include "cgroup.h"
#include "config.h"
#include "window.h"

/* Where the node is read; tests point these at fake files. */
struct batch_host {
	const char *meminfo;		/* /proc/meminfo */
	const char *memory_root;	/* mount of the memory controller, "" or NULL: none */
	int memory_version;		/* 1 or 2 */
	double cpus;			/* online CPUs */
	/* high-priority pods without cgroups yet, at request (kubelet_unseen_requests()) */
	double unseen_cpu, unseen_mem;
};

struct batch_node {
	struct batch_avg avg;
	struct batch_resource cpu, mem;
	bool mem_ok;			/* /proc/meminfo read in the last period */
	size_t samples;			/* in the mean, 0: nothing computed yet */
	double span_s;
	/* the last reads: QoS levels, and cgroups read one by one (pods a level does not give) */
	unsigned long long mem_levels, mem_cgroups, mem_cgroups_failed;
	/* the pods' memory, read every BATCH_MEM_REFRESH_S (or when the table changes) */
	double mem_read_at;		/* 0: never */
	unsigned long long mem_read_gen;	/* the table's gen then */
	double mem_pods, mem_hp;
	/* the cores of high-priority pods counted at request, by the table of this gen */
	double hp_request;
	unsigned long long hp_request_gen;
};

/*
 * The pods' memory comes from their QoS levels (a read each), but where the
 * levels are missing every pod is read: ~20 us each, 75-125 ms at 5,000.
 * The averages span minutes (metricAggregateDurationSeconds, 300 by
 * default), so it is read every 10 s and the last sums used in between.
 */
#define BATCH_MEM_REFRESH_S	10.0

/*
 * One period: the window @w (its containers classified by @t) and the
 * memory of every pod in @t at @now_s (read every BATCH_MEM_REFRESH_S), then the averages and the batch
 * capacity with @c's koordBPF.batch and reservation. As Koordinator, LSE
 * pods count CPU at request when the kubelet gave it (they never lend CPU),
 * and so do high-priority pods without cgroups (@host's unseen_*).
 * Returns 0 or -ENOMEM.
 */
int batch_node_period(struct batch_node *b, const struct koord_config *c, const struct window *w,
		      const struct container_table *t, const struct batch_host *host, double now_s);
/* Prometheus lines (docs/metrics.md); nothing before the first period. */
void batch_node_metrics(const struct batch_node *b, FILE *f);
/* The /api/batch document. */
json_object *batch_node_json(const struct batch_node *b, const struct koord_config *c);
void batch_node_free(struct batch_node *b);

#endif
