// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* NodeManager's REST containers list (hadoop-yarn-server-nodemanager's NMWebServices). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "byname.h"
#include "jsondoc.h"
#include "yarn_nm.h"

/* A number field, 0 when absent or not a number (NodeManager writes integers). */
static long long num(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
		return 0;
	return json_object_get_int64(v);
}

static bool entry(json_object *o, struct nm_container *c)
{
	json_object *id, *state;

	memset(c, 0, sizeof(*c));
	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "id", &id) ||
	    !json_object_is_type(id, json_type_string) || !json_object_get_string_len(id) ||
	    (size_t)json_object_get_string_len(id) >= sizeof(c->id))
		return false;
	snprintf(c->id, sizeof(c->id), "%s", json_object_get_string(id));
	if (json_object_object_get_ex(o, "state", &state) &&
	    json_object_is_type(state, json_type_string))
		snprintf(c->state, sizeof(c->state), "%s", json_object_get_string(state));
	c->vcores = num(o, "totalVCoresNeeded") > 0 ? num(o, "totalVCoresNeeded") : 0;
	c->memory_mb = num(o, "totalMemoryNeededMB") > 0 ? num(o, "totalMemoryNeededMB") : 0;
	return true;
}

int nm_parse(const char *text, size_t len, struct nm_list *out, char *err, size_t errlen)
{
	json_object *root = json_doc_parse(text, len, err, errlen), *cs = NULL, *arr = NULL;
	size_t i, n;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (!root)
		return -EINVAL;
	if (!json_object_object_get_ex(root, "containers", &cs)) {
		snprintf(err, errlen, "not NodeManager's containers: no \"containers\"");
		json_object_put(root);
		return -EINVAL;
	}
	/* none running: "containers": null or {} */
	if (cs && json_object_is_type(cs, json_type_object))
		json_object_object_get_ex(cs, "container", &arr);
	if ((cs && !json_object_is_type(cs, json_type_object)) ||
	    (arr && !json_object_is_type(arr, json_type_array))) {
		snprintf(err, errlen, "not NodeManager's containers: \"container\" is not a list");
		json_object_put(root);
		return -EINVAL;
	}
	n = arr ? json_object_array_length(arr) : 0;
	out->v = n ? calloc(n, sizeof(*out->v)) : NULL;
	if (n && !out->v)
		ret = -ENOMEM;
	for (i = 0; !ret && i < n; i++)
		if (entry(json_object_array_get_idx(arr, i), &out->v[out->n]))
			out->n++;
	byname_sort(out->v, out->n, sizeof(*out->v));
	json_object_put(root);
	return ret;
}

const struct nm_container *nm_find(const struct nm_list *l, const char *id)
{
	return byname_find(l->v, l->n, sizeof(*l->v), id);
}

void nm_free(struct nm_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* ---- polled ---- */

static int parse(const char *text, size_t len, void *out, char *err, size_t errlen)
{
	return nm_parse(text, len, out, err, errlen);
}

static void free_list(void *v)
{
	nm_free(v);
}

static const struct poll_kind nm_kind = {
	.name = "nodemanager", .items = "containers", .size = sizeof(struct nm_list),
	.count_off = offsetof(struct nm_list, n), .parse = parse, .free = free_list,
};

int nodemanager_start(const struct http_opts *o, struct poller **out)
{
	return poller_start(&nm_kind, o, out);
}

struct apply {
	struct container_table *t;
	size_t found;
};

static void apply(const void *v, void *ctx)
{
	const struct nm_container *c;
	struct apply *a = ctx;
	struct cg_identity *id;
	size_t i;

	for (i = 0; v && i < a->t->n; i++) {
		id = &a->t->v[i].ident;
		if (id->kind != CG_YARN || !(c = nm_find(v, id->container_id)))
			continue;
		id->yarn_vcores = c->vcores;
		id->yarn_memory_mb = c->memory_mb;
		a->found++;
	}
}

size_t nodemanager_apply(struct poller *p, struct container_table *t)
{
	struct apply a = { .t = t };

	poller_with(p, apply, &a);
	container_table_changed(t);
	return a.found;
}
