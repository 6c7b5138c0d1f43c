// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kubelet's PodList, and Koordinator's label rules
 * (apis/extension/qos_utils.go, priority_utils.go, constants.go).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "byname.h"
#include "jsondoc.h"
#include "pods.h"
#include "quantity.h"

#define LABEL_QOS		"koordinator.sh/qosClass"
#define LABEL_PRIO_CLASS	"koordinator.sh/priority-class"
#define LABEL_EVICT_ENABLED	"koordinator.sh/eviction-enabled"
#define ANNOT_EVICT_PRIO	"koordinator.sh/eviction-priority"
#define ANNOT_EVICT_POLICY	"koordinator.sh/eviction-policy"
/* the kubelet's own: a static pod's source ("file", "http"; "api" for the others), its mirror's hash */
#define ANNOT_CONFIG_SOURCE	"kubernetes.io/config.source"
#define ANNOT_CONFIG_MIRROR	"kubernetes.io/config.mirror"

static const struct {
	const char *name;
	int lo, hi;
} prios[] = {
	[PRIO_NONE] = { "", 0, -1 },
	[PRIO_PROD] = { "koord-prod", 9000, 9999 },
	[PRIO_MID] = { "koord-mid", 7000, 7999 },
	[PRIO_BATCH] = { "koord-batch", 5000, 5999 },
	[PRIO_FREE] = { "koord-free", 3000, 3999 },
};
#define NPRIOS (sizeof(prios) / sizeof(prios[0]))

enum prio_class prio_from_value(int priority)
{
	size_t i;

	for (i = 1; i < NPRIOS; i++)
		if (priority >= prios[i].lo && priority <= prios[i].hi)
			return i;
	return PRIO_NONE;
}

enum prio_class prio_from_name(const char *name)
{
	size_t i;

	for (i = 1; name && i < NPRIOS; i++)
		if (!strcmp(name, prios[i].name))
			return i;
	return PRIO_NONE;
}

const char *prio_name(enum prio_class p)
{
	return p < NPRIOS ? prios[p].name : "";
}

enum koord_class pod_qos(const struct pod_meta *p, enum koord_class fallback)
{
	if (p->qos_label >= 0)
		return p->qos_label;
	return p->k8s_qos >= 0 ? (enum koord_class)p->k8s_qos : fallback;
}

bool prio_is_hp(enum prio_class p)
{
	return p != PRIO_BATCH && p != PRIO_FREE;
}

enum prio_class pod_prio(const struct pod_meta *p, enum koord_class qos)
{
	if (p->prio != PRIO_NONE)
		return p->prio;
	return qos == KC_BE ? PRIO_BATCH : PRIO_PROD;
}

static const char *const evict_feature_names[] = { "BECPUEvict", "BEMemoryEvict" };

/* @name's POD_EVICT_* bit, 0 for a feature koord-bpf does not act on. */
static unsigned int feature_bit(const char *name)
{
	for (unsigned int i = 0; i < sizeof(evict_feature_names) / sizeof(*evict_feature_names); i++)
		if (!strcmp(name, evict_feature_names[i]))
			return 1u << i;
	return 0;
}

unsigned int pod_evict_features(const struct pod_meta *p)
{
	unsigned int bits = 0;
	json_object *list, *v;
	size_t i;

	if (!p->eviction_enabled)
		return 0;
	if (!p->eviction_policy)
		return POD_EVICT_BE_CPU | POD_EVICT_BE_MEMORY;
	list = json_tokener_parse(p->eviction_policy);
	for (i = 0; json_object_is_type(list, json_type_array) &&
		    i < json_object_array_length(list); i++) {
		v = json_object_array_get_idx(list, i);
		if (json_object_is_type(v, json_type_string))
			bits |= feature_bit(json_object_get_string(v));
	}
	json_object_put(list);
	return bits;
}

bool pod_evict_allowed(const struct pod_meta *p, const char *feature)
{
	return pod_evict_features(p) & feature_bit(feature);
}

/* The string at @obj.@key, or NULL when absent or not a string. */
static const char *get_str(json_object *obj, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static json_object *get_obj(json_object *obj, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_object))
		return NULL;
	return v;
}

/* Koordinator's QoS names exactly (ParseQoSClass is case-sensitive). */
static int qos_label(const char *s)
{
	static const char *const names[] = {
		[KC_LSE] = "LSE", [KC_LSR] = "LSR", [KC_LS] = "LS", [KC_BE] = "BE",
		[KC_SYSTEM] = "SYSTEM",
	};
	size_t i;

	if (!s)
		return -1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i] && !strcmp(s, names[i]))
			return i;
	return KC_UNCLASSIFIED;
}

static int k8s_qos(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "Guaranteed"))
		return KC_LSR;	/* QoSClassForGuaranteed */
	if (!strcmp(s, "Burstable"))
		return KC_LS;
	if (!strcmp(s, "BestEffort"))
		return KC_BE;
	return -1;
}

static char *dup_or_null(const char *s, bool *nomem)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*nomem = true;
	return d;
}

static void pod_free(struct pod_meta *p)
{
	size_t i;

	for (i = 0; i < p->ncontainers; i++) {
		free(p->containers[i].id);
		free(p->containers[i].name);
	}
	free(p->containers);
	free(p->namespace);
	free(p->name);
	free(p->qos_label_raw);
	free(p->eviction_policy);
}

/* requests[@res] of each container in @list: their sum (@sum) or their largest. */
static double list_requests(json_object *list, const char *res, bool sum)
{
	json_object *c, *r, *q;
	double total = 0, v;
	size_t i;

	for (i = 0; json_object_is_type(list, json_type_array) &&
		    i < json_object_array_length(list); i++) {
		c = json_object_array_get_idx(list, i);
		if (!json_object_is_type(c, json_type_object) ||
		    !json_object_object_get_ex(c, "resources", &r) ||
		    !json_object_is_type(r, json_type_object) ||
		    !json_object_object_get_ex(r, "requests", &q) ||
		    !json_object_is_type(q, json_type_object) ||
		    !json_object_object_get_ex(q, res, &q) || !json_object_is_type(q, json_type_string) ||
		    quantity_parse(json_object_get_string(q), &v))
			continue;
		total = sum ? total + v : fmax(total, v);
	}
	return total;
}

/* Kubernetes' PodRequests for @res: max(sum of containers, largest init container) + overhead. */
static double pod_requests(json_object *spec, const char *res)
{
	json_object *list = NULL, *init = NULL, *over, *q;
	double v = 0;

	json_object_object_get_ex(spec, "containers", &list);
	json_object_object_get_ex(spec, "initContainers", &init);
	if ((over = get_obj(spec, "overhead")) && json_object_object_get_ex(over, res, &q) &&
	    json_object_is_type(q, json_type_string) && quantity_parse(json_object_get_string(q), &v))
		v = 0;
	return fmax(list_requests(list, res, true), list_requests(init, res, false)) + v;
}

/*
 * The containers of @status's lists that have a runtime id (one not started
 * yet has none): "containerd://ID", "docker://ID", "cri-o://ID" as the ID a
 * cgroup carries.
 */
static void pod_containers(json_object *status, struct pod_meta *p, bool *nomem)
{
	static const char *const lists[] = { "containerStatuses", "initContainerStatuses",
					     "ephemeralContainerStatuses" };
	json_object *list, *c;
	const char *id, *name, *sep;
	size_t i, j, n = 0;

	for (i = 0; i < sizeof(lists) / sizeof(*lists); i++)
		if (json_object_object_get_ex(status, lists[i], &list) &&
		    json_object_is_type(list, json_type_array))
			n += json_object_array_length(list);
	if (!n || !(p->containers = calloc(n, sizeof(*p->containers)))) {
		*nomem |= n > 0;
		return;
	}
	for (i = 0; i < sizeof(lists) / sizeof(*lists); i++) {
		if (!json_object_object_get_ex(status, lists[i], &list) ||
		    !json_object_is_type(list, json_type_array))
			continue;
		for (j = 0; j < json_object_array_length(list); j++) {
			c = json_object_array_get_idx(list, j);
			if (!json_object_is_type(c, json_type_object) || !(id = get_str(c, "containerID")) ||
			    !(name = get_str(c, "name")) || !*name)
				continue;
			sep = strstr(id, "://");
			id = sep ? sep + 3 : id;
			if (!*id)
				continue;
			p->containers[p->ncontainers].id = dup_or_null(id, nomem);
			p->containers[p->ncontainers].name = dup_or_null(name, nomem);
			p->ncontainers++;
		}
	}
}

const char *pod_container_name(const struct pod_meta *p, const char *id)
{
	size_t i;

	for (i = 0; i < p->ncontainers; i++)
		if (p->containers[i].id && p->containers[i].name && !strcmp(p->containers[i].id, id))
			return p->containers[i].name;
	return NULL;
}

/* One item; false when it has no uid (skipped). */
static bool pod_read(json_object *item, struct pod_meta *p, bool *nomem)
{
	json_object *meta = get_obj(item, "metadata"), *spec = get_obj(item, "spec");
	json_object *status = get_obj(item, "status"), *labels, *annots, *v;
	const char *uid = meta ? get_str(meta, "uid") : NULL, *s;

	memset(p, 0, sizeof(*p));
	if (!uid || !*uid)
		return false;
	snprintf(p->uid, sizeof(p->uid), "%s", uid);
	labels = get_obj(meta, "labels");
	annots = get_obj(meta, "annotations");
	p->namespace = dup_or_null(get_str(meta, "namespace") ?: "", nomem);
	p->name = dup_or_null(get_str(meta, "name") ?: "", nomem);
	s = labels ? get_str(labels, LABEL_QOS) : NULL;
	p->qos_label = qos_label(s);
	p->qos_label_raw = dup_or_null(s, nomem);
	p->k8s_qos = k8s_qos(status ? get_str(status, "qosClass") : NULL);
	s = status ? get_str(status, "phase") : NULL;
	p->done = s && (!strcmp(s, "Succeeded") || !strcmp(s, "Failed"));
	if (spec && json_object_object_get_ex(spec, "priority", &v) &&
	    json_object_is_type(v, json_type_int)) {
		p->has_priority = true;
		p->priority = json_object_get_int(v);
	}
	s = labels ? get_str(labels, LABEL_PRIO_CLASS) : NULL;
	p->prio = s ? prio_from_name(s) : p->has_priority ? prio_from_value(p->priority) : PRIO_NONE;
	s = labels ? get_str(labels, LABEL_EVICT_ENABLED) : NULL;
	p->eviction_enabled = !s || strcmp(s, "false");
	s = annots ? get_str(annots, ANNOT_EVICT_PRIO) : NULL;
	p->eviction_priority = s ? atoi(s) : 0;
	p->eviction_policy = dup_or_null(annots ? get_str(annots, ANNOT_EVICT_POLICY) : NULL, nomem);
	p->evict_features = pod_evict_features(p);	/* once, not per cgroup and reason */
	s = annots ? get_str(annots, ANNOT_CONFIG_SOURCE) : NULL;
	p->static_pod = (s && strcmp(s, "api")) ||
			(annots && json_object_object_get_ex(annots, ANNOT_CONFIG_MIRROR, NULL));
	if (spec) {
		p->cpu_request = pod_requests(spec, "cpu");
		p->mem_request = pod_requests(spec, "memory");
	}
	if (status)
		pod_containers(status, p, nomem);
	return true;
}

int pods_parse(const char *text, size_t len, struct pod_list *out, char *err, size_t errlen)
{
	json_object *root, *items;
	bool nomem = false;
	size_t i, n;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	root = json_doc_parse(text, len, err, errlen);
	if (!root)
		return -EINVAL;
	if (!json_object_object_get_ex(root, "items", &items) ||
	    !json_object_is_type(items, json_type_array)) {
		snprintf(err, errlen, "not a PodList: no \"items\" array");
		ret = -EINVAL;
		goto out;
	}
	n = json_object_array_length(items);
	out->v = n ? calloc(n, sizeof(*out->v)) : NULL;
	if (n && !out->v) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		json_object *it = json_object_array_get_idx(items, i);

		if (json_object_is_type(it, json_type_object) && pod_read(it, &out->v[out->n], &nomem))
			out->n++;
	}
	byname_sort(out->v, out->n, sizeof(*out->v));
	if (nomem)
		ret = -ENOMEM;
out:
	json_object_put(root);
	if (ret)
		pods_free(out);
	return ret;
}

const struct pod_meta *pods_find(const struct pod_list *l, const char *uid)
{
	return byname_find(l->v, l->n, sizeof(*l->v), uid);
}

void pods_free(struct pod_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		pod_free(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}
