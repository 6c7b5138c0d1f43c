/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Pod metadata from the kubelet: GET /pods (HTTPS with the service
 * account's bearer token and CA, or the read-only port), polled in a thread
 * of its own (poller.c) so a slow kubelet never delays a period. Only the
 * daemon links it (-lcurl).
 */
#ifndef KOORD_KUBELET_H
#define KOORD_KUBELET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "cgroup.h"
#include "poller.h"
#include "pods.h"

struct kubelet;

/* Starts polling @o->url (the first poll at once). Returns 0, -EINVAL (bad URL), -ENOMEM. */
int kubelet_start(const struct http_opts *o, struct kubelet **out);
void kubelet_stop(struct kubelet *k);	/* NULL is fine */

/*
 * The last good PodList's generation: it changes when a poll brings a new
 * list. kubelet_apply() gives the containers of @t their pod's namespace and
 * name, priority class, spec.priority and eviction opt-outs, overrides their
 * classes from the pods' labels (koordinator.sh/qosClass; an unknown value
 * makes the pod's containers unclassified, logged once per pod) and returns
 * how many classes it changed.
 */
unsigned long kubelet_generation(struct kubelet *k);
size_t kubelet_apply(struct kubelet *k, struct container_table *t);

/*
 * The requests of the high-priority pods the kubelet lists but @t has no
 * cgroup for (not started yet, or created since the walk), which
 * Koordinator's batch formula counts at request; finished pods hold nothing.
 */
void kubelet_unseen_requests(struct kubelet *k, const struct container_table *t, double *cpu,
			     double *mem);

/* Waits up to @timeout_s for the first poll to end; whether it brought a PodList. */
bool kubelet_wait_first(struct kubelet *k, double timeout_s);
/* Up (the last poll succeeded) or not, with the reason; thread-safe. */
bool kubelet_status(struct kubelet *k, char *why, size_t len);
/* Seconds since the last good PodList, < 0 when none came yet. */
double kubelet_age(struct kubelet *k);
/* koord_bpf_kubelet_* lines (docs/metrics.md). */
void kubelet_metrics(struct kubelet *k, FILE *f);

#endif
