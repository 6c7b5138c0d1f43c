/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Pod metadata from the kubelet: GET /pods (HTTPS with the service
 * account's bearer token and CA, or the read-only port) with libcurl, polled
 * in a thread of its own so a slow kubelet never delays a period. Only the
 * daemon links it (-lcurl).
 */
#ifndef KOORD_KUBELET_H
#define KOORD_KUBELET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "cgroup.h"
#include "pods.h"

#define KUBELET_BODY_MAX	(64u << 20)	/* a PodList larger than this is refused */

struct kubelet_opts {
	const char *url;	/* "https://${HOST_IP}:10250/pods": ${VAR} from the environment */
	const char *token_file;	/* read at every poll (tokens rotate); NULL or "": none */
	const char *ca_file;	/* NULL or "": the system's */
	bool insecure;		/* skip certificate verification */
	double interval_s;
	double timeout_s;	/* per request */
};

/* The URL with ${VAR} replaced from the environment; -EINVAL names an unset one in @err. */
int kubelet_expand_url(const char *url, char *out, size_t len, char *err, size_t errlen);

/*
 * One GET of @url; the body (NUL-terminated) in *@body. Returns 0, -EIO
 * (transport, TLS, HTTP status other than 200: the reason in @err), -EFBIG
 * (over KUBELET_BODY_MAX), or -ENOMEM.
 */
int kubelet_fetch(const struct kubelet_opts *o, const char *url, char **body, size_t *len,
		  char *err, size_t errlen);

struct kubelet;

/* Starts polling (the first poll at once). Returns 0, -EINVAL (bad URL), -ENOMEM. */
int kubelet_start(const struct kubelet_opts *o, struct kubelet **out);
void kubelet_stop(struct kubelet *k);

/*
 * The last good PodList's generation: it changes when a poll brings a new
 * list. kubelet_apply() gives the containers of @t their pod's namespace and
 * name, overrides their classes from the pods' labels (koordinator.sh/qosClass;
 * an unknown value makes the pod's containers unclassified, logged once per
 * pod) and returns how many classes it changed.
 */
unsigned long kubelet_generation(struct kubelet *k);
size_t kubelet_apply(struct kubelet *k, struct container_table *t);

/* Up (the last poll succeeded) or not, with the reason; thread-safe. */
bool kubelet_status(struct kubelet *k, char *why, size_t len);
/* koord_bpf_kubelet_* lines (docs/metrics.md). */
void kubelet_metrics(struct kubelet *k, FILE *f);

#endif
