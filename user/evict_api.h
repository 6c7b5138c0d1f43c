/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Eviction through the Kubernetes Eviction API (POST
 * /api/v1/namespaces/NS/pods/NAME/eviction): the API server honours the
 * pod's PodDisruptionBudgets (and admission webhooks), and the kubelet stops the
 * pod with its grace period. A call runs in a thread of its own, so the
 * periods go on while the API server answers.
 */
#ifndef KOORD_EVICT_API_H
#define KOORD_EVICT_API_H

#include <stddef.h>

#define EVICT_API_TIMEOUT_S	10

struct evict_api_opts {
	const char *server;	/* "https://HOST:PORT"; ${VAR} from the environment */
	const char *token_file;	/* the service account's token; "" none */
	const char *ca_file;	/* the cluster's CA; "" the system's */
};

struct evict_api_call;

/*
 * The Eviction object for the pod @ns/@name: policy/v1, with the pod's @uid
 * as a precondition (a pod made again under the name is not evicted).
 * -EINVAL when a name is not a Kubernetes name, -ENOSPC when @len is short.
 */
int evict_api_body(char *buf, size_t len, const char *ns, const char *name, const char *uid);
/*
 * What an answer's HTTP status means: 0 (200, 201: evicting), -EBUSY (429:
 * a PodDisruptionBudget does not allow it now), -ENOENT (404: gone),
 * -ESTALE (409: another pod holds the name), -EACCES (401, 403), -EIO.
 */
int evict_api_status(long status);
/* Start the call; 0, or -EINVAL (a bad name, an unset ${VAR}, with why in @err), -ENOMEM. */
int evict_api_start(const struct evict_api_opts *o, const char *ns, const char *name,
		    const char *uid, struct evict_api_call **out, char *err, size_t errlen);
/*
 * -EINPROGRESS while it runs; then its result (evict_api_status's, or the
 * transport's -EIO) with the API server's reason in @why, and *@c freed.
 */
int evict_api_poll(struct evict_api_call **c, char *why, size_t len);
/* End a call at once (the daemon stops): aborted, joined, freed. */
void evict_api_stop(struct evict_api_call **c);

#endif
