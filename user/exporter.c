// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "classify.h"
#include "collector.h"
#include "escape.h"
#include "exporter.h"
#include "hist.h"
#include "report.h"

/* ---- the histogram's Prometheus buckets ---- */

__u64 exporter_le_ns(unsigned int k)
{
	return (1ull << (EXP_LE_FIRST + k)) - 1;
}

/* Raw bucket i -> Prometheus bucket: the first le at or above its inclusive upper bound. */
static unsigned int le_of_bucket(unsigned int i)
{
	__u64 up = hist_upper(i) - 1;	/* inclusive: waits are whole ns */
	unsigned int k;

	if (i + 1 >= HIST_BUCKETS)
		return EXP_LE_N;
	for (k = 0; k < EXP_LE_N; k++)
		if (up <= exporter_le_ns(k))
			return k;
	return EXP_LE_N;
}

static unsigned int le_map[HIST_BUCKETS];
static int le_map_ready;

static void le_map_init(void)
{
	unsigned int i;

	if (le_map_ready)
		return;
	for (i = 0; i < HIST_BUCKETS; i++)
		le_map[i] = le_of_bucket(i);
	le_map_ready = 1;
}

static const struct exp_hist *exp_find(const struct exporter *e, __u64 cgid)
{
	if (!e || !e->n)
		return NULL;
	return bsearch(&cgid, e->v, e->n, sizeof(*e->v), cgid_cmp);
}

/* Histogram buckets with a count (a window's or a sample's) into Prometheus buckets. */
static void fold(__u64 *le, const struct hist_cell *cells, __u32 n)
{
	__u32 i;

	for (i = 0; i < n; i++)
		le[le_map[cells[i].bucket]] += cells[i].count;
}

/* @h from @old (may be @h itself) and the window @cw, or from @cs in the sample @b. */
static void update_one(struct exp_hist *h, const struct exp_hist *old,
		       const struct cg_window *cw, const struct sample *b,
		       const struct cg_sample *cs)
{
	if (old && cw && cs->s.wait_count >= old->wait_count && cs->s.cpu_ns >= old->cpu_ns) {
		if (h != old)
			*h = *old;
		fold(h->le, cw->hist, cw->nhist);
	} else {
		/* new, or re-created: everything since the collector started */
		memset(h, 0, sizeof(*h));
		fold(h->le, sample_hist(b, cs), cs->nhist);
	}
	h->cgid = cs->cgid;
	h->wait_count = cs->s.wait_count;
	h->cpu_ns = cs->s.cpu_ns;
}

int exporter_update(struct exporter *e, const struct window *w, const struct sample *b)
{
	/* b was sampled right after what e holds: its entries flagged same are as e has them */
	bool base = b->prev_gen && b->prev_gen == e->gen;
	bool same = e->n == b->n;
	const struct exp_hist *old;
	const struct cg_window *cw;
	struct exp_hist *v;
	size_t i, j = 0, k = 0;

	le_map_init();
	/* The same containers as last period (the usual case): update in place. */
	if (same && !(base && b->same_set))
		for (i = 0; same && i < b->n; i++)
			same = e->v[i].cgid == b->v[i].cgid;
	if (same && base && b->same_set) {
		/* in place, only what changed: the others are as e holds them */
		for (j = 0; j < b->nchanged; j++) {
			i = b->changed[j];
			while (w && k < w->n && w->v[k].cgid < b->v[i].cgid)
				k++;
			cw = w && k < w->n && w->v[k].cgid == b->v[i].cgid ? &w->v[k] : NULL;
			update_one(&e->v[i], &e->v[i], cw, b, &b->v[i]);
		}
		e->gen = b->gen;
		return 0;
	}
	v = same ? e->v : calloc(b->n ? b->n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	/* b, e->v and w are all sorted by container: one merge, no lookups */
	for (i = 0; i < b->n; i++) {
		const struct cg_sample *cs = &b->v[i];

		if (same) {
			if (base && cs->same)
				continue;	/* in place, unchanged */
			old = &e->v[i];
		} else {
			while (j < e->n && e->v[j].cgid < cs->cgid)
				j++;
			old = j < e->n && e->v[j].cgid == cs->cgid ? &e->v[j] : NULL;
		}
		while (w && k < w->n && w->v[k].cgid < cs->cgid)
			k++;
		cw = w && k < w->n && w->v[k].cgid == cs->cgid ? &w->v[k] : NULL;
		if (base && old && cs->same)
			v[i] = *old;	/* not in a window built on the last sample */
		else
			update_one(&v[i], old, cw, b, cs);
	}
	if (!same) {
		free(e->v);
		e->v = v;
		e->n = b->n;
	}
	e->gen = b->gen;
	return 0;
}

void exporter_free(struct exporter *e)
{
	free(e->v);
	e->v = NULL;
	e->n = 0;
}

/* ---- text ---- */

/* A text buffer; with a sink, what is in it goes there whenever it would grow. */
struct sb {
	char *p;
	size_t n, cap;
	int err;
	const struct exporter_sink *sink;
};

#define SB_CHUNK	(64 * 1024)	/* what a sink is given at a time, about */

static int sb_flush(struct sb *b)
{
	int r;

	if (b->err || !b->n)
		return b->err;
	r = b->sink->fn(b->sink->ctx, b->p, b->n);
	if (r)
		b->err = r < 0 ? r : -EIO;
	b->n = 0;
	return b->err;
}

static int sb_reserve(struct sb *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->err)
		return -1;
	if (b->n + more + 1 <= b->cap)
		return 0;
	if (b->sink && b->n && sb_flush(b))
		return -1;
	if (b->n + more + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->n + more + 1)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->err = -ENOMEM;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

static void sb_put(struct sb *b, const char *s, size_t len)
{
	if (sb_reserve(b, len))
		return;
	memcpy(b->p + b->n, s, len);
	b->n += len;
	b->p[b->n] = '\0';
}

static void sb_puts(struct sb *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3)))
static void sb_printf(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0 || sb_reserve(b, len))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, len + 1, fmt, ap);
	va_end(ap);
	b->n += len;
}

/* @v in decimal at @d (at most 20 bytes, not terminated); returns the length. */
static size_t fmt_u64(char *d, __u64 v)
{
	char tmp[20];
	size_t n = 0, i;

	do {
		tmp[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		d[i] = tmp[n - 1 - i];
	return n;
}

/*
 * Nanoseconds as seconds, exactly: "1.5", "0.000001023", "0" (at most 30
 * bytes, not terminated); returns the length.
 */
static size_t fmt_ns_seconds(char *d, __u64 ns)
{
	__u64 frac = ns % 1000000000ull;
	size_t n = fmt_u64(d, ns / 1000000000ull);
	int i;

	if (!frac)
		return n;
	d[n++] = '.';
	for (i = 8; i >= 0; i--, frac /= 10)
		d[n + i] = '0' + frac % 10;
	n += 9;
	while (d[n - 1] == '0')
		n--;
	return n;
}

static int fmt_seconds(char *buf, size_t size, __u64 ns)
{
	char tmp[32];
	size_t n = fmt_ns_seconds(tmp, ns);

	return snprintf(buf, size, "%.*s", (int)n, tmp);
}

static void put_u64(struct sb *b, __u64 v)
{
	if (sb_reserve(b, 24))
		return;
	b->n += fmt_u64(b->p + b->n, v);
	b->p[b->n] = '\0';
}

size_t exporter_escape_label(char *buf, const char *v)
{
	const unsigned char *s = (const unsigned char *)v;
	size_t n = 0, l;

	while (*s) {
		if (*s == '\\' || *s == '"') {
			buf[n++] = '\\';
			buf[n++] = *s++;
		} else if (*s == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
			s++;
		} else if ((l = utf8_len(s))) {
			memcpy(buf + n, s, l);
			n += l;
			s += l;
		} else {
			memcpy(buf + n, "\xef\xbf\xbd", 3);	/* U+FFFD */
			n += 3;
			s++;
		}
	}
	buf[n] = '\0';
	return n;
}

static void put_label(struct sb *b, const char *name, const char *v)
{
	size_t len = strlen(v);

	if (sb_reserve(b, strlen(name) + 3 + 3 * len))
		return;
	b->n += sprintf(b->p + b->n, "%s=\"", name);
	b->n += exporter_escape_label(b->p + b->n, v);
	b->p[b->n++] = '"';
	b->p[b->n] = '\0';
}

static void family(struct sb *b, const char *name, const char *type, const char *help)
{
	sb_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* cgroup="...",qos="...",pod_uid="...",container_id="..."[,namespace="...",pod="..."][,container="..."] */
static char *container_labels(const struct container *c)
{
	struct sb b = {};

	put_label(&b, "cgroup", c->path);
	sb_puts(&b, ",");
	put_label(&b, "qos", qos_name(c->ident.qos));
	sb_puts(&b, ",");
	put_label(&b, "pod_uid", c->ident.pod_uid);
	sb_puts(&b, ",");
	put_label(&b, "container_id", c->ident.container_id);
	/* only when the kubelet named the pod: an absent label is the empty one to Prometheus */
	if (c->ident.namespace[0] || c->ident.pod_name[0]) {
		sb_puts(&b, ",");
		put_label(&b, "namespace", c->ident.namespace);
		sb_puts(&b, ",");
		put_label(&b, "pod", c->ident.pod_name);
	}
	if (c->ident.container[0]) {	/* cAdvisor's name for it: series join on it */
		sb_puts(&b, ",");
		put_label(&b, "container", c->ident.container);
	}
	if (b.err) {
		free(b.p);
		return NULL;
	}
	/* kept for the whole render, one per container: not the 4 KiB a buffer starts with */
	return realloc(b.p, b.n + 1) ?: b.p;
}

/* One container's sample: name{labels[,extra]} value\n, the value in seconds or as a count. */
static void line(struct sb *b, const char *name, const char *labels, size_t ll,
		 const char *extra, bool seconds, __u64 v)
{
	size_t nl = strlen(name), el = extra ? strlen(extra) : 0;
	char *d;

	if (sb_reserve(b, nl + ll + el + 4 + 32))
		return;
	d = b->p + b->n;
	memcpy(d, name, nl);
	d += nl;
	*d++ = '{';
	memcpy(d, labels, ll);
	d += ll;
	if (extra) {
		*d++ = ',';
		memcpy(d, extra, el);
		d += el;
	}
	*d++ = '}';
	*d++ = ' ';
	d += seconds ? fmt_ns_seconds(d, v) : fmt_u64(d, v);
	*d++ = '\n';
	*d = '\0';
	b->n = d - b->p;
}

static const enum koord_class class_order[] = {
	KC_LSE, KC_LSR, KC_LS, KC_BE, KC_SYSTEM, KC_UNCLASSIFIED,
};

static int render(const struct exporter *e, const struct sample *s, const struct window *w,
		  const struct container_table *t, const struct exporter_info *info,
		  const struct exporter_sink *sink, char **out, size_t *len)
{
	struct sb b = { .sink = sink };
	char **labels = calloc(s->n ? s->n : 1, sizeof(*labels));
	size_t *ll = calloc(s->n ? s->n : 1, sizeof(*ll));
	size_t i, per_class[KC_NR] = {}, unknown = 0, est;
	unsigned int k;
	char le_label[EXP_LE_N + 1][48], from[ST_NR][32];
	__u64 fallback[EXP_LE_N + 1];

	if (!labels || !ll) {
		free(labels);
		free(ll);
		return -ENOMEM;
	}
	le_map_init();
	for (k = 0; k < ST_NR; k++)
		snprintf(from[k], sizeof(from[k]), "from=\"%s\"", steal_slot_name(k));
	for (k = 0; k <= EXP_LE_N; k++) {
		char sec[32];

		if (k < EXP_LE_N) {
			fmt_seconds(sec, sizeof(sec), exporter_le_ns(k));
			snprintf(le_label[k], sizeof(le_label[k]), "le=\"%s\"", sec);
		} else {
			snprintf(le_label[k], sizeof(le_label[k]), "le=\"+Inf\"");
		}
	}
	for (i = 0; i < s->n; i++) {
		const struct container *c = container_table_get(t, s->v[i].cgid);

		if (!c) {
			unknown++;
			continue;
		}
		labels[i] = container_labels(c);
		if (!labels[i])
			b.err = -ENOMEM;
		else
			ll[i] = strlen(labels[i]);
	}
	/*
	 * To a sink: in chunks. To a buffer: one allocation, the lines per
	 * container, each its labels and ~60 bytes more.
	 */
	est = SB_CHUNK - 1;	/* with the NUL: the chunk */
	for (i = 0; !sink && i < s->n; i++)
		est += (ll[i] + 64) * (EXP_LE_N + 4 + ST_NR + 4);
	sb_reserve(&b, est);
	for (i = 0; i < t->n; i++)
		if (t->v[i].ident.qos < KC_NR)
			per_class[t->v[i].ident.qos]++;

	family(&b, "koord_bpf_build_info", "gauge", "The koord-bpf version; always 1.");
	sb_puts(&b, "koord_bpf_build_info{");
	put_label(&b, "version", info->version ? info->version : "");
	sb_puts(&b, "} 1\n");

	if (info->mode) {
		family(&b, "koord_bpf_collector_info", "gauge",
		       "How the collector is attached and which cgroup hierarchy it watches; always 1.");
		sb_puts(&b, "koord_bpf_collector_info{");
		put_label(&b, "mode", info->mode);
		sb_puts(&b, ",");
		put_label(&b, "cgroup_root", info->cgroup_root ? info->cgroup_root : "");
		sb_printf(&b, ",cgroup_version=\"%d\",counters=\"%s\"} 1\n", info->cgroup_version,
			  s->pmu_source == PMU_SOURCE_HARDWARE ? "hardware" :
			  s->pmu_source == PMU_SOURCE_SOFTWARE ? "software" : "off");
	}
	if (info->period_s > 0) {
		family(&b, "koord_bpf_period_seconds", "gauge",
		       "Configured aggregation period.");
		sb_printf(&b, "koord_bpf_period_seconds %.9g\n", info->period_s);
	}
	if (info->last_period_s >= 0) {
		family(&b, "koord_bpf_period_duration_seconds", "gauge",
		       "Time the last period's work took (reading the maps, windows, rendering).");
		sb_printf(&b, "koord_bpf_period_duration_seconds %.9g\n", info->last_period_s);
	}
	family(&b, "koord_bpf_cgroup_scans_total", "counter",
	       "Walks of the cgroup hierarchy (at start, when unknown containers appear, and periodically).");
	sb_printf(&b, "koord_bpf_cgroup_scans_total %llu\n", (unsigned long long)info->scans);

	family(&b, "koord_bpf_journal_values_set_aside", "gauge",
	       "Values of a past run's journal that could not be restored at start (kept aside in the state dir).");
	sb_printf(&b, "koord_bpf_journal_values_set_aside %u\n", info->journal_set_aside);

	family(&b, "koord_bpf_collector_events_total", "counter",
	       "Collector events by kind: unaccounted events, dropped waits, missed switches, long waits and their records.");
	for (k = 0; k < CNT_NR; k++) {
		sb_printf(&b, "koord_bpf_collector_events_total{kind=\"%s\"} ",
			  collector_event_name(k));
		put_u64(&b, s->counters[k]);
		sb_puts(&b, "\n");
	}

	family(&b, "koord_bpf_containers", "gauge",
	       "Cgroups of the cpu controller's hierarchy, by QoS class.");
	for (k = 0; k < sizeof(class_order) / sizeof(class_order[0]); k++)
		sb_printf(&b, "koord_bpf_containers{qos=\"%s\"} %zu\n", qos_name(class_order[k]),
			  per_class[class_order[k]]);
	family(&b, "koord_bpf_unknown_containers", "gauge",
	       "Containers with counters but not (yet) found in the hierarchy; left out of the per-container series.");
	sb_printf(&b, "koord_bpf_unknown_containers %zu\n", unknown);

	family(&b, "koord_bpf_cpu_seconds_total", "counter",
	       "On-CPU time of the container's tasks (sched_switch).");
	for (i = 0; i < s->n; i++) {
		if (!labels[i])
			continue;
		line(&b, "koord_bpf_cpu_seconds_total", labels[i], ll[i], NULL, true, s->v[i].s.cpu_ns);
	}

	family(&b, "koord_bpf_runqueue_wait_seconds", "histogram",
	       "Run-queue waits: runnable but not running, from wakeup or preemption to switch-in.");
	for (i = 0; i < s->n; i++) {
		const struct exp_hist *h;
		const __u64 *cnt;
		__u64 cum = 0;

		if (!labels[i])
			continue;
		h = exp_find(e, s->v[i].cgid);
		if (h) {
			cnt = h->le;
		} else {
			memset(fallback, 0, sizeof(fallback));
			fold(fallback, sample_hist(s, &s->v[i]), s->v[i].nhist);
			cnt = fallback;
		}
		for (k = 0; k <= EXP_LE_N; k++) {
			cum += cnt[k];
			if (k == EXP_LE_N || !info->buckets_online_only ||
			    KC_IS_ONLINE(container_table_get(t, s->v[i].cgid)->ident.qos))
				line(&b, "koord_bpf_runqueue_wait_seconds_bucket", labels[i], ll[i],
				     le_label[k], false, cum);
		}
		line(&b, "koord_bpf_runqueue_wait_seconds_sum", labels[i], ll[i], NULL, true,
		     s->v[i].s.wait_ns);
		line(&b, "koord_bpf_runqueue_wait_seconds_count", labels[i], ll[i], NULL, false, cum);
	}

	if (w) {
		family(&b, "koord_bpf_runqueue_wait_max_seconds", "gauge",
		       "The longest run-queue wait that ended in the last period (exact; 0 without waits).");
		for (i = 0; i < s->n; i++) {
			const struct cg_window *cw;

			if (!labels[i])
				continue;
			cw = window_find(w, s->v[i].cgid);
			line(&b, "koord_bpf_runqueue_wait_max_seconds", labels[i], ll[i], NULL, true,
			     cw ? cw->wait_max : 0);
		}
	}

	family(&b, "koord_bpf_steal_seconds_total", "counter",
	       "Run-queue wait split by what the queue CPU ran meanwhile: another container's class, idle, the container itself (self) or its own CFS quota (throttled).");
	for (i = 0; i < s->n; i++) {
		if (!labels[i])
			continue;
		for (k = 0; k < ST_NR; k++)
			line(&b, "koord_bpf_steal_seconds_total", labels[i], ll[i], from[k], true,
			     s->v[i].s.steal_ns[k]);
	}

	family(&b, "koord_bpf_inflicted_wait_seconds_total", "counter",
	       "Waiting the container caused: its run time times the other containers' tasks waiting on that CPU (victims online or all).");
	for (i = 0; i < s->n; i++) {
		if (!labels[i])
			continue;
		line(&b, "koord_bpf_inflicted_wait_seconds_total", labels[i], ll[i],
		     "victims=\"online\"", true, s->v[i].s.inflicted_online_ns);
		line(&b, "koord_bpf_inflicted_wait_seconds_total", labels[i], ll[i],
		     "victims=\"all\"", true, s->v[i].s.inflicted_all_ns);
	}

	/* Hardware counters: only real ones (a software stand-in is not cycles). */
	if (s->pmu_source == PMU_SOURCE_HARDWARE) {
		static const struct { const char *name, *help; } pmu[PMU_NR] = {
			[PMU_CYCLES] = { "koord_bpf_cpu_cycles_total",
					 "CPU cycles of the container's tasks (hardware counter, scaled for multiplexing)." },
			[PMU_INSTRUCTIONS] = { "koord_bpf_instructions_total",
					       "Instructions retired by the container's tasks (hardware counter, scaled for multiplexing)." },
			[PMU_LLC_MISSES] = { "koord_bpf_llc_misses_total",
					     "Last-level cache misses of the container's tasks (hardware counter, scaled for multiplexing)." },
		};

		for (k = 0; k < PMU_NR; k++) {
			family(&b, pmu[k].name, "counter", pmu[k].help);
			for (i = 0; i < s->n; i++)
				if (labels[i])
					line(&b, pmu[k].name, labels[i], ll[i], NULL, false,
					     s->v[i].s.pmu[k]);
		}
	}

	for (i = 0; i < s->n; i++)
		free(labels[i]);
	free(labels);
	free(ll);
	if (sink) {
		sb_flush(&b);
		free(b.p);
		return b.err;
	}
	if (b.err) {
		free(b.p);
		return b.err;
	}
	if (!b.p)	/* cannot happen: build_info is always there */
		b.p = strdup("");
	*out = b.p;
	*len = b.n;
	return b.p ? 0 : -ENOMEM;
}

int exporter_render(const struct exporter *e, const struct sample *s, const struct window *w,
		    const struct container_table *t, const struct exporter_info *info,
		    char **out, size_t *len)
{
	return render(e, s, w, t, info, NULL, out, len);
}

int exporter_render_to(const struct exporter *e, const struct sample *s, const struct window *w,
		       const struct container_table *t, const struct exporter_info *info,
		       const struct exporter_sink *sink)
{
	return render(e, s, w, t, info, sink, NULL, NULL);
}
