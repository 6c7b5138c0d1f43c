/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * When to evict and whom (Koordinator's BECPUEvict and BEMemoryEvict, and
 * koord-bpf's culprit-at-floor), and how often. Pure, unit-tested.
 */
#ifndef KOORD_EVICT_POLICY_H
#define KOORD_EVICT_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include "config.h"

enum evict_reason { EVICT_BE_CPU, EVICT_MEMORY, EVICT_CULPRIT, EVICT_REASON_NR };
const char *evict_reason_name(enum evict_reason r);	/* "be_cpu_satisfaction", "memory", "culprit" */

/* Why a pod may not be evicted. */
enum evict_refusal {
	EVICT_ALLOWED,
	EVICT_NO_METADATA,	/* no fresh kubelet list, or the pod is not in it */
	EVICT_CRITICAL,		/* spec.priority >= 2e9: system-cluster-critical, system-node-critical */
	EVICT_STATIC,		/* a static pod or its mirror: the kubelet would only run it again */
	EVICT_KUBE_SYSTEM,	/* in kube-system */
	EVICT_REFUSAL_NR
};

struct evict_candidate {
	const char *path;		/* cgroup path, relative to the hierarchy */
	enum evict_refusal refused;	/* EVICT_ALLOWED: it may be evicted */
	int priority;			/* spec.priority; 0 when unknown */
	double cpu_used;		/* cores */
	double cpu_request;		/* cores; 0 when unknown */
	unsigned long long mem_used;	/* bytes */
};
/* Memory: priority ascending, then memory used descending (then path). */
void evict_order_memory(struct evict_candidate *v, size_t n);
/* BE CPU: priority ascending, then used/request descending (then path). */
void evict_order_cpu(struct evict_candidate *v, size_t n);

/* BE CPU at one moment (cores). */
struct be_cpu_sample {
	double usage;	/* BE used */
	double limit;	/* real limit: min(cpuset size, quota) */
	double request;	/* BE requests */
};
/*
 * Koordinator's BECPUEvict: over the window's samples (average valid only if
 * they cover a third of the window) and the last sample: trigger when
 * usage/limit >= cpuEvictBEUsageThresholdPercent and limit/request <= lower%;
 * release = request x (upper% - satisfaction), the smaller of the two.
 * Returns the cores to release, 0 when nothing (or when lower/upper unset).
 */
double be_cpu_release(const struct be_thresholds *t, const struct be_cpu_sample *v, size_t n,
		      double sample_s, double window_s);
/*
 * Memory: used% = (total - available) / total; trigger at >= threshold%,
 * release = total x (used% - lower%), lower = memoryEvictLowerPercent or
 * threshold - 2. Returns bytes to release, 0 when nothing.
 */
unsigned long long memory_release(const struct be_thresholds *t, unsigned long long total,
				  unsigned long long available);
/* /proc/meminfo text -> MemTotal and MemAvailable in bytes; -EINVAL when either is missing. */
int meminfo_parse(const char *text, unsigned long long *total, unsigned long long *available);

/* "allowed", "no_metadata", "critical_priority", "static_pod", "kube_system" */
const char *evict_refusal_name(enum evict_refusal r);
/*
 * Whether the pod of @id may be evicted: only with fresh kubelet metadata
 * (@fresh: the last good list is recent; @id->listed: the pod is in it), and,
 * unless @system_pods, never a pod the cluster needs: priority >= 2e9, a
 * static or mirror pod, kube-system (kube-proxy is BestEffort on kubeadm).
 */
enum evict_refusal evict_pod_refusal(const struct cg_identity *id, bool fresh, bool system_pods);

/* At most max_per_minute evictions in any 60 s, and cool_down_s after each. */
#define EVICT_RATE_MAX 600
struct evict_rate {
	double at[EVICT_RATE_MAX];	/* times of the last evictions, a ring */
	size_t n, next;
};
bool evict_rate_allows(const struct evict_rate *r, const struct koord_config *c, double now_s);
void evict_rate_note(struct evict_rate *r, double now_s);
/*
 * The limiter outlives the daemon: its times (on the monotonic clock of
 * @now_s) saved as wall-clock seconds, one a line, to @dirfd/@name through
 * a temporary file, fsync'ed and renamed; 0 or -errno.
 */
int evict_rate_save(const struct evict_rate *r, double now_s, int dirfd, const char *name);
/*
 * ... and loaded back into @r (emptied first). No file: an empty limiter,
 * 0. A line that is not a time: -EINVAL, and @r stays empty.
 */
int evict_rate_load(struct evict_rate *r, double now_s, int dirfd, const char *name);

#endif
