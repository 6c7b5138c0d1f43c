// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Prometheus exposition: exact text, label escaping, histogram buckets. */
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <setjmp.h>
#include <stdint.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "exporter.h"
#include "hist.h"
#include "window.h"

struct fixture {
	char root[256];
	struct container_table t;
	struct exporter e;
	struct sample a, b;
	struct window w;
	char *out;
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->root, sizeof(fx->root), "%s/koord-exp-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(fx->root)) {
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	nftw(fx->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	container_table_free(&fx->t);
	exporter_free(&fx->e);
	sample_free(&fx->a);
	sample_free(&fx->b);
	window_free(&fx->w);
	free(fx->out);
	free(fx);
	return 0;
}

/* mkdir @rel below the root; its inode (the container id). */
static __u64 mkcg(struct fixture *fx, const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s", fx->root, rel);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

static void scan(struct fixture *fx)
{
	assert_int_equal(container_table_scan(&fx->t, fx->root, NULL, NULL), 0);
}

static char *render_with(struct fixture *fx, const struct window *w, bool online_buckets)
{
	struct exporter_info info = { .version = "test", .last_period_s = -1, .scans = 1,
				      .buckets_online_only = online_buckets };
	size_t len;

	free(fx->out);
	fx->out = NULL;
	assert_int_equal(exporter_render(&fx->e, &fx->b, w, &fx->t, &info, &fx->out, &len), 0);
	assert_int_equal(strlen(fx->out), len);
	return fx->out;
}

static char *render(struct fixture *fx, const struct window *w)
{
	return render_with(fx, w, false);
}

static const char expected_head[] =
"# HELP koord_bpf_build_info The koord-bpf version; always 1.\n"
"# TYPE koord_bpf_build_info gauge\n"
"koord_bpf_build_info{version=\"test\"} 1\n"
"# HELP koord_bpf_cgroup_scans_total Walks of the cgroup hierarchy (at start, when unknown containers appear, and periodically).\n"
"# TYPE koord_bpf_cgroup_scans_total counter\n"
"koord_bpf_cgroup_scans_total 1\n"
"# HELP koord_bpf_journal_values_set_aside Values of a past run's journal that could not be restored at start (kept aside in the state dir).\n"
"# TYPE koord_bpf_journal_values_set_aside gauge\n"
"koord_bpf_journal_values_set_aside 0\n"
"# HELP koord_bpf_collector_events_total Collector events by kind: unaccounted events, dropped waits, missed switches, long waits and their records.\n"
"# TYPE koord_bpf_collector_events_total counter\n"
"koord_bpf_collector_events_total{kind=\"container_slots_full\"} 0\n"
"koord_bpf_collector_events_total{kind=\"task_map_full\"} 0\n"
"koord_bpf_collector_events_total{kind=\"wait_unseen_cpu\"} 0\n"
"koord_bpf_collector_events_total{kind=\"wait_stale\"} 0\n"
"koord_bpf_collector_events_total{kind=\"wait_stale_dropped\"} 0\n"
"koord_bpf_collector_events_total{kind=\"switch_missed\"} 7\n"
"koord_bpf_collector_events_total{kind=\"long_wait\"} 2\n"
"koord_bpf_collector_events_total{kind=\"long_wait_record_rate_limited\"} 0\n"
"koord_bpf_collector_events_total{kind=\"long_wait_record_ringbuf_full\"} 0\n"
"koord_bpf_collector_events_total{kind=\"react_wait\"} 0\n"
"# HELP koord_bpf_containers Cgroups of the cpu controller's hierarchy, by QoS class.\n"
"# TYPE koord_bpf_containers gauge\n"
"koord_bpf_containers{qos=\"LSE\"} 0\n"
"koord_bpf_containers{qos=\"LSR\"} 0\n"
"koord_bpf_containers{qos=\"LS\"} 0\n"
"koord_bpf_containers{qos=\"BE\"} 0\n"
"koord_bpf_containers{qos=\"SYSTEM\"} 2\n"
"koord_bpf_containers{qos=\"UNCLASSIFIED\"} 0\n"
"# HELP koord_bpf_unknown_containers Containers with counters but not (yet) found in the hierarchy; left out of the per-container series.\n"
"# TYPE koord_bpf_unknown_containers gauge\n"
"koord_bpf_unknown_containers 1\n"
"# HELP koord_bpf_cpu_seconds_total On-CPU time of the container's tasks (sched_switch).\n"
"# TYPE koord_bpf_cpu_seconds_total counter\n"
"koord_bpf_cpu_seconds_total{cgroup=\"/app\",qos=\"SYSTEM\",pod_uid=\"\",container_id=\"\"} 1.5\n"
"# HELP koord_bpf_runqueue_wait_seconds Run-queue waits: runnable but not running, from wakeup or preemption to switch-in.\n"
"# TYPE koord_bpf_runqueue_wait_seconds histogram\n";

#define L "cgroup=\"/app\",qos=\"SYSTEM\",pod_uid=\"\",container_id=\"\""
static const char expected_tail[] =
"koord_bpf_runqueue_wait_seconds_bucket{" L ",le=\"+Inf\"} 3\n"
"koord_bpf_runqueue_wait_seconds_sum{" L "} 20.000003501\n"
"koord_bpf_runqueue_wait_seconds_count{" L "} 3\n"
"# HELP koord_bpf_runqueue_wait_max_seconds The longest run-queue wait that ended in the last period (exact; 0 without waits).\n"
"# TYPE koord_bpf_runqueue_wait_max_seconds gauge\n"
"koord_bpf_runqueue_wait_max_seconds{" L "} 20\n"
"# HELP koord_bpf_steal_seconds_total Run-queue wait split by what the queue CPU ran meanwhile: another container's class, idle, the container itself (self) or its own CFS quota (throttled).\n"
"# TYPE koord_bpf_steal_seconds_total counter\n"
"koord_bpf_steal_seconds_total{" L ",from=\"unclassified\"} 0\n"
"koord_bpf_steal_seconds_total{" L ",from=\"LSE\"} 0\n"
"koord_bpf_steal_seconds_total{" L ",from=\"LSR\"} 0\n"
"koord_bpf_steal_seconds_total{" L ",from=\"LS\"} 0\n"
"koord_bpf_steal_seconds_total{" L ",from=\"BE\"} 19\n"
"koord_bpf_steal_seconds_total{" L ",from=\"SYSTEM\"} 0\n"
"koord_bpf_steal_seconds_total{" L ",from=\"idle\"} 0.000003501\n"
"koord_bpf_steal_seconds_total{" L ",from=\"self\"} 0.5\n"
"koord_bpf_steal_seconds_total{" L ",from=\"throttled\"} 0.5\n"
"# HELP koord_bpf_inflicted_wait_seconds_total Waiting the container caused: its run time times the other containers' tasks waiting on that CPU (victims online or all).\n"
"# TYPE koord_bpf_inflicted_wait_seconds_total counter\n"
"koord_bpf_inflicted_wait_seconds_total{" L ",victims=\"online\"} 0.25\n"
"koord_bpf_inflicted_wait_seconds_total{" L ",victims=\"all\"} 1\n";

/*
 * One container /app with three waits (500 ns, 3 us, 20 s), one container
 * the table does not know, no window: the whole text, byte for byte.
 */
static void exact_output(void **state)
{
	struct fixture *fx = *state;
	struct cg_sample *cs;
	char expected[16384], line[256];
	unsigned int k;
	size_t n;

	__u64 id = mkcg(fx, "/app");

	scan(fx);
	cs = sample_add(&fx->b, id);
	cs->s.cpu_ns = 1500000000;
	cs->s.wait_count = 3;
	cs->s.wait_ns = 20000003501ull;
	cs->s.steal_ns[KC_BE] = 19000000000ull;
	cs->s.steal_ns[KC_IDLE] = 3501;
	cs->s.steal_ns[ST_SELF] = 500000000;
	cs->s.steal_ns[ST_THROTTLED] = 500000000;
	cs->s.inflicted_online_ns = 250000000;
	cs->s.inflicted_all_ns = 1000000000;
	cs->epoch_max = 20000000000ull;
	sample_set_bucket(&fx->b, cs, hist_bucket(500), 1);
	sample_set_bucket(&fx->b, cs, hist_bucket(3000), 1);
	sample_set_bucket(&fx->b, cs, hist_bucket(20000000000ull), 1);
	sample_add(&fx->b, id + 1000000)->s.cpu_ns = 1;	/* unknown: left out */
	sample_sort(&fx->b);
	fx->b.counters[CNT_SWITCH_MISSED] = 7;
	fx->b.counters[CNT_LONG_WAITS] = 2;
	fx->b.mono_ns = 1000000000;
	assert_int_equal(window_compute(&fx->a, &fx->b, &fx->w), 0);
	assert_int_equal(exporter_update(&fx->e, &fx->w, &fx->b), 0);

	n = snprintf(expected, sizeof(expected), "%s", expected_head);
	for (k = 0; k < EXP_LE_N; k++) {
		static const char *const le[EXP_LE_N] = {
			"0.000001023", "0.000002047", "0.000004095", "0.000008191",
			"0.000016383", "0.000032767", "0.000065535", "0.000131071",
			"0.000262143", "0.000524287", "0.001048575", "0.002097151",
			"0.004194303", "0.008388607", "0.016777215", "0.033554431",
			"0.067108863", "0.134217727", "0.268435455", "0.536870911",
			"1.073741823", "2.147483647", "4.294967295", "8.589934591",
			"17.179869183",
		};

		snprintf(line, sizeof(line),
			 "koord_bpf_runqueue_wait_seconds_bucket{" L ",le=\"%s\"} %d\n",
			 le[k], k < 2 ? 1 : 2);
		n += snprintf(expected + n, sizeof(expected) - n, "%s", line);
	}
	snprintf(expected + n, sizeof(expected) - n, "%s", expected_tail);
	assert_string_equal(render(fx, &fx->w), expected);

	/* Without a window the last period's gauge is left out, nothing else changes. */
	assert_null(strstr(render(fx, NULL), "wait_max"));
	assert_non_null(strstr(fx->out, "koord_bpf_inflicted_wait_seconds_total{" L ",victims=\"all\"} 1\n"));
}
#undef L

/* Quote, backslash and newline in a cgroup name are escaped; bad UTF-8 becomes U+FFFD. */
/* The kubelet's namespace and pod name, when known, follow the path's labels. */
static void pod_labels(void **state)
{
	struct fixture *fx = *state;
	__u64 named = mkcg(fx, "/named"), plain = mkcg(fx, "/plain");
	struct container *c;

	scan(fx);
	c = (struct container *)container_table_get(&fx->t, named);
	snprintf(c->ident.namespace, sizeof(c->ident.namespace), "shop");
	snprintf(c->ident.pod_name, sizeof(c->ident.pod_name), "web-\"0\"");
	snprintf(c->ident.container, sizeof(c->ident.container), "app");
	sample_add(&fx->b, named)->s.cpu_ns = 1000000000;
	sample_add(&fx->b, plain)->s.cpu_ns = 1000000000;
	sample_sort(&fx->b);
	assert_int_equal(exporter_update(&fx->e, NULL, &fx->b), 0);
	render(fx, NULL);
	assert_non_null(strstr(fx->out,
		"koord_bpf_cpu_seconds_total{cgroup=\"/named\",qos=\"SYSTEM\",pod_uid=\"\","
		"container_id=\"\",namespace=\"shop\",pod=\"web-\\\"0\\\"\",container=\"app\"} 1\n"));
	assert_non_null(strstr(fx->out,
		"koord_bpf_cpu_seconds_total{cgroup=\"/plain\",qos=\"SYSTEM\",pod_uid=\"\","
		"container_id=\"\"} 1\n"));
	assert_null(strstr(fx->out, "namespace=\"\""));
}

/* Count the lines of @out starting with @prefix. */
static int lines_with(const char *out, const char *prefix)
{
	int n = 0;

	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += !strncmp(p, prefix, strlen(prefix));
	return n;
}

/*
 * histogramBuckets "online": an online container keeps every bucket; the
 * others only +Inf, with _sum and _count (the exposition stays a valid
 * histogram, and the counts stay exact).
 */
static void buckets_online_only(void **state)
{
	struct fixture *fx = *state;
	__u64 ls = mkcg(fx, "/ls"), be = mkcg(fx, "/be");
	struct cg_sample *cs;

	scan(fx);
	((struct container *)container_table_get(&fx->t, ls))->ident.qos = KC_LS;
	((struct container *)container_table_get(&fx->t, be))->ident.qos = KC_BE;
	for (int i = 0; i < 2; i++) {
		cs = sample_add(&fx->b, i ? be : ls);
		cs->s.wait_count = 2;
		cs->s.wait_ns = 5000;
		sample_set_bucket(&fx->b, cs, hist_bucket(1000), 1);
		sample_set_bucket(&fx->b, cs, hist_bucket(4000), 1);
	}
	sample_sort(&fx->b);
	assert_int_equal(exporter_update(&fx->e, NULL, &fx->b), 0);
	render_with(fx, NULL, true);
	assert_int_equal(lines_with(fx->out, "koord_bpf_runqueue_wait_seconds_bucket{cgroup=\"/ls\""),
			 EXP_LE_N + 1);
	assert_int_equal(lines_with(fx->out, "koord_bpf_runqueue_wait_seconds_bucket{cgroup=\"/be\""), 1);
	assert_non_null(strstr(fx->out, "koord_bpf_runqueue_wait_seconds_bucket{cgroup=\"/be\",qos=\"BE\","
				       "pod_uid=\"\",container_id=\"\",le=\"+Inf\"} 2\n"));
	assert_non_null(strstr(fx->out, "koord_bpf_runqueue_wait_seconds_count{cgroup=\"/be\",qos=\"BE\","
				       "pod_uid=\"\",container_id=\"\"} 2\n"));
	assert_non_null(strstr(fx->out, "koord_bpf_runqueue_wait_seconds_sum{cgroup=\"/be\""));
	render_with(fx, NULL, false);
	assert_int_equal(lines_with(fx->out, "koord_bpf_runqueue_wait_seconds_bucket{cgroup=\"/be\""),
			 EXP_LE_N + 1);
}

static void label_escaping(void **state)
{
	struct fixture *fx = *state;
	char buf[64];
	__u64 id = mkcg(fx, "/we\"ird\\name\nhere");

	scan(fx);
	sample_add(&fx->b, id)->s.cpu_ns = 2000000000;
	assert_int_equal(exporter_update(&fx->e, NULL, &fx->b), 0);
	assert_non_null(strstr(render(fx, NULL),
		"koord_bpf_cpu_seconds_total{cgroup=\"/we\\\"ird\\\\name\\nhere\",qos=\"SYSTEM\","
		"pod_uid=\"\",container_id=\"\"} 2\n"));
	/* no raw newline inside any line's label set */
	for (const char *p = fx->out; (p = strchr(p, '\n')); p++)
		assert_true(p[1] == '\0' || p[1] == '#' || !strncmp(p + 1, "koord_bpf_", 10));

	assert_int_equal(exporter_escape_label(buf, "a\"b\\c\nd"), 10);
	assert_string_equal(buf, "a\\\"b\\\\c\\nd");
	exporter_escape_label(buf, "caf\xc3\xa9 \xff\xc3(\xe2\x82\xac\xed\xa0\x80");
	assert_string_equal(buf, "caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd(\xe2\x82\xac"
			    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	exporter_escape_label(buf, "tab\tesc\x1b");
	assert_string_equal(buf, "tab\tesc\x1b");
}

/* Every le is the inclusive upper bound of a log-linear bucket: no bucket is split. */
static void le_are_bucket_bounds(void **state)
{
	unsigned int k, i;

	for (k = 0; k < EXP_LE_N; k++) {
		bool found = false;

		for (i = 0; i + 1 < HIST_BUCKETS; i++)
			found |= hist_upper(i) - 1 == exporter_le_ns(k);
		assert_true(found);
		if (k)
			assert_true(exporter_le_ns(k) > exporter_le_ns(k - 1));
	}
}

/* Parse the "..._bucket{...le="X"} N" and "_count" lines of the one container. */
static size_t parse_buckets(const char *out, __u64 *le_ns, __u64 *cum, __u64 *count)
{
	const char *p = out, *eol;
	char line[512], *le, *val;
	size_t n = 0;

	*count = 0;
	for (; *p; p = eol + 1) {
		eol = strchr(p, '\n');
		assert_non_null(eol);
		assert_true((size_t)(eol - p) < sizeof(line));
		memcpy(line, p, eol - p);
		line[eol - p] = '\0';
		val = strrchr(line, ' ');
		if (!strncmp(line, "koord_bpf_runqueue_wait_seconds_bucket{", 39)) {
			le = strstr(line, "le=\"");
			assert_non_null(le);
			assert_true(n <= EXP_LE_N);
			if (!strncmp(le + 4, "+Inf", 4))
				le_ns[n] = ~0ull;
			else
				le_ns[n] = (__u64)(strtod(le + 4, NULL) * 1e9 + 0.5);
			cum[n++] = strtoull(val + 1, NULL, 10);
		} else if (!strncmp(line, "koord_bpf_runqueue_wait_seconds_count{", 38)) {
			*count = strtoull(val + 1, NULL, 10);
		}
	}
	return n;
}

/*
 * Waits in every log-linear bucket: the Prometheus buckets are cumulative,
 * each counts exactly the waits <= le, +Inf equals _count; the 64-bit sums
 * carry on across a u32 bucket wrapping in BPF; a reset starts over.
 */
static void histogram_buckets(void **state)
{
	struct fixture *fx = *state;
	__u64 le_ns[EXP_LE_N + 1], cum[EXP_LE_N + 1], count, total = 0, expect;
	static __u32 h[HIST_BUCKETS];
	struct cg_sample *cs;
	unsigned int i, k;
	size_t n;
	__u64 id = mkcg(fx, "/h");

	scan(fx);
	cs = sample_add(&fx->b, id);
	for (i = 0; i < HIST_BUCKETS; i++) {
		h[i] = (i * 7919u) % 13 + (i % 5 == 0);
		total += h[i];
	}
	assert_int_equal(sample_set_hist(&fx->b, cs, h), 0);
	cs->s.wait_count = total;
	assert_int_equal(exporter_update(&fx->e, NULL, &fx->b), 0);
	n = parse_buckets(render(fx, NULL), le_ns, cum, &count);
	assert_int_equal(n, EXP_LE_N + 1);
	assert_true(le_ns[n - 1] == ~0ull);
	for (k = 0; k < n; k++) {
		expect = 0;
		for (i = 0; i < HIST_BUCKETS; i++)	/* bucket i: [lower, upper) */
			if (k == n - 1 || hist_upper(i) - 1 <= le_ns[k])
				expect += h[i];
		assert_int_equal(cum[k], expect);
		if (k)
			assert_true(cum[k] >= cum[k - 1] && le_ns[k] > le_ns[k - 1]);
	}
	assert_int_equal(cum[n - 1], count);
	assert_int_equal(count, total);

	/* Next sample: bucket of 2 us wraps mod 2^32 in BPF, 0x20 more waits. */
	sample_free(&fx->a);
	fx->a = fx->b;
	memset(&fx->b, 0, sizeof(fx->b));
	cs = sample_add(&fx->b, id);
	*cs = fx->a.v[0];
	sample_set_hist(&fx->b, cs, h);
	/* as if it had been that high */
	sample_set_bucket(&fx->a, &fx->a.v[0], hist_bucket(2000), 0xfffffff0u);
	sample_set_bucket(&fx->b, cs, hist_bucket(2000), 0x10);
	cs->s.wait_count += 0x20;
	assert_int_equal(window_compute(&fx->a, &fx->b, &fx->w), 0);
	assert_int_equal(exporter_update(&fx->e, &fx->w, &fx->b), 0);
	parse_buckets(render(fx, &fx->w), le_ns, cum, &count);
	assert_int_equal(count, total + 0x20);
	assert_int_equal(cum[EXP_LE_N], count);

	/* Counters went backwards (entries re-created): start over from the sample. */
	sample_free(&fx->a);
	fx->a = fx->b;
	memset(&fx->b, 0, sizeof(fx->b));
	cs = sample_add(&fx->b, id);
	sample_set_bucket(&fx->b, cs, hist_bucket(100), 4);
	cs->s.wait_count = 4;
	window_free(&fx->w);
	assert_int_equal(window_compute(&fx->a, &fx->b, &fx->w), 0);
	assert_int_equal(exporter_update(&fx->e, &fx->w, &fx->b), 0);
	parse_buckets(render(fx, &fx->w), le_ns, cum, &count);
	assert_int_equal(count, 4);
	assert_int_equal(cum[0], 4);

	/* A container gone from the sample is gone from the exporter. */
	sample_free(&fx->a);
	fx->a = fx->b;
	memset(&fx->b, 0, sizeof(fx->b));
	assert_int_equal(exporter_update(&fx->e, NULL, &fx->b), 0);
	assert_int_equal(fx->e.n, 0);
	assert_null(strstr(render(fx, NULL), "_bucket{"));
}

/* The sum of a container's Prometheus buckets in the exporter, -1 when it has none. */
static long long exp_total(const struct exporter *e, __u64 cgid)
{
	long long n = 0;
	size_t i, k;

	for (i = 0; i < e->n; i++) {
		if (e->v[i].cgid != cgid)
			continue;
		for (k = 0; k <= EXP_LE_N; k++)
			n += e->v[i].le[k];
		return n;
	}
	return -1;
}

/* Next sample: @fx->b becomes @fx->a, a new empty @fx->b. */
static void next_sample(struct fixture *fx)
{
	sample_free(&fx->a);
	fx->a = fx->b;
	memset(&fx->b, 0, sizeof(fx->b));
	window_free(&fx->w);
}

static void waits(struct sample *s, __u64 cgid, __u32 n)
{
	struct cg_sample *cs = sample_add(s, cgid);

	cs->s.wait_count = n;
	sample_set_bucket(s, cs, hist_bucket(5000), n);
}

/*
 * Containers carry their sums over while others come and go around them
 * (the exporter's merge), and in place while the set stays the same.
 */
static void update_merges(void **state)
{
	struct fixture *fx = *state;
	struct exp_hist *v;

	waits(&fx->b, 20, 5);
	waits(&fx->b, 40, 7);
	assert_int_equal(exporter_update(&fx->e, NULL, &fx->b), 0);
	assert_int_equal(exp_total(&fx->e, 20), 5);
	assert_int_equal(exp_total(&fx->e, 40), 7);

	/* the same set: in place, idle 40 unchanged, 20 grows by the window */
	next_sample(fx);
	waits(&fx->b, 20, 9);
	waits(&fx->b, 40, 7);
	v = fx->e.v;
	assert_int_equal(window_compute(&fx->a, &fx->b, &fx->w), 0);
	assert_int_equal(exporter_update(&fx->e, &fx->w, &fx->b), 0);
	assert_ptr_equal(fx->e.v, v);
	assert_int_equal(exp_total(&fx->e, 20), 9);
	assert_int_equal(exp_total(&fx->e, 40), 7);

	/*
	 * 10 and 30 new, 20 gone, 40 waits again. The bucket counts are what
	 * the exporter added up: 40's sample is bumped past its own history to
	 * show that its sum comes from the window, not from the sample.
	 */
	next_sample(fx);
	waits(&fx->b, 10, 2);
	waits(&fx->b, 30, 3);
	waits(&fx->b, 40, 8);
	sample_sort(&fx->b);
	assert_int_equal(window_compute(&fx->a, &fx->b, &fx->w), 0);
	sample_set_bucket(&fx->b, &fx->b.v[2], hist_bucket(5000), 1000);
	fx->b.gen = 5;		/* the collector's fifth */
	assert_int_equal(exporter_update(&fx->e, &fx->w, &fx->b), 0);
	assert_int_equal(fx->e.n, 3);
	assert_int_equal(exp_total(&fx->e, 10), 2);
	assert_int_equal(exp_total(&fx->e, 20), -1);
	assert_int_equal(exp_total(&fx->e, 30), 3);
	assert_int_equal(exp_total(&fx->e, 40), 8);
	assert_true(fx->e.v[0].cgid < fx->e.v[1].cgid && fx->e.v[1].cgid < fx->e.v[2].cgid);

	/*
	 * The sixth, built on it: 30 and 40 copied (flagged same), so the window
	 * leaves them out and the exporter keeps what it added up (40's sample
	 * still says 1000); 10 waits again.
	 */
	next_sample(fx);
	waits(&fx->b, 10, 4);
	waits(&fx->b, 30, 3);
	waits(&fx->b, 40, 1000);
	fx->b.gen = 6;
	fx->b.prev_gen = 5;
	fx->b.same_set = true;
	fx->b.v[1].same = fx->b.v[2].same = true;
	fx->b.changed = calloc(1, sizeof(*fx->b.changed));	/* entry 0, as the collector lists it */
	assert_non_null(fx->b.changed);
	fx->b.nchanged = fx->b.changed_cap = 1;
	v = fx->e.v;
	assert_int_equal(window_compute(&fx->a, &fx->b, &fx->w), 0);
	assert_int_equal(fx->w.n, 1);
	assert_int_equal(exporter_update(&fx->e, &fx->w, &fx->b), 0);
	assert_ptr_equal(fx->e.v, v);
	assert_int_equal(exp_total(&fx->e, 10), 4);
	assert_int_equal(exp_total(&fx->e, 30), 3);
	assert_int_equal(exp_total(&fx->e, 40), 8);
}

struct pieces {
	char *text;
	size_t n, calls, largest;
	int fail_at;	/* that call returns -ENOSPC; 0: none */
};

static int collect(void *ctx, const char *p, size_t n)
{
	struct pieces *pc = ctx;

	if (++pc->calls == (size_t)pc->fail_at)
		return -ENOSPC;
	pc->text = realloc(pc->text, pc->n + n + 1);
	assert_non_null(pc->text);
	memcpy(pc->text + pc->n, p, n);
	pc->n += n;
	pc->text[pc->n] = '\0';
	if (n > pc->largest)
		pc->largest = n;
	return 0;
}

/*
 * A render to a sink is the same text as to one buffer, given in pieces of
 * about 64 KiB (so the whole text is never held), and a sink's error stops it.
 */
static void render_to_sink(void **state)
{
	struct fixture *fx = *state;
	struct exporter_info info = { .version = "test", .last_period_s = -1, .scans = 1 };
	struct pieces pc = {};
	struct exporter_sink sink = { collect, &pc };
	char name[32];
	size_t i;

	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "/c%zu", i);
		waits(&fx->b, mkcg(fx, name), i + 1);
	}
	scan(fx);
	sample_sort(&fx->b);
	assert_int_equal(exporter_update(&fx->e, NULL, &fx->b), 0);
	render(fx, NULL);
	assert_true(strlen(fx->out) > 4 * 65536);
	assert_int_equal(exporter_render_to(&fx->e, &fx->b, NULL, &fx->t, &info, &sink), 0);
	assert_string_equal(pc.text, fx->out);
	assert_true(pc.calls >= 4);
	assert_true(pc.largest <= 65536);

	free(pc.text);
	pc = (struct pieces){ .fail_at = 2 };
	assert_int_equal(exporter_render_to(&fx->e, &fx->b, NULL, &fx->t, &info, &sink), -ENOSPC);
	assert_int_equal(pc.calls, 2);
	free(pc.text);
}

/* Hardware counters appear only when they are real; collector_info says which. */
static void hardware_counters(void **state)
{
	struct fixture *fx = *state;
	struct exporter_info info = { .version = "test", .mode = "m", .cgroup_root = "/r",
				      .cgroup_version = 2, .last_period_s = -1 };
	struct cg_sample *cs;
	size_t len;
	__u64 id = mkcg(fx, "/pmu");

	scan(fx);
	cs = sample_add(&fx->b, id);
	cs->s.cpu_ns = 1;
	cs->s.pmu[PMU_CYCLES] = 3000000000ull;
	cs->s.pmu[PMU_INSTRUCTIONS] = 1500000000ull;
	cs->s.pmu[PMU_LLC_MISSES] = 12345;
	fx->b.pmu_source = PMU_SOURCE_HARDWARE;
	assert_int_equal(exporter_update(&fx->e, NULL, &fx->b), 0);
	assert_int_equal(exporter_render(&fx->e, &fx->b, NULL, &fx->t, &info, &fx->out, &len), 0);
	assert_non_null(strstr(fx->out, "koord_bpf_collector_info{mode=\"m\",cgroup_root=\"/r\","
				"cgroup_version=\"2\",counters=\"hardware\"} 1\n"));
	assert_non_null(strstr(fx->out, "# TYPE koord_bpf_cpu_cycles_total counter\n"
		"koord_bpf_cpu_cycles_total{cgroup=\"/pmu\",qos=\"SYSTEM\",pod_uid=\"\",container_id=\"\"} 3000000000\n"));
	assert_non_null(strstr(fx->out, "koord_bpf_instructions_total{cgroup=\"/pmu\",qos=\"SYSTEM\",pod_uid=\"\",container_id=\"\"} 1500000000\n"));
	assert_non_null(strstr(fx->out, "koord_bpf_llc_misses_total{cgroup=\"/pmu\",qos=\"SYSTEM\",pod_uid=\"\",container_id=\"\"} 12345\n"));

	/* a software stand-in is not cycles: no series */
	fx->b.pmu_source = PMU_SOURCE_SOFTWARE;
	free(fx->out);
	assert_int_equal(exporter_render(&fx->e, &fx->b, NULL, &fx->t, &info, &fx->out, &len), 0);
	assert_non_null(strstr(fx->out, "counters=\"software\"} 1\n"));
	assert_null(strstr(fx->out, "cycles"));
	assert_null(strstr(fx->out, "llc_misses"));
	fx->b.pmu_source = PMU_SOURCE_OFF;
	free(fx->out);
	assert_int_equal(exporter_render(&fx->e, &fx->b, NULL, &fx->t, &info, &fx->out, &len), 0);
	assert_non_null(strstr(fx->out, "counters=\"off\"} 1\n"));
	assert_null(strstr(fx->out, "instructions"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(exact_output, setup, teardown),
		cmocka_unit_test_setup_teardown(label_escaping, setup, teardown),
		cmocka_unit_test_setup_teardown(pod_labels, setup, teardown),
		cmocka_unit_test_setup_teardown(buckets_online_only, setup, teardown),
		cmocka_unit_test(le_are_bucket_bounds),
		cmocka_unit_test_setup_teardown(histogram_buckets, setup, teardown),
		cmocka_unit_test_setup_teardown(hardware_counters, setup, teardown),
		cmocka_unit_test_setup_teardown(update_merges, setup, teardown),
		cmocka_unit_test_setup_teardown(render_to_sink, setup, teardown),
	};

	return cmocka_run_group_tests_name("exporter", tests, NULL, NULL);
}
