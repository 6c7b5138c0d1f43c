// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kubelet as a pod source: its PodList polled (poller.c), and
 * Koordinator's label rules applied to the containers the walk found.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "byname.h"
#include "evict_policy.h"
#include "kubelet.h"
#include "log.h"

/* What a pod was warned about, once each. */
enum pod_warning { WARN_UNKNOWN_QOS = 1, WARN_ONLINE_UNDER_BE = 2 };

struct kubelet {
	struct poller *p;
	/* pods warned about (only the daemon's thread touches it) */
	struct warned {
		char uid[64];
		unsigned int said;	/* enum pod_warning bits */
	} *warned;
	size_t nwarned;
	size_t online_under_be;	/* cgroups (pod's, containers') whose online label the last apply ignored */
};

static int parse(const char *text, size_t len, void *out, char *err, size_t errlen)
{
	return pods_parse(text, len, out, err, errlen);
}

static void free_list(void *v)
{
	pods_free(v);
}

static const struct poll_kind kubelet_kind = {
	.name = "kubelet", .items = "pods", .size = sizeof(struct pod_list),
	.count_off = offsetof(struct pod_list, n), .parse = parse, .free = free_list,
};

int kubelet_start(const struct http_opts *o, struct kubelet **out)
{
	struct kubelet *k = calloc(1, sizeof(*k));
	int r;

	if (!k)
		return -ENOMEM;
	r = poller_start(&kubelet_kind, o, &k->p);
	if (r) {
		free(k);
		return r;
	}
	*out = k;
	return 0;
}

void kubelet_stop(struct kubelet *k)
{
	if (!k)
		return;
	poller_stop(k->p);
	free(k->warned);
	free(k);
}

unsigned long kubelet_generation(struct kubelet *k)
{
	return poller_generation(k->p);
}

/* Is this the first time @p gets warning @w? Remembered (as far as memory allows). */
static bool first_warning(struct kubelet *k, const struct pod_meta *p, enum pod_warning w)
{
	struct warned *v;
	size_t i;

	for (i = 0; i < k->nwarned; i++)
		if (!strcmp(k->warned[i].uid, p->uid)) {
			if (k->warned[i].said & w)
				return false;
			k->warned[i].said |= w;
			return true;
		}
	v = realloc(k->warned, (k->nwarned + 1) * sizeof(*k->warned));
	if (v) {
		k->warned = v;
		snprintf(v[k->nwarned].uid, sizeof(v->uid), "%s", p->uid);
		v[k->nwarned++].said = w;
	}
	return true;
}

/* Koordinator's features behind koord-bpf's eviction reasons (parsed with the list). */
static unsigned int evict_denied(const struct pod_meta *p)
{
	static const unsigned int feature[EVICT_REASON_NR] = {
		[EVICT_BE_CPU] = POD_EVICT_BE_CPU,
		[EVICT_MEMORY] = POD_EVICT_BE_MEMORY,
		[EVICT_CULPRIT] = POD_EVICT_BE_CPU,	/* a BE CPU eviction, by interference */
	};
	unsigned int r, denied = 0;

	for (r = 0; r < EVICT_REASON_NR; r++)
		if (!(p->evict_features & feature[r]))
			denied |= 1u << r;
	return denied;
}

struct apply {
	struct kubelet *k;
	struct container_table *t;
	size_t changed;
};

static void apply(const void *v, void *ctx)
{
	const struct pod_list *pods = v;
	struct apply *a = ctx;
	const struct pod_meta *p;
	struct cg_identity *id;
	size_t i;

	for (i = 0; pods && i < a->t->n; i++) {
		id = &a->t->v[i].ident;
		if (!id->pod_uid[0] || !(p = pods_find(pods, id->pod_uid)))
			continue;
		snprintf(id->namespace, sizeof(id->namespace), "%s", p->namespace);
		snprintf(id->pod_name, sizeof(id->pod_name), "%s", p->name);
		snprintf(id->container, sizeof(id->container), "%s",
			 (id->container_id[0] ? pod_container_name(p, id->container_id) : NULL) ?: "");
		/* Koordinator refuses an unknown qosClass */
		if (p->qos_label == KC_UNCLASSIFIED && first_warning(a->k, p, WARN_UNKNOWN_QOS))
			log_err("pod %s/%s (%s): unknown koordinator.sh/qosClass \"%s\"; its "
				"containers count as unclassified", p->namespace, p->name, p->uid,
				p->qos_label_raw);
		/*
		 * A label is the pod's own word: one that claims online under the
		 * besteffort cgroup (in the BE root, with BE's share and wake-up priority)
		 * would make it a victim that gets other tenants' BE work throttled
		 * and killed. It stays BE.
		 */
		if (p->qos_label >= 0 && KC_IS_ONLINE(p->qos_label) && id->qos == KC_BE) {
			a->k->online_under_be++;
			if (first_warning(a->k, p, WARN_ONLINE_UNDER_BE))
				log_warn("pod %s/%s (%s): koordinator.sh/qosClass \"%s\" ignored: the "
					 "pod is BestEffort (its cgroup is under besteffort); it counts "
					 "as BE", p->namespace, p->name, p->uid, p->qos_label_raw);
		} else if (p->qos_label >= 0 && id->qos != (enum koord_class)p->qos_label) {
			id->qos = p->qos_label;
			a->changed++;
		}
		id->prio = pod_prio(p, id->qos);
		id->priority = p->has_priority ? p->priority : 0;
		id->cpu_request = p->cpu_request;
		id->mem_request = p->mem_request;
		id->evict_denied = evict_denied(p);
		id->static_pod = p->static_pod;
		id->listed = true;
	}
}

size_t kubelet_apply(struct kubelet *k, struct container_table *t)
{
	struct apply a = { .k = k, .t = t };

	k->online_under_be = 0;
	poller_with(k->p, apply, &a);
	container_table_changed(t);
	return a.changed;
}

struct unseen {
	const struct container_table *t;
	double cpu, mem;
};

static void unseen(const void *v, void *ctx)
{
	const struct pod_list *pods = v;
	struct unseen *u = ctx;
	char (*uids)[64];
	size_t i, n = 0;

	if (!pods || !(uids = malloc((u->t->n + 1) * sizeof(*uids))))
		return;
	for (i = 0; i < u->t->n; i++)
		if (u->t->v[i].ident.kind == CG_POD)
			memcpy(uids[n++], u->t->v[i].ident.pod_uid, sizeof(*uids));
	byname_sort(uids, n, sizeof(*uids));
	for (i = 0; i < pods->n; i++) {
		const struct pod_meta *p = &pods->v[i];

		if (p->done || byname_find(uids, n, sizeof(*uids), p->uid) ||
		    !prio_is_hp(pod_prio(p, pod_qos(p, KC_UNCLASSIFIED))))
			continue;
		u->cpu += p->cpu_request;
		u->mem += p->mem_request;
	}
	free(uids);
}

void kubelet_unseen_requests(struct kubelet *k, const struct container_table *t, double *cpu,
			     double *mem)
{
	struct unseen u = { .t = t };

	poller_with(k->p, unseen, &u);
	*cpu = u.cpu;
	*mem = u.mem;
}

bool kubelet_wait_first(struct kubelet *k, double timeout_s)
{
	return poller_wait_first(k->p, timeout_s);
}

bool kubelet_status(struct kubelet *k, char *why, size_t len)
{
	return poller_status(k->p, why, len);
}

double kubelet_age(struct kubelet *k)
{
	return poller_age(k->p);
}

void kubelet_metrics(struct kubelet *k, FILE *f)
{
	poller_metrics(k->p, f);
	fprintf(f, "# HELP koord_bpf_kubelet_qos_labels_ignored Cgroups of BestEffort pods (the pod's "
		   "and its containers') whose online koordinator.sh/qosClass label was ignored at "
		   "the last walk.\n"
		   "# TYPE koord_bpf_kubelet_qos_labels_ignored gauge\n"
		   "koord_bpf_kubelet_qos_labels_ignored %zu\n", k->online_under_be);
}
