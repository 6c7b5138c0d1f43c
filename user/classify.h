/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Container identity and QoS class from a cgroup path (kubelet and YARN layouts). */
#ifndef KOORD_CLASSIFY_H
#define KOORD_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>
#include "../bpf/koord.h"

enum cg_kind {
	CG_OTHER = 0,	/* not part of a recognised layout */
	CG_QOS_ROOT,	/* kubepods, burstable or besteffort level */
	CG_POD,		/* a pod's cgroup */
	CG_CONTAINER,	/* a container inside a pod */
	CG_YARN,	/* a YARN NodeManager container (container_*) */
};

struct cg_identity {
	enum koord_class qos;
	enum cg_kind kind;
	char pod_uid[64];	/* with '-' separators, "" when unknown */
	char container_id[128];	/* runtime id or YARN container name, "" when unknown */
	/* the pod's, from the kubelet (kubelet_apply()); "" when unknown */
	char namespace[64];
	char pod_name[254];
	char container[64];	/* its name in the pod (a DNS label), from the kubelet; "" */
	unsigned char prio;	/* the pod's priority class (enum prio_class, pods.h), 0: unknown */
	int priority;		/* the pod's spec.priority, 0: unknown */
	double cpu_request, mem_request;	/* the pod's requests (cores, bytes), 0: unknown */
	unsigned int evict_denied;	/* bit r: its labels forbid eviction for enum evict_reason r */
	bool static_pod;		/* the kubelet's own static pod, or its mirror */
	bool listed;			/* its pod is in the kubelet's last good list */
	/* a YARN task's request, from NodeManager (yarn_nm.c); 0: unknown */
	unsigned int yarn_vcores;
	unsigned long long yarn_memory_mb;
};

/* One --class GLOB=QOS rule; the glob is matched with fnmatch(3) against the path. */
struct class_rule {
	char *glob;
	enum koord_class qos;
};

struct class_rules {
	struct class_rule *v;
	size_t n;
};

/* "LSE", "lsr", ... -> class; -1 when the name is unknown. */
int qos_from_name(const char *name);
/* Class -> "LSE", "LSR", "LS", "BE", "SYSTEM", "UNCLASSIFIED", "IDLE". */
const char *qos_name(enum koord_class c);

/*
 * Default identity of the cgroup at @path (relative to the hierarchy root,
 * starting with '/'): kubelet cgroupfs and systemd layouts, YARN containers.
 * The kubepods root is CG_QOS_ROOT/SYSTEM, burstable LS, besteffort BE;
 * guaranteed pods LSR. A directory off the layout inside the kubepods tree
 * is CG_OTHER with the class (and pod_uid) of where it sits; anything below
 * a container or YARN container is that container.
 */
void classify_path(const char *path, struct cg_identity *id);

/* Parse "GLOB=QOS" and append it; returns 0 or -EINVAL with a reason in @err. */
int class_rules_add(struct class_rules *rules, const char *spec, char *err, size_t errlen);
void class_rules_free(struct class_rules *rules);

/* Identity of @path with rules applied: the first matching rule overrides the class. */
void classify(const struct class_rules *rules, const char *path, struct cg_identity *id);

#endif
