/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Pods as the kubelet lists them (GET /pods: a PodList), and Koordinator's
 * rules on their labels: QoS class, priority class, eviction opt-outs.
 * Pure, unit-tested; kubelet.c fetches the list.
 */
#ifndef KOORD_PODS_H
#define KOORD_PODS_H

#include <stdbool.h>
#include <stddef.h>
#include "cgroup.h"

enum prio_class { PRIO_NONE, PRIO_PROD, PRIO_MID, PRIO_BATCH, PRIO_FREE };

/* A container of a pod's status: its runtime id (without "containerd://") and its name. */
struct pod_container {
	char *id, *name;
};

struct pod_meta {
	char uid[64];			/* first: the list is sorted by it (byname.h) */
	char *namespace, *name;
	/* koordinator.sh/qosClass: the class, KC_UNCLASSIFIED for an unknown value, -1 when absent */
	int qos_label;
	char *qos_label_raw;		/* the label's value, for the error message */
	int k8s_qos;			/* status.qosClass mapped: LSR, LS, BE; -1 when absent */
	enum prio_class prio;		/* koordinator.sh/priority-class, else spec.priority ranges */
	bool has_priority;
	int priority;			/* spec.priority */
	bool eviction_enabled;		/* label koordinator.sh/eviction-enabled != "false" */
	int eviction_priority;		/* annotation koordinator.sh/eviction-priority; 0 */
	char *eviction_policy;		/* annotation koordinator.sh/eviction-policy (JSON list), NULL */
	unsigned int evict_features;	/* pod_evict_features(), parsed once with the list */
	/* requests as Kubernetes sums them: max(containers, each init container) + overhead */
	double cpu_request;		/* cores */
	double mem_request;		/* bytes */
	bool done;			/* status.phase Succeeded or Failed: holds nothing */
	/* a static pod (kubernetes.io/config.source not "api") or its mirror (config.mirror) */
	bool static_pod;
	/* status.containerStatuses, initContainerStatuses, ephemeralContainerStatuses with an id */
	struct pod_container *containers;
	size_t ncontainers;
};

/* Sorted by uid. */
struct pod_list {
	struct pod_meta *v;
	size_t n;
};

/*
 * Parse a PodList of @len bytes. Pods without metadata.uid are skipped;
 * strings beyond their field sizes are cut. Returns 0, -EINVAL (not JSON,
 * not a PodList, with the reason in @err), or -ENOMEM.
 */
int pods_parse(const char *text, size_t len, struct pod_list *out, char *err, size_t errlen);
const struct pod_meta *pods_find(const struct pod_list *l, const char *uid);
/* The name of @p's container whose runtime id is @id (a cgroup's), or NULL. */
const char *pod_container_name(const struct pod_meta *p, const char *id);
void pods_free(struct pod_list *l);

/* spec.priority -> koord-prod 9000-9999, mid 7000-7999, batch 5000-5999, free 3000-3999. */
enum prio_class prio_from_value(int priority);
/* "koord-prod" ... "koord-free" -> class; PRIO_NONE for anything else. */
enum prio_class prio_from_name(const char *name);
const char *prio_name(enum prio_class p);	/* "koord-prod" ... , "" for none */

/*
 * Koordinator's GetPodQoSClass: the koordinator.sh/qosClass label wins (an
 * unknown value is KC_UNCLASSIFIED, never a fallback), else status.qosClass
 * (Guaranteed LSR, Burstable LS, BestEffort BE); @fallback when neither.
 */
enum koord_class pod_qos(const struct pod_meta *p, enum koord_class fallback);
/*
 * Whether the pod may be evicted by the koordlet feature @feature
 * ("BECPUEvict", "BEMemoryEvict"): not when the label
 * koordinator.sh/eviction-enabled is "false"; else by the annotation
 * koordinator.sh/eviction-policy, a JSON list of the features allowed
 * (absent: all; unparsable: none).
 */
bool pod_evict_allowed(const struct pod_meta *p, const char *feature);
/* The koordlet features the pod may be evicted by, as POD_EVICT_* bits: one parse of the annotation. */
#define POD_EVICT_BE_CPU	(1u << 0)	/* "BECPUEvict" */
#define POD_EVICT_BE_MEMORY	(1u << 1)	/* "BEMemoryEvict" */
unsigned int pod_evict_features(const struct pod_meta *p);
/* High priority for batch capacity: a priority class other than koord-batch and koord-free. */
bool prio_is_hp(enum prio_class p);
/* The priority class, or from the QoS when none is set: BE batch, every other prod. */
enum prio_class pod_prio(const struct pod_meta *p, enum koord_class qos);

#endif
