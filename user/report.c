// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include "report.h"

const char *steal_slot_name(unsigned int slot)
{
	static const char *const names[ST_NR] = {
		[KC_UNCLASSIFIED] = "unclassified", [KC_LSE] = "LSE", [KC_LSR] = "LSR",
		[KC_LS] = "LS", [KC_BE] = "BE", [KC_SYSTEM] = "SYSTEM", [KC_IDLE] = "idle",
		[ST_SELF] = "self", [ST_THROTTLED] = "throttled",
	};

	return slot < ST_NR ? names[slot] : "?";
}

static int cmp_p99(const void *a, const void *b)
{
	const struct cg_window *x = *(const struct cg_window *const *)a;
	const struct cg_window *y = *(const struct cg_window *const *)b;

	if (x->p99_ns != y->p99_ns)
		return x->p99_ns < y->p99_ns ? 1 : -1;
	if (x->wait_ns != y->wait_ns)
		return x->wait_ns < y->wait_ns ? 1 : -1;
	return x->cpu_ns < y->cpu_ns ? 1 : x->cpu_ns > y->cpu_ns ? -1 : 0;
}

size_t report_rows(const struct window *w, const struct cg_window ***rows)
{
	size_t i, n = 0;

	*rows = calloc(w->n ? w->n : 1, sizeof(**rows));
	if (!*rows)
		return 0;
	for (i = 0; i < w->n; i++)
		if (w->v[i].cpu_ns || w->v[i].wait_count)
			(*rows)[n++] = &w->v[i];
	qsort(*rows, n, sizeof(**rows), cmp_p99);
	return n;
}

static json_object *u64(__u64 v)
{
	return json_object_new_uint64(v);
}

static json_object *us(__u64 ns)
{
	return json_object_new_double((double)ns / 1000.0);
}

json_object *report_container_json(const struct cg_window *cw, const struct container *c)
{
	json_object *o = json_object_new_object(), *runq, *steal, *infl;
	unsigned int i;

	json_object_object_add(o, "cgroup", json_object_new_string(c ? c->path : "?"));
	json_object_object_add(o, "id", u64(cw->cgid));
	json_object_object_add(o, "qos", json_object_new_string(
		qos_name(c ? c->ident.qos : KC_UNCLASSIFIED)));
	json_object_object_add(o, "pod_uid", c && c->ident.pod_uid[0] ?
			       json_object_new_string(c->ident.pod_uid) : NULL);
	json_object_object_add(o, "container_id", c && c->ident.container_id[0] ?
			       json_object_new_string(c->ident.container_id) : NULL);
	json_object_object_add(o, "cpu_ns", u64(cw->cpu_ns));

	runq = json_object_new_object();
	json_object_object_add(runq, "count", u64(cw->wait_count));
	json_object_object_add(runq, "p50_us", us(cw->p50_ns));
	json_object_object_add(runq, "p99_us", us(cw->p99_ns));
	json_object_object_add(runq, "max_us", us(cw->wait_max));
	json_object_object_add(runq, "wait_ns", u64(cw->wait_ns));
	json_object_object_add(o, "runq", runq);

	steal = json_object_new_object();
	for (i = 0; i < ST_NR; i++)
		json_object_object_add(steal, steal_slot_name(i), u64(cw->steal_ns[i]));
	json_object_object_add(o, "steal_ns", steal);

	infl = json_object_new_object();
	json_object_object_add(infl, "online", u64(cw->inflicted_online_ns));
	json_object_object_add(infl, "all", u64(cw->inflicted_all_ns));
	json_object_object_add(o, "inflicted_ns", infl);
	json_object_object_add(o, "counters", NULL);
	return o;
}

void report_table(FILE *f, const struct window *w, const struct container_table *t, size_t top)
{
	const struct cg_window **rows;
	const struct container *c;
	size_t i, n = report_rows(w, &rows);

	if (top && n > top)
		n = top;
	fprintf(f, "%-6s %9s %8s %9s %9s %9s %10s  %s\n", "QOS", "CPU_ms", "WAITS",
		"P50_us", "P99_us", "MAX_us", "WAIT_ms", "CGROUP");
	for (i = 0; i < n; i++) {
		const struct cg_window *cw = rows[i];

		c = container_table_get(t, cw->cgid);
		fprintf(f, "%-6s %9.1f %8llu %9.1f %9.1f %9.1f %10.2f  %s\n",
			qos_name(c ? c->ident.qos : KC_UNCLASSIFIED), cw->cpu_ns / 1e6,
			(unsigned long long)cw->wait_count, cw->p50_ns / 1e3, cw->p99_ns / 1e3,
			cw->wait_max / 1e3, cw->wait_ns / 1e6, c ? c->path : "?");
	}
	free(rows);
}
