// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Node object as the API server serves it (v1): what it keeps for the system. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "jsondoc.h"
#include "node_object.h"
#include "nodeslo.h"
#include "quantity.h"

/* @o's member @key, of @type; NULL when absent or of another type. */
static json_object *member(json_object *o, const char *key, json_type type)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type))
		return NULL;
	return v;
}

/* status.@list.@res as a quantity into @out (NAN when absent); false when it does not read. */
static bool quantity_at(json_object *status, const char *list, const char *res, double *out)
{
	json_object *v = member(member(status, list, json_type_object), res, json_type_string);

	*out = NAN;
	return !v || !quantity_parse(json_object_get_string(v), out);
}

/* capacity - allocatable of @res, 0 unless both are given; -EINVAL when one does not read. */
static int reserved_of(json_object *status, const char *res, double *out, char *err,
		       size_t errlen)
{
	double cap, alloc;

	if (!quantity_at(status, "capacity", res, &cap) ||
	    !quantity_at(status, "allocatable", res, &alloc)) {
		snprintf(err, errlen, "status: the %s capacity or allocatable is not a quantity", res);
		return -EINVAL;
	}
	*out = isnan(cap) || isnan(alloc) || alloc >= cap ? 0 : cap - alloc;
	return 0;
}

int node_object_parse(const char *text, size_t len, struct node_object *out, char *err,
		      size_t errlen)
{
	json_object *root = json_doc_parse(text, len, err, errlen), *meta, *status, *kind, *name, *ann;
	char why[512];
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (!root)
		return -EINVAL;
	kind = member(root, "kind", json_type_string);
	meta = member(root, "metadata", json_type_object);
	name = member(meta, "name", json_type_string);
	status = member(root, "status", json_type_object);
	ann = member(member(meta, "annotations", json_type_object), NODE_RESERVATION_ANNOTATION,
		     json_type_string);
	if (!kind || strcmp(json_object_get_string(kind), "Node")) {
		snprintf(err, errlen, "not a Node (kind \"%s\")", kind ? json_object_get_string(kind) : "");
		ret = -EINVAL;
	} else if (!name || !json_object_get_string_len(name) ||
		   (size_t)json_object_get_string_len(name) >= sizeof(out->name)) {
		snprintf(err, errlen, "a Node without metadata.name");
		ret = -EINVAL;
	} else {
		snprintf(out->name, sizeof(out->name), "%s", json_object_get_string(name));
		ret = reserved_of(status, "cpu", &out->kubelet_cpu, err, errlen);
		if (!ret)
			ret = reserved_of(status, "memory", &out->kubelet_memory, err, errlen);
	}
	if (!ret && ann) {
		out->annotated = true;
		ret = config_parse_reservation(json_object_get_string(ann),
					       json_object_get_string_len(ann), &out->annotation,
					       why, sizeof(why));
		if (ret == -EINVAL)
			snprintf(err, errlen, "%s", why);
	}
	json_object_put(root);
	return ret;
}

void node_object_reservation(const struct node_object *n, struct node_reservation *out)
{
	const struct node_reservation *a = &n->annotation;

	out->cpu = n->kubelet_cpu > a->cpu ? n->kubelet_cpu : a->cpu;
	out->memory = n->kubelet_memory > a->memory ? n->kubelet_memory : a->memory;
	out->cpus = a->cpus;
}

/* ---- polled ---- */

static int parse(const char *text, size_t len, void *out, char *err, size_t errlen)
{
	return node_object_parse(text, len, out, err, errlen);
}

static void free_none(void *v)
{
}

static const struct poll_kind node_kind = {
	.name = "node", .size = sizeof(struct node_object), .parse = parse, .free = free_none,
};

int node_object_start(const char *url, const char *token_file, const char *ca_file,
		      double interval_s, struct poller **out)
{
	struct http_opts o = nodeslo_http_opts(url, token_file, ca_file, interval_s);

	return poller_start(&node_kind, &o, out);
}

int node_object_take(struct poller *p, struct node_object *out, unsigned long *gen)
{
	return poller_copy(p, out, gen);
}
