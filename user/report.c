// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include "report.h"
#include "yarn.h"

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

static const char *path_of(const struct container_table *t, __u64 cgid)
{
	const struct container *c = container_table_get(t, cgid);

	return c ? c->path : "?";
}

/* For text: the path, with namespace/pod/container after it where the kubelet named them. */
#define LABEL_MAX (PATH_MAX + 600)
static const char *label_of(const struct container_table *t, __u64 cgid, char *buf)
{
	const struct container *c = container_table_get(t, cgid);

	return c ? container_label(c, buf, LABEL_MAX) : "?";
}

static json_object *str_or_null(const char *s)
{
	return *s ? json_object_new_string(s) : NULL;
}

/* "namespace", "pod" and "container" (each null when not known) into @o, after @prefix. */
static void add_names(json_object *o, const char *prefix, const struct container *c)
{
	static const char *const keys[] = { "namespace", "pod", "container" };
	const char *v[] = { c ? c->ident.namespace : "", c ? c->ident.pod_name : "",
			    c ? c->ident.container : "" };
	char key[32];

	for (size_t i = 0; i < 3; i++) {
		snprintf(key, sizeof(key), "%s%s", prefix, keys[i]);
		json_object_object_add(o, key, str_or_null(v[i]));
	}
}

/*
 * A cgroup name may hold any byte but '/' and NUL: for a terminal, show
 * control characters and backslashes escaped (\n, \x1b, \\).
 */
#define SHOWN_MAX (4 * PATH_MAX + 1)
static const char *shown(const char *s, char *buf)
{
	size_t n = 0;

	for (; *s && n + 5 < SHOWN_MAX; s++) {
		unsigned char c = *s;

		if (c == '\\')
			n += snprintf(buf + n, SHOWN_MAX - n, "\\\\");
		else if (c < 0x20 || c == 0x7f)
			n += snprintf(buf + n, SHOWN_MAX - n, c == '\n' ? "\\n" : "\\x%02x", c);
		else
			buf[n++] = c;
	}
	buf[n] = '\0';
	return buf;
}

static char shown_a[SHOWN_MAX], shown_b[SHOWN_MAX];
static char label_a[LABEL_MAX], label_b[LABEL_MAX];

static const char *qos_of(const struct container_table *t, __u64 cgid)
{
	const struct container *c = container_table_get(t, cgid);

	return qos_name(c ? c->ident.qos : KC_UNCLASSIFIED);
}

/* Part of the window's cpu + wait, in percent. */
static double pct(__u64 part, const struct cg_window *cw)
{
	__u64 all = cw->cpu_ns + cw->wait_ns;

	return all ? 100.0 * part / all : 0;
}

/* Counters of a window, or null where none were read. */
static json_object *counters_json(const struct cg_window *cw)
{
	json_object *o;
	__u64 cyc = cw->pmu[PMU_CYCLES], ins = cw->pmu[PMU_INSTRUCTIONS];

	if (cw->pmu_source != PMU_SOURCE_HARDWARE && cw->pmu_source != PMU_SOURCE_SOFTWARE)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "source", json_object_new_string(
		cw->pmu_source == PMU_SOURCE_HARDWARE ? "hardware" : "software"));
	json_object_object_add(o, "cycles", u64(cyc));
	json_object_object_add(o, "instructions", u64(ins));
	json_object_object_add(o, "llc_misses", u64(cw->pmu[PMU_LLC_MISSES]));
	json_object_object_add(o, "cpi", ins ? json_object_new_double((double)cyc / ins) : NULL);
	json_object_object_add(o, "mpki", ins ?
		json_object_new_double(1000.0 * cw->pmu[PMU_LLC_MISSES] / ins) : NULL);
	return o;
}

/* A YARN task's application and attempt, from its container name; NULL for anything else. */
static json_object *yarn_json(const struct container *c)
{
	json_object *o;
	struct yarn_id id;
	char buf[96];

	if (!c || c->ident.kind != CG_YARN || yarn_parse(c->ident.container_id, &id))
		return NULL;
	o = json_object_new_object();
	yarn_application_id(&id, buf, sizeof(buf));
	json_object_object_add(o, "application_id", json_object_new_string(buf));
	yarn_attempt_id(&id, buf, sizeof(buf));
	json_object_object_add(o, "attempt_id", json_object_new_string(buf));
	json_object_object_add(o, "epoch", u64(id.epoch));
	json_object_object_add(o, "container", u64(id.container));
	/* the request NodeManager gave it, null when not known */
	json_object_object_add(o, "vcores", c->ident.yarn_vcores ? u64(c->ident.yarn_vcores) : NULL);
	json_object_object_add(o, "memory_mb",
			       c->ident.yarn_memory_mb ? u64(c->ident.yarn_memory_mb) : NULL);
	return o;
}

json_object *report_container_json(const struct cg_window *cw, const struct container *c)
{
	json_object *yarn = yarn_json(c);
	json_object *o = json_object_new_object(), *runq, *steal, *ratio, *infl;
	unsigned int i;

	json_object_object_add(o, "cgroup", json_object_new_string(c ? c->path : "?"));
	json_object_object_add(o, "id", u64(cw->cgid));
	json_object_object_add(o, "qos", json_object_new_string(
		qos_name(c ? c->ident.qos : KC_UNCLASSIFIED)));
	json_object_object_add(o, "pod_uid", c && c->ident.pod_uid[0] ?
			       json_object_new_string(c->ident.pod_uid) : NULL);
	json_object_object_add(o, "container_id", c && c->ident.container_id[0] ?
			       json_object_new_string(c->ident.container_id) : NULL);
	add_names(o, "", c);
	if (yarn)
		json_object_object_add(o, "yarn", yarn);
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
	ratio = json_object_new_object();
	for (i = 0; i < ST_NR; i++)
		json_object_object_add(ratio, steal_slot_name(i),
				       json_object_new_double(pct(cw->steal_ns[i], cw) / 100));
	json_object_object_add(o, "steal_ratio", ratio);

	infl = json_object_new_object();
	json_object_object_add(infl, "online", u64(cw->inflicted_online_ns));
	json_object_object_add(infl, "all", u64(cw->inflicted_all_ns));
	json_object_object_add(o, "inflicted_ns", infl);
	json_object_object_add(o, "counters", counters_json(cw));
	return o;
}

void report_table(FILE *f, const struct window *w, const struct container_table *t, size_t top)
{
	const struct cg_window **rows;
	const struct container *c;
	size_t i, n = report_rows(w, &rows);

	if (top && n > top)
		n = top;
	fprintf(f, "%-6s %9s %8s %9s %9s %9s %10s %6s %6s %10s  %s\n", "QOS", "CPU_ms",
		"WAITS", "P50_us", "P99_us", "MAX_us", "WAIT_ms", "BE%", "STEAL%", "INFL_ON_ms",
		"CGROUP");
	for (i = 0; i < n; i++) {
		const struct cg_window *cw = rows[i];

		c = container_table_get(t, cw->cgid);
		fprintf(f, "%-6s %9.1f %8llu %9.1f %9.1f %9.1f %10.2f %6.1f %6.1f %10.2f  %s\n",
			qos_name(c ? c->ident.qos : KC_UNCLASSIFIED), cw->cpu_ns / 1e6,
			(unsigned long long)cw->wait_count, cw->p50_ns / 1e3, cw->p99_ns / 1e3,
			cw->wait_max / 1e3, cw->wait_ns / 1e6, pct(cw->steal_ns[KC_BE], cw),
			pct(cg_window_steal_others(cw), cw), cw->inflicted_online_ns / 1e6,
			shown(c ? container_label(c, label_a, LABEL_MAX) : "?", shown_a));
	}
	free(rows);
}

void report_suspects(FILE *f, const struct suspects *s, const struct container_table *t,
		     __u64 dur_ns)
{
	size_t i, j;

	fprintf(f, "\nSuspects (offline containers by the online waiting they caused):\n");
	if (!s->n)
		fprintf(f, "  none\n");
	for (i = 0; i < s->n; i++) {
		const struct suspect *x = &s->v[i];

		fprintf(f, "  %zu. %s  %.2f ms online wait (%.0f%%)\n", i + 1,
			shown(label_of(t, x->cgid, label_a), shown_a), x->inflicted_online_ns / 1e6,
			100 * x->share);
		for (j = 0; j < x->nvictims; j++)
			fprintf(f, "       victim %s %s  BE steal %.2f ms\n",
				qos_of(t, x->victims[j].cgid),
				shown(label_of(t, x->victims[j].cgid, label_a), shown_a),
				x->victims[j].be_steal_ns / 1e6);
	}
}

void report_verdict(char *buf, size_t len, const struct suspects *s,
		    const struct container_table *t, __u64 dur_ns)
{
	const struct suspect *x = s->n ? &s->v[0] : NULL;
	size_t j, off;

	if (!suspects_found(s, dur_ns)) {
		snprintf(buf, len, "no interference found");
		return;
	}
	off = snprintf(buf, len, "BE container %s caused %.0f%% of the online waiting; victims:",
		       shown(label_of(t, x->cgid, label_a), shown_a), 100 * x->share);
	for (j = 0; j < x->nvictims && off < len; j++)
		off += snprintf(buf + off, len - off, "%s %s", j ? "," : "",
				shown(label_of(t, x->victims[j].cgid, label_a), shown_a));
	if (!x->nvictims && off < len)
		snprintf(buf + off, len - off, " none attributed");
}

json_object *report_suspects_json(const struct suspects *s, const struct container_table *t)
{
	json_object *arr = json_object_new_array(), *o, *vs, *v;
	size_t i, j;

	for (i = 0; i < s->n; i++) {
		const struct suspect *x = &s->v[i];

		o = json_object_new_object();
		json_object_object_add(o, "cgroup", json_object_new_string(path_of(t, x->cgid)));
		json_object_object_add(o, "id", u64(x->cgid));
		json_object_object_add(o, "qos", json_object_new_string(qos_of(t, x->cgid)));
		add_names(o, "", container_table_get(t, x->cgid));
		json_object_object_add(o, "inflicted_online_ns", u64(x->inflicted_online_ns));
		json_object_object_add(o, "share", json_object_new_double(x->share));
		vs = json_object_new_array();
		for (j = 0; j < x->nvictims; j++) {
			v = json_object_new_object();
			json_object_object_add(v, "cgroup", json_object_new_string(
				path_of(t, x->victims[j].cgid)));
			json_object_object_add(v, "qos", json_object_new_string(
				qos_of(t, x->victims[j].cgid)));
			add_names(v, "", container_table_get(t, x->victims[j].cgid));
			json_object_object_add(v, "be_steal_ns", u64(x->victims[j].be_steal_ns));
			json_object_array_add(vs, v);
		}
		json_object_object_add(o, "victims", vs);
		json_object_array_add(arr, o);
	}
	return arr;
}

void report_event_header(FILE *f)
{
	fprintf(f, "%-16s %-7s %9s %5s  %-24s %s\n", "VICTIM", "PID", "WAIT_ms", "BE%",
		"CULPRIT (ran last)", "VICTIM CGROUP <- CULPRIT CGROUP");
}

void report_event(FILE *f, const struct long_wait_event *ev, const struct container_table *t)
{
	char culprit[40];

	snprintf(culprit, sizeof(culprit), "%.16s/%u", ev->culprit_comm, ev->culprit_pid);
	fprintf(f, "%-16.16s %-7u %9.3f %5.1f  %-24s %s <- %s\n", ev->comm, ev->pid,
		ev->wait_ns / 1e6, ev->wait_ns ? 100.0 * ev->be_ns / ev->wait_ns : 0, culprit,
		shown(label_of(t, ev->cgid, label_a), shown_a),
		ev->culprit_cgid ? shown(label_of(t, ev->culprit_cgid, label_b), shown_b) : "(idle)");
	fflush(f);
}

json_object *report_event_json(const struct long_wait_event *ev, const struct container_table *t)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ts_ns", u64(ev->ts_ns));
	json_object_object_add(o, "cpu", json_object_new_int(ev->cpu));
	json_object_object_add(o, "pid", json_object_new_int(ev->pid));
	json_object_object_add(o, "comm", json_object_new_string_len(ev->comm,
						strnlen(ev->comm, sizeof(ev->comm))));
	json_object_object_add(o, "cgroup", json_object_new_string(path_of(t, ev->cgid)));
	add_names(o, "", container_table_get(t, ev->cgid));
	json_object_object_add(o, "wait_ns", u64(ev->wait_ns));
	json_object_object_add(o, "be_ns", u64(ev->be_ns));
	json_object_object_add(o, "culprit_pid", json_object_new_int(ev->culprit_pid));
	json_object_object_add(o, "culprit_comm", json_object_new_string_len(ev->culprit_comm,
						strnlen(ev->culprit_comm, sizeof(ev->culprit_comm))));
	json_object_object_add(o, "culprit_cgroup", ev->culprit_cgid ?
			       json_object_new_string(path_of(t, ev->culprit_cgid)) : NULL);
	add_names(o, "culprit_", ev->culprit_cgid ? container_table_get(t, ev->culprit_cgid) : NULL);
	return o;
}
