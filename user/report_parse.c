// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jsondoc.h"
#include "report.h"
#include "report_parse.h"

/* @o.@key as a u64 (absent or null: 0); false when it is of another type. */
static bool get_u64(json_object *o, const char *key, __u64 *out)
{
	json_object *v;

	*out = 0;
	if (!o || !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return true;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return false;
	*out = json_object_get_uint64(v);
	return true;
}

/* @o.@key in µs (a number) as ns. */
static bool get_us(json_object *o, const char *key, __u64 *out)
{
	json_object *v;
	double us;

	*out = 0;
	if (!o || !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return true;
	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return false;
	us = json_object_get_double(v);
	if (!isfinite(us) || us < 0)
		return false;
	*out = (__u64)llround(us * 1000);
	return true;
}

static void get_str(json_object *o, const char *key, char *buf, size_t len)
{
	json_object *v;

	buf[0] = '\0';
	if (o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
		snprintf(buf, len, "%s", json_object_get_string(v));
}

static json_object *get_obj(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_object) ?
	       v : NULL;
}

/* The hardware or software counters of one container, when it has them. */
static bool read_counters(json_object *o, struct cg_window *cw)
{
	char src[16];

	if (!o)
		return true;
	get_str(o, "source", src, sizeof(src));
	cw->pmu_source = !strcmp(src, "hardware") ? PMU_SOURCE_HARDWARE :
			 !strcmp(src, "software") ? PMU_SOURCE_SOFTWARE : PMU_SOURCE_OFF;
	return get_u64(o, "cycles", &cw->pmu[PMU_CYCLES]) &&
	       get_u64(o, "instructions", &cw->pmu[PMU_INSTRUCTIONS]) &&
	       get_u64(o, "llc_misses", &cw->pmu[PMU_LLC_MISSES]);
}

/* One element of "containers": its numbers into @cw, its identity into @c. */
static const char *read_container(json_object *o, struct cg_window *cw, struct container *c)
{
	json_object *runq = get_obj(o, "runq"), *steal = get_obj(o, "steal_ns");
	json_object *infl = get_obj(o, "inflicted_ns");
	struct cg_identity *id = &c->ident;
	char path[4096], qos[16];
	unsigned int k;
	int q;

	if (!json_object_is_type(o, json_type_object))
		return "a container is not an object";
	if (!get_u64(o, "id", &cw->cgid) || !cw->cgid)
		return "a container without an id";
	get_str(o, "cgroup", path, sizeof(path));
	if (path[0] != '/')
		return "a container without a cgroup path";
	get_str(o, "qos", qos, sizeof(qos));
	q = qos_from_name(qos);
	id->qos = q < 0 ? KC_UNCLASSIFIED : q;
	get_str(o, "pod_uid", id->pod_uid, sizeof(id->pod_uid));
	get_str(o, "container_id", id->container_id, sizeof(id->container_id));
	get_str(o, "namespace", id->namespace, sizeof(id->namespace));
	get_str(o, "pod", id->pod_name, sizeof(id->pod_name));
	get_str(o, "container", id->container, sizeof(id->container));
	if (!get_u64(o, "cpu_ns", &cw->cpu_ns) || !runq || !get_u64(runq, "count", &cw->wait_count) ||
	    !get_u64(runq, "wait_ns", &cw->wait_ns) || !get_us(runq, "p50_us", &cw->p50_ns) ||
	    !get_us(runq, "p99_us", &cw->p99_ns) || !get_us(runq, "max_us", &cw->wait_max))
		return "a container's cpu_ns or runq";
	for (k = 0; k < ST_NR; k++)
		if (!get_u64(steal, steal_slot_name(k), &cw->steal_ns[k]))
			return "a container's steal_ns";
	if (!get_u64(infl, "online", &cw->inflicted_online_ns) ||
	    !get_u64(infl, "all", &cw->inflicted_all_ns))
		return "a container's inflicted_ns";
	if (!read_counters(get_obj(o, "counters"), cw))
		return "a container's counters";
	c->id = cw->cgid;
	c->path = strdup(path);
	return c->path ? NULL : "out of memory";
}

static int parse_doc(json_object *doc, struct report_doc *d, char *err, size_t errlen)
{
	json_object *list, *dur;
	struct container *cs;
	const char *why;
	size_t i, n;
	int r;

	if (!json_object_object_get_ex(doc, "containers", &list) ||
	    !json_object_is_type(list, json_type_array) ||
	    !json_object_object_get_ex(doc, "duration_s", &dur) ||
	    (!json_object_is_type(dur, json_type_double) && !json_object_is_type(dur, json_type_int)) ||
	    !(json_object_get_double(dur) > 0)) {
		snprintf(err, errlen, "not koord-interference's schema: no containers or duration_s");
		return -EINVAL;
	}
	d->w.dur_ns = (__u64)llround(json_object_get_double(dur) * 1e9);
	get_str(get_obj(doc, "hierarchy"), "root", d->root, sizeof(d->root));
	get_str(get_obj(doc, "collector"), "mode", d->mode, sizeof(d->mode));
	d->version = json_object_get_int(json_object_object_get(get_obj(doc, "hierarchy"), "version"));
	get_u64(get_obj(doc, "collector"), "long_waits", &d->w.counters[CNT_LONG_WAITS]);
	n = json_object_array_length(list);
	d->w.v = calloc(n ? n : 1, sizeof(*d->w.v));
	cs = calloc(n ? n : 1, sizeof(*cs));
	if (!d->w.v || !cs) {
		free(cs);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		why = read_container(json_object_array_get_idx(list, i), &d->w.v[i], &cs[i]);
		if (why) {
			snprintf(err, errlen, "containers[%zu]: %s", i, why);
			for (n = 0; n <= i; n++)
				free(cs[n].path);
			free(cs);
			return -EINVAL;
		}
	}
	d->w.n = n;
	/* the window is sorted by id, as window_find expects */
	qsort(d->w.v, n, sizeof(*d->w.v), cgid_cmp);
	r = container_table_adopt(&d->t, cs, n);
	if (r)
		snprintf(err, errlen, "%s", strerror(-r));
	return r;
}

int report_parse(const char *text, size_t len, struct report_doc *d, char *err, size_t errlen)
{
	json_object *doc;
	int r;

	report_doc_free(d);
	doc = json_doc_parse(text, len, err, errlen);
	if (!doc)
		return -EINVAL;
	r = parse_doc(doc, d, err, errlen);
	json_object_put(doc);
	if (r)
		report_doc_free(d);
	return r;
}

void report_doc_free(struct report_doc *d)
{
	window_free(&d->w);
	container_table_free(&d->t);
	memset(d, 0, sizeof(*d));
}
